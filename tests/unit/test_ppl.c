/* The partial parity log in the engine (engine/ppl/), against models the
 * test computes itself: what the log holds after a write (the entry md's
 * ppl_log_stripe would make, the partial parity as the XOR of the chunks
 * the write leaves alone, from the shadow), and what assembly makes of a
 * crash between the log and the member writes (the writes of the newest
 * unit undone on the members, as a power cut leaves them): parity that
 * agrees with the data the members hold (check 0, no resync), and a member
 * missing after the crash rebuilt right from it — where the same members
 * with their logs hidden get it wrong (the test has teeth) — and the same
 * recovery in memory for a read-only assembly, no member byte changed. Also a torn
 * entry (resync, as md), a clean array's log left alone, a member joining a
 * slot with an old log of the same array, the area wrapping around, and
 * md's refusals. Corrupt logs: test_ppl_input.c; crash trials:
 * test_ppl_crash.c. */
#include "ppl_common.h"

static int prole_of(const struct pt *t, uint64_t stripe)
{
	struct layout_geometry g;
	pt_geom(t, &g);
	struct layout_stripe ls;
	layout_ops_for(URAID_LEVEL_RAID5)->stripe(&g, stripe, &ls);
	return ls.p_role;
}

static int drole_of(const struct pt *t, uint64_t stripe, int di)
{
	struct layout_geometry g;
	pt_geom(t, &g);
	struct layout_stripe ls;
	layout_ops_for(URAID_LEVEL_RAID5)->stripe(&g, stripe, &ls);
	return ls.data_role[di];
}

/* The partial parity of rows [r0, r1) of stripe s for a write to data
 * chunks [d0, d1]: XOR of the other chunks' rows, from the shadow. */
static void model_pp(const struct pt *t, uint64_t s, int d0, int d1, uint64_t r0, uint64_t r1,
                     uint8_t *out)
{
	int k = t->n - 1;
	uint64_t width = (uint64_t)k * t->chunk;
	memset(out, 0, (r1 - r0) * 512);
	for (int di = 0; di < k; di++) {
		if (di >= d0 && di <= d1)
			continue;
		const uint8_t *src = t->shadow + (s * width + (uint64_t)di * t->chunk + r0) * 512;
		for (uint64_t b = 0; b < (r1 - r0) * 512; b++)
			out[b] ^= src[b];
	}
}

