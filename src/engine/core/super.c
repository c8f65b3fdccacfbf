/* Superblock bookkeeping for a running array: the array-wide fields live in
 * a->ref, the per-device ones in each member's copy; every update writes the
 * merge of both to every working member with the event count bumped, as md
 * does. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/core/engine.h"
#include "engine/core/log.h"

#define SB0_FAULTY 1u
#define SB0_ACTIVE 2u
#define SB0_SYNC   4u

static uint16_t role_word(const struct eng_member *em)
{
	if (em->state == URAID_MEMBER_FAULTY)
		return MD_ROLE_FAULTY;
	if (em->role < 0)
		return MD_ROLE_SPARE;
	return (uint16_t)em->role;
}

/* 0.90 keeps a table of disks: as md does, active members are numbered by
 * their slot, every other present member gets a number from raid_disks up,
 * and empty slots are recorded as removed+faulty. During a reshape (minor
 * 91) a member the move fills (its slot held, not yet in sync) is active
 * without the sync bit, as md's super_90_sync writes it: 0.90 has no
 * recovery_offset, and the filled rows follow reshape_position (md's
 * raid5_run reads it back so). */
static void update_ref_090(struct eng_array *a)
{
	struct md_sb *r = &a->ref;
	uint32_t active = 0, working = 0, failed = 0, spare = 0, present = 0;
	uint32_t next_spare = (uint32_t)a->geo.raid_disks;
	bool reshape = r->feature_map & MD_FEATURE_RESHAPE_ACTIVE;
	memset(r->v0.disks, 0, sizeof(r->v0.disks));
	for (int i = 0; i < a->nmem; i++) {
		struct eng_member *em = a->mem[i];
		if (em->left_out)
			continue; /* not part of the array */
		bool in_sync = em->role >= 0 && em->state == URAID_MEMBER_IN_SYNC;
		bool filling = reshape && em->role >= 0 && em->state == URAID_MEMBER_REBUILDING &&
		               !em->replacement;
		uint32_t nr = in_sync || filling ? (uint32_t)em->role : next_spare++;
		if (nr >= MD_SB0_MAX_DEVS)
			continue;
		struct md_sb0_disk *d = &r->v0.disks[nr];
		*d = em->sb.v0.this_disk; /* keeps major/minor */
		/* and, as md's super_90_sync, the device's own flags */
		uint32_t own = d->state & ((1u << MD_DISK_WRITEMOSTLY) | (1u << MD_DISK_FAILFAST));
		d->number = nr;
		d->raid_disk = em->role >= 0 ? (uint32_t)em->role : nr;
		if (em->state == URAID_MEMBER_FAULTY) {
			d->state = SB0_FAULTY;
			failed++;
		} else if (in_sync || filling) {
			d->state = SB0_ACTIVE | (in_sync ? SB0_SYNC : 0);
			active++;
			working++;
		} else {
			d->state = 0;
			working++;
			spare++;
		}
		d->state |= own;
		em->sb.v0.this_disk.number = nr;
		em->sb.dev_number = nr;
		present++;
	}
	for (int s = 0; s < a->geo.raid_disks && s < MD_SB0_MAX_DEVS; s++) {
		struct md_sb0_disk *d = &r->v0.disks[s];
		if (d->state == 0 && d->number == 0) {
			d->number = (uint32_t)s;
			d->raid_disk = (uint32_t)s;
			d->state = (1u << MD_DISK_REMOVED) | SB0_FAULTY;
			failed++;
		}
	}
	r->v0.nr_disks = present;
	r->v0.active_disks = active;
	r->v0.working_disks = working;
	r->v0.failed_disks = failed;
	r->v0.spare_disks = spare;
}

