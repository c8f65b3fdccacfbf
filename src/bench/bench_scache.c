/* uraid bench stripe-cache: sequential writes of small requests (4 KiB,
 * 16 KiB, 64 KiB) to a raid4/5/6 array on member files, with the stripe
 * cache at several sizes (default 0, 256, 4096), in one run. For each: MB/s
 * (including the final flush) and the member requests the engine sent
 * (uraid_io_stats), so the member reads the cache avoids are counted, not
 * estimated. Members are pre-faulted files (/dev/shm by default); each
 * combination gets a fresh array. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "cli/cli.h"
#include "uraid.h"

struct sc_opts {
	const char *dir;
	int level, members;
	unsigned long long chunk, mib;
	unsigned caches[8];
	int ncaches;
	size_t reqs[8];
	int nreqs;
	int threads; /* --random: writers */
	bool random, json;
};

/* --random: writers share the span's request slots; slot i*mult mod n
 * (mult prime to n) visits every slot once in a scattered order without a
 * table. */
struct rw_job {
	struct uraid_array *a;
	const uint8_t *data;
	uint64_t nreq, first, step, mult;
	size_t req;
	int rc;
};

static void *rw_thread(void *p)
{
	struct rw_job *j = p;
	for (uint64_t i = j->first; i < j->nreq && j->rc == 0; i += j->step) {
		uint64_t slot = (i * j->mult) % j->nreq;
		j->rc = uraid_write(j->a, j->data + slot * j->req, j->req, slot * j->req);
	}
	return NULL;
}

static uint64_t gcd(uint64_t x, uint64_t y)
{
	while (y) {
		uint64_t t = x % y;
		x = y;
		y = t;
	}
	return x;
}

static int random_writes(const struct sc_opts *o, struct uraid_array *a, const uint8_t *data,
                         size_t req, uint64_t bytes)
{
	struct rw_job j[16];
	pthread_t t[16];
	int n = o->threads;
	uint64_t nreq = bytes / req, mult = nreq * 5 / 8 + 1;
	while (gcd(mult, nreq) != 1)
		mult++;
	for (int i = 0; i < n; i++) {
		j[i] = (struct rw_job){a, data, nreq, (uint64_t)i, (uint64_t)n, mult, req, 0};
		pthread_create(&t[i], NULL, rw_thread, &j[i]);
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		if (j[i].rc < 0 && rc == 0)
			rc = j[i].rc;
	}
	return rc;
}

struct sc_row {
	size_t req;
	unsigned cache;
	double mbs;
	struct uraid_io_stats io;
};

static int run_one(const struct sc_opts *o, size_t req, unsigned cache, struct sc_row *row,
                   const uint8_t *data)
{
	char *paths[16], err[512];
	for (int i = 0; i < o->members; i++) {
		if (asprintf(&paths[i], "%s/uraid-bench-sc.%d.%d", o->dir, (int)getpid(), i) < 0)
			return cli_error("bench", "out of memory");
		unlink(paths[i]);
	}
	struct uraid_create_opts co;
	memset(&co, 0, sizeof(co));
	co.level = o->level;
	co.raid_devices = o->members;
	co.chunk_sectors = (uint32_t)(o->chunk / 512);
	co.assume_clean = true;
	uint64_t bytes = o->mib << 20;
	int k = o->members - (o->level == 6 ? 2 : 1);
	co.member_bytes = bytes / (uint64_t)k + 2 * o->chunk + (8u << 20);
	struct uraid_array *a = NULL;
	int rc = uraid_create(&co, (const char *const *)paths, o->members, 0, &a, err, sizeof(err));
	int status = 0;
	if (rc < 0) {
		status = cli_error("bench", "create: %s", err);
		goto out;
	}
	rc = uraid_set_stripe_cache(a, cache);
	if (rc < 0) {
		status = cli_error("bench", "stripe cache %u: %s", cache, strerror(-rc));
		goto out;
	}
	/* Prime: the first write marks the array active (superblock writes)
	 * and member files get their blocks; not timed. */
	for (uint64_t off = 0; off < bytes && rc == 0; off += 1u << 20)
		rc = uraid_write(a, data + off, 1u << 20, off);
	if (rc == 0)
		rc = uraid_flush(a);
	struct uraid_io_stats io0;
	uraid_io_stats(a, &io0);
	uint64_t t0 = bench_now_ns();
	if (o->random)
		rc = random_writes(o, a, data, req, bytes);
	for (uint64_t off = 0; !o->random && off < bytes && rc == 0; off += req)
		rc = uraid_write(a, data + off, req, off);
	if (rc == 0)
		rc = uraid_flush(a);
	uint64_t t1 = bench_now_ns();
	if (rc < 0) {
		status = cli_error("bench", "write failed: %s", strerror(-rc));
		goto out;
	}
	uraid_io_stats(a, &row->io);
	row->io.member_reads -= io0.member_reads;
	row->io.member_writes -= io0.member_writes;
	row->io.member_read_bytes -= io0.member_read_bytes;
	row->io.member_write_bytes -= io0.member_write_bytes;
	row->io.sc_full_runs -= io0.sc_full_runs;
	row->io.sc_rmw_runs -= io0.sc_rmw_runs;
	row->io.sc_rcw_runs -= io0.sc_rcw_runs;
	row->req = req;
	row->cache = cache;
	row->mbs = (double)bytes / 1e6 / ((double)(t1 - t0) / 1e9);
	/* The data must be there (read back through the array). */
	uint8_t *back = malloc(1u << 20);
	for (uint64_t off = 0; back && off < bytes && status == 0; off += 1u << 20)
		if (uraid_read(a, back, 1u << 20, off) < 0 || memcmp(back, data + off, 1u << 20))
			status = cli_error("bench", "read back differs at %llu",
			                   (unsigned long long)off);
	free(back);
out:
	if (a && uraid_stop(a) < 0 && status == 0)
		status = cli_error("bench", "stop failed");
	for (int i = 0; i < o->members; i++) {
		unlink(paths[i]);
		free(paths[i]);
	}
	return status;
}

