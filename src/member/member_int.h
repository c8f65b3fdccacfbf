/* Internals shared by the member backends (not part of the contract). */
#ifndef URAID_MEMBER_INT_H
#define URAID_MEMBER_INT_H

#include "member/member.h"
#include "member/member_wrap.h"

/* Shared admission checks for a read or write: -EINVAL for a broken request,
 * -EROFS for writes to read-only members, -ENOSPC for writes that do not fit.
 * For reads, *len is cut to the member's end. Returns 0 when the request may
 * go ahead. */
int member_check_io(const struct member *m, enum member_op op, const void *buf, size_t *len,
                    uint64_t off);

#endif
