/* raid10 reshapes (engine/reshape_int.h), as md's raid10_check_reshape and
 * raid10_start_reshape allow them and mdadm's Grow.c (analyse_change,
 * raid10_reshape, set_new_data_offset) asks for them: near and offset
 * layouts only, the number of copies kept, members added (forwards, the
 * data offset moved down), removed once --array-size fits the fewer
 * (backwards from the end, the offset moved up), the chunk or the layout
 * changed (toward the more room). md's raid10 has no backup file: the data
 * offset always moves, by at least the larger of the old and new chunk
 * times its far copies (the rows a crash may need on both sides). The move
 * itself is the mirror personality's (engine/mirror/reshape.c), the
 * checkpoint rule core/reshape.c's, in raid10's member addresses. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/bitmap/bitmap.h"
#include "engine/core/log.h"
#include "engine/core/reshape.h"
#include "engine/md.h"
#include "engine/reshape_int.h"
#include "util/errmsg.h"

static int near_of(uint32_t layout)
{
	return (int)(layout & 0xff);
}

static int far_of(uint32_t layout)
{
	return (int)((layout >> 8) & 0xff);
}

static bool far_mode(uint32_t layout)
{
	return far_of(layout) > 1 && !((layout >> 16) & 1);
}

/* md's before_length / after_length: the least the data offset moves. */
static uint64_t min_offset_change(const struct md_reshape *r)
{
	uint64_t b = (uint64_t)r->old.chunk_sectors * (uint64_t)far_of(r->old.layout);
	uint64_t f = (uint64_t)r->new.chunk_sectors *(uint64_t)far_of(r->new.layout);
	return b > f ? b : f;
}

int eng_reshape_raid10_check(const struct md_reshape *r, char *err, size_t errlen)
{
	if (far_mode(r->old.layout) || far_mode(r->new.layout))
		return errmsg(err, errlen, -EINVAL,
		              "raid10 far layout (0x%x -> 0x%x): md reshapes near and offset "
		              "layouts only",
		              r->old.layout, r->new.layout);
	if (near_of(r->old.layout) * far_of(r->old.layout) !=
	    near_of(r->new.layout) * far_of(r->new.layout))
		return errmsg(err, errlen, -EINVAL,
		              "raid10 layout 0x%x -> 0x%x changes the number of copies",
		              r->old.layout, r->new.layout);
	int64_t moved = r->backwards ? r->offset_delta : -r->offset_delta;
	uint64_t need = min_offset_change(r);
	if (moved < 0 || (uint64_t)moved < need)
		return errmsg(err, errlen, -EINVAL,
		              "offset difference not enough to continue reshape, as md/raid10 "
		              "says (the data offset moves %lld sectors %s, %llu needed)",
		              (long long)r->offset_delta, r->backwards ? "up" : "down",
		              (unsigned long long)need);
	return 0;
}

/* md's _enough for a near/offset geometry: every set of `copies`
 * consecutive slots a chunk's copies start at (every near-th slot) keeps
 * one in-sync member. */
static bool enough(const struct eng_array *a, int disks, int near, int copies)
{
	int first = 0;
	do {
		int cnt = 0;
		for (int k = 0, s = first; k < copies; k++, s = (s + 1) % disks)
			if (a->slot[s] >= 0 && a->mem[a->slot[s]]->state == URAID_MEMBER_IN_SYNC)
				cnt++;
		if (!cnt)
			return false;
		first = (first + near) % disks;
	} while (first != 0);
	return true;
}

/* A member md counts as a spare for raid10_start_reshape (not in sync,
 * not faulty): a spare, or in a dry run (before eng_reshape_stop_recovery)
 * one a recovery is rebuilding. */
static bool spare_like(const struct eng_member *em, bool dry)
{
	if (!em->m || em->left_out || em->replacement)
		return false;
	return em->state == URAID_MEMBER_SPARE ||
	       (dry && em->role >= 0 && em->state == URAID_MEMBER_REBUILDING);
}

/* Is slot s empty for the reshape (no member, or one a recovery the
 * reshape stops is rebuilding)? */
static bool slot_empty(const struct eng_array *a, int s)
{
	if (a->slot[s] < 0)
		return true;
	const struct eng_member *em = a->mem[a->slot[s]];
	return em->state == URAID_MEMBER_REBUILDING && !em->replacement;
}

