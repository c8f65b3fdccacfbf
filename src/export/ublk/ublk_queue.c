/* One ublk hardware queue (ublk_int.h): its own io_uring on /dev/ublkcN,
 * the queue's request descriptors mapped read-only from the driver, one
 * data buffer per tag. Every tag waits in a FETCH_REQ; when the kernel hands
 * a request over (the descriptor at the tag's index says what; a write's
 * data is already in the tag's buffer), it is served here by calling the
 * array, and COMMIT_AND_FETCH_REQ returns the result (bytes, or a negative
 * errno: an I/O error for the kernel) and waits for the next. The queue ends
 * when ublk_export_stop wakes it (an eventfd polled in the same ring) or the
 * kernel aborts the tags (UBLK_IO_RES_ABORT: the device is going away). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "export/ublk/ublk_int.h"
#include "uraid.h"

#ifdef HAVE_URING
#include <liburing.h>

#define WAKE_TAG UINT64_MAX

/* Bytes of queue q's descriptor area, and where queue q's area starts in
 * the character device (each queue has room for the largest depth). */
static size_t desc_bytes(int depth)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	return ((size_t)depth * sizeof(struct ublksrv_io_desc) + pg - 1) / pg * pg;
}

static int queue_cmd(struct io_uring *ring, struct ublk_queue *q, unsigned op, int tag,
                     int32_t result, void *buf)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	if (!sqe) {
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
		if (!sqe)
			return -EBUSY;
	}
	struct ublksrv_io_cmd c = {
	    .q_id = (uint16_t)q->id,
	    .tag = (uint16_t)tag,
	    .result = result,
	    .addr = (uint64_t)(uintptr_t)buf,
	};
	ublk_sqe_clear(sqe, &c, sizeof(c));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = q->e->cdev;
	sqe->cmd_op = op;
	sqe->user_data = (uint64_t)tag;
	return 0;
}

static int arm_wake(struct io_uring *ring, struct ublk_queue *q)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	if (!sqe)
		return -EBUSY;
	ublk_sqe_clear(sqe, "", 0); /* prep leaves the second half as it was */
	io_uring_prep_poll_add(sqe, q->wake_fd, POLLIN);
	sqe->user_data = WAKE_TAG;
	return 0;
}

/* Serve one request: bytes done, or a negative errno. */
static int32_t serve(struct uraid_array *a, const struct ublksrv_io_desc *d, void *buf)
{
	uint64_t off = d->start_sector << 9;
	size_t len = (size_t)d->nr_sectors << 9;
	int rc;
	switch (ublksrv_get_op(d)) {
	case UBLK_IO_OP_READ: rc = uraid_read(a, buf, len, off); break;
	case UBLK_IO_OP_WRITE:
		rc = uraid_write(a, buf, len, off);
		if (rc == 0 && (ublksrv_get_flags(d) & UBLK_IO_F_FUA))
			rc = uraid_flush(a);
		break;
	case UBLK_IO_OP_FLUSH:
		rc = uraid_flush(a);
		len = 0;
		break;
	case UBLK_IO_OP_DISCARD: rc = uraid_discard(a, off, len); break;
	case UBLK_IO_OP_WRITE_ZEROES:
		/* REQ_NOUNMAP: the range must stay allocated */
		rc = uraid_write_zeroes(
		    a, off, len,
		    (ublksrv_get_flags(d) & UBLK_IO_F_NOUNMAP) ? 0 : URAID_ZERO_MAY_TRIM);
		break;
	default: return -EOPNOTSUPP;
	}
	return rc < 0 ? rc : (int32_t)len;
}

static void *worker(void *arg)
{
	struct ublk_queue *q = arg;
	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->todo_n && !q->quit)
			pthread_cond_wait(&q->cond, &q->lock);
		if (q->quit)
			break;
		int tag = q->todo[q->todo_head];
		q->todo_head = (q->todo_head + 1) % q->e->depth;
		q->todo_n--;
		pthread_mutex_unlock(&q->lock);
		int32_t res = serve(q->e->a, &q->desc[tag], q->bufs[tag]);
		pthread_mutex_lock(&q->lock);
		q->done_tag[q->done_n] = tag;
		q->done_res[q->done_n++] = res;
		uint64_t one = 1;
		if (write(q->wake_fd, &one, sizeof(one)) < 0) {
			/* the counter is already set: the queue thread wakes anyway */
		}
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static int start_workers(struct ublk_queue *q)
{
	int depth = q->e->depth;
	q->todo = calloc((size_t)depth, sizeof(int));
	q->done_tag = calloc((size_t)depth, sizeof(int));
	q->done_res = calloc((size_t)depth, sizeof(int32_t));
	q->workers = calloc((size_t)(q->e->workers ? q->e->workers : 1), sizeof(pthread_t));
	if (!q->todo || !q->done_tag || !q->done_res || !q->workers)
		return -ENOMEM;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	for (int i = 0; i < q->e->workers; i++) {
		if (pthread_create(&q->workers[i], NULL, worker, q))
			return -EAGAIN;
		q->nworkers++;
	}
	return 0;
}

static void end_workers(struct ublk_queue *q)
{
	if (q->todo && q->done_tag && q->done_res && q->workers) {
		pthread_mutex_lock(&q->lock);
		q->quit = true;
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
		for (int i = 0; i < q->nworkers; i++)
			pthread_join(q->workers[i], NULL);
		pthread_mutex_destroy(&q->lock);
		pthread_cond_destroy(&q->cond);
	}
	free(q->todo);
	free(q->done_tag);
	free(q->done_res);
	free(q->workers);
}

