/* Where the internal bitmap goes for every metadata version, and what its
 * bits stand for on raid10.
 *
 * - md_bitmap_plan_add against a reference written from mdadm 4.2's rules
 *   in plain terms (closed forms, not its loop), over random superblocks of
 *   0.90, 1.0, 1.1 and 1.2; the kernel's placement check accepts each plan
 *   and refuses the bitmap moved into the data.
 * - The engine's bitmap read back from the raw member bytes where md looks
 *   for it (0.90: 4 KiB after the superblock at the last 64 KiB-aligned
 *   64 KiB; 1.0: bitmap_offset sectors below the superblock 8-12 KiB from the
 *   end; 1.2: after the superblock at 4 KiB): magic, version, the uuid bytes
 *   of the superblock (0.90: its raw words), sync_size (raid10: the array
 *   size), mdadm's default chunk.
 * - raid10 (near, far, offset): after random writes and a crash, the dirty
 *   bits are exactly the 4 KiB units of array sectors the writes touched
 *   (slow per-sector reference), the resync skips everything else, and the
 *   array is consistent afterwards. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta/md_bitmap.h"
#include "test_engine_common.h"
#include "util/endian.h"

/* ---- reference placement (mdadm 4.2 Grow/add_internal_bitmap rules) ---- */

struct ref_plan {
	int rc;
	uint64_t chunk;
	int64_t offset;
};

static struct ref_plan ref_place(const struct md_sb *sb, uint64_t S, uint64_t req)
{
	struct ref_plan r = {0, 0, 0};
	int64_t room, log = 0;
	bool below = false;
	if (sb->version == MD_SB_0_90) {
		room = 120; /* 60 KiB after the 4 KiB superblock */
		r.offset = 8;
	} else if (sb->version == MD_SB_1_0) {
		int64_t avail =
		    (int64_t)sb->super_offset - (int64_t)sb->data_offset - (int64_t)sb->data_size;
		log = 8;
		if (sb->bblog_size > log)
			log = sb->bblog_size;
		if (-(int64_t)(int32_t)sb->bblog_offset > log)
			log = -(int64_t)(int32_t)sb->bblog_offset;
		if (avail < 6 && sb->max_dev <= 384) {
			room = 6; /* the legacy spot 1 KiB after a small superblock */
			r.offset = 2;
		} else {
			room = avail - log;
			below = true;
		}
	} else if (sb->bblog_size) {
		room = (int64_t)(int32_t)sb->bblog_offset - 8; /* up to the log */
		r.offset = 8;
	} else {
		room = (int64_t)sb->data_offset - (int64_t)sb->super_offset - 16;
		r.offset = 8;
	}
	if (room <= 1) {
		r.rc = -ENOSPC;
		return r;
	}
	if (!req && room > 256)
		room = 256;
	uint64_t cap = ((uint64_t)room * 512 - 256) * 8;
	uint64_t b0 = S * 512 / 4096 + 1, min = 4096;
	/* halving b0 k times rounds up each time: ceil(b0 / 2^k) */
	while ((b0 + min / 4096 - 1) / (min / 4096) > cap)
		min *= 2;
	if (req) {
		if (req < min) {
			r.rc = -EINVAL;
			return r;
		}
		r.chunk = req;
	} else {
		r.chunk = min < (64u << 20) ? (64u << 20) : min;
	}
	if (below) {
		uint64_t bytes = (S * 512 / r.chunk + 1 + 7) / 8 + 256;
		r.offset = -(int64_t)((bytes + 4095) / 4096 * 8) - log;
	}
	return r;
}

