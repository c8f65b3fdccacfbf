/* The internal bitmap resized with the array (engine/bitmap/bitmap_resize.c,
 * md's raid1/5/10_resize -> md_bitmap_resize): `grow --size` up to the
 * members' room and back down (after --array-size) on raid1, raid5 and
 * raid10 near-2, and a raid10 4 -> 5 member reshape (md's
 * raid10_start_reshape resizes it first), with a bitmap whose bits outgrow
 * 1.2's space (the old bitmap's sectors), so the chunk doubles. Crash-simulating members
 * (sim/member_crash.h), random writes, discards and flushes before and
 * after the size change, and the power cut at a random member request:
 * reassembled, the resync run, every sector must hold its value at the last
 * acknowledged flush or a write issued after it, and check must find no
 * mismatch. Without a cut the bitmap must have md's chunk (doubled from
 * the old one until header + bits fit the old bitmap's sectors) and bits
 * for the whole new sync size. BMRESIZE_TRIALS (default 10) and
 * BMRESIZE_SEED scale and move it. header_*: after a grow or a raid10
 * reshape start that doubled the chunk, the header on disk is as md's
 * (not stale, the superblocks' events). */
#include "crash_workload.h"
#include "meta/md_bitmap.h"
#include "reshape_common.h"

struct br_cfg {
	const char *name;
	int level, ndisks;
	uint64_t sectors, to_sectors; /* per member; to 0: max */
	int to_disks;                 /* a raid10 member-count reshape to these (0: --size) */
};

#define BR_DISK  (12u << 20)
#define BR_CHUNK 4096 /* bitmap chunk bytes before the resize */

/* raid1 and raid5: bits per member sector; raid10: per array sector (two
 * copies on four members): chosen so the bits just fit one sector before
 * the grow (2,000 of at most 2,048) and not after it. */
static const struct br_cfg bcfgs[] = {
    {"raid1_grow", URAID_LEVEL_RAID1, 2, 16000, 0, 0},
    {"raid5_grow", URAID_LEVEL_RAID5, 3, 16000, 0, 0},
    {"raid10_grow", URAID_LEVEL_RAID10, 4, 8000, 0, 0},
    {"raid1_shrink", URAID_LEVEL_RAID1, 2, 16000, 8000, 0},
    {"raid5_shrink", URAID_LEVEL_RAID5, 3, 16000, 8000, 0},
    {"raid10_shrink", URAID_LEVEL_RAID10, 4, 8000, 4000, 0},
    /* 4 -> 5 members: 2,500 bits of 8 sectors for the new array; md's
     * raid10_start_reshape resizes the bitmap before the first stripe
     * moves, so a cut anywhere in the reshape finds the doubled chunk */
    {"raid10_reshape", URAID_LEVEL_RAID10, 4, 8000, 0, 5},
};

static bool br_legal(const struct cw_span *s, uint64_t sec, uint64_t id)
{
	if (id == s->durable[sec])
		return true;
	for (uint64_t w = s->boundary + 1; w <= s->issued; w++)
		if (s->log[w].lsec <= sec && sec < s->log[w].lsec + s->log[w].nsec &&
		    (s->log[w].zero ? id == 0 : id == w))
			return true;
	return false;
}

/* md's chunk for the resized bitmap, worked out here from the rule: the
 * old bitmap's sectors are the space; double while header + bits exceed. */
static uint64_t br_model_chunk(uint64_t old_cov, uint64_t new_cov)
{
	uint64_t cs = BR_CHUNK / 512;
	uint64_t space = (256 + ((old_cov + cs - 1) / cs + 7) / 8 + 511) / 512;
	while (256 + ((new_cov + cs - 1) / cs + 7) / 8 > space * 512)
		cs *= 2;
	return cs;
}

static uint64_t br_cov(const struct br_cfg *c, int ndisks, uint64_t dev)
{
	return c->level == URAID_LEVEL_RAID10 ? dev * (uint64_t)ndisks / 2 : dev;
}

