/* Members, arrays, clocks and threaded I/O jobs for the engine and workload
 * benchmarks (see bench_workloads.h). */
#include "bench/bench_geom.h"
#include "bench/bench_workloads.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "util/errmsg.h"

#define STAMP_MAGIC 0x5552414944424e43ULL /* "URAIDBNC" */

uint64_t bw_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A view of a set-owned memory member: closing it (array stop) keeps the
 * storage, so data and pre-faulted pages survive from one array to the next. */
struct borrow {
	struct member m;
	struct member *inner;
};

static ssize_t borrow_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct member *in = ((struct borrow *)m)->inner;
	return in->ops->pread(in, buf, len, off);
}

static ssize_t borrow_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                             unsigned flags)
{
	struct member *in = ((struct borrow *)m)->inner;
	return in->ops->pwrite(in, buf, len, off, flags);
}

static int borrow_flush(struct member *m)
{
	struct member *in = ((struct borrow *)m)->inner;
	return in->ops->flush ? in->ops->flush(in) : 0;
}

static int borrow_fd(struct member *m)
{
	(void)m;
	return -1;
}

static void borrow_close(struct member *m)
{
	free(m);
}

static const struct member_ops borrow_ops = {
    .kind = "mem",
    .pread = borrow_pread,
    .pwrite = borrow_pwrite,
    .flush = borrow_flush,
    .fd = borrow_fd,
    .close = borrow_close,
};

static struct member *borrow(struct member *inner, const char *name)
{
	struct borrow *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->m.ops = &borrow_ops;
	snprintf(b->m.name, sizeof(b->m.name), "%s", name);
	b->m.size = inner->size;
	b->m.logical_block = 512;
	b->inner = inner;
	return &b->m;
}

/* Write every byte once so the timed runs never pay for page allocation. */
static int prefault(struct member *m, char *err, size_t errlen)
{
	size_t chunk = 1u << 20;
	void *buf = bench_alloc(chunk);
	if (!buf)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	int r = 0;
	for (uint64_t off = 0; off < m->size && r == 0; off += chunk) {
		size_t n = m->size - off < chunk ? (size_t)(m->size - off) : chunk;
		r = member_write(m, buf, n, off, 0);
	}
	free(buf);
	if (r < 0)
		return errmsg(err, errlen, r, "%s: pre-faulting write failed", m->name);
	return 0;
}

static int wipe(struct bw_set *s, int i, char *err, size_t errlen);

/* Devices (checked by bw_dev_check before the sweep): big enough, opened
 * exclusively (so nothing mounted them since); not pre-faulted (a device
 * has no pages to allocate). */
static int dev_set_make(struct bw_set *s, int n, uint64_t bytes, char *err, size_t errlen)
{
	if (n > s->cfg.ndevs)
		return errmsg(err, errlen, -EINVAL, "%d members wanted, --members-dev gave %d", n,
		              s->cfg.ndevs);
	for (int i = 0; i < n; i++) {
		struct member *m = NULL;
		snprintf(s->paths[i], sizeof(s->paths[i]), "%s", s->cfg.devs[i]);
		int r = member_open_file(s->paths[i], MEMBER_EXCL, 0, &m, err, errlen);
		if (r < 0)
			return r;
		uint64_t have = m->size;
		member_close(m);
		if (have < bytes)
			return errmsg(err, errlen, -ENOSPC,
			              "%s: %llu MiB, the sweep needs %llu MiB per member",
			              s->paths[i], (unsigned long long)(have >> 20),
			              (unsigned long long)(bytes >> 20));
		s->n = i + 1;
	}
	s->bytes = bytes;
	return 0;
}

