/* ISA-L backend: xor_gen / pq_gen where their preconditions hold (sources and
 * destinations 32-byte aligned, pq_gen lengths a multiple of 32), and ISA-L's
 * matrix encoder (ec_init_tables + ec_encode_data) for everything with
 * coefficients: recovery, Q-only generation, generation with lost blocks,
 * and read-modify-write updates (ec_encode_data_update). Whatever ISA-L
 * cannot take (misaligned pointers, sub-32-byte pq tails) goes to the
 * portable kernels. ISA-L lengths are `int`, so long blocks go in chunks. */
#ifdef HAVE_ISAL
#include <isa-l.h>
#include <string.h>

#include "parity/gf.h"
#include "parity/parity_int.h"

/* Largest piece handed to one ISA-L call: fits an int, multiple of 32. */
#define ISAL_CHUNK ((size_t)1 << 30)

static bool aligned32(const void *p)
{
	return ((uintptr_t)p & 31) == 0;
}

static void isalk_xor_n(size_t len, int n, const uint8_t *const *src, uint8_t *dst)
{
	bool al = aligned32(dst);
	for (int i = 0; i < n; i++)
		al = al && aligned32(src[i]);
	/* xor_gen needs two sources at least; one is a copy. */
	if (n < 2 || !al) {
		parity_portable_kernels.xor_n(len, n, src, dst);
		return;
	}
	void *arr[URAID_PARITY_MAX_DATA + 2];
	for (size_t off = 0; off < len; off += ISAL_CHUNK) {
		size_t l = len - off < ISAL_CHUNK ? len - off : ISAL_CHUNK;
		for (int i = 0; i < n; i++)
			arr[i] = (uint8_t *)src[i] + off;
		arr[n] = dst + off;
		xor_gen(n + 1, (int)l, arr);
	}
}

/* outs[r] = sum_j mat[r * m + j] * srcs[j] for r < rows, via ISA-L's encoder. */
static void ec_apply(size_t len, int m, int rows, uint8_t *mat, const uint8_t *const *srcs,
                     uint8_t *const *outs)
{
	if (m == 0) {
		for (int r = 0; r < rows; r++)
			memset(outs[r], 0, len);
		return;
	}
	unsigned char tbls[32 * URAID_PARITY_MAX_DATA * 2];
	unsigned char *s[URAID_PARITY_MAX_DATA + 2], *o[2];
	ec_init_tables(m, rows, mat, tbls);
	for (size_t off = 0; off < len; off += ISAL_CHUNK) {
		size_t l = len - off < ISAL_CHUNK ? len - off : ISAL_CHUNK;
		for (int j = 0; j < m; j++)
			s[j] = (unsigned char *)srcs[j] + off;
		for (int r = 0; r < rows; r++)
			o[r] = outs[r] + off;
		ec_encode_data((int)l, m, rows, tbls, s, o);
	}
}

static void isalk_gen(size_t len, int k, const uint8_t *const *d, uint8_t *p, uint8_t *q)
{
	bool full = p && q && k >= 2 && aligned32(p) && aligned32(q);
	for (int i = 0; i < k && full; i++)
		full = d[i] && aligned32(d[i]);
	if (full) {
		size_t body = len & ~(size_t)31;
		void *arr[URAID_PARITY_MAX_DATA + 2];
		for (size_t off = 0; off < body; off += ISAL_CHUNK) {
			size_t l = body - off < ISAL_CHUNK ? body - off : ISAL_CHUNK;
			for (int i = 0; i < k; i++)
				arr[i] = (uint8_t *)d[i] + off;
			arr[k] = p + off;
			arr[k + 1] = q + off;
			pq_gen(k + 2, (int)l, arr);
		}
		if (body < len) {
			const uint8_t *t[URAID_PARITY_MAX_DATA];
			for (int i = 0; i < k; i++)
				t[i] = d[i] + body;
			parity_portable_kernels.gen(len - body, k, t, p + body, q + body);
		}
		return;
	}
	/* Present blocks only, rows for P (all ones) and/or Q (g^i). */
	const uint8_t *srcs[URAID_PARITY_MAX_DATA];
	uint8_t mat[2 * URAID_PARITY_MAX_DATA];
	uint8_t gi[URAID_PARITY_MAX_DATA];
	uint8_t *outs[2];
	int m = 0, rows = 0;
	for (int i = 0; i < k; i++)
		if (d[i]) {
			gi[m] = gf8_exp2((unsigned)i);
			srcs[m++] = d[i];
		}
	if (p) {
		for (int j = 0; j < m; j++)
			mat[rows * m + j] = 1;
		outs[rows++] = p;
	}
	if (q) {
		for (int j = 0; j < m; j++)
			mat[rows * m + j] = gi[j];
		outs[rows++] = q;
	}
	ec_apply(len, m, rows, mat, srcs, outs);
}

/* P ^= old ^ new and Q ^= c (old ^ new): ec_encode_data_update adds a
 * source's contribution to the parity rows, so adding old then new cancels
 * the old contribution (addition is XOR). */
