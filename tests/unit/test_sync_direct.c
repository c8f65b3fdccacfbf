/* Recovery on tmpfs file members (in_memory), where two workers read,
 * rebuild and write pieces with synchronous requests (engine/raid456/sync.c,
 * engine/mirror/sync.c, engine/sync/workers.c): the rebuilt member must hold byte for byte
 * what the lost member held (its file, saved before the failure, is the
 * reference: the normal write path put it there), a check must find no
 * mismatch, and the array read with another member failed (so the rebuilt
 * one is needed) must equal the shadow of everything written. Also: writes
 * during the rebuild, an interrupted rebuild resuming after stop and
 * assemble, read errors injected by a fault wrapper (which keeps the array
 * on the queued path, so the error is seen there), a write error on the
 * target, and a source file truncated behind the array's back (a read error on the
 * two-worker path). Fixed seeds. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "layout/layout.h"
#include "member/member.h"
#include "sim/member_fault.h"
#include "uraid.h"

#define MB   (1u << 20)
#define MAXM 8

struct fx {
	char dir[64];
	char path[MAXM][96];
	int n; /* files: members, then spares */
	uint64_t bytes;
};

static bool fx_make(struct fx *f, int n, uint64_t bytes)
{
	memset(f, 0, sizeof(*f));
	char dir[sizeof(f->dir)] = "/dev/shm/uraid-tsm-XXXXXX";
	if (!mkdtemp(dir))
		return false;
	memcpy(f->dir, dir, sizeof(dir));
	f->n = n;
	f->bytes = bytes;
	for (int i = 0; i < n; i++) {
		snprintf(f->path[i], sizeof(f->path[i]), "%s/m%d", dir, i);
		int fd = open(f->path[i], O_RDWR | O_CREAT | O_TRUNC, 0644);
		CHECK(fd >= 0 && ftruncate(fd, (off_t)bytes) == 0);
		close(fd);
	}
	return true;
}

static void fx_free(struct fx *f)
{
	for (int i = 0; i < f->n; i++)
		unlink(f->path[i]);
	rmdir(f->dir);
}

/* File i as a member; wrapped in a fault injector when *fault is given. */
static struct member *fx_open(struct fx *f, int i, struct member **fault)
{
	struct member *m = NULL;
	char err[256];
	int rc = member_open_file(f->path[i], 0, 0, &m, err, sizeof(err));
	CHECKF(rc == 0, "%s", err);
	CHECK(rc != 0 || m->in_memory); /* else these cases test the queued path */
	if (rc == 0 && fault) {
		CHECK(member_fault_wrap(m, fault) == 0);
		return *fault;
	}
	return m;
}

/* md 1.2: data_offset (sectors) at byte 128 of the superblock at 4 KiB. */
static uint64_t data_offset(const char *path)
{
	uint8_t sb[512];
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, sb, sizeof(sb), 4096) == (ssize_t)sizeof(sb));
	close(fd);
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | sb[128 + i];
	return v;
}

/* The data area of a member file ([data_offset, + dev_sectors)). */
static uint8_t *data_area(const char *path, uint64_t dev_sectors)
{
	uint8_t *b = malloc(dev_sectors * 512);
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, b, dev_sectors * 512, (off_t)(data_offset(path) * 512)) ==
	                     (ssize_t)(dev_sectors * 512));
	close(fd);
	return b;
}

static struct uraid_array *mk(struct fx *f, int level, uint32_t layout, bool layout_set, int nd,
                              struct member **wrap)
{
	struct member *ms[MAXM];
	for (int i = 0; i < nd; i++)
		ms[i] = fx_open(f, i, wrap ? &wrap[i] : NULL);
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = level;
	o.raid_devices = nd;
	o.chunk_sectors = 128; /* 64 KiB: many stripes per batch */
	o.layout = layout;
	o.layout_set = layout_set;
	o.assume_clean = true;
	struct uraid_array *a = NULL;
	char err[256];
	int rc = uraid_create_members(&o, ms, nd, URAID_NO_SYNC_THREAD, &a, err, sizeof(err));
	CHECKF(rc == 0, "create: %s", err);
	return a;
}