/* Fold the members' current roles into the array-wide copy. */
static void update_ref(struct eng_array *a)
{
	struct md_sb *r = &a->ref;
	r->events = a->events;
	r->utime = (uint64_t)time(NULL);
	/* Active: resync_offset 0 (0.90: state not clean), as md writes it. */
	bool clean = !a->dirty && a->resync_offset == MD_RESYNC_NONE;
	/* A log that makes parity right after a crash (md's MD_JOURNAL_CLEAN)
	 * lets the superblocks say clean while writing. */
	if (a->log && a->log->keeps_clean && a->log->keeps_clean(a) &&
	    a->resync_offset == MD_RESYNC_NONE)
		clean = true;
	md_sb_set_clean(r, clean, a->dirty && !clean ? 0 : a->resync_offset);
	if (r->version == MD_SB_0_90) {
		update_ref_090(a);
		return;
	}
	/* As md's super_1_sync (since it stopped writing 0xfffe there):
	 * every device number no member holds is recorded unused (0xffff);
	 * a member failed but not yet removed stays faulty below. */
	for (uint32_t d = 0; d < r->max_dev && d < MD_SB1_MAX_DEVS; d++)
		r->dev_roles[d] = MD_ROLE_SPARE;
	for (int i = 0; i < a->nmem; i++) {
		const struct eng_member *em = a->mem[i];
		/* A member left out at assembly may share its device number with
		 * the one that took its place (a later add): it has no say. */
		if (em->left_out || em->sb.dev_number >= MD_SB1_MAX_DEVS)
			continue;
		r->dev_roles[em->sb.dev_number] = role_word(em);
		if (em->sb.dev_number >= r->max_dev)
			r->max_dev = em->sb.dev_number + 1;
	}
	uint16_t jw = 0;
	int jd = a->log && a->log->role ? a->log->role(a, &jw) : -1;
	if (jd >= 0 && jd < MD_SB1_MAX_DEVS) {
		r->dev_roles[jd] = jw;
		if ((uint32_t)jd >= r->max_dev)
			r->max_dev = (uint32_t)jd + 1;
	}
}

/* The superblock to write on one member: array-wide fields from ref, the
 * device's own fields from its copy. */
void eng_sb_merge(const struct eng_array *a, const struct eng_member *em, struct md_sb *s)
{
	*s = a->ref;
	s->dev_number = em->sb.dev_number;
	memcpy(s->device_uuid, em->sb.device_uuid, sizeof(s->device_uuid));
	/* During a reshape sb.data_offset follows the view (core/reshape.h);
	 * the superblock keeps the old offset until the move is over. */
	s->data_offset = a->rs ? em->reshape_doff[0] : em->sb.data_offset;
	s->data_size = em->sb.data_size;
	s->super_offset = em->sb.super_offset;
	s->cnt_corrected_read = em->sb.cnt_corrected_read;
	s->devflags = em->sb.devflags;
	s->bblog_shift = em->sb.bblog_shift;
	s->bblog_size = em->sb.bblog_size;
	s->bblog_offset = em->sb.bblog_offset;
	s->v0.this_disk = em->sb.v0.this_disk;
	if (s->version == MD_SB_0_90 && em->sb.v0.this_disk.number < MD_SB0_MAX_DEVS)
		s->v0.this_disk = a->ref.v0.disks[em->sb.v0.this_disk.number];
	uint32_t per_dev = MD_FEATURE_BAD_BLOCKS | MD_FEATURE_RECOVERY_OFFSET |
	                   MD_FEATURE_REPLACEMENT | MD_FEATURE_RECOVERY_BITMAP;
	s->feature_map =
	    (a->ref.feature_map & ~per_dev) | (em->sb.feature_map & MD_FEATURE_BAD_BLOCKS);
	s->recovery_offset = 0;
	if (em->state == URAID_MEMBER_REBUILDING && em->role >= 0) {
		s->feature_map |= MD_FEATURE_RECOVERY_OFFSET;
		s->recovery_offset = em->recovery_offset;
		/* A bitmap-based recovery md interrupted stays one (array.c);
		 * uraid's own re-adds leave it out: md then resumes them as a
		 * full recovery from the offset, slower but as safe. */
		if (!em->replacement && (em->sb.feature_map & MD_FEATURE_RECOVERY_BITMAP) &&
		    a->log && a->log->recover_marked)
			s->feature_map |= MD_FEATURE_RECOVERY_BITMAP;
	}
	if (em->replacement &&
	    em->role >= 0) /* md: a replace in progress (engine/sync/replace.c) */
		s->feature_map |= MD_FEATURE_REPLACEMENT;
}