static void plan_vs_reference(void)
{
	uint64_t rs = 0x91ace;
	static const enum md_sb_version vs[] = {MD_SB_0_90, MD_SB_1_0, MD_SB_1_1, MD_SB_1_2};
	int tried[4] = {0}, placed = 0;
	for (int it = 0; it < 20000; it++) {
		struct md_sb sb;
		memset(&sb, 0, sizeof(sb));
		sb.version = vs[t_rand(&rs) % 4];
		uint64_t dev = (1ull << 12) + t_rand(&rs) % (1ull << (13 + t_rand(&rs) % 24));
		uint64_t S = 1 + t_rand(&rs) % (dev < (1ull << 36) ? dev * 4 : dev);
		uint64_t req = t_rand(&rs) % 2 ? 0 : 4096ull << (t_rand(&rs) % 18);
		sb.max_dev = 128 + (uint32_t)(t_rand(&rs) % 900);
		if (sb.version == MD_SB_1_0) {
			sb.super_offset = (dev - 16) & ~7ull;
			uint64_t gap = t_rand(&rs) % 300;
			sb.data_size = sb.super_offset > gap ? sb.super_offset - gap : 0;
			if (t_rand(&rs) % 4) {
				sb.bblog_size = 8;
				sb.bblog_offset = (uint32_t)-8;
			}
		} else if (sb.version != MD_SB_0_90) {
			sb.super_offset = sb.version == MD_SB_1_1 ? 0 : 8;
			sb.data_offset = sb.super_offset + 16 + t_rand(&rs) % 4096;
			if (t_rand(&rs) % 2) {
				sb.bblog_size = 8;
				sb.bblog_offset =
				    (uint32_t)(16 + t_rand(&rs) %
				                        (sb.data_offset - sb.super_offset - 15));
			}
		} else {
			sb.super_offset = (dev & ~127ull) - 128;
		}
		struct md_bitmap_plan p;
		int rc = md_bitmap_plan_add(&sb, S, (uint32_t)req, &p);
		struct ref_plan r = ref_place(&sb, S, req);
		if (r.rc == 0 && r.chunk > (1ull << 31))
			continue; /* past the 32-bit chunk field: not a case mdadm meets */
		tried[sb.version == MD_SB_0_90 ? 0 : sb.version - 9]++;
		CHECKF(rc == r.rc, "v%d S %llu req %llu: rc %d, reference %d", sb.version,
		       (unsigned long long)S, (unsigned long long)req, rc, r.rc);
		if (rc || r.rc)
			continue;
		CHECKF(p.chunksize == r.chunk && p.bitmap_offset == r.offset,
		       "v%d S %llu req %llu: chunk %u offset %d, reference %llu %lld", sb.version,
		       (unsigned long long)S, (unsigned long long)req, p.chunksize, p.bitmap_offset,
		       (unsigned long long)r.chunk, (long long)r.offset);
		/* The bitmap the kernel writes fits where the plan puts it. */
		uint64_t per = p.chunksize / 512, bits = (S + per - 1) / per;
		uint64_t bytes = (256 + (bits + 7) / 8 + 511) / 512 * 512;
		uint64_t used = sb.version == MD_SB_1_0 ? sb.data_size : 0;
		if (sb.version == MD_SB_1_1 || sb.version == MD_SB_1_2)
			used = 1;
		char e[200];
		if (sb.version == MD_SB_1_0 && p.bitmap_offset < 0) {
			/* mdadm sizes the room in sectors but the bitmap in 4 KiB
			 * blocks, so with an odd gap its plan can reach into the
			 * data; the kernel (and uraid) refuse exactly then. */
			int64_t start = (int64_t)sb.super_offset + p.bitmap_offset;
			bool fits = start >= (int64_t)used &&
			            start + (int64_t)(bytes / 512) <= (int64_t)sb.super_offset;
			rc = md_bitmap_check_place(&sb, p.bitmap_offset, used, bytes, e, sizeof(e));
			CHECKF((rc == 0) == fits, "1.0 plan at %d (data ends at %lld): check %d",
			       p.bitmap_offset,
			       (long long)((int64_t)used - (int64_t)sb.super_offset), rc);
			if (fits) {
				/* one sector lower runs into the data */
				int32_t lower =
				    p.bitmap_offset - (int32_t)(start - (int64_t)used) - 1;
				CHECK(md_bitmap_check_place(&sb, lower, used, bytes, e,
				                            sizeof(e)) == -ENOSPC);
				placed++;
			}
		}
		if ((sb.version == MD_SB_1_1 || sb.version == MD_SB_1_2) && !sb.bblog_size) {
			CHECKF(md_bitmap_check_place(&sb, p.bitmap_offset, used, bytes, e,
			                             sizeof(e)) == 0,
			       "1.x plan refused: %s", e);
			placed++;
		}
		if (sb.version == MD_SB_0_90)
			CHECK(md_bitmap_check_place(&sb, 8, 0, bytes, e, sizeof(e)) == 0);
	}
	printf("# plans compared: 0.90 %d, 1.0 %d, 1.1 %d, 1.2 %d; placements checked %d\n",
	       tried[0], tried[1], tried[2], tried[3], placed);
	CHECK(tried[0] > 1000 && tried[1] > 1000 && tried[2] > 1000 && tried[3] > 1000);
	/* Corrupt fields (found by fuzz_bitmap): refused, no signed overflow
	 * (this binary runs under UBSan). */
	struct md_sb bad;
	memset(&bad, 0, sizeof(bad));
	bad.version = MD_SB_1_0;
	bad.super_offset = 7593633021220093146ull;
	bad.data_offset = (uint64_t)-4480799053933641729ll;
	struct md_bitmap_plan bp;
	CHECK(md_bitmap_plan_add(&bad, 1000, 0, &bp) == -ENOSPC);
	bad.super_offset = 1u << 20;
	bad.data_offset = 0;
	bad.data_size = 1000;
	bad.bblog_offset = 0x80000006u; /* a log 2^31 sectors below: offset past 32 bits */
	CHECK(md_bitmap_plan_add(&bad, 1000, 0, &bp) == -ENOSPC);
	/* 0.90: 61184 * 8 bits at most */
	char e[200];
	struct md_sb s0;
	memset(&s0, 0, sizeof(s0));
	s0.version = MD_SB_0_90;
	CHECK(md_bitmap_check_place(&s0, 8, 0, 120 * 512, e, sizeof(e)) == 0);
	CHECK(md_bitmap_check_place(&s0, 8, 0, 120 * 512 + 1, e, sizeof(e)) == -ENOSPC);
}

