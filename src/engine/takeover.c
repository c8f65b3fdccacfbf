/* md's takeovers: level changes that leave every block where it is, as
 * the kernel's raid0.c, raid1.c, raid5.c and raid10.c takeover functions
 * do them (mdadm --grow --level): raid0 (one zone) -> raid4/raid5 (layout
 * parity-last, a new missing parity slot) and -> raid10 near-2 (each member
 * in an even slot, its mirror missing); raid4 and raid5 parity-last ->
 * raid0 when the parity slot is empty; raid10 near-2 -> raid0 when one of
 * each pair is left (mdadm removes the other first: so does this); raid1
 * of 2 <-> raid5 of 2; raid5 -> raid6 with the matching "-6" layout (Q on
 * a new missing last slot) and back (the Q member becomes a spare); and a
 * linear array gains a member at its end. Missing slots are then recovered
 * onto spares as after any failure. The array size does not change. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/log.h"
#include "engine/md.h"
#include "engine/reshape_int.h"
#include "engine/sync/sync.h"
#include "util/errmsg.h"

#define ROLE_SPARE  (-1) /* the member stays as a spare */
#define ROLE_REMOVE (-2) /* the member leaves the array (mdadm --fail/--remove) */

struct takeover {
	struct layout_geometry geo;
	int map[LAYOUT_MAX_MEMBERS]; /* old role -> new role, ROLE_SPARE, ROLE_REMOVE */
	bool clean;                  /* md sets recovery_cp = MaxSector */
};

static bool present(const struct eng_array *a, int r)
{
	return a->slot[r] >= 0 && a->mem[a->slot[r]]->state == URAID_MEMBER_IN_SYNC;
}

static int missing_count(const struct eng_array *a)
{
	int n = 0;
	for (int r = 0; r < a->geo.raid_disks; r++)
		n += !present(a, r);
	return n;
}

/* raid45_takeover_raid0 / raid10_takeover_raid0: one zone only; the size
 * each member gives it. */
static int raid0_zone(const struct eng_array *a, uint64_t *dev, char *err, size_t errlen)
{
	uint64_t c = a->geo.chunk_sectors ? a->geo.chunk_sectors : 1;
	uint64_t z = 0;
	for (int r = 0; r < a->geo.raid_disks; r++) {
		uint64_t s = a->geo.member_sectors[r] / c * c;
		if (r && s != z)
			return errmsg(err, errlen, -EINVAL,
			              "cannot takeover raid0 with more than one zone");
		z = s;
	}
	*dev = z;
	return 0;
}

static uint32_t r5_of_6(uint32_t l)
{
	return l >= 16 && l <= 19 ? l - 16 : l == 20 ? 4 : l == 5 ? 5 : UINT32_MAX;
}

static uint32_t r6_of_5(uint32_t l)
{
	return l <= 3 ? l + 16 : l == 4 ? 20 : l == 5 ? 5 : UINT32_MAX;
}

