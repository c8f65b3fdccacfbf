/* Sync work racing foreground writes: a rebuild onto a spare, a resync
 * after an unclean stop (with parity / mirror copies made stale), and a
 * replace, each running in the array's background thread while several
 * threads write random, overlapping ranges (raid5, raid6, raid10 far and
 * offset, raid1). Afterwards `check` must count 0 mismatches, every byte
 * must equal a shadow copy kept by the writers, and every member (the
 * rebuilt one above all) must hold what a model computed from the shadow
 * says: its data, copies, P and Q. The writers keep off the last quarter of
 * the array, which holds random data from before the sync, so a sync that
 * skipped some of its work there (its last batch) cannot be hidden by
 * writes that rewrote it. Writes whose ranges overlap
 * are ordered by a range lock in the test, so the shadow is exact; writes
 * to different sectors of one stripe run concurrently. The sync runs at a
 * few MiB/s with small batches, so writes land on both sides of the
 * rebuilt/unrebuilt boundary (recovery_offset) and across it. Each runs on
 * memory members and on files (ext4 /tmp: member I/O through io_uring, as
 * the daemon does it). Fixed seeds. */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "test_engine_common.h"

#define MB       (1u << 20)
#define NWRITERS 3
#define MAXLEN   (96u * 1024)

struct cfg {
	const char *name;
	int level;
	const char *layout;
	int nd;
	uint32_t chunk_kib;
	bool files; /* also on file members (bounded time: two of them) */
};

static const struct cfg cfgs[] = {
    {"raid5", 5, "left-symmetric", 4, 16, false},
    {"raid6", 6, "left-symmetric", 5, 16, true},
    {"raid10f2", 10, "f2", 4, 16, true},
    {"raid10o2", 10, "o2", 4, 16, false},
    {"raid1", 1, NULL, 3, 0, false},
};

/* Range lock: a writer holds [lo, hi) of the array while it writes it and
 * updates the shadow, so overlapping writes reach both in the same order. */
struct shared {
	struct uraid_array *a;
	uint8_t *shadow;
	uint64_t size;
	uint64_t wsize; /* writers stay in [0, wsize) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t lo[NWRITERS], hi[NWRITERS];
	bool busy[NWRITERS];
	int stop;
	uint64_t seed;
	int errors;
	uint64_t writes;
};

static void range_lock(struct shared *s, int t, uint64_t lo, uint64_t hi)
{
	pthread_mutex_lock(&s->mu);
	for (;;) {
		bool clash = false;
		for (int i = 0; i < NWRITERS; i++)
			clash |= i != t && s->busy[i] && s->lo[i] < hi && lo < s->hi[i];
		if (!clash)
			break;
		pthread_cond_wait(&s->cv, &s->mu);
	}
	s->lo[t] = lo;
	s->hi[t] = hi;
	s->busy[t] = true;
	pthread_mutex_unlock(&s->mu);
}

static void range_unlock(struct shared *s, int t)
{
	pthread_mutex_lock(&s->mu);
	s->busy[t] = false;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

struct writer {
	struct shared *s;
	int t;
};

static void *writer(void *arg)
{
	struct writer *w = arg;
	struct shared *s = w->s;
	uint64_t rs = s->seed * 7919 + (uint64_t)w->t;
	uint8_t *buf = malloc(MAXLEN);
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		uint64_t r = t_rand(&rs);
		/* mostly small writes (read-modify-write, partial stripes),
		 * some larger ones spanning chunks and stripes */
		uint64_t len = (r % 4 ? 1 + r / 4 % 16 : 1 + r / 4 % (MAXLEN / 512)) * 512;
		uint64_t off = t_rand(&rs) % (s->wsize / 512 - len / 512 + 1) * 512;
		t_fill(&rs, buf, len);
		range_lock(s, w->t, off, off + len);
		int rc = uraid_write(s->a, buf, len, off);
		if (rc == 0)
			memcpy(s->shadow + off, buf, len);
		range_unlock(s, w->t);
		if (rc < 0) {
			__atomic_add_fetch(&s->errors, 1, __ATOMIC_RELAXED);
			break;
		}
		__atomic_add_fetch(&s->writes, 1, __ATOMIC_RELAXED);
	}
	free(buf);
	return NULL;
}

