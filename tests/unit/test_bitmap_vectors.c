/* Kernel-made arrays with an internal bitmap (tests/vectors r5-bitmap,
 * r1-3-bitmap, made by mdvm with mdadm --bitmap=internal) opened read-write
 * in uraid: the bitmap is loaded with the fields the recorded
 * `mdadm --examine-bitmap` shows, the content has the manifest's md5, a
 * write followed by a crash leaves the chunk dirty on disk with the
 * superblocks' events, the next assembly resyncs and `check` finds 0
 * mismatches, and a clean stop leaves 0 dirty bits and equal events. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "engine/bitmap/bitmap.h"
#include "engine/core/engine.h"
#include "meta/md_bitmap.h"
#include "uraid.h"

/* First value after "key : " in the recorded mdadm log; -1 if absent. */
static long long log_field(const char *name, const char *key)
{
	char path[256], line[512];
	snprintf(path, sizeof(path), "tests/vectors/logs/%s.log", name);
	FILE *f = fopen(path, "r");
	long long v = -1;
	bool in_bitmap = false;
	while (f && fgets(line, sizeof(line), f) && v < 0) {
		if (strstr(line, "# mdadm --examine-bitmap"))
			in_bitmap = true;
		char *k = in_bitmap ? strstr(line, key) : NULL;
		char *c = k ? strstr(k, " : ") : NULL;
		if (c && k == line + strspn(line, " "))
			v = strtoll(c + 3, NULL, 10);
	}
	if (f)
		fclose(f);
	return v;
}

static void manifest(const char *name, int *n, char *md5)
{
	FILE *f = fopen("tests/vectors/MANIFEST.tsv", "r");
	char line[1024];
	*n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		char *fld[16];
		int k = 0;
		for (char *t = strtok(line, "\t\n"); t && k < 16; t = strtok(NULL, "\t\n"))
			fld[k++] = t;
		if (k > 10 && !strcmp(fld[0], name)) {
			*n = atoi(fld[6]);
			snprintf(md5, 33, "%s", fld[10]);
		}
	}
	if (f)
		fclose(f);
}

static void md5_of_array(struct uraid_array *a, const char *tmp, char *out)
{
	char path[256], cmd[300];
	snprintf(path, sizeof(path), "%s/content", tmp);
	FILE *f = fopen(path, "wb");
	static uint8_t buf[1 << 20];
	for (uint64_t off = 0; f && off < uraid_size(a);) {
		size_t n = uraid_size(a) - off < sizeof(buf) ? uraid_size(a) - off : sizeof(buf);
		CHECK(uraid_read(a, buf, n, off) == 0);
		CHECK(fwrite(buf, 1, n, f) == n);
		off += n;
	}
	if (f)
		fclose(f);
	snprintf(cmd, sizeof(cmd), "md5sum < %s", path);
	FILE *p = popen(cmd, "r");
	out[0] = 0;
	if (p && fscanf(p, "%32s", out) != 1)
		out[0] = 0;
	if (p)
		pclose(p);
	unlink(path);
}

