/* Assembly of an in-place reshape interrupted in its critical section
 * (engine/reshape_backup.c, mdadm's Grow_restart): a 0.90 raid5 grown 4 ->
 * 5 with a backup member, the power cut (sim/member_crash.h) at the first
 * point where the superblocks record the reshape and the move has begun.
 * Without the backup, read-write assembly is refused "too early" (nothing
 * written); a backup of another array, a stale one (unless
 * MDADM_GROW_ALLOW_OLD=1, as mdadm's Grow_restart), one with a bad
 * checksum or one holding no section are refused naming the problem,
 * nothing written; the right one is restored: the content is what was
 * written before the grow, the reshape finishes with 5 members, check
 * finds no mismatch, and the backup is forgotten (length 0). And the grow's
 * own refusals: no backup on 0.90 in mdadm's words, an existing backup
 * file, nothing written either time. And the sync thread of an array whose
 * restore is pending (rs->restore set, the state forced here) sleeps: its
 * CPU time over 0.3 s stays under 20 ms, a stop returns, and the restore's
 * signal lets the move go on to the end (content, check). */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "crash_workload.h"
#include "engine/core/engine.h"
#include "engine/core/reshape.h"
#include "engine/sync/sync.h"
#include "meta/md_backup.h"
#include "reshape_common.h"

#define BK_SECTORS 512 /* per member */
#define BK_DISK    (2u << 20)
#define BK_N       5

enum { M_PROBE, M_NONE, M_FOREIGN, M_STALE, M_CSUM, M_EMPTY, M_GOOD, M_OLD_OK };

struct bk_state {
	struct te_disk d[BK_N];
	struct member *bk_mem, *bk;
	struct crash_ctl *ctl;
	uint8_t *shadow;
	uint64_t size;
	uint64_t start_reqs; /* member requests of the reshape start */
};

static void bk_free(struct bk_state *s)
{
	for (int i = 0; i < BK_N; i++)
		if (s->d[i].fault)
			member_close(s->d[i].fault);
	if (s->bk)
		member_close(s->bk);
	crash_ctl_free(s->ctl);
	free(s->shadow);
}

/* The array created, written, a spare added and the grow started with the
 * power cut at request `cut` of the start (0: none). */
static int bk_make(struct bk_state *s, uint64_t cut)
{
	memset(s, 0, sizeof(*s));
	char err[512];
	if (crash_ctl_new(&s->ctl) < 0)
		abort();
	for (int i = 0; i < BK_N; i++) {
		snprintf(s->d[i].name, sizeof(s->d[i].name), "b%d", i);
		if (member_open_mem(s->d[i].name, BK_DISK, &s->d[i].mem) < 0 ||
		    member_crash_wrap(s->d[i].mem, s->ctl, &s->d[i].fault) < 0)
			abort();
	}
	if (member_open_mem("backup", 1u << 20, &s->bk_mem) < 0 ||
	    member_crash_wrap(s->bk_mem, s->ctl, &s->bk) < 0)
		abort();
	struct uraid_create_opts o = {.level = URAID_LEVEL_RAID5,
	                              .raid_devices = 4,
	                              .chunk_sectors = 16,
	                              .metadata = 0,
	                              .metadata_set = true,
	                              .assume_clean = true,
	                              .size_sectors = BK_SECTORS};
	struct uraid_array *a;
	if (te_create(&o, s->d, 4, &a) < 0)
		return -1;
	s->size = uraid_size(a);
	s->shadow = malloc(s->size);
	uint64_t r = 0xbacc;
	for (uint64_t i = 0; i < s->size; i++)
		s->shadow[i] = (uint8_t)t_rand(&r);
	if (uraid_write(a, s->shadow, s->size, 0) || uraid_flush(a) ||
	    uraid_add_member(a, te_borrow(&s->d[4]), err, sizeof(err)) < 0)
		return -1;
	uint64_t base = crash_ctl_requests(s->ctl);
	crash_ctl_arm(s->ctl, cut ? base + cut : 0);
	struct uraid_reshape_opts ro = {.raid_disks = 5, .layout = -1, .backup_member = s->bk};
	int rc = uraid_array_reshape_start(a, &ro, err, sizeof(err));
	s->start_reqs = crash_ctl_requests(s->ctl) - base;
	if (!cut && rc < 0)
		fprintf(stderr, "reshape start: %s\n", err);
	uraid_drop(a);
	struct crash_stats cs;
	return crash_apply(s->ctl, 0x5eed, &cs) < 0 || (!cut && rc < 0) ? -1 : 0;
}

