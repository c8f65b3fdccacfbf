/* What a member wrapper builds on (the wrappers in src/sim/, the engine's
 * replace tee): a wrapper is a struct member with its own ops that passes
 * requests on to an inner member, as an nbdkit filter does to its plugin.
 * The backends of src/member/ use the same rules. */
#ifndef URAID_MEMBER_WRAP_H
#define URAID_MEMBER_WRAP_H

#include <stddef.h>
#include <stdint.h>

#include "member/member.h"

/* The end-of-member rule of a backend's pread/pwrite op (see member.h): a
 * write to a read-only member fails with -EROFS and one of len > 0 at or past
 * the end with -ENOSPC; otherwise *len is cut at the member's end (to 0 for a
 * read at or past it) and at `max`, the most one call transfers. Returns 0
 * when the (possibly shortened) request may go ahead. */
int member_op_bounds(const struct member *m, enum member_op op, size_t *len, uint64_t off,
                     size_t max);

/* The checks of a discard op: -EROFS on a read-only member, -EINVAL for a
 * range outside it; 0 when the discard may go ahead. */
int member_discard_check(const struct member *m, uint64_t off, uint64_t len);

/* Set up `w`, a member that passes its requests on to `inner` (fault
 * injection, disk model): same name, size, block size and read-only flag;
 * no alignment needs of its own, since requests reach `inner` through its
 * ops, which bounce what O_DIRECT cannot take. */
void member_wrap_init(struct member *w, const struct member *inner, const struct member_ops *ops,
                      void *priv);

/* Copy `name` into m->name, truncating. */
void member_set_name(struct member *m, const char *name);

/* Loop an op until `len` bytes moved, end of member (reads: short count;
 * writes: -EIO) or an error. Retries -EINTR/-EAGAIN. Returns bytes or -errno. */
ssize_t member_xfer(struct member *m, enum member_op op, void *buf, size_t len, uint64_t off,
                    unsigned flags);

#endif
