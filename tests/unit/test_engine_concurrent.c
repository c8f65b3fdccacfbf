/* Engine concurrency: several threads write and read random ranges of one
 * array at the same time (the engine's reads of a healthy array run without
 * its mutex). The test serialises only overlapping ranges, with its own
 * range locks (one per 16 KiB region, taken in ascending order), so the
 * expected contents are defined: every read must equal the shadow copy at
 * that moment. Ranges of different threads overlap often (small array) and
 * are disjoint often. Afterwards: the whole array equals the shadow, and an
 * md-style check finds 0 mismatches (parity/mirrors consistent). Runs on a
 * healthy and a degraded raid5, raid6 (two members lost: reads need Q),
 * raid1 and raid10, and raid5/6 on mapped members in /dev/shm; fixed
 * seeds. */
#include <pthread.h>
#include <unistd.h>

#include "test_engine_common.h"

#define MEMBER_BYTES (2u << 20)
#define REGION       (16u << 10)
#define THREADS      4
#define OPS          300
#define MAX_IO       (96u << 10)

struct shared {
	struct uraid_array *a;
	uint8_t *shadow;
	uint64_t size;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool *busy; /* per region */
	int errors, mismatches;
};

struct worker {
	struct shared *s;
	uint64_t seed;
	pthread_t t;
};

static void lock_range(struct shared *s, uint64_t off, uint64_t len)
{
	uint64_t r0 = off / REGION, r1 = (off + len - 1) / REGION;
	pthread_mutex_lock(&s->mu);
	for (uint64_t r = r0; r <= r1; r++) {
		while (s->busy[r])
			pthread_cond_wait(&s->cv, &s->mu);
		s->busy[r] = true;
	}
	pthread_mutex_unlock(&s->mu);
}