static void bk_images(struct bk_state *s, uint8_t (*img)[BK_DISK])
{
	for (int i = 0; i < BK_N; i++)
		CHECK(te_pread(s->d[i].fault, img[i], BK_DISK, 0) == BK_DISK);
}

/* Change the backup's superblock (re-encoded, checksums right unless
 * broken on purpose). */
static void bk_edit(struct bk_state *s, int mode)
{
	uint8_t blk[512];
	struct md_backup_sb b;
	char err[160];
	CHECK(te_pread(s->bk, blk, 512, 0) == 512);
	CHECKF(md_backup_decode(blk, &b, err, sizeof(err)) == 0, "%s", err);
	if (mode == M_FOREIGN)
		b.set_uuid[5] ^= 0x40;
	if (mode == M_STALE || mode == M_OLD_OK)
		b.mtime -= 3 * 3600;
	if (mode == M_EMPTY)
		b.length = 0;
	md_backup_encode(&b, blk);
	if (mode == M_CSUM)
		blk[64] ^= 0x10;
	CHECK(te_pwrite(s->bk, blk, 512, 0, 0) == 512);
}

/* Assemble the state cut at `cut` one way; returns the error (0: ok). */
static int bk_try(uint64_t cut, int mode, char *err, size_t errlen)
{
	struct bk_state s;
	static uint8_t before[BK_N][BK_DISK], after[BK_N][BK_DISK];
	int rc = bk_make(&s, cut);
	CHECK(rc == 0);
	if (mode != M_NONE && mode != M_PROBE && mode != M_GOOD)
		bk_edit(&s, mode);
	bk_images(&s, before);
	struct member *mm[BK_N];
	for (int i = 0; i < BK_N; i++)
		mm[i] = te_borrow(&s.d[i]);
	struct uraid_array *a = NULL;
	char warn[512];
	/* mdadm's Grow_restart takes a stale backup with MDADM_GROW_ALLOW_OLD=1 */
	if (mode == M_OLD_OK)
		setenv("MDADM_GROW_ALLOW_OLD", "1", 1);
	rc = mode == M_NONE || mode == M_PROBE
	         ? uraid_assemble_members(mm, BK_N, URAID_NO_SYNC_THREAD, &a, err, errlen, warn,
	                                  sizeof(warn))
	         : uraid_assemble_members_backup(mm, BK_N, URAID_NO_SYNC_THREAD, s.bk, &a, err,
	                                         errlen, warn, sizeof(warn));
	unsetenv("MDADM_GROW_ALLOW_OLD");
	if (rc < 0 && mode != M_PROBE) {
		bk_images(&s, after);
		CHECKF(!memcmp(before, after, sizeof(before)), "mode %d: a refusal wrote", mode);
	}
	if (rc == 0 && (mode == M_GOOD || mode == M_OLD_OK)) {
		CHECK(te_sync_all(a) == 0);
		struct uraid_status st;
		memset(&st, 0, sizeof(st));
		uraid_status(a, &st);
		CHECKF(st.reshape == 0 && st.raid_disks == 5, "reshape %d, %d members", st.reshape,
		       st.raid_disks);
		CHECK(te_verify(a, s.shadow, s.size) == 0);
		uint64_t mis = rsc_check(a);
		CHECKF(mis == 0, "%llu mismatches (all ones: check did not run)",
		       (unsigned long long)mis);
		uint8_t blk[512];
		struct md_backup_sb b;
		char e[160];
		CHECK(te_pread(s.bk, blk, 512, 0) == 512);
		CHECKF(md_backup_decode(blk, &b, e, sizeof(e)) == 0 && b.length == 0,
		       "the backup is forgotten after the restore (length %llu)",
		       (unsigned long long)b.length);
	}
	if (a)
		uraid_stop(a);
	bk_free(&s);
	return rc;
}

