/* NBD exports as members, through libnbd: one connection per member, many
 * requests in flight on it (libnbd's AIO calls). The threads that wait for
 * their requests drive the connection themselves, one at a time (the
 * poller: it polls the socket, reads every reply there is, wakes the other
 * waiters whose requests completed and, leaving, hands the socket to one
 * still waiting), and the poller fails the connection when a request
 * outlives its timeout. No thread of its own: a reply wakes the thread that
 * waits for it, not an event thread that then wakes it (one context
 * switch less per reply: docs/PERFORMANCE.md, "NBD members"). Requests reach it from
 * member_ioq_run (ops->aio_submit/aio_wait: a batch to several NBD members
 * is in flight on all of them at once, and beside the io_uring requests of
 * local members) or one at a time through the pread/pwrite ops
 * (superblocks, bitmaps).
 *
 * A dead connection (dropped, refused on reconnect, or shut by a timeout)
 * fails every request in flight and every later one with -EIO (-ETIMEDOUT
 * for a timeout): the array fails the member and goes on degraded; a new
 * connection is a new member_open_nbd (the daemon's re-add). Lock order:
 * never call libnbd holding nm->lock (completion callbacks take it inside
 * libnbd's handle lock). */
#include "member/member_int.h"
#include "member/nbd_uri.h"
#include "util/errmsg.h"

#include <errno.h>

bool member_is_remote(const char *name)
{
	return nbd_uri_is(name);
}

#ifndef HAVE_LIBNBD
int member_open_nbd(const char *uri, unsigned flags, struct member **out, char *err, size_t errlen)
{
	if (out)
		*out = NULL;
	return errmsg(err, errlen, -EOPNOTSUPP, "%s: uraid was built without libnbd", uri);
}
#else
#include "member/member_nbd_int.h"

#include <libnbd.h>
#include <poll.h>
#include <pwd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct nbd_member *nm_of(struct member *m)
{
	return (struct nbd_member *)m;
}

static void wake(struct nbd_member *nm)
{
	uint64_t one = 1;
	ssize_t r = write(nm->efd, &one, sizeof(one));
	(void)r;
}

static void unlink_req(struct nbd_member *nm, struct nbd_req *r)
{
	if (!r->linked)
		return;
	if (r->prev)
		r->prev->next = r->next;
	else
		nm->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		nm->tail = r->prev;
	r->prev = r->next = NULL;
	r->linked = false;
}

/* A piece is over (nm->lock held): account it, wake its batch's waiter. */
static void finish_locked(struct nbd_member *nm, struct nbd_req *r, int err)
{
	unlink_req(nm, r);
	uint64_t lat = nbd_now_ns() - r->start_ns;
	nm->nreq++;
	nm->lat_sum_ns += lat;
	if (lat > nm->lat_max_ns)
		nm->lat_max_ns = lat;
	nm->lat_ewma_ns = nm->lat_ewma_ns ? (nm->lat_ewma_ns * 7 + lat) / 8 : lat;
	if (err) {
		nm->nerr++;
		/* Everything a dead connection fails says why it died. */
		if (nm->dead && nm->dead_err)
			err = nm->dead_err;
	}
	r->err = err;
	if (err && r->io && r->io->result >= 0)
		r->io->result = -err;
	if (err && !r->io && !r->b->flush_err)
		r->b->flush_err = err;
	if (--r->b->left == 0)
		pthread_cond_broadcast(&r->b->cv);
}

static int on_complete(void *user_data, int *error)
{
	struct nbd_req *r = user_data;
	struct nbd_member *nm = r->b->nm;
	pthread_mutex_lock(&nm->lock);
	finish_locked(nm, r, *error ? *error : 0);
	pthread_mutex_unlock(&nm->lock);
	return 1; /* retire the command */
}

/* Mark the connection dead (nm->lock held); the poller shuts it. */
static void set_dead_locked(struct nbd_member *nm, int err, const char *why)
{
	if (nm->dead)
		return;
	nm->dead = true;
	nm->dead_err = err;
	snprintf(nm->dead_why, sizeof(nm->dead_why), "%s", why);
	fprintf(stderr, "uraid: %s: %s: member fails\n", nm->m.name, why);
}