int bw_set_make(struct bw_set *s, const struct bw_members_cfg *cfg, int n, uint64_t bytes,
                char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	if (n < 1 || n > BW_MAX_MEMBERS)
		return errmsg(err, errlen, -EINVAL, "%d members: must be 1..%d", n, BW_MAX_MEMBERS);
	if (bytes < (4u << 20) || bytes % 4096)
		return errmsg(err, errlen, -EINVAL,
		              "member size %llu: must be a multiple of 4 KiB, at least 4 MiB",
		              (unsigned long long)bytes);
	s->bytes = bytes;
	if (cfg->kind == BW_SIM && cfg->bus_mbs > 0) {
		int r = sim_bus_create(cfg->bus_mbs, &s->bus, err, errlen);
		if (r < 0)
			return r;
	}
	if (cfg->kind == BW_SIM && cfg->time_scale == 0 && sim_clock_create(&s->clock) < 0) {
		bw_set_free(s);
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	}
	for (int i = 0; cfg->kind == BW_SIM && i < n; i++) {
		if (sim_channel_create(&s->chan[i]) < 0) {
			bw_set_free(s);
			return errmsg(err, errlen, -ENOMEM, "out of memory");
		}
	}
	if (cfg->kind == BW_DEV)
		return dev_set_make(s, n, bytes, err, errlen);
	for (int i = 0; i < n; i++) {
		struct member *m = NULL;
		int r;
		if (cfg->kind == BW_FILES) {
			snprintf(s->paths[i], sizeof(s->paths[i]), "%s/uraid-bench-%d-%d", cfg->dir,
			         (int)getpid(), i);
			unlink(s->paths[i]);
			r = member_open_file(s->paths[i], MEMBER_CREATE, bytes, &m, err, errlen);
		} else {
			snprintf(s->paths[i], sizeof(s->paths[i]), "mem%d", i);
			/* simulated disks: a store that keeps stamped blocks small */
			r = cfg->kind == BW_SIM ? sim_store_open(s->paths[i], bytes, &m)
			                        : member_open_mem(s->paths[i], bytes, &m);
			if (r < 0)
				errmsg(err, errlen, r, "cannot allocate %llu bytes of memory",
				       (unsigned long long)bytes);
		}
		s->n = i + 1;
		if (r < 0) {
			s->n = i;
			bw_set_free(s);
			return r;
		}
		/* Virtual time does not see page allocation: no pre-faulting. */
		r = cfg->kind == BW_SIM && cfg->time_scale == 0 ? 0 : prefault(m, err, errlen);
		if (cfg->kind == BW_FILES)
			member_close(m);
		else
			s->store[i] = m;
		if (r < 0) {
			bw_set_free(s);
			return r;
		}
	}
	return 0;
}

void bw_set_free(struct bw_set *s)
{
	for (int i = 0; i < s->n; i++) {
		/* Devices: leave no md superblock behind (the next run, or
		 * anything scanning for arrays, would find one). */
		char err[256];
		if (s->cfg.kind == BW_DEV && wipe(s, i, err, sizeof(err)) < 0)
			fprintf(stderr, "uraid: bench: warning: %s\n", err);
		if (s->store[i])
			member_close(s->store[i]);
		s->store[i] = NULL;
		if (s->cfg.kind == BW_FILES)
			unlink(s->paths[i]);
	}
	if (s->bus)
		sim_bus_destroy(s->bus);
	s->bus = NULL;
	sim_clock_destroy(s->clock);
	s->clock = NULL;
	for (int i = 0; i < BW_MAX_MEMBERS; i++) {
		sim_channel_destroy(s->chan[i]);
		s->chan[i] = NULL;
	}
	s->n = 0;
}

