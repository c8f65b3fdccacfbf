/* uraid_pq_locate: find (and optionally fix) a single silently corrupted
 * member from the P and Q syndromes, column by column, as mdadm's raid6check
 * does.
 *
 * For one byte column let sp = P + P' and sq = Q + Q', where P' and Q' are
 * recomputed from the data. If exactly one member is wrong by an error e != 0:
 *   data z wrong:  sp = e, sq = g^z e   -> z = log(sq) - log(sp), z < k
 *   P wrong:       sp = e, sq = 0
 *   Q wrong:       sp = 0, sq = e
 * Anything else (z >= k) cannot come from one member. The repair only runs
 * when every bad column blames the same member; otherwise nothing is written
 * and the call reports -EILSEQ. */
#include <errno.h>
#include <string.h>

#include "parity/gf.h"
#include "parity/parity_int.h"

#define LOC_CHUNK 4096

/* Discrete logarithms base {02}; lg[0] is unused. */
static void build_log(uint8_t lg[256])
{
	uint8_t x = 1;
	lg[0] = 0;
	for (unsigned i = 0; i < 255; i++) {
		lg[x] = (uint8_t)i;
		x = (uint8_t)((x << 1) ^ ((x & 0x80) ? 0x1d : 0));
	}
}

/* Member blamed by one column, or -2 when no single member explains it. */
static int blame(uint8_t sp, uint8_t sq, int k, const uint8_t lg[256])
{
	if (!sq)
		return k;
	if (!sp)
		return k + 1;
	int z = ((int)lg[sq] - (int)lg[sp] + 255) % 255;
	return z < k ? z : -2;
}

/* Syndromes sp, sq of `n` bytes at offset `off`. */
static int syndromes(const struct uraid_parity *pp, int k, void *const *blocks, size_t off,
                     size_t n, uint8_t *sp, uint8_t *sq)
{
	void *v[URAID_PARITY_MAX_DATA + 2];
	for (int i = 0; i < k; i++)
		v[i] = (uint8_t *)blocks[i] + off;
	v[k] = sp;
	v[k + 1] = sq;
	int rc = pp->pq_gen(k, n, v);
	if (rc < 0)
		return rc;
	const uint8_t *P = (const uint8_t *)blocks[k] + off,
	              *Q = (const uint8_t *)blocks[k + 1] + off;
	for (size_t j = 0; j < n; j++) {
		sp[j] ^= P[j];
		sq[j] ^= Q[j];
	}
	return 0;
}

int uraid_pq_locate(const struct uraid_parity *pp, int k, size_t len, void *const *blocks,
                    bool repair, struct uraid_locate *out)
{
	struct uraid_locate res = {0, 0, -1, 0};
	if (!pp || k < 2 || k > URAID_PARITY_MAX_DATA || len == 0 || !blocks)
		return -EINVAL;
	for (int i = 0; i < k + 2; i++)
		if (!blocks[i])
			return -EINVAL;

	uint8_t lg[256], sp[LOC_CHUNK], sq[LOC_CHUNK];
	build_log(lg);
	bool single = true;
	for (size_t off = 0; off < len; off += LOC_CHUNK) {
		size_t n = len - off < LOC_CHUNK ? len - off : LOC_CHUNK;
		int rc = syndromes(pp, k, blocks, off, n, sp, sq);
		if (rc < 0)
			return rc;
		for (size_t j = 0; j < n; j++) {
			if (!(sp[j] | sq[j]))
				continue;
			if (res.columns_bad++ == 0)
				res.first_bad = off + j;
			int m = blame(sp[j], sq[j], k, lg);
			if (m == -2 || (res.member >= 0 && m != res.member))
				single = false;
			if (res.member == -1)
				res.member = m;
		}
	}
	if (!single)
		res.member = -2;
	if (single && repair && res.columns_bad) {
		uint8_t *bad = blocks[res.member];
		for (size_t off = res.first_bad; off < len; off += LOC_CHUNK) {
			size_t n = len - off < LOC_CHUNK ? len - off : LOC_CHUNK;
			int rc = syndromes(pp, k, blocks, off, n, sp, sq);
			if (rc < 0)
				return rc;
			const uint8_t *fix = res.member == k + 1 ? sq : sp;
			for (size_t j = 0; j < n; j++)
				bad[off + j] ^= fix[j];
		}
		res.columns_fixed = res.columns_bad;
	}
	if (out)
		*out = res;
	return single ? 0 : -EILSEQ;
}
