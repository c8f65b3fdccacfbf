/* Switching a running raid5's consistency policy (uraid_consistency_policy,
 * mdadm --grow --consistency-policy): resync -> ppl places every member's
 * log where mdadm's super1 update places it, each one a valid empty log
 * before the superblocks name it, and from then on a crash between the log
 * and the member writes is recovered; ppl -> resync drops the feature and
 * logs nothing more (a later crash means a resync again). md's refusals:
 * other levels, 0.90 metadata, a bitmap already there, read-only, and no
 * room in the metadata area (mdadm's "Not enough space to add ppl"),
 * nothing written. */
#include "ppl_common.h"

static int prole_of(const struct pt *t, uint64_t stripe)
{
	struct layout_geometry g;
	pt_geom(t, &g);
	struct layout_stripe ls;
	layout_ops_for(URAID_LEVEL_RAID5)->stripe(&g, stripe, &ls);
	return ls.p_role;
}

static void check_features(struct pt *t, uint32_t want)
{
	for (int i = 0; i < t->n; i++) {
		struct md_sb sb;
		char err[256];
		CHECK(md_sb_load(t->d[i].mem, &sb, err, sizeof(err)) == 0);
		CHECKF((sb.feature_map & (MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS)) == want,
		       "member %d: feature_map 0x%x", i, sb.feature_map);
	}
}

/* A write of 8 KiB into stripe 3's second chunk whose parity write the
 * crash loses: recovered from the log (ppl) or resynced (resync). */
static void crash_case(struct pt *t, struct uraid_array **a, bool ppl, uint64_t *rs)
{
	pt_snap(t);
	uint8_t buf[8192];
	t_fill(rs, buf, sizeof(buf));
	pt_write(*a, t, buf, sizeof(buf), (3 * 96 + 40) * 512);
	uraid_drop(*a);
	pt_undo(t, prole_of(t, 3), 3 * 32, 32);
	CHECK(pt_assemble(t, NULL, 0, a, NULL, 0) == 0);
	struct uraid_status st;
	uraid_status(*a, &st);
	if (ppl)
		CHECKF(st.ppl == 1 && st.ppl_recovered == 1 && st.clean, "recovered %llu clean %d",
		       (unsigned long long)st.ppl_recovered, st.clean);
	else
		CHECKF(st.ppl == 0 && !st.clean, "ppl %d clean %d", st.ppl, st.clean);
	CHECK(te_sync_all(*a) == 0);
	CHECK_EQ_U64(pt_mismatches(*a), 0);
	CHECK(te_verify(*a, t->shadow, t->size) == 0);
}

/* Created with PPL (so the metadata area has room for it, as mdadm leaves
 * it), switched to resync, then back. */
static void disable_then_enable(int metadata)
{
	struct pt t;
	struct uraid_array *a = NULL;
	if (pt_open(&t, 4, 32, metadata, &a) < 0) {
		CHECK(0);
		pt_close(&t);
		return;
	}
	pt_base(&t, &a, 0x700 + (uint64_t)metadata);
	uint64_t rs = 0x711;
	char err[256] = "";
	CHECKF(uraid_consistency_policy(a, URAID_POLICY_RESYNC, err, sizeof(err)) == 0, "%s", err);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.ppl == 0);
	check_features(&t, 0);
	crash_case(&t, &a, false, &rs);
	/* A stripe cache with a write in it: written out and turned off (its
	 * write-outs would not be logged). */
	CHECK(uraid_set_stripe_cache(a, 8) == 0);
	uint8_t w[4096];
	t_fill(&rs, w, sizeof(w));
	pt_write(a, &t, w, sizeof(w), (7 * 96 + 3 * 8) * 512);
	CHECKF(uraid_consistency_policy(a, URAID_POLICY_PPL, err, sizeof(err)) == 0, "%s", err);
	uraid_status(a, &st);
	CHECK(st.ppl == 1);
	CHECK_EQ_U64(st.stripe_cache_size, 0);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	check_features(&t, MD_FEATURE_MULTIPLE_PPLS);
	/* A bitmap on top: refused in mdadm's words, nothing changed. */
	uint64_t before = pt_hash(&t);
	int rc = uraid_bitmap_add(a, 0, err, sizeof(err));
	CHECKF(rc == -EINVAL && strstr(err, "Cannot add bitmap to array with PPL"), "%d %s", rc,
	       err);
	CHECK(pt_hash(&t) == before);
	/* mdadm's place: right after the superblock on 1.1/1.2, between the
	 * data and it on 1.0; every log one valid, empty header. */
	for (int i = 0; i < 4; i++) {
		struct md_sb sb;
		CHECK(md_sb_load(t.d[i].mem, &sb, err, sizeof(err)) == 0);
		int16_t off;
		uint16_t size;
		CHECK(md_ppl_place_grow(&sb, &off, &size, NULL, 0) == 0);
		CHECKF(md_ppl_offset(&sb) == off && md_ppl_size(&sb) == size,
		       "member %d: area %d+%u, mdadm's %d+%u", i, md_ppl_offset(&sb),
		       md_ppl_size(&sb), off, size);
		CHECK(metadata == 10 ? off < 0 : off == 8);
		struct md_ppl_header h;
		uint64_t at;
		CHECK(pt_newest(&t, i, &h, &at) == 1 && h.entries_count == 0);
	}
	crash_case(&t, &a, true, &rs);
	CHECK(uraid_stop(a) == 0);
	pt_close(&t);
}

