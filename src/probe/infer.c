/* probe_run: signatures first, then geometries proposed from where a file
 * system or partition table starts, each scored by the evidence of the data
 * (fs_evidence.c; parity and copies over sampled stripes, redundancy.c).
 * A geometry is convincing only when every check it was put to agrees and
 * there were enough of them; otherwise the result says nothing convincing
 * was found, with the best attempt and its evidence. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"
#include "meta/md_super.h"
#include "probe/probe.h"
#include "uraid.h"

#define SCAN_BYTES       (4u << 20) /* every 4 KiB of a member's start is tried as a data offset */
#define MAX_STARTS       4          /* per member */
#define KEEP             64         /* best candidates re-checked with parity and copies */
#define MIN_AGREE        5
#define MAX_OUT          3    /* unrelated members left out at most */
#define PROBE_XOR_MEMBER (-2) /* a start found in the XOR of all members */
/* Orders and partial orders checked at most for each number of members
 * left out: many members and a volume whose structures leave roles open
 * must not try every order. */
#define MAX_WORK 1500000L

int probe_view_geometry(const struct probe_input *in, const struct probe_candidate *c,
                        struct layout_geometry *g);
void probe_redundancy(const struct probe_input *in, struct probe_candidate *c, uint64_t *bytes);

static void progress(const struct probe_input *in, const char *fmt, const char *a, int b)
{
	if (!in->progress)
		return;
	char line[200];
	snprintf(line, sizeof(line), fmt, a, b);
	in->progress(in->ctx, line);
}

static void add_sig(struct probe_result *r, const struct probe_sig *s)
{
	if (r->nsigs < (int)(sizeof(r->sigs) / sizeof(r->sigs[0])))
		r->sigs[r->nsigs++] = *s;
}

/* md superblocks on every member of one array: the geometry outright. */
static bool from_md(const struct probe_input *in, struct probe_result *r)
{
	const struct probe_sig *first = NULL;
	struct probe_candidate c = {0};
	for (int i = 0; i < r->nsigs; i++) {
		const struct probe_sig *s = &r->sigs[i];
		if (s->kind != PROBE_SIG_MD || s->md_level == -100)
			continue;
		if (!first) {
			first = s;
			c.level = s->md_level;
			c.layout = s->md_layout;
			c.chunk_sectors = s->md_chunk_sectors;
			c.raid_devices = s->md_raid_disks;
			c.data_offset = s->md_data_offset;
			if (c.raid_devices < 1 || c.raid_devices > PROBE_MAX_MEMBERS)
				return false;
			for (int k = 0; k < c.raid_devices; k++)
				c.order[k] = -1;
		}
		if (memcmp(s->md_uuid, first->md_uuid, 16) || s->md_data_offset != c.data_offset)
			continue;
		if (s->md_role >= 0 && s->md_role < c.raid_devices)
			c.order[s->md_role] = s->member;
		c.agree++;
	}
	if (!first)
		return false;
	c.score = 1;
	c.from_superblock = true;
	snprintf(c.evidence, sizeof(c.evidence),
	         "md superblocks on %d of the %d members name this geometry (uraid assemble runs "
	         "the array as it is; this build line reads it without them)",
	         c.agree, in->n);
	r->cand[r->ncand++] = c;
	return true;
}

