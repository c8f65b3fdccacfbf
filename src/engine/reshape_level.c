/* Level changes that move data (engine/reshape_int.h), planned as
 * mdadm's analyse_change plans them and recorded as md records them:
 *   raid5 -> raid6: takeover to the raid5 layout's "-6" twin with a new Q
 *     slot (raid6_takeover), then a reshape at level 6 to the layout asked
 *     (by default the raid5 layout's number, as mdadm keeps it), the
 *     members asked (by default one more);
 *   raid6 -> raid5: a reshape at level 6 to the "-6" twin of the raid5
 *     layout asked, then the takeover that drops Q (the Q member becomes
 *     a spare) once the move is over;
 *   raid4 -> raid5: takeover to parity-last, then a reshape to the layout;
 *   raid0 -> raid4/raid5: takeover to parity-last with a new parity slot,
 *     then a reshape to the layout and members asked;
 *   raid5 -> raid0: a reshape at level 5 to parity-last, the members kept,
 *     then the takeover that fails the parity member out (mdadm's
 *     impose_level); a raid4 or parity-last raid5 only the takeover.
 * A takeover's new slot is given to a spare that the reshape fills (md's
 * raid5_start_reshape puts spares in empty slots with recovery_offset 0;
 * engine/core/reshape.h's eng_reshape_fills). The superblocks say the
 * intermediate level during the move (md's raid5_run wants level ==
 * new_level), so a kernel resumes it; a raid6 -> raid5 stopped before
 * its end stays a raid6 with the -6 layout, as mdadm leaves it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/core/reshape.h"
#include "engine/md.h"
#include "engine/reshape_int.h"
#include "engine/sync/sync.h"
#include "util/errmsg.h"

static uint32_t r6_twin(uint32_t l5)
{
	return l5 <= 3 ? l5 + 16 : l5 == 4 ? 20 : l5 == 5 ? 5 : UINT32_MAX;
}

struct level_plan {
	int via;                      /* takeover first to this level (-1: none) */
	uint32_t via_layout;          /* ... and layout */
	int fill;                     /* slots the takeover adds, filled by the reshape */
	int then;                     /* takeover to this level after the move ... */
	bool then_set;                /* ... when set */
	struct uraid_reshape_opts ro; /* the reshape at the intermediate level */
	bool takeover_only;           /* nothing moves: one takeover to ro's geometry */
};

static int too_small(char *err, size_t errlen)
{
	return errmsg(err, errlen, -EINVAL,
	              "this change will reduce the size of the array (a backwards reshape): use "
	              "--grow --array-size first to truncate the array");
}

