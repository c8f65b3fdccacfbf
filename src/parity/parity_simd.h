/* SIMD parity kernels written once for any vector width. Included by
 * parity_avx2.c and parity_avx512.c after they define:
 *   vec, VB (bytes per vector), ldv/stv/ntv (unaligned load, store,
 *   non-temporal store of an aligned vector), vxor, vand, vzero, vset1,
 *   vshuf (byte shuffle within 16-byte lanes), vsrl4 (shift 64-bit lanes
 *   right by 4), vbcast16 (16 bytes to every lane), mul2v (multiply every
 *   byte by {02}), NT_FOOTPRINT_XOR, NT_FOOTPRINT_PQ, NT_FOOTPRINT_REC.
 * Defines the static kernel table `simd_kernels`.
 *
 * Multiply by an arbitrary constant uses the split-nibble method: two
 * 16-entry shuffle tables for the low and high nibble, XORed. Loops take
 * 4 vectors per step where the work per byte is small (XOR, P+Q, fused
 * recovery) so consecutive Horner steps overlap, 2 where shuffles dominate;
 * then single vectors; the sub-vector tail goes to the portable kernels.
 *
 * Stores: when a call's working set is far beyond the L2 cache, aligned
 * outputs get non-temporal stores, which skip the read-for-ownership and do
 * not evict the sources; smaller calls use ordinary stores, which keep the
 * result hot for the caller. */
#ifndef URAID_PARITY_SIMD_H
#define URAID_PARITY_SIMD_H

#include <string.h>

#include "parity/gf.h"
#include "parity/parity_int.h"

static bool use_nt(size_t len, int nblocks, size_t limit, const uint8_t *a, const uint8_t *b)
{
	return len * (size_t)nblocks >= limit && ((uintptr_t)a & (VB - 1)) == 0 &&
	       (!b || ((uintptr_t)b & (VB - 1)) == 0);
}

/* ---- XOR ------------------------------------------------------------------ */

#define XOR_BODY(STORE)                                                                        \
	for (; o + 4 * VB <= len; o += 4 * VB) {                                               \
		const uint8_t *s = src[0] + o;                                                 \
		vec a0 = ldv(s), a1 = ldv(s + VB), a2 = ldv(s + 2 * VB), a3 = ldv(s + 3 * VB); \
		for (int i = 1; i < n; i++) {                                                  \
			s = src[i] + o;                                                        \
			a0 = vxor(a0, ldv(s));                                                 \
			a1 = vxor(a1, ldv(s + VB));                                            \
			a2 = vxor(a2, ldv(s + 2 * VB));                                        \
			a3 = vxor(a3, ldv(s + 3 * VB));                                        \
		}                                                                              \
		STORE(dst + o, a0);                                                            \
		STORE(dst + o + VB, a1);                                                       \
		STORE(dst + o + 2 * VB, a2);                                                   \
		STORE(dst + o + 3 * VB, a3);                                                   \
	}                                                                                      \
	for (; o + VB <= len; o += VB) {                                                       \
		vec a0 = ldv(src[0] + o);                                                      \
		for (int i = 1; i < n; i++)                                                    \
			a0 = vxor(a0, ldv(src[i] + o));                                        \
		STORE(dst + o, a0);                                                            \
	}

static void xor_n(size_t len, int n, const uint8_t *const *src, uint8_t *dst)
{
	size_t o = 0;
	if (use_nt(len, n + 1, NT_FOOTPRINT_XOR, dst, NULL)) {
		XOR_BODY(ntv)
		_mm_sfence();
	} else {
		XOR_BODY(stv)
	}
	if (o < len) {
		const uint8_t *t[URAID_PARITY_MAX_DATA + 2];
		for (int i = 0; i < n; i++)
			t[i] = src[i] + o;
		parity_portable_kernels.xor_n(len - o, n, t, dst + o);
	}
}

/* xor_n with the sources stored to copy[i] (where not NULL) as they pass:
 * one read of each source instead of two. Calls as big as the streaming
 * threshold of XOR, with aligned outputs, store the copies and the XOR
 * non-temporally (no read for ownership of the member's pages, which are
 * not read back soon). */
