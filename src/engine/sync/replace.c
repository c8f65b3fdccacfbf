/* The copy of a replace (md's want_replacement; state in
 * engine/core/replace.c): the old member's sectors, read from it, or rebuilt
 * from the rest of the array when a read fails, are written to the
 * replacement; at the end of the recovery the replacement takes the slot. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/sync/sync.h"

int sync_replace_copy(struct eng_array *a, uint64_t pos, uint64_t n)
{
	for (int i = 0; i < a->nmem; i++) {
		struct eng_member *em = a->mem[i];
		if (!eng_is_replacement(em))
			continue;
		int role = em->role;
		if (a->slot[role] < 0) { /* cannot happen: promoted on failure */
			eng_replace_give_up(a, i, "its slot is empty");
			continue;
		}
		if (__atomic_load_n(&a->mem[a->slot[role]]->tee_err, __ATOMIC_RELAXED)) {
			eng_replace_give_up(a, i, "a write to it failed");
			continue;
		}
		uint64_t end = pos + n, used = a->ops->member_used(&a->geo, role);
		if (end > used)
			end = used;
		if (em->recovery_offset >= end || pos >= end)
			continue;
		uint8_t *buf = eng_buf_get(a, (end - pos) * 512);
		if (!buf)
			return -ENOMEM;
		int rc = eng_member_io(a, role, false, buf, pos, end - pos);
		if (rc < 0)
			rc = a->pers->role_data(a, role, buf, pos, end - pos);
		/* The old member may have failed meanwhile: then this member is
		 * in the slot and the rebuild continues the ordinary way. */
		if (rc == 0 && eng_is_replacement(em) &&
		    member_write(em->m, buf, (end - pos) * 512, (em->sb.data_offset + pos) * 512,
		                 0) < 0)
			eng_replace_give_up(a, i, "write error during the copy");
		eng_buf_put(a, buf);
		if (rc < 0)
			return rc;
	}
	return 0;
}

void sync_replace_finish(struct eng_array *a)
{
	for (int i = 0; i < a->nmem; i++) {
		struct eng_member *em = a->mem[i];
		if (!eng_is_replacement(em))
			continue;
		int role = em->role, old = a->slot[role];
		if (old >= 0) {
			if (__atomic_load_n(&a->mem[old]->tee_err, __ATOMIC_RELAXED)) {
				eng_replace_give_up(a, i, "a write to it failed");
				continue;
			}
			/* md marks the replaced member faulty, so it is never
			 * added back by mistake; `remove` takes it out. */
			eng_tee_remove(a->mem[old]);
			a->mem[old]->state = URAID_MEMBER_FAULTY;
			a->mem[old]->role = -1;
			fprintf(stderr, "uraid: %s replaced by %s in slot %d\n",
			        a->mem[old]->m->name, em->m->name, role);
		}
		em->replacement = false;
		em->state = URAID_MEMBER_IN_SYNC;
		em->recovery_offset = 0;
		a->slot[role] = i;
		a->geo.member_sectors[role] = em->sb.data_size;
	}
}
