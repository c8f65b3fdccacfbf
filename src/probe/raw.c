/* Raw striping: a raid0 whose logical volume starts with no file system,
 * partition table or LVM label, so nothing names its chunk or order. What is
 * left is the data's own continuity: at a chunk boundary the bytes that end
 * one member's chunk go on, in the volume, at the start of the next role's
 * chunk of the same row (the last role's at the start of the first role's
 * next chunk), while the member's own next bytes belong to a chunk N chunks
 * further on. Files are locally alike (text with its alphabet, zeros, tables,
 * compressed runs), so at the right chunk and order the windows either side
 * of a boundary look alike more often than the member's own continuation
 * does; at a wrong chunk the member's own continuation is the better match
 * (a chunk too small) or neither is (too large), and a wrong order puts
 * unrelated windows side by side.
 *
 * The likeness of two 1 KiB windows is the distance of their byte
 * histograms (high and low nibbles, 32 bins). A boundary agrees with a
 * geometry when the window it puts after a chunk is closer than the
 * member's own continuation by a margin, disagrees when it is further by the
 * margin, and says nothing otherwise (zeros on both sides, alike data
 * everywhere, random data). The order is the one of least total distance
 * (branch and bound over the orders, with a node budget); the next best
 * order is scored too, and any within noise of the best are listed as ties
 * by the caller. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"
#include "uraid.h"

#define WIN        PROBE_WIN
#define ROWS       64
#define MARGIN     PROBE_MARGIN
#define MIN_VOTES  8
#define MAX_NODES  2000000L /* order-search nodes per chunk size */
#define SCAN_ZEROS (4u << 20)

struct feat {
	uint16_t h[32];
};

static void feat_of(const uint8_t *p, struct feat *f)
{
	memset(f, 0, sizeof(*f));
	for (unsigned i = 0; i < WIN; i++) {
		f->h[p[i] >> 4]++;
		f->h[16 + (p[i] & 15)]++;
	}
}

/* 0 (alike) .. 1 (nothing in common). */
static double dist(const struct feat *a, const struct feat *b)
{
	unsigned s = 0;
	for (int i = 0; i < 32; i++)
		s += (unsigned)abs((int)a->h[i] - (int)b->h[i]);
	return (double)s / (4.0 * WIN);
}

double probe_window_dist(const uint8_t *a, const uint8_t *b)
{
	struct feat x, y;
	feat_of(a, &x);
	feat_of(b, &y);
	return dist(&x, &y);
}

/* Per sampled row r and member a: the window that ends a's chunk r (L),
 * the one that starts it (F), and a's own next window (X: the start of its
 * chunk r + 1). */
struct rows {
	int n, nrows;
	struct feat *L, *F, *X;
};
#define AT(t, r, a) ((t)[(size_t)(r)*PROBE_MAX_MEMBERS + (size_t)(a)])

struct search {
	const struct rows *rw;
	double cross[PROBE_MAX_MEMBERS][PROBE_MAX_MEMBERS]; /* summed over rows */
	double wrap[PROBE_MAX_MEMBERS][PROBE_MAX_MEMBERS];
	int cur[PROBE_MAX_MEMBERS];
	int best[2][PROBE_MAX_MEMBERS];
	double cost[2];
	long nodes;
	bool cut;
};

static void keep_order(struct search *s, double c)
{
	int n = s->rw->n;
	if (c < s->cost[0]) {
		s->cost[1] = s->cost[0];
		memcpy(s->best[1], s->best[0], sizeof(s->best[0]));
		s->cost[0] = c;
		memcpy(s->best[0], s->cur, sizeof(int) * (size_t)n);
	} else if (c < s->cost[1]) {
		s->cost[1] = c;
		memcpy(s->best[1], s->cur, sizeof(int) * (size_t)n);
	}
}

static void dfs(struct search *s, int depth, uint32_t used, double c)
{
	int n = s->rw->n;
	if (c >= s->cost[1] || s->cut)
		return;
	if (++s->nodes > MAX_NODES) {
		s->cut = true;
		return;
	}
	if (depth == n) {
		keep_order(s, c + s->wrap[s->cur[n - 1]][s->cur[0]]);
		return;
	}
	for (int m = 0; m < n; m++) {
		if (used & (1u << m))
			continue;
		s->cur[depth] = m;
		dfs(s, depth + 1, used | 1u << m, depth ? c + s->cross[s->cur[depth - 1]][m] : 0);
	}
}

