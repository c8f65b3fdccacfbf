/* A candidate geometry's logical volume over the probed members: what the
 * array would read if it were built that way. A member the candidate calls
 * missing is rebuilt from the rest of its stripe (parity levels) or read
 * from another copy (mirrors); anything else is unreadable (-EIO). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"
#include "probe/probe.h"
#include "uraid.h"

int probe_view_geometry(const struct probe_input *in, const struct probe_candidate *c,
                        struct layout_geometry *g);

int probe_view_geometry(const struct probe_input *in, const struct probe_candidate *c,
                        struct layout_geometry *g)
{
	memset(g, 0, sizeof(*g));
	g->level = c->level;
	g->layout = c->layout;
	g->chunk_sectors = c->chunk_sectors;
	g->raid_disks = c->raid_devices;
	uint64_t smallest = UINT64_MAX;
	for (int r = 0; r < c->raid_devices; r++)
		if (c->order[r] >= 0 && in->size[c->order[r]] / 512 < smallest)
			smallest = in->size[c->order[r]] / 512;
	/* no member chosen yet (the order search): the largest there is */
	if (smallest == UINT64_MAX) {
		smallest = 0;
		for (int i = 0; i < in->n; i++)
			if (in->size[i] / 512 > smallest)
				smallest = in->size[i] / 512;
	}
	if (smallest <= c->data_offset)
		return -EINVAL;
	g->dev_sectors = smallest - c->data_offset;
	for (int r = 0; r < c->raid_devices; r++)
		g->member_sectors[r] = c->order[r] >= 0
		                           ? in->size[c->order[r]] / 512 - c->data_offset
		                           : g->dev_sectors;
	return layout_validate(g, NULL, 0);
}

static int read_role(const struct probe_view *v, int role, void *buf, size_t len, uint64_t msec,
                     bool direct)
{
	int m = v->c->order[role];
	if (v->blocked && *v->blocked >= 0)
		return -EAGAIN;
	if (m == PROBE_ROLE_UNKNOWN) {
		if (direct && v->blocked)
			*v->blocked = role;
		else if (v->skipped)
			*v->skipped = 1;
		return -EAGAIN;
	}
	if (m < 0)
		return -ENXIO;
	uint64_t off = (v->c->data_offset + msec) * 512;
	if (off + len > v->in->size[m])
		return -EIO;
	if (v->bytes_read)
		*v->bytes_read += len;
	return v->in->read(v->in->ctx, m, buf, len, off);
}

static int rebuild(const struct probe_view *v, const struct layout_geometry *g,
                   const struct layout_ops *ops, int role, uint64_t msec, void *out, size_t len)
{
	if (!ops->stripe || !g->chunk_sectors)
		return -EIO;
	struct layout_stripe s;
	ops->stripe(g, msec / g->chunk_sectors, &s);
	bool has_q = s.q_role >= 0;
	int role_of[LAYOUT_MAX_MEMBERS + 2], fail[LAYOUT_MAX_MEMBERS + 2];
	int k = s.ndata, nb = layout_stripe_blocks(&s, role_of), want = -1, nfail = 0;
	uint8_t *mem = malloc((size_t)nb * len);
	void *blocks[LAYOUT_MAX_MEMBERS + 2];
	if (!mem)
		return -ENOMEM;
	for (int i = 0; i < nb; i++) {
		blocks[i] = mem + (size_t)i * len;
		if (role_of[i] == role)
			want = i;
		if (role_of[i] == role || read_role(v, role_of[i], blocks[i], len, msec, false) < 0)
			fail[nfail++] = i;
	}
	const struct uraid_parity *pp = uraid_parity_get("portable");
	int rc = -EIO;
	if (pp && want >= 0 && nfail <= nb - k)
		rc = pp->recover(k, len, blocks, has_q, nfail, fail);
	if (rc == 0)
		memcpy(out, blocks[want], len);
	free(mem);
	return rc < 0 ? -EIO : 0;
}

int probe_view_read(const struct probe_view *v, void *buf, size_t len, uint64_t off)
{
	struct layout_geometry g;
	if (off % 512 || len % 512 || off > v->array_bytes || len > v->array_bytes - off ||
	    probe_view_geometry(v->in, v->c, &g) < 0)
		return -EINVAL;
	const struct layout_ops *ops = layout_ops_for(g.level);
	uint64_t lsec = off / 512, left = len / 512;
	uint8_t *p = buf;
	while (left) {
		struct layout_loc loc, first;
		uint64_t run;
		if (ops->map(&g, lsec, 0, &first, &run) < 0 || !run)
			return -EIO;
		uint64_t n = run < left ? run : left;
		int rc = -EIO;
		for (int c = 0; c < ops->ncopies(&g) && rc < 0; c++)
			if (ops->map(&g, lsec, c, &loc, &run) == 0)
				rc = read_role(v, loc.role, p, n * 512, loc.sector, true);
		if (rc < 0 && n * 512 <= (1u << 20))
			rc = rebuild(v, &g, ops, first.role, first.sector, p, n * 512);
		if (rc < 0)
			return rc;
		lsec += n;
		left -= n;
		p += n * 512;
	}
	return 0;
}