#define XOR_COPY_BODY(STORE)                                                     \
	for (; o + 4 * VB <= len; o += 4 * VB) {                                 \
		vec a0 = vzero(), a1 = a0, a2 = a0, a3 = a0;                     \
		for (int i = 0; i < n; i++) {                                    \
			const uint8_t *s = src[i] + o;                           \
			vec x0 = ldv(s), x1 = ldv(s + VB), x2 = ldv(s + 2 * VB); \
			vec x3 = ldv(s + 3 * VB);                                \
			if (copy[i]) {                                           \
				uint8_t *c = copy[i] + o;                        \
				STORE(c, x0);                                    \
				STORE(c + VB, x1);                               \
				STORE(c + 2 * VB, x2);                           \
				STORE(c + 3 * VB, x3);                           \
			}                                                        \
			a0 = vxor(a0, x0);                                       \
			a1 = vxor(a1, x1);                                       \
			a2 = vxor(a2, x2);                                       \
			a3 = vxor(a3, x3);                                       \
		}                                                                \
		STORE(dst + o, a0);                                              \
		STORE(dst + o + VB, a1);                                         \
		STORE(dst + o + 2 * VB, a2);                                     \
		STORE(dst + o + 3 * VB, a3);                                     \
	}

static void xor_copy(size_t len, int n, const uint8_t *const *src, uint8_t *dst,
                     uint8_t *const *copy)
{
	size_t o = 0;
	bool nt = use_nt(len, n + 1, NT_FOOTPRINT_XOR, dst, NULL);
	for (int i = 0; i < n && nt; i++)
		nt = !copy[i] || ((uintptr_t)copy[i] & (VB - 1)) == 0;
	if (nt) {
		XOR_COPY_BODY(ntv)
		_mm_sfence();
	} else {
		XOR_COPY_BODY(stv)
	}
	if (o < len) {
		const uint8_t *t[URAID_PARITY_MAX_DATA];
		for (int i = 0; i < n; i++) {
			t[i] = src[i] + o;
			if (copy[i])
				memcpy(copy[i] + o, t[i], len - o);
		}
		parity_portable_kernels.xor_n(len - o, n, t, dst + o);
	}
}

/* ---- P + Q ---------------------------------------------------------------- */

/* All data present, P and Q both wanted: the hot path of a full-stripe write. */
#define PQ_BODY(STORE)                                                                         \
	for (; o + 4 * VB <= len; o += 4 * VB) {                                               \
		const uint8_t *s = d[k - 1] + o;                                               \
		vec q0 = ldv(s), q1 = ldv(s + VB), q2 = ldv(s + 2 * VB), q3 = ldv(s + 3 * VB); \
		vec p0 = q0, p1 = q1, p2 = q2, p3 = q3;                                        \
		for (int i = k - 2; i >= 0; i--) {                                             \
			s = d[i] + o;                                                          \
			vec x0 = ldv(s), x1 = ldv(s + VB), x2 = ldv(s + 2 * VB),               \
			    x3 = ldv(s + 3 * VB);                                              \
			q0 = vxor(mul2v(q0, poly), x0);                                        \
			q1 = vxor(mul2v(q1, poly), x1);                                        \
			q2 = vxor(mul2v(q2, poly), x2);                                        \
			q3 = vxor(mul2v(q3, poly), x3);                                        \
			p0 = vxor(p0, x0);                                                     \
			p1 = vxor(p1, x1);                                                     \
			p2 = vxor(p2, x2);                                                     \
			p3 = vxor(p3, x3);                                                     \
		}                                                                              \
		STORE(p + o, p0);                                                              \
		STORE(p + o + VB, p1);                                                         \
		STORE(p + o + 2 * VB, p2);                                                     \
		STORE(p + o + 3 * VB, p3);                                                     \
		STORE(q + o, q0);                                                              \
		STORE(q + o + VB, q1);                                                         \
		STORE(q + o + 2 * VB, q2);                                                     \
		STORE(q + o + 3 * VB, q3);                                                     \
	}

static size_t pq_full(size_t len, int k, const uint8_t *const *d, uint8_t *p, uint8_t *q)
{
	const vec poly = vset1(0x1d);
	size_t o = 0;
	if (use_nt(len, k + 2, NT_FOOTPRINT_PQ, p, q)) {
		PQ_BODY(ntv)
		_mm_sfence();
	} else {
		PQ_BODY(stv)
	}
	return o;
}

