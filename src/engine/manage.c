/* Member management on a running array: fail, remove, add (md's
 * --fail/--remove/--add). Each change is recorded in every working
 * member's superblock with the event count bumped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine/bitmap.h"
#include "engine/engine.h"
#include "util/errmsg.h"

/* Index into a->mem of a member named by path or "#SLOT"; -1 if none. */
static int find_member(const struct uraid_array *a, const char *name)
{
	if (name[0] == '#') {
		char *end;
		long r = strtol(name + 1, &end, 10);
		if (*end || r < 0 || r >= a->geom.raid_disks)
			return -1;
		return a->slot[r];
	}
	for (int i = 0; i < a->nmem; i++)
		if (a->mem[i]->m && !strcmp(a->mem[i]->m->name, name))
			return i;
	return -1;
}

int uraid_fail(struct uraid_array *a, const char *name, char *err, size_t errlen)
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
	if (em->state == URAID_MEMBER_FAULTY)
		goto out;
	if (em->state == URAID_MEMBER_SPARE || em->role < 0) {
		em->state = URAID_MEMBER_FAULTY;
		eng_sb_write_all(a);
		goto out;
	}
	/* Refuse to lose data: md likewise will not fail the last copy. */
	bool missing[LAYOUT_MAX_MEMBERS];
	for (int r = 0; r < a->geom.raid_disks; r++)
		missing[r] = r == em->role || a->slot[r] < 0 ||
		             a->mem[a->slot[r]]->state != URAID_MEMBER_IN_SYNC;
	if (em->state == URAID_MEMBER_IN_SYNC && !a->ops->readable(&a->geom, missing)) {
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

int uraid_remove(struct uraid_array *a, const char *name, char *err, size_t errlen)
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
	if (em->m)
		member_close(em->m);
	free(em);
	for (int j = i; j + 1 < a->nmem; j++)
		a->mem[j] = a->mem[j + 1];
	a->nmem--;
	for (int r = 0; r < a->geom.raid_disks; r++)
		if (a->slot[r] > i)
			a->slot[r]--;
	eng_sb_write_all(a);
out:
	eng_unlock(a);
	return rc;
}

/* Lowest device number no present member uses (md's desc_nr choice). */
static uint32_t free_dev_number(const struct uraid_array *a)
{
	for (uint32_t d = 0;; d++) {
		bool used = false;
		for (int i = 0; i < a->nmem && !used; i++)
			used = a->mem[i]->sb.dev_number == d;
		if (!used)
			return d;
	}
}

int uraid_add_member(struct uraid_array *a, struct member *m, char *err, size_t errlen)
{
	char e[256];
	if (a->readonly) {
		member_close(m);
		return errmsg(err, errlen, -EROFS, "array is read-only");
	}
	eng_lock(a);
	int rc;
	struct eng_member *em = NULL;
	if (a->nmem >= ENG_MAX_MEMBERS) {
		rc = errmsg(err, errlen, -ENOSPC, "too many members");
		goto fail;
	}
	for (int i = 0; i < a->nmem; i++)
		if (a->mem[i]->m && !strcmp(a->mem[i]->m->name, m->name)) {
			rc = errmsg(err, errlen, -EEXIST, "%s is already a member", m->name);
			goto fail;
		}
	if (m->readonly) {
		rc = errmsg(err, errlen, -EROFS, "%s is read-only", m->name);
		goto fail;
	}
	rc = eng_member_lock(m);
	if (rc < 0) {
		rc = errmsg(err, errlen, rc, "%s is in use by a running array", m->name);
		goto fail;
	}
	/* A former member whose slot is empty goes back there (md's re-add),
	 * recovered only where the bitmap says it missed writes. */
	rc = eng_readd(a, &m, false, err, errlen);
	if (rc != 0) {
		eng_unlock(a);
		if (m)
			member_close(m);
		return rc < 0 ? rc : 0;
	}
	/* The device's own superblock fields as create would choose them for
	 * this array, then the array-wide ones from the running array. */
	struct md_create_params p;
	memset(&p, 0, sizeof(p));
	p.version = a->ref.version;
	p.level = a->geom.level;
	p.layout = a->geom.layout;
	p.chunk_sectors = a->geom.chunk_sectors;
	p.raid_disks = (uint32_t)a->geom.raid_disks;
	p.size = a->geom.dev_sectors;
	p.data_offset = a->mem[0]->sb.data_offset;
	memcpy(p.set_uuid, a->ref.set_uuid, 16);
	uint8_t devuuid[16];
	if (getrandom(devuuid, sizeof(devuuid), 0) != sizeof(devuuid)) {
		rc = errmsg(err, errlen, -EIO, "no random numbers for a device UUID");
		goto fail;
	}
	em = calloc(1, sizeof(*em));
	if (!em) {
		rc = errmsg(err, errlen, -ENOMEM, "out of memory");
		goto fail;
	}
	uint32_t dev_number = free_dev_number(a);
	rc = md_sb_init(&em->sb, &p, -1, dev_number, devuuid, m->size / 512, e, sizeof(e));
	if (rc < 0) {
		rc = errmsg(err, errlen, rc, "%s: %s", m->name, e);
		goto fail;
	}
	uint64_t need = a->geom.level > 0 ? a->geom.dev_sectors : 1;
	if (em->sb.data_size < need) {
		rc =
		    errmsg(err, errlen, -ENOSPC,
		           "%s is too small: %llu data sectors, the array uses %llu per member",
		           m->name, (unsigned long long)em->sb.data_size, (unsigned long long)need);
		goto fail;
	}
	em->m = m;
	em->role = -1;
	em->state = URAID_MEMBER_SPARE;
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
fail:
	free(em);
	eng_unlock(a);
	member_close(m);
	return rc;
}

int uraid_add(struct uraid_array *a, const char *path, char *err, size_t errlen)
{
	struct member *m;
	char e[256];
	unsigned mf = (a->flags & URAID_DIRECT) ? MEMBER_DIRECT : 0;
	int rc = member_open_file(path, mf, 0, &m, e, sizeof(e));
	if (rc < 0) {
		if (strstr(e, path))
			return errmsg(err, errlen, rc, "%s", e);
		return errmsg(err, errlen, rc, "%s: %s", path, e);
	}
	return uraid_add_member(a, m, err, errlen);
}
