/* uraid probe's inference (src/probe/) against members made by a slow plain
 * model: a small ext4-shaped volume (superblock and its backups, group
 * descriptors, directory inodes and blocks spread over the groups, file
 * data), laid out over members the way md(4) describes each level in words
 * (written here independently of src/layout/), P and Q from the parity
 * library. The members are shuffled, one dropped for parity levels, and
 * probe must name the geometry first, its logical view must read back the
 * volume, and build over files of the members must too. Random members and
 * lone file systems must give nothing convincing. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "../harness.h"
#include "layout/layout.h"
#include "probe/probe.h"
#include "uraid.h"
#include "util/endian.h"

#define MAXM 12

struct set {
	int n;
	uint64_t size;
	uint8_t *m[MAXM];
	int perm[MAXM]; /* probe input i = model member perm[i]; -1 dropped */
	int nin;
	int in_of[MAXM]; /* model member -> input index, -1 */
};

static int mem_read(void *ctx, int member, void *buf, size_t len, uint64_t off)
{
	struct set *s = ctx;
	int mm = s->perm[member];
	if (off + len > s->size)
		return -EIO;
	memcpy(buf, s->m[mm] + off, len);
	return 0;
}

/* ---- a small ext4-shaped volume ---- */

#define BS  1024u
#define BPG 8192u
#define IPG 256u
#define ISZ 128u

static uint64_t itable(uint32_t g)
{
	return (uint64_t)g * BPG + 1 + 40; /* after sb, gdt and bitmaps */
}

static void put_inode_dir(uint8_t *vol, uint32_t ino, uint64_t blk)
{
	uint32_t g = (ino - 1) / IPG, idx = (ino - 1) % IPG;
	uint8_t *in = vol + itable(g) * BS + idx * ISZ;
	put_le16(in, 0x41ED);
	put_le32(in + 0x20, 0x80000);
	uint8_t *x = in + 0x28;
	put_le16(x, 0xF30A);
	put_le16(x + 2, 1);
	put_le16(x + 4, 4);
	put_le16(x + 6, 0);
	put_le32(x + 12, 0);
	put_le16(x + 16, 1);
	put_le16(x + 18, 0);
	put_le32(x + 20, (uint32_t)blk);
}

static uint8_t *dirent(uint8_t *p, uint32_t ino, uint16_t rl, const char *name, uint8_t type)
{
	put_le32(p, ino);
	put_le16(p + 4, rl);
	p[6] = (uint8_t)strlen(name);
	p[7] = type;
	memcpy(p + 8, name, strlen(name));
	return p + rl;
}

/* Directory `ino` (parent `parent`) in block blk with subdirectories. */
static void put_dir(uint8_t *vol, uint32_t ino, uint32_t parent, uint64_t blk, const uint32_t *sub,
                    int nsub)
{
	put_inode_dir(vol, ino, blk);
	uint8_t *d = vol + blk * BS, *p = dirent(d, ino, 12, ".", 2);
	p = dirent(p, parent, 12, "..", 2);
	for (int i = 0; i < nsub; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "d%u", sub[i]);
		p = dirent(p, sub[i], i == nsub - 1 ? (uint16_t)(d + BS - p) : 16, nm, 2);
	}
	if (!nsub)
		put_le16(d + 16, (uint16_t)(BS - 12));
}

/* A volume with file data (random) everywhere but the metadata, as a file
 * system in use has: data next to metadata is what tells a chunk of data
 * from the parity that covers it. */
