/* uraid probe on sets no signature describes: a raw raid0 (no file system,
 * partition table or LVM label) whose chunk and order must come from the
 * continuity of its content, laid out here by a plain model (logical chunk
 * i on member i mod N at row i / N); random members that must give nothing
 * convincing; raid5 rotations the XOR cannot tell apart, told by the data
 * chunks' continuity; ties between candidates that read differently, and
 * candidates that read the same merged into one. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../harness.h"
#include "layout/layout.h"
#include "probe/probe.h"
#include "uraid.h"

#define MAXM 8

struct set {
	int n;
	uint64_t size;
	uint8_t *m[MAXM];
	int perm[MAXM]; /* probe input i = model member perm[i] */
};

static int mem_read(void *ctx, int member, void *buf, size_t len, uint64_t off)
{
	struct set *s = ctx;
	if (off + len > s->size)
		return -EIO;
	memcpy(buf, s->m[s->perm[member]] + off, len);
	return 0;
}

/* A volume of "files" of a few KiB to ~100 KiB, each of one kind: text
 * lines over an alphabet of its own, CSV digits, zeros, random bytes (a
 * compressed file), small binary values, UTF-16-like text. */
static void make_content(uint8_t *v, uint64_t bytes, uint64_t seed)
{
	uint64_t st = seed;
	uint64_t at = 0;
	while (at < bytes) {
		uint64_t len = 4096 + t_rand(&st) % (96 * 1024);
		if (len > bytes - at)
			len = bytes - at;
		int kind = (int)(t_rand(&st) % 6);
		uint8_t base = (uint8_t)('a' + t_rand(&st) % 10);
		for (uint64_t i = 0; i < len; i++) {
			uint8_t *p = v + at + i, x = (uint8_t)t_rand(&st);
			switch (kind) {
			case 0:
				*p = x % 23 == 0  ? '\n'
				     : x % 7 == 0 ? ' '
				                  : (uint8_t)(base + x % 12);
				break;
			case 1:
				*p = x % 9 == 0    ? ','
				     : x % 31 == 0 ? '\n'
				                   : (uint8_t)('0' + x % 10);
				break;
			case 2: *p = 0; break;
			case 3: *p = x; break;
			case 4: *p = x % 3 ? 0 : (uint8_t)(x & 7); break;
			default: *p = i & 1 ? 0 : (uint8_t)(0xC0 + x % 40); break;
			}
		}
		at += len;
	}
}

/* n members of raid0 (chunk bytes) holding vol after doff bytes, shuffled. */
static uint8_t *raid0_set(struct set *s, int n, uint32_t chunk, uint64_t doff, uint64_t msize,
                          uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	s->size = doff + msize;
	uint64_t vb = msize * (uint64_t)n;
	uint8_t *vol = malloc(vb);
	make_content(vol, vb, seed);
	for (int i = 0; i < n; i++)
		s->m[i] = calloc(1, s->size);
	for (uint64_t c = 0; c < vb / chunk; c++)
		memcpy(s->m[c % (uint64_t)n] + doff + c / (uint64_t)n * chunk, vol + c * chunk,
		       chunk);
	for (int i = 0; i < n; i++)
		s->perm[i] = i;
	uint64_t st = seed * 13 + 5;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(t_rand(&st) % (uint64_t)(i + 1)), t = s->perm[i];
		s->perm[i] = s->perm[j];
		s->perm[j] = t;
	}
	return vol;
}

static void set_free(struct set *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->m[i]);
}

static struct probe_input input_of(struct set *s)
{
	struct probe_input in = {.n = s->n, .read = mem_read, .ctx = s};
	for (int i = 0; i < s->n; i++)
		in.size[i] = s->size;
	return in;
}

