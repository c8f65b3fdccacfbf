/* md's bad block log codec (src/meta/md_badblocks.c) against references
 * written here from the kernel's layout: an encoder that packs each range
 * as md.c super_1_sync does ((start >> shift) << 10 | blocks, at most 512
 * blocks an entry, all ones after the last), a decoder that reads entries as
 * super_1_load does into a per-sector model, and add/clear checked sector
 * by sector against that model with badblocks.c's rounding (set: start
 * down, end up; clear: start up, end down). Refusals of corrupt logs and
 * misplaced ones name the entry and its sectors. Fixed seeds. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "../harness.h"
#include "meta/md_badblocks.h"

#define DOM 4096 /* sectors of the model's member */

/* md.c super_1_sync's packing of a sorted range list, byte by byte. */
static void ref_encode(const struct md_bb_range *r, int n, unsigned shift, uint8_t *buf, size_t len)
{
	memset(buf, 0xff, len);
	size_t k = 0;
	for (int i = 0; i < n; i++) {
		uint64_t blk = r[i].start >> shift, left = r[i].len >> shift;
		while (left) {
			uint64_t cnt = left > 512 ? 512 : left;
			uint64_t w = blk << 10 | cnt;
			for (int b = 0; b < 8; b++)
				buf[k * 8 + (size_t)b] = (uint8_t)(w >> (8 * b));
			k++;
			blk += cnt;
			left -= cnt;
		}
	}
}

/* md.c super_1_load's reading, into a bad-sector map. */
static void ref_decode(const uint8_t *buf, size_t len, unsigned shift, bool *bad)
{
	memset(bad, 0, DOM);
	for (size_t i = 0; i < len / 8; i++) {
		uint64_t bb = 0;
		for (int b = 7; b >= 0; b--)
			bb = bb << 8 | buf[i * 8 + (size_t)b];
		if (bb + 1 == 0)
			break;
		uint64_t sector = (bb >> 10) << shift, count = (bb & 0x3ff) << shift;
		for (uint64_t s = sector; s < sector + count && s < DOM; s++)
			bad[s] = true;
	}
}

static void list_map(const struct md_bbl *l, bool *bad)
{
	memset(bad, 0, DOM);
	for (int i = 0; i < l->n; i++)
		for (uint64_t s = l->r[i].start; s < l->r[i].start + l->r[i].len && s < DOM; s++)
			bad[s] = true;
}

/* sorted, disjoint, not touching, whole blocks */
static bool well_formed(const struct md_bbl *l)
{
	uint64_t mask = ((uint64_t)1 << l->shift) - 1;
	for (int i = 0; i < l->n; i++) {
		if (l->r[i].len == 0 || (l->r[i].start & mask) || (l->r[i].len & mask))
			return false;
		if (i && l->r[i].start <= l->r[i - 1].start + l->r[i - 1].len)
			return false;
	}
	return true;
}

static void new_log(struct md_bbl *l, unsigned shift, uint32_t sectors)
{
	memset(l, 0, sizeof(*l));
	l->sector = 24;
	l->sectors = sectors;
	l->shift = shift;
}

static void put_word(uint8_t *buf, int i, uint64_t w)
{
	for (int b = 0; b < 8; b++)
		buf[i * 8 + b] = (uint8_t)(w >> (8 * b));
}

static uint64_t ref_word(const uint8_t *buf, int i)
{
	uint64_t w = 0;
	for (int b = 7; b >= 0; b--)
		w = w << 8 | buf[i * 8 + b];
	return w;
}

/* Random disjoint ranges: encode gives the reference bytes; decode gives
 * back the same ranges; the entries shuffled, with a zero word among them,
 * decode the same. */
