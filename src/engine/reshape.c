/* md arrays being reshaped: assembling one the kernel (or uraid) left
 * mid-reshape, starting one, and the requests in between
 * (engine/core/reshape.h has the views and the crash-safety rule; the
 * move itself is the personality's reshape op, run by engine/sync). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/bitmap/bitmap.h"
#include "engine/core/log.h"
#include "engine/core/reshape.h"
#include "engine/md.h"
#include "engine/reshape_backup.h"
#include "engine/reshape_int.h"
#include "engine/sync/sync.h"
#include "util/errmsg.h"

static void geo_of(const struct eng_array *a, const struct md_reshape_geom *g,
                   struct layout_geometry *out)
{
	*out = a->geo;
	out->level = g->level;
	out->layout = g->layout;
	out->chunk_sectors = g->chunk_sectors;
	out->raid_disks = (int)g->raid_disks;
}

/* Both geometries valid and readable with the members there; a->rs set
 * (position and offsets from r), the view at rest. */
static int reshape_setup(struct eng_array *a, const struct md_reshape *r, char *err, size_t errlen)
{
	char e[256];
	struct eng_reshape *rs = calloc(1, sizeof(*rs));
	if (!rs)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	rs->r = *r;
	rs->safe = r->position;
	geo_of(a, &r->old, &rs->geo[0]);
	geo_of(a, &r->new, &rs->geo[1]);
	for (int v = 0; v < 2; v++) {
		rs->ops[v] = layout_ops_for(rs->geo[v].level);
		struct layout_geometry g = rs->geo[v];
		for (int i = 0; i < g.raid_disks; i++)
			if (!g.member_sectors[i])
				g.member_sectors[i] = g.dev_sectors;
		int rc = -EOPNOTSUPP;
		snprintf(e, sizeof(e), "level %d is not supported", g.level);
		if (rs->ops[v])
			rc = rs->ops[v]->validate(&g, e, sizeof(e));
		if (rc < 0) {
			free(rs);
			return errmsg(err, errlen, rc, "reshape: the %s geometry: %s",
			              v ? "new" : "old", e);
		}
		/* A member the move fills holds the new geometry's rows (up to
		 * the position) and none of the old one's (md's
		 * raid5_calc_degraded counts it so). */
		bool missing[LAYOUT_MAX_MEMBERS];
		for (int s = 0; s < g.raid_disks; s++) {
			const struct eng_member *em = a->slot[s] < 0 ? NULL : a->mem[a->slot[s]];
			missing[s] = !em || (em->state != URAID_MEMBER_IN_SYNC &&
			                     !(v == 1 && !r->backwards && eng_reshape_fills(em)));
		}
		if (!rs->ops[v]->readable(&g, missing)) {
			free(rs);
			return errmsg(err, errlen, -ENODEV,
			              "reshape: too few working members for the %s geometry (%d "
			              "members)",
			              v ? "new" : "old", g.raid_disks);
		}
		rs->size[v] = eng_reshape_geo_size(&rs->geo[v], a->geo.dev_sectors);
	}
	for (int i = 0; i < a->nmem; i++) {
		struct eng_member *em = a->mem[i];
		em->reshape_doff[0] = em->sb.data_offset;
		em->reshape_doff[1] = (uint64_t)((int64_t)em->sb.data_offset + r->offset_delta);
		if (!em->left_out && em->m) {
			int rc =
			    md_reshape_check_device(&em->sb, r, em->m->size / 512, e, sizeof(e));
			if (rc < 0) {
				free(rs);
				return errmsg(err, errlen, rc, "%s: reshape: %s", em->m->name, e);
			}
		}
	}
	/* raid5_size(mddev, 0, 0): the fewer data members, on members cut
	 * to both chunks; a backwards move starts at its end. */
	rs->rest = r->old.raid_disks > r->new.raid_disks ? 0 : 1;
	uint64_t unit = md_reshape_unit(r);
	rs->start = rs->size[0] < rs->size[1] ? rs->size[0] : rs->size[1];
	if (unit)
		rs->start -= rs->start % unit;
	if (r->backwards && r->position > rs->start) {
		unsigned long long st = rs->start;
		free(rs);
		return errmsg(
		    err, errlen, -EINVAL,
		    "reshape position %llu is past the end of the smaller geometry (%llu)",
		    (unsigned long long)r->position, st);
	}
	rs->checkpoint_ns = eng_now_ns();
	a->rs = rs;
	eng_reshape_view(a, -1);
	return 0;
}