/* The votes of the boundaries an order puts together. */
static void votes(const struct rows *rw, const int *o, int *agree, int *disagree)
{
	int n = rw->n;
	*agree = *disagree = 0;
	for (int r = 0; r < rw->nrows; r++)
		for (int j = 0; j < n; j++) {
			int a = o[j];
			double self = dist(&AT(rw->L, r, a), &AT(rw->X, r, a));
			double e = j < n - 1 ? dist(&AT(rw->L, r, a), &AT(rw->F, r, o[j + 1]))
			                     : dist(&AT(rw->L, r, a), &AT(rw->X, r, o[0]));
			*agree += e + MARGIN < self;
			*disagree += e > self + MARGIN;
		}
}

static int read_rows(const struct probe_input *in, uint64_t doff, uint64_t chunk, uint64_t smallest,
                     struct rows *rw, uint64_t *bytes)
{
	uint64_t total = (smallest - doff) / chunk;
	if (total < 3)
		return -ENOSPC;
	rw->nrows = total - 1 < ROWS ? (int)(total - 1) : ROWS;
	uint8_t buf[2 * WIN];
	for (int r = 0; r < rw->nrows; r++) {
		uint64_t row = (total - 1) * (uint64_t)r / (uint64_t)rw->nrows;
		for (int a = 0; a < rw->n; a++) {
			int rc = in->read(in->ctx, a, buf, WIN, doff + row * chunk);
			if (rc == 0)
				rc = in->read(in->ctx, a, buf + WIN, WIN, doff + row * chunk + WIN);
			if (rc < 0)
				return rc;
			feat_of(buf, &AT(rw->F, r, a));
			rc = in->read(in->ctx, a, buf, 2 * WIN, doff + (row + 1) * chunk - WIN);
			if (rc < 0)
				return rc;
			*bytes += 3 * WIN;
			feat_of(buf, &AT(rw->L, r, a));
			feat_of(buf + WIN, &AT(rw->X, r, a));
		}
	}
	return 0;
}

/* Where the data starts: the members' common run of leading zeros (an md
 * superblock zeroed, the space before the data offset), rounded down to
 * 4 KiB; 0 when a member has data at its start. */
static int leading_zeros(const struct probe_input *in, uint64_t smallest, uint64_t *doff,
                         uint64_t *bytes)
{
	uint8_t *b = malloc(4096);
	if (!b)
		return -ENOMEM;
	uint64_t lim = smallest / 4 < SCAN_ZEROS ? smallest / 4 : SCAN_ZEROS;
	*doff = lim;
	for (int m = 0; m < in->n && *doff; m++) {
		uint64_t off = 0;
		for (; off < *doff; off += 4096) {
			int rc = in->read(in->ctx, m, b, 4096, off);
			*bytes += 4096;
			if (rc < 0) {
				free(b);
				return rc;
			}
			bool z = true;
			for (int i = 0; i < 4096 && z; i++)
				z = !b[i];
			if (!z)
				break;
		}
		*doff = off;
	}
	free(b);
	if (*doff >= lim)
		*doff = 0; /* all zeros as far as looked: says nothing */
	/* the volume may begin with zeros of its own: md puts data at a MiB */
	if (*doff >= (1u << 20))
		*doff &= ~(uint64_t)((1u << 20) - 1);
	return 0;
}

static void fill(struct probe_candidate *c, int n, uint32_t chunk_sectors, uint64_t doff,
                 const int *o)
{
	memset(c, 0, sizeof(*c));
	c->level = URAID_LEVEL_RAID0;
	c->chunk_sectors = chunk_sectors;
	c->raid_devices = n;
	c->data_offset = doff / 512;
	for (int r = 0; r < n; r++)
		c->order[r] = o[r];
	c->raw = true;
}