/* Issue one piece (nm->lock not held). */
static void issue(struct nbd_member *nm, struct nbd_req *r)
{
	pthread_mutex_lock(&nm->lock);
	r->start_ns = nbd_now_ns();
	r->deadline_ns = r->start_ns + nm->timeout_ns;
	bool dead = nm->dead;
	if (!dead) {
		r->prev = nm->tail;
		r->next = NULL;
		if (nm->tail)
			nm->tail->next = r;
		else
			nm->head = r;
		nm->tail = r;
		r->linked = true;
	}
	if (dead) {
		finish_locked(nm, r, nm->dead_err ? nm->dead_err : EIO);
		pthread_mutex_unlock(&nm->lock);
		return;
	}
	pthread_mutex_unlock(&nm->lock);
	nbd_completion_callback cb = {.callback = on_complete, .user_data = r};
	int64_t c;
	switch (r->op) {
	case NREQ_READ: c = nbd_aio_pread(nm->h, r->buf, r->len, r->off, cb, 0); break;
	case NREQ_WRITE: c = nbd_aio_pwrite(nm->h, r->buf, r->len, r->off, cb, r->flags); break;
	case NREQ_FLUSH: c = nbd_aio_flush(nm->h, cb, 0); break;
	default:
		c = nm->can_zero ? nbd_aio_zero(nm->h, r->len, r->off, cb, 0)
		                 : nbd_aio_trim(nm->h, r->len, r->off, cb, 0);
		break;
	}
	if (c < 0) {
		/* Not issued, so the callback will not run. */
		int e = nbd_get_errno();
		pthread_mutex_lock(&nm->lock);
		finish_locked(nm, r, e ? e : EIO);
		pthread_mutex_unlock(&nm->lock);
		wake(nm); /* the poller looks at the handle's state */
		return;
	}
	/* libnbd sent what the socket took in this thread; the poller
	 * polls for replies already, and needs waking only for the rest. */
	if (nbd_aio_get_direction(nm->h) & LIBNBD_AIO_DIRECTION_WRITE)
		wake(nm);
}

static struct nbd_req *add_req(struct nbd_batch *b)
{
	if (b->nreq == b->cap) {
		int cap = b->cap ? b->cap * 2 : 8;
		struct nbd_req *n = realloc(b->reqs, (size_t)cap * sizeof(*n));
		if (!n)
			return NULL;
		b->reqs = n;
		b->cap = cap;
	}
	struct nbd_req *r = &b->reqs[b->nreq++];
	memset(r, 0, sizeof(*r));
	r->b = b;
	return r;
}

static void drive(struct nbd_member *nm, bool block);

static void unlink_waiter(struct nbd_member *nm, struct nbd_batch *b)
{
	for (struct nbd_batch **pp = &nm->waiters; *pp; pp = &(*pp)->wnext)
		if (*pp == b) {
			*pp = b->wnext;
			break;
		}
	b->wnext = NULL;
}

/* Wait for a batch's pieces: drive the socket when no other waiter does,
 * else sleep until a completion or the poller's hand-over wakes us. */
static void wait_left(struct nbd_member *nm, struct nbd_batch *b)
{
	pthread_mutex_lock(&nm->lock);
	while (b->left > 0) {
		if (!nm->polling && !nm->shut) {
			nm->polling = true;
			if (!nm->driven) {
				nm->driven = true;
				nm->driven_since = nbd_now_ns();
			}
			pthread_mutex_unlock(&nm->lock);
			drive(nm, true);
			pthread_mutex_lock(&nm->lock);
			nm->polling = false;
			continue;
		}
		b->wnext = nm->waiters;
		nm->waiters = b;
		pthread_cond_wait(&b->cv, &nm->lock);
		unlink_waiter(nm, b);
	}
	/* Leaving: a thread still waiting takes the socket over. */
	if (!nm->polling && !nm->shut && nm->waiters)
		pthread_cond_signal(&nm->waiters->cv);
	if (!nm->polling && !nm->waiters)
		nm->driven = false;
	pthread_mutex_unlock(&nm->lock);
}