/* The bitmap has md's chunk and bits for the array of `ndisks` members of
 * dev_sectors each (after the resize: a grow doubles the chunk). */
static void br_check_bitmap(const struct br_cfg *c, const struct uraid_status *st, int ndisks,
                            const char *when)
{
	uint64_t want_cs =
	    br_model_chunk(br_cov(c, c->ndisks, c->sectors), br_cov(c, ndisks, st->dev_sectors));
	uint64_t cov = br_cov(c, ndisks, st->dev_sectors);
	CHECKF(st->raid_disks == ndisks && st->bitmap_chunk_kib * 2 == want_cs &&
	           st->bitmap_chunks == (cov + want_cs - 1) / want_cs,
	       "%s %s: %d members of %llu sectors, bitmap chunk %u KiB (md's: %llu), %llu bits",
	       c->name, when, st->raid_disks, (unsigned long long)st->dev_sectors,
	       st->bitmap_chunk_kib, (unsigned long long)want_cs / 2,
	       (unsigned long long)st->bitmap_chunks);
	CHECKF(c->to_sectors || want_cs > BR_CHUNK / 512, "%s %s: the chunk did not double",
	       c->name, when);
}

/* Member requests from the arming to the write after the resize. */
static uint64_t br_mark;

static uint64_t br_trial(const struct br_cfg *c, uint64_t seed, uint64_t crash_point, bool *crashed)
{
	struct te_disk d[TE_MAX];
	struct crash_ctl *ctl;
	uint64_t rs = seed, used = 0;
	int nd = c->to_disks > c->ndisks ? c->to_disks : c->ndisks;
	memset(d, 0, sizeof(d));
	*crashed = false;
	if (crash_ctl_new(&ctl) < 0)
		abort();
	for (int i = 0; i < nd; i++) {
		snprintf(d[i].name, sizeof(d[i].name), "b%d", i);
		if (member_open_mem(d[i].name, BR_DISK, &d[i].mem) < 0 ||
		    member_crash_wrap(d[i].mem, ctl, &d[i].fault) < 0)
			abort();
	}
	struct uraid_create_opts o = rsc_opts(c->level, c->ndisks, 16, c->sectors);
	struct uraid_array *a = NULL;
	struct cw_span s = {.seed = seed, .nlog = 4096};
	uint8_t *buf = malloc(64 * 512);
	char err[512], warn[1024];
	if (te_create(&o, d, c->ndisks, &a) < 0) {
		CHECKF(0, "%s: create failed", c->name);
		goto out;
	}
	CHECKF(uraid_bitmap_add(a, BR_CHUNK, err, sizeof(err)) == 0, "%s: bitmap: %s", c->name,
	       err);
	bool shrink = c->to_sectors && c->to_sectors < c->sectors;
	uint64_t full = uraid_size(a) / 512;
	/* A shrink: mdadm's order, --array-size first; the writes stay below. */
	s.span = shrink ? full * c->to_sectors / c->sectors : full;
	if (shrink)
		CHECKF(uraid_grow(a, URAID_GROW_ARRAY_SIZE, s.span, err, sizeof(err)) == 0,
		       "%s: array size: %s", c->name, err);
	CHECK(cw_span_start(a, &s, s.span, buf) == 0);
	if (c->to_disks)
		CHECKF(uraid_add_member(a, te_borrow(&d[c->ndisks]), err, sizeof(err)) == 0,
		       "%s: add: %s", c->name, err);
	struct uraid_status st0;
	memset(&st0, 0, sizeof(st0));
	uraid_status(a, &st0);
	uint64_t base = crash_ctl_requests(ctl);
	crash_ctl_arm(ctl, crash_point ? base + crash_point : 0);
	/* writes in flight (their bits set, not flushed) when the size changes */
	int rc = 0;
	for (int k = 0; k < 6 && rc == 0 && !crash_ctl_crashed(ctl); k++)
		rc = cw_span_write(a, &s, &rs, buf);
	if (rc == 0 && !crash_ctl_crashed(ctl) && c->to_disks) {
		struct uraid_reshape_opts ro = {
		    .raid_disks = c->to_disks, .layout = -1, .direction = 1};
		rc = uraid_array_reshape_start(a, &ro, err, sizeof(err));
		if (!crash_ctl_crashed(ctl)) {
			CHECKF(rc == 0, "%s: reshape start: %s", c->name, err);
			struct uraid_status st1;
			memset(&st1, 0, sizeof(st1));
			uraid_status(a, &st1);
			CHECKF(st1.reshape == 1, "%s: no reshape running", c->name);
			br_check_bitmap(c, &st1, c->to_disks, "at the reshape's start");
		}
	} else if (rc == 0 && !crash_ctl_crashed(ctl)) {
		rc = uraid_grow(a, URAID_GROW_SIZE, c->to_sectors, err, sizeof(err));
		if (!crash_ctl_crashed(ctl))
			CHECKF(rc == 0, "%s: --size: %s", c->name, err);
	}
	/* One write more: the bitmap's header as fresh as the superblocks
	 * again, so a cut now leaves a resync the bitmap narrows (the
	 * writes before the resize still unflushed: their bits must have
	 * been carried). */
	if (rc == 0 && !crash_ctl_crashed(ctl))
		rc = cw_span_write(a, &s, &rs, buf);
	br_mark = crash_ctl_requests(ctl) - base;
	for (int k = 0; k < 4000 && rc >= 0 && !crash_ctl_crashed(ctl); k++) {
		uint64_t r = k < 4 ? 0 : t_rand(&rs) % 8;
		if (r < 3)
			rc = cw_span_write(a, &s, &rs, buf);
		else if (r == 3)
			rc = cw_span_flush(a, &s);
		if (rc < 0 || crash_ctl_crashed(ctl))
			break;
		rc = uraid_sync_step(a, 64);
		if (rc == 0 && k > 40)
			break;
		rc = rc < 0 ? rc : 0;
	}
	if (!crash_ctl_crashed(ctl)) {
		CHECKF(rc >= 0, "%s seed %#llx: failed: %d", c->name, (unsigned long long)seed, rc);
		struct uraid_status st;
		memset(&st, 0, sizeof(st));
		uraid_status(a, &st);
		CHECKF(st.reshape == 0 && (c->to_disks || st.dev_sectors != c->sectors),
		       "%s: %llu sectors per member, reshape %d", c->name,
		       (unsigned long long)st.dev_sectors, st.reshape);
		br_check_bitmap(c, &st, nd, "at the end");
	}
	used = crash_ctl_requests(ctl) - base;
	*crashed = crash_ctl_crashed(ctl);
	uraid_drop(a);
	a = NULL;
	struct crash_stats cs;
	CHECK(crash_apply(ctl, seed ^ 0xfeed, &cs) == 0);
	int idx[TE_MAX];
	for (int i = 0; i < nd; i++)
		idx[i] = i;
	warn[0] = 0;
	if (te_assemble(d, idx, nd, &a, warn, sizeof(warn)) < 0) {
		CHECKF(0, "%s seed %#llx point %llu: assemble failed", c->name,
		       (unsigned long long)seed, (unsigned long long)crash_point);
		goto out;
	}
	CHECKF(te_sync_all(a) == 0, "%s seed %#llx point %llu: resync failed", c->name,
	       (unsigned long long)seed, (unsigned long long)crash_point);
	if (c->to_disks) {
		/* cut before the superblocks recorded the reshape: the old
		 * geometry, the new member a spare, and the old bitmap or,
		 * cut after the resized one was written (stale: read as all
		 * dirty), its doubled chunk over the old array; else the
		 * reshape finished with md's resized bitmap */
		struct uraid_status st;
		memset(&st, 0, sizeof(st));
		uraid_status(a, &st);
		bool started = st.raid_disks == c->to_disks;
		uint64_t bcs = (uint64_t)st.bitmap_chunk_kib * 2,
		         old_cov = br_cov(c, c->ndisks, c->sectors);
		bool old_ok =
		    crash_point && st.raid_disks == c->ndisks &&
		    (bcs == BR_CHUNK / 512 ||
		     bcs == br_model_chunk(old_cov, br_cov(c, c->to_disks, c->sectors))) &&
		    st.bitmap_chunks == (old_cov + bcs - 1) / bcs;
		CHECKF(
		    st.reshape == 0 && (started || old_ok),
		    "%s seed %#llx point %llu: %d members, reshape %d, bitmap chunk %u KiB x %llu",
		    c->name, (unsigned long long)seed, (unsigned long long)crash_point,
		    st.raid_disks, st.reshape, st.bitmap_chunk_kib,
		    (unsigned long long)st.bitmap_chunks);
		if (started)
			br_check_bitmap(c, &st, c->to_disks, "after the cut");
	}
	uint64_t lost = 0;
	for (uint64_t s0 = 0; s0 < s.span; s0 += 64) {
		uint64_t k = s.span - s0 < 64 ? s.span - s0 : 64;
		CHECK(uraid_read(a, buf, k * 512, s0 * 512) == 0);
		for (uint64_t j = 0; j < k; j++) {
			uint64_t sec = s0 + j, id = cw_decode(seed, sec, buf + j * 512);
			if (!br_legal(&s, sec, id) && lost++ < 3)
				fprintf(stderr,
				        "%s seed %#llx point %llu: sector %llu holds %llu (durable "
				        "%llu)\n",
				        c->name, (unsigned long long)seed,
				        (unsigned long long)crash_point, (unsigned long long)sec,
				        (unsigned long long)id, (unsigned long long)s.durable[sec]);
		}
	}
	CHECKF(lost == 0, "%s seed %#llx point %llu: %llu sectors lost", c->name,
	       (unsigned long long)seed, (unsigned long long)crash_point, (unsigned long long)lost);
	uint64_t mm = rsc_check(a);
	CHECKF(mm == 0, "%s seed %#llx point %llu: %llu mismatches", c->name,
	       (unsigned long long)seed, (unsigned long long)crash_point, (unsigned long long)mm);
out:
	if (a)
		uraid_stop(a);
	for (int i = 0; i < nd; i++)
		if (d[i].fault)
			member_close(d[i].fault);
	crash_ctl_free(ctl);
	cw_span_free(&s);
	free(buf);
	return used;
}

