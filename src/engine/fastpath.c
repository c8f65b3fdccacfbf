/* Reads of a healthy array without the array mutex: every slot in sync, so
 * each piece maps straight to one member and nothing needs rebuilding or
 * repairing. The state lock is held shared, so no member fails, leaves or
 * joins meanwhile; each reader borrows its own member_ioq (a queue is not
 * thread-safe). Anything unusual returns -EAGAIN and the caller repeats the
 * whole request on the locked path, which handles errors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/log.h"
#include "engine/core/engine.h"

/* Pieces per member_ioq batch. Each batch waits for its slowest member, so
 * a big read cut into small batches leaves disks idle between them (and a
 * disk whose read-ahead stopped loses a revolution): 256 pieces hold a
 * 16 MiB request over 64 KiB chunks. Measured on simulated 10k rpm disks,
 * RAID5 of 8 on a 680 MB/s bus, 16 MiB requests: 64 pieces 375 MB/s, 256
 * pieces 530. */
#define FAST_BATCH   256
#define FAST_MAX_SEC 2048 /* largest piece per member request */

static struct member_ioq *ioq_get(struct eng_array *a, struct eng_ioq_node **node)
{
	pthread_mutex_lock(&a->ioq_mu);
	struct eng_ioq_node *n = a->ioq_free;
	if (n)
		a->ioq_free = n->next;
	pthread_mutex_unlock(&a->ioq_mu);
	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n)
			return NULL;
		if (member_ioq_open(128, &n->q) < 0) {
			free(n);
			return NULL;
		}
	}
	*node = n;
	return n->q;
}

static void ioq_put(struct eng_array *a, struct eng_ioq_node *n)
{
	pthread_mutex_lock(&a->ioq_mu);
	n->next = a->ioq_free;
	a->ioq_free = n;
	pthread_mutex_unlock(&a->ioq_mu);
}

void eng_ioq_pool_free(struct eng_array *a)
{
	struct eng_ioq_node *n = a->ioq_free;
	while (n) {
		struct eng_ioq_node *next = n->next;
		member_ioq_close(n->q);
		free(n);
		n = next;
	}
	a->ioq_free = NULL;
	pthread_mutex_destroy(&a->ioq_mu);
}

static bool healthy(const struct eng_array *a)
{
	if (a->broken || a->rs)
		return false;
	/* A recorded bad range is read from elsewhere and cleared by a good
	 * write: both are the locked path's business. */
	for (int r = 0; r < a->geo.raid_disks; r++)
		if (a->slot[r] < 0 || a->mem[a->slot[r]]->state != URAID_MEMBER_IN_SYNC ||
		    a->mem[a->slot[r]]->bbl.n > 0)
			return false;
	return !a->pers->fast_read_ok || a->pers->fast_read_ok(a);
}

/* The copy of a mirror piece whose member's last read ended nearest. */
static int pick_copy(struct eng_array *a, uint64_t lsec, struct layout_loc *loc)
{
	uint64_t best = UINT64_MAX;
	int chosen = -1;
	for (int c = 0; c < a->ncopies && best > 0; c++) {
		struct layout_loc cl;
		uint64_t l;
		if (a->ops->map(&a->geo, lsec, c, &cl, &l) < 0)
			return -EAGAIN;
		uint64_t h = __atomic_load_n(&a->mem[a->slot[cl.role]]->head, __ATOMIC_RELAXED);
		uint64_t d = h > cl.sector ? h - cl.sector : cl.sector - h;
		if (eng_role_write_mostly(a, cl.role))
			d = UINT64_MAX - 1; /* only when no other copy can serve */
		if (d < best) {
			best = d;
			chosen = c;
			*loc = cl;
		}
	}
	return chosen < 0 ? -EAGAIN : 0;
}

static int read_pieces(struct eng_array *a, struct member_ioq *q, uint8_t *buf, uint64_t lsec,
                       uint64_t nsec)
{
	struct member_io io[FAST_BATCH];
	bool mirror = a->ncopies > 1; /* pick the copy nearest the member's head */
	while (nsec) {
		int n = 0;
		while (nsec && n < FAST_BATCH) {
			struct layout_loc loc;
			uint64_t len;
			if (a->ops->map(&a->geo, lsec, 0, &loc, &len) < 0)
				return -EAGAIN;
			if (len > nsec)
				len = nsec;
			if (len > FAST_MAX_SEC)
				len = FAST_MAX_SEC;
			if (mirror) {
				if (pick_copy(a, lsec, &loc) < 0)
					return -EAGAIN;
				__atomic_store_n(&a->mem[a->slot[loc.role]]->head, loc.sector + len,
				                 __ATOMIC_RELAXED);
			}
			if (loc.role < 0 || loc.role >= a->geo.raid_disks || a->slot[loc.role] < 0)
				return -EAGAIN;
			const struct eng_member *em = a->mem[a->slot[loc.role]];
			memset(&io[n], 0, sizeof(io[n]));
			io[n].m = em->m;
			io[n].op = MEMBER_OP_READ;
			io[n].buf = buf;
			io[n].len = len * 512;
			io[n].off = (em->sb.data_offset + loc.sector) * 512;
			n++;
			buf += len * 512;
			lsec += len;
			nsec -= len;
		}
		eng_ioq_run(a, q, io, n);
		for (int i = 0; i < n; i++)
			if (!member_io_done(&io[i]))
				return -EAGAIN;
	}
	return 0;
}

