/* Batched member I/O: one io_uring per queue (per thread) when the kernel
 * allows it, synchronous calls through the member ops otherwise. */
#include "member/member_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HAVE_URING
#include <liburing.h>
#endif

#define IOQ_DEFAULT_DEPTH 64u
#define IOQ_MAX_DEPTH     4096u
/* One SQE moves at most this much; longer requests continue as if short. */
#define SQE_MAX_LEN ((size_t)1 << 30)

struct ioq_slot {
	size_t len;  /* bytes the request wants (reads: cut at the member's end) */
	size_t done; /* bytes moved so far */
	bool finished;
	bool declined; /* its member's aio_submit refused the batch */
};

struct ioq_wait {
	struct member *m;
	uint64_t until;
};

struct member_ioq {
	bool uring;
	unsigned depth;
	size_t split; /* bytes per SQE at most */
	char reason[128];
	struct ioq_slot *slots;
	int *ready; /* indices waiting for an SQE */
	size_t cap;
	struct ioq_wait *waiters; /* this batch's members with a batch_wait */
	int nwaiters;
#ifdef HAVE_URING
	struct io_uring ring;
#endif
};

int member_ioq_open(unsigned depth, struct member_ioq **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (depth == 0)
		depth = IOQ_DEFAULT_DEPTH;
	if (depth > IOQ_MAX_DEPTH)
		depth = IOQ_MAX_DEPTH;
	struct member_ioq *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->depth = depth;
	q->split = SQE_MAX_LEN;
	const char *env = getenv("URAID_IOQ");
	if (env && strcmp(env, "sync") == 0) {
		snprintf(q->reason, sizeof(q->reason), "URAID_IOQ=sync");
	} else {
#ifdef HAVE_URING
		int rc = io_uring_queue_init(depth, &q->ring, 0);
		if (rc == 0)
			q->uring = true;
		else
			snprintf(q->reason, sizeof(q->reason), "io_uring_queue_init: %s",
			         strerror(-rc));
#else
		snprintf(q->reason, sizeof(q->reason), "built without liburing");
#endif
	}
	*out = q;
	return 0;
}

void member_ioq_close(struct member_ioq *q)
{
	if (!q)
		return;
#ifdef HAVE_URING
	if (q->uring)
		io_uring_queue_exit(&q->ring);
#endif
	free(q->slots);
	free(q->ready);
	free(q->waiters);
	free(q);
}

const char *member_ioq_backend(const struct member_ioq *q)
{
	return q && q->uring ? "io_uring" : "sync";
}

const char *member_ioq_reason(const struct member_ioq *q)
{
	return q ? q->reason : "";
}

void member_ioq_set_split(struct member_ioq *q, size_t bytes)
{
	if (!q)
		return;
	if (bytes < 4096)
		bytes = 4096;
	q->split = bytes < SQE_MAX_LEN ? bytes : SQE_MAX_LEN;
}

/* Synchronous execution of one request from where it stands. */
static void run_one_sync(struct member_io *io, struct ioq_slot *s)
{
	if (io->op == MEMBER_OP_FLUSH) {
		io->result = member_flush(io->m);
	} else {
		ssize_t r = member_xfer(io->m, io->op, (char *)io->buf + s->done, s->len - s->done,
		                        io->off + s->done, io->flags);
		io->result = r < 0 ? r : (ssize_t)(s->done + (size_t)r);
	}
	s->finished = true;
}

#ifdef HAVE_URING
/* Whether the ring can carry this request: the member has a descriptor and,
 * on O_DIRECT members, the request needs no bounce buffer. */
static bool uring_eligible(const struct member_io *io, const struct ioq_slot *s)
{
	if (io->m->mapped || io->m->ops->fd(io->m) < 0)
		return false;
	if (io->op == MEMBER_OP_FLUSH)
		return true;
	return member_aligned(io->m, io->buf, s->len, io->off);
}

