/* Which member plays which role, without trying every permutation: a
 * geometry puts each self-naming structure of the file system (probe_point:
 * a backup superblock with its group number, an XFS allocation group
 * header with its number) at one place of one role; the member that holds
 * it there is that role's member, and a role whose place holds it on no
 * member is the missing one. The intersection of what the points allow
 * leaves few orders to hand to the full checks (fs_evidence.c, redundancy.c)
 * where N! were; roles no point lands on keep every member. A geometry
 * whose points are on no member at all (and no member is missing) is
 * dropped here, as fs_evidence would find those structures out of place. */
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"
#include "probe/probe.h"
#include "uraid.h"

#define MISSING_BIT (1u << PROBE_MAX_MEMBERS)
#define MAX_LEAVES  200000 /* orders handed on per geometry before giving up */
/* Roles that no check needs (the file system's structures pin the others)
 * over a fixed set of members: every order of them reads the checked
 * places alike, so only this many are handed on, marked as not pinned
 * (they are ties, not answers). */
#define FREE_MAX 24

struct dfs {
	const struct probe_order_search *s;
	struct probe_candidate *c;
	uint32_t allowed[PROBE_MAX_MEMBERS];
	int seq[PROBE_MAX_MEMBERS]; /* the roles go() fills, in this order */
	int nseq;
	long leaves, nodes;
	bool stop;
	long free_left; /* > 0: completions of unpinned roles still to hand on */
	bool free_stop;
};

/* Every choice for the roles seq[depth..]. */
static void go(struct dfs *d, int depth, uint32_t used, int missing)
{
	if (d->stop || d->free_stop)
		return;
	if (depth == d->nseq) {
		if (missing != d->s->miss)
			return;
		if (++d->leaves > MAX_LEAVES || !d->s->each(d->s->ctx, d->c))
			d->stop = true;
		if (d->free_left > 0 && --d->free_left == 0)
			d->free_stop = true;
		return;
	}
	int role = d->seq[depth];
	uint32_t a = d->allowed[role];
	if ((a & MISSING_BIT) && missing < d->s->miss) {
		if (!d->s->mirror || role == 0 || d->c->order[role - 1] < 0) {
			d->c->order[role] = -1;
			go(d, depth + 1, used, missing + 1);
		}
	}
	for (int m = 0; m < d->s->in->n && !d->stop; m++) {
		if (!(a & (1u << m)) || (used & (1u << m)))
			continue;
		if (d->s->mirror && role > 0 && d->c->order[role - 1] >= m)
			continue;
		d->c->order[role] = m;
		go(d, depth + 1, used | 1u << m, missing);
	}
}

/* Roles chosen as the checks need them: the partial order is checked, and
 * only the role its first unanswerable check needs is branched on; a
 * partial order the checks already refute is dropped with everything
 * below it. What no check needs is enumerated (go). */
static void lazy(struct dfs *d, uint32_t used, int missing)
{
	int N = d->c->raid_devices;
	if (d->stop)
		return;
	if (++d->nodes > MAX_LEAVES) {
		d->stop = true;
		d->leaves = MAX_LEAVES + 1;
		return;
	}
	int need = d->s->partial(d->s->ctx, d->c);
	if (need == -1)
		return;
	if (need < 0 || need >= N || d->c->order[need] != PROBE_ROLE_UNKNOWN) {
		d->nseq = 0;
		for (int r = 0; r < N; r++)
			if (d->c->order[r] == PROBE_ROLE_UNKNOWN)
				d->seq[d->nseq++] = r;
		int nseq = d->nseq, seq[PROBE_MAX_MEMBERS];
		memcpy(seq, d->seq, sizeof(seq));
		d->c->unpinned = nseq > 1 ? nseq : 0;
		/* with members left out the free roles also choose which are
		 * in the set, which parity may tell: all of them then */
		d->free_left = nseq > 1 && d->s->out == 0 ? FREE_MAX : 0;
		d->free_stop = false;
		go(d, 0, used, missing);
		d->c->unpinned = 0;
		d->free_left = 0;
		d->free_stop = false;
		for (int i = 0; i < nseq; i++)
			d->c->order[seq[i]] = PROBE_ROLE_UNKNOWN;
		return;
	}
	uint32_t a = d->allowed[need];
	if ((a & MISSING_BIT) && missing < d->s->miss) {
		d->c->order[need] = -1;
		lazy(d, used, missing + 1);
	}
	for (int m = 0; m < d->s->in->n && !d->stop; m++) {
		if (!(a & (1u << m)) || (used & (1u << m)))
			continue;
		d->c->order[need] = m;
		lazy(d, used | 1u << m, missing);
	}
	d->c->order[need] = PROBE_ROLE_UNKNOWN;
}

