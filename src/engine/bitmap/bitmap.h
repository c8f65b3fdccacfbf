/* Write-intent bitmap of a running array (md's internal bitmap): every
 * metadata version (0.90: after the superblock; 1.0: below it; 1.1/1.2:
 * after it) and raid1/4/5/6/10. One bit per bitmap chunk of the sectors md's
 * resync walks: member sectors for raid1/4/5/6 (sync_size = the per-member
 * size), array sectors for raid10 (sync_size = the array size, the kernel's
 * resync_max_sectors). A bit is set and written (FUA) on every member before
 * a write reaches the members; bits are cleared only after a flush of every
 * member made the data durable and nothing is degraded (uraid clears at
 * uraid_flush/stop, the earliest safe moment; md waits daemon_sleep). After
 * an unclean stop, a bitmap as fresh as the superblocks limits the resync to
 * the dirty chunks; a stale one means a full resync (the kernel's rule).
 * A member re-added into its old slot (re-add, md's rule: its events >= the
 * bitmap's events_cleared) is recovered only where bits are set.
 * Caller holds the array lock in every eng_* function. */
#ifndef URAID_ENGINE_BITMAP_H
#define URAID_ENGINE_BITMAP_H

#define ENG_BITMAP_MAX_IMAGE (8u << 20) /* refuse absurd bitmaps rather than allocate */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/core/log.h"
#include "layout/layout.h"
#include "meta/md_bitmap.h"

struct eng_array;
struct member;
struct member_ioq;
struct eng_member;

struct eng_bitmap {
	struct md_bitmap_sb sb;
	uint64_t nbits;
	uint64_t chunk_sectors;
	uint64_t blocks; /* sectors the bits stand for (coverage at load or resize) */
	/* md's bitmap_info.space: sectors header + bits may take here, 0
	 * until the first resize works it out (engine/bitmap/bitmap_resize.c) */
	uint64_t space;
	uint8_t *img; /* header + bits, as written */
	size_t img_len;
	uint64_t hdr_events; /* events in the header as last written */
	/* One byte per bit: written since the last clearing pass (set with
	 * relaxed atomics by the shared fast path too). md clears a bit only
	 * after its chunk saw no writes for a while; here a flush clears the
	 * bits not written since the previous flush, so a busy chunk is not
	 * cleared and set again (a bitmap write on every member) per flush. */
	uint8_t *touched;
	/* Shared-path bit setting (engine/bitmap/bitmap_fast.c): one preparer at a time,
	 * under iolock shared, with its own queue. Bits in img are only ever
	 * the ones already on disk. */
	pthread_mutex_t mu;
	struct member_ioq *q;
	bool use_for_resync;     /* loaded fresh from an unclean array */
	uint64_t resync_skipped; /* sectors the last resync did not need to touch */
	/* Roles being recovered from the bitmap after a re-add, by the device
	 * uuid of the member re-added (a spare rebuilt later in the same slot
	 * has another uuid, so it gets a full recovery). */
	bool partial[LAYOUT_MAX_MEMBERS];
	uint8_t partial_uuid[LAYOUT_MAX_MEMBERS][16];
	const void *partial_em[LAYOUT_MAX_MEMBERS]; /* and the same eng_member */
	uint64_t recovery_skipped;                  /* sectors recoveries did not need to copy */
};

/* The write-intent bitmap as the array's log (bitmap_log.c). */
extern const struct eng_log_ops eng_log_bitmap;

/* The bitmap of an array whose log is the bitmap (a->log == &eng_log_bitmap). */
static inline struct eng_bitmap *eng_bitmap_of(const struct eng_array *a)
{
	return (struct eng_bitmap *)a->log_state;
}

/* Do the superblocks name a bitmap? */
bool eng_bitmap_present(const struct eng_array *a);
/* Sectors one bit per chunk stands for, in total: the resync's range. */
uint64_t eng_bitmap_coverage(const struct eng_array *a);
/* Sectors the bitmap takes on each member, in whole 4 KiB pages as the
 * kernel keeps it (what a data offset change must not step on). */
uint64_t eng_bitmap_area_sectors(const struct eng_array *a);
/* Fill the status's bitmap_* fields (none without a bitmap). */
struct uraid_status;
void eng_bitmap_status(const struct eng_array *a, struct uraid_status *st);
/* At setup: load the bitmap the superblocks name (refused for levels uraid
 * cannot keep one for, unless read-only). */