/* What md does for this change, or an error in its words. */
static int plan(const struct eng_array *a, int level, uint32_t layout, struct takeover *t,
                char *err, size_t errlen)
{
	const struct layout_geometry *g = &a->geo;
	int n = g->raid_disks;
	memset(t, 0, sizeof(*t));
	t->geo = *g;
	t->geo.level = level;
	for (int r = 0; r < LAYOUT_MAX_MEMBERS; r++)
		t->map[r] = r;
	int rc;
	uint64_t dev = 0;
	switch (g->level * 100 + level) {
	case 0 * 100 + 4:
	case 0 * 100 + 5:
		if (missing_count(a))
			return errmsg(err, errlen, -EINVAL, "the raid0 is degraded");
		if ((rc = raid0_zone(a, &dev, err, errlen)) < 0)
			return rc;
		if (n + 1 > LAYOUT_MAX_MEMBERS)
			return errmsg(err, errlen, -EINVAL, "too many members");
		t->geo.layout = LAYOUT_PARITY_N;
		t->geo.raid_disks = n + 1;
		t->geo.dev_sectors = dev;
		t->clean = true;
		return 0;
	case 0 * 100 + 10:
		if (missing_count(a))
			return errmsg(err, errlen, -EINVAL,
			              "Error - requested raid10 conversion for degraded raid0");
		if ((rc = raid0_zone(a, &dev, err, errlen)) < 0)
			return rc;
		if (2 * n > LAYOUT_MAX_MEMBERS)
			return errmsg(err, errlen, -EINVAL, "too many members");
		t->geo.layout = (1u << 8) + 2;
		t->geo.raid_disks = 2 * n;
		t->geo.dev_sectors = dev;
		for (int r = 0; r < n; r++)
			t->map[r] = 2 * r;
		t->clean = true;
		return 0;
	case 4 * 100 + 0:
	case 5 * 100 + 0:
		if (g->level == 5 && g->layout != LAYOUT_PARITY_N)
			return errmsg(err, errlen, -EINVAL,
			              "raid5 must have the parity-last layout to become raid0");
		/* mdadm's impose_level fails the parity member out of the
		 * array first (when it is there); raid45_takeover_raid0 then
		 * wants every data member */
		if (missing_count(a) - !present(a, n - 1) > 0)
			return errmsg(err, errlen, -EINVAL,
			              "%s must have missing parity disk! (a data member is missing "
			              "too: raid0 would lose its blocks)",
			              level_name(g->level));
		t->geo.layout = RAID0_LAYOUT_NONE;
		t->geo.raid_disks = n - 1;
		t->map[n - 1] = ROLE_REMOVE;
		t->clean = true;
		break;
	case 10 * 100 + 0:
		if (g->layout != (1u << 8) + 2)
			return errmsg(err, errlen, -EINVAL,
			              "Raid can only takeover Raid10 with layout: %u",
			              (1u << 8) + 2);
		if (n & 1)
			return errmsg(err, errlen, -EINVAL,
			              "Raid0 cannot takeover Raid10 with odd disk number.");
		/* mdadm's remove_disks_for_takeover: of each pair the second
		 * goes when the first is there. */
		for (int r = 0; r < n; r += 2) {
			if (present(a, r)) {
				t->map[r] = r / 2;
				t->map[r + 1] = ROLE_REMOVE;
			} else if (present(a, r + 1)) {
				t->map[r] = ROLE_REMOVE;
				t->map[r + 1] = r / 2;
			} else {
				return errmsg(err, errlen, -EINVAL,
				              "both copies of slots %d and %d are missing", r,
				              r + 1);
			}
		}
		t->geo.layout = RAID0_LAYOUT_NONE;
		t->geo.raid_disks = n / 2;
		t->clean = true;
		break;
	case 1 * 100 + 5: {
		if (n != 2)
			return errmsg(err, errlen, -EINVAL,
			              "a raid1 becomes raid5 only with 2 devices (has %d)", n);
		/* takeover_raid1: the largest chunk up to 64K dividing the size. */
		uint32_t c = 128;
		while (c && (a->array_sectors & (c - 1)))
			c >>= 1;
		if (c < 8)
			return errmsg(err, errlen, -EINVAL,
			              "the array size is not a multiple of 4K: no chunk fits");
		t->geo.layout = 2; /* left-symmetric */
		t->geo.chunk_sectors = c;
		return 0;
	}
	case 5 * 100 + 1:
		if (n != 2)
			return errmsg(err, errlen, -EINVAL,
			              "a raid5 becomes raid1 only with 2 devices (has %d)", n);
		t->geo.layout = 0;
		t->geo.chunk_sectors = 0;
		return 0;
	case 4 * 100 + 5:
		if (layout != UINT32_MAX && layout != LAYOUT_PARITY_N)
			return errmsg(err, errlen, -EINVAL, "raid4 becomes raid5 parity-last only");
		t->geo.layout = LAYOUT_PARITY_N;
		return 0;
	case 5 * 100 + 4:
		if (g->layout != LAYOUT_PARITY_N)
			return errmsg(err, errlen, -EINVAL,
			              "raid5 must have the parity-last layout to become raid4");
		t->geo.layout = LAYOUT_PARITY_N;
		return 0;
	case 5 * 100 + 6:
		if (n + 1 > LAYOUT_MAX_MEMBERS)
			return errmsg(err, errlen, -EINVAL, "too many members");
		t->geo.layout = r6_of_5(g->layout);
		t->geo.raid_disks = n + 1;
		return 0;
	case 6 * 100 + 5:
		t->geo.layout = r5_of_6(g->layout);
		if (t->geo.layout == UINT32_MAX)
			return errmsg(err, errlen, -EINVAL,
			              "raid6 layout %u has no raid5 twin: only the -6 layouts and "
			              "parity-last become raid5 without a reshape",
			              g->layout);
		t->geo.raid_disks = n - 1;
		t->map[n - 1] = ROLE_SPARE;
		return 0;
	default:
		return errmsg(err, errlen, -EINVAL, "md cannot take %s over as %s",
		              level_name(g->level), level_name(level));
	}
	/* raid0 has no spares: create_strip_zones refuses them. */
	for (int i = 0; i < a->nmem; i++)
		if (a->mem[i]->m && !a->mem[i]->left_out && a->mem[i]->role < 0 &&
		    a->mem[i]->state == URAID_MEMBER_SPARE)
			return errmsg(err, errlen, -EINVAL,
			              "remove inactive devices before converting to RAID0 (%s)",
			              a->mem[i]->m->name);
	/* To raid0: each member's own size, as raid0 computes its zones. */
	for (int r = 0; r < n; r++)
		if (t->map[r] >= 0 && a->slot[r] >= 0)
			t->geo.member_sectors[t->map[r]] = a->mem[a->slot[r]]->sb.data_size;
	return 0;
}

