/* Engine: check/repair (including RAID6 repair of the member that is
 * actually wrong), stale members left out at assembly, an interrupted
 * rebuild resuming from its checkpoint (raid5; raid10 near, far and offset
 * after a crash), sync_speed_min holding under foreground load, create
 * refusing bad parameters without writing anything, an assembly frozen until
 * unfrozen (URAID_FROZEN), and a small write above
 * the resync point making parity right (reconstruct-write, as md forces
 * there). Fixed seeds. */
#include <pthread.h>
#include <time.h>

#include "test_engine_common.h"
#include "sim/member_fault.h"

#define MB (1u << 20)

static struct uraid_array *mk(struct te_disk *d, int n, int level, const char *layout, int nd,
                              uint32_t chunk_kib)
{
	for (int i = 0; i < n; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "d%d", i);
		te_disk_open(&d[i], nm, 3 * MB);
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = level;
	o.raid_devices = nd;
	o.chunk_sectors = chunk_kib * 2;
	if (layout) {
		layout_parse(level, layout, &o.layout);
		o.layout_set = true;
	}
	struct uraid_array *a = NULL;
	if (te_create(&o, d, nd, &a) < 0)
		return NULL;
	te_sync_all(a);
	return a;
}

static uint8_t *fill(struct uraid_array *a, uint64_t seed)
{
	uint64_t size = uraid_size(a), rs = seed;
	uint8_t *shadow = malloc(size);
	t_fill(&rs, shadow, size);
	CHECK(uraid_write(a, shadow, size, 0) == 0);
	return shadow;
}

static uint64_t run_action(struct uraid_array *a, enum uraid_sync_action act)
{
	char err[256];
	int rc = uraid_sync_action(a, act, err, sizeof(err));
	CHECKF(rc == 0, "sync action: %s", err);
	CHECK(te_sync_all(a) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	return st.mismatch_cnt;
}

/* (CHECK_EQ_U64 evaluates its arguments twice: run the action once.) */
static void expect_action(struct uraid_array *a, enum uraid_sync_action act, uint64_t want)
{
	uint64_t got = run_action(a, act);
	CHECK_EQ_U64(got, want);
}

/* Overwrite 4 KiB pages of a disk's data area (data offset from the
 * superblock, read independently of the engine). */
static void corrupt(struct te_disk *d, const uint64_t *sectors, int n, uint64_t seed)
{
	uint8_t sb[4096], junk[4096];
	/* 1.2 superblock at 4 KiB: data_offset is the u64 at byte 128 */
	CHECK(member_read(d->mem, sb, sizeof(sb), 8 * 512) == 0);
	uint64_t doff = 0;
	for (int i = 7; i >= 0; i--)
		doff = doff << 8 | sb[128 + i];
	uint64_t rs = seed;
	for (int i = 0; i < n; i++) {
		t_fill(&rs, junk, sizeof(junk));
		CHECK(member_write(d->mem, junk, sizeof(junk), (doff + sectors[i]) * 512, 0) == 0);
	}
}

static void close_disks(struct te_disk *d, int n)
{
	for (int i = 0; i < n; i++)
		te_disk_close(&d[i]);
}

static void raid6_repair_fixes_the_wrong_member(void)
{
	struct te_disk d[6];
	struct uraid_array *a = mk(d, 6, 6, "left-symmetric", 6, 16);
	CHECK(a != NULL);
	if (!a)
		return;
	uint64_t size = uraid_size(a);
	uint8_t *shadow = fill(a, 61);
	expect_action(a, URAID_SYNC_CHECK, 0);
	/* pages in four different stripes (chunk 32 sectors) of disk 2: data
	 * in some, P or Q in others, depending on the rotation */
	static const uint64_t where[] = {0, 40, 96 + 8, 200};
	corrupt(&d[2], where, 4, 7);
	expect_action(a, URAID_SYNC_CHECK, 4 * 8);
	expect_action(a, URAID_SYNC_REPAIR, 4 * 8);
	expect_action(a, URAID_SYNC_CHECK, 0);
	/* the data itself is back, not just parity made to match */
	CHECK(te_verify(a, shadow, size) == 0);
	uraid_stop(a);
	free(shadow);
	close_disks(d, 6);
}

static void raid5_and_raid1_check_counts_and_repair(void)
{
	struct te_disk d[4];
	struct uraid_array *a = mk(d, 4, 5, "left-symmetric", 4, 16);
	CHECK(a != NULL);
	if (!a)
		return;
	uint8_t *shadow = fill(a, 62);
	static const uint64_t where[] = {8, 64, 72, 296};
	corrupt(&d[1], where, 4, 8);
	expect_action(a, URAID_SYNC_CHECK, 4 * 8);
	expect_action(a, URAID_SYNC_REPAIR, 4 * 8);
	expect_action(a, URAID_SYNC_CHECK, 0);
	uraid_stop(a);
	free(shadow);
	close_disks(d, 4);

	a = mk(d, 3, 1, NULL, 3, 0);
	CHECK(a != NULL);
	if (!a)
		return;
	shadow = fill(a, 63);
	static const uint64_t w1[] = {16, 1000};
	corrupt(&d[2], w1, 2, 9);
	expect_action(a, URAID_SYNC_CHECK, 2 * 8);
	expect_action(a, URAID_SYNC_REPAIR, 2 * 8);
	expect_action(a, URAID_SYNC_CHECK, 0);
	uraid_stop(a);
	free(shadow);
	close_disks(d, 3);
}

static void stale_member_left_out(void)
{
	struct te_disk d[3];
	struct uraid_array *a = mk(d, 3, 1, NULL, 3, 0);
	CHECK(a != NULL);
	if (!a)
		return;
	uint64_t size = uraid_size(a);
	char err[256], warn[1024];
	CHECK(uraid_fail(a, "#1", err, sizeof(err)) == 0);
	uint8_t *shadow = fill(a, 64); /* d1 does not get this */
	CHECK(uraid_stop(a) == 0);
	int all[] = {0, 1, 2};
	CHECK(te_assemble(d, all, 3, &a, warn, sizeof(warn)) == 0);
	if (!a)
		return;
	CHECKF(strstr(warn, "d1") != NULL, "warning names the stale member: '%s'", warn);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.members[1].state == URAID_MEMBER_MISSING);
	CHECK_EQ_U64(st.working, 2);
	CHECK(te_verify(a, shadow, size) == 0);
	uraid_stop(a);
	free(shadow);
	close_disks(d, 3);
}

