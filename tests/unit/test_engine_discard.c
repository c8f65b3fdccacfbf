/* Discard and write-zeroes at every level and layout: random writes, then
 * discards and write-zeroes of random ranges (whole stripes and pieces,
 * healthy and degraded), each checked against a shadow copy; `check` finds
 * no mismatch afterwards. Members that zero what they discard get discards
 * (counted: raid4/5/6 discards parity too, only for whole stripes of a
 * healthy array). Members that do not (their discard leaves 0xff, as a
 * SCSI disk without LBPRZ may) still get the discards of linear, raid0,
 * raid1 and raid10, passed down as md does (the shadow reads 0xff there),
 * and none at raid4/5/6, only zeros; a write-zeroes reads zeros
 * everywhere. Fixed seeds. */
#include "test_engine_common.h"

#include <stdatomic.h>

#define DBYTES (3u << 20)

/* A borrowed disk that counts what reaches it as a discard. */
struct dz_borrow {
	struct member m;
	struct member *inner;
	uint64_t *discarded; /* bytes, shared by the disks of a case */
	uint8_t fill;        /* what a discard leaves where it does not zero */
};

static ssize_t dz_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct member *in = ((struct dz_borrow *)m)->inner;
	return in->ops->pread(in, buf, len, off);
}
static ssize_t dz_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                         unsigned flags)
{
	struct member *in = ((struct dz_borrow *)m)->inner;
	return in->ops->pwrite(in, buf, len, off, flags);
}
static int dz_flush(struct member *m)
{
	return 0;
}
static int dz_discard(struct member *m, uint64_t off, uint64_t len)
{
	struct dz_borrow *b = (struct dz_borrow *)m;
	int rc = 0;
	if (m->discard_zeroes) {
		rc = member_discard(b->inner, off, len);
	} else { /* what a discard without LBPRZ may read back */
		uint8_t ff[4096];
		memset(ff, b->fill, sizeof(ff));
		for (uint64_t d = 0; d < len && rc == 0; d += sizeof(ff)) {
			size_t n = len - d < sizeof(ff) ? (size_t)(len - d) : sizeof(ff);
			rc = member_write(b->inner, ff, n, off + d, 0);
		}
	}
	if (rc == 0)
		__atomic_add_fetch(b->discarded, len, __ATOMIC_RELAXED);
	return rc;
}
static int dz_fd(struct member *m)
{
	return -1;
}
static void dz_close(struct member *m)
{
	free(m);
}
static const struct member_ops dz_ops = {
    .kind = "dz",
    .pread = dz_pread,
    .pwrite = dz_pwrite,
    .flush = dz_flush,
    .discard = dz_discard,
    .fd = dz_fd,
    .close = dz_close,
};

static struct member *dz_borrow(struct te_disk *d, bool zeroes, uint64_t *discarded)
{
	struct dz_borrow *b = calloc(1, sizeof(*b));
	if (!b)
		abort();
	b->m.ops = &dz_ops;
	snprintf(b->m.name, sizeof(b->m.name), "%s", d->name);
	b->m.size = d->mem->size;
	b->m.logical_block = 512;
	b->m.discard_zeroes = zeroes;
	b->inner = d->mem;
	b->discarded = discarded;
	b->fill = 0xff;
	return &b->m;
}

struct cfg {
	const char *name;
	int level, ndisks;
	const char *layout;
	unsigned chunk_kib, cache;
	uint64_t seed;
};

static int nparity(int level)
{
	return level == 6 ? 2 : level == 4 || level == 5 ? 1 : level == 1 || level == 10 ? 1 : 0;
}

static uint64_t stripe_width(const struct cfg *c)
{
	int data = c->level == 6                    ? c->ndisks - 2
	           : c->level == 4 || c->level == 5 ? c->ndisks - 1
	                                            : 1;
	return (uint64_t)data * (c->chunk_kib ? c->chunk_kib * 2 : 128);
}

/* Random writes and zero requests; shadow kept in step. */
static void churn(struct uraid_array *a, uint8_t *shadow, uint64_t size, uint64_t width,
                  uint64_t *rs, int ops, int dfill, const char *what)
{
	uint64_t sec = size / 512;
	for (int i = 0; i < ops; i++) {
		uint64_t k = t_rand(rs) % 10;
		uint64_t n, s;
		if (k < 3) { /* whole stripes */
			uint64_t ns = sec / width;
			uint64_t cnt = 1 + t_rand(rs) % 4;
			if (cnt > ns)
				cnt = ns;
			s = (t_rand(rs) % (ns - cnt + 1)) * width;
			n = cnt * width;
		} else {
			n = 1 + t_rand(rs) % (3 * width);
			if (n > sec)
				n = sec;
			s = t_rand(rs) % (sec - n + 1);
		}
		int rc;
		if (k >= 7) {
			t_fill(rs, shadow + s * 512, n * 512);
			rc = uraid_write(a, shadow + s * 512, n * 512, s * 512);
		} else {
			memset(shadow + s * 512, k % 2 ? dfill : 0, n * 512);
			rc = k % 2 ? uraid_discard(a, s * 512, n * 512)
			           : uraid_write_zeroes(a, s * 512, n * 512,
			                                k % 3 ? URAID_ZERO_MAY_TRIM : 0);
		}
		CHECKF(rc == 0, "%s: op %d (kind %" PRIu64 ") %" PRIu64 "+%" PRIu64 ": %d", what, i,
		       k, s, n, rc);
	}
	CHECKF(te_verify(a, shadow, size) == 0, "%s: content differs from the shadow", what);
}

