/* Layout personalities against slow, independently written references.
 *
 * The references build each geometry's placement by walking it the way the
 * md documentation describes it in words (fill a stripe's cells, place
 * chunks with cursors that advance over members and rows), then every
 * personality answer (map, stripe, unmap, readable, sizes) is compared with
 * them for random geometries from fixed seeds. Property checks make sure the
 * mapping is injective and, with P/Q, covers each member's used area. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../harness.h"
#include "layout/layout.h"

#define FREE_CELL -100
#define CELL_P    -1
#define CELL_Q    -2

static uint64_t rnd(uint64_t *st, uint64_t n)
{
	return t_rand(st) % n;
}

/* ------------------------------------------------------------------ */
/* parity levels: the cells of one stripe                              */
/* ------------------------------------------------------------------ */

/* cell[role] = data index, CELL_P or CELL_Q, following md(4)'s words:
 * "left" layouts start parity on the last member and move it one member to
 * the left each stripe, "right" ones start on the first and move right;
 * "symmetric" layouts put the first data chunk just after the parity (after
 * Q for raid6) and wrap round, the others fill the free members from the
 * first upwards. raid6 puts Q right after P; the "-6" layouts run the raid5
 * layout over all but the last member and keep Q there. */
static void ref_cells(int level, uint32_t alg, int n, uint64_t s, int *cell)
{
	for (int r = 0; r < n; r++)
		cell[r] = FREE_CELL;
	int m = n; /* members P rotates over */
	bool pair = false;
	int base = (int)alg;
	if (level == 4) {
		base = 5;
	} else if (level == 6 && alg >= 16) {
		m = n - 1;
		cell[n - 1] = CELL_Q;
		base = (int)alg - 16;
	} else if (level == 6) {
		pair = true;
	}
	int p;
	if (base == 0 || base == 2)
		p = m - 1 - (int)(s % (uint64_t)m);
	else if (base == 1 || base == 3)
		p = (int)(s % (uint64_t)m);
	else if (base == 4)
		p = 0;
	else
		p = pair ? m - 2 : m - 1;
	cell[p] = CELL_P;
	int last = p;
	if (pair) {
		last = (p + 1) % n;
		cell[last] = CELL_Q;
	}
	int d = 0;
	if (base == 2 || base == 3) {
		for (int j = 1; j <= m; j++) {
			int r = (last + j) % m;
			if (cell[r] == FREE_CELL)
				cell[r] = d++;
		}
	} else {
		for (int r = 0; r < n; r++)
			if (cell[r] == FREE_CELL)
				cell[r] = d++;
	}
}

/* Syndrome position of each data index: members listed starting after Q. */
static void ref_qorder(const int *cell, int n, int *qpos)
{
	int q = -1;
	for (int r = 0; r < n; r++)
		if (cell[r] == CELL_Q)
			q = r;
	int pos = 0;
	for (int j = 1; j <= n; j++) {
		int r = (q + j) % n;
		if (cell[r] >= 0)
			qpos[cell[r]] = pos++;
	}
}

static const uint32_t r5_algs[] = {0, 1, 2, 3, 4, 5};
static const uint32_t r6_algs[] = {0, 1, 2, 3, 4, 5, 16, 17, 18, 19, 20};

static void random_parity_geom(uint64_t *st, struct layout_geometry *g)
{
	memset(g, 0, sizeof(*g));
	int lv = (int)rnd(st, 3);
	g->level = lv == 0 ? 4 : lv == 1 ? 5 : 6;
	int minn = g->level == 6 ? 4 : 2;
	g->raid_disks = minn + (int)rnd(st, (uint64_t)(17 - minn));
	if (g->level == 4)
		g->layout = 5;
	else if (g->level == 5)
		g->layout = r5_algs[rnd(st, 6)];
	else
		g->layout = r6_algs[rnd(st, 11)];
	g->chunk_sectors = 8u << rnd(st, 9); /* 4 KiB .. 1 MiB */
	g->dev_sectors = g->chunk_sectors * (1 + rnd(st, 5)) + rnd(st, g->chunk_sectors);
}

