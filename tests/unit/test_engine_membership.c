/* Which members make up an array, and what a failing member may do to it
 * (engine/membership.c, engine/assemble.c, core/util.c, core/slot.c):
 *
 *   - a member whose valid superblock disagrees with the others on the
 *     array's geometry is named and the assembly refused, in any order the
 *     members are given, with no byte of any member changed;
 *   - two members at the latest events with different role tables (a split
 *     brain) are refused;
 *   - a stale member that shares its device number with the member that
 *     replaced it (fail, remove, add) is left out, and the replacement keeps
 *     its slot on disk, whatever the order given;
 *   - write errors on every member fail one member at most: the array then
 *     refuses writes, keeps serving what was written, and after a restart
 *     every acknowledged byte is there (md never fails the last member it
 *     cannot lose).
 * The members are in-memory disks (test_engine_common.h); expectations are
 * computed here from what the test wrote. */
#include "meta/md_super.h"
#include "test_engine_common.h"

#define DISK_BYTES (4u << 20)

/* A copy of every disk's bytes, to prove that nothing was written. */
struct snapshot {
	int n;
	uint8_t *bytes[TE_MAX];
};

static void snap_take(struct snapshot *s, struct te_disk *d, int n)
{
	s->n = n;
	for (int i = 0; i < n; i++) {
		s->bytes[i] = malloc(DISK_BYTES);
		CHECK(s->bytes[i] && member_read(d[i].mem, s->bytes[i], DISK_BYTES, 0) == 0);
	}
}

static bool snap_same(const struct snapshot *s, struct te_disk *d)
{
	bool same = true;
	uint8_t *buf = malloc(DISK_BYTES);
	for (int i = 0; i < s->n && buf; i++)
		if (member_read(d[i].mem, buf, DISK_BYTES, 0) != 0 ||
		    memcmp(buf, s->bytes[i], DISK_BYTES)) {
			fprintf(stderr, "snapshot: %s changed\n", d[i].name);
			same = false;
		}
	free(buf);
	return same;
}

static void snap_free(struct snapshot *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->bytes[i]);
}

static void open_disks(struct te_disk *d, int n, const char *prefix)
{
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		te_disk_open(&d[i], name, DISK_BYTES);
	}
}

static void close_disks(struct te_disk *d, int n)
{
	for (int i = 0; i < n; i++)
		te_disk_close(&d[i]);
}

/* Create level over disks [0, n), fill it with random data, stop cleanly;
 * returns the shadow of the contents and the array size. */
static uint8_t *make_array(struct te_disk *d, int n, int level, uint64_t seed, uint64_t *size)
{
	struct uraid_create_opts o = {
	    .level = level, .raid_devices = n, .chunk_sectors = 128, .assume_clean = true};
	struct uraid_array *a = NULL;
	CHECK(te_create(&o, d, n, &a) == 0);
	if (!a)
		return NULL;
	*size = uraid_size(a);
	uint8_t *shadow = malloc(*size);
	t_fill(&seed, shadow, *size);
	CHECK(uraid_write(a, shadow, *size, 0) == 0);
	CHECK(uraid_stop(a) == 0);
	return shadow;
}

/* Assemble the disks in `order` expecting a refusal whose message has every
 * word of `want`. */
static void expect_refused(struct te_disk *d, const int *order, int n, const char *const *want,
                           const char *what)
{
	struct member *mm[TE_MAX];
	for (int i = 0; i < n; i++)
		mm[i] = te_borrow(&d[order[i]]);
	struct uraid_array *a = NULL;
	char err[1024] = "", warn[512];
	int rc = uraid_assemble_members(mm, n, URAID_NO_SYNC_THREAD, &a, err, sizeof(err), warn,
	                                sizeof(warn));
	CHECKF(rc < 0 && !a, "%s: assembled (order starting %d)", what, order[0]);
	if (a)
		uraid_drop(a);
	for (int w = 0; want[w]; w++)
		CHECKF(strstr(err, want[w]), "%s: message lacks '%s': %s", what, want[w], err);
}

/* Rewrite one disk's superblock with `edit` applied (checksum valid). */
static void edit_sb(struct te_disk *disk, void (*edit)(struct md_sb *))
{
	struct md_sb sb;
	char e[256];
	CHECK(md_sb_load(disk->mem, &sb, e, sizeof(e)) == 0);
	edit(&sb);
	CHECK(md_sb_store(disk->mem, &sb) == 0);
}

