/* Members in memory (tmpfs files, no O_DIRECT): the engine calls them
 * synchronously on the requesting thread, for every size on the fast path
 * (engine/core/util.c, eng_ioq_run), instead of through an io_uring queue.
 * The same random writes (sub-sector-row to several full stripes, aligned
 * and not) go to two arrays of the same geometry, one as the engine chooses
 * and one forced onto the queue (URAID_ENGINE_IO=ioq, the path real disks
 * take); afterwards each equals the shadow, every member's data area equals
 * an independent model of it (data where the layout puts it, P and Q
 * computed from the shadow), the two arrays' members are identical byte for
 * byte, and an md-style check finds 0 mismatches. Then several threads
 * write big and small pieces at once (disjoint regions, so the expected
 * contents are defined) and the same checks follow. RAID5 and RAID6. */
#include <pthread.h>
#include <unistd.h>

#include "test_engine_common.h"

#define MEMBER_BYTES (6u << 20)
#define CHUNK_SEC    (64 * 2) /* 64 KiB */
#define OPS          160
#define THREADS      4
#define MAX_IO       (1536u << 10)

struct arr {
	char dir[64], paths[TE_MAX][96];
	int n;
	struct uraid_array *a;
};

static int arr_create(struct arr *r, int level, int n, bool queued)
{
	snprintf(r->dir, sizeof(r->dir), "/dev/shm/uraid-sio-XXXXXX");
	if (!mkdtemp(r->dir))
		return -errno;
	const char *pp[TE_MAX];
	r->n = n;
	for (int i = 0; i < n; i++) {
		char *p = r->paths[i];
		size_t k = strlen(r->dir);
		memcpy(p, r->dir, k);
		snprintf(p + k, sizeof(r->paths[i]) - k, "/m%d", i);
		pp[i] = r->paths[i];
	}
	struct uraid_create_opts o = {0};
	o.level = level;
	o.raid_devices = n;
	o.chunk_sectors = CHUNK_SEC;
	o.assume_clean = true;
	o.member_bytes = MEMBER_BYTES;
	char err[256];
	/* Read when the array starts. */
	if (queued)
		setenv("URAID_ENGINE_IO", "ioq", 1);
	else
		unsetenv("URAID_ENGINE_IO");
	int rc = uraid_create(&o, pp, n, URAID_NO_SYNC_THREAD, &r->a, err, sizeof(err));
	unsetenv("URAID_ENGINE_IO");
	if (rc < 0)
		fprintf(stderr, "create: %s\n", err);
	return rc;
}

static void arr_remove(struct arr *r)
{
	for (int i = 0; i < r->n; i++)
		unlink(r->paths[i]);
	rmdir(r->dir);
}

/* One random write: its length (512 B .. MAX_IO, a quarter of them whole
 * stripes at a stripe boundary, some 4 KiB) and offset. */
static void pick(uint64_t *seed, uint64_t size, uint64_t width, uint64_t *off, uint64_t *len)
{
	unsigned kind = (unsigned)(t_rand(seed) % 4);
	if (kind == 0) {
		uint64_t ns = t_rand(seed) % 3 + 1;
		*len = ns * width;
		*off = t_rand(seed) % (size / width - ns + 1) * width;
		return;
	}
	*len = kind == 1 ? 4096 : (t_rand(seed) % (MAX_IO / 512) + 1) * 512;
	*off = t_rand(seed) % ((size - *len) / 512 + 1) * 512;
}

/* Every member's data area against the model; members of `other` (NULL:
 * none) identical to `r`'s. Returns the number of differences. */
static uint64_t check_members(struct arr *r, struct arr *other, const uint8_t *shadow)
{
	struct uraid_status st;
	uraid_status(r->a, &st);
	uint64_t bad = 0;
	char err[256];
	for (int i = 0; i < r->n; i++) {
		struct member *m, *o = NULL;
		if (member_open_file(r->paths[i], MEMBER_RDONLY, 0, &m, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s: %s\n", r->paths[i], err);
			return 1;
		}
		uint64_t doff = te_data_offset(m);
		/* Roles are in member order: created that way. */
		bad += te_member_diff(m, doff, &st, shadow, i, "model");
		if (other && member_open_file(other->paths[i], MEMBER_RDONLY, 0, &o, err,
		                              sizeof(err)) == 0) {
			uint64_t len = st.dev_sectors * 512;
			uint8_t *x = malloc(len), *y = malloc(len);
			if (!x || !y || member_read(m, x, len, doff * 512) < 0 ||
			    member_read(o, y, len, te_data_offset(o) * 512) < 0 ||
			    memcmp(x, y, len)) {
				fprintf(stderr, "member %d: the two paths' data areas differ\n", i);
				bad++;
			}
			free(x);
			free(y);
			member_close(o);
		} else if (other) {
			bad++;
		}
		member_close(m);
	}
	return bad;
}

static uint64_t check_parity(struct uraid_array *a)
{
	char err[256];
	struct uraid_status st;
	if (uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) < 0 || te_sync_all(a) < 0)
		return UINT64_MAX;
	uraid_status(a, &st);
	return st.mismatch_cnt;
}

