/* Parity module: every backend this CPU can run against the byte-at-a-time
 * reference in test_parity_ref.h — generation, RMW update, every recovery
 * case, argument checks, backend selection, plus a hand-worked known answer. */
#include <errno.h>
#ifdef HAVE_ISAL
#include <isa-l.h>
#endif

#include "../harness.h"
#include "test_parity_ref.h"

/* Backends compiled in and runnable here. */
static int usable_backends(const struct uraid_parity **out)
{
	int n = 0;
	for (const char *const *nm = uraid_parity_backends(); *nm; nm++) {
		const struct uraid_parity *pp = uraid_parity_get(*nm);
		if (pp) {
			CHECK(strcmp(pp->name, *nm) == 0);
			out[n++] = pp;
		} else {
			/* Only a CPU-dependent backend may be missing. */
			CHECKF(errno == ENOTSUP, "backend %s: errno %d", *nm, errno);
#ifdef __x86_64__
			if (!strcmp(*nm, "avx2"))
				CHECKF(!__builtin_cpu_supports("avx2"),
				       "avx2 CPU but no avx2 backend");
#endif
		}
	}
	return n;
}

static const size_t lens[] = {1, 2, 7, 8, 31, 32, 33, 63, 64, 65, 127, 128, 129, 4096, 4099, 65537};
#define NLENS (sizeof(lens) / sizeof(lens[0]))

static int rand_k(uint64_t *st, int lo)
{
	/* Mostly small stripes, sometimes the extremes. */
	switch (t_rand(st) % 8) {
	case 0: return lo;
	case 1: return URAID_PARITY_MAX_DATA;
	default: return lo + (int)(t_rand(st) % 16);
	}
}

static size_t rand_len(uint64_t *st, int k)
{
	for (;;) {
		size_t l = lens[t_rand(st) % NLENS];
		if ((size_t)k * l <= (1u << 20))
			return l;
	}
}

/* Known answer, worked by hand from the field definition (0x11d, g = 2):
 *   g^0 = 1, g^1 = 2, g^2 = 4; 2*0x80 = 0x100 ^ 0x11d = 0x1d; 4*0x80 = 2*0x1d = 0x3a;
 *   2*0xc0 = 0x180 ^ 0x11d = 0x9d; 4*0xc0 = 2*0x9d = 0x13a ^ 0x11d = 0x27.
 *   column 0: D = 01 01 01: P = 01, Q = 1 ^ 2 ^ 4 = 07
 *   column 1: D = 80 80 80: P = 80, Q = 80 ^ 1d ^ 3a = a7
 *   column 2: D = 00 02 00: P = 02, Q = 2*2 = 04
 *   column 3: D = ff 00 c0: P = ff ^ c0 = 3f, Q = ff ^ 4*c0 = ff ^ 27 = d8 */
static void known_answer(void)
{
	const struct uraid_parity *bk[8];
	int nb = usable_backends(bk);
	for (int b = 0; b < nb; b++) {
		uint8_t d0[4] = {0x01, 0x80, 0x00, 0xff}, d1[4] = {0x01, 0x80, 0x02, 0x00};
		uint8_t d2[4] = {0x01, 0x80, 0x00, 0xc0}, p[4], q[4], x[4] = {0};
		void *v[5] = {d0, d1, d2, p, q};
		static const uint8_t ep[4] = {0x01, 0x80, 0x02, 0x3f},
		                     eq[4] = {0x07, 0xa7, 0x04, 0xd8};
		CHECK(bk[b]->pq_gen(3, 4, v) == 0);
		CHECKF(!memcmp(p, ep, 4) && !memcmp(q, eq, 4), "%s", bk[b]->name);
		v[3] = x;
		CHECK(bk[b]->xor_gen(3, 4, v) == 0);
		CHECKF(!memcmp(x, ep, 4), "%s", bk[b]->name);
		/* The reference must agree too, or the other tests prove nothing. */
		uint8_t *dd[3] = {d0, d1, d2};
		ref_pq(3, 4, dd, p, q);
		CHECK(!memcmp(p, ep, 4) && !memcmp(q, eq, 4));
	}
}

