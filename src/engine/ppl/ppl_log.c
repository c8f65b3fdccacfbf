/* The partial parity log behind the log interface (core/log.h): loaded
 * when the superblocks name it (md's MD_FEATURE_PPL / MULTIPLE_PPLS), with
 * md's refusals; recovered at assembly (ppl_recover.c); every write taken
 * on the locked path and cut so that each stripe write's partial parity
 * fits one log unit (ppl_write.c); a member that joins a slot gets a fresh
 * log (ppl_area.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/ppl/ppl_int.h"
#include "engine/raid456/raid456.h"
#include "util/errmsg.h"

static bool ppl_present(const struct eng_array *a)
{
	return md_ppl_enabled(&a->ref);
}

/* md's checks (super_1_validate, ppl_init_log), then the logs of every
 * member: read, recovered when the array is dirty, started afresh. */
static int ppl_load(struct eng_array *a, char *err, size_t errlen)
{
	uint32_t fm = a->ref.feature_map;
	if ((fm & MD_FEATURE_PPL) && (fm & MD_FEATURE_MULTIPLE_PPLS))
		return errmsg(err, errlen, -EINVAL,
		              "the superblocks set both PPL features (0x%x and 0x%x): md refuses "
		              "such an array",
		              MD_FEATURE_PPL, MD_FEATURE_MULTIPLE_PPLS);
	if (a->geo.level != URAID_LEVEL_RAID5 || !eng_raid456(a))
		return errmsg(err, errlen, -EINVAL, "PPL is not compatible with raid level %d",
		              a->geo.level);
	if (a->geo.raid_disks > MD_PPL_MAX_DISKS)
		return errmsg(err, errlen, -EINVAL,
		              "PPL doesn't support over %d disks in the array", MD_PPL_MAX_DISKS);
	for (int r = 0; r < a->geo.raid_disks; r++) {
		const struct eng_member *em = a->slot[r] >= 0 ? a->mem[a->slot[r]] : NULL;
		/* The superblocks carry one area for all (core/super.c writes
		 * the array's), as mdadm places it on every member. */
		if (em && em->sb.bitmap_offset != a->ref.bitmap_offset)
			return errmsg(err, errlen, -EINVAL,
			              "%s: its PPL area (%d sectors at offset %d) differs from the "
			              "array's (%d at %d)",
			              em->m->name, md_ppl_size(&em->sb), md_ppl_offset(&em->sb),
			              md_ppl_size(&a->ref), md_ppl_offset(&a->ref));
	}
	/* Read-only and dirty: the kernel would rewrite parity from the logs
	 * before the first read, so that a missing member's blocks are
	 * rebuilt right; here that happens in memory (member_cow.c): every
	 * member behind a copy-on-write view, nothing written to any. */
	bool in_memory = a->readonly && a->resync_offset != MD_RESYNC_NONE;
	for (int i = 0; in_memory && i < a->nmem; i++) {
		struct member *w;
		if (member_cow_wrap(a->mem[i]->m, &w) < 0)
			return errmsg(err, errlen, -ENOMEM, "out of memory for the PPL recovery");
		a->mem[i]->m = w;
	}
	struct eng_ppl *p = eng_ppl_new(a, err, errlen);
	if (!p)
		return -EINVAL;
	p->in_memory = in_memory;
	/* What md writes back: one log per area or several (super_1_sync). */
	bool multi = false;
	for (int r = 0; r < p->ndisks; r++)
		multi |= p->log[r].m && p->log[r].multi;
	a->ref.feature_map = (fm & ~(MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS)) |
	                     (multi ? MD_FEATURE_MULTIPLE_PPLS : MD_FEATURE_PPL);
	return eng_ppl_recover(a, err, errlen);
}

/* The recovery made parity consistent: the superblocks say clean now. */
static int ppl_start(struct eng_array *a, char *err, size_t errlen)
{
	struct eng_ppl *p = eng_ppl_of(a);
	if (!p || !p->marked_clean || a->readonly)
		return 0;
	eng_lock(a);
	p->marked_clean = false;
	int rc = eng_sb_write_all(a);
	eng_unlock(a);
	return rc < 0 ? errmsg(err, errlen, rc,
	                       "writing the superblocks after the PPL recovery "
	                       "failed")
	              : 0;
}

/* Every write on the locked path, in pieces whose partial parity fits one
 * unit of a log (a stripe write is logged as a whole, before it starts). */
static int ppl_write(struct eng_array *a, const uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	eng_lock(a);
	/* md marks the array active before the first write after idle. */
	__atomic_store_n(&a->last_write_ns, eng_now_ns(), __ATOMIC_RELAXED);
	int rc = eng_mark_dirty(a);
	struct eng_req rq = {.q = a->ioq};
	while (rc == 0 && nsec) {
		uint64_t n = eng_ppl_piece(a, lsec, nsec);
		rc = a->pers->write(a, &rq, buf, lsec, n);
		buf += n * 512;
		lsec += n;
		nsec -= n;
	}
	eng_unlock(a);
	return rc;
}

/* The members are durable: no unit's stripes are outstanding. */
static int ppl_synced(struct eng_array *a, bool stopping)
{
	struct eng_ppl *p = eng_ppl_of(a);
	for (int r = 0; p && r < p->ndisks; r++)
		p->log[r].unflushed = 0;
	return 0;
}

/* A spare rebuilding `role` (or a member re-added there): its area may
 * hold an old log of this very array, which a crash must never replay;
 * it starts empty before the superblocks name it (md's ppl_modify_log). */
static void ppl_full_recovery(struct eng_array *a, int role)
{
	if (eng_ppl_of(a) && eng_ppl_log_reset(a, role) < 0)
		eng_ppl_of(a)->log[role].m = NULL; /* set up again at its first unit */
}

/* After every superblock update: a member that took a slot otherwise (a
 * replacement that finished) gets its fresh log now. Each member was
 * flushed with its superblock, so no unit's stripes are outstanding. */
static int ppl_sb_written(struct eng_array *a)
{
	struct eng_ppl *p = eng_ppl_of(a);
	for (int r = 0; p && r < p->ndisks; r++) {
		struct member *m = eng_ppl_member(a, r);
		p->log[r].unflushed = 0;
		if (m && p->log[r].m != m && eng_role_writable(a, r) && eng_ppl_log_reset(a, r) < 0)
			p->log[r].m = NULL;
	}
	return 0;
}

static void ppl_status(const struct eng_array *a, struct uraid_status *st)
{
	const struct eng_ppl *p = eng_ppl_of(a);
	if (!p)
		return;
	st->ppl = 1;
	st->ppl_recovered = p->recovered;
	st->ppl_mismatches = p->mismatches;
}

const struct eng_log_ops eng_log_ppl = {
    .name = "partial parity log",
    .present = ppl_present,
    .load = ppl_load,
    .start = ppl_start,
    .free = eng_ppl_free,
    .write = ppl_write,
    .log_stripes = eng_ppl_log_stripes,
    .row_sectors = MD_PPL_HEADER_SECTORS, /* md logs 4 KiB stripe rows */
    .synced = ppl_synced,
    .sb_written = ppl_sb_written,
    .full_recovery = ppl_full_recovery,
    .status = ppl_status,
};