static int scan_member(const struct probe_input *in, int m, struct probe_result *r,
                       uint64_t *starts, int *nstarts, struct probe_sig *ssig)
{
	uint64_t size = in->size[m];
	uint8_t *buf = malloc(SCAN_BYTES + PROBE_HEAD_BYTES);
	if (!buf)
		return -ENOMEM;
	int rc = 0;
	/* md superblocks at each version's place; metadata at the end. */
	static const int versions[] = {0, 10, 11, 12};
	for (int v = 0; v < 4 && rc == 0; v++) {
		int64_t loc = md_sb_location((enum md_sb_version)versions[v], size / 512);
		struct probe_sig s;
		if (loc < 0 || (uint64_t)loc * 512 + MD_SB_BYTES > size)
			continue;
		rc = in->read(in->ctx, m, buf, MD_SB_BYTES, (uint64_t)loc * 512);
		r->bytes_read += MD_SB_BYTES;
		if (rc == 0 && probe_sig_md(versions[v], buf, MD_SB_BYTES, &s)) {
			s.member = m;
			s.given = m;
			s.offset = (uint64_t)loc * 512;
			add_sig(r, &s);
		}
	}
	if (rc == 0 && size >= PROBE_TAIL_BYTES) {
		struct probe_sig s;
		rc = in->read(in->ctx, m, buf, PROBE_TAIL_BYTES, size - PROBE_TAIL_BYTES);
		r->bytes_read += PROBE_TAIL_BYTES;
		if (rc == 0 && probe_sig_tail(buf, PROBE_TAIL_BYTES, size, &s)) {
			s.member = m;
			s.given = m;
			add_sig(r, &s);
		}
	}
	size_t head =
	    size < SCAN_BYTES + PROBE_HEAD_BYTES ? (size_t)size : SCAN_BYTES + PROBE_HEAD_BYTES;
	if (rc == 0)
		rc = in->read(in->ctx, m, buf, head & ~511ul, 0);
	r->bytes_read += head;
	/* Where a volume starts: every 4 KiB of the first 4 MiB, then powers of two. */
	for (uint64_t off = 0; rc == 0 && off + 4096 <= head && *nstarts < MAX_STARTS;
	     off += 4096) {
		struct probe_sig s;
		if (probe_sig_head(buf + off, head - off, &s)) {
			s.member = m;
			s.given = m;
			s.offset = off;
			add_sig(r, &s);
			starts[*nstarts] = off;
			ssig[(*nstarts)++] = s;
		}
	}
	/* Past 4 MiB: powers of two to 256 MiB (mdadm 1.1/1.2 use 128 MiB on
	 * big members), and 129 MiB (older mdadm with a bitmap). */
	static const uint64_t far[] = {8u << 20,   16u << 20,  32u << 20, 64u << 20,
	                               128u << 20, 129u << 20, 256u << 20};
	for (size_t fi = 0; rc == 0 && fi < sizeof(far) / sizeof(far[0]) && *nstarts < MAX_STARTS;
	     fi++) {
		uint64_t off = far[fi];
		if (off + PROBE_HEAD_BYTES > size)
			break;
		struct probe_sig s;
		rc = in->read(in->ctx, m, buf, PROBE_HEAD_BYTES, off);
		r->bytes_read += PROBE_HEAD_BYTES;
		if (rc == 0 && probe_sig_head(buf, PROBE_HEAD_BYTES, &s) &&
		    s.kind != PROBE_SIG_MBR) {
			s.member = m;
			s.given = m;
			s.offset = off;
			add_sig(r, &s);
			starts[*nstarts] = off;
			ssig[(*nstarts)++] = s;
		}
	}
	free(buf);
	return rc;
}

/* Everything found where volumes start: per member, and in the XOR. */
struct starts {
	int n[PROBE_MAX_MEMBERS + 1];
	uint64_t off[PROBE_MAX_MEMBERS + 1][MAX_STARTS];
	struct probe_sig sig[PROBE_MAX_MEMBERS + 1][MAX_STARTS];
};

static bool have_start(const uint64_t *starts, int n, uint64_t off)
{
	for (int i = 0; i < n; i++)
		if (starts[i] == off)
			return true;
	return false;
}

/* Volume starts in the XOR of every member's first SCAN_BYTES: a raid4/5
 * lacking the member that holds the volume's first chunk. Then in the XOR
 * of all members but one: a raid6 lacking that member, the one left out
 * holding Q of the first stripe (P and the other data XOR to the missing
 * data). What a member holds itself (the XOR of the others, in a complete
 * raid5) is not a new start. */