static void check_clean(struct uraid_array *a, const struct cfg *c, const char *what)
{
	if (nparity(c->level) == 0)
		return; /* nothing to check */
	char err[256];
	struct uraid_status st;
	CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
	CHECK(te_sync_all(a) == 0);
	CHECK(uraid_status(a, &st) == 0);
	CHECKF(st.mismatch_cnt == 0, "%s: check found %llu mismatched sectors", what,
	       (unsigned long long)st.mismatch_cnt);
}

static void run_zeroes(const struct cfg *c, bool zeroes)
{
	char what[96];
	snprintf(what, sizeof(what), "%s (%s)", c->name, zeroes ? "zeroing discard" : "no zeroes");
	uint64_t rs = c->seed + zeroes, discarded = 0;
	struct te_disk disks[TE_MAX];
	memset(disks, 0, sizeof(disks));
	struct member *mm[TE_MAX];
	for (int i = 0; i < c->ndisks; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "z%d", i);
		te_disk_open(&disks[i], nm, DBYTES);
		mm[i] = dz_borrow(&disks[i], zeroes, &discarded);
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = c->level;
	o.raid_devices = c->ndisks;
	o.chunk_sectors = c->chunk_kib * 2;
	snprintf(o.name, sizeof(o.name), "z");
	if (c->layout) {
		CHECK(layout_parse(c->level, c->layout, &o.layout) == 0);
		o.layout_set = true;
	}
	struct uraid_array *a = NULL;
	char err[256];
	int rc =
	    uraid_create_members(&o, mm, c->ndisks, URAID_NO_SYNC_THREAD, &a, err, sizeof(err));
	CHECKF(rc == 0, "%s: create: %s", what, err);
	if (rc < 0)
		goto out;
	CHECK(te_sync_all(a) == 0);
	if (c->cache)
		CHECK(uraid_set_stripe_cache(a, c->cache) == 0);
	uint64_t size = uraid_size(a), width = stripe_width(c);
	uint8_t *shadow = calloc(1, size);
	t_fill(&rs, shadow, size);
	CHECK(uraid_write(a, shadow, size, 0) == 0);
	CHECK(uraid_discard_safe(a) == zeroes);
	CHECK(uraid_write_zeroes(a, 0, 4096, URAID_ZERO_FAST | URAID_ZERO_MAY_TRIM) ==
	      (zeroes ? 0 : -ENOTSUP));
	if (zeroes)
		memset(shadow, 0, 4096);
	/* bad requests change nothing */
	CHECK(uraid_discard(a, 100, 512) == -EINVAL);
	CHECK(uraid_discard(a, size - 512, 1024) == -ERANGE);
	CHECK(uraid_write_zeroes(a, 0, 512, 0x80) == -EINVAL);
	/* what a discard reads back: zeros, or the members' 0xff where the
	 * level passes it down to members that do not zero */
	bool parity = c->level >= 4 && c->level <= 6;
	int dfill = zeroes || parity ? 0 : 0xff;
	churn(a, shadow, size, width, &rs, 60, dfill, what);
	CHECK(uraid_flush(a) == 0);
	check_clean(a, c, what);
	/* every stripe discarded at once: parity levels discard whole stripes */
	discarded = 0;
	CHECK(uraid_discard(a, 0, size) == 0);
	memset(shadow, dfill, size);
	CHECKF(te_verify(a, shadow, size) == 0, "%s: not 0x%02x after a whole discard", what,
	       dfill);
	if (zeroes || !parity)
		CHECKF(discarded >= size, "%s: %" PRIu64 " of %" PRIu64 " bytes discarded", what,
		       discarded, size);
	else
		CHECKF(discarded == 0,
		       "%s: %" PRIu64 " bytes discarded on members that do not zero", what,
		       discarded);
	check_clean(a, c, what);
	if (nparity(c->level) > 0) {
		/* degraded: parity levels write zeros (nothing discarded) */
		t_fill(&rs, shadow, size);
		CHECK(uraid_write(a, shadow, size, 0) == 0);
		CHECK(uraid_fail(a, disks[c->ndisks - 1].name, err, sizeof(err)) == 0);
		CHECK(!uraid_discard_safe(a));
		discarded = 0;
		churn(a, shadow, size, width, &rs, 30, dfill, what);
		if (parity)
			CHECKF(discarded == 0, "%s: degraded array discarded %" PRIu64 " bytes",
			       what, discarded);
		else
			CHECK(discarded > 0);
	}
	free(shadow);
	CHECK(uraid_stop(a) == 0);
out:
	for (int i = 0; i < c->ndisks; i++)
		te_disk_close(&disks[i]);
}

