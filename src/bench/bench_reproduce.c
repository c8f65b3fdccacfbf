/* uraid bench reproduce FILE: a published measurement (src/sim/
 * sim_published.h) run again on simulated disks: every configuration the
 * file has figures for or names without them, on the profiles of its disks,
 * with its tunables (read-ahead, stripe cache, queue depth, chunk) and its
 * workload (concurrent sequential streams, or sequential writes), in virtual
 * time; published beside simulated with the ratio per cell, a JSON row per
 * cell, an SVG of both. No figure of the file goes into the model: the
 * profiles are calibrated on single-disk rows once (sim_profiles.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/bench.h"
#include "bench/bench_geom.h"
#include "bench/bench_sweep.h"
#include "cli/cli.h"
#include "layout/layout.h"
#include "sim/sim_published.h"
#include "util/errmsg.h"

#define MAX_CELLS (SP_MAX_ROWS * 2 * SP_MAX_COLS)

struct cell {
	char config[SP_NAME_MAX];
	int streams;
	double published; /* < 0: none */
	double simulated; /* < 0: did not run */
};

struct repro {
	struct sp_table t;
	struct cell cells[MAX_CELLS];
	int ncells;
	uint64_t size;
	char why[256]; /* the last configuration that could not run */
};

static int add_cell(struct repro *R, const char *config, int streams, double published)
{
	if (R->ncells >= MAX_CELLS)
		return -ENOSPC;
	struct cell *c = &R->cells[R->ncells++];
	snprintf(c->config, sizeof(c->config), "%s", config);
	c->streams = streams;
	c->published = published;
	c->simulated = -1;
	return 0;
}

/* What a configuration name says: level, members' profiles, GEOM spec or
 * md chunk and layout. Returns 0, or -EINVAL (why in R->why). */
struct plan {
	int level; /* md level, URAID_LEVEL_GMIRROR/GRAID3, or -2 = one raw disk */
	int n;
	const char *prof[BW_MAX_MEMBERS];
	char spec[24]; /* GEOM spec, or md layout */
	uint32_t chunk;
};

static int plan_of(struct repro *R, const char *name, struct plan *p)
{
	const struct sp_table *t = &R->t;
	memset(p, 0, sizeof(*p));
	p->chunk = t->chunk ? t->chunk : 64u << 10;
	int n = sp_config_disks(t, name, p->prof, BW_MAX_MEMBERS);
	const char *br = strchr(name, '[');
	if (n > 0) {
		p->n = n;
		if (!strncmp(name, "Baseline", 8) && n == 1) {
			p->level = -2;
		} else if (strstr(name, "graid3")) {
			p->level = URAID_LEVEL_GRAID3;
			size_t l = strlen(name);
			snprintf(p->spec, sizeof(p->spec), "%s",
			         l > 3 && !strcmp(name + l - 3, " -r") ? "raid3-r" : "raid3");
		} else if (strstr(name, "gmirror")) {
			p->level = URAID_LEVEL_GMIRROR;
			const char *sp = strstr(name, "split");
			long kib = sp ? strtol(sp + 5, NULL, 10) : 0;
			if (sp && kib > 0 && kib <= 65536)
				snprintf(p->spec, sizeof(p->spec), "mirror:split/%dk", (int)kib);
			else
				snprintf(p->spec, sizeof(p->spec), "mirror:%s",
				         sp                            ? "split"
				         : strstr(name, "round-robin") ? "round-robin"
				         : strstr(name, "prefer")      ? "prefer"
				                                       : "load");
		} else {
			snprintf(R->why, sizeof(R->why), "%s: no level in the name", name);
			return -EINVAL;
		}
		return 0;
	}
	if (br && t->level >= 0 && t->ndisks == 1) {
		/* "2.4.18 [32,0,e]": [chunk KiB, md algorithm, ...] on all the disks */
		char *e;
		long ck = strtol(br + 1, &e, 10);
		long alg = *e == ',' ? strtol(e + 1, NULL, 10) : 2;
		static const char *const algs[] = {"la", "ra", "ls", "rs"};
		if (ck < 4 || ck > 65536 || alg < 0 || alg > 3) {
			snprintf(R->why, sizeof(R->why), "%s: chunk or algorithm out of range",
			         name);
			return -EINVAL;
		}
		p->level = t->level;
		p->chunk = (uint32_t)ck * 1024;
		snprintf(p->spec, sizeof(p->spec), "%s", algs[alg]);
		p->n = t->disks[0].count > BW_MAX_MEMBERS ? BW_MAX_MEMBERS : t->disks[0].count;
		for (int i = 0; i < p->n; i++)
			p->prof[i] = t->disks[0].profile;
		return 0;
	}
	snprintf(R->why, sizeof(R->why), "%s: no disks (NxLABEL) or [chunk,algorithm] in the name",
	         name);
	return -EINVAL;
}