static int plan(const struct eng_array *a, const struct uraid_reshape_opts *o, struct level_plan *p,
                char *err, size_t errlen)
{
	int from = a->geo.level, n = a->geo.raid_disks;
	int to = o->level == URAID_RESHAPE_TO_RAID0 ? URAID_LEVEL_RAID0 : o->level;
	uint32_t cur = a->geo.layout;
	memset(p, 0, sizeof(*p));
	p->ro = *o;
	p->ro.level = 0;
	p->via = -1;
	int target;
	switch (from * 100 + to) {
	case 5 * 100 + 6:
		target = o->raid_disks > 0 ? o->raid_disks : n + 1;
		if (target < n + 1)
			return too_small(err, errlen);
		p->via = 6;
		p->via_layout = r6_twin(cur);
		if (p->via_layout == UINT32_MAX)
			return errmsg(err, errlen, -EINVAL,
			              "Cannot convert an array with this layout");
		p->fill = 1;
		p->ro.layout = o->layout >= 0 ? o->layout : (int)cur;
		p->ro.raid_disks = target;
		p->takeover_only = (uint32_t)p->ro.layout == p->via_layout && target == n + 1;
		return 0;
	case 6 * 100 + 5: {
		target = o->raid_disks > 0 ? o->raid_disks : n - 1;
		if (target < n - 1)
			return too_small(err, errlen);
		/* analyse_change: the raid6 twin of the raid5 layout asked
		 * (unset: the current number); a -6 layout stays. */
		uint32_t l = o->layout >= 0 ? (uint32_t)o->layout : cur;
		uint32_t after = l <= 5 ? r6_twin(l) : l >= 16 && l <= 20 ? l : UINT32_MAX;
		if (after == UINT32_MAX)
			return errmsg(err, errlen, -EINVAL, "Please specify new layout");
		p->ro.layout = (int)after;
		p->ro.raid_disks = target + 1;
		p->then = 5;
		p->then_set = true;
		p->takeover_only = after == cur && target == n - 1;
		return 0;
	}
	case 4 * 100 + 5:
		target = o->raid_disks > 0 ? o->raid_disks : n;
		if (target < n)
			return too_small(err, errlen);
		p->via = 5;
		p->via_layout = LAYOUT_PARITY_N;
		p->ro.layout = o->layout >= 0 ? o->layout : LAYOUT_PARITY_N;
		p->ro.raid_disks = target;
		p->takeover_only = p->ro.layout == LAYOUT_PARITY_N && target == n;
		return 0;
	case 0 * 100 + 4:
	case 0 * 100 + 5:
		target = o->raid_disks > 0 ? o->raid_disks : n + 1;
		if (target < n + 1)
			return too_small(err, errlen);
		if (to == 4 && o->layout >= 0 && o->layout != LAYOUT_PARITY_N)
			return errmsg(err, errlen, -EINVAL,
			              "raid4 has the parity-last layout only");
		p->via = to;
		p->via_layout = LAYOUT_PARITY_N;
		p->fill = 1;
		p->ro.layout = to == 4 || o->layout < 0
		                   ? (to == 4 ? LAYOUT_PARITY_N : LAYOUT_LEFT_SYMMETRIC)
		                   : o->layout;
		p->ro.raid_disks = target;
		p->takeover_only = p->ro.layout == LAYOUT_PARITY_N && target == n + 1;
		return 0;
	case 4 * 100 + 0:
	case 5 * 100 + 0:
		/* analyse_change: raid0 keeps the data members; a raid5 is
		 * restriped to parity-last first (its chunk may change with
		 * it), then impose_level fails the parity member out */
		if (o->raid_disks > 0 && o->raid_disks != n - 1)
			return errmsg(err, errlen, -EINVAL,
			              "raid0 from %s keeps its %d data members: change the member "
			              "count first, then the level",
			              level_name(from), n - 1);
		/* raid45_takeover_raid0 at the end wants every data member
		 * (the parity slot, n - 1 after the restripe, may be empty):
		 * refused before anything moves */
		for (int r = 0; r < n - 1; r++)
			if (a->slot[r] < 0 || a->mem[a->slot[r]]->state != URAID_MEMBER_IN_SYNC)
				return errmsg(err, errlen, -EINVAL,
				              "%s must have missing parity disk! (slot %d, a data "
				              "member, is missing: raid0 would lose its blocks)",
				              level_name(from), r);
		if (from == 4 && o->chunk_sectors && o->chunk_sectors != a->geo.chunk_sectors)
			return errmsg(err, errlen, -EINVAL,
			              "Cannot change the chunk of a raid4 on the way to raid0");
		p->ro.layout = LAYOUT_PARITY_N;
		p->ro.raid_disks = n;
		p->then = URAID_LEVEL_RAID0;
		p->then_set = true;
		p->takeover_only =
		    from == 4 || (cur == LAYOUT_PARITY_N &&
		                  (!o->chunk_sectors || o->chunk_sectors == a->geo.chunk_sectors));
		return 0;
	default:
		return errmsg(err, errlen, -EINVAL, "Impossible level change requested (%s to %s)",
		              level_name(from), level_name(to));
	}
}

static int spare_count(const struct eng_array *a)
{
	int n = 0;
	/* a member a recovery rebuilds is a spare again for the reshape
	 * (eng_reshape_stop_recovery) */
	for (int i = 0; i < a->nmem; i++) {
		const struct eng_member *em = a->mem[i];
		n += em->m && !em->left_out && !em->replacement &&
		     (em->state == URAID_MEMBER_SPARE ||
		      (em->role >= 0 && em->state == URAID_MEMBER_REBUILDING));
	}
	return n;
}

/* A takeover with no recovery scheduled: the reshape fills the new slot
 * (fill), or nothing needs it. */
static int quiet_takeover(struct eng_array *a, int level, uint32_t layout, unsigned how, char *err,
                          size_t errlen)
{
	bool frozen = a->frozen;
	a->frozen = true;
	int rc = eng_takeover_locked(a, level, layout, 0, how, err, errlen);
	a->frozen = frozen;
	return rc;
}

/* raid6 -> raid5's last step, once the move is over (core/reshape.h's
 * then): in finish(), the sync action still set; eng_reshape_complete
 * writes the superblocks after it. */