/* The new geometry, roles and superblock fields; undone by the caller
 * from its copy when the superblocks cannot be written. */
static void apply(struct eng_array *a, const struct takeover *t)
{
	int n = a->geo.raid_disks;
	int slot[LAYOUT_MAX_MEMBERS];
	for (int r = 0; r < LAYOUT_MAX_MEMBERS; r++)
		slot[r] = -1;
	for (int r = 0; r < n; r++) {
		int i = a->slot[r];
		if (i < 0)
			continue;
		struct eng_member *em = a->mem[i];
		if (t->map[r] >= 0) {
			em->role = t->map[r];
			slot[t->map[r]] = i;
		} else {
			em->role = -1;
			em->state =
			    t->map[r] == ROLE_SPARE ? URAID_MEMBER_SPARE : URAID_MEMBER_FAULTY;
		}
	}
	memcpy(a->slot, slot, sizeof(slot));
	a->geo = t->geo;
	a->ops = layout_ops_for(t->geo.level);
	a->pers = eng_pers_for(t->geo.level);
	/* An array size set by hand (md's array_size) stays. */
	if (!a->external_size)
		a->array_sectors = a->ops->array_sectors(&a->geo);
	a->ncopies = a->ops->ncopies(&a->geo);
	a->ref.level = t->geo.level;
	a->ref.layout = t->geo.layout;
	a->ref.chunk_sectors = t->geo.chunk_sectors;
	a->ref.raid_disks = (uint32_t)t->geo.raid_disks;
	if (t->geo.level != URAID_LEVEL_RAID0)
		a->ref.size = t->geo.dev_sectors;
	a->ref.feature_map &= ~MD_FEATURE_RAID0_LAYOUT;
	if (t->clean)
		a->resync_offset = MD_RESYNC_NONE;
	if (!a->pers->consistency)
		a->resync_offset = MD_RESYNC_NONE;
}

struct saved {
	struct layout_geometry geo;
	const struct layout_ops *ops;
	const struct eng_pers *pers;
	uint64_t array_sectors, resync_offset;
	int ncopies;
	int slot[LAYOUT_MAX_MEMBERS];
	struct md_sb ref;
	int role[ENG_MAX_MEMBERS];
	enum uraid_member_state state[ENG_MAX_MEMBERS];
};

static void save(const struct eng_array *a, struct saved *s)
{
	s->geo = a->geo;
	s->ops = a->ops;
	s->pers = a->pers;
	s->array_sectors = a->array_sectors;
	s->resync_offset = a->resync_offset;
	s->ncopies = a->ncopies;
	memcpy(s->slot, a->slot, sizeof(s->slot));
	s->ref = a->ref;
	for (int i = 0; i < a->nmem; i++) {
		s->role[i] = a->mem[i]->role;
		s->state[i] = a->mem[i]->state;
	}
}

static void restore(struct eng_array *a, const struct saved *s)
{
	a->geo = s->geo;
	a->ops = s->ops;
	a->pers = s->pers;
	a->array_sectors = s->array_sectors;
	a->resync_offset = s->resync_offset;
	a->ncopies = s->ncopies;
	memcpy(a->slot, s->slot, sizeof(s->slot));
	a->ref = s->ref;
	for (int i = 0; i < a->nmem; i++) {
		a->mem[i]->role = s->role[i];
		a->mem[i]->state = s->state[i];
	}
}

/* engine/reshape_int.h: a takeover's new empty slots, each to a spare
 * the reshape then fills. */
void eng_reshape_fill_slots(struct eng_array *a)
{
	for (int r = 0; r < a->geo.raid_disks; r++) {
		if (a->slot[r] >= 0)
			continue;
		for (int i = 0; i < a->nmem; i++) {
			struct eng_member *em = a->mem[i];
			if (em->state != URAID_MEMBER_SPARE || !em->m || em->left_out)
				continue;
			em->role = r;
			em->state = URAID_MEMBER_REBUILDING;
			em->recovery_offset = 0;
			em->sb.feature_map &= ~MD_FEATURE_RECOVERY_BITMAP;
			a->slot[r] = i;
			a->geo.member_sectors[r] = em->sb.data_size;
			break;
		}
	}
}