/* A raid5 of 4 + a spare whose rebuild into member `fail` (after writes
 * of pattern `seed`) stopped part-way; the disks stay open, the shadow of
 * what was written in *shadow. false when the array could not be made. */
static bool half_rebuilt(struct te_disk *d, uint64_t seed, const char *fail, uint8_t **shadow,
                         uint64_t *size)
{
	struct uraid_array *a = mk(d, 5, 5, "left-symmetric", 4, 16);
	CHECK(a != NULL);
	if (!a)
		return false;
	*size = uraid_size(a);
	*shadow = fill(a, seed);
	char err[256];
	CHECK(uraid_fail(a, fail, err, sizeof(err)) == 0);
	CHECK(uraid_add_member(a, te_borrow(&d[4]), err, sizeof(err)) == 0);
	CHECK(uraid_sync_step(a, 1024) == 1); /* part of the rebuild */
	CHECK(uraid_stop(a) == 0);
	return true;
}

static void interrupted_rebuild_resumes(void)
{
	struct te_disk d[5];
	uint8_t *shadow;
	uint64_t size;
	if (!half_rebuilt(d, 65, "#2", &shadow, &size))
		return;
	struct uraid_array *a;
	char warn[1024];
	int all[] = {0, 1, 2, 3, 4};
	CHECK(te_assemble(d, all, 5, &a, warn, sizeof(warn)) == 0);
	if (!a)
		return;
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.members[2].state == URAID_MEMBER_REBUILDING);
	CHECKF(st.members[2].recovery_offset >= 1024, "resumes at %llu",
	       (unsigned long long)st.members[2].recovery_offset);
	CHECK(st.sync_action == URAID_SYNC_RECOVER && st.sync_done >= 1024);
	CHECK(te_verify(a, shadow, size) == 0); /* degraded reads meanwhile */
	CHECK(te_sync_all(a) == 0);
	uraid_status(a, &st);
	CHECK(st.members[2].state == URAID_MEMBER_IN_SYNC && st.working == 4);
	expect_action(a, URAID_SYNC_CHECK, 0);
	CHECK(te_verify(a, shadow, size) == 0);
	uraid_stop(a);
	free(shadow);
	close_disks(d, 5);
}