static void raw_found(int n, uint32_t chunk, uint64_t doff, uint64_t seed)
{
	struct set s;
	uint64_t msize = 4u << 20;
	uint8_t *vol = raid0_set(&s, n, chunk, doff, msize, seed);
	struct probe_input in = input_of(&s);
	struct probe_result *r = malloc(sizeof(*r));
	char err[256];
	CHECK(probe_run(&in, r, err, sizeof(err)) == 0);
	CHECKF(r->ncand >= 1, "raw raid0 n %d chunk %u: %s; rejected chunk %u: %s", n, chunk,
	       r->summary, r->best_rejected.chunk_sectors, r->best_rejected.evidence);
	if (r->ncand >= 1) {
		const struct probe_candidate *c = &r->cand[0];
		CHECK(c->raw && c->level == URAID_LEVEL_RAID0 && c->raid_devices == n);
		CHECKF(c->chunk_sectors == chunk / 512, "chunk %u, want %u (%s)", c->chunk_sectors,
		       chunk / 512, c->evidence);
		CHECK_EQ_U64(c->data_offset, doff / 512);
		for (int role = 0; role < n; role++)
			CHECKF(s.perm[c->order[role]] == role, "role %d: model member %d", role,
			       s.perm[c->order[role]]);
		CHECKF(c->ties == 0,
		       "n %d chunk %u: first candidate tied: %s; 2: chunk %u %d/%d, 1: %d/%d", n,
		       chunk, r->summary, r->cand[1].chunk_sectors, r->cand[1].agree,
		       r->cand[1].disagree, c->agree, c->disagree);
		CHECK(strstr(r->summary, "content continuity") != NULL);
		/* its view reads the volume back */
		uint64_t vb = msize * (uint64_t)n;
		uint8_t *back = malloc(vb);
		struct probe_view v = {&in, c, vb, NULL, NULL, NULL};
		CHECK(probe_view_read(&v, back, vb, 0) == 0 && memcmp(back, vol, vb) == 0);
		free(back);
	}
	free(r);
	free(vol);
	set_free(&s);
}

static void test_raw_raid0(void)
{
	raw_found(4, 64 * 1024, 0, 1);
	raw_found(3, 16 * 1024, 1u << 20, 2); /* zeroed superblock area before the data */
	raw_found(2, 256 * 1024, 0, 3);
	raw_found(5, 4 * 1024, 0, 4);
}

/* Random members, and members of one uniform kind of data: continuity
 * tells nothing, and probe says nothing convincing, with its evidence. */
static void test_raw_nothing(void)
{
	struct set s = {0};
	s.n = 4;
	s.size = 4u << 20;
	uint64_t st = 17;
	for (int i = 0; i < 4; i++) {
		s.m[i] = malloc(s.size);
		t_fill(&st, s.m[i], s.size);
		s.perm[i] = i;
	}
	struct probe_input in = input_of(&s);
	struct probe_result *r = malloc(sizeof(*r));
	char err[256];
	CHECK(probe_run(&in, r, err, sizeof(err)) == 0);
	CHECKF(r->ncand == 0, "%d candidates: %s", r->ncand, r->ncand ? r->cand[0].evidence : "");
	CHECK(strstr(r->summary, "nothing convincing") != NULL);
	CHECKF(strstr(r->summary, "content continuity") != NULL, "%s", r->summary);
	CHECK(r->have_rejected && strstr(r->best_rejected.evidence, "continuity") != NULL);
	/* unrelated disks of structured content (each its own volume) */
	for (int i = 0; i < 4; i++)
		make_content(s.m[i], s.size, 100 + (uint64_t)i);
	CHECK(probe_run(&in, r, err, sizeof(err)) == 0);
	CHECKF(r->ncand == 0, "unrelated disks: %d candidates, chunk %u: %s", r->ncand,
	       r->ncand ? r->cand[0].chunk_sectors : 0, r->ncand ? r->cand[0].evidence : "");
	/* a raw linear volume: its only boundaries are the members' ends, too
	 * few to tell an order; no raid0 chunk fits it either */
	uint8_t *vol = malloc(4 * s.size);
	make_content(vol, 4 * s.size, 200);
	for (int i = 0; i < 4; i++)
		memcpy(s.m[i], vol + s.size * (uint64_t)i, s.size);
	CHECK(probe_run(&in, r, err, sizeof(err)) == 0);
	CHECKF(r->ncand == 0, "raw linear: %d candidates, chunk %u: %s", r->ncand,
	       r->ncand ? r->cand[0].chunk_sectors : 0, r->ncand ? r->cand[0].evidence : "");
	free(vol);
	free(r);
	set_free(&s);
}

void probe_redundancy(const struct probe_input *in, struct probe_candidate *c, uint64_t *bytes);

/* A raid5 of that content (plain model: parity role n-1-(row mod n); data
 * after it wrapping when symmetric, else in role order around it) probed
 * as left-symmetric and as left-asymmetric in the same member order: the
 * XOR agrees for both, the per-row rotation evidence (the data chunks'
 * continuity in their rows) prefers the right one. */
