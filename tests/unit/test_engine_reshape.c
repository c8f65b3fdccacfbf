/* Reshape (engine/reshape.c, core/reshape.h): a raid5/raid6 grown by one
 * member, a raid5 chunk + layout change (forwards), a raid5/raid6 shrunk by
 * one and a raid5 layout + chunk change moving the data up (backwards, from
 * the end), and the level changes that move data (engine/reshape_level.c:
 * raid5 -> raid6 with one more member, raid6 -> raid5 with one less, raid4
 * -> raid5 left-symmetric, raid0 -> raid5 with two more), raid10 near-2
 * grown by one, shrunk by one and its chunk changed, and degraded (grown with
 * the missing slot filled, its chunk changed, shrunk), on crash-simulating members
 * (sim/member_crash.h: volatile caches that keep, tear or lose unflushed
 * writes), the power cut at a random member request while the data moves
 * and random writes, discards and flushes go on (one raid5 grow with an
 * internal bitmap, a raid10 grow and chunk change with one); then reassembled, the reshape
 * resumed and finished. Every sector must hold a legal state (its value at
 * the last acknowledged flush, or a write issued after it; what the grow
 * adds: zeros), the geometry must be the new one with no reshape left, and
 * check must find no mismatch. The room the data moves into is small, so
 * md's checkpoint rule (core/reshape.h) is what keeps the old rows safe.
 * RESHAPE_TRIALS (per config, default 12) and RESHAPE_SEED scale and move
 * it; tests/torture/run runs more. The refusals: test_engine_reshape_refuse. */
#include "crash_workload.h"
#include "reshape_common.h"

struct rs_cfg {
	const char *name;
	int level, ndisks, to_disks, layout; /* layout -1: unchanged */
	uint32_t chunk, to_chunk, move;
	int dir;               /* uraid_reshape_opts.direction */
	uint32_t bitmap_chunk; /* bytes: an internal bitmap of this chunk; 0 none */
	/* A level change that moves data (engine/reshape_level.c): the
	 * level asked (0: none) and the geometry it must end at; spares
	 * are added up to to_disks, or one for a member a takeover adds. */
	int to_level, want_layout, spares;
	/* A degraded array (md reshapes one): this member (1 + its index;
	 * 0: none) failed and removed before, `spares` spares added, a few
	 * steps of their recovery run; the reshape must end with
	 * want_degraded slots empty. No foreground writes (a degraded
	 * array's write hole is not the reshape's). */
	int degrade, want_degraded;
};

/* The level a level change ends at (URAID_RESHAPE_TO_RAID0: raid0). */
static int rs_level(const struct rs_cfg *c)
{
	return c->to_level == URAID_RESHAPE_TO_RAID0 ? URAID_LEVEL_RAID0 : c->to_level;
}

/* Entries 3-5 run backwards (md's reshape_backwards): the shrinks after
 * --array-size, and a layout change moving the data offset up. */
