/* uraid bench [workload] --levels ... : the cross product of levels, member
 * counts, chunk sizes and layouts, each running the named workloads against
 * the array through the library, with repeats, an optional one-member
 * baseline, live progress and table / chart / CSV / JSON / SVG reports. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/bench_geom.h"
#include "bench/bench_util.h"
#include "bench/bench_sweep.h"
#include "bench/bench_workloads.h"
#include "cli/cli.h"
#include "layout/layout.h"
#include "util/errmsg.h"

/* "a,b,c" or "a-b" (integers). */
static int parse_ints(const char *s, int *out, int *n)
{
	*n = 0;
	while (*s) {
		char *e;
		long a = strtol(s, &e, 10), b = a;
		if (e == s)
			return -EINVAL;
		if (*e == '-') {
			s = e + 1;
			b = strtol(s, &e, 10);
			if (e == s || b < a)
				return -EINVAL;
		}
		for (long v = a; v <= b; v++) {
			if (*n >= MAXV)
				return -EINVAL;
			out[(*n)++] = (int)v;
		}
		if (*e && *e != ',')
			return -EINVAL;
		s = *e ? e + 1 : e;
	}
	return *n ? 0 : -EINVAL;
}

/* Comma-separated words into fixed buffers. */
static int parse_words(const char *s, char (*out)[24], int max, int *n, size_t w)
{
	*n = 0;
	while (*s) {
		size_t l = strcspn(s, ",");
		if (l == 0 || l >= w || *n >= max)
			return -EINVAL;
		memcpy(out[*n], s, l);
		out[(*n)++][l] = 0;
		s += l + (s[l] == ',');
	}
	return *n ? 0 : -EINVAL;
}

/* Expand "readers=1-5", "randrw" and "randread" into single workloads;
 * refuse unknown. */
