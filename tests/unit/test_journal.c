/* Write journal in the engine: writes logged, then their member writes
 * undone (the members' data areas put back as they were before) — exactly
 * what a crash between the log and the member writes leaves — or only their
 * parity writes undone (the data reached the members, P and Q did not).
 * Assembly must replay the log so every write is back and parity agrees:
 * check 0, and the data rebuilt from parity with data members failed after
 * the replay, or missing at it, is what was written; a torn
 * last unit, a bad meta checksum and a seq gap end the replay where md ends
 * it. Also: a hand-made log, the journal missing (writes refused) and added
 * again, raid6, and member images exported for the real kernel
 * (URAID_JOURNAL_EXPORT=DIR, used by tests/integration/journal_mdvm.sh). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/engine.h"
#include "meta/md_journal.h"
#include "test_engine_common.h"
#include "sim/member_fault.h"

/* The journal's units from the tail on: position, seq, pages. */
struct unit {
	uint64_t pos, seq, pages;
};

#define MEMB  (4u << 20)
#define JBYTE (8u << 20) /* the log of a test's writes fits: no reclaim */

struct jt {
	struct te_disk d[TE_MAX];
	int nraid; /* raid members d[0..nraid-1], journal d[nraid] */
	uint64_t size;
	uint8_t *shadow;
	uint8_t *snap[TE_MAX]; /* raid members' images before the undone writes */
	uint64_t doff;         /* data offset (sectors) */
};

static int jt_open(struct jt *t, int level, int nraid, uint32_t chunk, struct uraid_array **a)
{
	memset(t, 0, sizeof(*t));
	t->nraid = nraid;
	for (int i = 0; i <= nraid; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), i == nraid ? "jrnl" : "m%d", i);
		te_disk_open(&t->d[i], nm, i == nraid ? JBYTE : MEMB);
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = level;
	o.raid_devices = nraid;
	o.chunk_sectors = chunk;
	o.assume_clean = true;
	o.size_sectors = 2048;
	o.write_journal = true;
	int rc = te_create(&o, t->d, nraid + 1, a);
	if (rc < 0)
		return rc;
	t->size = uraid_size(*a);
	t->doff = eng_of(*a)->mem[0]->sb.data_offset;
	t->shadow = calloc(1, t->size);
	return 0;
}

static void jt_close(struct jt *t)
{
	for (int i = 0; i <= t->nraid; i++) {
		te_disk_close(&t->d[i]);
		free(t->snap[i]);
	}
	free(t->shadow);
}

/* Assemble without the raid members below `nskip` (d[0..nskip-1]). */
static int jt_assemble_without(struct jt *t, int nskip, bool with_journal, unsigned flags,
                               struct uraid_array **a)
{
	struct member *mm[TE_MAX];
	char err[512], warn[512];
	int n = 0;
	for (int i = nskip; i < t->nraid + (with_journal ? 1 : 0); i++)
		mm[n++] = te_borrow(&t->d[i]);
	int rc = uraid_assemble_members(mm, n, URAID_NO_SYNC_THREAD | flags, a, err, sizeof(err),
	                                warn, sizeof(warn));
	if (rc < 0)
		fprintf(stderr, "assemble: %s\n", err);
	return rc;
}

static int jt_assemble(struct jt *t, bool with_journal, unsigned flags, struct uraid_array **a)
{
	return jt_assemble_without(t, 0, with_journal, flags, a);
}

/* FNV-1a over every member image, the journal too. */
static uint64_t jt_images_hash(struct jt *t)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint8_t *buf = malloc(JBYTE);
	for (int i = 0; buf && i <= t->nraid; i++) {
		uint64_t len = i == t->nraid ? JBYTE : MEMB;
		CHECK(member_read(t->d[i].mem, buf, len, 0) == 0);
		for (uint64_t k = 0; k < len; k++)
			h = (h ^ buf[k]) * 0x100000001b3ull;
	}
	free(buf);
	return h;
}

