/* The generic parity layer: argument validation, the RAID6 recovery algebra
 * and run-time backend selection. Backends only provide data-pass kernels
 * (parity_int.h), so every backend shares one set of checks and one set of
 * recovery formulas.
 *
 * Notation: data blocks D0..Dk-1 in syndrome order, P = sum Di,
 * Q = sum g^i Di over GF(2^8) (addition is XOR, g = {02}). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parity/gf.h"
#include "parity/parity_int.h"

static bool blocks_ok(void *const *blocks, int n)
{
	if (!blocks)
		return false;
	for (int i = 0; i < n; i++)
		if (!blocks[i])
			return false;
	return true;
}

int parity_xor_gen(const struct parity_kernels *kk, int k, size_t len, void *const *blocks)
{
	if (k < 1 || k > URAID_PARITY_MAX_DATA || len == 0 || !blocks_ok(blocks, k + 1))
		return -EINVAL;
	kk->xor_n(len, k, (const uint8_t *const *)blocks, blocks[k]);
	return 0;
}

/* Slices of the blocked fallback: the sources of one slice stay in L1/L2
 * between the XOR and the copies. */
#define XOR_COPY_SLICE ((size_t)16 << 10)

int parity_xor_copy_gen(const struct parity_kernels *kk, int k, size_t len, void *const *blocks,
                        void *const *copies)
{
	if (k < 1 || k > URAID_PARITY_MAX_DATA || len == 0 || !blocks_ok(blocks, k + 1))
		return -EINVAL;
	const uint8_t *const *src = (const uint8_t *const *)blocks;
	uint8_t *dst = blocks[k];
	if (!copies) {
		kk->xor_n(len, k, src, dst);
		return 0;
	}
	if (kk->xor_copy) {
		kk->xor_copy(len, k, src, dst, (uint8_t *const *)copies);
		return 0;
	}
	const uint8_t *t[URAID_PARITY_MAX_DATA];
	for (size_t o = 0; o < len; o += XOR_COPY_SLICE) {
		size_t n = len - o < XOR_COPY_SLICE ? len - o : XOR_COPY_SLICE;
		for (int i = 0; i < k; i++)
			t[i] = src[i] + o;
		kk->xor_n(n, k, t, dst + o);
		for (int i = 0; i < k; i++)
			if (copies[i])
				memcpy((uint8_t *)copies[i] + o, t[i], n);
	}
	return 0;
}

int parity_pq_gen(const struct parity_kernels *kk, int k, size_t len, void *const *blocks)
{
	if (k < 2 || k > URAID_PARITY_MAX_DATA || len == 0 || !blocks_ok(blocks, k + 2))
		return -EINVAL;
	kk->gen(len, k, (const uint8_t *const *)blocks, blocks[k], blocks[k + 1]);
	return 0;
}

int parity_pq_update(const struct parity_kernels *kk, int k, size_t len, void *p, void *q, int n,
                     const int *idx, const void *const *old, const void *const *new_)
{
	/* k >= 1 so RAID4/5 (P only) can use the same call. */
	if (k < 1 || k > URAID_PARITY_MAX_DATA || len == 0 || (!p && !q) || n < 1 || n > k ||
	    !idx || !old || !new_)
		return -EINVAL;
	if (q && k < 2)
		return -EINVAL;
	/* Check everything before touching P or Q, so a bad entry late in the
	 * list cannot leave the parity half-updated. */
	for (int j = 0; j < n; j++) {
		if (idx[j] < 0 || idx[j] >= k || !old[j] || !new_[j])
			return -EINVAL;
		for (int i = 0; i < j; i++)
			if (idx[i] == idx[j])
				return -EINVAL;
	}
	if (kk->update_n && n > 1) {
		uint8_t c[URAID_PARITY_MAX_DATA];
		for (int j = 0; j < n; j++)
			c[j] = gf8_exp2((unsigned)idx[j]);
		kk->update_n(len, n, c, (const uint8_t *const *)old, (const uint8_t *const *)new_,
		             p, q);
		return 0;
	}
	for (int j = 0; j < n; j++)
		kk->update(len, gf8_exp2((unsigned)idx[j]), old[j], new_[j], p, q);
	return 0;
}

/* P' and/or Q' (p, q may be NULL) with data blocks `skip_a` and `skip_b` (-1: none)
 * taken as zero. */