static int then_takeover(struct eng_array *a, int level)
{
	enum uraid_sync_action act = a->action;
	a->action = URAID_SYNC_IDLE;
	char e[256];
	int rc = quiet_takeover(a, level, UINT32_MAX, ENG_TAKEOVER_NOWRITE, e, sizeof(e));
	a->action = act;
	if (rc < 0)
		fprintf(stderr, "uraid: reshape done; the change to %s failed: %s\n",
		        level_name(level), e);
	/* raid0's parity member, failed out, is recorded faulty, then leaves
	 * the array (mdadm's impose_level: fail, remove, then the level; the
	 * takeover's own path writes the same two updates), so it is two
	 * events behind and stale at the next assembly, never a spare of a
	 * raid0 (the completion writes the second update) */
	if (rc == 0 && level == URAID_LEVEL_RAID0 && eng_sb_write_all(a) == 0)
		for (int i = a->nmem - 1; i >= 0; i--)
			if (a->mem[i]->state == URAID_MEMBER_FAULTY && a->mem[i]->role < 0 &&
			    !a->mem[i]->left_out)
				eng_member_drop(a, i);
	return rc;
}

static int check(const struct eng_array *a, const struct level_plan *p, char *err, size_t errlen)
{
	if (p->takeover_only)
		return 0;
	if (a->rs)
		return errmsg(err, errlen, -EBUSY, "a reshape is already in progress");
	int n = a->geo.raid_disks;
	int after_takeover = p->via >= 0 ? n + p->fill : n;
	int need = p->ro.raid_disks - after_takeover + p->fill, got = spare_count(a);
	if (need > got && !p->ro.force)
		return errmsg(err, errlen, -EINVAL,
		              "Need %d spare%s to avoid degraded array, and only have %d. Use "
		              "--force to over-ride this check.",
		              need, need == 1 ? "" : "s", got);
	return 0;
}

int eng_reshape_level_check(struct eng_array *a, const struct uraid_reshape_opts *o, char *err,
                            size_t errlen)
{
	struct level_plan p;
	int rc = plan(a, o, &p, err, errlen);
	return rc < 0 ? rc : check(a, &p, err, errlen);
}

int eng_reshape_level_locked(struct eng_array *a, const struct uraid_reshape_opts *o, char *err,
                             size_t errlen)
{
	struct level_plan p;
	int rc = plan(a, o, &p, err, errlen);
	if (rc < 0)
		return rc;
	int from = a->geo.level, n = a->geo.raid_disks;
	uint32_t layout = a->geo.layout;
	if (p.takeover_only) {
		int to = p.then_set ? p.then : o->level;
		rc = quiet_takeover(a, to, p.then_set ? UINT32_MAX : p.via_layout, 0, err, errlen);
		if (rc == 0)
			eng_sync_schedule(a);
		return rc;
	}
	if ((rc = check(a, &p, err, errlen)) < 0)
		return rc;
	if (p.fill) /* md's recovery_offset follows a forward reshape only */
		p.ro.direction = 1;
	if (p.via >= 0) {
		/* recorded by the reshape's start, in the same write */
		rc = quiet_takeover(a, p.via, p.via_layout,
		                    ENG_TAKEOVER_NOWRITE | (p.fill ? ENG_TAKEOVER_FILL : 0), err,
		                    errlen);
		if (rc < 0)
			return rc;
	}
	rc = eng_reshape_start_locked(a, &p.ro, err, errlen);
	if (rc == 0) {
		if (p.then_set) {
			a->rs->then = then_takeover;
			a->rs->then_level = p.then;
		}
		return 0;
	}
	/* Started, but the superblocks could not say so: the reshape goes
	 * on in memory as any other whose checkpoint fails. */
	if (a->rs)
		return rc;
	/* Back to where it was, as mdadm aborts the level change. */
	for (int i = 0; i < a->nmem; i++)
		if (eng_reshape_fills(a->mem[i]) && a->mem[i]->role >= n) {
			a->slot[a->mem[i]->role] = -1;
			a->mem[i]->role = -1;
			a->mem[i]->state = URAID_MEMBER_SPARE;
		}
	if (p.via >= 0) {
		char e[256];
		if (quiet_takeover(a, from, layout, ENG_TAKEOVER_NOWRITE, e, sizeof(e)) < 0) {
			/* the takeover stays, recorded: a state md knows */
			fprintf(stderr,
			        "uraid: the reshape did not start; going back to %s failed (%s): "
			        "the array stays %s\n",
			        level_name(from), e, level_name(p.via));
			eng_sb_write_all(a);
		}
	}
	return rc;
}