/* Read-write needs what uraid can resume: no journal or PPL, no member being
 * rebuilt (its recovery offset would be in one of the layouts). */
static const char *resume_refusal(const struct eng_array *a, const struct md_reshape *r)
{
	if (a->ref.feature_map & (MD_FEATURE_JOURNAL | MD_FEATURE_PPL))
		return "the array has a journal or PPL, with which md does not reshape";
	/* A member rebuilding in a slot of the old geometry is one the
	 * reshape fills (md: recovery_offset follows reshape_position; a
	 * backwards move, as the kernel's raid5 -> raid6 where the room is
	 * after the data, fills it too); a replacement is not. */
	for (int i = 0; i < a->nmem; i++)
		if (!a->mem[i]->left_out && a->mem[i]->role >= 0 &&
		    a->mem[i]->state == URAID_MEMBER_REBUILDING &&
		    (a->mem[i]->replacement || a->mem[i]->role >= (int)r->old.raid_disks))
			return "a member is being rebuilt";
	return NULL;
}

int eng_reshape_assembled(struct eng_array *a, struct member *backup, char *err, size_t errlen)
{
	char e[256];
	struct md_reshape r;
	int rc = md_sb_reshape(&a->ref, &r, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc, "reshape in progress: %s", e);
	if (!r.active)
		return 0;
	if (r.old.level != r.new.level ||
	    (r.old.level != URAID_LEVEL_RAID4 && r.old.level != URAID_LEVEL_RAID5 &&
	     r.old.level != URAID_LEVEL_RAID6 && r.old.level != URAID_LEVEL_RAID10))
		return errmsg(err, errlen, -EOPNOTSUPP,
		              "reshape in progress from %s to %s: uraid maps only raid4/5/6 "
		              "and raid10 reshapes that keep the level",
		              level_name(r.old.level), level_name(r.new.level));
	if (r.old.level == URAID_LEVEL_RAID10) {
		rc = eng_reshape_raid10_check(&r, e, sizeof(e));
		if (rc < 0)
			return errmsg(err, errlen, rc, "reshape in progress: %s", e);
	}
	if (r.old.raid_disks > LAYOUT_MAX_MEMBERS || r.new.raid_disks > LAYOUT_MAX_MEMBERS)
		return errmsg(err, errlen, -EINVAL, "reshape in progress over %u members",
		              r.old.raid_disks > r.new.raid_disks ? r.old.raid_disks
		                                                  : r.new.raid_disks);
	const char *why = a->readonly ? NULL : resume_refusal(a, &r);
	if (why)
		return errmsg(err, errlen, -EOPNOTSUPP,
		              "reshape in progress (%u -> %u members, position %llu): %s; "
		              "assemble it read-only (--readonly), or let the kernel finish it",
		              r.old.raid_disks, r.new.raid_disks, (unsigned long long)r.position,
		              why);
	/* mdadm's start_array: a reshape in place (no data offset change:
	 * 0.90, or 1.x without RESHAPE_NO_BACKUP) that keeps or cuts the
	 * members goes on only under mdadm's sliding backup, so read-write
	 * assembly without the file is refused before md sees it (a shrink
	 * would run to its critical section near sector 0 and stop there;
	 * a chunk or layout change is unsafe at every window). */
	if (!a->readonly && !backup && !r.offset_delta && r.new.raid_disks <= r.old.raid_disks)
		return errmsg(err, errlen, -EOPNOTSUPP,
		              "reshape in progress (%u -> %u members, position %llu, in place): "
		              "Need a backup file to complete reshape of this array. Please "
		              "provide one with --backup-file=FILE (mdadm's words; the file the "
		              "reshape was started with), or assemble it read-only (--readonly)",
		              r.old.raid_disks, r.new.raid_disks, (unsigned long long)r.position);
	rc = reshape_setup(a, &r, err, errlen);
	if (rc == 0) /* md's raid10_run sizes it by the new geometry */
		a->rs->assembled = true;
	/* raid5_run: an in-place reshape (0.90, or 1.x without an offset
	 * change) whose next stripe would be written over rows it reads is
	 * "too early for auto-recovery": those stripes may be in mdadm's
	 * backup of the critical section only; with it, they are written
	 * back first (mdadm's Grow_restart, engine/reshape_backup.c). A
	 * shrink's is at its end (near sector 0). */
	uint64_t unit = md_reshape_unit(&r);
	bool early =
	    rc == 0 && !a->readonly && !r.offset_delta &&
	    (r.backwards ? r.position >= unit &&
	                       !eng_reshape_move_safe(a, r.position - unit, unit, r.position)
	                 : r.position < a->rs->size[1] &&
	                       !eng_reshape_move_safe(a, r.position, unit, r.position));
	bool needed = false;
	/* mdadm's sliding backup (a reshape in place that keeps or cuts the
	 * data members): the sections the position lies in restored, and
	 * the move goes on with the file, window by window. */
	if (rc == 0 && !a->readonly && backup && eng_slide_kind(&r)) {
		rc = eng_backup_check_restore(a, backup, &a->rs->restore_bsb, &needed, err, errlen);
		if (rc == 0 && needed)
			a->rs->restore = backup;
		if (rc == 0)
			rc = eng_slide_attach(a, backup, err, errlen);
		if (rc < 0) {
			eng_reshape_free(a->rs);
			a->rs = NULL;
		}
		return rc;
	}
	if (early && backup) {
		rc = eng_backup_check_restore(a, backup, &a->rs->restore_bsb, &needed, err, errlen);
		if (rc == 0 && !needed)
			rc = errmsg(
			    err, errlen, -EINVAL,
			    "reshape in progress (%u -> %u members, position %llu) is in its "
			    "critical section, and the backup file %s does not hold it (mdadm: "
			    "\"Failed to find backup of critical section\")",
			    r.old.raid_disks, r.new.raid_disks, (unsigned long long)r.position,
			    backup->name);
		if (rc == 0)
			a->rs->restore = backup;
		else {
			free(a->rs);
			a->rs = NULL;
		}
		return rc;
	}
	if (early) {
		free(a->rs);
		a->rs = NULL;
		return errmsg(
		    err, errlen, -EOPNOTSUPP,
		    "reshape in progress (%u -> %u members, position %llu) is too early "
		    "for auto-recovery, as md says: its first stripes, moved in place, "
		    "may be only in mdadm's backup of the critical section: give the backup "
		    "file with --backup-file (a backup on the new spare, which mdadm may keep, "
		    "uraid does not read; a reshape in place that keeps or cuts the data "
		    "members goes on only with it), or assemble it read-only (--readonly)",
		    r.old.raid_disks, r.new.raid_disks, (unsigned long long)r.position);
	}
	return rc;
}

