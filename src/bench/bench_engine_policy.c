/* uraid bench engine --journal / --bitmap / --nbd: what md's write journal
 * (in write-through and write-back) and an internal write-intent bitmap cost
 * or gain, each array measured against the same array without it; and what
 * NBD members cost against local ones: a raid5 on nbdkit memory servers (Unix
 * sockets, one process each, started and stopped here) against the same
 * array on files in --members-dir, passes in ABBA order, best of each side. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/bench_engine_int.h"
#include "bench/bench_util.h"
#include "cli/cli.h"
#include "util/errmsg.h"

static int journal_array(struct bw_set *s, const struct eng_opts *o, int level, int mode,
                         struct uraid_array **out, char *err, size_t errlen)
{
	struct member *ms[BW_MAX_MEMBERS + 1];
	int n = o->members;
	for (int i = 0; i < n; i++) {
		int r = bw_member_open(s, i, &ms[i], err, errlen);
		if (r < 0) {
			for (int j = 0; j < i; j++)
				member_close(ms[j]);
			return r;
		}
	}
	struct uraid_create_opts co;
	memset(&co, 0, sizeof(co));
	co.level = level;
	co.chunk_sectors = o->chunk / 512;
	co.raid_devices = n;
	co.assume_clean = true;
	snprintf(co.name, sizeof(co.name), "bench");
	int m = n;
	if (mode > 0) {
		int r = member_open_file(o->journal, MEMBER_CREATE, o->journal_bytes, &ms[m], err,
		                         errlen);
		if (r < 0) {
			for (int j = 0; j < n; j++)
				member_close(ms[j]);
			return r;
		}
		/* Pre-faulted like the members (tmpfs allocates pages on first
		 * write), and a journal left from an earlier run is wiped. */
		uint8_t *z = bench_alloc(4u << 20);
		if (z) {
			memset(z, 0, 4u << 20);
			for (uint64_t off = 0; off < ms[m]->size; off += 4u << 20)
				member_write(ms[m], z,
				             ms[m]->size - off < (4u << 20) ? ms[m]->size - off
				                                            : (4u << 20),
				             off, 0);
			free(z);
		}
		m++;
		co.write_journal = true;
	}
	int r = uraid_create_members(&co, ms, m, URAID_NO_SYNC_THREAD, out, err, errlen);
	memset(s->open, 0, sizeof(s->open));
	if (r == 0 && mode == 2)
		r = uraid_journal_mode(*out, URAID_JOURNAL_WB, err, errlen);
	return r;
}