/* raid1 on members whose discards leave different bytes (0xff on one,
 * zeros on the other): the discard is passed down all the same, as md's
 * raid1 does, and check counts the copies that differ as mismatches, as
 * md's does for any range whose copies differ; repair makes them agree. */
static void raid1_unequal_discard(void)
{
	uint64_t discarded = 0;
	struct te_disk disks[2];
	memset(disks, 0, sizeof(disks));
	struct member *mm[2];
	for (int i = 0; i < 2; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "u%d", i);
		te_disk_open(&disks[i], nm, DBYTES);
		mm[i] = dz_borrow(&disks[i], false, &discarded);
		((struct dz_borrow *)mm[i])->fill = i ? 0 : 0xff;
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = URAID_LEVEL_RAID1;
	o.raid_devices = 2;
	snprintf(o.name, sizeof(o.name), "u");
	struct uraid_array *a = NULL;
	char err[256];
	struct uraid_status st;
	int rc = uraid_create_members(&o, mm, 2, URAID_NO_SYNC_THREAD, &a, err, sizeof(err));
	CHECKF(rc == 0, "create: %s", err);
	if (rc < 0)
		goto out;
	CHECK(te_sync_all(a) == 0);
	uint64_t size = uraid_size(a), rs = 77;
	uint8_t *buf = malloc(size);
	t_fill(&rs, buf, size);
	CHECK(uraid_write(a, buf, size, 0) == 0);
	CHECK(uraid_discard(a, 1 << 20, 1 << 20) == 0);
	CHECK(discarded == 2u << 20);
	CHECK(uraid_write_zeroes(a, 0, 65536, URAID_ZERO_MAY_TRIM) == 0); /* zeros: no discard */
	CHECK(discarded == 2u << 20);
	CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
	CHECK(te_sync_all(a) == 0);
	CHECK(uraid_status(a, &st) == 0);
	CHECKF(st.mismatch_cnt >= 2048, "check counted %llu mismatched sectors",
	       (unsigned long long)st.mismatch_cnt);
	CHECK(uraid_sync_action(a, URAID_SYNC_REPAIR, err, sizeof(err)) == 0);
	CHECK(te_sync_all(a) == 0);
	CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
	CHECK(te_sync_all(a) == 0);
	CHECK(uraid_status(a, &st) == 0);
	CHECKF(st.mismatch_cnt == 0, "after repair: %llu", (unsigned long long)st.mismatch_cnt);
	memset(buf, 0, 65536);
	CHECK(uraid_read(a, buf + (1 << 20), 1 << 20, 1 << 20) == 0); /* what the copies agree on */
	CHECK(te_verify(a, buf, size) == 0);
	free(buf);
	CHECK(uraid_stop(a) == 0);
out:
	for (int i = 0; i < 2; i++)
		te_disk_close(&disks[i]);
}

static void run(const struct cfg *c)
{
	run_zeroes(c, true);
	run_zeroes(c, false);
}

#define CASE(fn, ...)                             \
	static void fn(void)                      \
	{                                         \
		const struct cfg c = __VA_ARGS__; \
		run(&c);                          \
	}

CASE(linear, {"linear", URAID_LEVEL_LINEAR, 3, NULL, 0, 0, 1})
CASE(raid0, {"raid0", URAID_LEVEL_RAID0, 3, NULL, 64, 0, 2})
CASE(raid1, {"raid1", URAID_LEVEL_RAID1, 3, NULL, 0, 0, 3})
CASE(raid10_n2, {"raid10 n2", URAID_LEVEL_RAID10, 4, "n2", 64, 0, 4})
CASE(raid10_f2, {"raid10 f2", URAID_LEVEL_RAID10, 3, "f2", 64, 0, 5})
CASE(raid10_o2, {"raid10 o2", URAID_LEVEL_RAID10, 3, "o2", 64, 0, 6})
CASE(raid4, {"raid4", URAID_LEVEL_RAID4, 4, NULL, 64, 0, 7})
CASE(raid5_ls, {"raid5 left-symmetric", URAID_LEVEL_RAID5, 4, "left-symmetric", 64, 0, 8})
CASE(raid5_ra, {"raid5 right-asymmetric", URAID_LEVEL_RAID5, 3, "right-asymmetric", 32, 0, 9})
CASE(raid5_cache, {"raid5 stripe cache", URAID_LEVEL_RAID5, 4, NULL, 64, 64, 10})
CASE(raid6, {"raid6", URAID_LEVEL_RAID6, 5, NULL, 64, 0, 11})
CASE(raid6_cache, {"raid6 stripe cache", URAID_LEVEL_RAID6, 4, "right-symmetric", 32, 32, 12})

TEST_MAIN(T(linear), T(raid0), T(raid1), T(raid10_n2), T(raid10_f2), T(raid10_o2), T(raid4),
          T(raid5_ls), T(raid5_ra), T(raid5_cache), T(raid6), T(raid6_cache),
          T(raid1_unequal_discard))
