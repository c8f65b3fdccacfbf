/* Who is in which slot: a member failing or leaving. Changes are recorded in every working member's
 * superblock (super.c); a failing slot's replacement takes over (replace.c). */
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