static void isalk_update(size_t len, uint8_t c, const uint8_t *old, const uint8_t *new_, uint8_t *p,
                         uint8_t *q)
{
	unsigned char mat[2], tbls[2 * 32];
	unsigned char *outs[2], *src;
	int rows = 0;
	if (p) {
		mat[rows] = 1;
		outs[rows++] = p;
	}
	if (q) {
		mat[rows] = c;
		outs[rows++] = q;
	}
	if (rows == 0)
		return; /* neither P nor Q wanted (the API refuses this before here) */
	ec_init_tables(1, rows, mat, tbls);
	for (size_t off = 0; off < len; off += ISAL_CHUNK) {
		size_t l = len - off < ISAL_CHUNK ? len - off : ISAL_CHUNK;
		unsigned char *o[2] = {outs[0] + off, rows > 1 ? outs[1] + off : NULL};
		src = (unsigned char *)old + off;
		ec_encode_data_update((int)l, 1, rows, 0, tbls, src, o);
		src = (unsigned char *)new_ + off;
		ec_encode_data_update((int)l, 1, rows, 0, tbls, src, o);
	}
}

/* Each lost block as a linear combination of survivors, in closed form (no
 * matrix inversion). With P = sum Di and Q = sum g^i Di:
 *   data x from P:        Dx = P + sum(i != x) Di
 *   data x and P:         Dx = g^-x Q + sum(i != x) g^(i-x) Di, then P = sum Di
 *   data x and Q:         Dx as from P; Q = g^x P + sum(i != x) (g^i + g^x) Di
 *   data x < y:           with A = g^y / (g^x + g^y), B = 1 / (g^x + g^y):
 *                         Dx = A P + B Q + sum (A + B g^i) Di, Dy = Dx + P + sum Di
 *   P and/or Q:           from the data. */
static void isalk_recover(int k, size_t len, uint8_t *const *blk, bool has_q, int a, int b)
{
	const int P = k, Q = k + 1;
	const uint8_t *srcs[URAID_PARITY_MAX_DATA + 2];
	uint8_t *outs[2];
	uint8_t mat[2 * (URAID_PARITY_MAX_DATA + 2)];
	int m = 0, rows = 2;
	(void)has_q;

	if (a >= P) { /* parity only: plain generation */
		isalk_gen(len, k, (const uint8_t *const *)blk, a == P ? blk[P] : NULL,
		          a == Q || b == Q ? blk[Q] : NULL);
		return;
	}
	if (b < 0) { /* one data block from P: plain XOR (xor_gen when aligned) */
		const uint8_t *src[URAID_PARITY_MAX_DATA];
		int n = 0;
		for (int i = 0; i <= k; i++)
			if (i != a)
				src[n++] = blk[i];
		isalk_xor_n(len, n, src, blk[a]);
		return;
	}
	outs[0] = blk[a];
	outs[1] = blk[b];
	if (b == Q) {
		uint8_t ga = gf8_exp2((unsigned)a);
		for (int i = 0; i < k; i++)
			if (i != a)
				srcs[m++] = blk[i];
		srcs[m++] = blk[P];
		for (int j = 0, i = 0; i < k; i++) {
			if (i == a)
				continue;
			mat[j] = 1;
			mat[m + j] = gf8_exp2((unsigned)i) ^ ga;
			j++;
		}
		mat[m - 1] = 1;
		mat[2 * m - 1] = ga;
	} else if (b == P) {
		uint8_t inv = gf8_inv(gf8_exp2((unsigned)a));
		for (int i = 0; i < k; i++)
			if (i != a)
				srcs[m++] = blk[i];
		srcs[m++] = blk[Q];
		for (int j = 0, i = 0; i < k; i++) {
			if (i == a)
				continue;
			uint8_t c = gf8_mul(gf8_exp2((unsigned)i), inv);
			mat[j] = c;
			mat[m + j] = c ^ 1;
			j++;
		}
		mat[m - 1] = inv;
		mat[2 * m - 1] = inv;
	} else {
		uint8_t gx = gf8_exp2((unsigned)a), gy = gf8_exp2((unsigned)b);
		uint8_t B = gf8_inv(gx ^ gy), A = gf8_mul(gy, B);
		for (int i = 0; i < k; i++)
			if (i != a && i != b)
				srcs[m++] = blk[i];
		srcs[m++] = blk[P];
		srcs[m++] = blk[Q];
		for (int j = 0, i = 0; i < k; i++) {
			if (i == a || i == b)
				continue;
			uint8_t c = A ^ gf8_mul(B, gf8_exp2((unsigned)i));
			mat[j] = c;
			mat[m + j] = c ^ 1;
			j++;
		}
		mat[m - 2] = A;
		mat[2 * m - 2] = A ^ 1;
		mat[m - 1] = B;
		mat[2 * m - 1] = B;
	}
	ec_apply(len, m, rows, mat, srcs, outs);
}

static const struct parity_kernels isal_kernels = {
    .xor_n = isalk_xor_n,
    .gen = isalk_gen,
    .update = isalk_update,
    .recover = isalk_recover,
};

PARITY_DEFINE_BACKEND(isal, isal_kernels);
#else
typedef int parity_isal_not_built; /* ISO C wants a non-empty file */
#endif
