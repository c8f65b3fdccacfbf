/* Engine: replace as md does it. The new member is rebuilt as a replacement
 * while the old one stays in its slot (the array is never degraded, writes
 * reach both); when done the old member is faulty and the new one holds the
 * slot. The replace is recorded in the 1.x superblock (checked byte by byte
 * against the kernel's md_p.h layout), survives a crash, continues as an
 * ordinary rebuild when the old member fails, is abandoned when the new one
 * fails, and bad requests are refused without writing. Fixed seeds. */
#include <time.h>

#include "test_engine_common.h"

#define MB (1u << 20)

/* md_p.h, struct mdp_superblock_1 (1.2: at 4 KiB) */
#define SB_AT           4096
#define SB_FEATURE_MAP  8
#define SB_RECOVERY_OFF 152
#define SB_DEV_NUMBER   160
#define SB_DEV_ROLES    256
#define FEAT_RECOVERY   2u
#define FEAT_REPLACE    16u

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

struct raw_sb {
	uint32_t features;
	uint64_t recovery_offset;
	uint32_t dev_number;
	uint8_t buf[4096];
};

static void raw_sb(struct te_disk *d, struct raw_sb *s)
{
	CHECK(member_read(d->mem, s->buf, sizeof(s->buf), SB_AT) == 0);
	s->features = (uint32_t)le(s->buf + SB_FEATURE_MAP, 4);
	s->recovery_offset = le(s->buf + SB_RECOVERY_OFF, 8);
	s->dev_number = (uint32_t)le(s->buf + SB_DEV_NUMBER, 4);
}

static int raw_role(const struct raw_sb *s, uint32_t dev_number)
{
	return (int)le(s->buf + SB_DEV_ROLES + 2 * dev_number, 2);
}

static void open_disks(struct te_disk *d, int n)
{
	for (int i = 0; i < n; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "d%d", i);
		te_disk_open(&d[i], nm, 3 * MB);
	}
}

static void close_disks(struct te_disk *d, int n)
{
	for (int i = 0; i < n; i++)
		te_disk_close(&d[i]);
}