static const struct rs_cfg rcfgs[] = {
    {"raid5_4to5", URAID_LEVEL_RAID5, 4, 5, -1, 16, 0, 48, 1, 0, 0, -1, 0, 0, 0},
    {"raid6_5to6", URAID_LEVEL_RAID6, 5, 6, -1, 16, 0, 64, 1, 0, 0, -1, 0, 0, 0},
    {"raid5_chunk_layout", URAID_LEVEL_RAID5, 4, 4, LAYOUT_RIGHT_SYMMETRIC, 16, 8, 40, 1, 0, 0, -1,
     0, 0, 0},
    {"raid5_5to4", URAID_LEVEL_RAID5, 5, 4, -1, 16, 0, 40, 0, 0, 0, -1, 0, 0, 0},
    {"raid6_6to5", URAID_LEVEL_RAID6, 6, 5, -1, 16, 0, 48, 0, 0, 0, -1, 0, 0, 0},
    {"raid5_layout_up", URAID_LEVEL_RAID5, 4, 4, LAYOUT_RIGHT_ASYMMETRIC, 8, 16, 40, -1, 0, 0, -1,
     0, 0, 0},
    {"raid5_4to5_bitmap", URAID_LEVEL_RAID5, 4, 5, -1, 16, 0, 48, 1, 4096, 0, -1, 0, 0, 0},
    /* raid5 4 -> raid6 5 left-symmetric: via left-symmetric-6, Q filled */
    {"raid5_to_raid6", URAID_LEVEL_RAID5, 4, 5, -1, 16, 0, 48, 1, 0, 6, LAYOUT_LEFT_SYMMETRIC, 1, 0,
     0},
    /* raid6 5 left-symmetric -> raid5 4: to left-symmetric-6, Q dropped */
    {"raid6_to_raid5", URAID_LEVEL_RAID6, 5, 4, -1, 16, 0, 64, 1, 0, 5, LAYOUT_LEFT_SYMMETRIC, 0, 0,
     0},
    /* raid4 4 -> raid5 4 left-symmetric: via parity-last */
    {"raid4_to_raid5", URAID_LEVEL_RAID4, 4, 4, LAYOUT_LEFT_SYMMETRIC, 16, 0, 40, 1, 0, 5,
     LAYOUT_LEFT_SYMMETRIC, 0, 0, 0},
    /* raid0 3 -> raid5 5 left-symmetric: via raid5 parity-last of 4 */
    {"raid0_to_raid5", URAID_LEVEL_RAID0, 3, 5, -1, 16, 0, 48, 1, 0, 5, LAYOUT_LEFT_SYMMETRIC, 2, 0,
     0},
    /* raid10 (engine/reshape_raid10.c): near-2 grown by one, a chunk
     * change (forwards), near-2 shrunk by one after --array-size. */
    {"raid10_4to5", URAID_LEVEL_RAID10, 4, 5, -1, 16, 0, 0, 1, 0, 0, -1, 0, 0, 0},
    {"raid10_chunk", URAID_LEVEL_RAID10, 4, 4, -1, 16, 32, 0, 1, 0, 0, -1, 0, 0, 0},
    {"raid10_5to4", URAID_LEVEL_RAID10, 5, 4, -1, 16, 0, 0, 0, 0, 0, -1, 0, 0, 0},
    /* near-2 -> offset-2 (same copies), backwards: the offset moves up */
    {"raid10_near_to_offset", URAID_LEVEL_RAID10, 4, 4, 0x10201, 16, 0, 0, -1, 0, 0, -1, 0, 0, 0},
    /* in place with a backup file: raid5 4 -> 5 on 0.90, raid6 5 -> 6
     * on 1.2 (rcfgs[15], [16]) */
    {"raid5_4to5_inplace_090", URAID_LEVEL_RAID5, 4, 5, -1, 16, 0, 0, 1, 0, 0, -1, 0, 0, 0},
    {"raid6_5to6_inplace", URAID_LEVEL_RAID6, 5, 6, -1, 16, 0, 0, 1, 0, 0, -1, 0, 0, 0},
    /* degraded (member 2 of 4 gone): two spares, one fills the empty slot
     * during the move, the other takes the new one */
    {"raid5_4to5_degraded", URAID_LEVEL_RAID5, 4, 5, -1, 16, 0, 48, 1, 0, 0, -1, 2, 3, 0},
    /* degraded raid5 -> raid6: the one spare fills the empty slot 1, Q
     * stays empty (md's raid5_add_disk takes the lowest) */
    {"raid5_to_raid6_degraded", URAID_LEVEL_RAID5, 4, 5, -1, 16, 0, 48, 1, 0, 6,
     LAYOUT_LEFT_SYMMETRIC, 1, 2, 1},
    /* degraded, no spare: a layout + chunk change backwards, the missing
     * member's chunks reconstructed as they move */
    {"raid5_layout_degraded", URAID_LEVEL_RAID5, 4, 4, LAYOUT_RIGHT_ASYMMETRIC, 8, 16, 40, -1, 0, 0,
     -1, 0, 1, 1},
    /* degraded raid10 near-2 (md's raid10_check_reshape: every chunk
     * keeps a copy), rcfgs[20], [21]: grown by one with two spares (the
     * recovering one fills the missing slot 1 as the move goes, the other
     * takes slot 4: raid10_add_disk, lowest first); its chunk changed
     * with slot 0 missing and no spare (it stays empty) */
    {"raid10_4to5_degraded", URAID_LEVEL_RAID10, 4, 5, -1, 16, 0, 0, 1, 0, 0, -1, 2, 2, 0},
    {"raid10_chunk_degraded", URAID_LEVEL_RAID10, 4, 4, -1, 16, 32, 0, 1, 0, 0, -1, 0, 1, 1},
    /* in place with mdadm's sliding backup (engine/reshape_slide.c),
     * rcfgs[22..25]: 0.90 chunk change, 0.90 layout change, 0.90 shrink
     * 5 -> 4 after --array-size (its critical section at the end), and
     * a raid6 chunk + layout change on 1.2 (the backup given: in place) */
    {"raid5_chunk_slide_090", URAID_LEVEL_RAID5, 4, 4, -1, 16, 8, 0, 1, 0, 0, -1, 0, 0, 0},
    {"raid5_layout_slide_090", URAID_LEVEL_RAID5, 4, 4, LAYOUT_RIGHT_ASYMMETRIC, 16, 0, 0, 1, 0, 0,
     -1, 0, 0, 0},
    {"raid5_5to4_slide_090", URAID_LEVEL_RAID5, 5, 4, -1, 16, 0, 0, 0, 0, 0, -1, 0, 0, 0},
    {"raid6_chunk_slide", URAID_LEVEL_RAID6, 5, 5, LAYOUT_RIGHT_SYMMETRIC, 8, 16, 0, 1, 0, 0, -1, 0,
     0, 0},
    /* level changes keeping the data members (mdadm slides these too),
     * rcfgs[26], [27]: raid5 4 -> raid6 5 and raid6 5 -> raid5 4 on 0.90 */
    {"raid5_to_raid6_slide_090", URAID_LEVEL_RAID5, 4, 5, -1, 16, 0, 0, 1, 0, 6,
     LAYOUT_LEFT_SYMMETRIC, 1, 0, 0},
    {"raid6_to_raid5_slide_090", URAID_LEVEL_RAID6, 5, 4, -1, 16, 0, 0, 1, 0, 5,
     LAYOUT_LEFT_SYMMETRIC, 0, 0, 0},
    /* degraded raid10 near-2 shrunk 5 -> 4 with slot 1 missing (rcfgs[28]):
     * the given-up slot's member recovers it after the move */
    {"raid10_5to4_degraded", URAID_LEVEL_RAID10, 5, 4, -1, 16, 0, 0, 0, 0, 0, -1, 0, 2, 0},
    /* raid10 near-2 with an internal bitmap (rcfgs[29], [30]): grown by
     * one (md's raid10_start_reshape resizes the bitmap to the new array
     * size first), and its chunk changed (the bitmap kept) */
    {"raid10_4to5_bitmap", URAID_LEVEL_RAID10, 4, 5, -1, 16, 0, 0, 1, 4096, 0, -1, 0, 0, 0},
    {"raid10_chunk_bitmap", URAID_LEVEL_RAID10, 4, 4, -1, 16, 32, 0, 1, 4096, 0, -1, 0, 0, 0},
    /* raid5 4 left-symmetric -> raid0 3 (rcfgs[31]): restriped to
     * parity-last, then the parity member failed out (mdadm's
     * impose_level) */
    {"raid5_to_raid0", URAID_LEVEL_RAID5, 4, 3, -1, 16, 0, 48, 1, 0, URAID_RESHAPE_TO_RAID0,
     RAID0_LAYOUT_NONE, 0, 0, 0},
};

