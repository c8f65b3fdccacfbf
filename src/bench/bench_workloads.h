/* Shared pieces of `uraid bench engine` and `uraid bench workload`: members
 * (files in a directory, memory, simulated disks), arrays on them, a clock
 * (real or a simulated disk's model time), threaded I/O jobs against an
 * array, and result rows with their reports (bench_report.c). */
#ifndef URAID_BENCH_WORKLOADS_H
#define URAID_BENCH_WORKLOADS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "member/member.h"
#include "sim/member_sim.h"
#include "uraid.h"

#define BW_MAX_MEMBERS 32
#define BW_MAX_JOBS    16

/* Where member storage comes from: files made in a directory, memory,
 * simulated disks (memory behind the disk model), or block devices the
 * user named (checked by bw_dev_check first; see bench_devices.c). */
enum bw_kind { BW_FILES, BW_MEM, BW_SIM, BW_DEV };

struct bw_members_cfg {
	enum bw_kind kind;
	const char *dir;         /* BW_FILES: directory for member files */
	struct sim_profile prof; /* BW_SIM */
	/* BW_SIM, optional: member i's profile when profs[i] is set (arrays
	 * of mixed disks), else prof */
	const struct sim_profile *const *profs;
	double bus_mbs;    /* BW_SIM: 0 = no shared bus */
	double time_scale; /* BW_SIM: 0 = virtual time */
	char (*devs)[256]; /* BW_DEV: device paths (member i is devs[i]), checked */
	int ndevs;
};

/* A set of members for one array. Files are created (and written fully so
 * no timing pays for page allocation) and removed by bw_set_free. */
struct bw_set {
	struct bw_members_cfg cfg;
	int n;
	uint64_t bytes; /* per member */
	char paths[BW_MAX_MEMBERS][256];
	struct member *store[BW_MAX_MEMBERS]; /* BW_MEM/BW_SIM: the storage, set-owned */
	struct member *open[BW_MAX_MEMBERS];  /* opened members while an array runs */
	struct sim_bus *bus;
	struct sim_clock *clock; /* BW_SIM in virtual time: shared by all members */
	/* BW_SIM, parallel ATA profiles: member i on chan[i / channel_disks] */
	struct sim_channel *chan[BW_MAX_MEMBERS];
};

int bw_set_make(struct bw_set *s, const struct bw_members_cfg *cfg, int n, uint64_t bytes,
                char *err, size_t errlen);
/* Open member i (the caller or an array then owns it); remembers it in s->open[i]. */
int bw_member_open(struct bw_set *s, int i, struct member **out, char *err, size_t errlen);
void bw_set_free(struct bw_set *s);

/* Model ns (simulated members: the latest clock of the open members) or
 * CLOCK_MONOTONIC ns. */
uint64_t bw_now(const struct bw_set *s);

/* Create a clean array (no initial resync, caller-driven sync) on members
 * 0..n-1 of s. */
int bw_array_create(struct bw_set *s, int n, int level, uint32_t layout, bool layout_set,
                    uint32_t chunk_bytes, struct uraid_array **out, char *err, size_t errlen);

/* md's consistency policies a sweep compares: none, an internal
 * write-intent bitmap, a write journal in write-through or write-back. */
enum bw_consistency { BW_CS_NONE, BW_CS_BITMAP, BW_CS_JWT, BW_CS_JWB, BW_CS_COUNT };
/* "none", "bitmap", "journal-wt", "journal-wb" (result rows, JSON, CSV). */
const char *bw_consistency_name(enum bw_consistency cs);
struct bw_array_opts {
	uint32_t layout;
	bool layout_set;
	uint32_t chunk_bytes;
	enum bw_consistency cs;
	uint32_t bitmap_chunk;  /* BW_CS_BITMAP: 0 = mdadm's default */
	const char *journal;    /* BW_CS_JWT/JWB: the journal member (a file or device) */
	uint64_t journal_bytes; /* a missing journal file is created with this size */
};
/* bw_array_create with a consistency policy: the bitmap is added to the
 * new array (persistent: an assembly finds it); the journal is an extra
 * member (zeroed first, also so no timing pays for tmpfs page allocation)
 * and write-back is switched on after the create (md does not store the
 * mode: every assembly starts in write-through). */
