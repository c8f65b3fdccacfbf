/* Inside the ublk export (ublk.h): the control commands (ublk_ctrl.c) and the
 * queue threads (ublk_queue.c), shared by ublk_export.c. */
#ifndef URAID_EXPORT_UBLK_INT_H
#define URAID_EXPORT_UBLK_INT_H

#include <linux/ioctl.h>
#include <linux/ublk_cmd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "export/ublk/ublk.h"

/* Older UAPI headers (before 6.3) lack the ioctl-encoded opcodes and the
 * later feature bits; the kernel's values. Every kernel with ublk takes the
 * encoded form, so it is the one used. */
#ifndef UBLK_U_CMD_ADD_DEV
#define UBLK_U_CMD_GET_DEV_INFO _IOR('u', UBLK_CMD_GET_DEV_INFO, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_ADD_DEV      _IOWR('u', UBLK_CMD_ADD_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_DEL_DEV      _IOWR('u', UBLK_CMD_DEL_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_START_DEV    _IOWR('u', UBLK_CMD_START_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_STOP_DEV     _IOWR('u', UBLK_CMD_STOP_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_SET_PARAMS   _IOWR('u', UBLK_CMD_SET_PARAMS, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_START_USER_RECOVERY \
	_IOWR('u', UBLK_CMD_START_USER_RECOVERY, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_END_USER_RECOVERY _IOWR('u', UBLK_CMD_END_USER_RECOVERY, struct ublksrv_ctrl_cmd)
#define UBLK_U_IO_FETCH_REQ          _IOWR('u', UBLK_IO_FETCH_REQ, struct ublksrv_io_cmd)
#define UBLK_U_IO_COMMIT_AND_FETCH_REQ \
	_IOWR('u', UBLK_IO_COMMIT_AND_FETCH_REQ, struct ublksrv_io_cmd)
#endif
#ifndef UBLK_U_CMD_GET_FEATURES
#define UBLK_U_CMD_GET_FEATURES _IOR('u', 0x13, struct ublksrv_ctrl_cmd)
#endif
#ifndef UBLK_F_CMD_IOCTL_ENCODE
#define UBLK_F_CMD_IOCTL_ENCODE (1ULL << 6)
#endif
#ifndef UBLK_F_USER_RECOVERY_FAIL_IO
#define UBLK_F_USER_RECOVERY_FAIL_IO (1ULL << 9)
#endif

#define UBLK_CONTROL "/dev/ublk-control"

/* A 128-byte SQE as two halves: the usual 64 bytes, then the command area
 * (cleared, then filled with `cmd`). Through an integer so the compiler
 * does not hold the struct's declared size against it. */
#define UBLK_SQE_BYTES 128
static inline void ublk_sqe_clear(void *sqe, const void *cmd, size_t cmdlen)
{
	unsigned char *p = (unsigned char *)(uintptr_t)sqe;
	memset(p, 0, UBLK_SQE_BYTES);
	memcpy(p + 48, cmd, cmdlen); /* offsetof(struct io_uring_sqe, cmd) */
}

/* One control command on /dev/ublk-control: op (UBLK_U_CMD_*), the device,
 * a buffer the command reads or fills (addr/len), data[0]. The kernel's
 * result (>= 0) or a negative errno. */
int ublk_ctrl(unsigned op, int dev_id, void *buf, uint16_t len, uint64_t data0);

struct ublk_export;
struct ublk_queue {
	struct ublk_export *e;
	int id;
	pthread_t thread;
	bool started;
	int wake_fd;          /* eventfd: written by ublk_export_stop */
	atomic_bool ready;    /* every tag fetched (or the thread failed) */
	atomic_bool finished; /* the thread returned */
	int err;              /* its first error */
	/* Its workers (ublk_queue.c): the queue thread hands each request
	 * over (todo, a FIFO of tags), a worker serves it and leaves the
	 * result in done, then writes wake_fd; the queue thread commits it,
	 * since the kernel takes a queue's commands from its thread only. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int *todo, todo_head, todo_n;
	int *done_tag, done_n;
	int32_t *done_res;
	bool quit;
	int nworkers;
	pthread_t *workers;
	const struct ublksrv_io_desc *desc;
	void **bufs;
};

struct ublk_export {
	struct uraid_array *a;
	int dev_id;
	int cdev; /* /dev/ublkcN */
	int queues, depth, workers;
	uint32_t max_io;
	bool recoverable;
	atomic_bool stopping;
	struct ublk_queue *q;
};

/* Thread body of queue q (ublk_queue.c): fetches, serves, commits until
 * the device is stopped or aborted. */
void *ublk_queue_run(void *arg);

#endif
