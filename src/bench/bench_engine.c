/* uraid bench engine (issue #4): the array engine against the raw speed of
 * its own members, in one run on pre-faulted member files (/dev/shm by
 * default). First the members alone through member_ioq (the same 1 MiB / 4 KiB
 * patterns, all members in parallel), then per level: sequential write and
 * read (1 MiB requests, 8 in flight), 4 KiB random writes (8 in flight) and
 * the rebuild of one member with the array idle. Every figure is set against
 * what the members could do for it (see ref_* below) as a ratio. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_engine_int.h"
#include "bench/bench_util.h"
#include "bench/bench_workloads.h"
#include "sim/member_sim.h"
#include "cli/cli.h"
#include "util/errmsg.h"

#define MiB (1024.0 * 1024.0)

struct raw {
	double seq_write, seq_read; /* aggregate MB/s, all members */
	double one_write;           /* one member alone, MB/s */
	double rand_mixed;          /* aggregate 4 KiB IOPS, half reads, half writes */
	double rand_write;          /* aggregate 4 KiB write IOPS */
};

/* The members through member_ioq: `nm` members, qd requests of `req` bytes
 * per member per batch; sequential over the whole member, or `ops` random
 * requests per member (read_pct percent reads). Returns MB/s or IOPS. */
static int raw_run(struct bw_set *s, int nm, size_t req, int qd, bool random, int read_pct,
                   bool write, uint64_t ops, double *out, char *err, size_t errlen)
{
	struct member *m[BW_MAX_MEMBERS] = {0};
	struct member_ioq *q = NULL;
	int n = nm * qd, r = 0;
	struct member_io *io = calloc((size_t)n, sizeof(*io));
	void **buf = calloc((size_t)n, sizeof(*buf));
	int opened = 0;
	if (!io || !buf)
		r = -ENOMEM;
	for (int i = 0; i < n && r == 0; i++)
		if (!(buf[i] = bench_alloc(req)))
			r = -ENOMEM;
	while (r == 0 && opened < nm) {
		r = bw_member_open(s, opened, &m[opened], err, errlen);
		if (r == 0)
			opened++;
	}
	if (r == 0)
		r = member_ioq_open((unsigned)n, &q);
	uint64_t rng = 42, per = random ? ops : s->bytes / req, done = 0;
	uint64_t t0 = bench_now_ns();
	for (uint64_t b = 0; r == 0 && b < per; b += (uint64_t)qd) {
		int k = 0;
		for (int mi = 0; mi < nm; mi++)
			for (int d = 0; d < qd && b + (uint64_t)d < per; d++, k++) {
				uint64_t slot =
				    random ? bw_rand(&rng) % (s->bytes / req) : b + (uint64_t)d;
				bool wr = random ? (int)(bw_rand(&rng) % 100) >= read_pct : write;
				io[k] =
				    (struct member_io){.m = m[mi],
				                       .op = wr ? MEMBER_OP_WRITE : MEMBER_OP_READ,
				                       .buf = buf[k],
				                       .len = req,
				                       .off = slot * req};
			}
		r = member_ioq_run(q, io, k);
		done += (uint64_t)k;
	}
	double secs = (double)(bench_now_ns() - t0) / 1e9;
	if (r == 0)
		*out = random ? (double)done / secs : (double)done * (double)req / 1e6 / secs;
	else
		errmsg(err, errlen, r, "raw member I/O failed");
	if (q)
		member_ioq_close(q);
	for (int i = 0; i < opened; i++)
		member_close(m[i]);
	memset(s->open, 0, sizeof(s->open));
	for (int i = 0; buf && i < n; i++)
		free(buf[i]);
	free(buf);
	free(io);
	return r;
}

/* The members' best: each figure at 1 request per member and at o->qd per
 * member (on tmpfs, io_uring hands buffered requests to worker threads, and
 * many in flight on 2 CPUs can be slower than few), the higher one kept. */
static int raw_best(struct bw_set *s, int nm, size_t req, const struct eng_opts *o, bool random,
                    int read_pct, bool write, uint64_t ops, double *out, char *err, size_t errlen)
{
	double a = 0, b = 0;
	int r = raw_run(s, nm, req, 1, random, read_pct, write, ops, &a, err, errlen);
	if (r == 0)
		r = raw_run(s, nm, req, o->qd, random, read_pct, write, ops, &b, err, errlen);
	*out = a > b ? a : b;
	return r;
}