static void gen_matches_reference(void)
{
	const struct uraid_parity *bk[8];
	int nb = usable_backends(bk);
	CHECK(nb >= 1);
	for (int b = 0; b < nb; b++) {
		uint64_t st = 1000;
		for (int iter = 0; iter < 60; iter++) {
			int k = rand_k(&st, 2);
			size_t len = rand_len(&st, k), off = t_rand(&st) % 4 ? t_rand(&st) % 64 : 0;
			struct blockset s;
			bs_init(&s, k, len, off);
			for (int i = 0; i < k; i++)
				t_fill(&st, bs(&s, i), len);
			uint8_t *ep = malloc(len), *eq = malloc(len);
			ref_pq(k, len, (uint8_t *const *)s.b, ep, eq);
			CHECK(bk[b]->pq_gen(k, len, s.b) == 0);
			CHECKF(!memcmp(bs(&s, k), ep, len) && !memcmp(bs(&s, k + 1), eq, len),
			       "%s pq k=%d len=%zu off=%zu", bk[b]->name, k, len, off);
			memset(bs(&s, k), 0xa5, len);
			CHECK(bk[b]->xor_gen(k, len, s.b) == 0);
			CHECKF(!memcmp(bs(&s, k), ep, len), "%s xor k=%d len=%zu off=%zu",
			       bk[b]->name, k, len, off);
			free(ep);
			free(eq);
			bs_free(&s);
		}
		/* XOR of a single block is a copy. */
		uint8_t a[5] = {1, 2, 3, 4, 5}, c[5] = {0};
		void *v[2] = {a, c};
		CHECK(bk[b]->xor_gen(1, 5, v) == 0 && !memcmp(a, c, 5));
	}
}

/* xor_copy_gen: P as the byte-at-a-time reference computes it and every
 * wanted copy equal to its data block, the bytes around each copy (and
 * copies not wanted) untouched; the data unchanged. Random k, lengths and
 * misalignments, each data block copied or not; and aligned full stripes of
 * 256 KiB chunks (streaming stores). */
static void xor_copy_matches_reference(void)
{
	const struct uraid_parity *bk[8];
	int nb = usable_backends(bk);
	for (int b = 0; b < nb; b++) {
		uint64_t st = 3000;
		for (int iter = 0; iter < 60; iter++) {
			int k = rand_k(&st, 1);
			size_t len = rand_len(&st, k), off = t_rand(&st) % 4 ? t_rand(&st) % 64 : 0;
			size_t coff = t_rand(&st) % 2 ? t_rand(&st) % 64 : 0;
			if (iter < 2) {
				/* A full stripe of 256 KiB chunks, aligned: the
				 * streaming-store path (and its unaligned twin). */
				k = 4;
				len = (256u << 10) + (size_t)iter * 100;
				off = coff = 0;
			}
			struct blockset s;
			bs_init(&s, k, len, off);
			for (int i = 0; i < k; i++)
				t_fill(&st, bs(&s, i), len);
			uint8_t *ep = malloc(len), *eq = malloc(len),
			        *save = malloc((size_t)k * len);
			for (int i = 0; i < k; i++)
				memcpy(save + (size_t)i * len, bs(&s, i), len);
			ref_pq(k, len, (uint8_t *const *)s.b, ep, eq);
			/* The copies in one buffer, 64 guard bytes around each. */
			size_t slot = coff + len + 64;
			uint8_t *cb = aligned_alloc(64, ((size_t)k * slot + 64 + 63) / 64 * 64);
			memset(cb, 0x5c, (size_t)k * slot + 64);
			void *copies[URAID_PARITY_MAX_DATA];
			for (int i = 0; i < k; i++)
				copies[i] =
				    t_rand(&st) % 4 ? cb + 64 + (size_t)i * slot + coff : NULL;
			memset(bs(&s, k), 0xa5, len);
			CHECK(bk[b]->xor_copy_gen(k, len, s.b, copies) == 0);
			bool ok = !memcmp(bs(&s, k), ep, len);
			for (int i = 0; i < k; i++) {
				const uint8_t *c = cb + 64 + (size_t)i * slot + coff;
				ok &= !memcmp(bs(&s, i), save + (size_t)i * len, len);
				if (copies[i])
					ok &= !memcmp(c, bs(&s, i), len);
			}
			/* Outside the copied ranges every byte is still the filler. */
			for (size_t j = 0; j < (size_t)k * slot + 64; j++) {
				size_t i = j < 64 ? (size_t)-1 : (j - 64) / slot,
				       r = (j - 64) % slot;
				bool inside = j >= 64 && i < (size_t)k && copies[i] && r >= coff &&
				              r < coff + len;
				if (!inside && cb[j] != 0x5c) {
					ok = false;
					break;
				}
			}
			CHECKF(ok, "%s xor_copy k=%d len=%zu off=%zu coff=%zu", bk[b]->name, k, len,
			       off, coff);
			/* Without copies: xor_gen. */
			memset(bs(&s, k), 0xa5, len);
			CHECK(bk[b]->xor_copy_gen(k, len, s.b, NULL) == 0 &&
			      !memcmp(bs(&s, k), ep, len));
			free(cb);
			free(ep);
			free(eq);
			free(save);
			bs_free(&s);
		}
		void *none[2] = {NULL, NULL}, *cp[1] = {NULL};
		CHECK(bk[b]->xor_copy_gen(0, 5, none, cp) == -EINVAL);
		CHECK(bk[b]->xor_copy_gen(1, 5, none, cp) == -EINVAL);
	}
}