static bool req_aligned(const struct nbd_member *nm, uint64_t off, uint64_t len)
{
	return off % nm->min_block == 0 && len % nm->min_block == 0;
}

static void batch_free(struct nbd_batch *b)
{
	if (!b)
		return;
	pthread_cond_destroy(&b->cv);
	free(b->reqs);
	free(b->ios);
	free(b);
}

static struct nbd_batch *batch_new(struct nbd_member *nm, int nios)
{
	struct nbd_batch *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->nm = nm;
	pthread_cond_init(&b->cv, NULL);
	b->ios = calloc((size_t)(nios ? nios : 1), sizeof(*b->ios));
	if (!b->ios) {
		batch_free(b);
		return NULL;
	}
	return b;
}

/* Cut reads at the member's end, as member_ioq_run does. */
static uint64_t io_len(const struct member *m, const struct member_io *io)
{
	if (io->op != MEMBER_OP_READ)
		return io->len;
	if (io->off >= m->size)
		return 0;
	return io->len < m->size - io->off ? io->len : m->size - io->off;
}

static void *nbd_aio_submit_batch(struct member *m, struct member_io *const *ios, int n)
{
	struct nbd_member *nm = nm_of(m);
	for (int i = 0; i < n; i++)
		if (ios[i]->op != MEMBER_OP_FLUSH &&
		    !req_aligned(nm, ios[i]->off, io_len(m, ios[i])))
			return NULL; /* the ops path bounces it */
	struct nbd_batch *b = batch_new(nm, n);
	if (!b)
		return NULL;
	/* Build every piece first: reqs[] must not move once issued. */
	for (int i = 0; i < n; i++) {
		struct member_io *io = ios[i];
		b->ios[b->nios++] = io;
		if (io->op == MEMBER_OP_FLUSH) {
			io->result = 0;
			b->nflush++;
			continue;
		}
		uint64_t len = io_len(m, io);
		io->result = (ssize_t)len;
		if (io->op == MEMBER_OP_WRITE && (io->flags & MEMBER_FUA) && !nm->can_fua &&
		    nm->can_flush)
			b->fua_flush = true;
		for (uint64_t done = 0; done < len;) {
			uint64_t k = len - done < nm->max_piece ? len - done : nm->max_piece;
			struct nbd_req *r = add_req(b);
			if (!r) {
				batch_free(b);
				return NULL;
			}
			r->io = io;
			r->op = io->op == MEMBER_OP_READ ? NREQ_READ : NREQ_WRITE;
			r->buf = (char *)io->buf + done;
			r->off = io->off + done;
			r->len = k;
			if (r->op == NREQ_WRITE && (io->flags & MEMBER_FUA) && nm->can_fua)
				r->flags = LIBNBD_CMD_FLAG_FUA;
			done += k;
		}
	}
	/* One more slot for the flush phase, so reqs[] never moves later. */
	if ((b->nflush || b->fua_flush) && !add_req(b)) {
		batch_free(b);
		return NULL;
	}
	int nrw = (b->nflush || b->fua_flush) ? b->nreq - 1 : b->nreq;
	b->left = nrw;
	for (int i = 0; i < nrw; i++)
		issue(nm, &b->reqs[i]);
	return b;
}

static void nbd_aio_wait_batch(struct member *m, void *handle)
{
	struct nbd_member *nm = nm_of(m);
	struct nbd_batch *b = handle;
	wait_left(nm, b);
	if ((b->nflush || b->fua_flush) && nm->can_flush) {
		struct nbd_req *r = &b->reqs[b->nreq - 1];
		memset(r, 0, sizeof(*r));
		r->b = b;
		r->op = NREQ_FLUSH;
		b->left = 1;
		issue(nm, r);
		wait_left(nm, b);
		if (b->flush_err)
			for (int i = 0; i < b->nios; i++) {
				struct member_io *io = b->ios[i];
				bool fua = io->op == MEMBER_OP_WRITE && (io->flags & MEMBER_FUA);
				if ((io->op == MEMBER_OP_FLUSH || fua) && io->result >= 0)
					io->result = -b->flush_err;
			}
	}
	batch_free(b);
}

