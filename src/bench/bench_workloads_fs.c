/* Filesystem workloads of `uraid bench` (root only): the array is served
 * and attached as a loop device (`uraid attach --name NAME MEMBER...`), then
 * mkfs (mkfs.xfs and mkfs.ext4 timed), smallfiles (untar a generated
 * source-like tree + sync, copy it + sync, remove both + sync) on XFS, and
 * bonnie++ when installed, its CSV parsed. External tools run through
 * /bin/sh; every step checks its exit status and the file counts. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "bench/bench_workloads.h"
#include "util/errmsg.h"

#define FS_DIRS          40
#define FS_FILES_PER_DIR 50

bool bw_fs_workload(const char *wl)
{
	return !strcmp(wl, "smallfiles") || !strcmp(wl, "mkfs") || !strcmp(wl, "bonnie");
}

/* Run a shell command built from fmt; returns its exit status (-1: could
 * not run). Output goes to `log`. */
static int sh(const char *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sh(const char *log, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(cmd, sizeof(cmd) - 64, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd) - 64)
		return -1;
	snprintf(cmd + n, sizeof(cmd) - (size_t)n, " >>'%s' 2>&1", log);
	int st = system(cmd);
	return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool have(const char *tool)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

/* The source-like tree: FS_DIRS directories of FS_FILES_PER_DIR files,
 * sizes 200..20000 bytes from a fixed seed, lines of C-like text. Returns
 * the bytes written, or a negative errno. */
static int64_t make_tree(const char *root)
{
	static const char *const words[] = {"int",    "return",   "static", "struct", "if",
	                                    "for",    "uint64_t", "len",    "buf",    "err",
	                                    "(void)", "{",        "}",      "= 0;",   "++",
	                                    "->next", "NULL",     "const",  "char *", "/*"};
	uint64_t rng = 20261130, total = 0;
	char path[4096];
	if (mkdir(root, 0755) < 0 && errno != EEXIST)
		return -errno;
	for (int d = 0; d < FS_DIRS; d++) {
		snprintf(path, sizeof(path), "%s/dir%02d", root, d);
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -errno;
		for (int f = 0; f < FS_FILES_PER_DIR; f++) {
			snprintf(path, sizeof(path), "%s/dir%02d/file%03d.c", root, d, f);
			FILE *fp = fopen(path, "w");
			if (!fp)
				return -errno;
			uint64_t size = 200 + bw_rand(&rng) % 19800, w = 0;
			while (w < size) {
				const char *word = words[bw_rand(&rng) % 20];
				int col = fprintf(fp, "%s%s", word, bw_rand(&rng) % 8 ? " " : "\n");
				w += (uint64_t)(col > 0 ? col : 1);
			}
			total += w;
			if (fclose(fp))
				return -errno;
		}
	}
	return (int64_t)total;
}

static _Thread_local long counted;
static int count_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)p;
	(void)st;
	(void)f;
	counted += flag == FTW_F;
	return 0;
}

static long count_files(const char *root)
{
	counted = 0;
	if (nftw(root, count_cb, 16, FTW_PHYS) < 0)
		return -1;
	return counted;
}

/* Progress of one step (no byte count: a "running" line per interval). */
static struct bw_progress *step(const struct bw_result *proto, const char *what, double every,
                                char *label, size_t len)
{
	snprintf(label, len, "%s %s", proto->config, what);
	return bw_progress_start(label, NULL, NULL, every);
}

static double secs_since(uint64_t t0)
{
	return (double)(bench_now_ns() - t0) / 1e9;
}

static int add(int (*addf)(void *, const struct bw_result *), void *ctx,
               const struct bw_result *proto, const char *wl, double v, const char *unit,
               uint64_t bytes, uint64_t requested, int repeats, double spread)
{
	struct bw_result r = *proto;
	snprintf(r.workload, sizeof(r.workload), "%s", wl);
	r.value = v;
	r.unit = unit;
	r.bytes = bytes;
	r.requested = requested;
	r.repeats = repeats;
	r.spread = spread;
	return addf(ctx, &r);
}

/* One smallfiles run on the mounted XFS `mnt`: untar STAGE.tar (`bytes`
 * of files) + sync, cp -a it + sync, rm -rf both + sync; the file counts
 * are checked after each step. Out: MB/s, MB/s, files/s. */
