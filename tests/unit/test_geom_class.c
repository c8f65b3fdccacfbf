/* gmirror/graid3 through the public uraid_array handle: uraid_assemble
 * recognises them, I/O checked against the components' bytes (mirror: every
 * active copy equal to the data; raid3: a slow per-byte placement reference
 * plus XOR parity), status fields, fail/remove/add with the sync thread and
 * caller-driven sync, md-only calls refused, and every uraid_geom_ctl verb
 * (configure, deactivate/activate, forget, resize, rebuild, insert/remove,
 * destroy) with its effect on disk after a restart. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CSIZE (128 * 1024 + 512)
#include "geom/geom.h"
#include "geom/class.h"
#include "test_geom_common.h"
#include "uraid.h"

#define MEDIA (128 * 1024) /* provider of a 2-disk mirror on CSIZE components */

static struct uraid_array *asm_files(const int *idx, int n, unsigned flags)
{
	char p[8][96];
	const char *pp[8];
	for (int i = 0; i < n; i++) {
		path_of(idx[i], p[i], sizeof(p[i]));
		pp[i] = p[i];
	}
	struct uraid_array *a = NULL;
	char err[256] = "", warn[512] = "";
	int rc = uraid_assemble(pp, n, flags, &a, err, sizeof(err), warn, sizeof(warn));
	CHECKF(rc == 0, "assemble: %s", err);
	return rc == 0 ? a : NULL;
}

static void label_mirror(int n, int balance)
{
	struct member *m[8];
	open_members(n, m, -1);
	struct geom_label_opts o = {.name = "gu", .balance = balance};
	char err[256] = "";
	CHECKF(geom_mirror_label(&o, m, n, err, sizeof(err)) == 0, "%s", err);
	for (int i = 0; i < n; i++)
		member_close(m[i]);
}

/* Component i's first len bytes equal data. */
static bool disk_holds(int i, const uint8_t *data, size_t len)
{
	uint8_t *b = malloc(len);
	read_disk(i, b, len);
	bool same = memcmp(b, data, len) == 0;
	free(b);
	return same;
}

static int member_state(const struct uraid_status *st, int role)
{
	for (int i = 0; i < st->nmembers; i++)
		if (st->members[i].role == role)
			return st->members[i].state;
	return -1;
}

