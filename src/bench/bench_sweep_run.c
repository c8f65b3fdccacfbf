/* One configuration of a `uraid bench` sweep: members made for it, a clean
 * array on them, each workload run (warm-up, repeats, median and spread)
 * against the array through the library, then the filesystem workloads on
 * the attached array; and the one-member baseline. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_geom.h"
#include "bench/bench_sweep.h"
#include "bench/bench_util.h"
#include "layout/layout.h"
#include "util/errmsg.h"

/* "randrw-qdN" / "randread-qdN" / "randwrite-qdN" with N in 1..MAX_QD: N,
 * else 0. */
int sweep_random_qd(const char *wl)
{
	const char *n = !strncmp(wl, "randrw-qd", 9)       ? wl + 9
	                : !strncmp(wl, "randread-qd", 11)  ? wl + 11
	                : !strncmp(wl, "randwrite-qd", 12) ? wl + 12
	                                                   : NULL;
	if (!n || *n < '1' || *n > '9')
		return 0;
	char *e;
	long v = strtol(n, &e, 10);
	return *e || v > MAX_QD ? 0 : (int)v;
}

/* What a workload runs on: an array, or one member (baseline). */
struct target {
	struct uraid_array *a;
	struct member *m;
	struct bw_set *s;
	bool primed;      /* [0, size) holds stamped data */
	size_t prime_req; /* requests of the prime write: full stripes (0: 1 MiB) */
};

static int t_io(struct target *t, bool wr, void *buf, size_t len, uint64_t off)
{
	if (t->m)
		return wr ? member_write(t->m, buf, len, off, 0) : member_read(t->m, buf, len, off);
	return wr ? uraid_write(t->a, buf, len, off) : uraid_read(t->a, buf, len, off);
}

static int t_flush(struct target *t)
{
	return t->m ? member_flush(t->m) : uraid_flush(t->a);
}

static void job_init(struct bw_job *j, struct target *t, int threads, size_t req, uint64_t base,
                     uint64_t span)
{
	memset(j, 0, sizeof(*j));
	j->a = t->a;
	j->m = t->m;
	j->set = t->s;
	j->threads = threads;
	j->req = req;
	j->base = base;
	j->span = span;
	j->seed = 1;
}

/* A sequential stream with the sweep's reader/writer settings. */
static void stream_init(struct bw_job *j, struct sweep *o, struct target *t, uint64_t base,
                        uint64_t span)
{
	job_init(j, t, 1, o->req, base, span);
	j->window = o->window;
	j->think_ns = o->think_ns;
}