/* Recover fail[] after scribbling over them, then compare every block with a
 * saved copy: the lost ones must come back, the others must be untouched. */
static void roundtrip(const struct uraid_parity *pp, struct blockset *s, bool has_q, int nfail,
                      const int *fail, uint64_t *st)
{
	int k = s->k, nbl = k + (has_q ? 2 : 1);
	size_t len = s->len;
	uint8_t *save = malloc(len * (size_t)nbl);
	for (int i = 0; i < nbl; i++)
		memcpy(save + (size_t)i * len, bs(s, i), len);
	for (int j = 0; j < nfail; j++)
		t_fill(st, bs(s, fail[j]), len);
	int rc = pp->recover(k, len, s->b, has_q, nfail, fail);
	CHECKF(rc == 0, "%s rc=%d", pp->name, rc);
	for (int i = 0; i < nbl; i++)
		CHECKF(!memcmp(save + (size_t)i * len, bs(s, i), len),
		       "%s k=%d len=%zu has_q=%d fail=%d,%d: block %d wrong", pp->name, k, len,
		       has_q, fail[0], nfail > 1 ? fail[1] : -1, i);
	free(save);
}

/* Blocks of a few MiB, aligned and not: the non-temporal store paths of the
 * SIMD backends. The portable backend has no size-dependent path and is
 * slow under ASan, so it sits this one out. */
static void gen_large_blocks(void)
{
	const struct uraid_parity *bk[8];
	int nb = usable_backends(bk);
	for (size_t off = 0; off < 64; off += 33) {
		uint64_t st = 77 + off;
		int k = 3;
		size_t len = (4u << 20) + 96 + off; /* 5 blocks: past every streaming threshold */
		struct blockset s;
		bs_init(&s, k, len, off);
		for (int i = 0; i < k; i++)
			t_fill(&st, bs(&s, i), len);
		uint8_t *ep = malloc(len), *eq = malloc(len);
		ref_pq(k, len, (uint8_t *const *)s.b, ep, eq);
		for (int b = 0; b < nb; b++) {
			if (!strcmp(bk[b]->name, "portable"))
				continue;
			memset(bs(&s, k), 0, len);
			memset(bs(&s, k + 1), 0, len);
			CHECK(bk[b]->pq_gen(k, len, s.b) == 0);
			CHECKF(!memcmp(bs(&s, k), ep, len) && !memcmp(bs(&s, k + 1), eq, len),
			       "%s off=%zu", bk[b]->name, off);
			memset(bs(&s, k), 0, len);
			CHECK(bk[b]->xor_gen(k, len, s.b) == 0);
			CHECK(!memcmp(bs(&s, k), ep, len));
			static const int pairs[][2] = {{0, 2}, {1, 3}, {0, 4}, {3, 4}};
			for (int i = 0; i < 4; i++)
				roundtrip(bk[b], &s, true, 2, pairs[i], &st);
		}
		free(ep);
		free(eq);
		bs_free(&s);
	}
}