static void restore(void)
{
	struct bk_state s;
	char err[512];
	CHECK(bk_make(&s, 0) == 0);
	uint64_t total = s.start_reqs;
	bk_free(&s);
	CHECKF(total > 10, "the start made %llu requests", (unsigned long long)total);
	/* The first cut that leaves the array in its critical section. */
	uint64_t cut = 0;
	for (uint64_t k = 1; k < total && !cut; k++) {
		int rc = bk_try(k, M_PROBE, err, sizeof(err));
		if (rc == -EOPNOTSUPP && strstr(err, "too early"))
			cut = k;
	}
	CHECKF(cut, "no cut in %llu requests left the critical section", (unsigned long long)total);
	if (!cut)
		return;
	int rc = bk_try(cut, M_NONE, err, sizeof(err));
	CHECKF(rc == -EOPNOTSUPP && strstr(err, "too early") && strstr(err, "--backup-file"),
	       "no backup: %d %s", rc, err);
	rc = bk_try(cut, M_FOREIGN, err, sizeof(err));
	CHECKF(rc == -EINVAL && strstr(err, "another array"), "foreign: %d %s", rc, err);
	rc = bk_try(cut, M_STALE, err, sizeof(err));
	CHECKF(rc == -EINVAL && strstr(err, "too-old timestamp on backup-metadata") &&
	           strstr(err, "MDADM_GROW_ALLOW_OLD=1"),
	       "stale: %d %s", rc, err);
	setenv("MDADM_GROW_ALLOW_OLD", "yes", 1); /* mdadm's check_env: 1 only */
	rc = bk_try(cut, M_STALE, err, sizeof(err));
	CHECKF(rc == -EINVAL && strstr(err, "too-old"), "stale, MDADM_GROW_ALLOW_OLD=yes: %d %s",
	       rc, err);
	rc = bk_try(cut, M_OLD_OK, err, sizeof(err));
	CHECKF(rc == 0, "stale, MDADM_GROW_ALLOW_OLD=1: %d %s", rc, err);
	rc = bk_try(cut, M_CSUM, err, sizeof(err));
	CHECKF(rc == -EINVAL && strstr(err, "checksum"), "bad checksum: %d %s", rc, err);
	rc = bk_try(cut, M_EMPTY, err, sizeof(err));
	CHECKF(rc == -EINVAL && strstr(err, "does not hold it"), "empty: %d %s", rc, err);
	rc = bk_try(cut, M_GOOD, err, sizeof(err));
	CHECKF(rc == 0, "the right backup: %d %s", rc, err);
	printf("# cut at request %llu of %llu of the start\n", (unsigned long long)cut,
	       (unsigned long long)total);
}

/* mdadm's refusal without a backup where one is needed, and an existing
 * backup file: nothing written. */
