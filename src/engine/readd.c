/* Re-adding a member that was briefly missing (md's --re-add): it goes back
 * into the slot its own superblock names, and when the array keeps a bitmap
 * that still covers everything it missed (md's rule: its events >= the
 * bitmap's events_cleared; bits are never cleared while the array is
 * degraded) only the chunks marked dirty are recovered; the rest of it is
 * trusted. A member that missed writes the bitmap does not cover (or with no
 * bitmap) is refused, as md refuses it; `add` takes it as a spare, recovered
 * completely. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/log.h"
#include "engine/md.h"
#include "engine/sync/sync.h"
#include "util/errmsg.h"

/* Errors only in strict mode (re-add asked for); `add` falls back to a spare. */
#define REFUSE(...) (strict ? errmsg(err, errlen, __VA_ARGS__) : 0)

static bool dev_number_used(const struct eng_array *a, uint32_t d)
{
	for (int i = 0; i < a->nmem; i++)
		if (a->mem[i]->sb.dev_number == d)
			return true;
	return false;
}

static bool any_rebuilding(const struct eng_array *a)
{
	for (int r = 0; r < a->geo.raid_disks; r++)
		if (a->slot[r] >= 0 && a->mem[a->slot[r]]->state == URAID_MEMBER_REBUILDING)
			return true;
	return false;
}

int eng_readd(struct eng_array *a, struct member **mp, bool strict, char *err, size_t errlen)
{
	struct member *m = *mp;
	struct md_sb sb;
	char e[256];
	int rc = md_sb_load(m, &sb, e, sizeof(e));
	if (rc < 0)
		return REFUSE(rc == -ENOENT ? -EINVAL : rc, "%s: %s", m->name,
		              rc == -ENOENT ? "no md superblock: not a former member (use add)"
		                            : e);
	if (memcmp(sb.set_uuid, a->ref.set_uuid, 16))
		return REFUSE(-EINVAL, "%s belongs to another array (uuid)", m->name);
	int role = md_sb_role(&sb);
	if (role < 0 || role >= a->geo.raid_disks)
		return REFUSE(-EINVAL, "%s held no slot of this array (a spare): use add", m->name);
	if (a->slot[role] >= 0)
		return REFUSE(-EBUSY, "%s: its slot %d is held by %s", m->name, role,
		              a->mem[a->slot[role]]->m ? a->mem[a->slot[role]]->m->name : "?");
	/* The size may have changed while it was gone (grow --size: md's
	 * super_1_load compares uuid, level, layout and chunk only; its bits
	 * were resized with the array): then it needs room for the new one. */
	bool resized = sb.size != a->geo.dev_sectors && sb.version != MD_SB_0_90 &&
	               sb.data_size >= a->geo.dev_sectors;
	if (sb.level != a->geo.level || sb.layout != a->ref.layout ||
	    sb.chunk_sectors != a->geo.chunk_sectors ||
	    sb.raid_disks != (uint32_t)a->geo.raid_disks ||
	    (sb.size != a->geo.dev_sectors && !resized))
		return REFUSE(-EINVAL, "%s: its superblock describes another geometry", m->name);
	rc = md_sb_check_device(&sb, m->size / 512, e, sizeof(e));
	if (rc < 0)
		return REFUSE(rc, "%s: %s", m->name, e);
	if (sb.events > a->events)
		return REFUSE(-EINVAL,
		              "%s is newer than the array (events %" PRIu64 " > %" PRIu64
		              "): refusing to overwrite it",
		              m->name, sb.events, a->events);
	if (any_rebuilding(a) || a->action == URAID_SYNC_RECOVER)
		return REFUSE(-EBUSY, "a recovery is running: re-add %s when it is done", m->name);
	const struct eng_log_ops *log = a->log && a->log->covers_since ? a->log : NULL;
	bool partial = log && log->covers_since(a, sb.events);
	if (!partial && !strict)
		return 0; /* add: a spare, rebuilt completely */

	if (a->nmem >= ENG_MAX_MEMBERS)
		return errmsg(err, errlen, -ENOSPC, "too many members");
	struct eng_member *em = calloc(1, sizeof(*em));
	if (!em)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	em->m = m;
	em->sb = sb;
	/* Its bad block log comes back with it, as super_1_load reads it. */
	char e2[320];
	int brc = eng_bbl_load(em, e2, sizeof(e2));
	if (brc < 0) {
		free(em);
		return REFUSE(brc, "%s: bad block log refused: %s", m->name, e2);
	}
	*mp = NULL; /* the array owns it from here on */
	/* Whatever recovery its old superblock recorded is over: this one is
	 * decided below (super.c writes md's bitmap-recovery bit from it). */
	em->sb.feature_map &= ~MD_FEATURE_RECOVERY_BITMAP;
	if (sb.version != MD_SB_0_90 && dev_number_used(a, sb.dev_number)) {
		uint32_t d = 0;
		while (dev_number_used(a, d))
			d++;
		em->sb.dev_number = d;
	}
	em->role = role;
	em->state = URAID_MEMBER_REBUILDING;
	em->recovery_offset = 0;
	a->mem[a->nmem] = em;
	em->bind_seq = a->bind_next++;
	a->slot[role] = a->nmem++;
	a->geo.member_sectors[role] = sb.data_size;
	if (partial)
		log->recover_marked(a, role, em);
	else
		eng_log_full_recovery(a, role);
	fprintf(stderr,
	        "uraid: %s re-added in slot %d (events %" PRIu64 ", array %" PRIu64 "): %s\n",
	        m->name, role, sb.events, a->events,
	        partial ? "recovering the chunks the bitmap marks"
	                : "nothing missed, recovered completely (no bitmap to go by)");
	rc = eng_sb_write_all(a);
	if (rc < 0 || em->state == URAID_MEMBER_FAULTY)
		return errmsg(err, errlen, rc < 0 ? rc : -EIO, "%s: writing superblocks failed",
		              m->name);
	eng_sync_schedule(a);
	pthread_cond_broadcast(&a->cond);
	return 1;
}