static void snap_members(struct jt *t)
{
	for (int i = 0; i < t->nraid; i++) {
		free(t->snap[i]);
		t->snap[i] = malloc(MEMB);
		CHECK(member_read(t->d[i].mem, t->snap[i], MEMB, 0) == 0);
	}
}

/* Put the raid members' data areas back (superblocks stay current). */
static void undo_member_writes(struct jt *t)
{
	uint64_t off = t->doff * 512;
	for (int i = 0; i < t->nraid; i++)
		CHECK(member_write(t->d[i].mem, t->snap[i] + off, MEMB - off, off, 0) == 0);
}

/* Put only the members' P (and Q) chunks back: the data writes reached
 * the members, the parity writes did not. */
static void undo_parity_writes(struct jt *t, const struct uraid_status *st)
{
	struct layout_geometry g;
	te_geom(st, &g);
	const struct layout_ops *ops = layout_ops_for(g.level);
	struct layout_stripe ls;
	ops->stripe(&g, 0, &ls);
	uint64_t chunk = g.chunk_sectors, n = st->array_sectors / ((uint64_t)ls.ndata * chunk);
	for (uint64_t s = 0; s < n; s++) {
		ops->stripe(&g, s, &ls);
		int par[2] = {ls.p_role, ls.q_role};
		for (int i = 0; i < 2 && par[i] >= 0; i++) {
			uint64_t off = (t->doff + ls.sector) * 512;
			CHECK(member_write(t->d[par[i]].mem, t->snap[par[i]] + off, chunk * 512,
			                   off, 0) == 0);
		}
	}
}

static void jt_write(struct uraid_array *a, struct jt *t, const uint8_t *buf, uint64_t len,
                     uint64_t off)
{
	CHECK(uraid_write(a, buf, len, off) == 0);
	memcpy(t->shadow + off, buf, len);
}

