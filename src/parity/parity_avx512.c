/* AVX-512 backend: the kernels of parity_simd.h on 64-byte vectors, using
 * AVX-512F/BW only (no GFNI: its multiply uses the AES polynomial 0x11b,
 * not RAID6's 0x11d).
 *
 * UNTESTED: the development machine has no AVX-512, so this code has only
 * been compiled, never run. It is therefore never chosen by default; it runs
 * only when asked for by name (URAID_PARITY=avx512) on a CPU that reports
 * AVX-512F and AVX-512BW. The kernel bodies are the same template the AVX2
 * backend runs and tests; only the primitives below are specific. */
#ifdef __x86_64__
#include <immintrin.h>

#include "parity/parity_int.h"

typedef __m512i vec;
#define VB 64

/* Streaming-store thresholds: the AVX2 values, not measured on AVX-512. */
#define NT_FOOTPRINT_XOR ((size_t)1 << 20)
#define NT_FOOTPRINT_PQ  ((size_t)8 << 20)
#define NT_FOOTPRINT_REC ((size_t)16 << 20)

static inline vec ldv(const uint8_t *p)
{
	return _mm512_loadu_si512((const void *)p);
}

static inline void stv(uint8_t *p, vec v)
{
	_mm512_storeu_si512((void *)p, v);
}

static inline void ntv(uint8_t *p, vec v)
{
	_mm512_stream_si512((void *)p, v);
}

#define vxor        _mm512_xor_si512
#define vand        _mm512_and_si512
#define vzero       _mm512_setzero_si512
#define vset1       _mm512_set1_epi8
#define vshuf       _mm512_shuffle_epi8
#define vsrl4(x)    _mm512_srli_epi64((x), 4)
#define vbcast16(p) _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(p)))

/* Multiply every byte by {02}: add to itself, then XOR 0x1d into the bytes
 * whose top bit was set (their sign bits form the mask). */
static inline vec mul2v(vec q, vec poly)
{
	__mmask64 top = _mm512_movepi8_mask(q);
	return _mm512_xor_si512(_mm512_add_epi8(q, q), _mm512_maskz_mov_epi8(top, poly));
}

#include "parity/parity_simd.h"

PARITY_DEFINE_BACKEND(avx512, simd_kernels);
#else
typedef int parity_avx512_not_built; /* ISO C wants a non-empty file */
#endif
