/* Internal contract between the generic parity layer (parity.c: argument
 * checks, recovery algebra, backend selection) and the backends, which only
 * supply a handful of data-pass kernels. Arguments reaching a kernel have
 * been validated: len >= 1, counts in range, pointers non-NULL unless said. */
#ifndef URAID_PARITY_INT_H
#define URAID_PARITY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "uraid.h"

struct parity_kernels {
	/* dst = src[0] ^ ... ^ src[n-1], n >= 1. dst may not alias a source. */
	void (*xor_n)(size_t len, int n, const uint8_t *const *src, uint8_t *dst);
	/* P and/or Q of k >= 1 data blocks. d[i] == NULL counts as an all-zero
	 * block (recovery uses this for the lost ones). p or q NULL: not wanted. */
	void (*gen)(size_t len, int k, const uint8_t *const *d, uint8_t *p, uint8_t *q);
	/* dst = c * (a ^ b), or c * a when b is NULL. dst may equal a. */
	void (*mul)(size_t len, uint8_t c, const uint8_t *a, const uint8_t *b, uint8_t *dst);
	/* Second half of a two-data recovery. On entry x and y hold the partial
	 * syndromes P' and Q' computed with both lost blocks as zero. With
	 * pxy = p ^ x and qxy = q ^ y this stores x = a*pxy ^ b*qxy and
	 * y = pxy ^ x. */
	void (*rec2)(size_t len, uint8_t a, uint8_t b, const uint8_t *p, const uint8_t *q,
	             uint8_t *x, uint8_t *y);
	/* Read-modify-write of one data block: delta = old ^ new; p ^= delta
	 * (unless p is NULL); q ^= c * delta (unless q is NULL). */
	void (*update)(size_t len, uint8_t c, const uint8_t *old, const uint8_t *new_, uint8_t *p,
	               uint8_t *q);
	/* Optional: rec2 fused with the partial-syndrome pass, so a two-data
	 * recovery reads each surviving block once and writes x and y once.
	 * d[] as for gen, with the two lost blocks NULL. */
	void (*rec2_fused)(size_t len, int k, const uint8_t *const *d, const uint8_t *p,
	                   const uint8_t *q, uint8_t a, uint8_t b, uint8_t *x, uint8_t *y);
	/* Optional: data block x and P lost, in one pass. With Q' the partial
	 * Q over the surviving data (d[x] == NULL): x = c * (q + Q'), p = P' + x
	 * where c = g^-x and P' is the XOR of the surviving data. */
	void (*rec_dp)(size_t len, int k, const uint8_t *const *d, const uint8_t *q, uint8_t c,
	               uint8_t *x, uint8_t *p);
	/* Optional: `update` for n changed blocks in one pass over P and Q,
	 * coefficient c[j] for block j. */
	void (*update_n)(size_t len, int n, const uint8_t *c, const uint8_t *const *old,
	                 const uint8_t *const *new_, uint8_t *p, uint8_t *q);
	/* Optional: a backend with its own recovery (ISA-L's matrix encoder)
	 * sets this and may leave mul and rec2 NULL. Called with validated
	 * arguments, lost indices a < b (b = -1 when only one is lost). */
	void (*recover)(int k, size_t len, uint8_t *const *blocks, bool has_q, int a, int b);
	/* Optional: xor_n that also stores src[i] to copy[i] where that is not
	 * NULL, in the same pass. Without it parity.c runs xor_n and memcpy
	 * slice by slice, the copies reading the sources while cached. */
	void (*xor_copy)(size_t len, int n, const uint8_t *const *src, uint8_t *dst,
	                 uint8_t *const *copy);
};

/* The generic operations, parameterized by a backend's kernels. */
int parity_xor_gen(const struct parity_kernels *kk, int k, size_t len, void *const *blocks);
int parity_xor_copy_gen(const struct parity_kernels *kk, int k, size_t len, void *const *blocks,
                        void *const *copies);
int parity_pq_gen(const struct parity_kernels *kk, int k, size_t len, void *const *blocks);
int parity_pq_update(const struct parity_kernels *kk, int k, size_t len, void *p, void *q, int n,
                     const int *idx, const void *const *old, const void *const *new_);
int parity_recover(const struct parity_kernels *kk, int k, size_t len, void *const *blocks,
                   bool has_q, int nfail, const int *fail);

/* Defines `const struct uraid_parity parity_backend_<id>` whose entry points
 * are the generic operations bound to kernel table `kern`. The public struct
 * carries no context pointer, so each backend gets its own thin wrappers. */
#define PARITY_DEFINE_BACKEND(id, kern)                                                        \
	static int id##_xor_gen(int k, size_t len, void *const *blocks)                        \
	{                                                                                      \
		return parity_xor_gen(&(kern), k, len, blocks);                                \
	}                                                                                      \
	static int id##_xor_copy_gen(int k, size_t len, void *const *b, void *const *c)        \
	{                                                                                      \
		return parity_xor_copy_gen(&(kern), k, len, b, c);                             \
	}                                                                                      \
	static int id##_pq_gen(int k, size_t len, void *const *blocks)                         \
	{                                                                                      \
		return parity_pq_gen(&(kern), k, len, blocks);                                 \
	}                                                                                      \
	static int id##_pq_update(int k, size_t len, void *p, void *q, int n, const int *idx,  \
	                          const void *const *old, const void *const *new_)             \
	{                                                                                      \
		return parity_pq_update(&(kern), k, len, p, q, n, idx, old, new_);             \
	}                                                                                      \
	static int id##_recover(int k, size_t len, void *const *blocks, bool has_q, int nfail, \
	                        const int *fail)                                               \
	{                                                                                      \
		return parity_recover(&(kern), k, len, blocks, has_q, nfail, fail);            \
	}                                                                                      \
	const struct uraid_parity parity_backend_##id = {                                      \
	    .name = #id,                                                                       \
	    .xor_gen = id##_xor_gen,                                                           \
	    .pq_gen = id##_pq_gen,                                                             \
	    .pq_update = id##_pq_update,                                                       \
	    .recover = id##_recover,                                                           \
	    .xor_copy_gen = id##_xor_copy_gen,                                                 \
	}

extern const struct parity_kernels parity_portable_kernels;
extern const struct uraid_parity parity_backend_portable;
#ifdef HAVE_ISAL
extern const struct uraid_parity parity_backend_isal;
#endif
#if defined(__x86_64__)
#define PARITY_HAVE_X86 1
extern const struct uraid_parity parity_backend_avx2;
extern const struct uraid_parity parity_backend_avx512;
#endif

#endif