void eng_reshape_setup(struct eng_array *a)
{
	struct eng_reshape *rs = a->rs;
	if (rs)
		a->array_sectors = rs->size[0] < rs->size[1] ? rs->size[0] : rs->size[1];
}

int eng_reshape_read(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	for (uint64_t end = lsec + nsec; lsec < end;) {
		bool is_new;
		uint64_t n = eng_reshape_piece(a, lsec, end, &is_new);
		eng_reshape_view(a, is_new);
		int rc = a->pers->read(a, buf, lsec, n);
		eng_reshape_view(a, -1);
		if (rc < 0)
			return rc;
		buf += n * 512;
		lsec += n;
	}
	return 0;
}

int eng_reshape_write(struct eng_array *a, const struct eng_req *rq, const uint8_t *buf,
                      uint64_t lsec, uint64_t nsec)
{
	for (uint64_t end = lsec + nsec; lsec < end;) {
		bool is_new;
		uint64_t n = eng_reshape_piece(a, lsec, end, &is_new);
		/* New-side sectors the superblocks still call old: a crash
		 * would read them from the old layout, so record first. */
		struct eng_reshape *rs = a->rs;
		if (is_new && (rs->r.backwards ? lsec < rs->safe : lsec + n > rs->safe)) {
			int rc = eng_reshape_checkpoint(a);
			if (rc < 0)
				return rc;
		}
		if (is_new && rs->slide) {
			int rc = eng_slide_written(a, lsec, n);
			if (rc < 0)
				return rc;
		}
		eng_reshape_view(a, is_new);
		int rc = a->pers->write(a, rq, buf, lsec, n);
		eng_reshape_view(a, -1);
		if (rc < 0)
			return rc;
		buf += n * 512;
		lsec += n;
	}
	return 0;
}

/* Sectors free before the data area of a 1.1/1.2 member, as md's
 * super_1_allow_new_offset counts them: 36 KiB past the superblock's start,
 * past the bad block log and past the internal bitmap (whole 4 KiB pages of
 * it, as the kernel keeps it: bm_sectors), up to data_offset. */
