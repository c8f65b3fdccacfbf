/* Simulated member: data goes to the inner member untouched; the model in
 * sim_model.c decides when each request completes, and with a time scale the
 * caller sleeps until then. One mutex per member serialises the model (one
 * head); the inner I/O and the sleep run outside it, so members and threads
 * proceed in parallel. */
#include "member/member_wrap.h"
#include "sim/sim_int.h"
#include "util/errmsg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct sim_member {
	struct member m;
	struct member *inner;
	struct sim_profile p;
	struct sim_bus *bus;
	double scale;             /* 0 = virtual time */
	struct sim_clock *vclock; /* virtual time: the shared clock */
	bool own_clock;           /* vclock made for this member alone */
	uint64_t epoch_ns;
	pthread_mutex_t lock;
	struct sim_model model;
	double clock;             /* latest completion handed out */
	struct sim_channel *chan; /* parallel ATA: shared with the other disk */
};

static const struct member_ops sim_ops;

static struct sim_member *sim_of(struct member *m)
{
	if (!m || m->ops != &sim_ops)
		return NULL;
	return (struct sim_member *)m->priv;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Model time at which a request arriving now arrives. Virtual time: the
 * calling actor's time on the shared clock. */
static double arrival(const struct sim_member *s)
{
	if (s->scale <= 0)
		return sim_clock_arrival(s->vclock, false);
	uint64_t now = mono_ns();
	return now > s->epoch_ns ? (double)(now - s->epoch_ns) * s->scale : 0;
}

static void wait_until(const struct sim_member *s, double done)
{
	if (s->scale <= 0)
		return;
	double real = (double)s->epoch_ns + done / s->scale;
	struct timespec ts = {.tv_sec = (time_t)(real / 1e9)};
	ts.tv_nsec = (long)(real - (double)ts.tv_sec * 1e9);
	if (ts.tv_nsec < 0)
		ts.tv_nsec = 0;
	if (ts.tv_nsec > 999999999)
		ts.tv_nsec = 999999999;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

enum sim_kind { SIM_READ, SIM_WRITE, SIM_WRITE_FUA, SIM_FLUSH, SIM_OTHER };

/* Account one command; returns its completion. Caller holds the lock. */
static double account(struct sim_member *s, double t, enum sim_kind k, uint64_t off, size_t len)
{
	double done;
	if (s->chan) {
		/* the command starts once the channel is free */
		pthread_mutex_lock(&s->chan->lock);
		if (s->chan->free_at > t) {
			t = s->chan->free_at;
			s->chan->waits++;
		}
	}
	switch (k) {
	case SIM_READ: done = sim_model_read(&s->model, t, (double)off, (double)len); break;
	case SIM_WRITE:
	case SIM_WRITE_FUA:
		done = sim_model_write(&s->model, t, (double)off, (double)len, k == SIM_WRITE_FUA);
		break;
	case SIM_FLUSH: done = sim_model_flush(&s->model, t); break;
	default: done = t + s->model.g.overhead;
	}
	if (s->chan) {
		if (done > s->chan->free_at)
			s->chan->free_at = done;
		pthread_mutex_unlock(&s->chan->lock);
	}
	if (done > s->clock)
		s->clock = done;
	return done;
}

/* Model one command that arrived at `t` and wait for its completion. */
static void model_and_wait(struct sim_member *s, double t, enum sim_kind k, uint64_t off,
                           size_t len)
{
	pthread_mutex_lock(&s->lock);
	double done = account(s, t, k, off, len);
	pthread_mutex_unlock(&s->lock);
	if (s->bus)
		sim_bus_note(s->bus, done);
	if (s->scale <= 0)
		sim_clock_complete(s->vclock, done, false);
	wait_until(s, done);
}

static ssize_t sim_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct sim_member *s = m->priv;
	double t = arrival(s);
	ssize_t r = s->inner->ops->pread(s->inner, buf, len, off);
	if (r > 0)
		model_and_wait(s, t, SIM_READ, off, (size_t)r);
	return r;
}

static ssize_t sim_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                          unsigned flags)
{
	struct sim_member *s = m->priv;
	double t = arrival(s);
	ssize_t r = s->inner->ops->pwrite(s->inner, buf, len, off, flags);
	if (r > 0)
		model_and_wait(s, t, flags & MEMBER_FUA ? SIM_WRITE_FUA : SIM_WRITE, off,
		               (size_t)r);
	return r;
}

static int sim_flush(struct member *m)
{
	struct sim_member *s = m->priv;
	double t = arrival(s);
	int rc = member_flush(s->inner);
	if (rc == 0)
		model_and_wait(s, t, SIM_FLUSH, 0, 0);
	return rc;
}

