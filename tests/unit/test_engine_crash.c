/* Crash harness: random writes with known contents on every level, power cut
 * at random member requests (volatile write caches lose, tear or keep
 * unflushed writes), optionally a member failed before or lost after the
 * crash (raid6: two, so reads need Q); after restart + resync every
 * acknowledged-and-flushed sector reads back, every other sector holds one
 * of its legal states (a lost member's sectors are excused only in stripes
 * written since the last flush: the write hole), and `check` finds no
 * mismatch. CRASH_TRIALS (per level, default 30) and CRASH_SEED scale and
 * move it; CRASH_CONFIG + CRASH_SEED + CRASH_POINT + CRASH_MODE replay one
 * trial. tests/torture/run runs thousands. */
#include "crash_workload.h"

static const struct cw_cfg cfgs[] = {
    {"linear3", URAID_LEVEL_LINEAR, NULL, 3, 0, 12},
    {"raid0_3", URAID_LEVEL_RAID0, NULL, 3, 16, 12},
    {"raid1_2", URAID_LEVEL_RAID1, NULL, 2, 0, 12},
    {"raid1_3_v090", URAID_LEVEL_RAID1, NULL, 3, 0, 0},
    {"raid10_n2_4", URAID_LEVEL_RAID10, "n2", 4, 16, 12},
    {"raid10_f2_3", URAID_LEVEL_RAID10, "f2", 3, 16, 12},
    {"raid4_4", URAID_LEVEL_RAID4, NULL, 4, 16, 12},
    {"raid5_ls_4", URAID_LEVEL_RAID5, "left-symmetric", 4, 16, 12},
    {"raid5_ra_3", URAID_LEVEL_RAID5, "right-asymmetric", 3, 8, 10},
    {"raid5_ls_6", URAID_LEVEL_RAID5, "left-symmetric", 6, 8, 12},
    {"raid6_ls_5", URAID_LEVEL_RAID6, "left-symmetric", 5, 16, 12},
    {"raid6_ra_4", URAID_LEVEL_RAID6, "right-asymmetric", 4, 8, 11},
    /* bitmap placements beyond 1.1/1.2 (with_bitmap only) */
    {"raid5_ls_4_v10", URAID_LEVEL_RAID5, "left-symmetric", 4, 16, 10},
    {"raid6_ls_5_v090", URAID_LEVEL_RAID6, "left-symmetric", 5, 16, 0},
    {"raid10_o2_3_v10", URAID_LEVEL_RAID10, "o2", 3, 16, 10},
};

static void run_cfg(int i)
{
	const struct cw_cfg *c = &cfgs[i];
	const char *only = getenv("CRASH_CONFIG");
	if (only && *only && strcmp(only, c->name))
		return;
	struct cw_totals tot = {0};
	uint64_t seed = cw_env("CRASH_SEED", 0x5eed0000ULL + (uint64_t)i * 0x10000);
	if (getenv("CRASH_POINT")) {
		cw_trial(c, seed, cw_env("CRASH_POINT", 0), (int)cw_env("CRASH_MODE", 0),
		         (int)cw_env("CRASH_WRITES", 40),
		         (cw_env("CRASH_BITMAP", 0) ? CW_BITMAP : 0) |
		             (cw_env("CRASH_CACHE", 0) ? CW_CACHE : 0),
		         &tot);
		return;
	}
	cw_run(c, seed, cw_env("CRASH_TRIALS", 30), (int)cw_env("CRASH_WRITES", 40), 0, &tot);
	CHECK_EQ_U64(tot.data_lost, 0);
	CHECK_EQ_U64(tot.mismatches, 0);
	/* The run must really have cut the power inside the workload. */
	CHECK(tot.crashes > 0 || cw_env("CRASH_TRIALS", 30) == 0);
}

/* With an internal bitmap: same guarantees, and the resync after a crash
 * skips the chunks the bitmap says are clean. raid1/4/5/6/10 with every
 * metadata version (0.90: bitmap after the superblock at the end, 1.0:
 * below it, 1.1/1.2: after it at the start); raid10 near, far and offset. */
static void with_bitmap(void)
{
	static const int which[] = {2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14};
	for (size_t i = 0; i < sizeof(which) / sizeof(which[0]); i++) {
		const struct cw_cfg *c = &cfgs[which[i]];
		const char *only = getenv("CRASH_CONFIG");
		if (only && *only && strcmp(only, c->name))
			continue;
		struct cw_totals tot = {0};
		uint64_t seed = cw_env("CRASH_SEED", 0xb17e0000ULL + (uint64_t)i * 0x10000);
		uint64_t trials = cw_env("CRASH_TRIALS", 30);
		cw_run(c, seed, trials, (int)cw_env("CRASH_WRITES", 40), CW_BITMAP, &tot);
		CHECK_EQ_U64(tot.data_lost, 0);
		CHECK_EQ_U64(tot.mismatches, 0);
		CHECKF(trials == 0 || tot.resync_skipped > 0,
		       "%s: the bitmap never narrowed a resync", c->name);
	}
}