/* The geometry with every role the size of the smallest input member: the
 * points are placed with it only where no member's size changes the
 * mapping (limit). */
static int uniform_geometry(const struct probe_input *in, const struct probe_candidate *c,
                            struct layout_geometry *g, uint64_t *limit)
{
	uint64_t smallest = UINT64_MAX, largest = 0;
	for (int i = 0; i < in->n; i++) {
		uint64_t s = in->size[i] / 512;
		smallest = s < smallest ? s : smallest;
		largest = s > largest ? s : largest;
	}
	if (smallest <= c->data_offset)
		return -1;
	memset(g, 0, sizeof(*g));
	g->level = c->level;
	g->layout = c->layout;
	g->chunk_sectors = c->chunk_sectors;
	g->raid_disks = c->raid_devices;
	g->dev_sectors = smallest - c->data_offset;
	for (int r = 0; r < c->raid_devices; r++)
		g->member_sectors[r] = g->dev_sectors;
	if (layout_validate(g, NULL, 0) < 0)
		return -1;
	const struct layout_ops *ops = layout_ops_for(g->level);
	*limit = ops->array_sectors(g) * 512;
	if (largest != smallest && c->level == URAID_LEVEL_LINEAR)
		*limit = g->dev_sectors * 512;
	return 0;
}

long probe_orders(const struct probe_order_search *s, struct probe_candidate *c)
{
	const struct probe_input *in = s->in;
	int N = c->raid_devices, n = in->n;
	if (N - s->miss != n - s->out || N < 1 || N > PROBE_MAX_MEMBERS)
		return 0;
	struct layout_geometry g;
	uint64_t limit;
	if (uniform_geometry(in, c, &g, &limit) < 0)
		return 0;
	const struct layout_ops *ops = layout_ops_for(g.level);
	struct dfs d = {.s = s, .c = c};
	uint32_t every = (1u << n) - 1;
	for (int r = 0; r < N; r++)
		d.allowed[r] = every | (s->miss ? MISSING_BIT : 0);
	uint8_t blk[512];
	int copies = ops->ncopies(&g);
	/* logical sector 0: where the volume start was found (or, for a
	 * parity level, on a missing member: what was found is its parity) */
	struct layout_loc loc;
	uint64_t run;
	if (copies == 1 && ops->map(&g, 0, 0, &loc, &run) == 0) {
		uint32_t a = s->start_member >= 0 ? 1u << s->start_member : 0;
		if (ops->stripe && s->miss)
			a |= MISSING_BIT;
		d.allowed[loc.role] &= a;
	}
	for (int p = 0; p < s->npts; p++) {
		if (s->pts[p].off + 512 > limit)
			continue;
		for (int k = 0; k < copies; k++) {
			if (ops->map(&g, s->pts[p].off / 512, k, &loc, &run) < 0)
				continue;
			uint64_t at = (c->data_offset + loc.sector) * 512;
			uint32_t found = 0;
			for (int m = 0; m < n; m++) {
				if (!(d.allowed[loc.role] & (1u << m)) || at + 512 > in->size[m])
					continue;
				*s->bytes += 512;
				if (in->read(in->ctx, m, blk, 512, at) == 0 &&
				    probe_point_holds(&s->pts[p], blk))
					found |= 1u << m;
			}
			/* on a parity level the member found may hold the parity
			 * of a row otherwise empty: the role may still be missing */
			d.allowed[loc.role] &=
			    found ? found | (ops->stripe ? MISSING_BIT : 0) : MISSING_BIT;
		}
	}
	for (int r = 0; r < N; r++)
		if (!d.allowed[r])
			return 0;
	if (s->partial && !s->mirror && c->level != URAID_LEVEL_LINEAR) {
		for (int r = 0; r < N; r++)
			c->order[r] = PROBE_ROLE_UNKNOWN;
		lazy(&d, 0, 0);
		return d.leaves > MAX_LEAVES ? -1 : d.leaves;
	}
	/* most constrained roles first (raid1 keeps role order: one order
	 * per set of members) */
	d.nseq = N;
	for (int r = 0; r < N; r++)
		d.seq[r] = r;
	for (int i = 0; i < N && !s->mirror; i++)
		for (int j = i + 1; j < N; j++)
			if (__builtin_popcount(d.allowed[d.seq[j]]) <
			    __builtin_popcount(d.allowed[d.seq[i]])) {
				int t = d.seq[i];
				d.seq[i] = d.seq[j];
				d.seq[j] = t;
			}
	go(&d, 0, 0, 0);
	return d.leaves > MAX_LEAVES ? -1 : d.leaves;
}
