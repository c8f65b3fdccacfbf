/* Stripe cache of the parity levels (md's stripe_cache_size): a bounded,
 * LRU-ordered write-back cache of "stripe heads". A head is one 4 KiB row
 * (md's STRIPE_SIZE) of every data member at one stripe position, so the
 * memory is entries x 4 KiB x data members, allocated when the size is set
 * (as md does; capped at the rows the array has), and a head whose data
 * blocks are all written is a full stripe row: its parity comes from the
 * data with no reads. Consecutive heads of one stripe are written out
 * together, one member request per member, so the member I/O stays large.
 *
 * Small writes land in the cache and are acknowledged (a volatile write
 * cache: durable after uraid_flush); a stripe whose heads are all complete
 * is written at once; the rest goes out by read-modify-write or
 * reconstruct-write when evicted (LRU), on flush/stop, or after an idle
 * period. Whole-stripe writes bypass it (cached heads of those stripes are
 * dropped first: every byte of them is overwritten).
 *
 * Locking: every change to the cache happens under eng_lock (the array
 * mutex and the state lock exclusive), so a holder of the state lock shared
 * (fast reads/writes) may look entries up without further locking. Members
 * on disk always hold data and parity that agree; the cache sits above
 * them, so resync/recovery/check (which run under eng_lock too) see a
 * consistent array and a write-out never interleaves with a sync window. */
#ifndef URAID_ENGINE_STRIPE_CACHE_H
#define URAID_ENGINE_STRIPE_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "uraid.h"

struct eng_array;
struct eng_req;
struct eng_scache;

#define SC_IDLE_NS 50000000ull /* heads untouched this long are written out */

/* True when writes of this array go through the cache. */
bool eng_scache_active(const struct eng_array *a);
/* A write of logical sectors [lsec, lsec+nsec) on the locked path. */
int eng_scache_write(struct eng_array *a, const struct eng_req *rq, const uint8_t *buf,
                     uint64_t lsec, uint64_t nsec);
/* Copy cached (newer than the members) sectors over buf, which holds
 * [lsec, lsec+nsec) as read from the members. Needs the state lock, shared
 * is enough. */
void eng_scache_overlay(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec);
/* Any cached head in the stripes [s0, s1)? (state lock, shared enough) */
bool eng_scache_holds(const struct eng_array *a, uint64_t s0, uint64_t s1);
/* Forget the heads of stripes [s0, s0+n) unwritten: the caller replaces
 * every byte they hold (whole stripes zeroed on the members). */
void eng_scache_drop(struct eng_array *a, uint64_t s0, uint64_t n);
/* Write everything out (flush, stop, resize). Returns the first write-out
 * error since the last drain (as a disk reports a lost cached write at the
 * next flush). Caller holds eng_lock. */
int eng_scache_drain(struct eng_array *a);
/* Without writing anything (uraid_drop, array free): stop the idle thread,
 * free the memory. */
void eng_scache_free(struct eng_array *a);
unsigned eng_scache_size(const struct eng_array *a);
/* Resize (0: off), writing the cache out first (uraid_set_stripe_cache). */
int eng_scache_set(struct eng_array *a, unsigned stripes);
/* The cache's counters into st (uraid_io_stats); caller holds eng_lock. */
void eng_scache_stats(const struct eng_array *a, struct uraid_io_stats *st);

#endif