/* P and Q of the 2-vector column at offset `o`: Horner over the data blocks,
 * absent ones (NULL) counting as zero. Always inlined, so the four vectors
 * stay in registers as if the loop were written out in each caller. */
struct pq_column {
	vec p0, p1, q0, q1;
};

static inline __attribute__((always_inline)) struct pq_column
pq_column2(int k, const uint8_t *const *d, size_t o, vec poly)
{
	vec p0 = vzero(), p1 = p0, q0 = p0, q1 = p0;
	for (int i = k - 1; i >= 0; i--) {
		q0 = mul2v(q0, poly);
		q1 = mul2v(q1, poly);
		if (d[i]) {
			vec x0 = ldv(d[i] + o), x1 = ldv(d[i] + o + VB);
			q0 = vxor(q0, x0);
			q1 = vxor(q1, x1);
			p0 = vxor(p0, x0);
			p1 = vxor(p1, x1);
		}
	}
	return (struct pq_column){p0, p1, q0, q1};
}

/* Block pointers `o` bytes further on, NULL staying NULL: the tails the
 * portable kernels finish. */
static inline void offset_blocks(int k, const uint8_t *const *d, size_t o, const uint8_t **out)
{
	for (int i = 0; i < k; i++)
		out[i] = d[i] ? d[i] + o : NULL;
}

/* General case: some data blocks may be absent (zero), P or Q may be unwanted. */
static size_t pq_sparse(size_t len, int k, const uint8_t *const *d, uint8_t *p, uint8_t *q)
{
	const vec poly = vset1(0x1d);
	size_t o = 0;
	for (; o + 2 * VB <= len; o += 2 * VB) {
		struct pq_column pq = pq_column2(k, d, o, poly);
		if (p) {
			stv(p + o, pq.p0);
			stv(p + o + VB, pq.p1);
		}
		if (q) {
			stv(q + o, pq.q0);
			stv(q + o + VB, pq.q1);
		}
	}
	return o;
}

static void gen(size_t len, int k, const uint8_t *const *d, uint8_t *p, uint8_t *q)
{
	bool full = p && q;
	for (int i = 0; i < k && full; i++)
		full = d[i] != NULL;
	size_t o = full ? pq_full(len, k, d, p, q) : pq_sparse(len, k, d, p, q);
	if (o < len) {
		const uint8_t *t[URAID_PARITY_MAX_DATA];
		offset_blocks(k, d, o, t);
		parity_portable_kernels.gen(len - o, k, t, p ? p + o : NULL, q ? q + o : NULL);
	}
}

/* ---- multiply by constants ------------------------------------------------ */

struct nib {
	vec lo, hi;
};

static inline struct nib nib_tables(uint8_t c)
{
	uint8_t lo[16], hi[16];
	gf8_nibble_tables(c, lo, hi);
	struct nib t = {
	    vbcast16(lo),
	    vbcast16(hi),
	};
	return t;
}

static inline vec mulv(struct nib t, vec x, vec m0f)
{
	vec l = vshuf(t.lo, vand(x, m0f));
	vec h = vshuf(t.hi, vand(vsrl4(x), m0f));
	return vxor(l, h);
}

static void mul(size_t len, uint8_t c, const uint8_t *a, const uint8_t *b, uint8_t *dst)
{
	const struct nib t = nib_tables(c);
	const vec m0f = vset1(0x0f);
	size_t o = 0;
	for (; o + 2 * VB <= len; o += 2 * VB) {
		vec x0 = ldv(a + o), x1 = ldv(a + o + VB);
		if (b) {
			x0 = vxor(x0, ldv(b + o));
			x1 = vxor(x1, ldv(b + o + VB));
		}
		stv(dst + o, mulv(t, x0, m0f));
		stv(dst + o + VB, mulv(t, x1, m0f));
	}
	if (o < len)
		parity_portable_kernels.mul(len - o, c, a + o, b ? b + o : NULL, dst + o);
}

