/* md's bad block log: where it is, its entries decoded and encoded, and the
 * list of bad ranges kept the way md's badblocks.c keeps it (rounded to
 * whole blocks, merged, split on clear). See md_badblocks.h for the format. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "meta/md_badblocks.h"
#include "util/endian.h"
#include "util/errmsg.h"

#define ALL_ONES UINT64_MAX

typedef unsigned long long ull;

int md_bbl_locate(const struct md_sb *sb, uint64_t dev_sectors, struct md_bbl *l, char *err,
                  size_t errlen)
{
	memset(l, 0, sizeof(*l));
	if (sb->version == MD_SB_0_90)
		return 0; /* md keeps no bad block log for 0.90 members */
	int64_t off = (int32_t)sb->bblog_offset;
	if (off == 0) {
		/* super_1_load: -EINVAL, the log it is told to load is nowhere */
		if (sb->feature_map & MD_FEATURE_BAD_BLOCKS)
			return errmsg(err, errlen, -EINVAL,
			              "the superblock says bad blocks are recorded (feature 0x8) "
			              "but names no bad block log (bblog_offset 0)");
		return 0;
	}
	if (sb->bblog_size == 0)
		return 0; /* mdadm: "No bad-blocks list configured"; md loads nothing */
	if (sb->bblog_size > MD_BBL_MAX_SECTORS)
		return errmsg(err, errlen, -EINVAL,
		              "bad block log of %u sectors (bblog_size): md reads at most %d",
		              sb->bblog_size, MD_BBL_MAX_SECTORS);
	if (sb->bblog_shift > MD_BBL_MAX_SHIFT)
		return errmsg(err, errlen, -EINVAL,
		              "bad block log in blocks of 2^%u sectors (bblog_shift): md handles "
		              "at most 2^%d",
		              sb->bblog_shift, MD_BBL_MAX_SHIFT);
	int64_t first = (int64_t)sb->super_offset + off;
	uint64_t n = sb->bblog_size;
	if (first < 0 || (uint64_t)first > dev_sectors || n > dev_sectors - (uint64_t)first)
		return errmsg(err, errlen, -EINVAL,
		              "bad block log at sector %lld (superblock %llu %+lld, %llu sectors) "
		              "lies beyond the member (%llu sectors)",
		              (long long)first, (ull)sb->super_offset, (long long)off, (ull)n,
		              (ull)dev_sectors);
	uint64_t s = (uint64_t)first, e = s + n;
	uint64_t so = sb->super_offset, se = so + md_sb_bytes(sb) / 512;
	if (s < se && so < e)
		return errmsg(err, errlen, -EINVAL,
		              "bad block log (sectors %llu-%llu) overlaps the superblock (sectors "
		              "%llu-%llu)",
		              (ull)s, (ull)e - 1, (ull)so, (ull)se - 1);
	uint64_t ds = sb->data_offset, de = ds + sb->data_size;
	if (sb->data_size && s < de && ds < e)
		return errmsg(err, errlen, -EINVAL,
		              "bad block log (sectors %llu-%llu) overlaps the data area (sectors "
		              "%llu-%llu)",
		              (ull)s, (ull)e - 1, (ull)ds, (ull)de - 1);
	l->sector = s;
	l->sectors = (uint32_t)n;
	l->shift = sb->bblog_shift;
	return 1;
}

int md_bbl_entry(const uint8_t *buf, size_t len, unsigned shift, int i, uint64_t *start,
                 uint64_t *sectors)
{
	if (i < 0 || (size_t)i >= len / 8 || shift > MD_BBL_MAX_SHIFT)
		return 0;
	uint64_t bb = get_le64(buf + (size_t)i * 8);
	if (bb == ALL_ONES)
		return 0;
	*start = (bb >> 10) << shift;
	*sectors = (bb & MD_BBL_LEN_FIELD) << shift;
	return 1;
}

static uint64_t range_entries(const struct md_bbl *l, uint64_t len)
{
	uint64_t blocks = len >> l->shift;
	return (blocks + MD_BBL_ENTRY_BLOCKS - 1) / MD_BBL_ENTRY_BLOCKS;
}