static int scan_xor(const struct probe_input *in, struct probe_result *r, struct starts *st,
                    int nout)
{
	uint64_t smallest = UINT64_MAX;
	int n = in->n, *ns = &st->n[n];
	for (int m = 0; m < n; m++)
		if (in->size[m] < smallest)
			smallest = in->size[m];
	size_t head = smallest < SCAN_BYTES + PROBE_HEAD_BYTES ? (size_t)smallest & ~511ul
	                                                       : SCAN_BYTES + PROBE_HEAD_BYTES;
	uint8_t *acc = calloc(1, head), *all = malloc(head * (size_t)n), *one = malloc(head);
	int rc = acc && all && one ? 0 : -ENOMEM;
	for (int m = 0; m < n && rc == 0; m++) {
		uint8_t *buf = all + head * (size_t)m;
		rc = in->read(in->ctx, m, buf, head, 0);
		r->bytes_read += head;
		for (size_t i = 0; rc == 0 && i < head; i++)
			acc[i] ^= buf[i];
	}
	/* every set of nout members left out (unrelated disks, or raid6's Q) */
	for (uint32_t mask = 0; rc == 0 && mask < (1u << n) && *ns < MAX_STARTS; mask++) {
		if (__builtin_popcount(mask) != nout || n - nout < 2 || (nout >= 2 && n > 10))
			continue;
		const uint8_t *src = acc;
		if (mask) {
			memcpy(one, acc, head);
			for (int x = 0; x < n; x++)
				if (mask & (1u << x)) {
					const uint8_t *mb = all + head * (size_t)x;
					for (size_t i = 0; i + 8 <= head; i += 8) {
						uint64_t a, b;
						memcpy(&a, one + i, 8);
						memcpy(&b, mb + i, 8);
						a ^= b;
						memcpy(one + i, &a, 8);
					}
				}
			src = one;
		}
		int x = nout == 1 ? __builtin_ctz(mask) : -1;
		for (uint64_t off = 0; off + 4096 <= head && *ns < MAX_STARTS; off += 4096) {
			struct probe_sig s;
			if (!probe_sig_head(src + off, head - off, &s) || s.kind == PROBE_SIG_MBR)
				continue;
			if (x >= 0 && have_start(st->off[x], st->n[x], off))
				continue;
			s.member = PROBE_XOR_MEMBER;
			s.given = x; /* -1: all members, or several left out */
			s.xor_out = mask;
			s.offset = off;
			st->off[n][*ns] = off;
			st->sig[n][(*ns)++] = s;
		}
	}
	free(acc);
	free(all);
	free(one);
	return rc;
}

/* The levels and layouts tried, with how many members each may lack. */
struct shape {
	int level;
	uint32_t layout;
	int max_missing;
	bool chunked;
};
static const struct shape shapes[] = {
    {URAID_LEVEL_LINEAR, 0, 0, false},
    {URAID_LEVEL_RAID0, 0, 0, true},
    {URAID_LEVEL_RAID1, 0, 1, false},
    {URAID_LEVEL_RAID10, 0x102, 1, true},
    {URAID_LEVEL_RAID10, 0x201, 1, true},
    {URAID_LEVEL_RAID10, 0x10201, 1, true},
    {URAID_LEVEL_RAID4, 0, 1, true},
    {URAID_LEVEL_RAID5, LAYOUT_LEFT_SYMMETRIC, 1, true},
    {URAID_LEVEL_RAID5, LAYOUT_LEFT_ASYMMETRIC, 1, true},
    {URAID_LEVEL_RAID5, LAYOUT_RIGHT_SYMMETRIC, 1, true},
    {URAID_LEVEL_RAID5, LAYOUT_RIGHT_ASYMMETRIC, 1, true},
    {URAID_LEVEL_RAID5, LAYOUT_PARITY_0, 1, true},
    {URAID_LEVEL_RAID6, LAYOUT_LEFT_SYMMETRIC, 2, true},
    {URAID_LEVEL_RAID6, LAYOUT_LEFT_ASYMMETRIC, 2, true},
    {URAID_LEVEL_RAID6, LAYOUT_RIGHT_SYMMETRIC, 2, true},
    {URAID_LEVEL_RAID6, LAYOUT_RIGHT_ASYMMETRIC, 2, true},
};