int bw_array_create_opts(struct bw_set *s, int n, int level, const struct bw_array_opts *o,
                         struct uraid_array **out, char *err, size_t errlen);
/* Stop it (and forget its members in s->open). */
int bw_array_stop(struct bw_set *s, struct uraid_array *a);

/* One I/O job: `threads` threads issue `req`-byte requests to [base,
 * base+span): sequentially (each request takes the next offset, so with
 * several threads `threads` sequential requests are in flight) or at random
 * req-aligned offsets until `ops` requests are done. Writes stamp each 4 KiB
 * block with its offset; reads with `verify` check the stamps. */
struct bw_job {
	struct uraid_array *a;
	struct member *m; /* instead of `a`: straight to one member (baselines) */
	const struct bw_set *set;
	int threads;
	size_t req;
	uint64_t base, span;
	bool write, random;
	int read_pct; /* random: percentage of reads when write is false and read_pct > 0 */
	uint64_t ops; /* random: requests; sequential: 0 = span / req */
	uint64_t seed;
	bool verify;
	_Atomic uint64_t *progress; /* bytes moved so far (optional) */
	/* The reader/writer side (sequential jobs): bytes in flight per
	 * stream (read-ahead window; 0 = one request) and think time after
	 * each request. In virtual time each thread is one stream keeping
	 * window / req requests in flight; in real time window / req threads
	 * share the stream. */
	uint64_t window;
	uint64_t think_ns;
	/* results */
	_Atomic uint64_t next, done_ops, done_bytes, bad_stamps, lat_sum_ns, lat_max_ns;
	uint64_t start_ns;       /* bw_now when the threads start */
	_Atomic uint64_t end_ns; /* bw_now when its last thread finished */
	_Atomic int err;
};

/* Run the jobs at the same time (all their threads start together). Returns
 * 0 or the first negative errno. */
int bw_run(struct bw_job *jobs, int n);

/* Live progress to stderr (bench_progress.c), every interval_s seconds
 * (<= 0: none, NULL returned), a \r-updated line on a tty, else a line each:
 *   "LABEL  MB/s MB/s  MB MB done  S s"   rate since the last line (model
 *                                         time for simulated members)
 *   "LABEL  running  S s"                 bytes == NULL: steps without a count */
struct bw_progress;
struct bw_progress *bw_progress_start(const char *label, _Atomic uint64_t *bytes,
                                      const struct bw_set *set, double interval_s);
void bw_progress_stop(struct bw_progress *p);

/* One reported figure. */
struct bw_result {
	char config[48]; /* "raid5[64,ls]x5", "baseline" */
	int level, members;
	uint32_t chunk;
	char layout[8];
	int stripe_cache;          /* stripe cache entries set, -1 = not set */
	char consistency[12];      /* bw_consistency_name, "" = not a sweep dimension */
	char workload[24];         /* "seqwrite", "readers=3", "randrw-qd16", ... */
	char note[48];             /* non-empty: no figure, why ("n/a (...)") */
	double value;              /* median over repeats (0 with a note) */
	const char *unit;          /* "MB/s", "IOPS", "files/s" */
	double spread;             /* (max - min) / median over repeats */
	double lo, hi;             /* min and max over repeats (charts draw them) */
	double finish_spread;      /* readers=N: (last - first finish) / last finish */
	double lat_us;             /* mean request latency, 0 = not measured */
	double ratio;              /* value / baseline value, 0 = no baseline */
	uint64_t bytes, requested; /* moved and asked for (last repeat) */
	int repeats;
};

