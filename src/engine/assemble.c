/* Assembling an array from its members: load and cross-check superblocks,
 * map roles, leave out stale members, refuse what cannot run. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/engine.h"
#include "engine/core/reshape.h"
#include "engine/md.h"
#include "engine/reshape_backup.h"
#include "meta/md_ppl.h"
#include "util/errmsg.h"

static void warnf(char *warn, size_t warnlen, const char *fmt, const char *name, uint64_t ev,
                  uint64_t max)
{
	if (!warn || !warnlen)
		return;
	size_t used = strlen(warn);
	if (used + 1 >= warnlen)
		return;
	snprintf(warn + used, warnlen - used, fmt, name, ev, max);
}

void eng_bind_order(struct eng_array *a, const struct eng_member *last)
{
	uint32_t seq = 1;
	for (int r = -1; r < a->geo.raid_disks; r++) {
		int want = r + 1 < a->geo.raid_disks ? r + 1 : -1; /* slots, then spares */
		for (int i = 0; i < a->nmem; i++) {
			struct eng_member *em = a->mem[i];
			if (em != last && !em->left_out && em->role == want)
				em->bind_seq = seq++;
		}
	}
	if (last)
		((struct eng_member *)last)->bind_seq = seq++;
	a->bind_next = seq;
}

/* The slot of a member as the freshest superblock records it: md trusts the
 * newest role table, so a member the others marked faulty stays out. */
static int role_in(const struct md_sb *fresh, const struct md_sb *own)
{
	if (own->version == MD_SB_0_90) {
		/* A member one event behind must still be active in the
		 * freshest table under its number, else the others dropped it. */
		int r = md_sb_role(own);
		uint32_t nr = own->v0.this_disk.number;
		/* A spare that missed only the write starting a grow (0.90
		 * has no role table: each member says its own role, and the
		 * new slots' members are written last) takes the new slot
		 * the freshest table gives it: it holds nothing of the old
		 * geometry and the move has not begun. */
		if (r == -1 && own->events + 1 == fresh->events && nr < MD_SB0_MAX_DEVS &&
		    (fresh->feature_map & MD_FEATURE_RESHAPE_ACTIVE) && fresh->delta_disks > 0 &&
		    fresh->reshape_position == 0) {
			const struct md_sb0_disk *d = &fresh->v0.disks[nr];
			uint32_t old_n = fresh->raid_disks - (uint32_t)fresh->delta_disks;
			if ((d->state & (1u << MD_DISK_ACTIVE)) &&
			    (d->state & (1u << MD_DISK_SYNC)) && d->raid_disk >= old_n &&
			    d->raid_disk < fresh->raid_disks)
				return (int)d->raid_disk;
		}
		/* A member of a slot a shrink gave up, or raid6 -> raid5's Q
		 * (the takeover after the move, delta_disks 0), that missed
		 * only its last write (the one ending it): a spare, as md
		 * leaves it. */
		if (r >= 0 && own->events + 1 == fresh->events &&
		    (own->feature_map & MD_FEATURE_RESHAPE_ACTIVE) && own->delta_disks <= 0 &&
		    !(fresh->feature_map & MD_FEATURE_RESHAPE_ACTIVE) &&
		    (uint32_t)r >= fresh->raid_disks)
			return -1;
		if (r >= 0 && own->events < fresh->events && nr < MD_SB0_MAX_DEVS) {
			const struct md_sb0_disk *d = &fresh->v0.disks[nr];
			if (!(d->state & (1u << MD_DISK_ACTIVE)) || d->raid_disk != (uint32_t)r)
				return -2;
		}
		return r;
	}
	if (own->dev_number >= fresh->max_dev || own->dev_number >= MD_SB1_MAX_DEVS)
		return -1;
	uint16_t w = fresh->dev_roles[own->dev_number];
	if (w == MD_ROLE_SPARE)
		return -1;
	if (w == MD_ROLE_FAULTY)
		return -2;
	if (w == MD_ROLE_JOURNAL)
		return -3;
	return w;
}