static void recover_all_pairs(void)
{
	const struct uraid_parity *bk[8];
	int nb = usable_backends(bk);
	static const int ks[] = {2, 3, 4, 7, 16};
	static const size_t rlens[] = {1, 33, 4096 + 77};
	for (int b = 0; b < nb; b++) {
		uint64_t st = 4242;
		for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
			for (size_t li = 0; li < 3; li++) {
				int k = ks[ki];
				size_t len = rlens[li], off = li * 5;
				struct blockset s;
				bs_init(&s, k, len, off);
				for (int i = 0; i < k; i++)
					t_fill(&st, bs(&s, i), len);
				ref_pq(k, len, (uint8_t *const *)s.b, bs(&s, k), bs(&s, k + 1));
				for (int x = 0; x < k + 2; x++) {
					int f1[1] = {x};
					roundtrip(bk[b], &s, true, 1, f1, &st);
					if (x <= k)
						roundtrip(bk[b], &s, false, 1, f1, &st);
					for (int y = 0; y < k + 2; y++) {
						if (y == x)
							continue;
						int f2[2] = {x, y}; /* both orders */
						roundtrip(bk[b], &s, true, 2, f2, &st);
					}
				}
				bs_free(&s);
			}
		}
		/* Widest stripe, a few pairs including the highest indices. */
		int k = URAID_PARITY_MAX_DATA;
		struct blockset s;
		bs_init(&s, k, 100, 3);
		for (int i = 0; i < k; i++)
			t_fill(&st, bs(&s, i), 100);
		ref_pq(k, 100, (uint8_t *const *)s.b, bs(&s, k), bs(&s, k + 1));
		static const int pairs[][2] = {{0, 252}, {251, 252}, {252, 253}, {252, 254},
		                               {0, 254}, {253, 254}, {17, 200},  {1, 253}};
		for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
			roundtrip(bk[b], &s, true, 2, pairs[i], &st);
		int one[1] = {252};
		roundtrip(bk[b], &s, false, 1, one, &st);
		bs_free(&s);
		/* RAID5 with one data block (a mirror in disguise). */
		bs_init(&s, 1, 40, 0);
		t_fill(&st, bs(&s, 0), 40);
		memcpy(bs(&s, 1), bs(&s, 0), 40);
		int z[1] = {0};
		roundtrip(bk[b], &s, false, 1, z, &st);
		bs_free(&s);
	}
}