/* ---- the engine's bitmap, read from raw member bytes ---- */

struct shape {
	int md;
	int level;
	const char *layout;
	int n;
};

static void engine_places(void)
{
	static const struct shape shapes[] = {
	    {0, URAID_LEVEL_RAID1, NULL, 2},   {0, URAID_LEVEL_RAID5, NULL, 3},
	    {0, URAID_LEVEL_RAID10, "n2", 4},  {10, URAID_LEVEL_RAID1, NULL, 2},
	    {10, URAID_LEVEL_RAID6, NULL, 4},  {10, URAID_LEVEL_RAID10, "f2", 3},
	    {12, URAID_LEVEL_RAID10, "o2", 3}, {11, URAID_LEVEL_RAID4, NULL, 3},
	};
	for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		const struct shape *sh = &shapes[k];
		struct te_disk d[4] = {0};
		uint64_t bytes = (24u << 20) + 512 * (uint64_t)(k * 37); /* odd sizes too */
		for (int i = 0; i < sh->n; i++) {
			char nm[16];
			snprintf(nm, sizeof(nm), "p%d", i);
			te_disk_open(&d[i], nm, bytes);
		}
		struct uraid_create_opts o;
		memset(&o, 0, sizeof(o));
		o.level = sh->level;
		o.raid_devices = sh->n;
		o.chunk_sectors = 128;
		o.metadata = sh->md;
		o.metadata_set = true;
		o.assume_clean = true;
		if (sh->layout) {
			CHECK(layout_parse(sh->level, sh->layout, &o.layout) == 0);
			o.layout_set = true;
		}
		struct uraid_array *a = NULL;
		char err[256];
		if (te_create(&o, d, sh->n, &a) < 0) {
			CHECKF(0, "create shape %zu", k);
			continue;
		}
		CHECKF(uraid_bitmap_add(a, 0, err, sizeof(err)) == 0, "shape %zu: %s", k, err);
		struct uraid_status st;
		uraid_status(a, &st);
		uraid_stop(a);
		uint64_t S = bytes / 512, sbloc;
		if (sh->md == 0)
			sbloc = (S & ~127ull) - 128;
		else if (sh->md == 10)
			sbloc = (S - 16) & ~7ull;
		else
			sbloc = sh->md == 11 ? 0 : 8;
		static uint8_t raw[4096], hdr[512];
		CHECK(member_read(d[1].mem, raw, 4096, sbloc * 512) == 0);
		int64_t off = 8;
		uint8_t uuid[16];
		if (sh->md == 0) {
			memcpy(uuid, raw + 20, 4); /* set_uuid0, then words 13..15 */
			memcpy(uuid + 4, raw + 52, 12);
			CHECKF(get_le32(raw + 4 * 33) & (1u << 8),
			       "0.90 state %#x lacks the bitmap bit", get_le32(raw + 4 * 33));
		} else {
			memcpy(uuid, raw + 16, 16);
			off = (int32_t)get_le32(raw + 96);
			CHECK(get_le32(raw + 8) & 1); /* feature_map: bitmap offset */
		}
		/* mdadm's default chunk for these sizes is 64 MiB; 1.0 puts it
		 * one 4 KiB block + the 8-sector log below the superblock. */
		if (sh->md == 10)
			CHECKF(off == -16, "shape %zu: 1.0 bitmap_offset %lld", k, (long long)off);
		else
			CHECKF(off == 8, "shape %zu: bitmap_offset %lld", k, (long long)off);
		CHECK(member_read(d[1].mem, hdr, 512, (uint64_t)((int64_t)sbloc + off) * 512) == 0);
		CHECKF(get_le32(hdr) == 0x6d746962 && get_le32(hdr + 4) == 4,
		       "shape %zu: no bitmap header where md looks (%#x)", k, get_le32(hdr));
		CHECKF(!memcmp(hdr + 8, uuid, 16), "shape %zu: bitmap uuid differs from the sb's",
		       k);
		uint64_t want = sh->level == URAID_LEVEL_RAID10 ? st.array_sectors : st.dev_sectors;
		CHECKF(get_le64(hdr + 40) == want, "shape %zu: sync_size %llu, want %llu", k,
		       (unsigned long long)get_le64(hdr + 40), (unsigned long long)want);
		CHECK_EQ_U64(get_le32(hdr + 52), 64u << 20);
		struct md_sb msb;
		CHECK(md_sb_load(d[1].mem, &msb, err, sizeof(err)) == 0);
		CHECK_EQ_U64(get_le64(hdr + 24), msb.events); /* as fresh as the superblock */
		/* and it assembles again with the bitmap loaded */
		int idx[4] = {0, 1, 2, 3};
		char warn[512];
		CHECKF(te_assemble(d, idx, sh->n, &a, warn, sizeof(warn)) == 0, "shape %zu", k);
		if (a) {
			uint64_t zero[64] = {0};
			CHECK(uraid_write(a, zero, sizeof(zero), 0) == 0);
			uraid_stop(a);
			a = NULL;
		}
		for (int i = 0; i < sh->n; i++)
			te_disk_close(&d[i]);
	}
}

