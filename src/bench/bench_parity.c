/* uraid bench parity: GB/s of data for the parity kernels, uraid's API next
 * to the raw ISA-L calls and to plain memory limits, all in one run on the
 * same pre-faulted, warmed-up buffers.
 *
 * Shapes: k = 3, 4, 8 data blocks of 64 KiB (cache-resident), 1 MiB and
 * 64 MiB (memory-bound). Every kernel of a shape is timed once per round,
 * rounds repeated, best round kept: machine noise then hits all kernels of
 * a shape alike, and the ratios compare like with like. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_ISAL
#include <isa-l.h>
#endif
#ifdef __x86_64__
#include <immintrin.h>
#endif

#include "bench/bench.h"
#include "bench/bench_util.h"
#include "cli/cli.h"
#include "uraid.h"

enum kern {
	K_MEMCPY,
	K_READSUM,
	K_ISAL_XOR,
	K_ISAL_PQ,
	K_ISAL_EC2,
	K_URAID_XOR,
	K_URAID_PQ,
	K_URAID_UPD,
	K_URAID_REC1,
	K_URAID_REC2,
	N_KERN
};

static const char *const kern_name[N_KERN] = {
    "memcpy",
    "readsum",
    "isal_xor_gen",
    "isal_pq_gen",
    "isal_ec_2xk",
    "uraid_xor_gen",
    "uraid_pq_gen",
    "uraid_pq_update",
    "uraid_recover_1data",
    "uraid_recover_2data",
};

/* Buffers of one shape: D0..Dk-1, P, Q, two scratch outputs, one "new" block. */
struct shape {
	const struct uraid_parity *pp;
	int k;
	size_t block;
	unsigned char *d[URAID_PARITY_MAX_DATA + 5];
	void *gen_out[URAID_PARITY_MAX_DATA + 2]; /* D..., X0, X1 */
	void *stripe[URAID_PARITY_MAX_DATA + 2];  /* D..., P, Q */
	unsigned char *ec_src[URAID_PARITY_MAX_DATA], *ec_out[2];
	unsigned char ec_tbls[32 * 2 * URAID_PARITY_MAX_DATA];
	volatile uint64_t sink;
	int rc; /* first failure of a uraid call, reported after timing */
};

#define P_(s)   ((s)->d[(s)->k])
#define Q_(s)   ((s)->d[(s)->k + 1])
#define X0(s)   ((s)->d[(s)->k + 2])
#define X1(s)   ((s)->d[(s)->k + 3])
#define NEWB(s) ((s)->d[(s)->k + 4])

static void note_rc(struct shape *s, int rc)
{
	if (rc && !s->rc)
		s->rc = rc;
}

static void run_memcpy(void *c)
{
	struct shape *s = c;
	for (int i = 0; i < s->k; i++)
		memcpy(X0(s), s->d[i], s->block);
}

#ifdef __x86_64__
__attribute__((target("avx2"))) static uint64_t sum_avx2(const unsigned char *p, size_t n)
{
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
	for (size_t o = 0; o + 128 <= n; o += 128) {
		a0 = _mm256_add_epi64(a0, _mm256_load_si256((const __m256i *)(p + o)));
		a1 = _mm256_add_epi64(a1, _mm256_load_si256((const __m256i *)(p + o + 32)));
		a2 = _mm256_add_epi64(a2, _mm256_load_si256((const __m256i *)(p + o + 64)));
		a3 = _mm256_add_epi64(a3, _mm256_load_si256((const __m256i *)(p + o + 96)));
	}
	a0 = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
	uint64_t t[4];
	_mm256_storeu_si256((__m256i *)t, a0);
	return t[0] + t[1] + t[2] + t[3];
}
#endif

static uint64_t sum_words(const unsigned char *p, size_t n)
{
#ifdef __x86_64__
	if (__builtin_cpu_supports("avx2"))
		return sum_avx2(p, n);
#endif
	uint64_t a = 0, b = 0, w[2];
	for (size_t o = 0; o + 16 <= n; o += 16) {
		memcpy(w, p + o, 16);
		a += w[0];
		b += w[1];
	}
	return a + b;
}

static void run_readsum(void *c)
{
	struct shape *s = c;
	uint64_t t = 0;
	for (int i = 0; i < s->k; i++)
		t += sum_words(s->d[i], s->block);
	s->sink = t;
}

