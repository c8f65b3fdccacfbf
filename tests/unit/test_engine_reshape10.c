/* raid10 reshapes (engine/reshape_raid10.c) as md counts and refuses
 * them: the progress uraid status shows (md's resync_max_sectors and
 * /proc/mdstat's reshape line, from raid10.c's sizes), and the changes md
 * cannot make for want of room to move the data offset, in mdadm's words
 * with nothing written, and the shrink it makes by cutting the component
 * size first. (The power-cut and member-failure runs of raid10
 * reshapes are in test_engine_reshape.c and test_engine_reshape_fail.c.) */
#include "reshape_common.h"

#define RS_SECTORS 512 /* per member */
#define RS_DISK    (2u << 20)

/* md's raid10 sizes, from raid10.c: calc_sectors (the member sectors a
 * geometry uses) and raid10_size (array sectors on rd members). */
static uint64_t md10_dev(uint64_t dev, uint32_t chunk, uint32_t layout, int rd)
{
	uint64_t nc = layout & 0xff, fc = (layout >> 8) & 0xff;
	uint64_t size = dev / chunk / fc * (uint64_t)rd / nc * nc * fc;
	return (size + (uint64_t)rd - 1) / (uint64_t)rd * chunk;
}
static uint64_t md10_size(uint64_t dev, uint32_t chunk, uint32_t layout, int rd)
{
	return dev / chunk / ((layout >> 8) & 0xff) * (uint64_t)rd / (layout & 0xff) * chunk;
}

/* A raid10 reshape's progress as md shows it: md_do_sync counts it to
 * resync_max_sectors, raid10_run's raid10_size (old geometry) forwards,
 * raid10_start_reshape's (new geometry, fewer members) backwards, and
 * /proc/mdstat prints "reshape = x% (done/total)" in KiB; a grow's new end,
 * which md resyncs after, shows as a resync. */
/* Step a reshape to its end (URAID_NO_SYNC_THREAD), checking each status on
 * the way: while it reshapes, the total is md's `total` and mdstat's
 * reshape line shows (done/total); while a grow's new end resyncs, the
 * total is `resync_total` (0: not checked). Then no reshape is left and
 * at least one reshape line was seen. */
static void walk_progress(struct uraid_array *a, uint64_t total, uint64_t resync_total,
                          const char *what, size_t i)
{
	struct uraid_status st;
	char line[1024], want[64];
	uint64_t steps = 0, shown = 0;
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	while (st.reshape && steps++ < 10000) {
		if (st.sync_action == URAID_SYNC_RESHAPE) {
			CHECKF(st.sync_total == total, "%s %zu: reshape total %llu, md's %llu",
			       what, i, (unsigned long long)st.sync_total,
			       (unsigned long long)total);
			snprintf(want, sizeof(want), "(%llu/%llu)",
			         (unsigned long long)(st.sync_done / 2),
			         (unsigned long long)(total / 2));
			CHECKF(uraid_mdstat_format("md0", &st, line, sizeof(line)) > 0 &&
			           strstr(line, "reshape =") && strstr(line, want),
			       "%s %zu: mdstat \"%s\", want %s", what, i, line, want);
			shown++;
		} else if (resync_total) {
			CHECKF(st.sync_total == resync_total,
			       "%s %zu: resync total %llu, md's %llu", what, i,
			       (unsigned long long)st.sync_total, (unsigned long long)resync_total);
		}
		if (uraid_sync_step(a, 64) <= 0)
			break;
		memset(&st, 0, sizeof(st));
		uraid_status(a, &st);
	}
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECKF(shown > 0 && !st.reshape, "%s %zu: %llu lines, reshape %d", what, i,
	       (unsigned long long)shown, st.reshape);
}