static int smallfiles_once(const struct bw_result *proto, const char *mnt, const char *stage,
                           const char *log, double progress_s, uint64_t bytes, double *untar,
                           double *copy, double *rm, char *err, size_t errlen)
{
	long want = (long)FS_DIRS * FS_FILES_PER_DIR;
	char a[400], b[400], plabel[96];
	snprintf(a, sizeof(a), "%s/a", mnt);
	snprintf(b, sizeof(b), "%s/b", mnt);
	uint64_t t0 = bench_now_ns();
	struct bw_progress *pg =
	    step(proto, "smallfiles-untar", progress_s, plabel, sizeof(plabel));
	int s1 = sh(log, "mkdir '%s' && tar xf '%s.tar' -C '%s' && sync", a, stage, a);
	double tu = secs_since(t0);
	bw_progress_stop(pg);
	t0 = bench_now_ns();
	pg = step(proto, "smallfiles-copy", progress_s, plabel, sizeof(plabel));
	int s2 = sh(log, "cp -a '%s' '%s' && sync", a, b);
	double tc = secs_since(t0);
	bw_progress_stop(pg);
	long na = count_files(a), nb = count_files(b);
	t0 = bench_now_ns();
	pg = step(proto, "smallfiles-rm", progress_s, plabel, sizeof(plabel));
	int s3 = sh(log, "rm -rf '%s' '%s' && sync", a, b);
	double tr = secs_since(t0);
	bw_progress_stop(pg);
	long left = count_files(mnt);
	if (s1 || s2 || s3 || na != want || nb != want || left != 0)
		return errmsg(err, errlen, -EIO,
		              "smallfiles: %ld and %ld files of %ld, %ld left after rm (log %s)",
		              na, nb, want, left, log);
	*untar = (double)bytes / 1e6 / tu;
	*copy = (double)bytes / 1e6 / tc;
	*rm = (double)(2 * want) / tr;
	return 0;
}

/* bonnie++ -q CSV: fields 11 (block write), 13 (rewrite), 17 (block read)
 * in K/sec, 19 random seeks/s; "+++++" when too fast to measure. */
static int parse_bonnie(const char *csvline, double out[4])
{
	static const int idx[4] = {11, 13, 17, 19};
	char buf[2048];
	snprintf(buf, sizeof(buf), "%s", csvline);
	char *fields[64];
	int n = 0;
	for (char *p = buf; n < 64;) {
		fields[n++] = p;
		char *c = strchr(p, ',');
		if (!c)
			break;
		*c = 0;
		p = c + 1;
	}
	if (n < 21 || strncmp(fields[0], "1.9", 3))
		return -EINVAL;
	for (int i = 0; i < 4; i++) {
		char *end;
		out[i] = strtod(fields[idx[i]], &end);
		if (end == fields[idx[i]])
			out[i] = -1; /* not measured */
	}
	return 0;
}

/* Does the output of the shell command hold `needle`? 1 yes, 0 no, -1
 * the command failed. */
static int output_has(const char *cmd, const char *needle)
{
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	char line[512];
	int found = 0;
	while (fgets(line, sizeof(line), p))
		found |= strstr(line, needle) != NULL;
	return pclose(p) == 0 ? found : -1;
}

/* The attached array (its own daemon, which assembled the members) gets
 * the policy `cs`: md starts every assembly in write-through, so
 * write-back is switched on here; then checked from outside, as a user
 * would: `uraid detail NAME` for the journal, `uraid examine` of a member
 * for the bitmap (status does not show it). */
static int fs_policy(const char *self, const char *name, const char *member, enum bw_consistency cs,
                     const char *log, char *err, size_t errlen)
{
	char cmd[4400];
	if (cs == BW_CS_JWB && sh(log, "'%s' journal-mode '%s' write-back", self, name) != 0)
		return errmsg(err, errlen, -EIO, "uraid journal-mode %s write-back failed (log %s)",
		              name, log);
	snprintf(cmd, sizeof(cmd), "'%s' detail --verbose '%s' 2>&1", self, name);
	int wt = output_has(cmd, "journal : write-through");
	int wb = output_has(cmd, "journal : write-back");
	snprintf(cmd, sizeof(cmd), "'%s' examine '%s' 2>&1", self, member);
	int bm = output_has(cmd, "Internal Bitmap");
	if (wt < 0 || wb < 0 || bm < 0)
		return errmsg(err, errlen, -EIO, "uraid detail %s / examine %s failed", name,
		              member);
	bool ok = cs == BW_CS_NONE     ? !wt && !wb && !bm
	          : cs == BW_CS_BITMAP ? !wt && !wb && bm
	          : cs == BW_CS_JWT    ? wt && !wb && !bm
	                               : !wt && wb && !bm;
	if (!ok)
		return errmsg(err, errlen, -EIO, "the attached array %s has %s%s%s, %s was asked",
		              name, bm ? "a bitmap " : "", wt ? "a write-through journal" : "",
		              wb           ? "a write-back journal"
		              : !bm && !wt ? "neither bitmap nor journal"
		                           : "",
		              bw_consistency_name(cs));
	return 0;
}