static struct uraid_array *mk(struct te_disk *d, int level, const char *layout, int nd,
                              int metadata)
{
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = level;
	o.raid_devices = nd;
	o.chunk_sectors = 32;
	o.assume_clean = true;
	if (metadata >= 0) {
		o.metadata = metadata;
		o.metadata_set = true;
	}
	if (layout) {
		layout_parse(level, layout, &o.layout);
		o.layout_set = true;
	}
	struct uraid_array *a = NULL;
	te_create(&o, d, nd, &a);
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

/* A random write through the array, mirrored into the shadow. */
static void poke(struct uraid_array *a, uint8_t *shadow, uint64_t *rs)
{
	uint64_t size = uraid_size(a), len = (1 + t_rand(rs) % 64) * 512;
	uint64_t off = t_rand(rs) % (size / 512 - len / 512) * 512;
	t_fill(rs, shadow + off, len);
	CHECK(uraid_write(a, shadow + off, len, off) == 0);
}

static uint64_t check(struct uraid_array *a)
{
	char err[256];
	CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
	CHECK(te_sync_all(a) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	return st.mismatch_cnt;
}

static const struct uraid_member_status *find(const struct uraid_status *st, const char *name)
{
	for (int i = 0; i < st->nmembers; i++)
		if (!strcmp(st->members[i].name, name))
			return &st->members[i];
	return NULL;
}

static void replace_level(int level, const char *layout, int nd, uint64_t seed)
{
	struct te_disk d[TE_MAX];
	open_disks(d, nd + 1);
	struct uraid_array *a = mk(d, level, layout, nd, -1);
	CHECK(a != NULL);
	if (!a)
		return;
	uint64_t size = uraid_size(a), rs = seed;
	uint8_t *shadow = fill(a, seed);
	char err[256];
	CHECKF(uraid_replace_member(a, "#1", te_borrow(&d[nd]), err, sizeof(err)) == 0, "%s", err);
	struct uraid_status st;
	int steps = 0, rc;
	bool sb_seen = false;
	do {
		poke(a, shadow, &rs); /* writes must reach old and new member alike */
		uraid_status(a, &st);
		CHECKF(st.degraded == 0 && st.working == nd, "degraded during the replace");
		const struct uraid_member_status *ms = find(&st, "d1"), *nw = find(&st, d[nd].name);
		CHECK(ms && ms->role == 1 && ms->state == URAID_MEMBER_IN_SYNC);
		CHECK(nw && nw->state == URAID_MEMBER_REBUILDING);
		if (steps == 2) {
			/* on disk: the replacement bit and a checkpoint in the new
			 * member's own superblock, the same slot in the role table */
			struct raw_sb n, o;
			raw_sb(&d[nd], &n);
			raw_sb(&d[0], &o);
			CHECKF(n.features & FEAT_REPLACE, "features 0x%x", n.features);
			CHECK(n.features & FEAT_RECOVERY);
			CHECK(!(o.features & FEAT_REPLACE));
			CHECK(raw_role(&o, n.dev_number) == 1);
			sb_seen = true;
		}
		steps++;
	} while ((rc = uraid_sync_step(a, 256)) > 0);
	CHECK(rc == 0 && steps > 3 && sb_seen);
	uraid_status(a, &st);
	CHECK(st.degraded == 0);
	CHECKF(!strcmp(st.members[1].name, d[nd].name) &&
	           st.members[1].state == URAID_MEMBER_IN_SYNC,
	       "slot 1 holds %s", st.members[1].name);
	const struct uraid_member_status *old = find(&st, "d1");
	CHECK(old && old->state == URAID_MEMBER_FAULTY && old->role == -1);
	struct raw_sb n;
	raw_sb(&d[nd], &n);
	CHECK(!(n.features & (FEAT_REPLACE | FEAT_RECOVERY)));
	CHECK_EQ_U64(check(a), 0);
	CHECK(te_verify(a, shadow, size) == 0);
	/* the new member carries its share: without slot 0 (raid10: its
	 * copies are on slot 1) every read still matches */
	CHECK(uraid_fail(a, "#0", err, sizeof(err)) == 0);
	CHECK(te_verify(a, shadow, size) == 0);
	CHECK(uraid_remove(a, "d1", err, sizeof(err)) == 0);
	uraid_stop(a);
	free(shadow);
	close_disks(d, nd + 1);
}

static void replace_keeps_the_array_whole(void)
{
	replace_level(5, "left-symmetric", 4, 71);
	replace_level(6, "left-symmetric", 5, 72);
	replace_level(1, NULL, 3, 73);
	replace_level(10, "f2", 4, 74);
	replace_level(10, "n2", 4, 75);
}

/* Crash mid-replace: the next assembly continues the copy from the saved
 * checkpoint with the old member still in place; assembled without the old
 * member, the replacement goes on as an ordinary rebuild. */
static void replace_resumes_after_crash(void)
{
	for (int without_old = 0; without_old < 2; without_old++) {
		struct te_disk d[5];
		open_disks(d, 5);
		struct uraid_array *a = mk(d, 5, "left-symmetric", 4, -1);
		CHECK(a != NULL);
		if (!a)
			return;
		uint64_t size = uraid_size(a);
		uint8_t *shadow = fill(a, 76);
		char err[256], warn[1024];
		CHECK(uraid_replace_member(a, "#2", te_borrow(&d[4]), err, sizeof(err)) == 0);
		CHECK(uraid_sync_step(a, 1024) == 1);
		struct timespec ts = {1, 100 * 1000 * 1000};
		nanosleep(&ts, NULL); /* progress reaches the superblocks once a second */
		CHECK(uraid_sync_step(a, 512) == 1);
		struct raw_sb n;
		raw_sb(&d[4], &n);
		uint64_t saved = n.recovery_offset;
		CHECKF(saved >= 1536 && (n.features & FEAT_REPLACE), "saved %llu features 0x%x",
		       (unsigned long long)saved, n.features);
		uraid_drop(a);
		int all[] = {0, 1, 2, 3, 4}, no2[] = {0, 1, 3, 4};
		/* Without the old member the dropped (dirty) array is also
		 * degraded: md refuses that unless forced. */
		CHECK((without_old ? te_assemble_force(d, no2, 4, &a, warn, sizeof(warn))
		                   : te_assemble(d, all, 5, &a, warn, sizeof(warn))) == 0);
		if (!a)
			return;
		struct uraid_status st;
		uraid_status(a, &st);
		CHECK(st.sync_action == URAID_SYNC_RECOVER && st.sync_done == saved);
		if (without_old) {
			CHECK(st.degraded == 1 && !strcmp(st.members[2].name, "d4") &&
			      st.members[2].state == URAID_MEMBER_REBUILDING &&
			      st.members[2].recovery_offset == saved);
		} else {
			CHECK(st.degraded == 0 && !strcmp(st.members[2].name, "d2"));
			const struct uraid_member_status *nw = find(&st, "d4");
			CHECK(nw && nw->state == URAID_MEMBER_REBUILDING);
		}
		CHECK(te_verify(a, shadow, size) == 0);
		CHECK(te_sync_all(a) == 0);
		uraid_status(a, &st);
		CHECK(st.degraded == 0 && !strcmp(st.members[2].name, "d4"));
		CHECK_EQ_U64(check(a), 0);
		CHECK(uraid_fail(a, "#3", err, sizeof(err)) == 0);
		CHECK(te_verify(a, shadow, size) == 0);
		uraid_stop(a);
		free(shadow);
		close_disks(d, 5);
	}
}

/* The old member fails mid-replace: the replacement takes the slot and the
 * copy continues as a rebuild from its checkpoint; writes in between reach
 * it. Failing the replacement instead abandons the replace. */
static void replace_when_a_member_fails(void)
{
	for (int fail_new = 0; fail_new < 2; fail_new++) {
		struct te_disk d[6];
		open_disks(d, 6);
		struct uraid_array *a = mk(d, 6, "left-symmetric", 5, -1);
		CHECK(a != NULL);
		if (!a)
			return;
		uint64_t size = uraid_size(a), rs = 77;
		uint8_t *shadow = fill(a, 77);
		char err[256];
		CHECK(uraid_replace_member(a, "#2", te_borrow(&d[5]), err, sizeof(err)) == 0);
		CHECK(uraid_sync_step(a, 1024) == 1);
		CHECK(uraid_fail(a, fail_new ? "d5" : "d2", err, sizeof(err)) == 0);
		for (int i = 0; i < 20; i++)
			poke(a, shadow, &rs);
		struct uraid_status st;
		uraid_status(a, &st);
		if (fail_new) {
			CHECK(st.degraded == 0 && !strcmp(st.members[2].name, "d2"));
			const struct uraid_member_status *nw = find(&st, "d5");
			CHECK(nw && nw->state == URAID_MEMBER_FAULTY);
		} else {
			CHECK(!strcmp(st.members[2].name, "d5") &&
			      st.members[2].state == URAID_MEMBER_REBUILDING &&
			      st.members[2].recovery_offset >= 1024);
		}
		CHECK(te_sync_all(a) == 0);
		uraid_status(a, &st);
		CHECK(st.degraded == 0 && st.working == 5);
		CHECK(!strcmp(st.members[2].name, fail_new ? "d2" : "d5"));
		CHECK_EQ_U64(check(a), 0);
		CHECK(te_verify(a, shadow, size) == 0);
		CHECK(uraid_fail(a, "#1", err, sizeof(err)) == 0);
		CHECK(uraid_fail(a, "#3", err, sizeof(err)) == 0);
		CHECK(te_verify(a, shadow, size) == 0);
		uraid_stop(a);
		free(shadow);
		close_disks(d, 6);
	}
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

static void replace_refuses(void)
{
	struct {
		const char *what;
		int level, nd, metadata;
		const char *old;
		uint64_t new_bytes;
		int want;
	} cases[] = {
	    {"raid0", 0, 3, -1, "#1", 3 * MB, -EOPNOTSUPP},
	    {"0.90 metadata", 5, 3, 0, "#1", 3 * MB, -EOPNOTSUPP},
	    {"unknown member", 5, 3, -1, "nosuch", 3 * MB, -ENOENT},
	    {"slot out of range", 5, 3, -1, "#7", 3 * MB, -ENOENT},
	    {"new member too small", 5, 3, -1, "#1", 3 * MB / 2, -ENOSPC},
	    {"a spare", 5, 3, -1, "d3", 3 * MB, -EINVAL},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct te_disk d[5];
		open_disks(d, 4);
		te_disk_open(&d[4], "new", cases[c].new_bytes);
		struct uraid_array *a = mk(d, cases[c].level, NULL, cases[c].nd, cases[c].metadata);
		CHECK(a != NULL);
		if (!a)
			return;
		char err[256] = "";
		if (!strcmp(cases[c].old, "d3"))
			CHECK(uraid_add_member(a, te_borrow(&d[3]), err, sizeof(err)) == 0);
		int rc = uraid_replace_member(a, cases[c].old, te_borrow(&d[4]), err, sizeof(err));
		CHECKF(rc == cases[c].want, "%s: rc %d (%s)", cases[c].what, rc, err);
		CHECKF(err[0] != 0, "%s: no message", cases[c].what);
		CHECKF(all_zero(&d[4]), "%s: the new member was written", cases[c].what);
		fprintf(stderr, "%s: refused: %s\n", cases[c].what, err);
		struct uraid_status st;
		uraid_status(a, &st);
		CHECK(st.degraded == 0 && st.sync_action == URAID_SYNC_IDLE);
		uraid_stop(a);
		close_disks(d, 5);
	}
	/* one replace per slot at a time */
	struct te_disk d[5];
	open_disks(d, 5);
	struct uraid_array *a = mk(d, 5, NULL, 3, -1);
	CHECK(a != NULL);
	if (!a)
		return;
	char err[256];
	CHECK(uraid_replace_member(a, "#0", te_borrow(&d[3]), err, sizeof(err)) == 0);
	CHECK(uraid_replace_member(a, "#0", te_borrow(&d[4]), err, sizeof(err)) == -EBUSY);
	CHECK(all_zero(&d[4]));
	CHECK(te_sync_all(a) == 0);
	uraid_stop(a);
	close_disks(d, 5);
}

TEST_MAIN(T(replace_keeps_the_array_whole), T(replace_resumes_after_crash),
          T(replace_when_a_member_fails), T(replace_refuses))
