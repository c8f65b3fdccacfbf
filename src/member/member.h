/* Member I/O: the lowest layer. A member is anything that stores bytes at
 * offsets (a file, a block device, memory, a fault-injecting wrapper, later a
 * simulated disk or a remote NBD export) behind one small ops table.
 *
 * Offsets and lengths are bytes. Reads and writes return the number of bytes
 * transferred (short only at end of device) or a negative errno.
 *
 * End of a member (m->size): reads return a short count (0 at or past the
 * end); an op-level write is cut short at the end and fails with -ENOSPC at or
 * past it, while member_write() and member_ioq_run() refuse a write that does
 * not fit (-ENOSPC) without writing any of it.
 *
 * O_DIRECT members: requests whose buffer, offset and length are aligned
 * (member_aligned) go straight to the device; others are bounced through an
 * aligned buffer, and an unaligned write reads, patches and rewrites the
 * edge blocks (serialized against other unaligned writes to the same member,
 * not against concurrent aligned writes to the same block).
 */
#ifndef URAID_MEMBER_H
#define URAID_MEMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct member;
struct member_io;

#define MEMBER_FUA 1u /* write: durable before completion */

struct member_ops {
	const char *kind; /* "file", "blockdev", "mem", "fault", ... */
	ssize_t (*pread)(struct member *m, void *buf, size_t len, uint64_t off);
	ssize_t (*pwrite)(struct member *m, const void *buf, size_t len, uint64_t off,
	                  unsigned flags);
	int (*flush)(struct member *m);
	/* Discard (trim) a range; -EOPNOTSUPP when the medium cannot. What
	 * it reads afterwards is the medium's business (files: zeros; block
	 * devices: BLKDISCARD, which Linux no longer promises zeros of). */
	int (*discard)(struct member *m, uint64_t off, uint64_t len);
	/* Optional: make a range read back as zeros without sending zeros
	 * (MEMBER_ZERO_UNMAP: may deallocate it); -EOPNOTSUPP sends member_
	 * write_zeroes to its fallback. Ranges are logical-block aligned. */
	int (*write_zeroes)(struct member *m, uint64_t off, uint64_t len, unsigned flags);
	/* File descriptor for async I/O (io_uring), or -1 when every request
	 * must go through the ops above. */
	int (*fd)(struct member *m);
	void (*close)(struct member *m);
	/* Optional: is the member still what was opened? 0, or a negative
	 * errno with `why` saying what changed (a file that shrank, vanished
	 * or was replaced by another at its path). */
	int (*check)(struct member *m, char *why, size_t len);
	/* Optional (modelled devices, member_sim): run a batch of this
	 * member's requests from member_ioq_run (reads and writes, then
	 * flushes), submitted at CLOCK_MONOTONIC time `submit_ns`, setting
	 * each result like member_ioq_run does, without waiting for their
	 * modelled duration. Returns the CLOCK_MONOTONIC time (ns) before which
	 * the batch does not count as complete (0: at once), so requests to
	 * several such members in one batch overlap in time. */
	uint64_t (*run_batch)(struct member *m, struct member_io *const *ios, int n,
	                      uint64_t submit_ns);
	/* Optional, with run_batch: wait for the time run_batch returned (a
	 * member on a virtual clock moves its caller's model time instead of
	 * sleeping); without it member_ioq_run sleeps until then. */
	void (*batch_wait)(struct member *m, uint64_t until_ns);
	/* Optional (remote members, member_nbd): start a batch of this
	 * member's requests from member_ioq_run without waiting (reads and
	 * writes now, its flushes once they are done); returns a handle for
	 * aio_wait, or NULL when the batch could not start (the queue then runs
	 * the requests through the ops above). Several threads may each have
	 * batches in flight on one member. */
	void *(*aio_submit)(struct member *m, struct member_io *const *ios, int n);
	/* Wait for a batch of aio_submit, setting each result like
	 * member_ioq_run does; frees the handle. */
	void (*aio_wait)(struct member *m, void *batch);
	/* Optional: a line on the member's link (remote members: connection
	 * state and request latency), "" when there is nothing to say. */
	void (*describe)(struct member *m, char *buf, size_t len);
	/* Optional (mapped members, member_file.c): see member_map_addr. */
	void *(*map_addr)(struct member *m, uint64_t off, size_t len);
};

