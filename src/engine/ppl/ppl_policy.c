/* Switching a running md array's consistency policy between resync and
 * ppl, as mdadm --grow --consistency-policy does with the kernel: for ppl,
 * each member's log placed where mdadm's super1 update places it (meta/
 * md_ppl.c), started empty (zeroed, an empty header: the kernel refuses to
 * enable a log whose members hold no valid one), and only then the
 * superblocks naming it; for resync, the members made durable, then the
 * superblocks without the feature, then the log dropped. The stripe cache
 * is off while the log is on (its write-outs are not logged); after
 * switching back it stays off until set again (uraid stripe-cache). */
#include <errno.h>
#include <string.h>

#include "engine/ppl/ppl_int.h"
#include "engine/raid456/raid456.h"
#include "engine/raid456/stripe_cache.h"
#include "util/errmsg.h"

static bool used(const struct eng_array *a, int i)
{
	const struct eng_member *em = a->mem[i];
	return em->m && em->role >= 0 && em->state != URAID_MEMBER_FAULTY;
}

/* The one area every member can hold (core/super.c writes the array's
 * word to all): mdadm's placement on each, which must agree on the offset;
 * the smallest size. */
static int place(struct eng_array *a, int16_t *offset, uint16_t *size, char *err, size_t errlen)
{
	bool have = false;
	for (int i = 0; i < a->nmem; i++) {
		if (!used(a, i))
			continue;
		int16_t o;
		uint16_t s;
		char why[200];
		int rc = md_ppl_place_grow(&a->mem[i]->sb, &o, &s, why, sizeof(why));
		if (rc < 0)
			return errmsg(err, errlen, rc, "%s: %s", a->mem[i]->m->name, why);
		if (have && o != *offset)
			return errmsg(
			    err, errlen, -EINVAL,
			    "%s: its PPL area would start at offset %d, the other members' "
			    "at %d: their metadata areas differ",
			    a->mem[i]->m->name, o, *offset);
		if (!have || s < *size)
			*size = s;
		*offset = o;
		have = true;
	}
	if (!have)
		return errmsg(err, errlen, -ENODEV, "the array has no member to hold a PPL");
	return 0;
}

static void set_area(struct eng_array *a, int32_t word, uint32_t features)
{
	uint32_t mask = MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS;
	a->ref.bitmap_offset = word;
	a->ref.feature_map = (a->ref.feature_map & ~mask) | features;
	for (int i = 0; i < a->nmem; i++) {
		a->mem[i]->sb.bitmap_offset = word;
		a->mem[i]->sb.feature_map = (a->mem[i]->sb.feature_map & ~mask) | features;
	}
}

static int enable(struct eng_array *a, char *err, size_t errlen)
{
	if (a->log)
		return errmsg(err, errlen, -EINVAL,
		              "the array has a %s: md allows one consistency policy (a bitmap, a "
		              "journal or PPL)",
		              a->log->name);
	int16_t off = 0;
	uint16_t size = 0;
	int rc = place(a, &off, &size, err, errlen);
	if (rc < 0)
		return rc;
	int32_t old_word = a->ref.bitmap_offset;
	uint32_t old_features = a->ref.feature_map & (MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS);
	struct md_sb probe = a->ref;
	md_ppl_set_area(&probe, off, size);
	/* eng_ppl_new judges the area on every member as the kernel does. */
	set_area(a, probe.bitmap_offset,
	         md_ppl_multi(size) ? MD_FEATURE_MULTIPLE_PPLS : MD_FEATURE_PPL);
	a->log = &eng_log_ppl;
	struct eng_ppl *p = eng_ppl_new(a, err, errlen);
	if (!p) {
		rc = -EINVAL;
		goto undo;
	}
	/* Logs first: the superblocks may name them only once they hold a
	 * valid, empty header. */
	for (int r = 0; r < p->ndisks && rc == 0; r++)
		if (p->log[r].m && eng_role_writable(a, r)) {
			rc = eng_ppl_log_reset(a, r);
			if (rc < 0)
				errmsg(err, errlen, rc, "%s: writing its PPL failed: %s",
				       eng_ppl_member(a, r)->name, strerror(-rc));
		}
	if (rc == 0) {
		rc = eng_sb_write_all(a);
		if (rc < 0)
			errmsg(err, errlen, rc, "writing the superblocks failed: %s",
			       strerror(-rc));
	}
	if (rc == 0)
		return 0;
	eng_ppl_free(a);
undo:
	a->log = NULL;
	set_area(a, old_word, old_features);
	return rc;
}

static int disable(struct eng_array *a, char *err, size_t errlen)
{
	/* Every stripe the logs cover durable: afterwards nothing replays
	 * them, and md's resync policy knows only the dirty flag. */
	for (int r = 0; r < a->geo.raid_disks; r++) {
		struct member *m = eng_role_member(a, r);
		if (m && eng_role_writable(a, r) && member_flush(m) < 0)
			eng_member_failed(a, r, "flush failed");
	}
	int32_t word = a->ref.bitmap_offset;
	uint32_t features = a->ref.feature_map & (MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS);
	set_area(a, word, 0);
	const struct eng_log_ops *log = a->log;
	a->log = NULL;
	int rc = eng_sb_write_all(a);
	if (rc < 0) {
		a->log = log;
		set_area(a, word, features);
		return errmsg(err, errlen, rc, "writing the superblocks failed: %s", strerror(-rc));
	}
	eng_ppl_free(a);
	return 0;
}

int eng_ppl_policy(struct eng_array *a, enum uraid_consistency_policy policy, char *err,
                   size_t errlen)
{
	if (policy != URAID_POLICY_RESYNC && policy != URAID_POLICY_PPL)
		return errmsg(err, errlen, -EINVAL, "unknown consistency policy %d", (int)policy);
	if (a->readonly)
		return errmsg(err, errlen, -EROFS, "array is read-only");
	if (a->ref.version == MD_SB_0_90)
		return errmsg(err, errlen, -EINVAL, "0.90 metadata does not support PPL");
	if (a->geo.level != URAID_LEVEL_RAID5 || !eng_raid456(a))
		return errmsg(err, errlen, -EINVAL,
		              "PPL consistency policy is only supported for RAID level 5");
	/* The stripe cache writes partial stripes out without logging them
	 * (as for the journal): written out and off while the log is on, back
	 * on when enabling fails. */
	unsigned cache = 0;
	if (policy == URAID_POLICY_PPL) {
		cache = eng_scache_size(a);
		int rc = eng_scache_set(a, 0);
		if (rc < 0)
			return errmsg(err, errlen, rc, "writing the stripe cache out failed");
	}
	eng_lock(a);
	bool on = a->log == &eng_log_ppl;
	int rc = 0;
	if (policy == URAID_POLICY_PPL && !on)
		rc = enable(a, err, errlen);
	else if (policy == URAID_POLICY_RESYNC && on)
		rc = disable(a, err, errlen);
	eng_unlock(a);
	if (rc < 0 && cache && a->log != &eng_log_ppl)
		eng_scache_set(a, cache);
	return rc;
}