/* md forces reconstruct-write above the resync point: parity there is not
 * trusted yet (an unclean array the resync has not reached), and a
 * read-modify-write would carry stale parity into the new one. An unclean
 * array (created without assume_clean, dropped, assembled without running
 * the resync) whose parity is garbage in the rows of one stripe that a
 * small write (part of one chunk) then changes: afterwards other data
 * members of that stripe are failed, and their data, rebuilt from the new
 * parity, must be what was there. raid5 (P) and raid6 (P and Q). */
static void write_above_resync_point_rebuilds_parity(void)
{
	static const struct {
		int level, nd;
	} cfg[] = {{5, 5}, {6, 7}}; /* wide enough that a 4 KiB write could be rmw */
	for (size_t c = 0; c < sizeof(cfg) / sizeof(cfg[0]); c++) {
		int nd = cfg[c].nd, level = cfg[c].level;
		struct te_disk d[7];
		for (int i = 0; i < nd; i++) {
			char nm[16];
			snprintf(nm, sizeof(nm), "d%d", i);
			te_disk_open(&d[i], nm, 3 * MB);
		}
		struct uraid_create_opts o;
		memset(&o, 0, sizeof(o));
		o.level = level;
		o.raid_devices = nd;
		o.chunk_sectors = 32;
		struct uraid_array *a = NULL;
		CHECK(te_create(&o, d, nd, &a) == 0); /* resync pending: not run */
		if (!a)
			return;
		uint64_t size = uraid_size(a);
		uint8_t *shadow = fill(a, 70 + c); /* whole stripes: parity from the data */
		struct uraid_status st;
		uraid_status(a, &st);
		uraid_drop(a);
		/* Stripe 5, rows 8..15 of its chunks: P (and Q) made garbage on
		 * the members, as an interrupted write would leave them. */
		struct layout_geometry g;
		te_geom(&st, &g);
		struct layout_stripe ls;
		layout_ops_for(level)->stripe(&g, 5, &ls);
		uint64_t chunk = g.chunk_sectors, rows = 8, row0 = 8, rs = 80 + c;
		uint8_t junk[8 * 512], buf[8 * 512];
		int par[2] = {ls.p_role, ls.q_role};
		for (int i = 0; i < 2 && par[i] >= 0; i++) {
			t_fill(&rs, junk, sizeof(junk));
			uint64_t doff = te_data_offset(d[par[i]].mem);
			CHECK(member_write(d[par[i]].mem, junk, sizeof(junk),
			                   (doff + ls.sector + row0) * 512, 0) == 0);
		}
		int all[] = {0, 1, 2, 3, 4, 5, 6};
		char err[256], warn[1024];
		CHECK(te_assemble(d, all, nd, &a, warn, sizeof(warn)) == 0);
		if (!a)
			return;
		uraid_status(a, &st);
		CHECKF(st.sync_action == URAID_SYNC_RESYNC && st.sync_done <= ls.sector,
		       "raid%d: resync at %llu, not ahead of stripe 5", level,
		       (unsigned long long)st.sync_done);
		/* The write: those rows of data index 0's chunk. */
		uint64_t off = (5 * (uint64_t)ls.ndata * chunk + row0) * 512;
		t_fill(&rs, buf, sizeof(buf));
		CHECK(uraid_write(a, buf, rows * 512, off) == 0);
		memcpy(shadow + off, buf, sizeof(buf));
		/* Lose other data members of the stripe: as many as parity covers. */
		for (int i = 1; i <= (level == 6 ? 2 : 1); i++) {
			char who[16];
			snprintf(who, sizeof(who), "#%d", ls.data_role[i]);
			CHECKF(uraid_fail(a, who, err, sizeof(err)) == 0, "fail %s: %s", who, err);
		}
		CHECKF(te_verify(a, shadow, size) == 0,
		       "raid%d: data rebuilt from the parity of a write above the resync point",
		       level);
		uraid_stop(a);
		free(shadow);
		close_disks(d, nd);
	}
}

static uint64_t data_offset(struct te_disk *d)
{
	uint8_t sb[512];
	CHECK(member_read(d->mem, sb, sizeof(sb), 8 * 512) == 0); /* 1.2 superblock */
	uint64_t doff = 0;
	for (int i = 7; i >= 0; i--)
		doff = doff << 8 | sb[128 + i];
	return doff;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
	nanosleep(&ts, NULL);
}

/* raid10 recovery walks the new member's own sectors, so its checkpoint is
 * exact for every layout: after a crash the rebuild continues there, and
 * nothing below it is written again. */
