/* AVX2 backend: the kernels of parity_simd.h on 32-byte vectors. Compiled
 * with -mavx2; selected only when CPUID reports AVX2. */
#ifdef __x86_64__
#include <immintrin.h>

#include "parity/parity_int.h"

typedef __m256i vec;
#define VB 32

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
/* Two-data recovery writes 2 blocks per k read, so streaming pays off later:
 * at k = 8 / 1 MiB (10 MiB) ordinary stores were faster in 5 of 5 A/B runs
 * (31.3 vs 26.4, 31.9 vs 27.6, 31.2 vs 28.0, 27.4 vs 25.8, 20.1 vs 16.7 GB/s). */
#ifndef NT_FOOTPRINT_REC
#define NT_FOOTPRINT_REC ((size_t)16 << 20)
#endif

static inline vec ldv(const uint8_t *p)
{
	return _mm256_loadu_si256((const vec *)p);
}

static inline void stv(uint8_t *p, vec v)
{
	_mm256_storeu_si256((vec *)p, v);
}

static inline void ntv(uint8_t *p, vec v)
{
	_mm256_stream_si256((vec *)p, v);
}

#define vxor        _mm256_xor_si256
#define vand        _mm256_and_si256
#define vzero       _mm256_setzero_si256
#define vset1       _mm256_set1_epi8
#define vshuf       _mm256_shuffle_epi8
#define vsrl4(x)    _mm256_srli_epi64((x), 4)
#define vbcast16(p) _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(p)))

/* Multiply every byte by {02}: double it, and where the byte's top bit was
 * set take the doubled value XOR 0x1d instead (vpblendvb selects by each
 * byte's sign bit). Three operations; the textbook form "(q + q) ^
 * (poly & sign mask)" is four (GCC turns a blend against zero into
 * compare + and), and measured 2-10 % slower for P+Q and recovery. */
static inline vec mul2v(vec q, vec poly)
{
	vec d = _mm256_add_epi8(q, q);
	return _mm256_blendv_epi8(d, _mm256_xor_si256(d, poly), q);
}

#include "parity/parity_simd.h"

PARITY_DEFINE_BACKEND(avx2, simd_kernels);
#else
typedef int parity_avx2_not_built; /* ISO C wants a non-empty file */
#endif
