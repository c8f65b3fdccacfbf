/* Shared by the partial parity log tests (test_ppl*.c): a raid5 with the
 * PPL policy on in-memory members, a shadow of its contents, member
 * snapshots to undo writes with (what a crash between the log and the
 * member writes leaves), and an independent reading of a member's log: the
 * area from its superblock, md's walk (rising generations from the start),
 * the partial parity the model says each entry must hold. */
#ifndef PPL_COMMON_H
#define PPL_COMMON_H

#include "engine/core/engine.h"
#include "meta/md_ppl.h"
#include "test_engine_common.h"

#define PT_MEMB (4u << 20)

struct pt {
	struct te_disk d[TE_MAX];
	int n;
	uint32_t chunk;
	uint64_t size;
	uint8_t *shadow;
	uint8_t *snap[TE_MAX];
	uint64_t doff;
	int metadata;
};

static inline int pt_open_policy(struct pt *t, int n, uint32_t chunk, int metadata, int policy,
                                 struct uraid_array **a)
{
	memset(t, 0, sizeof(*t));
	t->n = n;
	t->chunk = chunk;
	t->metadata = metadata;
	for (int i = 0; i < n; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "p%d", i);
		te_disk_open(&t->d[i], nm, PT_MEMB);
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = URAID_LEVEL_RAID5;
	o.raid_devices = n;
	o.chunk_sectors = chunk;
	o.metadata = metadata;
	o.metadata_set = true;
	o.assume_clean = true;
	o.size_sectors = 2048;
	o.consistency_policy = policy;
	int rc = te_create(&o, t->d, n, a);
	if (rc < 0)
		return rc;
	t->size = uraid_size(*a);
	t->doff = eng_of(*a)->mem[0]->sb.data_offset;
	t->shadow = calloc(1, t->size);
	return 0;
}

static inline int pt_open(struct pt *t, int n, uint32_t chunk, int metadata, struct uraid_array **a)
{
	return pt_open_policy(t, n, chunk, metadata, URAID_POLICY_PPL, a);
}

static inline void pt_close(struct pt *t)
{
	for (int i = 0; i < t->n; i++) {
		te_disk_close(&t->d[i]);
		free(t->snap[i]);
	}
	free(t->shadow);
}

/* Assemble from every member but those with skip[i] set. */
static inline int pt_assemble(struct pt *t, const bool *skip, unsigned flags,
                              struct uraid_array **a, char *err, size_t errlen)
{
	struct member *mm[TE_MAX];
	char warn[512], e[512];
	int n = 0;
	for (int i = 0; i < t->n; i++)
		if (!skip || !skip[i])
			mm[n++] = te_borrow(&t->d[i]);
	int rc = uraid_assemble_members(mm, n, URAID_NO_SYNC_THREAD | flags, a, err ? err : e,
	                                err ? errlen : sizeof(e), warn, sizeof(warn));
	if (rc < 0 && !err)
		fprintf(stderr, "assemble: %s\n", e);
	return rc;
}

static inline void pt_write(struct uraid_array *a, struct pt *t, const uint8_t *buf, uint64_t len,
                            uint64_t off)
{
	CHECK(uraid_write(a, buf, len, off) == 0);
	memcpy(t->shadow + off, buf, len);
}

static inline void pt_snap(struct pt *t)
{
	for (int i = 0; i < t->n; i++) {
		free(t->snap[i]);
		t->snap[i] = malloc(PT_MEMB);
		CHECK(member_read(t->d[i].mem, t->snap[i], PT_MEMB, 0) == 0);
	}
}

/* Member `role`'s data sectors [msec, msec+n) as the snapshot had them. */
static inline void pt_undo(struct pt *t, int role, uint64_t msec, uint64_t n)
{
	uint64_t off = (t->doff + msec) * 512;
	CHECK(member_write(t->d[role].mem, t->snap[role] + off, n * 512, off, 0) == 0);
}