static void mirror_handle(void)
{
	make_files(3);
	label_mirror(2, GEOM_BALANCE_ROUND_ROBIN);
	static const int idx[] = {0, 1};
	struct uraid_array *a = asm_files(idx, 2, URAID_NO_SYNC_THREAD);
	if (!a)
		return;
	struct uraid_status st;
	CHECK(uraid_status(a, &st) == 0);
	CHECK(st.level == URAID_LEVEL_GMIRROR && st.raid_disks == 2 && st.working == 2);
	CHECK(st.block_bytes == 512 && st.array_sectors == MEDIA / 512 && uraid_size(a) == MEDIA);
	CHECK(!strcmp(st.name, "gu") && st.geom_balance == GEOM_BALANCE_ROUND_ROBIN);
	CHECK(st.members[0].priority == 0 && st.members[1].priority == 1);
	uint8_t *data = malloc(MEDIA), *back = malloc(MEDIA);
	uint64_t seed = 7;
	t_fill(&seed, data, MEDIA);
	CHECK(uraid_write(a, data, MEDIA, 0) == 0 && uraid_flush(a) == 0);
	CHECK(uraid_read(a, back, MEDIA, 0) == 0 && memcmp(back, data, MEDIA) == 0);
	CHECK(disk_holds(0, data, MEDIA) && disk_holds(1, data, MEDIA));
	CHECK(uraid_write(a, data, 100, 0) == -EINVAL);
	CHECK(uraid_read(a, back, 512, MEDIA) == -ERANGE);
	/* md-only calls refuse cleanly */
	char err[256] = "";
	CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == -EOPNOTSUPP);
	CHECK(uraid_bitmap_add(a, 0, err, sizeof(err)) == -EOPNOTSUPP);
	CHECK(uraid_set_stripe_cache(a, 16) == -EINVAL);
	CHECK(uraid_bitmap_resync_skipped(a) == 0);
	/* fail one; the last active one is refused */
	char p0[96], p1[96], p2[96];
	path_of(0, p0, sizeof(p0));
	path_of(1, p1, sizeof(p1));
	path_of(2, p2, sizeof(p2));
	CHECK(uraid_fail(a, p0, err, sizeof(err)) == 0);
	CHECKF(uraid_fail(a, "#1", err, sizeof(err)) == -EBUSY, "%s", err);
	CHECK(uraid_fail(a, "/nonexistent", err, sizeof(err)) == -ENOENT);
	uraid_status(a, &st);
	CHECK(st.working == 1 && st.failed == 1 && member_state(&st, 0) == URAID_MEMBER_FAULTY);
	CHECK(uraid_read(a, back, MEDIA, 0) == 0 && memcmp(back, data, MEDIA) == 0);
	/* remove the failed one, add a fresh one, sync it in this thread */
	CHECK(uraid_remove(a, p0, err, sizeof(err)) == 0);
	CHECKF(uraid_add(a, p2, err, sizeof(err)) == 0, "%s", err);
	uraid_status(a, &st);
	CHECK(st.sync_action == URAID_SYNC_RECOVER && st.sync_total == MEDIA / 512);
	CHECK(member_state(&st, 1) == URAID_MEMBER_REBUILDING);
	CHECK(uraid_sync_step(a, 64) == 1);
	uraid_status(a, &st);
	CHECK(st.sync_done == 64);
	CHECK(uraid_sync_wait(a) == 0);
	uraid_status(a, &st);
	CHECK(st.sync_action == URAID_SYNC_IDLE && st.working == 2);
	CHECK(disk_holds(2, data, MEDIA));
	CHECK(uraid_stop(a) == 0);
	/* again, from the two current disks (c0 was removed: no metadata) */
	static const int idx2[] = {1, 2};
	a = asm_files(idx2, 2, URAID_RDONLY);
	if (a) {
		uraid_status(a, &st);
		CHECK(st.working == 2 && st.readonly && st.clean);
		CHECK(uraid_read(a, back, MEDIA, 0) == 0 && memcmp(back, data, MEDIA) == 0);
		CHECK(uraid_write(a, data, 512, 0) == -EROFS);
		uraid_stop(a);
	}
	free(data);
	free(back);
	rm_files(3);
}

/* The sync thread finishes an insert on its own; uraid_drop writes nothing,
 * so the mirror comes back dirty and resynchronizes. */
static void mirror_thread_and_drop(void)
{
	make_files(3);
	label_mirror(2, GEOM_BALANCE_LOAD);
	static const int idx[] = {0, 1};
	struct uraid_array *a = asm_files(idx, 2, 0);
	if (!a)
		return;
	uint8_t *data = malloc(MEDIA);
	uint64_t seed = 9;
	t_fill(&seed, data, MEDIA);
	char p2[96], err[256] = "";
	path_of(2, p2, sizeof(p2));
	CHECK(uraid_write(a, data, MEDIA, 0) == 0);
	CHECKF(uraid_add(a, p2, err, sizeof(err)) == 0, "%s", err);
	CHECKF(uraid_add(a, p2, err, sizeof(err)) < 0, "second add of the same file");
	CHECK(uraid_sync_wait(a) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.working == 3 && st.sync_action == URAID_SYNC_IDLE && !st.clean);
	CHECK(disk_holds(2, data, MEDIA));
	uraid_drop(a);
	struct geom_mirror_md md;
	struct member *m = open_one(0);
	CHECK(geom_mirror_read(m, &md, err, sizeof(err)) == 0);
	CHECK(md.dflags & GEOM_MIRROR_DISK_DIRTY);
	member_close(m);
	static const int idx3[] = {0, 1, 2};
	a = asm_files(idx3, 3, URAID_NO_SYNC_THREAD);
	if (a) {
		uraid_status(a, &st);
		CHECK(st.sync_action == URAID_SYNC_RECOVER && st.working == 1);
		CHECK(uraid_sync_wait(a) == 0);
		uraid_status(a, &st);
		CHECK(st.working == 3);
		uraid_stop(a);
	}
	free(data);
	rm_files(3);
}