/* md takes back a member that missed writes only where its bitmap says
 * which (super_1_validate leaves it raid_disk -1, add_new_disk refuses the
 * re-add: mdadm's "not possible"); all of it is `add`'s job, as a spare.
 * Checked before anything changes; eng_readd names any other problem. */
static int readd_possible(struct eng_array *a, struct member *m, char *err, size_t errlen)
{
	struct md_sb sb;
	char e[256];
	if (md_sb_load(m, &sb, e, sizeof(e)) < 0 || memcmp(sb.set_uuid, a->ref.set_uuid, 16) ||
	    sb.events >= a->events)
		return 0;
	const struct eng_log_ops *log = a->log && a->log->covers_since ? a->log : NULL;
	if (log && log->covers_since(a, sb.events))
		return 0;
	return errmsg(err, errlen, -ESTALE,
	              "--re-add for %s is not possible: %s; `add` recovers it completely as a "
	              "spare",
	              m->name,
	              log ? "it fell behind the bitmap (its events are older than the bitmap's "
	                    "events_cleared)"
	                  : "it missed writes and the array has no write-intent bitmap");
}

/* Forget a faulty/spare entry of the same member before it comes back. */
static int drop_entry(struct eng_array *a, const char *name, char *err, size_t errlen)
{
	for (int i = 0; i < a->nmem; i++) {
		struct eng_member *em = a->mem[i];
		if (!em->m || strcmp(em->m->name, name))
			continue;
		if (em->state != URAID_MEMBER_FAULTY)
			return errmsg(err, errlen, -EBUSY, "%s is %s in this array", name,
			              em->state == URAID_MEMBER_SPARE ? "already a spare"
			                                              : "active");
		eng_member_drop(a, i);
		return 0;
	}
	return 0;
}

int eng_re_add_member(struct eng_array *a, struct member *m, char *err, size_t errlen)
{
	if (!a || !m)
		return -EINVAL;
	if (a->readonly || m->readonly) {
		int rc = errmsg(err, errlen, -EROFS, "%s is read-only",
		                a->readonly ? "the array" : m->name);
		member_close(m); /* after the message, which names it */
		return rc;
	}
	eng_lock(a);
	int rc = readd_possible(a, m, err, errlen);
	if (rc == 0)
		rc = drop_entry(a, m->name, err, errlen);
	if (rc == 0) {
		rc = member_lock(m);
		if (rc < 0)
			errmsg(err, errlen, rc, "%s is in use by a running array", m->name);
	}
	if (rc == 0)
		rc = eng_readd(a, &m, true, err, errlen);
	eng_unlock(a);
	if (m)
		member_close(m);
	return rc < 0 ? rc : rc == 0 ? -EINVAL : 0;
}
