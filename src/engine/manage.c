/* Member management on a running array: fail, remove, add, replace (md's
 * --fail/--remove/--add/--replace; the replace itself is engine/sync/replace.c). Each change is
 * recorded in every working member's superblock with the event count bumped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine/core/log.h"
#include "engine/journal/journal.h"
#include "engine/md.h"
#include "engine/sync/sync.h"
#include "util/errmsg.h"

/* Index into a->mem of a member named by path or "#SLOT"; -1 if none. */
static int find_member(const struct eng_array *a, const char *name)
{
	if (name[0] == '#') {
		char *end;
		long r = strtol(name + 1, &end, 10);
		if (*end || r < 0 || r >= a->geo.raid_disks)
			return -1;
		return a->slot[r];
	}
	for (int i = 0; i < a->nmem; i++)
		if (a->mem[i]->m && !strcmp(a->mem[i]->m->name, name))
			return i;
	return -1;
}

int eng_fail(struct eng_array *a, const char *name, char *err, size_t errlen)
{
	if (a->readonly)
		return errmsg(err, errlen, -EROFS, "array is read-only");
	eng_lock(a);
	int rc = 0;
	int i = find_member(a, name);
	struct eng_journal *j = a->log == &eng_log_journal ? eng_journal_of(a) : NULL;
	if (i < 0 && j && j->em.m && !strcmp(j->em.m->name, name)) {
		/* The journal: as md, writes are refused from now on (the
		 * superblocks record it faulty) until a journal is added. */
		if (eng_wb_has(a))
			rc = errmsg(err, errlen, -EBUSY,
			            "the write-back journal %s holds data not yet on the members: "
			            "switch to write-through first",
			            name);
		else if (!j->failed)
			eng_journal_fail(a, "failed by request");
		goto out;
	}
	if (i < 0) {
		rc = errmsg(err, errlen, -ENOENT, "%s is not a member of this array", name);
		goto out;
	}
	struct eng_member *em = a->mem[i];
	if (em->state == URAID_MEMBER_FAULTY)
		goto out;
	if (em->replacement) { /* gives up the replace; the slot's member stays */
		eng_replace_drop(a, i);
		goto out;
	}
	if (em->state == URAID_MEMBER_SPARE || em->role < 0) {
		em->state = URAID_MEMBER_FAULTY;
		eng_sb_write_all(a);
		goto out;
	}
	/* Refuse to lose data: md likewise will not fail the last copy. */
	bool missing[LAYOUT_MAX_MEMBERS];
	for (int r = 0; r < a->geo.raid_disks; r++)
		missing[r] = r == em->role || a->slot[r] < 0 ||
		             a->mem[a->slot[r]]->state != URAID_MEMBER_IN_SYNC;
	if (em->state == URAID_MEMBER_IN_SYNC && !a->ops->readable(&a->geo, missing)) {
		rc = errmsg(err, errlen, -EBUSY,
		            "failing %s would leave %s without enough working members", name,
		            a->ops->name);
		goto out;
	}
	eng_member_failed(a, em->role, "failed by request");
out:
	eng_unlock(a);
	return rc;
}

int eng_remove(struct eng_array *a, const char *name, char *err, size_t errlen)
{
	if (a->readonly)
		return errmsg(err, errlen, -EROFS, "array is read-only");
	eng_lock(a);
	int rc = 0;
	int i = find_member(a, name);
	if (i < 0) {
		rc = errmsg(err, errlen, -ENOENT, "%s is not a member of this array", name);
		goto out;
	}
	struct eng_member *em = a->mem[i];
	if (em->state != URAID_MEMBER_FAULTY && em->state != URAID_MEMBER_SPARE) {
		rc = errmsg(err, errlen, -EBUSY, "%s is active: fail it first", name);
		goto out;
	}
	eng_member_drop(a, i);
	eng_sb_write_all(a);
out:
	eng_unlock(a);
	return rc;
}

/* md's desc_nr choice for a device added to a running array: the lowest
 * number from raid_disks up that no present member uses (so a former
 * member added back gets a new number, as /proc/mdstat shows it). */
static uint32_t free_dev_number(const struct eng_array *a)
{
	/* The log's member (the journal) has a device number too. */
	uint16_t word;
	int logdev = a->log && a->log->role ? a->log->role(a, &word) : -1;
	for (uint32_t d = (uint32_t)a->geo.raid_disks;; d++) {
		bool used = logdev >= 0 && (uint32_t)logdev == d;
		for (int i = 0; i < a->nmem && !used; i++)
			used = a->mem[i]->sb.dev_number == d;
		if (!used)
			return d;
	}
}