static void raid3_handle(void)
{
	enum { N = 3, PS = 1024, LEN = 2 * (CSIZE - 512) };
	make_files(N);
	struct member *m[N];
	open_members(N, m, -1);
	struct geom_label_opts o = {.name = "gr"};
	char err[256] = "";
	CHECKF(geom_raid3_label(&o, m, N, err, sizeof(err)) == 0, "%s", err);
	for (int i = 0; i < N; i++)
		member_close(m[i]);
	static const int idx[] = {2, 0, 1}; /* any order */
	struct uraid_array *a = asm_files(idx, N, URAID_NO_SYNC_THREAD);
	if (!a)
		return;
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.level == URAID_LEVEL_GRAID3 && st.raid_disks == N && st.block_bytes == PS);
	CHECK(uraid_size(a) == LEN);
	uint8_t *data = malloc(LEN), *back = malloc(LEN);
	uint64_t seed = 11;
	t_fill(&seed, data, LEN);
	CHECK(uraid_write(a, data, 512, 0) == -EINVAL); /* below the provider sector */
	CHECK(uraid_write(a, data, PS, 512) == -EINVAL);
	CHECK(uraid_write(a, data, LEN, 0) == 0 && uraid_flush(a) == 0);
	/* slow reference: provider byte b in component (b % PS) / atom at
	 * (b / PS) * atom + b % atom; the last component is the XOR. */
	const uint32_t atom = PS / (N - 1);
	uint8_t *c[N];
	for (int i = 0; i < N; i++) {
		c[i] = malloc(LEN / (N - 1));
		read_disk(i, c[i], LEN / (N - 1));
	}
	int bad = 0;
	for (uint64_t b = 0; b < LEN; b++)
		bad += c[(b % PS) / atom][(b / PS) * atom + b % atom] != data[b];
	for (uint64_t k = 0; k < LEN / (N - 1); k++)
		bad += c[N - 1][k] != (uint8_t)(c[0][k] ^ c[1][k]);
	CHECKF(bad == 0, "%d bytes misplaced", bad);
	/* each component failed in turn (then rebuilt): data intact */
	for (int v = 0; v < N; v++) {
		char pv[96];
		path_of(v, pv, sizeof(pv));
		CHECK(uraid_fail(a, pv, err, sizeof(err)) == 0);
		CHECK(uraid_fail(a, "#0", err, sizeof(err)) == (v == 0 ? 0 : -EBUSY));
		memset(back, 0, LEN);
		CHECK(uraid_read(a, back, LEN, 0) == 0 && memcmp(back, data, LEN) == 0);
		uraid_status(a, &st);
		CHECK(st.failed == 1 && member_state(&st, v) == URAID_MEMBER_FAULTY);
		/* the failed one back in: remove, add the same file, rebuild */
		CHECK(uraid_remove(a, pv, err, sizeof(err)) == 0);
		CHECKF(uraid_add(a, pv, err, sizeof(err)) == 0, "%s", err);
		CHECK(uraid_sync_wait(a) == 0);
		uraid_status(a, &st);
		CHECK(st.working == N);
	}
	for (int i = 0; i < N; i++) {
		read_disk(i, back, LEN / (N - 1));
		CHECK(memcmp(back, c[i], LEN / (N - 1)) == 0);
		free(c[i]);
	}
	CHECK(uraid_geom_ctl(a, "configure round_robin=1", err, sizeof(err)) == 0);
	uraid_status(a, &st);
	CHECK(st.geom_flags == URAID_GEOM_F_RAID3_ROUND_ROBIN);
	CHECK(uraid_geom_ctl(a, "configure verify=1", err, sizeof(err)) == -EINVAL);
	CHECK(uraid_geom_ctl(a, "forget", err, sizeof(err)) == -EOPNOTSUPP);
	CHECK(uraid_read(a, back, LEN, 0) == 0 && memcmp(back, data, LEN) == 0);
	CHECK(uraid_stop(a) == 0);
	free(data);
	free(back);
	rm_files(N);
}

