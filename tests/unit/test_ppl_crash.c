/* Crash harness (crash_workload.h) with md's partial parity log: raid5 in
 * several layouts and metadata versions with the PPL policy, power cut at
 * random member requests (the logs' writes included, torn and reordered as
 * the crash model does), optionally a member failed before or lost after
 * the crash. With the log the write hole is closed: sectors of a member
 * lost after the crash (or failed before) must come back right, the
 * recovery having made their parity agree with the data, without a resync
 * — all but those the writes in flight at the crash covered on the
 * missing member itself, which md documents PPL does not protect
 * ("arbitrary data in the written part of a stripe if that disk is lost";
 * counted apart). And the
 * same trials without the log do lose such sectors, so the test has teeth.
 * CRASH_TRIALS (default 10 per config) / CRASH_SEED as in test_engine_crash;
 * CRASH_CONFIG + CRASH_SEED + CRASH_POINT + CRASH_MODE replay one trial. */
#include "crash_workload.h"

static const struct cw_cfg cfgs[] = {
    {"raid5_ls_4", URAID_LEVEL_RAID5, "left-symmetric", 4, 16, 12},
    {"raid5_ra_3", URAID_LEVEL_RAID5, "right-asymmetric", 3, 8, 11},
    {"raid5_la_5", URAID_LEVEL_RAID5, "left-asymmetric", 5, 16, 10},
    /* wide: small writes are read-modify-write */
    {"raid5_ls_6", URAID_LEVEL_RAID5, "left-symmetric", 6, 8, 12},
};
#define NCFG (sizeof(cfgs) / sizeof(cfgs[0]))

static void ppl_trials(void)
{
	for (size_t i = 0; i < NCFG; i++) {
		const struct cw_cfg *c = &cfgs[i];
		const char *only = getenv("CRASH_CONFIG");
		if (only && *only && strcmp(only, c->name))
			continue;
		struct cw_totals tot = {0};
		uint64_t seed = cw_env("CRASH_SEED", 0x11a0000 + (uint64_t)i * 0x10000);
		if (getenv("CRASH_POINT")) {
			cw_trial(c, seed, cw_env("CRASH_POINT", 0), (int)cw_env("CRASH_MODE", 0),
			         (int)cw_env("CRASH_WRITES", 40), CW_PPL, &tot);
			continue;
		}
		uint64_t trials = cw_env("CRASH_TRIALS", 10);
		cw_run(c, seed, trials, (int)cw_env("CRASH_WRITES", 40), CW_PPL, &tot);
		printf("# %s +ppl: %llu stripe entries recovered, %llu sectors of a missing member "
		       "written in flight\n",
		       c->name, (unsigned long long)tot.ppl_recovered,
		       (unsigned long long)tot.ppl_written_lost);
		CHECK_EQ_U64(tot.data_lost, 0);
		CHECK_EQ_U64(tot.write_hole, 0);
		CHECK_EQ_U64(tot.mismatches, 0);
		CHECK(tot.crashes > 0 || trials == 0);
	}
}

/* The write hole: a crash, then a member lost. Without the log some trials
 * find sectors of the lost member wrong (rebuilt from parity the crash
 * left stale); with it, on the same seeds and cut points, none. */
static void write_hole_closed_by_ppl(void)
{
	if (getenv("CRASH_POINT") || (getenv("CRASH_CONFIG") && *getenv("CRASH_CONFIG")))
		return;
	const struct cw_cfg *c = &cfgs[0];
	struct cw_totals plain = {0}, ppl = {0};
	uint64_t rs = 0x501e;
	int trials = (int)cw_env("CRASH_HOLE_TRIALS", 30);
	for (int t = 0; t < trials; t++) {
		uint64_t seed = 0x501e0000 + (uint64_t)t;
		uint64_t point = 1 + t_rand(&rs) % 400;
		cw_trial(c, seed, point, 2, 40, 0, &plain);
		cw_trial(c, seed, point, 2, 40, CW_PPL, &ppl);
	}
	printf("# write hole, %s, %d trials with a member lost after the crash: "
	       "without PPL %llu bad sectors, with PPL %llu (data lost %llu, %llu entries "
	       "recovered, %llu sectors of the lost member written in flight)\n",
	       c->name, trials, (unsigned long long)plain.write_hole,
	       (unsigned long long)ppl.write_hole, (unsigned long long)ppl.data_lost,
	       (unsigned long long)ppl.ppl_recovered, (unsigned long long)ppl.ppl_written_lost);
	CHECKF(plain.write_hole > 0, "no trial without the log hit the write hole");
	CHECK_EQ_U64(ppl.write_hole, 0);
	CHECK_EQ_U64(ppl.data_lost, 0);
}

TEST_MAIN(T(ppl_trials), T(write_hole_closed_by_ppl))
