/* An md reshape in progress, as the superblocks record it: the old and the
 * new geometry, how far the restripe got and in which direction, and the
 * data offset the new layout is written at. Pure decoding of struct md_sb
 * (meta/md_super.h); the engine (engine/reshape.c) maps requests with it.
 *
 * md's fields: level, layout and chunk are the OLD geometry, new_level,
 * new_layout and new_chunk the new one; raid_disks is the NEW member count
 * and raid_disks - delta_disks the old. reshape_position is in array
 * (logical) sectors: a forward reshape has restriped [0, position), a
 * backwards one (delta_disks negative, or 1.x MD_FEATURE_RESHAPE_BACKWARDS
 * with delta_disks 0) [position, end). With MD_FEATURE_NEW_OFFSET (1.x) the new layout
 * lies at data_offset + (s32)new_offset on each member (md's
 * new_data_offset), else over the old one. */
#ifndef URAID_MD_RESHAPE_H
#define URAID_MD_RESHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meta/md_super.h"

struct md_reshape_geom {
	int level;
	uint32_t layout;
	uint32_t chunk_sectors;
	uint32_t raid_disks;
};

struct md_reshape {
	bool active; /* MD_FEATURE_RESHAPE_ACTIVE (0.90: minor version 91) */
	bool backwards;
	uint64_t position; /* array sectors */
	struct md_reshape_geom old, new;
	int64_t offset_delta; /* new data offset - data offset, sectors (0: none) */
};

/* Decode sb's reshape. 0 with r->active false when none is recorded; else
 * -EINVAL with a message when the fields cannot describe one md would run
 * (old member count out of range, zero chunk, a position that is not a
 * multiple of a new stripe, ...). */
int md_sb_reshape(const struct md_sb *sb, struct md_reshape *r, char *err, size_t errlen);

/* The member's new data area (data_offset + offset_delta, size sectors)
 * fits inside a member of dev_sectors and clear of its superblock. */
int md_reshape_check_device(const struct md_sb *sb, const struct md_reshape *r,
                            uint64_t dev_sectors, char *err, size_t errlen);

/* Record r in sb as md's super_1_sync / super_90_sync do (the fields, the
 * feature bits, 0.90's minor version 91); r->active false clears the bits
 * (and 0.90 back to minor 90), leaving the other fields as they were, as
 * the kernel does once a reshape is over. */
void md_sb_reshape_store(struct md_sb *sb, const struct md_reshape *r);

/* Data blocks per stripe of g (raid4/5: n-1, raid6: n-2, else n). */
uint32_t md_reshape_data_disks(const struct md_reshape_geom *g);

/* The unit md moves (reshape_sectors): the larger chunk times the new
 * data members; the position is always a multiple of it. raid10 moves
 * 64 KiB steps within the smaller chunk: the smaller of the two. */
uint64_t md_reshape_unit(const struct md_reshape *r);

/* Is logical sector lsec already in the new geometry? */
static inline bool md_reshape_done(const struct md_reshape *r, uint64_t lsec)
{
	return r->backwards ? lsec >= r->position : lsec < r->position;
}

#endif