/* One run of one workload: fills value, lat_us, finish_spread, bytes. */
static int run_once(struct sweep *o, struct target *t, const char *wl, uint64_t size,
                    _Atomic uint64_t *prog, struct bw_result *res, char *err, size_t errlen)
{
	const size_t MB = 1u << 20;
	struct bw_job j[BW_MAX_JOBS];
	int r = 0;
	if (strcmp(wl, "seqwrite") && strncmp(wl, "randrw", 6) && strncmp(wl, "randwrite", 9) &&
	    !t->primed) {
		/* Whole stripes where the array has them (no read-modify-write
		 * of what is about to be overwritten anyway), 1 MiB requests
		 * for the rest. */
		size_t big = t->prime_req > MB ? t->prime_req : MB;
		uint64_t bulk = size / big * big;
		for (int pass = 0; pass < 2 && r == 0; pass++) {
			uint64_t base = pass ? bulk : 0, span = pass ? size - bulk : bulk;
			if (span == 0)
				continue;
			job_init(&j[0], t, 1, pass ? MB : big, base, span);
			j[0].write = true;
			r = bw_run(j, 1);
		}
		if (r < 0)
			return errmsg(err, errlen, r, "writing the data to read back failed");
		t->primed = true;
	}
	/* Start from drained write caches: a simulated disk (or a real one)
	 * still writing back the previous workload's data would charge that
	 * to this one. */
	if ((r = t_flush(t)) < 0)
		return errmsg(err, errlen, r, "flush before %s failed", wl);
	uint64_t t0 = bw_now(t->s);
	res->lat_us = res->finish_spread = 0;
	if (!strcmp(wl, "seqwrite") || !strcmp(wl, "seqread")) {
		bool wr = wl[3] == 'w';
		stream_init(&j[0], o, t, 0, size);
		j[0].write = wr;
		j[0].verify = !wr;
		j[0].progress = prog;
		r = bw_run(j, 1);
		if (r == 0 && wr)
			r = t_flush(t);
		t->primed |= wr && r == 0;
		uint64_t t1 = bw_now(t->s);
		res->bytes = atomic_load(&j[0].done_bytes);
		res->requested = size;
		res->value = (double)res->bytes / 1e6 / ((double)(t1 - t0) / 1e9);
		res->lat_us =
		    (double)atomic_load(&j[0].lat_sum_ns) / 1e3 /
		    (double)(atomic_load(&j[0].done_ops) ? atomic_load(&j[0].done_ops) : 1);
		res->unit = "MB/s";
		if (r == 0 && atomic_load(&j[0].bad_stamps))
			r = errmsg(err, errlen, -EIO, "%llu blocks read back wrong",
			           (unsigned long long)atomic_load(&j[0].bad_stamps));
	} else if (!strncmp(wl, "readers=", 8)) {
		int nr = atoi(wl + 8);
		uint64_t region = size / (uint64_t)nr / o->req * o->req;
		if (region < o->req)
			return errmsg(err, errlen, -EINVAL, "%s: --size too small", wl);
		for (int i = 0; i < nr; i++) {
			stream_init(&j[i], o, t, (uint64_t)i * region, region);
			j[i].verify = true;
			j[i].progress = prog;
		}
		r = bw_run(j, nr);
		uint64_t first = UINT64_MAX, last = 0, bytes = 0, bad = 0, lat = 0, ops = 0;
		for (int i = 0; i < nr; i++) {
			uint64_t e = atomic_load(&j[i].end_ns);
			first = e < first ? e : first;
			last = e > last ? e : last;
			bytes += atomic_load(&j[i].done_bytes);
			bad += atomic_load(&j[i].bad_stamps);
			lat += atomic_load(&j[i].lat_sum_ns);
			ops += atomic_load(&j[i].done_ops);
		}
		res->lat_us = (double)lat / 1e3 / (double)(ops ? ops : 1);
		res->bytes = bytes;
		res->requested = region * (uint64_t)nr;
		res->value = (double)bytes / 1e6 / ((double)(last - t0) / 1e9);
		res->finish_spread = (double)(last - first) / (double)(last - t0);
		res->unit = "MB/s";
		if (r == 0 && bad)
			r = errmsg(err, errlen, -EIO, "%llu blocks read back wrong",
			           (unsigned long long)bad);
	} else if (sweep_random_qd(wl)) {
		/* randrw: half writes, never-written blocks are read too (no
		 * check); randread: the primed data, every block checked;
		 * randwrite: writes only (what a journal or bitmap costs). */
		bool rd = !strncmp(wl, "randread", 8), wo = !strncmp(wl, "randwrite", 9);
		job_init(&j[0], t, sweep_random_qd(wl), 4096, 0, size);
		j[0].random = true;
		j[0].write = wo;
		j[0].read_pct = rd ? 100 : wo ? 0 : 50;
		j[0].verify = rd;
		j[0].ops = o->ops;
		j[0].progress = prog;
		r = bw_run(j, 1);
		uint64_t t1 = bw_now(t->s), ops = atomic_load(&j[0].done_ops);
		res->bytes = atomic_load(&j[0].done_bytes);
		res->requested = o->ops * 4096;
		res->value = (double)ops / ((double)(t1 - t0) / 1e9);
		res->lat_us = (double)atomic_load(&j[0].lat_sum_ns) / 1e3 / (double)(ops ? ops : 1);
		res->unit = "IOPS";
		if (r == 0 && atomic_load(&j[0].bad_stamps))
			r = errmsg(err, errlen, -EIO, "%llu blocks read back wrong",
			           (unsigned long long)atomic_load(&j[0].bad_stamps));
	} else { /* rewrite: cp a b; cat b > a, 31 times, on two "files" */
		uint64_t fsz = size / 2 / MB * MB;
		void *buf = bench_alloc(MB);
		uint64_t moved = 0;
		if (!buf)
			return -ENOMEM;
		for (int it = 0; it < 62 && r == 0; it++) {
			uint64_t from = it % 2 ? fsz : 0, to = it % 2 ? 0 : fsz;
			for (uint64_t off = 0; off < fsz && r == 0; off += MB) {
				r = t_io(t, false, buf, MB, from + off);
				if (r == 0)
					r = t_io(t, true, buf, MB, to + off);
				moved += MB;
				if (prog)
					atomic_fetch_add(prog, MB);
			}
			if (r == 0)
				r = t_flush(t);
		}
		free(buf);
		uint64_t t1 = bw_now(t->s);
		res->bytes = moved;
		res->requested = fsz * 62;
		res->value = (double)moved / 1e6 / ((double)(t1 - t0) / 1e9);
		res->unit = "MB/s";
	}
	if (r < 0 && !err[0])
		errmsg(err, errlen, r, "%s failed", wl);
	return r;
}