static void test_parity_reference(void)
{
	uint64_t st = 0x5eed0001;
	char err[256];
	for (int iter = 0; iter < 3000; iter++) {
		struct layout_geometry g;
		random_parity_geom(&st, &g);
		const struct layout_ops *ops = layout_ops_for(g.level);
		CHECK(ops && ops->stripe);
		int rc = layout_validate(&g, err, sizeof(err));
		CHECKF(rc == 0, "level %d layout %u n %d: %s", g.level, g.layout, g.raid_disks,
		       err);
		if (rc)
			continue;
		int n = g.raid_disks, k = n - (g.level == 6 ? 2 : 1);
		uint64_t cs = g.chunk_sectors, rows = g.dev_sectors / cs;
		CHECK_EQ_U64(ops->array_sectors(&g), rows * cs * (uint64_t)k);
		CHECK_EQ_U64(ops->member_used(&g, n - 1), rows * cs);
		CHECK(ops->ncopies(&g) == 1);
		int cell[LAYOUT_MAX_MEMBERS], qpos[LAYOUT_MAX_MEMBERS];
		for (uint64_t s = 0; s < rows; s++) {
			ref_cells(g.level, g.layout, n, s, cell);
			struct layout_stripe ls;
			ops->stripe(&g, s, &ls);
			CHECK(ls.ndata == k);
			CHECK_EQ_U64(ls.sector, s * cs);
			int seen = 0;
			for (int r = 0; r < n; r++) {
				if (cell[r] == CELL_P) {
					CHECKF(ls.p_role == r,
					       "lv %d alg %u n %d s %llu P %d vs %d", g.level,
					       g.layout, n, (unsigned long long)s, ls.p_role, r);
					seen++;
				} else if (cell[r] == CELL_Q) {
					CHECKF(ls.q_role == r, "lv %d alg %u n %d Q %d vs %d",
					       g.level, g.layout, n, ls.q_role, r);
					seen++;
				} else {
					CHECKF(ls.data_role[cell[r]] == r,
					       "lv %d alg %u n %d s %llu d%d at %d vs %d", g.level,
					       g.layout, n, (unsigned long long)s, cell[r],
					       ls.data_role[cell[r]], r);
					seen++;
				}
			}
			CHECK(seen == n);
			if (g.level != 6)
				CHECK(ls.q_role == -1);
			else {
				ref_qorder(cell, n, qpos);
				for (int i = 0; i < k; i++)
					CHECKF(ls.q_index[i] == qpos[i],
					       "alg %u n %d d%d q %d vs %d", g.layout, n, i,
					       ls.q_index[i], qpos[i]);
			}
			/* map of each data chunk at a random offset, and unmap back */
			for (int i = 0; i < k; i++) {
				uint64_t off = rnd(&st, cs);
				uint64_t lsec = (s * (uint64_t)k + (uint64_t)i) * cs + off, len = 0;
				struct layout_loc loc;
				CHECK(ops->map(&g, lsec, 0, &loc, &len) == 0);
				CHECK(loc.role == ls.data_role[i]);
				CHECK_EQ_U64(loc.sector, s * cs + off);
				CHECK_EQ_U64(len, cs - off);
				uint64_t back = ~0ull;
				CHECK(ops->unmap(&g, loc.role, loc.sector, &back) == LAYOUT_DATA);
				CHECK_EQ_U64(back, lsec);
			}
			uint64_t back = ~0ull;
			CHECK(ops->unmap(&g, ls.p_role, s * cs + 1, &back) == LAYOUT_P);
			CHECK_EQ_U64(back, s * (uint64_t)k * cs);
			if (g.level == 6)
				CHECK(ops->unmap(&g, ls.q_role, s * cs, &back) == LAYOUT_Q);
		}
		struct layout_loc loc;
		uint64_t len;
		CHECK(ops->map(&g, ops->array_sectors(&g), 0, &loc, &len) == -ERANGE);
		CHECK(ops->map(&g, 0, 1, &loc, &len) == -ERANGE);
		uint64_t back;
		CHECK(ops->unmap(&g, 0, rows * cs, &back) == -ERANGE);
	}
}

/* Symmetric layouts keep Q's syndrome order equal to data order; md's
 * asymmetric ones do not always (FORMATS.md): make sure the test above saw
 * both cases, so a personality that just returns identity would fail. */
static void test_qorder_differs(void)
{
	int cell[8], qpos[8];
	bool differs = false;
	for (uint64_t s = 0; s < 5; s++) {
		ref_cells(6, 0, 5, s, cell);
		ref_qorder(cell, 5, qpos);
		for (int i = 0; i < 3; i++)
			differs |= qpos[i] != i;
	}
	CHECK(differs);
	struct layout_geometry g = {
	    .level = 6, .layout = 0, .chunk_sectors = 8, .raid_disks = 5, .dev_sectors = 64};
	struct layout_stripe ls;
	layout_ops_for(6)->stripe(&g, 1, &ls);
	/* left-asymmetric, stripe 1 on 5 members: D0 D1 D2 P Q -> P on 3,
	 * Q on 4, syndrome starts at member 0 */
	CHECK(ls.p_role == 3 && ls.q_role == 4);
	layout_ops_for(6)->stripe(&g, 2, &ls);
	/* stripe 2: D0 D1 P Q D2: syndrome walks 4, 0, 1 -> D2 first */
	CHECK(ls.p_role == 2 && ls.q_role == 3);
	CHECK(ls.data_role[2] == 4 && ls.q_index[2] == 0 && ls.q_index[0] == 1);
}

/* ------------------------------------------------------------------ */
/* raid10                                                              */
/* ------------------------------------------------------------------ */

