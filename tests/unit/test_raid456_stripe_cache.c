/* Stripe cache: member I/O counted by the test's own member wrapper (not
 * the engine's counters), contents checked against a shadow copy and, after
 * a flush, against a second read-only assembly of the members (which has no
 * cache), parity checked by XOR of the members and by `check`. Fixed seeds. */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "meta/md_super.h"
#include "test_engine_common.h"
#include "sim/member_fault.h"

/* A borrowed disk that counts the requests reaching it. */
struct counting {
	struct member m;
	struct member *inner;
	uint64_t reads, writes;
};
static ssize_t cnt_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct counting *c = (struct counting *)m;
	__atomic_add_fetch(&c->reads, 1, __ATOMIC_RELAXED);
	return c->inner->ops->pread(c->inner, buf, len, off);
}
static ssize_t cnt_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                          unsigned flags)
{
	struct counting *c = (struct counting *)m;
	__atomic_add_fetch(&c->writes, 1, __ATOMIC_RELAXED);
	return c->inner->ops->pwrite(c->inner, buf, len, off, flags);
}
static int cnt_flush(struct member *m)
{
	struct counting *c = (struct counting *)m;
	return c->inner->ops->flush ? c->inner->ops->flush(c->inner) : 0;
}
static void cnt_close(struct member *m)
{
	(void)m; /* owned by the test */
}
static const struct member_ops cnt_ops = {
    .kind = "counting",
    .pread = cnt_pread,
    .pwrite = cnt_pwrite,
    .flush = cnt_flush,
    .fd = te_fd,
    .close = cnt_close,
};

struct rig {
	int n;
	struct te_disk d[TE_MAX];
	struct counting c[TE_MAX];
	struct uraid_array *a;
};

static uint64_t rig_reads(struct rig *r)
{
	uint64_t n = 0;
	for (int i = 0; i < r->n; i++)
		n += __atomic_load_n(&r->c[i].reads, __ATOMIC_RELAXED);
	return n;
}

static void rig_zero(struct rig *r)
{
	for (int i = 0; i < r->n; i++)
		r->c[i].reads = r->c[i].writes = 0;
}

/* level, members, chunk (sectors), layout name or NULL, flags for create. */
static int rig_open(struct rig *r, int level, int n, uint32_t chunk, const char *layout,
                    unsigned flags)
{
	memset(r, 0, sizeof(*r));
	r->n = n;
	struct member *mm[TE_MAX];
	for (int i = 0; i < n; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "s%d", i);
		te_disk_open(&r->d[i], nm, 2u << 20);
		r->c[i].m.ops = &cnt_ops;
		snprintf(r->c[i].m.name, sizeof(r->c[i].m.name), "%s", nm);
		r->c[i].m.size = r->d[i].mem->size;
		r->c[i].m.logical_block = 512;
		r->c[i].inner = r->d[i].fault;
		mm[i] = &r->c[i].m;
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = level;
	o.raid_devices = n;
	o.chunk_sectors = chunk;
	o.assume_clean = true; /* zeroed members: parity of zeros is zero */
	if (layout) {
		CHECK(layout_parse(level, layout, &o.layout) == 0);
		o.layout_set = true;
	}
	char err[256];
	int rc = uraid_create_members(&o, mm, n, flags, &r->a, err, sizeof(err));
	CHECKF(rc == 0, "create: %s", err);
	return rc;
}

static void rig_close(struct rig *r)
{
	if (r->a)
		CHECK(uraid_stop(r->a) == 0);
	for (int i = 0; i < r->n; i++)
		te_disk_close(&r->d[i]);
}

/* What the members hold, read by a second, read-only assembly of the raw
 * disks (no cache, no faults), equals the shadow. */