/* mkfs, smallfiles, bonnie on the block device `dev`; scratch files in
 * `tmp` (log, mount point, the tree). */
static int fs_on_dev(const char *dev, const char *tmp, const char *const *wls, int nwl,
                     const struct bw_result *proto, int (*addf)(void *, const struct bw_result *),
                     void *ctx, double progress_s, int repeat, char *err, size_t errlen)
{
	char plabel[96], log[300], cmd[8192], mnt[300], stage[300];
	struct bw_progress *pg;
	FILE *p;
	int rc = 0;
	snprintf(log, sizeof(log), "%s/log", tmp);
	snprintf(mnt, sizeof(mnt), "%s/mnt", tmp);
	snprintf(stage, sizeof(stage), "%s/tree", tmp);
	bool want_mkfs = false, want_small = false, want_bonnie = false;
	for (int i = 0; i < nwl; i++) {
		want_mkfs |= !strcmp(wls[i], "mkfs");
		want_small |= !strcmp(wls[i], "smallfiles");
		want_bonnie |= !strcmp(wls[i], "bonnie");
	}
	uint64_t t0;
	double t;
	if (want_mkfs) {
		t0 = bench_now_ns();
		pg = step(proto, "mkfs.ext4", progress_s, plabel, sizeof(plabel));
		int st = sh(log, "mkfs.ext4 -q -F '%s'", dev);
		bw_progress_stop(pg);
		if (st != 0) {
			rc = errmsg(err, errlen, -EIO, "mkfs.ext4 failed (log %s)", log);
			return rc;
		}
		t = secs_since(t0);
		if ((rc = add(addf, ctx, proto, "mkfs.ext4", t, "s", 0, 0, 1, 0)) < 0)
			return rc;
	}
	t0 = bench_now_ns();
	pg = step(proto, "mkfs.xfs", progress_s, plabel, sizeof(plabel));
	int st = sh(log, "mkfs.xfs -q -f '%s'", dev);
	bw_progress_stop(pg);
	if (st != 0) {
		rc = errmsg(err, errlen, -EIO, "mkfs.xfs failed (log %s)", log);
		return rc;
	}
	t = secs_since(t0);
	if (want_mkfs && (rc = add(addf, ctx, proto, "mkfs.xfs", t, "s", 0, 0, 1, 0)) < 0)
		return rc;
	if (mkdir(mnt, 0755) < 0 || sh(log, "mount '%s' '%s'", dev, mnt) != 0) {
		rc = errmsg(err, errlen, -EIO, "cannot mount the XFS (log %s)", log);
		return rc;
	}
	if (want_small) {
		int64_t bytes = make_tree(stage);
		if (bytes < 0 || sh(log, "tar cf '%s.tar' -C '%s' .", stage, stage) != 0) {
			rc = errmsg(err, errlen, -EIO, "cannot make the tree (log %s)", log);
			goto umount;
		}
		/* Each repeat leaves the filesystem empty again (checked), so
		 * the runs are alike; rows: the median and spread per step. */
		double v[3][64];
		int nrep = repeat < 1 ? 1 : repeat > 64 ? 64 : repeat;
		for (int k = 0; k < nrep && rc == 0; k++)
			rc = smallfiles_once(proto, mnt, stage, log, progress_s, (uint64_t)bytes,
			                     &v[0][k], &v[1][k], &v[2][k], err, errlen);
		if (rc < 0)
			goto umount;
		static const char *const names[3] = {"smallfiles-untar", "smallfiles-copy",
		                                     "smallfiles-rm"};
		uint64_t files = 2ull * FS_DIRS * FS_FILES_PER_DIR;
		for (int sp = 0; sp < 3 && rc == 0; sp++) {
			double lo = v[sp][0], hi = v[sp][0];
			for (int k = 1; k < nrep; k++) {
				lo = v[sp][k] < lo ? v[sp][k] : lo;
				hi = v[sp][k] > hi ? v[sp][k] : hi;
			}
			double med = bench_median(v[sp], nrep);
			uint64_t amount = sp < 2 ? (uint64_t)bytes : files;
			rc = add(addf, ctx, proto, names[sp], med, sp < 2 ? "MB/s" : "files/s",
			         amount, amount, nrep, med > 0 ? (hi - lo) / med : 0);
		}
		if (rc < 0)
			goto umount;
	}
	if (want_bonnie) {
		if (!have("bonnie++")) {
			fprintf(stderr, "uraid: bench: note: bonnie++ not installed, skipped\n");
		} else {
			snprintf(
			    cmd, sizeof(cmd),
			    "bonnie++ -d '%s' -s 128 -r 64 -n 0 -u root -q -f 2>>'%s' | tail -1",
			    mnt, log);
			char line[2048] = "";
			pg = step(proto, "bonnie", progress_s, plabel, sizeof(plabel));
			p = popen(cmd, "r");
			if (p) {
				if (!fgets(line, sizeof(line), p))
					line[0] = 0;
				pclose(p);
			}
			bw_progress_stop(pg);
			double v[4];
			static const char *const names[4] = {"bonnie-write", "bonnie-rewrite",
			                                     "bonnie-read", "bonnie-seeks"};
			if (parse_bonnie(line, v) < 0) {
				rc = errmsg(err, errlen, -EIO, "bonnie++ gave no CSV line (log %s)",
				            log);
				goto umount;
			}
			for (int i = 0; i < 4 && rc == 0; i++) {
				if (v[i] < 0) {
					fprintf(stderr,
					        "uraid: bench: note: %s too fast for bonnie++ "
					        "to measure\n",
					        names[i]);
					continue;
				}
				rc = add(addf, ctx, proto, names[i],
				         i < 3 ? v[i] * 1024 / 1e6 : v[i], i < 3 ? "MB/s" : "ops/s",
				         0, 0, 1, 0);
			}
		}
	}
umount:
	sh(log, "umount '%s'", mnt);
	return rc;
}

