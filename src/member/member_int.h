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

/* Copy `name` into m->name, truncating. */
void member_set_name(struct member *m, const char *name);

#endif