struct r10ref {
	uint64_t chunks;     /* array chunks */
	uint64_t dev_chunks; /* chunks used per member */
	int copies;
	/* [chunk][copy] -> role, member chunk row */
	int *role;
	uint64_t *row;
};

/* Sizes as kernel raid10.c derives them (calc_sectors / raid10_size),
 * restated: the recorded member size gives whole chunk rows per far copy,
 * hence the array's chunks; members then need ceil(chunks*copies/disks)
 * chunks, of which each far copy gets an equal whole share. Then walk:
 * the near copies of each chunk take the next nc (row, member) slots of a
 * row-major cursor; far copy f moves f*nc members right (wrapping) and
 * f shares down (offset: f rows down, each first-copy row being followed by
 * fc-1 rows of shifted copies). */
static void ref_r10(const struct layout_geometry *g, struct r10ref *o)
{
	int nc = (int)(g->layout & 255), fc = (int)((g->layout >> 8) & 255);
	bool off = (g->layout >> 16) & 1;
	int rd = g->raid_disks;
	uint64_t per_far = g->dev_sectors / g->chunk_sectors / (uint64_t)fc;
	uint64_t chunks = per_far * (uint64_t)rd / (uint64_t)nc;
	uint64_t need = chunks * (uint64_t)(nc * fc);
	o->dev_chunks = need / (uint64_t)rd + (need % (uint64_t)rd != 0);
	uint64_t share = o->dev_chunks / (uint64_t)fc;
	o->chunks = share * (uint64_t)rd / (uint64_t)nc;
	o->copies = nc * fc;
	o->role = calloc(o->chunks * (uint64_t)o->copies, sizeof(int));
	o->row = calloc(o->chunks * (uint64_t)o->copies, sizeof(uint64_t));
	uint64_t crow = 0;
	int cdev = 0;
	for (uint64_t c = 0; c < o->chunks; c++) {
		for (int n = 0; n < nc; n++) {
			for (int f = 0; f < fc; f++) {
				size_t at = c * (uint64_t)o->copies + (uint64_t)(n * fc + f);
				o->role[at] = (cdev + f * nc) % rd;
				o->row[at] = off ? crow * (uint64_t)fc + (uint64_t)f
				                 : crow + (uint64_t)f * share;
			}
			if (++cdev == rd) {
				cdev = 0;
				crow++;
			}
		}
	}
}

static void random_r10_geom(uint64_t *st, struct layout_geometry *g)
{
	memset(g, 0, sizeof(*g));
	g->level = 10;
	for (;;) {
		g->raid_disks = 2 + (int)rnd(st, 15);
		int kind = (int)rnd(st, 5);
		int copies = 2 + (int)rnd(st, 3);
		if (copies > g->raid_disks)
			continue;
		if (kind == 0)
			g->layout = 0x100u | (uint32_t)copies; /* near */
		else if (kind == 1)
			g->layout = (uint32_t)copies << 8 | 1u; /* far */
		else if (kind == 2)
			g->layout = 0x10000u | (uint32_t)copies << 8 | 1u; /* offset */
		else if (kind == 3) {
			/* near x far combination */
			if (copies != 4 || g->raid_disks < 4)
				continue;
			g->layout = 0x202;
		} else {
			/* near x offset: only where near copies never wrap */
			if (copies != 4 || g->raid_disks < 4 || g->raid_disks % 2)
				continue;
			g->layout = 0x10202;
		}
		break;
	}
	g->chunk_sectors = 8u << rnd(st, 9);
	g->dev_sectors = g->chunk_sectors * (1 + rnd(st, 12)) + rnd(st, g->chunk_sectors);
}