static void round_trip(void)
{
	uint64_t rs = 0xbad0b10c;
	for (int it = 0; it < 3000; it++) {
		unsigned shift = (unsigned)(t_rand(&rs) % 4);
		uint64_t bs = 1u << shift;
		struct md_bbl l;
		new_log(&l, shift, 8);
		uint64_t pos = 0;
		int n = (int)(t_rand(&rs) % 40);
		struct md_bb_range r[64] = {{0}};
		int nr = 0;
		for (int i = 0; i < n; i++) {
			pos += (1 + t_rand(&rs) % 40) * bs; /* a gap: ranges never touch */
			uint64_t len = (1 + t_rand(&rs) % (it % 7 ? 20 : 1100)) * bs;
			r[nr++] = (struct md_bb_range){pos, len};
			pos += len;
		}
		memcpy(l.r, r, sizeof(r[0]) * (size_t)nr);
		l.n = nr;
		uint8_t got[4096], ref[4096];
		ref_encode(r, nr, shift, ref, sizeof(ref));
		memset(got, 0x55, sizeof(got));
		CHECK(md_bbl_encode(&l, got, sizeof(got)) == 0);
		CHECK(!memcmp(got, ref, sizeof(got)));
		CHECK(md_bbl_entries(&l) <= md_bbl_capacity(&l));
		struct md_bbl d;
		new_log(&d, shift, 8);
		char err[256] = "";
		CHECKF(md_bbl_decode(&d, ref, sizeof(ref), 1u << 30, err, sizeof(err)) == 0, "%s",
		       err);
		CHECK(d.n == nr && !memcmp(d.r, r, sizeof(r[0]) * (size_t)nr));
		int ne = 0;
		while (ne < 512 && ref_word(ref, ne) != ~0ull)
			ne++;
		for (int i = ne - 1; i > 0; i--) {
			int j = (int)(t_rand(&rs) % (uint64_t)(i + 1));
			uint8_t tmp[8];
			memcpy(tmp, ref + i * 8, 8);
			memcpy(ref + i * 8, ref + j * 8, 8);
			memcpy(ref + j * 8, tmp, 8);
		}
		if (ne + 1 < 512) {
			put_word(ref, ne, 0);
			put_word(ref, ne + 1, ~0ull);
		}
		new_log(&d, shift, 8);
		CHECKF(md_bbl_decode(&d, ref, sizeof(ref), 1u << 30, err, sizeof(err)) == 0, "%s",
		       err);
		CHECK(d.n == nr && !memcmp(d.r, r, sizeof(r[0]) * (size_t)nr));
	}
}

/* Logs as md could leave them (entries of up to 1023 blocks, adjacent ones,
 * any order; words after the end): the sectors decoded are the ones
 * super_1_load would mark; re-encoded, md reads the same sectors back and
 * no entry is longer than md's 512 blocks. */
static void kernel_model(void)
{
	uint64_t rs = 0x5e11;
	static bool want[DOM], got[DOM];
	for (int it = 0; it < 2000; it++) {
		unsigned shift = (unsigned)(t_rand(&rs) % 3);
		uint64_t bs = 1u << shift;
		uint8_t buf[4096];
		memset(buf, 0xff, sizeof(buf));
		int ne = 0;
		uint64_t pos = 0;
		while (ne < 60) {
			pos += (t_rand(&rs) % 3) * bs; /* 0: adjacent to the previous one */
			uint64_t cnt = 1 + t_rand(&rs) % (it % 5 ? 16 : 1023);
			if (pos + (cnt << shift) > DOM)
				break;
			put_word(buf, ne++, (pos >> shift) << 10 | cnt);
			pos += cnt << shift;
		}
		for (int i = ne - 1; i > 0; i--) {
			int j = (int)(t_rand(&rs) % (uint64_t)(i + 1));
			uint64_t a = ref_word(buf, i), b = ref_word(buf, j);
			put_word(buf, i, b);
			put_word(buf, j, a);
		}
		if (ne + 2 < 512) /* after the end: not entries */
			put_word(buf, ne + 1, (uint64_t)1 << 10 | 3);
		ref_decode(buf, sizeof(buf), shift, want);
		struct md_bbl l;
		new_log(&l, shift, 8);
		char err[256] = "";
		CHECKF(md_bbl_decode(&l, buf, sizeof(buf), DOM, err, sizeof(err)) == 0, "%s", err);
		CHECK(well_formed(&l));
		list_map(&l, got);
		CHECK(!memcmp(want, got, sizeof(want)));
		uint8_t enc[4096];
		CHECK(md_bbl_encode(&l, enc, sizeof(enc)) == 0);
		ref_decode(enc, sizeof(enc), shift, got);
		CHECK(!memcmp(want, got, sizeof(want)));
		for (int i = 0; i < 512 && ref_word(enc, i) != ~0ull; i++)
			CHECK((ref_word(enc, i) & 0x3ff) >= 1 && (ref_word(enc, i) & 0x3ff) <= 512);
	}
}

