/* uraid bench engine --nbd: the transport ceiling of a member set.
 *
 * What the members carry with no RAID above them, through the member layer
 * the array itself uses: o->qd threads, each with its own member queue,
 * issuing 4 KiB requests two at a time on two different members (the shape
 * of a RAID5 read-modify-write step: 2 * o->qd requests in flight, as the
 * array's o->qd writers keep), and full-stripe writes without the parity
 * computed: one chunk-sized write to every member at once per thread (what
 * a 1 MiB array write sends with the default 256 KiB chunk on 5 members),
 * over whole members. NBD members go through
 * member_ioq_run (their aio ops: both requests of a pair in flight at once),
 * members in memory through plain synchronous requests in the thread, as the
 * engine runs them there (eng_ioq_run's sync path): memory copies. The
 * process's CPU time over a run (getrusage: the threads that drive the
 * connections are these) divided by its requests is the client's cost per
 * request; the servers' (their threads' time on a CPU, /proc/PID/task/
 * TID/schedstat, when the caller names their processes) the server's. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench/bench_engine_int.h"
#include "bench/bench_util.h"
#include "member/member.h"
#include "util/errmsg.h"

#define TC_SMALL 4096u
/* Each kind is run again until this long has passed (at most TC_MAX_REPS
 * runs), the best run kept. */
#define TC_MIN_NS   (250u * 1000000u)
#define TC_MAX_REPS 8

enum tc_kind { TC_READ4K, TC_WRITE4K, TC_STRIPE };

struct tc_run {
	struct member *m[BW_MAX_MEMBERS];
	int n;
	uint64_t bytes; /* per member */
	uint32_t chunk; /* TC_STRIPE: bytes per member request */
	enum tc_kind kind;
	uint64_t ops;  /* requests in all */
	uint64_t next; /* next request number (atomic) */
	int err;       /* first error (atomic) */
};

struct tc_thread {
	struct tc_run *run;
	int id;
	struct member_ioq *q;
	void *buf[2];
	pthread_barrier_t *go; /* NULL: run at once */
};