static int add_result(struct sweep *o, const struct bw_result *r)
{
	if (o->nres == o->cap) {
		int cap = o->cap ? o->cap * 2 : 64;
		struct bw_result *n = realloc(o->res, (size_t)cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		o->res = n;
		o->cap = cap;
	}
	o->res[o->nres++] = *r;
	return 0;
}

/* All workloads with repeats on one target; rows get `proto`'s config. */
static int run_target(struct sweep *o, struct target *t, const struct bw_result *proto,
                      uint64_t size, char *err, size_t errlen)
{
	for (int w = 0; w < o->nwl; w++) {
		if (bw_fs_workload(o->wl[w]))
			continue; /* run_fs, on the attached array */
		struct bw_result res = *proto;
		double v[64] = {0};
		int nrep = o->repeat < 64 ? o->repeat : 64;
		_Atomic uint64_t prog = 0;
		char label[96];
		snprintf(label, sizeof(label), "%s %s", proto->config, o->wl[w]);
		struct bw_progress *p = bw_progress_start(label, &prog, t->s, o->progress);
		int r = 0;
		/* k < 0: warm-up runs, not counted */
		for (int k = -o->warmup; k < nrep && r == 0; k++) {
			r = run_once(o, t, o->wl[w], size, &prog, &res, err, errlen);
			if (k >= 0)
				v[k] = res.value;
		}
		bw_progress_stop(p);
		if (r < 0)
			return r;
		double lo = v[0], hi = v[0];
		for (int k = 1; k < nrep; k++) {
			lo = v[k] < lo ? v[k] : lo;
			hi = v[k] > hi ? v[k] : hi;
		}
		snprintf(res.workload, sizeof(res.workload), "%s", o->wl[w]);
		res.value = bench_median(v, nrep);
		res.spread = res.value > 0 ? (hi - lo) / res.value : 0;
		res.lo = lo;
		res.hi = hi;
		res.repeats = nrep;
		if ((r = add_result(o, &res)) < 0)
			return errmsg(err, errlen, r, "out of memory");
	}
	return 0;
}

static int add_cb(void *ctx, const struct bw_result *r)
{
	return add_result(ctx, r);
}

static int nfs(const struct sweep *o, const char **wls)
{
	int k = 0;
	for (int i = 0; i < o->nwl; i++)
		if (bw_fs_workload(o->wl[i]))
			wls[k++] = o->wl[i];
	return k;
}

static int data_disks(int level, int n)
{
	if (level == URAID_LEVEL_GMIRROR || level == URAID_LEVEL_GRAID3)
		return level == URAID_LEVEL_GMIRROR ? 1 : n - 1;
	return level == 0 ? n : level == 1 ? 1 : level == 5 ? n - 1 : level == 6 ? n - 2 : n / 2;
}

/* A row per workload saying why there is no figure (`note`). */
static int add_na(struct sweep *o, const struct bw_result *proto, const char *note)
{
	for (int w = 0; w < o->nwl; w++) {
		struct bw_result res = *proto;
		snprintf(res.workload, sizeof(res.workload), "%s", o->wl[w]);
		snprintf(res.note, sizeof(res.note), "%s", note);
		res.unit = "-";
		int r = add_result(o, &res);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Set the stripe cache of a fresh array (sc >= 0). Returns 1 when the
 * engine has none (the rows become "n/a"), 0 when set. */
static int set_stripe_cache(struct sweep *o, struct uraid_array *a, const struct bw_result *proto,
                            char *err, size_t errlen)
{
	if (proto->stripe_cache < 0)
		return 0;
	int r = uraid_set_stripe_cache(a, (unsigned)proto->stripe_cache);
	if (r == -ENOTSUP) {
		fprintf(stderr,
		        "uraid: bench: note: %s: this engine has no stripe cache, rows are n/a\n",
		        proto->config);
		r = add_na(o, proto, "n/a (stripe cache not supported)");
		return r < 0 ? errmsg(err, errlen, r, "out of memory") : 1;
	}
	if (r < 0)
		return errmsg(err, errlen, r, "%s: setting the stripe cache to %d failed",
		              proto->config, proto->stripe_cache);
	return 0;
}

/* The journal state of a running array is what `cs` asks for: the
 * rows then say which policy they measured, from the array itself. */
static int check_policy(struct uraid_array *a, int cs, const char *config, char *err, size_t errlen)
{
	struct uraid_status st;
	int r = uraid_status(a, &st);
	if (r < 0)
		return errmsg(err, errlen, r, "%s: no status", config);
	bool jr = cs == BW_CS_JWT || cs == BW_CS_JWB;
	int mode = cs == BW_CS_JWB ? URAID_JOURNAL_WB : URAID_JOURNAL_WT;
	if ((jr && (st.journal != 1 || st.journal_mode != mode)) || (!jr && st.journal))
		return errmsg(err, errlen, -EIO,
		              "%s: the array runs with journal %s (mode %s), %s was asked", config,
		              st.journal == 1 ? "working"
		              : st.journal    ? "failed"
		                              : "none",
		              st.journal_mode == URAID_JOURNAL_WB ? "write-back" : "write-through",
		              bw_consistency_name(cs));
	return 0;
}

int sweep_run_config(struct sweep *o, int level, int n, uint32_t chunk, const char *lay, int sc,
                     int cs, char *err, size_t errlen)
{
	struct bw_result proto;
	memset(&proto, 0, sizeof(proto));
	proto.level = level;
	proto.members = n;
	proto.chunk = level == 1 ? 0 : chunk;
	proto.stripe_cache = sc;
	snprintf(proto.layout, sizeof(proto.layout), "%s", lay);
	if (cs >= 0)
		snprintf(proto.consistency, sizeof(proto.consistency), "%s",
		         bw_consistency_name(cs));
	/* The policy in the label (",bitmap", ",jwt", ",jwb"; none: nothing),
	 * so the variants stand side by side in the table and charts. */
	static const char *const csl[BW_CS_COUNT] = {"", ",bitmap", ",jwt", ",jwb"};
	const char *cl = cs > 0 && cs < BW_CS_COUNT ? csl[cs] : "";
	bool geom = level == URAID_LEVEL_GMIRROR || level == URAID_LEVEL_GRAID3;
	if (geom)
		; /* named below, from the spec */
	else if (level == 1 && cs > 0)
		snprintf(proto.config, sizeof(proto.config), "raid1[%s]x%d", cl + 1, n);
	else if (level == 1)
		snprintf(proto.config, sizeof(proto.config), "raid1x%d", n);
	else if ((level == 5 || level == 6) && sc >= 0)
		snprintf(proto.config, sizeof(proto.config), "raid%d[%u,%s,sc%d%s]x%d", level,
		         chunk / 1024, lay, sc, cl, n);
	else if (level == 5 || level == 6)
		snprintf(proto.config, sizeof(proto.config), "raid%d[%u,%s%s]x%d", level,
		         chunk / 1024, lay, cl, n);
	else
		snprintf(proto.config, sizeof(proto.config), "raid%d[%u%s]x%d", level, chunk / 1024,
		         cl, n);
	uint32_t layout = 0;
	bool layout_set = false;
	if (geom) {
		char label[8];
		if (bw_geom_parse(lay, &level, &layout, label, sizeof(label)) < 0)
			return errmsg(err, errlen, -EINVAL, "GEOM spec '%s' unknown", lay);
		snprintf(proto.layout, sizeof(proto.layout), "%s", label);
		proto.chunk = 0;
		if (strcmp(label, "-"))
			snprintf(proto.config, sizeof(proto.config), "%s[%s]x%d", level_name(level),
			         label, n);
		else
			snprintf(proto.config, sizeof(proto.config), "%sx%d", level_name(level), n);
	} else if (level == 5 || level == 6) {
		if (layout_parse(level, lay, &layout) < 0)
			return errmsg(err, errlen, -EINVAL, "layout '%s' unknown for raid%d", lay,
			              level);
		layout_set = true;
	}
	/* Members hold `size` of data plus room for superblocks and a stripe. */
	uint64_t per = o->size / (uint64_t)data_disks(level, n);
	const char *fswl[MAXV];
	int nf = nfs(o, fswl);
	/* mkfs.xfs wants 300 MB at least. */
	bool sim_fs = nf && o->cfg.kind == BW_SIM && o->cfg.time_scale == 1;
	if (nf && (o->cfg.kind == BW_FILES || sim_fs) &&
	    per < (420ull << 20) / (uint64_t)data_disks(level, n))
		per = (420ull << 20) / (uint64_t)data_disks(level, n);
	uint64_t mbytes = (per + 2 * (uint64_t)chunk + (6u << 20)) / (1u << 20) * (1u << 20);
	struct bw_set s;
	int r = bw_set_make(&s, &o->cfg, n, mbytes, err, errlen);
	if (r < 0)
		return r;
	struct uraid_array *a = NULL;
	struct bw_array_opts ao = {.layout = layout,
	                           .layout_set = layout_set,
	                           .chunk_bytes = chunk,
	                           .cs = cs > 0 ? (enum bw_consistency)cs : BW_CS_NONE,
	                           .bitmap_chunk = o->bitmap_chunk,
	                           .journal = o->journal,
	                           .journal_bytes = o->journal_bytes};
	r = bw_array_create_opts(&s, n, level, &ao, &a, err, errlen);
	bool na = false;
	if (r == 0) {
		struct target t = {.a = a, .s = &s};
		/* parity levels: prime in full stripes, up to 64 MiB */
		uint64_t stripe = (uint64_t)data_disks(level, n) * chunk;
		if (!geom && (level == 5 || level == 6) && stripe <= (64u << 20))
			t.prime_req = (size_t)stripe;
		uint64_t size =
		    o->size < uraid_size(a) ? o->size : uraid_size(a) / (1u << 20) << 20;
		r = set_stripe_cache(o, a, &proto, err, errlen);
		na = r == 1;
		if (r == 0)
			r = run_target(o, &t, &proto, size, err, errlen);
		/* After the workloads: a journal that failed during them
		 * (array read-only) must not leave rows labelled with it. */
		if (r == 0 && cs >= 0)
			r = check_policy(a, ao.cs, proto.config, err, errlen);
		/* Simulated disks exist only in this process: the filesystem
		 * workloads go through bench_nbd.c instead of uraid attach,
		 * timed by the wall clock (so only in real time). */
		if (r == 0 && sim_fs)
			r = bw_fs_run_array(a, fswl, nf, &proto, add_cb, o, o->progress, o->repeat,
			                    err, errlen);
		r = r == 1 ? 0 : r;
		int rs = bw_array_stop(&s, a);
		r = r ? r : rs;
	}
	if (r == 0 && na)
		; /* n/a rows already added for every workload */
	else if (r == 0 && nf && o->cfg.kind == BW_SIM && !sim_fs)
		fprintf(stderr,
		        "uraid: bench: note: %s: filesystem workloads on simulated disks are "
		        "timed by the wall clock: they need --time-scale 1, skipped\n",
		        proto.config);
	else if (r == 0 && nf && o->cfg.kind == BW_MEM)
		fprintf(stderr,
		        "uraid: bench: note: %s: filesystem workloads need member files "
		        "(--members-dir), skipped\n",
		        proto.config);
	else if (sim_fs)
		; /* ran above, on the open array */
	else if (r == 0 && nf) {
		const char *paths[BW_MAX_MEMBERS + 1];
		char name[32];
		for (int i = 0; i < n; i++)
			paths[i] = s.paths[i];
		int np = n;
		if (ao.cs == BW_CS_JWT || ao.cs == BW_CS_JWB)
			paths[np++] = o->journal; /* assembled with the members */
		snprintf(name, sizeof(name), "bench%d", (int)getpid());
		if (proto.stripe_cache >= 0)
			fprintf(stderr,
			        "uraid: bench: note: %s: the filesystem workloads run through "
			        "uraid attach (its own daemon), with that daemon's stripe cache\n",
			        proto.config);
		r = bw_fs_run(paths, np, name, ao.cs, fswl, nf, &proto, add_cb, o, o->progress,
		              o->repeat, err, errlen);
	}
	bw_set_free(&s);
	return r;
}

int sweep_run_baseline(struct sweep *o, char *err, size_t errlen)
{
	struct bw_set s;
	int r = bw_set_make(&s, &o->cfg, 1, o->size + (4u << 20), err, errlen);
	if (r < 0)
		return r;
	struct member *m = NULL;
	if ((r = bw_member_open(&s, 0, &m, err, errlen)) == 0) {
		struct target t = {.m = m, .s = &s};
		struct bw_result proto;
		memset(&proto, 0, sizeof(proto));
		proto.level = -2;
		proto.stripe_cache = -1;
		proto.members = 1;
		snprintf(proto.config, sizeof(proto.config), "baseline");
		snprintf(proto.layout, sizeof(proto.layout), "-");
		r = run_target(o, &t, &proto, o->size, err, errlen);
		member_close(m);
		memset(s.open, 0, sizeof(s.open));
	}
	bw_set_free(&s);
	return r;
}