static void to_raid6(struct md_sb *s)
{
	s->level = 6;
}
static void bigger_chunk(struct md_sb *s)
{
	s->chunk_sectors *= 2;
}
static void more_disks(struct md_sb *s)
{
	s->raid_disks += 1;
}
static void other_layout(struct md_sb *s)
{
	s->layout = 0; /* left-asymmetric; created left-symmetric */
}
static void smaller(struct md_sb *s)
{
	s->size -= 128;
}
static void recreated(struct md_sb *s)
{
	s->ctime += 1;
}

static void disagreeing_member_refused(void)
{
	static const struct {
		void (*edit)(struct md_sb *);
		const char *field;
	} cases[] = {
	    {to_raid6, "level"},
	    {bigger_chunk, "chunk size"},
	    {more_disks, "raid devices"},
	    {other_layout, "layout"},
	    {smaller, "size"},
	    {recreated, "creation time"},
	};
	static const int orders[][4] = {{0, 1, 2, 3}, {1, 2, 3, 0}, {3, 0, 2, 1}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct te_disk d[4];
		open_disks(d, 4, "m");
		uint64_t size;
		free(make_array(d, 4, URAID_LEVEL_RAID5, 0x5eed + c, &size));
		edit_sb(&d[0], cases[c].edit);
		struct snapshot snap;
		snap_take(&snap, d, 4);
		for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
			const char *want[] = {"m0", cases[c].field, "m1", NULL};
			expect_refused(d, orders[o], 4, want, cases[c].field);
		}
		CHECKF(snap_same(&snap, d), "%s: a refused assembly changed a member",
		       cases[c].field);
		snap_free(&snap);
		close_disks(d, 4);
	}
}

static void forget_dev0(struct md_sb *s)
{
	s->dev_roles[0] = MD_ROLE_FAULTY;
}

static void split_brain_refused(void)
{
	struct te_disk d[3];
	open_disks(d, 3, "s");
	uint64_t size;
	free(make_array(d, 3, URAID_LEVEL_RAID1, 0xb7a1, &size));
	edit_sb(&d[2], forget_dev0); /* same events, another story */
	struct snapshot snap;
	snap_take(&snap, d, 3);
	const char *want[] = {"different member roles", "s2", NULL};
	static const int orders[][3] = {{0, 1, 2}, {2, 1, 0}};
	for (int o = 0; o < 2; o++)
		expect_refused(d, orders[o], 3, want, "split brain");
	CHECK(snap_same(&snap, d));
	snap_free(&snap);
	close_disks(d, 3);
}

/* The member in slot `role` of a running array, by name. */
static const char *slot_member(struct uraid_array *a, int role, struct uraid_status *st)
{
	uraid_status(a, st);
	for (int i = 0; i < st->nmembers; i++)
		if (st->members[i].role == role)
			return st->members[i].name;
	return "";
}