/* One aligned request through the batch machinery, waiting for it. */
static ssize_t sync_io(struct nbd_member *nm, enum member_op op, void *buf, size_t len,
                       uint64_t off, unsigned flags)
{
	struct member_io io = {
	    .m = &nm->m, .op = op, .buf = buf, .len = len, .off = off, .flags = flags};
	struct member_io *p = &io;
	void *b = nbd_aio_submit_batch(&nm->m, &p, 1);
	if (!b)
		return -ENOMEM;
	nbd_aio_wait_batch(&nm->m, b);
	return io.result;
}

/* An unaligned transfer: the covering aligned span through a bounce
 * buffer (writes read, patch and rewrite it, serialized). */
static ssize_t bounce(struct nbd_member *nm, enum member_op op, void *buf, size_t len, uint64_t off,
                      unsigned flags)
{
	const uint64_t a = nm->min_block;
	uint64_t start = off / a * a, end = (off + len + a - 1) / a * a;
	if (end > nm->m.size)
		return -EIO; /* the export's size is a multiple of its block size */
	size_t span = (size_t)(end - start);
	unsigned char *b = malloc(span);
	if (!b)
		return -ENOMEM;
	if (op == MEMBER_OP_WRITE)
		pthread_mutex_lock(&nm->rmw_lock);
	ssize_t r = sync_io(nm, MEMBER_OP_READ, b, span, start, 0);
	if (r >= 0 && (size_t)r != span)
		r = -EIO;
	if (r >= 0 && op == MEMBER_OP_READ)
		memcpy(buf, b + (off - start), len);
	if (r >= 0 && op == MEMBER_OP_WRITE) {
		memcpy(b + (off - start), buf, len);
		r = sync_io(nm, MEMBER_OP_WRITE, b, span, start, flags);
		if (r >= 0 && (size_t)r != span)
			r = -EIO;
	}
	if (op == MEMBER_OP_WRITE)
		pthread_mutex_unlock(&nm->rmw_lock);
	free(b);
	return r < 0 ? r : (ssize_t)len;
}

static ssize_t nbd_pread_op(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct nbd_member *nm = nm_of(m);
	member_op_bounds(m, MEMBER_OP_READ, &len, off, NBD_PIECE_MAX);
	if (len == 0)
		return 0;
	if (!req_aligned(nm, off, len))
		return bounce(nm, MEMBER_OP_READ, buf, len, off, 0);
	return sync_io(nm, MEMBER_OP_READ, buf, len, off, 0);
}

static ssize_t nbd_pwrite_op(struct member *m, const void *buf, size_t len, uint64_t off,
                             unsigned flags)
{
	struct nbd_member *nm = nm_of(m);
	int rc = member_op_bounds(m, MEMBER_OP_WRITE, &len, off, NBD_PIECE_MAX);
	if (rc < 0)
		return rc;
	if (len == 0)
		return 0;
	if (!req_aligned(nm, off, len))
		return bounce(nm, MEMBER_OP_WRITE, (void *)buf, len, off, flags);
	return sync_io(nm, MEMBER_OP_WRITE, (void *)buf, len, off, flags);
}

static int nbd_flush_op(struct member *m)
{
	return (int)sync_io(nm_of(m), MEMBER_OP_FLUSH, NULL, 0, 0, 0);
}

/* Discard: NBD_CMD_WRITE_ZEROES where offered (reads back zeros; the server
 * may punch a hole), else NBD_CMD_TRIM (contents then undefined, as on a
 * disk without deterministic trim), else -EOPNOTSUPP. */