int bw_member_open(struct bw_set *s, int i, struct member **out, char *err, size_t errlen)
{
	struct member *m = NULL;
	int r;
	if (s->cfg.kind == BW_FILES || s->cfg.kind == BW_DEV) {
		/* devices: exclusive, and past the page cache as a real array */
		unsigned fl = s->cfg.kind == BW_DEV ? MEMBER_EXCL | MEMBER_DIRECT : 0;
		r = member_open_file(s->paths[i], fl, 0, &m, err, errlen);
		if (r < 0)
			return r;
	} else {
		m = borrow(s->store[i], s->paths[i]);
		if (!m)
			return errmsg(err, errlen, -ENOMEM, "out of memory");
		if (s->cfg.kind == BW_SIM) {
			struct member *sim = NULL;
			const struct sim_profile *p =
			    s->cfg.profs && s->cfg.profs[i] ? s->cfg.profs[i] : &s->cfg.prof;
			r = member_sim_open_clock(m, p, s->bus, s->clock, s->cfg.time_scale, &sim,
			                          err, errlen);
			if (r < 0) {
				borrow_close(m);
				return r;
			}
			m = sim;
			/* parallel ATA: disks fill channels in member order */
			if (p->channel_disks)
				member_sim_set_channel(m, s->chan[i / (int)p->channel_disks]);
		}
	}
	s->open[i] = m;
	*out = m;
	return 0;
}

uint64_t bw_now(const struct bw_set *s)
{
	if (s->cfg.kind != BW_SIM)
		return bench_now_ns();
	if (s->clock)
		return (uint64_t)llround(sim_clock_now(s->clock));
	uint64_t t = 0;
	for (int i = 0; i < s->n; i++) {
		if (!s->open[i])
			continue;
		uint64_t c = member_sim_now_ns(s->open[i]);
		t = c > t ? c : t;
	}
	return t;
}

/* Zero the superblock areas (1 MiB at each end) of member i, so a member
 * left "active" by the previous array (a failed one stays so) does not make
 * create refuse it. */
static int wipe(struct bw_set *s, int i, char *err, size_t errlen)
{
	/* (also run on devices when the set is freed) */
	size_t len = 1u << 20;
	struct member *m = s->store[i];
	int r = 0;
	if (!m && (r = member_open_file(s->paths[i], 0, 0, &m, err, errlen)) < 0)
		return r;
	void *z = calloc(1, len);
	if (!z)
		r = -ENOMEM;
	if (r == 0)
		r = member_write(m, z, len, 0, 0);
	if (r == 0)
		r = member_write(m, z, len, m->size - len, 0);
	free(z);
	if (!s->store[i])
		member_close(m);
	if (r < 0)
		return errmsg(err, errlen, r, "%s: cannot clear old superblocks", s->paths[i]);
	return 0;
}

const char *bw_consistency_name(enum bw_consistency cs)
{
	static const char *const names[BW_CS_COUNT] = {"none", "bitmap", "journal-wt",
	                                               "journal-wb"};
	return (unsigned)cs < BW_CS_COUNT ? names[cs] : "?";
}

int bw_array_create(struct bw_set *s, int n, int level, uint32_t layout, bool layout_set,
                    uint32_t chunk_bytes, struct uraid_array **out, char *err, size_t errlen)
{
	struct bw_array_opts o = {
	    .layout = layout, .layout_set = layout_set, .chunk_bytes = chunk_bytes};
	return bw_array_create_opts(s, n, level, &o, out, err, errlen);
}

/* The journal member: created when missing, zeroed so the previous
 * array's journal is gone (a regular file wholly: tmpfs then has its pages,
 * as bw_set_make's members do; a device at both ends, where superblocks
 * and the log start are). */
static int journal_open(const struct bw_array_opts *o, struct member **out, char *err,
                        size_t errlen)
{
	int r = member_open_file(o->journal, MEMBER_CREATE, o->journal_bytes, out, err, errlen);
	if (r < 0)
		return r;
	struct member *m = *out;
	const uint64_t blk = 4u << 20;
	uint8_t *z = calloc(1, blk);
	if (!z) {
		member_close(m);
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	}
	bool whole = !strcmp(m->ops->kind, "file");
	for (uint64_t off = 0; r == 0 && off < m->size; off += blk) {
		if (!whole && off >= blk && off + 2 * blk < m->size)
			off = m->size - 2 * blk;
		uint64_t len = m->size - off < blk ? m->size - off : blk;
		r = member_write(m, z, len, off, 0);
	}
	free(z);
	if (r < 0) {
		member_close(m);
		return errmsg(err, errlen, r, "journal %s: cannot clear it", o->journal);
	}
	return 0;
}

