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

int eng_reshape_raid10_plan(const struct eng_array *a, const struct uraid_reshape_opts *o,
                            uint64_t before, uint64_t after, struct md_reshape *rp, int *spares,
                            int *needp, char *err, size_t errlen)
{
	if (a->rs)
		return errmsg(err, errlen, -EBUSY, "a reshape is already in progress");
	if (a->broken)
		return errmsg(err, errlen, -EIO, "the array is broken");
	if (a->action != URAID_SYNC_IDLE || a->resync_offset != MD_RESYNC_NONE)
		return errmsg(err, errlen, -EBUSY,
		              "a resync, recovery or check is pending or running; let it finish");
	/* md's raid10 sizes its bitmap by the array, which the reshape
	 * changes; mdadm says so when the kernel answers EBUSY. */
	if (a->log || (a->ref.feature_map & MD_FEATURE_BITMAP_OFFSET))
		return errmsg(err, errlen, -EBUSY,
		              "Cannot set array shape: Bitmap must be removed before shape can "
		              "be changed (uraid grow --bitmap=none first)");
	for (int s = 0; s < a->geo.raid_disks; s++)
		if (a->slot[s] < 0 || a->mem[a->slot[s]]->state != URAID_MEMBER_IN_SYNC)
			return errmsg(err, errlen, -EINVAL,
			              "the array is degraded (slot %d): restore it first", s);
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
	rc = eng_reshape_refuse_cut(a, eng_reshape_geo_size(&g, a->geo.dev_sectors), err, errlen);
	if (rc < 0)
		return rc;
	int need = r.new.raid_disks > r.old.raid_disks ? (int)(r.new.raid_disks - r.old.raid_disks)
	                                               : 0,
	    got = 0;
	for (int i = 0; i < a->nmem && got < need; i++)
		if (a->mem[i]->state == URAID_MEMBER_SPARE && a->mem[i]->m && !a->mem[i]->left_out)
			spares[got++] = i;
	if (got < need)
		return errmsg(err, errlen, -EINVAL,
		              "%u -> %u members needs %d spare(s) to take the new slots; the "
		              "array has %d",
		              r.old.raid_disks, r.new.raid_disks, need, got);
	/* mdadm's raid10_reshape / set_new_data_offset: more members move
	 * the offset down by exactly the minimum, fewer up by it, the same
	 * count toward the more room (uraid: up to 16 MiB of it). */
	uint64_t min = min_offset_change(&r);
	if (!before && !after)
		return errmsg(err, errlen, -EOPNOTSUPP,
		              "Metadata version doesn't support data_offset changes, which md's "
		              "raid10 reshape needs (it has no backup file)");
	int delta = (int)r.new.raid_disks - (int)r.old.raid_disks;
	if (delta > 0)
		r.backwards = false;
	else if (delta < 0)
		r.backwards = true;
	else if (o->direction)
		r.backwards = o->direction < 0;
	else
		r.backwards = !(before > after);
	uint64_t room = r.backwards ? after : before;
	if (room < min)
		return errmsg(err, errlen, -ENOSPC,
		              "%s for reshape: %llu free sectors %s the data area, %llu needed "
		              "(md's raid10 reshape has no backup file)%s",
		              r.backwards ? "Insufficient tail-space" : "Insufficient head-space",
		              (unsigned long long)room, r.backwards ? "after" : "before",
		              (unsigned long long)min,
		              r.backwards ? "; a smaller --size leaves room after it" : "");
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
		r.position = eng_reshape_geo_size(&s, a->geo.dev_sectors);
		r.position -= r.position % md_reshape_unit(&r);
	}
	*rp = r;
	*needp = need;
	return 0;
}
