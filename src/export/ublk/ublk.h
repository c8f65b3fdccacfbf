/* The ublk export (src/export/ublk/): an array as a kernel block device
 * /dev/ublkbN served from this process through the kernel's ublk driver
 * (linux/ublk_cmd.h, Linux 6.0+). An export layer beside plugins/: it calls
 * the array only through include/uraid.h.
 *
 * ublk_ctrl.c issues the control commands on /dev/ublk-control (add, set
 * params, start, stop, delete, user recovery, device info); ublk_queue.c runs
 * one thread per hardware queue, each with its own io_uring on /dev/ublkcN:
 * every tag waits in a FETCH_REQ, the request is served by calling
 * uraid_read / uraid_write / uraid_flush directly in one of the queue's
 * worker threads (so one queue has several requests in the engine at a
 * time), and its result goes back with COMMIT_AND_FETCH_REQ. Without liburing (HAVE_URING)
 * every call returns -EOPNOTSUPP. */
#ifndef URAID_EXPORT_UBLK_H
#define URAID_EXPORT_UBLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct uraid_array;
struct ublk_export;

struct ublk_export_opts {
	int queues;      /* hardware queues, one thread each; 0: online CPUs, at most 4 */
	int depth;       /* tags per queue; 0: 64 */
	int workers;     /* threads per queue serving requests; 0: 4, -1: none (the queue's own) */
	uint32_t max_io; /* largest request in bytes (power of two); 0: 512 KiB */
	/* Geometry the kernel reports (powers of two, bytes); 0: from the
	 * array's status (logical = physical = its I/O unit, io_min = chunk,
	 * io_opt = the largest power of two dividing the stripe width). */
	uint32_t logical_bs, physical_bs, io_min, io_opt;
	/* Take over device `dev_id` whose server died (START/END_USER_RECOVERY)
	 * instead of adding a new one; -1 or 0 with recover false: a new one. */
	bool recover;
	int dev_id;
};

/* Add the device, set its parameters, start the queue threads and the
 * device: on return 0 /dev/ublkbN serves the array. A negative errno with
 * err naming the step otherwise (nothing left behind). */
int ublk_export_start(struct uraid_array *a, const struct ublk_export_opts *o,
                      struct ublk_export **out, char *err, size_t errlen);
int ublk_export_dev_id(const struct ublk_export *e);
/* The device asked for recovery at add: it survives a dead server with its
 * I/O failing until a new server recovers it. */
bool ublk_export_recoverable(const struct ublk_export *e);
/* A queue thread ended on its own (the kernel aborted the device). */
bool ublk_export_dead(struct ublk_export *e);
/* Stop the device (in-flight requests finish first), end the queue threads,
 * delete the device, free e. 0 or the first negative errno. */
int ublk_export_stop(struct ublk_export *e);

/* /dev/ublk-control can be opened (the module is loaded, `modprobe ublk_drv`
 * tried once when it is not): 0, else a negative errno and why. */
int ublk_available(char *why, size_t len);
/* Device dev_id's state: UBLK_S_DEV_DEAD 0, LIVE 1, QUIESCED 2 (from
 * GET_DEV_INFO), its server's pid into *pid (may be NULL); -ENODEV when
 * there is no such device. */
int ublk_dev_state(int dev_id, int *pid);
/* Stop and delete device dev_id (its server gone): 0, or a negative errno. */
int ublk_dev_remove(int dev_id, char *err, size_t errlen);

#endif