#define RS_SECTORS 512 /* per member */
#define RS_DISK    (2u << 20)

/* Set by the in-place kinds around run(): reshaped in place with mdadm's
 * backup of the critical section (engine/reshape_backup.c) on a
 * crash-simulated backup member; 1 with 1.2 metadata (the backup given,
 * so no offset change), 2 with 0.90 (whose data offset never moves). */
static int rs_inplace;

/* Member requests the last trial's reshape start made (an in-place one
 * moves its critical section there). */
static uint64_t rs_start_used;

/* Does a discard issued after the last acknowledged flush cover sector
 * sec (zeros are then a legal content)? */
static bool zero_in_flight(const struct cw_span *s, uint64_t sec)
{
	for (uint64_t id = s->boundary + 1; id <= s->issued; id++)
		if (s->log[id].zero && s->log[id].lsec <= sec &&
		    sec < s->log[id].lsec + s->log[id].nsec)
			return true;
	return false;
}

/* What a shrink's fewer members hold (mdadm's order: --array-size first). */
static uint64_t rs_fit(const struct rs_cfg *c)
{
	int pd = c->level == URAID_LEVEL_RAID6 ? 2 : 1;
	if (c->level == URAID_LEVEL_RAID10) /* near-2 */
		return (uint64_t)RS_SECTORS * (uint64_t)c->to_disks / 2;
	return (uint64_t)RS_SECTORS * (uint64_t)(c->to_disks - pd);
}

/* The degraded start: member c->degrade - 1 failed and removed, the
 * spares added, their recovery a few steps on (the reshape stops it, as
 * mdadm freezes the array). */