static void replacement_keeps_its_slot(void)
{
	/* m0..m3 a raid5, d[4] ("m4") the replacement of m2. */
	struct te_disk d[5];
	open_disks(d, 5, "m");
	uint64_t size;
	uint8_t *shadow = make_array(d, 4, URAID_LEVEL_RAID5, 0x2e91, &size);
	static const int all4[] = {0, 1, 2, 3};
	struct uraid_array *a = NULL;
	char warn[1024], err[256];
	CHECK(te_assemble(d, all4, 4, &a, warn, sizeof(warn)) == 0);
	if (!a || !shadow)
		goto out;
	CHECK(uraid_fail(a, "m2", err, sizeof(err)) == 0);
	CHECK(uraid_remove(a, "m2", err, sizeof(err)) == 0);
	CHECKF(uraid_add_member(a, te_borrow(&d[4]), err, sizeof(err)) == 0, "add: %s", err);
	CHECK(te_sync_all(a) == 0);
	CHECK(uraid_stop(a) == 0);
	struct md_sb s2, s4;
	char e[256];
	CHECK(md_sb_load(d[2].mem, &s2, e, sizeof(e)) == 0);
	CHECK(md_sb_load(d[4].mem, &s4, e, sizeof(e)) == 0);
	/* md numbers a device added to a running array from raid_disks up: m4
	 * is device 4, not the stale m2's 2 (which md leaves to m2). */
	CHECK_EQ_U64(s4.dev_number, 4);
	CHECK_EQ_U64(s2.dev_number, 2);
	CHECK(md_sb_role(&s4) == 2);
	static const int orders[][5] = {{2, 4, 0, 1, 3}, {4, 0, 1, 3, 2}, {3, 2, 1, 4, 0}};
	for (int o = 0; o < 3; o++) {
		warn[0] = 0;
		a = NULL;
		CHECK(te_assemble(d, orders[o], 5, &a, warn, sizeof(warn)) == 0);
		if (!a)
			continue;
		CHECKF(strstr(warn, "m2") != NULL, "order %d: stale m2 not named: %s", o, warn);
		struct uraid_status st;
		CHECKF(!strcmp(slot_member(a, 2, &st), "m4"), "order %d: slot 2 held by '%s'", o,
		       slot_member(a, 2, &st));
		CHECKF(st.working == 4 && st.degraded == 0, "order %d: [%d working, %d degraded]",
		       o, st.working, st.degraded);
		CHECK(te_verify(a, shadow, size) == 0);
		CHECK(uraid_stop(a) == 0);
		/* On disk the replacement is still active in slot 2. */
		CHECK(md_sb_load(d[4].mem, &s4, e, sizeof(e)) == 0);
		CHECKF(md_sb_role(&s4) == 2, "order %d: m4's role on disk %d", o, md_sb_role(&s4));
		CHECKF(s4.dev_roles[s4.dev_number] == 2, "order %d: role table says 0x%x for m4", o,
		       s4.dev_roles[s4.dev_number]);
	}
	/* And the array starts whole without the stale member. */
	static const int four[] = {0, 1, 4, 3};
	a = NULL;
	CHECK(te_assemble(d, four, 4, &a, warn, sizeof(warn)) == 0);
	if (a) {
		struct uraid_status st;
		uraid_status(a, &st);
		CHECK(st.working == 4 && st.degraded == 0);
		CHECK(te_verify(a, shadow, size) == 0);
		uraid_stop(a);
	}
out:
	free(shadow);
	close_disks(d, 5);
}

static void fail_writes(struct te_disk *d, int n, int error)
{
	for (int i = 0; i < n; i++) {
		struct member_fault_rule r = {.op = MEMBER_OP_WRITE, .error = error};
		CHECK(member_fault_add(d[i].fault, &r) == 0);
	}
}

static void clear_faults(struct te_disk *d, int n)
{
	for (int i = 0; i < n; i++)
		member_fault_clear(d[i].fault);
}

/* Every member refuses writes (a full file system under sparse member
 * files): one member may fail, the rest stay, writes fail, reads go on. */
static void write_errors_everywhere(void)
{
	static const struct {
		int level, n;
	} cases[] = {{URAID_LEVEL_RAID1, 2},
	             {URAID_LEVEL_RAID5, 4},
	             {URAID_LEVEL_RAID6, 5},
	             {URAID_LEVEL_RAID10, 4}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct te_disk d[5];
		int n = cases[c].n;
		open_disks(d, n, "w");
		uint64_t size;
		uint8_t *shadow = make_array(d, n, cases[c].level, 0xf0 + c, &size);
		static const int idx[] = {0, 1, 2, 3, 4};
		struct uraid_array *a = NULL;
		char warn[512];
		CHECK(te_assemble(d, idx, n, &a, warn, sizeof(warn)) == 0);
		if (!a || !shadow)
			goto next;
		uint8_t buf[8192];
		memset(buf, 0x5a, sizeof(buf));
		CHECK(uraid_write(a, buf, sizeof(buf), 0) == 0); /* marked active */
		memcpy(shadow, buf, sizeof(buf));
		CHECK(uraid_flush(a) == 0);
		struct uraid_status st0, st;
		uraid_status(a, &st0);
		fail_writes(d, n, ENOSPC);
		memset(buf, 0xa5, sizeof(buf));
		CHECK(uraid_write(a, buf, sizeof(buf), size / 2) == -EIO);
		uraid_status(a, &st);
		CHECKF(st.broken, "level %d: not broken", cases[c].level);
		int faulty = 0;
		for (int i = 0; i < st.nmembers; i++)
			faulty += st.members[i].state == URAID_MEMBER_FAULTY;
		CHECKF(faulty <= (cases[c].level == URAID_LEVEL_RAID6 ? 2 : 1),
		       "level %d: %d members failed", cases[c].level, faulty);
		CHECKF(st.events <= st0.events + (uint64_t)faulty, "level %d: events %llu -> %llu",
		       cases[c].level, (unsigned long long)st0.events,
		       (unsigned long long)st.events);
		/* Writes refused from now on, reads served. */
		CHECK(uraid_write(a, buf, 512, 0) == -EIO);
		CHECK(te_verify(a, shadow, size) == 0);
		uraid_drop(a);
		/* After a restart everything acknowledged is there. */
		clear_faults(d, n);
		a = NULL;
		CHECKF(te_assemble_force(d, idx, n, &a, warn, sizeof(warn)) == 0,
		       "level %d: reassembly refused", cases[c].level);
		if (a) {
			CHECK(te_verify(a, shadow, size) == 0);
			uraid_stop(a);
		}
	next:
		free(shadow);
		close_disks(d, n);
	}
}