static void test_raid10_reference(void)
{
	uint64_t st = 0x5eed0010;
	char err[256];
	int checked = 0;
	for (int iter = 0; iter < 3000; iter++) {
		struct layout_geometry g;
		random_r10_geom(&st, &g);
		const struct layout_ops *ops = layout_ops_for(10);
		int rc = layout_validate(&g, err, sizeof(err));
		struct r10ref o;
		ref_r10(&g, &o);
		if (o.chunks == 0) {
			/* too small for even one row: must be refused */
			CHECKF(rc == -EINVAL, "layout %x n %d dev %llu", g.layout, g.raid_disks,
			       (unsigned long long)g.dev_sectors);
			free(o.role);
			free(o.row);
			continue;
		}
		CHECKF(rc == 0, "layout %x n %d: %s", g.layout, g.raid_disks, err);
		checked++;
		uint64_t cs = g.chunk_sectors;
		CHECK_EQ_U64(ops->array_sectors(&g), o.chunks * cs);
		CHECK(ops->ncopies(&g) == o.copies);
		CHECK_EQ_U64(ops->member_used(&g, 0), o.dev_chunks * cs);
		int n = g.raid_disks;
		/* occupancy of every (member, chunk row) cell */
		uint64_t cells = (uint64_t)n * o.dev_chunks;
		uint8_t *occ = calloc(cells ? cells : 1, 1);
		for (uint64_t c = 0; c < o.chunks; c++) {
			uint64_t offs = rnd(&st, cs);
			for (int k = 0; k < o.copies; k++) {
				struct layout_loc loc;
				uint64_t len = 0;
				size_t at = c * (uint64_t)o.copies + (uint64_t)k;
				CHECK(ops->map(&g, c * cs + offs, k, &loc, &len) == 0);
				CHECKF(loc.role == o.role[at] &&
				           loc.sector == o.row[at] * cs + offs,
				       "layout %x n %d c %llu copy %d: (%d,%llu) vs (%d,%llu)",
				       g.layout, n, (unsigned long long)c, k, loc.role,
				       (unsigned long long)loc.sector, o.role[at],
				       (unsigned long long)(o.row[at] * cs + offs));
				CHECK_EQ_U64(len, cs - offs);
				CHECK(loc.sector < o.dev_chunks * cs);
				if (loc.sector < o.dev_chunks * cs && loc.role >= 0 &&
				    loc.role < n) {
					uint64_t cell =
					    (uint64_t)loc.role * o.dev_chunks + loc.sector / cs;
					CHECK(occ[cell] == 0); /* injective: no two copies share */
					occ[cell] = 1;
				}
				uint64_t back = ~0ull;
				CHECK(ops->unmap(&g, loc.role, loc.sector, &back) == LAYOUT_DATA);
				CHECK_EQ_U64(back, c * cs + offs);
			}
		}
		/* every cell not written is reported unused by unmap */
		for (int r = 0; r < n; r++)
			for (uint64_t row = 0; row < o.dev_chunks; row++) {
				uint64_t back;
				int u = ops->unmap(&g, r, row * cs, &back);
				CHECK((u == LAYOUT_DATA) ==
				      (occ[(uint64_t)r * o.dev_chunks + row] != 0));
			}
		free(occ);
		/* readable: brute force over the reference table */
		for (int t = 0; t < 20; t++) {
			bool miss[LAYOUT_MAX_MEMBERS] = {0};
			int nmiss = 1 + (int)rnd(&st, (uint64_t)n);
			for (int j = 0; j < nmiss; j++)
				miss[rnd(&st, (uint64_t)n)] = true;
			bool ok = true;
			for (uint64_t c = 0; c < o.chunks && ok; c++) {
				bool any = false;
				for (int k = 0; k < o.copies; k++)
					any |= !miss[o.role[c * (uint64_t)o.copies + (uint64_t)k]];
				ok = any;
			}
			CHECKF(ops->readable(&g, miss) == ok, "layout %x n %d", g.layout, n);
		}
		free(o.role);
		free(o.row);
	}
	CHECK(checked > 2000);
}

/* ------------------------------------------------------------------ */
/* raid0 / linear / raid1                                              */
/* ------------------------------------------------------------------ */

/* raid0 by walking: each member has a cursor; within a zone (the members
 * still larger than where the zone starts) the chunks go round the zone's
 * members in role order, starting (original layout) with the member the
 * chunk number from the array start selects, or (alternate) the first. */