static void make_volume(uint8_t *vol, uint64_t bytes, uint64_t seed)
{
	uint64_t st = seed;
	t_fill(&st, vol, bytes);
	uint32_t blocks = (uint32_t)(bytes / BS), groups = (blocks - 1 + BPG - 1) / BPG;
	memset(vol, 0, 2 * BS);
	for (uint32_t g = 0; g < groups; g++) {
		uint64_t end = ((uint64_t)g * BPG + 1 + 80) * BS;
		memset(vol + (uint64_t)g * BPG * BS + BS, 0,
		       (end > bytes ? bytes : end) - ((uint64_t)g * BPG * BS + BS));
		bool sparse = g <= 1 || g == 3 || g == 5 || g == 7 || g == 9 || g == 25 || g == 27;
		if (!sparse)
			continue;
		uint8_t *sb = vol + ((uint64_t)g * BPG + 1) * BS;
		put_le32(sb + 4, blocks);
		put_le32(sb + 20, 1);
		put_le32(sb + 24, 0);
		put_le32(sb + 32, BPG);
		put_le32(sb + 40, IPG);
		put_le16(sb + 56, 0xEF53);
		put_le32(sb + 0x4C, 1);
		put_le16(sb + 0x58, ISZ);
		put_le16(sb + 0x5A, (uint16_t)g);
		put_le32(sb + 0x60, 0x2 | 0x40);
		put_le32(sb + 0x64, 1);
		uint8_t *gdt = vol + ((uint64_t)g * BPG + 2) * BS;
		for (uint32_t k = 0; k < groups; k++)
			put_le32(gdt + 32 * k + 8, (uint32_t)itable(k));
	}
	/* A tree over the groups: root -> a, b, c; a -> d, e; each elsewhere. */
	uint32_t in[6];
	uint64_t bl[6];
	in[0] = 2;
	for (int i = 1; i < 6; i++)
		in[i] = (uint32_t)((i * 5) % groups) * IPG + 3 + 17 * (uint32_t)i;
	for (int i = 0; i < 6; i++) {
		uint64_t g = (uint64_t)(1 + i * 7) % groups, b = g * BPG + 300 + 1100 * (uint64_t)i;
		bl[i] = b < blocks ? b : 300 + (uint64_t)i;
		memset(vol + bl[i] * BS, 0, BS);
	}
	put_dir(vol, in[0], 2, bl[0], (uint32_t[]){in[1], in[2], in[3]}, 3);
	put_dir(vol, in[1], in[0], bl[1], (uint32_t[]){in[4], in[5]}, 2);
	put_dir(vol, in[2], in[0], bl[2], NULL, 0);
	put_dir(vol, in[3], in[0], bl[3], NULL, 0);
	put_dir(vol, in[4], in[1], bl[4], NULL, 0);
	put_dir(vol, in[5], in[1], bl[5], NULL, 0);
}

/* ---- the plain model: placement in md(4)'s words ---- */

struct geo {
	int level; /* 0 raid0, 1 raid1, -1 linear, 5, 6 */
	int n;
	uint32_t chunk; /* bytes */
	bool symmetric; /* raid5/6: left-symmetric, else left-asymmetric */
	uint64_t doff;  /* bytes */
	uint64_t msize; /* bytes of data per member */
};

static uint64_t vol_bytes(const struct geo *g)
{
	int k = g->level == 5 ? g->n - 1 : g->level == 6 ? g->n - 2 : g->level == 1 ? 1 : g->n;
	return g->msize * (uint64_t)k;
}

static void lay_out(const struct geo *g, const uint8_t *vol, struct set *s)
{
	uint64_t vb = vol_bytes(g);
	if (g->level == -1 || g->level == 1) {
		for (int i = 0; i < g->n; i++)
			memcpy(s->m[i] + g->doff, vol + (g->level == 1 ? 0 : g->msize * i),
			       g->msize);
		return;
	}
	int k = g->level == 0 ? g->n : g->level == 5 ? g->n - 1 : g->n - 2;
	uint64_t rows = g->msize / g->chunk;
	const struct uraid_parity *pp = uraid_parity_get("portable");
	for (uint64_t r = 0; r < rows; r++) {
		int p = g->level == 0 ? -1 : g->n - 1 - (int)(r % (uint64_t)g->n);
		int q = g->level == 6 ? (p + 1) % g->n : -1;
		void *blk[MAXM + 2];
		for (int d = 0; d < k; d++) {
			int role;
			if (g->level == 0)
				role = d;
			else if (g->symmetric)
				role = (p + (g->level == 6 ? 2 : 1) + d) % g->n;
			else /* left-asymmetric raid5: data fills the others in order */
				role = d < p ? d : d + 1;
			uint64_t lo = (r * (uint64_t)k + (uint64_t)d) * g->chunk;
			uint8_t *dst = s->m[role] + g->doff + r * g->chunk;
			if (lo < vb)
				memcpy(dst, vol + lo, g->chunk);
			blk[d] = dst;
		}
		if (p >= 0) {
			blk[k] = s->m[p] + g->doff + r * g->chunk;
			if (q >= 0)
				blk[k + 1] = s->m[q] + g->doff + r * g->chunk;
			if (q >= 0)
				pp->pq_gen(k, g->chunk, blk);
			else
				pp->xor_gen(k, g->chunk, blk);
		}
	}
}

