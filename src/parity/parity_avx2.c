/* AVX2 backend (compiled with -mavx2; selected only when CPUID reports AVX2).
 *
 * Multiply by {02} is add-to-itself plus a conditional XOR of 0x1d where the
 * byte's top bit was set; multiply by an arbitrary constant uses the
 * split-nibble method: two 16-entry vpshufb tables for the low and high
 * nibble, XORed. Loops take 4 vectors (128 bytes) per step so the
 * dependency chains of consecutive Horner steps overlap, then single
 * vectors, then hand the sub-32-byte tail to the portable kernels.
 *
 * Stores: when a call's working set is far beyond the L2 cache, aligned
 * outputs get non-temporal stores, which skip the read-for-ownership and do
 * not evict the sources; smaller calls use ordinary stores, which keep the
 * result hot for the caller. */
#ifdef __x86_64__
#include <immintrin.h>

#include "parity/gf.h"
#include "parity/parity_int.h"

typedef __m256i v256;

/* Bytes touched by one call (all blocks read and written) from which aligned
 * outputs are stored non-temporally. Measured on Zen3 (512 KiB L2, shared
 * L3) against ISA-L: XOR, pure streaming, gains from streaming stores as
 * soon as the working set leaves the L2; P+Q and recovery do more work per
 * byte and keep ordinary stores while the working set stays well inside the
 * L3 (k = 3..4 at 1 MiB blocks: 1.6x faster than streaming). */
#ifndef NT_FOOTPRINT_XOR
#define NT_FOOTPRINT_XOR ((size_t)1 << 20)
#endif
#ifndef NT_FOOTPRINT_PQ
#define NT_FOOTPRINT_PQ ((size_t)8 << 20)
#endif

static inline v256 ldv(const uint8_t *p)
{
	return _mm256_loadu_si256((const v256 *)p);
}

static inline void stv(uint8_t *p, v256 v)
{
	_mm256_storeu_si256((v256 *)p, v);
}

static inline void ntv(uint8_t *p, v256 v)
{
	_mm256_stream_si256((v256 *)p, v);
}

static inline v256 mul2v(v256 q, v256 poly)
{
	/* vpblendvb picks poly where q's sign bit is set, 0 elsewhere. */
	v256 red = _mm256_blendv_epi8(_mm256_setzero_si256(), poly, q);
	return _mm256_xor_si256(_mm256_add_epi8(q, q), red);
}

static bool use_nt(size_t len, int nblocks, size_t limit, const uint8_t *a, const uint8_t *b)
{
	return len * (size_t)nblocks >= limit && ((uintptr_t)a & 31) == 0 &&
	       (!b || ((uintptr_t)b & 31) == 0);
}

/* ---- XOR ------------------------------------------------------------------ */