/* Run one configuration's workloads; fills the cells [first, first + k). */
static int run_plan(struct repro *R, const struct plan *p, int first, int k, const char **wl,
                    char *err, size_t errlen)
{
	static struct sweep o;
	static struct sim_profile prof[BW_MAX_MEMBERS];
	static const struct sim_profile *profs[BW_MAX_MEMBERS];
	const struct sp_table *t = &R->t;
	memset(&o, 0, sizeof(o));
	for (int i = 0; i < p->n; i++) {
		const struct sim_profile *b = sim_profile_find(p->prof[i]);
		if (!b)
			return errmsg(err, errlen, -EINVAL, "no profile %s", p->prof[i]);
		prof[i] = *b;
		if (t->queue_depth)
			prof[i].queue_depth = (unsigned)t->queue_depth;
		profs[i] = &prof[i];
	}
	o.cfg.kind = BW_SIM;
	o.cfg.prof = prof[0];
	o.cfg.profs = profs;
	o.cfg.bus_mbs = t->bus_mbs;
	o.cfg.time_scale = 0;
	o.req = t->freebsd ? 128u << 10 : 512u << 10; /* MAXPHYS; max_sectors_kb */
	o.window = t->readahead;
	o.size = R->size;
	if (o.size < 8 * o.window)
		o.size = 8 * o.window;
	o.ops = 4000;
	o.repeat = 1;
	o.nwl = k;
	for (int i = 0; i < k; i++)
		snprintf(o.wl[i], sizeof(o.wl[i]), "%s", wl[i]);
	/* md's stripe cache: the file's stripe_cache_size, else md's default
	 * (256). Reads of a healthy md array within a chunk bypass it
	 * (chunk-aligned reads), so read-only workloads run without one, as
	 * the published runs read data written long before. */
	bool reads = true;
	for (int i = 0; i < k; i++)
		reads &= strncmp(wl[i], "readers", 7) == 0 || strcmp(wl[i], "seqread") == 0;
	int sc = t->stripe_cache >= 0 ? t->stripe_cache : 256;
	if (reads || !(p->level == 5 || p->level == 6))
		sc = -1;
	int r;
	if (p->level == -2)
		r = sweep_run_baseline(&o, err, errlen);
	else if (p->level == URAID_LEVEL_GMIRROR || p->level == URAID_LEVEL_GRAID3)
		r = sweep_run_config(&o, p->level, p->n, p->chunk, p->spec, -1, -1, err, errlen);
	else
		r = sweep_run_config(&o, p->level, p->n, p->chunk, p->spec, sc, -1, err, errlen);
	for (int i = 0; r == 0 && i < o.nres; i++)
		for (int c = 0; c < k; c++)
			if (!strcmp(o.res[i].workload, wl[c]) && !o.res[i].note[0])
				R->cells[first + c].simulated = o.res[i].value;
	free(o.res);
	return r;
}

static const char *stream_wl(int streams, bool write, char *buf, size_t len)
{
	if (write)
		return "seqwrite";
	snprintf(buf, len, "readers=%d", streams);
	return buf;
}