int md_bbl_entries(const struct md_bbl *l)
{
	uint64_t n = 0;
	for (int i = 0; i < l->n; i++)
		n += range_entries(l, l->r[i].len);
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

int md_bbl_capacity(const struct md_bbl *l)
{
	/* md keeps one page in memory and writes bblog_size sectors of it:
	 * a shorter log holds fewer entries (md would silently lose the rest;
	 * here the log is full then). */
	int n = (int)l->sectors * 512 / 8;
	return n < MD_BBL_PAGE_ENTRIES ? n : MD_BBL_PAGE_ENTRIES;
}

struct raw_entry {
	uint64_t start, len;
	int idx;
};

static int by_start(const void *x, const void *y)
{
	const struct raw_entry *a = x, *b = y;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->idx - b->idx;
}

int md_bbl_decode(struct md_bbl *l, const uint8_t *buf, size_t len, uint64_t dev_sectors, char *err,
                  size_t errlen)
{
	l->n = 0;
	if (l->shift > MD_BBL_MAX_SHIFT)
		return errmsg(err, errlen, -EINVAL, "bblog_shift %u is too large", l->shift);
	size_t max = len / 8 < MD_BBL_PAGE_ENTRIES ? len / 8 : MD_BBL_PAGE_ENTRIES;
	struct raw_entry *e = calloc(max ? max : 1, sizeof(*e));
	if (!e)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	int n = 0, rc = 0;
	for (size_t i = 0; i < max; i++) {
		uint64_t bb = get_le64(buf + i * 8);
		if (bb == ALL_ONES)
			break;
		if (bb == 0)
			continue; /* an empty word (a zeroed log): no range */
		uint64_t blk = bb >> 10, cnt = bb & MD_BBL_LEN_FIELD;
		if (cnt == 0) {
			rc = errmsg(err, errlen, -EINVAL,
			            "bad block log entry %zu (sector %llu) has length 0", i,
			            (ull)(blk << l->shift));
			goto out;
		}
		/* blk < 2^54 and shift <= 21: no overflow before the comparison */
		if (blk > (dev_sectors >> l->shift) ||
		    (cnt << l->shift) > dev_sectors - (blk << l->shift)) {
			rc = errmsg(
			    err, errlen, -EINVAL,
			    "bad block log entry %zu (sectors %llu-%llu) lies past the end of "
			    "the member (%llu sectors)",
			    i, (ull)(blk << l->shift), (ull)((blk + cnt) << l->shift) - 1,
			    (ull)dev_sectors);
			goto out;
		}
		e[n].start = blk << l->shift;
		e[n].len = cnt << l->shift;
		e[n].idx = (int)i;
		n++;
	}
	qsort(e, (size_t)n, sizeof(*e), by_start);
	for (int i = 0; i < n; i++) {
		if (i > 0 && e[i].start < e[i - 1].start + e[i - 1].len) {
			const struct raw_entry *p = &e[i - 1], *q = &e[i];
			const struct raw_entry *lo = p->idx < q->idx ? p : q,
			                       *hi = p->idx < q->idx ? q : p;
			rc =
			    errmsg(err, errlen, -EINVAL,
			           "bad block log entries %d and %d overlap (sectors %llu-%llu and "
			           "%llu-%llu)",
			           lo->idx, hi->idx, (ull)lo->start, (ull)(lo->start + lo->len - 1),
			           (ull)hi->start, (ull)(hi->start + hi->len - 1));
			goto out;
		}
		/* adjacent entries (md splits ranges longer than 512 blocks) merge */
		if (l->n > 0 && l->r[l->n - 1].start + l->r[l->n - 1].len == e[i].start)
			l->r[l->n - 1].len += e[i].len;
		else
			l->r[l->n++] = (struct md_bb_range){e[i].start, e[i].len};
	}
out:
	if (rc < 0)
		l->n = 0;
	free(e);
	return rc;
}

int md_bbl_encode(const struct md_bbl *l, uint8_t *buf, size_t len)
{
	memset(buf, 0xff, len);
	size_t max = len / 8, k = 0;
	uint64_t mask = ((uint64_t)1 << l->shift) - 1;
	for (int i = 0; i < l->n; i++) {
		const struct md_bb_range *r = &l->r[i];
		if ((r->start & mask) || (r->len & mask) || r->len == 0)
			return -EINVAL;
		uint64_t blk = r->start >> l->shift, left = r->len >> l->shift;
		while (left) {
			uint64_t cnt = left < MD_BBL_ENTRY_BLOCKS ? left : MD_BBL_ENTRY_BLOCKS;
			if (k >= max || k >= MD_BBL_PAGE_ENTRIES || blk >> 54)
				return -ENOSPC;
			put_le64(buf + k * 8, blk << 10 | cnt);
			k++;
			blk += cnt;
			left -= cnt;
		}
	}
	return 0;
}

/* Replace ranges [lo, hi) of l by the nr ranges in `with`, if the result
 * fits the log. */
static int splice(struct md_bbl *l, int lo, int hi, const struct md_bb_range *with, int nr)
{
	int64_t entries = md_bbl_entries(l);
	for (int i = lo; i < hi; i++)
		entries -= (int64_t)range_entries(l, l->r[i].len);
	for (int i = 0; i < nr; i++)
		entries += (int64_t)range_entries(l, with[i].len);
	int n = l->n - (hi - lo) + nr;
	if (entries > md_bbl_capacity(l) || n > MD_BBL_PAGE_ENTRIES)
		return -ENOSPC;
	memmove(&l->r[lo + nr], &l->r[hi], (size_t)(l->n - hi) * sizeof(l->r[0]));
	memcpy(&l->r[lo], with, (size_t)nr * sizeof(l->r[0]));
	l->n = n;
	return 1;
}

int md_bbl_add(struct md_bbl *l, uint64_t start, uint64_t len)
{
	uint64_t bs = (uint64_t)1 << l->shift;
	if (len == 0 || start + len < start || start + len > UINT64_MAX - bs)
		return -EINVAL;
	uint64_t s = start & ~(bs - 1), e = (start + len + bs - 1) & ~(bs - 1);
	/* every range that overlaps or touches [s, e) merges with it */
	int lo = 0;
	while (lo < l->n && l->r[lo].start + l->r[lo].len < s)
		lo++;
	int hi = lo;
	while (hi < l->n && l->r[hi].start <= e)
		hi++;
	if (hi - lo == 1 && l->r[lo].start <= s && l->r[lo].start + l->r[lo].len >= e)
		return 0;
	struct md_bb_range m = {s, e - s};
	if (hi > lo) {
		uint64_t ms = l->r[lo].start < s ? l->r[lo].start : s;
		uint64_t me = l->r[hi - 1].start + l->r[hi - 1].len;
		if (me < e)
			me = e;
		m = (struct md_bb_range){ms, me - ms};
	}
	return splice(l, lo, hi, &m, 1);
}

int md_bbl_clear(struct md_bbl *l, uint64_t start, uint64_t len)
{
	uint64_t bs = (uint64_t)1 << l->shift;
	if (len == 0 || start + len < start || start > UINT64_MAX - bs)
		return 0;
	uint64_t s = (start + bs - 1) & ~(bs - 1), e = (start + len) & ~(bs - 1);
	if (s >= e)
		return 0;
	int lo = 0;
	while (lo < l->n && l->r[lo].start + l->r[lo].len <= s)
		lo++;
	int hi = lo;
	while (hi < l->n && l->r[hi].start < e)
		hi++;
	if (hi == lo)
		return 0;
	struct md_bb_range keep[2];
	int nk = 0;
	if (l->r[lo].start < s)
		keep[nk++] = (struct md_bb_range){l->r[lo].start, s - l->r[lo].start};
	uint64_t last_end = l->r[hi - 1].start + l->r[hi - 1].len;
	if (last_end > e)
		keep[nk++] = (struct md_bb_range){e, last_end - e};
	return splice(l, lo, hi, keep, nk);
}

bool md_bbl_find(const struct md_bbl *l, uint64_t start, uint64_t len, uint64_t *first_bad,
                 uint64_t *bad_len)
{
	if (!l || l->n == 0 || len == 0)
		return false;
	/* binary search: the first range ending after start */
	int lo = 0, hi = l->n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (l->r[mid].start + l->r[mid].len <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= l->n || l->r[lo].start >= start + len)
		return false;
	uint64_t fb = l->r[lo].start > start ? l->r[lo].start : start;
	uint64_t end = l->r[lo].start + l->r[lo].len;
	if (end > start + len)
		end = start + len;
	if (first_bad)
		*first_bad = fb;
	if (bad_len)
		*bad_len = end - fb;
	return true;
}
