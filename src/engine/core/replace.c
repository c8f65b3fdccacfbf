/* Replace, as md does it (mdadm --replace): a new member is rebuilt as the
 * *replacement* of a slot while the slot's member stays in the array,
 * serves every read and receives every write, so the array is never
 * degraded. When the copy is complete the old member is marked faulty and
 * the replacement takes the slot.
 *
 * On disk (1.x only, as md): the replacement's own superblock has the
 * REPLACEMENT feature bit, its slot in dev_roles and, until complete, a
 * recovery_offset; so an interrupted replace resumes at the next assembly,
 * here or in the kernel.
 *
 * Writes reach both members through a tee in the old member's data path
 * (eng_member.data_m, a member wrapper): the write paths stay unchanged.
 * This file keeps the replacement's state (the tee, who holds the slot);
 * the copy itself is sync work (engine/sync/replace.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/core/engine.h"
#include "member/member_wrap.h"

static struct eng_member *tee_owner(struct member *m)
{
	return m->priv;
}

/* Byte offset on the replacement for a byte offset on the old member: the
 * two may have different data offsets. */
static uint64_t tee_off(const struct eng_member *em, uint64_t off)
{
	return off - em->sb.data_offset * 512 + em->tee_to->sb.data_offset * 512;
}

static ssize_t tee_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct member *in = tee_owner(m)->m;
	return in->ops->pread(in, buf, len, off);
}

static ssize_t tee_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                          unsigned flags)
{
	struct eng_member *em = tee_owner(m);
	int rc = member_write(em->m, buf, len, off, flags);
	/* The replacement is written even when the old member failed: it then
	 * takes the slot (eng_replace_slot_failed) and must hold this write. */
	int r2 = member_write(em->tee_to->m, buf, len, tee_off(em, off), flags);
	if (r2 < 0) {
		int zero = 0;
		__atomic_compare_exchange_n(&em->tee_err, &zero, r2, false, __ATOMIC_RELAXED,
		                            __ATOMIC_RELAXED);
	}
	return rc < 0 ? rc : (ssize_t)len;
}

static int tee_flush(struct member *m)
{
	struct eng_member *em = tee_owner(m);
	int rc = member_flush(em->m);
	if (member_flush(em->tee_to->m) < 0) {
		int zero = 0;
		__atomic_compare_exchange_n(&em->tee_err, &zero, -EIO, false, __ATOMIC_RELAXED,
		                            __ATOMIC_RELAXED);
	}
	return rc;
}

static int tee_fd(struct member *m)
{
	(void)m;
	return -1; /* every request through the ops above */
}

static void tee_close(struct member *m)
{
	(void)m; /* embedded in its eng_member */
}

static const struct member_ops tee_ops = {
    .kind = "replace-tee",
    .pread = tee_pread,
    .pwrite = tee_pwrite,
    .flush = tee_flush,
    .fd = tee_fd,
    .close = tee_close,
};

static void tee_install(struct eng_member *old, struct eng_member *repl)
{
	struct member *t = &old->tee;
	memset(t, 0, sizeof(*t));
	member_wrap_init(t, old->m, &tee_ops, old);
	old->tee_to = repl;
	old->tee_err = 0;
	old->data_m = t;
}
void eng_tee_remove(struct eng_member *old)
{
	old->data_m = NULL;
	old->tee_to = NULL;
}

bool eng_is_replacement(const struct eng_member *em)
{
	return em->replacement && em->role >= 0 && em->state == URAID_MEMBER_REBUILDING;
}

/* The member in `role`'s slot, and the index of its replacement (-1). */
static int replacement_of(const struct eng_array *a, int role)
{
	for (int i = 0; i < a->nmem; i++)
		if (eng_is_replacement(a->mem[i]) && a->mem[i]->role == role)
			return i;
	return -1;
}

bool eng_replace_any(const struct eng_array *a)
{
	for (int i = 0; i < a->nmem; i++)
		if (eng_is_replacement(a->mem[i]))
			return true;
	return false;
}