static void ctl_verbs(void)
{
	/* c0, c1 of CSIZE; c2 twice as big for resize */
	make_files(2);
	char p2[96], err[256] = "";
	path_of(2, p2, sizeof(p2));
	struct member *big;
	CHECK(member_open_file(p2, MEMBER_CREATE, 2 * CSIZE, &big, err, sizeof(err)) == 0);
	member_close(big);
	label_mirror(2, GEOM_BALANCE_LOAD);
	static const int idx[] = {0, 1};
	struct uraid_array *a = asm_files(idx, 2, URAID_NO_SYNC_THREAD);
	if (!a)
		return;
	struct uraid_status st;
	CHECK(uraid_geom_ctl(a, "configure balance=split slice=8192", err, sizeof(err)) == 0);
	CHECK(uraid_geom_ctl(a, "configure balance=fastest", err, sizeof(err)) == -EINVAL);
	CHECK(uraid_geom_ctl(a, "configure slice=1000", err, sizeof(err)) == -EINVAL);
	CHECK(uraid_geom_ctl(a, "configure colour=red", err, sizeof(err)) == -EINVAL);
	CHECK(uraid_geom_ctl(a, "configure", err, sizeof(err)) == -EINVAL);
	CHECK(uraid_geom_ctl(a, "frobnicate", err, sizeof(err)) == -EINVAL);
	/* malformed requests: named, refused, nothing changed */
	CHECK(uraid_geom_ctl(a, "", err, sizeof(err)) == -EINVAL);
	CHECK(uraid_geom_ctl(a, "configure balance", err, sizeof(err)) == -EINVAL);
	CHECK(uraid_geom_ctl(a, "configure =split", err, sizeof(err)) == -EINVAL);
	CHECK(uraid_geom_ctl(a, "configure slice=-512", err, sizeof(err)) == -EINVAL);
	CHECK(uraid_geom_ctl(a, "configure slice=99999999999999999999", err, sizeof(err)) ==
	      -EINVAL);
	CHECK(uraid_geom_ctl(a, "configure priority=256 member=#0", err, sizeof(err)) == -EINVAL);
	CHECK(uraid_geom_ctl(a, "configure priority=1 member=#9", err, sizeof(err)) == -ENOENT);
	CHECK(uraid_geom_ctl(a, "configure autosync=2", err, sizeof(err)) == -EINVAL);
	CHECK(uraid_geom_ctl(a, "rebuild", err, sizeof(err)) == -EINVAL);
	CHECK(uraid_geom_ctl(a, "insert member=/nonexistent/x", err, sizeof(err)) == -ENOENT);
	char *lng = malloc(9000);
	memset(lng, 'a', 8999);
	lng[8999] = 0;
	memcpy(lng, "configure balance=", 18);
	CHECK(uraid_geom_ctl(a, lng, err, sizeof(err)) == -EINVAL);
	snprintf(lng, 9000, "configure");
	for (int i = 0; i < 20; i++)
		strcat(lng, " slice=4096");
	CHECK(uraid_geom_ctl(a, lng, err, sizeof(err)) == -EINVAL); /* 20 keys: too many */
	CHECKF(strstr(err, "too long") != NULL, "%s", err);
	free(lng);
	uraid_status(a, &st);
	CHECK(st.geom_balance == GEOM_BALANCE_SPLIT && st.geom_slice == 8192);
	CHECK(uraid_geom_ctl(a, "configure priority=7 member=#1 autosync=0", err, sizeof(err)) ==
	      0);
	uraid_status(a, &st);
	CHECK(st.geom_balance == GEOM_BALANCE_SPLIT && st.geom_slice == 8192);
	CHECK(st.members[1].priority == 7 && st.geom_flags == URAID_GEOM_F_MIRROR_NOAUTOSYNC);
	/* deactivate: not written to any more; the last active one refused */
	uint8_t *d1 = malloc(MEDIA), *d2 = malloc(MEDIA), *back = malloc(MEDIA);
	uint64_t seed = 3;
	t_fill(&seed, d1, MEDIA);
	t_fill(&seed, d2, MEDIA);
	CHECK(uraid_write(a, d1, MEDIA, 0) == 0);
	CHECK(uraid_geom_ctl(a, "deactivate member=#1", err, sizeof(err)) == 0);
	CHECK(uraid_geom_ctl(a, "deactivate member=#0", err, sizeof(err)) == -EBUSY);
	uraid_status(a, &st);
	CHECK(member_state(&st, 1) == URAID_MEMBER_INACTIVE && st.working == 1);
	CHECK(uraid_write(a, d2, MEDIA, 0) == 0);
	CHECK(disk_holds(1, d1, MEDIA) && disk_holds(0, d2, MEDIA));
	/* activate with autosync off: stale until rebuild */
	CHECK(uraid_geom_ctl(a, "activate member=#1", err, sizeof(err)) == 0);
	uraid_status(a, &st);
	CHECK(member_state(&st, 1) == URAID_MEMBER_STALE);
	CHECK(uraid_geom_ctl(a, "rebuild member=#1", err, sizeof(err)) == 0);
	CHECK(uraid_sync_wait(a) == 0);
	uraid_status(a, &st);
	CHECK(member_state(&st, 1) == URAID_MEMBER_IN_SYNC && disk_holds(1, d2, MEDIA));
	CHECK(uraid_geom_ctl(a, "rebuild member=#0", err, sizeof(err)) == 0);
	CHECK(uraid_sync_wait(a) == 0);
	/* resize: c2 (bigger) replaces c0, then c1 still limits; forget */
	CHECK(uraid_geom_ctl(a, "resize size=1000", err, sizeof(err)) == -EINVAL);
	CHECK(uraid_geom_ctl(a, "resize size=1048576", err, sizeof(err)) == -ENOSPC);
	char req[256];
	snprintf(req, sizeof(req), "insert member=%s priority=3", p2);
	CHECKF(uraid_geom_ctl(a, req, err, sizeof(err)) == 0, "%s", err);
	CHECK(uraid_sync_wait(a) == 0);
	CHECK(uraid_geom_ctl(a, "remove member=#0", err, sizeof(err)) == 0);
	CHECK(uraid_geom_ctl(a, "resize", err, sizeof(err)) == 0);
	CHECK(uraid_size(a) == MEDIA); /* c1 is still the smallest */
	CHECK(uraid_geom_ctl(a, "configure autosync=1", err, sizeof(err)) == 0);
	CHECK(uraid_stop(a) == 0);
	/* restart with c2 alone: c1 absent -> degraded, forget drops it */
	static const int only2[] = {2};
	a = asm_files(only2, 1, URAID_NO_SYNC_THREAD);
	if (a) {
		uraid_status(a, &st);
		CHECK(st.raid_disks == 2 && st.working == 1 && st.degraded == 1);
		CHECK(st.geom_balance == GEOM_BALANCE_SPLIT && st.geom_slice == 8192);
		CHECK(uraid_read(a, back, MEDIA, 0) == 0 && memcmp(back, d2, MEDIA) == 0);
		CHECK(uraid_geom_ctl(a, "forget", err, sizeof(err)) == 0);
		uraid_status(a, &st);
		CHECK(st.raid_disks == 1 && st.degraded == 0);
		/* now c2 alone limits the size */
		CHECK(uraid_geom_ctl(a, "resize", err, sizeof(err)) == 0);
		CHECK(uraid_size(a) == 2 * CSIZE - 512); /* all but its metadata sector */
		CHECK(uraid_read(a, back, MEDIA, 0) == 0 && memcmp(back, d2, MEDIA) == 0);
		CHECK(uraid_stop(a) == 0);
		a = asm_files(only2, 1, URAID_RDONLY);
		if (a) {
			CHECK(uraid_size(a) == 2 * CSIZE - 512);
			uraid_status(a, &st);
			CHECK(st.raid_disks == 1);
			uraid_stop(a);
		}
	}
	/* destroy: metadata gone, I/O refused, stop writes nothing back */
	a = asm_files(only2, 1, 0);
	if (a) {
		CHECK(uraid_geom_ctl(a, "destroy", err, sizeof(err)) == 0);
		CHECK(uraid_read(a, back, 512, 0) == -ENXIO);
		CHECK(uraid_stop(a) == 0);
		struct member *m = open_one(2);
		struct geom_mirror_md md;
		CHECK(geom_mirror_read(m, &md, err, sizeof(err)) == -ENOENT);
		member_close(m);
		CHECK(uraid_assemble((const char *[]){p2}, 1, 0, &a, err, sizeof(err), NULL, 0) <
		      0);
	}
	free(d1);
	free(d2);
	free(back);
	rm_files(3);
}