/* add/clear against the per-sector model with md's rounding; a full log
 * refuses (-ENOSPC) and stays as it was; find agrees with the model. */
static void add_clear_model(void)
{
	uint64_t rs = 0xadd;
	static bool model[DOM], got[DOM];
	for (int it = 0; it < 300; it++) {
		unsigned shift = (unsigned)(t_rand(&rs) % 4);
		uint64_t bs = 1u << shift;
		struct md_bbl l;
		new_log(&l, shift, it % 3 ? 8 : 1); /* a 1-sector log holds 64 entries */
		memset(model, 0, sizeof(model));
		for (int op = 0; op < 300; op++) {
			uint64_t s = t_rand(&rs) % (DOM - 64),
			         n = 1 + t_rand(&rs) % (op % 9 ? 9 : 700);
			if (s + n > DOM)
				n = DOM - s;
			struct md_bbl before = l;
			bool add = t_rand(&rs) % 3 != 0;
			int rc = add ? md_bbl_add(&l, s, n) : md_bbl_clear(&l, s, n);
			if (rc == -ENOSPC) {
				CHECK(!memcmp(&before, &l, sizeof(l)));
				continue;
			}
			CHECK(rc == 0 || rc == 1);
			uint64_t a = add ? s / bs * bs : (s + bs - 1) / bs * bs;
			uint64_t b = add ? (s + n + bs - 1) / bs * bs : (s + n) / bs * bs;
			bool changed = false;
			for (uint64_t x = a; x < b && x < DOM; x++) {
				changed |= model[x] != add;
				model[x] = add;
			}
			CHECK(rc == (changed ? 1 : 0));
			CHECK(well_formed(&l));
			CHECK(md_bbl_entries(&l) <= md_bbl_capacity(&l));
			list_map(&l, got);
			CHECK(!memcmp(model, got, sizeof(model)));
			uint64_t qs = t_rand(&rs) % DOM, qn = 1 + t_rand(&rs) % 64, fb = 0, bl = 0;
			if (qs + qn > DOM)
				qn = DOM - qs;
			uint64_t mfb = UINT64_MAX, mbl = 0;
			for (uint64_t x = qs; x < qs + qn; x++)
				if (model[x]) {
					if (mfb == UINT64_MAX)
						mfb = x;
					if (x == mfb + mbl)
						mbl++;
				}
			bool found = md_bbl_find(&l, qs, qn, &fb, &bl);
			CHECK(found == (mfb != UINT64_MAX));
			if (found && mfb != UINT64_MAX) {
				CHECK_EQ_U64(fb, mfb);
				CHECK_EQ_U64(bl, mbl);
			}
		}
	}
	/* the 65th entry of a 1-sector log does not fit */
	struct md_bbl l;
	new_log(&l, 0, 1);
	for (int i = 0; i < 64; i++)
		CHECK(md_bbl_add(&l, (uint64_t)i * 10, 1) == 1);
	CHECK(md_bbl_add(&l, 1000, 1) == -ENOSPC && l.n == 64);
	CHECK(md_bbl_add(&l, 1, 1) == 1 && l.n == 64); /* merging needs no new entry */
}

static int decode_err(const uint8_t *buf, uint64_t dev, char *err, size_t len)
{
	struct md_bbl l;
	new_log(&l, 0, 8);
	return md_bbl_decode(&l, buf, 4096, dev, err, len);
}