static void grow_refusals(void)
{
	struct te_disk d[5];
	char err[512];
	for (int i = 0; i < 5; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "g%d", i);
		te_disk_open(&d[i], nm, BK_DISK);
	}
	struct uraid_create_opts o = {.level = URAID_LEVEL_RAID5,
	                              .raid_devices = 4,
	                              .chunk_sectors = 16,
	                              .metadata = 0,
	                              .metadata_set = true,
	                              .assume_clean = true,
	                              .size_sectors = BK_SECTORS};
	struct uraid_array *a = NULL;
	CHECK(te_create(&o, d, 4, &a) == 0);
	CHECK(uraid_add_member(a, te_borrow(&d[4]), err, sizeof(err)) == 0);
	CHECK(uraid_flush(a) == 0);
	static uint8_t before[5][BK_DISK], after[BK_DISK];
	for (int i = 0; i < 5; i++)
		CHECK(te_pread(d[i].fault, before[i], BK_DISK, 0) == BK_DISK);
	struct uraid_reshape_opts ro = {.raid_disks = 5, .layout = -1};
	int rc = uraid_array_reshape_start(a, &ro, err, sizeof(err));
	CHECKF(
	    rc == -ENOSPC &&
	        strstr(err, "Cannot grow - need a spare or backup-file to backup critical section"),
	    "no backup: %d %s", rc, err);
	char path[] = "/tmp/uraid-bk-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	ro.backup_file = path;
	rc = uraid_array_reshape_start(a, &ro, err, sizeof(err));
	CHECKF(rc == -EEXIST && strstr(err, "File exists"), "existing file: %d %s", rc, err);
	unlink(path);
	CHECK(uraid_flush(a) == 0);
	bool same = true;
	for (int i = 0; i < 5; i++) {
		CHECK(te_pread(d[i].fault, after, BK_DISK, 0) == BK_DISK);
		same = same && !memcmp(before[i], after, BK_DISK);
	}
	CHECK(same);
	/* With the file: started, and mdadm's layout in it (the superblock
	 * at 0, the section forgotten once moved). */
	rc = uraid_array_reshape_start(a, &ro, err, sizeof(err));
	CHECKF(rc == 0, "with the file: %s", err);
	struct member *m;
	CHECK(member_open_file(path, MEMBER_RDONLY, 0, &m, err, sizeof(err)) == 0);
	uint8_t blk[512];
	struct md_backup_sb b;
	char e[160];
	CHECK(member_read(m, blk, 512, 0) == 0);
	CHECKF(md_backup_decode(blk, &b, e, sizeof(e)) == 0 && b.version == 1 && b.devstart == 8 &&
	           b.length == 0 && b.devstart2 >= 192 && m->size == (b.devstart2 + 8) * 512,
	       "backup file: %s, devstart %llu, devstart2 %llu, size %llu", e,
	       (unsigned long long)b.devstart, (unsigned long long)b.devstart2,
	       (unsigned long long)m->size);
	member_close(m);
	unlink(path);
	CHECK(te_sync_all(a) == 0);
	uraid_stop(a);
	for (int i = 0; i < 5; i++)
		te_disk_close(&d[i]);
}

/* mdadm's sliding backup (engine/reshape_slide.c): a 0.90 raid5 chunk
 * change 16 -> 8 sectors with a backup member, three windows moved, the
 * array dropped (a crash); then the file is made as mdadm's monitor leaves
 * it, both sections live ahead of the position: sections [P, P + W) and
 * [P + W, P + 2W) holding the old layout's data ("md_backup_data-2"), the
 * rows they cover garbled on every member (the kernel may have written
 * there). Edited to another array's, 3 h stale, or lying past the position,
 * assembly refuses it naming why, nothing written; as it is, both sections
 * are restored: the position moves past them, the reshape finishes, the
 * content is what was written, check finds no mismatch. */
#define SL_N 4
enum { SL_GOOD, SL_FOREIGN, SL_STALE, SL_OUTSIDE };