static void run(int i)
{
	const struct br_cfg *c = &bcfgs[i];
	uint64_t seed = cw_env("BMRESIZE_SEED", 0xb17e0000ULL) + (uint64_t)i * 0x100000;
	uint64_t trials = cw_env("BMRESIZE_TRIALS", 10);
	bool crashed;
	uint64_t total = br_trial(c, seed, 0, &crashed), mark = br_mark;
	CHECKF(total > 10, "%s: %llu member requests", c->name, (unsigned long long)total);
	uint64_t rs = seed ^ 0xabc, crashes = 0;
	for (uint64_t t = 0; t < trials && total; t++) {
		/* every other cut up to a few requests past the write after
		 * the resize, the others anywhere */
		uint64_t span = t % 2 ? total : mark + 8;
		br_trial(c, seed + t + 1, 1 + t_rand(&rs) % span, &crashed);
		crashes += crashed;
	}
	CHECKF(crashes > 0 || trials == 0, "%s: no trial cut the power", c->name);
	printf("# %s: %llu member requests, %llu trials cut\n", c->name, (unsigned long long)total,
	       (unsigned long long)crashes);
}

static void raid1_grow(void)
{
	run(0);
}
static void raid5_grow(void)
{
	run(1);
}
static void raid10_grow(void)
{
	run(2);
}
static void raid1_shrink(void)
{
	run(3);
}
static void raid5_shrink(void)
{
	run(4);
}
static void raid10_shrink(void)
{
	run(5);
}
static void raid10_reshape(void)
{
	run(6);
}