static int takeover_locked(struct eng_array *a, int level, uint32_t layout, int raid_disks,
                           unsigned how, char *err, size_t errlen)
{
	if (a->log || a->logdev)
		return errmsg(err, errlen, -EBUSY,
		              "the array has a %s: remove it before changing the level",
		              a->log && a->log->name ? a->log->name : "log");
	for (int i = 0; i < a->nmem; i++)
		if (a->mem[i]->state == URAID_MEMBER_REBUILDING || a->mem[i]->replacement)
			return errmsg(err, errlen, -EBUSY, "a recovery is running");
	if (a->action != URAID_SYNC_IDLE || a->resync_offset != MD_RESYNC_NONE)
		return errmsg(err, errlen, -EBUSY, "a resync is pending or running");
	struct takeover t;
	int rc = plan(a, level, layout, &t, err, errlen);
	if (rc < 0)
		return rc;
	if (layout != UINT32_MAX && layout != t.geo.layout)
		return errmsg(err, errlen, -EINVAL,
		              "%s -> %s keeps every block in place only with layout %u",
		              level_name(a->geo.level), level_name(level), t.geo.layout);
	if (raid_disks > 0 && raid_disks != t.geo.raid_disks)
		return errmsg(err, errlen, -EINVAL, "%s -> %s without a reshape has %d devices",
		              level_name(a->geo.level), level_name(level), t.geo.raid_disks);
	const struct layout_ops *ops = layout_ops_for(level);
	const struct eng_pers *pers = eng_pers_for(level);
	if (!ops || !pers)
		return errmsg(err, errlen, -EOPNOTSUPP, "level %d is not supported", level);
	struct layout_geometry g = t.geo;
	for (int r = 0; r < g.raid_disks; r++)
		if (!g.member_sectors[r])
			g.member_sectors[r] = g.dev_sectors;
	char e[256];
	rc = ops->validate(&g, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s", e);
	uint64_t want = ops->array_sectors(&g), full = a->ops->array_sectors(&a->geo);
	if (level == URAID_LEVEL_RAID0 ? want < full : want != full)
		return errmsg(err, errlen, -EINVAL,
		              "the %s would hold %llu sectors, not the array's %llu", ops->name,
		              (unsigned long long)want, (unsigned long long)full);
	struct saved *s = malloc(sizeof(*s));
	if (!s)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	save(a, s);
	if (a->pers->stop)
		a->pers->stop(a);
	apply(a, &t);
	rc = a->pers->start ? a->pers->start(a, err, errlen) : 0;
	if (rc == 0 && (how & ENG_TAKEOVER_FILL))
		eng_reshape_fill_slots(a);
	if (rc == 0 && !(how & ENG_TAKEOVER_NOWRITE)) {
		rc = eng_sb_write_all(a);
		if (rc < 0)
			errmsg(err, errlen, rc, "writing the superblocks failed");
	}
	if (rc < 0) {
		if (a->pers->stop)
			a->pers->stop(a);
		restore(a, s);
		free(s);
		if (a->pers->start)
			a->pers->start(a, e, sizeof(e));
		return rc;
	}
	free(s);
	if (how & ENG_TAKEOVER_NOWRITE)
		return 0;
	/* Members mdadm would have failed and removed leave the array. */
	for (int i = a->nmem - 1; i >= 0; i--)
		if (a->mem[i]->state == URAID_MEMBER_FAULTY && a->mem[i]->role < 0 &&
		    !a->mem[i]->left_out) {
			eng_member_drop(a, i);
			eng_sb_write_all(a);
		}
	eng_sync_schedule(a);
	pthread_cond_broadcast(&a->cond);
	return 0;
}

int eng_takeover_locked(struct eng_array *a, int level, uint32_t layout, int raid_disks,
                        unsigned how, char *err, size_t errlen)
{
	if (level == a->geo.level)
		return errmsg(err, errlen, -EINVAL, "the array is %s already", level_name(level));
	return takeover_locked(a, level, layout, raid_disks, how, err, errlen);
}

int eng_takeover(struct eng_array *a, int level, uint32_t layout, int raid_disks, char *err,
                 size_t errlen)
{
	if (a->readonly)
		return errmsg(err, errlen, -EROFS, "array is read-only");
	if (level == a->geo.level)
		return errmsg(err, errlen, -EINVAL, "the array is %s already", level_name(level));
	/* The stripe cache's writes out first (the new level may have none). */
	if (a->pers->set_cache) {
		int rc = a->pers->set_cache(a, 0);
		if (rc < 0)
			return errmsg(err, errlen, rc, "writing the stripe cache out failed");
	}
	eng_lock(a);
	int rc = takeover_locked(a, level, layout, raid_disks, 0, err, errlen);
	eng_unlock(a);
	return rc;
}