/* The resync starts at assembly, at the default speed, before a speed
 * limit could be set: that array has no sync thread and this one drives it
 * in small steps instead (the same batches, taken with the same lock). */
static void *stepper(void *arg)
{
	struct shared *s = arg;
	int rc;
	while ((rc = uraid_sync_step(s->a, 128)) > 0) {
		struct timespec ts = {0, 2 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (rc < 0)
		__atomic_add_fetch(&s->errors, 1, __ATOMIC_RELAXED);
	return NULL;
}

enum mode { REBUILD, RESYNC, REPLACE };
static const char *const mode_name[] = {"rebuild", "resync", "replace"};

/* Disks: te_disk memory members, or (g_dir set) files in g_dir that the
 * array opens itself; d->mem is then the test's own handle on the file. */
static char g_dir[20];

static void disk_open(struct te_disk *d, int i)
{
	char nm[8];
	snprintf(nm, sizeof(nm), "d%d", i % 100);
	if (!g_dir[0]) {
		te_disk_open(d, nm, 3 * MB);
		return;
	}
	char err[256];
	snprintf(d->name, sizeof(d->name), "%s/%s", g_dir, nm);
	d->fault = NULL;
	if (member_open_file(d->name, MEMBER_CREATE, 3 * MB, &d->mem, err, sizeof(err)) < 0)
		abort();
}

static struct member *disk_member(struct te_disk *d)
{
	if (!g_dir[0])
		return te_borrow(d);
	struct member *m;
	char err[256];
	if (member_open_file(d->name, 0, 0, &m, err, sizeof(err)) < 0)
		abort();
	return m;
}

static void disk_close(struct te_disk *d)
{
	if (!g_dir[0]) {
		te_disk_close(d);
		return;
	}
	member_close(d->mem);
	unlink(d->name);
}

/* The array runs its own sync thread unless flags say otherwise. */
static int open_array(struct te_disk *d, int n, const struct uraid_create_opts *o, unsigned flags,
                      struct uraid_array **a)
{
	struct member *mm[TE_MAX];
	char err[512], warn[512];
	for (int i = 0; i < n; i++)
		mm[i] = disk_member(&d[i]);
	int rc = o ? uraid_create_members(o, mm, n, flags, a, err, sizeof(err))
	           : uraid_assemble_members(mm, n, flags, a, err, sizeof(err), warn, sizeof(warn));
	if (rc < 0)
		fprintf(stderr, "open: %s\n", err);
	return rc;
}

static bool is_mirror(int level)
{
	return level == URAID_LEVEL_RAID1 || level == URAID_LEVEL_RAID10;
}

/* Whether member sector msec of `role` holds the first copy (copy 0) of its
 * logical sector, which a mirror resync copies to the others. */
static bool first_copy(const struct uraid_status *st, int role, uint64_t msec)
{
	struct layout_geometry g;
	memset(&g, 0, sizeof(g));
	g.level = st->level;
	g.layout = st->layout;
	g.chunk_sectors = st->chunk_sectors;
	g.raid_disks = st->raid_disks;
	g.dev_sectors = st->dev_sectors;
	const struct layout_ops *ops = layout_ops_for(g.level);
	uint64_t lsec, l;
	struct layout_loc loc;
	if (ops->unmap(&g, role, msec, &lsec) != LAYOUT_DATA || ops->map(&g, lsec, 0, &loc, &l) < 0)
		return false;
	return loc.role == role && loc.sector == msec;
}

/* Overwrite n random 4 KiB pages of disk `role`'s data area (data offset
 * from its 1.2 superblock: u64 at byte 128 of sector 8). Mirrors: only
 * pages that do not hold a first copy, so the data stays the shadow's. */
static void scribble(struct te_disk *d, int role, const struct uraid_status *st, int n,
                     uint64_t *rs)
{
	uint8_t sb[512], junk[4096];
	CHECK(member_read(d->mem, sb, sizeof(sb), 8 * 512) == 0);
	uint64_t doff = 0;
	for (int i = 7; i >= 0; i--)
		doff = doff << 8 | sb[128 + i];
	for (int i = 0; i < n; i++) {
		uint64_t page = t_rand(rs) % (st->dev_sectors / 8);
		if (is_mirror(st->level) && first_copy(st, role, page * 8))
			continue;
		t_fill(rs, junk, sizeof(junk));
		CHECK(member_write(d->mem, junk, sizeof(junk), (doff + page * 8) * 512, 0) == 0);
	}
}

static bool one_run(const struct cfg *c, enum mode mode, uint64_t seed)
{
	int nd = c->nd, fails0 = t_failures;
	struct te_disk d[TE_MAX];
	for (int i = 0; i <= nd; i++)
		disk_open(&d[i], i);
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = c->level;
	o.raid_devices = nd;
	o.chunk_sectors = c->chunk_kib * 2;
	o.assume_clean = true; /* zeros everywhere: consistent */
	if (c->layout) {
		layout_parse(c->level, c->layout, &o.layout);
		o.layout_set = true;
	}
	struct uraid_array *a = NULL;
	char err[256];
	CHECK(open_array(d, nd, &o, mode == RESYNC ? URAID_NO_SYNC_THREAD : 0, &a) == 0);
	if (!a)
		return false;
	struct shared s;
	memset(&s, 0, sizeof(s));
	s.size = uraid_size(a);
	s.wsize = s.size / 4 * 3 / 512 * 512;
	s.shadow = malloc(s.size);
	s.seed = seed;
	uint64_t rs = seed;
	t_fill(&rs, s.shadow, s.size);
	CHECK(uraid_write(a, s.shadow, s.size, 0) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	int victim = (int)(seed % (uint64_t)nd);
	char vname[16];
	snprintf(vname, sizeof(vname), "#%d", victim);
	if (mode == RESYNC) {
		/* Unclean stop, then stale parity / mirror copies: random pages
		 * of the members (mirrors: never a first copy) change behind
		 * the array's back, as an interrupted write would leave them. For
		 * parity levels any member may be hit; the shadow is re-read
		 * below (a resync never changes data there). */
		uraid_drop(a);
		a = NULL;
		for (int i = 0; i < nd; i++)
			scribble(&d[i], i, &st, 16, &rs);
		CHECK(open_array(d, nd, NULL, URAID_NO_SYNC_THREAD, &a) == 0);
		if (!a)
			goto out;
		uraid_status(a, &st);
		CHECK(st.sync_action == URAID_SYNC_RESYNC);
		if (!is_mirror(c->level))
			CHECK(uraid_read(a, s.shadow, s.size, 0) == 0);
	}
	/* Slow enough that the writers meet the boundary many times. */
	uraid_sync_speed(a, 8192, 8192);
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	s.a = a;
	pthread_t th[NWRITERS];
	struct writer w[NWRITERS];
	for (int t = 0; t < NWRITERS; t++) {
		w[t].s = &s;
		w[t].t = t;
		pthread_create(&th[t], NULL, writer, &w[t]);
	}
	/* The writers are under way before the sync starts, so it runs in the
	 * small steps of a busy array from its first step: an idle start
	 * could rebuild these small members in one or two big batches before
	 * a loaded machine ran a writer at all (seen once in CI: 0 writes). */
	for (int i = 0; i < 5000 && __atomic_load_n(&s.writes, __ATOMIC_RELAXED) < 2; i++) {
		struct timespec ts = {0, 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	uint64_t writes0 = __atomic_load_n(&s.writes, __ATOMIC_RELAXED);
	if (mode == REBUILD) {
		CHECK(uraid_fail(a, vname, err, sizeof(err)) == 0);
		CHECK(uraid_add_member(a, disk_member(&d[nd]), err, sizeof(err)) == 0);
	} else if (mode == REPLACE) {
		CHECKF(uraid_replace_member(a, vname, disk_member(&d[nd]), err, sizeof(err)) == 0,
		       "%s", err);
	}
	pthread_t step_th;
	if (mode == RESYNC)
		pthread_create(&step_th, NULL, stepper, &s);
	/* Writers run until the sync is done (bounded: 20 s). */
	bool degraded_seen = false;
	for (int i = 0; i < 2000; i++) {
		uraid_status(a, &st);
		degraded_seen |= st.degraded != 0;
		if (st.sync_action == URAID_SYNC_IDLE)
			break;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
	for (int t = 0; t < NWRITERS; t++)
		pthread_join(th[t], NULL);
	if (mode == RESYNC)
		pthread_join(step_th, NULL);
	uraid_status(a, &st);
	CHECKF(st.sync_action == URAID_SYNC_IDLE, "%s %s seed %llu: sync still running", c->name,
	       mode_name[mode], (unsigned long long)seed);
	CHECK(s.errors == 0);
	CHECKF(s.writes - writes0 > 20, "only %llu writes during the sync",
	       (unsigned long long)(s.writes - writes0));
	CHECK(st.degraded == 0 && st.working == nd);
	if (mode == REPLACE) {
		CHECKF(!degraded_seen, "%s: array degraded during the replace", c->name);
		CHECK(strcmp(st.members[victim].name, d[nd].name) == 0);
	}
	CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
	CHECK(uraid_sync_wait(a) == 0);
	uraid_status(a, &st);
	CHECKF(st.mismatch_cnt == 0, "%s %s seed %llu: mismatch_cnt %llu", c->name, mode_name[mode],
	       (unsigned long long)seed, (unsigned long long)st.mismatch_cnt);
	CHECKF(te_verify(a, s.shadow, s.size) == 0, "%s %s seed %llu: data differs", c->name,
	       mode_name[mode], (unsigned long long)seed);
	pthread_mutex_destroy(&s.mu);
	pthread_cond_destroy(&s.cv);
	/* Every member in a slot against the model, read from the storage. */
	CHECK(uraid_stop(a) == 0);
	a = NULL;
	for (int r = 0; r < nd; r++) {
		int i = 0;
		while (i <= nd && strcmp(d[i].name, st.members[r].name))
			i++;
		CHECKF(i <= nd, "%s: slot %d holds %s", c->name, r, st.members[r].name);
		if (i > nd)
			continue;
		char what[64];
		snprintf(what, sizeof(what), "%s %s seed %llu%s", c->name, mode_name[mode],
		         (unsigned long long)seed, i == nd ? " (rebuilt)" : "");
		uint64_t bad =
		    te_member_diff(d[i].mem, te_data_offset(d[i].mem), &st, s.shadow, r, what);
		CHECKF(bad == 0, "%s: slot %d (%s): %llu pages differ from the model", what, r,
		       d[i].name, (unsigned long long)bad);
	}
out:
	if (a)
		uraid_stop(a);
	free(s.shadow);
	for (int i = 0; i <= nd; i++)
		disk_close(&d[i]);
	return t_failures == fails0;
}

/* Seeds 1..N; N = 1 in the suite (bounded time), URAID_STRESS_SEEDS=N for
 * longer hunts (e.g. the optimised build/rel/tests binary). */
static void run_mode(enum mode mode)
{
	const char *e = getenv("URAID_STRESS_SEEDS");
	uint64_t nseeds = e ? strtoull(e, NULL, 10) : 1;
	for (size_t c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++)
		for (uint64_t seed = 1; seed <= nseeds && (cfgs[c].files || !g_dir[0]); seed++)
			if (!one_run(&cfgs[c], mode, seed))
				fprintf(stderr, "%s %s seed %llu failed\n", cfgs[c].name,
				        mode_name[mode], (unsigned long long)seed);
}

static void run_files(enum mode mode)
{
	snprintf(g_dir, sizeof(g_dir), "/tmp/urs.XXXXXX");
	if (!mkdtemp(g_dir)) {
		CHECK(!"mkdtemp");
		g_dir[0] = 0;
		return;
	}
	run_mode(mode);
	rmdir(g_dir);
	g_dir[0] = 0;
}

static void rebuild_races_writes(void)
{
	run_mode(REBUILD);
}

static void resync_races_writes(void)
{
	run_mode(RESYNC);
}

static void replace_races_writes(void)
{
	run_mode(REPLACE);
}

static void rebuild_races_writes_files(void)
{
	run_files(REBUILD);
}

static void resync_races_writes_files(void)
{
	run_files(RESYNC);
}

static void replace_races_writes_files(void)
{
	run_files(REPLACE);
}

TEST_MAIN(T(rebuild_races_writes), T(resync_races_writes), T(replace_races_writes),
          T(rebuild_races_writes_files), T(resync_races_writes_files),
          T(replace_races_writes_files))