static int net(const struct probe_candidate *c)
{
	return c->agree - 3 * c->disagree;
}

/* Better first: more net evidence, fewer missing members, mdadm's defaults. */
static int cmp_cand(const void *x, const void *y)
{
	const struct probe_candidate *a = x, *b = y;
	if (net(a) != net(b))
		return net(b) - net(a);
	int ma = 0, mb = 0;
	for (int i = 0; i < a->raid_devices; i++)
		ma += a->order[i] < 0;
	for (int i = 0; i < b->raid_devices; i++)
		mb += b->order[i] < 0;
	if (ma != mb)
		return ma - mb;
	/* the data chunks' continuity in their rows, where it says much */
	int rd = (a->rot_agree - a->rot_disagree) - (b->rot_agree - b->rot_disagree);
	if (rd >= 4 || rd <= -4)
		return -rd;
	/* the geometry the file system fills best */
	if (a->slack != b->slack)
		return a->slack < b->slack ? -1 : 1;
	/* raid10 of two near copies over two members is raid1: say raid1 */
	bool ra = a->level == URAID_LEVEL_RAID1, rb = b->level == URAID_LEVEL_RAID1;
	if (ra != rb)
		return rb - ra;
	bool da = a->layout == layout_default(a->level), db = b->layout == layout_default(b->level);
	if (da != db)
		return db - da;
	bool ca = a->chunk_sectors == 1024, cb = b->chunk_sectors == 1024;
	return cb - ca;
}

struct pool {
	struct probe_candidate *c;
	int n, cap;
};

static void keep(struct pool *p, const struct probe_candidate *c)
{
	if (p->n < p->cap) {
		p->c[p->n++] = *c;
		return;
	}
	int worst = 0;
	for (int i = 1; i < p->n; i++)
		if (cmp_cand(&p->c[i], &p->c[worst]) > 0)
			worst = i;
	if (cmp_cand(c, &p->c[worst]) < 0)
		p->c[worst] = *c;
}

static bool xor_fits(const struct layout_geometry *g, const struct layout_ops *ops,
                     const struct probe_candidate *c, uint32_t left_out, int miss)
{
	if (miss != 1 || !ops->stripe)
		return false;
	struct layout_stripe s;
	ops->stripe(g, 0, &s);
	int in_set = 0, which = -1;
	for (int r = 0; r < c->raid_devices; r++)
		if (c->order[r] >= 0 && (left_out & (1u << c->order[r]))) {
			in_set++;
			which = c->order[r];
		}
	if (!in_set) /* all, or all but unrelated disks */
		return s.q_role < 0;
	return in_set == 1 && __builtin_popcount(left_out) == 1 && s.q_role >= 0 &&
	       c->order[s.q_role] == which;
}

struct trial {
	const struct probe_input *in;
	const struct probe_sig *start;
	struct pool *pool;
	uint64_t *bytes;
	int miss;
	long orders;
	bool cut;
	long *work; /* orders and partial orders checked with this many left out */
};

/* One order of one geometry: put to the file system's checks, kept if
 * among the best. */