static int raw_all(struct bw_set *s, const struct eng_opts *o, struct raw *rw, char *err,
                   size_t errlen)
{
	int n = o->members, r;
	size_t mb = 1u << 20;
	uint64_t ops = o->rand_ops / (uint64_t)n;
	double warm;
	/* Warm-up: two passes over every member and the spare (page cache,
	 * io_uring setup). Twice, because the kernel moves a page-cache page
	 * to its active list on the second access, which costs a write to it
	 * then about a third more: the spare, rebuilt later, would otherwise
	 * pay that where the members measured below have paid it already. */
	if ((r = raw_run(s, n + 1, mb, o->qd, false, 0, true, 0, &warm, err, errlen)) ||
	    (r = raw_run(s, n + 1, mb, o->qd, false, 0, true, 0, &warm, err, errlen)) ||
	    (r = raw_best(s, n, mb, o, false, 0, true, 0, &rw->seq_write, err, errlen)) ||
	    (r = raw_best(s, n, mb, o, false, 0, false, 0, &rw->seq_read, err, errlen)) ||
	    (r = raw_best(s, 1, mb, o, false, 0, true, 0, &rw->one_write, err, errlen)) ||
	    (r = raw_best(s, n, 4096, o, true, 50, false, ops, &rw->rand_mixed, err, errlen)) ||
	    (r = raw_best(s, n, 4096, o, true, 0, true, ops, &rw->rand_write, err, errlen)))
		return r;
	return 0;
}

/* Member bytes written per array byte written sequentially. */
static double write_factor(int level, int n)
{
	switch (level) {
	case 1: return n;
	case 5: return (double)n / (n - 1);
	case 6: return (double)n / (n - 2);
	case 10: return 2; /* near=2, the default layout */
	default: return 1;
	}
}

/* What the members allow for 4 KiB random writes: raid5/6 read-modify-write
 * costs 2 reads + 2 writes (raid6: 3 + 3) per request, mirrors one write per
 * copy. */
static double rand_ref(int level, int n, const struct raw *rw)
{
	switch (level) {
	case 1: return rw->rand_write / n;
	case 5: return rw->rand_mixed / 4;
	case 6: return rw->rand_mixed / 6;
	case 10: return rw->rand_write / 2;
	default: return rw->rand_write;
	}
}

static void put_row(struct row *rows, int *nrows, int level, const char *wl, double v,
                    const char *unit, double ref)
{
	rows[*nrows] = (struct row){level, wl, v, unit, ref > 0 ? v / ref : 0, 0};
	(*nrows)++;
}

int beng_seq_job(struct bw_set *s, struct uraid_array *a, const struct eng_opts *o, bool write,
                 uint64_t span, double *mbs, char *err, size_t errlen)
{
	struct bw_job j;
	memset(&j, 0, sizeof(j));
	j.a = a;
	j.set = s;
	j.threads = o->qd;
	j.req = 1u << 20;
	j.span = span;
	j.write = write;
	j.verify = !write;
	j.seed = 1;
	int r = bw_run(&j, 1);
	if (r == 0 && write)
		r = uraid_flush(a);
	uint64_t end = bench_now_ns();
	if (r < 0)
		return errmsg(err, errlen, r, "array %s failed", write ? "write" : "read");
	if (atomic_load(&j.bad_stamps))
		return errmsg(err, errlen, -EIO,
		              "read back %llu blocks that are not what was written",
		              (unsigned long long)atomic_load(&j.bad_stamps));
	*mbs = (double)atomic_load(&j.done_bytes) / 1e6 / ((double)(end - j.start_ns) / 1e9);
	return 0;
}

int beng_rand_job(struct bw_set *s, struct uraid_array *a, const struct eng_opts *o, uint64_t span,
                  double *acked, double *flushed, char *err, size_t errlen)
{
	struct bw_job j;
	memset(&j, 0, sizeof(j));
	j.a = a;
	j.set = s;
	j.threads = o->qd;
	j.req = 4096;
	j.span = span;
	j.write = j.random = true;
	j.ops = o->rand_ops;
	j.seed = 7;
	int r = bw_run(&j, 1);
	if (r < 0)
		return errmsg(err, errlen, r, "4 KiB random writes failed");
	double ops = (double)atomic_load(&j.done_ops);
	if (acked)
		*acked = ops / ((double)(atomic_load(&j.end_ns) - j.start_ns) / 1e9);
	if (flushed) {
		/* write-back journal, stripe cache: what was acknowledged
		 * reaches the members here */
		if ((r = uraid_flush(a)) < 0)
			return errmsg(err, errlen, r, "flush after 4 KiB random writes failed");
		*flushed = ops / ((double)(bench_now_ns() - j.start_ns) / 1e9);
	}
	return 0;
}

