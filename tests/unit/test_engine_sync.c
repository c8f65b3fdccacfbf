/* Engine: check/repair (including RAID6 repair of the member that is
 * actually wrong), stale members left out at assembly, an interrupted
 * rebuild resuming from its checkpoint, and create refusing bad parameters
 * without writing anything. Fixed seeds. */
#include "test_engine_common.h"

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

static void interrupted_rebuild_resumes(void)
{
	struct te_disk d[5];
	struct uraid_array *a = mk(d, 5, 5, "left-symmetric", 4, 16);
	CHECK(a != NULL);
	if (!a)
		return;
	uint64_t size = uraid_size(a);
	uint8_t *shadow = fill(a, 65);
	char err[256], warn[1024];
	CHECK(uraid_fail(a, "#2", err, sizeof(err)) == 0);
	CHECK(uraid_add_member(a, te_borrow(&d[4]), err, sizeof(err)) == 0);
	CHECK(uraid_sync_step(a, 1024) == 1); /* part of the rebuild */
	CHECK(uraid_stop(a) == 0);
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
          T(create_refuses_without_writing))