static void same_writes(int level, int n, uint64_t seed)
{
	struct arr fast, queued;
	int rc1 = arr_create(&fast, level, n, false);
	int rc2 = arr_create(&queued, level, n, true);
	CHECKF(rc1 == 0 && rc2 == 0, "create level %d: %d %d", level, rc1, rc2);
	if (rc1 < 0 || rc2 < 0)
		goto out;
	uint64_t size = uraid_size(fast.a);
	CHECK(size == uraid_size(queued.a));
	uint64_t width = (uint64_t)(n - (level == 6 ? 2 : 1)) * CHUNK_SEC * 512;
	uint8_t *shadow = calloc(1, size), *buf = malloc(MAX_IO > 3 * width ? MAX_IO : 3 * width);
	uint64_t fs = seed;
	t_fill(&fs, shadow, size);
	CHECK(uraid_write(fast.a, shadow, size, 0) == 0);
	CHECK(uraid_write(queued.a, shadow, size, 0) == 0);
	int errors = 0;
	for (int i = 0; i < OPS; i++) {
		uint64_t off, len;
		pick(&fs, size, width, &off, &len);
		t_fill(&fs, buf, len);
		errors += uraid_write(fast.a, buf, len, off) < 0;
		errors += uraid_write(queued.a, buf, len, off) < 0;
		memcpy(shadow + off, buf, len);
	}
	CHECKF(errors == 0, "level %d: %d writes failed", level, errors);
	CHECK(te_verify(fast.a, shadow, size) == 0);
	CHECK(te_verify(queued.a, shadow, size) == 0);
	CHECK(uraid_flush(fast.a) == 0 && uraid_flush(queued.a) == 0);
	uint64_t bad = check_members(&fast, &queued, shadow);
	CHECKF(bad == 0, "level %d: %llu member differences", level, (unsigned long long)bad);
	CHECK_EQ_U64(check_parity(fast.a), 0);
	CHECK_EQ_U64(check_parity(queued.a), 0);
	free(shadow);
	free(buf);
out:
	if (fast.a)
		CHECK(uraid_stop(fast.a) == 0);
	if (queued.a)
		CHECK(uraid_stop(queued.a) == 0);
	arr_remove(&fast);
	arr_remove(&queued);
}

struct worker {
	struct uraid_array *a;
	uint8_t *shadow; /* this worker's region of it */
	uint64_t base, size, width, seed;
	int errors;
	pthread_t t;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t *buf = malloc(MAX_IO > 3 * w->width ? MAX_IO : 3 * w->width);
	for (int i = 0; i < OPS / 2 && buf; i++) {
		uint64_t off, len;
		pick(&w->seed, w->size, w->width, &off, &len);
		t_fill(&w->seed, buf, len);
		w->errors += uraid_write(w->a, buf, len, w->base + off) < 0;
		memcpy(w->shadow + off, buf, len);
		if (i % 8 == 7) { /* a read of what was just written, as the shadow has it */
			w->errors += uraid_read(w->a, buf, len, w->base + off) < 0;
			w->errors += memcmp(buf, w->shadow + off, len) != 0;
		}
	}
	free(buf);
	return NULL;
}

static void parallel_writes(int level, int n, uint64_t seed)
{
	struct arr r;
	int rc = arr_create(&r, level, n, false);
	CHECKF(rc == 0, "create level %d: %d", level, rc);
	if (rc < 0) {
		arr_remove(&r);
		return;
	}
	uint64_t size = uraid_size(r.a);
	uint64_t width = (uint64_t)(n - (level == 6 ? 2 : 1)) * CHUNK_SEC * 512;
	uint64_t region = size / THREADS / width * width; /* whole stripes each */
	uint8_t *shadow = malloc(size);
	uint64_t fs = seed;
	t_fill(&fs, shadow, size);
	CHECK(uraid_write(r.a, shadow, size, 0) == 0);
	struct worker w[THREADS];
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){.a = r.a,
		                       .shadow = shadow + (uint64_t)i * region,
		                       .base = (uint64_t)i * region,
		                       .size = region,
		                       .width = width,
		                       .seed = seed * 10 + (uint64_t)i};
		CHECK(pthread_create(&w[i].t, NULL, worker_main, &w[i]) == 0);
	}
	int errors = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(w[i].t, NULL);
		errors += w[i].errors;
	}
	CHECKF(errors == 0, "level %d: %d failed or wrong requests", level, errors);
	CHECK(te_verify(r.a, shadow, size) == 0);
	CHECK(uraid_flush(r.a) == 0);
	uint64_t bad = check_members(&r, NULL, shadow);
	CHECKF(bad == 0, "level %d: %llu member differences", level, (unsigned long long)bad);
	CHECK_EQ_U64(check_parity(r.a), 0);
	free(shadow);
	CHECK(uraid_stop(r.a) == 0);
	arr_remove(&r);
}

static void raid5_same(void)
{
	same_writes(5, 5, 31);
}
static void raid6_same(void)
{
	same_writes(6, 6, 32);
}
static void raid5_parallel(void)
{
	parallel_writes(5, 5, 33);
}
static void raid6_parallel(void)
{
	parallel_writes(6, 6, 34);
}

TEST_MAIN(T(raid5_same), T(raid6_same), T(raid5_parallel), T(raid6_parallel))