static bool disk_dirty(int i)
{
	struct geom_mirror_md md;
	char err[256];
	struct member *m = open_one(i);
	bool dirty = m && geom_mirror_read(m, &md, err, sizeof(err)) == 0 &&
	             (md.dflags & GEOM_MIRROR_DISK_DIRTY);
	if (m)
		member_close(m);
	return dirty;
}

/* gmirror's idle marking: DIRTY cleared after a quiet spell, so a crash
 * (uraid_drop) afterwards needs no resynchronization. */
static void idle_marks_clean(void)
{
	make_files(2);
	label_mirror(2, GEOM_BALANCE_LOAD);
	static const int idx[] = {0, 1};
	struct uraid_array *a = asm_files(idx, 2, URAID_NO_SYNC_THREAD);
	if (!a)
		return;
	uint8_t buf[4096] = {1};
	CHECK(uraid_write(a, buf, sizeof(buf), 0) == 0);
	CHECK(disk_dirty(0) && disk_dirty(1));
	struct geom_array *g = geom_class_of(a);
	CHECK(geom_array_idle(g, 3600ull * 1000000000ull) == 0); /* not idle long enough */
	CHECK(disk_dirty(0));
	CHECK(geom_array_idle(g, 0) == 1);
	CHECK(!disk_dirty(0) && !disk_dirty(1));
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.clean);
	uraid_drop(a);
	a = asm_files(idx, 2, URAID_NO_SYNC_THREAD);
	if (a) {
		uraid_status(a, &st);
		CHECK(st.sync_action == URAID_SYNC_IDLE && st.working == 2);
		uraid_stop(a);
	}
	rm_files(2);
}