/* Fill the array, stop cleanly, reassemble, snapshot: the base state. */
static inline void pt_base(struct pt *t, struct uraid_array **a, uint64_t seed)
{
	uint64_t rs = seed;
	uint8_t *buf = malloc(t->size);
	t_fill(&rs, buf, t->size);
	pt_write(*a, t, buf, t->size, 0);
	free(buf);
	CHECK(uraid_stop(*a) == 0);
	CHECK(pt_assemble(t, NULL, 0, a, NULL, 0) == 0);
	pt_snap(t);
}

static inline uint64_t pt_mismatches(struct uraid_array *a)
{
	char err[256];
	CHECK(te_sync_all(a) == 0);
	CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
	CHECK(te_sync_all(a) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	return st.mismatch_cnt;
}

/* The raid5 geometry of the test's array (left-symmetric). */
static inline void pt_geom(const struct pt *t, struct layout_geometry *g)
{
	memset(g, 0, sizeof(*g));
	g->level = URAID_LEVEL_RAID5;
	g->layout = layout_default(URAID_LEVEL_RAID5);
	g->chunk_sectors = t->chunk;
	g->raid_disks = t->n;
	g->dev_sectors = 2048;
	for (int r = 0; r < t->n; r++)
		g->member_sectors[r] = 2048;
}

/* The PPL area of disk i: device sector and size, from its superblock. */
static inline int pt_area(const struct pt *t, int i, uint64_t *start, uint32_t *sectors)
{
	struct md_sb sb;
	char err[256];
	if (md_sb_load(t->d[i].mem, &sb, err, sizeof(err)) < 0)
		return -1;
	*start = (uint64_t)((int64_t)sb.super_offset + md_ppl_offset(&sb));
	*sectors = md_ppl_size(&sb);
	return 0;
}

/* Every member's whole device, hashed: what a read-only assembly must
 * leave as it found it. */
static inline uint64_t pt_hash(const struct pt *t)
{
	uint64_t h = 1469598103934665603ull;
	uint8_t *buf = malloc(PT_MEMB);
	for (int i = 0; i < t->n; i++) {
		CHECK(member_read(t->d[i].mem, buf, PT_MEMB, 0) == 0);
		for (size_t b = 0; b < PT_MEMB; b++)
			h = (h ^ buf[b]) * 1099511628211ull;
	}
	free(buf);
	return h;
}

/* Hide every member's log (its first header zeroed, saved in hdr) or
 * bring it back: what the array is without the partial parity log. */
static inline void pt_hide_logs(const struct pt *t, uint8_t (*hdr)[4096], bool hide)
{
	for (int i = 0; i < t->n; i++) {
		uint64_t start;
		uint32_t sectors;
		if (pt_area(t, i, &start, &sectors) < 0)
			continue;
		if (hide) {
			uint8_t zero[4096] = {0};
			CHECK(member_read(t->d[i].mem, hdr[i], 4096, start * 512) == 0);
			CHECK(member_write(t->d[i].mem, zero, 4096, start * 512, 0) == 0);
		} else {
			CHECK(member_write(t->d[i].mem, hdr[i], 4096, start * 512, 0) == 0);
		}
	}
}

/* md's walk of disk i's log: the newest header (h) and its sector (*at);
 * the number of valid units walked, 0 when none. */
static inline int pt_newest(const struct pt *t, int i, struct md_ppl_header *h, uint64_t *at)
{
	uint64_t start;
	uint32_t sectors;
	if (pt_area(t, i, &start, &sectors) < 0)
		return 0;
	uint8_t blk[4096];
	struct md_ppl_header *cur = malloc(sizeof(*cur));
	uint64_t pos = 0;
	int n = 0;
	while (pos + 8 < sectors) {
		if (member_read(t->d[i].mem, blk, 4096, (start + pos) * 512) < 0 ||
		    md_ppl_decode(blk, cur, NULL, 0) != 0 || (n && cur->generation < h->generation))
			break;
		*h = *cur;
		*at = pos;
		n++;
		pos += 8;
		for (uint32_t e = 0; e < cur->entries_count; e++)
			pos += cur->entries[e].pp_size / 512;
	}
	free(cur);
	return n;
}

#endif