static int parse_list(const char *s, unsigned long long unit, unsigned long long *out, int max)
{
	int n = 0;
	char *dup = strdup(s), *save = NULL;
	for (char *t = strtok_r(dup, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
		if (cli_parse_size(t, unit, &out[n++]) < 0) {
			free(dup);
			return -1;
		}
	free(dup);
	return n;
}

int bench_scache(int argc, char **argv)
{
	static const struct option opts[] = {{"dir", required_argument, NULL, 'd'},
	                                     {"level", required_argument, NULL, 'l'},
	                                     {"members", required_argument, NULL, 'n'},
	                                     {"chunk", required_argument, NULL, 'c'},
	                                     {"mib", required_argument, NULL, 'm'},
	                                     {"caches", required_argument, NULL, 'C'},
	                                     {"reqs", required_argument, NULL, 'r'},
	                                     {"random", required_argument, NULL, 'R'},
	                                     {"json", no_argument, NULL, 'j'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	struct sc_opts o = {.dir = "/dev/shm",
	                    .level = 5,
	                    .members = 4,
	                    .chunk = 512 << 10,
	                    .mib = 48,
	                    .caches = {0, 256, 4096},
	                    .ncaches = 3,
	                    .reqs = {4096, 16384, 65536},
	                    .nreqs = 3};
	unsigned long long v[8];
	int c, n;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': o.dir = optarg; break;
		case 'l': o.level = atoi(optarg); break;
		case 'n': o.members = atoi(optarg); break;
		case 'c':
			if (cli_parse_size(optarg, 1024, &o.chunk) < 0 || o.chunk % 4096)
				return cli_error("bench", "--chunk: a size in KiB, multiple of 4K");
			break;
		case 'm':
			if (cli_parse_size(optarg, 1, &o.mib) < 0 || o.mib < 1 || o.mib > 4096)
				return cli_error("bench", "--mib: 1..4096");
			break;
		case 'C':
			if ((n = parse_list(optarg, 1, v, 8)) < 1)
				return cli_error("bench", "--caches: a list of entry counts");
			for (int i = 0; i < n; i++)
				o.caches[i] = v[i] > URAID_STRIPE_CACHE_MAX ? ~0u : (unsigned)v[i];
			o.ncaches = n;
			break;
		case 'r':
			if ((n = parse_list(optarg, 1, v, 8)) < 1)
				return cli_error("bench", "--reqs: a list of sizes (4K,16K)");
			for (int i = 0; i < n; i++) {
				if (v[i] == 0 || v[i] % 512 || (1ull << 20) % v[i])
					return cli_error("bench",
					                 "--reqs: sizes dividing 1M, x512");
				o.reqs[i] = v[i];
			}
			o.nreqs = n;
			break;
		case 'j': o.json = true; break;
		case 'R':
			o.random = true;
			o.threads = atoi(optarg);
			if (o.threads < 1 || o.threads > 16)
				return cli_error("bench", "--random THREADS: 1..16");
			break;
		case 'h':
			printf(
			    "usage: uraid bench stripe-cache [--dir D] [--level 5] [--members 4]\n"
			    "  [--chunk 512K] [--mib 48] [--caches 0,256,4096] [--reqs 4K,16K,64K] "
			    "[--random THREADS] [--json]\n"
			    "  Sequential writes of small requests with the stripe cache at each "
			    "size:\n  MB/s and member requests per MiB written. --random: the "
			    "same\n"
			    "  requests in a scattered order from THREADS writers.\n");
			return 0;
		default: return 2;
		}
	}
	if ((o.level != 4 && o.level != 5 && o.level != 6) || o.members < (o.level == 6 ? 4 : 3) ||
	    o.members > 16)
		return cli_error("bench", "--level 4/5/6 with 3..16 members (raid6: 4..16)");
	uint64_t bytes = o.mib << 20;
	uint8_t *data = bench_alloc(bytes);
	if (!data)
		return cli_error("bench", "out of memory");
	uint64_t rs = 0x5eed;
	for (uint64_t i = 0; i < bytes / 8; i++) {
		rs = rs * 6364136223846793005ull + 1442695040888963407ull;
		memcpy(data + i * 8, &rs, 8);
	}
	struct sc_row rows[64];
	int nr = 0, status = 0;
	if (!o.json)
		printf("raid%d, %d members, chunk %lluK, %llu MiB %s per run, members in %s\n"
		       "%-6s %-6s %9s %10s %9s %10s %9s %6s %6s %6s\n",
		       o.level, o.members, o.chunk >> 10, o.mib, o.random ? "random" : "sequential",
		       o.dir, "req", "cache", "MB/s", "reads/MiB", "rMiB/MiB", "writes/MiB",
		       "wMiB/MiB", "full", "rmw", "rcw");
	for (int ri = 0; ri < o.nreqs && status == 0; ri++)
		for (int ci = 0; ci < o.ncaches && status == 0; ci++) {
			struct sc_row *r = &rows[nr];
			char lab[16];
			status = run_one(&o, o.reqs[ri], o.caches[ci], r, data);
			if (status)
				break;
			nr++;
			if (!o.json)
				printf(
				    "%-6s %-6u %9.1f %10.1f %9.2f %10.1f %9.2f %6llu %6llu %6llu\n",
				    bench_size_label(r->req, lab, sizeof(lab)), r->cache, r->mbs,
				    (double)r->io.member_reads / (double)o.mib,
				    (double)r->io.member_read_bytes / (double)bytes,
				    (double)r->io.member_writes / (double)o.mib,
				    (double)r->io.member_write_bytes / (double)bytes,
				    (unsigned long long)r->io.sc_full_runs,
				    (unsigned long long)r->io.sc_rmw_runs,
				    (unsigned long long)r->io.sc_rcw_runs);
			fflush(stdout);
		}
	if (o.json && status == 0) {
		printf("[");
		for (int i = 0; i < nr; i++) {
			/* ratio: against the same request size with the cache off */
			double ref = 0;
			for (int j = 0; j < nr; j++)
				if (rows[j].req == rows[i].req && rows[j].cache == 0)
					ref = rows[j].mbs;
			printf(
			    "%s{\"level\":%d,\"workload\":\"%s\",\"req\":%zu,"
			    "\"stripe_cache\":%u,\"value\":%.1f,\"unit\":\"MB/s\",\"ratio\":%.3f,"
			    "\"member_reads\":%llu,\"member_writes\":%llu,\"member_read_bytes\":%"
			    "llu,"
			    "\"member_write_bytes\":%llu}",
			    i ? "," : "", o.level, o.random ? "randwrite-small" : "seqwrite-small",
			    rows[i].req, rows[i].cache, rows[i].mbs,
			    ref > 0 ? rows[i].mbs / ref : 0,
			    (unsigned long long)rows[i].io.member_reads,
			    (unsigned long long)rows[i].io.member_writes,
			    (unsigned long long)rows[i].io.member_read_bytes,
			    (unsigned long long)rows[i].io.member_write_bytes);
		}
		printf("]\n");
	}
	free(data);
	return status;
}