static int sim_discard(struct member *m, uint64_t off, uint64_t len)
{
	struct sim_member *s = m->priv;
	double t = arrival(s);
	int rc = member_discard(s->inner, off, len);
	if (rc == 0) {
		pthread_mutex_lock(&s->lock);
		s->model.st.discards++;
		pthread_mutex_unlock(&s->lock);
		model_and_wait(s, t, SIM_OTHER, off, 0);
	}
	return rc;
}

static int sim_write_zeroes(struct member *m, uint64_t off, uint64_t len, unsigned flags)
{
	struct sim_member *s = m->priv;
	double t = arrival(s);
	int rc = member_write_zeroes(s->inner, off, len, flags);
	if (rc == 0)
		model_and_wait(s, t, SIM_OTHER, off, 0);
	return rc;
}

/* Index into `ios` of the next command the elevator serves among
 * pending[0..npend): the lowest offset at or after the head, else the
 * lowest overall (one-way sweep, C-LOOK). */
static int elevator_pick(struct member_io *const *ios, const int *pending, int npend, double head)
{
	int best = -1, lowest = 0;
	for (int k = 0; k < npend; k++) {
		double off = (double)ios[pending[k]]->off;
		if (off < (double)ios[pending[lowest]]->off)
			lowest = k;
		if (off >= head && (best < 0 || off < (double)ios[pending[best]]->off))
			best = k;
	}
	return best >= 0 ? best : lowest;
}