/* With a stripe cache (8 heads, so write-outs by eviction, RMW and RCW,
 * happen mid-run and the power cut lands inside them): unflushed writes
 * may be lost like any volatile cache's, which the legal states allow;
 * flushed data and parity must hold. */
static void with_stripe_cache(void)
{
	static const int which[] = {6, 7, 8, 9, 10, 11};
	for (size_t i = 0; i < sizeof(which) / sizeof(which[0]); i++) {
		const struct cw_cfg *c = &cfgs[which[i]];
		const char *only = getenv("CRASH_CONFIG");
		if (only && *only && strcmp(only, c->name))
			continue;
		struct cw_totals tot = {0};
		uint64_t seed = cw_env("CRASH_SEED", 0x5ca0000ULL + (uint64_t)i * 0x10000);
		cw_run(c, seed, cw_env("CRASH_TRIALS", 30), (int)cw_env("CRASH_WRITES", 40),
		       CW_CACHE, &tot);
		CHECK_EQ_U64(tot.data_lost, 0);
		CHECK_EQ_U64(tot.mismatches, 0);
		CHECK(tot.crashes > 0 || cw_env("CRASH_TRIALS", 30) == 0);
	}
}

/* Discards and write-zeroes in the mix (a quarter of the requests, up to
 * 256 sectors: whole stripes zeroed on every member, pieces written), alone
 * and with a bitmap or a stripe cache: zeros are one more legal state of
 * the sectors they cover, nothing flushed is lost, check stays clean. A
 * third of the trials of the other cases: kept fast. */
static void with_discards(void)
{
	static const struct {
		int cfg;
		unsigned flags;
	} which[] = {{1, 0}, {2, 0},  {5, 0},         {6, 0},
	             {7, 0}, {11, 0}, {7, CW_BITMAP}, {10, CW_CACHE}};
	for (size_t i = 0; i < sizeof(which) / sizeof(which[0]); i++) {
		const struct cw_cfg *c = &cfgs[which[i].cfg];
		const char *only = getenv("CRASH_CONFIG");
		if (only && *only && strcmp(only, c->name))
			continue;
		struct cw_totals tot = {0};
		uint64_t seed = cw_env("CRASH_SEED", 0xd15c0000ULL + (uint64_t)i * 0x10000);
		uint64_t trials = cw_env("CRASH_TRIALS", 30) / 3;
		cw_run(c, seed, trials, (int)cw_env("CRASH_WRITES", 40),
		       CW_DISCARD | which[i].flags, &tot);
		CHECK_EQ_U64(tot.data_lost, 0);
		CHECK_EQ_U64(tot.mismatches, 0);
		CHECK(tot.crashes > 0 || trials == 0);
	}
}

/* The harness must notice lost data: on disks that ignore flushes, data
 * acknowledged as flushed is lost at a crash, and the checks say so. */
static void lying_disks_are_caught(void)
{
	static const int which[] = {2, 7};
	for (int i = 0; i < 2; i++) {
		struct cw_totals tot = {0};
		int saved = t_failures;
		uint64_t rs = 0x11e5 + (uint64_t)i;
		for (int t = 0; t < 20; t++)
			cw_trial(&cfgs[which[i]], 0x1a00 + (uint64_t)t, 0,
			         (int)(t_rand(&rs) % 2 * 2), 40, CW_LYING, &tot);
		int flagged = t_failures - saved;
		t_failures = saved;
		CHECKF(flagged > 0 && tot.data_lost > 0, "%s: lying disks went unnoticed",
		       cfgs[which[i]].name);
		printf("# lying disks, %s: %d failed checks, %llu sectors lost\n",
		       cfgs[which[i]].name, flagged, (unsigned long long)tot.data_lost);
	}
}

#define CFG(n, i)           \
	static void n(void) \
	{                   \
		run_cfg(i); \
	}
CFG(linear3, 0)
CFG(raid0_3, 1)
CFG(raid1_2, 2)
CFG(raid1_3_v090, 3)
CFG(raid10_n2_4, 4)
CFG(raid10_f2_3, 5)
CFG(raid4_4, 6)
CFG(raid5_ls_4, 7)
CFG(raid5_ra_3, 8)
CFG(raid5_ls_6, 9)
CFG(raid6_ls_5, 10)
CFG(raid6_ra_4, 11)

TEST_MAIN(T(linear3), T(raid0_3), T(raid1_2), T(raid1_3_v090), T(raid10_n2_4), T(raid10_f2_3),
          T(raid4_4), T(raid5_ls_4), T(raid5_ra_3), T(raid5_ls_6), T(raid6_ls_5), T(raid6_ra_4),
          T(with_bitmap), T(with_stripe_cache), T(with_discards), T(lying_disks_are_caught))