/* One pass: both partial syndromes in, both data blocks out. */
static void rec2(size_t len, uint8_t ca, uint8_t cb, const uint8_t *p, const uint8_t *q, uint8_t *x,
                 uint8_t *y)
{
	const struct nib ta = nib_tables(ca), tb = nib_tables(cb);
	const vec m0f = vset1(0x0f);
	size_t o = 0;
	for (; o + 2 * VB <= len; o += 2 * VB) {
		vec p0 = vxor(ldv(p + o), ldv(x + o));
		vec p1 = vxor(ldv(p + o + VB), ldv(x + o + VB));
		vec q0 = vxor(ldv(q + o), ldv(y + o));
		vec q1 = vxor(ldv(q + o + VB), ldv(y + o + VB));
		vec d0 = vxor(mulv(ta, p0, m0f), mulv(tb, q0, m0f));
		vec d1 = vxor(mulv(ta, p1, m0f), mulv(tb, q1, m0f));
		stv(x + o, d0);
		stv(x + o + VB, d1);
		stv(y + o, vxor(p0, d0));
		stv(y + o + VB, vxor(p1, d1));
	}
	if (o < len)
		parity_portable_kernels.rec2(len - o, ca, cb, p + o, q + o, x + o, y + o);
}

/* Two lost data blocks in one pass: per 4-vector column, Horner over the
 * surviving data (lost ones count as zero) gives P' and Q' in registers,
 * then Pxy = P + P', Qxy = Q + Q', x = a Pxy + b Qxy, y = Pxy + x. */
#define REC2F_BODY(STORE)                                                       \
	for (; o + 4 * VB <= len; o += 4 * VB) {                                \
		vec p0 = vzero(), p1 = p0, p2 = p0, p3 = p0;                    \
		vec q0 = p0, q1 = p0, q2 = p0, q3 = p0;                         \
		for (int i = k - 1; i >= 0; i--) {                              \
			q0 = mul2v(q0, poly);                                   \
			q1 = mul2v(q1, poly);                                   \
			q2 = mul2v(q2, poly);                                   \
			q3 = mul2v(q3, poly);                                   \
			if (d[i]) {                                             \
				const uint8_t *s = d[i] + o;                    \
				vec x0 = ldv(s), x1 = ldv(s + VB);              \
				vec x2 = ldv(s + 2 * VB), x3 = ldv(s + 3 * VB); \
				q0 = vxor(q0, x0);                              \
				q1 = vxor(q1, x1);                              \
				q2 = vxor(q2, x2);                              \
				q3 = vxor(q3, x3);                              \
				p0 = vxor(p0, x0);                              \
				p1 = vxor(p1, x1);                              \
				p2 = vxor(p2, x2);                              \
				p3 = vxor(p3, x3);                              \
			}                                                       \
		}                                                               \
		REC2F_FINISH(STORE, p0, q0, 0)                                  \
		REC2F_FINISH(STORE, p1, q1, VB)                                 \
		REC2F_FINISH(STORE, p2, q2, 2 * VB)                             \
		REC2F_FINISH(STORE, p3, q3, 3 * VB)                             \
	}

#define REC2F_FINISH(STORE, pv, qv, at)                                \
	{                                                              \
		vec pxy = vxor(pv, ldv(p + o + (at)));                 \
		vec qxy = vxor(qv, ldv(q + o + (at)));                 \
		vec dx = vxor(mulv(ta, pxy, m0f), mulv(tb, qxy, m0f)); \
		STORE(x + o + (at), dx);                               \
		STORE(y + o + (at), vxor(pxy, dx));                    \
	}

static void rec2_fused(size_t len, int k, const uint8_t *const *d, const uint8_t *p,
                       const uint8_t *q, uint8_t ca, uint8_t cb, uint8_t *x, uint8_t *y)
{
	const struct nib ta = nib_tables(ca), tb = nib_tables(cb);
	const vec m0f = vset1(0x0f), poly = vset1(0x1d);
	size_t o = 0;
	if (use_nt(len, k + 2, NT_FOOTPRINT_REC, x, y)) {
		REC2F_BODY(ntv)
		_mm_sfence();
	} else {
		REC2F_BODY(stv)
	}
	if (o < len) {
		const uint8_t *t[URAID_PARITY_MAX_DATA];
		offset_blocks(k, d, o, t);
		parity_portable_kernels.gen(len - o, k, t, x + o, y + o);
		parity_portable_kernels.rec2(len - o, ca, cb, p + o, q + o, x + o, y + o);
	}
}