static uint64_t room_before(const struct md_sb *sb, int64_t bm_offset, uint64_t bm_sectors)
{
	if (sb->version == MD_SB_0_90 || sb->version == MD_SB_1_0)
		return 0;
	int64_t low = (int64_t)sb->super_offset + (32 + 4) * 2;
	int64_t bbl = (int64_t)sb->super_offset + (int32_t)sb->bblog_offset + sb->bblog_size;
	if (sb->bblog_size && bbl > low)
		low = bbl;
	if (sb->feature_map & MD_FEATURE_BITMAP_OFFSET) {
		if (!bm_sectors)
			return 0;
		int64_t bm = (int64_t)sb->super_offset + bm_offset + (int64_t)bm_sectors;
		if (bm > low)
			low = bm;
	}
	return (int64_t)sb->data_offset > low ? sb->data_offset - (uint64_t)low : 0;
}

/* Sectors free after the used part of a 1.x member's data area: md's
 * new_offset_store lets the data offset move up while dev_sectors still fit
 * in the member's data_size, and super_1_allow_new_offset refuses nothing
 * upwards, an internal bitmap or not (1.1/1.2 keep it before the data).
 * On 1.0 the metadata after the data bounds it too, as mdadm's
 * getinfo_super1 counts space_after: the bad block log and a bitmap below
 * the superblock, the superblock itself. */
static uint64_t room_after(const struct eng_array *a, const struct md_sb *sb)
{
	if (sb->version == MD_SB_0_90)
		return 0;
	uint64_t dev = a->geo.dev_sectors;
	uint64_t room = sb->data_size > dev ? sb->data_size - dev : 0;
	if (sb->version == MD_SB_1_0) {
		int64_t end = (int64_t)sb->super_offset;
		int64_t bb = (int64_t)sb->super_offset + (int32_t)sb->bblog_offset;
		if (sb->bblog_size && bb < end)
			end = bb;
		int64_t bm = (int64_t)sb->super_offset + a->ref.bitmap_offset;
		if ((sb->feature_map & MD_FEATURE_BITMAP_OFFSET) && bm < end)
			end = bm;
		int64_t used = (int64_t)(sb->data_offset + dev);
		uint64_t to_meta = end > used ? (uint64_t)(end - used) : 0;
		if (to_meta < room)
			room = to_meta;
	}
	return room;
}

/* The smallest room before and after the data area over the members
 * present (sectors the data offset may move down or up). */
static void reshape_room(const struct eng_array *a, uint64_t *before, uint64_t *after);
/* Start reshape r (checked): the first `need` of spares[] take the new
 * slots, a->rs set up, the critical section saved to o's backup first
 * when `backup` (an in-place grow), the superblocks written, the move
 * scheduled. */
#define INPLACE_GROW  1 /* the critical section backed up once */
#define INPLACE_SLIDE 2 /* mdadm's sliding backup, window by window */
static int reshape_begin(struct eng_array *a, const struct md_reshape *r, const int *spares,
                         const int *roles, int need, const struct uraid_reshape_opts *o,
                         int inplace, char *err, size_t errlen);

/* A spare the reshape may give a slot: a spare, or (dry runs, before
 * eng_reshape_stop_recovery) a member a recovery is rebuilding. */
static bool spare_like(const struct eng_member *em, bool dry)
{
	if (!em->m || em->left_out || em->replacement)
		return false;
	return em->state == URAID_MEMBER_SPARE ||
	       (dry && em->role >= 0 && em->state == URAID_MEMBER_REBUILDING);
}

/* Does a forward move of r give a spare an empty slot of the old
 * geometry (a degraded array's)? */
static bool degraded_fill(const struct eng_array *a, const struct md_reshape *r, int spares)
{
	if (r->new.raid_disks < r->old.raid_disks || !spares)
		return false;
	for (int role = 0; role < (int)r->old.raid_disks; role++)
		if (a->slot[role] < 0 || (a->mem[a->slot[role]]->state == URAID_MEMBER_REBUILDING &&
		                          !a->mem[a->slot[role]]->replacement))
			return true;
	return false;
}

void eng_reshape_stop_recovery(struct eng_array *a)
{
	if (a->action == URAID_SYNC_RECOVER && !eng_replace_any(a))
		eng_sync_interrupt(a);
	if (a->action != URAID_SYNC_IDLE)
		return;
	for (int i = 0; i < a->nmem; i++) {
		struct eng_member *em = a->mem[i];
		if (em->role < 0 || em->state != URAID_MEMBER_REBUILDING || em->replacement ||
		    !em->m || em->left_out || a->slot[em->role] != i)
			continue;
		a->slot[em->role] = -1;
		em->role = -1;
		em->state = URAID_MEMBER_SPARE;
		em->recovery_offset = 0;
	}
}

