/* The SIGBUS guard of mapped members (member_guard.c): copies to and from a
 * member's shared mapping that turn a fault on a page the file no longer
 * has (truncated by someone else, a hole that tmpfs cannot fill) into -EIO,
 * so the member fails as on a disk error instead of the process dying.
 *
 * The handler is process state: the library installs it only when the
 * process owner asks (uraid_member_map_guard_install), and member_file maps
 * tmpfs members only once it is installed. */
#ifndef URAID_MEMBER_GUARD_H
#define URAID_MEMBER_GUARD_H

#include <stdbool.h>
#include <stddef.h>

/* Install the SIGBUS handler (idempotent, thread-safe); faults that are not
 * a guarded copy's go on to the handler that was there before. 0 or
 * -errno. */
int member_map_guard_install(void);
/* Has it been installed in this process? */
bool member_map_guard_installed(void);
/* memcpy(dst, src, n) where one of them lies in [map, map + map_len): 0, or
 * -EIO when a page of the mapping there raised SIGBUS (the copy then stopped
 * part way). Must not run inside a signal handler. */
int member_map_copy(void *dst, const void *src, size_t n, const void *map, size_t map_len);
/* fn(ctx) under the guard for faults in the n ranges [addr[i], addr[i] +
 * len[i]) (addresses from member_map_addr): 0, or -EIO when a page there
 * raised SIGBUS and fn was abandoned part way. fn must be what a signal may
 * cut short: memory copies and computation on them, no lock, no
 * allocation, no call that keeps state (the recovery point jumps out of
 * it). -EINVAL for n > MEMBER_MAP_RUN_MAX. */
#define MEMBER_MAP_RUN_MAX 40
int member_map_run(void (*fn)(void *ctx), void *ctx, void *const *addr, const size_t *len, int n);

#endif