static int expand_workloads(struct sweep *o, char (*in)[24], int nin)
{
	o->nwl = 0;
	for (int i = 0; i < nin; i++) {
		if (!strncmp(in[i], "readers=", 8)) {
			int v[MAXV], nv;
			if (parse_ints(in[i] + 8, v, &nv) < 0)
				return -EINVAL;
			for (int k = 0; k < nv; k++) {
				if (v[k] < 1 || v[k] > BW_MAX_JOBS || o->nwl >= MAXV)
					return -EINVAL;
				snprintf(o->wl[o->nwl++], 24, "readers=%d", v[k]);
			}
		} else if (!strcmp(in[i], "randrw") || !strcmp(in[i], "randread") ||
		           !strcmp(in[i], "randwrite")) {
			if (o->nwl + 2 > MAXV)
				return -EINVAL;
			snprintf(o->wl[o->nwl++], 24, "%.9s-qd1", in[i]);
			snprintf(o->wl[o->nwl++], 24, "%.9s-qd16", in[i]);
		} else if (bw_fs_workload(in[i]) || !strcmp(in[i], "seqwrite") ||
		           !strcmp(in[i], "seqread") || !strcmp(in[i], "rewrite") ||
		           sweep_random_qd(in[i])) {
			if (o->nwl >= MAXV)
				return -EINVAL;
			snprintf(o->wl[o->nwl++], 24, "%.23s", in[i]);
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: uraid bench [workload] [--levels 0,1,5,6,10] [--members 3-10] [--chunks "
	    "64K,...]\n"
	    "         [--layouts ls,la,rs,ra] [--workloads seqwrite,seqread,readers=1-5,randrw,"
	    "randread,"
	    "randwrite,rewrite,\n"
	    "          smallfiles,mkfs,bonnie (root; member files or\n"
	    "          --disk-model in real time)]\n"
	    "         [--size S] [--req S] [--ops N] [--repeat R] [--warmup W] [--baseline] [--csv "
	    "F] "
	    "[--json F]\n"
	    "         [--svg DIR] [--chart] [--stripe-cache N,...]\n"
	    "         [--bitmap [--bitmap-chunk S] | --journal DEV [--journal-mode wt|wb|all]\n"
	    "          [--journal-size S]]\n"
	    "         [--members-dir DIR | --mem | --members-dev DEV,...|DIR [--force-destroy] |\n"
	    "          --disk-model PROFILE|FILE [--bus MBPS] [--time-scale N] [--queue-depth "
	    "N]]\n"
	    "         [--readahead S] [--think US]\n"
	    "  --levels also takes GEOM configs: gmirror, graid3 (all of their kind), or\n"
	    "  mirror:load|prefer|round-robin|split, raid3, raid3-r.\n"
	    "  --size: bytes each workload moves (default 32M); members are sized to hold it.\n"
	    "  --req: sequential request size (default 1M, as dd bs=1M).\n"
	    "  --disk-model: simulated disks; figures are in model time: by default on\n"
	    "  one virtual clock (deterministic, as fast as the host computes);\n"
	    "  --time-scale N: in real time, N times faster than the disks (filesystem\n"
	    "  workloads need 1). --queue-depth N: the disks' command queue (1 = NCQ off).\n"
	    "  --readahead S: bytes in flight per sequential stream (read-ahead window;\n"
	    "  default one request); --think US: microseconds each stream waits after\n"
	    "  each request.\n"
	    "  --members-dev: block devices (or every one in a directory); refused when one\n"
	    "  holds a filesystem, md superblock, partition table... unless --force-destroy.\n"
	    "  --stripe-cache: raid5/6 stripe cache sizes to sweep (0 = off).\n"
	    "  --bitmap: each array without and with md's internal write-intent bitmap\n"
	    "  (raid1/5/6/10; chunk --bitmap-chunk, default mdadm's). --journal DEV: without\n"
	    "  a journal, and with md's write journal on DEV in write-through and\n"
	    "  write-back (--journal-mode: only one of them; raid5/6 only). DEV: a new file\n"
	    "  (--journal-size, default 256M; removed at the end), or with --force-destroy\n"
	    "  an existing file or unused block device. Rows: config ...,bitmap / ,jwt /\n"
	    "  ,jwb and field consistency; filesystem workloads attach the journal too.\n"
	    "  --repeat R: R timed runs, the median reported; --warmup W: W untimed runs first.\n"
	    "  --progress S: a progress line (MB/s) every S seconds on stderr (default 1,\n"
	    "  0 = none); rewritten in place on a tty.\n");
}

/* The 1, 5 and 15 minute load averages ("?" when unknown): the machine
 * may be shared, and figures read differently under load. */
static void load_avg(char *buf, size_t len)
{
	snprintf(buf, len, "?");
	FILE *f = fopen("/proc/loadavg", "r");
	if (!f)
		return;
	double a, b, c;
	if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
		snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
	fclose(f);
}

static void print_header(FILE *f, const struct sweep *o)
{
	char cpu[128], load1[64];
	const struct uraid_parity *pp = uraid_parity_get(NULL);
	bench_cpu_model(cpu, sizeof(cpu));
	load_avg(load1, sizeof(load1));
	fprintf(
	    f,
	    "# %s\n# %s, %d CPUs, parity %s; %s\n# load average %s at the start, %s at the end\n",
	    o->cmd, cpu, bench_cpus(), pp ? pp->name : "none", o->title, o->load0, load1);
}

int bench_workload(int argc, char **argv)
{
	static struct sweep o; /* large; one per process run */
	memset(&o, 0, sizeof(o));
	o.levels[0] = 5, o.nlevels = 1;
	o.members[0] = 4, o.nmembers = 1;
	o.chunks[0] = 64 << 10, o.nchunks = 1;
	snprintf(o.layouts[0], 8, "ls"), o.nlayouts = 1;
	o.size = 32u << 20;
	o.ops = 4000;
	o.req = 1u << 20;
	o.repeat = 1;
	o.progress = 1;
	o.cfg.kind = BW_FILES;
	o.cfg.dir = "/dev/shm";
	char wl[MAXV][24], tmp[MAXV][24], err[512] = "";
	int nwl = 2, ntmp;
	snprintf(wl[0], 24, "seqwrite");
	snprintf(wl[1], 24, "seqread");
	const char *model = NULL, *devarg = NULL, *jmode = NULL;
	bool scale_set = false, dir_set = false, force = false, bitmap = false;
	int qd = 0;
	static char devs[BW_MAX_MEMBERS][256];
	/* One option a line, so options added by different people merge. */
	// clang-format off
	static const struct option lo[] = {
		{"levels", 1, 0, 'l'},
		{"members", 1, 0, 'n'},
		{"chunks", 1, 0, 'c'},
		{"layouts", 1, 0, 'L'},
		{"stripe-cache", 1, 0, 'S'},
		{"workloads", 1, 0, 'w'},
		{"size", 1, 0, 's'},
		{"ops", 1, 0, 'o'},
		{"repeat", 1, 0, 'r'},
		{"baseline", 0, 0, 'b'},
		{"csv", 1, 0, 'C'},
		{"json", 1, 0, 'J'},
		{"svg", 1, 0, 'V'},
		{"chart", 0, 0, 'A'},
		{"members-dir", 1, 0, 'd'},
		{"mem", 0, 0, 'm'},
		{"disk-model", 1, 0, 'D'},
		{"bus", 1, 0, 'B'},
		{"time-scale", 1, 0, 'T'},
		{"req", 1, 0, 'R'},
		{"members-dev", 1, 0, 'M'},
		{"force-destroy", 0, 0, 'F'},
		{"progress", 1, 0, 'P'},
		{"warmup", 1, 0, 'W'},
		{"bitmap", 0, 0, 'i'},
		{"bitmap-chunk", 1, 0, 'k'},
		{"journal", 1, 0, 'j'},
		{"journal-mode", 1, 0, 'e'},
		{"journal-size", 1, 0, 'z'},
		{"readahead", 1, 0, 'a'},
		{"think", 1, 0, 't'},
		{"queue-depth", 1, 0, 'q'},
		{"help", 0, 0, 'h'},
		{0, 0, 0, 0},
	};
	// clang-format on
	int c, iv[MAXV], niv;
	unsigned long long v;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'l':
			/* GEOM: gmirror / graid3 (every spec of that class), or specs
			 * mirror:BALANCE, raid3, raid3-r (bench_geom.h) */
			if (strstr(optarg, "gmirror") || strstr(optarg, "raid3") ||
			    strstr(optarg, "mirror:")) {
				char lw[MAXV][24], rest[MAXV * 25] = "";
				int nlw;
				if (parse_words(optarg, lw, MAXV, &nlw, 24) < 0)
					return cli_error("bench", "--levels %s: a list", optarg);
				for (int i = 0; i < nlw; i++) {
					int gl = !strcmp(lw[i], "gmirror")  ? URAID_LEVEL_GMIRROR
					         : !strcmp(lw[i], "graid3") ? URAID_LEVEL_GRAID3
					                                    : 0;
					uint32_t gv;
					char gb[8];
					if (!gl &&
					    bw_geom_parse(lw[i], &gl, &gv, gb, sizeof(gb)) == 0) {
						if (o.ngeom < MAXV)
							snprintf(o.geom[o.ngeom++], 24, "%.23s",
							         lw[i]);
						continue;
					}
					if (!gl) {
						size_t rl = strlen(rest);
						snprintf(rest + rl, sizeof(rest) - rl, "%s%.23s",
						         rl ? "," : "", lw[i]);
						continue;
					}
					for (const char *const *g = bw_geom_all(gl); *g; g++)
						if (o.ngeom < MAXV)
							snprintf(o.geom[o.ngeom++], 24, "%s", *g);
				}
				o.nlevels = 0;
				if (!rest[0])
					break;
				optarg = rest;
			}
			if (parse_ints(optarg, o.levels, &o.nlevels) < 0)
				return cli_error("bench", "--levels %s: a list like 0,1,5,6,10",
				                 optarg);
			for (int i = 0; i < o.nlevels; i++)
				if (o.levels[i] != 0 && o.levels[i] != 1 && o.levels[i] != 5 &&
				    o.levels[i] != 6 && o.levels[i] != 10)
					return cli_error("bench",
					                 "--levels: raid%d not supported here "
					                 "(0, 1, 5, 6, 10)",
					                 o.levels[i]);
			break;
		case 'n':
			if (parse_ints(optarg, o.members, &o.nmembers) < 0)
				return cli_error("bench", "--members %s: a list or range like 3-10",
				                 optarg);
			for (int i = 0; i < o.nmembers; i++)
				if (o.members[i] < 1 || o.members[i] > BW_MAX_MEMBERS)
					return cli_error("bench", "--members: %d not in 1..%d",
					                 o.members[i], BW_MAX_MEMBERS);
			break;
		case 'c':
			if (parse_words(optarg, tmp, MAXV, &ntmp, 24) < 0)
				return cli_error("bench", "--chunks %s: a list like 32K,64K,1M",
				                 optarg);
			o.nchunks = ntmp;
			for (int i = 0; i < ntmp; i++) {
				if (cli_parse_size(tmp[i], 1024, &v) < 0 || v < 4096 ||
				    v > (64u << 20) || (v & (v - 1)))
					return cli_error("bench",
					                 "--chunks: '%s' is not a power of two "
					                 "from 4K to 64M",
					                 tmp[i]);
				o.chunks[i] = (uint32_t)v;
			}
			break;
		case 'L':
			if (parse_words(optarg, tmp, MAXV, &o.nlayouts, 8) < 0)
				return cli_error("bench", "--layouts %s: a list like ls,la",
				                 optarg);
			for (int i = 0; i < o.nlayouts; i++)
				snprintf(o.layouts[i], 8, "%.7s", tmp[i]);
			break;
		case 'S':
			if (parse_ints(optarg, iv, &niv) < 0)
				return cli_error("bench", "--stripe-cache %s: a list of numbers",
				                 optarg);
			for (int i = 0; i < niv; i++)
				if (iv[i] < 0 || (unsigned)iv[i] > URAID_STRIPE_CACHE_MAX)
					return cli_error("bench", "--stripe-cache: %d not in 0..%u",
					                 iv[i], URAID_STRIPE_CACHE_MAX);
			memcpy(o.scache, iv, sizeof(iv));
			o.nscache = niv;
			break;
		case 'w':
			if (parse_words(optarg, wl, MAXV, &nwl, 24) < 0)
				return cli_error("bench", "--workloads %s: a comma-separated list",
				                 optarg);
			break;
		case 's':
			if (cli_parse_size(optarg, 1, &v) < 0 || v < (2u << 20) || v % (1u << 20))
				return cli_error("bench", "--size %s: whole MiB, at least 2M",
				                 optarg);
			o.size = v;
			break;
		case 'R':
			if (cli_parse_size(optarg, 1, &v) < 0 || v < 4096 || v % 4096 ||
			    v > (64u << 20))
				return cli_error("bench", "--req %s: 4K multiple up to 64M",
				                 optarg);
			o.req = (size_t)v;
			break;
		case 'o':
			o.ops = strtoull(optarg, NULL, 10);
			if (o.ops < 16)
				return cli_error("bench", "--ops %s: at least 16", optarg);
			break;
		case 'r':
			o.repeat = atoi(optarg);
			if (o.repeat < 1 || o.repeat > 64)
				return cli_error("bench", "--repeat %s: 1..64", optarg);
			break;
		case 'b': o.baseline = true; break;
		case 'C': o.csv = optarg; break;
		case 'J': o.json = optarg; break;
		case 'V': o.svg = optarg; break;
		case 'A': o.chart = true; break;
		case 'd':
			o.cfg.kind = BW_FILES;
			o.cfg.dir = optarg;
			dir_set = true;
			break;
		case 'M': devarg = optarg; break;
		case 'W':
			o.warmup = atoi(optarg);
			if (o.warmup < 0 || o.warmup > 16 || !*optarg ||
			    strspn(optarg, "0123456789") != strlen(optarg))
				return cli_error("bench", "--warmup %s: 0..16 untimed runs",
				                 optarg);
			break;
		case 'P': {
			char *e;
			o.progress = strtod(optarg, &e);
			if (e == optarg || *e || o.progress < 0 || o.progress > 3600)
				return cli_error("bench",
				                 "--progress %s: seconds between lines, 0 = off",
				                 optarg);
			break;
		}
		case 'F': force = true; break;
		case 'i': bitmap = true; break;
		case 'k':
			if (cli_parse_size(optarg, 1, &v) < 0 || v < 4096 || v > (1ull << 31) ||
			    (v & (v - 1)))
				return cli_error("bench",
				                 "--bitmap-chunk %s: a power of two from 4K to 2G",
				                 optarg);
			o.bitmap_chunk = (uint32_t)v;
			break;
		case 'j': o.journal = optarg; break;
		case 'e': jmode = optarg; break;
		case 'z':
			if (cli_parse_size(optarg, 1, &v) < 0 || v < (4u << 20) || v % 4096)
				return cli_error("bench",
				                 "--journal-size %s: at least 4M, a 4K multiple",
				                 optarg);
			o.journal_bytes = v;
			break;
		case 'm': o.cfg.kind = BW_MEM; break;
		case 'D': model = optarg; break;
		case 'B':
			o.cfg.bus_mbs = atof(optarg);
			if (o.cfg.bus_mbs <= 0)
				return cli_error("bench", "--bus %s: a rate in MB/s", optarg);
			break;
		case 'T':
			o.cfg.time_scale = atof(optarg);
			scale_set = true;
			if (o.cfg.time_scale < 0)
				return cli_error("bench", "--time-scale %s: 0 (virtual) or more",
				                 optarg);
			break;
		case 'a':
			if (cli_parse_size(optarg, 1, &v) < 0 || v % 4096 || v > (1ull << 32))
				return cli_error("bench",
				                 "--readahead %s: bytes in flight per stream, a 4K "
				                 "multiple up to 4G (0 = one request)",
				                 optarg);
			o.window = v;
			break;
		case 't': {
			char *e;
			double us = strtod(optarg, &e);
			if (e == optarg || *e || !(us >= 0 && us <= 1e9))
				return cli_error(
				    "bench", "--think %s: microseconds after each request", optarg);
			o.think_ns = (uint64_t)(us * 1e3);
			break;
		}
		case 'q':
			qd = atoi(optarg);
			if (qd < 1 || qd > 4096 || strspn(optarg, "0123456789") != strlen(optarg))
				return cli_error(
				    "bench",
				    "--queue-depth %s: the disks' queue depth, 1..4096 "
				    "(1 = NCQ off)",
				    optarg);
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc)
		return cli_error("bench", "unexpected argument '%s'", argv[optind]);
	if (expand_workloads(&o, wl, nwl) < 0)
		return cli_error(
		    "bench",
		    "--workloads: known are seqwrite, seqread, readers=N[-M] "
		    "(N <= %d), randrw, randread, randwrite (= -qd1 and -qd16), "
		    "randrw-qdN, randread-qdN, randwrite-qdN (N <= 64), rewrite, mkfs, "
		    "smallfiles, bonnie",
		    BW_MAX_JOBS);
	if (model) {
		if (sim_profile_load(model, &o.cfg.prof, err, sizeof(err)) < 0)
			return cli_error("bench", "--disk-model: %s", err);
		o.cfg.kind = BW_SIM;
		/* Virtual time (one clock shared by all members, the bus and
		 * the workload's streams) is the default: deterministic, and
		 * as fast as the computation. --time-scale N runs in real time
		 * (what the filesystem workloads need). */
		bool fs = false;
		for (int i = 0; i < o.nwl; i++)
			fs |= bw_fs_workload(o.wl[i]);
		if (!scale_set)
			o.cfg.time_scale = fs ? 1 : 0;
		if (qd)
			o.cfg.prof.queue_depth = (unsigned)qd;
	} else if (o.cfg.bus_mbs > 0 || scale_set || qd) {
		return cli_error("bench",
		                 "--bus, --time-scale and --queue-depth need --disk-model");
	}
	if (force && !devarg && !o.journal)
		return cli_error("bench",
		                 "--force-destroy only goes with --members-dev or --journal");
	if (devarg && (model || dir_set || o.cfg.kind == BW_MEM))
		return cli_error("bench", "--members-dev cannot be combined with --members-dir, "
		                          "--mem or --disk-model");
	if (devarg) {
		int nd = 0, maxm = 1;
		if (bw_dev_list(devarg, devs, BW_MAX_MEMBERS, &nd, err, sizeof(err)) < 0)
			return cli_error("bench", "%s", err);
		for (int i = 0; i < o.nmembers; i++)
			maxm = o.members[i] > maxm ? o.members[i] : maxm;
		if (nd < maxm)
			return cli_error("bench",
			                 "--members-dev: %d device(s) given, --members asks for up "
			                 "to %d",
			                 nd, maxm);
		/* Before anything is written: what do the devices hold? */
		if (bw_dev_check(devs, nd, force, err, sizeof(err)) < 0)
			return cli_error("bench", "%s", err);
		o.cfg.kind = BW_DEV;
		o.cfg.devs = devs;
		o.cfg.ndevs = nd;
	}
	bool journal_made = false;
	int pr = sweep_policies(&o, bitmap, jmode, &journal_made, force);
	if (pr)
		return pr;
	if (o.cfg.kind == BW_FILES) {
		struct stat st;
		if (stat(o.cfg.dir, &st) < 0 || !S_ISDIR(st.st_mode))
			return cli_error("bench", "--members-dir %s: not a directory", o.cfg.dir);
	}
	if (o.svg && mkdir(o.svg, 0777) < 0 && errno != EEXIST)
		return cli_error("bench", "--svg %s: %s", o.svg, strerror(errno));
	int l = snprintf(o.cmd, sizeof(o.cmd), "uraid bench");
	for (int i = 1; i < argc && l < (int)sizeof(o.cmd); i++)
		l += snprintf(o.cmd + l, sizeof(o.cmd) - (size_t)l, " %s", argv[i]);
	char sz[32];
	snprintf(o.title, sizeof(o.title), "members: %s%s%s, %s per workload, %d repeat(s)%s",
	         o.cfg.kind == BW_MEM     ? "memory"
	         : o.cfg.kind == BW_FILES ? "files in "
	         : o.cfg.kind == BW_DEV   ? "block devices "
	                                  : "simulated ",
	         o.cfg.kind == BW_FILES ? o.cfg.dir
	         : o.cfg.kind == BW_SIM ? o.cfg.prof.name
	         : o.cfg.kind == BW_DEV ? devarg
	                                : "",
	         o.cfg.kind == BW_SIM && o.cfg.bus_mbs > 0 ? " on a shared bus" : "",
	         bench_size_label(o.size, sz, sizeof(sz)), o.repeat,
	         o.cfg.kind == BW_SIM ? ", model time" : "");

	if (o.warmup) {
		size_t tl = strlen(o.title);
		snprintf(o.title + tl, sizeof(o.title) - tl, ", %d warm-up run(s)", o.warmup);
	}
	load_avg(o.load0, sizeof(o.load0));
	int r = 0;
	if (o.baseline)
		r = sweep_run_baseline(&o, err, sizeof(err));
	for (int li = 0; r == 0 && li < o.nlevels; li++) {
		int lv = o.levels[li];
		for (int ni = 0; r == 0 && ni < o.nmembers; ni++) {
			int n = o.members[ni];
			int minm = lv == 6 ? 4 : lv == 5 ? 3 : lv == 0 ? 1 : 2;
			if (n < minm) {
				fprintf(stderr,
				        "uraid: bench: note: skipping raid%d with %d members "
				        "(needs %d)\n",
				        lv, n, minm);
				continue;
			}
			/* Chunks do not apply to raid1, layouts and the stripe
			 * cache only to raid5/6. */
			bool parity = lv == 5 || lv == 6;
			int nc = lv == 1 ? 1 : o.nchunks, nl = parity ? o.nlayouts : 1;
			int nsc = parity && o.nscache ? o.nscache : 1;
			if ((lv == 1 && o.nchunks > 1) || (!parity && o.nlayouts > 1))
				if (ni == 0)
					fprintf(stderr,
					        "uraid: bench: note: raid%d: %s do not apply, "
					        "run once\n",
					        lv, lv == 1 ? "chunks and layouts" : "layouts");
			if (!parity && o.nscache && ni == 0)
				fprintf(stderr,
				        "uraid: bench: note: raid%d: no stripe cache (raid5/6 "
				        "only), run without\n",
				        lv);
			for (int ci = 0; r == 0 && ci < nc; ci++)
				for (int ki = 0; r == 0 && ki < nl; ki++)
					for (int si = 0; r == 0 && si < nsc; si++)
						r = sweep_run_policies(
						    &o, lv, n, o.chunks[ci], o.layouts[ki],
						    parity && o.nscache ? o.scache[si] : -1, err,
						    sizeof(err));
		}
	}
	if (o.ngeom && o.ncs)
		fprintf(stderr, "uraid: bench: note: GEOM configurations have no md bitmap or "
		                "journal, run without\n");
	/* GEOM configurations (--levels gmirror,graid3,mirror:BALANCE,...) */
	for (int gi = 0; r == 0 && gi < o.ngeom; gi++) {
		int gl;
		uint32_t gv;
		char gb[8];
		bw_geom_parse(o.geom[gi], &gl, &gv, gb, sizeof(gb));
		for (int ni = 0; r == 0 && ni < o.nmembers; ni++) {
			if (!bw_geom_members_ok(gl, o.members[ni])) {
				fprintf(stderr,
				        "uraid: bench: note: skipping %s with %d members (%s)\n",
				        o.geom[gi], o.members[ni],
				        gl == URAID_LEVEL_GRAID3 ? "graid3 needs 3, 5, 9, 17 or 33"
				                                 : "out of range");
				continue;
			}
			r = sweep_run_config(&o, gl, o.members[ni], o.chunks[0], o.geom[gi], -1, -1,
			                     err, sizeof(err));
		}
	}
	if (journal_made)
		unlink(o.journal);
	if (r < 0) {
		free(o.res);
		return cli_error("bench", "%s", err);
	}
	if (o.baseline) {
		for (int i = 0; i < o.nres; i++)
			for (int k = 0; k < o.nres; k++)
				if (o.res[k].level == -2 && !o.res[i].note[0] &&
				    !strcmp(o.res[k].workload, o.res[i].workload) &&
				    o.res[k].value > 0)
					o.res[i].ratio = o.res[i].value / o.res[k].value;
	}
	print_header(stdout, &o);
	bw_report_table(stdout, o.res, o.nres);
	if (o.chart)
		bw_report_chart(stdout, o.res, o.nres);
	int rc = 0;
	if (o.csv && (r = bw_report_csv(o.csv, o.res, o.nres)) < 0)
		rc = cli_error("bench", "--csv %s: %s", o.csv, strerror(-r));
	if (o.json && (r = bw_report_json(o.json, o.res, o.nres)) < 0)
		rc = cli_error("bench", "--json %s: %s", o.json, strerror(-r));
	if (o.svg) {
		char title[1100];
		snprintf(title, sizeof(title), "%s", o.cmd);
		if ((r = bw_report_svg(o.svg, title, o.res, o.nres)) < 0)
			rc = cli_error("bench", "--svg %s: %s", o.svg, strerror(-r));
	}
	free(o.res);
	return rc;
}