#ifdef HAVE_ISAL
static void run_isal_xor(void *c)
{
	struct shape *s = c;
	s->gen_out[s->k] = X0(s);
	xor_gen(s->k + 1, (int)s->block, s->gen_out);
}

static void run_isal_pq(void *c)
{
	struct shape *s = c;
	s->gen_out[s->k] = X0(s);
	s->gen_out[s->k + 1] = X1(s);
	pq_gen(s->k + 2, (int)s->block, s->gen_out);
}

static void run_isal_ec2(void *c)
{
	struct shape *s = c;
	ec_encode_data((int)s->block, s->k, 2, s->ec_tbls, s->ec_src, s->ec_out);
}

/* ISA-L's way to rebuild D0 and D1: a 2 x k matrix over the survivors
 * D2..Dk-1, P, Q (see the closed forms in src/parity/parity_isal.c),
 * with ISA-L's own field helpers. */
static void isal_ec_setup(struct shape *s)
{
	int k = s->k, m = 0;
	unsigned char mat[2 * URAID_PARITY_MAX_DATA], g[URAID_PARITY_MAX_DATA];
	g[0] = 1;
	for (int i = 1; i < k; i++)
		g[i] = gf_mul(g[i - 1], 2);
	unsigned char B = gf_inv(g[0] ^ g[1]), A = gf_mul(g[1], B);
	for (int i = 2; i < k; i++) {
		unsigned char cf = A ^ gf_mul(B, g[i]);
		mat[m] = cf;
		mat[k + m] = cf ^ 1;
		s->ec_src[m++] = s->d[i];
	}
	mat[m] = A;
	mat[k + m] = A ^ 1;
	s->ec_src[m++] = P_(s);
	mat[m] = B;
	mat[k + m] = B;
	s->ec_src[m++] = Q_(s);
	s->ec_out[0] = X0(s);
	s->ec_out[1] = X1(s);
	ec_init_tables(k, 2, mat, s->ec_tbls);
}
#endif

static void run_uraid_xor(void *c)
{
	struct shape *s = c;
	s->gen_out[s->k] = X0(s);
	note_rc(s, s->pp->xor_gen(s->k, s->block, s->gen_out));
}

static void run_uraid_pq(void *c)
{
	struct shape *s = c;
	s->gen_out[s->k] = X0(s);
	s->gen_out[s->k + 1] = X1(s);
	note_rc(s, s->pp->pq_gen(s->k, s->block, s->gen_out));
}

static void run_uraid_upd(void *c)
{
	struct shape *s = c;
	int idx[1] = {1};
	const void *old[1] = {s->d[1]}, *nw[1] = {NEWB(s)};
	note_rc(s, s->pp->pq_update(s->k, s->block, P_(s), Q_(s), 1, idx, old, nw));
}

static void run_uraid_rec1(void *c)
{
	struct shape *s = c;
	int f[1] = {0};
	note_rc(s, s->pp->recover(s->k, s->block, s->stripe, true, 1, f));
}

static void run_uraid_rec2(void *c)
{
	struct shape *s = c;
	int f[2] = {0, 1};
	note_rc(s, s->pp->recover(s->k, s->block, s->stripe, true, 2, f));
}

static void (*const kern_fn[N_KERN])(void *) = {
    run_memcpy,    run_readsum,
#ifdef HAVE_ISAL
    run_isal_xor,  run_isal_pq,  run_isal_ec2,
#else
    NULL,          NULL,         NULL,
#endif
    run_uraid_xor, run_uraid_pq, run_uraid_upd, run_uraid_rec1, run_uraid_rec2,
};

/* ISA-L counterpart each uraid kernel is compared with (-1: none). */
static const int counterpart[N_KERN] = {
    [K_MEMCPY] = -1,
    [K_READSUM] = -1,
    [K_ISAL_XOR] = -1,
    [K_ISAL_PQ] = -1,
    [K_ISAL_EC2] = -1,
    [K_URAID_XOR] = K_ISAL_XOR,
    [K_URAID_PQ] = K_ISAL_PQ,
    [K_URAID_UPD] = -1,
    [K_URAID_REC1] = K_ISAL_XOR,
    [K_URAID_REC2] = K_ISAL_EC2,
};

#define ROUNDS_FULL  15
#define ROUNDS_QUICK 5

struct opts {
	bool json, quick;
	const char *backend;
	int only_k;        /* 0: all */
	size_t only_block; /* 0: all */
};