static void test_raid0_reference(void)
{
	uint64_t st = 0x5eed0000;
	char err[256];
	for (int iter = 0; iter < 2000; iter++) {
		struct layout_geometry g;
		memset(&g, 0, sizeof(g));
		g.level = 0;
		g.raid_disks = 1 + (int)rnd(&st, 16);
		/* md allows any chunk for raid0; mostly powers of two */
		g.chunk_sectors =
		    rnd(&st, 4) ? 8u << rnd(&st, 9) : 8u * (uint32_t)(1 + rnd(&st, 24));
		int nsizes = 1 + (int)rnd(&st, 4);
		uint64_t sizes[4] = {0};
		for (int j = 0; j < nsizes; j++)
			sizes[j] = g.chunk_sectors * (1 + rnd(&st, 8)) + rnd(&st, g.chunk_sectors);
		for (int r = 0; r < g.raid_disks; r++)
			g.member_sectors[r] = sizes[rnd(&st, (uint64_t)nsizes)];
		g.layout = 1 + (uint32_t)rnd(&st, 2);
		const struct layout_ops *ops = layout_ops_for(0);
		int rc = ops->validate(&g, err, sizeof(err));
		CHECKF(rc == 0, "%s", err);
		if (rc)
			continue;
		uint64_t cs = g.chunk_sectors, total = 0;
		uint64_t cur[LAYOUT_MAX_MEMBERS] = {0}, rounded[LAYOUT_MAX_MEMBERS] = {0};
		int distinct = 0;
		for (int r = 0; r < g.raid_disks; r++) {
			rounded[r] = g.member_sectors[r] / cs * cs;
			total += rounded[r];
			bool seen = false;
			for (int q = 0; q < r; q++)
				seen |= rounded[q] == rounded[r];
			distinct += !seen;
		}
		/* the kernel's raid0_size() masks each rounded size with
		 * ~(chunk - 1): the array may end before the zones do when the
		 * chunk is not a power of two */
		uint64_t ktotal = 0;
		for (int r = 0; r < g.raid_disks; r++)
			ktotal += rounded[r] & ~(cs - 1);
		CHECK_EQ_U64(ops->array_sectors(&g), ktotal);
		uint64_t lchunk = 0, zstart = 0;
		while (lchunk * cs < total) {
			int members[LAYOUT_MAX_MEMBERS] = {0}, nb = 0;
			uint64_t zend = UINT64_MAX;
			for (int r = 0; r < g.raid_disks; r++)
				if (rounded[r] > zstart) {
					members[nb++] = r;
					if (rounded[r] < zend)
						zend = rounded[r];
				}
			uint64_t zchunks = (zend - zstart) / cs * (uint64_t)nb;
			int pick = g.layout == 1 ? (int)(lchunk % (uint64_t)nb) : 0;
			for (uint64_t z = 0; z < zchunks; z++, lchunk++) {
				int r = members[pick];
				pick = (pick + 1) % nb;
				uint64_t off = rnd(&st, cs), len = 0, back = ~0ull;
				struct layout_loc loc;
				if (lchunk * cs + off >= ktotal) {
					CHECK(ops->map(&g, lchunk * cs + off, 0, &loc, &len) ==
					      -ERANGE);
					CHECK(ops->unmap(&g, r, zstart + cur[r] * cs + off,
					                 &back) == -ERANGE);
					cur[r]++;
					continue;
				}
				CHECK(ops->map(&g, lchunk * cs + off, 0, &loc, &len) == 0);
				CHECKF(loc.role == r && loc.sector == zstart + cur[r] * cs + off,
				       "raid0 layout %u chunk %llu: (%d,%llu) vs (%d,%llu)",
				       g.layout, (unsigned long long)lchunk, loc.role,
				       (unsigned long long)loc.sector, r,
				       (unsigned long long)(zstart + cur[r] * cs + off));
				CHECK_EQ_U64(len, cs - off < ktotal - lchunk * cs - off
				                      ? cs - off
				                      : ktotal - lchunk * cs - off);
				CHECK(ops->unmap(&g, r, zstart + cur[r] * cs + off, &back) ==
				      LAYOUT_DATA);
				CHECK_EQ_U64(back, lchunk * cs + off);
				cur[r]++;
			}
			for (int j = 0; j < nb; j++)
				cur[members[j]] = 0;
			zstart = zend;
		}
		/* multi-zone arrays need a layout */
		g.layout = 0;
		rc = ops->validate(&g, err, sizeof(err));
		CHECK(distinct > 1 ? rc == -EINVAL && strstr(err, "multi-zone") : rc == 0);
	}
}

static void test_linear_raid1(void)
{
	uint64_t st = 0x5eed0002;
	for (int iter = 0; iter < 500; iter++) {
		struct layout_geometry g;
		memset(&g, 0, sizeof(g));
		g.level = -1;
		g.raid_disks = 1 + (int)rnd(&st, 16);
		g.chunk_sectors = rnd(&st, 2) ? 0 : 8u << rnd(&st, 4);
		for (int r = 0; r < g.raid_disks; r++)
			g.member_sectors[r] = 200 + rnd(&st, 3000);
		const struct layout_ops *ops = layout_ops_for(-1);
		CHECK(ops->validate(&g, NULL, 0) == 0);
		uint64_t lsec = 0;
		for (int r = 0; r < g.raid_disks; r++) {
			uint64_t sz = g.member_sectors[r];
			if (g.chunk_sectors)
				sz = sz / g.chunk_sectors * g.chunk_sectors;
			for (uint64_t s = 0; s < sz; s += 1 + rnd(&st, 97), lsec += 0) {
				struct layout_loc loc;
				uint64_t len;
				CHECK(ops->map(&g, lsec + s, 0, &loc, &len) == 0);
				CHECK(loc.role == r && loc.sector == s && len == sz - s);
			}
			lsec += sz;
		}
		CHECK_EQ_U64(ops->array_sectors(&g), lsec);
		struct layout_loc loc;
		uint64_t len;
		CHECK(ops->map(&g, lsec, 0, &loc, &len) == -ERANGE);

		struct layout_geometry m;
		memset(&m, 0, sizeof(m));
		m.level = 1;
		m.raid_disks = g.raid_disks;
		m.dev_sectors = 1000 + rnd(&st, 1000);
		const struct layout_ops *r1 = layout_ops_for(1);
		CHECK(r1->validate(&m, NULL, 0) == 0);
		CHECK(r1->ncopies(&m) == m.raid_disks);
		for (int c = 0; c < m.raid_disks; c++) {
			CHECK(r1->map(&m, 17, c, &loc, &len) == 0);
			CHECK(loc.role == c && loc.sector == 17 && len == m.dev_sectors - 17);
		}
		bool miss[LAYOUT_MAX_MEMBERS] = {0};
		for (int r = 0; r < m.raid_disks - 1; r++)
			miss[r] = true;
		CHECK(r1->readable(&m, miss));
		miss[m.raid_disks - 1] = true;
		CHECK(!r1->readable(&m, miss));
	}
}

