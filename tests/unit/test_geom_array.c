/* geom_array: class detection (gmirror, graid3, neither), session balance
 * override not written to disk, I/O through the common handle. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "../harness.h"
#include "geom/geom.h"
#include "member/member.h"
#include "uraid.h"

static char dir[64];
static char paths[5][96];

static void setup(int n)
{
	snprintf(dir, sizeof(dir), "/tmp/uraid-ga-XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	for (int i = 0; i < n; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%d", dir, i);
		struct member *m;
		char err[256];
		CHECK(member_open_file(paths[i], MEMBER_CREATE, 64 * 1024 + 512, &m, err,
		                       sizeof(err)) == 0);
		member_close(m);
	}
}

static void teardown(int n)
{
	for (int i = 0; i < n; i++)
		unlink(paths[i]);
	rmdir(dir);
}

static void detect_and_io(void)
{
	setup(3);
	const char *p[3] = {paths[0], paths[1], paths[2]};
	struct geom_array *a;
	char err[256] = "", warn[256];
	enum geom_kind k;
	CHECK(geom_detect(p[0], &k, err, sizeof(err)) == 0 && k == GEOM_KIND_NONE);
	CHECK(geom_array_open(p, 3, 0, -1, &a, err, sizeof(err), warn, sizeof(warn)) == -ENOENT);
	CHECKF(strstr(err, "not a GEOM array") != NULL, "%s", err);
	/* graid3 */
	struct member *m[3];
	for (int i = 0; i < 3; i++)
		CHECK(member_open_file(p[i], 0, 0, &m[i], err, sizeof(err)) == 0);
	struct geom_label_opts o = {.name = "r3a"};
	CHECK(geom_raid3_label(&o, m, 3, err, sizeof(err)) == 0);
	CHECK(geom_array_open_members(m, 3, 0, -1, &a, err, sizeof(err), warn, sizeof(warn)) == 0);
	CHECK(a->kind == GEOM_KIND_RAID3 && a->blocksize == 1024 && a->size == 128 * 1024);
	uint8_t buf[4096], back[4096];
	uint64_t seed = 41;
	t_fill(&seed, buf, sizeof(buf));
	CHECK(geom_array_write(a, buf, sizeof(buf), 8192) == 0);
	CHECK(geom_array_flush(a) == 0);
	CHECK(geom_array_read(a, back, sizeof(back), 8192) == 0 && memcmp(buf, back, 4096) == 0);
	CHECK(geom_array_write(a, buf, 512, 0) == -EINVAL); /* below the provider sector */
	geom_array_close(a);
	/* gmirror over 2 of them, balance overridden for the session only */
	for (int i = 0; i < 2; i++)
		CHECK(member_open_file(p[i], 0, 0, &m[i], err, sizeof(err)) == 0);
	struct geom_label_opts mo = {.name = "gma", .balance = GEOM_BALANCE_PREFER};
	CHECK(geom_mirror_label(&mo, m, 2, err, sizeof(err)) == 0);
	for (int i = 0; i < 2; i++)
		member_close(m[i]);
	CHECK(geom_detect(p[1], &k, err, sizeof(err)) == 0 && k == GEOM_KIND_MIRROR);
	CHECK(geom_array_open(p, 2, 0, GEOM_BALANCE_ROUND_ROBIN, &a, err, sizeof(err), warn,
	                      sizeof(warn)) == 0);
	CHECK(a->kind == GEOM_KIND_MIRROR && a->mirror->bal.balance == GEOM_BALANCE_ROUND_ROBIN);
	CHECK(geom_array_write(a, buf, sizeof(buf), 0) == 0);
	CHECK(geom_array_read(a, back, sizeof(back), 0) == 0 && memcmp(buf, back, 4096) == 0);
	geom_array_close(a);
	struct member *one;
	struct geom_mirror_md md;
	CHECK(member_open_file(p[0], MEMBER_RDONLY, 0, &one, err, sizeof(err)) == 0);
	CHECK(geom_mirror_read(one, &md, err, sizeof(err)) == 0 &&
	      md.balance == GEOM_BALANCE_PREFER);
	member_close(one);
	/* read-only open writes nothing: the sector stays byte-identical */
	uint8_t before[512], after[512];
	FILE *f = fopen(p[0], "rb");
	fseek(f, -512, SEEK_END);
	CHECK(fread(before, 1, 512, f) == 512);
	fclose(f);
	CHECK(geom_array_open(p, 2, URAID_RDONLY, -1, &a, err, sizeof(err), warn, sizeof(warn)) ==
	      0);
	CHECK(geom_array_write(a, buf, 512, 0) == -EROFS);
	geom_array_close(a);
	f = fopen(p[0], "rb");
	fseek(f, -512, SEEK_END);
	CHECK(fread(after, 1, 512, f) == 512);
	fclose(f);
	CHECK(memcmp(before, after, 512) == 0);
	teardown(3);
}

TEST_MAIN(T(detect_and_io))