static void rs_degrade(struct uraid_array *a, const struct rs_cfg *c, struct te_disk *d, int nd)
{
	char err[512];
	const char *gone = d[c->degrade - 1].name;
	CHECKF(uraid_fail(a, gone, err, sizeof(err)) == 0 &&
	           uraid_remove(a, gone, err, sizeof(err)) == 0,
	       "%s: fail and remove %s: %s", c->name, gone, err);
	for (int i = c->ndisks; i < nd; i++)
		CHECKF(uraid_add_member(a, te_borrow(&d[i]), err, sizeof(err)) == 0, "%s: add: %s",
		       c->name, err);
	for (int k = 0; k < 2 && nd > c->ndisks; k++)
		CHECK(uraid_sync_step(a, 32) > 0);
}

/* One trial: crash_point 0 = no cut (calibration); returns the member
 * requests made from the reshape's start. */
static uint64_t rs_trial(const struct rs_cfg *c, uint64_t seed, uint64_t crash_point, bool *crashed)
{
	struct te_disk d[TE_MAX];
	struct crash_ctl *ctl;
	uint64_t rs = seed, used = 0;
	memset(d, 0, sizeof(d));
	*crashed = false;
	if (crash_ctl_new(&ctl) < 0)
		abort();
	int nd = c->to_disks > c->ndisks ? c->to_disks : c->ndisks;
	if (c->to_level || c->degrade)
		nd = c->ndisks + c->spares;
	for (int i = 0; i < nd; i++) {
		snprintf(d[i].name, sizeof(d[i].name), "r%d", i);
		if (member_open_mem(d[i].name, 2u << 20, &d[i].mem) < 0 ||
		    member_crash_wrap(d[i].mem, ctl, &d[i].fault) < 0)
			abort();
	}
	struct uraid_create_opts o = rsc_opts(c->level, c->ndisks, c->chunk, RS_SECTORS);
	if (rs_inplace == 2)
		o.metadata = 0; /* 0.90 */
	struct uraid_array *a = NULL;
	struct cw_span s = {.seed = seed, .nlog = 4096};
	struct member *bk = NULL, *bk_mem = NULL;
	if (rs_inplace && (member_open_mem("backup", 1u << 20, &bk_mem) < 0 ||
	                   member_crash_wrap(bk_mem, ctl, &bk) < 0))
		abort();
	uint8_t *buf = malloc(64 * 512);
	char err[512], warn[1024];
	if (te_create(&o, d, c->ndisks, &a) < 0) {
		CHECKF(0, "%s: create failed", c->name);
		goto out;
	}
	if (c->to_disks < c->ndisks && !c->to_level) {
		/* mdadm's order: the array cut to what the fewer members hold */
		uint64_t fit = rs_fit(c) * 512;
		struct uraid_reshape_opts early = {.raid_disks = c->to_disks, .layout = -1};
		CHECKF(uraid_array_reshape_start(a, &early, err, sizeof(err)) == -ENOSPC &&
		           strstr(err, "--array-size"),
		       "%s: a shrink before --array-size is refused: %s", c->name, err);
		CHECKF(uraid_grow(a, URAID_GROW_ARRAY_SIZE, fit / 512, err, sizeof(err)) == 0,
		       "%s: array size: %s", c->name, err);
	}
	if (c->bitmap_chunk)
		CHECKF(uraid_bitmap_add(a, c->bitmap_chunk, err, sizeof(err)) == 0,
		       "%s: bitmap: %s", c->name, err);
	/* Known content everywhere first. */
	CHECK(cw_span_start(a, &s, uraid_size(a) / 512, buf) == 0);
	if (c->degrade)
		rs_degrade(a, c, d, nd);
	for (int i = c->ndisks; i < nd && c->to_level && !c->degrade; i++)
		CHECKF(uraid_add_member(a, te_borrow(&d[i]), err, sizeof(err)) == 0, "%s: add: %s",
		       c->name, err);
	if (c->to_disks > c->ndisks && !c->to_level && !c->degrade)
		CHECKF(uraid_add_member(a, te_borrow(&d[c->ndisks]), err, sizeof(err)) == 0,
		       "%s: add: %s", c->name, err);
	uint64_t base = crash_ctl_requests(ctl);
	crash_ctl_arm(ctl, crash_point ? base + crash_point : 0);
	struct uraid_reshape_opts ro = {.raid_disks = c->to_disks,
	                                .layout = c->layout,
	                                .chunk_sectors = c->to_chunk,
	                                .move_sectors = c->move,
	                                .direction = c->dir,
	                                .level = c->to_level,
	                                .backup_member = bk};
	int rc = uraid_array_reshape_start(a, &ro, err, sizeof(err));
	rs_start_used = crash_ctl_requests(ctl) - base;
	if (!crash_ctl_crashed(ctl)) {
		CHECKF(rc == 0, "%s: reshape start: %s", c->name, err);
		struct uraid_status st0;
		memset(&st0, 0, sizeof(st0));
		uraid_status(a, &st0);
		int dir = (c->to_disks < c->ndisks && !c->to_level) || c->dir < 0 ? 2 : 1;
		CHECKF(rc < 0 || st0.reshape == dir, "%s: the reshape runs %s (reshape %d)",
		       c->name, dir == 2 ? "backwards" : "forwards", st0.reshape);
	}
	while (rc == 0 && !crash_ctl_crashed(ctl)) {
		uint64_t r = t_rand(&rs) % 8;
		if (r < 3 && !c->degrade)
			rc = cw_span_write(a, &s, &rs, buf);
		else if (r == 3)
			rc = cw_span_flush(a, &s);
		if (rc < 0 || crash_ctl_crashed(ctl))
			break;
		rc = uraid_sync_step(a, 32);
		if (rc <= 0)
			break;
		rc = 0;
	}
	if (!crash_ctl_crashed(ctl))
		CHECKF(rc >= 0, "%s seed %#llx: reshape failed: %d", c->name,
		       (unsigned long long)seed, rc);
	used = crash_ctl_requests(ctl) - base;
	*crashed = crash_ctl_crashed(ctl);
	uraid_drop(a);
	a = NULL;
	struct crash_stats cs;
	CHECK(crash_apply(ctl, seed ^ 0xfeed, &cs) == 0);

	int idx[TE_MAX], ni = 0;
	for (int i = 0; i < nd; i++)
		if (i != c->degrade - 1)
			idx[ni++] = i;
	warn[0] = 0;
	if (bk) {
		struct member *mm[TE_MAX];
		for (int i = 0; i < nd; i++)
			mm[i] = te_borrow(&d[i]);
		/* 0.91 keeps no recovery_offset: a slot the move fills is
		 * active without sync (md's super_90_sync), filled up to the
		 * position, and holds only parity; but each 0.90 member says
		 * its own role, and a cut before the filling member's own
		 * superblock says it leaves it a spare, the slot missing: md's
		 * raid5_run then wants --force for the dirty array */
		unsigned fl = rs_inplace == 2 && c->spares ? URAID_FORCE : 0;
		rc = uraid_assemble_members_backup(mm, nd, URAID_NO_SYNC_THREAD | fl, bk, &a, err,
		                                   sizeof(err), warn, sizeof(warn));
		if (rc < 0)
			fprintf(stderr, "assemble with the backup: %s\n", err);
	} else {
		/* md's start_dirty_degraded: a degraded array cut while
		 * active needs --force (no write was in flight on it here:
		 * no write hole) */
		rc = c->degrade ? te_assemble_force(d, idx, ni, &a, warn, sizeof(warn))
		                : te_assemble(d, idx, ni, &a, warn, sizeof(warn));
	}
	if (rc < 0) {
		CHECKF(0, "%s seed %#llx point %llu: assemble failed", c->name,
		       (unsigned long long)seed, (unsigned long long)crash_point);
		goto out;
	}
	CHECKF(te_sync_all(a) == 0, "%s seed %#llx point %llu: resume failed", c->name,
	       (unsigned long long)seed, (unsigned long long)crash_point);
	struct uraid_status st;
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	/* The reshape may not have been recorded at all when the cut came
	 * inside its start: then the old geometry is legal too. */
	bool started =
	    rsc_geometry(&st, c->to_disks, c->chunk, c->to_chunk, c->layout) &&
	    (!c->to_level || (st.level == rs_level(c) && st.layout == (uint32_t)c->want_layout));
	/* A degraded shrink (raid10_5to4_degraded, slot 1 missing) has two
	 * legitimate outcomes: cut before the superblocks record it, the old
	 * geometry (5 slots, slot 1 empty, no spare); after, the new one,
	 * whole: md leaves the given-up slot's member a spare, which recovers
	 * the empty slot (so no spare is left; had the missing member been in
	 * a given-up slot, none either). The first is shrunk here again, so
	 * that it too is checked whole: content below, then check. */
	bool shrink = c->to_disks < c->ndisks && !c->to_level;
	if (!started && shrink && c->degrade && st.raid_disks == c->ndisks && st.degraded == 1) {
		struct uraid_reshape_opts again = {.raid_disks = c->to_disks, .layout = -1};
		CHECKF(uraid_grow(a, URAID_GROW_ARRAY_SIZE, rs_fit(c), err, sizeof(err)) == 0 &&
		           uraid_array_reshape_start(a, &again, err, sizeof(err)) == 0 &&
		           te_sync_all(a) == 0,
		       "%s: the old geometry the cut left shrunk again: %s", c->name, err);
		memset(&st, 0, sizeof(st));
		uraid_status(a, &st);
		started = rsc_geometry(&st, c->to_disks, c->chunk, c->to_chunk, c->layout);
		printf("# %s point %llu: the cut left the old geometry (degraded), shrunk again\n",
		       c->name, (unsigned long long)crash_point);
	}
	CHECKF(st.reshape == 0 &&
	           st.degraded == (started ? c->want_degraded : c->degrade && !c->spares) &&
	           (started || crash_point),
	       "%s seed %#llx point %llu: level %d geometry %d disks chunk %u layout %u, "
	       "reshape %d, degraded %d",
	       c->name, (unsigned long long)seed, (unsigned long long)crash_point, st.level,
	       st.raid_disks, st.chunk_sectors, st.layout, st.reshape, st.degraded);
	/* raid0 holds no spares: the parity member failed out (impose_level) */
	CHECKF(st.level != URAID_LEVEL_RAID0 || st.spares == 0,
	       "%s seed %#llx point %llu: a raid0 with %d spares", c->name,
	       (unsigned long long)seed, (unsigned long long)crash_point, st.spares);
	/* md leaves a shrink's removed members as spares. */
	CHECKF(!shrink || !started || st.spares == c->ndisks - c->to_disks - (c->degrade ? 1 : 0),
	       "%s seed %#llx point %llu: %d spares after the shrink", c->name,
	       (unsigned long long)seed, (unsigned long long)crash_point, st.spares);
	uint64_t size = uraid_size(a) / 512, lost = 0;
	/* The bitmap stands for the array's sync range after it (raid10:
	 * array sectors, resized with the member count; raid5: per member). */
	uint64_t bcov = c->level == URAID_LEVEL_RAID10 ? size : st.dev_sectors;
	uint64_t bcs = (uint64_t)st.bitmap_chunk_kib * 2;
	CHECKF(!c->bitmap_chunk || (bcs && st.bitmap_chunks == (bcov + bcs - 1) / bcs),
	       "%s seed %#llx point %llu: %llu bitmap chunks of %llu sectors for %llu", c->name,
	       (unsigned long long)seed, (unsigned long long)crash_point,
	       (unsigned long long)st.bitmap_chunks, (unsigned long long)bcs,
	       (unsigned long long)bcov);
	for (uint64_t s0 = 0; s0 < size; s0 += 64) {
		uint64_t k = size - s0 < 64 ? size - s0 : 64;
		CHECK(uraid_read(a, buf, k * 512, s0 * 512) == 0);
		for (uint64_t j = 0; j < k; j++) {
			uint64_t sec = s0 + j;
			uint64_t id = cw_decode(seed, sec, buf + j * 512);
			/* raid0 from raid5: each member's whole data area, as md's
			 * raid0_takeover_raid45 zones it (past the old end: what
			 * the members held there) */
			bool ok = sec >= s.span ? id == 0 || st.level == URAID_LEVEL_RAID0
			                        : id == s.durable[sec] ||
			                              (id != UINT64_MAX && id > s.boundary &&
			                               id <= s.issued && !s.log[id].zero &&
			                               s.log[id].lsec <= sec &&
			                               sec < s.log[id].lsec + s.log[id].nsec) ||
			                              (id == 0 && zero_in_flight(&s, sec));
			if (!ok && lost++ < 3)
				fprintf(
				    stderr,
				    "%s seed %#llx point %llu: sector %llu holds %s%llu (durable "
				    "%llu, boundary %llu, issued %llu)\n",
				    c->name, (unsigned long long)seed,
				    (unsigned long long)crash_point, (unsigned long long)sec,
				    id == UINT64_MAX ? "garbage " : "write ",
				    (unsigned long long)(id == UINT64_MAX ? 0 : id),
				    (unsigned long long)(sec < s.span ? s.durable[sec] : 0),
				    (unsigned long long)s.boundary, (unsigned long long)s.issued);
		}
	}
	CHECKF(lost == 0, "%s seed %#llx point %llu: %llu sectors lost", c->name,
	       (unsigned long long)seed, (unsigned long long)crash_point, (unsigned long long)lost);
	/* (a raid0 the cut left before its takeover has nothing to check; a
	 * degraded one's reads above were its check: the missing member's
	 * sectors come from the parity) */
	uint64_t mm = !cw_redundant(st.level) || st.degraded ? 0 : rsc_check(a);
	CHECKF(mm == 0, "%s seed %#llx point %llu: %llu mismatches", c->name,
	       (unsigned long long)seed, (unsigned long long)crash_point, (unsigned long long)mm);
out:
	if (a)
		uraid_stop(a);
	for (int i = 0; i < nd; i++)
		if (d[i].fault)
			member_close(d[i].fault);
	if (bk)
		member_close(bk);
	crash_ctl_free(ctl);
	cw_span_free(&s);
	free(buf);
	return used;
}