/* ---- raid10: bits over array sectors ---- */

static void raid10_bits(const char *layout, int n)
{
	struct te_disk d[4] = {0};
	for (int i = 0; i < n; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "r%d", i);
		te_disk_open(&d[i], nm, 12u << 20);
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = URAID_LEVEL_RAID10;
	o.raid_devices = n;
	o.chunk_sectors = 64;
	o.assume_clean = true;
	CHECK(layout_parse(o.level, layout, &o.layout) == 0);
	o.layout_set = true;
	struct uraid_array *a = NULL;
	char err[256];
	if (te_create(&o, d, n, &a) < 0)
		return;
	CHECKF(uraid_bitmap_add(a, 4096, err, sizeof(err)) == 0, "%s", err);
	uint64_t size = uraid_size(a), secs = size / 512;
	uint8_t *shadow = calloc(1, size);
	uint8_t *touched = calloc(secs, 1);
	uint64_t rs = 0x10b175 + (uint64_t)n;
	static uint8_t buf[48 * 512];
	for (int w = 0; w < 25; w++) {
		uint64_t ns = 1 + t_rand(&rs) % 48;
		uint64_t l = t_rand(&rs) % (secs - ns);
		t_fill(&rs, buf, ns * 512);
		CHECK(uraid_write(a, buf, ns * 512, l * 512) == 0);
		memcpy(shadow + l * 512, buf, ns * 512);
		for (uint64_t s = l; s < l + ns; s++)
			touched[s] = 1;
	}
	uraid_drop(a); /* crash: the bits stay */
	a = NULL;
	/* 1.2: superblock at 8, bitmap 8 further, bits after the 256-byte header */
	uint64_t nbits = (secs + 7) / 8;
	uint8_t *bits = malloc(nbits / 8 + 1);
	CHECK(member_read(d[0].mem, bits, nbits / 8 + 1, 16 * 512 + 256) == 0);
	uint64_t wrong = 0, dirty = 0;
	for (uint64_t u = 0; u < nbits; u++) {
		bool want = false;
		for (uint64_t s = u * 8; s < u * 8 + 8 && s < secs; s++)
			want |= touched[s];
		bool got = (bits[u / 8] >> (u % 8)) & 1;
		wrong += got != want;
		dirty += want;
	}
	CHECKF(wrong == 0, "%s: %llu of %llu bits differ from the array-sector reference", layout,
	       (unsigned long long)wrong, (unsigned long long)nbits);
	int idx[4] = {0, 1, 2, 3};
	char warn[512];
	CHECK(te_assemble(d, idx, n, &a, warn, sizeof(warn)) == 0);
	if (a) {
		CHECK(te_sync_all(a) == 0);
		uint64_t skipped = uraid_bitmap_resync_skipped(a);
		CHECKF(skipped + dirty * 8 >= secs && skipped + dirty * 8 < secs + 8,
		       "%s: resync skipped %llu of %llu with %llu dirty units", layout,
		       (unsigned long long)skipped, (unsigned long long)secs,
		       (unsigned long long)dirty);
		CHECK(te_verify(a, shadow, size) == 0);
		CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
		CHECK(te_sync_all(a) == 0);
		struct uraid_status st;
		uraid_status(a, &st);
		CHECK_EQ_U64(st.mismatch_cnt, 0);
		uraid_stop(a);
	}
	printf("# raid10 %s x%d: %llu of %llu bits dirty\n", layout, n, (unsigned long long)dirty,
	       (unsigned long long)nbits);
	free(bits);
	free(touched);
	free(shadow);
	for (int i = 0; i < n; i++)
		te_disk_close(&d[i]);
}