static void raid10_progress(void)
{
	static const struct {
		int n, to;
		uint32_t chunk, to_chunk;
		int layout;
	} k[] = {{4, 5, 16, 0, -1},  {4, 6, 16, 0, -1},      {5, 4, 16, 0, -1},
	         {4, 4, 16, 32, -1}, {4, 4, 16, 0, 0x10201}, {5, 5, 16, 0, 0x10201}};
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct te_disk d[TE_MAX];
		memset(d, 0, sizeof(d));
		int nd = k[i].to > k[i].n ? k[i].to : k[i].n;
		rsc_disks_open(d, nd, "p", RS_DISK);
		struct uraid_create_opts o =
		    rsc_opts(URAID_LEVEL_RAID10, k[i].n, k[i].chunk, RS_SECTORS);
		struct uraid_array *a = NULL;
		char err[512];
		if (te_create(&o, d, k[i].n, &a) < 0) {
			CHECKF(0, "raid10 progress %zu: create", i);
			rsc_disks_close(d, nd);
			continue;
		}
		for (int j = k[i].n; j < nd && k[i].to > k[i].n; j++)
			CHECK(uraid_add_member(a, te_borrow(&d[j]), err, sizeof(err)) == 0);
		struct uraid_status st;
		memset(&st, 0, sizeof(st));
		uraid_status(a, &st);
		uint64_t dev = st.dev_sectors;
		uint32_t ol = st.layout;
		if (k[i].to < k[i].n)
			CHECK(uraid_grow(a, URAID_GROW_ARRAY_SIZE,
			                 md10_size(dev, k[i].chunk, ol, k[i].to), err,
			                 sizeof(err)) == 0);
		struct uraid_reshape_opts ro = {
		    .raid_disks = k[i].to, .layout = k[i].layout, .chunk_sectors = k[i].to_chunk};
		CHECKF(uraid_array_reshape_start(a, &ro, err, sizeof(err)) == 0,
		       "raid10 progress %zu: %s", i, err);
		memset(&st, 0, sizeof(st));
		uraid_status(a, &st);
		uint32_t nl = k[i].layout < 0 ? ol : (uint32_t)k[i].layout;
		uint32_t nch = k[i].to_chunk ? k[i].to_chunk : k[i].chunk;
		int fewer = k[i].to < k[i].n ? k[i].to : k[i].n;
		uint64_t mdev = md10_dev(dev, k[i].chunk, ol, k[i].n);
		uint64_t total = st.reshape == 2 ? md10_size(mdev, nch, nl, fewer)
		                                 : md10_size(mdev, k[i].chunk, ol, k[i].n);
		walk_progress(a, total, md10_size(dev, nch, nl, k[i].to), "raid10 progress", i);
		uraid_stop(a);
		rsc_disks_close(d, nd);
	}
}

/* raid10 changes md cannot make for want of room to move the data offset
 * (md's raid10 has no backup file), in mdadm's words, nothing written:
 * a grow with no room before the data, a chunk change with too little
 * either side, a shrink whose component-size cut (mdadm's first step)
 * would not hold the array. And a degraded grow without a spare for the
 * new slot. */
