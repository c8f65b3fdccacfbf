/* uraid bench engine: the rebuild ceiling of the members on this machine.
 *
 * A rebuild reads every source byte once, combines the sources and writes
 * the result; on members in memory each of those is a page-cache copy, and
 * the machine's CPUs, not the members, set the pace. To show how close the
 * engine's rebuild comes to that, the same work is done here without an
 * engine: `nsrc` members read, XORed (or, for a mirror, the one source
 * taken as it is) and written to the spare, in 256 KiB pieces by two
 * threads with plain synchronous member requests — the pattern of the
 * engine's in-memory recovery, minus layout, locking and checkpoints. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_engine_int.h"
#include "bench/bench_util.h"
#include "member/member.h"
#include "uraid.h"
#include "util/errmsg.h"

#define CEIL_PIECE   (256u << 10)
#define CEIL_THREADS 2

struct ceiling {
	struct member *src[BW_MAX_MEMBERS];
	struct member *dst;
	int nsrc;
	uint64_t bytes;
	const struct uraid_parity *pp;
	uint64_t next; /* next piece (atomic) */
	int err;       /* first error (atomic) */
};

static void *ceiling_worker(void *arg)
{
	struct ceiling *c = arg;
	void *blk[BW_MAX_MEMBERS + 1] = {0};
	int r = 0;
	for (int i = 0; i <= c->nsrc && r == 0; i++)
		if (!(blk[i] = bench_alloc(CEIL_PIECE)))
			r = -ENOMEM;
	uint64_t pieces = (c->bytes + CEIL_PIECE - 1) / CEIL_PIECE;
	while (r == 0 && !__atomic_load_n(&c->err, __ATOMIC_RELAXED)) {
		uint64_t p = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED);
		if (p >= pieces)
			break;
		uint64_t off = p * CEIL_PIECE;
		size_t len = c->bytes - off < CEIL_PIECE ? (size_t)(c->bytes - off) : CEIL_PIECE;
		for (int i = 0; i < c->nsrc && r == 0; i++)
			r = member_read(c->src[i], blk[i], len, off);
		if (r == 0 && c->nsrc > 1)
			r = c->pp->xor_gen(c->nsrc, len, blk);
		if (r == 0)
			r = member_write(c->dst, blk[c->nsrc > 1 ? c->nsrc : 0], len, off, 0);
	}
	for (int i = 0; i <= c->nsrc; i++)
		free(blk[i]);
	if (r < 0) {
		int zero = 0;
		__atomic_compare_exchange_n(&c->err, &zero, r, false, __ATOMIC_RELAXED,
		                            __ATOMIC_RELAXED);
	}
	return NULL;
}

/* One pass over the members; MB/s of rebuilt bytes. */
static int ceiling_pass(struct ceiling *c, double *mbs)
{
	pthread_t t[CEIL_THREADS];
	int started = 0;
	c->next = 0;
	c->err = 0;
	uint64_t t0 = bench_now_ns();
	for (; started < CEIL_THREADS; started++)
		if (pthread_create(&t[started], NULL, ceiling_worker, c) != 0)
			break;
	if (started == 0)
		ceiling_worker(c);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	double secs = (double)(bench_now_ns() - t0) / 1e9;
	*mbs = (double)c->bytes / 1e6 / secs;
	return c->err;
}

int beng_rebuild_ceiling(struct bw_set *s, const struct eng_opts *o, int nsrc, double *mbs,
                         char *err, size_t errlen)
{
	struct ceiling c = {.nsrc = nsrc, .bytes = s->bytes, .pp = uraid_parity_get(NULL)};
	int r = 0, opened = 0;
	if (nsrc < 1 || nsrc >= o->members || !c.pp)
		return errmsg(err, errlen, -EINVAL, "rebuild ceiling: %d sources", nsrc);
	for (; opened < nsrc && r == 0; opened++)
		r = bw_member_open(s, opened, &c.src[opened], err, errlen);
	if (r == 0)
		r = bw_member_open(s, o->members, &c.dst, err, errlen);
	/* Elsewhere the members, not the CPUs, set a rebuild's pace. */
	bool in_memory = r == 0 && c.src[0]->in_memory;
	/* Best of two passes: the first also warms the caches. */
	double best = 0, v;
	for (int pass = 0; pass < 2 && r == 0 && in_memory; pass++) {
		if ((r = ceiling_pass(&c, &v)) < 0)
			errmsg(err, errlen, r, "rebuild ceiling: member I/O failed");
		else if (v > best)
			best = v;
	}
	for (int i = 0; i < opened; i++)
		if (c.src[i])
			member_close(c.src[i]), s->open[i] = NULL;
	if (c.dst)
		member_close(c.dst), s->open[o->members] = NULL;
	*mbs = best;
	return r;
}