static void run(int i)
{
	const struct rs_cfg *c = &rcfgs[i];
	uint64_t seed = cw_env("RESHAPE_SEED", 0x7e5a0000ULL) + (uint64_t)i * 0x100000;
	uint64_t trials = cw_env("RESHAPE_TRIALS", 12);
	bool crashed;
	uint64_t total = rs_trial(c, seed, 0, &crashed);
	CHECKF(total > 10, "%s: the reshape made %llu member requests", c->name,
	       (unsigned long long)total);
	uint64_t rs = seed ^ 0xabc, crashes = 0;
	uint64_t start = rs_start_used;
	for (uint64_t t = 0; t < trials && total; t++) {
		/* In place: every other cut inside the start, where the
		 * critical section is backed up and moved. */
		uint64_t span = rs_inplace && t % 2 == 0 && start ? start : total, from = 0;
		/* A shrink in place: its critical section, backed up as one
		 * window, is at the end: every other cut in the last eighth. */
		if (rs_inplace && c->to_disks < c->ndisks && t % 2 == 0) {
			span = total / 8 + 1;
			from = total - span;
		}
		/* a degraded shrink: the first cut before its start is recorded */
		bool first = t == 0 && c->degrade && c->to_disks < c->ndisks;
		rs_trial(c, seed + t + 1, first ? 1 : from + 1 + t_rand(&rs) % span, &crashed);
		crashes += crashed;
	}
	CHECKF(crashes > 0 || trials == 0, "%s: no trial cut the power", c->name);
	printf("# %s: %llu member requests per reshape, %llu trials cut\n", c->name,
	       (unsigned long long)total, (unsigned long long)crashes);
}