static void test_parity_readable(void)
{
	for (int lv = 4; lv <= 6; lv++) {
		struct layout_geometry g = {.level = lv,
		                            .layout = lv == 4 ? 5 : 2,
		                            .chunk_sectors = 8,
		                            .raid_disks = 6,
		                            .dev_sectors = 64};
		const struct layout_ops *ops = layout_ops_for(lv);
		for (unsigned set = 0; set < 64; set++) {
			bool miss[6];
			int lost = 0;
			for (int r = 0; r < 6; r++)
				lost += miss[r] = (set >> r) & 1;
			CHECK(ops->readable(&g, miss) == (lost <= (lv == 6 ? 2 : 1)));
		}
	}
}

/* ------------------------------------------------------------------ */
/* validation and names                                                */
/* ------------------------------------------------------------------ */

static int val(int level, uint32_t layout, uint32_t chunk, int disks, uint64_t dev, char *err)
{
	struct layout_geometry g;
	memset(&g, 0, sizeof(g));
	g.level = level;
	g.layout = layout;
	g.chunk_sectors = chunk;
	g.raid_disks = disks;
	g.dev_sectors = dev;
	for (int r = 0; r < LAYOUT_MAX_MEMBERS; r++)
		g.member_sectors[r] = dev;
	err[0] = 0;
	return layout_validate(&g, err, 256);
}

static void test_validate(void)
{
	char e[256];
	CHECK(val(5, 2, 128, 4, 4096, e) == 0);
	CHECK(val(5, 2, 128, 1, 4096, e) == -EINVAL && strstr(e, "at least 2"));
	CHECK(val(5, 2, 128, 2, 4096, e) == 0);
	CHECK(val(6, 2, 128, 3, 4096, e) == -EINVAL && strstr(e, "at least 4"));
	CHECK(val(4, 5, 128, 2, 4096, e) == 0);
	CHECK(val(10, 0x102, 128, 1, 4096, e) == -EINVAL);
	CHECK(val(10, 0x102, 128, 2, 4096, e) == 0);
	CHECK(val(10, 0x103, 128, 2, 4096, e) == -EINVAL && strstr(e, "copies"));
	CHECK(val(10, 0x101, 128, 2, 4096, e) == -EINVAL); /* one copy */
	CHECK(val(10, 0x20201, 128, 4, 4096, e) == -EOPNOTSUPP && strstr(e, "far-set"));
	CHECK(val(10, 0x40201, 128, 4, 4096, e) == -EOPNOTSUPP);
	CHECK(val(10, 0x80201, 128, 4, 4096, e) == -EINVAL);
	CHECK(val(10, 0x10202, 128, 5, 4096, e) == -EOPNOTSUPP);
	CHECK(val(10, 0x10202, 128, 4, 4096, e) == 0);
	CHECK(val(0, 0, 128, 1, 4096, e) == 0);
	CHECK(val(0, 0, 0, 2, 4096, e) == -EINVAL && strstr(e, "chunk"));
	CHECK(val(0, 0, 24, 3, 4096, e) == 0); /* raid0: any chunk */
	CHECK(val(-1, 0, 0, 1, 4096, e) == 0);
	CHECK(val(1, 0, 0, 1, 4096, e) == 0);
	CHECK(val(1, 0, 0, 0, 4096, e) == -EINVAL);
	CHECK(val(7, 0, 0, 4, 4096, e) == -EOPNOTSUPP && strstr(e, "level"));
	/* chunks: powers of two >= 8 sectors for the striped levels */
	const int striped[] = {4, 5, 6, 10};
	for (int i = 0; i < 4; i++) {
		int lv = striped[i];
		uint32_t lay = layout_default(lv);
		CHECK(val(lv, lay, 8, 4, 4096, e) == 0);
		CHECK(val(lv, lay, 2048, 4, 8192, e) == 0);
		CHECK(val(lv, lay, 4, 4, 4096, e) == -EINVAL && strstr(e, "chunk"));
		CHECK(val(lv, lay, 24, 4, 4096, e) == -EINVAL && strstr(e, "power of two"));
		CHECK(val(lv, lay, 0, 4, 4096, e) == -EINVAL);
		CHECK(val(lv, lay, 128, 4, 100, e) == -EINVAL); /* less than a chunk */
		CHECK(val(lv, lay, 128, 300, 4096, e) == -EINVAL);
	}
	/* layouts */
	for (uint32_t l = 0; l < 32; l++) {
		bool r5ok = l <= 5, r6ok = l <= 5 || (l >= 16 && l <= 20);
		CHECK((val(5, l, 128, 4, 4096, e) == 0) == r5ok);
		int rc6 = val(6, l, 128, 5, 4096, e);
		CHECK((rc6 == 0) == r6ok);
		if (l >= 8 && l <= 10)
			CHECK(rc6 == -EOPNOTSUPP && strstr(e, "unsupported layout"));
	}
	CHECK(val(6, 0xffffffffu, 128, 5, 4096, e) == -EINVAL);
	/* absurd sizes */
	CHECK(val(5, 2, 128, 16, UINT64_MAX, e) == -EINVAL && strstr(e, "overflow"));
	CHECK(val(10, 0x102, 128, 4, UINT64_MAX, e) == -EINVAL);
	CHECK(val(-1, 0, 0, 16, UINT64_MAX, e) == -EINVAL);
	CHECK(val(0, 0, 8, 16, UINT64_MAX, e) == -EINVAL);
	CHECK(layout_validate(NULL, e, sizeof(e)) == -EINVAL);
}