int eng_reshape_raid10_plan(const struct eng_array *a, const struct uraid_reshape_opts *o,
                            uint64_t before, uint64_t after, bool dry, struct md_reshape *rp,
                            int *spares, int *roles, int *needp, uint64_t *cutp, char *err,
                            size_t errlen)
{
	if (a->rs)
		return errmsg(err, errlen, -EBUSY, "a reshape is already in progress");
	if (a->broken)
		return errmsg(err, errlen, -EIO, "the array is broken");
	/* A recovery onto a spare is stopped, as mdadm freezes the array
	 * (eng_reshape_stop_recovery); a replacement, a resync or a check is
	 * not (md: EBUSY). */
	if ((a->action != URAID_SYNC_IDLE &&
	     (a->action != URAID_SYNC_RECOVER || eng_replace_any(a))) ||
	    a->resync_offset != MD_RESYNC_NONE)
		return errmsg(err, errlen, -EBUSY,
		              "a resync, recovery or check is pending or running; let it finish");
	/* md's raid10 bitmap counts array sectors: a member count change
	 * resizes it (reshape_begin -> eng_bitmap_resize, as
	 * raid10_start_reshape -> md_bitmap_resize); another chunk or layout
	 * keeps the size and the bitmap. A journal or PPL (not raid10's)
	 * still refuses. */
	if (a->log && a->log != &eng_log_bitmap)
		return errmsg(err, errlen, -EBUSY, "Cannot set array shape: the array has a %s",
		              a->log->name ? a->log->name : "log");
	struct md_reshape r;
	eng_reshape_shape(a, URAID_LEVEL_RAID10, o, &r);
	if (far_mode(r.old.layout))
		return errmsg(err, errlen, -EINVAL, "Cannot reshape RAID10 in far-mode");
	if (far_mode(r.new.layout))
		return errmsg(err, errlen, -EINVAL, "Cannot reshape RAID10 to far-mode");
	int copies = near_of(r.old.layout) * far_of(r.old.layout);
	if (near_of(r.new.layout) * far_of(r.new.layout) != copies)
		return errmsg(err, errlen, -EINVAL,
		              "Cannot change number of copies when reshaping RAID10");
	/* raid10_check_reshape: a degraded array reshapes while every chunk
	 * keeps a copy (md's enough(conf, -1)); the missing members' slots
	 * stay empty or take spares (below). */
	if (!enough(a, (int)r.old.raid_disks, near_of(r.old.layout), copies))
		return errmsg(err, errlen, -EINVAL,
		              "Cannot set array shape: a chunk has no in-sync copy left (md's "
		              "raid10_check_reshape: Invalid argument)");
	if (!memcmp(&r.new, &r.old, sizeof(r.new)))
		return errmsg(err, errlen, -EINVAL,
		              "nothing to reshape: the geometry is unchanged");
	if (r.new.raid_disks > LAYOUT_MAX_MEMBERS)
		return errmsg(err, errlen, -EINVAL, "%u members is more than %d", r.new.raid_disks,
		              LAYOUT_MAX_MEMBERS);
	if ((int)r.new.raid_disks < copies)
		return errmsg(err, errlen, -EINVAL,
		              "Cannot set array shape: raid10 with %d copies needs at least %d "
		              "members, not %u",
		              copies, copies, r.new.raid_disks);
	if (a->geo.dev_sectors % r.new.chunk_sectors)
		return errmsg(err, errlen, -EINVAL,
		              "the member size (%llu sectors) is not a multiple of the new chunk "
		              "(%u sectors)",
		              (unsigned long long)a->geo.dev_sectors, r.new.chunk_sectors);
	struct layout_geometry g = a->geo;
	g.layout = r.new.layout;
	g.chunk_sectors = r.new.chunk_sectors;
	g.raid_disks = (int)r.new.raid_disks;
	for (int i = 0; i < g.raid_disks; i++)
		g.member_sectors[i] = g.dev_sectors;
	char e[256];
	int rc = a->ops->validate(&g, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc, "Cannot set array shape: %s", e);
	/* raid10_check_reshape: the array must hold whole new chunks. */
	if (a->array_sectors % r.new.chunk_sectors)
		return errmsg(err, errlen, -EINVAL,
		              "Cannot set array shape: the array size (%llu sectors) is not a "
		              "multiple of the new chunk (%u sectors)",
		              (unsigned long long)a->array_sectors, r.new.chunk_sectors);
	/* The size to cut the array to first: fewer members with too little
	 * room after the data get their components cut by the move (below),
	 * so the size md's raid10_start_reshape then wants is raid10_size on
	 * what is left (mdadm's estimate, the same without the cut and the
	 * rounding to whole chunks, can be too large for the kernel). */
	uint64_t fit_dev = a->geo.dev_sectors, fit_move = min_offset_change(&r);
	if (r.new.raid_disks < r.old.raid_disks && after < fit_move && (fit_dev > fit_move))
		fit_dev -= fit_move;
	struct layout_geometry fit = g;
	fit.dev_sectors = fit_dev;
	rc = eng_reshape_refuse_cut(a, eng_reshape_geo_size(&fit, fit_dev), err, errlen);
	if (rc < 0)
		return rc;
	/* raid10_start_reshape: at least a spare per new slot (spares: not
	 * in sync, not faulty); with more members every spare joins
	 * (raid10_add_disk: the lowest empty slot first, a degraded array's
	 * missing member's before the new ones); one in a slot of the old
	 * geometry is filled by the move (rebuilding, engine/core/reshape.h),
	 * one in a new slot is in sync from the start. Fewer or as many
	 * members: no spare joins (a recovery follows the reshape). */
	int delta = (int)r.new.raid_disks - (int)r.old.raid_disks, got = 0, took = 0;
	int cand[LAYOUT_MAX_MEMBERS];
	for (int i = 0; i < a->nmem && got < LAYOUT_MAX_MEMBERS; i++)
		if (spare_like(a->mem[i], dry))
			cand[got++] = i;
	if (got < delta)
		return errmsg(err, errlen, -EINVAL,
		              "Cannot set array shape: %u -> %u members needs %d spare(s) to take "
		              "the new slots; the array has %d",
		              r.old.raid_disks, r.new.raid_disks, delta, got);
	for (int s = 0; delta > 0 && s < (int)r.new.raid_disks &&took < got; s++)
		if (s >= (int)r.old.raid_disks || slot_empty(a, s)) {
			roles[took] = s;
			spares[took] = cand[took];
			took++;
		}
	int need = took;
	/* mdadm's raid10_reshape / set_new_data_offset: more members move
	 * the offset down by exactly the minimum, fewer up by it, the same
	 * count toward the more room (uraid: up to 16 MiB of it). */
	uint64_t min = min_offset_change(&r);
	if (!before && !after)
		return errmsg(err, errlen, -EOPNOTSUPP,
		              "Metadata version doesn't support data_offset changes, which md's "
		              "raid10 reshape needs (it has no backup file)");
	if (delta > 0)
		r.backwards = false;
	else if (delta < 0)
		r.backwards = true;
	else if (o->direction)
		r.backwards = o->direction < 0;
	else
		r.backwards = !(before > after);
	uint64_t room = r.backwards ? after : before;
	*cutp = 0;
	if (room < min && delta < 0) {
		/* mdadm's raid10_reshape: a shrink with too little room after
		 * the data first cuts the component size by the move (md's
		 * raid10_resize refuses one that would cut an array size set by
		 * hand); raid10_start_reshape then needs the array to fit the
		 * fewer members on what is left. */
		uint64_t dev = a->geo.dev_sectors > min ? a->geo.dev_sectors - min : 0;
		struct layout_geometry old = a->geo;
		old.dev_sectors = dev;
		if (!dev || eng_reshape_geo_size(&old, dev) < a->array_sectors)
			return errmsg(err, errlen, -ENOSPC,
			              "cannot reduce component size (by %llu sectors, for the data "
			              "offset to move up: the array of %llu sectors would not fit)",
			              (unsigned long long)min,
			              (unsigned long long)a->array_sectors);
		/* (the fewer members hold the array on what is left: the size
		 * check above counted this cut) */
		*cutp = dev;
		room = min;
	}
	/* mdadm's set_new_data_offset, in its words */
	if (room < min)
		return errmsg(err, errlen, -ENOSPC,
		              "%s: %llu free sectors %s the data area, %llu needed (md's raid10 "
		              "reshape has no backup file)",
		              delta > 0      ? "Insufficient head-space for reshape"
		              : !r.backwards ? "insufficient head-room"
		                             : "Insufficient tail-space for reshape",
		              (unsigned long long)room, r.backwards ? "after" : "before",
		              (unsigned long long)min);
	uint64_t move = min;
	if (!delta) {
		move = room - room % 8;
		if (move > 32768)
			move = 32768;
		if (o->move_sectors && o->move_sectors < move)
			move = o->move_sectors;
		if (move < min)
			move = min;
	}
	r.offset_delta = r.backwards ? (int64_t)move : -(int64_t)move;
	if (r.backwards) {
		/* raid10_start_reshape: from raid10_size(mddev, 0, 0), the new
		 * geometry on the fewer members. */
		struct layout_geometry s = g;
		s.raid_disks = (int)(r.new.raid_disks < r.old.raid_disks ? r.new.raid_disks
		                                                         : r.old.raid_disks);
		r.position = eng_reshape_geo_size(&s, *cutp ? *cutp : a->geo.dev_sectors);
		r.position -= r.position % md_reshape_unit(&r);
	}
	*rp = r;
	*needp = need;
	return 0;
}