int eng_fast_read(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	if (pthread_rwlock_tryrdlock(&a->iolock) != 0)
		return -EAGAIN; /* a writer or a state change holds it: queue on the mutex */
	int rc = -EAGAIN;
	struct eng_ioq_node *node = NULL;
	if (healthy(a)) {
		struct member_ioq *q = ioq_get(a, &node);
		if (q) {
			rc = read_pieces(a, q, buf, lsec, nsec);
			ioq_put(a, node);
			/* A cache changes only under the state lock held
			 * exclusively: what it holds now is stable. */
			if (rc == 0 && a->pers->overlay)
				a->pers->overlay(a, buf, lsec, nsec);
		}
	}
	pthread_rwlock_unlock(&a->iolock);
	return rc;
}

/* Lock buckets of the personality's lock units (stripes, 1 MiB regions)
 * the range touches, as a bit mask; taken in ascending bucket order, so two
 * writers never wait on each other crosswise. */
static uint64_t lock_mask(const struct eng_array *a, uint64_t lsec, uint64_t nsec)
{
	uint64_t unit = a->pers->lock_unit(a);
	uint64_t k0 = lsec / unit, k1 = (lsec + nsec - 1) / unit;
	if (k1 - k0 + 1 >= ENG_STRIPE_LOCKS)
		return ~0ull;
	uint64_t mask = 0;
	for (uint64_t k = k0; k <= k1; k++)
		mask |= 1ull << (k % ENG_STRIPE_LOCKS);
	return mask;
}

static bool log_ready(struct eng_array *a, uint64_t lsec, uint64_t nsec)
{
	return !a->log || !a->log->write_ready || a->log->write_ready(a, lsec, nsec);
}

int eng_fast_write(struct eng_array *a, const uint8_t *buf, uint64_t lsec, uint64_t nsec,
                   bool *redo)
{
	*redo = false;
	bool bits_missing = false, bits_set = false;
again:
	if (pthread_rwlock_tryrdlock(&a->iolock) != 0)
		return -EAGAIN;
	/* Marking dirty writes superblocks (locked path); a resync in progress
	 * or parity not trusted needs the locked path's choices; the log may
	 * need to go first (a write-intent bitmap: its bits set, on disk). */
	if (!a->dirty || !healthy(a) || a->resync_offset != MD_RESYNC_NONE ||
	    a->action != URAID_SYNC_IDLE || (bits_missing = !log_ready(a, lsec, nsec))) {
		pthread_rwlock_unlock(&a->iolock);
		/* Only the log not ready: prepare it without the exclusive lock
		 * (bitmap_fast.c) and write shared, rather than the whole write
		 * locked. */
		if (bits_missing && !bits_set && a->log->write_prepare &&
		    a->log->write_prepare(a, lsec, nsec) == 0) {
			bits_set = true;
			goto again;
		}
		return -EAGAIN;
	}
	/* A write cache may want this write (locked path). */
	if (a->pers->fast_write_ok && !a->pers->fast_write_ok(a, lsec, nsec)) {
		pthread_rwlock_unlock(&a->iolock);
		return -EAGAIN;
	}
	struct eng_ioq_node *node = NULL;
	struct member_ioq *q = ioq_get(a, &node);
	if (!q) {
		pthread_rwlock_unlock(&a->iolock);
		return -EAGAIN;
	}
	__atomic_store_n(&a->last_write_ns, eng_now_ns(), __ATOMIC_RELAXED);
	uint64_t mask = lock_mask(a, lsec, nsec);
	for (int i = 0; i < ENG_STRIPE_LOCKS; i++)
		if (mask & (1ull << i))
			pthread_mutex_lock(&a->stripe_mu[i]);
	struct eng_req rq = {.q = q, .shared = true};
	int rc = a->pers->write(a, &rq, buf, lsec, nsec);
	for (int i = ENG_STRIPE_LOCKS - 1; i >= 0; i--)
		if (mask & (1ull << i))
			pthread_mutex_unlock(&a->stripe_mu[i]);
	ioq_put(a, node);
	pthread_rwlock_unlock(&a->iolock);
	if (rc == -EBUSY) {
		/* Redo locked; it handles the errors (fails members). */
		*redo = true;
		return -EAGAIN;
	}
	return rc;
}
