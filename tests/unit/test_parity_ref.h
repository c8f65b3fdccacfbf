/* Test-only GF(2^8) reference for the parity tests: byte at a time, no
 * tables, nothing shared with src/parity/. Slow and obviously right:
 * multiplication is the textbook schoolbook product, done MSB-first
 * (Horner over the bits of b), reduced by x^8 = x^4 + x^3 + x^2 + 1. */
#ifndef TEST_PARITY_REF_H
#define TEST_PARITY_REF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "uraid.h"

static inline uint8_t ref_mul(uint8_t a, uint8_t b)
{
	unsigned r = 0;
	for (int bit = 7; bit >= 0; bit--) {
		r <<= 1;
		if (r & 0x100)
			r ^= 0x11d;
		if ((b >> bit) & 1)
			r ^= a;
	}
	return (uint8_t)r;
}

/* g^i by i repeated multiplications by 2. */
static inline uint8_t ref_pow2(int i)
{
	uint8_t r = 1;
	while (i-- > 0)
		r = ref_mul(r, 2);
	return r;
}

/* P and Q of k data blocks, byte by byte, Q as the plain sum of g^i * Di.
 * Products come from per-coefficient tables filled by ref_mul above, only
 * to keep multi-MiB references fast under ASan. */
static inline void ref_pq(int k, size_t len, uint8_t *const *d, uint8_t *p, uint8_t *q)
{
	uint8_t(*tab)[256] = malloc((size_t)k * 256);
	for (int i = 0; i < k; i++) {
		uint8_t c = ref_pow2(i);
		for (int x = 0; x < 256; x++)
			tab[i][x] = ref_mul(c, (uint8_t)x);
	}
	for (size_t o = 0; o < len; o++) {
		uint8_t pp = 0, qq = 0;
		for (int i = 0; i < k; i++) {
			pp ^= d[i][o];
			qq ^= tab[i][d[i][o]];
		}
		if (p)
			p[o] = pp;
		if (q)
			q[o] = qq;
	}
	free(tab);
}

/* A set of k data blocks + P + Q, each its own allocation starting `off`
 * bytes past a 64-byte boundary (off = 0: aligned). */
struct blockset {
	int k;
	size_t len;
	uint8_t *raw[URAID_PARITY_MAX_DATA + 2];
	void *b[URAID_PARITY_MAX_DATA + 2];
};

static inline void bs_init(struct blockset *s, int k, size_t len, size_t off)
{
	s->k = k;
	s->len = len;
	for (int i = 0; i < k + 2; i++) {
		s->raw[i] = aligned_alloc(64, (len + off + 64 + 63) / 64 * 64);
		s->b[i] = s->raw[i] + off;
	}
}

static inline void bs_free(struct blockset *s)
{
	for (int i = 0; i < s->k + 2; i++)
		free(s->raw[i]);
}

static inline uint8_t *bs(const struct blockset *s, int i)
{
	return s->b[i];
}

#endif
