/* The SIGBUS guard of mapped members (member_guard.c): a tmpfs member is
 * mapped once the process installed the guard, and a member file truncated
 * by someone else then fails that member (-EIO) instead of ending the
 * process. Checks: SIGBUS that is not a guarded copy's still reaches the
 * handler installed before (a child process: the guard is process state);
 * a truncated mapped member gives -EIO on reads and writes; a RAID5 of four
 * mapped files, one truncated from another thread while a writer runs,
 * ends with that member failed, the array degraded, every write done and
 * every byte read back as written; whole stripes of RAID5 and RAID6 on
 * mapped members: every member's bytes as a plain-C model of the layout
 * and the parity says (RAID6), before and after a member is cut. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "member/member_guard.h"
#include "test_engine_common.h"
#include "test_parity_ref.h"

#define MB (1u << 20)

/* Lines of /proc/self/maps that name a file under `dir`. */
static int mappings_under(const char *dir)
{
	FILE *fp = fopen("/proc/self/maps", "re");
	char line[512];
	int n = 0;
	while (fp && fgets(line, sizeof(line), fp))
		n += strstr(line, dir) != NULL;
	if (fp)
		fclose(fp);
	return n;
}

static volatile sig_atomic_t prev_called;
static void prev_handler(int sig, siginfo_t *si, void *ctx)
{
	(void)si;
	(void)ctx;
	prev_called = sig;
}

/* In children, so that their handlers stay theirs: one with a handler of
 * its own before the guard, one with the default action. */
static void chains_to_previous(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct sigaction sa = {0};
		sa.sa_sigaction = prev_handler;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGBUS, &sa, NULL) < 0 || uraid_member_map_guard_install() < 0 ||
		    uraid_member_map_guard_install() < 0)
			_exit(2);
		raise(SIGBUS);
		_exit(prev_called == SIGBUS && member_map_guard_installed() ? 0 : 3);
	}
	int st = 0;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status 0x%x", st);

	pid = fork();
	if (pid == 0) {
		if (uraid_member_map_guard_install() < 0)
			_exit(2);
		raise(SIGBUS);
		_exit(0); /* must not get here */
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	/* SIGBUS by default; under ASan its own handler, which aborts. */
	CHECKF(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0),
	       "a SIGBUS outside a guarded copy did not end the process (status 0x%x)", st);
}

static bool make_dir(char *dir, size_t len)
{
	snprintf(dir, len, "/dev/shm/uraid-guard-XXXXXX");
	bool ok = mkdtemp(dir) != NULL;
	CHECK(ok);
	return ok;
}