static void raid5_4to5(void)
{
	run(0);
}
static void raid6_5to6(void)
{
	run(1);
}
static void raid5_chunk_layout(void)
{
	run(2);
}

static void raid5_5to4(void)
{
	run(3);
}
static void raid6_6to5(void)
{
	run(4);
}
static void raid5_layout_up(void)
{
	run(5);
}

/* A second reshape (no crash): the first, forwards, took the room before
 * the data, so a layout change goes backwards into the room after it, as
 * mdadm picks the side with more room; one forced forwards is refused with
 * nothing written. Content against a shadow copy, then check. */
static void second_reshape(void)
{
	struct te_disk d[4];
	rsc_disks_open(d, 4, "s", 2u << 20);
	struct uraid_create_opts o = rsc_opts(URAID_LEVEL_RAID5, 4, 16, RS_SECTORS);
	struct uraid_array *a = NULL;
	char err[512];
	CHECK(te_create(&o, d, 4, &a) == 0);
	uint64_t size = uraid_size(a), rs = 0x5ec0;
	uint8_t *shadow = malloc(size);
	for (uint64_t i = 0; i < size; i++)
		shadow[i] = (uint8_t)t_rand(&rs);
	CHECK(uraid_write(a, shadow, size, 0) == 0 && uraid_flush(a) == 0);
	struct uraid_status st;
	struct uraid_reshape_opts f = {.layout = LAYOUT_RIGHT_SYMMETRIC, .direction = 1};
	CHECKF(uraid_array_reshape_start(a, &f, err, sizeof(err)) == 0, "first: %s", err);
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECKF(st.reshape == 1, "the first reshape runs forwards (%d)", st.reshape);
	CHECK(te_sync_all(a) == 0);
	struct uraid_reshape_opts fw = {.layout = LAYOUT_LEFT_SYMMETRIC, .direction = 1};
	CHECKF(uraid_array_reshape_start(a, &fw, err, sizeof(err)) == -ENOSPC &&
	           strstr(err, "before the data area"),
	       "forwards again is refused for want of room before the data: %s", err);
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECK(st.reshape == 0 && st.layout == LAYOUT_RIGHT_SYMMETRIC);
	struct uraid_reshape_opts g = {.layout = LAYOUT_LEFT_SYMMETRIC, .chunk_sectors = 32};
	CHECKF(uraid_array_reshape_start(a, &g, err, sizeof(err)) == 0, "second: %s", err);
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECKF(st.reshape == 2, "the second reshape runs backwards (%d)", st.reshape);
	CHECK(te_sync_all(a) == 0);
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECK(st.reshape == 0 && st.layout == LAYOUT_LEFT_SYMMETRIC && st.chunk_sectors == 32);
	CHECK(uraid_size(a) == size && te_verify(a, shadow, size) == 0);
	uint64_t mm = rsc_check(a);
	CHECKF(mm == 0, "%llu mismatches", (unsigned long long)mm);
	uraid_stop(a);
	rsc_disks_close(d, 4);
	free(shadow);
}