/* dry: only the refusals, nothing changed (the stripe cache not yet off). */
/* *cut (raid10, where not NULL): the component size mdadm sets before the
 * reshape, 0 for none; a run that needs one is refused without it. */
static int start_locked(struct eng_array *a, const struct uraid_reshape_opts *o, bool dry,
                        uint64_t *cut, char *err, size_t errlen)
{
	int lvl = a->geo.level;
	if (lvl == URAID_LEVEL_RAID10) {
		struct md_reshape r;
		int spares[LAYOUT_MAX_MEMBERS], roles[LAYOUT_MAX_MEMBERS], need = 0;
		uint64_t before, after, c = 0;
		reshape_room(a, &before, &after);
		int rc = eng_reshape_raid10_plan(a, o, before, after, dry, &r, spares, roles, &need,
		                                 &c, err, errlen);
		if (cut)
			*cut = c;
		if (rc == 0 && c && !dry)
			rc = errmsg(err, errlen, -ENOSPC,
			            "Insufficient tail-space for reshape (the component size must "
			            "be reduced to %llu sectors first)",
			            (unsigned long long)c);
		if (rc < 0 || dry)
			return rc;
		return reshape_begin(a, &r, spares, roles, need, o, 0, err, errlen);
	}
	if (lvl != URAID_LEVEL_RAID4 && lvl != URAID_LEVEL_RAID5 && lvl != URAID_LEVEL_RAID6)
		return errmsg(err, errlen, -EOPNOTSUPP,
		              "uraid restripes raid4, raid5, raid6 and raid10 only (this is %s)",
		              level_name(lvl));
	if (a->rs)
		return errmsg(err, errlen, -EBUSY, "a reshape is already in progress");
	if (a->broken)
		return errmsg(err, errlen, -EIO, "the array is broken");
	/* A recovery onto a spare is stopped, as mdadm freezes the array
	 * (eng_reshape_stop_recovery); a replacement, a resync or a check is
	 * not (md's raid5_start_reshape: EBUSY). */
	if ((a->action != URAID_SYNC_IDLE &&
	     (a->action != URAID_SYNC_RECOVER || eng_replace_any(a))) ||
	    a->resync_offset != MD_RESYNC_NONE)
		return errmsg(err, errlen, -EBUSY,
		              "a resync, recovery or check is pending or running; let it finish");
	/* md's check_reshape: no reshape with a journal or PPL (mdadm: "Cannot
	 * set device shape ...: Invalid argument"); an internal bitmap stays,
	 * its chunks being member sectors, which a restripe keeps. */
	if ((a->log && a->log != &eng_log_bitmap) ||
	    (a->ref.feature_map & (MD_FEATURE_JOURNAL | MD_FEATURE_PPL)))
		return errmsg(err, errlen, -EINVAL,
		              "cannot set the device shape: Invalid argument (md does not reshape "
		              "an array with a write journal or PPL; switch the consistency "
		              "policy to resync or bitmap first)");
	if ((a->ref.feature_map & MD_FEATURE_BITMAP_OFFSET) && a->log != &eng_log_bitmap)
		return errmsg(err, errlen, -EOPNOTSUPP, "the array's bitmap is not loaded");
	if (!dry && a->sc && a->pers->cache_size && a->pers->cache_size(a))
		return errmsg(err, errlen, -EBUSY,
		              "the stripe cache is on; set it to 0 for the reshape");
	/* A degraded array reshapes as md's does: what a missing member
	 * held is reconstructed as the move reads it (reshape_setup checks
	 * both geometries stay readable). */
	struct md_reshape r;
	eng_reshape_shape(a, lvl, o, &r);
	if (!memcmp(&r.new, &r.old, sizeof(r.new)))
		return errmsg(err, errlen, -EINVAL,
		              "nothing to reshape: the geometry is unchanged");
	if (r.new.raid_disks > LAYOUT_MAX_MEMBERS)
		return errmsg(err, errlen, -EINVAL, "%u members is more than %d", r.new.raid_disks,
		              LAYOUT_MAX_MEMBERS);
	if (a->geo.dev_sectors % r.new.chunk_sectors)
		return errmsg(err, errlen, -EINVAL,
		              "the member size (%llu sectors) is not a multiple of the new chunk "
		              "(%u sectors)",
		              (unsigned long long)a->geo.dev_sectors, r.new.chunk_sectors);
	uint32_t par = lvl == URAID_LEVEL_RAID6 ? 2 : 1;
	/* md's check_reshape (raid6 4 members at least) comes when mdadm
	 * imposes the reshape, after its need for a backup file (below);
	 * no data member at all is refused first. */
	uint32_t least = par + 1 + (lvl == URAID_LEVEL_RAID6);
	if (r.new.raid_disks <= par)
		return errmsg(err, errlen, -EINVAL, "%s needs at least %u members", level_name(lvl),
		              least);
	/* mdadm: fewer members may not cut the array; --array-size first. */
	uint64_t new_size = (a->geo.dev_sectors - a->geo.dev_sectors % r.new.chunk_sectors) *
	                    (r.new.raid_disks - par);
	int rc = eng_reshape_refuse_cut(a, new_size, err, errlen);
	if (rc < 0)
		return rc;
	/* mdadm's count: a spare per new slot (a degraded array's empty
	 * slots aside); a member being recovered counts as the spare it
	 * was. */
	int need = r.new.raid_disks > r.old.raid_disks ? (int)(r.new.raid_disks - r.old.raid_disks)
	                                               : 0,
	    got = 0;
	int spares[LAYOUT_MAX_MEMBERS];
	for (int i = 0; i < a->nmem && got < LAYOUT_MAX_MEMBERS; i++)
		if (spare_like(a->mem[i], dry))
			spares[got++] = i;
	if (got < need && !o->force)
		return errmsg(err, errlen, -EINVAL,
		              "Need %d spare%s to avoid degraded array, and only have %d. Use "
		              "--force to over-ride this check.",
		              need, need == 1 ? "" : "s", got);
	/* mdadm's second count (with --force too): enough members for the
	 * larger geometry's data; reshape_setup then checks both geometries
	 * readable with the slots left empty (md's raid5_start_reshape). */
	int data =
	    (int)(r.new.raid_disks > r.old.raid_disks ? r.new.raid_disks : r.old.raid_disks) -
	    (int)par - (int)r.old.raid_disks;
	if (data > got)
		return errmsg(err, errlen, -EINVAL,
		              "Need %d spare%s to create working array, and only have %d.", data,
		              data == 1 ? "" : "s", got);
	int grow = need; /* the new slots; need: those a spare takes */
	if (got < need)
		need = got;
	/* md moves the data offset (mdadm's set_new_data_offset) so that the
	 * new layout never lands on old rows still needed: one new stripe row
	 * plus one old row at least. More members: down into the room before
	 * the data, the move forwards; fewer: up into the room after it, the
	 * move backwards from the end; the same count: toward the more room. */
	uint64_t before, after;
	reshape_room(a, &before, &after);
	/* mdadm: with --backup-file the reshape runs in place (the data
	 * offset kept): a grow backs up its critical section once, one that
	 * keeps or cuts the members slides a backup along (forwards, or a
	 * shrink backwards from the end); without one it needs room to move
	 * the data offset (0.90 never has: its data starts at sector 0). */
	bool in_place = o->backup_file || o->backup_member;
	if (grow)
		r.backwards = false;
	else if (r.new.raid_disks < r.old.raid_disks)
		r.backwards = true;
	else if (in_place)
		r.backwards = false;
	else if (o->direction)
		r.backwards = o->direction < 0;
	else if (degraded_fill(a, &r, got))
		r.backwards = false; /* the filled slot follows a forward move */
	else
		r.backwards = after > before;
	/* (a dry run's rebuilding members are a recovery's, to be spares) */
	for (int i = 0; i < a->nmem && r.backwards && !dry; i++)
		if (eng_reshape_fills(a->mem[i]))
			return errmsg(
			    err, errlen, -EINVAL,
			    "slot %d is to be filled by the reshape, which needs it forwards",
			    a->mem[i]->role);
	uint64_t want = (uint64_t)r.new.chunk_sectors + r.old.chunk_sectors;
	uint64_t room = r.backwards ? after : before;
	room -= room % 8;
	if (room > 32768)
		room = 32768;
	if (o->move_sectors && o->move_sectors < room)
		room = o->move_sectors;
	int inplace = !in_place ? 0 : grow ? INPLACE_GROW : INPLACE_SLIDE;
	bool backup = inplace == INPLACE_GROW;
	if (inplace) {
		rc = eng_backup_check(o, err, errlen);
		if (rc < 0)
			return rc;
		room = 0;
	} else if (room < want && grow) {
		return errmsg(
		    err, errlen, -ENOSPC,
		    "Cannot grow - need a spare or backup-file to backup critical section "
		    "(%s; uraid keeps the backup in --backup-file only)",
		    a->ref.version == MD_SB_0_90
		        ? "0.90 metadata: the data offset cannot move"
		        : "no room to move the data offset before the data area");
	} else if (room < want) {
		return errmsg(
		    err, errlen, -ENOSPC,
		    "Cannot grow - need backup-file: please provide one with --backup-file=FILE "
		    "(no room to move the data: %llu free sectors %s the data area, %llu "
		    "needed%s)",
		    (unsigned long long)room, r.backwards ? "after" : "before",
		    (unsigned long long)want,
		    r.backwards ? "; a smaller --size leaves room after it" : "");
	}
	if (r.new.raid_disks < least)
		return errmsg(err, errlen, -EINVAL, "%s needs at least %u members", level_name(lvl),
		              least);
	r.offset_delta = r.backwards ? (int64_t)room : -(int64_t)room;
	if (r.backwards) {
		/* md's raid5_start_reshape: from the end of the smaller geometry */
		uint64_t dev = a->geo.dev_sectors, ch = r.old.chunk_sectors > r.new.chunk_sectors
		                                            ? r.old.chunk_sectors
		                                            : r.new.chunk_sectors;
		uint32_t nd =
		    r.new.raid_disks < r.old.raid_disks ? r.new.raid_disks : r.old.raid_disks;
		r.position = (dev - dev % ch) * (nd - par);
		r.position -= r.position % md_reshape_unit(&r);
	}
	if (dry)
		return 0;
	/* md's raid5_start_reshape (forwards, not fewer members): the spares
	 * take the empty slots, lowest first (raid5_add_disk). A new slot is
	 * in sync from the start (what it holds is written by the move); an
	 * old one, empty in a degraded array, is filled by the move
	 * (recovery_offset 0, then following the position). With a backup
	 * (in place) only the new slots, as before. */
	int roles[LAYOUT_MAX_MEMBERS], took = 0;
	for (int role = 0; role < (int)r.new.raid_disks &&took < got && !r.backwards && !backup;
	     role++)
		if (a->slot[role] < 0)
			roles[took++] = role;
	if (backup)
		return reshape_begin(a, &r, spares, NULL, need, o, inplace, err, errlen);
	return reshape_begin(a, &r, spares, roles, took, o, inplace, err, errlen);
}