static void set_err(struct tc_run *c, int r)
{
	int zero = 0;
	__atomic_compare_exchange_n(&c->err, &zero, r, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Requests in io[0..n): through the queue, or in this thread for members
 * in memory. */
static int tc_issue(struct member_ioq *q, struct member_io *io, int n)
{
	if (!io[0].m->in_memory)
		return member_ioq_run(q, io, n);
	for (int i = 0; i < n; i++) {
		int r = io[i].op == MEMBER_OP_READ
		            ? member_read(io[i].m, io[i].buf, io[i].len, io[i].off)
		            : member_write(io[i].m, io[i].buf, io[i].len, io[i].off, 0);
		if (r < 0)
			return r;
	}
	return 0;
}

static void *tc_worker(void *arg)
{
	struct tc_thread *t = arg;
	struct tc_run *c = t->run;
	bool large = c->kind == TC_STRIPE;
	size_t req = large ? c->chunk : TC_SMALL;
	int per = large ? c->n : 2, r = 0;
	void **buf = t->buf;
	if (t->go)
		pthread_barrier_wait(t->go);
	uint64_t rng = 0x7c0000u + (uint64_t)t->id, slots = c->bytes / req;
	while (r == 0 && !__atomic_load_n(&c->err, __ATOMIC_RELAXED)) {
		uint64_t i = __atomic_fetch_add(&c->next, (uint64_t)per, __ATOMIC_RELAXED);
		if (i >= c->ops)
			break;
		struct member_io io[BW_MAX_MEMBERS];
		memset(io, 0, sizeof(io));
		if (large) {
			/* requests i..i+n-1: the (i / n)th chunk of every member */
			for (int k = 0; k < c->n; k++)
				io[k] =
				    (struct member_io){.m = c->m[k],
				                       .op = MEMBER_OP_WRITE,
				                       .buf = buf[0],
				                       .len = req,
				                       .off = (i / (uint64_t)c->n % slots) * req};
		} else {
			int a = (int)(bw_rand(&rng) % (uint64_t)c->n);
			int b = (a + 1 + (int)(bw_rand(&rng) % (uint64_t)(c->n - 1))) % c->n;
			int mi[2] = {a, b};
			for (int k = 0; k < 2; k++)
				io[k] = (struct member_io){
				    .m = c->m[mi[k]],
				    .op = c->kind == TC_READ4K ? MEMBER_OP_READ : MEMBER_OP_WRITE,
				    .buf = buf[k],
				    .len = req,
				    .off = bw_rand(&rng) % slots * req};
		}
		r = tc_issue(t->q, io, per);
	}
	if (r < 0)
		set_err(c, r);
	return NULL;
}

static uint64_t cpu_ns(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

/* CPU ns the processes' threads have run (schedstat's first field; 0 for
 * a process gone or unreadable). */
static uint64_t procs_cpu_ns(const pid_t *pids, int n)
{
	uint64_t sum = 0;
	for (int i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pids[i]);
		DIR *d = opendir(path);
		if (!d)
			continue;
		const struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			char p2[128];
			snprintf(p2, sizeof(p2), "%s/%.32s/schedstat", path, e->d_name);
			FILE *f = fopen(p2, "r");
			unsigned long long v;
			if (f && fscanf(f, "%llu", &v) == 1)
				sum += v;
			if (f)
				fclose(f);
		}
		closedir(d);
	}
	return sum;
}

/* One run of `kind` with `threads` threads: requests/s, client CPU ns per
 * request. Queues and buffers are made before the clock starts (an
 * io_uring's setup and teardown are no request's cost) and the threads
 * start together. */
static int tc_run(struct tc_run *c, int threads, const pid_t *srv, int nsrv, double *rps,
                  double *cpu_per_req, double *srv_per_req)
{
	pthread_t th[64];
	struct tc_thread arg[64];
	pthread_barrier_t go;
	if (threads > 64)
		threads = 64;
	int r = 0, started = 0, made = 0;
	size_t req = c->kind == TC_STRIPE ? c->chunk : TC_SMALL;
	c->next = 0;
	c->err = 0;
	memset(arg, 0, sizeof(arg));
	for (; made < threads && r == 0; made++) {
		arg[made] = (struct tc_thread){.run = c, .id = made, .go = &go};
		r = member_ioq_open(8, &arg[made].q);
		arg[made].buf[0] = bench_alloc(req);
		arg[made].buf[1] = bench_alloc(req);
		if (r == 0 && (!arg[made].buf[0] || !arg[made].buf[1]))
			r = -ENOMEM;
	}
	if (r == 0 && pthread_barrier_init(&go, NULL, (unsigned)threads + 1) != 0)
		r = -ENOMEM;
	for (; r == 0 && started < threads; started++)
		if (pthread_create(&th[started], NULL, tc_worker, &arg[started]) != 0)
			break;
	uint64_t c0 = 0, t0 = 0, s0 = procs_cpu_ns(srv, nsrv);
	if (r == 0 && started < threads) {
		/* Cannot start them all: the ones started run alone. */
		for (int i = 0; i < threads - started; i++)
			pthread_barrier_wait(&go);
	}
	if (r == 0) {
		c0 = cpu_ns();
		t0 = bench_now_ns();
		pthread_barrier_wait(&go);
	}
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	double secs = (double)(bench_now_ns() - t0) / 1e9;
	uint64_t c1 = cpu_ns(), s1 = procs_cpu_ns(srv, nsrv);
	if (r == 0)
		pthread_barrier_destroy(&go);
	for (int i = 0; i < made; i++) {
		member_ioq_close(arg[i].q);
		free(arg[i].buf[0]);
		free(arg[i].buf[1]);
	}
	if (r == 0 && started == 0)
		r = -EAGAIN;
	if (r < 0)
		return r;
	uint64_t done = c->next < c->ops ? c->next : c->ops;
	*rps = (double)done / secs;
	*cpu_per_req = done ? (double)(c1 - c0) / (double)done : 0;
	*srv_per_req = done && s1 > s0 ? (double)(s1 - s0) / (double)done : 0;
	return c->err;
}

int beng_transport_ceiling(struct bw_set *s, const struct eng_opts *o, const pid_t *srv, int nsrv,
                           struct beng_transport *tc, char *err, size_t errlen)
{
	struct tc_run c;
	memset(&c, 0, sizeof(c));
	c.n = o->members;
	c.bytes = s->bytes;
	c.chunk = o->chunk;
	int r = 0, opened = 0;
	memset(tc, 0, sizeof(*tc));
	for (; opened < c.n && r == 0; opened++)
		r = bw_member_open(s, opened, &c.m[opened], err, errlen);
	if (r < 0)
		opened--;
	/* Stripes first, then the 4 KiB requests, in the array's order. */
	static const enum tc_kind kinds[3] = {TC_STRIPE, TC_READ4K, TC_WRITE4K};
	for (int i = 0; i < 3 && r == 0; i++) {
		int k = (int)kinds[i];
		c.kind = kinds[i];
		/* 4 KiB: as many requests as the array's 4 KiB writes make
		 * reads (or writes); stripes: every member written once. */
		c.ops = c.kind == TC_STRIPE ? (uint64_t)c.n * (c.bytes / c.chunk) : 2 * o->rand_ops;
		/* Runs of memory copies last a few ms, which one preemption on a
		 * shared machine halves: repeated for TC_MIN_NS, the best kept. */
		uint64_t t0 = bench_now_ns();
		for (int rep = 0; r == 0 && rep < TC_MAX_REPS; rep++) {
			double rps, cpu, srv_cpu;
			if ((r = tc_run(&c, o->qd, srv, nsrv, &rps, &cpu, &srv_cpu)) < 0) {
				errmsg(err, errlen, r, "transport ceiling: member I/O failed");
				break;
			}
			if (rps > tc->rps[k]) {
				tc->rps[k] = rps;
				tc->cpu_ns[k] = cpu;
				tc->srv_ns[k] = srv_cpu;
			}
			if (bench_now_ns() - t0 >= TC_MIN_NS)
				break;
		}
		tc->mbs[k] = tc->rps[k] * (double)(c.kind == TC_STRIPE ? c.chunk : TC_SMALL) / 1e6;
	}
	for (int i = 0; i < opened; i++)
		member_close(c.m[i]), s->open[i] = NULL;
	return r;
}