int bw_fs_run(const char *const *paths, int n, const char *name, enum bw_consistency cs,
              const char *const *wls, int nwl, const struct bw_result *proto,
              int (*addf)(void *, const struct bw_result *), void *ctx, double progress_s,
              int repeat, char *err, size_t errlen)
{
	if (geteuid() != 0)
		return errmsg(err, errlen, -EPERM, "filesystem workloads need root (uraid attach)");
	if (!have("mkfs.xfs") || !have("mkfs.ext4"))
		return errmsg(err, errlen, -ENOENT, "mkfs.xfs and mkfs.ext4 are needed");
	char tmp[] = "/tmp/uraid-benchfs.XXXXXX";
	if (!mkdtemp(tmp))
		return errmsg(err, errlen, -errno, "mkdtemp: %s", strerror(errno));
	char log[256], dev[256] = "", self[4096], cmd[8192];
	snprintf(log, sizeof(log), "%s/log", tmp);
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0)
		return errmsg(err, errlen, -errno, "cannot find the uraid executable");
	self[sl] = 0;
	int l = snprintf(cmd, sizeof(cmd), "'%s' attach --name %s", self, name);
	for (int i = 0; i < n; i++)
		l += snprintf(cmd + l, sizeof(cmd) - (size_t)l, " '%s'", paths[i]);
	FILE *p = popen(cmd, "r");
	if (!p || !fgets(dev, sizeof(dev), p)) {
		if (p)
			pclose(p);
		return errmsg(err, errlen, -EIO, "uraid attach failed");
	}
	int rc = pclose(p) == 0 ? 0 : -EIO;
	dev[strcspn(dev, "\n")] = 0;
	if (rc == 0 && strncmp(dev, "/dev/", 5))
		rc = -EIO;
	if (rc < 0) {
		errmsg(err, errlen, rc, "uraid attach gave '%s'", dev);
		goto out;
	}
	if ((rc = fs_policy(self, name, paths[0], cs, log, err, errlen)) == 0)
		rc = fs_on_dev(dev, tmp, wls, nwl, proto, addf, ctx, progress_s, repeat, err,
		               errlen);
	if (sh(log, "'%s' detach '%s'", self, dev) != 0 && rc == 0)
		rc = errmsg(err, errlen, -EIO, "uraid detach %s failed (log %s)", dev, log);