static void prep_sqe(struct io_uring_sqe *sqe, struct member_io *io, struct ioq_slot *s, int idx,
                     size_t split)
{
	int fd = io->m->ops->fd(io->m);
	if (io->op == MEMBER_OP_FLUSH) {
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
	} else {
		size_t n = s->len - s->done;
		/* Pieces of an O_DIRECT request must stay aligned. */
		if (io->m->direct) {
			split -= split % io->m->dio_align;
			if (split == 0)
				split = io->m->dio_align;
		}
		if (n > split)
			n = split;
		char *p = (char *)io->buf + s->done;
		if (io->op == MEMBER_OP_READ) {
			io_uring_prep_read(sqe, fd, p, (unsigned)n, io->off + s->done);
		} else {
			io_uring_prep_write(sqe, fd, p, (unsigned)n, io->off + s->done);
			if (io->flags & MEMBER_FUA)
				sqe->rw_flags = RWF_DSYNC;
		}
	}
	io_uring_sqe_set_data64(sqe, (uint64_t)idx);
}

/* Account one completion; a short transfer goes back on the ready list. */
static void complete(struct member_ioq *q, struct member_io *ios, int idx, int res, int *nready)
{
	struct member_io *io = &ios[idx];
	struct ioq_slot *s = &q->slots[idx];
	if (res == -EINTR || res == -EAGAIN) {
		q->ready[(*nready)++] = idx;
		return;
	}
	if (res < 0) {
		io->result = res;
		s->finished = true;
		return;
	}
	if (io->op == MEMBER_OP_FLUSH) {
		io->result = 0;
		s->finished = true;
		return;
	}
	if (res == 0) {
		/* End of file before the member's end: reads stop short. */
		io->result = io->op == MEMBER_OP_READ ? (ssize_t)s->done : -EIO;
		s->finished = true;
		return;
	}
	s->done += (size_t)res;
	if (s->done < s->len) {
		q->ready[(*nready)++] = idx;
		return;
	}
	io->result = (ssize_t)s->done;
	s->finished = true;
}

static void reap(struct member_ioq *q, struct member_io *ios, unsigned *inflight, int *nready)
{
	struct io_uring_cqe *cqe;
	while (*inflight && io_uring_peek_cqe(&q->ring, &cqe) == 0) {
		int idx = (int)io_uring_cqe_get_data64(cqe);
		int res = cqe->res;
		io_uring_cqe_seen(&q->ring, cqe);
		(*inflight)--;
		complete(q, ios, idx, res, nready);
	}
}

/* Give up on the ring after a submission error: wait for what the kernel
 * accepted, tear the ring down (unsubmitted SQEs die with it) and let the
 * caller finish everything else synchronously. */
static void uring_abandon(struct member_ioq *q, struct member_io *ios, unsigned *inflight,
                          int *nready, int err)
{
	while (*inflight) {
		struct io_uring_cqe *cqe;
		if (io_uring_wait_cqe(&q->ring, &cqe) < 0)
			break;
		reap(q, ios, inflight, nready);
	}
	io_uring_queue_exit(&q->ring);
	q->uring = false;
	snprintf(q->reason, sizeof(q->reason), "io_uring_submit: %s", strerror(-err));
}

/* Run the requests listed in `idx` (all uring-eligible) through the ring;
 * `sync_idx` ones synchronously while the ring works. */
