/* Portable backend: plain C, no CPU requirements. Works on 64-bit words
 * (eight GF(2^8) elements side by side) four at a time, then single words,
 * then single bytes for the tail. Loads and stores go through memcpy so any
 * alignment is fine; compilers turn them into plain moves. */
#include <string.h>

#include "parity/gf.h"
#include "parity/parity_int.h"

#define HI_BITS  0x8080808080808080ULL
#define POLY_LOW 0x1dU /* 0x11d without the x^8 term */

static inline uint64_t ld(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline void st(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Multiply each byte of v by {02}: shift left within the byte and fold the
 * bit shifted out back in as 0x1d. */
static inline uint64_t mul2w(uint64_t v)
{
	uint64_t hi = v & HI_BITS;
	return ((v << 1) & ~(HI_BITS >> 7)) ^ ((hi >> 7) * POLY_LOW);
}

static inline uint8_t mul2b(uint8_t v)
{
	return (uint8_t)((v << 1) ^ ((v & 0x80) ? POLY_LOW : 0));
}

static void xor_n(size_t len, int n, const uint8_t *const *src, uint8_t *dst)
{
	size_t o = 0;
	for (; o + 32 <= len; o += 32) {
		const uint8_t *s = src[0] + o;
		uint64_t a0 = ld(s), a1 = ld(s + 8), a2 = ld(s + 16), a3 = ld(s + 24);
		for (int i = 1; i < n; i++) {
			s = src[i] + o;
			a0 ^= ld(s);
			a1 ^= ld(s + 8);
			a2 ^= ld(s + 16);
			a3 ^= ld(s + 24);
		}
		st(dst + o, a0);
		st(dst + o + 8, a1);
		st(dst + o + 16, a2);
		st(dst + o + 24, a3);
	}
	for (; o < len; o++) {
		uint8_t a = src[0][o];
		for (int i = 1; i < n; i++)
			a ^= src[i][o];
		dst[o] = a;
	}
}

/* Q by Horner's rule from the highest index down: Q = (..(D[k-1] g + D[k-2]) g ..) g + D0. */
static void gen(size_t len, int k, const uint8_t *const *d, uint8_t *p, uint8_t *q)
{
	size_t o = 0;
	for (; o + 16 <= len; o += 16) {
		uint64_t p0 = 0, p1 = 0, q0 = 0, q1 = 0;
		for (int i = k - 1; i >= 0; i--) {
			q0 = mul2w(q0);
			q1 = mul2w(q1);
			if (d[i]) {
				uint64_t x0 = ld(d[i] + o), x1 = ld(d[i] + o + 8);
				p0 ^= x0;
				p1 ^= x1;
				q0 ^= x0;
				q1 ^= x1;
			}
		}
		if (p) {
			st(p + o, p0);
			st(p + o + 8, p1);
		}
		if (q) {
			st(q + o, q0);
			st(q + o + 8, q1);
		}
	}
	for (; o < len; o++) {
		uint8_t pb = 0, qb = 0;
		for (int i = k - 1; i >= 0; i--) {
			qb = mul2b(qb);
			if (d[i]) {
				pb ^= d[i][o];
				qb ^= d[i][o];
			}
		}
		if (p)
			p[o] = pb;
		if (q)
			q[o] = qb;
	}
}

/* c * x for eight bytes at once: the sum of x * 2^b over the set bits b of c. */
static inline uint64_t mulw(uint8_t c, uint64_t x)
{
	uint64_t r = 0;
	for (; c; c >>= 1) {
		if (c & 1)
			r ^= x;
		x = mul2w(x);
	}
	return r;
}

static void mul(size_t len, uint8_t c, const uint8_t *a, const uint8_t *b, uint8_t *dst)
{
	size_t o = 0;
	for (; o + 8 <= len; o += 8)
		st(dst + o, mulw(c, ld(a + o) ^ (b ? ld(b + o) : 0)));
	for (; o < len; o++)
		dst[o] = gf8_mul(c, a[o] ^ (b ? b[o] : 0));
}

static void rec2(size_t len, uint8_t ca, uint8_t cb, const uint8_t *p, const uint8_t *q, uint8_t *x,
                 uint8_t *y)
{
	size_t o = 0;
	for (; o + 8 <= len; o += 8) {
		uint64_t pxy = ld(p + o) ^ ld(x + o), qxy = ld(q + o) ^ ld(y + o);
		uint64_t dx = mulw(ca, pxy) ^ mulw(cb, qxy);
		st(x + o, dx);
		st(y + o, pxy ^ dx);
	}
	for (; o < len; o++) {
		uint8_t pxy = p[o] ^ x[o], qxy = q[o] ^ y[o];
		uint8_t dx = gf8_mul(ca, pxy) ^ gf8_mul(cb, qxy);
		x[o] = dx;
		y[o] = pxy ^ dx;
	}
}

static void update(size_t len, uint8_t c, const uint8_t *old, const uint8_t *new_, uint8_t *p,
                   uint8_t *q)
{
	size_t o = 0;
	for (; o + 8 <= len; o += 8) {
		uint64_t e = ld(old + o) ^ ld(new_ + o);
		if (p)
			st(p + o, ld(p + o) ^ e);
		if (q)
			st(q + o, ld(q + o) ^ mulw(c, e));
	}
	for (; o < len; o++) {
		uint8_t e = old[o] ^ new_[o];
		if (p)
			p[o] ^= e;
		if (q)
			q[o] ^= gf8_mul(c, e);
	}
}

const struct parity_kernels parity_portable_kernels = {
    .xor_n = xor_n,
    .gen = gen,
    .mul = mul,
    .rec2 = rec2,
    .update = update,
};

PARITY_DEFINE_BACKEND(portable, parity_portable_kernels);