static uint8_t *fill(struct uraid_array *a, uint64_t seed)
{
	uint64_t size = uraid_size(a), rs = seed;
	uint8_t *shadow = malloc(size);
	t_fill(&rs, shadow, size);
	CHECK(uraid_write(a, shadow, size, 0) == 0);
	CHECK(uraid_flush(a) == 0);
	return shadow;
}

/* Six 6 MiB member files, an array of `level` on the first five (the
 * sixth is the spare) filled from `seed`; NULL (and nothing left open)
 * when it cannot be made. */
static struct uraid_array *fx_array(struct fx *f, int level, uint64_t seed, uint8_t **shadow)
{
	if (!fx_make(f, 6, 6 * MB))
		return NULL;
	struct uraid_array *a = mk(f, level, 0, false, 5, NULL);
	if (!a) {
		fx_free(f);
		return NULL;
	}
	*shadow = fill(a, seed);
	return a;
}

/* The end of a case: the array stopped, the shadow and the files gone. */
static void fx_done(struct fx *f, struct uraid_array *a, uint8_t *shadow)
{
	uraid_stop(a);
	free(shadow);
	fx_free(f);
}

static int sync_all(struct uraid_array *a, uint64_t step)
{
	int rc, guard = 0;
	while ((rc = uraid_sync_step(a, step)) > 0 && guard++ < 1000000)
		;
	return rc;
}

static bool same_as_shadow(struct uraid_array *a, const uint8_t *shadow)
{
	uint64_t size = uraid_size(a);
	uint8_t *b = malloc(size);
	bool ok = uraid_read(a, b, size, 0) == 0 && memcmp(b, shadow, size) == 0;
	free(b);
	return ok;
}