struct worker {
	struct uraid_array *a;
	uint64_t base, len; /* its own region */
	uint64_t seed;
	int bad, errors;
};

/* Random writes of whole 4 KiB blocks into its region, each read back and
 * compared with a private copy. */
static void *worker_run(void *arg)
{
	struct worker *w = arg;
	uint8_t *ref = calloc(1, w->len), buf[4096], back[4096];
	for (int it = 0; it < 300 && ref; it++) {
		uint64_t blk = t_rand(&w->seed) % (w->len / 4096);
		t_fill(&w->seed, buf, sizeof(buf));
		if (uraid_write(w->a, buf, sizeof(buf), w->base + blk * 4096) < 0) {
			w->errors++;
			continue;
		}
		memcpy(ref + blk * 4096, buf, sizeof(buf));
		uint64_t rblk = t_rand(&w->seed) % (w->len / 4096);
		if (uraid_read(w->a, back, sizeof(back), w->base + rblk * 4096) < 0)
			w->errors++;
		else
			w->bad += memcmp(back, ref + rblk * 4096, sizeof(back)) != 0;
	}
	free(ref);
	return NULL;
}

/* Writers and readers on a gmirror (sync thread running) while a component
 * is failed, removed, re-added and synchronized, and a configure arrives:
 * every read returns what was last written there. */
static void concurrent_io_and_management(void)
{
	make_files(3);
	label_mirror(2, GEOM_BALANCE_ROUND_ROBIN);
	static const int idx[] = {0, 1};
	struct uraid_array *a = asm_files(idx, 2, 0);
	if (!a)
		return;
	enum { W = 4 };
	struct worker w[W];
	pthread_t t[W];
	for (int i = 0; i < W; i++) {
		w[i] = (struct worker){.a = a,
		                       .base = (uint64_t)i * (MEDIA / W),
		                       .len = MEDIA / W,
		                       .seed = 100 + (uint64_t)i};
		pthread_create(&t[i], NULL, worker_run, &w[i]);
	}
	char p0[96], p2[96], err[256] = "";
	path_of(0, p0, sizeof(p0));
	path_of(2, p2, sizeof(p2));
	CHECKF(uraid_fail(a, p0, err, sizeof(err)) == 0, "%s", err);
	CHECKF(uraid_geom_ctl(a, "configure balance=load", err, sizeof(err)) == 0, "%s", err);
	CHECKF(uraid_remove(a, p0, err, sizeof(err)) == 0, "%s", err);
	CHECKF(uraid_add(a, p2, err, sizeof(err)) == 0, "%s", err);
	for (int i = 0; i < W; i++)
		pthread_join(t[i], NULL);
	CHECK(uraid_sync_wait(a) == 0);
	for (int i = 0; i < W; i++)
		CHECKF(w[i].bad == 0 && w[i].errors == 0, "worker %d: %d wrong, %d errors", i,
		       w[i].bad, w[i].errors);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.working == 2);
	/* both current components hold the same bytes */
	uint8_t *b1 = malloc(MEDIA), *b2 = malloc(MEDIA);
	CHECK(uraid_stop(a) == 0);
	read_disk(1, b1, MEDIA);
	read_disk(2, b2, MEDIA);
	CHECK(memcmp(b1, b2, MEDIA) == 0);
	free(b1);
	free(b2);
	rm_files(3);
}