/* Rebuild: fail slot 0, replace it with the spare (member n), array idle;
 * rate = member data bytes / time, divided by `scale` (modelled disks run
 * that many times faster than the model), ratio against `one_write`
 * (measured the same way). Afterwards slot 1 is failed too and the whole
 * array read back: slot 0 serves (raid1, raid10 n2) or rebuilds (raid5/6)
 * its part of every read, and the stamps are checked, so the rebuilt member
 * must hold the data. */
static int rebuild_run(struct bw_set *s, const struct eng_opts *o, struct uraid_array *a, int level,
                       uint64_t span, double one_write, double scale, struct row *rows, int *nrows,
                       char *err, size_t errlen)
{
	struct member *spare = NULL;
	struct uraid_status st;
	char name[256];
	int r;
	uraid_status(a, &st);
	snprintf(name, sizeof(name), "%s", st.members[0].name);
	if ((r = uraid_fail(a, "#0", err, errlen)) < 0 ||
	    (r = uraid_remove(a, name, err, errlen)) < 0 ||
	    (r = bw_member_open(s, o->members, &spare, err, errlen)) < 0 ||
	    (r = uraid_add_member(a, spare, err, errlen)) < 0)
		return r;
	uint64_t t0 = bench_now_ns();
	while ((r = uraid_sync_step(a, 8192)) > 0)
		;
	double secs = (double)(bench_now_ns() - t0) / 1e9;
	uraid_status(a, &st);
	if (r < 0)
		return errmsg(err, errlen, r, "rebuild failed");
	if (st.degraded)
		return errmsg(err, errlen, -EIO, "array still degraded after the rebuild");
	put_row(rows, nrows, level, "rebuild", (double)st.dev_sectors * 512 / 1e6 / secs / scale,
	        "MB/s", one_write);
	double mbs;
	if ((r = uraid_fail(a, "#1", err, errlen)) == 0)
		r = beng_seq_job(s, a, o, false, span, &mbs, err, errlen);
	return r;
}

static int make_consistent(struct uraid_array *a, char *err, size_t errlen);

/* Reshape (raid5 only): a fresh raid5 of n-1 members, written, grown to n
 * by uraid_array_reshape_start with the array idle; rate = array bytes
 * moved / time, ratio against the same level's rebuild in this run
 * (`rebuild_mbs`). The array is read back after, stamps checked. */
static int reshape_run(struct bw_set *s, const struct eng_opts *o, double rebuild_mbs,
                       struct row *rows, int *nrows, char *err, size_t errlen)
{
	struct uraid_array *a = NULL;
	struct member *spare = NULL;
	int n = o->members, r;
	if (n < 4)
		return 0;
	if ((r = bw_array_create(s, n - 1, 5, 0, false, o->chunk, &a, err, errlen)) < 0)
		return r;
	r = make_consistent(a, err, errlen);
	uint64_t span = uraid_size(a) / (1u << 20) * (1u << 20);
	double mbs;
	if (r == 0)
		r = beng_seq_job(s, a, o, true, span, &mbs, err, errlen);
	if (r == 0 && (r = bw_member_open(s, n - 1, &spare, err, errlen)) == 0)
		r = uraid_add_member(a, spare, err, errlen);
	struct uraid_reshape_opts ro = {.raid_disks = n, .layout = -1};
	if (r == 0)
		r = uraid_array_reshape_start(a, &ro, err, errlen);
	uint64_t t0 = bench_now_ns();
	if (r == 0) {
		while ((r = uraid_sync_step(a, 1u << 20)) > 0)
			;
		if (r < 0)
			errmsg(err, errlen, r, "reshape failed");
	}
	double secs = (double)(bench_now_ns() - t0) / 1e9;
	struct uraid_status st;
	memset(&st, 0, sizeof(st));
	if (r == 0 && (uraid_status(a, &st), st.reshape || st.raid_disks != n))
		r = errmsg(err, errlen, -EIO, "array not reshaped to %d members", n);
	if (r == 0) {
		put_row(rows, nrows, 5, "reshape", (double)span / 1e6 / secs, "MB/s", rebuild_mbs);
		r = beng_seq_job(s, a, o, false, span, &mbs, err, errlen);
	}
	int rs = bw_array_stop(s, a);
	return r ? r : rs;
}