static uint64_t check_mismatches(struct uraid_array *a)
{
	char err[256];
	CHECK(te_sync_all(a) == 0); /* whatever sync is pending first */
	CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
	CHECK(te_sync_all(a) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	return st.mismatch_cnt;
}

/* Fill the array, stop cleanly, reassemble, snapshot: the base state. */
static void base_state(struct jt *t, struct uraid_array **a, uint64_t seed)
{
	uint64_t rs = seed;
	uint8_t *buf = malloc(t->size);
	t_fill(&rs, buf, t->size);
	jt_write(*a, t, buf, t->size, 0);
	free(buf);
	CHECK(uraid_stop(*a) == 0);
	CHECK(jt_assemble(t, true, 0, a) == 0);
	snap_members(t);
}

static void random_writes(struct uraid_array *a, struct jt *t, uint64_t seed, int n)
{
	uint64_t rs = seed;
	uint8_t *buf = malloc(128 * 512);
	uint64_t secs = t->size / 512;
	for (int w = 0; w < n; w++) {
		uint64_t ns = 1 + t_rand(&rs) % (t_rand(&rs) % 3 ? 16 : 128);
		uint64_t ls = t_rand(&rs) % (secs - ns + 1);
		t_fill(&rs, buf, ns * 512);
		jt_write(a, t, buf, ns * 512, ls * 512);
	}
	free(buf);
}

static int list_units(struct jt *t, struct unit *u, int max, uint32_t *seed);

/* What the crash left on the members: none of the logged writes, or their
 * data without their parity; PARITY_LOST_DEGRADED also loses data members
 * (one; raid6 two) before the replay, so what is rebuilt of them comes from
 * the parity the replay wrote. */
enum crash_kind { ALL_LOST, PARITY_LOST, PARITY_LOST_DEGRADED };
static const char *const crash_name[] = {"all member writes lost", "parity writes lost",
                                         "parity writes lost, members missing"};

static void replay_case(int level, int nraid, uint32_t chunk, uint64_t seed, enum crash_kind how)
{
	struct jt t;
	struct uraid_array *a = NULL;
	if (jt_open(&t, level, nraid, chunk, &a) < 0) {
		CHECK(0);
		jt_close(&t);
		return;
	}
	int nlose = level == URAID_LEVEL_RAID6 ? 2 : 1;
	base_state(&t, &a, seed);
	random_writes(a, &t, seed + 1, 60);
	struct uraid_status st;
	uraid_status(a, &st);
	uraid_drop(a); /* crash: the superblocks say active */
	if (how == ALL_LOST)
		undo_member_writes(&t);
	else
		undo_parity_writes(&t, &st);
	/* The whole history since the snapshot is in the log (no reclaim). */
	struct unit u[256];
	uint32_t seed32;
	CHECK(list_units(&t, u, 256, &seed32) > 60);
	/* Teeth: without the log (the journal left out) the members hold the
	 * old data, or, with the data members d0.. missing, their data
	 * rebuilt from stale parity is wrong. */
	int skip = how == ALL_LOST ? 0 : nlose;
	CHECK(jt_assemble_without(&t, skip, false, URAID_RDONLY, &a) == 0);
	CHECKF(te_verify(a, t.shadow, t.size) != 0, "raid%d/%d, %s: no teeth", level, nraid,
	       crash_name[how]);
	uraid_drop(a);
	/* A read-only assembly replays the log in memory: everything written
	 * reads back, and not one byte of any member (the journal too) moved. */
	uint64_t before = jt_images_hash(&t);
	CHECK(jt_assemble_without(&t, skip, true, URAID_RDONLY, &a) == 0);
	CHECKF(te_verify(a, t.shadow, t.size) == 0, "raid%d/%d, %s: read-only replay in memory",
	       level, nraid, crash_name[how]);
	uraid_drop(a);
	CHECKF(jt_images_hash(&t) == before, "raid%d/%d, %s: the read-only replay wrote a member",
	       level, nraid, crash_name[how]);
	if (how == PARITY_LOST_DEGRADED) {
		CHECK(jt_assemble_without(&t, nlose, true, 0, &a) == 0);
		CHECKF(te_verify(a, t.shadow, t.size) == 0,
		       "raid%d/%d, %s: members rebuilt from the replayed parity", level, nraid,
		       crash_name[how]);
		CHECK(uraid_stop(a) == 0);
		jt_close(&t);
		return;
	}
	CHECK(jt_assemble(&t, true, 0, &a) == 0);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	uint64_t mis = check_mismatches(a);
	CHECKF(mis == 0, "raid%d/%d, %s: check after the replay: %llu mismatches", level, nraid,
	       crash_name[how], (unsigned long long)mis);
	/* And a clean restart after that replays nothing new. */
	CHECK(uraid_stop(a) == 0);
	CHECK(jt_assemble(&t, true, 0, &a) == 0);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	/* The replayed stripes read degraded: data members failed. */
	char err[256];
	for (int i = 0; i < nlose; i++) {
		char who[16];
		snprintf(who, sizeof(who), "#%d", i);
		CHECKF(uraid_fail(a, who, err, sizeof(err)) == 0, "fail %s: %s", who, err);
	}
	CHECKF(te_verify(a, t.shadow, t.size) == 0, "raid%d/%d, %s: degraded read after the replay",
	       level, nraid, crash_name[how]);
	CHECK(uraid_stop(a) == 0);
	jt_close(&t);
}

static void replay_cases(int level, int nraid, uint32_t chunk, uint64_t seed)
{
	replay_case(level, nraid, chunk, seed, ALL_LOST);
	replay_case(level, nraid, chunk, seed, PARITY_LOST);
	replay_case(level, nraid, chunk, seed, PARITY_LOST_DEGRADED);
}

static void raid5_replay_after_crash(void)
{
	replay_cases(URAID_LEVEL_RAID5, 3, 16, 0x1a1);
	replay_cases(URAID_LEVEL_RAID5, 4, 128, 0x1a2);
	replay_cases(URAID_LEVEL_RAID5, 5, 16, 0x1a5); /* wide: small writes are rmw */
}

static void raid6_replay_after_crash(void)
{
	replay_cases(URAID_LEVEL_RAID6, 5, 16, 0x1a3);
}

static void raid4_replay_after_crash(void)
{
	replay_cases(URAID_LEVEL_RAID4, 4, 32, 0x1a4);
}

static int list_units(struct jt *t, struct unit *u, int max, uint32_t *seed)
{
	struct md_sb sb;
	char err[256];
	CHECK(md_sb_load(t->d[t->nraid].mem, &sb, err, sizeof(err)) == 0);
	*seed = mdj_uuid_seed(sb.set_uuid);
	uint64_t ring = sb.data_size / 8 * 8, pos = sb.recovery_offset;
	uint8_t blk[4096];
	struct mdj_meta *m = calloc(1, sizeof(*m));
	int n = 0;
	uint64_t seq = 0;
	while (n < max) {
		if (member_read(t->d[t->nraid].mem, blk, 4096, (sb.data_offset + pos) * 512) < 0)
			break;
		if (mdj_decode(blk, *seed, m, NULL, 0) < 0 || m->position != pos ||
		    (n && m->seq != seq))
			break;
		u[n].pos = pos;
		u[n].seq = m->seq;
		u[n].pages = mdj_pages(m);
		seq = m->seq + 1;
		pos = (pos + 8 + u[n].pages * 8) % ring;
		n++;
	}
	free(m);
	return n;
}

enum damage { TORN_PAGE, BAD_META, SEQ_GAP };

/* Aligned 4 KiB writes to distinct pages: one log unit each, so the
 * damaged unit decides exactly which writes come back. */
static void damaged_log(enum damage how)
{
	struct jt t;
	struct uraid_array *a = NULL;
	if (jt_open(&t, URAID_LEVEL_RAID5, 3, 16, &a) < 0) {
		CHECK(0);
		jt_close(&t);
		return;
	}
	base_state(&t, &a, 0x2b0 + (uint64_t)how);
	uint8_t *old = malloc(t.size);
	memcpy(old, t.shadow, t.size);
	uint64_t rs = 0x2b1 + (uint64_t)how, pages = t.size / 4096;
	enum { NW = 12 };
	uint64_t at[NW];
	uint8_t buf[4096];
	for (int w = 0; w < NW; w++) {
		bool dup;
		do {
			at[w] = t_rand(&rs) % pages;
			dup = false;
			for (int x = 0; x < w; x++)
				dup |= at[x] == at[w];
		} while (dup);
		t_fill(&rs, buf, 4096);
		jt_write(a, &t, buf, 4096, at[w] * 4096);
	}
	uraid_drop(a);
	undo_member_writes(&t);
	struct unit u[64];
	uint32_t seed;
	int n = list_units(&t, u, 64, &seed);
	/* the tail's empty block, then one unit per write */
	CHECKF(n == NW + 1, "%d units", n);
	int cut = how == TORN_PAGE ? NW : 1 + NW / 2; /* first unit not replayed */
	if (n == NW + 1) {
		struct member *jm = t.d[t.nraid].mem;
		uint64_t base = t.doff * 512;
		uint8_t blk[4096];
		struct mdj_meta *m = calloc(1, sizeof(*m));
		if (how == TORN_PAGE) { /* the last unit's data page never made it */
			CHECK(member_read(jm, blk, 512, base + (u[cut].pos + 8) * 512) == 0);
			blk[7] ^= 0x40;
			CHECK(member_write(jm, blk, 512, base + (u[cut].pos + 8) * 512, 0) == 0);
		} else {
			CHECK(member_read(jm, blk, 4096, base + u[cut].pos * 512) == 0);
			if (how == BAD_META) {
				blk[2000] ^= 1;
			} else {
				CHECK(mdj_decode(blk, seed, m, NULL, 0) == 0);
				m->seq += 1;
				mdj_encode(m, seed, blk);
			}
			CHECK(member_write(jm, blk, 4096, base + u[cut].pos * 512, 0) == 0);
		}
		free(m);
	}
	/* Expected: writes before the cut are back, the rest hold old data. */
	for (int w = cut - 1; w < NW; w++)
		memcpy(t.shadow + at[w] * 4096, old + at[w] * 4096, 4096);
	CHECK(jt_assemble(&t, true, 0, &a) == 0);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	CHECK_EQ_U64(check_mismatches(a), 0);
	CHECK(uraid_stop(a) == 0);
	free(old);
	jt_close(&t);
}

static void torn_last_unit_ignored(void)
{
	damaged_log(TORN_PAGE);
}
static void bad_meta_checksum_stops_replay(void)
{
	damaged_log(BAD_META);
}
static void seq_gap_stops_replay(void)
{
	damaged_log(SEQ_GAP);
}

/* A log unit written here by hand: one data page and its row's parity
 * (computed here as data XOR the other data page of that row, raid5
 * left-symmetric with 2 data members). */
static void hand_made_log_replayed(void)
{
	struct jt t;
	struct uraid_array *a = NULL;
	if (jt_open(&t, URAID_LEVEL_RAID5, 3, 16, &a) < 0) {
		CHECK(0);
		jt_close(&t);
		return;
	}
	base_state(&t, &a, 0x3c0);
	CHECK(uraid_stop(a) == 0);
	uint64_t chunk = 16, lsec = 2 * chunk * 5 + 8; /* stripe 5, data 0, row 8 */
	uint64_t other = lsec + chunk;                 /* data 1 of the same row */
	uint8_t d[4096], p[4096];
	uint64_t rs = 0x3c1;
	t_fill(&rs, d, 4096);
	for (int i = 0; i < 4096; i++)
		p[i] = d[i] ^ t.shadow[other * 512 + (uint64_t)i];
	struct md_sb sb;
	char err[256];
	struct member *jm = t.d[t.nraid].mem;
	CHECK(md_sb_load(jm, &sb, err, sizeof(err)) == 0);
	uint32_t seed = mdj_uuid_seed(sb.set_uuid);
	uint8_t blk[4096];
	struct mdj_meta *m = calloc(1, sizeof(*m));
	uint64_t tail = sb.recovery_offset, base = (sb.data_offset + tail) * 512;
	CHECK(member_read(jm, blk, 4096, base) == 0);
	CHECK(mdj_decode(blk, seed, m, NULL, 0) == 0); /* the tail's (empty) block */
	uint64_t s = m->seq;
	mdj_init(m, s, tail);
	CHECK(mdj_add_data(m, lsec, md_crc32c(seed, d, 4096)) == 0);
	CHECK(mdj_add_parity(m, 5 * chunk + 8, md_crc32c(seed, p, 4096), 0, false) == 0);
	mdj_encode(m, seed, blk);
	CHECK(member_write(jm, blk, 4096, base, 0) == 0);
	CHECK(member_write(jm, d, 4096, base + 4096, 0) == 0);
	CHECK(member_write(jm, p, 4096, base + 8192, 0) == 0);
	free(m);
	memcpy(t.shadow + lsec * 512, d, 4096);
	CHECK(jt_assemble(&t, true, 0, &a) == 0);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	CHECK_EQ_U64(check_mismatches(a), 0);
	CHECK(uraid_stop(a) == 0);
	jt_close(&t);
}

static void missing_journal_refuses_writes_until_added(void)
{
	struct jt t;
	struct uraid_array *a = NULL;
	if (jt_open(&t, URAID_LEVEL_RAID5, 3, 16, &a) < 0) {
		CHECK(0);
		jt_close(&t);
		return;
	}
	base_state(&t, &a, 0x4d0);
	CHECK(uraid_stop(a) == 0);
	CHECK(jt_assemble(&t, false, 0, &a) == 0);
	uint8_t buf[4096];
	memset(buf, 0x5a, sizeof(buf));
	CHECK(uraid_write(a, buf, 4096, 0) == -EROFS);
	CHECK(te_verify(a, t.shadow, t.size) == 0); /* reads still work */
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.journal == 2);
	/* A new journal on a fresh disk: writes work again. */
	struct te_disk nj = {0};
	te_disk_open(&nj, "newj", JBYTE);
	char err[256];
	int rc = uraid_journal_add_member(a, te_borrow(&nj), err, sizeof(err));
	CHECKF(rc == 0, "%s", err);
	jt_write(a, &t, buf, 4096, 8192);
	uraid_status(a, &st);
	CHECK(st.journal == 1);
	/* A second journal is refused. */
	struct te_disk nj2 = {0};
	te_disk_open(&nj2, "newj2", JBYTE);
	CHECK(uraid_journal_add_member(a, te_borrow(&nj2), err, sizeof(err)) == -EBUSY);
	uraid_drop(a);
	/* The new journal is the one the array knows; the old one is left out. */
	te_disk_close(&t.d[t.nraid]);
	t.d[t.nraid] = nj;
	CHECK(jt_assemble(&t, true, 0, &a) == 0);
	uraid_status(a, &st);
	CHECK(st.journal == 1);
	jt_write(a, &t, buf, 4096, 16384);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	CHECK_EQ_U64(check_mismatches(a), 0);
	CHECK(uraid_stop(a) == 0);
	te_disk_close(&nj2);
	jt_close(&t);
}