/* Cells for one configuration (figures from `row`, or none), run. */
static int config_cells(struct repro *R, const char *name, const struct sp_row *row, char *err,
                        size_t errlen)
{
	const struct sp_table *t = &R->t;
	int first = R->ncells, k = 0;
	char names[SP_MAX_COLS + 64][16];
	const char *wl[SP_MAX_COLS + 64];
	if (t->ncols) {
		for (int c = 0; c < t->ncols; c++) {
			int s = t->streams[c];
			wl[k] = t->col[c] == SP_COL_SEQWRITE  ? "seqwrite"
			        : t->col[c] == SP_COL_SEQREAD ? "seqread"
			                                      : stream_wl(s, false, names[k], 16);
			if (add_cell(R, name, s, row ? row->v[c] : -1) < 0)
				return errmsg(err, errlen, -ENOSPC, "too many cells");
			k++;
		}
	} else {
		int a = t->smin ? t->smin : 1, b = t->smin ? t->smax : 1;
		for (int s = a; s <= b && k < SP_MAX_COLS; s++, k++) {
			wl[k] = stream_wl(s, t->write, names[k], 16);
			if (add_cell(R, name, s, -1) < 0)
				return errmsg(err, errlen, -ENOSPC, "too many cells");
		}
	}
	struct plan p;
	if (plan_of(R, name, &p) < 0) {
		fprintf(stderr, "uraid: bench: reproduce: note: %s, not run\n", R->why);
		return 0;
	}
	return run_plan(R, &p, first, k, wl, err, errlen);
}

/* One sequential writer per disk on n raw disks sharing the bus (the
 * post's parallel dd per disk); returns the aggregate MB/s or < 0. */
static double raw_writers(const struct repro *R, int n, char *err, size_t errlen)
{
	const struct sp_table *t = &R->t;
	struct bw_members_cfg cfg = {.kind = BW_SIM, .bus_mbs = t->bus_mbs};
	const struct sim_profile *b = sim_profile_find(t->disks[0].profile);
	if (!b)
		return errmsg(err, errlen, -EINVAL, "no profile %s", t->disks[0].profile);
	cfg.prof = *b;
	if (t->queue_depth)
		cfg.prof.queue_depth = (unsigned)t->queue_depth;
	const uint64_t each = 32u << 20;
	struct bw_set s;
	int r = bw_set_make(&s, &cfg, n, each, err, errlen);
	if (r < 0)
		return r;
	struct bw_job j[BW_MAX_MEMBERS];
	struct member *m[BW_MAX_MEMBERS] = {NULL};
	int opened = 0;
	for (int i = 0; r == 0 && i < n; i++, opened++)
		r = bw_member_open(&s, i, &m[i], err, errlen);
	for (int i = 0; r == 0 && i < n; i++) {
		memset(&j[i], 0, sizeof(j[i]));
		j[i] = (struct bw_job){.m = m[i],
		                       .set = &s,
		                       .threads = 1,
		                       .req = 1u << 20,
		                       .span = each,
		                       .write = true,
		                       .seed = 1};
	}
	uint64_t t0 = r == 0 ? bw_now(&s) : 0, bytes = 0, last = 0;
	if (r == 0 && (r = bw_run(j, n)) < 0)
		errmsg(err, errlen, r, "raw writers on %d disks failed", n);
	for (int i = 0; r == 0 && i < n; i++) {
		bytes += atomic_load(&j[i].done_bytes);
		uint64_t e = atomic_load(&j[i].end_ns);
		last = e > last ? e : last;
	}
	for (int i = 0; i < opened; i++)
		if (m[i])
			member_close(m[i]);
	memset(s.open, 0, sizeof(s.open));
	bw_set_free(&s);
	if (r < 0)
		return r;
	return last > t0 ? (double)bytes / 1e6 / ((double)(last - t0) / 1e9) : 0;
}

/* A file with an md level and member counts but no table (the raptors):
 * with a shared bus, "dd writer per disk xN" (N raw disks written at once,
 * one stream each: the aggregate), then "raidL xN read" / "write" for each
 * member count, sequential, one stream. */