/* Rows as --json prints them, or as a table naming `ref` as reference. */
static void print_rows(const struct row *rows, int n, bool json, const char *ref)
{
	if (json) {
		printf("[");
		for (int i = 0; i < n; i++)
			printf("%s\n  {\"level\": %d, \"workload\": \"%s\", \"value\": %.1f, "
			       "\"unit\": \"%s\", \"ratio\": %.3f}",
			       i ? "," : "", rows[i].level, rows[i].workload, rows[i].value,
			       rows[i].unit, rows[i].ratio);
		printf("\n]\n");
		return;
	}
	printf("%-7s %-12s %12s %-5s %7s  %s\n", "level", "workload", "value", "unit", "ratio",
	       "reference");
	for (int i = 0; i < n; i++)
		printf("raid%-3d %-12s %12.1f %-5s %7.2f  %s\n", rows[i].level, rows[i].workload,
		       rows[i].value, rows[i].unit, rows[i].ratio, ref);
}

/* The bench's arrays are created clean (as with --assume-clean) over
 * whatever the members held: the pre-faulting pattern, the previous level's
 * array. Parity and copies are made right here, untimed, as md's initial
 * resync would make them: a read-modify-write keeps a wrong parity wrong,
 * and the rebuild and the degraded read-back below would turn it into wrong
 * data (RAID5 of 5 with 1 MiB chunks: every 1 MiB write is one chunk). */
static int make_consistent(struct uraid_array *a, char *err, size_t errlen)
{
	int r = uraid_sync_action(a, URAID_SYNC_REPAIR, err, errlen);
	if (r == 0)
		while ((r = uraid_sync_step(a, 8192)) > 0)
			;
	return r < 0 ? errmsg(err, errlen, r, "initial repair failed") : 0;
}

/* --sim without --journal: rebuild onto a modelled disk, against one
 * modelled member written alone (the same profile, time scale and request
 * pattern as the raw figures above: 1 MiB sequential, best of 1 and qd in
 * flight). Figures in model MB/s. */
static int sim_rebuild(struct bw_set *s, const struct eng_opts *o, double scale, double *one,
                       struct row *rows, int *nrows, char *err, size_t errlen)
{
	int r = raw_best(s, 1, 1u << 20, o, false, 0, true, 0, one, err, errlen);
	if (r < 0)
		return r;
	*one /= scale;
	for (int i = 0; r == 0 && i < o->nlevels; i++) {
		if (o->levels[i] == 0)
			continue;
		struct uraid_array *a = NULL;
		if ((r = bw_array_create(s, o->members, o->levels[i], 0, false, o->chunk, &a, err,
		                         errlen)) < 0)
			return r;
		if ((r = make_consistent(a, err, errlen)) < 0) {
			bw_array_stop(s, a);
			return r;
		}
		uint64_t span = uraid_size(a) / (1u << 20) * (1u << 20);
		double wmbs;
		r = beng_seq_job(s, a, o, true, span, &wmbs, err,
		                 errlen); /* stamps the read-back checks */
		if (r == 0)
			r = rebuild_run(s, o, a, o->levels[i], span, *one, scale, rows, nrows, err,
			                errlen);
		int rs = bw_array_stop(s, a);
		r = r ? r : rs;
	}
	return r;
}

/* Discard (issue #17): the whole array discarded at once on a fresh
 * healthy array (whole stripes: every member punched, parity too), in MB/s
 * of array space against the level's seqwrite; then an initial resync of
 * the same array timed, which create --discard saves (ratio: resync speed
 * over discard speed). */
static int discard_rows(struct bw_set *s, const struct eng_opts *o, int level, double wmbs,
                        struct row *rows, int *nrows, char *err, size_t errlen)
{
	struct uraid_array *a = NULL;
	int r = bw_array_create(s, o->members, level, 0, false, o->chunk, &a, err, errlen);
	if (r < 0)
		return r;
	uint64_t size = uraid_size(a), t0 = bench_now_ns();
	r = uraid_discard(a, 0, size);
	if (r == 0)
		r = uraid_flush(a);
	double dsecs = (double)(bench_now_ns() - t0) / 1e9, dmbs = (double)size / 1e6 / dsecs;
	if (r < 0) {
		bw_array_stop(s, a);
		return errmsg(err, errlen, r, "discard failed");
	}
	put_row(rows, nrows, level, "discard", dmbs, "MB/s", wmbs);
	if (level != 0) {
		t0 = bench_now_ns();
		/* a repair pass: what make_consistent runs as the initial resync */
		r = uraid_sync_action(a, URAID_SYNC_REPAIR, err, errlen);
		if (r == 0)
			while ((r = uraid_sync_step(a, 8192)) > 0)
				;
		double rsecs = (double)(bench_now_ns() - t0) / 1e9;
		if (r == 0)
			put_row(rows, nrows, level, "create+resync", (double)size / 1e6 / rsecs,
			        "MB/s", dmbs);
	}
	int rs = bw_array_stop(s, a);
	return r < 0 ? errmsg(err, errlen, r, "resync failed") : rs;
}

