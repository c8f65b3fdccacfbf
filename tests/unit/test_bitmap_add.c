/* The engine's internal bitmap on file members, read back by the host's
 * mdadm: after uraid_bitmap_add the superblock points at it (mdadm -E
 * "Internal Bitmap : 8 sectors from superblock"), mdadm -X reads our header
 * (chunk, sync size, events equal to the superblock's); writes leave dirty
 * bits when the array is dropped as in a crash, the next assembly resyncs
 * only those chunks, and a clean stop leaves 0 dirty bits. Refusals name
 * the problem. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "uraid.h"

static char dir[] = "/tmp/uraid-bmeng-XXXXXX";

/* mdadm -X reads a regular file as a bitmap file (header at 0); members
 * are examined by copying out the bitmap area mdadm -E points at. */
static void extract_bitmap(const char *member, long long sb_sectors, long long bm_sectors,
                           char *out, size_t outlen)
{
	snprintf(out, outlen, "%s.bitmap", member);
	FILE *in = fopen(member, "rb"), *o = fopen(out, "wb");
	static uint8_t b[4096];
	CHECK(in && o);
	if (in && o && fseek(in, (sb_sectors + bm_sectors) * 512, SEEK_SET) == 0) {
		size_t n = fread(b, 1, sizeof(b), in);
		CHECK(fwrite(b, 1, n, o) == n);
	}
	if (in)
		fclose(in);
	if (o)
		fclose(o);
}

/* Value after "key : " in `mdadm -X/-E path`, as a number; -1 if absent. */
static long long mdadm_field(const char *opt, const char *path, const char *key, char *line_out)
{
	char cmd[512], line[512];
	snprintf(cmd, sizeof(cmd), "mdadm %s %s 2>/dev/null", opt, path);
	FILE *p = popen(cmd, "r");
	long long v = -1;
	while (p && fgets(line, sizeof(line), p)) {
		char *k = strstr(line, key);
		char *c = k ? strstr(k, " : ") : NULL;
		if (c && v < 0) {
			v = strtoll(c + 3, NULL, 10);
			if (line_out)
				snprintf(line_out, 512, "%s", c + 3);
		}
	}
	if (p)
		pclose(p);
	return v;
}