#define XOR_BODY(STORE)                                                                 \
	for (; o + 128 <= len; o += 128) {                                              \
		const uint8_t *s = src[0] + o;                                          \
		v256 a0 = ldv(s), a1 = ldv(s + 32), a2 = ldv(s + 64), a3 = ldv(s + 96); \
		for (int i = 1; i < n; i++) {                                           \
			s = src[i] + o;                                                 \
			a0 = _mm256_xor_si256(a0, ldv(s));                              \
			a1 = _mm256_xor_si256(a1, ldv(s + 32));                         \
			a2 = _mm256_xor_si256(a2, ldv(s + 64));                         \
			a3 = _mm256_xor_si256(a3, ldv(s + 96));                         \
		}                                                                       \
		STORE(dst + o, a0);                                                     \
		STORE(dst + o + 32, a1);                                                \
		STORE(dst + o + 64, a2);                                                \
		STORE(dst + o + 96, a3);                                                \
	}                                                                               \
	for (; o + 32 <= len; o += 32) {                                                \
		v256 a0 = ldv(src[0] + o);                                              \
		for (int i = 1; i < n; i++)                                             \
			a0 = _mm256_xor_si256(a0, ldv(src[i] + o));                     \
		STORE(dst + o, a0);                                                     \
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

/* ---- P + Q ---------------------------------------------------------------- */

/* All data present, P and Q both wanted: the hot path of a full-stripe write. */
#define PQ_BODY(STORE)                                                                          \
	for (; o + 128 <= len; o += 128) {                                                      \
		const uint8_t *s = d[k - 1] + o;                                                \
		v256 q0 = ldv(s), q1 = ldv(s + 32), q2 = ldv(s + 64), q3 = ldv(s + 96);         \
		v256 p0 = q0, p1 = q1, p2 = q2, p3 = q3;                                        \
		for (int i = k - 2; i >= 0; i--) {                                              \
			s = d[i] + o;                                                           \
			v256 x0 = ldv(s), x1 = ldv(s + 32), x2 = ldv(s + 64), x3 = ldv(s + 96); \
			q0 = _mm256_xor_si256(mul2v(q0, poly), x0);                             \
			q1 = _mm256_xor_si256(mul2v(q1, poly), x1);                             \
			q2 = _mm256_xor_si256(mul2v(q2, poly), x2);                             \
			q3 = _mm256_xor_si256(mul2v(q3, poly), x3);                             \
			p0 = _mm256_xor_si256(p0, x0);                                          \
			p1 = _mm256_xor_si256(p1, x1);                                          \
			p2 = _mm256_xor_si256(p2, x2);                                          \
			p3 = _mm256_xor_si256(p3, x3);                                          \
		}                                                                               \
		STORE(p + o, p0);                                                               \
		STORE(p + o + 32, p1);                                                          \
		STORE(p + o + 64, p2);                                                          \
		STORE(p + o + 96, p3);                                                          \
		STORE(q + o, q0);                                                               \
		STORE(q + o + 32, q1);                                                          \
		STORE(q + o + 64, q2);                                                          \
		STORE(q + o + 96, q3);                                                          \
	}

static size_t pq_full(size_t len, int k, const uint8_t *const *d, uint8_t *p, uint8_t *q)
{
	const v256 poly = _mm256_set1_epi8(0x1d);
	size_t o = 0;
	if (use_nt(len, k + 2, NT_FOOTPRINT_PQ, p, q)) {
		PQ_BODY(ntv)
		_mm_sfence();
	} else {
		PQ_BODY(stv)
	}
	return o;
}

/* General case: some data blocks may be absent (zero), P or Q may be unwanted. */
static size_t pq_sparse(size_t len, int k, const uint8_t *const *d, uint8_t *p, uint8_t *q)
{
	const v256 poly = _mm256_set1_epi8(0x1d);
	size_t o = 0;
	for (; o + 64 <= len; o += 64) {
		v256 p0 = _mm256_setzero_si256(), p1 = p0, q0 = p0, q1 = p0;
		for (int i = k - 1; i >= 0; i--) {
			q0 = mul2v(q0, poly);
			q1 = mul2v(q1, poly);
			if (d[i]) {
				v256 x0 = ldv(d[i] + o), x1 = ldv(d[i] + o + 32);
				q0 = _mm256_xor_si256(q0, x0);
				q1 = _mm256_xor_si256(q1, x1);
				p0 = _mm256_xor_si256(p0, x0);
				p1 = _mm256_xor_si256(p1, x1);
			}
		}
		if (p) {
			stv(p + o, p0);
			stv(p + o + 32, p1);
		}
		if (q) {
			stv(q + o, q0);
			stv(q + o + 32, q1);
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
		for (int i = 0; i < k; i++)
			t[i] = d[i] ? d[i] + o : NULL;
		parity_portable_kernels.gen(len - o, k, t, p ? p + o : NULL, q ? q + o : NULL);
	}
}

/* ---- multiply by constants ------------------------------------------------ */

struct nib {
	v256 lo, hi;
};

static inline struct nib nib_tables(uint8_t c)
{
	uint8_t lo[16], hi[16];
	gf8_nibble_tables(c, lo, hi);
	struct nib t = {
	    _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)lo)),
	    _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)hi)),
	};
	return t;
}

