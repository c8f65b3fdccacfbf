/* Shared state of `uraid bench` sweeps (bench_sweep.c: options, the loop
 * over configurations, reports; bench_sweep_run.c: one configuration's
 * members, array and workloads). */
#ifndef URAID_BENCH_SWEEP_H
#define URAID_BENCH_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/bench_workloads.h"

#define MAXV 32

struct sweep {
	int levels[MAXV], nlevels;
	int members[MAXV], nmembers;
	uint32_t chunks[MAXV];
	int nchunks;
	char layouts[MAXV][8];
	int nlayouts;
	int scache[MAXV], nscache; /* --stripe-cache values; none given: 0 */
	/* --bitmap / --journal: the consistency policies compared (none
	 * given: 0, each array without either, rows without the field) */
	enum bw_consistency cs[BW_CS_COUNT];
	int ncs;
	uint32_t bitmap_chunk; /* --bitmap-chunk, 0 = mdadm's default */
	const char *journal;   /* --journal DEV */
	uint64_t journal_bytes;
	char wl[MAXV][24];
	int nwl;
	char geom[MAXV][24]; /* GEOM specs (bench_geom.h), run after the md levels */
	int ngeom;
	uint64_t size, ops;
	size_t req; /* sequential request size */
	/* The reader/writer side: bytes in flight per sequential stream
	 * (--readahead; 0 = one request) and think time after each request
	 * (--think) */
	uint64_t window, think_ns;
	int repeat, warmup;
	double progress; /* seconds between progress lines, 0 = none */
	bool baseline, chart;
	const char *csv, *json, *svg;
	struct bw_members_cfg cfg;
	char cmd[1024], title[512];
	char load0[64]; /* /proc/loadavg when the sweep started */
	struct bw_result *res;
	int nres, cap;
};

#define MAX_QD 64
/* "randrw-qdN" / "randread-qdN" with N in 1..MAX_QD: N, else 0. */
int sweep_random_qd(const char *wl);

/* --bitmap, --bitmap-chunk, --journal, --journal-mode, --journal-size
 * (bench_sweep_policy.c): checks them and the journal device (nothing
 * written), fills o->cs. *journal_made: the journal file is new, the sweep
 * removes it at the end. Returns 0 or an exit status (message printed). */
int sweep_policies(struct sweep *o, bool bitmap, const char *jmode, bool *journal_made, bool force);
/* Can an array of `level` have policy cs (enum bw_consistency)? */
bool sweep_policy_fits(int level, int cs);

/* One configuration: fresh members, a clean array, every workload (with
 * repeats), filesystem workloads through uraid attach; rows go to o->res.
 * sc: stripe cache entries (raid5/6), -1 = not set. cs: consistency
 * policy, -1 = not a dimension of this sweep. */
int sweep_run_config(struct sweep *o, int level, int n, uint32_t chunk, const char *lay, int sc,
                     int cs, char *err, size_t errlen);
/* sweep_run_config once per policy of o->cs that `level` can have (once
 * with cs -1 when the sweep compares none). */
int sweep_run_policies(struct sweep *o, int level, int n, uint32_t chunk, const char *lay, int sc,
                       char *err, size_t errlen);
/* The workloads on one raw member (row config "baseline"). */
int sweep_run_baseline(struct sweep *o, char *err, size_t errlen);

#endif