static int level_run(struct bw_set *s, const struct eng_opts *o, int level, const struct raw *rw,
                     struct row *rows, int *nrows, char *err, size_t errlen)
{
	struct uraid_array *a = NULL;
	int n = o->members, r;
	if ((r = bw_array_create(s, n, level, 0, false, o->chunk, &a, err, errlen)) < 0)
		return r;
	if (level != 0 && (r = make_consistent(a, err, errlen)) < 0) {
		bw_array_stop(s, a);
		return r;
	}
	uint64_t span = uraid_size(a) / (1u << 20) * (1u << 20);
	double wmbs = 0, rmbs = 0, warm;
	/* Warm-up: a sixteenth of the array, not recorded. */
	r = beng_seq_job(s, a, o, true, span / 16 > (1u << 20) ? span / 16 : (1u << 20), &warm, err,
	                 errlen);
	if (r == 0)
		r = beng_seq_job(s, a, o, true, span, &wmbs, err, errlen);
	if (r == 0)
		r = beng_seq_job(s, a, o, false, span, &rmbs, err, errlen);
	if (r == 0) {
		put_row(rows, nrows, level, "seqwrite", wmbs, "MB/s",
		        rw->seq_write / write_factor(level, n));
		put_row(rows, nrows, level, "seqread", rmbs, "MB/s", rw->seq_read);
		double iops;
		r = beng_rand_job(s, a, o, span, &iops, NULL, err, errlen);
		if (r == 0)
			put_row(rows, nrows, level, "randwrite4k", iops, "IOPS",
			        rand_ref(level, n, rw));
	}
	if (r == 0 && level != 0)
		r = rebuild_run(s, o, a, level, span, rw->one_write, 1, rows, nrows, err, errlen);
	int rs = bw_array_stop(s, a);
	r = r ? r : rs;
	int ceiling_row = *nrows - 1;
	if (r == 0)
		r = discard_rows(s, o, level, wmbs, rows, nrows, err, errlen);
	/* On members in memory the CPUs set the rebuild's pace: the same
	 * copies and XOR without an engine show how close it comes. */
	if (r == 0 && level != 0) {
		int nsrc = level == 6 ? n - 2 : level == 5 || level == 4 ? n - 1 : 1;
		r = beng_rebuild_ceiling(s, o, nsrc, &rows[ceiling_row].ceiling, err, errlen);
	}
	if (r == 0 && level == 5)
		r = reshape_run(s, o, rows[*nrows - 1].value, rows, nrows, err, errlen);
	return r;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: uraid bench engine [--members-dir DIR] [--members N] [--size S]\n"
	        "                          [--chunk S] [--qd N] [--rand-ops N] [--levels L,..]\n"
	        "                          [--quick] [--json] [--bitmap [--bitmap-chunk S]]\n"
	        "                          [--journal DEV [--journal-mode wt|wb|all]\n"
	        "                           [--journal-size S]]\n"
	        "  members: N files of S bytes each (default 5 x 256M) in DIR (default /dev/shm),\n"
	        "  plus one spare for the rebuild; chunk default 256K (RAID5 on 5 members:\n"
	        "  1 MiB requests are full stripes). --json: rows {level, workload, value,\n"
	        "  unit, ratio} on stdout. --journal: 4 KiB random writes to raid5 (or the\n"
	        "  raid5/6 of --levels) without a journal, with md's write journal on DEV in\n"
	        "  write-through and write-back (default all three; 10000 writes): IOPS until\n"
	        "  the last write is acknowledged, and until the flush after it completed.\n"
	        "  --sim PROFILE [--time-scale N]: with --journal, modelled member disks\n"
	        "  (uraid bench sweep's profiles) running N times faster than the model\n"
	        "  (default 20, 2000 writes); the journal stays a file. --sim alone: only\n"
	        "  the rebuild of --levels (not 0) onto a modelled disk, against one modelled\n"
	        "  member written alone (default --time-scale 4). --bitmap: instead,\n"
	        "  seqwrite and randwrite4k of levels 1/5/6/10 without and with an internal\n"
	        "  write-intent bitmap (chunk --bitmap-chunk, default mdadm's), ratio = with /\n"
	        "  without.\n"
	        "  --nbd: raid5 on N nbdkit memory servers (Unix sockets) against the same\n"
	        "  array on files in DIR: seqwrite 1 MiB and randwrite4k, ratio = NBD / local;\n"
	        "  and each member set alone (no RAID: 4 KiB reads and writes, 1 MiB writes,\n"
	        "  the same concurrency), the bound that implies for the array and the\n"
	        "  array's figure against it.\n");
}