/* A degraded array resized: its bits are all a re-add has (bits are never
 * cleared while a member is missing), so the chunks written while it was
 * gone, before and after the resize, must be the ones recovered. The
 * content against a shadow, check = 0, and the recovery must have skipped
 * clean chunks (it went by the bitmap). */
static void readd_after(int level, int n, uint64_t sectors)
{
	struct te_disk d[TE_MAX];
	memset(d, 0, sizeof(d));
	rsc_disks_open(d, n, "q", BR_DISK);
	struct uraid_create_opts o = rsc_opts(level, n, 16, sectors);
	struct uraid_array *a = NULL;
	char err[512];
	if (te_create(&o, d, n, &a) < 0) {
		CHECK(0);
		rsc_disks_close(d, n);
		return;
	}
	CHECKF(uraid_bitmap_add(a, BR_CHUNK, err, sizeof(err)) == 0, "bitmap: %s", err);
	uint64_t rs = 0x5eed + (uint64_t)level;
	uint64_t size = uraid_size(a);
	uint8_t *shadow = malloc(64u << 20);
	t_fill(&rs, shadow, size);
	CHECK(uraid_write(a, shadow, size, 0) == 0);
	CHECK(uraid_flush(a) == 0 && uraid_flush(a) == 0);
	CHECKF(uraid_fail(a, "#1", err, sizeof(err)) == 0 &&
	           uraid_remove(a, d[1].name, err, sizeof(err)) == 0,
	       "fail/remove: %s", err);
	uint8_t buf[8 * 512];
	for (int k = 0; k < 8; k++) {
		uint64_t at = t_rand(&rs) % (size / 512 - 8);
		t_fill(&rs, buf, sizeof(buf));
		CHECK(uraid_write(a, buf, sizeof(buf), at * 512) == 0);
		memcpy(shadow + at * 512, buf, sizeof(buf));
	}
	CHECKF(uraid_grow(a, URAID_GROW_SIZE, 0, err, sizeof(err)) == 0, "--size: %s", err);
	uint64_t nsize = uraid_size(a);
	CHECK(nsize > size);
	/* the grown region: zeros on the member left, as on the one gone */
	memset(shadow + size, 0, nsize - size);
	for (int k = 0; k < 8; k++) {
		uint64_t at = t_rand(&rs) % (nsize / 512 - 8);
		t_fill(&rs, buf, sizeof(buf));
		CHECK(uraid_write(a, buf, sizeof(buf), at * 512) == 0);
		memcpy(shadow + at * 512, buf, sizeof(buf));
	}
	uint64_t skipped0 = uraid_bitmap_recovery_skipped(a);
	CHECKF(uraid_re_add_member(a, te_borrow(&d[1]), err, sizeof(err)) == 0, "re-add: %s", err);
	CHECK(te_sync_all(a) == 0);
	uint64_t skipped = uraid_bitmap_recovery_skipped(a) - skipped0;
	struct uraid_status st;
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECKF(st.degraded == 0 && skipped > 0, "degraded %d, recovery skipped %llu", st.degraded,
	       (unsigned long long)skipped);
	uint8_t *got = malloc(nsize);
	CHECK(uraid_read(a, got, nsize, 0) == 0 && !memcmp(got, shadow, nsize));
	uint64_t mm = rsc_check(a);
	CHECKF(mm == 0, "level %d: %llu mismatches after the re-add", level,
	       (unsigned long long)mm);
	printf("# level %d: re-add after the resize skipped %llu sectors, chunk %u KiB\n", level,
	       (unsigned long long)skipped, st.bitmap_chunk_kib);
	free(got);
	free(shadow);
	uraid_stop(a);
	rsc_disks_close(d, n);
}