static void journal_write_error_refuses_writes(void)
{
	struct jt t;
	struct uraid_array *a = NULL;
	if (jt_open(&t, URAID_LEVEL_RAID5, 3, 16, &a) < 0) {
		CHECK(0);
		jt_close(&t);
		return;
	}
	uint8_t buf[4096];
	memset(buf, 0x77, sizeof(buf));
	jt_write(a, &t, buf, 4096, 0);
	struct member_fault_rule r = {.op = MEMBER_OP_WRITE, .error = EIO};
	CHECK(member_fault_add(t.d[t.nraid].fault, &r) == 0);
	memset(buf, 0x78, sizeof(buf));
	CHECK(uraid_write(a, buf, 4096, 4096) == -EROFS);
	CHECK(uraid_write(a, buf, 4096, 8192) == -EROFS);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.journal == 2);
	/* Nothing of the refused writes reached the array. */
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	CHECK(uraid_stop(a) == 0);
	jt_close(&t);
}

/* Write-back, then the journal dies: new writes are refused, but what was
 * acknowledged from the cache still reaches the members at stop. */
static void write_back_journal_failure_keeps_acked_data(void)
{
	struct jt t;
	struct uraid_array *a = NULL;
	if (jt_open(&t, URAID_LEVEL_RAID5, 3, 16, &a) < 0) {
		CHECK(0);
		jt_close(&t);
		return;
	}
	char err[256];
	CHECKF(uraid_journal_mode(a, URAID_JOURNAL_WB, err, sizeof(err)) == 0, "%s", err);
	random_writes(a, &t, 0x8b0, 20);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.journal_cached > 0);
	struct member_fault_rule r = {.op = MEMBER_OP_WRITE, .error = EIO};
	CHECK(member_fault_add(t.d[t.nraid].fault, &r) == 0);
	uint8_t buf[4096];
	memset(buf, 0x99, sizeof(buf));
	CHECK(uraid_write(a, buf, 4096, 0) == -EROFS);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	uraid_stop(a); /* the journal's superblock cannot be written: may fail */
	CHECK(jt_assemble(&t, false, URAID_RDONLY, &a) == 0);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	uraid_drop(a);
	jt_close(&t);
}