/* Refusals that close the member they name: the message is built first
 * (ASan sees a use after free otherwise). */
static void refusals_name_what_they_close(void)
{
	struct te_disk d[3];
	open_disks(d, 3, "r");
	uint64_t size;
	free(make_array(d, 3, URAID_LEVEL_RAID5, 0x1eaf, &size));
	static const int idx[] = {0, 1, 2};
	struct uraid_array *a = NULL;
	char warn[256], err[256];
	CHECK(te_assemble(d, idx, 3, &a, warn, sizeof(warn)) == 0);
	if (a) {
		struct member *ro;
		CHECK(member_open_mem("ro-member", DISK_BYTES, &ro) == 0);
		ro->readonly = true;
		err[0] = 0;
		CHECK(uraid_re_add_member(a, ro, err, sizeof(err)) == -EROFS);
		CHECKF(strstr(err, "ro-member") != NULL, "re-add: %s", err);
		CHECK(member_open_mem("ro-journal", DISK_BYTES, &ro) == 0);
		ro->readonly = true;
		err[0] = 0;
		CHECK(uraid_journal_add_member(a, ro, err, sizeof(err)) == -EROFS);
		CHECKF(strstr(err, "ro-journal") != NULL, "add-journal: %s", err);
		uraid_stop(a);
	}
	close_disks(d, 3);
}

/* An add-journal that fails after the stripe cache was written out and
 * turned off (the journal member is too small for a log) leaves the array
 * as it was: the cache back at its size, no journal, writes working. */
static void failed_add_journal_changes_nothing(void)
{
	struct te_disk d[3];
	open_disks(d, 3, "j");
	uint64_t size;
	uint8_t *shadow = make_array(d, 3, URAID_LEVEL_RAID5, 0x10c, &size);
	static const int idx[] = {0, 1, 2};
	struct uraid_array *a = NULL;
	char warn[256], err[256];
	CHECK(te_assemble(d, idx, 3, &a, warn, sizeof(warn)) == 0);
	if (a && shadow) {
		CHECK(uraid_set_stripe_cache(a, 64) == 0);
		struct member *tiny;
		CHECK(member_open_mem("tiny-journal", 64 << 10, &tiny) == 0);
		CHECK(uraid_journal_add_member(a, tiny, err, sizeof(err)) < 0);
		struct uraid_status st;
		uraid_status(a, &st);
		CHECKF(st.stripe_cache_size == 64, "stripe cache %u after the failed add",
		       st.stripe_cache_size);
		CHECKF(st.journal == 0, "journal state %d after the failed add", st.journal);
		uint8_t buf[4096];
		memset(buf, 0x3c, sizeof(buf));
		CHECKF(uraid_write(a, buf, sizeof(buf), 8192) == 0, "writes refused after it");
		memcpy(shadow + 8192, buf, sizeof(buf));
		CHECK(te_verify(a, shadow, size) == 0);
		uraid_stop(a);
	}
	free(shadow);
	close_disks(d, 3);
}

TEST_MAIN(T(disagreeing_member_refused), T(split_brain_refused), T(replacement_keeps_its_slot),
          T(write_errors_everywhere), T(refusals_name_what_they_close),
          T(failed_add_journal_changes_nothing))