static void raid10_rebuild_resumes_after_crash(void)
{
	static const char *const layouts[] = {"f2", "o2", "n2", "f3"};
	for (size_t l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
		struct te_disk d[5];
		struct uraid_array *a = mk(d, 5, 10, layouts[l], 4, 16);
		CHECK(a != NULL);
		if (!a)
			return;
		uint64_t size = uraid_size(a);
		uint8_t *shadow = fill(a, 66 + l);
		char err[256], warn[1024];
		CHECK(uraid_fail(a, "#1", err, sizeof(err)) == 0);
		CHECK(uraid_add_member(a, te_borrow(&d[4]), err, sizeof(err)) == 0);
		CHECK(uraid_sync_step(a, 1024) == 1);
		sleep_ms(1100); /* progress is written to the superblocks once a second */
		CHECK(uraid_sync_step(a, 512) == 1);
		struct uraid_status st;
		uraid_status(a, &st);
		uint64_t saved = st.members[1].recovery_offset;
		CHECKF(saved >= 1536 && saved < st.dev_sectors, "%s: checkpoint %llu", layouts[l],
		       (unsigned long long)saved);
		uraid_drop(a); /* crash: nothing more reaches the superblocks */
		/* Count writes to the spare's already rebuilt part from now on. */
		struct member_fault_rule r = {
		    .op = MEMBER_OP_WRITE, .off = data_offset(&d[4]) * 512, .len = saved * 512};
		CHECK(member_fault_add(d[4].fault, &r) == 0);
		uint64_t hits0 = member_fault_hits(d[4].fault);
		int all[] = {0, 1, 2, 3, 4};
		CHECK(te_assemble(d, all, 5, &a, warn, sizeof(warn)) == 0);
		if (!a)
			return;
		uraid_status(a, &st);
		CHECK(st.members[1].state == URAID_MEMBER_REBUILDING);
		CHECKF(st.members[1].recovery_offset == saved && st.sync_done == saved,
		       "%s: resumes at %llu (sync at %llu), saved %llu", layouts[l],
		       (unsigned long long)st.members[1].recovery_offset,
		       (unsigned long long)st.sync_done, (unsigned long long)saved);
		CHECK(te_verify(a, shadow, size) == 0); /* degraded reads meanwhile */
		CHECK(te_sync_all(a) == 0);
		CHECKF(member_fault_hits(d[4].fault) == hits0,
		       "%s: %llu writes below the checkpoint", layouts[l],
		       (unsigned long long)(member_fault_hits(d[4].fault) - hits0));
		member_fault_clear(d[4].fault);
		uraid_status(a, &st);
		CHECK(st.members[1].state == URAID_MEMBER_IN_SYNC && st.working == 4);
		expect_action(a, URAID_SYNC_CHECK, 0);
		/* slot 0's copies live on slot 1 (and 2): the rebuilt member serves */
		CHECK(uraid_fail(a, "#0", err, sizeof(err)) == 0);
		CHECK(te_verify(a, shadow, size) == 0);
		uraid_stop(a);
		free(shadow);
		close_disks(d, 5);
	}
}

/* Checkpoints the kernel may resume from are 4 KiB aligned (md works in
 * 4 KiB stripe units; an odd recovery_offset left it with wrong parity),
 * whatever step sizes the caller asks for. */
static void checkpoints_on_4k_boundaries(void)
{
	struct te_disk d[5];
	struct uraid_array *a = mk(d, 5, 6, "left-symmetric", 4, 16);
	CHECK(a != NULL);
	if (!a)
		return;
	char err[256];
	CHECK(uraid_fail(a, "#1", err, sizeof(err)) == 0);
	CHECK(uraid_add_member(a, te_borrow(&d[4]), err, sizeof(err)) == 0);
	uint64_t rs = 5, last = 0;
	struct uraid_status st;
	for (int i = 0; i < 8; i++) {
		CHECK(uraid_sync_step(a, 9 + t_rand(&rs) % 700) == 1);
		uraid_status(a, &st);
		uint64_t ro = st.members[1].recovery_offset;
		CHECKF(ro % 8 == 0 && st.sync_done % 8 == 0 && ro > last,
		       "recovery checkpoint %llu (sync at %llu)", (unsigned long long)ro,
		       (unsigned long long)st.sync_done);
		last = ro;
	}
	CHECK(te_sync_all(a) == 0);
	expect_action(a, URAID_SYNC_CHECK, 0);
	uraid_stop(a);
	close_disks(d, 5);
}