/* Reports (bench_report.c). Each returns 0 or a negative errno (files). */
void bw_report_table(FILE *f, const struct bw_result *r, int n);
void bw_report_chart(FILE *f, const struct bw_result *r, int n);
int bw_report_csv(const char *path, const struct bw_result *r, int n);
int bw_report_json(const char *path, const struct bw_result *r, int n);
/* Workloads of the rows in first-seen order (at most max); returns how many. */
int bw_report_workloads(const struct bw_result *r, int n, const char **out, int max);
/* SVG charts (bench_svg.c), DIR/<name>.svg: readers=N rows with two or
 * more N give one line chart "readers" (x: readers, a line per config);
 * rows of two or more repeats get their min-max as a bar (class "spread")
 * through the median (the point or the bar's end);
 * a workload whose rows have two or more member counts gives a line chart
 * (x: members, a line per config without its member count, the baseline a
 * dashed level); any other workload a bar chart (a bar per config). Rows
 * with a note get a label instead of a bar or point. Returns the count
 * written or a negative errno. */
int bw_report_svg(const char *dir, const char *title, const struct bw_result *r, int n);
/* One bar chart of published beside simulated figures, a pair of bars per
 * label (a value < 0: no figure, labelled so), into `path`. */
int bw_svg_compare(const char *path, const char *title, const char *const *label,
                   const double *published, const double *simulated, int n);

/* Filesystem workloads (bench_workloads_fs.c): "mkfs", "smallfiles",
 * "bonnie". bw_fs_run attaches the array made of member files `paths` (as
 * `uraid attach --name NAME`; a journal member among them), sets the
 * journal mode `cs` asks for and checks that the attached array has the
 * consistency policy `cs` (uraid detail, uraid examine), runs the requested
 * workloads (smallfiles `repeat` times: median and spread; mkfs and bonnie
 * once) and hands each row (config fields from `proto`) to addf. Root
 * only. */
bool bw_fs_workload(const char *wl);
int bw_fs_run(const char *const *paths, int n, const char *name, enum bw_consistency cs,
              const char *const *wls, int nwl, const struct bw_result *proto,
              int (*addf)(void *, const struct bw_result *), void *ctx, double progress_s,
              int repeat, char *err, size_t errlen);

/* The same workloads on an array open in this process (members that exist
 * only here: simulated disks), served by bench_nbd.c to nbdfuse with a
 * loop device on top, as uraid attach does. The array stays open. */
int bw_fs_run_array(struct uraid_array *a, const char *const *wls, int nwl,
                    const struct bw_result *proto, int (*addf)(void *, const struct bw_result *),
                    void *ctx, double progress_s, int repeat, char *err, size_t errlen);

/* In-process NBD server for one array (bench_nbd.c): unix socket `sock`,
 * one client at a time; stop disconnects a client still there. */
struct bw_nbd;
int bw_nbd_start(struct uraid_array *a, const char *sock, struct bw_nbd **out, char *err,
                 size_t errlen);
void bw_nbd_stop(struct bw_nbd *n);
/* One client on a connected socket, handshake to disconnect (also what the
 * fuzz target drives): requests larger than BW_NBD_MAX_REQ, or outside the
 * array, get EINVAL or end the connection; buf holds BW_NBD_MAX_REQ bytes. */
#define BW_NBD_MAX_REQ (32u << 20)
void bw_nbd_serve(struct uraid_array *a, uint8_t *buf, int fd);

/* Block devices as members (bench_devices.c). bw_dev_list: DEV,DEV,... or
 * every block device in a directory (sorted), into out[0..max). bw_dev_probe:
 * the device's size and, in `found`, every signature it holds (md
 * superblocks, partition tables, filesystems, ...; empty: nothing);
 * -EBUSY when it is in use. bw_dev_check: probes each, refuses duplicates,
 * devices in use, and (unless force) devices holding anything, naming what
 * was found; with force it warns what it will destroy. Reads only. */
int bw_dev_list(const char *arg, char (*out)[256], int max, int *n, char *err, size_t errlen);
int bw_dev_probe(const char *dev, uint64_t *size, char *found, size_t foundlen, char *err,
                 size_t errlen);
int bw_dev_check(char (*devs)[256], int n, bool force, char *err, size_t errlen);

/* Splitmix64 step. */
uint64_t bw_rand(uint64_t *state);

#endif