/* A lower layer's message, without the member name it may already start with. */
static const char *named(const char *msg, const char *name)
{
	size_t n = strlen(name);
	if (!strncmp(msg, name, n) && msg[n] == ':' && msg[n + 1] == ' ')
		return msg + n + 2;
	return msg;
}

/* The kernel's only_parity(): a slot that holds nothing but parity under
 * this layout (raid4's last slot, the parity slots of the PARITY_0/N
 * layouts, raid6's Q slot in the "_6" layouts), so a rebuild of it after a
 * crash cannot lose data. */
static bool only_parity_geo(const struct layout_geometry *g, int role)
{
	int n = g->raid_disks, maxdeg = g->level == URAID_LEVEL_RAID6 ? 2 : 1;
	uint32_t algo = g->level == URAID_LEVEL_RAID4 ? 5 : g->layout;
	switch (algo) {
	case 4: return role < maxdeg;               /* PARITY_0 */
	case 5: return role >= n - maxdeg;          /* PARITY_N (and raid4) */
	case 20: return role == 0 || role == n - 1; /* PARITY_0_6 */
	case 16:
	case 17:
	case 18:
	case 19: return role == n - 1; /* the *_6 layouts: Q alone on the last */
	default: return false;
	}
}

/* raid5_run during a reshape: a member the reshape fills holds only
 * parity under the old layout, and under the new one below its
 * recovery_offset (which follows the reshape: nothing to check there). */
static bool only_parity(const struct eng_array *a, int role)
{
	const struct eng_reshape *rs = a->rs;
	if (!rs)
		return only_parity_geo(&a->geo, role);
	const struct eng_member *em = a->mem[a->slot[role]];
	bool filled = em->state == URAID_MEMBER_REBUILDING &&
	              em->recovery_offset >= eng_reshape_rows(rs, rs->r.position);
	return only_parity_geo(&rs->geo[0], role) && (filled || only_parity_geo(&rs->geo[1], role));
}

/* mdadm's "/dev/mdN assembled from N drives" (the in-sync members in a
 * slot): the array by its md name (without "host:"), else by its first
 * member's. */
static void started_from(const struct eng_array *a, char *buf, size_t len)
{
	const char *nm = a->ref.version != MD_SB_0_90 ? a->ref.set_name : "";
	const char *colon = strchr(nm, ':');
	if (colon)
		nm = colon + 1;
	if (!nm[0])
		nm = a->nmem ? a->mem[0]->m->name : "the array";
	int ok = 0;
	for (int r = 0; r < a->geo.raid_disks; r++)
		ok += a->slot[r] >= 0 && a->mem[a->slot[r]]->state == URAID_MEMBER_IN_SYNC;
	snprintf(buf, len, "%s assembled from %d drive%s", nm, ok, ok == 1 ? "" : "s");
}

/* md's raid5_run: a raid4/5/6 that was not stopped cleanly and misses more
 * members than parity-only slots being rebuilt does not start ("cannot start
 * dirty degraded array"): parity written at the crash may not match its
 * data, and the missing blocks would be rebuilt from it wrong. URAID_FORCE
 * starts it anyway (md's start_dirty_degraded); read-only only warns. */
