/* uraid bench engine: what bench_engine.c (levels against the raw members)
 * and bench_engine_policy.c (the cost of a write journal or a bitmap) share. */
#ifndef URAID_BENCH_ENGINE_INT_H
#define URAID_BENCH_ENGINE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench/bench_workloads.h"

struct eng_opts {
	const char *dir;
	int members;
	uint64_t member_bytes;
	uint32_t chunk;
	int qd;
	uint64_t rand_ops;
	bool json;
	int levels[8], nlevels;
	const char *journal; /* --journal DEV: compare no journal / write-through / write-back */
	int journal_modes;   /* bit 0 none, 1 write-through, 2 write-back */
	uint64_t journal_bytes;
	bool rand_ops_set;
	const char *sim;       /* --sim PROFILE: modelled members (journal stays a file) */
	double time_scale;     /* --time-scale N: N times faster than the model */
	bool bitmap;           /* --bitmap: with vs without an internal bitmap */
	uint32_t bitmap_chunk; /* --bitmap-chunk, 0 = mdadm's default */
	bool nbd;              /* --nbd: raid5 on NBD members vs local files */
};

/* One result line: the figure and its ratio to the reference it is set against. */
struct row {
	int level;
	const char *workload;
	double value;
	const char *unit;
	double ratio;
	double ceiling; /* rebuild on members in memory: beng_rebuild_ceiling, 0 = none */
};

/* 1 MiB requests, o->qd in flight, over `span` bytes (writes end with a
 * flush); MB/s into *mbs, reads checked. */
int beng_seq_job(struct bw_set *s, struct uraid_array *a, const struct eng_opts *o, bool write,
                 uint64_t span, double *mbs, char *err, size_t errlen);
/* 4 KiB random writes, o->qd in flight, o->rand_ops of them: IOPS until
 * the last was acknowledged (acked), and until a flush after them completed
 * (flushed, which also runs the flush); either may be NULL. */
int beng_rand_job(struct bw_set *s, struct uraid_array *a, const struct eng_opts *o, uint64_t span,
                  double *acked, double *flushed, char *err, size_t errlen);
/* --journal: 4 KiB random writes without / with md's write journal; prints
 * its own table. Returns the exit code. */
int beng_journal_compare(struct bw_set *s, const struct eng_opts *o, const char *cmd);
/* --bitmap: passes with and without the bitmap each (ABBA order). */
#define BM_PAIRS 7
/* --bitmap: the same array without and with an internal bitmap, seqwrite
 * and 4 KiB random writes, rows appended to rows[*nrows]. */
int beng_bitmap_run(struct bw_set *s, const struct eng_opts *o, int level, struct row *rows,
                    int *nrows, double *without, double *median, char *err, size_t errlen);

/* --nbd (bench_engine_policy.c): raid5 seqwrite and 4 KiB random writes on
 * nbdkit memory servers vs local files, one table. Returns the exit code. */
int beng_nbd_compare(const struct eng_opts *o, const char *cmd);

/* The rebuild ceiling (bench_engine_ceiling.c): members 0..nsrc-1 read,
 * XORed and written to the spare (member o->members) by two threads with
 * no engine; MB/s into *mbs, best of two passes. Overwrites the spare.
 * Members not in memory (member in_memory): nothing is run, *mbs = 0. */
int beng_rebuild_ceiling(struct bw_set *s, const struct eng_opts *o, int nsrc, double *mbs,
                         char *err, size_t errlen);

/* The transport ceiling (bench_engine_transport.c): the set's members alone,
 * no RAID, through the member layer: [0] 4 KiB reads, [1] 4 KiB writes (o->qd
 * threads, two requests in flight each, on two members), [2] stripes (o->qd
 * threads, one o->chunk write to every member at once each); requests/s, MB/s and CPU ns per
 * request: the client's (the whole bench process's, over the run) and the servers' (the processes
 * srv[0..nsrv), their threads' time on a CPU; 0 without). */
struct beng_transport {
	double rps[3], mbs[3], cpu_ns[3], srv_ns[3];
};
int beng_transport_ceiling(struct bw_set *s, const struct eng_opts *o, const pid_t *srv, int nsrv,
                           struct beng_transport *tc, char *err, size_t errlen);

#endif
