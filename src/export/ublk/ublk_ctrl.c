/* The ublk control commands (ublk_int.h): each one a uring_cmd on
 * /dev/ublk-control through a small ring of its own, with 128-byte SQEs
 * (the command header lives in the SQE's command area). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/modprobe.h"
#include "export/ublk/ublk_int.h"

#ifdef HAVE_URING
#include <liburing.h>

int ublk_ctrl(unsigned op, int dev_id, void *buf, uint16_t len, uint64_t data0)
{
	int fd = open(UBLK_CONTROL, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct io_uring ring;
	int rc = io_uring_queue_init(4, &ring, IORING_SETUP_SQE128);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	if (!sqe) {
		io_uring_queue_exit(&ring);
		close(fd);
		return -EBUSY;
	}
	struct ublksrv_ctrl_cmd c = {
	    .dev_id = (uint32_t)dev_id,
	    .queue_id = (uint16_t)-1,
	    .len = len,
	    .addr = (uint64_t)(uintptr_t)buf,
	    .data = {data0, 0},
	};
	ublk_sqe_clear(sqe, &c, sizeof(c));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = op;
	rc = io_uring_submit(&ring);
	if (rc >= 0) {
		struct io_uring_cqe *cqe;
		do
			rc = io_uring_wait_cqe(&ring, &cqe);
		while (rc == -EINTR);
		if (rc == 0) {
			rc = cqe->res;
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	io_uring_queue_exit(&ring);
	close(fd);
	return rc;
}

int ublk_available(char *why, size_t len)
{
	int fd = open(UBLK_CONTROL, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* The module may be there but not loaded: one try. */
		util_modprobe("ublk_drv");
		for (int i = 0; i < 20 && fd < 0; i++) {
			fd = open(UBLK_CONTROL, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				usleep(50000);
		}
	}
	if (fd < 0) {
		int e = errno;
		snprintf(why, len, "%s: %s (no ublk_drv in this kernel?)", UBLK_CONTROL,
		         strerror(e));
		return -e;
	}
	close(fd);
	/* io_uring may be disabled (kernel.io_uring_disabled). */
	struct io_uring ring;
	int rc = io_uring_queue_init(4, &ring, IORING_SETUP_SQE128);
	if (rc < 0) {
		snprintf(why, len, "io_uring with 128-byte entries: %s", strerror(-rc));
		return rc;
	}
	io_uring_queue_exit(&ring);
	return 0;
}

int ublk_dev_state(int dev_id, int *pid)
{
	struct ublksrv_ctrl_dev_info info;
	memset(&info, 0, sizeof(info));
	int rc = ublk_ctrl(UBLK_U_CMD_GET_DEV_INFO, dev_id, &info, sizeof(info), 0);
	if (rc < 0)
		return rc == -ENOENT ? -ENODEV : rc;
	if (pid)
		*pid = info.ublksrv_pid;
	return info.state;
}

int ublk_dev_remove(int dev_id, char *err, size_t errlen)
{
	int rc = ublk_ctrl(UBLK_U_CMD_STOP_DEV, dev_id, NULL, 0, 0);
	if (rc < 0 && rc != -ENODEV && rc != -ENOENT) {
		snprintf(err, errlen, "ublk device %d: stop: %s", dev_id, strerror(-rc));
		return rc;
	}
	rc = ublk_ctrl(UBLK_U_CMD_DEL_DEV, dev_id, NULL, 0, 0);
	if (rc < 0 && rc != -ENODEV && rc != -ENOENT) {
		snprintf(err, errlen, "ublk device %d: delete: %s", dev_id, strerror(-rc));
		return rc;
	}
	return 0;
}

#else /* !HAVE_URING */

int ublk_ctrl(unsigned op, int dev_id, void *buf, uint16_t len, uint64_t data0)
{
	(void)op, (void)dev_id, (void)buf, (void)len, (void)data0;
	return -EOPNOTSUPP;
}

int ublk_available(char *why, size_t len)
{
	snprintf(why, len, "uraid was built without liburing");
	return -EOPNOTSUPP;
}

int ublk_dev_state(int dev_id, int *pid)
{
	(void)dev_id, (void)pid;
	return -EOPNOTSUPP;
}

int ublk_dev_remove(int dev_id, char *err, size_t errlen)
{
	snprintf(err, errlen, "ublk device %d: uraid was built without liburing", dev_id);
	return -EOPNOTSUPP;
}

#endif
