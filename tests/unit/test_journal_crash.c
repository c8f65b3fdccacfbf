/* Crash harness (crash_workload.h) with md's write journal: raid4/5/6 with a
 * journal member, write-through and write-back, power cut at random member
 * requests (the journal's too), optionally a member failed before or lost
 * after the crash (raid6: two, so reads need Q). With the journal nothing
 * is excused: not even sectors of the member lost after the crash (the
 * RAID5 write hole) — they must be rebuilt from parity that agrees with the
 * data. And the same trials without a journal do lose such sectors, so the
 * test has teeth. CRASH_TRIALS (default 10 per config) / CRASH_SEED as in
 * test_engine_crash; CRASH_CONFIG + CRASH_SEED + CRASH_POINT + CRASH_MODE
 * (+ CRASH_WB=1) replay one trial. */
#include "crash_workload.h"

static const struct cw_cfg cfgs[] = {
    {"raid5_ls_4", URAID_LEVEL_RAID5, "left-symmetric", 4, 16, 12},
    {"raid5_ra_3", URAID_LEVEL_RAID5, "right-asymmetric", 3, 8, 12},
    {"raid6_ls_5", URAID_LEVEL_RAID6, "left-symmetric", 5, 16, 12},
    {"raid6_ra_4", URAID_LEVEL_RAID6, "right-asymmetric", 4, 8, 11},
    {"raid4_4", URAID_LEVEL_RAID4, NULL, 4, 16, 10},
    /* wide: small writes are read-modify-write, so a replay that left
     * parity stale would keep it stale */
    {"raid5_ls_6", URAID_LEVEL_RAID5, "left-symmetric", 6, 8, 12},
};
#define NCFG (sizeof(cfgs) / sizeof(cfgs[0]))

static void run_mode(unsigned flags, uint64_t seed_base)
{
	for (size_t i = 0; i < NCFG; i++) {
		const struct cw_cfg *c = &cfgs[i];
		const char *only = getenv("CRASH_CONFIG");
		if (only && *only && strcmp(only, c->name))
			continue;
		struct cw_totals tot = {0};
		uint64_t seed = cw_env("CRASH_SEED", seed_base + (uint64_t)i * 0x10000);
		if (getenv("CRASH_POINT")) {
			if (!!cw_env("CRASH_WB", 0) != !!(flags & CW_JOURNAL_WB))
				continue;
			cw_trial(c, seed, cw_env("CRASH_POINT", 0), (int)cw_env("CRASH_MODE", 0),
			         (int)cw_env("CRASH_WRITES", 40), flags, &tot);
			continue;
		}
		uint64_t trials = cw_env("CRASH_TRIALS", 10);
		cw_run(c, seed, trials, (int)cw_env("CRASH_WRITES", 40), flags, &tot);
		CHECK_EQ_U64(tot.data_lost, 0);
		CHECK_EQ_U64(tot.write_hole, 0);
		CHECK_EQ_U64(tot.mismatches, 0);
		CHECK(tot.crashes > 0 || trials == 0);
	}
}

static void journal_write_through(void)
{
	run_mode(CW_JOURNAL, 0x10a0000);
}

static void journal_write_back(void)
{
	run_mode(CW_JOURNAL_WB, 0x10b0000);
}

/* The write hole: a crash, then a member lost. Without a journal some
 * trials find sectors of the lost member wrong (rebuilt from parity the
 * crash left stale); with it, on the same seeds and cut points, none. */
static void write_hole_closed_by_journal(void)
{
	if (getenv("CRASH_POINT") || (getenv("CRASH_CONFIG") && *getenv("CRASH_CONFIG")))
		return;
	const struct cw_cfg *c = &cfgs[0];
	struct cw_totals plain = {0}, jr = {0};
	uint64_t rs = 0x401e;
	int trials = (int)cw_env("CRASH_HOLE_TRIALS", 30);
	for (int t = 0; t < trials; t++) {
		uint64_t seed = 0x401e0000 + (uint64_t)t;
		uint64_t point = 1 + t_rand(&rs) % 400;
		cw_trial(c, seed, point, 2, 40, 0, &plain);
		cw_trial(c, seed, point, 2, 40, CW_JOURNAL, &jr);
	}
	printf("# write hole, %s, %d trials with a member lost after the crash: "
	       "without journal %llu bad sectors, with journal %llu (data lost %llu)\n",
	       c->name, trials, (unsigned long long)plain.write_hole,
	       (unsigned long long)jr.write_hole, (unsigned long long)jr.data_lost);
	CHECKF(plain.write_hole > 0, "no trial without a journal hit the write hole");
	CHECK_EQ_U64(jr.write_hole, 0);
	CHECK_EQ_U64(jr.data_lost, 0);
}

TEST_MAIN(T(journal_write_through), T(journal_write_back), T(write_hole_closed_by_journal))