static int slide_try(int mode, char *err, size_t errlen)
{
	struct bk_state s;
	memset(&s, 0, sizeof(s));
	if (crash_ctl_new(&s.ctl) < 0)
		abort();
	for (int i = 0; i < SL_N; i++) {
		snprintf(s.d[i].name, sizeof(s.d[i].name), "s%d", i);
		if (member_open_mem(s.d[i].name, BK_DISK, &s.d[i].mem) < 0 ||
		    member_crash_wrap(s.d[i].mem, s.ctl, &s.d[i].fault) < 0)
			abort();
	}
	if (member_open_mem("backup", 1u << 20, &s.bk_mem) < 0 ||
	    member_crash_wrap(s.bk_mem, s.ctl, &s.bk) < 0)
		abort();
	struct uraid_create_opts o = {.level = URAID_LEVEL_RAID5,
	                              .raid_devices = SL_N,
	                              .chunk_sectors = 16,
	                              .metadata = 0,
	                              .metadata_set = true,
	                              .assume_clean = true,
	                              .size_sectors = BK_SECTORS};
	struct uraid_array *a = NULL;
	int rc = -1;
	CHECK(te_create(&o, s.d, SL_N, &a) == 0);
	s.size = uraid_size(a);
	s.shadow = malloc(s.size);
	uint64_t r = 0x511de;
	for (uint64_t i = 0; i < s.size; i++)
		s.shadow[i] = (uint8_t)t_rand(&r);
	CHECK(uraid_write(a, s.shadow, s.size, 0) == 0 && uraid_flush(a) == 0);
	struct uraid_reshape_opts ro = {.layout = -1, .chunk_sectors = 8, .backup_member = s.bk};
	CHECKF(uraid_array_reshape_start(a, &ro, err, errlen) == 0, "start: %s", err);
	for (int k = 0; k < 3; k++)
		CHECK(uraid_sync_step(a, 32) > 0);
	struct uraid_status st;
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	uraid_drop(a);
	a = NULL;
	/* The window (whole stripes of 48 sectors; 1/32 of a member is
	 * less) and the position after three. */
	uint64_t w = 48, p = 3 * w;
	uint8_t blk[512];
	struct md_backup_sb b;
	char e[160];
	CHECK(te_pread(s.bk, blk, 512, 0) == 512);
	CHECKF(md_backup_decode(blk, &b, e, sizeof(e)) == 0 && b.devstart == 8 &&
	           b.devstart2 == w && b.version == 2 &&
	           ((b.arraystart == p - w && b.length == w && !b.length2) ||
	            (b.arraystart2 == p - w && b.length2 == w && !b.length)),
	       "the last window's section live: %s v%d %llu+%llu %llu+%llu", e, b.version,
	       (unsigned long long)b.arraystart, (unsigned long long)b.length,
	       (unsigned long long)b.arraystart2, (unsigned long long)b.length2);
	uint64_t at = mode == SL_OUTSIDE ? p + 2 * w : p;
	b.arraystart = at;
	b.length = w;
	b.arraystart2 = at + w;
	b.length2 = w;
	if (mode == SL_FOREIGN)
		b.set_uuid[2] ^= 1;
	if (mode == SL_STALE)
		b.mtime -= 3 * 3600;
	md_backup_encode(&b, blk);
	CHECK(te_pwrite(s.bk, blk, 512, 0, 0) == 512);
	CHECK(te_pwrite(s.bk, s.shadow + at * 512, w * 512, 8 * 512, 0) == (ssize_t)(w * 512));
	CHECK(te_pwrite(s.bk, s.shadow + (at + w) * 512, w * 512, (8 + w) * 512, 0) ==
	      (ssize_t)(w * 512));
	/* Their rows (3 data members: sectors at/3 on) garbled everywhere. */
	static uint8_t junk[64 * 512];
	memset(junk, 0xa5, sizeof(junk));
	for (int i = 0; i < SL_N; i++)
		CHECK(te_pwrite(s.d[i].fault, junk, 2 * w / 3 * 512, at / 3 * 512, 0) ==
		      (ssize_t)(2 * w / 3 * 512));
	static uint8_t before[SL_N][BK_DISK], after[BK_DISK];
	for (int i = 0; i < SL_N; i++)
		CHECK(te_pread(s.d[i].fault, before[i], BK_DISK, 0) == BK_DISK);
	struct member *mm[SL_N];
	for (int i = 0; i < SL_N; i++)
		mm[i] = te_borrow(&s.d[i]);
	char warn[512];
	rc = uraid_assemble_members_backup(mm, SL_N, URAID_NO_SYNC_THREAD, s.bk, &a, err, errlen,
	                                   warn, sizeof(warn));
	if (rc < 0) {
		bool same = true;
		for (int i = 0; i < SL_N; i++) {
			CHECK(te_pread(s.d[i].fault, after, BK_DISK, 0) == BK_DISK);
			same = same && !memcmp(before[i], after, BK_DISK);
		}
		CHECKF(same, "mode %d: a refusal wrote", mode);
	} else {
		CHECK(te_sync_all(a) == 0);
		memset(&st, 0, sizeof(st));
		uraid_status(a, &st);
		CHECKF(st.reshape == 0 && st.chunk_sectors == 8, "reshape %d, chunk %u", st.reshape,
		       st.chunk_sectors);
		CHECK(te_verify(a, s.shadow, s.size) == 0);
		uint64_t mis = rsc_check(a);
		CHECKF(mis == 0, "%llu mismatches (all ones: check did not run)",
		       (unsigned long long)mis);
		uraid_stop(a);
	}
	bk_free(&s);
	return rc;
}

