/* Error messages for callers that pass an (err, errlen) buffer. */
#ifndef URAID_ERRMSG_H
#define URAID_ERRMSG_H

#include <stddef.h>

/* Format into err (if non-NULL) and return `rc` (a negative errno), so a
 * failure path is one line: return errmsg(err, errlen, -EINVAL, "...", ...). */
int errmsg(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
