/* Member I/O: the lowest layer. A member is anything that stores bytes at
 * offsets (a file, a block device, memory, a fault-injecting wrapper, later a
 * simulated disk or a remote NBD export) behind one small ops table.
 *
 * Offsets and lengths are bytes. Reads and writes return the number of bytes
 * transferred (short only at end of device) or a negative errno.
 */
#ifndef URAID_MEMBER_H
#define URAID_MEMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct member;

#define MEMBER_FUA 1u /* write: durable before completion */

struct member_ops {
	const char *kind; /* "file", "blockdev", "mem", "fault", ... */
	ssize_t (*pread)(struct member *m, void *buf, size_t len, uint64_t off);
	ssize_t (*pwrite)(struct member *m, const void *buf, size_t len, uint64_t off,
	                  unsigned flags);
	int (*flush)(struct member *m);
	/* Discard (trim) a range; -EOPNOTSUPP when the medium cannot. */
	int (*discard)(struct member *m, uint64_t off, uint64_t len);
	/* File descriptor for async I/O (io_uring), or -1 when every request
	 * must go through the ops above. */
	int (*fd)(struct member *m);
	void (*close)(struct member *m);
};

struct member {
	const struct member_ops *ops;
	char name[256];          /* what messages call it (the path) */
	uint64_t size;           /* bytes */
	uint32_t logical_block;  /* 512 or 4096: smallest I/O unit */
	bool readonly;
	bool direct;             /* opened with O_DIRECT: buffers/offsets/lengths aligned */
	void *priv;
};

/* Open flags. */
#define MEMBER_RDONLY 1u  /* never write: open O_RDONLY */
#define MEMBER_DIRECT 2u  /* try O_DIRECT, fall back (with m->direct false) if refused */
#define MEMBER_CREATE 4u  /* create a regular file of `size` bytes if missing */
#define MEMBER_EXCL   8u  /* O_EXCL on block devices: refuse a device in use */

/* Files and block devices. `size` only matters with MEMBER_CREATE. */
int member_open_file(const char *path, unsigned flags, uint64_t size, struct member **out,
                     char *err, size_t errlen);
/* A zero-filled in-memory member (tests, benchmarks). */
int member_open_mem(const char *name, uint64_t size, struct member **out);
void member_close(struct member *m);

/* Convenience wrappers that loop over short transfers and turn a short
 * read/write before `len` into -EIO. */
int member_read(struct member *m, void *buf, size_t len, uint64_t off);
int member_write(struct member *m, const void *buf, size_t len, uint64_t off, unsigned flags);
int member_flush(struct member *m);

/* Batched I/O across members. One queue per thread (it owns an io_uring
 * when available); member_ioq_run submits all requests at once and returns
 * when all have completed, each with its own result. Requests to members
 * without an fd run synchronously through their ops. */
enum member_op { MEMBER_OP_READ, MEMBER_OP_WRITE, MEMBER_OP_FLUSH };
struct member_io {
	struct member *m;
	enum member_op op;
	void *buf;
	size_t len;
	uint64_t off;
	unsigned flags;  /* MEMBER_FUA */
	ssize_t result;  /* out: bytes or -errno (short transfers already retried) */
};
struct member_ioq;
int member_ioq_open(unsigned depth, struct member_ioq **out);
/* Returns 0 when every request succeeded, else the first negative result. */
int member_ioq_run(struct member_ioq *q, struct member_io *ios, int n);
void member_ioq_close(struct member_ioq *q);
const char *member_ioq_backend(const struct member_ioq *q); /* "io_uring" or "sync" */

/* Fault injection (tests): wrap a member; the wrapper owns `inner`. */
struct member_fault_rule {
	enum member_op op;     /* READ or WRITE */
	uint64_t off, len;     /* byte range the rule covers (len 0 = everything) */
	uint64_t after;        /* trigger only after this many matching requests */
	int error;             /* return -error (e.g. EIO); 0 = no error */
	bool short_io;         /* transfer half and return a short count */
	bool flip_bit;         /* reads: flip one bit in the returned data */
	bool once;             /* disarm after the first hit */
};
int member_fault_wrap(struct member *inner, struct member **out);
int member_fault_add(struct member *fault, const struct member_fault_rule *rule);
void member_fault_clear(struct member *fault);
uint64_t member_fault_hits(const struct member *fault);

#endif