static int parse_levels(const char *s, struct eng_opts *o)
{
	o->nlevels = 0;
	for (const char *p = s; *p;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || (v != 0 && v != 1 && v != 5 && v != 6 && v != 10) ||
		    o->nlevels >= 8)
			return -EINVAL;
		o->levels[o->nlevels++] = (int)v;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -EINVAL;
	}
	return o->nlevels ? 0 : -EINVAL;
}

int bench_engine(int argc, char **argv)
{
	struct eng_opts o = {.dir = "/dev/shm",
	                     .members = 5,
	                     .member_bytes = 256u << 20,
	                     .chunk = 256u << 10,
	                     .qd = 8,
	                     .rand_ops = 40000,
	                     .levels = {0, 1, 5, 6, 10},
	                     .nlevels = 5};
	static const struct option lo[] = {{"members-dir", 1, 0, 'd'},
	                                   {"members", 1, 0, 'n'},
	                                   {"size", 1, 0, 's'},
	                                   {"chunk", 1, 0, 'c'},
	                                   {"qd", 1, 0, 'q'},
	                                   {"rand-ops", 1, 0, 'r'},
	                                   {"levels", 1, 0, 'l'},
	                                   {"quick", 0, 0, 'Q'},
	                                   {"json", 0, 0, 'j'},
	                                   {"journal", 1, 0, 'J'},
	                                   {"journal-mode", 1, 0, 'M'},
	                                   {"journal-size", 1, 0, 'S'},
	                                   {"sim", 1, 0, 'm'},
	                                   {"time-scale", 1, 0, 't'},
	                                   {"bitmap", 0, 0, 'b'},
	                                   {"bitmap-chunk", 1, 0, 'B'},
	                                   {"help", 0, 0, 'h'},
	                                   {"nbd", 0, 0, 'N'},
	                                   {0, 0, 0, 0}};
	int c;
	unsigned long long v;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o.dir = optarg; break;
		case 'n':
			o.members = atoi(optarg);
			if (o.members < 4 || o.members > BW_MAX_MEMBERS - 1)
				return cli_error("bench", "--members %s: must be 4..%d", optarg,
				                 BW_MAX_MEMBERS - 1);
			break;
		case 's':
		case 'c':
			if (cli_parse_size(optarg, 1, &v) < 0 || v == 0 || v % 4096)
				return cli_error("bench", "%s %s: not a size in 4 KiB multiples",
				                 c == 's' ? "--size" : "--chunk", optarg);
			if (c == 's')
				o.member_bytes = v;
			else
				o.chunk = (uint32_t)v;
			break;
		case 'q':
			o.qd = atoi(optarg);
			if (o.qd < 1 || o.qd > 64)
				return cli_error("bench", "--qd %s: must be 1..64", optarg);
			break;
		case 'r':
			o.rand_ops = strtoull(optarg, NULL, 10);
			o.rand_ops_set = true;
			if (o.rand_ops < 100)
				return cli_error("bench", "--rand-ops %s: at least 100", optarg);
			break;
		case 'l':
			if (parse_levels(optarg, &o) < 0)
				return cli_error("bench", "--levels %s: a list of 0,1,5,6,10",
				                 optarg);
			break;
		case 'Q':
			o.member_bytes = 16u << 20;
			o.rand_ops = 8000;
			break;
		case 'j': o.json = true; break;
		case 'J': o.journal = optarg; break;
		case 'M':
			if (!strcmp(optarg, "wt") || !strcmp(optarg, "write-through"))
				o.journal_modes = 1 | 2;
			else if (!strcmp(optarg, "wb") || !strcmp(optarg, "write-back"))
				o.journal_modes = 1 | 4;
			else if (!strcmp(optarg, "all"))
				o.journal_modes = 7;
			else
				return cli_error("bench", "--journal-mode %s: wt, wb or all",
				                 optarg);
			break;
		case 'S':
			if (cli_parse_size(optarg, 1, &v) < 0 || v < (4u << 20) || v % 4096)
				return cli_error(
				    "bench", "--journal-size %s: at least 4M, 4K multiple", optarg);
			o.journal_bytes = v;
			break;
		case 'm': o.sim = optarg; break;
		case 't':
			o.time_scale = atof(optarg);
			if (!(o.time_scale > 0))
				return cli_error("bench", "--time-scale %s: must be > 0", optarg);
			break;
		case 'b': o.bitmap = true; break;
		case 'N': o.nbd = true; break;
		case 'B':
			if (cli_parse_size(optarg, 1, &v) < 0 || v < 4096 || (v & (v - 1)) ||
			    v > (1ull << 31))
				return cli_error("bench",
				                 "--bitmap-chunk %s: a power of two from 4K to 2G",
				                 optarg);
			o.bitmap_chunk = (uint32_t)v;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc)
		return cli_error("bench", "engine: unexpected argument '%s'", argv[optind]);
	if (o.chunk & (o.chunk - 1) || o.chunk < 4096)
		return cli_error("bench", "--chunk: must be a power of two, at least 4K");
	if (o.member_bytes < 4 * (uint64_t)o.chunk + (4u << 20))
		return cli_error("bench", "--size: members too small for the chunk size");
	if (o.bitmap_chunk && !o.bitmap)
		return cli_error("bench", "--bitmap-chunk needs --bitmap");
	if (o.bitmap && o.journal)
		return cli_error("bench", "--bitmap and --journal are separate runs (md allows a "
		                          "journal or a bitmap, not both)");

	char err[512] = "", cpu[128], cmd[1024] = "";
	if (o.nbd) {
		if (o.bitmap || o.journal || o.sim)
			return cli_error("bench", "engine: --nbd is a run of its own");
		for (int i = 0; i < argc; i++) {
			size_t l = strlen(cmd);
			snprintf(cmd + l, sizeof(cmd) - l, "%s%s", i ? " " : "uraid bench ",
			         argv[i]);
		}
		return beng_nbd_compare(&o, cmd);
	}
	struct bw_members_cfg cfg = {.kind = BW_FILES, .dir = o.dir};
	if (o.sim) {
		/* Modelled disks in real time (scaled), e.g. hard disks behind a
		 * journal on /dev/shm: where md's write-back journal pays. */
		if (o.bitmap)
			return cli_error("bench",
			                 "engine: --sim goes with --journal, or alone (rebuild)");
		const struct sim_profile *p = sim_profile_find(o.sim);
		if (!p)
			return cli_error("bench", "--sim %s: unknown disk profile", o.sim);
		cfg.kind = BW_SIM;
		cfg.prof = *p;
		/* Rebuild alone: slow enough that the CPU work of a RAID6
		 * rebuild keeps up with the scaled disks on this class of machine. */
		cfg.time_scale = o.time_scale > 0 ? o.time_scale : o.journal ? 20 : 4;
		if (!o.rand_ops_set)
			o.rand_ops = 2000;
		o.rand_ops_set = true;
	}
	struct bw_set s;
	int r = bw_set_make(&s, &cfg, o.members + 1, o.member_bytes, err, sizeof(err));
	if (r < 0)
		return cli_error("bench", "engine: %s", err);
	if (o.journal) {
		for (int i = 0; i < argc; i++) {
			size_t l = strlen(cmd);
			snprintf(cmd + l, sizeof(cmd) - l, "%s%s", i ? " " : "uraid bench ",
			         argv[i]);
		}
		if (!o.journal_modes)
			o.journal_modes = 7;
		if (!o.journal_bytes)
			o.journal_bytes = 512u << 20;
		if (!o.rand_ops_set)
			o.rand_ops = 10000;
		r = beng_journal_compare(&s, &o, cmd);
		bw_set_free(&s);
		return r;
	}
	struct raw rw;
	struct row rows[64];
	double without[64] = {0}, median[64] = {0};
	int nrows = 0;
	if (o.sim) {
		double one = 0;
		r = sim_rebuild(&s, &o, cfg.time_scale, &one, rows, &nrows, err, sizeof(err));
		bw_set_free(&s);
		if (r < 0)
			return cli_error("bench", "engine --sim: %s", err);
		if (!o.json)
			printf("# rebuild on modelled disks: %d members x %lluM of %s, chunk "
			       "%lluK, %gx "
			       "faster than the model; figures in model MB/s\n"
			       "one member written alone (1 MiB sequential): %.1f MB/s\n",
			       o.members, (unsigned long long)(o.member_bytes >> 20), o.sim,
			       (unsigned long long)(o.chunk >> 10), cfg.time_scale, one);
		print_rows(rows, nrows, o.json, "raw one-member write (same model)");
		return 0;
	}
	r = o.bitmap ? 0 : raw_all(&s, &o, &rw, err, sizeof(err));
	for (int i = 0; r == 0 && i < o.nlevels; i++)
		if (!o.bitmap)
			r = level_run(&s, &o, o.levels[i], &rw, rows, &nrows, err, sizeof(err));
		else if (o.levels[i] != 0)
			r = beng_bitmap_run(&s, &o, o.levels[i], rows, &nrows, without, median, err,
			                    sizeof(err));
	bw_set_free(&s);
	if (r < 0)
		return cli_error("bench", "engine: %s", err);

	const struct uraid_parity *pp = uraid_parity_get(NULL);
	bench_cpu_model(cpu, sizeof(cpu));
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(cmd);
		snprintf(cmd + l, sizeof(cmd) - l, "%s%s", i ? " " : "uraid bench ", argv[i]);
	}
	if (o.json) {
		print_rows(rows, nrows, true, NULL);
		return 0;
	}
	char lb[32], cb[32];
	printf("# %s\n# %s, %d CPUs, parity %s; %d members x %s in %s, chunk %s, %d in flight\n",
	       cmd, cpu, bench_cpus(), pp ? pp->name : "none", o.members,
	       bench_size_label(o.member_bytes, lb, sizeof(lb)), o.dir,
	       bench_size_label(o.chunk, cb, sizeof(cb)), o.qd);
	if (o.bitmap) {
		char bc[32];
		printf("internal write-intent bitmap, chunk %s; %d passes each (ABBA); values and "
		       "ratio: best pass; median: of neighbouring passes' with/without\n",
		       o.bitmap_chunk ? bench_size_label(o.bitmap_chunk, bc, sizeof(bc))
		                      : "mdadm's default",
		       BM_PAIRS);
		printf("%-7s %-15s %12s %12s %-5s %7s %7s\n", "level", "workload", "without",
		       "with", "unit", "ratio", "median");
		for (int i = 0; i < nrows; i++)
			printf("raid%-3d %-15s %12.1f %12.1f %-5s %7.3f %7.3f\n", rows[i].level,
			       rows[i].workload, without[i], rows[i].value, rows[i].unit,
			       rows[i].ratio, median[i]);
		return 0;
	}
	printf("raw members (member_ioq): seq write %.0f MB/s, seq read %.0f MB/s (all %d), one "
	       "member write %.0f MB/s,\n  4K random %.0f IOPS (50%% reads), %.0f IOPS (writes)\n",
	       rw.seq_write, rw.seq_read, o.members, rw.one_write, rw.rand_mixed, rw.rand_write);
	printf("%-7s %-12s %12s %-5s %7s  %s\n", "level", "workload", "value", "unit", "ratio",
	       "reference");
	for (int i = 0; i < nrows; i++) {
		const char *ref =
		    !strcmp(rows[i].workload, "seqwrite")
		        ? "raw aggregate write / member bytes per array byte"
		    : !strcmp(rows[i].workload, "seqread") ? "raw aggregate read"
		    : !strcmp(rows[i].workload, "rebuild") ? "raw one-member write"
		    : !strcmp(rows[i].workload, "reshape")
		        ? "this run's raid5 rebuild (MB/s of array data moved, n-1 -> n)"
		    : !strcmp(rows[i].workload, "discard") ? "the level's seqwrite"
		    : !strcmp(rows[i].workload, "create+resync")
		        ? "create --discard (discard)"
		        : "raw 4K IOPS / member I/Os per write";
		printf("raid%-3d %-12s %12.1f %-5s %7.2f  %s\n", rows[i].level, rows[i].workload,
		       rows[i].value, rows[i].unit, rows[i].ratio, ref);
		if (rows[i].ceiling > 0)
			printf("raid%-3d %-12s %12.1f %-5s %7.2f  ceiling: the same reads, XOR and "
			       "write, 2 threads, no engine\n",
			       rows[i].level, "  ceiling", rows[i].ceiling, "MB/s",
			       rows[i].value / rows[i].ceiling);
	}
	return 0;
}