static void run_uring(struct member_ioq *q, struct member_io *ios, const int *idx, int n,
                      const int *sync_idx, int nsync)
{
	int nready = 0;
	unsigned inflight = 0, prepped = 0;
	/* Pop from the back: keep the list as a stack, reverse so the first
	 * request goes first. */
	for (int i = n - 1; i >= 0; i--)
		q->ready[nready++] = idx[i];
	bool sync_done = false;
	while (nready || inflight || prepped) {
		while (nready && inflight + prepped < q->depth) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
			if (!sqe)
				break;
			int i = q->ready[--nready];
			prep_sqe(sqe, &ios[i], &q->slots[i], i, q->split);
			prepped++;
		}
		if (prepped) {
			int rc = io_uring_submit(&q->ring);
			if (rc > 0) {
				inflight += (unsigned)rc;
				prepped -= (unsigned)rc < prepped ? (unsigned)rc : prepped;
			} else if (rc != -EINTR && !((rc == -EAGAIN || rc == -EBUSY) && inflight)) {
				uring_abandon(q, ios, &inflight, &nready, rc ? rc : -EIO);
				break;
			}
		}
		if (!sync_done) {
			for (int i = 0; i < nsync; i++)
				run_one_sync(&ios[sync_idx[i]], &q->slots[sync_idx[i]]);
			sync_done = true;
		}
		if (inflight) {
			struct io_uring_cqe *cqe;
			int rc = io_uring_wait_cqe(&q->ring, &cqe);
			if (rc < 0 && rc != -EINTR && rc != -EAGAIN) {
				uring_abandon(q, ios, &inflight, &nready, rc);
				break;
			}
			reap(q, ios, &inflight, &nready);
		}
	}
	if (!sync_done)
		for (int i = 0; i < nsync; i++)
			run_one_sync(&ios[sync_idx[i]], &q->slots[sync_idx[i]]);
	/* After abandoning the ring, whatever is unfinished runs synchronously. */
	for (int i = 0; i < n; i++)
		if (!q->slots[idx[i]].finished)
			run_one_sync(&ios[idx[i]], &q->slots[idx[i]]);
}
#endif