/* With an internal bitmap (md reshapes with one; the bitmap stays, and
 * after the cut the bitmap-guided resync and the move must agree). */
static void raid5_4to5_bitmap(void)
{
	run(6);
}

static void raid5_to_raid6(void)
{
	run(7);
}
static void raid6_to_raid5(void)
{
	run(8);
}
static void raid4_to_raid5(void)
{
	run(9);
}
static void raid0_to_raid5(void)
{
	run(10);
}

static void raid10_4to5(void)
{
	run(11);
}
static void raid10_chunk(void)
{
	run(12);
}
static void raid10_5to4(void)
{
	run(13);
}
static void raid10_near_to_offset(void)
{
	run(14);
}

static void raid5_4to5_inplace_090(void)
{
	rs_inplace = 2;
	run(15);
	rs_inplace = 0;
}
static void raid6_5to6_inplace(void)
{
	rs_inplace = 1;
	run(16);
	rs_inplace = 0;
}

static void raid5_4to5_degraded(void)
{
	run(17);
}
static void raid5_to_raid6_degraded(void)
{
	run(18);
}
static void raid5_layout_degraded(void)
{
	run(19);
}

static void raid10_4to5_degraded(void)
{
	run(20);
}
static void raid10_chunk_degraded(void)
{
	run(21);
}