static void test_names(void)
{
	int lv;
	const struct {
		const char *s;
		int lv;
	} lvs[] = {{"linear", -1}, {"raid0", 0},  {"0", 0},     {"stripe", 0},  {"raid1", 1},
	           {"1", 1},       {"mirror", 1}, {"raid4", 4}, {"4", 4},       {"raid5", 5},
	           {"5", 5},       {"raid6", 6},  {"6", 6},     {"raid10", 10}, {"10", 10}};
	for (size_t i = 0; i < sizeof(lvs) / sizeof(lvs[0]); i++) {
		CHECK(level_parse(lvs[i].s, &lv) == 0 && lv == lvs[i].lv);
	}
	CHECK(level_parse("raid7", &lv) == -EINVAL);
	CHECK(level_parse("", &lv) == -EINVAL);
	CHECK(level_parse(NULL, &lv) == -EINVAL);
	CHECK(strcmp(level_name(5), "raid5") == 0 && strcmp(level_name(-1), "linear") == 0);

	const struct {
		int lv;
		const char *s;
		uint32_t v;
	} lays[] = {
	    {5, "left-asymmetric", 0},
	    {5, "la", 0},
	    {5, "right-asymmetric", 1},
	    {5, "ra", 1},
	    {5, "left-symmetric", 2},
	    {5, "ls", 2},
	    {5, "right-symmetric", 3},
	    {5, "rs", 3},
	    {5, "parity-first", 4},
	    {5, "parity-last", 5},
	    {6, "left-symmetric", 2},
	    {6, "ddf-zero-restart", 8},
	    {6, "ddf-N-restart", 9},
	    {6, "ddf-N-continue", 10},
	    {6, "left-asymmetric-6", 16},
	    {6, "right-asymmetric-6", 17},
	    {6, "left-symmetric-6", 18},
	    {6, "right-symmetric-6", 19},
	    {6, "parity-first-6", 20},
	    {10, "n2", 0x102},
	    {10, "n3", 0x103},
	    {10, "f2", 0x201},
	    {10, "f3", 0x301},
	    {10, "o2", 0x10201},
	    {10, "o3", 0x10301},
	    {10, "near=2", 0x102},
	    {10, "far=2", 0x201},
	    {10, "offset=2", 0x10201},
	    {10, "n2f2", 0x202},
	    {0, "original", 1},
	    {0, "alternate", 2},
	};
	for (size_t i = 0; i < sizeof(lays) / sizeof(lays[0]); i++) {
		uint32_t v = 12345;
		CHECKF(layout_parse(lays[i].lv, lays[i].s, &v) == 0 && v == lays[i].v, "%s",
		       lays[i].s);
	}
	uint32_t v;
	char buf0[64];
	CHECK(layout_parse(5, "left-symmetric-6", &v) == -EINVAL);
	CHECK(layout_parse(5, "bogus", &v) == -EINVAL);
	/* mdadm's r5layout: the ddf names as raid5 algorithms (printed by
	 * their own names) */
	CHECK(layout_parse(5, "ddf-zero-restart", &v) == 0 && v == 1);
	CHECK(layout_parse(5, "ddf-N-restart", &v) == 0 && v == 0);
	CHECK(layout_parse(5, "ddf-N-continue", &v) == 0 && v == 2);
	CHECK(layout_name(5, 1, buf0, sizeof(buf0)) == 0 && strcmp(buf0, "right-asymmetric") == 0);
	CHECK(layout_parse(5, "2", &v) == -EINVAL && layout_parse(6, "18", &v) == -EINVAL);
	CHECK(layout_parse(10, "x2", &v) == -EINVAL);
	CHECK(layout_parse(10, "n", &v) == -EINVAL);
	CHECK(layout_parse(10, "n0", &v) == -EINVAL);
	CHECK(layout_parse(10, "n2x", &v) == -EINVAL);
	CHECK(layout_parse(10, "f2o2", &v) == -EINVAL);
	CHECK(layout_parse(10, "n999", &v) == -EINVAL);
	CHECK(layout_parse(1, "n2", &v) == -EINVAL);
	/* printing: mdadm's long names, raid10 shorthand; round trip */
	char buf[64];
	CHECK(layout_name(5, 2, buf, sizeof(buf)) == 0 && strcmp(buf, "left-symmetric") == 0);
	CHECK(layout_name(6, 19, buf, sizeof(buf)) == 0 && strcmp(buf, "right-symmetric-6") == 0);
	CHECK(layout_name(10, 0x10201, buf, sizeof(buf)) == 0 && strcmp(buf, "o2") == 0);
	CHECK(layout_name(0, 2, buf, sizeof(buf)) == 0 && strcmp(buf, "alternate") == 0);
	CHECK(layout_name(5, 7, buf, sizeof(buf)) == -EINVAL && strcmp(buf, "-unknown-") == 0);
	for (size_t i = 0; i < sizeof(lays) / sizeof(lays[0]); i++) {
		uint32_t back;
		CHECK(layout_name(lays[i].lv, lays[i].v, buf, sizeof(buf)) == 0);
		CHECKF(layout_parse(lays[i].lv, buf, &back) == 0 && back == lays[i].v, "%s", buf);
	}
	CHECK(layout_default(5) == 2 && layout_default(6) == 2 && layout_default(10) == 0x102);
	CHECK(layout_default(4) == 0); /* as mdadm 4.2 wrote it (md-vectors raid4) */
	CHECK(layout_parse(4, "parity-last", &v) == 0 && v == 0);
	CHECK(layout_parse(4, "left-symmetric", &v) == -EINVAL);
	CHECK(layout_name(4, 0, buf, sizeof(buf)) == 0 && strcmp(buf, "parity-last") == 0);
}

