/* Crash simulation (tests): a member wrapper that models a disk with a
 * volatile write cache, and a controller shared by all members of an array
 * that cuts the power at a chosen member request.
 *
 * Cache model: a write (without MEMBER_FUA) completes at once but only enters
 * the cache; reads see it. A flush makes every write completed before it on
 * that member durable. A FUA write is durable when it completes (and makes
 * the cached copies of the sectors it covers obsolete).
 *
 * Power failure: the controller numbers every request (read, write, flush)
 * to any of its members, from 1. With crash_ctl_arm(ctl, N), request N and
 * every later one fails with -EIO and changes nothing. crash_apply(ctl, seed)
 * then decides, for every write still in a member's cache, whether it
 * reached the medium whole, torn (a random subset of its 512-byte sectors)
 * or not at all, applies those in their original order, empties the caches
 * and lets requests through again (disarmed).
 */
#ifndef URAID_MEMBER_CRASH_H
#define URAID_MEMBER_CRASH_H

#include <stdbool.h>
#include <stdint.h>

#include "member/member.h"

struct crash_ctl;

int crash_ctl_new(struct crash_ctl **out);
/* Frees the controller; its members must have been closed first. */
void crash_ctl_free(struct crash_ctl *c);
/* Power fails at request number `at` (counted from 1 since creation; 0 =
 * never). An `at` already passed fails the next request. */
void crash_ctl_arm(struct crash_ctl *c, uint64_t at);
uint64_t crash_ctl_requests(const struct crash_ctl *c); /* requests numbered so far */
bool crash_ctl_crashed(const struct crash_ctl *c);
/* A lying disk (for testing the tests): flushes report success but make
 * nothing durable; FUA writes still are. */
void crash_ctl_ignore_flush(struct crash_ctl *c, bool ignore);

/* What crash_apply did (summed over members). */
struct crash_stats {
	uint64_t writes_kept, writes_torn, writes_lost;
};
/* Resolve every member's cache after a crash (or at any time, to model a
 * power cut at an idle moment). Deterministic for a given seed and history. */
int crash_apply(struct crash_ctl *c, uint64_t seed, struct crash_stats *st);

/* Wrap `inner` (the durable medium); the wrapper owns it. */
int member_crash_wrap(struct member *inner, struct crash_ctl *c, struct member **out);
/* Writes still in this member's cache. */
uint64_t member_crash_pending(const struct member *m);

#endif