/* One member, mapped, its file cut to nothing under it. */
static void member_truncated(void)
{
	char dir[64], path[96], err[256];
	if (!make_dir(dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/m", dir);
	CHECK(uraid_member_map_guard_install() == 0);
	struct member *m = NULL;
	CHECKF(member_open_file(path, MEMBER_CREATE, MB, &m, err, sizeof(err)) == 0, "%s", err);
	uint8_t *buf = malloc(MB), *got = malloc(MB);
	uint64_t seed = 7;
	t_fill(&seed, buf, MB);
	if (m) {
		CHECK(member_write(m, buf, MB, 0, 0) == 0);
		CHECK(member_read(m, got, MB, 0) == 0 && !memcmp(got, buf, MB));
		CHECKF(m->in_memory && mappings_under(dir) == 1, "%d mappings of %s",
		       mappings_under(dir), dir);
		CHECK(truncate(path, 0) == 0);
		CHECK(member_read(m, got, 4096, 8192) == -EIO);
		CHECK(member_write(m, buf, 4096, 65536, 0) == -EIO);
		CHECK(member_read(m, got, MB, 0) == -EIO);
		CHECK(member_check(m, err, sizeof(err)) == -ENODEV);
		member_close(m);
	}
	/* URAID_MEMBER_MMAP=0: unmapped, guard or not. */
	setenv("URAID_MEMBER_MMAP", "0", 1);
	CHECK(truncate(path, MB) == 0);
	CHECKF(member_open_file(path, 0, 0, &m, err, sizeof(err)) == 0, "%s", err);
	unsetenv("URAID_MEMBER_MMAP");
	if (m) {
		CHECK(m->in_memory && mappings_under(dir) == 0);
		member_close(m);
	}
	free(buf);
	free(got);
	unlink(path);
	rmdir(dir);
}

struct writer {
	struct uraid_array *a;
	uint8_t *shadow;
	uint64_t size;
	atomic_int done;
	int errors;
};

/* 64 KiB pieces at random places, 600 of them; the test truncates a
 * member once 100 are done. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t seed = 99;
	uint8_t *buf = malloc(64 << 10);
	for (int i = 0; i < 600; i++) {
		uint64_t len = (t_rand(&seed) % 16 + 1) * 4096;
		uint64_t off = t_rand(&seed) % ((w->size - len) / 4096 + 1) * 4096;
		t_fill(&seed, buf, len);
		if (uraid_write(w->a, buf, len, off) != 0)
			w->errors++;
		else
			memcpy(w->shadow + off, buf, len);
		atomic_fetch_add(&w->done, 1);
	}
	free(buf);
	return NULL;
}

static void array_member_truncated(void)
{
	char dir[64], paths[4][96], err[256];
	const char *pp[4];
	if (!make_dir(dir, sizeof(dir)))
		return;
	CHECK(uraid_member_map_guard_install() == 0);
	for (int i = 0; i < 4; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%d", dir, i);
		pp[i] = paths[i];
	}
	struct uraid_create_opts o = {0};
	o.level = 5;
	o.raid_devices = 4;
	o.chunk_sectors = 64 * 2;
	o.assume_clean = true;
	o.member_bytes = 4 * MB;
	struct uraid_array *a = NULL;
	int rc = uraid_create(&o, pp, 4, URAID_NO_SYNC_THREAD, &a, err, sizeof(err));
	CHECKF(rc == 0, "create: %s", err);
	if (rc < 0)
		goto out;
	struct writer w = {.a = a, .size = uraid_size(a)};
	w.shadow = malloc(w.size);
	uint64_t seed = 5;
	t_fill(&seed, w.shadow, w.size);
	CHECK(uraid_write(a, w.shadow, w.size, 0) == 0);
	CHECKF(mappings_under(dir) == 4, "%d of 4 members mapped", mappings_under(dir));
	pthread_t t;
	CHECK(pthread_create(&t, NULL, writer_main, &w) == 0);
	while (atomic_load(&w.done) < 100)
		usleep(1000);
	CHECK(truncate(paths[2], 0) == 0);
	pthread_join(t, NULL);
	CHECKF(w.errors == 0, "%d writes failed", w.errors);
	/* Whole stripes too (straight into the mapped members where they
	 * can, stripe_mapped.c), over the cut member. */
	t_fill(&seed, w.shadow, w.size);
	CHECK(uraid_write(a, w.shadow, w.size, 0) == 0);
	CHECK(te_verify(a, w.shadow, w.size) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECKF(st.failed == 1 && st.degraded == 1 && st.working == 3,
	       "failed %d degraded %d working %d", st.failed, st.degraded, st.working);
	bool faulty = false;
	for (int i = 0; i < st.nmembers; i++)
		faulty |= st.members[i].state == URAID_MEMBER_FAULTY &&
		          strstr(st.members[i].name, "/m2") != NULL;
	CHECK(faulty);
	CHECK(uraid_stop(a) == 0);
	free(w.shadow);
out:
	for (int i = 0; i < 4; i++)
		unlink(paths[i]);
	rmdir(dir);
}

/* n random writes of 1 to 4 pages inside one chunk (read-modify-writes
 * where the stripe is wide enough), into the array and the shadow: how
 * many failed. */
static int small_writes(struct uraid_array *a, uint8_t *shadow, uint64_t size, size_t clen, int n,
                        uint64_t *seed)
{
	uint8_t buf[4 * 4096];
	int bad = 0;
	for (int i = 0; i < n; i++) {
		uint64_t pages = t_rand(seed) % 4 + 1,
		         in = t_rand(seed) % (clen / 4096 - pages + 1);
		uint64_t off = t_rand(seed) % (size / clen) * clen + in * 4096;
		t_fill(seed, buf, pages * 4096);
		bad += uraid_write(a, buf, pages * 4096, off) != 0;
		memcpy(shadow + off, buf, pages * 4096);
	}
	return bad;
}

/* Whole-stripe writes on mapped members go straight into their pages
 * (stripe_mapped.c), and so do read-modify-writes inside one chunk (P
 * updated in place): runs of whole stripes, partial stripes around them,
 * small writes, against a shadow; then a check pass finds P right everywhere (0
 * mismatches), and after a member is failed the degraded array still reads
 * the shadow (P rebuilds its data). */
static void full_stripes_mapped(void)
{
	char dir[64], paths[5][96], err[256];
	const char *pp[5];
	if (!make_dir(dir, sizeof(dir)))
		return;
	CHECK(uraid_member_map_guard_install() == 0);
	for (int i = 0; i < 5; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%d", dir, i);
		pp[i] = paths[i];
	}
	struct uraid_create_opts o = {0};
	o.level = 5;
	o.raid_devices = 5;
	o.chunk_sectors = 32 * 2;
	o.assume_clean = true;
	o.member_bytes = 4 * MB;
	struct uraid_array *a = NULL;
	int rc = uraid_create(&o, pp, 5, URAID_NO_SYNC_THREAD, &a, err, sizeof(err));
	CHECKF(rc == 0, "create: %s", err);
	if (rc < 0)
		goto out;
	uint64_t size = uraid_size(a), width = 4 * 32 * 1024, seed = 11;
	uint8_t *shadow = malloc(size), *buf = malloc(8 * width + 8192);
	t_fill(&seed, shadow, size);
	CHECK(uraid_write(a, shadow, size, 0) == 0);
	CHECKF(mappings_under(dir) == 5, "%d of 5 members mapped", mappings_under(dir));
	int bad = 0;
	for (int i = 0; i < 200; i++) {
		uint64_t len = (t_rand(&seed) % 8 + 1) * width, off = t_rand(&seed) % 3;
		/* whole stripes, or shifted by a few sectors: partial at both ends */
		off = (t_rand(&seed) % (size / width - 8)) * width + off * 4096;
		t_fill(&seed, buf, len);
		bad += uraid_write(a, buf, len, off) != 0;
		memcpy(shadow + off, buf, len);
	}
	CHECKF(bad == 0, "%d writes failed", bad);
	bad = small_writes(a, shadow, size, 32 * 1024, 300, &seed);
	CHECKF(bad == 0, "%d small writes failed", bad);
	CHECK(te_verify(a, shadow, size) == 0);
	CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
	CHECK(te_sync_all(a) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECKF(st.mismatch_cnt == 0, "check found %llu mismatched sectors",
	       (unsigned long long)st.mismatch_cnt);
	CHECK(uraid_fail(a, "#3", err, sizeof(err)) == 0);
	CHECK(te_verify(a, shadow, size) == 0);
	CHECK(uraid_stop(a) == 0);
	free(shadow);
	free(buf);
out:
	for (int i = 0; i < 5; i++)
		unlink(paths[i]);
	rmdir(dir);
}

/* A RAID6 member's data area (data_offset from its 1.2 superblock: the
 * u64 at byte 128 of the 4 KiB at 4 KiB), len bytes, straight from the
 * file. NULL when unreadable. */
static uint8_t *r6_member_bytes(const char *path, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t sb[8], *buf = malloc(len);
	uint64_t doff = 0;
	bool ok = fd >= 0 && buf && pread(fd, sb, 8, 4096 + 128) == 8;
	for (int i = 7; ok && i >= 0; i--)
		doff = doff << 8 | sb[i];
	ok = ok && pread(fd, buf, len, (off_t)(doff * 512)) == (ssize_t)len;
	if (fd >= 0)
		close(fd);
	if (!ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The plain-C model of md's RAID6 layouts 0 (left-asymmetric) and 2
 * (left-symmetric) on n members, written out here from md's description:
 * stripe s has P on member n-1 - s % n and Q on the one after it (0 after
 * the last); left-symmetric puts data chunk i on the (i+2)-th member after
 * P, left-asymmetric on member i, or i+2 from P's member on (i+1 when P is
 * last); Q's coefficient of a data member is g^j, j its place among the
 * data members counted from the one after Q, wrapping. P and Q come from
 * test_parity_ref.h's byte-at-a-time reference. Compares the first
 * `stripes` chunks of every member in `check` (a bit per member) with it:
 * the number of 4 KiB pages that differ. */
static uint64_t r6_model_diff(const char (*paths)[96], int n, int layout, size_t clen,
                              uint64_t stripes, const uint8_t *shadow, unsigned check,
                              const char *what)
{
	int k = n - 2;
	size_t len = (size_t)stripes * clen;
	uint8_t *img[8], *got[8];
	uint64_t bad = 0;
	for (int m = 0; m < n; m++) {
		img[m] = malloc(len);
		got[m] = check >> m & 1 ? r6_member_bytes(paths[m], len) : NULL;
		if (check >> m & 1 && !got[m]) {
			fprintf(stderr, "%s: member %d unreadable\n", what, m);
			bad++;
		}
	}
	for (uint64_t s = 0; s < stripes; s++) {
		int p = n - 1 - (int)(s % (uint64_t)n), q = (p + 1) % n;
		int data_of[8]; /* member -> data chunk, -1 for P and Q */
		for (int m = 0; m < n; m++)
			data_of[m] = -1;
		for (int i = 0; i < k; i++) {
			int m = layout == 2  ? (p + 2 + i) % n
			        : p == n - 1 ? i + 1
			        : i < p      ? i
			                     : i + 2;
			data_of[m] = i;
		}
		uint8_t *d[8];
		for (int j = 0, m = (q + 1) % n; j < k; m = (m + 1) % n) {
			if (data_of[m] < 0)
				continue;
			d[j] = img[m] + s * clen;
			memcpy(d[j++], shadow + (s * (uint64_t)k + (uint64_t)data_of[m]) * clen,
			       clen);
		}
		ref_pq(k, clen, d, img[p] + s * clen, img[q] + s * clen);
	}
	for (int m = 0; m < n; m++) {
		for (size_t o = 0; got[m] && o < len; o += 4096)
			if (memcmp(img[m] + o, got[m] + o, 4096) && bad++ < 3)
				fprintf(
				    stderr,
				    "%s: layout %d: member %d byte %zu differs from the model\n",
				    what, layout, m, o);
		free(img[m]);
		free(got[m]);
	}
	return bad;
}

/* Writes of a RAID6 on n mapped members go straight into their pages
 * (stripe_mapped.c): whole stripes (data copied, P and Q computed there),
 * and small writes inside one chunk where md would read-modify-write (n >=
 * 7: P and Q updated in place). Runs of whole stripes, partial stripes
 * around them, small writes, against a shadow; every member then holds
 * what the plain-C model says. A data member cut under the array fails
 * (the guard; under a whole stripe, or under a small write when
 * `cut_small`), the writes afterwards land on the others as the model says,
 * and the array reads back the shadow degraded, and doubly degraded (Q
 * rebuilding). */
static void raid6_mapped(int layout, int n, bool cut_small)
{
	char dir[64], paths[8][96], err[256], what[64];
	const char *pp[8];
	unsigned all = (1u << n) - 1;
	if (!make_dir(dir, sizeof(dir)))
		return;
	CHECK(uraid_member_map_guard_install() == 0);
	for (int i = 0; i < n; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%d", dir, i);
		pp[i] = paths[i];
	}
	struct uraid_create_opts o = {0};
	o.level = 6;
	o.raid_devices = n;
	o.layout_set = true;
	o.layout = (uint32_t)layout;
	o.chunk_sectors = 32 * 2;
	o.assume_clean = true;
	o.member_bytes = 3 * MB;
	struct uraid_array *a = NULL;
	int rc = uraid_create(&o, pp, n, URAID_NO_SYNC_THREAD, &a, err, sizeof(err));
	CHECKF(rc == 0, "create: %s", err);
	if (rc < 0)
		goto out;
	size_t clen = 32 * 1024;
	uint64_t size = uraid_size(a), width = (uint64_t)(n - 2) * clen, seed = 13;
	uint64_t stripes = size / width;
	uint8_t *shadow = malloc(size), *buf = malloc(8 * width + 8192);
	/* The first write fills the members' holes by member requests (a
	 * hole is not copied into: member_file.c); the second goes straight
	 * into the then backed pages. */
	t_fill(&seed, shadow, size);
	CHECK(uraid_write(a, shadow, size, 0) == 0);
	CHECK(r6_model_diff(paths, n, layout, clen, stripes, shadow, all, "first write") == 0);
	t_fill(&seed, shadow, size);
	CHECK(uraid_write(a, shadow, size, 0) == 0);
	CHECKF(mappings_under(dir) == n, "%d of %d members mapped", mappings_under(dir), n);
	CHECK(r6_model_diff(paths, n, layout, clen, stripes, shadow, all, "whole array") == 0);
	int bad = 0;
	for (int i = 0; i < 100; i++) {
		uint64_t len = (t_rand(&seed) % 8 + 1) * width, off = t_rand(&seed) % 3;
		/* whole stripes, or shifted by a few pages: partial at both ends */
		off = (t_rand(&seed) % (stripes - 8)) * width + off * 4096;
		t_fill(&seed, buf, len);
		bad += uraid_write(a, buf, len, off) != 0;
		memcpy(shadow + off, buf, len);
	}
	CHECKF(bad == 0, "%d writes failed", bad);
	CHECK(r6_model_diff(paths, n, layout, clen, stripes, shadow, all, "random writes") == 0);
	bad = small_writes(a, shadow, size, clen, 300, &seed);
	CHECKF(bad == 0, "%d small writes failed", bad);
	CHECK(te_verify(a, shadow, size) == 0);
	CHECK(r6_model_diff(paths, n, layout, clen, stripes, shadow, all, "small writes") == 0);
	/* Member 2 cut: the first whole stripe or small write over it
	 * faults, goes the member-request way, and the member fails. */
	CHECK(truncate(paths[2], 0) == 0);
	if (cut_small)
		CHECK(small_writes(a, shadow, size, clen, 100, &seed) == 0);
	t_fill(&seed, buf, width);
	for (uint64_t s = 0; s < stripes; s += 2) { /* half the stripes whole */
		CHECK(uraid_write(a, buf, width, s * width) == 0);
		memcpy(shadow + s * width, buf, width);
	}
	CHECK(small_writes(a, shadow, size, clen, 100, &seed) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECKF(st.failed == 1 && st.degraded == 1 && st.working == n - 1,
	       "failed %d degraded %d working %d", st.failed, st.degraded, st.working);
	CHECK(te_verify(a, shadow, size) == 0);
	snprintf(what, sizeof(what), "after the cut (%s)", cut_small ? "small" : "whole");
	CHECK(r6_model_diff(paths, n, layout, clen, stripes, shadow, all & ~(1u << 2), what) == 0);
	CHECK(uraid_fail(a, "#4", err, sizeof(err)) == 0);
	CHECK(te_verify(a, shadow, size) == 0);
	CHECK(uraid_stop(a) == 0);
	free(shadow);
	free(buf);
out:
	for (int i = 0; i < n; i++)
		unlink(paths[i]);
	rmdir(dir);
}

/* Left-symmetric (mdadm's default: Q order = data order) and
 * left-asymmetric (Q order not the data order); six members (small writes
 * reconstruct-write) and seven (they read-modify-write). */
static void raid6_stripes_mapped(void)
{
	raid6_mapped(2, 6, false);
	raid6_mapped(0, 7, true);
	raid6_mapped(2, 7, false);
}

TEST_MAIN(T(chains_to_previous), T(member_truncated), T(array_member_truncated),
          T(full_stripes_mapped), T(raid6_stripes_mapped))