static int dirty_degraded(struct eng_array *a, unsigned flags, char *err, size_t errlen, char *warn,
                          size_t warnlen)
{
	int lvl = a->geo.level;
	if ((lvl != URAID_LEVEL_RAID4 && lvl != URAID_LEVEL_RAID5 && lvl != URAID_LEVEL_RAID6) ||
	    md_sb_clean(&a->ref))
		return 0;
	/* md starts it with a partial parity log ("starting dirty degraded
	 * array with PPL"): the log's recovery makes the parity of every
	 * stripe a crash caught agree with the data it left alone, so the
	 * missing blocks are rebuilt right (engine/ppl/). */
	if (md_ppl_enabled(&a->ref))
		return 0;
	int degraded = 0, parity_only = 0;
	for (int r = 0; r < a->geo.raid_disks; r++) {
		if (a->slot[r] >= 0 && a->mem[a->slot[r]]->state == URAID_MEMBER_IN_SYNC)
			continue;
		degraded++;
		if (a->slot[r] >= 0 && only_parity(a, r))
			parity_only++;
	}
	if (degraded <= parity_only)
		return 0;
	if (flags & (URAID_FORCE | URAID_RDONLY)) {
		char msg[256];
		snprintf(
		    msg, sizeof(msg),
		    "%s: dirty degraded array (not stopped cleanly, %d slot(s) not in sync)%s: "
		    "blocks of the missing member(s) written at the crash may read back "
		    "wrong\n",
		    level_name(lvl), degraded,
		    (flags & URAID_RDONLY) ? "" : ", started because of --force");
		size_t used = warn && warnlen ? strlen(warn) : 0;
		if (warn && used + 1 < warnlen)
			snprintf(warn + used, warnlen - used, "%s", msg);
		return 0;
	}
	char what[300];
	started_from(a, what, sizeof(what));
	return errmsg(err, errlen, -EUCLEAN,
	              "%s - not enough to start the array while not clean - consider --force.\n"
	              "       (%s not stopped cleanly with %d of %d slot(s) not in sync: its "
	              "parity may not match its data, the missing blocks would be rebuilt "
	              "wrong; --force (URAID_FORCE) starts it anyway, or add back the missing "
	              "member)",
	              what, level_name(lvl), degraded, a->geo.raid_disks);
}

/* md's bad block log of a member: loaded (md refuses a log it cannot
 * read; uraid also one with overlapping or impossible entries), or taken
 * away as mdadm --update=no-bbl / force-no-bbl does (update_super1: the
 * first refuses while entries are recorded, "Cannot remove active bbl";
 * the second drops them). 1 when the superblock changed. */