static int nbd_discard_op(struct member *m, uint64_t off, uint64_t len)
{
	struct nbd_member *nm = nm_of(m);
	int rc = member_discard_check(m, off, len);
	if (rc < 0 || len == 0)
		return rc;
	if (!nm->can_zero && !nm->can_trim)
		return -EOPNOTSUPP;
	if (!req_aligned(nm, off, len))
		return -EINVAL;
	struct nbd_batch *b = batch_new(nm, 1);
	if (!b)
		return -ENOMEM;
	struct member_io io = {.m = m, .op = MEMBER_OP_WRITE, .len = 0, .result = 0};
	for (uint64_t done = 0; done < len;) {
		uint64_t k = len - done < (1u << 30) ? len - done : (1u << 30);
		struct nbd_req *r = add_req(b);
		if (!r) {
			batch_free(b);
			return -ENOMEM;
		}
		r->io = &io;
		r->op = NREQ_ZERO;
		r->off = off + done;
		r->len = k;
		done += k;
	}
	b->left = b->nreq;
	for (int i = 0; i < b->nreq; i++)
		issue(nm, &b->reqs[i]);
	wait_left(nm, b);
	batch_free(b);
	return io.result < 0 ? (int)io.result : 0;
}

static int nbd_fd_op(struct member *m)
{
	return -1;
}

static int nbd_check_op(struct member *m, char *why, size_t len)
{
	struct nbd_member *nm = nm_of(m);
	/* An idle member has no poller: look at the socket once, so that a
	 * server gone (or a request past its timeout) shows without I/O. */
	pthread_mutex_lock(&nm->lock);
	bool take = !nm->polling && !nm->shut;
	if (take)
		nm->polling = true;
	pthread_mutex_unlock(&nm->lock);
	if (take) {
		drive(nm, false);
		pthread_mutex_lock(&nm->lock);
		nm->polling = false;
		if (!nm->shut && nm->waiters)
			pthread_cond_signal(&nm->waiters->cv);
		pthread_mutex_unlock(&nm->lock);
	}
	/* The handle knows first when a submitter's write found the socket
	 * broken; no poller may have looked yet. */
	bool gone = nbd_aio_is_dead(nm->h) || nbd_aio_is_closed(nm->h);
	pthread_mutex_lock(&nm->lock);
	if (gone)
		set_dead_locked(nm, EIO, "the connection to the server was lost");
	int rc = 0;
	if (nm->dead) {
		snprintf(why, len, "%s: %s", m->name, nm->dead_why);
		rc = -ENODEV;
	}
	pthread_mutex_unlock(&nm->lock);
	return rc;
}

static void nbd_describe_op(struct member *m, char *buf, size_t len)
{
	struct nbd_member *nm = nm_of(m);
	pthread_mutex_lock(&nm->lock);
	uint64_t avg = nm->nreq ? nm->lat_sum_ns / nm->nreq : 0;
	snprintf(buf, len,
	         "nbd %s%s%s, %llu requests (%llu failed), latency recent %.0f us avg %.0f "
	         "us max %.0f us, timeout %llu s, block %u/%u",
	         nm->dead ? "link down: " : "connected", nm->dead ? nm->dead_why : "",
	         nm->uri.tls ? " (TLS)" : "", (unsigned long long)nm->nreq,
	         (unsigned long long)nm->nerr, nm->lat_ewma_ns / 1e3, avg / 1e3,
	         nm->lat_max_ns / 1e3, (unsigned long long)(nm->timeout_ns / 1000000000u),
	         nm->min_block, nm->pref_block);
	pthread_mutex_unlock(&nm->lock);
}

/* One round of the poller (nm->lock not held): poll the socket until it is
 * ready, a submitter left output to send, or the oldest request's deadline
 * (!block: not at all), and let libnbd read the replies (their callbacks
 * wake their waiters) or see the end of the connection. A request is late
 * only when its reply is still missing after that and the socket has been
 * driven for a whole timeout: a reply that waited in the socket, or a
 * request libnbd could not send yet, while nobody polled (its thread waited
 * on another member first) is not. A late request marks the connection
 * dead; the next round shuts the socket, which fails every command in
 * flight. */
