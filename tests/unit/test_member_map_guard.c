/* The SIGBUS guard of mapped members (member_guard.c): a tmpfs member is
 * mapped once the process installed the guard, and a member file truncated
 * by someone else then fails that member (-EIO) instead of ending the
 * process. Checks: SIGBUS that is not a guarded copy's still reaches the
 * handler installed before (a child process: the guard is process state);
 * a truncated mapped member gives -EIO on reads and writes; a RAID5 of four
 * mapped files, one truncated from another thread while a writer runs,
 * ends with that member failed, the array degraded, every write done and
 * every byte read back as written. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "member/member_guard.h"
#include "test_engine_common.h"

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

/* Whole-stripe writes on mapped members go straight into their pages
 * (stripe_mapped.c): runs of whole stripes, partial stripes around them,
 * against a shadow; then a check pass finds P right everywhere (0
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

TEST_MAIN(T(chains_to_previous), T(member_truncated), T(array_member_truncated),
          T(full_stripes_mapped))