static void reshape_room(const struct eng_array *a, uint64_t *before, uint64_t *after)
{
	*before = *after = UINT64_MAX;
	uint64_t bm_sectors = a->log == &eng_log_bitmap ? eng_bitmap_area_sectors(a) : 0;
	for (int i = 0; i < a->nmem; i++)
		if (!a->mem[i]->left_out && a->mem[i]->m) {
			uint64_t b = room_before(&a->mem[i]->sb, a->ref.bitmap_offset, bm_sectors);
			uint64_t f = room_after(a, &a->mem[i]->sb);
			if (b < *before)
				*before = b;
			if (f < *after)
				*after = f;
		}
}

/* roles: the slot each of the need spares takes (NULL: the new slots in
 * order); one of the old geometry is filled by the move (rebuilding). */
static int reshape_begin(struct eng_array *a, const struct md_reshape *rp, const int *spares,
                         const int *roles, int need, const struct uraid_reshape_opts *o,
                         int inplace, char *err, size_t errlen)
{
	bool backup = inplace == INPLACE_GROW;
	struct md_reshape r = *rp;
	/* The new slots: in sync from the start, as md's raid5_start_reshape
	 * (and raid10_start_reshape) marks the added members (what they hold
	 * is written by the move). */
	for (int s = 0; s < need; s++) {
		struct eng_member *em = a->mem[spares[s]];
		int role = roles ? roles[s] : (int)r.old.raid_disks + s;
		em->role = role;
		em->state =
		    role < (int)r.old.raid_disks ? URAID_MEMBER_REBUILDING : URAID_MEMBER_IN_SYNC;
		em->recovery_offset = 0;
		em->sb.feature_map &= ~MD_FEATURE_RECOVERY_BITMAP;
		a->slot[role] = spares[s];
		a->geo.member_sectors[role] = em->sb.data_size;
	}
	int rc = reshape_setup(a, &r, err, errlen);
	if (rc < 0) {
		for (int s = 0; s < need; s++) {
			struct eng_member *em = a->mem[spares[s]];
			a->slot[em->role] = -1;
			em->role = -1;
			em->state = URAID_MEMBER_SPARE;
		}
		a->geo.raid_disks = (int)r.old.raid_disks;
		return rc;
	}
	/* In place: the critical section saved first, durable before the
	 * superblocks say the reshape started. */
	struct eng_backup bk = {0};
	/* raid10_start_reshape with another member count: the bitmap (array
	 * sectors) resized to the new geometry's size before the superblocks
	 * say the reshape started (md_bitmap_resize, chunk doubled when the
	 * bits outgrow the space). */
	bool resize = r.new.level == URAID_LEVEL_RAID10 &&
	              a->log == &eng_log_bitmap &&r.new.raid_disks != r.old.raid_disks;
	if ((resize && (rc = eng_bitmap_resize(a, a->rs->size[1], err, errlen)) < 0) ||
	    (backup && (rc = eng_backup_save(a, o, &bk, err, errlen)) < 0) ||
	    (inplace == INPLACE_SLIDE && (rc = eng_slide_start(a, o, err, errlen)) < 0)) {
		a->geo = a->rs->geo[0];
		free(a->rs);
		a->rs = NULL;
		for (int s = 0; s < need; s++) {
			struct eng_member *em = a->mem[spares[s]];
			a->slot[em->role] = -1;
			a->geo.member_sectors[em->role] = 0;
			em->role = -1;
			em->state = URAID_MEMBER_SPARE;
		}
		return rc;
	}
	for (int i = 0; i < a->nmem; i++)
		a->mem[i]->sb.new_offset = (uint32_t)(int32_t)r.offset_delta;
	md_sb_reshape_store(&a->ref, &r);
	rc = eng_sb_write_all(a);
	if (rc < 0) {
		eng_backup_done(&bk);
		return errmsg(err, errlen, rc, "writing the superblocks failed");
	}
	/* A resized bitmap's header brought up to the superblocks (stale
	 * flag gone), as md_update_sb writes it. */
	if (resize)
		(void)eng_bitmap_write_header(a);
	if (backup && (rc = eng_backup_critical(a, &bk, err, errlen)) < 0)
		return rc;
	eng_sync_schedule(a);
	pthread_cond_broadcast(&a->cond);
	return 0;
}