static int bad_block_log(struct eng_member *em, unsigned flags, char *err, size_t errlen)
{
	char e[320];
	const char *name = em->m->name;
	unsigned upd = flags & (URAID_UPDATE_NO_BBL | URAID_UPDATE_FORCE_NO_BBL);
	const char *what = flags & URAID_UPDATE_FORCE_NO_BBL ? "force-no-bbl" : "no-bbl";
	if (upd && em->sb.version == MD_SB_0_90)
		return errmsg(err, errlen, -EINVAL,
		              "--update=%s: %s has a 0.90 superblock, which has no bad block log",
		              what, name);
	if (flags & URAID_UPDATE_FORCE_NO_BBL) {
		bool had = em->sb.bblog_offset || em->sb.bblog_size ||
		           (em->sb.feature_map & MD_FEATURE_BAD_BLOCKS);
		eng_bbl_remove(em);
		return had;
	}
	int rc = eng_bbl_load(em, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s: bad block log refused: %s", name, e);
	if (!upd)
		return 0;
	if (em->bbl.n > 0)
		return errmsg(err, errlen, -EBUSY,
		              "--update=no-bbl: %s has %d bad block range(s) recorded, so its log "
		              "cannot be removed (mdadm: \"Cannot remove active bbl\"); "
		              "--update=force-no-bbl removes it with them",
		              name, em->bbl.n);
	bool had = em->sb.bblog_offset || em->sb.bblog_size;
	eng_bbl_remove(em);
	return had;
}

static void close_all(struct member **mm, int n)
{
	for (int i = 0; i < n; i++)
		if (mm[i])
			member_close(mm[i]);
}

int eng_assemble(struct member **mm, int n, unsigned flags, struct eng_array **out, char *err,
                 size_t errlen, char *warn, size_t warnlen)
{
	return eng_assemble_backup(mm, n, flags, NULL, out, err, errlen, warn, warnlen);
}

int eng_assemble_backup(struct member **mm, int n, unsigned flags, struct member *backup,
                        struct eng_array **out, char *err, size_t errlen, char *warn,
                        size_t warnlen)
{
	char e[256];
	int rc;
	*out = NULL;
	if (warn && warnlen)
		warn[0] = 0;
	if (n < 1 || n > ENG_MAX_MEMBERS) {
		close_all(mm, n > 0 ? n : 0);
		return errmsg(err, errlen, -EINVAL, "need 1 to %d members, got %d", ENG_MAX_MEMBERS,
		              n);
	}
	struct md_sb *sbs = calloc((size_t)n, sizeof(*sbs));
	if (!sbs) {
		close_all(mm, n);
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	}
	for (int i = 0; i < n; i++) {
		if (!(flags & URAID_RDONLY) && member_lock(mm[i]) < 0) {
			rc = errmsg(err, errlen, -EBUSY, "%s is in use by a running array",
			            mm[i]->name);
			goto fail;
		}
		rc = md_sb_load(mm[i], &sbs[i], e, sizeof(e));
		if (rc < 0) {
			if (rc == -ENOENT)
				errmsg(err, errlen, rc,
				       "no recogniseable superblock on %s\n%s has no superblock - "
				       "assembly aborted",
				       mm[i]->name, mm[i]->name);
			else
				errmsg(err, errlen, rc, "%s: %s", mm[i]->name,
				       named(e, mm[i]->name));
			goto fail;
		}
		/* The write journal is uraid's own (engine/journal/journal.c); the
		 * other feature bits are judged by meta. */
		struct md_sb feat = sbs[i];
		if (feat.version != MD_SB_0_90 &&
		    (feat.level == 4 || feat.level == 5 || feat.level == 6))
			feat.feature_map &= ~MD_FEATURE_JOURNAL;
		/* A reshape in progress: engine/reshape.c judges it. */
		feat.feature_map &= ~(MD_FEATURE_RESHAPE_ACTIVE | MD_FEATURE_RESHAPE_BACKWARDS |
		                      MD_FEATURE_NEW_OFFSET);
		rc = md_sb_check_features(&feat, e, sizeof(e));
		if (rc < 0) {
			errmsg(err, errlen, rc, "%s: %s", mm[i]->name, e);
			goto fail;
		}
		rc = md_sb_check_device(&sbs[i], mm[i]->size / 512, e, sizeof(e));
		if (rc < 0) {
			errmsg(err, errlen, rc, "%s: member truncated or damaged: %s", mm[i]->name,
			       named(e, mm[i]->name));
			goto fail;
		}
	}
	/* Every member must describe the same array (membership.c). */
	rc = eng_members_agree(mm, sbs, n, err, errlen);
	if (rc < 0)
		goto fail;
	int fresh = eng_pick_freshest(sbs, n);
	const struct eng_member *fresh_em = NULL;
	const struct md_sb *fs = &sbs[fresh];
	/* A member whose superblock missed the end of a reshape that moved
	 * the data (a crash while they were written): its data lies at the
	 * new offset, as the others' superblocks say of theirs. */
	for (int i = 0; i < n; i++)
		if (!(fs->feature_map & MD_FEATURE_RESHAPE_ACTIVE) &&
		    (sbs[i].feature_map & MD_FEATURE_RESHAPE_ACTIVE) &&
		    (sbs[i].feature_map & MD_FEATURE_NEW_OFFSET) && eng_sb_current(&sbs[i], fs)) {
			int64_t d = (int32_t)sbs[i].new_offset;
			sbs[i].data_offset = (uint64_t)((int64_t)sbs[i].data_offset + d);
			sbs[i].data_size = (uint64_t)((int64_t)sbs[i].data_size - d);
			sbs[i].feature_map &= ~(MD_FEATURE_RESHAPE_ACTIVE | MD_FEATURE_NEW_OFFSET |
			                        MD_FEATURE_RESHAPE_BACKWARDS);
		}
	struct eng_array *a = calloc(1, sizeof(*a));
	if (!a) {
		rc = errmsg(err, errlen, -ENOMEM, "out of memory");
		goto fail;
	}
	a->h.cls = &eng_md_class;
	a->h.flags = flags;
	a->readonly = (flags & URAID_RDONLY) != 0;
	a->ref = *fs;
	a->events = fs->events;
	for (int r = 0; r < LAYOUT_MAX_MEMBERS; r++)
		a->slot[r] = -1;
	if (fs->raid_disks < 1 || fs->raid_disks > LAYOUT_MAX_MEMBERS) {
		free(a);
		rc = errmsg(err, errlen, -EINVAL, "%s: raid_disks %" PRIu32 " out of range",
		            mm[fresh]->name, fs->raid_disks);
		goto fail;
	}
	a->geo.level = fs->level;
	a->geo.layout = fs->layout;
	/* The kernel ignores a 1.x raid0's layout word unless the RAID0-layout
	 * feature bit says one was recorded; a multi-zone array without it is
	 * then refused by layout validation, as the kernel refuses it. */
	if (fs->level == URAID_LEVEL_RAID0 && fs->version != MD_SB_0_90 &&
	    !(fs->feature_map & MD_FEATURE_RAID0_LAYOUT))
		a->geo.layout = RAID0_LAYOUT_NONE;
	a->geo.chunk_sectors = fs->chunk_sectors;
	a->geo.raid_disks = (int)fs->raid_disks;
	a->geo.dev_sectors = fs->size;
	/* During a reshape the slots run to the larger member count. */
	if ((fs->feature_map & MD_FEATURE_RESHAPE_ACTIVE) && fs->delta_disks < 0 &&
	    (int64_t)fs->raid_disks - fs->delta_disks <= LAYOUT_MAX_MEMBERS)
		a->geo.raid_disks = (int)((int64_t)fs->raid_disks - fs->delta_disks);

	bool updated = false;
	for (int i = 0; i < n; i++) {
		struct eng_member *em = calloc(1, sizeof(*em));
		if (!em) {
			rc = errmsg(err, errlen, -ENOMEM, "out of memory");
			goto fail_a;
		}
		em->m = mm[i];
		mm[i] = NULL;
		em->sb = sbs[i];
		a->mem[a->nmem++] = em;
		if (i == fresh)
			fresh_em = em;
		rc = bad_block_log(em, flags, err, errlen);
		if (rc < 0)
			goto fail_a;
		updated |= rc > 0;
		if (!eng_sb_current(&sbs[i], fs)) {
			warnf(warn, warnlen,
			      "%s is stale (events %" PRIu64 ", array at %" PRIu64 "): left out\n",
			      em->m->name, sbs[i].events, fs->events);
			em->state = URAID_MEMBER_FAULTY;
			em->left_out = true;
			em->role = -1;
			continue;
		}
		int role = role_in(fs, &sbs[i]);
		em->role = role >= 0 ? role : -1;
		if (role == -3) {
			/* A log member (md's journal role): the log takes it at
			 * setup (engine/logs.c). */
			a->mem[--a->nmem] = NULL;
			if (a->logdev) {
				rc = errmsg(err, errlen, -EINVAL, "two journal members: %s and %s",
				            a->logdev->m->name, em->m->name);
				member_close(em->m);
				free(em);
				goto fail_a;
			}
			em->role = -1;
			a->logdev = em;
			continue;
		}
		if (role == -2) {
			warnf(warn, warnlen,
			      "%s is marked faulty in the array (events %" PRIu64 " of %" PRIu64
			      "): left out\n",
			      em->m->name, sbs[i].events, fs->events);
			em->state = URAID_MEMBER_FAULTY;
			em->left_out = true;
			em->role = -1;
			continue;
		}
		/* A device number stands for one member in the role table. */
		for (int j = 0; j + 1 < a->nmem && sbs[i].version != MD_SB_0_90; j++) {
			const struct eng_member *o = a->mem[j];
			if (!o->left_out && o->sb.dev_number == sbs[i].dev_number) {
				char what[32] = "a spare";
				if (role >= 0)
					snprintf(what, sizeof(what), "slot %d", role);
				rc = errmsg(err, errlen, -EINVAL,
				            "%s and %s both claim %s as device %" PRIu32
				            ": one is a copy of the other; give only one",
				            o->m->name, em->m->name, what, sbs[i].dev_number);
				goto fail_a;
			}
		}
		if (role < 0) {
			em->state = URAID_MEMBER_SPARE;
			continue;
		}
		if (role >= a->geo.raid_disks) {
			rc = errmsg(err, errlen, -EINVAL, "%s: slot %d beyond raid_disks %d",
			            em->m->name, role, a->geo.raid_disks);
			goto fail_a;
		}
		if (sbs[i].feature_map & MD_FEATURE_REPLACEMENT) {
			/* A replace in progress: eng_replace_assembled decides. */
			em->replacement = true;
			em->state = URAID_MEMBER_REBUILDING;
			em->recovery_offset = (sbs[i].feature_map & MD_FEATURE_RECOVERY_OFFSET)
			                          ? sbs[i].recovery_offset
			                          : UINT64_MAX;
			continue;
		}
		if (a->slot[role] >= 0) {
			const struct eng_member *o = a->mem[a->slot[role]];
			if (sbs[i].version == MD_SB_0_90 && o->sb.events == sbs[i].events)
				/* mdadm's fail-safe for 0.90 (Assemble.c) */
				rc = errmsg(
				    err, errlen, -EINVAL,
				    "WARNING %s and %s appear to have very similar "
				    "superblocks.\n      If they are really different, please "
				    "--zero the superblock on one\n      If they are the same or "
				    "overlap, please remove one from the list.",
				    o->m->name, em->m->name);
			else
				rc = errmsg(err, errlen, -EINVAL, "%s and %s both claim slot %d",
				            o->m->name, em->m->name, role);
			goto fail_a;
		}
		a->slot[role] = a->nmem - 1;
		a->geo.member_sectors[role] = sbs[i].data_size;
		if ((sbs[i].feature_map & MD_FEATURE_RECOVERY_OFFSET) && a->geo.level != 0 &&
		    a->geo.level != URAID_LEVEL_LINEAR) {
			em->state = URAID_MEMBER_REBUILDING;
			em->recovery_offset = sbs[i].recovery_offset;
		} else if (md_sb0_filling(&sbs[i])) {
			/* filled up to the position (the reshape's view sets it) */
			em->state = URAID_MEMBER_REBUILDING;
			em->recovery_offset = 0;
		} else {
			em->state = URAID_MEMBER_IN_SYNC;
		}
	}
	free(sbs);
	sbs = NULL;
	a->geo.raid_disks = (int)a->ref.raid_disks;
	rc = eng_reshape_assembled(a, backup, err, errlen);
	if (rc < 0)
		goto fail_a;
	eng_bind_order(a, (flags & URAID_CREATED) ? NULL : fresh_em);
	if (eng_replace_assembled(a) < 0) {
		rc = errmsg(err, errlen, -EINVAL, "two replacements claim the same slot");
		goto fail_a;
	}
	/* mdadm's --force: members left out brought back until it can start;
	 * their superblocks are rewritten at setup (read-write only). */
	bool forced = (flags & URAID_FORCE) && eng_force_members(a, warn, warnlen) > 0;
	rc = dirty_degraded(a, flags, err, errlen, warn, warnlen);
	if (rc < 0)
		goto fail_a;
	char hint[512] = "";
	if (!(flags & URAID_FORCE))
		eng_force_hint(a, hint, sizeof(hint));
	char from[300];
	started_from(a, from, sizeof(from));
	rc = eng_array_setup(a, err, errlen);
	if (rc < 0) {
		eng_array_free(a);
		if (rc == -ENODEV && err && errlen) {
			/* mdadm's words first, uraid's reason (and --force's
			 * plan) after them */
			char why[1024];
			snprintf(why, sizeof(why), "%s%s", err, hint);
			errmsg(err, errlen, rc, "%s - not enough to start the array.\n       (%s)",
			       from, why);
		}
		return rc;
	}
	if (a->rs && a->rs->restore) {
		/* mdadm's Grow_restart: the critical section back from the
		 * backup before anything else is written. */
		eng_lock(a);
		rc = eng_backup_restore(a, err, errlen);
		eng_unlock(a);
		if (rc < 0) {
			eng_drop(a);
			return rc;
		}
	}
	if ((forced || updated) && !a->readonly) {
		/* the forced members' events and roles, and an --update, on disk
		 * as mdadm writes them when it assembles */
		eng_lock(a);
		rc = eng_sb_write_all(a);
		eng_unlock(a);
		if (rc < 0) {
			eng_drop(a);
			return errmsg(err, errlen, rc,
			              forced ? "writing the forced members' superblocks failed"
			                     : "writing the updated superblocks failed");
		}
	}
	*out = a;
	return 0;
fail_a:
	eng_array_free(a);
fail:
	free(sbs);
	close_all(mm, n);
	return rc;
}