static void update(size_t len, uint8_t c, const uint8_t *old, const uint8_t *new_, uint8_t *p,
                   uint8_t *q)
{
	const struct nib t = nib_tables(c);
	const vec m0f = vset1(0x0f);
	size_t o = 0;
	for (; o + 2 * VB <= len; o += 2 * VB) {
		vec e0 = vxor(ldv(old + o), ldv(new_ + o));
		vec e1 = vxor(ldv(old + o + VB), ldv(new_ + o + VB));
		if (p) {
			stv(p + o, vxor(ldv(p + o), e0));
			stv(p + o + VB, vxor(ldv(p + o + VB), e1));
		}
		if (q) {
			stv(q + o, vxor(ldv(q + o), mulv(t, e0, m0f)));
			stv(q + o + VB, vxor(ldv(q + o + VB), mulv(t, e1, m0f)));
		}
	}
	if (o < len)
		parity_portable_kernels.update(len - o, c, old + o, new_ + o, p ? p + o : NULL,
		                               q ? q + o : NULL);
}

/* Data block x and P lost: per 2-vector column, Horner over the surviving
 * data gives P' and Q'; then x = c (Q + Q') and P = P' + x. */
static void rec_dp(size_t len, int k, const uint8_t *const *d, const uint8_t *q, uint8_t c,
                   uint8_t *x, uint8_t *p)
{
	const struct nib t = nib_tables(c);
	const vec m0f = vset1(0x0f), poly = vset1(0x1d);
	size_t o = 0;
	for (; o + 2 * VB <= len; o += 2 * VB) {
		struct pq_column pq = pq_column2(k, d, o, poly);
		vec d0 = mulv(t, vxor(pq.q0, ldv(q + o)), m0f);
		vec d1 = mulv(t, vxor(pq.q1, ldv(q + o + VB)), m0f);
		stv(x + o, d0);
		stv(x + o + VB, d1);
		stv(p + o, vxor(pq.p0, d0));
		stv(p + o + VB, vxor(pq.p1, d1));
	}
	if (o < len) {
		const uint8_t *tl[URAID_PARITY_MAX_DATA] = {NULL};
		offset_blocks(k, d, o, tl);
		parity_portable_kernels.gen(len - o, k, tl, NULL, x + o);
		parity_portable_kernels.mul(len - o, c, x + o, q + o, x + o);
		for (int i = 0; i < k; i++)
			if (!tl[i])
				tl[i] = x + o;
		parity_portable_kernels.xor_n(len - o, k, tl, p + o);
	}
}

/* n changed blocks: P and Q are read and written once, not n times. The
 * nibble tables of every coefficient are prepared first (two vectors each). */
static void update_n(size_t len, int n, const uint8_t *c, const uint8_t *const *old,
                     const uint8_t *const *new_, uint8_t *p, uint8_t *q)
{
	struct nib t[URAID_PARITY_MAX_DATA];
	const vec m0f = vset1(0x0f);
	for (int j = 0; j < n; j++)
		t[j] = nib_tables(c[j]);
	size_t o = 0;
	for (; o + 2 * VB <= len; o += 2 * VB) {
		vec pa = vzero(), pb = pa, qa = pa, qb = pa;
		for (int j = 0; j < n; j++) {
			vec e0 = vxor(ldv(old[j] + o), ldv(new_[j] + o));
			vec e1 = vxor(ldv(old[j] + o + VB), ldv(new_[j] + o + VB));
			pa = vxor(pa, e0);
			pb = vxor(pb, e1);
			if (q) {
				qa = vxor(qa, mulv(t[j], e0, m0f));
				qb = vxor(qb, mulv(t[j], e1, m0f));
			}
		}
		if (p) {
			stv(p + o, vxor(ldv(p + o), pa));
			stv(p + o + VB, vxor(ldv(p + o + VB), pb));
		}
		if (q) {
			stv(q + o, vxor(ldv(q + o), qa));
			stv(q + o + VB, vxor(ldv(q + o + VB), qb));
		}
	}
	for (int j = 0; o < len && j < n; j++)
		parity_portable_kernels.update(len - o, c[j], old[j] + o, new_[j] + o,
		                               p ? p + o : NULL, q ? q + o : NULL);
}

static const struct parity_kernels simd_kernels = {
    .xor_n = xor_n,
    .xor_copy = xor_copy,
    .gen = gen,
    .mul = mul,
    .rec2 = rec2,
    .update = update,
    .rec2_fused = rec2_fused,
    .rec_dp = rec_dp,
    .update_n = update_n,
};

#endif