/* Corrupt logs and misplaced ones: refused, the message naming the entry or
 * field and the sectors. */
static void refusals(void)
{
	uint8_t buf[4096];
	char err[256];
	memset(buf, 0xff, sizeof(buf));
	put_word(buf, 0, 100 << 10 | 4);
	put_word(buf, 1, 300 << 10 | 0);
	CHECK(decode_err(buf, 10000, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "entry 1") && strstr(err, "sector 300") && strstr(err, "length 0"), "%s",
	       err);
	put_word(buf, 1, 9990ull << 10 | 20);
	CHECK(decode_err(buf, 10000, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "entry 1") && strstr(err, "9990-10009") && strstr(err, "10000 sectors"),
	       "%s", err);
	put_word(buf, 1, (1ull << 53) << 10 | 20); /* far beyond: no overflow */
	CHECK(decode_err(buf, 10000, err, sizeof(err)) == -EINVAL);
	put_word(buf, 1, 500 << 10 | 8);
	put_word(buf, 2, 102 << 10 | 1);
	CHECK(decode_err(buf, 10000, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "entries 0 and 2 overlap") && strstr(err, "100-103") &&
	           strstr(err, "102-102"),
	       "%s", err);
	put_word(buf, 2, 104 << 10 | 1); /* adjacent: fine */
	CHECK(decode_err(buf, 10000, err, sizeof(err)) == 0);

	struct md_sb sb;
	memset(&sb, 0, sizeof(sb));
	sb.version = MD_SB_1_2;
	sb.super_offset = 8;
	sb.max_dev = 128;
	sb.data_offset = 2048;
	sb.data_size = 30000;
	sb.bblog_offset = 16;
	sb.bblog_size = 8;
	struct md_bbl l;
	uint64_t dev = 32768;
	CHECK(md_bbl_locate(&sb, dev, &l, err, sizeof(err)) == 1);
	CHECK(l.sector == 24 && l.sectors == 8 && l.shift == 0 && md_bbl_capacity(&l) == 512);
	sb.bblog_offset = 0;
	CHECK(md_bbl_locate(&sb, dev, &l, err, sizeof(err)) == 0);
	sb.feature_map = MD_FEATURE_BAD_BLOCKS;
	CHECK(md_bbl_locate(&sb, dev, &l, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "bblog_offset 0"), "%s", err);
	sb.bblog_offset = 16;
	sb.bblog_size = 9;
	CHECK(md_bbl_locate(&sb, dev, &l, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "9 sectors"), "%s", err);
	sb.bblog_size = 8;
	sb.bblog_shift = 22;
	CHECK(md_bbl_locate(&sb, dev, &l, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "bblog_shift"), "%s", err);
	sb.bblog_shift = 0;
	sb.bblog_offset = (uint32_t)40000;
	CHECK(md_bbl_locate(&sb, dev, &l, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "beyond the member") && strstr(err, "32768 sectors"), "%s", err);
	sb.bblog_offset = (uint32_t)-16; /* sector -8 */
	CHECK(md_bbl_locate(&sb, dev, &l, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "beyond the member"), "%s", err);
	sb.bblog_offset = 0xfffffffc; /* -4: over the superblock's first sectors */
	CHECK(md_bbl_locate(&sb, dev, &l, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "overlaps the superblock"), "%s", err);
	sb.bblog_offset = 2044; /* sectors 2052..: inside the data */
	CHECK(md_bbl_locate(&sb, dev, &l, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "overlaps the data area") && strstr(err, "2052-2059"), "%s", err);
	sb.version = MD_SB_0_90;
	CHECK(md_bbl_locate(&sb, dev, &l, err, sizeof(err)) == 0);
}

/* Where mdadm 4.2 (and uraid's create, which follows it) puts the log:
 * 1.1/1.2 at 8 + the bitmap room after the superblock (+16 on members
 * under 8 GiB: choose_bm_space gives 4 KiB), 1.0 at -8 right below the
 * superblock; every one is accepted as placed. */