uint64_t eng_replace_from(const struct eng_array *a)
{
	uint64_t from = UINT64_MAX;
	for (int i = 0; i < a->nmem; i++)
		if (eng_is_replacement(a->mem[i]) && a->mem[i]->recovery_offset < from)
			from = a->mem[i]->recovery_offset;
	return from;
}

/* Give up on a replacement (its own write failed, or by request). */
void eng_replace_give_up(struct eng_array *a, int idx, const char *why)
{
	struct eng_member *em = a->mem[idx];
	fprintf(stderr, "uraid: replacement %s for slot %d dropped: %s\n", em->m->name, em->role,
	        why);
	int old = em->role >= 0 && em->role < a->geo.raid_disks ? a->slot[em->role] : -1;
	if (old >= 0 && a->mem[old]->tee_to == em)
		eng_tee_remove(a->mem[old]);
	em->state = URAID_MEMBER_FAULTY;
	em->replacement = false;
	em->role = -1;
	eng_sb_write_all(a);
}

int eng_replace_drop(struct eng_array *a, int idx)
{
	if (!eng_is_replacement(a->mem[idx]))
		return -EINVAL;
	eng_replace_give_up(a, idx, "failed by request");
	return 0;
}

int eng_replace_start(struct eng_array *a, int old_idx, struct eng_member *repl)
{
	struct eng_member *old = a->mem[old_idx];
	if (replacement_of(a, old->role) >= 0)
		return -EBUSY;
	repl->role = old->role;
	repl->state = URAID_MEMBER_REBUILDING;
	repl->replacement = true;
	repl->recovery_offset = 0;
	repl->bind_seq = a->bind_next++;
	a->mem[a->nmem++] = repl;
	tee_install(old, repl);
	return eng_sb_write_all(a);
}

void eng_replace_slot_failed(struct eng_array *a, int role)
{
	int werr = 0;
	for (int i = 0; i < a->nmem; i++)
		if (a->mem[i]->tee_to && a->mem[i]->role == role) {
			werr = __atomic_load_n(&a->mem[i]->tee_err, __ATOMIC_RELAXED);
			eng_tee_remove(a->mem[i]);
		}
	int ri = replacement_of(a, role);
	if (ri < 0 || a->slot[role] >= 0)
		return;
	struct eng_member *em = a->mem[ri];
	if (werr) {
		em->state = URAID_MEMBER_FAULTY;
		em->replacement = false;
		em->role = -1;
		return;
	}
	/* As md: the replacement is all the slot has now; it goes on as an
	 * ordinary rebuild from where its copy got (the caller writes the
	 * superblocks). */
	em->replacement = false;
	a->slot[role] = ri;
	a->geo.member_sectors[role] = em->sb.data_size;
}

int eng_replace_assembled(struct eng_array *a)
{
	for (int i = 0; i < a->nmem; i++) {
		struct eng_member *em = a->mem[i];
		if (!em->replacement || em->state == URAID_MEMBER_FAULTY)
			continue;
		int role = em->role, old = a->slot[role];
		for (int j = 0; j < i; j++)
			if (a->mem[j]->replacement && a->mem[j]->role == role &&
			    a->mem[j]->state != URAID_MEMBER_FAULTY)
				return -EINVAL;
		bool done = em->recovery_offset == UINT64_MAX;
		if (old < 0 || done) {
			/* The replacement alone holds the slot, or its copy had
			 * finished: it takes over, as md does at assembly. */
			if (old >= 0) {
				a->mem[old]->state = URAID_MEMBER_FAULTY;
				a->mem[old]->role = -1;
			}
			em->replacement = false;
			em->state = done ? URAID_MEMBER_IN_SYNC : URAID_MEMBER_REBUILDING;
			if (done)
				em->recovery_offset = 0;
			a->slot[role] = i;
			a->geo.member_sectors[role] = em->sb.data_size;
		} else if (a->mem[old]->state == URAID_MEMBER_IN_SYNC) {
			tee_install(a->mem[old], em);
		} else {
			/* The old member is itself rebuilding: md would not have
			 * started a replace; use the replacement as a spare. */
			em->replacement = false;
			em->state = URAID_MEMBER_SPARE;
			em->role = -1;
		}
	}
	return 0;
}