static void log_holds_partial_parity(void)
{
	struct pt t;
	struct uraid_array *a = NULL;
	if (pt_open(&t, 4, 32, 12, &a) < 0) {
		CHECK(0);
		pt_close(&t);
		return;
	}
	pt_base(&t, &a, 0x501);
	uint64_t chunk = 32, width = 3 * chunk, rs = 0x502;
	uint8_t buf[64 * 1024], pp[16384], got[16384];
	/* Sectors 5..20 of data chunk 1 of stripe 2: rows 0..23 (4 KiB rows). */
	uint64_t s = 2, lsec = s * width + chunk + 5;
	t_fill(&rs, buf, 16 * 512);
	pt_write(a, &t, buf, 16 * 512, lsec * 512);
	int pr = prole_of(&t, s);
	struct md_ppl_header h;
	uint64_t at = 0;
	CHECK(pt_newest(&t, pr, &h, &at) >= 1);
	CHECK_EQ_U64(h.entries_count, 1);
	const struct md_ppl_entry *e = &h.entries[0];
	CHECK_EQ_U64(e->data_sector, s * width + chunk);
	CHECK_EQ_U64(e->pp_size, 24 * 512);
	CHECK_EQ_U64(e->data_size, 24 * 512);
	CHECK_EQ_U64(e->parity_disk, pr);
	uint64_t start;
	uint32_t sectors;
	CHECK(pt_area(&t, pr, &start, &sectors) == 0 && sectors == MD_PPL_AREA_SECTORS);
	CHECK(member_read(t.d[pr].mem, got, 24 * 512, (start + at + 8) * 512) == 0);
	model_pp(&t, s, 1, 1, 0, 24, pp);
	CHECK(memcmp(got, pp, 24 * 512) == 0);
	CHECK_EQ_U64(e->checksum, md_ppl_checksum(got, 24 * 512));
	uint64_t gen = h.generation;
	/* A whole stripe: an entry without partial parity. */
	t_fill(&rs, buf, width * 512);
	pt_write(a, &t, buf, width * 512, 5 * width * 512);
	int pr5 = prole_of(&t, 5);
	CHECK(pt_newest(&t, pr5, &h, &at) >= 1);
	CHECK(h.entries_count == 1 && h.entries[0].pp_size == 0 &&
	      h.entries[0].data_size == width * 512 && h.entries[0].data_sector == 5 * width &&
	      h.generation == gen + 1);
	/* A write over two chunks of a stripe: one unit per chunk, the newest
	 * holding the second (md's one-disk entries). */
	t_fill(&rs, buf, 40 * 512);
	uint64_t l7 = 7 * width + chunk - 8;
	pt_write(a, &t, buf, 40 * 512, l7 * 512);
	int pr7 = prole_of(&t, 7);
	CHECK(pt_newest(&t, pr7, &h, &at) >= 2);
	CHECK(h.entries_count == 1 && h.generation == gen + 3);
	CHECK(h.entries[0].data_sector == 7 * width + chunk && h.entries[0].pp_size == 32 * 512 &&
	      h.entries[0].data_size == 32 * 512);
	CHECK(member_read(t.d[pr7].mem, got, 32 * 512, (start + at + 8) * 512) == 0);
	model_pp(&t, 7, 1, 1, 0, 32, pp);
	CHECK(memcmp(got, pp, 32 * 512) == 0);
	/* The superblocks say what the kernel writes for a 1 MiB area. */
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.ppl == 1);
	CHECK(eng_of(a)->ref.feature_map & MD_FEATURE_MULTIPLE_PPLS);
	CHECK(uraid_stop(a) == 0);
	struct md_sb sb;
	char err[256];
	CHECK(md_sb_load(t.d[0].mem, &sb, err, sizeof(err)) == 0);
	CHECK_EQ_U64(sb.feature_map & (MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS),
	             MD_FEATURE_MULTIPLE_PPLS);
	pt_close(&t);
}

/* What the crash lost of a stripe's write. */
enum lost { DATA_LOST, PARITY_LOST, BOTH_LOST };
static const char *const lost_name[] = {"data write lost", "parity write lost", "both lost"};

/* One partial-chunk write to each of `nstripes` stripes with distinct
 * parity members (each the newest unit of its log), then the crash; a
 * member holding none of the written chunks lost after it when `degraded`
 * (or failed before the writes when `failed_before`). */