struct member {
	const struct member_ops *ops;
	char name[256];         /* what messages call it (the path) */
	uint64_t size;          /* bytes */
	uint32_t logical_block; /* 512 or 4096: smallest I/O unit */
	bool readonly;
	bool direct;        /* opened with O_DIRECT (see member_aligned) */
	uint32_t dio_align; /* direct: offset/length alignment of the straight path; else 1 */
	uint32_t mem_align; /* direct: buffer alignment of the straight path; else 1 */
	/* Requests are memory copies that cannot wait on a device: a tmpfs
	 * file opened without O_DIRECT. Sync work then reads and writes with
	 * plain synchronous requests on two threads (engine/sync/workers.h), which beat
	 * queued batches there; wrappers (fault, crash, sim) leave it false. */
	bool in_memory;
	/* In memory and mapped (member_file.c): member_ioq runs its requests
	 * through the ops, never on io_uring, whose write through the
	 * descriptor to a file truncated under the array would extend it
	 * again (its cut pages then reading back as zeros through the
	 * mapping) where a copy through the mapping faults (member_guard.h)
	 * and fails the member. */
	bool mapped;
	/* member_write_zeroes with MEMBER_ZERO_UNMAP may deallocate and still
	 * reads back zeros (files: a punched hole; block devices that offload
	 * write-zeroes, whose PUNCH_HOLE zeroes and may unmap; memory): what a
	 * parity level needs to give whole stripes back (md's
	 * devices_handle_discard_safely). False for block devices without
	 * write-zeroes (BLKDISCARD's data is undefined after) and wrappers
	 * that do not pass discards on. */
	bool discard_zeroes;
	void *priv;
};

/* Open flags. */
#define MEMBER_RDONLY 1u /* never write: open O_RDONLY */
#define MEMBER_DIRECT 2u /* try O_DIRECT, fall back (with m->direct false) if refused */
#define MEMBER_CREATE 4u /* create a regular file of `size` bytes if missing */
#define MEMBER_EXCL   8u /* O_EXCL on block devices: refuse a device in use */

/* Files and block devices. `size` only matters with MEMBER_CREATE: a missing
 * path is created as a sparse regular file of `size` bytes (an existing one is
 * opened as it is). A regular file whose size is not a multiple of the
 * O_DIRECT alignment is opened without O_DIRECT (m->direct false). */
int member_open_file(const char *path, unsigned flags, uint64_t size, struct member **out,
                     char *err, size_t errlen);
/* A member named by an NBD URI (nbd://, nbds://, nbd+unix://, nbds+unix://,
 * see member/nbd_uri.h): the export of a server reached through libnbd.
 * member_open_file opens such names through it, so every place that takes a
 * member path takes a URI. MEMBER_CREATE and MEMBER_DIRECT have no effect. */
bool member_is_remote(const char *name);
int member_open_nbd(const char *uri, unsigned flags, struct member **out, char *err, size_t errlen);
/* The member's link line (ops->describe): "" for local members. */
void member_describe(struct member *m, char *buf, size_t len);

/* A zero-filled in-memory member (tests, benchmarks). */
int member_open_mem(const char *name, uint64_t size, struct member **out);
void member_close(struct member *m);

/* Convenience wrappers that loop over short transfers and turn a short
 * read/write before `len` into -EIO. */
int member_read(struct member *m, void *buf, size_t len, uint64_t off);
int member_write(struct member *m, const void *buf, size_t len, uint64_t off, unsigned flags);
int member_flush(struct member *m);
/* Discard a range: -EROFS on read-only members, -EINVAL outside the member,
 * -EOPNOTSUPP when the medium refuses. Files and memory read back zeros. */
int member_discard(struct member *m, uint64_t off, uint64_t len);
/* Make [off, off+len) read back as zeros, always: MEMBER_ZERO_UNMAP lets
 * it deallocate (a discard where the member guarantees zeros after one);
 * otherwise the space stays allocated (files: ZERO_RANGE; block devices:
 * write-zeroes without unmap, else BLKZEROOUT). Where the member has no
 * way to do it, zeros are written. -EROFS, -EINVAL as member_discard. */