static bool consider(void *ctx, struct probe_candidate *c)
{
	struct trial *t = ctx;
	const struct probe_input *in = t->in;
	const struct probe_sig *start = t->start;
	struct layout_geometry g;
	t->orders++;
	if (++*t->work > MAX_WORK) {
		t->cut = true;
		return false;
	}
	if (probe_view_geometry(in, c, &g) < 0)
		return true;
	const struct layout_ops *ops = layout_ops_for(g.level);
	uint64_t abytes = ops->array_sectors(&g) * 512;
	int N = c->raid_devices;
	/* the file system must fit (it may leave room after it) */
	if (start->fs_bytes > abytes)
		return true;
	c->slack = abytes - start->fs_bytes;
	/* logical sector 0 must be where the volume was found, or on a
	 * missing member: then what was found is its parity, equal to it
	 * where the rest of the row is empty */
	bool here = false;
	for (int k = 0; k < ops->ncopies(&g); k++) {
		struct layout_loc loc;
		uint64_t run;
		if (ops->map(&g, 0, k, &loc, &run) == 0 &&
		    (c->order[loc.role] == start->member ||
		     (ops->stripe && c->order[loc.role] < 0)))
			here = true;
	}
	/* found in the XOR of the members: raid4/5 lacking the member that
	 * holds logical sector 0; in the XOR of all but one, raid6 lacking
	 * it, the one left out holding the first stripe's Q */
	if (start->member == PROBE_XOR_MEMBER && !xor_fits(&g, ops, c, start->xor_out, t->miss))
		here = false;
	/* linear: a file system that ends before the last member says
	 * nothing of the members after it */
	if (c->level == URAID_LEVEL_LINEAR && N > 1 && start->fs_bytes && c->order[N - 1] >= 0 &&
	    start->fs_bytes <= abytes - (in->size[c->order[N - 1]] - c->data_offset * 512))
		here = false;
	if (!here)
		return true;
	c->agree = c->disagree = 0;
	size_t l = 0;
	c->evidence[0] = 0;
	bool used[PROBE_MAX_MEMBERS] = {0};
	for (int r = 0; r < N; r++)
		if (c->order[r] >= 0)
			used[c->order[r]] = true;
	for (int m = 0, k = 0; m < in->n; m++)
		if (!used[m])
			l +=
			    (size_t)snprintf(c->evidence + l, sizeof(c->evidence) - l, "%s%d",
			                     k++ ? ", " : "members left out as unrelated: ", m + 1);
	if (l)
		l += (size_t)snprintf(c->evidence + l, sizeof(c->evidence) - l, " (as given); ");
	if (start->member == PROBE_XOR_MEMBER)
		snprintf(c->evidence + l, sizeof(c->evidence) - l,
		         "volume start in the XOR of the members%s (the missing member's data) at "
		         "byte %llu; ",
		         start->xor_out == 0                       ? ""
		         : __builtin_popcount(start->xor_out) == 1 ? " but one"
		                                                   : " but the unrelated",
		         (unsigned long long)start->offset);
	else
		snprintf(c->evidence + l, sizeof(c->evidence) - l,
		         "volume start on member %d (as given) at byte %llu; ", start->given + 1,
		         (unsigned long long)start->offset);
	struct probe_view v = {in, c, abytes, t->bytes, NULL, NULL};
	probe_fs_evidence(&v, start, c, 80);
	if (c->unpinned) {
		size_t e = strlen(c->evidence);
		snprintf(c->evidence + e, sizeof(c->evidence) - e,
		         "; %d roles' order pinned by no structure (one of their orders)",
		         c->unpinned);
	}
	keep(t->pool, c);
	return true;
}

/* A partial order: what the file system's checks say of it so far. */
static int partial(void *ctx, const struct probe_candidate *pc)
{
	struct trial *t = ctx;
	struct probe_candidate c = *pc;
	struct layout_geometry g;
	if (++*t->work > MAX_WORK) {
		t->cut = true;
		return -1;
	}
	if (probe_view_geometry(t->in, &c, &g) < 0)
		return -1;
	uint64_t abytes = layout_ops_for(g.level)->array_sectors(&g) * 512;
	if (t->start->fs_bytes > abytes)
		return -1;
	int blocked = -1, skipped = 0;
	c.agree = c.disagree = 0;
	c.evidence[0] = 0;
	struct probe_view v = {t->in, &c, abytes, t->bytes, &blocked, &skipped};
	probe_fs_evidence(&v, t->start, &c, 80);
	if (c.disagree)
		return -1;
	return blocked >= 0 ? blocked : -2;
}

