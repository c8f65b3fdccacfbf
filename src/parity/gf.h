/* GF(2^8) scalar arithmetic, polynomial x^8+x^4+x^3+x^2+1 (0x11d), generator
 * {02} — the field Linux md and ISA-L use for RAID6 Q.
 *
 * Everything here is computed, not looked up: these helpers only derive the
 * handful of constants a recovery or locate call needs, so a few dozen cycles
 * each cost nothing next to the data pass, and no table has to live in global
 * memory. */
#ifndef URAID_PARITY_GF_H
#define URAID_PARITY_GF_H

#include <stdint.h>

/* a * b, carry-less multiply reduced by 0x11d. */
static inline uint8_t gf8_mul(uint8_t a, uint8_t b)
{
	unsigned r = 0, x = a;
	for (; b; b >>= 1) {
		if (b & 1)
			r ^= x;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11d;
	}
	return (uint8_t)r;
}

/* g^n for the generator g = {02}; n taken modulo 255 (the group order). */
static inline uint8_t gf8_exp2(unsigned n)
{
	uint8_t r = 1, base = 2;
	for (n %= 255; n; n >>= 1) {
		if (n & 1)
			r = gf8_mul(r, base);
		base = gf8_mul(base, base);
	}
	return r;
}

/* Multiplicative inverse: a^254 = a^-1 since a^255 = 1. a must be non-zero. */
static inline uint8_t gf8_inv(uint8_t a)
{
	uint8_t r = 1, base = a;
	for (unsigned n = 254; n; n >>= 1) {
		if (n & 1)
			r = gf8_mul(r, base);
		base = gf8_mul(base, base);
	}
	return r;
}

/* Split-nibble tables for SIMD byte shuffles: lo[n] = c * n, hi[n] = c * (n << 4),
 * so c * x = lo[x & 15] ^ hi[x >> 4]. */
static inline void gf8_nibble_tables(uint8_t c, uint8_t lo[16], uint8_t hi[16])
{
	for (unsigned n = 0; n < 16; n++) {
		lo[n] = gf8_mul(c, (uint8_t)n);
		hi[n] = gf8_mul(c, (uint8_t)(n << 4));
	}
}

#endif
