/* uraid bench engine --nbd: RAID5 on NBD members (nbdkit memory servers on
 * Unix sockets, one process each, started and stopped here) against the
 * same array on local files in --members-dir (default /dev/shm), in one
 * run: 1 MiB sequential writes and 4 KiB random writes; ratio = NBD / local.
 * Passes alternate local, NBD, NBD, local (ABBA), best of each side. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_engine_int.h"
#include "cli/cli.h"
#include "util/errmsg.h"

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

static int one_pass(struct bw_set *s, const struct eng_opts *o, double *seq, double *rnd,
                    char *err, size_t errlen)
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
	if (r == 0)
		r = beng_rand_job(s, a, o, span, NULL, rnd, err, errlen);
	int rs = bw_array_stop(s, a);
	return r < 0 ? r : rs < 0 ? errmsg(err, errlen, rs, "stopping the array failed") : 0;
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
			rc = cli_error("bench", "engine --nbd: nbdkit memory on %s did not start "
			                        "(is nbdkit installed?)",
			               sock);
		snprintf(remote.paths[i], sizeof(remote.paths[i]), "nbd+unix:///?socket=%s", sock);
		remote.n = i + 1;
	}
	double v[2][2] = {{0, 0}, {0, 0}}; /* [nbd][seq, rand], best */
	for (int pass = 0; rc == 0 && pass < 2 * NBD_PASSES; pass++) {
		int nbd = (pass % 2) ^ ((pass / 2) % 2); /* ABBA */
		double seq = 0, rnd = 0;
		r = one_pass(nbd ? &remote : &local, o, &seq, &rnd, err, sizeof(err));
		if (r < 0)
			rc = cli_error("bench", "engine --nbd: %s: %s", nbd ? "NBD" : "local", err);
		if (seq > v[nbd][0])
			v[nbd][0] = seq;
		if (rnd > v[nbd][1])
			v[nbd][1] = rnd;
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
	if (o->json) {
		printf("[{\"level\":5,\"workload\":\"seqwrite\",\"local\":%.1f,\"nbd\":%.1f,"
		       "\"unit\":\"MB/s\",\"ratio\":%.3f},"
		       "{\"level\":5,\"workload\":\"randwrite4k\",\"local\":%.1f,\"nbd\":%.1f,"
		       "\"unit\":\"IOPS\",\"ratio\":%.3f}]\n",
		       v[0][0], v[1][0], v[0][0] > 0 ? v[1][0] / v[0][0] : 0, v[0][1], v[1][1],
		       v[0][1] > 0 ? v[1][1] / v[0][1] : 0);
		return 0;
	}
	printf("# %s\n# raid5, %d members x %llu MiB, chunk %u KiB, %d in flight; NBD: nbdkit "
	       "memory on Unix sockets; local: files in %s; best of %d passes (ABBA)\n",
	       cmd, n, (unsigned long long)(o->member_bytes >> 20), o->chunk >> 10, o->qd, o->dir,
	       NBD_PASSES);
	printf("%-7s %-12s %12s %12s %-5s %7s\n", "level", "workload", "local", "nbd", "unit",
	       "ratio");
	printf("raid5   %-12s %12.1f %12.1f %-5s %7.3f\n", "seqwrite", v[0][0], v[1][0], "MB/s",
	       v[0][0] > 0 ? v[1][0] / v[0][0] : 0);
	printf("raid5   %-12s %12.1f %12.1f %-5s %7.3f\n", "randwrite4k", v[0][1], v[1][1], "IOPS",
	       v[0][1] > 0 ? v[1][1] / v[0][1] : 0);
	return 0;
}