struct load {
	struct uraid_array *a;
	uint64_t size, seed;
	int stop;
	uint64_t ops;
};

static void *load_thread(void *arg)
{
	struct load *l = arg;
	uint64_t rs = l->seed;
	uint8_t buf[4096];
	while (!__atomic_load_n(&l->stop, __ATOMIC_RELAXED)) {
		uint64_t off = t_rand(&rs) % (l->size / 4096) * 4096;
		int rc = t_rand(&rs) % 2 ? uraid_read(l->a, buf, sizeof(buf), off)
		                         : uraid_write(l->a, buf, sizeof(buf), off);
		if (rc < 0)
			break;
		__atomic_add_fetch(&l->ops, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* md's sync_speed_min: with requests arriving all the time the rebuild is
 * throttled, but not below the minimum; the requests are not starved.
 * Loose bounds only (shared, noisy machine). */
static void speed_min_holds_under_load(void)
{
	struct te_disk d[5];
	for (int i = 0; i < 5; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "d%d", i);
		te_disk_open(&d[i], nm, 24 * MB);
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = 5;
	o.raid_devices = 4;
	o.chunk_sectors = 128;
	o.assume_clean = true;
	struct member *mm[4];
	for (int i = 0; i < 4; i++)
		mm[i] = te_borrow(&d[i]);
	struct uraid_array *a = NULL;
	char err[256];
	CHECK(uraid_create_members(&o, mm, 4, 0, &a, err, sizeof(err)) == 0);
	if (!a)
		return;
	const uint64_t min_kibs = 1024;
	uraid_sync_speed(a, min_kibs, 0); /* no maximum: only load slows it */
	struct load l[2];
	pthread_t th[2];
	for (int t = 0; t < 2; t++) {
		l[t] = (struct load){.a = a, .size = uraid_size(a), .seed = 90 + (uint64_t)t};
		pthread_create(&th[t], NULL, load_thread, &l[t]);
	}
	CHECK(uraid_fail(a, "#1", err, sizeof(err)) == 0);
	CHECK(uraid_add_member(a, te_borrow(&d[4]), err, sizeof(err)) == 0);
	sleep_ms(300);
	struct uraid_status st;
	uraid_status(a, &st);
	uint64_t s0 = st.sync_done, ops0 = l[0].ops + l[1].ops;
	const long window_ms = 2000;
	sleep_ms(window_ms);
	uraid_status(a, &st);
	uint64_t s1 = st.sync_done, ops1 = l[0].ops + l[1].ops;
	uint64_t kib = (s1 - s0) / 2, want = min_kibs * window_ms / 1000;
	fprintf(stderr, "rebuild under load: %llu KiB in %ld ms (min %llu KiB/s), %llu requests\n",
	        (unsigned long long)kib, window_ms, (unsigned long long)min_kibs,
	        (unsigned long long)(ops1 - ops0));
	CHECKF(st.sync_action == URAID_SYNC_RECOVER, "rebuild not throttled: already finished");
	CHECKF(kib >= want * 4 / 10, "below speed_min: %llu KiB of %llu", (unsigned long long)kib,
	       (unsigned long long)want);
	CHECKF(kib <= want * 10, "not throttled: %llu KiB, min pace %llu", (unsigned long long)kib,
	       (unsigned long long)want);
	CHECKF(ops1 - ops0 >= 100, "requests starved: %llu", (unsigned long long)(ops1 - ops0));
	for (int t = 0; t < 2; t++) {
		__atomic_store_n(&l[t].stop, 1, __ATOMIC_RELAXED);
		pthread_join(th[t], NULL);
	}
	CHECK(uraid_sync_wait(a) == 0); /* idle again: full speed */
	uraid_status(a, &st);
	CHECK(st.degraded == 0);
	expect_action(a, URAID_SYNC_CHECK, 0);
	uraid_stop(a);
	close_disks(d, 5);
}

/* URAID_FROZEN (the daemon's assembly, limits set before the first
 * batch): with the sync thread running, an interrupted rebuild does not
 * move until unfrozen, and then it resumes at its checkpoint under the
 * limits set meanwhile. */
static void frozen_assembly_waits_for_unfreeze(void)
{
	struct te_disk d[5];
	uint8_t *shadow;
	uint64_t size;
	if (!half_rebuilt(d, 66, "#1", &shadow, &size))
		return;
	struct uraid_array *a;
	char err[256], warn[1024];
	struct member *mm[5];
	for (int i = 0; i < 5; i++)
		mm[i] = te_borrow(&d[i]);
	CHECK(uraid_assemble_members(mm, 5, URAID_FROZEN, &a, err, sizeof(err), warn,
	                             sizeof(warn)) == 0);
	if (!a)
		return;
	struct uraid_status st;
	uraid_status(a, &st);
	uint64_t at = st.members[1].recovery_offset;
	CHECK(st.frozen && st.sync_action == URAID_SYNC_IDLE);
	sleep_ms(300); /* the sync thread runs: it must not start the job */
	uraid_status(a, &st);
	CHECK(st.frozen && st.sync_action == URAID_SYNC_IDLE);
	CHECK_EQ_U64(st.members[1].recovery_offset, at);
	uraid_sync_speed(a, 1, 100);
	CHECK(uraid_sync_freeze(a, false, err, sizeof(err)) == 0);
	uraid_status(a, &st);
	CHECK(!st.frozen && st.sync_action == URAID_SYNC_RECOVER);
	CHECK(st.sync_speed_max == 100);
	CHECK(te_verify(a, shadow, size) == 0);
	uraid_stop(a);
	free(shadow);
	close_disks(d, 5);
}

static bool all_zero(struct te_disk *d)
{
	uint8_t *b = malloc(d->mem->size);
	bool z = member_read(d->mem, b, d->mem->size, 0) == 0;
	for (uint64_t i = 0; z && i < d->mem->size; i++)
		z = b[i] == 0;
	free(b);
	return z;
}

static void create_refuses_without_writing(void)
{
	struct {
		const char *what;
		int level, nd, n;
		uint32_t chunk_sectors;
		uint64_t bytes;
		int want;
	} cases[] = {
	    {"chunk 3K", 5, 4, 4, 6, 3 * MB, -EINVAL},
	    {"chunk 2K", 5, 4, 4, 4, 3 * MB, -EINVAL},
	    {"raid6 on 3", 6, 3, 3, 32, 3 * MB, -EINVAL},
	    {"count mismatch", 5, 4, 3, 32, 3 * MB, -EINVAL},
	    {"member too small", 5, 3, 3, 32, 64 * 1024, -ENOSPC},
	    {"unknown level", 7, 3, 3, 32, 3 * MB, -EINVAL},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct te_disk d[4];
		for (int i = 0; i < cases[c].n; i++) {
			char nm[16];
			snprintf(nm, sizeof(nm), "d%d", i);
			te_disk_open(&d[i], nm, cases[c].bytes);
		}
		struct uraid_create_opts o;
		memset(&o, 0, sizeof(o));
		o.level = cases[c].level;
		o.raid_devices = cases[c].nd;
		o.chunk_sectors = cases[c].chunk_sectors;
		struct member *mm[4];
		for (int i = 0; i < cases[c].n; i++)
			mm[i] = te_borrow(&d[i]);
		struct uraid_array *a = NULL;
		char err[256] = "";
		int rc = uraid_create_members(&o, mm, cases[c].n, URAID_NO_SYNC_THREAD, &a, err,
		                              sizeof(err));
		CHECKF(rc < 0 && a == NULL, "%s: accepted", cases[c].what);
		CHECKF(rc == cases[c].want || rc == -EOPNOTSUPP || rc == -ENOSPC || rc == -EINVAL,
		       "%s: rc %d", cases[c].what, rc);
		CHECKF(err[0] != 0, "%s: no message", cases[c].what);
		for (int i = 0; i < cases[c].n; i++)
			CHECKF(all_zero(&d[i]), "%s: d%d written", cases[c].what, i);
		fprintf(stderr, "%s: refused: %s\n", cases[c].what, err);
		close_disks(d, cases[c].n);
	}
}

TEST_MAIN(T(raid6_repair_fixes_the_wrong_member), T(raid5_and_raid1_check_counts_and_repair),
          T(stale_member_left_out), T(interrupted_rebuild_resumes),
          T(raid10_rebuild_resumes_after_crash), T(checkpoints_on_4k_boundaries),
          T(speed_min_holds_under_load), T(create_refuses_without_writing),
          T(write_above_resync_point_rebuilds_parity), T(frozen_assembly_waits_for_unfreeze))