/* The first 4 KiB of the volume found at start: on its member, or the XOR. */
static int start_head(const struct probe_input *in, const struct probe_sig *start, uint8_t *head,
                      uint64_t *bytes)
{
	if (start->member != PROBE_XOR_MEMBER) {
		*bytes += 4096;
		return in->read(in->ctx, start->member, head, 4096, start->offset);
	}
	uint8_t b[4096];
	memset(head, 0, 4096);
	for (int m = 0; m < in->n; m++) {
		if (start->xor_out & (1u << m))
			continue;
		*bytes += 4096;
		int rc = in->read(in->ctx, m, b, 4096, start->offset);
		if (rc < 0)
			return rc;
		for (int i = 0; i < 4096; i++)
			head[i] ^= b[i];
	}
	return 0;
}

/* Every geometry with this volume start, `out` members left out. */
static void try_start(const struct probe_input *in, const struct probe_sig *start, int out,
                      struct pool *pool, uint64_t *bytes, long *orders, bool *cut, long *work)
{
	static const uint32_t chunks[] = {8, 16, 32, 64, 128, 256, 512, 1024, 2048};
	uint8_t head[4096];
	struct probe_point pts[PROBE_MAX_POINTS];
	int npts = 0;
	if (start_head(in, start, head, bytes) == 0)
		npts = probe_fs_points(head, sizeof(head), start, pts, PROBE_MAX_POINTS);
	for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++) {
		const struct shape *sh = &shapes[si];
		for (int miss = 0; miss <= sh->max_missing; miss++) {
			int N = in->n - out + miss;
			if (N > PROBE_MAX_MEMBERS || N < 2 || in->n - out < 2)
				continue;
			for (size_t ci = 0; ci < (sh->chunked ? 9u : 1u); ci++) {
				struct probe_candidate c = {0};
				c.level = sh->level;
				c.layout = sh->layout;
				c.chunk_sectors = sh->chunked ? chunks[ci] : 0;
				c.raid_devices = N;
				c.data_offset = start->offset / 512;
				struct trial t = {in, start, pool, bytes, miss, 0, false, work};
				struct probe_order_search os = {
				    .in = in,
				    .pts = pts,
				    .npts = npts,
				    .start_member =
				        start->member == PROBE_XOR_MEMBER ? -1 : start->member,
				    .miss = miss,
				    .out = out,
				    .mirror = sh->level == URAID_LEVEL_RAID1,
				    .bytes = bytes,
				    .each = consider,
				    .partial = partial,
				    .ctx = &t};
				if (*work > MAX_WORK)
					break;
				if (probe_orders(&os, &c) < 0 || t.cut)
					*cut = true;
				*orders += t.orders;
			}
		}
	}
}

/* Every geometry from every start with `out` members left out, checked;
 * the convincing ones into r. */
static int infer(const struct probe_input *in, const struct starts *st, int out,
                 struct probe_result *r, long *orders, bool *cut, long *work)
{
	struct pool pool = {calloc(KEEP, sizeof(struct probe_candidate)), 0, KEEP};
	if (!pool.c)
		return -ENOMEM;
	int tried = 0;
	for (int m = 0; m <= in->n; m++)
		for (int s = 0; s < st->n[m]; s++) {
			char what[120];
			snprintf(what, sizeof(what), "trying geometries with volume start %d%s",
			         tried + 1, out ? ", leaving unrelated members out" : "");
			if (in->progress)
				in->progress(in->ctx, what);
			try_start(in, &st->sig[m][s], out, &pool, &r->bytes_read, orders, cut,
			          work);
			tried++;
		}
	progress(in, "checking parity and copies of the best %s%d geometries", "", pool.n);
	for (int i = 0; i < pool.n; i++)
		probe_redundancy(in, &pool.c[i], &r->bytes_read);
	qsort(pool.c, (size_t)pool.n, sizeof(pool.c[0]), cmp_cand);
	for (int i = 0; i < pool.n; i++) {
		struct probe_candidate *c = &pool.c[i];
		c->score = c->agree + c->disagree ? (double)c->agree / (c->agree + c->disagree) : 0;
		if (c->disagree == 0 && c->agree >= MIN_AGREE && r->ncand < PROBE_MAX_CAND)
			r->cand[r->ncand++] = *c;
		else if (!r->have_rejected && r->ncand == 0) {
			r->best_rejected = *c;
			r->have_rejected = true;
		}
	}
	free(pool.c);
	return tried;
}