out:
	if (rc == 0)
		sh("/dev/null", "rm -rf '%s'", tmp);
	return rc;
}

/* nbdfuse on `dir` for the export at `sock`, in the background; its pid
 * once it serves (the pid file appears), else < 0. */
static pid_t start_nbdfuse(const char *dir, const char *sock, const char *log)
{
	char pidfile[512];
	snprintf(pidfile, sizeof(pidfile), "%s.pid", dir);
	if (sh(log, "nbdfuse -P '%s' '%s' 'nbd+unix:///?socket=%s' </dev/null &", pidfile, dir,
	       sock) != 0)
		return -1;
	for (int i = 0; i < 400; i++) {
		FILE *f = fopen(pidfile, "r");
		long pid = 0;
		if (f) {
			if (fscanf(f, "%ld", &pid) != 1)
				pid = 0;
			fclose(f);
		}
		if (pid > 0)
			return (pid_t)pid;
		usleep(50000);
	}
	return -1;
}

int bw_fs_run_array(struct uraid_array *a, const char *const *wls, int nwl,
                    const struct bw_result *proto, int (*addf)(void *, const struct bw_result *),
                    void *ctx, double progress_s, int repeat, char *err, size_t errlen)
{
	if (geteuid() != 0)
		return errmsg(err, errlen, -EPERM, "filesystem workloads need root (loop devices)");
	if (!have("mkfs.xfs") || !have("mkfs.ext4") || !have("nbdfuse"))
		return errmsg(err, errlen, -ENOENT, "mkfs.xfs, mkfs.ext4 and nbdfuse are needed");
	char tmp[] = "/tmp/uraid-benchfs.XXXXXX";
	if (!mkdtemp(tmp))
		return errmsg(err, errlen, -errno, "mkdtemp: %s", strerror(errno));
	char log[300], sock[300], fuse[300], dev[256] = "";
	snprintf(log, sizeof(log), "%s/log", tmp);
	snprintf(sock, sizeof(sock), "%s/nbd.sock", tmp);
	snprintf(fuse, sizeof(fuse), "%s/fuse", tmp);
	struct bw_nbd *n = NULL;
	int rc = bw_nbd_start(a, sock, &n, err, errlen);
	if (rc < 0)
		return rc;
	pid_t fpid = -1;
	if (mkdir(fuse, 0700) < 0 || (fpid = start_nbdfuse(fuse, sock, log)) < 0) {
		rc = errmsg(err, errlen, -EIO, "nbdfuse did not start (log %s)", log);
		goto stop;
	}
	/* direct I/O: the page cache stays out of the way, as with attach */
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "losetup --direct-io=on --find --show '%s/nbd' 2>>'%s'", fuse,
	         log);
	FILE *p = popen(cmd, "r");
	if (!p || !fgets(dev, sizeof(dev), p))
		dev[0] = 0;
	if (p)
		pclose(p);
	dev[strcspn(dev, "\n")] = 0;
	if (strncmp(dev, "/dev/loop", 9)) {
		rc = errmsg(err, errlen, -EIO, "losetup on %s/nbd failed (log %s)", fuse, log);
		goto unmount;
	}
	rc = fs_on_dev(dev, tmp, wls, nwl, proto, addf, ctx, progress_s, repeat, err, errlen);
	if (sh(log, "losetup -d '%s'", dev) != 0 && rc == 0)
		rc = errmsg(err, errlen, -EIO, "losetup -d %s failed (log %s)", dev, log);
	/* the kernel lets go of the file when its last opener is gone */
	char bf[300];
	snprintf(bf, sizeof(bf), "/sys/block/%s/loop/backing_file", dev + 5);
	for (int i = 0; i < 200 && access(bf, F_OK) == 0; i++)
		usleep(50000);
unmount:
	/* nbdfuse exits once unmounted, disconnecting from the server */
	for (int i = 0; i < 100 && sh(log, "umount '%s'", fuse) != 0; i++)
		usleep(50000);
	for (int i = 0; i < 200 && kill(fpid, 0) == 0; i++)
		usleep(50000);
stop:
	bw_nbd_stop(n);
	if (rc == 0)
		sh("/dev/null", "rm -rf '%s'", tmp);
	return rc;
}
