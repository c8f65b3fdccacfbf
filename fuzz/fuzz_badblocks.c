/* libFuzzer target for md's bad block log codec (src/meta/md_badblocks.c).
 * The first 32 bytes are superblock fields for md_bbl_locate (version,
 * offsets, sizes, bblog fields: no crash, a refusal says why, a log it
 * accepts lies inside the member clear of the superblock and the data);
 * the rest is a log (up to 8 sectors, the first byte choosing the shift)
 * for md_bbl_decode: what decodes is sorted, disjoint, within the member and
 * fits the log, re-encodes and decodes to the same list; then add/clear
 * operations taken from the input keep it so (or refuse with -ENOSPC and
 * change nothing). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "meta/md_badblocks.h"
#include "util/endian.h"

static void check_list(const struct md_bbl *l, uint64_t dev)
{
	uint64_t mask = ((uint64_t)1 << l->shift) - 1;
	for (int i = 0; i < l->n; i++) {
		const struct md_bb_range *r = &l->r[i];
		if (r->len == 0 || (r->start & mask) || (r->len & mask))
			abort();
		if (i && r->start <= l->r[i - 1].start + l->r[i - 1].len)
			abort();
		if (dev && (r->start > dev || r->len > dev - r->start))
			abort();
	}
	if (md_bbl_entries(l) > md_bbl_capacity(l))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 33)
		return 0;
	static const enum md_sb_version vs[] = {MD_SB_0_90, MD_SB_1_0, MD_SB_1_1, MD_SB_1_2};
	struct md_sb sb;
	memset(&sb, 0, sizeof(sb));
	sb.version = vs[data[0] & 3];
	sb.feature_map = data[0] & 4 ? MD_FEATURE_BAD_BLOCKS : 0;
	uint64_t dev = get_le32(data + 1) >> (data[5] % 32);
	sb.super_offset = get_le32(data + 6) % (dev + 1);
	sb.data_offset = get_le32(data + 10) % (dev + 1);
	sb.data_size = get_le32(data + 14) % (dev - sb.data_offset + 1);
	sb.bblog_offset = get_le32(data + 18);
	sb.bblog_size = get_le16(data + 22);
	sb.bblog_shift = data[24];
	sb.max_dev = get_le16(data + 25) % MD_SB1_MAX_DEVS;
	char err[256] = "";
	struct md_bbl *l = malloc(sizeof(*l));
	if (!l)
		return 0;
	int rc = md_bbl_locate(&sb, dev, l, err, sizeof(err));
	if (rc < 0 && (!memchr(err, 0, sizeof(err)) || !err[0]))
		abort();
	if (rc == 1) {
		uint64_t s = l->sector, e = s + l->sectors;
		if (e > dev || l->sectors == 0 || l->sectors > MD_BBL_MAX_SECTORS)
			abort();
		if (sb.data_size && s < sb.data_offset + sb.data_size && sb.data_offset < e)
			abort();
	}
	/* The log itself, independent of where locate put it. */
	const uint8_t *log = data + 33;
	size_t len = size - 33;
	if (len > MD_BBL_MAX_SECTORS * 512)
		len = MD_BBL_MAX_SECTORS * 512;
	memset(l, 0, sizeof(*l));
	l->shift = data[27] % (MD_BBL_MAX_SHIFT + 2); /* one beyond: refused */
	l->sectors = (uint32_t)(len / 512 ? len / 512 : 1);
	uint64_t ldev = dev ? dev : 1;
	err[0] = 0;
	rc = md_bbl_decode(l, log, len, ldev, err, sizeof(err));
	if (rc < 0) {
		if (!err[0] || l->n != 0)
			abort();
		free(l);
		return 0;
	}
	check_list(l, ldev);
	uint8_t *enc = malloc(MD_BBL_MAX_SECTORS * 512);
	struct md_bbl *d = malloc(sizeof(*d));
	if (!enc || !d)
		goto out;
	size_t elen = (size_t)l->sectors * 512;
	if (md_bbl_encode(l, enc, elen) != 0)
		abort(); /* a decoded list always fits its own log */
	*d = *l;
	d->n = 0;
	if (md_bbl_decode(d, enc, elen, ldev, err, sizeof(err)) != 0 || d->n != l->n ||
	    memcmp(d->r, l->r, sizeof(l->r[0]) * (size_t)l->n))
		abort();
	/* operations from the input's first bytes */
	for (int i = 0; i + 4 <= 32; i += 4) {
		uint64_t s = get_le16(data + i) % (ldev + 8), n = data[i + 2] + 1u;
		*d = *l;
		rc = data[i + 3] & 1 ? md_bbl_add(l, s, n) : md_bbl_clear(l, s, n);
		if (rc == -ENOSPC && memcmp(d, l, sizeof(*l)))
			abort();
		if (rc < 0 && rc != -ENOSPC)
			abort();
		check_list(l, 0);
		uint64_t fb = 0, bl = 0;
		if (md_bbl_find(l, s, n, &fb, &bl) && (fb < s || fb + bl > s + n || bl == 0))
			abort();
	}
out:
	free(enc);
	free(d);
	free(l);
	return 0;
}
