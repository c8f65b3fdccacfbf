/* Starting and stopping a ublk export (ublk.h): the control sequence around
 * the queue threads. New device: ADD_DEV, SET_PARAMS, the queue threads
 * fetch every tag, START_DEV (the kernel waits for those fetches, then adds
 * /dev/ublkbN). Recovery of a device whose server died: START_USER_RECOVERY,
 * the threads, END_USER_RECOVERY. Stop: STOP_DEV (the disk goes, in-flight
 * requests are served first), the threads woken and joined, /dev/ublkcN
 * closed, DEL_DEV. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "export/ublk/ublk_int.h"
#include "uraid.h"

#define UBLK_MAX_DISCARD_SECTORS (1u << 21) /* 1 GiB */

static unsigned shift_of(uint64_t v)
{
	unsigned s = 0;
	while (s < 63 && (1ull << (s + 1)) <= v)
		s++;
	return s;
}

static uint64_t pow2_divisor(uint64_t v)
{
	return v & (~v + 1);
}

static int set_params(struct ublk_export *e, const struct ublk_export_opts *o,
                      const struct uraid_status *st, char *err, size_t errlen)
{
	uint32_t unit = st->block_bytes > 512 ? st->block_bytes : 512;
	uint32_t lbs = o->logical_bs ? o->logical_bs : unit;
	if (lbs > 4096) /* the kernel takes at most a page */
		lbs = 4096;
	uint32_t pbs = o->physical_bs > lbs ? o->physical_bs : lbs;
	uint64_t chunk = (uint64_t)st->chunk_sectors * 512;
	uint64_t iomin = o->io_min ? o->io_min : chunk ? pow2_divisor(chunk) : pbs;
	uint64_t ioopt = o->io_opt ? o->io_opt : iomin;
	if (iomin < pbs)
		iomin = pbs;
	if (ioopt < iomin)
		ioopt = iomin;
	struct ublk_params p;
	memset(&p, 0, sizeof(p));
	p.len = sizeof(p);
	p.types = UBLK_PARAM_TYPE_BASIC | UBLK_PARAM_TYPE_DISCARD;
	/* A volatile cache with FUA: the kernel sends flushes and FUA writes,
	 * which end in uraid_flush (the members' fsync). */
	p.basic.attrs = UBLK_ATTR_VOLATILE_CACHE | UBLK_ATTR_FUA;
	p.basic.logical_bs_shift = (uint8_t)shift_of(lbs);
	p.basic.physical_bs_shift = (uint8_t)shift_of(pbs);
	p.basic.io_min_shift = (uint8_t)shift_of(iomin);
	p.basic.io_opt_shift = (uint8_t)shift_of(ioopt);
	p.basic.max_sectors = e->max_io >> 9;
	p.basic.dev_sectors = uraid_size(e->a) >> 9;
	/* Discard and write-zeroes go to uraid_discard / uraid_write_zeroes,
	 * which take any 512-byte aligned range (a piece of a stripe is
	 * written as zeros, whole stripes given back): the granularity is
	 * the physical block. One range per request (the driver passes a
	 * request's start and length only); a bound on each so that one
	 * request of a whole-device discard stays short. */
	p.discard.discard_granularity = pbs;
	p.discard.max_discard_sectors = UBLK_MAX_DISCARD_SECTORS;
	p.discard.max_write_zeroes_sectors = UBLK_MAX_DISCARD_SECTORS;
	p.discard.max_discard_segments = 1;
	int rc = ublk_ctrl(UBLK_U_CMD_SET_PARAMS, e->dev_id, &p, sizeof(p), 0);
	if (rc < 0)
		snprintf(err, errlen, "ublk device %d: set params: %s", e->dev_id, strerror(-rc));
	return rc < 0 ? rc : 0;
}

static int open_cdev(struct ublk_export *e, char *err, size_t errlen)
{
	char path[64];
	snprintf(path, sizeof(path), "/dev/ublkc%d", e->dev_id);
	/* devtmpfs adds the node shortly after ADD_DEV. */
	for (int i = 0; i < 100; i++) {
		e->cdev = open(path, O_RDWR | O_CLOEXEC);
		if (e->cdev >= 0 || errno != ENOENT)
			break;
		usleep(20000);
	}
	if (e->cdev < 0) {
		int rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	return 0;
}

static void end_queues(struct ublk_export *e)
{
	atomic_store(&e->stopping, true);
	for (int i = 0; i < e->queues; i++) {
		struct ublk_queue *q = &e->q[i];
		if (q->wake_fd >= 0) {
			uint64_t one = 1;
			if (write(q->wake_fd, &one, sizeof(one)) < 0) {
				/* an eventfd write only fails on overflow */
			}
		}
	}
	for (int i = 0; i < e->queues; i++) {
		struct ublk_queue *q = &e->q[i];
		if (q->started)
			pthread_join(q->thread, NULL);
		q->started = false;
		if (q->wake_fd >= 0)
			close(q->wake_fd);
		q->wake_fd = -1;
	}
}

static int start_queues(struct ublk_export *e, char *err, size_t errlen)
{
	e->q = calloc((size_t)e->queues, sizeof(*e->q));
	if (!e->q) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < e->queues; i++) {
		struct ublk_queue *q = &e->q[i];
		q->e = e;
		q->id = i;
		q->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (q->wake_fd < 0 || pthread_create(&q->thread, NULL, ublk_queue_run, q)) {
			snprintf(err, errlen, "ublk queue %d: cannot start its thread", i);
			return -EAGAIN;
		}
		q->started = true;
	}
	for (int i = 0; i < e->queues; i++) {
		while (!atomic_load(&e->q[i].ready))
			usleep(1000);
		if (e->q[i].err) {
			snprintf(err, errlen, "ublk queue %d: %s", i, strerror(-e->q[i].err));
			return e->q[i].err;
		}
	}
	return 0;
}