static int run_shape(const struct opts *o, struct shape *s, unsigned char **pool,
                     double gbps[N_KERN])
{
	int k = s->k;
	for (int i = 0; i < k + 5; i++)
		s->d[i] = pool[i];
	for (int i = 0; i < k; i++)
		s->gen_out[i] = s->stripe[i] = s->d[i];
	s->stripe[k] = P_(s);
	s->stripe[k + 1] = Q_(s);
	s->rc = 0;
	int rc = s->pp->pq_gen(k, s->block, s->stripe);
	if (rc)
		return rc;
#ifdef HAVE_ISAL
	isal_ec_setup(s);
	/* Cross-check once: same P and Q as ISA-L, same D0/D1 as ISA-L's rebuild. */
	run_isal_pq(s);
	if (memcmp(X0(s), P_(s), s->block) || memcmp(X1(s), Q_(s), s->block))
		return -EPROTO;
	run_isal_ec2(s);
	if (memcmp(X0(s), s->d[0], s->block) || memcmp(X1(s), s->d[1], s->block))
		return -EPROTO;
#endif
	/* Many short samples, best kept: on a shared, loaded machine the best
	 * sample is the one least disturbed by other processes. The first
	 * round only warms up (caches, TLB, branch predictors) and is not
	 * recorded; odd rounds run the kernels in reverse order so no kernel
	 * always inherits the cache state the same neighbour left behind. */
	int rounds = o->quick ? ROUNDS_QUICK : ROUNDS_FULL;
	uint64_t min_ns = 2000000;
	double best[N_KERN] = {0};
	for (int r = -1; r < rounds; r++) {
		for (int j = 0; j < N_KERN; j++) {
			int kk = r % 2 ? N_KERN - 1 - j : j;
			if (!kern_fn[kk])
				continue;
			double sec = bench_time_call(kern_fn[kk], s, min_ns);
			if (r < 0)
				continue;
			double bytes = (double)s->block * (kk == K_URAID_UPD ? 1 : k);
			double g = bytes / sec / 1e9;
			if (g > best[kk])
				best[kk] = g;
		}
	}
	memcpy(gbps, best, sizeof(best));
	return s->rc;
}

static void print_header(const struct opts *o, const struct uraid_parity *pp)
{
	char cpu[256];
	bench_cpu_model(cpu, sizeof(cpu));
	FILE *f = o->json ? stderr : stdout;
	fprintf(f, "# uraid bench parity%s: CPU %s, %d cores, backend %s, ISA-L %s\n",
	        o->quick ? " --quick" : "", cpu, bench_cpus(), pp->name,
#ifdef HAVE_ISAL
	        "linked"
#else
	        "not built in"
#endif
	);
	if (o->json)
		return;
	fprintf(f,
	        "# GB/s of data (k x block per call; pq_update: the one changed block), best of "
	        "%d rounds; (x) = ratio to the ISA-L counterpart\n",
	        o->quick ? ROUNDS_QUICK : ROUNDS_FULL);
	fprintf(f, "%3s %5s %7s %7s | %8s %9s %6s | %8s %9s %6s | %8s %9s %6s | %9s %6s | %9s\n",
	        "k", "block", "memcpy", "readsum", "isal_xor", "uraid_xor", "(x)", "isal_pq",
	        "uraid_pq", "(x)", "isal_ec2", "uraid_r2", "(x)", "uraid_r1", "(x)", "uraid_upd");
}

static void ratio(char *buf, size_t len, const double *g, int kk)
{
	int c = counterpart[kk];
	if (c < 0 || g[c] <= 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2f", g[kk] / g[c]);
}

static void print_row(int k, size_t block, const double *g)
{
	char lb[16], r1[16], r2[16], r3[16], r4[16];
	ratio(r1, sizeof(r1), g, K_URAID_XOR);
	ratio(r2, sizeof(r2), g, K_URAID_PQ);
	ratio(r3, sizeof(r3), g, K_URAID_REC2);
	ratio(r4, sizeof(r4), g, K_URAID_REC1);
	printf("%3d %5s %7.1f %7.1f | %8.1f %9.1f %6s | %8.1f %9.1f %6s | %8.1f %9.1f %6s | %9.1f "
	       "%6s | %9.1f\n",
	       k, bench_size_label(block, lb, sizeof(lb)), g[K_MEMCPY], g[K_READSUM], g[K_ISAL_XOR],
	       g[K_URAID_XOR], r1, g[K_ISAL_PQ], g[K_URAID_PQ], r2, g[K_ISAL_EC2], g[K_URAID_REC2],
	       r3, g[K_URAID_REC1], r4, g[K_URAID_UPD]);
	fflush(stdout);
}

static int usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: uraid bench parity [--quick] [--json] [--backend NAME] [-k K] [--block SIZE]\n"
	    "  --quick         short run (64K and 1M blocks, fewer rounds)\n"
	    "  --json          rows as a JSON list on stdout\n"
	    "  --backend NAME  uraid parity backend (default: URAID_PARITY or the best)\n"
	    "  -k K            only shapes with K data blocks (3, 4 or 8)\n"
	    "  --block SIZE    only shapes with this block size (64K, 1M or 64M)\n");
	return f == stdout ? 0 : 2;
}