/* Not GEOM: uraid_geom_ctl refuses md arrays; blank members are no GEOM. */
static void not_geom(void)
{
	make_files_sized(2, 4 << 20);
	static const int idx[] = {0, 1};
	char p[2][96], err[256] = "";
	const char *pp[2];
	for (int i = 0; i < 2; i++) {
		path_of(idx[i], p[i], sizeof(p[i]));
		pp[i] = p[i];
	}
	struct uraid_array *a;
	CHECK(uraid_assemble(pp, 2, 0, &a, err, sizeof(err), NULL, 0) == -ENOENT);
	struct uraid_create_opts o = {.level = 1, .raid_devices = 2, .assume_clean = true};
	CHECKF(uraid_create(&o, pp, 2, URAID_NO_SYNC_THREAD, &a, err, sizeof(err)) == 0, "%s", err);
	if (a) {
		CHECK(uraid_geom_ctl(a, "forget", err, sizeof(err)) == -EOPNOTSUPP);
		struct uraid_status st;
		uraid_status(a, &st);
		CHECK(st.block_bytes == 512 && st.level == 1);
		uraid_stop(a);
	}
	rm_files(2);
}

/* BIO_DELETE passed down: a write-zeroes (may trim) zeroes the range on
 * every gmirror copy and every graid3 component, parity included; a fast
 * zero is refused with nothing changed. */
static void zero_passes_down(void)
{
	enum { N = 3, PS = 1024 };
	make_files(N);
	label_mirror(2, GEOM_BALANCE_ROUND_ROBIN);
	static const int idx[] = {0, 1};
	struct uraid_array *a = asm_files(idx, 2, URAID_NO_SYNC_THREAD);
	uint8_t *data = malloc(MEDIA), *back = malloc(CSIZE), *zero = calloc(1, CSIZE);
	uint64_t seed = 21;
	t_fill(&seed, data, MEDIA);
	if (a) {
		CHECK(uraid_write(a, data, MEDIA, 0) == 0);
		CHECK(uraid_write_zeroes(a, 4096, 8192, URAID_ZERO_FAST) == -ENOTSUP);
		CHECK(uraid_write_zeroes(a, 4096, 8192, URAID_ZERO_MAY_TRIM) == 0);
		CHECK(uraid_discard(a, 65536, 512) == 0);
		CHECK(uraid_flush(a) == 0);
		memset(data + 4096, 0, 8192);
		memset(data + 65536, 0, 512);
		CHECK(uraid_read(a, back, MEDIA, 0) == 0 && memcmp(back, data, MEDIA) == 0);
		CHECK(uraid_stop(a) == 0);
		CHECK(disk_holds(0, data, MEDIA) && disk_holds(1, data, MEDIA));
	}
	struct member *m[N];
	make_files(N);
	open_members(N, m, -1);
	struct geom_label_opts o = {.name = "gz"};
	char err[256] = "";
	CHECKF(geom_raid3_label(&o, m, N, err, sizeof(err)) == 0, "%s", err);
	for (int i = 0; i < N; i++)
		member_close(m[i]);
	static const int idx3[] = {0, 1, 2};
	a = asm_files(idx3, N, URAID_NO_SYNC_THREAD);
	if (a) {
		uint64_t len = uraid_size(a);
		uint8_t *d3 = malloc(len), *b3 = malloc(len);
		t_fill(&seed, d3, len);
		CHECK(uraid_write(a, d3, len, 0) == 0);
		CHECK(uraid_write_zeroes(a, 8 * PS, 16 * PS, URAID_ZERO_MAY_TRIM) == 0);
		CHECK(uraid_flush(a) == 0);
		memset(d3 + 8 * PS, 0, 16 * PS);
		CHECK(uraid_read(a, b3, len, 0) == 0 && memcmp(b3, d3, len) == 0);
		CHECK(uraid_stop(a) == 0);
		/* every component, the parity one too, zero over the range */
		for (int i = 0; i < N; i++) {
			read_disk(i, back, CSIZE);
			CHECKF(memcmp(back + 8 * PS / (N - 1), zero, 16 * PS / (N - 1)) == 0,
			       "component %d not zeroed", i);
		}
		free(d3);
		free(b3);
	}
	free(data);
	free(back);
	free(zero);
	rm_files(N);
}

TEST_MAIN(T(mirror_handle), T(mirror_thread_and_drop), T(raid3_handle), T(ctl_verbs),
          T(idle_marks_clean), T(concurrent_io_and_management), T(not_geom), T(zero_passes_down))