int eng_reshape_start(struct eng_array *a, const struct uraid_reshape_opts *o, char *err,
                      size_t errlen)
{
	if (a->readonly)
		return errmsg(err, errlen, -EROFS, "array is read-only");
	/* A refusal writes nothing, the stripe cache's contents included. */
	bool level = o->level > 0 && o->level != a->geo.level;
	eng_lock(a);
	uint64_t cut = 0;
	int rc = level ? eng_reshape_level_check(a, o, err, errlen)
	               : start_locked(a, o, true, &cut, err, errlen);
	eng_unlock(a);
	if (rc < 0)
		return rc;
	/* mdadm's raid10 shrink with too little room after the data: the
	 * component size cut first (as mdadm writes component_size). */
	if (cut && (rc = eng_grow(a, URAID_GROW_SIZE, cut, err, errlen)) < 0)
		return rc;
	/* The stripe cache keeps stripes of one geometry: written out and
	 * off for the reshape (uraid_set_stripe_cache turns it on again). */
	rc = a->pers->cache_size && a->pers->cache_size(a) && a->pers->set_cache
	         ? a->pers->set_cache(a, 0)
	         : 0;
	if (rc < 0)
		return errmsg(err, errlen, rc, "turning the stripe cache off failed");
	eng_lock(a);
	/* Everything acknowledged on the members first. */
	for (int r = 0; r < a->geo.raid_disks && rc == 0; r++) {
		struct member *m = eng_role_member(a, r);
		if (m && eng_role_writable(a, r) && member_flush(m) < 0)
			rc = errmsg(err, errlen, -EIO, "flushing %s failed", m->name);
	}
	if (rc == 0) {
		eng_reshape_stop_recovery(a);
		rc = level ? eng_reshape_level_locked(a, o, err, errlen)
		           : start_locked(a, o, false, NULL, err, errlen);
		if (rc < 0 && !a->rs)
			eng_sync_schedule(a); /* the recovery stopped goes on */
	}
	eng_unlock(a);
	return rc;
}

int eng_reshape_start_locked(struct eng_array *a, const struct uraid_reshape_opts *o, char *err,
                             size_t errlen)
{
	return start_locked(a, o, false, NULL, err, errlen);
}