static inline v256 mulv(struct nib t, v256 x, v256 m0f)
{
	v256 l = _mm256_shuffle_epi8(t.lo, _mm256_and_si256(x, m0f));
	v256 h = _mm256_shuffle_epi8(t.hi, _mm256_and_si256(_mm256_srli_epi64(x, 4), m0f));
	return _mm256_xor_si256(l, h);
}

static void mul(size_t len, uint8_t c, const uint8_t *a, const uint8_t *b, uint8_t *dst)
{
	const struct nib t = nib_tables(c);
	const v256 m0f = _mm256_set1_epi8(0x0f);
	size_t o = 0;
	for (; o + 64 <= len; o += 64) {
		v256 x0 = ldv(a + o), x1 = ldv(a + o + 32);
		if (b) {
			x0 = _mm256_xor_si256(x0, ldv(b + o));
			x1 = _mm256_xor_si256(x1, ldv(b + o + 32));
		}
		stv(dst + o, mulv(t, x0, m0f));
		stv(dst + o + 32, mulv(t, x1, m0f));
	}
	if (o < len)
		parity_portable_kernels.mul(len - o, c, a + o, b ? b + o : NULL, dst + o);
}

/* One pass: both partial syndromes in, both data blocks out. */
static void rec2(size_t len, uint8_t ca, uint8_t cb, const uint8_t *p, const uint8_t *q, uint8_t *x,
                 uint8_t *y)
{
	const struct nib ta = nib_tables(ca), tb = nib_tables(cb);
	const v256 m0f = _mm256_set1_epi8(0x0f);
	size_t o = 0;
	for (; o + 64 <= len; o += 64) {
		v256 p0 = _mm256_xor_si256(ldv(p + o), ldv(x + o));
		v256 p1 = _mm256_xor_si256(ldv(p + o + 32), ldv(x + o + 32));
		v256 q0 = _mm256_xor_si256(ldv(q + o), ldv(y + o));
		v256 q1 = _mm256_xor_si256(ldv(q + o + 32), ldv(y + o + 32));
		v256 d0 = _mm256_xor_si256(mulv(ta, p0, m0f), mulv(tb, q0, m0f));
		v256 d1 = _mm256_xor_si256(mulv(ta, p1, m0f), mulv(tb, q1, m0f));
		stv(x + o, d0);
		stv(x + o + 32, d1);
		stv(y + o, _mm256_xor_si256(p0, d0));
		stv(y + o + 32, _mm256_xor_si256(p1, d1));
	}
	if (o < len)
		parity_portable_kernels.rec2(len - o, ca, cb, p + o, q + o, x + o, y + o);
}

/* Two lost data blocks in one pass: per 128-byte column, Horner over the
 * surviving data (lost ones count as zero) gives P' and Q' in registers,
 * then Pxy = P + P', Qxy = Q + Q', x = a Pxy + b Qxy, y = Pxy + x. */
#define REC2F_BODY(STORE)                                                    \
	for (; o + 128 <= len; o += 128) {                                   \
		v256 p0 = _mm256_setzero_si256(), p1 = p0, p2 = p0, p3 = p0; \
		v256 q0 = p0, q1 = p0, q2 = p0, q3 = p0;                     \
		for (int i = k - 1; i >= 0; i--) {                           \
			q0 = mul2v(q0, poly);                                \
			q1 = mul2v(q1, poly);                                \
			q2 = mul2v(q2, poly);                                \
			q3 = mul2v(q3, poly);                                \
			if (d[i]) {                                          \
				const uint8_t *s = d[i] + o;                 \
				v256 x0 = ldv(s), x1 = ldv(s + 32);          \
				v256 x2 = ldv(s + 64), x3 = ldv(s + 96);     \
				q0 = _mm256_xor_si256(q0, x0);               \
				q1 = _mm256_xor_si256(q1, x1);               \
				q2 = _mm256_xor_si256(q2, x2);               \
				q3 = _mm256_xor_si256(q3, x3);               \
				p0 = _mm256_xor_si256(p0, x0);               \
				p1 = _mm256_xor_si256(p1, x1);               \
				p2 = _mm256_xor_si256(p2, x2);               \
				p3 = _mm256_xor_si256(p3, x3);               \
			}                                                    \
		}                                                            \
		REC2F_FINISH(STORE, p0, q0, 0)                               \
		REC2F_FINISH(STORE, p1, q1, 32)                              \
		REC2F_FINISH(STORE, p2, q2, 64)                              \
		REC2F_FINISH(STORE, p3, q3, 96)                              \
	}