static void recovery_case(int n, uint32_t chunk, int metadata, enum lost how, bool degraded,
                          bool failed_before, bool full_stripe, uint64_t seed)
{
	struct pt t;
	struct uraid_array *a = NULL;
	if (pt_open(&t, n, chunk, metadata, &a) < 0) {
		CHECK(0);
		pt_close(&t);
		return;
	}
	pt_base(&t, &a, seed);
	int k = n - 1;
	uint64_t width = (uint64_t)k * chunk, rs = seed ^ 0x77;
	uint8_t *old = malloc(t.size);
	memcpy(old, t.shadow, t.size);
	/* Up to three stripes with distinct parity members (each write the
	 * newest unit of its log: older ones were flushed before it), each
	 * written in data chunk 0; `victim` holds none of the written chunks
	 * nor their parity. */
	int victim = drole_of(&t, 1, k - 1);
	int nst = 0;
	uint64_t stripes[TE_MAX];
	bool used[TE_MAX] = {0};
	for (uint64_t s = 1; s < 4 * (uint64_t)n && nst < 3; s++) {
		int pr = prole_of(&t, s);
		if (pr != victim && !used[pr] && (full_stripe || drole_of(&t, s, 0) != victim)) {
			used[pr] = true;
			stripes[nst++] = s;
		}
	}
	if (failed_before) {
		char who[16], err[256];
		snprintf(who, sizeof(who), "#%d", victim);
		CHECK(uraid_fail(a, who, err, sizeof(err)) == 0);
	}
	uint8_t buf[64 * 1024];
	for (int i = 0; i < nst; i++) {
		uint64_t s = stripes[i];
		uint64_t lsec = s * width + (full_stripe ? 0 : 3);
		uint64_t len = full_stripe ? width : chunk - 6;
		t_fill(&rs, buf, len * 512);
		pt_write(a, &t, buf, len * 512, lsec * 512);
	}
	uraid_drop(a); /* the power fails: superblocks say active */
	struct layout_geometry g;
	pt_geom(&t, &g);
	for (int i = 0; i < nst; i++) {
		struct layout_stripe ls;
		layout_ops_for(URAID_LEVEL_RAID5)->stripe(&g, stripes[i], &ls);
		if (how != PARITY_LOST) {
			/* data chunk 0 back as it was: so is the array */
			pt_undo(&t, ls.data_role[0], ls.sector, chunk);
			uint64_t l0 = stripes[i] * width;
			memcpy(t.shadow + l0 * 512, old + l0 * 512, chunk * 512);
		}
		if (how != DATA_LOST)
			pt_undo(&t, ls.p_role, ls.sector, chunk);
	}
	bool skip[TE_MAX] = {0};
	skip[victim] = degraded || failed_before;
	char err[512];
	if (degraded || failed_before) {
		/* Teeth: without the logs, what the missing member held is
		 * rebuilt from parity that does not match the data. */
		uint8_t(*hdr)[4096] = malloc(TE_MAX * 4096);
		pt_hide_logs(&t, hdr, true);
		CHECK(pt_assemble(&t, skip, URAID_RDONLY | URAID_FORCE, &a, NULL, 0) == 0);
		CHECKF(te_verify(a, t.shadow, t.size) != 0, "%d members, %s: no teeth", n,
		       lost_name[how]);
		uraid_drop(a);
		pt_hide_logs(&t, hdr, false);
		free(hdr);
	}
	/* Read-only (cat, serve --readonly): recovered in memory, what the
	 * read-write assembly below reads, and no member byte changed. */
	uint64_t before = pt_hash(&t);
	CHECK(pt_assemble(&t, skip, URAID_RDONLY, &a, NULL, 0) == 0);
	CHECKF(te_verify(a, t.shadow, t.size) == 0, "%d members, %s%s: read-only recovery", n,
	       lost_name[how], skip[victim] ? ", degraded" : "");
	uraid_drop(a);
	CHECKF(pt_hash(&t) == before, "%d members, %s: the read-only assembly wrote", n,
	       lost_name[how]);
	/* md starts a dirty degraded array with PPL: no --force needed. */
	int rc = pt_assemble(&t, skip, 0, &a, err, sizeof(err));
	CHECKF(rc == 0, "%d members, %s: assemble: %s", n, lost_name[how], err);
	if (rc < 0) {
		free(old);
		pt_close(&t);
		return;
	}
	struct uraid_status st;
	uraid_status(a, &st);
	CHECKF(st.ppl_recovered >= (uint64_t)nst && st.ppl_mismatches == 0 && st.clean &&
	           st.sync_action != URAID_SYNC_RESYNC,
	       "%d members, %s: recovered %llu of %d, mismatches %llu, clean %d, sync %d", n,
	       lost_name[how], (unsigned long long)st.ppl_recovered, nst,
	       (unsigned long long)st.ppl_mismatches, st.clean, st.sync_action);
	CHECKF(te_verify(a, t.shadow, t.size) == 0, "%d members, %s%s: data after the recovery", n,
	       lost_name[how], skip[victim] ? ", degraded" : "");
	if (!skip[victim]) {
		CHECKF(pt_mismatches(a) == 0, "%d members, %s: check after the recovery", n,
		       lost_name[how]);
		/* Degraded reads: the member that held none of the writes. */
		char who[16];
		snprintf(who, sizeof(who), "#%d", victim);
		CHECK(uraid_fail(a, who, err, sizeof(err)) == 0);
		CHECK(te_verify(a, t.shadow, t.size) == 0);
	}
	CHECK(uraid_stop(a) == 0);
	free(old);
	pt_close(&t);
}