int eng_sb_write_all(struct eng_array *a)
{
	if (a->readonly)
		return 0;
	a->events++;
	/* A member that fails here is marked faulty and the update repeated, so
	 * the survivors record it (bounded by the number of members), unless
	 * the array cannot lose it: then the array is broken (util.c) and
	 * nothing more is marked, as md fails no member it cannot lose. */
	for (int round = 0; round <= a->nmem; round++) {
		update_ref(a);
		int failed = -1;
		for (int i = 0; i < a->nmem && failed < 0; i++) {
			struct eng_member *em = a->mem[i];
			if (em->state == URAID_MEMBER_FAULTY || !em->m)
				continue;
			struct md_sb s;
			eng_sb_merge(a, em, &s);
			/* The bad block log before the superblock that counts on it. */
			int rc = eng_bbl_store(em);
			if (rc == 0)
				rc = md_sb_store(em->m, &s);
			if (rc == 0)
				rc = member_flush(em->m);
			if (rc < 0) {
				failed = i;
				break;
			}
			uint64_t view_doff = em->sb.data_offset;
			em->sb = s;
			em->sb.data_offset = view_doff;
		}
		if (failed < 0) {
			/* The log's own member (a failure there refuses writes). */
			if (a->log && a->log->sb_written)
				a->log->sb_written(a);
			return 0;
		}
		struct eng_member *em = a->mem[failed];
		if (em->state == URAID_MEMBER_IN_SYNC && em->role >= 0 &&
		    !eng_member_can_fail(a, em->role)) {
			eng_array_broken(a, em->m->name, "superblock write failed");
			return -EIO;
		}
		fprintf(stderr, "uraid: %s: superblock write failed, marking faulty\n",
		        em->m->name);
		em->state = URAID_MEMBER_FAULTY;
		/* Any slot: during a reshape a->geo may be the old view, without
		 * the new slots. */
		if (em->role >= 0 && em->role < LAYOUT_MAX_MEMBERS && a->slot[em->role] == failed)
			a->slot[em->role] = -1;
	}
	return -EIO;
}

int eng_mark_dirty(struct eng_array *a)
{
	if (a->dirty || a->readonly)
		return 0;
	a->dirty = true;
	return eng_sb_write_all(a);
}

int eng_mark_clean(struct eng_array *a)
{
	if (a->readonly)
		return 0;
	a->dirty = false;
	return eng_sb_write_all(a);
}

void eng_member_params(const struct eng_array *a, struct md_create_params *p)
{
	memset(p, 0, sizeof(*p));
	p->version = a->ref.version;
	p->level = a->geo.level;
	p->layout = a->geo.layout;
	p->chunk_sectors = a->geo.chunk_sectors;
	p->raid_disks = (uint32_t)a->geo.raid_disks;
	p->size = a->geo.dev_sectors;
	p->data_offset = a->mem[0]->sb.data_offset;
	memcpy(p->set_uuid, a->ref.set_uuid, 16);
}

void eng_sb_set_devflags(struct md_sb *sb, unsigned flags)
{
	if (sb->version != MD_SB_0_90) {
		sb->devflags = (uint8_t)((sb->devflags & ~3u) | (flags & 3u));
		return;
	}
	uint32_t bits = ((flags & ENG_DEV_WRITEMOSTLY) ? 1u << MD_DISK_WRITEMOSTLY : 0) |
	                ((flags & ENG_DEV_FAILFAST) ? 1u << MD_DISK_FAILFAST : 0);
	uint32_t mask = (1u << MD_DISK_WRITEMOSTLY) | (1u << MD_DISK_FAILFAST);
	sb->v0.this_disk.state = (sb->v0.this_disk.state & ~mask) | bits;
	uint32_t nr = sb->v0.this_disk.number;
	if (nr < MD_SB0_MAX_DEVS)
		sb->v0.disks[nr].state = (sb->v0.disks[nr].state & ~mask) | bits;
}
