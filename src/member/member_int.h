/* Internals shared by the member backends (not part of the contract). */
#ifndef URAID_MEMBER_INT_H
#define URAID_MEMBER_INT_H

#include "member/member.h"

/* Loop an op until `len` bytes moved, end of member (reads: short count;
 * writes: -EIO) or an error. Retries -EINTR/-EAGAIN. Returns bytes or -errno. */
ssize_t member_xfer(struct member *m, enum member_op op, void *buf, size_t len, uint64_t off,
                    unsigned flags);

/* Shared admission checks for a read or write: -EINVAL for a broken request,
 * -EROFS for writes to read-only members, -ENOSPC for writes that do not fit.
 * For reads, *len is cut to the member's end. Returns 0 when the request may
 * go ahead. */
int member_check_io(const struct member *m, enum member_op op, const void *buf, size_t *len,
                    uint64_t off);

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

#endif
