/* Who is in which slot: a member failing or leaving. Changes are recorded in every working member's
 * superblock (super.c); a failing slot's replacement takes over (replace.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/core/engine.h"

void eng_member_failed(struct eng_array *a, int role, const char *why)
{
	if (role < 0 || role >= a->geo.raid_disks || a->slot[role] < 0)
		return;
	struct eng_member *em = a->mem[a->slot[role]];
	if (em->state == URAID_MEMBER_FAULTY)
		return;
	/* md's rule: a member fails only while the level can lose it; beyond
	 * that the request fails instead, and failing members one after the
	 * other would only make acknowledged data unreachable. */
	if (em->state == URAID_MEMBER_IN_SYNC && !eng_member_can_fail(a, role)) {
		eng_array_broken(a, em->m ? em->m->name : "?", why);
		return;
	}
	fprintf(stderr, "uraid: %s (slot %d) marked faulty: %s\n", em->m ? em->m->name : "?", role,
	        why);
	em->state = URAID_MEMBER_FAULTY;
	a->slot[role] = -1;
	eng_replace_slot_failed(a, role);
	/* md keeps the slot number with the faulty device until removal, but
	 * the superblocks record it as faulty. */
	if (!a->readonly)
		eng_sb_write_all(a);
	if (a->action == URAID_SYNC_RECOVER || a->action == URAID_SYNC_RESYNC)
		pthread_cond_broadcast(&a->cond);
}

bool eng_write_failed(struct eng_array *a, int role, const void *buf, uint64_t msec, uint64_t nsec,
                      uint64_t unit, const char *why)
{
	if (role < 0 || role >= a->geo.raid_disks || a->slot[role] < 0)
		return false;
	struct eng_member *em = a->mem[a->slot[role]];
	if (em->state == URAID_MEMBER_FAULTY)
		return false;
	em->write_error_seen = true; /* md: set_bit(WriteErrorSeen) on every write error */
	/* A member in memory that is no longer what was opened (its file
	 * truncated, removed or replaced under the array: a mapped member's
	 * copy then faults, -EIO) fails now, as the daemon's periodic check
	 * would fail it; bad blocks recorded on it would be written to the
	 * wrong file. (Other members keep md's rule: their check may wait on
	 * a link, and a write to a cut file on disk extends it, no error.) */
	char changed[400];
	if (em->m && eng_data_member(em)->in_memory &&
	    member_check(em->m, changed, sizeof(changed)) < 0) {
		eng_member_failed(a, role, changed);
		return false;
	}
	/* md's failfast: no retry, no bad block, while the array can lose it */
	if (!em->has_bbl || a->readonly || a->broken || eng_role_failfast(a, role, true)) {
		/* md_error: no log to keep the range in (rdev_set_badblocks
		 * fails while badblocks.shift < 0, as for a member without one);
		 * a broken array writes no superblock that could record it */
		eng_member_failed(a, role, why);
		return false;
	}
	/* What the log held before: a recording the superblocks cannot carry
	 * is taken back (below). */
	struct md_bbl *before = malloc(sizeof(*before));
	if (!before) {
		eng_member_failed(a, role, why);
		return false;
	}
	*before = em->bbl;
	bool was_dirty = em->bbl_dirty;
	/* The unit: md's block_sectors = roundup(1 << shift, logical block),
	 * at least what the personality records (raid5: a 4 KiB stripe unit). */
	uint64_t blk = (uint64_t)1 << em->bbl.shift, lbs = eng_data_member(em)->logical_block / 512;
	if (lbs > blk)
		blk = (blk + lbs - 1) / lbs * lbs;
	if (unit > blk)
		blk = (unit + blk - 1) / blk * blk;
	int nbad = 0;
	uint64_t first = 0, last = 0;
	for (uint64_t s = msec, end = msec + nsec; s < end;) {
		uint64_t e = (s / blk + 1) * blk;
		if (e > end)
			e = end;
		if (eng_member_io(a, role, true, (uint8_t *)buf + (s - msec) * 512, s, e - s) < 0) {
			int rc = eng_bbl_add(em, s, e - s);
			if (rc < 0) {
				/* md: rdev_set_badblocks returns 0, md_error fails it */
				eng_bbl_restore(em, before, was_dirty);
				free(before);
				eng_member_failed(a, role,
				                  rc == -ENOSPC
				                      ? "write error, and its bad block log is full"
				                      : why);
				return false;
			}
			if (!nbad++)
				first = s;
			last = e;
		}
		s = e;
	}
	if (nbad == 0) {
		free(before);
		return true; /* the units all went through on the retry */
	}
	fprintf(stderr,
	        "uraid: %s (slot %d): %s: data sectors %llu-%llu recorded in its bad block log "
	        "(%d unit(s)); the array reads them from the other members\n",
	        em->m ? em->m->name : "?", role, why, (unsigned long long)first,
	        (unsigned long long)last - 1, nbad);
	/* md acknowledges the write only once the superblock recording the
	 * range is written (MD_SB_CHANGE_PENDING); the log goes first. */
	if (eng_sb_write_all(a) < 0 && em->state != URAID_MEMBER_FAULTY) {
		/* Not on disk (md: super_written's error is md_error): the
		 * ranges are forgotten again, the write error stands, and the
		 * member fails, or the array is broken when it cannot lose it,
		 * its old data read as before. */
		eng_bbl_restore(em, before, was_dirty);
		free(before);
		eng_member_failed(a, role, why);
		return false;
	}
	free(before);
	return em->state != URAID_MEMBER_FAULTY;
}

bool eng_write_failed_io(struct eng_array *a, int role, const struct member_io *io, uint64_t unit,
                         const char *why)
{
	if (role < 0 || role >= a->geo.raid_disks || a->slot[role] < 0)
		return false;
	uint64_t s = io->off / 512, doff = a->mem[a->slot[role]]->sb.data_offset;
	if (s < doff) {
		eng_member_failed(a, role, why);
		return false;
	}
	return eng_write_failed(a, role, io->buf, s - doff, io->len / 512, unit, why);
}

void eng_member_drop(struct eng_array *a, int i)
{
	struct eng_member *em = a->mem[i];
	if (em->m)
		member_close(em->m);
	free(em);
	for (int j = i; j + 1 < a->nmem; j++)
		a->mem[j] = a->mem[j + 1];
	a->nmem--;
	for (int r = 0; r < a->geo.raid_disks; r++)
		if (a->slot[r] > i)
			a->slot[r]--;
}

void eng_members_check(struct eng_array *a)
{
	for (int i = 0; i < a->nmem; i++) {
		struct eng_member *em = a->mem[i];
		if (!em->m || em->left_out || em->state == URAID_MEMBER_FAULTY)
			continue;
		char why[400];
		if (member_check(em->m, why, sizeof(why)) == 0)
			continue;
		if (em->role >= 0 && em->role < a->geo.raid_disks && a->slot[em->role] == i) {
			eng_member_failed(a, em->role, why);
		} else if (!em->replacement) {
			fprintf(stderr, "uraid: spare marked faulty: %s\n", why);
			em->state = URAID_MEMBER_FAULTY;
			if (!a->readonly)
				eng_sb_write_all(a);
		}
	}
}