/* Garbage geometries: validate refuses or accepts without crashing, and
 * whatever it accepts maps consistently (map then unmap gives the sector
 * back; nothing lands outside member_used). ASan/UBSan watch the rest. */
static void test_garbage_geometry(void)
{
	uint64_t st = 0x5eed0bad;
	static const int levels[] = {-1, 0, 1, 4, 5, 6, 10, 2, 3, 7, -2, 11};
	int accepted = 0;
	for (int iter = 0; iter < 20000; iter++) {
		struct layout_geometry g;
		memset(&g, 0, sizeof(g));
		g.level = levels[rnd(&st, 12)];
		g.raid_disks = (int)rnd(&st, 8) == 0 ? (int)t_rand(&st) : (int)rnd(&st, 20) - 2;
		g.layout = rnd(&st, 3) ? (uint32_t)rnd(&st, 0x400) : (uint32_t)t_rand(&st);
		if (g.level == 10 && rnd(&st, 2))
			g.layout = (uint32_t)(rnd(&st, 5) << 8 | rnd(&st, 5) | rnd(&st, 2) << 16);
		g.chunk_sectors = rnd(&st, 4) ? 1u << rnd(&st, 13) : (uint32_t)t_rand(&st);
		int big = rnd(&st, 6) == 0;
		g.dev_sectors = big ? t_rand(&st) : rnd(&st, 1u << 16);
		for (int r = 0; r < LAYOUT_MAX_MEMBERS; r++)
			g.member_sectors[r] = big ? t_rand(&st) : rnd(&st, 1u << 16);
		char err[256] = "";
		int rc = layout_validate(&g, err, sizeof(err));
		if (rc) {
			CHECKF(rc == -EINVAL || rc == -EOPNOTSUPP, "rc %d", rc);
			CHECK(err[0] != 0);
			continue;
		}
		accepted++;
		const struct layout_ops *ops = layout_ops_for(g.level);
		uint64_t total = ops->array_sectors(&g);
		CHECK(total > 0);
		for (int t = 0; t < 20; t++) {
			uint64_t lsec = t == 0 ? total - 1 : rnd(&st, total);
			for (int c = 0; c < ops->ncopies(&g); c++) {
				struct layout_loc loc;
				uint64_t len = 0, back = ~0ull;
				CHECK(ops->map(&g, lsec, c, &loc, &len) == 0);
				CHECK(loc.role >= 0 && loc.role < g.raid_disks);
				CHECK(len >= 1 && len <= total - lsec);
				CHECK(loc.sector + len <= ops->member_used(&g, loc.role));
				CHECK(ops->unmap(&g, loc.role, loc.sector, &back) == LAYOUT_DATA);
				CHECK(ops->ncopies(&g) > 1 || back == lsec);
			}
		}
		struct layout_loc loc;
		uint64_t len;
		CHECK(ops->map(&g, total, 0, &loc, &len) == -ERANGE);
	}
	CHECK(accepted > 1000);
}

TEST_MAIN(T(test_parity_reference), T(test_qorder_differs), T(test_raid10_reference),
          T(test_raid0_reference), T(test_linear_raid1), T(test_parity_readable), T(test_validate),
          T(test_names), T(test_garbage_geometry))