int eng_bitmap_load(struct eng_array *a, char *err, size_t errlen);
void eng_bitmap_free(struct eng_array *a);
/* Before a write of logical sectors [lsec, lsec+nsec) reaches members. */
int eng_bitmap_start_write(struct eng_array *a, uint64_t lsec, uint64_t nsec);
/* Are the bits such a write needs all set (and so on disk)? Then it may run
 * on the shared fast path (engine/fastpath.c); bits change only under the
 * exclusive lock, so holding iolock shared is enough to ask. Marks them
 * touched. */
bool eng_bitmap_covered(struct eng_array *a, uint64_t lsec, uint64_t nsec);
/* engine/bitmap/bitmap_fast.c: for a shared-path writer whose bits are missing (called
 * holding no lock): set them on disk and then in memory under iolock
 * shared, so other writers keep going meanwhile (the exclusive lock would
 * send them all down the serialised path). 0, or <0 when the caller should
 * take the locked path (which also handles member failures). */
int eng_bitmap_prepare(struct eng_array *a, uint64_t lsec, uint64_t nsec);
/* Internals shared by bitmap*.c: the bits [*i0, *i1) a write of logical
 * sectors [lsec, lsec+nsec) needs; the byte offset of the bitmap on a
 * member; whether member i holds a bitmap copy. */
void eng_bitmap_range(const struct eng_array *a, uint64_t lsec, uint64_t nsec, uint64_t *i0,
                      uint64_t *i1);
uint64_t eng_bitmap_where(const struct eng_array *a, const struct eng_member *em);
bool eng_bitmap_member_used(const struct eng_array *a, int i);
/* Flush every member, then (when nothing is degraded and no resync is due)
 * clear the bits: all of them when the array is marked clean (idle or
 * stopping), else those not written since the previous pass; write the
 * bitmap when anything changed. */
int eng_bitmap_clear_synced(struct eng_array *a);
/* Resync (and a recovery after a re-add): the first position >= pos (sync
 * positions: member sectors, logical for raid10) inside a dirty chunk, or
 * `end`; *len receives how far that dirty run may go. Every other sync
 * action, and a recovery of a member that was not re-added, gets pos. */
uint64_t eng_bitmap_next_dirty(struct eng_array *a, uint64_t pos, uint64_t end, uint64_t *len);
/* md_bitmap_resize with chunksize 0 (engine/bitmap/bitmap_resize.c): the
 * bitmap made to stand for `blocks` sectors (md: the raid10 size of a
 * reshape's new geometry, the new sync size of a --size change), the chunk
 * doubled until it fits md's space, old set bits carried to every new
 * chunk they overlap, new chunks past the old end set. A grow is written
 * before the caller writes the superblocks (a chunk change first marks
 * the header stale, so a power cut in between means a full resync, never
 * a missed dirty chunk); a shrink only in memory (the caller's superblocks
 * first, the bits follow with the next bitmap write). Only for an array
 * whose log is the bitmap (the caller checks). Once the superblocks are
 * written the caller writes the header (eng_bitmap_write_header): as md's
 * md_update_sb does, the header then has their events and no stale flag
 * (left stale, the next unclean assembly, md's or uraid's, resyncs all). */
int eng_bitmap_resize(struct eng_array *a, uint64_t blocks, char *err, size_t errlen);
/* The header sector alone, to every member in use. */
int eng_bitmap_write_header(struct eng_array *a);
/* Write header + bits to every member in use (readd.c, engine/bitmap/bitmap_add.c). */
int eng_bitmap_write_all(struct eng_array *a);
/* Allocate the bitmap (a->log_state) for header `sb` covering the array
 * (engine/bitmap/bitmap_add.c). */
int eng_bitmap_alloc(struct eng_array *a, const struct md_bitmap_sb *sb, char *err, size_t errlen);

/* A member that was not re-added starts a recovery in `role` (a spare):
 * that one needs a full recovery. */
void eng_bitmap_full_recovery(struct eng_array *a, int role);
/* Re-add: see struct eng_log_ops covers_since / recover_marked. */
bool eng_bitmap_covers_since(const struct eng_array *a, uint64_t events);
void eng_bitmap_recover_marked(struct eng_array *a, int role, const struct eng_member *em);

/* uraid_bitmap_add (bitmap_add.c) and uraid_bitmap_*_skipped of an md array. */
int eng_bitmap_add(struct eng_array *a, uint32_t chunk_bytes, char *err, size_t errlen);
uint64_t eng_bitmap_skipped(struct eng_array *a, bool recovery);

#endif