/* Write-back: acknowledged writes live in the log and the cache only; a
 * crash must not lose them (replay writes the data-only rows through the
 * array), reads before the crash see the cache. */
static void write_back_survives_crash(void)
{
	struct jt t;
	struct uraid_array *a = NULL;
	if (jt_open(&t, URAID_LEVEL_RAID5, 4, 16, &a) < 0) {
		CHECK(0);
		jt_close(&t);
		return;
	}
	base_state(&t, &a, 0x6f0);
	char err[256];
	CHECKF(uraid_journal_mode(a, URAID_JOURNAL_WB, err, sizeof(err)) == 0, "%s", err);
	uint64_t rs = 0x6f1;
	uint8_t buf[8 * 512];
	uint64_t secs = t.size / 512;
	for (int w = 0; w < 24; w++) {
		uint64_t ns = 1 + t_rand(&rs) % 8, ls = t_rand(&rs) % (secs - ns + 1);
		t_fill(&rs, buf, ns * 512);
		jt_write(a, &t, buf, ns * 512, ls * 512);
		if (w % 8 == 7)
			CHECK(te_verify(a, t.shadow, t.size) == 0); /* the cache is read */
	}
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.journal_mode == URAID_JOURNAL_WB && st.journal_cached > 0);
	uraid_drop(a); /* the cached pages never reached the members */
	CHECK(jt_assemble(&t, false, URAID_RDONLY, &a) == 0);
	CHECK(te_verify(a, t.shadow, t.size) != 0); /* teeth: the members alone */
	uraid_drop(a);
	uint64_t before = jt_images_hash(&t);
	CHECK(jt_assemble(&t, true, URAID_RDONLY, &a) == 0);
	CHECK(te_verify(a, t.shadow, t.size) == 0); /* replayed in memory */
	uraid_drop(a);
	CHECK(jt_images_hash(&t) == before);
	CHECK(jt_assemble(&t, true, 0, &a) == 0);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	CHECK_EQ_U64(check_mismatches(a), 0);
	/* Write-back again, then a clean stop writes the cache out. */
	CHECKF(uraid_journal_mode(a, URAID_JOURNAL_WB, err, sizeof(err)) == 0, "%s", err);
	random_writes(a, &t, 0x6f2, 80);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	CHECK(uraid_stop(a) == 0);
	CHECK(jt_assemble(&t, true, URAID_RDONLY, &a) == 0);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	uraid_drop(a);
	jt_close(&t);
}