/* When the oldest request becomes late (nm->lock held, nm->head set). */
static uint64_t late_at(const struct nbd_member *nm)
{
	uint64_t d = nm->head->deadline_ns, g = nm->driven_since + nm->timeout_ns;
	return d > g ? d : g;
}

static void drive(struct nbd_member *nm, bool block)
{
	int fd = nbd_aio_get_fd(nm->h);
	bool gone = nbd_aio_is_dead(nm->h) || nbd_aio_is_closed(nm->h);
	pthread_mutex_lock(&nm->lock);
	int wait_ms = 1000;
	if (nm->head && nm->driven) {
		uint64_t now = nbd_now_ns(), due = late_at(nm);
		uint64_t d = due > now ? (due - now) / 1000000u + 1 : 0;
		if (d < (uint64_t)wait_ms)
			wait_ms = (int)d;
	}
	bool dead = nm->dead;
	pthread_mutex_unlock(&nm->lock);
	if (dead || gone || fd < 0) {
		/* Shut the socket: libnbd then sees the end of the connection
		 * and fails every command in flight (a handle already dead
		 * has failed them). */
		if (!gone && fd >= 0) {
			shutdown(fd, SHUT_RDWR);
			nbd_aio_notify_read(nm->h);
		}
		pthread_mutex_lock(&nm->lock);
		set_dead_locked(nm, EIO, "the connection to the server was lost");
		nm->shut = true;
		pthread_mutex_unlock(&nm->lock);
		return;
	}
	unsigned dir = nbd_aio_get_direction(nm->h);
	struct pollfd p[2] = {
	    {.fd = nm->efd, .events = POLLIN},
	    {.fd = fd,
	     .events = (short)(((dir & LIBNBD_AIO_DIRECTION_READ) ? POLLIN : 0) |
	                       ((dir & LIBNBD_AIO_DIRECTION_WRITE) ? POLLOUT : 0))}};
	int r = poll(p, 2, block ? wait_ms : 0);
	if (r > 0) {
		if (p[0].revents & POLLIN) {
			uint64_t v;
			ssize_t k = read(nm->efd, &v, sizeof(v));
			(void)k;
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
			nbd_aio_notify_read(nm->h);
		else if (p[1].revents & POLLOUT)
			nbd_aio_notify_write(nm->h);
	}
	gone = nbd_aio_is_dead(nm->h) || nbd_aio_is_closed(nm->h);
	pthread_mutex_lock(&nm->lock);
	if (gone) {
		set_dead_locked(nm, EIO, "the connection to the server was lost");
		nm->shut = true;
	} else if (nm->head && nm->driven && !nm->dead && nbd_now_ns() >= late_at(nm)) {
		char why[96];
		snprintf(why, sizeof(why), "a request took longer than %llu s",
		         (unsigned long long)(nm->timeout_ns / 1000000000u));
		set_dead_locked(nm, ETIMEDOUT, why);
	}
	pthread_mutex_unlock(&nm->lock);
}

static void nbd_close_op(struct member *m)
{
	struct nbd_member *nm = nm_of(m);
	if (nm->h) {
		pthread_mutex_lock(&nm->lock);
		bool dead = nm->dead;
		pthread_mutex_unlock(&nm->lock);
		if (!dead && !nbd_aio_is_dead(nm->h) && !nbd_aio_is_closed(nm->h))
			nbd_shutdown(nm->h, 0);
		nbd_close(nm->h);
	}
	if (nm->efd >= 0)
		close(nm->efd);
	pthread_mutex_destroy(&nm->lock);
	pthread_mutex_destroy(&nm->rmw_lock);
	free(nm);
}

const struct member_ops nbd_member_ops = {
    .kind = "nbd",
    .pread = nbd_pread_op,
    .pwrite = nbd_pwrite_op,
    .flush = nbd_flush_op,
    .discard = nbd_discard_op,
    .fd = nbd_fd_op,
    .close = nbd_close_op,
    .check = nbd_check_op,
    .aio_submit = nbd_aio_submit_batch,
    .aio_wait = nbd_aio_wait_batch,
    .describe = nbd_describe_op,
};

#endif