#define REC2F_FINISH(STORE, pv, qv, at)                                             \
	{                                                                           \
		v256 pxy = _mm256_xor_si256(pv, ldv(p + o + (at)));                 \
		v256 qxy = _mm256_xor_si256(qv, ldv(q + o + (at)));                 \
		v256 dx = _mm256_xor_si256(mulv(ta, pxy, m0f), mulv(tb, qxy, m0f)); \
		STORE(x + o + (at), dx);                                            \
		STORE(y + o + (at), _mm256_xor_si256(pxy, dx));                     \
	}

static void rec2_fused(size_t len, int k, const uint8_t *const *d, const uint8_t *p,
                       const uint8_t *q, uint8_t ca, uint8_t cb, uint8_t *x, uint8_t *y)
{
	const struct nib ta = nib_tables(ca), tb = nib_tables(cb);
	const v256 m0f = _mm256_set1_epi8(0x0f), poly = _mm256_set1_epi8(0x1d);
	size_t o = 0;
	if (use_nt(len, k + 2, NT_FOOTPRINT_PQ, x, y)) {
		REC2F_BODY(ntv)
		_mm_sfence();
	} else {
		REC2F_BODY(stv)
	}
	if (o < len) {
		const uint8_t *t[URAID_PARITY_MAX_DATA];
		for (int i = 0; i < k; i++)
			t[i] = d[i] ? d[i] + o : NULL;
		parity_portable_kernels.gen(len - o, k, t, x + o, y + o);
		parity_portable_kernels.rec2(len - o, ca, cb, p + o, q + o, x + o, y + o);
	}
}

static void update(size_t len, uint8_t c, const uint8_t *old, const uint8_t *new_, uint8_t *p,
                   uint8_t *q)
{
	const struct nib t = nib_tables(c);
	const v256 m0f = _mm256_set1_epi8(0x0f);
	size_t o = 0;
	for (; o + 64 <= len; o += 64) {
		v256 e0 = _mm256_xor_si256(ldv(old + o), ldv(new_ + o));
		v256 e1 = _mm256_xor_si256(ldv(old + o + 32), ldv(new_ + o + 32));
		if (p) {
			stv(p + o, _mm256_xor_si256(ldv(p + o), e0));
			stv(p + o + 32, _mm256_xor_si256(ldv(p + o + 32), e1));
		}
		if (q) {
			stv(q + o, _mm256_xor_si256(ldv(q + o), mulv(t, e0, m0f)));
			stv(q + o + 32, _mm256_xor_si256(ldv(q + o + 32), mulv(t, e1, m0f)));
		}
	}
	if (o < len)
		parity_portable_kernels.update(len - o, c, old + o, new_ + o, p ? p + o : NULL,
		                               q ? q + o : NULL);
}

static const struct parity_kernels avx2_kernels = {
    .xor_n = xor_n,
    .gen = gen,
    .mul = mul,
    .rec2 = rec2,
    .update = update,
    .rec2_fused = rec2_fused,
};

PARITY_DEFINE_BACKEND(avx2, avx2_kernels);
#else
typedef int parity_avx2_not_built; /* ISO C wants a non-empty file */
#endif