/* Write-back from several threads at once (the parallel path): each
 * thread owns pages, writes and reads them back; after a crash everything
 * acknowledged is replayed. */
struct wb_thr {
	struct uraid_array *a;
	uint8_t *shadow;
	uint64_t pages, first, step;
	uint64_t seed;
	int bad;
};

static void *wb_thread(void *arg)
{
	struct wb_thr *w = arg;
	uint64_t rs = w->seed;
	uint8_t buf[16384], back[16384];
	for (int i = 0; i < 300; i++) {
		uint64_t n = 1 + t_rand(&rs) % 4;
		uint64_t p = w->first + w->step * (t_rand(&rs) % (w->pages / w->step - 4));
		/* only this thread's pages: p, p+step, ... are not contiguous, so
		 * one page per request when step > 1 */
		if (w->step > 1)
			n = 1;
		t_fill(&rs, buf, n * 4096);
		if (uraid_write(w->a, buf, n * 4096, p * 4096) != 0) {
			w->bad++;
			continue;
		}
		memcpy(w->shadow + p * 4096, buf, n * 4096);
		if (uraid_read(w->a, back, n * 4096, p * 4096) != 0 || memcmp(back, buf, n * 4096))
			w->bad++;
	}
	return NULL;
}

static void write_back_parallel_writers(void)
{
	struct jt t;
	struct uraid_array *a = NULL;
	if (jt_open(&t, URAID_LEVEL_RAID5, 4, 16, &a) < 0) {
		CHECK(0);
		jt_close(&t);
		return;
	}
	base_state(&t, &a, 0x7a0);
	char err[256];
	CHECKF(uraid_journal_mode(a, URAID_JOURNAL_WB, err, sizeof(err)) == 0, "%s", err);
	uint8_t one[4096] = {1};
	jt_write(a, &t, one, 4096, 0); /* marks the array active: the parallel path */
	enum { NT = 4 };
	struct wb_thr w[NT];
	pthread_t th[NT];
	for (int i = 0; i < NT; i++) {
		w[i] = (struct wb_thr){.a = a,
		                       .shadow = t.shadow,
		                       .pages = t.size / 4096,
		                       .first = 1 + (uint64_t)i,
		                       .step = NT,
		                       .seed = 0x7a1 + (uint64_t)i};
		pthread_create(&th[i], NULL, wb_thread, &w[i]);
	}
	for (int i = 0; i < NT; i++) {
		pthread_join(th[i], NULL);
		CHECK_EQ_U64(w[i].bad, 0);
	}
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	uraid_drop(a);
	CHECK(jt_assemble(&t, true, 0, &a) == 0);
	CHECK(te_verify(a, t.shadow, t.size) == 0);
	CHECK_EQ_U64(check_mismatches(a), 0);
	CHECK(uraid_stop(a) == 0);
	jt_close(&t);
}