static void rotation_one(bool sym, uint64_t seed)
{
	int n = 4;
	uint32_t chunk = 32 * 1024;
	struct set s = {0};
	s.n = n;
	s.size = 4u << 20;
	uint64_t rows = s.size / chunk, vb = rows * chunk * (uint64_t)(n - 1);
	uint8_t *vol = malloc(vb);
	make_content(vol, vb, seed);
	for (int i = 0; i < n; i++) {
		s.m[i] = calloc(1, s.size);
		s.perm[i] = i;
	}
	const struct uraid_parity *pp = uraid_parity_get("portable");
	for (uint64_t r = 0; r < rows; r++) {
		int p = n - 1 - (int)(r % (uint64_t)n);
		void *blk[MAXM];
		for (int d = 0; d < n - 1; d++) {
			int role = sym ? (p + 1 + d) % n : d < p ? d : d + 1;
			blk[d] = s.m[role] + r * chunk;
			memcpy(blk[d], vol + (r * (uint64_t)(n - 1) + (uint64_t)d) * chunk, chunk);
		}
		blk[n - 1] = s.m[p] + r * chunk;
		pp->xor_gen(n - 1, chunk, blk);
	}
	struct probe_input in = input_of(&s);
	struct probe_candidate c[2] = {{0}};
	uint64_t bytes = 0;
	for (int k = 0; k < 2; k++) {
		c[k].level = URAID_LEVEL_RAID5;
		c[k].layout = (k == 0) == sym ? LAYOUT_LEFT_SYMMETRIC : LAYOUT_LEFT_ASYMMETRIC;
		c[k].chunk_sectors = chunk / 512;
		c[k].raid_devices = n;
		for (int i = 0; i < n; i++)
			c[k].order[i] = i;
		probe_redundancy(&in, &c[k], &bytes);
		CHECKF(c[k].disagree == 0 && c[k].agree > 0, "%s", c[k].evidence);
		CHECKF(strstr(c[k].evidence, "XOR alone cannot tell") != NULL, "%s", c[k].evidence);
	}
	int right = c[0].rot_agree - c[0].rot_disagree, wrong = c[1].rot_agree - c[1].rot_disagree;
	CHECKF(right >= wrong + 8, "right %d/%d, wrong %d/%d", c[0].rot_agree, c[0].rot_disagree,
	       c[1].rot_agree, c[1].rot_disagree);
	free(vol);
	set_free(&s);
}

static void test_rotation(void)
{
	rotation_one(true, 31);
	rotation_one(false, 32);
}

/* Candidates within noise that read differently are tied (both ways);
 * candidates that read the same are one: the lesser dropped, named in the
 * better one's evidence. */
static void test_ties(void)
{
	struct set s;
	uint8_t *vol = raid0_set(&s, 3, 64 * 1024, 0, 2u << 20, 9);
	struct probe_input in = input_of(&s);
	struct probe_result *r = calloc(1, sizeof(*r));
	struct probe_candidate c = {
	    .level = URAID_LEVEL_RAID0, .chunk_sectors = 128, .raid_devices = 3, .agree = 40};
	for (int i = 0; i < 3; i++)
		c.order[i] = i;
	r->cand[0] = c;
	c.order[0] = 1, c.order[1] = 0; /* another order, as well supported */
	c.agree = 39;
	r->cand[1] = c;
	c.chunk_sectors = 256, c.agree = 10; /* far worse: no tie */
	r->cand[2] = c;
	r->ncand = 3;
	probe_mark_ties(&in, r);
	CHECK(r->cand[0].ties == 2u && r->cand[1].ties == 1u && r->cand[2].ties == 0);
	/* a mirror: raid1 and raid10 near=2 over two members read the same */
	set_free(&s);
	s.n = 2;
	s.m[0] = malloc(s.size);
	s.m[1] = malloc(s.size);
	memcpy(s.m[0], vol, s.size);
	memcpy(s.m[1], vol, s.size);
	s.perm[0] = 0, s.perm[1] = 1;
	in = input_of(&s);
	memset(r, 0, sizeof(*r));
	struct probe_candidate m = {.level = URAID_LEVEL_RAID1, .raid_devices = 2, .agree = 30};
	m.order[0] = 0, m.order[1] = 1;
	r->cand[0] = m;
	m.level = URAID_LEVEL_RAID10, m.layout = 0x102, m.chunk_sectors = 128;
	r->cand[1] = m;
	r->ncand = 2;
	probe_mark_ties(&in, r);
	CHECK(r->ncand == 1 && r->cand[0].ties == 0);
	CHECKF(strstr(r->cand[0].evidence, "reads the same wherever sampled as raid10") != NULL,
	       "%s", r->cand[0].evidence);
	free(r);
	free(vol);
	set_free(&s);
}

TEST_MAIN({"raw_raid0", test_raw_raid0}, {"raw_nothing", test_raw_nothing},
          {"rotation", test_rotation}, {"ties", test_ties})