#define MEMBER_ZERO_UNMAP 1u
/* A discard, as md passes one down: the whole logical blocks go to the
 * member's discard op (BLKDISCARD on block devices, a punched hole in
 * files), after which they read back as whatever the member gives (zeros
 * only where m->discard_zeroes); where it cannot discard them (-EOPNOTSUPP,
 * -EINVAL) they are zeroed as without the flag. */
#define MEMBER_ZERO_DISCARD 2u
int member_write_zeroes(struct member *m, uint64_t off, uint64_t len, unsigned flags);
/* True when a request can bypass the bounce buffer (always for non-direct). */
bool member_aligned(const struct member *m, const void *buf, size_t len, uint64_t off);

/* Batched I/O across members. One queue per thread (it owns an io_uring
 * when available); member_ioq_run submits all requests at once and returns
 * when all have completed, each with its own result. Requests to members
 * without an fd (and unaligned requests to O_DIRECT members) run
 * synchronously through their ops.
 *
 * Ordering inside one batch: all reads and writes run first, in no
 * particular order (overlapping writes in one batch are undefined), then all
 * flushes, so a FLUSH covers the writes of its own batch. A FUA write is
 * durable when its result arrives (RWF_DSYNC, i.e. write + fdatasync).
 * Results: reads give the bytes read (short only at the member's end),
 * writes give len or -errno (-ENOSPC past the end, -EROFS read-only), flushes
 * give 0 or -errno. URAID_IOQ=sync in the environment forces the synchronous
 * backend. */
enum member_op { MEMBER_OP_READ, MEMBER_OP_WRITE, MEMBER_OP_FLUSH };
struct member_io {
	struct member *m;
	enum member_op op;
	void *buf;
	size_t len;
	uint64_t off;
	unsigned flags; /* MEMBER_FUA */
	ssize_t result; /* out: bytes or -errno (short transfers already retried) */
};
/* Did the request move all its bytes? */
static inline bool member_io_done(const struct member_io *io)
{
	return io->result >= 0 && (size_t)io->result == io->len;
}
struct member_ioq;
/* depth: io_uring entries (0 = default 64). Never fails for want of
 * io_uring: the queue falls back to synchronous I/O. */
int member_ioq_open(unsigned depth, struct member_ioq **out);
/* Returns 0 when every request succeeded, else the first negative result. */
int member_ioq_run(struct member_ioq *q, struct member_io *ios, int n);
void member_ioq_close(struct member_ioq *q);
const char *member_ioq_backend(const struct member_ioq *q); /* "io_uring" or "sync" */
/* Why the queue is synchronous ("" with io_uring): "URAID_IOQ=sync",
 * "io_uring_queue_init: <error>", "built without liburing", ... */
const char *member_ioq_reason(const struct member_ioq *q);
/* Largest transfer one ring submission carries (default and maximum 1 GiB,
 * at least 4096; O_DIRECT requests use a multiple of their alignment); the
 * rest of a longer request is resubmitted like a short transfer. Tests use
 * small values to exercise that path. */
void member_ioq_set_split(struct member_ioq *q, size_t bytes);

/* An in-memory copy-on-write view of inner (member_cow.c), which it owns:
 * writes stay in memory, reads see them over what inner holds. For a
 * read-only assembly that must do in memory what a read-write one would
 * write (a journal replay). */
int member_cow_wrap(struct member *inner, struct member **out);

/* A mapped member's bytes [off, off+len) in memory, when every page there
 * has memory behind it and the member is writable: reads and writes of
 * them are memory accesses, to be made under member_map_run (member_
 * guard.h) only. NULL otherwise (then member_read and member_write). */
void *member_map_addr(struct member *m, uint64_t off, size_t len);

/* The member is still what was opened (ops->check; members without one
 * always are): 0, or a negative errno with `why` naming the change. */
int member_check(struct member *m, char *why, size_t len);

/* Exclusive advisory lock (flock) on the member's file, held while it is
 * open: a running array holds one on each member, so a second array (or a
 * create) cannot take a member that is in use. -EBUSY when another holder
 * has it; 0 for members without a file. */
int member_lock(struct member *m);

#endif