/* Member images for the kernel, in DIR/u and DIR/c: journal_mdvm.sh
 * assembles them in md. u: writes logged but their member writes undone
 * (md must replay the log); c: written through the journal in
 * write-through and write-back and stopped cleanly. */
static void export_set(struct jt *t, const char *dir)
{
	uint8_t *img = malloc(JBYTE > MEMB ? JBYTE : MEMB);
	for (int i = 0; i <= t->nraid; i++) {
		uint64_t sz = i == t->nraid ? JBYTE : MEMB;
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", dir, i == t->nraid ? "j" : t->d[i].name);
		CHECK(member_read(t->d[i].mem, img, sz, 0) == 0);
		FILE *f = fopen(path, "wb");
		CHECK(f && fwrite(img, 1, sz, f) == sz);
		if (f)
			fclose(f);
	}
	char path[512];
	snprintf(path, sizeof(path), "%s/expected", dir);
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(t->shadow, 1, t->size, f) == t->size);
	if (f)
		fclose(f);
	free(img);
}

static void export_for_kernel(void)
{
	const char *dir = getenv("URAID_JOURNAL_EXPORT");
	if (!dir || !*dir)
		return;
	char sub[512];
	struct jt t;
	struct uraid_array *a = NULL;
	if (jt_open(&t, URAID_LEVEL_RAID5, 3, 128, &a) < 0) {
		CHECK(0);
		jt_close(&t);
		return;
	}
	base_state(&t, &a, 0x5e0);
	random_writes(a, &t, 0x5e1, 40);
	/* and a few write-back writes: data-only units md must write back */
	char err[256];
	CHECKF(uraid_journal_mode(a, URAID_JOURNAL_WB, err, sizeof(err)) == 0, "%s", err);
	uint64_t rs = 0x5e4;
	uint8_t buf[8 * 512];
	for (int w = 0; w < 12; w++) {
		uint64_t ns = 1 + t_rand(&rs) % 8, ls = t_rand(&rs) % (t.size / 512 - ns + 1);
		t_fill(&rs, buf, ns * 512);
		jt_write(a, &t, buf, ns * 512, ls * 512);
	}
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.journal_cached > 0);
	uraid_drop(a);
	undo_member_writes(&t);
	/* Everything since the snapshot is still in the log (no reclaim). */
	struct unit u[256];
	uint32_t seed32;
	CHECK(list_units(&t, u, 256, &seed32) > 52);
	snprintf(sub, sizeof(sub), "%s/u", dir);
	export_set(&t, sub);
	jt_close(&t);

	if (jt_open(&t, URAID_LEVEL_RAID5, 3, 128, &a) < 0) {
		CHECK(0);
		jt_close(&t);
		return;
	}
	random_writes(a, &t, 0x5e2, 30);
	CHECKF(uraid_journal_mode(a, URAID_JOURNAL_WB, err, sizeof(err)) == 0, "%s", err);
	random_writes(a, &t, 0x5e3, 30);
	CHECK(uraid_stop(a) == 0);
	snprintf(sub, sizeof(sub), "%s/c", dir);
	export_set(&t, sub);
	jt_close(&t);
}

TEST_MAIN(T(raid5_replay_after_crash), T(raid6_replay_after_crash), T(raid4_replay_after_crash),
          T(torn_last_unit_ignored), T(bad_meta_checksum_stops_replay), T(seq_gap_stops_replay),
          T(hand_made_log_replayed), T(missing_journal_refuses_writes_until_added),
          T(journal_write_error_refuses_writes), T(write_back_survives_crash),
          T(write_back_parallel_writers), T(write_back_journal_failure_keeps_acked_data),
          T(export_for_kernel))