static void raid10_no_room(void)
{
	struct te_disk d[6];
	memset(d, 0, sizeof(d));
	char err[512] = "", cutwant[160];
	enum { NR_DISK = RS_DISK + 4096 };
	static uint8_t before[6][NR_DISK], after[NR_DISK];
	for (int kind = 0; kind < 4; kind++) {
		/* 1.0 (the data from sector 0) on the whole member: no room
		 * before the data, 8 sectors after it (less than a chunk) */
		rsc_disks_open(d, 6, "n", NR_DISK);
		struct uraid_create_opts o = rsc_opts(URAID_LEVEL_RAID10, 4, 16, 0);
		if (kind < 3)
			o.metadata = 10;
		struct uraid_array *a = NULL;
		if (te_create(&o, d, 4, &a) < 0) {
			CHECKF(0, "no room %d: create failed", kind);
			rsc_disks_close(d, 6);
			continue;
		}
		struct uraid_reshape_opts ro = {.layout = -1};
		const char *want = "";
		if (kind == 0) {
			CHECK(uraid_add_member(a, te_borrow(&d[4]), err, sizeof(err)) == 0);
			ro.raid_disks = 5;
			want = "Insufficient head-space for reshape";
		} else if (kind == 1) {
			ro.chunk_sectors = 32;
			want = "Insufficient tail-space for reshape";
		} else if (kind == 2) {
			ro.raid_disks = 3;
			struct uraid_status st;
			memset(&st, 0, sizeof(st));
			uraid_status(a, &st);
			/* all 3 members hold, but not on components cut by a
			 * chunk: the size asked for first is md's raid10_size of
			 * the cut ones */
			CHECK(uraid_grow(a, URAID_GROW_ARRAY_SIZE, st.dev_sectors / 16 * 3 / 2 * 16,
			                 err, sizeof(err)) == 0);
			snprintf(
			    cutwant, sizeof(cutwant),
			    "this change will reduce the size of the array: use --grow "
			    "--array-size first to truncate the array (e.g. --array-size=%lluK)",
			    (unsigned long long)((st.dev_sectors - 16) / 16 * 3 / 2 * 16 / 2));
			want = cutwant;
		} else {
			CHECK(uraid_fail(a, "n1", err, sizeof(err)) == 0 &&
			      uraid_remove(a, "n1", err, sizeof(err)) == 0);
			ro.raid_disks = 5;
			want = "needs 1 spare(s)";
		}
		CHECK(uraid_flush(a) == 0);
		for (int i = 0; i < 6; i++)
			CHECK(te_pread(d[i].fault, before[i], NR_DISK, 0) == NR_DISK);
		int rc = uraid_array_reshape_start(a, &ro, err, sizeof(err));
		CHECK(uraid_flush(a) == 0);
		bool same = true;
		for (int i = 0; i < 6; i++) {
			CHECK(te_pread(d[i].fault, after, NR_DISK, 0) == NR_DISK);
			same = same && !memcmp(before[i], after, sizeof(after));
		}
		CHECKF(rc < 0 && strstr(err, want) && same, "no room %d: rc %d \"%s\", members %s",
		       kind, rc, err, same ? "unchanged" : "WRITTEN");
		uraid_stop(a);
		rsc_disks_close(d, 6);
	}
}

/* A shrink md can make without room after the data: mdadm's raid10_reshape
 * first cuts the component size by the move (the data offset's), then
 * reshapes backwards; the content survives, the members use one chunk
 * less. */
static void raid10_shrink_cut(void)
{
	enum { NR_DISK = RS_DISK + 4096 };
	struct te_disk d[4];
	memset(d, 0, sizeof(d));
	char err[512] = "";
	rsc_disks_open(d, 4, "c", NR_DISK);
	struct uraid_create_opts o = rsc_opts(URAID_LEVEL_RAID10, 4, 16, 0);
	o.metadata = 10;
	struct uraid_array *a = NULL;
	if (te_create(&o, d, 4, &a) < 0) {
		CHECKF(0, "shrink cut: create failed");
		rsc_disks_close(d, 4);
		return;
	}
	struct uraid_status st;
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	uint64_t dev = st.dev_sectors;
	uint64_t fit = md10_size(dev - 16, 16, st.layout, 3);
	uint8_t *want = malloc(fit * 512), *got = malloc(fit * 512);
	uint64_t rs = 0x10c07;
	t_fill(&rs, want, fit * 512);
	CHECK(uraid_grow(a, URAID_GROW_ARRAY_SIZE, fit, err, sizeof(err)) == 0);
	CHECK(uraid_write(a, want, fit * 512, 0) == 0);
	struct uraid_reshape_opts ro = {.layout = -1, .raid_disks = 3};
	int rc = uraid_array_reshape_start(a, &ro, err, sizeof(err));
	CHECKF(rc == 0, "shrink cut: %s", err);
	CHECK(te_sync_all(a) == 0);
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECKF(rc == 0 && !st.reshape && st.raid_disks == 3 && st.dev_sectors == dev - 16,
	       "shrink cut: reshape %d, %d members of %llu sectors (was %llu)", st.reshape,
	       st.raid_disks, (unsigned long long)st.dev_sectors, (unsigned long long)dev);
	CHECK(uraid_read(a, got, fit * 512, 0) == 0 && !memcmp(got, want, fit * 512));
	CHECK(rsc_check(a) == 0);
	free(want);
	free(got);
	uraid_stop(a);
	rsc_disks_close(d, 4);
}