/* A new member for this array: its own superblock fields as create would
 * choose them, the array-wide ones from the running array. Takes the
 * member lock; the caller holds the array lock and still owns m. */
static int new_member(struct eng_array *a, struct member *m, struct eng_member **out, char *err,
                      size_t errlen)
{
	char e[256];
	if (a->nmem >= ENG_MAX_MEMBERS)
		return errmsg(err, errlen, -ENOSPC, "too many members");
	for (int i = 0; i < a->nmem; i++)
		if (a->mem[i]->m && !strcmp(a->mem[i]->m->name, m->name))
			return errmsg(err, errlen, -EEXIST, "%s is already a member", m->name);
	if (m->readonly)
		return errmsg(err, errlen, -EROFS, "%s is read-only", m->name);
	int rc = member_lock(m);
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s is in use by a running array", m->name);
	struct md_create_params p;
	eng_member_params(a, &p);
	uint8_t devuuid[16];
	if (getrandom(devuuid, sizeof(devuuid), 0) != sizeof(devuuid))
		return errmsg(err, errlen, -EIO, "no random numbers for a device UUID");
	struct eng_member *em = calloc(1, sizeof(*em));
	if (!em)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	uint32_t dev_number = free_dev_number(a);
	rc = md_sb_init(&em->sb, &p, -1, dev_number, devuuid, m->size / 512, e, sizeof(e));
	if (rc < 0) {
		free(em);
		return errmsg(err, errlen, rc, "%s: %s", m->name, e);
	}
	uint64_t need = a->geo.level > 0 ? a->geo.dev_sectors : 1;
	if (em->sb.data_size < need) {
		rc =
		    errmsg(err, errlen, -ENOSPC,
		           "%s is too small: %llu data sectors, the array uses %llu per member",
		           m->name, (unsigned long long)em->sb.data_size, (unsigned long long)need);
		free(em);
		return rc;
	}
	em->m = m;
	/* md_sb_init placed a bad block log as mdadm does: an empty one */
	rc = eng_bbl_load(em, e, sizeof(e));
	if (rc < 0) {
		free(em);
		return errmsg(err, errlen, rc, "%s: %s", m->name, e);
	}
	em->role = -1;
	em->state = URAID_MEMBER_SPARE;
	*out = em;
	return 0;
}

int eng_add_member_flags(struct eng_array *a, struct member *m, unsigned flags, char *err,
                         size_t errlen)
{
	if (a->readonly) {
		member_close(m);
		return errmsg(err, errlen, -EROFS, "array is read-only");
	}
	eng_lock(a);
	struct eng_member *em = NULL;
	int rc = new_member(a, m, &em, err, errlen);
	if (rc == 0)
		eng_sb_set_devflags(&em->sb,
		                    ((flags & URAID_ADD_WRITEMOSTLY) ? ENG_DEV_WRITEMOSTLY : 0) |
		                        ((flags & URAID_ADD_FAILFAST) ? ENG_DEV_FAILFAST : 0));
	if (rc == 0 && !(flags & URAID_ADD_SPARE)) {
		/* A former member whose slot is empty goes back there (md's
		 * re-add), recovered only where the bitmap says it missed
		 * writes; eng_readd takes m then (m set NULL). */
		rc = eng_readd(a, &m, false, err, errlen);
		if (rc != 0 || !m) {
			eng_unlock(a);
			free(em);
			if (m)
				member_close(m);
			return rc < 0 ? rc : 0;
		}
	}
	if (rc < 0) {
		eng_unlock(a);
		member_close(m);
		return rc;
	}
	em->bind_seq = a->bind_next++;
	a->mem[a->nmem++] = em;
	rc = eng_sb_write_all(a);
	if (rc < 0 || em->state == URAID_MEMBER_FAULTY) {
		rc = errmsg(err, errlen, rc < 0 ? rc : -EIO, "%s: writing superblocks failed",
		            m->name);
		eng_unlock(a);
		return rc;
	}
	/* A missing slot gets rebuilt onto it. */
	eng_sync_schedule(a);
	pthread_cond_broadcast(&a->cond);
	eng_unlock(a);
	return 0;
}