static int member_sweep(struct repro *R, char *err, size_t errlen)
{
	const struct sp_table *t = &R->t;
	static const char *const lay[] = {"ls"};
	for (int n = 1; t->bus_mbs > 0 && n <= t->nmax && n <= BW_MAX_MEMBERS; n++) {
		char name[SP_NAME_MAX];
		snprintf(name, sizeof(name), "dd writer per disk x%d", n);
		if (add_cell(R, name, n, -1) < 0)
			return errmsg(err, errlen, -ENOSPC, "too many cells");
		double v = raw_writers(R, n, err, errlen);
		if (v < 0)
			return (int)v;
		R->cells[R->ncells - 1].simulated = v;
	}
	for (int n = t->nmin; n <= t->nmax && n <= BW_MAX_MEMBERS; n++) {
		for (int w = 0; w < 2; w++) {
			char name[SP_NAME_MAX];
			snprintf(name, sizeof(name), "raid%d x%d %s", t->level, n,
			         w ? "write" : "read");
			int first = R->ncells;
			if (add_cell(R, name, 1, -1) < 0)
				return errmsg(err, errlen, -ENOSPC, "too many cells");
			struct plan p = {.level = t->level, .n = n, .chunk = t->chunk};
			snprintf(p.spec, sizeof(p.spec), "%s", lay[0]);
			for (int i = 0; i < n; i++)
				p.prof[i] = t->disks[0].profile;
			const char *wl[1] = {w ? "seqwrite" : "seqread"};
			int r = run_plan(R, &p, first, 1, wl, err, errlen);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int write_json(const char *path, const struct repro *R)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "[\n");
	for (int i = 0; i < R->ncells; i++) {
		const struct cell *c = &R->cells[i];
		fprintf(f, "  {\"config\": \"");
		for (const char *s = c->config; *s; s++) {
			if (*s == '"' || *s == '\\')
				fputc('\\', f);
			if ((unsigned char)*s >= 0x20)
				fputc(*s, f);
		}
		fprintf(f, "\", \"streams\": %d, \"published\": ", c->streams);
		if (c->published >= 0)
			fprintf(f, "%.6g", c->published);
		else
			fprintf(f, "null");
		fprintf(f, ", \"simulated\": ");
		if (c->simulated >= 0)
			fprintf(f, "%.6g}", c->simulated);
		else
			fprintf(f, "null}");
		fprintf(f, "%s\n", i + 1 < R->ncells ? "," : "");
	}
	fprintf(f, "]\n");
	return fclose(f) ? -errno : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: uraid bench reproduce FILE [--json F] [--svg DIR] [--size S]\n"
	           "  FILE: a published measurement in the form of shared/reference/published/\n"
	           "  (hardware, tunables, workload, figures). Runs every configuration it has\n"
	           "  figures for or names without them on the simulated disks its hardware\n"
	           "  names (virtual time), and prints published beside simulated with the\n"
	           "  ratio. --json F: one row per cell {config, streams, published (null: none),\n"
	           "  simulated}. --svg DIR: DIR/reproduce.svg, both as bars. --size S: bytes\n"
	           "  each workload moves (default 64M; at least 8 read-ahead windows).\n");
}

