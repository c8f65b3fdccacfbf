/* An I/O personality: what one family of md levels does with requests and
 * background work, as md's struct md_personality. The families are
 * raid456/ (raid4, raid5, raid6), mirror/ (raid1, raid10) and plain/ (linear,
 * raid0); each ends in one descriptor, and engine/pers.c picks one by level
 * at setup (a->pers). The core and the sync scheduler call only through it.
 *
 * Sectors: requests are in logical (array) sectors; "sync positions" are
 * what resync, check and repair walk: member sectors for raid1/4/5/6,
 * logical sectors for raid10 (md's resync_max_sectors); recovery always
 * walks member sectors (see sync/sync.h).
 *
 * Locking: every op runs with eng_lock held unless it says otherwise. */
#ifndef URAID_ENGINE_CORE_PERS_H
#define URAID_ENGINE_CORE_PERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uraid.h"

struct eng_array;
struct member_ioq;

/* The stripe lock unit of levels without stripes: 1 MiB regions. */
#define ENG_REGION_SECTORS 2048

/* How a write runs. Locked (shared false): the caller holds eng_lock, q is
 * a->ioq, errors are handled (members failed). Shared: the caller holds
 * iolock shared and the stripe locks of the range, q is its own; any error
 * returns -EBUSY with no state changed, and the caller redoes the request
 * locked with force_rcw (parity from data: the first attempt may have left
 * data and parity of a stripe out of step, so read-modify-write is off). */
struct eng_req {
	struct member_ioq *q;
	bool shared;
	bool force_rcw;
};

struct eng_pers {
	const char *name;
	/* After the geometry is validated, before any request: what the
	 * personality keeps for the array (a parity backend). NULL: none. */
	int (*start)(struct eng_array *a, char *err, size_t errlen);
	/* The array is freed: drop what start and the caches hold, written
	 * out or not (a stop drains first). NULL: nothing. */
	void (*stop)(struct eng_array *a);
	/* Copies or parity a crash can leave out of step (resync_offset is
	 * kept), and a level that can lose a member (check, repair, recovery,
	 * replace). */
	bool consistency;
	bool (*redundant)(const struct eng_array *a);

	/* Requests: read on the locked path (reconstructs and repairs);
	 * write locked or shared (struct eng_req). */
	int (*read)(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec);
	int (*write)(struct eng_array *a, const struct eng_req *rq, const uint8_t *buf,
	             uint64_t lsec, uint64_t nsec);
	/* Zero logical sectors [lsec, lsec+nsec) (discard, write-zeroes) on
	 * the locked path, the array marked dirty and the log told of it as a
	 * write: member_write_zeroes on the members where that keeps the
	 * level's copies or parity true, with `mflags` (MEMBER_ZERO_UNMAP),
	 * zeros written through `write` elsewhere. NULL: all written. */
	int (*zero)(struct eng_array *a, uint64_t lsec, uint64_t nsec, unsigned mflags);

	/* The shared fast path (engine/fastpath.c), under iolock shared. */
	/* May a healthy array be read without the lock? NULL: yes. */
	bool (*fast_read_ok)(const struct eng_array *a);
	/* Newer data than the members hold (a write cache) over buf, which
	 * holds [lsec, lsec+nsec) as read from them. NULL: none. */
	void (*overlay)(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec);
	/* May this write bypass the lock (a cache may want it)? NULL: yes. */
	bool (*fast_write_ok)(const struct eng_array *a, uint64_t lsec, uint64_t nsec);
	/* Logical sectors one stripe lock covers (a stripe, a region). */
	uint64_t (*lock_unit)(const struct eng_array *a);

	/* A volatile write cache (md's stripe cache), NULL where none. */
	int (*drain)(struct eng_array *a);                       /* write it out: flush, stop */
	int (*set_cache)(struct eng_array *a, unsigned stripes); /* locks itself */
	unsigned (*cache_size)(const struct eng_array *a);
	void (*cache_stats)(const struct eng_array *a, struct uraid_io_stats *st);

	/* Background work (sync/sync.c schedules it). NULL without
	 * consistency. */
	uint64_t (*sync_size)(const struct eng_array *a); /* sync positions in all */
	/* The sync positions [*p0, *p1) a write of [lsec, lsec+nsec) may
	 * change (whole stripes for parity): what a write-intent bit covers. */
	void (*sync_range)(const struct eng_array *a, uint64_t lsec, uint64_t nsec, uint64_t *p0,
	                   uint64_t *p1);
	/* Most positions one batch of `act` may take (SYNC_BATCH_BYTES). */
	uint64_t (*sync_batch)(const struct eng_array *a, enum uraid_sync_action act);
	/* Resync, check or repair (a->action) of sync positions [pos, pos+n). */
	int (*resync)(struct eng_array *a, uint64_t pos, uint64_t n);
	/* Rebuild every rebuilding slot member over member sectors [pos, pos+n). */
	int (*recover)(struct eng_array *a, uint64_t pos, uint64_t n);
	/* What `role` holds at member sectors [msec, msec+n), from the other
	 * members (a replace whose source read failed). */
	int (*role_data)(struct eng_array *a, int role, uint8_t *buf, uint64_t msec, uint64_t n);
	/* No redundancy left among the in-sync members: a resync has nothing
	 * to compare or fix. */
	bool (*resync_pointless)(const struct eng_array *a);
	/* md's pers->resize (uraid grow --size, engine/grow.c): the per-member
	 * size kept for `sectors` asked, 0 when this geometry cannot change
	 * size. NULL: levels without a per-member size (linear, raid0). */
	uint64_t (*resize)(const struct eng_array *a, uint64_t sectors);
	/* Reshape (core/reshape.h): move logical sectors [lsec, lsec+n),
	 * whole stripes of the new geometry, from the old layout to the new
	 * (what lies beyond the old array's end becomes zeros, as md's
	 * reshape_request leaves it). The caller checked the move is safe.
	 * NULL: the level does not restripe. */
	int (*reshape)(struct eng_array *a, uint64_t lsec, uint64_t n);
};

#endif