int beng_journal_compare(struct bw_set *s, const struct eng_opts *o, const char *cmd)
{
	static const char *const names[] = {"no journal", "write-through", "write-back"};
	char err[512] = "";
	double ack[3] = {0}, all[3] = {0};
	int levels[8], nl = 0;
	for (int i = 0; i < o->nlevels; i++)
		if (o->levels[i] == 5 || o->levels[i] == 6)
			levels[nl++] = o->levels[i];
	if (!nl)
		levels[nl++] = 5;
	char lb[32], cb[32], jb[32];
	printf("# %s\n# %d members x %s in %s, chunk %s, journal %s (%s), %d in flight, %llu "
	       "random 4 KiB writes over the array\n",
	       cmd, o->members, bench_size_label(o->member_bytes, lb, sizeof(lb)),
	       o->sim ? o->sim : o->dir, bench_size_label(o->chunk, cb, sizeof(cb)), o->journal,
	       bench_size_label(o->journal_bytes, jb, sizeof(jb)), o->qd,
	       (unsigned long long)o->rand_ops);
	printf("%-7s %-14s %12s %12s %9s %9s\n", "level", "journal", "acked IOPS", "+flush IOPS",
	       "acked x", "+flush x");
	for (int li = 0; li < nl; li++) {
		for (int mode = 0; mode < 3; mode++) {
			if (!(o->journal_modes & (1 << mode)))
				continue;
			struct uraid_array *a = NULL;
			int r = journal_array(s, o, levels[li], mode, &a, err, sizeof(err));
			if (r < 0)
				return cli_error("bench", "engine --journal: %s", err);
			/* Wall clock (modelled members sleep in real time, the
			 * journal file is not modelled); the flush is where
			 * write-back sends its cache to the array. */
			r = beng_rand_job(s, a, o, uraid_size(a) / (1u << 20) * (1u << 20),
			                  &ack[mode], &all[mode], err, sizeof(err));
			int rs = uraid_stop(a);
			if (r < 0 || rs < 0)
				return cli_error("bench", "engine --journal: %s: %s", names[mode],
				                 r < 0 ? err : strerror(-rs));
			printf("raid%-3d %-14s %12.0f %12.0f %9.2f %9.2f\n", levels[li],
			       names[mode], ack[mode], all[mode],
			       ack[0] > 0 ? ack[mode] / ack[0] : 0,
			       all[0] > 0 ? all[mode] / all[0] : 0);
			fflush(stdout);
		}
	}
	return 0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* The bitmap's cost (--bitmap): the same array made again and again on
 * the same members, alternately without and with an internal bitmap
 * (BM_PAIRS times each, ABBA). On a shared machine other load only slows a
 * pass down, so each side's best is its least disturbed figure: ratio =
 * best with / best without; the median of neighbouring passes' ratios is
 * shown too (each pair saw about the same background load). */
int beng_bitmap_run(struct bw_set *s, const struct eng_opts *o, int level, struct row *rows,
                    int *nrows, double *without, double *median, char *err, size_t errlen)
{
	double v[2][2][BM_PAIRS]; /* [bitmap][seq, rand][pair] */
	for (int pass = 0; pass < 2 * BM_PAIRS; pass++) {
		/* ABBA order, so neither side always runs first */
		int pair = pass / 2, bm = (pass % 2) ^ (pair % 2);
		struct uraid_array *a = NULL;
		int r = bw_array_create(s, o->members, level, 0, false, o->chunk, &a, err, errlen);
		if (r < 0)
			return r;
		if (bm && (r = uraid_bitmap_add(a, o->bitmap_chunk, err, errlen)) < 0) {
			bw_array_stop(s, a);
			return r;
		}
		uint64_t span = uraid_size(a) / (1u << 20) * (1u << 20);
		double seq = 0, rnd = 0, warm;
		r = beng_seq_job(s, a, o, true, span / 16 > (1u << 20) ? span / 16 : (1u << 20),
		                 &warm, err, errlen);
		if (r == 0)
			r = beng_seq_job(s, a, o, true, span, &seq, err, errlen);
		if (r == 0)
			r = beng_rand_job(s, a, o, span, NULL, &rnd, err, errlen);
		int rs = bw_array_stop(s, a);
		if (r < 0 || rs < 0)
			return r < 0 ? r : errmsg(err, errlen, rs, "stopping the array failed");
		v[bm][0][pair] = seq;
		v[bm][1][pair] = rnd;
	}
	static const char *const names[2] = {"seqwrite+bm", "randwrite4k+bm"};
	static const char *const units[2] = {"MB/s", "IOPS"};
	for (int w = 0; w < 2; w++) {
		double ratio[BM_PAIRS], best[2] = {0, 0};
		for (int p = 0; p < BM_PAIRS; p++) {
			ratio[p] = v[0][w][p] > 0 ? v[1][w][p] / v[0][w][p] : 0;
			for (int bm = 0; bm < 2; bm++)
				if (v[bm][w][p] > best[bm])
					best[bm] = v[bm][w][p];
		}
		qsort(ratio, BM_PAIRS, sizeof(ratio[0]), cmp_double);
		rows[*nrows] = (struct row){
		    level, names[w], best[1], units[w], best[0] > 0 ? best[1] / best[0] : 0, 0};
		without[*nrows] = best[0];
		median[(*nrows)++] = ratio[BM_PAIRS / 2];
	}
	return 0;
}

#define NBD_PASSES 2

static pid_t start_server(const char *sock, uint64_t bytes)
{
	char size[32];
	snprintf(size, sizeof(size), "%llu", (unsigned long long)bytes);
	pid_t pid = fork();
	if (pid == 0) {
		int dn = open("/dev/null", O_RDWR);
		if (dn >= 0) {
			dup2(dn, 1);
			dup2(dn, 2);
		}
		execlp("nbdkit", "nbdkit", "-f", "-U", sock, "memory", size, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; pid > 0 && i < 300; i++) {
		struct stat sb;
		if (stat(sock, &sb) == 0)
			return pid;
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid)
			return -1;
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	return -1;
}

static uint64_t cpu_ns_now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

/* Per 4 KiB random write of a pass: the process's CPU ns, member reads and
 * writes (uraid_io_stats). */
struct rand_cost {
	double cpu_ns, reads, writes;
};

/* seqwrite MB/s, randwrite4k IOPS and what each of those writes cost. */
static int one_pass(struct bw_set *s, const struct eng_opts *o, double *seq, double *rnd,
                    struct rand_cost *cost, char *err, size_t errlen)
{
	struct uraid_array *a = NULL;
	int r = bw_array_create(s, o->members, 5, 0, false, o->chunk, &a, err, errlen);
	if (r < 0)
		return r;
	uint64_t span = uraid_size(a) / (1u << 20) * (1u << 20), warm_span = span / 16;
	double warm;
	if (warm_span < (1u << 20))
		warm_span = 1u << 20;
	r = beng_seq_job(s, a, o, true, warm_span, &warm, err, errlen);
	if (r == 0)
		r = beng_seq_job(s, a, o, true, span, seq, err, errlen);
	struct uraid_io_stats st0, st1;
	memset(&st0, 0, sizeof(st0));
	memset(&st1, 0, sizeof(st1));
	uraid_io_stats(a, &st0);
	uint64_t c0 = cpu_ns_now();
	if (r == 0)
		r = beng_rand_job(s, a, o, span, NULL, rnd, err, errlen);
	uint64_t c1 = cpu_ns_now();
	uraid_io_stats(a, &st1);
	double ops = (double)o->rand_ops;
	*cost = (struct rand_cost){(double)(c1 - c0) / ops,
	                           (double)(st1.member_reads - st0.member_reads) / ops,
	                           (double)(st1.member_writes - st0.member_writes) / ops};
	int rs = bw_array_stop(s, a);
	return r < 0 ? r : rs < 0 ? errmsg(err, errlen, rs, "stopping the array failed") : 0;
}

/* What the transport allows the array (t: the members alone): each 4 KiB
 * write takes its member reads and writes (c: as counted in the run; 2 + 2
 * for a raid5 read-modify-write) out of the members' request rates; a
 * full-stripe write puts data on n-1 of n members. */
static double bound_rand(const struct beng_transport *t, const struct rand_cost *c)
{
	double per = (t->rps[0] > 0 ? c->reads / t->rps[0] : 0) +
	             (t->rps[1] > 0 ? c->writes / t->rps[1] : 0);
	return per > 0 ? 1 / per : 0;
}

static double bound_seq(const struct beng_transport *t, int n)
{
	return t->mbs[2] * (n - 1) / n;
}

static double frac(double v, double of)
{
	return of > 0 ? v / of : 0;
}

/* 26000 -> "26.0k", 2729 -> "2729" */
static const char *short_num(double v, char *buf, size_t len)
{
	if (v >= 10000)
		snprintf(buf, len, "%.1fk", v / 1000);
	else
		snprintf(buf, len, "%.0f", v);
	return buf;
}

static void nbd_report(const struct eng_opts *o, const char *cmd, double v[2][2],
                       const struct rand_cost cost[2], const struct beng_transport tc[2])
{
	int n = o->members;
	double bnd[2][2]; /* [nbd][seq, rand] */
	for (int k = 0; k < 2; k++) {
		bnd[k][0] = bound_seq(&tc[k], n);
		bnd[k][1] = bound_rand(&tc[k], &cost[k]);
	}
	static const char *const tname[3] = {"read4k", "write4k", "stripe"};
	if (o->json) {
		static const char *const wl[2] = {"seqwrite", "randwrite4k"};
		static const char *const unit[2] = {"MB/s", "IOPS"};
		printf("[");
		for (int w = 0; w < 2; w++)
			printf("%s{\"level\":5,\"workload\":\"%s\",\"local\":%.1f,\"nbd\":%.1f,"
			       "\"unit\":\"%s\",\"ratio\":%.3f,\"local_bound\":%.1f,"
			       "\"nbd_bound\":%.1f,\"local_of_bound\":%.3f,\"nbd_of_bound\":%.3f%s",
			       w ? ",\n " : "", wl[w], v[0][w], v[1][w], unit[w],
			       frac(v[1][w], v[0][w]), bnd[0][w], bnd[1][w],
			       frac(v[0][w], bnd[0][w]), frac(v[1][w], bnd[1][w]), w ? "" : "}");
		printf(",\"local_cpu_us\":%.2f,\"nbd_cpu_us\":%.2f,\"local_member_requests\":%.2f,"
		       "\"nbd_member_requests\":%.2f}",
		       cost[0].cpu_ns / 1e3, cost[1].cpu_ns / 1e3, cost[0].reads + cost[0].writes,
		       cost[1].reads + cost[1].writes);
		for (int k = 0; k < 3; k++)
			printf(
			    ",\n {\"workload\":\"transport-%s\",\"unit\":\"req/s\",\"local\":%.1f,"
			    "\"nbd\":%.1f,\"local_mbs\":%.1f,\"nbd_mbs\":%.1f,"
			    "\"local_cpu_us\":%.2f,\"nbd_cpu_us\":%.2f,\"nbd_server_cpu_us\":%.2f}",
			    tname[k], tc[0].rps[k], tc[1].rps[k], tc[0].mbs[k], tc[1].mbs[k],
			    tc[0].cpu_ns[k] / 1e3, tc[1].cpu_ns[k] / 1e3, tc[1].srv_ns[k] / 1e3);
		printf("]\n");
		return;
	}
	printf("# %s\n# raid5, %d members x %llu MiB, chunk %u KiB, %d in flight; NBD: nbdkit "
	       "memory on Unix sockets; local: files in %s; best of %d passes (ABBA)\n",
	       cmd, n, (unsigned long long)(o->member_bytes >> 20), o->chunk >> 10, o->qd, o->dir,
	       NBD_PASSES);
	printf("%-7s %-12s %10s %10s %-5s %6s %11s %5s %11s %5s\n", "level", "workload", "local",
	       "nbd", "unit", "ratio", "local-bound", "of", "nbd-bound", "of");
	static const char *const wl[2] = {"seqwrite", "randwrite4k"};
	static const char *const unit[2] = {"MB/s", "IOPS"};
	for (int w = 0; w < 2; w++)
		printf("raid5   %-12s %10.1f %10.1f %-5s %6.3f %11.1f %5.2f %11.1f %5.2f\n", wl[w],
		       v[0][w], v[1][w], unit[w], frac(v[1][w], v[0][w]), bnd[0][w],
		       frac(v[0][w], bnd[0][w]), bnd[1][w], frac(v[1][w], bnd[1][w]));
	char a[32], b[32];
	printf("nbd randwrite4k %s = %.2f of the %s the transport allows (%.2f member reads + "
	       "%.2f writes per write, counted)\n",
	       short_num(v[1][1], a, sizeof(a)), frac(v[1][1], bnd[1][1]),
	       short_num(bnd[1][1], b, sizeof(b)), cost[1].reads, cost[1].writes);
	printf("nbd seqwrite %s MB/s = %.2f of the %s MB/s the transport allows (full-stripe "
	       "member writes x %d/%d data members)\n",
	       short_num(v[1][0], a, sizeof(a)), frac(v[1][0], bnd[1][0]),
	       short_num(bnd[1][0], b, sizeof(b)), n - 1, n);
	printf("\ntransport ceiling: the same members alone, no RAID, through the member layer "
	       "(4 KiB: %d threads x 2 in flight on two members; stripe: %d threads x one %u KiB\n"
	       "write to each of the %d members); bound: randwrite4k 1/(reads/read4k + "
	       "writes/write4k), seqwrite stripe MB/s x %d/%d;\n"
	       "cpu: us per request, of the client (the bench process) and of the servers (their "
	       "threads)\n",
	       o->qd, o->qd, o->chunk >> 10, n, n - 1, n);
	printf("%-8s %-8s %12s %10s %10s %10s\n", "members", "request", "req/s", "MB/s",
	       "client-cpu", "server-cpu");
	for (int k = 0; k < 2; k++)
		for (int t = 0; t < 3; t++) {
			printf("%-8s %-8s %12.1f %10.1f %10.2f", k ? "nbd" : "local", tname[t],
			       tc[k].rps[t], tc[k].mbs[t], tc[k].cpu_ns[t] / 1e3);
			if (k)
				printf(" %10.2f", tc[k].srv_ns[t] / 1e3);
			printf("\n");
		}
	double nreq = cost[1].reads + cost[1].writes;
	printf("client cpu per raid5 4 KiB write: local %.2f us, nbd %.2f us (%.2f us per member "
	       "request)\n",
	       cost[0].cpu_ns / 1e3, cost[1].cpu_ns / 1e3,
	       nreq > 0 ? cost[1].cpu_ns / 1e3 / nreq : 0);
	/* The CPUs' bound: client and server share this machine. */
	double per = cost[1].reads * (tc[1].cpu_ns[0] + tc[1].srv_ns[0]) +
	             cost[1].writes * (tc[1].cpu_ns[1] + tc[1].srv_ns[1]);
	if (per > 0 && tc[1].srv_ns[0] > 0)
		printf("cpu per raid5 4 KiB write over nbd, client + server at the ceiling's cost: "
		       "%.1f us: at most %s writes/s on %d CPUs\n",
		       per / 1e3, short_num(bench_cpus() * 1e9 / per, a, sizeof(a)), bench_cpus());
}

int beng_nbd_compare(const struct eng_opts *o, const char *cmd)
{
	char err[512] = "", dir[] = "/tmp/uraid-bench-nbd.XXXXXX";
	if (!mkdtemp(dir))
		return cli_error("bench", "engine --nbd: mkdtemp: %s", strerror(errno));
	struct bw_members_cfg cfg = {.kind = BW_FILES, .dir = o->dir};
	struct bw_set local, remote;
	memset(&remote, 0, sizeof(remote));
	pid_t pids[BW_MAX_MEMBERS] = {0};
	int rc = 0, n = o->members;
	int r = bw_set_make(&local, &cfg, n, o->member_bytes, err, sizeof(err));
	if (r < 0) {
		rmdir(dir);
		return cli_error("bench", "engine --nbd: %s", err);
	}
	/* The NBD set: the same number of members, named by their URIs. */
	remote.cfg = cfg;
	remote.bytes = o->member_bytes;
	for (int i = 0; i < n && rc == 0; i++) {
		char sock[200];
		snprintf(sock, sizeof(sock), "%s/m%d.sock", dir, i);
		pids[i] = start_server(sock, o->member_bytes);
		if (pids[i] <= 0)
			rc = cli_error("bench",
			               "engine --nbd: nbdkit memory on %s did not start "
			               "(is nbdkit installed?)",
			               sock);
		snprintf(remote.paths[i], sizeof(remote.paths[i]), "nbd+unix:///?socket=%s", sock);
		remote.n = i + 1;
	}
	double v[2][2] = {{0, 0}, {0, 0}}; /* [nbd][seq, rand], best */
	struct rand_cost cost[2];          /* [nbd] of the best randwrite4k pass */
	memset(cost, 0, sizeof(cost));
	struct beng_transport tc[2]; /* [nbd] best of the passes */
	memset(tc, 0, sizeof(tc));
	for (int pass = 0; rc == 0 && pass < 2 * NBD_PASSES; pass++) {
		int nbd = (pass % 2) ^ ((pass / 2) % 2); /* ABBA */
		double seq = 0, rnd = 0;
		struct rand_cost c;
		struct bw_set *set = nbd ? &remote : &local;
		struct beng_transport t;
		r = one_pass(set, o, &seq, &rnd, &c, err, sizeof(err));
		/* The same members alone, right after the array on them. */
		if (r == 0)
			r = beng_transport_ceiling(set, o, nbd ? pids : NULL, nbd ? n : 0, &t, err,
			                           sizeof(err));
		if (r < 0) {
			rc = cli_error("bench", "engine --nbd: %s: %s", nbd ? "NBD" : "local", err);
			break;
		}
		if (seq > v[nbd][0])
			v[nbd][0] = seq;
		if (rnd > v[nbd][1])
			v[nbd][1] = rnd, cost[nbd] = c;
		for (int k = 0; k < 3; k++)
			if (t.rps[k] > tc[nbd].rps[k]) {
				tc[nbd].rps[k] = t.rps[k];
				tc[nbd].mbs[k] = t.mbs[k];
				tc[nbd].cpu_ns[k] = t.cpu_ns[k];
				tc[nbd].srv_ns[k] = t.srv_ns[k];
			}
	}
	for (int i = 0; i < n; i++) {
		if (pids[i] > 0) {
			kill(pids[i], SIGTERM);
			waitpid(pids[i], NULL, 0);
		}
		char sock[200];
		snprintf(sock, sizeof(sock), "%s/m%d.sock", dir, i);
		unlink(sock);
	}
	rmdir(dir);
	bw_set_free(&local);
	if (rc)
		return rc;
	nbd_report(o, cmd, v, cost, tc);
	return 0;
}