/* With no geometry found: whether the members' bytes still say what they
 * are, order aside (a raw volume, no file system at its start): their XOR
 * vanishing in every sampled row is a raid4/5 over all of them, their
 * bytes all equal a mirror. Appended to the summary. */
static bool raw_note(const struct probe_input *in, struct probe_result *r)
{
	bool known = false;
	uint64_t smallest = UINT64_MAX;
	for (int m = 0; m < in->n; m++)
		smallest = in->size[m] < smallest ? in->size[m] : smallest;
	uint8_t *acc = malloc(8192);
	if (!acc || in->n < 2 || smallest < (8u << 20))
		goto out;
	uint8_t *b = acc + 4096;
	int rows = 0, xor0 = 0, same = 0;
	for (int i = 0; i < 32; i++) {
		uint64_t at = ((smallest - (4u << 20)) / 32 * (uint64_t)i + (4u << 20)) & ~4095ull;
		bool any = false, eq = true;
		for (int m = 0; m < in->n; m++) {
			uint8_t *p = m ? b : acc;
			if (in->read(in->ctx, m, p, 4096, at) < 0)
				goto out;
			r->bytes_read += 4096;
			for (int k = 0; k < 4096 && !any; k++)
				any = p[k] != 0;
			if (!m)
				continue;
			eq = eq && !memcmp(acc, b, 4096);
			for (int k = 0; k < 4096; k++)
				acc[k] ^= b[k];
		}
		if (!any)
			continue;
		rows++;
		same += eq;
		bool z = true;
		for (int k = 0; k < 4096 && z; k++)
			z = !acc[k];
		xor0 += z;
	}
	size_t l = strlen(r->summary);
	known = rows >= MIN_AGREE && (same == rows || xor0 == rows);
	if (rows >= MIN_AGREE && same == rows)
		snprintf(r->summary + l, sizeof(r->summary) - l,
		         "; all members hold the same bytes in %d of %d sampled rows with data: "
		         "mirrors (raid1) of a volume probe does not know",
		         same, rows);
	else if (rows >= MIN_AGREE && xor0 == rows)
		snprintf(r->summary + l, sizeof(r->summary) - l,
		         "; the XOR of all members is zero in %d of %d sampled rows with data: a "
		         "raid4/5 over all of them, whose chunk and order cannot be told without a "
		         "file system at its start",
		         xor0, rows);
out:
	free(acc);
	return known;
}

/* How many candidates are tied with the first, said after the summary. */
static void ties_note(struct probe_result *r)
{
	if (!r->ncand || !r->cand[0].ties)
		return;
	size_t l = strlen(r->summary);
	l += (size_t)snprintf(r->summary + l, sizeof(r->summary) - l,
	                      "; TIED: the evidence cannot separate candidate 1 from");
	for (int j = 1; j < r->ncand && l < sizeof(r->summary); j++)
		if (r->cand[0].ties & (1u << j))
			l += (size_t)snprintf(r->summary + l, sizeof(r->summary) - l, " %d", j + 1);
	if (l < sizeof(r->summary))
		snprintf(r->summary + l, sizeof(r->summary) - l,
		         " (each reads differently: check each one's content)");
}