static uint64_t check_mismatches(struct uraid_array *a)
{
	char err[256];
	CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
	CHECK(sync_all(a, 4096) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	return st.mismatch_cnt;
}

static void fail_remove(struct uraid_array *a, int slot)
{
	char err[256], who[8];
	struct uraid_status st;
	uraid_status(a, &st);
	char name[256];
	snprintf(name, sizeof(name), "%s", st.members[slot].name);
	snprintf(who, sizeof(who), "#%d", slot);
	CHECK(uraid_fail(a, who, err, sizeof(err)) == 0);
	CHECKF(uraid_remove(a, name, err, sizeof(err)) == 0, "%s", err);
}

/* Lose `nlost` slots (0, 1, ...), rebuild onto spares, compare. */
static void rebuild_case(int level, uint32_t layout, bool layout_set, int nd, int nlost,
                         uint64_t seed)
{
	struct fx f;
	if (!fx_make(&f, nd + nlost, 6 * MB))
		return;
	struct uraid_array *a = mk(&f, level, layout, layout_set, nd, NULL);
	if (!a) {
		fx_free(&f);
		return;
	}
	uint8_t *shadow = fill(a, seed);
	struct uraid_status st;
	uraid_status(a, &st);
	uint64_t dev = st.dev_sectors;
	uint8_t *orig[2];
	for (int s = 0; s < nlost; s++) {
		orig[s] = data_area(f.path[s], dev);
		fail_remove(a, s);
	}
	char err[256];
	for (int s = 0; s < nlost; s++)
		CHECK(uraid_add_member(a, fx_open(&f, nd + s, NULL), err, sizeof(err)) == 0);
	CHECK(sync_all(a, 8192) == 0);
	uraid_status(a, &st);
	CHECKF(st.degraded == 0, "raid%d: degraded %d after the rebuild", level, st.degraded);
	for (int s = 0; s < nlost; s++) {
		uint8_t *got = data_area(f.path[nd + s], dev);
		/* raid10 near/offset/far leave no gaps at these sizes either:
		 * every data sector of the slot is rebuilt. */
		CHECKF(memcmp(got, orig[s], dev * 512) == 0, "raid%d: rebuilt slot %d differs",
		       level, s);
		free(got);
		free(orig[s]);
	}
	CHECK_EQ_U64(check_mismatches(a), 0);
	/* Lose one more member: the rebuilt ones now carry the data. */
	if (level != URAID_LEVEL_RAID1 || nd > 2)
		CHECK(uraid_fail(a, nlost == 1 ? "#1" : "#2", err, sizeof(err)) == 0);
	CHECKF(same_as_shadow(a, shadow), "raid%d: array differs from the shadow", level);
	fx_done(&f, a, shadow);
}

static void rebuild_every_level(void)
{
	uint32_t l10;
	rebuild_case(URAID_LEVEL_RAID1, 0, false, 3, 1, 101);
	rebuild_case(URAID_LEVEL_RAID4, 0, false, 4, 1, 102);
	rebuild_case(URAID_LEVEL_RAID5, 0, false, 5, 1, 103);
	rebuild_case(URAID_LEVEL_RAID6, 0, false, 5, 1, 104);
	rebuild_case(URAID_LEVEL_RAID6, 0, false, 6, 2, 105); /* two at once: P+Q recovery */
	CHECK(layout_parse(URAID_LEVEL_RAID6, "right-asymmetric", &l10) == 0);
	rebuild_case(URAID_LEVEL_RAID6, l10, true, 5, 1, 106);
	CHECK(layout_parse(URAID_LEVEL_RAID6, "left-symmetric-6", &l10) == 0);
	rebuild_case(URAID_LEVEL_RAID6, l10, true, 5, 1, 110); /* Q on the last member */
	CHECK(layout_parse(URAID_LEVEL_RAID10, "n2", &l10) == 0);
	rebuild_case(URAID_LEVEL_RAID10, l10, true, 4, 1, 107);
	CHECK(layout_parse(URAID_LEVEL_RAID10, "f2", &l10) == 0);
	rebuild_case(URAID_LEVEL_RAID10, l10, true, 4, 1, 108);
	CHECK(layout_parse(URAID_LEVEL_RAID10, "o2", &l10) == 0);
	rebuild_case(URAID_LEVEL_RAID10, l10, true, 5, 1, 109);
}

/* Foreground writes between rebuild steps, below and above the rebuild
 * position: every one must land on the rebuilt member too. */
static void writes_during_rebuild(void)
{
	static const int levels[] = {URAID_LEVEL_RAID5, URAID_LEVEL_RAID6, URAID_LEVEL_RAID1};
	for (int li = 0; li < 3; li++) {
		int nd = levels[li] == URAID_LEVEL_RAID1 ? 3 : 5;
		struct fx f;
		if (!fx_make(&f, nd + 1, 6 * MB))
			return;
		struct uraid_array *a = mk(&f, levels[li], 0, false, nd, NULL);
		if (!a) {
			fx_free(&f);
			return;
		}
		uint8_t *shadow = fill(a, 200 + (uint64_t)li);
		uint64_t size = uraid_size(a), rs = 300 + (uint64_t)li;
		char err[256];
		fail_remove(a, 0);
		CHECK(uraid_add_member(a, fx_open(&f, nd, NULL), err, sizeof(err)) == 0);
		uint8_t w[64 * 1024];
		int rc;
		while ((rc = uraid_sync_step(a, 1024)) > 0) {
			for (int k = 0; k < 3; k++) {
				size_t len = 4096 * (1 + t_rand(&rs) % 16);
				uint64_t off = t_rand(&rs) % ((size - len) / 4096) * 4096;
				t_fill(&rs, w, len);
				CHECK(uraid_write(a, w, len, off) == 0);
				memcpy(shadow + off, w, len);
			}
		}
		CHECK(rc == 0);
		struct uraid_status st;
		uraid_status(a, &st);
		CHECK(st.degraded == 0);
		CHECK_EQ_U64(check_mismatches(a), 0);
		CHECK(uraid_fail(a, "#1", err, sizeof(err)) == 0);
		CHECKF(same_as_shadow(a, shadow), "raid%d", levels[li]);
		fx_done(&f, a, shadow);
	}
}

/* Two rebuilds in a row on one array: the helper worker of the first sync
 * job ends with it and the second starts its own; both rebuilt members must
 * then carry the data (each of the other members failed in turn). */
static void rebuild_twice(void)
{
	int levels[] = {URAID_LEVEL_RAID5, URAID_LEVEL_RAID10};
	for (int li = 0; li < 2; li++) {
		struct fx f;
		uint8_t *shadow;
		struct uraid_array *a = fx_array(&f, levels[li], 450 + (uint64_t)li, &shadow);
		if (!a)
			return;
		char err[256];
		fail_remove(a, 0);
		CHECK(uraid_add_member(a, fx_open(&f, 5, NULL), err, sizeof(err)) == 0);
		CHECK(sync_all(a, 8192) == 0);
		fail_remove(a, 1);
		/* the file slot 0 left, as a new spare for slot 1 */
		CHECK(uraid_add_member(a, fx_open(&f, 0, NULL), err, sizeof(err)) == 0);
		CHECK(sync_all(a, 8192) == 0);
		struct uraid_status st;
		uraid_status(a, &st);
		CHECKF(st.degraded == 0, "raid%d: degraded %d", levels[li], st.degraded);
		CHECK_EQ_U64(check_mismatches(a), 0);
		for (int other = 2; other < 5; other++) {
			fail_remove(a, other);
			CHECKF(same_as_shadow(a, shadow), "raid%d: slot %d failed", levels[li],
			       other);
			/* back in as a spare, rebuilt */
			CHECK(uraid_add_member(a, fx_open(&f, other, NULL), err, sizeof(err)) == 0);
			CHECK(sync_all(a, 8192) == 0);
		}
		fx_done(&f, a, shadow);
	}
}

/* Stop in the middle of a rebuild, assemble from the files: the rebuild
 * resumes at its checkpoint and the result is the same. */
static void interrupted_rebuild_resumes(void)
{
	struct fx f;
	uint8_t *shadow;
	struct uraid_array *a = fx_array(&f, URAID_LEVEL_RAID6, 400, &shadow);
	if (!a)
		return;
	struct uraid_status st;
	uraid_status(a, &st);
	uint64_t dev = st.dev_sectors;
	uint8_t *orig = data_area(f.path[2], dev);
	char err[256], warn[1024];
	fail_remove(a, 2);
	CHECK(uraid_add_member(a, fx_open(&f, 5, NULL), err, sizeof(err)) == 0);
	CHECK(uraid_sync_step(a, 2048) == 1);
	CHECK(uraid_stop(a) == 0);
	const char *paths[] = {f.path[0], f.path[1], f.path[3], f.path[4], f.path[5]};
	CHECKF(uraid_assemble(paths, 5, URAID_NO_SYNC_THREAD, &a, err, sizeof(err), warn,
	                      sizeof(warn)) == 0,
	       "%s", err);
	if (!a) {
		fx_free(&f);
		return;
	}
	uraid_status(a, &st);
	CHECK(st.members[2].state == URAID_MEMBER_REBUILDING);
	CHECKF(st.members[2].recovery_offset >= 2048, "resumes at %llu",
	       (unsigned long long)st.members[2].recovery_offset);
	CHECK(sync_all(a, 8192) == 0);
	uraid_status(a, &st);
	CHECK(st.degraded == 0 && st.members[2].state == URAID_MEMBER_IN_SYNC);
	uint8_t *got = data_area(f.path[5], dev);
	CHECK(memcmp(got, orig, dev * 512) == 0);
	CHECK_EQ_U64(check_mismatches(a), 0);
	CHECK(same_as_shadow(a, shadow));
	uraid_stop(a);
	free(got);
	free(orig);
	free(shadow);
	fx_free(&f);
}

/* Read errors from a fault wrapper around a tmpfs member: the wrapper is
 * not in memory, so the recovery takes the queued path through it and
 * meets the error (hits > 0), which redundancy (RAID6) or a retry (the error fires
 * once) gets past. `wrapped`: which members are wrapped (all, or one). */
static void read_error_case(int level, bool all_wrapped, uint64_t seed)
{
	struct fx f;
	int nd = 5;
	if (!fx_make(&f, nd + 1, 6 * MB))
		return;
	struct member *wrap[MAXM] = {0};
	struct member *ms[MAXM];
	for (int i = 0; i < nd; i++)
		ms[i] = fx_open(&f, i, (all_wrapped || i == 3) ? &wrap[i] : NULL);
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = level;
	o.raid_devices = nd;
	o.chunk_sectors = 128;
	o.assume_clean = true;
	struct uraid_array *a = NULL;
	char err[256];
	CHECKF(uraid_create_members(&o, ms, nd, URAID_NO_SYNC_THREAD, &a, err, sizeof(err)) == 0,
	       "%s", err);
	if (!a) {
		fx_free(&f);
		return;
	}
	uint8_t *shadow = fill(a, seed);
	struct uraid_status st;
	uraid_status(a, &st);
	uint64_t dev = st.dev_sectors, doff = data_offset(f.path[3]);
	uint8_t *orig = data_area(f.path[0], dev);
	fail_remove(a, 0);
	/* One read error on member 3 in the middle of its data. */
	struct member_fault_rule r = {.op = MEMBER_OP_READ,
	                              .off = (doff + dev / 2) * 512,
	                              .len = 4096,
	                              .error = EIO,
	                              .once = true};
	CHECK(member_fault_add(wrap[3], &r) == 0);
	CHECK(uraid_add_member(a, fx_open(&f, nd, NULL), err, sizeof(err)) == 0);
	CHECK(sync_all(a, 8192) == 0);
	CHECKF(member_fault_hits(wrap[3]) >= 1, "raid%d: the injected error was never seen", level);
	uraid_status(a, &st);
	CHECK(st.degraded == 0);
	uint8_t *got = data_area(f.path[nd], dev);
	CHECKF(memcmp(got, orig, dev * 512) == 0, "raid%d: rebuilt member differs", level);
	CHECK_EQ_U64(check_mismatches(a), 0);
	CHECK(same_as_shadow(a, shadow));
	uraid_stop(a);
	free(got);
	free(orig);
	free(shadow);
	fx_free(&f);
}

static void read_error_through_wrapper(void)
{
	read_error_case(URAID_LEVEL_RAID6, true, 500);
	read_error_case(URAID_LEVEL_RAID6, false, 501); /* one wrapped: the queued path too */
	read_error_case(URAID_LEVEL_RAID5, false, 502);
}

/* The spare fails its writes: it is marked faulty, the rebuild stops, the
 * array stays degraded and reads right. */
static void write_error_on_target(void)
{
	struct fx f;
	uint8_t *shadow;
	struct uraid_array *a = fx_array(&f, URAID_LEVEL_RAID5, 600, &shadow);
	if (!a)
		return;
	char err[256];
	fail_remove(a, 0);
	struct member *fault = NULL, *spare = fx_open(&f, 5, &fault);
	struct member_fault_rule r = {.op = MEMBER_OP_WRITE, .after = 20, .error = EIO};
	CHECK(member_fault_add(fault, &r) == 0);
	CHECK(uraid_add_member(a, spare, err, sizeof(err)) == 0);
	int rc = sync_all(a, 8192);
	CHECK(rc <= 0);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.degraded == 1 && st.sync_action == URAID_SYNC_IDLE);
	CHECK(member_fault_hits(fault) >= 1);
	CHECK(same_as_shadow(a, shadow));
	fx_done(&f, a, shadow);
}

/* A source member's file cut short behind the array's back: a worker of
 * the two-worker path meets the short file as a read error, the batch goes
 * the careful way and RAID6 rebuilds from the others; the array still
 * reads what was written. */
static void truncated_source_member(void)
{
	struct fx f;
	uint8_t *shadow;
	struct uraid_array *a = fx_array(&f, URAID_LEVEL_RAID6, 700, &shadow);
	if (!a)
		return;
	char err[256];
	fail_remove(a, 0);
	CHECK(truncate(f.path[3], 3 * MB) == 0);
	CHECK(uraid_add_member(a, fx_open(&f, 5, NULL), err, sizeof(err)) == 0);
	int rc = sync_all(a, 8192);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECKF(rc == 0 && st.sync_action == URAID_SYNC_IDLE, "rc %d", rc);
	CHECK(st.members[0].state == URAID_MEMBER_IN_SYNC); /* the spare took slot 0 */
	CHECK(same_as_shadow(a, shadow));
	fx_done(&f, a, shadow);
}

TEST_MAIN(T(rebuild_every_level), T(rebuild_twice), T(writes_during_rebuild),
          T(interrupted_rebuild_resumes), T(read_error_through_wrapper), T(write_error_on_target),
          T(truncated_source_member))