int bench_parity(int argc, char **argv)
{
	static const struct option lopts[] = {
	    {"quick", no_argument, NULL, 'q'},         {"json", no_argument, NULL, 'j'},
	    {"backend", required_argument, NULL, 'b'}, {"help", no_argument, NULL, 'h'},
	    {"block", required_argument, NULL, 'B'},   {NULL, 0, NULL, 0},
	};
	struct opts o = {false, false, NULL, 0, 0};
	int c;
	unsigned long long v;
	optind = 1;
	while ((c = getopt_long(argc, argv, "qjb:hk:", lopts, NULL)) != -1) {
		switch (c) {
		case 'q': o.quick = true; break;
		case 'j': o.json = true; break;
		case 'b': o.backend = optarg; break;
		case 'k':
			if (cli_parse_size(optarg, 1, &v) || v < 2 || v > URAID_PARITY_MAX_DATA)
				return cli_error("bench", "parity: bad -k '%s'", optarg);
			o.only_k = (int)v;
			break;
		case 'B':
			if (cli_parse_size(optarg, 1, &v) || v == 0)
				return cli_error("bench", "parity: bad --block '%s'", optarg);
			o.only_block = (size_t)v;
			break;
		case 'h': return usage(stdout);
		default: return usage(stderr);
		}
	}
	if (optind < argc)
		return cli_error("bench", "parity: unexpected argument '%s'", argv[optind]);
	const struct uraid_parity *pp = uraid_parity_get(o.backend);
	if (!pp) {
		const char *nm = o.backend ? o.backend : getenv("URAID_PARITY");
		return cli_error("bench", "parity: backend '%s' %s", nm ? nm : "(default)",
		                 errno == ENOTSUP ? "is not supported by this CPU"
		                                  : "is unknown (see 'uraid version')");
	}

	static const int ks[] = {3, 4, 8};
	static const size_t blocks[] = {64u << 10, 1u << 20, 64u << 20};
	const int nk = 3, nblocks = o.quick && !o.only_block ? 2 : 3, kmax = 8;
	struct shape *s = calloc(1, sizeof(*s));
	if (!s)
		return cli_error("bench", "parity: out of memory");
	struct bench_json js;
	print_header(&o, pp);
	if (o.json)
		bench_json_begin(&js, stdout);
	int status = 0;
	for (int bi = 0; bi < nblocks && !status; bi++) {
		if (o.only_block && o.only_block != blocks[bi])
			continue;
		unsigned char *pool[8 + 5] = {NULL};
		for (int i = 0; i < kmax + 5; i++)
			if (!(pool[i] = bench_alloc(blocks[bi])))
				status = cli_error("bench", "parity: cannot allocate %zu bytes",
				                   blocks[bi]);
		for (int ki = 0; ki < nk && !status; ki++) {
			if (o.only_k && o.only_k != ks[ki])
				continue;
			double g[N_KERN];
			s->pp = pp;
			s->k = ks[ki];
			s->block = blocks[bi];
			int rc = run_shape(&o, s, pool, g);
			if (rc) {
				status = cli_error(
				    "bench", "parity: k=%d block=%zu: %s", s->k, s->block,
				    rc == -EPROTO ? "results differ from ISA-L" : strerror(-rc));
				break;
			}
			if (o.json) {
				for (int kk = 0; kk < N_KERN; kk++)
					if (kern_fn[kk])
						bench_json_row(&js, kern_name[kk], s->k, s->block,
						               g[kk]);
			} else {
				print_row(s->k, s->block, g);
			}
		}
		for (int i = 0; i < kmax + 5; i++)
			free(pool[i]);
	}
	if (o.json)
		bench_json_end(&js);
	free(s);
	return status;
}