static void set_free(struct set *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->m[i]);
}

/* Members of geometry g holding vol, shuffled by seed, member `drop` left out. */
static uint8_t *make_set(const struct geo *g, struct set *s, uint64_t seed, int drop)
{
	memset(s, 0, sizeof(*s));
	s->n = g->n;
	s->size = g->doff + g->msize;
	for (int i = 0; i < g->n; i++)
		s->m[i] = calloc(1, s->size);
	uint64_t vb = vol_bytes(g);
	uint8_t *vol = malloc(vb);
	make_volume(vol, vb, seed);
	lay_out(g, vol, s);
	int order[MAXM], k = 0;
	for (int i = 0; i < g->n; i++)
		if (i != drop)
			order[k++] = i;
	uint64_t st = seed * 7 + 1;
	for (int i = k - 1; i > 0; i--) {
		int j = (int)(t_rand(&st) % (uint64_t)(i + 1)), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	s->nin = k;
	for (int i = 0; i < g->n; i++)
		s->in_of[i] = -1;
	for (int i = 0; i < k; i++) {
		s->perm[i] = order[i];
		s->in_of[order[i]] = i;
	}
	return vol;
}

static void check_found(const struct geo *g, struct set *s, const uint8_t *vol, int drop)
{
	struct probe_input in = {.n = s->nin, .read = mem_read, .ctx = s};
	for (int i = 0; i < s->nin; i++)
		in.size[i] = s->size;
	struct probe_result *r = malloc(sizeof(*r));
	char err[256];
	CHECK(probe_run(&in, r, err, sizeof(err)) == 0);
	CHECKF(
	    r->ncand >= 1,
	    "level %d n %d chunk %u: %s; best rejected level %d chunk %u, %d agree %d disagree: %s",
	    g->level, g->n, g->chunk, r->summary, r->best_rejected.level,
	    r->best_rejected.chunk_sectors, r->best_rejected.agree, r->best_rejected.disagree,
	    r->best_rejected.evidence);
	if (r->ncand < 1) {
		free(r);
		return;
	}
	const struct probe_candidate *c = &r->cand[0];
	int want_level = g->level == 0    ? URAID_LEVEL_RAID0
	                 : g->level == -1 ? URAID_LEVEL_LINEAR
	                                  : g->level;
	CHECKF(c->level == want_level, "level %d, want %d (%s)", c->level, want_level, c->evidence);
	CHECK_EQ_U64(c->data_offset, g->doff / 512);
	CHECK(c->raid_devices == g->n);
	if (g->level != 1 && g->level != -1)
		CHECK_EQ_U64(c->chunk_sectors, g->chunk / 512);
	if (g->level == 5 || g->level == 6)
		CHECK(c->layout == (g->symmetric ? LAYOUT_LEFT_SYMMETRIC : LAYOUT_LEFT_ASYMMETRIC));
	/* raid6: every sampled row's Q found (by the XOR) where the layout puts it */
	const char *q = strstr(c->evidence, "where the layout puts it in ");
	if (g->level == 6 && drop < 0) {
		int right = -1, rows = -2;
		CHECKF(q && sscanf(q + 28, "%d of %d", &right, &rows) == 2 && right == rows &&
		           rows > 0,
		       "%s", c->evidence);
	}
	if (g->level != 1)
		for (int role = 0; role < g->n; role++)
			CHECKF(c->order[role] == s->in_of[role], "role %d: input %d, want %d", role,
			       c->order[role], s->in_of[role]);
	/* The candidate's logical view reads the volume back (a missing member
	 * rebuilt from parity). */
	uint64_t vb = vol_bytes(g);
	struct probe_view v = {&in, c, vb, NULL, NULL, NULL};
	uint8_t *back = malloc(vb);
	CHECK(probe_view_read(&v, back, vb, 0) == 0);
	CHECKF(memcmp(back, vol, vb) == 0, "logical view differs (drop %d)", drop);
	free(back);
	free(r);
}

static void one(int level, int n, uint32_t chunk, bool sym, int drop, uint64_t seed)
{
	struct geo g = {level, n, chunk, sym, 1u << 20, 12u << 20};
	struct set s;
	uint8_t *vol = make_set(&g, &s, seed, drop);
	check_found(&g, &s, vol, drop);
	free(vol);
	set_free(&s);
}

static void test_raid5_orders_chunks(void)
{
	one(5, 4, 64 * 1024, true, -1, 1);
	one(5, 4, 4 * 1024, true, -1, 2);
	one(5, 3, 512 * 1024, false, -1, 3);
	one(5, 5, 16 * 1024, true, -1, 4);
}

static void test_raid5_missing(void)
{
	one(5, 4, 64 * 1024, true, 2, 5);
	one(5, 4, 128 * 1024, false, 0, 6);
}

static void test_raid6(void)
{
	one(6, 5, 64 * 1024, true, -1, 7);
	one(6, 4, 256 * 1024, true, 3, 8);
	/* the member holding the first chunk missing: the volume start is
	 * found in the XOR of all members but the first stripe's Q */
	one(6, 4, 64 * 1024, true, 1, 13);
	one(6, 6, 32 * 1024, true, 1, 14);
}

static void test_raid0_linear_raid1(void)
{
	one(0, 3, 32 * 1024, false, -1, 9);
	one(0, 2, 1024 * 1024, false, -1, 10);
	one(-1, 3, 0, false, -1, 11);
	one(1, 2, 0, false, -1, 12);
}

/* A raid5 with an unrelated (random) disk among its members: found, the
 * stranger left out of the build line. */
static void test_unrelated_disk_mixed_in(void)
{
	struct geo g = {5, 4, 32 * 1024, true, 1u << 20, 12u << 20};
	struct set s;
	uint8_t *vol = make_set(&g, &s, 31, -1);
	/* a fifth model member of random bytes, given second */
	s.m[4] = malloc(s.size);
	uint64_t st = 77;
	t_fill(&st, s.m[4], s.size);
	s.n = 5;
	for (int i = s.nin; i > 1; i--)
		s.perm[i] = s.perm[i - 1];
	s.perm[1] = 4;
	s.nin++;
	for (int i = 0; i < 4; i++)
		s.in_of[i] = -1;
	for (int i = 0; i < s.nin; i++)
		if (s.perm[i] < 4)
			s.in_of[s.perm[i]] = i;
	s.n = 5;
	check_found(&g, &s, vol, -1);
	free(vol);
	set_free(&s);
}

/* A raid5 with two unrelated disks (random, and a copy of an
 * unrelated file system) mixed in: found, both strangers left out. */
static void two_strangers(int level, int n, int drop, uint64_t seed)
{
	struct geo g = {level, n, 64 * 1024, true, 1u << 20, 12u << 20};
	struct set s;
	uint8_t *vol = make_set(&g, &s, seed, drop);
	int base = g.n;
	s.m[base] = malloc(s.size);
	uint64_t st = seed + 77;
	t_fill(&st, s.m[base], s.size);
	s.m[base + 1] = calloc(1, s.size);
	make_volume(s.m[base + 1] + (1u << 20), 8u << 20, seed + 3);
	/* given second and last */
	for (int i = s.nin; i > 1; i--)
		s.perm[i] = s.perm[i - 1];
	s.perm[1] = base;
	s.perm[++s.nin] = base + 1;
	s.nin++;
	s.n = base + 2;
	for (int i = 0; i < base; i++)
		s.in_of[i] = -1;
	for (int i = 0; i < s.nin; i++)
		if (s.perm[i] < base)
			s.in_of[s.perm[i]] = i;
	check_found(&g, &s, vol, drop);
	free(vol);
	set_free(&s);
}

static void test_two_unrelated_disks(void)
{
	two_strangers(5, 4, -1, 41);
}

/* A raid5 lacking its first chunk's member (left-symmetric: role 0) among
 * three strangers (random bytes, given first, third and last): its volume
 * start is only in the XOR of the members that are not strangers. */
static void test_three_strangers_first_missing(void)
{
	struct geo g = {5, 4, 64 * 1024, true, 1u << 20, 12u << 20};
	struct set s;
	uint8_t *vol = make_set(&g, &s, 61, 0);
	int base = g.n, order[MAXM], k = 0;
	for (int i = 0; i < 3; i++) {
		s.m[base + i] = malloc(s.size);
		uint64_t st = 300 + (uint64_t)i;
		t_fill(&st, s.m[base + i], s.size);
	}
	order[k++] = base;
	order[k++] = s.perm[0];
	order[k++] = base + 1;
	order[k++] = s.perm[1];
	order[k++] = s.perm[2];
	order[k++] = base + 2;
	s.nin = k;
	s.n = base + 3;
	for (int i = 0; i < base; i++)
		s.in_of[i] = -1;
	for (int i = 0; i < k; i++) {
		s.perm[i] = order[i];
		if (order[i] < base)
			s.in_of[order[i]] = i;
	}
	check_found(&g, &s, vol, 0);
	free(vol);
	set_free(&s);
}

/* Eight members: the order comes from where the file system's structures
 * lie, roles chosen as the checks need them, not from 8! permutations. */
static void test_many_members(void)
{
	one(5, 8, 16 * 1024, true, -1, 52);
	/* seven raid0 members: the orders checked are a few, not 7! = 5040 */
	struct geo g = {0, 7, 32 * 1024, false, 1u << 20, 4u << 20};
	struct set s;
	uint8_t *vol = make_set(&g, &s, 53, -1);
	check_found(&g, &s, vol, -1);
	struct probe_input in = {.n = s.nin, .read = mem_read, .ctx = &s};
	for (int i = 0; i < s.nin; i++)
		in.size[i] = s.size;
	struct probe_result *r = malloc(sizeof(*r));
	char err[256];
	CHECK(probe_run(&in, r, err, sizeof(err)) == 0);
	const char *p = strstr(r->summary, "found, ");
	long orders = p ? strtol(p + 7, NULL, 10) : -1;
	CHECKF(orders >= 1 && orders < 5040, "orders checked %ld: %s", orders, r->summary);
	printf("# raid0 over 7 members: %ld member orders checked\n", orders);
	free(r);
	free(vol);
	set_free(&s);
}

/* Three identical members (raid1): one candidate, not one per order or per
 * equivalent layout, its evidence naming the copies. */
static void test_raid1_one_candidate(void)
{
	struct geo g = {1, 3, 0, false, 1u << 20, 6u << 20};
	struct set s;
	uint8_t *vol = make_set(&g, &s, 71, -1);
	check_found(&g, &s, vol, -1);
	struct probe_input in = {.n = s.nin, .read = mem_read, .ctx = &s};
	for (int i = 0; i < s.nin; i++)
		in.size[i] = s.size;
	struct probe_result *r = malloc(sizeof(*r));
	char err[256];
	CHECK(probe_run(&in, r, err, sizeof(err)) == 0);
	CHECKF(r->ncand == 1, "%d candidates: %s; 2nd level %d", r->ncand, r->summary,
	       r->cand[1].level);
	CHECKF(strstr(r->cand[0].evidence, "the copies: members") != NULL, "%s",
	       r->cand[0].evidence);
	free(r);
	free(vol);
	set_free(&s);
}

/* Random members, and a lone file system among random members: nothing
 * convincing (no candidate), with a summary saying so. */
static void test_nothing_convincing(void)
{
	struct set s = {0};
	s.n = s.nin = 4;
	s.size = 8u << 20;
	uint64_t st = 99;
	for (int i = 0; i < 4; i++) {
		s.m[i] = malloc(s.size);
		t_fill(&st, s.m[i], s.size);
		s.perm[i] = i;
	}
	struct probe_input in = {.n = 4, .read = mem_read, .ctx = &s};
	for (int i = 0; i < 4; i++)
		in.size[i] = s.size;
	struct probe_result *r = malloc(sizeof(*r));
	char err[256];
	CHECK(probe_run(&in, r, err, sizeof(err)) == 0);
	CHECK(r->ncand == 0);
	CHECK(strstr(r->summary, "nothing convincing") != NULL);
	CHECK(strstr(r->summary, "XOR of all members is zero") == NULL);
	/* a raw raid5 (random data, no file system): nothing convincing, but
	 * the XOR of the members says what it is */
	uint8_t *keep3 = s.m[3];
	s.m[3] = malloc(s.size);
	for (uint64_t i = 0; i < s.size; i++)
		s.m[3][i] = s.m[0][i] ^ s.m[1][i] ^ s.m[2][i];
	CHECK(probe_run(&in, r, err, sizeof(err)) == 0);
	CHECK(r->ncand == 0);
	CHECKF(strstr(r->summary, "XOR of all members is zero in 32 of 32") != NULL, "%s",
	       r->summary);
	free(s.m[3]);
	s.m[3] = keep3;
	/* an unrelated file system on one: it names no geometry of the set */
	make_volume(s.m[1] + (1u << 20), 6u << 20, 5);
	CHECK(probe_run(&in, r, err, sizeof(err)) == 0);
	CHECKF(r->ncand == 0, "%d candidates, first level %d: %s", r->ncand, r->cand[0].level,
	       r->cand[0].evidence);
	CHECK(strstr(r->summary, "nothing convincing") != NULL);
	free(r);
	set_free(&s);
}

/* Signatures from hand-made bytes; the parsers never read past the buffer. */
static void test_signatures(void)
{
	uint8_t *b = calloc(1, PROBE_HEAD_BYTES);
	struct probe_sig s;
	CHECK(probe_sig_head(b, PROBE_HEAD_BYTES, &s) == 0);
	memcpy(b + 512, "EFI PART", 8);
	CHECK(probe_sig_head(b, PROBE_HEAD_BYTES, &s) == 1 && s.kind == PROBE_SIG_GPT);
	memset(b, 0, PROBE_HEAD_BYTES);
	memcpy(b + 512, "LABELONE", 8);
	memcpy(b + 512 + 24, "LVM2 001", 8);
	CHECK(probe_sig_head(b, PROBE_HEAD_BYTES, &s) == 1 && s.kind == PROBE_SIG_LVM);
	memset(b, 0, PROBE_HEAD_BYTES);
	b[510] = 0x55, b[511] = 0xAA, b[446 + 4] = 0x83, b[446 + 12] = 1;
	CHECK(probe_sig_head(b, PROBE_HEAD_BYTES, &s) == 1 && s.kind == PROBE_SIG_MBR);
	memset(b, 0, PROBE_HEAD_BYTES);
	memcpy(b, "XFSB", 4);
	b[6] = 0x10;          /* blocksize 4096 (big-endian) */
	b[15] = 100;          /* dblocks */
	b[86] = 1, b[91] = 4; /* agblocks 256, agcount 4 */
	CHECK(probe_sig_head(b, PROBE_HEAD_BYTES, &s) == 1 && s.kind == PROBE_SIG_XFS &&
	      s.fs_bytes == 409600);
	memset(b, 0, PROBE_HEAD_BYTES);
	memcpy(b + 65536 + 64, "_BHRfS_M", 8);
	CHECK(probe_sig_head(b, PROBE_HEAD_BYTES, &s) == 1 && s.kind == PROBE_SIG_BTRFS);
	CHECK(probe_sig_head(b, 65536, &s) == 0); /* too short to hold it */
	memset(b, 0, PROBE_HEAD_BYTES);
	b[PROBE_TAIL_BYTES - 512] = 0xDE, b[PROBE_TAIL_BYTES - 511] = 0x11;
	b[PROBE_TAIL_BYTES - 510] = 0xDE, b[PROBE_TAIL_BYTES - 509] = 0x11;
	CHECK(probe_sig_tail(b, PROBE_TAIL_BYTES, 1u << 20, &s) == 1 && s.kind == PROBE_SIG_DDF);
	memset(b, 0, PROBE_HEAD_BYTES);
	memcpy(b + PROBE_TAIL_BYTES - 1024, "Intel Raid ISM Cfg Sig. 1.3.00", 30);
	CHECK(probe_sig_tail(b, PROBE_TAIL_BYTES, 1u << 20, &s) == 1 && s.kind == PROBE_SIG_IMSM);
	free(b);
}

/* uraid_build over files of a model raid5 with a member missing reads the
 * volume; members given twice or too small are refused. */
static void test_build_class(void)
{
	struct geo g = {5, 4, 64 * 1024, true, 1u << 20, 4u << 20};
	struct set s;
	uint8_t *vol = make_set(&g, &s, 21, -1);
	char dir[] = "/tmp/test_probe.XXXXXX", path[4][64];
	CHECK(mkdtemp(dir) != NULL);
	const char *paths[4];
	for (int i = 0; i < 4; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/m%d", dir, i);
		FILE *f = fopen(path[i], "w");
		CHECK(f != NULL);
		if (f) {
			CHECK(fwrite(s.m[i], 1, s.size, f) == s.size);
			fclose(f);
		}
		paths[i] = path[i];
	}
	paths[1] = "missing";
	struct uraid_build_opts o = {
	    .level = 5, .chunk_sectors = 128, .raid_devices = 4, .data_offset_sectors = 2048};
	struct uraid_array *a;
	char err[512];
	CHECK(uraid_build(&o, paths, 4, 0, &a, err, sizeof(err)) == 0);
	uint64_t vb = vol_bytes(&g);
	CHECK_EQ_U64(uraid_size(a), vb);
	uint8_t *back = malloc(vb);
	CHECK(uraid_read(a, back, vb, 0) == 0 && memcmp(back, vol, vb) == 0);
	CHECK(uraid_write(a, back, 512, 0) == -EROFS);
	uraid_stop(a);
	paths[1] = path[0];
	CHECK(uraid_build(&o, paths, 4, 0, &a, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "same member") != NULL);
	paths[1] = path[1];
	o.size_sectors = 16384; /* 8 MiB: more than the members hold */
	CHECK(uraid_build(&o, paths, 4, 0, &a, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "too small") != NULL);
	o.size_sectors = 0;
	paths[0] = paths[1] = "missing";
	CHECK(uraid_build(&o, paths, 4, 0, &a, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "cannot be read") != NULL);
	char spec[256];
	struct uraid_build_opts p;
	CHECK(uraid_build_spec_format(&o, spec, sizeof(spec)) == 0);
	CHECK(uraid_build_spec_parse(spec, &p, err, sizeof(err)) == 0);
	CHECK(p.level == o.level && p.chunk_sectors == o.chunk_sectors &&
	      p.data_offset_sectors == o.data_offset_sectors && p.raid_devices == 4);
	for (int i = 0; i < 4; i++)
		unlink(path[i]);
	rmdir(dir);
	free(back);
	free(vol);
	set_free(&s);
}

TEST_MAIN({"raid5_orders_chunks", test_raid5_orders_chunks}, {"raid5_missing", test_raid5_missing},
          {"raid6", test_raid6}, {"raid0_linear_raid1", test_raid0_linear_raid1},
          {"nothing_convincing", test_nothing_convincing}, {"signatures", test_signatures},
          {"build_class", test_build_class},
          {"unrelated_disk_mixed_in", test_unrelated_disk_mixed_in},
          {"two_unrelated_disks", test_two_unrelated_disks}, {"many_members", test_many_members},
          {"three_strangers_first_missing", test_three_strangers_first_missing},
          {"raid1_one_candidate", test_raid1_one_candidate})
