/* Internals of the NBD member backend shared by member_nbd.c (requests,
 * batches, the poller) and member_nbd_open.c (connecting, the handshake's
 * limits). Only with libnbd. */
#ifndef URAID_MEMBER_NBD_INT_H
#define URAID_MEMBER_NBD_INT_H

#include "member/member_int.h"
#include "member/nbd_uri.h"

#include <libnbd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define NBD_DEFAULT_TIMEOUT_S 30
/* One NBD request carries at most this much (libnbd refuses more than 64 MiB). */
#define NBD_PIECE_MAX (32u << 20)

enum nreq_op { NREQ_READ, NREQ_WRITE, NREQ_FLUSH, NREQ_ZERO };

struct nbd_member;
struct nbd_batch;

struct nbd_req {
	struct nbd_batch *b;
	struct member_io *io; /* whose result this piece sets (NULL: the batch's) */
	enum nreq_op op;
	void *buf;
	uint64_t off, len;
	uint32_t flags; /* LIBNBD_CMD_FLAG_* */
	uint64_t start_ns, deadline_ns;
	struct nbd_req *prev, *next; /* nm->pending, oldest first */
	bool linked;
	int err; /* positive errno */
};

struct nbd_batch {
	struct nbd_member *nm;
	pthread_cond_t cv;
	int left; /* pieces in flight */
	int nflush;
	bool fua_flush; /* a FUA write needs a flush after it (server without FUA) */
	struct member_io **ios;
	int nios;
	int nreq, cap;
	struct nbd_req *reqs;
	int flush_err;
	struct nbd_batch *wnext; /* nm->waiters */
};

struct nbd_member {
	struct member m;
	struct nbd_handle *h;
	struct nbd_uri uri;
	int efd;              /* wakes the poller: a request left output for it to send */
	pthread_mutex_t lock; /* pending, dead, polling, waiters, stats */
	struct nbd_req *head, *tail;
	bool polling;              /* a waiter drives the socket */
	struct nbd_batch *waiters; /* batches whose threads sleep on their cv */
	bool shut;                 /* dead and the socket shut: nothing to drive */
	/* Since when waiters have driven the socket without a break: a
	 * request counts as late only after a full timeout of that, so that
	 * one nobody drove (its thread waited on another member) is not. */
	bool driven;
	uint64_t driven_since;
	bool dead;
	int dead_err;
	char dead_why[160];
	uint64_t timeout_ns;
	uint32_t min_block, pref_block, max_piece;
	bool can_fua, can_flush, can_zero, can_trim;
	/* statistics */
	uint64_t nreq, nerr, lat_sum_ns, lat_max_ns, lat_ewma_ns;
	pthread_mutex_t rmw_lock; /* unaligned writes: read-modify-write */
};

static inline uint64_t nbd_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The ops of an open NBD member (member_nbd.c). */
extern const struct member_ops nbd_member_ops;

#endif