/* After a grow that changed the chunk, the header on disk must be as md
 * leaves it (md_update_sb writes the bitmap's header with the
 * superblocks): not stale, the superblocks' events, the new chunk and sync
 * size, before any further write. A stale or older header there makes md's
 * and uraid's next unclean assembly resync the whole array instead of the
 * dirty chunks (mdadm -X: "State : Out of date"). raid1 1.2 and raid10
 * --size, then raid10 4 -> 5 members. */
static void header_after(int level, int n, uint64_t sectors, bool reshape)
{
	struct te_disk d[TE_MAX];
	memset(d, 0, sizeof(d));
	rsc_disks_open(d, n + reshape, "h", BR_DISK);
	struct uraid_create_opts o = rsc_opts(level, n, 16, sectors);
	struct uraid_array *a = NULL;
	char err[512];
	if (te_create(&o, d, n, &a) < 0) {
		CHECK(0);
		rsc_disks_close(d, n + reshape);
		return;
	}
	CHECKF(uraid_bitmap_add(a, BR_CHUNK, err, sizeof(err)) == 0, "bitmap: %s", err);
	uint8_t buf[4096];
	memset(buf, 0x5a, sizeof(buf));
	CHECK(uraid_write(a, buf, sizeof(buf), 0) == 0 && uraid_flush(a) == 0);
	if (reshape) {
		CHECKF(uraid_add_member(a, te_borrow(&d[n]), err, sizeof(err)) == 0, "add: %s",
		       err);
		struct uraid_reshape_opts ro = {.raid_disks = n + 1, .layout = -1};
		CHECKF(uraid_array_reshape_start(a, &ro, err, sizeof(err)) == 0, "reshape: %s",
		       err);
	} else {
		CHECKF(uraid_grow(a, URAID_GROW_SIZE, 0, err, sizeof(err)) == 0, "--size: %s", err);
	}
	struct uraid_status st;
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	struct md_sb sb;
	struct md_bitmap_sb h;
	uint8_t hb[512];
	CHECK(md_sb_load(d[0].mem, &sb, err, sizeof(err)) == 0);
	int64_t at = ((int64_t)sb.super_offset + (int32_t)sb.bitmap_offset) * 512;
	CHECK(member_read(d[0].mem, hb, sizeof(hb), (uint64_t)at) == 0);
	CHECKF(md_bitmap_decode(hb, sizeof(hb), &h, err, sizeof(err)) == 0, "header: %s", err);
	CHECKF(!(h.state & MD_BITMAP_STALE) && h.events == sb.events &&
	           h.chunksize == st.bitmap_chunk_kib * 1024u && h.chunksize > BR_CHUNK,
	       "level %d%s: header state %#x, events %llu (superblock %llu), chunk %u (array's %u "
	       "KiB)",
	       level, reshape ? " reshape" : "", h.state, (unsigned long long)h.events,
	       (unsigned long long)sb.events, h.chunksize, st.bitmap_chunk_kib);
	uraid_stop(a);
	rsc_disks_close(d, n + reshape);
}

static void header_raid1(void)
{
	header_after(URAID_LEVEL_RAID1, 2, 16000, false);
}

static void header_raid10(void)
{
	header_after(URAID_LEVEL_RAID10, 4, 8000, false);
}

static void header_raid10_reshape(void)
{
	header_after(URAID_LEVEL_RAID10, 4, 8000, true);
}

static void raid1_readd(void)
{
	readd_after(URAID_LEVEL_RAID1, 2, 16000);
}

static void raid10_readd(void)
{
	readd_after(URAID_LEVEL_RAID10, 4, 8000);
}

TEST_MAIN(T(raid1_grow), T(raid5_grow), T(raid10_grow), T(raid1_shrink), T(raid5_shrink),
          T(raid10_shrink), T(raid10_reshape), T(raid1_readd), T(raid10_readd), T(header_raid1),
          T(header_raid10), T(header_raid10_reshape))