static void gen_skipping(const struct parity_kernels *kk, int k, size_t len, void *const *blocks,
                         int skip_a, int skip_b, uint8_t *p, uint8_t *q)
{
	const uint8_t *d[URAID_PARITY_MAX_DATA];
	for (int i = 0; i < k; i++)
		d[i] = (i == skip_a || i == skip_b) ? NULL : blocks[i];
	kk->gen(len, k, d, p, q);
}

/* Lost data block x from P and the other data blocks: Dx = P + sum(i != x) Di. */
static void rebuild_from_p(const struct parity_kernels *kk, int k, size_t len, void *const *blocks,
                           int x)
{
	const uint8_t *src[URAID_PARITY_MAX_DATA];
	int n = 0;
	for (int i = 0; i <= k; i++)
		if (i != x)
			src[n++] = blocks[i];
	kk->xor_n(len, n, src, blocks[x]);
}

int parity_recover(const struct parity_kernels *kk, int k, size_t len, void *const *blocks,
                   bool has_q, int nfail, const int *fail)
{
	int nblocks = k + (has_q ? 2 : 1);
	if (k < (has_q ? 2 : 1) || k > URAID_PARITY_MAX_DATA || len == 0 ||
	    !blocks_ok(blocks, nblocks) || !fail || nfail < 1 || nfail > (has_q ? 2 : 1))
		return -EINVAL;
	int a = fail[0], b = nfail == 2 ? fail[1] : -1;
	if (a < 0 || a >= nblocks || (nfail == 2 && (b < 0 || b >= nblocks || b == a)))
		return -EINVAL;
	if (b >= 0 && b < a) {
		int t = a;
		a = b;
		b = t;
	}
	uint8_t *const *blk = (uint8_t *const *)blocks;
	int P = k, Q = k + 1;
	if (kk->recover) {
		kk->recover(k, len, blk, has_q, a, b);
		return 0;
	}

	if (nfail == 1) {
		if (a < k)
			rebuild_from_p(kk, k, len, blocks, a);
		else if (a == P)
			kk->xor_n(len, k, (const uint8_t *const *)blocks, blk[P]);
		else
			gen_skipping(kk, k, len, blocks, -1, -1, NULL, blk[Q]);
		return 0;
	}
	if (b < k) {
		/* Two data blocks x < y. With Pxy = P + P', Qxy = Q + Q' (P', Q'
		 * computed with Dx = Dy = 0): Pxy = Dx + Dy and
		 * Qxy = g^x Dx + g^y Dy, so Dx = (g^y Pxy + Qxy) / (g^x + g^y)
		 * and Dy = Pxy + Dx. P' and Q' go straight into the lost
		 * blocks' buffers, which need no other scratch space. */
		uint8_t gx = gf8_exp2((unsigned)a), gy = gf8_exp2((unsigned)b);
		uint8_t inv = gf8_inv(gx ^ gy);
		if (kk->rec2_fused) {
			const uint8_t *d[URAID_PARITY_MAX_DATA];
			for (int i = 0; i < k; i++)
				d[i] = (i == a || i == b) ? NULL : blk[i];
			kk->rec2_fused(len, k, d, blk[P], blk[Q], gf8_mul(gy, inv), inv, blk[a],
			               blk[b]);
			return 0;
		}
		gen_skipping(kk, k, len, blocks, a, b, blk[a], blk[b]);
		kk->rec2(len, gf8_mul(gy, inv), inv, blk[P], blk[Q], blk[a], blk[b]);
		return 0;
	}
	if (a < k && b == P) {
		/* Data x and P: Q + Q' = g^x Dx, so Dx = g^-x (Q + Q'). */
		uint8_t c = gf8_inv(gf8_exp2((unsigned)a));
		if (kk->rec_dp) {
			const uint8_t *d[URAID_PARITY_MAX_DATA];
			for (int i = 0; i < k; i++)
				d[i] = i == a ? NULL : blk[i];
			kk->rec_dp(len, k, d, blk[Q], c, blk[a], blk[P]);
			return 0;
		}
		gen_skipping(kk, k, len, blocks, a, -1, NULL, blk[a]);
		kk->mul(len, c, blk[a], blk[Q], blk[a]);
		kk->xor_n(len, k, (const uint8_t *const *)blocks, blk[P]);
		return 0;
	}
	if (a < k && b == Q) {
		rebuild_from_p(kk, k, len, blocks, a);
		gen_skipping(kk, k, len, blocks, -1, -1, NULL, blk[Q]);
		return 0;
	}
	/* P and Q. */
	kk->gen(len, k, (const uint8_t *const *)blocks, blk[P], blk[Q]);
	return 0;
}