int eng_add_member(struct eng_array *a, struct member *m, char *err, size_t errlen)
{
	return eng_add_member_flags(a, m, 0, err, errlen);
}

int eng_replace_member(struct eng_array *a, const char *old, struct member *m, char *err,
                       size_t errlen)
{
	if (a->readonly) {
		member_close(m);
		return errmsg(err, errlen, -EROFS, "array is read-only");
	}
	eng_lock(a);
	int rc = 0, i = find_member(a, old);
	struct eng_member *em = NULL;
	if (i < 0) {
		rc = errmsg(err, errlen, -ENOENT, "%s is not a member of this array", old);
	} else if (!a->pers->redundant(a)) {
		rc = errmsg(err, errlen, -EOPNOTSUPP,
		            "%s has no redundancy to rebuild a replacement from", a->ops->name);
	} else if (a->ref.version == MD_SB_0_90) {
		rc = errmsg(err, errlen, -EOPNOTSUPP,
		            "0.90 superblocks cannot record a replacement (md needs 1.x for "
		            "replace): use fail and add");
	} else if (a->mem[i]->role < 0 || a->slot[a->mem[i]->role] != i ||
	           a->mem[i]->state != URAID_MEMBER_IN_SYNC) {
		rc = errmsg(err, errlen, -EINVAL, "%s is not an in-sync member of a slot", old);
	} else if (a->mem[i]->tee_to) {
		rc = errmsg(err, errlen, -EBUSY, "%s is already being replaced by %s", old,
		            a->mem[i]->tee_to->m->name);
	} else {
		rc = new_member(a, m, &em, err, errlen);
	}
	if (rc < 0) {
		eng_unlock(a);
		member_close(m);
		return rc;
	}
	rc = eng_replace_start(a, i, em);
	if (a->action == URAID_SYNC_IDLE)
		eng_sync_schedule(a);
	pthread_cond_broadcast(&a->cond);
	if (rc < 0 || em->state == URAID_MEMBER_FAULTY)
		rc = errmsg(err, errlen, rc < 0 ? rc : -EIO, "%s: writing superblocks failed",
		            m->name);
	eng_unlock(a);
	return rc;
}

/* md's linear hot-add (mdadm --grow --add): the member becomes the last
 * slot and the array grows by what it holds; nothing is rebuilt. */
int eng_linear_append(struct eng_array *a, struct member *m, char *err, size_t errlen)
{
	if (a->readonly) {
		member_close(m);
		return errmsg(err, errlen, -EROFS, "array is read-only");
	}
	if (a->geo.level != URAID_LEVEL_LINEAR) {
		member_close(m);
		return errmsg(err, errlen, -EINVAL, "only a linear array grows by appending");
	}
	eng_lock(a);
	struct eng_member *em = NULL;
	int n = a->geo.raid_disks;
	int rc =
	    n + 1 > LAYOUT_MAX_MEMBERS || (a->ref.version == MD_SB_0_90 && n + 1 > MD_SB0_MAX_DEVS)
	        ? errmsg(err, errlen, -ENOSPC, "too many members")
	        : new_member(a, m, &em, err, errlen);
	if (rc < 0) {
		eng_unlock(a);
		member_close(m);
		return rc;
	}
	/* mdadm gives it the next device number and the new slot. */
	em->sb.dev_number = free_dev_number(a);
	if (em->sb.dev_number < (uint32_t)n + 1)
		em->sb.dev_number = (uint32_t)n;
	em->role = n;
	em->state = URAID_MEMBER_IN_SYNC;
	em->bind_seq = a->bind_next++;
	a->mem[a->nmem++] = em;
	a->slot[n] = a->nmem - 1;
	uint64_t old_sectors = a->array_sectors;
	a->geo.raid_disks = n + 1;
	a->geo.member_sectors[n] = em->sb.data_size;
	a->ref.raid_disks = (uint32_t)n + 1;
	a->array_sectors = a->ops->array_sectors(&a->geo);
	rc = eng_sb_write_all(a);
	if (rc < 0 || em->state == URAID_MEMBER_FAULTY) {
		a->nmem--;
		a->slot[n] = -1;
		a->geo.raid_disks = n;
		a->ref.raid_disks = (uint32_t)n;
		a->array_sectors = old_sectors;
		member_close(em->m);
		free(em);
		rc = errmsg(err, errlen, rc < 0 ? rc : -EIO, "writing superblocks failed");
	}
	eng_unlock(a);
	return rc;
}