static uint64_t sim_run_batch(struct member *m, struct member_io *const *ios, int n,
                              uint64_t submit_ns)
{
	struct sim_member *s = m->priv;
	double t = s->scale <= 0             ? sim_clock_arrival(s->vclock, true)
	           : submit_ns > s->epoch_ns ? (double)(submit_ns - s->epoch_ns) * s->scale
	                                     : 0;
	/* The data first: the model only decides when. */
	int nrw = 0;
	for (int i = 0; i < n; i++) {
		struct member_io *io = ios[i];
		if (io->op == MEMBER_OP_FLUSH) {
			io->result = member_flush(s->inner);
			continue;
		}
		io->result = member_xfer(s->inner, io->op, io->buf, io->len, io->off, io->flags);
		nrw++;
	}
	/* The elevator's window: on the stack for ordinary batches; a huge
	 * batch without memory for it gets a window of the stack's size. */
	int stack[64];
	int *pending = nrw <= 64 ? stack : malloc((size_t)nrw * sizeof(*pending));
	unsigned window = s->p.queue_depth;
	if (!pending) {
		pending = stack;
		window = window < 64 ? window : 64;
	}
	pthread_mutex_lock(&s->lock);
	double last = t;
	/* Reads and writes through a window of queue_depth commands, served
	 * in elevator order. */
	int next = 0, npend = 0;
	for (;;) {
		for (; next < n && (unsigned)npend < window; next++)
			if (ios[next]->op != MEMBER_OP_FLUSH && ios[next]->result > 0)
				pending[npend++] = next;
		if (npend == 0)
			break;
		int k = elevator_pick(ios, pending, npend, sim_model_head(&s->model, t));
		struct member_io *io = ios[pending[k]];
		pending[k] = pending[--npend];
		enum sim_kind kind = io->op == MEMBER_OP_READ ? SIM_READ
		                     : io->flags & MEMBER_FUA ? SIM_WRITE_FUA
		                                              : SIM_WRITE;
		double done = account(s, t, kind, io->off, (size_t)io->result);
		last = done > last ? done : last;
	}
	for (int i = 0; i < n; i++) {
		if (ios[i]->op == MEMBER_OP_FLUSH && ios[i]->result == 0) {
			double done = account(s, t, SIM_FLUSH, 0, 0);
			last = done > last ? done : last;
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (pending != stack)
		free(pending);
	if (s->bus)
		sim_bus_note(s->bus, last);
	if (s->scale <= 0) {
		/* The batch's requests all arrived at t; its end (batch_wait)
		 * moves the actor to the latest completion. */
		sim_clock_complete(s->vclock, last, true);
		return 1;
	}
	return s->epoch_ns + (uint64_t)(last / s->scale);
}

static void sim_batch_wait(struct member *m, uint64_t until_ns)
{
	struct sim_member *s = m->priv;
	if (s->scale <= 0) {
		sim_clock_commit(s->vclock);
		return;
	}
	struct timespec ts = {.tv_sec = (time_t)(until_ns / 1000000000u),
	                      .tv_nsec = (long)(until_ns % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int sim_fd(struct member *m)
{
	return -1; /* every request must pass the model */
}

static void sim_close(struct member *m)
{
	struct sim_member *s = m->priv;
	member_close(s->inner);
	if (s->bus)
		sim_bus_detach(s->bus);
	sim_model_free(&s->model);
	if (s->own_clock)
		sim_clock_destroy(s->vclock);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static const struct member_ops sim_ops = {
    .kind = "sim",
    .pread = sim_pread,
    .pwrite = sim_pwrite,
    .flush = sim_flush,
    .discard = sim_discard,
    .write_zeroes = sim_write_zeroes,
    .fd = sim_fd,
    .close = sim_close,
    .run_batch = sim_run_batch,
    .batch_wait = sim_batch_wait,
};

int member_sim_open(struct member *inner, const struct sim_profile *p, struct sim_bus *bus,
                    double time_scale, struct member **out, char *err, size_t errlen)
{
	return member_sim_open_clock(inner, p, bus, NULL, time_scale, out, err, errlen);
}

int member_sim_open_clock(struct member *inner, const struct sim_profile *p, struct sim_bus *bus,
                          struct sim_clock *clock, double time_scale, struct member **out,
                          char *err, size_t errlen)
{
	if (!out)
		return errmsg(err, errlen, -EINVAL, "member_sim_open: no result pointer");
	*out = NULL;
	if (!inner || !inner->ops)
		return errmsg(err, errlen, -EINVAL, "member_sim_open: no inner member");
	if (!(time_scale >= 0 && time_scale <= 1e9))
		return errmsg(err, errlen, -EINVAL, "time scale %g is outside 0..1e9", time_scale);
	int rc = sim_profile_check(p, err, errlen);
	if (rc < 0)
		return rc;
	if (p->capacity_bytes && p->capacity_bytes < inner->size)
		return errmsg(err, errlen, -EINVAL,
		              "%s: member %s (%llu bytes) is larger than the modelled disk "
		              "(%llu bytes)",
		              p->name, inner->name, (unsigned long long)inner->size,
		              (unsigned long long)p->capacity_bytes);
	if (clock && time_scale != 0)
		return errmsg(err, errlen, -EINVAL, "a virtual clock needs time scale 0, not %g",
		              time_scale);
	struct sim_member *s = calloc(1, sizeof(*s));
	if (!s)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	s->vclock = clock;
	if (!clock && time_scale == 0) {
		if (sim_clock_create(&s->vclock) < 0) {
			free(s);
			return errmsg(err, errlen, -ENOMEM, "out of memory");
		}
		s->own_clock = true;
	}
	rc = sim_model_init(&s->model, p, inner->size, bus);
	if (rc < 0) {
		if (s->own_clock)
			sim_clock_destroy(s->vclock);
		free(s);
		return errmsg(err, errlen, rc, "out of memory");
	}
	if (bus) {
		rc = sim_bus_attach(bus, time_scale, &s->epoch_ns);
		if (rc < 0) {
			sim_model_free(&s->model);
			if (s->own_clock)
				sim_clock_destroy(s->vclock);
			free(s);
			return errmsg(err, errlen, rc,
			              "time scale %g differs from the other members of the bus",
			              time_scale);
		}
	} else {
		s->epoch_ns = mono_ns();
	}
	pthread_mutex_init(&s->lock, NULL);
	s->inner = inner;
	s->p = *p;
	s->bus = bus;
	s->scale = time_scale;
	member_wrap_init(&s->m, inner, &sim_ops, s);
	s->m.discard_zeroes = inner->discard_zeroes;
	*out = &s->m;
	return 0;
}

int member_sim_set_channel(struct member *m, struct sim_channel *c)
{
	struct sim_member *s = sim_of(m);
	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	s->chan = c;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

uint64_t member_sim_model_ns(struct member *m)
{
	struct sim_member *s = sim_of(m);
	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	double c = s->clock;
	pthread_mutex_unlock(&s->lock);
	return (uint64_t)llround(c);
}

uint64_t member_sim_now_ns(struct member *m)
{
	struct sim_member *s = sim_of(m);
	if (!s)
		return 0;
	if (s->scale <= 0)
		return (uint64_t)llround(sim_clock_now(s->vclock));
	return (uint64_t)llround(arrival(s));
}

int member_sim_stats(struct member *m, struct sim_stats *out)
{
	struct sim_member *s = sim_of(m);
	if (!s || !out)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	*out = s->model.st;
	pthread_mutex_unlock(&s->lock);
	return 0;
}