static void unlock_range(struct shared *s, uint64_t off, uint64_t len)
{
	uint64_t r0 = off / REGION, r1 = (off + len - 1) / REGION;
	pthread_mutex_lock(&s->mu);
	for (uint64_t r = r0; r <= r1; r++)
		s->busy[r] = false;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct shared *s = w->s;
	uint8_t *buf = malloc(MAX_IO);
	int errors = 0, mismatches = 0;
	for (int i = 0; i < OPS && buf; i++) {
		uint64_t len = (t_rand(&w->seed) % (MAX_IO / 512) + 1) * 512;
		if (t_rand(&w->seed) % 4 == 0)
			len = 4096;
		uint64_t off = t_rand(&w->seed) % ((s->size - len) / 512 + 1) * 512;
		/* First half mixed, second half mostly reads: the reads then
		 * overlap in time with each other, not only with writers. */
		bool write = t_rand(&w->seed) % 100 < (i < OPS / 2 ? 50u : 5u);
		lock_range(s, off, len);
		if (write) {
			t_fill(&w->seed, buf, len);
			if (uraid_write(s->a, buf, len, off) < 0)
				errors++;
			memcpy(s->shadow + off, buf, len); /* this thread holds the range */
		} else {
			if (uraid_read(s->a, buf, len, off) < 0)
				errors++;
			else if (memcmp(buf, s->shadow + off, len))
				mismatches++;
		}
		unlock_range(s, off, len);
	}
	free(buf);
	pthread_mutex_lock(&s->mu);
	s->errors += errors;
	s->mismatches += mismatches;
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* files: members are files in `base` (io_uring when available, so every
 * request needs its own queue; on tmpfs the engine calls the members
 * directly); else in-memory members (synchronous). */
static void run_in(int level, int ndisks, bool degrade, bool files, uint64_t seed, const char *base)
{
	struct te_disk disks[TE_MAX];
	struct member *mm[TE_MAX];
	char name[32], err[256], dir[64], paths[TE_MAX][96];
	const char *pp[TE_MAX];
	struct uraid_create_opts o = {0};
	o.level = level;
	o.raid_devices = ndisks;
	o.chunk_sectors = 64 * 2; /* 64 KiB: requests span 1-3 chunks */
	o.assume_clean = true;
	o.member_bytes = MEMBER_BYTES;
	struct uraid_array *a = NULL;
	int rc;
	snprintf(dir, sizeof(dir), "%s/uraid-conc-XXXXXX", base);
	if (files) {
		/* On /dev/shm, mapped: writes straight into the members' pages
		 * (raid456/stripe_mapped.c) from several threads. */
		if (!strcmp(base, "/dev/shm"))
			CHECK(uraid_member_map_guard_install() == 0);
		CHECK(mkdtemp(dir) != NULL);
		for (int i = 0; i < ndisks; i++) {
			snprintf(paths[i], sizeof(paths[i]), "%s/m%d", dir, i);
			pp[i] = paths[i];
		}
		rc = uraid_create(&o, pp, ndisks, URAID_NO_SYNC_THREAD, &a, err, sizeof(err));
	} else {
		for (int i = 0; i < ndisks; i++) {
			snprintf(name, sizeof(name), "c%d", i);
			te_disk_open(&disks[i], name, MEMBER_BYTES);
			mm[i] = te_borrow_raw(&disks[i]);
		}
		rc = uraid_create_members(&o, mm, ndisks, URAID_NO_SYNC_THREAD, &a, err,
		                          sizeof(err));
	}
	CHECKF(rc == 0, "create level %d: %s", level, err);
	if (rc < 0)
		goto out;
	struct shared s = {.a = a, .size = uraid_size(a)};
	uint64_t fs = seed;
	s.shadow = malloc(s.size);
	s.busy = calloc(s.size / REGION + 1, sizeof(bool));
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	t_fill(&fs, s.shadow, s.size);
	CHECK(uraid_write(a, s.shadow, s.size, 0) == 0);
	if (degrade)
		CHECK(uraid_fail(a, "#1", err, sizeof(err)) == 0);
	if (degrade && level == 6)
		CHECK(uraid_fail(a, "#3", err, sizeof(err)) == 0);

	struct worker w[THREADS];
	for (int i = 0; i < THREADS; i++) {
		w[i].s = &s;
		w[i].seed = seed * 100 + (uint64_t)i;
		CHECK(pthread_create(&w[i].t, NULL, worker_main, &w[i]) == 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(w[i].t, NULL);
	CHECKF(s.errors == 0, "level %d: %d failed requests", level, s.errors);
	CHECKF(s.mismatches == 0, "level %d%s: %d reads differ from the shadow", level,
	       degrade ? " degraded" : "", s.mismatches);
	CHECK(te_verify(a, s.shadow, s.size) == 0);
	if (!degrade) {
		CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
		CHECK(te_sync_all(a) == 0);
		struct uraid_status st;
		uraid_status(a, &st);
		CHECKF(st.mismatch_cnt == 0, "level %d: check found %llu mismatched sectors", level,
		       (unsigned long long)st.mismatch_cnt);
	}
	CHECK(uraid_stop(a) == 0);
	pthread_mutex_destroy(&s.mu);
	pthread_cond_destroy(&s.cv);
	free(s.shadow);
	free(s.busy);
out:
	for (int i = 0; i < ndisks; i++) {
		if (files)
			unlink(paths[i]);
		else
			te_disk_close(&disks[i]);
	}
	if (files)
		rmdir(dir);
}

static void run(int level, int ndisks, bool degrade, bool files, uint64_t seed)
{
	run_in(level, ndisks, degrade, files, seed, "/tmp");
}

static void raid5(void)
{
	run(5, 5, false, false, 11);
}
static void raid5_files(void)
{
	run(5, 5, false, true, 21);
}
static void raid5_degraded(void)
{
	run(5, 4, true, false, 12);
}
static void raid6(void)
{
	run(6, 6, false, false, 13);
}
static void raid6_files_degraded(void)
{
	run(6, 5, true, true, 14);
}
static void raid1_files(void)
{
	run(1, 3, false, true, 15);
}
static void raid5_shm(void)
{
	run_in(5, 5, false, true, 17, "/dev/shm");
}
static void raid6_shm(void)
{
	run_in(6, 7, false, true, 18, "/dev/shm"); /* 7: small writes read-modify-write */
}
static void raid10(void)
{
	run(10, 4, false, false, 16);
}

TEST_MAIN(T(raid5), T(raid5_files), T(raid5_degraded), T(raid6), T(raid6_files_degraded),
          T(raid1_files), T(raid5_shm), T(raid6_shm), T(raid10))