int bw_array_create_opts(struct bw_set *s, int n, int level, const struct bw_array_opts *ao,
                         struct uraid_array **out, char *err, size_t errlen)
{
	struct member *ms[BW_MAX_MEMBERS + 1];
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = level;
	o.layout_set = ao->layout_set;
	o.layout = ao->layout;
	o.chunk_sectors = ao->chunk_bytes / 512;
	o.raid_devices = n;
	o.assume_clean = true;
	snprintf(o.name, sizeof(o.name), "bench");
	bool journal = ao->cs == BW_CS_JWT || ao->cs == BW_CS_JWB;
	if (n > s->n)
		return errmsg(err, errlen, -EINVAL, "%d members wanted, %d made", n, s->n);
	if (journal && !ao->journal)
		return errmsg(err, errlen, -EINVAL, "a journal policy without a journal member");
	for (int i = 0; i < s->n; i++) {
		int r = wipe(s, i, err, errlen);
		if (r < 0)
			return r;
	}
	for (int i = 0; i < n; i++) {
		int r = bw_member_open(s, i, &ms[i], err, errlen);
		if (r < 0) {
			for (int j = 0; j < i; j++)
				member_close(ms[j]), s->open[j] = NULL;
			return r;
		}
	}
	int nm = n;
	if (journal) {
		int r = journal_open(ao, &ms[nm], err, errlen);
		if (r < 0) {
			for (int j = 0; j < n; j++)
				member_close(ms[j]), s->open[j] = NULL;
			return r;
		}
		nm++;
		o.write_journal = true;
	}
	int r = level == URAID_LEVEL_GMIRROR || level == URAID_LEVEL_GRAID3
	            ? bw_geom_create_members(ms, n, level, ao->layout, out, err, errlen) /* GEOM */
	            : uraid_create_members(&o, ms, nm, URAID_NO_SYNC_THREAD, out, err, errlen);
	if (r < 0) {
		memset(s->open, 0, sizeof(s->open)); /* closed by the failed create */
		return r;
	}
	if (ao->cs == BW_CS_BITMAP)
		r = uraid_bitmap_add(*out, ao->bitmap_chunk, err, errlen);
	else if (ao->cs == BW_CS_JWB)
		r = uraid_journal_mode(*out, URAID_JOURNAL_WB, err, errlen);
	if (r < 0) {
		bw_array_stop(s, *out);
		*out = NULL;
	}
	return r;
}

int bw_array_stop(struct bw_set *s, struct uraid_array *a)
{
	int r = uraid_stop(a);
	memset(s->open, 0, sizeof(s->open));
	return r;
}

/* ---- I/O jobs ---- */

struct worker {
	struct bw_job *job;
	int index;
	pthread_barrier_t *start;
	struct sim_actor *actor; /* virtual time: this thread on the set's clock */
};

static void atomic_max(_Atomic uint64_t *v, uint64_t x)
{
	uint64_t cur = atomic_load(v);
	while (x > cur && !atomic_compare_exchange_weak(v, &cur, x))
		;
}

static void stamp(uint8_t *buf, size_t len, uint64_t off)
{
	for (size_t k = 0; k < len; k += 4096) {
		uint64_t v = (off + k) ^ STAMP_MAGIC;
		memcpy(buf + k, &v, 8);
	}
}

static uint64_t stamps_bad(const uint8_t *buf, size_t len, uint64_t off)
{
	uint64_t bad = 0;
	for (size_t k = 0; k < len; k += 4096) {
		uint64_t v;
		memcpy(&v, buf + k, 8);
		bad += v != ((off + k) ^ STAMP_MAGIC);
	}
	return bad;
}