int bench_reproduce(int argc, char **argv)
{
	static struct repro R;
	memset(&R, 0, sizeof(R));
	R.size = 64u << 20;
	const char *json = NULL, *svg = NULL;
	static const struct option lo[] = {
	    {"json", 1, 0, 'J'}, {"svg", 1, 0, 'V'}, {"size", 1, 0, 's'},
	    {"help", 0, 0, 'h'}, {0, 0, 0, 0},
	};
	int c;
	unsigned long long v;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'J': json = optarg; break;
		case 'V': svg = optarg; break;
		case 's':
			if (cli_parse_size(optarg, 1, &v) < 0 || v < (4u << 20) || v % (1u << 20) ||
			    v > (8ull << 30))
				return cli_error("bench", "--size %s: whole MiB, 4M..8G", optarg);
			R.size = v;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return cli_error("bench", "reproduce: one FILE expected");
	}
	const char *path = argv[optind];
	FILE *f = fopen(path, "r");
	if (!f)
		return cli_error("bench", "reproduce: %s: %s", path, strerror(errno));
	enum { MAX = 1 << 20 };
	char *text = malloc(MAX + 1);
	size_t n = text ? fread(text, 1, MAX + 1, f) : 0;
	fclose(f);
	if (!text)
		return cli_error("bench", "out of memory");
	char err[512] = "";
	int r = n > MAX ? errmsg(err, sizeof(err), -EFBIG, "larger than 1 MiB")
	                : sp_parse(text, n, &R.t, err, sizeof(err));
	free(text);
	if (r < 0)
		return cli_error("bench", "reproduce: %s: %s", path, err);
	if (!R.t.ndisks)
		return cli_error(
		    "bench", "reproduce: %s: names no disk the simulator has a profile for", path);
	bool sweep = !R.t.nrows && !R.t.nwithheld && R.t.level >= 0 && R.t.nmin > 0;
	if (!R.t.nrows && !R.t.nwithheld && !sweep)
		return cli_error(
		    "bench",
		    "reproduce: %s: no table of MB/s figures (by streams, or sequential "
		    "write or read) and no configurations the simulator runs",
		    path);
	if (svg && mkdir(svg, 0777) < 0 && errno != EEXIST)
		return cli_error("bench", "--svg %s: %s", svg, strerror(errno));
	for (int i = 0; r == 0 && i < R.t.nrows; i++)
		r = config_cells(&R, R.t.rows[i].name, &R.t.rows[i], err, sizeof(err));
	for (int i = 0; r == 0 && i < R.t.nwithheld; i++)
		r = config_cells(&R, R.t.withheld[i], NULL, err, sizeof(err));
	if (r == 0 && sweep)
		r = member_sweep(&R, err, sizeof(err));
	if (r < 0)
		return cli_error("bench", "reproduce: %s", err);
	printf("# uraid bench reproduce %s\n# %s\n", path, R.t.title);
	char sc[24] = "256 (md's default)", bus[24] = "none";
	if (R.t.stripe_cache >= 0)
		snprintf(sc, sizeof(sc), "%d", R.t.stripe_cache);
	if (R.t.bus_mbs > 0)
		snprintf(bus, sizeof(bus), "%.0f MB/s", R.t.bus_mbs);
	printf("# simulated in virtual time: read-ahead %llu KiB per stream, requests %u KiB, "
	       "queue depth %s, stripe cache %s for writes and none for reads, bus %s\n",
	       (unsigned long long)(R.t.readahead >> 10), R.t.freebsd ? 128u : 512u,
	       R.t.queue_depth ? "1" : "the profile's", sc, bus);
	printf("%-44s %7s %10s %10s %7s\n", "config", "streams", "published", "simulated", "ratio");
	for (int i = 0; i < R.ncells; i++) {
		const struct cell *ce = &R.cells[i];
		char pb[16] = "-", sb[16] = "-", rb[16] = "-";
		if (ce->published >= 0)
			snprintf(pb, sizeof(pb), "%.1f", ce->published);
		if (ce->simulated >= 0)
			snprintf(sb, sizeof(sb), "%.1f", ce->simulated);
		if (ce->published > 0 && ce->simulated >= 0)
			snprintf(rb, sizeof(rb), "%.2f", ce->simulated / ce->published);
		printf("%-44s %7d %10s %10s %7s\n", ce->config, ce->streams, pb, sb, rb);
	}
	int rc = 0;
	if (json && (r = write_json(json, &R)) < 0)
		rc = cli_error("bench", "--json %s: %s", json, strerror(-r));
	if (svg) {
		static char labels[MAX_CELLS][SP_NAME_MAX + 16];
		static const char *lp[MAX_CELLS];
		static double pub[MAX_CELLS], sim[MAX_CELLS];
		for (int i = 0; i < R.ncells; i++) {
			snprintf(labels[i], sizeof(labels[i]), "%.100s / %d", R.cells[i].config,
			         R.cells[i].streams);
			lp[i] = labels[i];
			pub[i] = R.cells[i].published;
			sim[i] = R.cells[i].simulated;
		}
		char file[1024], title[1200];
		snprintf(file, sizeof(file), "%s/reproduce.svg", svg);
		snprintf(title, sizeof(title), "uraid bench reproduce %s: %s", path, R.t.title);
		if ((r = bw_svg_compare(file, title, lp, pub, sim, R.ncells)) < 0)
			rc = cli_error("bench", "--svg %s: %s", file, strerror(-r));
	}
	return rc;
}