static void update_matches_full_gen(void)
{
	const struct uraid_parity *bk[8];
	int nb = usable_backends(bk);
	for (int b = 0; b < nb; b++) {
		uint64_t st = 99;
		for (int iter = 0; iter < 40; iter++) {
			int k = rand_k(&st, 2);
			size_t len = rand_len(&st, k), off = t_rand(&st) % 40;
			int mode = iter % 3; /* 0: P+Q, 1: P only, 2: Q only */
			struct blockset s;
			bs_init(&s, k, len, off);
			for (int i = 0; i < k; i++)
				t_fill(&st, bs(&s, i), len);
			ref_pq(k, len, (uint8_t *const *)s.b, bs(&s, k), bs(&s, k + 1));
			int n = 1 + (int)(t_rand(&st) % (k < 4 ? k : 4));
			int idx[4];
			const void *oldv[4], *newv[4];
			uint8_t *olds[4] = {NULL}, *news[4] = {NULL};
			for (int j = 0; j < n; j++) {
				int c;
				bool dup;
				do {
					c = (int)(t_rand(&st) % (uint64_t)k);
					dup = false;
					for (int i = 0; i < j; i++)
						dup = dup || idx[i] == c;
				} while (dup);
				idx[j] = c;
				olds[j] = malloc(len);
				news[j] = malloc(len);
				memcpy(olds[j], bs(&s, c), len);
				t_fill(&st, news[j], len);
				oldv[j] = olds[j];
				newv[j] = news[j];
			}
			uint8_t *p0 = malloc(len), *q0 = malloc(len);
			memcpy(p0, bs(&s, k), len);
			memcpy(q0, bs(&s, k + 1), len);
			int rc =
			    bk[b]->pq_update(k, len, mode == 2 ? NULL : bs(&s, k),
			                     mode == 1 ? NULL : bs(&s, k + 1), n, idx, oldv, newv);
			CHECK(rc == 0);
			for (int j = 0; j < n; j++)
				memcpy(bs(&s, idx[j]), news[j], len);
			uint8_t *ep = malloc(len), *eq = malloc(len);
			ref_pq(k, len, (uint8_t *const *)s.b, ep, eq);
			CHECKF(!memcmp(bs(&s, k), mode == 2 ? p0 : ep, len),
			       "%s P k=%d len=%zu n=%d", bk[b]->name, k, len, n);
			CHECKF(!memcmp(bs(&s, k + 1), mode == 1 ? q0 : eq, len),
			       "%s Q k=%d len=%zu n=%d", bk[b]->name, k, len, n);
			for (int j = 0; j < n; j++) {
				free(olds[j]);
				free(news[j]);
			}
			free(p0);
			free(q0);
			free(ep);
			free(eq);
			bs_free(&s);
		}
	}
}

/* Every backend against ISA-L's own pq_gen (a second, real implementation)
 * for random k up to the maximum, aligned 32-byte multiples as it needs. */
static void gen_matches_isal(void)
{
#ifdef HAVE_ISAL
	const struct uraid_parity *bk[8];
	int nb = usable_backends(bk);
	uint64_t st = 31337;
	for (int iter = 0; iter < 12; iter++) {
		int k = iter == 0 ? URAID_PARITY_MAX_DATA : 2 + (int)(t_rand(&st) % 60);
		size_t len = 32 * (1 + t_rand(&st) % 64);
		struct blockset s;
		bs_init(&s, k, len, 0);
		for (int i = 0; i < k; i++)
			t_fill(&st, bs(&s, i), len);
		CHECK(pq_gen(k + 2, (int)len, s.b) == 0);
		uint8_t *ip = malloc(len), *iq = malloc(len);
		memcpy(ip, bs(&s, k), len);
		memcpy(iq, bs(&s, k + 1), len);
		for (int b = 0; b < nb; b++) {
			memset(bs(&s, k), 0, len);
			memset(bs(&s, k + 1), 0, len);
			CHECK(bk[b]->pq_gen(k, len, s.b) == 0);
			CHECKF(!memcmp(bs(&s, k), ip, len) && !memcmp(bs(&s, k + 1), iq, len),
			       "%s k=%d len=%zu differs from ISA-L pq_gen", bk[b]->name, k, len);
		}
		free(ip);
		free(iq);
		bs_free(&s);
	}
#else
	CHECK(uraid_parity_get("isal") == NULL); /* not built: must not claim to be */
#endif
}