/* Assembled mid-reshape, md's raid10_run sizes resync_max_sectors by the
 * new geometry (conf->geo): calc_sectors and raid10_size with its chunk on
 * the fewer members. On 5 members of 17 new chunks a chunk change makes
 * that differ from the old geometry's (85 chunks of 16 are 1360 sectors,
 * 42 of 32 are 1344): 32 -> 16 (md counts to 1360 after assembly, 1344
 * before), 16 -> 32 after --array-size 1344; and a 4 -> 5 grow, where
 * they agree. Started, stepped, stopped, assembled again: the total is
 * md's formula for the assembled array at every step, in mdstat too. */
static void raid10_progress_assembled(void)
{
	static const struct {
		int n, to;
		uint32_t chunk, to_chunk;
		uint64_t size;
	} k[] = {{5, 5, 32, 16, 544}, {5, 5, 16, 32, 544}, {4, 5, 16, 0, 544}};
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct te_disk d[TE_MAX];
		memset(d, 0, sizeof(d));
		int nd = k[i].to > k[i].n ? k[i].to : k[i].n;
		rsc_disks_open(d, nd, "v", RS_DISK);
		struct uraid_create_opts o =
		    rsc_opts(URAID_LEVEL_RAID10, k[i].n, k[i].chunk, k[i].size);
		struct uraid_array *a = NULL;
		char err[512], warn[512];
		if (te_create(&o, d, k[i].n, &a) < 0) {
			CHECKF(0, "assembled progress %zu: create", i);
			rsc_disks_close(d, nd);
			continue;
		}
		for (int j = k[i].n; j < nd; j++)
			CHECK(uraid_add_member(a, te_borrow(&d[j]), err, sizeof(err)) == 0);
		struct uraid_status st;
		memset(&st, 0, sizeof(st));
		uraid_status(a, &st);
		uint64_t dev = st.dev_sectors;
		uint32_t l = st.layout, nch = k[i].to_chunk ? k[i].to_chunk : k[i].chunk;
		uint64_t old_total =
		    md10_size(md10_dev(dev, k[i].chunk, l, k[i].n), k[i].chunk, l, k[i].n);
		if (old_total % nch)
			CHECK(uraid_grow(a, URAID_GROW_ARRAY_SIZE, old_total / nch * nch, err,
			                 sizeof(err)) == 0);
		struct uraid_reshape_opts ro = {
		    .raid_disks = k[i].to, .layout = -1, .chunk_sectors = k[i].to_chunk};
		CHECKF(uraid_array_reshape_start(a, &ro, err, sizeof(err)) == 0,
		       "assembled progress %zu: %s", i, err);
		for (int s = 0; s < 2; s++)
			CHECK(uraid_sync_step(a, 64) > 0);
		memset(&st, 0, sizeof(st));
		uraid_status(a, &st);
		CHECKF(st.reshape && st.sync_total == (st.reshape == 2 ? st.sync_total : old_total),
		       "assembled progress %zu: running, total %llu (md's %llu)", i,
		       (unsigned long long)st.sync_total, (unsigned long long)old_total);
		CHECK(uraid_stop(a) == 0);
		struct member *mm[TE_MAX];
		for (int j = 0; j < nd; j++)
			mm[j] = te_borrow(&d[j]);
		a = NULL;
		int rc = uraid_assemble_members(mm, nd, URAID_NO_SYNC_THREAD, &a, err, sizeof(err),
		                                warn, sizeof(warn));
		CHECKF(rc == 0, "assembled progress %zu: assemble: %s", i, err);
		if (rc < 0) {
			rsc_disks_close(d, nd);
			continue;
		}
		int fewer = k[i].to < k[i].n ? k[i].to : k[i].n;
		uint64_t total = md10_size(md10_dev(dev, nch, l, k[i].to), nch, l, fewer);
		walk_progress(a, total, 0, "assembled progress", i);
		printf(
		    "# raid10 %d -> %d chunk %u -> %u assembled mid-reshape: md's total %llu, the "
		    "old geometry's %llu\n",
		    k[i].n, k[i].to, k[i].chunk, nch, (unsigned long long)total,
		    (unsigned long long)old_total);
		uraid_stop(a);
		rsc_disks_close(d, nd);
	}
}

TEST_MAIN(T(raid10_progress), T(raid10_progress_assembled), T(raid10_no_room), T(raid10_shrink_cut))