int probe_run(const struct probe_input *in, struct probe_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	if (errlen)
		err[0] = 0;
	if (in->n < 1 || in->n > PROBE_MAX_MEMBERS) {
		snprintf(err, errlen, "probe takes 1 to %d members", PROBE_MAX_MEMBERS);
		return -EINVAL;
	}
	struct starts *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	int rc = 0;
	for (int m = 0; m < in->n && rc == 0; m++) {
		progress(in, "reading signatures of member %s%d", "", m + 1);
		rc = scan_member(in, m, r, st->off[m], &st->n[m], st->sig[m]);
		if (rc < 0)
			snprintf(err, errlen, "member %d: read failed: %s", m + 1, strerror(-rc));
	}
	/* With one member of a raid4/5 gone, the XOR of the others is its data. */
	if (rc == 0 && in->n >= 2) {
		progress(in, "reading the XOR of the members%s %d", "", in->n);
		rc = scan_xor(in, r, st, 0);
		if (rc == 0)
			rc = scan_xor(in, r, st, 1);
		if (rc < 0)
			snprintf(err, errlen, "read failed: %s", strerror(-rc));
	}
	if (rc == 0 && from_md(in, r)) {
		snprintf(r->summary, sizeof(r->summary), "md superblocks found");
		free(st);
		return 0;
	}
	/* Nothing fits all of them: perhaps some are unrelated disks. */
	int tried = rc, out = 0;
	long orders = 0, work = 0;
	bool cut = false;
	for (; rc == 0 && out <= MAX_OUT && in->n - out >= 2 && r->ncand == 0; out++) {
		/* a raid4/5 lacking its first chunk's member among out strangers:
		 * its volume start is in the XOR of the others only */
		if (out >= 2 && (rc = scan_xor(in, r, st, out)) < 0) {
			snprintf(err, errlen, "read failed: %s", strerror(-rc));
			tried = rc;
			break;
		}
		work = 0;
		tried = infer(in, st, out, r, &orders, &cut, &work);
		if (tried < 0)
			break;
	}
	free(st);
	if (tried < 0) {
		if (!err[0])
			snprintf(err, errlen, "%s", strerror(-tried));
		return tried;
	}
	qsort(r->cand, (size_t)r->ncand, sizeof(r->cand[0]), cmp_cand);
	if (r->ncand)
		snprintf(r->summary, sizeof(r->summary),
		         "%d geometr%s every check agrees with (from %d volume start%s found, "
		         "%ld member orders checked%s)",
		         r->ncand, r->ncand == 1 ? "y" : "ies", tried, tried == 1 ? "" : "s",
		         orders, cut ? "; the order search was cut short" : "");
	else if (!tried)
		snprintf(r->summary, sizeof(r->summary),
		         "nothing convincing: no superblock, and no file system, partition table "
		         "or LVM label at any data offset tried on any member");
	else
		snprintf(r->summary, sizeof(r->summary),
		         "nothing convincing: %d volume start%s found, but no geometry puts the "
		         "structures they point to where they are",
		         tried, tried == 1 ? "" : "s");
	if (!r->ncand && cut) {
		size_t l = strlen(r->summary);
		snprintf(r->summary + l, sizeof(r->summary) - l,
		         "; the order search was cut short (at most %ld orders for each number of "
		         "members left out)",
		         MAX_WORK);
	}
	if (!r->ncand && !raw_note(in, r)) {
		/* nothing names the volume: perhaps a raw raid0 (content continuity) */
		bool had = r->have_rejected;
		int rc2 = probe_raw(in, r);
		if (rc2 < 0) {
			snprintf(err, errlen, "read failed: %s", strerror(-rc2));
			return rc2;
		}
		if (r->ncand) {
			qsort(r->cand, (size_t)r->ncand, sizeof(r->cand[0]), cmp_cand);
			snprintf(r->summary, sizeof(r->summary),
			         "no superblock and no volume signature: %d raid0 geometr%s from "
			         "content continuity at chunk boundaries (weaker evidence than "
			         "parity or a file system: check the content)",
			         r->ncand, r->ncand == 1 ? "y" : "ies");
		} else if (r->have_rejected && !had) {
			size_t l = strlen(r->summary);
			snprintf(r->summary + l, sizeof(r->summary) - l,
			         "; content continuity at chunk boundaries names no raid0 "
			         "geometry either");
		}
	}
	probe_mark_ties(in, r);
	ties_note(r);
	return 0;
}