static void engine_bitmap_vs_mdadm(void)
{
	CHECK(mkdtemp(dir) != NULL);
	char paths[4][128];
	const char *pp[4];
	for (int i = 0; i < 4; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%d", dir, i);
		pp[i] = paths[i];
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = URAID_LEVEL_RAID5;
	o.raid_devices = 4;
	o.chunk_sectors = 128;
	o.member_bytes = 24u << 20;
	o.assume_clean = true;
	struct uraid_array *a = NULL;
	char err[256], warn[512], line[512];
	CHECKF(uraid_create(&o, pp, 4, URAID_NO_SYNC_THREAD, &a, err, sizeof(err)) == 0, "%s", err);
	if (!a)
		return;
	CHECK(uraid_bitmap_add(a, 2048, err, sizeof(err)) == -EINVAL); /* below 4 KiB */
	CHECKF(strstr(err, "2048") != NULL, "%s", err);
	CHECKF(uraid_bitmap_add(a, 65536, err, sizeof(err)) == 0, "%s", err);
	CHECK(uraid_bitmap_add(a, 65536, err, sizeof(err)) == -EEXIST);
	/* Write 3 separate 64 KiB regions of member space: stripe data is
	 * 3 x 64 KiB, so logical offsets 0, 10 and 20 stripes. */
	uint64_t rs = 0xb1;
	static uint8_t buf[65536];
	t_fill(&rs, buf, sizeof(buf));
	uint64_t stripe = 3 * 65536;
	CHECK(uraid_write(a, buf, sizeof(buf), 0) == 0);
	CHECK(uraid_write(a, buf, sizeof(buf), 10 * stripe) == 0);
	CHECK(uraid_write(a, buf, sizeof(buf), 20 * stripe) == 0);
	/* The status shows the bitmap as /proc/mdstat does (checked against
	 * mdadm -X's count of bits below). */
	struct uraid_status bst;
	CHECK(uraid_status(a, &bst) == 0);
	CHECK(bst.bitmap_chunk_kib == 64);
	CHECK_EQ_U64(bst.bitmap_dirty, 3);
	CHECK(bst.bitmap_pages_used == 1);
	uraid_drop(a); /* crash: bits stay set */
	a = NULL;
	/* tests/integration/bitmap_mdvm.sh takes the members in this state
	 * (and the expected array content) to the real kernel. */
	const char *exp = getenv("URAID_BM_EXPORT");
	if (exp && *exp) {
		char cmd[1024];
		snprintf(cmd, sizeof(cmd), "cp %s/m0 %s/m1 %s/m2 %s/m3 '%s'/", dir, dir, dir, dir,
		         exp);
		CHECK(system(cmd) == 0);
		snprintf(cmd, sizeof(cmd), "%s/expected", exp);
		FILE *f = fopen(cmd, "wb");
		CHECK(f != NULL);
		static uint8_t zero[65536];
		for (uint64_t off = 0; f && off < 23 * stripe; off += sizeof(buf)) {
			bool w = off == 0 || off == 10 * stripe || off == 20 * stripe;
			CHECK(fwrite(w ? buf : zero, 1, sizeof(buf), f) == sizeof(buf));
		}
		if (f)
			fclose(f);
	}

	long long bmoff = mdadm_field("-E", paths[0], "Internal Bitmap", line);
	CHECK(bmoff == 8);
	CHECKF(strstr(line, "sectors from superblock") != NULL, "mdadm -E: %s", line);
	long long sboff = mdadm_field("-E", paths[0], "Super Offset", NULL);
	CHECK(sboff == 8);
	char bm[4][160];
	for (int i = 0; i < 4; i++)
		extract_bitmap(paths[i], sboff, bmoff, bm[i], sizeof(bm[i]));
	long long ev = mdadm_field("-E", paths[1], "Events", NULL);
	CHECK(mdadm_field("-X", bm[1], "Events", NULL) == ev);
	CHECK(mdadm_field("-X", bm[1], "Chunksize", line) == 64);
	CHECKF(strstr(line, "KB") != NULL, "%s", line);
	long long sync_kib = mdadm_field("-X", bm[2], "Sync Size", NULL);
	/* the per-member size mdadm -E reports, in KiB */
	CHECK(sync_kib * 2 == mdadm_field("-E", paths[2], "Used Dev Size", NULL) ||
	      sync_kib * 2 == mdadm_field("-E", paths[2], "Avail Dev Size", NULL));
	mdadm_field("-X", bm[3], "Bitmap", line);
	long long nbits = strtoll(line, NULL, 10);
	char *d = strstr(line, "), ");
	long long dirty = d ? strtoll(d + 3, NULL, 10) : -1;
	CHECK_EQ_U64(nbits, (sync_kib + 63) / 64);
	CHECK_EQ_U64(bst.bitmap_chunks, nbits);
	CHECK(bst.bitmap_pages == (nbits + 2047) / 2048);
	CHECKF(dirty == 3, "dirty bits after the crash: %lld (%s)", dirty, line);

	/* Restart: the resync touches only the 3 dirty chunks. */
	CHECKF(uraid_assemble(pp, 4, URAID_NO_SYNC_THREAD, &a, err, sizeof(err), warn,
	                      sizeof(warn)) == 0,
	       "%s", err);
	if (!a)
		return;
	while (uraid_sync_step(a, 1024) > 0)
		;
	uint64_t skipped = uraid_bitmap_resync_skipped(a);
	CHECKF(skipped == (uint64_t)sync_kib * 2 - 3 * 128, "skipped %llu of %lld",
	       (unsigned long long)skipped, sync_kib * 2);
	uint8_t got[65536];
	CHECK(uraid_read(a, got, sizeof(got), 10 * stripe) == 0 && !memcmp(got, buf, sizeof(got)));
	CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
	while (uraid_sync_step(a, 1024) > 0)
		;
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK_EQ_U64(st.mismatch_cnt, 0);
	/* resynced and flushed: no bit left */
	CHECK(uraid_flush(a) == 0);
	uraid_status(a, &st);
	CHECK(st.bitmap_chunk_kib == 64 && st.bitmap_dirty == 0 && st.bitmap_pages_used == 0);
	CHECK(uraid_stop(a) == 0);
	extract_bitmap(paths[0], sboff, bmoff, bm[0], sizeof(bm[0]));
	mdadm_field("-X", bm[0], "Bitmap", line);
	d = strstr(line, "), ");
	CHECKF(d && strtoll(d + 3, NULL, 10) == 0, "after a clean stop: %s", line);
	CHECK(mdadm_field("-X", bm[0], "Events", NULL) ==
	      mdadm_field("-E", paths[0], "Events", NULL));
	for (int i = 0; i < 4; i++) {
		unlink(paths[i]);
		unlink(bm[i]);
	}
	rmdir(dir);
}

static void refusals(void)
{
	char d2[] = "/tmp/uraid-bmeng2-XXXXXX";
	CHECK(mkdtemp(d2) != NULL);
	char p0[128], p1[128];
	snprintf(p0, sizeof(p0), "%s/a", d2);
	snprintf(p1, sizeof(p1), "%s/b", d2);
	const char *pp[2] = {p0, p1};
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = URAID_LEVEL_RAID0;
	o.raid_devices = 2;
	o.member_bytes = 8u << 20;
	struct uraid_array *a = NULL;
	char err[256];
	CHECK(uraid_create(&o, pp, 2, URAID_NO_SYNC_THREAD, &a, err, sizeof(err)) == 0);
	if (a) {
		CHECK(uraid_bitmap_add(a, 0, err, sizeof(err)) == -EOPNOTSUPP);
		CHECKF(strstr(err, "raid0") != NULL, "%s", err);
		uraid_stop(a);
	}
	unlink(p0);
	unlink(p1);
	o.level = URAID_LEVEL_RAID1;
	o.metadata = 10;
	o.metadata_set = true;
	a = NULL;
	CHECK(uraid_create(&o, pp, 2, URAID_NO_SYNC_THREAD, &a, err, sizeof(err)) == 0);
	if (a) {
		/* 1.0 keeps it below the superblock now (test_bitmap_meta checks where) */
		CHECKF(uraid_bitmap_add(a, 0, err, sizeof(err)) == 0, "%s", err);
		CHECK(uraid_bitmap_add(a, 0, err, sizeof(err)) == -EEXIST);
		uraid_stop(a);
	}
	unlink(p0);
	unlink(p1);
	rmdir(d2);
}

TEST_MAIN(T(engine_bitmap_vs_mdadm), T(refusals))