/* One request of a job; returns 0 or a negative errno. */
static int one_request(struct bw_job *j, uint8_t *buf, uint64_t off, bool wr)
{
	int r;
	if (wr) {
		stamp(buf, j->req, off);
		r = j->m ? member_write(j->m, buf, j->req, off, 0)
		         : uraid_write(j->a, buf, j->req, off);
	} else {
		r = j->m ? member_read(j->m, buf, j->req, off) : uraid_read(j->a, buf, j->req, off);
		if (r >= 0 && j->verify)
			atomic_fetch_add(&j->bad_stamps, stamps_bad(buf, j->req, off));
	}
	return r;
}

static void account(struct bw_job *j, uint64_t dt)
{
	atomic_fetch_add(&j->done_ops, 1);
	atomic_fetch_add(&j->done_bytes, j->req);
	atomic_fetch_add(&j->lat_sum_ns, dt);
	atomic_max(&j->lat_max_ns, dt);
	if (j->progress)
		atomic_fetch_add(j->progress, j->req);
}

static void fail(struct bw_job *j, int r)
{
	int zero = 0;
	atomic_compare_exchange_strong(&j->err, &zero, r);
}

/* The request's offset and direction; false when the job is done. */
static bool next_request(struct bw_job *j, uint64_t *rng, uint64_t *off, bool *wr)
{
	uint64_t slots = j->span / j->req;
	uint64_t total = j->random ? j->ops : (j->ops ? j->ops : slots);
	uint64_t i = atomic_fetch_add(&j->next, 1);
	if (i >= total || atomic_load(&j->err))
		return false;
	*off = j->base + (j->random ? bw_rand(rng) % slots : i % slots) * j->req;
	*wr = j->write;
	if (j->random && j->read_pct > 0)
		*wr = (int)(bw_rand(rng) % 100) >= j->read_pct;
	return true;
}

/* Virtual time: one stream on the set's clock. Its read-ahead window of k =
 * window / req requests goes out whole, as a kernel's clustered read-ahead
 * does: a batch of k requests issued together, at most two windows in
 * flight (the next one is issued while the reader consumes the current),
 * the next issued when the older has completed and its think time (per
 * request) passed. Without a window: one request at a time. Each batch runs
 * alone, at its issue time, so a stream's window is one run on the disks. */
static void stream_virtual(struct worker *w, uint8_t *buf, uint64_t *rng)
{
	struct bw_job *j = w->job;
	struct sim_clock *c = j->set->clock;
	uint64_t k = !j->random && j->window > j->req ? j->window / j->req : 1;
	uint64_t per = k;
	int nb = k >= 2 ? 2 : 1;
	double bdone[2] = {0, 0};
	int bhead = 0, bused = 0;
	sim_clock_bind(c, w->actor);
	double t = sim_clock_now(c), end = t;
	for (bool more = buf != NULL; more;) {
		if (bused == nb) {
			t = bdone[bhead] > t ? bdone[bhead] : t;
			bhead = (bhead + 1) % nb;
			bused--;
		}
		double at = sim_clock_wait(c, w->actor, t), last = at;
		uint64_t n = 0;
		for (; n < per; n++) {
			uint64_t off;
			bool wr;
			if (!(more = next_request(j, rng, &off, &wr)))
				break;
			sim_clock_set(c, w->actor, at);
			int r = one_request(j, buf, off, wr);
			double done = sim_clock_now(c);
			if (r < 0) {
				fail(j, r);
				more = false;
				break;
			}
			account(j, (uint64_t)llround(done - at));
			last = done > last ? done : last;
		}
		end = last > end ? last : end;
		bdone[(bhead + bused++) % nb] = last + (double)(n * j->think_ns);
		t = at;
	}
	atomic_max(&j->end_ns, (uint64_t)llround(end));
	sim_clock_actor_done(c, w->actor, end);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct bw_job *j = w->job;
	uint8_t *buf = bench_alloc(j->req);
	uint64_t rng = j->seed * 1000003u + (uint64_t)w->index + 1;
	pthread_barrier_wait(w->start);
	if (!buf)
		atomic_store(&j->err, -ENOMEM);
	if (w->actor) {
		stream_virtual(w, buf, &rng);
		free(buf);
		return NULL;
	}
	for (; buf;) {
		uint64_t off;
		bool wr;
		if (!next_request(j, &rng, &off, &wr))
			break;
		uint64_t t0 = bw_now(j->set);
		int r = one_request(j, buf, off, wr);
		uint64_t dt = bw_now(j->set) - t0;
		if (r < 0) {
			fail(j, r);
			break;
		}
		account(j, dt);
		if (j->think_ns) {
			struct timespec ts = {.tv_sec = (time_t)(j->think_ns / 1000000000u),
			                      .tv_nsec = (long)(j->think_ns % 1000000000u)};
			nanosleep(&ts, NULL);
		}
	}
	atomic_max(&j->end_ns, bw_now(j->set));
	free(buf);
	return NULL;
}