static void teardown(struct ublk_export *e, bool added)
{
	if (e->q)
		end_queues(e);
	if (e->cdev >= 0)
		close(e->cdev);
	if (added) {
		char err[128];
		ublk_dev_remove(e->dev_id, err, sizeof(err));
	}
	free(e->q);
	free(e);
}

int ublk_export_start(struct uraid_array *a, const struct ublk_export_opts *o,
                      struct ublk_export **out, char *err, size_t errlen)
{
	int rc = ublk_available(err, errlen);
	if (rc < 0)
		return rc;
	struct ublk_export *e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	e->a = a;
	e->cdev = -1;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	e->queues = o->queues > 0 ? o->queues : ncpu > 4 ? 4 : ncpu > 0 ? (int)ncpu : 1;
	e->depth = o->depth > 0 ? o->depth : 64;
	e->workers = o->workers > 0 ? o->workers : o->workers < 0 ? 0 : 4;
	if (e->workers > e->depth)
		e->workers = e->depth;
	e->max_io = o->max_io ? o->max_io : 512u << 10;
	struct uraid_status st;
	uraid_status(a, &st);
	struct ublksrv_ctrl_dev_info info;
	memset(&info, 0, sizeof(info));
	bool added = false;
	if (o->recover) {
		/* The device keeps its queues and limits: take them. */
		e->dev_id = o->dev_id;
		rc = ublk_ctrl(UBLK_U_CMD_GET_DEV_INFO, e->dev_id, &info, sizeof(info), 0);
		if (rc >= 0) {
			e->queues = info.nr_hw_queues;
			e->depth = info.queue_depth;
			e->max_io = info.max_io_buf_bytes;
			e->recoverable = true;
			rc = ublk_ctrl(UBLK_U_CMD_START_USER_RECOVERY, e->dev_id, NULL, 0, 0);
		}
		if (rc < 0) {
			snprintf(err, errlen, "ublk device %d: start recovery: %s", e->dev_id,
			         strerror(-rc));
			teardown(e, false);
			return rc;
		}
	} else {
		uint64_t features = 0;
		if (ublk_ctrl(UBLK_U_CMD_GET_FEATURES, -1, &features, sizeof(features), 0) < 0)
			features = 0;
		info.nr_hw_queues = (uint16_t)e->queues;
		info.queue_depth = (uint16_t)e->depth;
		info.max_io_buf_bytes = e->max_io;
		info.dev_id = (uint32_t)-1;
		info.ublksrv_pid = getpid();
		/* Recovery only where a dead server's I/O fails at once (the
		 * kernel would queue it otherwise, hanging every reader). */
		const uint64_t rec = UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_FAIL_IO;
		if ((features & rec) == rec)
			info.flags |= rec;
		rc = ublk_ctrl(UBLK_U_CMD_ADD_DEV, -1, &info, sizeof(info), 0);
		if (rc < 0) {
			snprintf(err, errlen, "ublk: add device: %s", strerror(-rc));
			teardown(e, false);
			return rc;
		}
		e->dev_id = (int)info.dev_id;
		e->recoverable = (info.flags & rec) == rec;
		added = true;
		rc = set_params(e, o, &st, err, errlen);
	}
	if (rc == 0)
		rc = open_cdev(e, err, errlen);
	if (rc == 0)
		rc = start_queues(e, err, errlen);
	if (rc == 0) {
		unsigned op = o->recover ? UBLK_U_CMD_END_USER_RECOVERY : UBLK_U_CMD_START_DEV;
		rc = ublk_ctrl(op, e->dev_id, NULL, 0, (uint64_t)getpid());
		if (rc < 0)
			snprintf(err, errlen, "ublk device %d: %s: %s", e->dev_id,
			         o->recover ? "end recovery" : "start", strerror(-rc));
	}
	if (rc < 0) {
		teardown(e, added);
		return rc;
	}
	*out = e;
	return 0;
}

int ublk_export_dev_id(const struct ublk_export *e)
{
	return e->dev_id;
}

bool ublk_export_recoverable(const struct ublk_export *e)
{
	return e->recoverable;
}

bool ublk_export_dead(struct ublk_export *e)
{
	for (int i = 0; i < e->queues; i++)
		if (atomic_load(&e->q[i].finished))
			return true;
	return false;
}

int ublk_export_stop(struct ublk_export *e)
{
	int rc = ublk_ctrl(UBLK_U_CMD_STOP_DEV, e->dev_id, NULL, 0, 0);
	if (rc == -ENODEV || rc == -ENOENT)
		rc = 0;
	end_queues(e);
	close(e->cdev);
	e->cdev = -1;
	int drc = ublk_ctrl(UBLK_U_CMD_DEL_DEV, e->dev_id, NULL, 0, 0);
	if (drc < 0 && drc != -ENODEV && drc != -ENOENT && rc == 0)
		rc = drc;
	free(e->q);
	free(e);
	return rc;
}