static void raid10_5to4_degraded(void)
{
	run(28);
}

static void slide_run(int kind, int i)
{
	rs_inplace = kind;
	run(i);
	rs_inplace = 0;
}
static void raid5_chunk_slide_090(void)
{
	slide_run(2, 22);
}
static void raid5_layout_slide_090(void)
{
	slide_run(2, 23);
}
static void raid5_5to4_slide_090(void)
{
	slide_run(2, 24);
}
static void raid6_chunk_slide(void)
{
	slide_run(1, 25);
}
static void raid5_to_raid6_slide_090(void)
{
	slide_run(2, 26);
}
static void raid6_to_raid5_slide_090(void)
{
	slide_run(2, 27);
}

static void raid10_4to5_bitmap(void)
{
	run(29);
}

static void raid10_chunk_bitmap(void)
{
	run(30);
}

static void raid5_to_raid0(void)
{
	run(31);
}

TEST_MAIN(T(second_reshape), T(raid5_4to5), T(raid6_5to6), T(raid5_chunk_layout), T(raid5_5to4),
          T(raid6_6to5), T(raid5_layout_up), T(raid5_4to5_bitmap), T(raid5_to_raid6),
          T(raid6_to_raid5), T(raid4_to_raid5), T(raid0_to_raid5), T(raid10_4to5), T(raid10_chunk),
          T(raid10_5to4), T(raid10_near_to_offset), T(raid5_4to5_inplace_090),
          T(raid6_5to6_inplace), T(raid5_4to5_degraded), T(raid5_to_raid6_degraded),
          T(raid5_layout_degraded), T(raid10_4to5_degraded), T(raid10_chunk_degraded),
          T(raid5_chunk_slide_090), T(raid5_layout_slide_090), T(raid5_5to4_slide_090),
          T(raid6_chunk_slide), T(raid5_to_raid6_slide_090), T(raid6_to_raid5_slide_090),
          T(raid10_5to4_degraded), T(raid10_4to5_bitmap), T(raid10_chunk_bitmap), T(raid5_to_raid0))