static int ensure_cap(struct member_ioq *q, size_t n)
{
	if (n <= q->cap)
		return 0;
	struct ioq_slot *s = realloc(q->slots, n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	q->slots = s;
	int *r = realloc(q->ready, 2 * n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	q->ready = r;
	struct ioq_wait *w = realloc(q->waiters, n * sizeof(*w));
	if (!w)
		return -ENOMEM;
	q->waiters = w;
	q->cap = n;
	return 0;
}

/* One phase: the requests of ios[] for which `want(op)` holds. */
static void run_phase(struct member_ioq *q, struct member_io *ios, int n, bool flushes)
{
	int *idx = q->ready + n; /* second half of `ready`: this phase's list */
	int nidx = 0;
	for (int i = 0; i < n; i++) {
		if (q->slots[i].finished)
			continue;
		if ((ios[i].op == MEMBER_OP_FLUSH) == flushes)
			idx[nidx++] = i;
	}
	if (nidx == 0)
		return;
#ifdef HAVE_URING
	if (q->uring) {
		/* Partition in place: ring requests first, synchronous ones after. */
		int nring = 0;
		for (int k = 0; k < nidx; k++) {
			int i = idx[k];
			if (uring_eligible(&ios[i], &q->slots[i])) {
				idx[k] = idx[nring];
				idx[nring++] = i;
			}
		}
		/* run_uring uses ready[0..n) as its stack; idx lives above it. */
		run_uring(q, ios, idx, nring, idx + nring, nidx - nring);
		return;
	}
#endif
	for (int k = 0; k < nidx; k++)
		run_one_sync(&ios[idx[k]], &q->slots[idx[k]]);
}

/* Hand the requests of members with a run_batch op (simulated disks) to
 * them, one call per member, and mark them finished; returns the latest
 * CLOCK_MONOTONIC time (ns) they asked the batch to wait for. */
static uint64_t run_member_batches(struct member_ioq *q, struct member_io *ios, int n)
{
	uint64_t wake = 0, submit = 0;
	struct member_io **group = NULL;
	for (int i = 0; i < n; i++) {
		struct member *m = ios[i].m;
		if (q->slots[i].finished || !m->ops->run_batch)
			continue;
		if (!group) {
			group = malloc((size_t)n * sizeof(*group));
			if (!group)
				return 0; /* the synchronous path still runs them */
			/* one submission time for all: a member's data copy must
			 * not delay the next member's start */
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			submit = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		}
		int k = 0;
		for (int j = i; j < n; j++) {
			if (ios[j].m == m && !q->slots[j].finished) {
				group[k++] = &ios[j];
				q->slots[j].finished = true;
			}
		}
		uint64_t w = m->ops->run_batch(m, group, k, submit);
		if (w && m->ops->batch_wait)
			q->waiters[q->nwaiters++] = (struct ioq_wait){m, w};
		else if (w > wake)
			wake = w;
	}
	free(group);
	return wake;
}

/* A batch in flight on an asynchronous member (ops->aio_submit). */
struct ioq_aio {
	struct member *m;
	void *batch;
};

/* Start the requests of members with an aio_submit op (remote members),
 * one batch per member, marking them finished; their results arrive in
 * wait_member_aio. Returns the number of batches in `*out` (malloc'd). */
static int start_member_aio(struct member_ioq *q, struct member_io *ios, int n,
                            struct ioq_aio **out)
{
	struct ioq_aio *aio = NULL;
	struct member_io **group = NULL;
	int naio = 0;
	*out = NULL;
	for (int i = 0; i < n; i++) {
		struct member *m = ios[i].m;
		if (q->slots[i].finished || q->slots[i].declined || !m->ops->aio_submit)
			continue;
		if (!aio) {
			aio = malloc((size_t)n * sizeof(*aio));
			group = malloc((size_t)n * sizeof(*group));
			if (!aio || !group)
				break; /* the synchronous path still runs them */
		}
		int k = 0;
		for (int j = i; j < n; j++)
			if (ios[j].m == m && !q->slots[j].finished)
				group[k++] = &ios[j];
		void *b = m->ops->aio_submit(m, group, k);
		if (!b) {
			/* Left to the synchronous path; do not try this member again. */
			for (int j = 0; j < k; j++)
				q->slots[group[j] - ios].declined = true;
			continue;
		}
		for (int j = 0; j < k; j++)
			q->slots[group[j] - ios].finished = true;
		aio[naio++] = (struct ioq_aio){.m = m, .batch = b};
	}
	free(group);
	if (!naio) {
		free(aio);
		return 0;
	}
	*out = aio;
	return naio;
}

static void wait_member_aio(struct ioq_aio *aio, int naio)
{
	for (int i = 0; i < naio; i++)
		aio[i].m->ops->aio_wait(aio[i].m, aio[i].batch);
	free(aio);
}

static void sleep_until_ns(uint64_t when)
{
	if (!when)
		return;
	struct timespec ts = {.tv_sec = (time_t)(when / 1000000000u),
	                      .tv_nsec = (long)(when % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int member_ioq_run(struct member_ioq *q, struct member_io *ios, int n)
{
	if (!q || n < 0 || (n > 0 && !ios))
		return -EINVAL;
	if (n == 0)
		return 0;
	if (ensure_cap(q, (size_t)n) < 0)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		struct member_io *io = &ios[i];
		struct ioq_slot *s = &q->slots[i];
		*s = (struct ioq_slot){.len = io->len};
		io->result = 0;
		if (!io->m || !io->m->ops) {
			io->result = -EINVAL;
			s->finished = true;
			continue;
		}
		if (io->op == MEMBER_OP_FLUSH)
			continue;
		int rc = member_check_io(io->m, io->op, io->buf, &s->len, io->off);
		if (rc == 0 && s->len > SSIZE_MAX)
			rc = -EINVAL;
		if (rc < 0 || s->len == 0) {
			io->result = rc;
			s->finished = true;
		}
	}
	q->nwaiters = 0;
	uint64_t wake = run_member_batches(q, ios, n);
	struct ioq_aio *aio;
	int naio = start_member_aio(q, ios, n, &aio);
	run_phase(q, ios, n, false);
	run_phase(q, ios, n, true);
	wait_member_aio(aio, naio);
	sleep_until_ns(wake);
	for (int i = 0; i < q->nwaiters; i++)
		q->waiters[i].m->ops->batch_wait(q->waiters[i].m, q->waiters[i].until);
	for (int i = 0; i < n; i++)
		if (ios[i].result < 0)
			return (int)ios[i].result;
	return 0;
}