static void raid10_near(void)
{
	raid10_bits("n2", 4);
}
static void raid10_far(void)
{
	raid10_bits("f2", 3);
}
static void raid10_offset(void)
{
	raid10_bits("o2", 3);
}

/* For tests/integration/bitmap_ext_mdvm.sh (URAID_BM_EXPORT=DIR): arrays on
 * files with a 64 KiB-chunk bitmap, written in a few places and dropped as
 * in a crash, so the kernel finds dirty bits in every placement: a10 raid5
 * 1.0, b09 raid1 0.90, c10 raid10 f2 1.0, d12 raid10 n2 1.2. Leaves
 * DIR/TAG_i (members), DIR/TAG.exp (array contents) and DIR/TAG.dirty
 * (dirty bits expected: 64 KiB units of member sectors, of array sectors for
 * raid10, that the writes touched). */
static void export_for_kernel(void)
{
	const char *dir = getenv("URAID_BM_EXPORT");
	if (!dir || !*dir)
		return;
	static const struct {
		const char *tag;
		int md, level;
		const char *layout;
		int n;
	} sets[] = {{"a10", 10, URAID_LEVEL_RAID5, NULL, 4},
	            {"b09", 0, URAID_LEVEL_RAID1, NULL, 2},
	            {"c10", 10, URAID_LEVEL_RAID10, "f2", 3},
	            {"d12", 12, URAID_LEVEL_RAID10, "n2", 4}};
	for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
		char paths[4][512];
		const char *pp[4];
		for (int i = 0; i < sets[k].n; i++) {
			snprintf(paths[i], sizeof(paths[i]), "%s/%s_%d", dir, sets[k].tag, i);
			pp[i] = paths[i];
		}
		struct uraid_create_opts o;
		memset(&o, 0, sizeof(o));
		o.level = sets[k].level;
		o.raid_devices = sets[k].n;
		o.chunk_sectors = 128;
		o.metadata = sets[k].md;
		o.metadata_set = true;
		o.member_bytes = 12u << 20;
		o.assume_clean = true; /* zero files are consistent */
		if (sets[k].layout) {
			CHECK(layout_parse(o.level, sets[k].layout, &o.layout) == 0);
			o.layout_set = true;
		}
		struct uraid_array *a = NULL;
		char err[256];
		CHECKF(uraid_create(&o, pp, sets[k].n, URAID_NO_SYNC_THREAD, &a, err,
		                    sizeof(err)) == 0,
		       "%s: %s", sets[k].tag, err);
		if (!a)
			continue;
		CHECKF(uraid_bitmap_add(a, 65536, err, sizeof(err)) == 0, "%s", err);
		uint64_t size = uraid_size(a), secs = size / 512;
		struct uraid_status st;
		uraid_status(a, &st);
		uint8_t *shadow = calloc(1, size);
		uint64_t units =
		    (sets[k].level == URAID_LEVEL_RAID10 ? secs : st.dev_sectors) / 128 + 1;
		uint8_t *dirty = calloc(units, 1);
		uint64_t rs = 0xe4907 + k;
		static uint8_t buf[300 * 512];
		for (int w = 0; w < 6; w++) {
			uint64_t ns = 1 + t_rand(&rs) % 300;
			uint64_t l = t_rand(&rs) % (secs - ns);
			t_fill(&rs, buf, ns * 512);
			CHECK(uraid_write(a, buf, ns * 512, l * 512) == 0);
			memcpy(shadow + l * 512, buf, ns * 512);
			if (sets[k].level == URAID_LEVEL_RAID5) { /* whole stripe rows */
				uint64_t row = (uint64_t)(sets[k].n - 1) * 128;
				for (uint64_t s = l / row; s <= (l + ns - 1) / row; s++)
					dirty[s] = 1; /* one 64 KiB unit per 64 KiB chunk row */
			} else {
				for (uint64_t u = l / 128; u <= (l + ns - 1) / 128; u++)
					dirty[u] = 1;
			}
		}
		uraid_drop(a);
		uint64_t nd = 0;
		for (uint64_t u = 0; u < units; u++)
			nd += dirty[u];
		char f[600];
		snprintf(f, sizeof(f), "%s/%s.exp", dir, sets[k].tag);
		FILE *e = fopen(f, "wb");
		CHECK(e && fwrite(shadow, 1, size, e) == size);
		if (e)
			fclose(e);
		snprintf(f, sizeof(f), "%s/%s.dirty", dir, sets[k].tag);
		e = fopen(f, "w");
		CHECK(e != NULL);
		if (e) {
			fprintf(e, "%llu\n", (unsigned long long)nd);
			fclose(e);
		}
		free(shadow);
		free(dirty);
	}
}

TEST_MAIN(T(plan_vs_reference), T(engine_places), T(raid10_near), T(raid10_far), T(raid10_offset),
          T(export_for_kernel))