/* A request from the kernel: to a worker, or served here without any. */
static int dispatch(struct io_uring *ring, struct ublk_queue *q, int tag)
{
	if (!q->nworkers)
		return queue_cmd(ring, q, UBLK_U_IO_COMMIT_AND_FETCH_REQ, tag,
		                 serve(q->e->a, &q->desc[tag], q->bufs[tag]), q->bufs[tag]);
	pthread_mutex_lock(&q->lock);
	q->todo[(q->todo_head + q->todo_n++) % q->e->depth] = tag;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

/* The wake-up: commit what the workers finished, and wait for the next. */
static int collect(struct io_uring *ring, struct ublk_queue *q, int *live)
{
	uint64_t v;
	if (read(q->wake_fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing counted since the last read */
	}
	if (q->nworkers) {
		int tags[UBLK_MAX_QUEUE_DEPTH], n;
		int32_t res[UBLK_MAX_QUEUE_DEPTH];
		pthread_mutex_lock(&q->lock);
		n = q->done_n;
		memcpy(tags, q->done_tag, (size_t)n * sizeof(int));
		memcpy(res, q->done_res, (size_t)n * sizeof(int32_t));
		q->done_n = 0;
		pthread_mutex_unlock(&q->lock);
		for (int i = 0; i < n; i++)
			if (queue_cmd(ring, q, UBLK_U_IO_COMMIT_AND_FETCH_REQ, tags[i], res[i],
			              q->bufs[tags[i]]) < 0)
				(*live)--;
	}
	return arm_wake(ring, q);
}

void *ublk_queue_run(void *arg)
{
	struct ublk_queue *q = arg;
	struct ublk_export *e = q->e;
	struct io_uring ring;
	void **bufs = NULL;
	int depth = e->depth, live = 0;
	size_t dlen = desc_bytes(depth);
	off_t doff =
	    UBLKSRV_CMD_BUF_OFFSET + (off_t)q->id * (off_t)desc_bytes(UBLK_MAX_QUEUE_DEPTH);
	int rc = io_uring_queue_init((unsigned)depth + 2, &ring, IORING_SETUP_SQE128);
	if (rc < 0) {
		q->err = rc;
		atomic_store(&q->ready, true);
		atomic_store(&q->finished, true);
		return NULL;
	}
	const struct ublksrv_io_desc *desc =
	    mmap(NULL, dlen, PROT_READ, MAP_SHARED | MAP_POPULATE, e->cdev, doff);
	if (desc == MAP_FAILED) {
		rc = -errno;
		desc = NULL;
		goto out;
	}
	bufs = calloc((size_t)depth, sizeof(*bufs));
	if (!bufs) {
		rc = -ENOMEM;
		goto out;
	}
	q->desc = desc;
	q->bufs = bufs;
	rc = start_workers(q);
	if (rc < 0)
		goto out;
	for (int t = 0; t < depth; t++) {
		if (posix_memalign(&bufs[t], 4096, e->max_io)) {
			rc = -ENOMEM;
			goto out;
		}
		rc = queue_cmd(&ring, q, UBLK_U_IO_FETCH_REQ, t, -1, bufs[t]);
		if (rc < 0)
			goto out;
		live++;
	}
	rc = arm_wake(&ring, q);
	if (rc < 0)
		goto out;
	rc = io_uring_submit(&ring);
	if (rc < 0)
		goto out;
	rc = 0;
	atomic_store(&q->ready, true);
	while (live > 0 && !atomic_load(&e->stopping)) {
		struct io_uring_cqe *cqe;
		int w = io_uring_submit_and_wait(&ring, 1);
		if (w < 0 && w != -EINTR && w != -EBUSY) {
			rc = w;
			break;
		}
		unsigned head, seen = 0;
		io_uring_for_each_cqe(&ring, head, cqe)
		{
			seen++;
			if (cqe->user_data == WAKE_TAG) {
				/* and the loop condition looks at `stopping` */
				if (collect(&ring, q, &live) < 0 && !q->err)
					q->err = -EBUSY;
				continue;
			}
			int tag = (int)cqe->user_data;
			if (tag < 0 || tag >= depth)
				continue;
			if (cqe->res != UBLK_IO_RES_OK) {
				/* UBLK_IO_RES_ABORT, or a refused command: this tag is
				 * done. */
				if (cqe->res != UBLK_IO_RES_ABORT && !q->err)
					q->err = cqe->res;
				live--;
				continue;
			}
			if (dispatch(&ring, q, tag) < 0)
				live--;
		}
		io_uring_cq_advance(&ring, seen);
	}
out:
	if (rc < 0 && !q->err)
		q->err = rc;
	atomic_store(&q->ready, true);
	end_workers(q);
	/* Exiting the ring cancels the tags still waiting in the kernel. */
	io_uring_queue_exit(&ring);
	if (desc)
		munmap((void *)desc, dlen);
	if (bufs)
		for (int t = 0; t < depth; t++)
			free(bufs[t]);
	free(bufs);
	atomic_store(&q->finished, true);
	return NULL;
}

#else

void *ublk_queue_run(void *arg)
{
	struct ublk_queue *q = arg;
	q->err = -EOPNOTSUPP;
	atomic_store(&q->ready, true);
	atomic_store(&q->finished, true);
	return NULL;
}

#endif