static void one(const char *name)
{
	int n;
	char want[40] = "", got[40], tmp[] = "/tmp/uraid-bmvec-XXXXXX";
	manifest(name, &n, want);
	CHECKF(n > 0 && n <= 8, "%s: not in tests/vectors/MANIFEST.tsv", name);
	if (n <= 0 || n > 8 || !mkdtemp(tmp))
		return;
	char paths[8][300];
	const char *pp[8];
	for (int i = 0; i < n; i++) {
		char cmd[800];
		snprintf(paths[i], sizeof(paths[i]), "%s/m%d", tmp, i);
		snprintf(cmd, sizeof(cmd), "xz -dc tests/vectors/%s/m%d.img.xz > %s", name, i,
		         paths[i]);
		CHECK(system(cmd) == 0);
		pp[i] = paths[i];
	}
	struct uraid_array *a = NULL;
	char err[256], warn[512];
	CHECKF(uraid_assemble(pp, n, URAID_NO_SYNC_THREAD, &a, err, sizeof(err), warn,
	                      sizeof(warn)) == 0,
	       "%s: %s", name, err);
	if (!a)
		goto out;
	const struct eng_array *e = eng_of(a);
	const struct eng_bitmap *bm = e->log == &eng_log_bitmap ? eng_bitmap_of(e) : NULL;
	CHECKF(bm != NULL, "%s: bitmap not loaded", name);
	if (bm) {
		const struct md_bitmap_sb *s = &bm->sb;
		CHECK_EQ_U64(s->events, log_field(name, "Events"));
		CHECK_EQ_U64(s->events_cleared, log_field(name, "Events Cleared"));
		CHECK_EQ_U64(s->chunksize >> 20, log_field(name, "Chunksize")); /* "64 MB" */
		CHECK_EQ_U64(s->sync_size / 2, log_field(name, "Sync Size"));   /* KiB */
		CHECK_EQ_U64(bm->nbits, log_field(name, "Bitmap"));
	}
	md5_of_array(a, tmp, got);
	CHECKF(!strcmp(got, want), "%s: md5 %s, manifest %s", name, got, want);
	/* A write, then a crash. */
	static uint8_t buf[8192];
	uint64_t rs = 0x7ec;
	t_fill(&rs, buf, sizeof(buf));
	CHECK(uraid_write(a, buf, sizeof(buf), 65536) == 0);
	uint64_t events = eng_of(a)->events;
	uraid_drop(a);
	a = NULL;
	/* On disk: bit 0 dirty, header events = the superblocks'. */
	for (int i = 0; i < n; i++) {
		struct member *m;
		CHECK(member_open_file(paths[i], MEMBER_RDONLY, 0, &m, err, sizeof(err)) == 0);
		static uint8_t img[4096] __attribute__((aligned(4096)));
		/* 1.2: superblock at 8 sectors, bitmap_offset 8 (as mdadm -E says) */
		CHECK(member_read(m, img, sizeof(img), 16 * 512) == 0);
		struct md_bitmap_sb s;
		CHECK(md_bitmap_decode(img, sizeof(img), &s, err, sizeof(err)) == 0);
		CHECK_EQ_U64(s.events, events);
		CHECK(md_bitmap_test(img + MD_BITMAP_SB_BYTES, 0));
		member_close(m);
	}
	CHECK(uraid_assemble(pp, n, URAID_NO_SYNC_THREAD, &a, err, sizeof(err), warn,
	                     sizeof(warn)) == 0);
	if (!a)
		goto out;
	while (uraid_sync_step(a, 4096) > 0)
		;
	uint8_t back[sizeof(buf)];
	CHECK(uraid_read(a, back, sizeof(back), 65536) == 0 && !memcmp(back, buf, sizeof(buf)));
	CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
	while (uraid_sync_step(a, 4096) > 0)
		;
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK_EQ_U64(st.mismatch_cnt, 0);
	CHECK(uraid_stop(a) == 0);
	a = NULL;
	char cmd[700], line[256];
	snprintf(cmd, sizeof(cmd),
	         "dd if=%s of=%s/bm bs=512 skip=16 count=8 status=none && mdadm -X %s/bm 2>&1",
	         paths[0], tmp, tmp);
	FILE *p = popen(cmd, "r");
	int seen = 0;
	while (p && fgets(line, sizeof(line), p)) {
		if (strstr(line, "Bitmap :")) {
			seen++;
			CHECKF(strstr(line, ", 0 dirty") != NULL, "%s after stop: %s", name, line);
		}
	}
	if (p)
		pclose(p);
	CHECK(seen == 1);
out:
	if (a)
		uraid_drop(a);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	CHECK(system(cmd) == 0);
}

static void kernel_raid5_bitmap(void)
{
	one("r5-bitmap");
}

static void kernel_raid1_bitmap(void)
{
	one("r1-3-bitmap");
}

TEST_MAIN(T(kernel_raid5_bitmap), T(kernel_raid1_bitmap))