static int members_equal(struct rig *r, const uint8_t *shadow, uint64_t size)
{
	struct member *mm[TE_MAX];
	for (int i = 0; i < r->n; i++)
		mm[i] = te_borrow_raw(&r->d[i]);
	struct uraid_array *ro;
	char err[256], warn[256];
	if (uraid_assemble_members(mm, r->n, URAID_RDONLY | URAID_NO_SYNC_THREAD, &ro, err,
	                           sizeof(err), warn, sizeof(warn)) < 0) {
		fprintf(stderr, "ro assembly: %s\n", err);
		return 0;
	}
	int ok = te_verify(ro, shadow, size) == 0;
	uraid_stop(ro);
	return ok;
}

static uint64_t check_mismatches(struct uraid_array *a)
{
	char err[256];
	CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
	CHECK(te_sync_all(a) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	return st.mismatch_cnt;
}

/* Sequential 4 KiB writes filling whole stripes: no member read at all
 * with the cache; the same writes without it do read (the count is able
 * to see reads). */
static void seq4k_fills_stripes_without_reads(void)
{
	static const int levels[] = {4, 5, 6};
	for (int li = 0; li < 3; li++) {
		for (int cache = 0; cache < 2; cache++) {
			struct rig r;
			if (rig_open(&r, levels[li], 5, 32, NULL, URAID_NO_SYNC_THREAD) < 0) {
				rig_close(&r);
				continue;
			}
			CHECK(uraid_set_stripe_cache(r.a, cache ? 256 : 0) == 0);
			uint64_t size = uraid_size(r.a), rs = 77 + (uint64_t)li;
			uint64_t width = (uint64_t)(5 - (levels[li] == 6 ? 2 : 1)) * 32 * 512;
			uint64_t len = 6 * width; /* six whole stripes */
			uint8_t *shadow = calloc(1, size);
			t_fill(&rs, shadow, len);
			rig_zero(&r);
			for (uint64_t off = 0; off < len; off += 4096)
				CHECK(uraid_write(r.a, shadow + off, 4096, off) == 0);
			CHECK(uraid_flush(r.a) == 0);
			uint64_t reads = rig_reads(&r);
			if (cache)
				CHECKF(reads == 0, "raid%d: %llu member reads with the cache",
				       levels[li], (unsigned long long)reads);
			else
				CHECKF(reads > 0, "raid%d: no member reads without the cache",
				       levels[li]);
			struct uraid_io_stats io;
			CHECK(uraid_io_stats(r.a, &io) == 0);
			if (cache) {
				CHECK(io.sc_full_runs > 0 && io.sc_rmw_runs + io.sc_rcw_runs == 0);
				CHECK(io.sc_reads_writeout == 0 && io.sc_reads_direct > 0);
				CHECK_EQ_U64(io.sc_write_sectors, len / 512);
				CHECK(io.sc_used == 0);
			}
			CHECK(members_equal(&r, shadow, size));
			CHECK(check_mismatches(r.a) == 0);
			free(shadow);
			rig_close(&r);
		}
	}
}

/* Random writes/reads/flushes with a small cache (evictions), resizes, a
 * member failing (raid6: two, the second later, so reads need Q): reads
 * always equal the shadow; after each flush so do the members; check finds
 * nothing at the end. */
struct pcfg {
	int level, n;
	uint32_t chunk;
	const char *layout;
	uint64_t seed;
};

static void property_run(const struct pcfg *c)
{
	struct rig r;
	if (rig_open(&r, c->level, c->n, c->chunk, c->layout, URAID_NO_SYNC_THREAD) < 0) {
		rig_close(&r);
		return;
	}
	uint64_t rs = c->seed, size = uraid_size(r.a);
	uint8_t *shadow = calloc(1, size), *buf = malloc(size);
	static const unsigned sizes[] = {1, 4, 16, 256};
	CHECK(uraid_set_stripe_cache(r.a, 16) == 0);
	bool failed = false;
	int flushes = 0, nfail = 0, victim = -1, maxfail = c->level == 6 ? 2 : 1;
	for (int op = 0; op < 1500; op++) {
		uint64_t x = t_rand(&rs) % 100, sec = size / 512;
		if (x < 50) {
			uint64_t n = 1 + t_rand(&rs) % (t_rand(&rs) % 4 ? 16 : 400);
			n = n > sec ? sec : n;
			uint64_t s = t_rand(&rs) % (sec - n + 1);
			if (t_rand(&rs) % 3 == 0) /* sequential runs fill stripes */
				s = (s / 8) * 8;
			t_fill(&rs, shadow + s * 512, n * 512);
			int rc = uraid_write(r.a, shadow + s * 512, n * 512, s * 512);
			CHECKF(rc == 0, "op %d write: %d", op, rc);
		} else if (x < 85) {
			uint64_t n = 1 + t_rand(&rs) % 300;
			n = n > sec ? sec : n;
			uint64_t s = t_rand(&rs) % (sec - n + 1);
			int rc = uraid_read(r.a, buf, n * 512, s * 512);
			CHECKF(rc == 0 && !memcmp(buf, shadow + s * 512, n * 512),
			       "raid%d op %d: read %llu+%llu differs (%d)", c->level, op,
			       (unsigned long long)s, (unsigned long long)n, rc);
		} else if (x < 92) {
			CHECK(uraid_flush(r.a) == 0);
			if (!failed)
				CHECKF(members_equal(&r, shadow, size),
				       "raid%d op %d: members after flush", c->level, op);
			flushes++;
		} else if (x < 96) {
			CHECK(uraid_set_stripe_cache(r.a, sizes[t_rand(&rs) % 4]) == 0);
		} else if (x < 97 && nfail < maxfail && op > 1000 + 150 * nfail) {
			/* A member dies while the cache holds writes: the next
			 * write-out marks it faulty and carries on degraded. */
			struct member_fault_rule fr = {.op = MEMBER_OP_WRITE, .error = EIO};
			int v;
			do
				v = (int)(t_rand(&rs) % (uint64_t)c->n);
			while (v == victim);
			member_fault_add(r.d[v].fault, &fr);
			victim = v;
			nfail++;
			failed = true;
		}
	}
	CHECK(uraid_flush(r.a) == 0);
	CHECKF(te_verify(r.a, shadow, size) == 0, "raid%d: final read", c->level);
	struct uraid_status st;
	uraid_status(r.a, &st);
	CHECK(st.stripe_cache_size > 0);
	CHECKF(nfail == maxfail && st.failed == nfail, "raid%d: %d members failed, %d faulty",
	       c->level, nfail, st.failed);
	if (!failed) {
		CHECK(members_equal(&r, shadow, size));
		CHECK(check_mismatches(r.a) == 0);
	}
	struct uraid_io_stats io;
	uraid_io_stats(r.a, &io);
	CHECK(io.sc_evicted > 0);
	fprintf(stderr,
	        "raid%d/%d: %d flushes, runs full %llu rmw %llu rcw %llu, evicted %llu, read hits "
	        "%llu\n",
	        c->level, c->n, flushes, (unsigned long long)io.sc_full_runs,
	        (unsigned long long)io.sc_rmw_runs, (unsigned long long)io.sc_rcw_runs,
	        (unsigned long long)io.sc_evicted, (unsigned long long)io.sc_read_hit_sectors);
	free(shadow);
	free(buf);
	for (int i = 0; i < c->n; i++)
		member_fault_clear(r.d[i].fault);
	rig_close(&r);
}

static void property_raid5(void)
{
	static const struct pcfg c = {5, 4, 16, "left-symmetric", 0x5c01};
	property_run(&c);
}
static void property_raid5_wide(void)
{
	static const struct pcfg c = {5, 7, 8, "right-asymmetric", 0x5c02};
	property_run(&c);
}
static void property_raid4(void)
{
	static const struct pcfg c = {4, 4, 32, NULL, 0x5c03};
	property_run(&c);
}
static void property_raid6(void)
{
	static const struct pcfg c = {6, 6, 16, "left-symmetric", 0x5c04};
	property_run(&c);
}
static void property_raid6_ls6(void)
{
	static const struct pcfg c = {6, 5, 8, "left-symmetric-6", 0x5c05};
	property_run(&c);
}

/* Threads writing interleaved sectors of the same stripes, with readers:
 * afterwards the array and the members equal the shadow and check finds 0. */
#define NWRITERS 4
struct wargs {
	struct uraid_array *a;
	uint8_t *shadow;
	uint64_t span, seed;
	int id;
	int errors;
};

static void *writer(void *p)
{
	struct wargs *w = p;
	uint64_t rs = w->seed;
	for (int i = 0; i < 400; i++) {
		/* Sector s belongs to writer s % NWRITERS: runs of up to 4 of
		 * one's sectors, written one by one. */
		uint64_t s = (t_rand(&rs) % (w->span / NWRITERS)) * NWRITERS + (uint64_t)w->id;
		t_fill(&rs, w->shadow + s * 512, 512);
		if (uraid_write(w->a, w->shadow + s * 512, 512, s * 512) < 0)
			w->errors++;
		if (i % 50 == 0 && uraid_flush(w->a) < 0)
			w->errors++;
	}
	return NULL;
}

static void *reader(void *p)
{
	struct wargs *w = p;
	uint8_t *b = malloc(64 * 512);
	uint64_t rs = w->seed;
	for (int i = 0; i < 300; i++) {
		uint64_t n = 1 + t_rand(&rs) % 64, s = t_rand(&rs) % (w->span - n);
		if (uraid_read(w->a, b, n * 512, s * 512) < 0)
			w->errors++;
	}
	free(b);
	return NULL;
}

static void concurrent_writers_same_stripes(void)
{
	static const int levels[] = {5, 6};
	for (int li = 0; li < 2; li++) {
		struct rig r;
		/* With the idle thread (no URAID_NO_SYNC_THREAD): write-outs
		 * from it race the writers too. */
		if (rig_open(&r, levels[li], 5, 16, NULL, 0) < 0) {
			rig_close(&r);
			continue;
		}
		CHECK(uraid_set_stripe_cache(r.a, 8) == 0);
		uint64_t size = uraid_size(r.a);
		uint8_t *shadow = calloc(1, size);
		uint64_t span = 3 * (uint64_t)(5 - (levels[li] == 6 ? 2 : 1)) * 16; /* 3 stripes */
		pthread_t t[NWRITERS + 1];
		struct wargs w[NWRITERS + 1];
		for (int i = 0; i <= NWRITERS; i++) {
			w[i] = (struct wargs){r.a, shadow, span, 0xc0 + (uint64_t)i, i, 0};
			pthread_create(&t[i], NULL, i < NWRITERS ? writer : reader, &w[i]);
		}
		for (int i = 0; i <= NWRITERS; i++) {
			pthread_join(t[i], NULL);
			CHECK(w[i].errors == 0);
		}
		CHECK(te_verify(r.a, shadow, size) == 0);
		CHECK(uraid_flush(r.a) == 0);
		CHECK(members_equal(&r, shadow, size));
		CHECK(check_mismatches(r.a) == 0);
		free(shadow);
		rig_close(&r);
	}
}

/* Resizes (two threads at once, through 0) while writers write and the
 * idle thread writes out: nothing lost, parity right. */
static void *resizer(void *p)
{
	struct wargs *w = p;
	static const unsigned sizes[] = {0, 8, 256, 3, 64};
	uint64_t rs = w->seed;
	for (int i = 0; i < 60; i++)
		if (uraid_set_stripe_cache(w->a, sizes[t_rand(&rs) % 5]) < 0)
			w->errors++;
	return NULL;
}

static void resize_while_writing(void)
{
	struct rig r;
	if (rig_open(&r, 5, 4, 16, NULL, 0) < 0) {
		rig_close(&r);
		return;
	}
	uint64_t size = uraid_size(r.a);
	uint8_t *shadow = calloc(1, size);
	uint64_t span = 8 * 3 * 16; /* 8 stripes */
	pthread_t t[NWRITERS + 2];
	struct wargs w[NWRITERS + 2];
	for (int i = 0; i < NWRITERS + 2; i++) {
		w[i] = (struct wargs){r.a, shadow, span, 0xe0 + (uint64_t)i, i, 0};
		pthread_create(&t[i], NULL, i < NWRITERS ? writer : resizer, &w[i]);
	}
	for (int i = 0; i < NWRITERS + 2; i++) {
		pthread_join(t[i], NULL);
		CHECK(w[i].errors == 0);
	}
	CHECK(te_verify(r.a, shadow, size) == 0);
	CHECK(uraid_flush(r.a) == 0);
	CHECK(members_equal(&r, shadow, size));
	CHECK(check_mismatches(r.a) == 0);
	free(shadow);
	rig_close(&r);
}

/* Without a flush, the idle period writes the cache out. */
static void idle_writeout(void)
{
	struct rig r;
	if (rig_open(&r, 5, 4, 32, NULL, 0) < 0) {
		rig_close(&r);
		return;
	}
	CHECK(uraid_set_stripe_cache(r.a, 256) == 0);
	uint64_t size = uraid_size(r.a), rs = 9;
	uint8_t *shadow = calloc(1, size);
	t_fill(&rs, shadow + 8192, 4096);
	CHECK(uraid_write(r.a, shadow + 8192, 4096, 8192) == 0);
	struct uraid_io_stats io;
	uraid_io_stats(r.a, &io);
	CHECK(io.sc_used == 1);
	int ok = 0;
	for (int i = 0; i < 100 && !ok; i++) { /* up to 2 s; expected ~50-70 ms */
		usleep(20000);
		uraid_io_stats(r.a, &io);
		ok = io.sc_used == 0;
	}
	CHECKF(ok, "the cache still holds %u heads", io.sc_used);
	CHECK(io.sc_idle == 1);
	CHECK(members_equal(&r, shadow, size));
	free(shadow);
	rig_close(&r);
}

/* Lost at a crash (drop), as a disk's volatile cache; durable after flush. */
static void drop_loses_unflushed(void)
{
	struct rig r;
	if (rig_open(&r, 5, 3, 16, NULL, URAID_NO_SYNC_THREAD) < 0) {
		rig_close(&r);
		return;
	}
	CHECK(uraid_set_stripe_cache(r.a, 64) == 0);
	uint64_t size = uraid_size(r.a), rs = 11;
	uint8_t *shadow = calloc(1, size), *b = malloc(4096);
	t_fill(&rs, shadow, 4096);
	CHECK(uraid_write(r.a, shadow, 4096, 0) == 0);
	CHECK(uraid_flush(r.a) == 0);
	t_fill(&rs, b, 4096);
	CHECK(uraid_write(r.a, b, 4096, 0) == 0);
	uint8_t back[4096];
	CHECK(uraid_read(r.a, back, 4096, 0) == 0 && !memcmp(back, b, 4096));
	uraid_drop(r.a);
	r.a = NULL;
	CHECK(members_equal(&r, shadow, size)); /* the flushed version */
	free(shadow);
	free(b);
	rig_close(&r);
}

/* Check, member failure, recovery onto a spare and more writes, all while
 * the cache holds writes: reads stay right throughout, and after a flush
 * the members (new one included) equal the shadow and check finds 0. */
static void sync_with_cached_writes(void)
{
	static const int levels[] = {5, 6};
	for (int li = 0; li < 2; li++) {
		struct rig r;
		if (rig_open(&r, levels[li], 5, 16, NULL, URAID_NO_SYNC_THREAD) < 0) {
			rig_close(&r);
			continue;
		}
		CHECK(uraid_set_stripe_cache(r.a, 64) == 0);
		uint64_t size = uraid_size(r.a), rs = 0x5a0 + (uint64_t)li;
		uint8_t *shadow = calloc(1, size), *buf = malloc(size);
		struct te_disk spare;
		te_disk_open(&spare, "spare", 2u << 20);
		char err[256];
		for (int phase = 0; phase < 4; phase++) {
			for (int i = 0; i < 40; i++) {
				uint64_t n = 1 + t_rand(&rs) % 24,
				         s = t_rand(&rs) % (size / 512 - n);
				t_fill(&rs, shadow + s * 512, n * 512);
				CHECK(uraid_write(r.a, shadow + s * 512, n * 512, s * 512) == 0);
			}
			struct uraid_io_stats io;
			uraid_io_stats(r.a, &io);
			CHECK(io.sc_used > 0); /* the steps below run with cached writes */
			if (phase == 0) {
				CHECK(check_mismatches(r.a) == 0);
			} else if (phase == 1) {
				CHECK(uraid_fail(r.a, "#2", err, sizeof(err)) == 0);
			} else if (phase == 2) {
				CHECK(uraid_add_member(r.a, te_borrow(&spare), err, sizeof(err)) ==
				      0);
				/* recovery a little at a time, writes in between */
				while (uraid_sync_step(r.a, 64) > 0) {
					uint64_t s = t_rand(&rs) % (size / 512 - 8);
					t_fill(&rs, shadow + s * 512, 8 * 512);
					CHECK(uraid_write(r.a, shadow + s * 512, 8 * 512,
					                  s * 512) == 0);
				}
			}
			CHECK(uraid_read(r.a, buf, size, 0) == 0 && !memcmp(buf, shadow, size));
		}
		struct uraid_status st;
		uraid_status(r.a, &st);
		CHECK(st.degraded == 0 && st.working == 5);
		CHECK(uraid_flush(r.a) == 0);
		CHECK(check_mismatches(r.a) == 0);
		/* the members as they are now: slot 2 is the spare */
		struct member *mm[TE_MAX];
		int k = 0;
		for (int i = 0; i < 5; i++)
			mm[k++] = te_borrow_raw(i == 2 ? &spare : &r.d[i]);
		struct uraid_array *ro;
		char warn[256];
		CHECK(uraid_assemble_members(mm, k, URAID_RDONLY | URAID_NO_SYNC_THREAD, &ro, err,
		                             sizeof(err), warn, sizeof(warn)) == 0);
		if (ro) {
			CHECK(te_verify(ro, shadow, size) == 0);
			uraid_stop(ro);
		}
		free(shadow);
		free(buf);
		rig_close(&r);
		te_disk_close(&spare);
	}
}

static void bad_input(void)
{
	struct rig r;
	if (rig_open(&r, 1, 2, 0, NULL, URAID_NO_SYNC_THREAD) == 0)
		CHECK(uraid_set_stripe_cache(r.a, 256) == -EINVAL);
	rig_close(&r);
	if (rig_open(&r, 5, 3, 16, NULL, URAID_NO_SYNC_THREAD) == 0) {
		CHECK(uraid_set_stripe_cache(r.a, URAID_STRIPE_CACHE_MAX + 1) == -EINVAL);
		CHECK(uraid_set_stripe_cache(r.a, URAID_STRIPE_CACHE_MAX) == 0);
		CHECK(uraid_set_stripe_cache(r.a, 0) == 0);
		struct uraid_status st;
		uraid_status(r.a, &st);
		CHECK(st.stripe_cache_size == 0);
	}
	rig_close(&r);
}

TEST_MAIN(T(seq4k_fills_stripes_without_reads), T(property_raid5), T(property_raid5_wide),
          T(property_raid4), T(property_raid6), T(property_raid6_ls6),
          T(concurrent_writers_same_stripes), T(sync_with_cached_writes), T(resize_while_writing),
          T(idle_writeout), T(drop_loses_unflushed), T(bad_input))