/* Threads of job j: one per stream on a virtual clock; in real time a
 * sequential job's read-ahead window is window / req threads taking the
 * next requests. */
static int job_threads(const struct bw_job *j, bool virt)
{
	if (virt || j->random || j->window <= j->req)
		return j->threads;
	uint64_t k = j->window / j->req;
	return j->threads * (int)(k > 64 ? 64 : k);
}

int bw_run(struct bw_job *jobs, int n)
{
	int nthreads = 0;
	struct sim_clock *clock = n > 0 && jobs[0].set ? jobs[0].set->clock : NULL;
	for (int i = 0; i < n; i++) {
		struct bw_job *j = &jobs[i];
		if (j->threads < 1 || j->req == 0 || j->req % 4096 || j->span < j->req)
			return -EINVAL;
		atomic_store(&j->next, 0);
		atomic_store(&j->done_ops, 0);
		atomic_store(&j->done_bytes, 0);
		atomic_store(&j->bad_stamps, 0);
		atomic_store(&j->lat_sum_ns, 0);
		atomic_store(&j->lat_max_ns, 0);
		atomic_store(&j->err, 0);
		atomic_store(&j->end_ns, 0);
		if (j->set != jobs[0].set)
			return -EINVAL; /* one clock for all */
		nthreads += job_threads(j, clock != NULL);
	}
	struct worker *w = calloc((size_t)nthreads, sizeof(*w));
	pthread_t *t = calloc((size_t)nthreads, sizeof(*t));
	pthread_barrier_t start;
	if (!w || !t || pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1)) {
		free(w);
		free(t);
		return -ENOMEM;
	}
	int k = 0, started = 0;
	for (int i = 0; i < n; i++)
		for (int x = 0; x < job_threads(&jobs[i], clock != NULL); x++, k++)
			w[k] = (struct worker){.job = &jobs[i], .index = x, .start = &start};
	/* Actors are registered here, in a fixed order, before any runs. */
	for (k = 0; clock && k < nthreads; k++) {
		if (sim_clock_actor_add(clock, &w[k].actor) < 0) {
			for (int x = 0; x < k; x++)
				sim_clock_actor_done(clock, w[x].actor, 0);
			pthread_barrier_destroy(&start);
			free(w);
			free(t);
			return -ENOMEM;
		}
	}
	for (k = 0; k < nthreads; k++) {
		if (pthread_create(&t[k], NULL, worker_main, &w[k]))
			break;
		started++;
	}
	if (started < nthreads) {
		/* Let the started ones go (with an error set) rather than hang. */
		for (int i = 0; i < n; i++)
			atomic_store(&jobs[i].err, -EAGAIN);
		for (k = started; k < nthreads; k++)
			pthread_create(&t[k], NULL, worker_main, &w[k]);
	}
	uint64_t t0 = bw_now(jobs[0].set);
	for (int i = 0; i < n; i++)
		jobs[i].start_ns = t0;
	pthread_barrier_wait(&start);
	for (k = 0; k < nthreads; k++)
		pthread_join(t[k], NULL);
	pthread_barrier_destroy(&start);
	free(w);
	free(t);
	for (int i = 0; i < n; i++)
		if (atomic_load(&jobs[i].err))
			return atomic_load(&jobs[i].err);
	return 0;
}