static void placements(void)
{
	static const enum md_sb_version vs[] = {MD_SB_1_0, MD_SB_1_1, MD_SB_1_2};
	for (int v = 0; v < 3; v++) {
		struct md_create_params p;
		memset(&p, 0, sizeof(p));
		p.version = vs[v];
		p.level = 1;
		p.raid_disks = 2;
		uint64_t dev = 65536;
		uint64_t ds[2] = {dev, dev};
		char err[256] = "";
		CHECKF(md_create_plan(&p, ds, 2, err, sizeof(err)) == 0, "%s", err);
		struct md_sb sb;
		uint8_t uuid[16] = {1};
		CHECKF(md_sb_init(&sb, &p, 0, 0, uuid, dev, err, sizeof(err)) == 0, "%s", err);
		struct md_bbl l;
		CHECKF(md_bbl_locate(&sb, dev, &l, err, sizeof(err)) == 1, "%s: %s",
		       md_sb_version_name(vs[v]), err);
		int64_t want = vs[v] == MD_SB_1_0 ? -8 : 16;
		CHECKF((int32_t)sb.bblog_offset == want, "%s: %d", md_sb_version_name(vs[v]),
		       (int32_t)sb.bblog_offset);
		CHECK(l.sector == sb.super_offset + (uint64_t)want && l.sectors == 8);
	}
}

/* The host's mdadm --examine-badblocks lists what we encode (in a member
 * image with a superblock from md_sb_init), entry for entry. */
static void mdadm_reads_it(void)
{
	if (system("mdadm --version >/dev/null 2>&1") != 0) {
		printf("# host mdadm missing: skipped\n");
		return;
	}
	char path[] = "/tmp/uraid-bbl-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	uint64_t dev = 32768;
	CHECK(ftruncate(fd, (off_t)dev * 512) == 0);
	struct md_create_params p;
	memset(&p, 0, sizeof(p));
	p.version = MD_SB_1_2;
	p.level = 1;
	p.raid_disks = 2;
	uint64_t ds[2] = {dev, dev};
	char err[256] = "";
	CHECK(md_create_plan(&p, ds, 2, err, sizeof(err)) == 0);
	struct md_sb sb;
	uint8_t uuid[16] = {7};
	CHECK(md_sb_init(&sb, &p, 0, 0, uuid, dev, err, sizeof(err)) == 0);
	sb.feature_map |= MD_FEATURE_BAD_BLOCKS;
	struct md_bbl l;
	CHECK(md_bbl_locate(&sb, dev, &l, err, sizeof(err)) == 1);
	CHECK(md_bbl_add(&l, 2100, 3) == 1);
	CHECK(md_bbl_add(&l, 9000, 700) == 1); /* two entries: 512 + 188 */
	CHECK(md_bbl_add(&l, 4000, 1) == 1);
	uint8_t sbuf[4096], lbuf[4096];
	CHECK(md_sb_encode(&sb, sbuf, sizeof(sbuf)) == 0);
	CHECK(md_bbl_encode(&l, lbuf, sizeof(lbuf)) == 0);
	CHECK(pwrite(fd, sbuf, sizeof(sbuf), (off_t)sb.super_offset * 512) == 4096);
	CHECK(pwrite(fd, lbuf, sizeof(lbuf), (off_t)l.sector * 512) == 4096);
	close(fd);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "mdadm --examine-badblocks %s 2>&1", path);
	FILE *f = popen(cmd, "r");
	char line[256];
	unsigned long long want[][2] = {{2100, 3}, {4000, 1}, {9000, 512}, {9512, 188}};
	int seen = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long s, n;
		if (sscanf(line, " %llu for %llu sectors", &s, &n) != 2)
			continue;
		CHECKF(seen < 4 && s == want[seen][0] && n == want[seen][1], "%s", line);
		seen++;
	}
	CHECK(f && pclose(f) == 0);
	CHECKF(seen == 4, "mdadm listed %d of 4 entries", seen);
	unlink(path);
}

TEST_MAIN(T(round_trip), T(kernel_model), T(add_clear_model), T(refusals), T(placements),
          T(mdadm_reads_it))