static void disable_enable_12_11_10(void)
{
	disable_then_enable(12);
	disable_then_enable(11);
	disable_then_enable(10);
}

static void refusals(void)
{
	struct pt t;
	struct uraid_array *a = NULL;
	char err[256] = "";
	/* Made without PPL, small members: mdadm put the bad block log right
	 * after the superblock, and refuses as it does; nothing written. */
	CHECK(pt_open_policy(&t, 4, 32, 12, URAID_POLICY_RESYNC, &a) == 0);
	uint64_t before = pt_hash(&t);
	int rc = uraid_consistency_policy(a, URAID_POLICY_PPL, err, sizeof(err));
	CHECKF(rc == -ENOSPC && strstr(err, "Not enough space to add ppl"), "%d %s", rc, err);
	CHECK(pt_hash(&t) == before);
	/* A bitmap: md allows one policy. */
	CHECK(uraid_bitmap_add(a, 0, err, sizeof(err)) == 0);
	rc = uraid_consistency_policy(a, URAID_POLICY_PPL, err, sizeof(err));
	CHECKF(rc == -EINVAL && strstr(err, "bitmap"), "%d %s", rc, err);
	check_features(&t, 0);
	CHECK(uraid_stop(a) == 0);
	/* Read-only. */
	CHECK(pt_assemble(&t, NULL, URAID_RDONLY, &a, NULL, 0) == 0);
	rc = uraid_consistency_policy(a, URAID_POLICY_PPL, err, sizeof(err));
	CHECKF(rc == -EROFS, "%d %s", rc, err);
	uraid_drop(a);
	pt_close(&t);
	/* 0.90 metadata. */
	CHECK(pt_open_policy(&t, 4, 32, 0, URAID_POLICY_RESYNC, &a) == 0);
	rc = uraid_consistency_policy(a, URAID_POLICY_PPL, err, sizeof(err));
	CHECKF(rc == -EINVAL && strstr(err, "0.90"), "%d %s", rc, err);
	CHECK(uraid_stop(a) == 0);
	pt_close(&t);
	/* Already ppl / already resync: nothing to do. */
	CHECK(pt_open_policy(&t, 4, 32, 12, URAID_POLICY_PPL, &a) == 0);
	CHECK(uraid_consistency_policy(a, URAID_POLICY_PPL, err, sizeof(err)) == 0);
	CHECK(uraid_consistency_policy(a, (enum uraid_consistency_policy)7, err, sizeof(err)) ==
	      -EINVAL);
	CHECK(uraid_stop(a) == 0);
	pt_close(&t);
}

static void refused_for_raid6(void)
{
	struct te_disk d[4];
	for (int i = 0; i < 4; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "r%d", i);
		te_disk_open(&d[i], nm, PT_MEMB);
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = URAID_LEVEL_RAID6;
	o.raid_devices = 4;
	o.chunk_sectors = 32;
	o.metadata = 12;
	o.metadata_set = true;
	o.assume_clean = true;
	struct uraid_array *a = NULL;
	CHECK(te_create(&o, d, 4, &a) == 0);
	char err[256] = "";
	int rc = uraid_consistency_policy(a, URAID_POLICY_PPL, err, sizeof(err));
	CHECKF(rc == -EINVAL && strstr(err, "only supported for RAID level 5"), "%d %s", rc, err);
	CHECK(uraid_stop(a) == 0);
	for (int i = 0; i < 4; i++)
		te_disk_close(&d[i]);
}

TEST_MAIN(T(disable_enable_12_11_10), T(refusals), T(refused_for_raid6))