static void describe(struct probe_candidate *c, int rows, const char *more)
{
	snprintf(c->evidence, sizeof(c->evidence),
	         "no volume signature: content continuity at chunk boundaries (%d sampled rows): "
	         "%d boundaries where the next role's chunk continues the data better than the "
	         "member's own next bytes, %d where worse%s",
	         rows, c->agree, c->disagree, more);
}

int probe_raw(const struct probe_input *in, struct probe_result *r)
{
	static const uint32_t chunks[] = {8, 16, 32, 64, 128, 256, 512, 1024, 2048};
	int n = in->n;
	if (n < 2 || n > PROBE_MAX_MEMBERS)
		return 0;
	uint64_t smallest = UINT64_MAX;
	for (int m = 0; m < n; m++)
		smallest = in->size[m] < smallest ? in->size[m] : smallest;
	uint64_t zoff;
	int rc = leading_zeros(in, smallest, &zoff, &r->bytes_read);
	if (rc < 0)
		return rc;
	struct rows rw = {.n = n};
	size_t cells = (size_t)ROWS * PROBE_MAX_MEMBERS;
	rw.L = calloc(cells, sizeof(struct feat));
	rw.F = calloc(cells, sizeof(struct feat));
	rw.X = calloc(cells, sizeof(struct feat));
	struct search *s = malloc(sizeof(*s));
	if (!rw.L || !rw.F || !rw.X || !s) {
		rc = -ENOMEM;
		goto out;
	}
	/* zeros before the data on every member: an md data offset (a raw
	 * volume that itself starts with zeros reads the same from there) */
	uint64_t doff = zoff;
	struct probe_candidate best = {0};
	bool have = false;
	for (size_t ci = 0; ci < sizeof(chunks) / sizeof(chunks[0]); ci++) {
		uint64_t chunk = (uint64_t)chunks[ci] * 512;
		if (in->progress) {
			char what[120];
			snprintf(what, sizeof(what),
			         "raw striping: content continuity at chunk %lluK",
			         (unsigned long long)chunk / 1024);
			in->progress(in->ctx, what);
		}
		rc = read_rows(in, doff, chunk, smallest, &rw, &r->bytes_read);
		if (rc == -ENOSPC)
			continue;
		if (rc < 0)
			goto out;
		memset(s, 0, sizeof(*s));
		s->rw = &rw;
		s->cost[0] = s->cost[1] = INFINITY;
		for (int a = 0; a < n; a++)
			for (int b = 0; b < n; b++)
				for (int row = 0; row < rw.nrows; row++) {
					const struct feat *la = &AT(rw.L, row, a);
					s->cross[a][b] += dist(la, &AT(rw.F, row, b));
					s->wrap[a][b] += dist(la, &AT(rw.X, row, b));
				}
		dfs(s, 0, 0, 0);
		if (!isfinite(s->cost[0]))
			continue;
		for (int k = 0; k < 2; k++) {
			if (!isfinite(s->cost[k]))
				continue;
			struct probe_candidate c;
			fill(&c, n, chunks[ci], doff, s->best[k]);
			votes(&rw, s->best[k], &c.agree, &c.disagree);
			c.score =
			    c.agree + c.disagree ? (double)c.agree / (c.agree + c.disagree) : 0;
			char more[120] = "";
			if (s->cut)
				snprintf(more, sizeof(more),
				         "; the order search was cut short after %ld orders",
				         MAX_NODES);
			if (doff)
				snprintf(more + strlen(more), sizeof(more) - strlen(more),
				         "; data offset: the members are zeros before it");
			describe(&c, rw.nrows, more);
			bool convincing = c.agree >= MIN_VOTES && 10 * c.disagree <= c.agree;
			if (convincing && r->ncand < PROBE_MAX_CAND)
				r->cand[r->ncand++] = c;
			else if (!convincing && (!have || c.agree - 3 * c.disagree >
			                                      best.agree - 3 * best.disagree)) {
				best = c;
				have = true;
			}
		}
	}
	if (!r->ncand && have && !r->have_rejected) {
		r->best_rejected = best;
		r->have_rejected = true;
	}
	rc = 0;
out:
	free(rw.L);
	free(rw.F);
	free(rw.X);
	free(s);
	return rc;
}
