/* Adding a journal member to a running array (mdadm --add-journal): a
 * fresh log on the new member, the superblocks naming it, writes allowed
 * again. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine/journal/journal.h"
#include "engine/raid456/raid456.h"
#include "engine/raid456/stripe_cache.h"
#include "util/errmsg.h"

/* A dev_number no member (journal included) uses. */
static uint32_t unused_dev_number(const struct eng_array *a)
{
	uint32_t d = 0;
	for (int i = 0; i < a->nmem; i++)
		if (a->mem[i]->sb.dev_number >= d)
			d = a->mem[i]->sb.dev_number + 1;
	for (uint32_t x = (uint32_t)a->geo.raid_disks; x < a->ref.max_dev; x++)
		if (x >= d && a->ref.dev_roles[x] == MD_ROLE_JOURNAL)
			d = x + 1;
	return d;
}

int eng_journal_add_member(struct eng_array *a, struct member *m, char *err, size_t errlen)
{
	char e[256];
	int rc;
	if (a->readonly) {
		member_close(m);
		return errmsg(err, errlen, -EROFS, "array is read-only");
	}
	if (!eng_raid456(a) || a->ref.version == MD_SB_0_90) {
		member_close(m);
		return errmsg(err, errlen, -EINVAL,
		              "a write journal needs raid4/5/6 with 1.x metadata");
	}
	if (a->log && a->log != &eng_log_journal) {
		member_close(m);
		return errmsg(err, errlen, -EINVAL,
		              "the array has a %s: md allows a journal or a bitmap, not both",
		              a->log->name);
	}
	if (m->readonly) {
		rc = errmsg(err, errlen, -EROFS, "%s is read-only", m->name);
		member_close(m); /* after the message, which names it */
		return rc;
	}
	rc = member_lock(m);
	if (rc < 0) {
		rc = errmsg(err, errlen, rc, "%s is in use by a running array", m->name);
		member_close(m);
		return rc;
	}
	/* The stripe cache writes partial stripes out without logging them:
	 * write it out and turn it off (the journal's write-back mode takes
	 * its place); back on if the journal cannot be added. */
	unsigned cache = eng_scache_size(a);
	rc = eng_scache_set(a, 0);
	if (rc < 0) {
		member_close(m);
		return errmsg(err, errlen, rc, "writing the stripe cache out failed");
	}
	eng_lock(a);
	bool had_journal = a->log == &eng_log_journal;
	struct eng_journal *j = had_journal ? eng_journal_of(a) : NULL;
	if (j && j->em.m && !j->failed) {
		rc = errmsg(err, errlen, -EBUSY, "the array already has a working journal (%s)",
		            j->em.m->name);
		goto fail;
	}
	struct md_create_params p;
	eng_member_params(a, &p);
	uint8_t devuuid[16];
	struct md_sb sb;
	if (getrandom(devuuid, sizeof(devuuid), 0) != sizeof(devuuid)) {
		rc = errmsg(err, errlen, -EIO, "no random numbers for a device UUID");
		goto fail;
	}
	/* md records the array's size on the journal too, though its data
	 * area is the log: init with a size it holds, then the real one. */
	p.size = MD_SB_BYTES / 512;
	rc = md_sb_init(&sb, &p, -3, unused_dev_number(a), devuuid, m->size / 512, e, sizeof(e));
	if (rc < 0) {
		rc = errmsg(err, errlen, rc, "%s: %s", m->name, e);
		goto fail;
	}
	sb.size = a->geo.dev_sectors;
	if (j && j->em.m) {
		member_close(j->em.m);
		j->em.m = NULL;
	}
	j = eng_journal_new(a);
	if (!j) {
		rc = errmsg(err, errlen, -ENOMEM, "out of memory");
		goto fail;
	}
	a->log = &eng_log_journal;
	eng_wb_free(a);
	memset(&j->em, 0, sizeof(j->em));
	j->em.m = m;
	j->em.sb = sb;
	j->em.role = -1;
	j->em.state = URAID_MEMBER_IN_SYNC;
	j->failed = false;
	j->why[0] = 0;
	j->mode = URAID_JOURNAL_WT;
	rc = eng_journal_geometry(a, err, errlen);
	if (rc < 0) {
		j->em.m = NULL;
		eng_journal_set_failed(j, "the journal member is missing");
		goto fail;
	}
	/* A fresh log: an empty meta block at 0 with a random seq, as md
	 * starts one. The members are flushed first, so nothing older needs
	 * a log. */
	uint32_t r32;
	if (getrandom(&r32, sizeof(r32), 0) != sizeof(r32))
		r32 = 1;
	for (int r = 0; r < a->geo.raid_disks; r++) {
		struct member *mm = eng_role_member(a, r);
		if (mm && eng_role_writable(a, r))
			member_flush(mm);
	}
	mdj_init(&j->meta, r32, 0);
	uint8_t *blk = eng_alloc(MDJ_BLOCK);
	if (!blk) {
		rc = errmsg(err, errlen, -ENOMEM, "out of memory");
		goto fail_j;
	}
	mdj_encode(&j->meta, j->seed, blk);
	rc = eng_journal_ring_io(a, true, blk, 0, MDJ_BLOCK_SECTORS, 0);
	free(blk);
	if (rc == 0)
		rc = member_flush(m);
	if (rc < 0) {
		rc = errmsg(err, errlen, rc, "%s: writing the journal failed", m->name);
		goto fail_j;
	}
	j->tail = 0;
	j->last_pos = 0;
	j->head = MDJ_BLOCK_SECTORS;
	j->seq = (uint64_t)r32 + 1;
	j->dirty_tail = false;
	a->ref.feature_map |= MD_FEATURE_JOURNAL;
	rc = eng_sb_write_all(a);
	if (rc == 0 && j->failed)
		rc = -EIO;
	if (rc < 0)
		rc = errmsg(err, errlen, rc, "%s: writing superblocks failed", m->name);
	eng_unlock(a);
	return rc;
fail_j:
	j->em.m = NULL;
	eng_journal_set_failed(j, "adding a journal failed");
fail:
	/* An array that had no journal is left as it was, writable. */
	if (!had_journal && a->log == &eng_log_journal) {
		eng_wb_free(a);
		eng_journal_free(a);
		a->log = NULL;
	}
	eng_unlock(a);
	member_close(m);
	if (cache)
		eng_scache_set(a, cache);
	return rc;
}