static void bad_arguments(void)
{
	const struct uraid_parity *bk[8];
	int nb = usable_backends(bk);
	uint8_t buf[6][16];
	void *v[6] = {buf[0], buf[1], buf[2], buf[3], buf[4], buf[5]};
	memset(buf, 0x5a, sizeof(buf));
	for (int b = 0; b < nb; b++) {
		const struct uraid_parity *pp = bk[b];
		uint8_t before[sizeof(buf)];
		memcpy(before, buf, sizeof(buf));
		CHECK(pp->xor_gen(0, 16, v) == -EINVAL);
		CHECK(pp->xor_gen(254, 16, v) == -EINVAL);
		CHECK(pp->xor_gen(2, 0, v) == -EINVAL);
		CHECK(pp->xor_gen(2, 16, NULL) == -EINVAL);
		CHECK(pp->pq_gen(1, 16, v) == -EINVAL);
		CHECK(pp->pq_gen(254, 16, v) == -EINVAL);
		void *vn[5] = {buf[0], NULL, buf[2], buf[3], buf[4]};
		CHECK(pp->pq_gen(3, 16, vn) == -EINVAL);
		int f[2] = {0, 1}, fsame[2] = {1, 1}, fbig[2] = {0, 5}, fneg[1] = {-1};
		CHECK(pp->recover(3, 16, v, true, 0, f) == -EINVAL);
		CHECK(pp->recover(3, 16, v, true, 3, f) == -EINVAL);
		CHECK(pp->recover(3, 16, v, true, 2, fsame) == -EINVAL);
		CHECK(pp->recover(3, 16, v, true, 2, fbig) == -EINVAL);
		CHECK(pp->recover(3, 16, v, true, 1, fneg) == -EINVAL);
		CHECK(pp->recover(3, 16, v, false, 2, f) == -EINVAL);
		int fq[1] = {4};
		CHECK(pp->recover(3, 16, v, false, 1, fq) == -EINVAL); /* no Q in RAID5 */
		CHECK(pp->recover(3, 16, v, true, 1, NULL) == -EINVAL);
		CHECK(pp->recover(3, 16, vn, true, 1, f) == -EINVAL);
		CHECK(pp->recover(1, 16, v, true, 1, f) == -EINVAL);
		int idx[2] = {0, 0}, idxbad[1] = {3};
		const void *o[2] = {buf[0], buf[1]}, *nw[2] = {buf[1], buf[0]};
		CHECK(pp->pq_update(3, 16, buf[3], buf[4], 2, idx, o, nw) == -EINVAL);
		CHECK(pp->pq_update(3, 16, buf[3], buf[4], 1, idxbad, o, nw) == -EINVAL);
		CHECK(pp->pq_update(3, 16, NULL, NULL, 1, f, o, nw) == -EINVAL);
		CHECK(pp->pq_update(3, 16, buf[3], buf[4], 0, f, o, nw) == -EINVAL);
		CHECK(pp->pq_update(3, 0, buf[3], buf[4], 1, f, o, nw) == -EINVAL);
		/* A bad second entry must not leave P half-updated. */
		int idx2[2] = {0, 7};
		CHECK(pp->pq_update(3, 16, buf[3], buf[4], 2, idx2, o, nw) == -EINVAL);
		CHECK(!memcmp(before, buf, sizeof(buf)));
	}
}

static void selection(void)
{
	const struct uraid_parity *pp = uraid_parity_get("portable");
	CHECK(pp && !strcmp(pp->name, "portable"));
	errno = 0;
	CHECK(uraid_parity_get("no-such-backend") == NULL && errno == ENOENT);
	CHECK(setenv("URAID_PARITY", "portable", 1) == 0);
	pp = uraid_parity_get(NULL);
	CHECK(pp && !strcmp(pp->name, "portable"));
	CHECK(setenv("URAID_PARITY", "bogus", 1) == 0);
	CHECK(uraid_parity_get(NULL) == NULL); /* no silent fallback */
#ifdef HAVE_ISAL
	CHECK(setenv("URAID_PARITY", "isal", 1) == 0);
	pp = uraid_parity_get(NULL);
	CHECK(pp && !strcmp(pp->name, "isal"));
#endif
	CHECK(unsetenv("URAID_PARITY") == 0);
	pp = uraid_parity_get(NULL);
	CHECK(pp != NULL);
	/* avx512 has never run on the development machine: opt-in only. */
	CHECK(pp && strcmp(pp->name, "avx512") != 0);
	/* The default is one of the compiled-in names. */
	bool listed = false;
	for (const char *const *nm = uraid_parity_backends(); *nm; nm++)
		listed = listed || (pp && !strcmp(*nm, pp->name));
	CHECK(listed);
}

TEST_MAIN(T(known_answer), T(gen_matches_reference), T(xor_copy_matches_reference),
          T(gen_large_blocks), T(gen_matches_isal), T(recover_all_pairs),
          T(update_matches_full_gen), T(bad_arguments), T(selection))