static void slide_restore(void)
{
	char err[512];
	int rc = slide_try(SL_FOREIGN, err, sizeof(err));
	CHECKF(rc == -EINVAL && strstr(err, "another array"), "foreign: %d %s", rc, err);
	rc = slide_try(SL_STALE, err, sizeof(err));
	CHECKF(rc == -EINVAL && strstr(err, "too-old timestamp"), "stale: %d %s", rc, err);
	rc = slide_try(SL_OUTSIDE, err, sizeof(err));
	CHECKF(rc == -EINVAL && strstr(err, "outside them"), "past the position: %d %s", rc, err);
	rc = slide_try(SL_GOOD, err, sizeof(err));
	CHECKF(rc == 0, "mdadm's two sections restored: %d %s", rc, err);
}

/* The sync thread's CPU time, ms. */
static double thread_cpu_ms(pthread_t t)
{
	clockid_t cid;
	struct timespec ts;
	if (pthread_getcpuclockid(t, &cid) || clock_gettime(cid, &ts))
		return -1;
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* An array mid-reshape (the grow run whole, then the power cut) with its
 * restore forced pending and the sync thread started: how much CPU the
 * thread spends in 0.3 s; then stopped (stop_it) or the restore done and
 * signalled (the move goes on to the end). */
static void restore_wait_one(bool stop_it)
{
	struct bk_state s;
	char err[512], warn[512];
	CHECK(bk_make(&s, 0) == 0);
	struct member *mm[BK_N];
	for (int i = 0; i < BK_N; i++)
		mm[i] = te_borrow(&s.d[i]);
	struct uraid_array *h = NULL;
	int rc = uraid_assemble_members_backup(mm, BK_N, URAID_NO_SYNC_THREAD, s.bk, &h, err,
	                                       sizeof(err), warn, sizeof(warn));
	CHECKF(rc == 0, "assemble mid-reshape: %d %s", rc, err);
	if (rc < 0) {
		bk_free(&s);
		return;
	}
	struct eng_array *a = eng_of(h);
	CHECK(a->rs && !a->rs->restore);
	eng_lock(a);
	a->rs->restore = s.bk; /* as assembly leaves it until it restores */
	eng_unlock(a);
	eng_sync_thread_start(a);
	CHECK(a->thread_running);
	double t0 = thread_cpu_ms(a->thread);
	struct timespec nap = {0, 300 * 1000 * 1000};
	nanosleep(&nap, NULL);
	double used = thread_cpu_ms(a->thread) - t0;
	/* spinning, even a tenth of a core gives it 30 ms */
	CHECKF(t0 >= 0 && used < 20, "the waiting sync thread used %.1f ms of CPU in 0.3 s", used);
	printf("# waiting sync thread: %.2f ms of CPU in 0.3 s (%s)\n", used,
	       stop_it ? "then stopped" : "then restored");
	fflush(stdout);
	/* a spinning thread starves the lock, and a stop or a restore that
	 * does not wake it hangs: either fails here */
	alarm(60);
	struct uraid_status st;
	memset(&st, 0, sizeof(st));
	uraid_status(h, &st);
	CHECKF(st.reshape, "the reshape waits (not over, not abandoned)");
	if (stop_it) {
		CHECK(uraid_stop(h) == 0);
		alarm(0);
		bk_free(&s);
		return;
	}
	eng_lock(a);
	a->rs->restore = NULL;
	pthread_cond_broadcast(&a->cond); /* what eng_backup_restore does */
	eng_unlock(a);
	CHECK(uraid_sync_wait(h) == 0);
	alarm(0);
	memset(&st, 0, sizeof(st));
	uraid_status(h, &st);
	CHECKF(st.reshape == 0 && st.raid_disks == 5, "reshape %d, %d members", st.reshape,
	       st.raid_disks);
	CHECK(te_verify(h, s.shadow, s.size) == 0);
	uint64_t mis = rsc_check(h);
	CHECKF(mis == 0, "%llu mismatches (all ones: check did not run)", (unsigned long long)mis);
	uraid_stop(h);
	bk_free(&s);
}

static void restore_wait(void)
{
	restore_wait_one(true);
	restore_wait_one(false);
}

TEST_MAIN(T(restore), T(grow_refusals), T(slide_restore), T(restore_wait))