static void recovery_rewrites_parity(void)
{
	for (int how = DATA_LOST; how <= BOTH_LOST; how++) {
		recovery_case(4, 32, 12, (enum lost)how, false, false, false,
		              0x610 + (uint64_t)how);
		recovery_case(5, 16, 10, (enum lost)how, false, false, false,
		              0x620 + (uint64_t)how);
		recovery_case(6, 8, 12, (enum lost)how, false, false, true, 0x630 + (uint64_t)how);
	}
}

static void write_hole_closed_when_degraded(void)
{
	recovery_case(4, 32, 12, PARITY_LOST, true, false, false, 0x640);
	recovery_case(4, 32, 10, DATA_LOST, true, false, false, 0x641);
	recovery_case(5, 16, 12, PARITY_LOST, true, false, false, 0x642);
	/* A member failed before the writes: logged all the same. */
	recovery_case(4, 32, 12, PARITY_LOST, false, true, false, 0x643);
	recovery_case(5, 16, 10, DATA_LOST, false, true, false, 0x644);
}

/* A torn entry (its partial parity fails the checksum) is skipped and,
 * as md does, the array stays dirty: the resync makes it consistent. */
static void torn_entry_means_resync(void)
{
	struct pt t;
	struct uraid_array *a = NULL;
	if (pt_open(&t, 4, 32, 12, &a) < 0) {
		CHECK(0);
		pt_close(&t);
		return;
	}
	pt_base(&t, &a, 0x650);
	uint8_t buf[4096];
	uint64_t rs = 0x651;
	t_fill(&rs, buf, sizeof(buf));
	pt_write(a, &t, buf, sizeof(buf), 96 * 512 * 2);
	uraid_drop(a);
	int pr = prole_of(&t, 2);
	struct md_ppl_header h;
	uint64_t at, start;
	uint32_t sectors;
	CHECK(pt_newest(&t, pr, &h, &at) >= 1 && pt_area(&t, pr, &start, &sectors) == 0);
	uint8_t s[512];
	CHECK(member_read(t.d[pr].mem, s, 512, (start + at + 8) * 512) == 0);
	s[100] ^= 1;
	CHECK(member_write(t.d[pr].mem, s, 512, (start + at + 8) * 512, 0) == 0);
	pt_undo(&t, pr, 2 * 32, 32); /* its parity write lost */
	CHECK(pt_assemble(&t, NULL, 0, &a, NULL, 0) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECKF(st.ppl_mismatches == 1 && !st.clean, "mismatches %llu clean %d",
	       (unsigned long long)st.ppl_mismatches, st.clean);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	CHECK_EQ_U64(pt_mismatches(a), 0); /* after the resync */
	CHECK(uraid_stop(a) == 0);
	pt_close(&t);
}

/* A clean array's log is not replayed (md recovers only a dirty one), and
 * every start begins a fresh log: empty header, zeroed area. */
static void clean_array_log_left_alone(void)
{
	struct pt t;
	struct uraid_array *a = NULL;
	if (pt_open(&t, 4, 32, 12, &a) < 0) {
		CHECK(0);
		pt_close(&t);
		return;
	}
	pt_base(&t, &a, 0x660);
	uint8_t buf[4096];
	uint64_t rs = 0x661;
	t_fill(&rs, buf, sizeof(buf));
	pt_write(a, &t, buf, sizeof(buf), 96 * 512 * 2 + 4096);
	CHECK(uraid_stop(a) == 0); /* clean; the entry stays in the log */
	int pr = prole_of(&t, 2);
	struct md_ppl_header h;
	uint64_t at;
	CHECK(pt_newest(&t, pr, &h, &at) >= 1 && h.entries_count == 1);
	/* Change the chunk the entry wrote: replaying the entry now would
	 * make the parity match it again, and check would find nothing. */
	int other = drole_of(&t, 2, 0);
	uint8_t junk[4096];
	t_fill(&rs, junk, sizeof(junk));
	CHECK(member_write(t.d[other].mem, junk, 4096, (t.doff + 2 * 32 + 8) * 512, 0) == 0);
	CHECK(pt_assemble(&t, NULL, 0, &a, NULL, 0) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.ppl_recovered == 0 && st.clean);
	CHECKF(pt_mismatches(a) > 0, "the clean array's log was replayed");
	CHECK(uraid_stop(a) == 0);
	/* Each member's log: one empty header, zeros after it. */
	for (int i = 0; i < 4; i++) {
		uint64_t start;
		uint32_t sectors;
		CHECK(pt_area(&t, i, &start, &sectors) == 0);
		CHECK(pt_newest(&t, i, &h, &at) == 1 && h.entries_count == 0 && h.generation == 0);
		uint8_t *area = malloc((size_t)sectors * 512);
		CHECK(member_read(t.d[i].mem, area, (size_t)sectors * 512, start * 512) == 0);
		int nz = 0;
		for (size_t b = 4096; b < (size_t)sectors * 512; b++)
			nz += area[b] != 0;
		CHECK_EQ_U64(nz, 0);
		free(area);
	}
	pt_close(&t);
}

/* A spare that held this very array's log (a former member) must not
 * bring it back: its log starts empty when it joins the slot. */
static void joining_member_gets_fresh_log(void)
{
	struct pt t;
	struct uraid_array *a = NULL;
	if (pt_open(&t, 4, 32, 12, &a) < 0) {
		CHECK(0);
		pt_close(&t);
		return;
	}
	pt_base(&t, &a, 0x670);
	uint8_t buf[4096];
	uint64_t rs = 0x671;
	/* Stripe 0's parity member gets entries, then leaves the array. */
	int pr = prole_of(&t, 0);
	t_fill(&rs, buf, sizeof(buf));
	pt_write(a, &t, buf, sizeof(buf), 0);
	struct md_ppl_header h;
	uint64_t at;
	CHECK(pt_newest(&t, pr, &h, &at) >= 1 && h.entries_count == 1);
	char err[256];
	CHECKF(uraid_fail(a, t.d[pr].name, err, sizeof(err)) == 0, "%s", err);
	CHECKF(uraid_remove(a, t.d[pr].name, err, sizeof(err)) == 0, "%s", err);
	/* Back as a spare (re-add refused: no bitmap): rebuilt into the slot. */
	CHECKF(uraid_add_member(a, te_borrow(&t.d[pr]), err, sizeof(err)) == 0, "%s", err);
	CHECK(pt_newest(&t, pr, &h, &at) == 1 && h.entries_count == 0);
	CHECK(te_sync_all(a) == 0);
	uraid_drop(a); /* dirty: the logs are read at the next start */
	CHECK(pt_assemble(&t, NULL, 0, &a, NULL, 0) == 0);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	CHECK_EQ_U64(pt_mismatches(a), 0);
	CHECK(uraid_stop(a) == 0);
	pt_close(&t);
}

/* Many units to one log: md's rewind to the start of the area when the
 * rest is too short; the newest is still the one recovered. */
static void log_wraps_around(void)
{
	struct pt t;
	struct uraid_array *a = NULL;
	if (pt_open(&t, 4, 32, 12, &a) < 0) {
		CHECK(0);
		pt_close(&t);
		return;
	}
	pt_base(&t, &a, 0x680);
	uint8_t buf[16384];
	uint64_t rs = 0x681, width = 96;
	int pr = prole_of(&t, 0);
	/* 16 KiB writes to one chunk of stripes with the same parity
	 * member: 40 sectors a unit, 51 fit 2048. */
	for (int w = 0; w < 130; w++) {
		uint64_t s = (uint64_t)(w % 4) * 4; /* stripes 0, 4, 8, 12: one parity member */
		t_fill(&rs, buf, sizeof(buf));
		pt_write(a, &t, buf, sizeof(buf), (s * width + (uint64_t)(w % 3) * 32) * 512);
	}
	struct md_ppl_header h;
	uint64_t at;
	int units = pt_newest(&t, pr, &h, &at);
	CHECKF(units >= 1 && units < 51 && h.generation == 130, "units %d generation %llu", units,
	       (unsigned long long)h.generation);
	uraid_drop(a);
	/* The last write (w 129: stripe 4, chunk 0) lost its parity write. */
	struct layout_geometry g;
	pt_geom(&t, &g);
	struct layout_stripe ls;
	layout_ops_for(URAID_LEVEL_RAID5)->stripe(&g, 4, &ls);
	CHECK(ls.p_role == pr);
	pt_undo(&t, pr, ls.sector, 32);
	CHECK(pt_assemble(&t, NULL, 0, &a, NULL, 0) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.ppl_recovered == 1 && st.clean);
	CHECK_EQ_U64(pt_mismatches(a), 0);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	CHECK(uraid_stop(a) == 0);
	pt_close(&t);
}

static void create_refusals(void)
{
	struct te_disk d[4];
	for (int i = 0; i < 4; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "c%d", i);
		te_disk_open(&d[i], nm, PT_MEMB);
	}
	static const struct {
		int level, metadata, journal;
		const char *word;
	} cases[] = {
	    {URAID_LEVEL_RAID6, 12, 0, "only supported for RAID level 5"},
	    {URAID_LEVEL_RAID4, 12, 0, "only supported for RAID level 5"},
	    {URAID_LEVEL_RAID1, 12, 0, "only supported for RAID level 5"},
	    {URAID_LEVEL_RAID5, 0, 0, "0.90 metadata does not support PPL"},
	    {URAID_LEVEL_RAID5, 12, 1, "--write-journal is not supported with consistency policy"},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct uraid_create_opts o;
		memset(&o, 0, sizeof(o));
		o.level = cases[c].level;
		o.raid_devices = cases[c].journal ? 3 : 4;
		o.chunk_sectors = 32;
		o.metadata = cases[c].metadata;
		o.metadata_set = true;
		o.assume_clean = true;
		o.write_journal = cases[c].journal;
		o.consistency_policy = URAID_POLICY_PPL;
		struct member *mm[4];
		for (int i = 0; i < 4; i++)
			mm[i] = te_borrow(&d[i]);
		struct uraid_array *a = NULL;
		char err[512] = "";
		int rc =
		    uraid_create_members(&o, mm, 4, URAID_NO_SYNC_THREAD, &a, err, sizeof(err));
		CHECKF(rc == -EINVAL && strstr(err, cases[c].word), "case %zu: %d %s", c, rc, err);
		if (rc == 0)
			uraid_stop(a);
	}
	for (int i = 0; i < 4; i++)
		te_disk_close(&d[i]);
}

TEST_MAIN(T(log_holds_partial_parity), T(recovery_rewrites_parity),
          T(write_hole_closed_when_degraded), T(torn_entry_means_resync),
          T(clean_array_log_left_alone), T(joining_member_gets_fresh_log), T(log_wraps_around),
          T(create_refusals))
