/* What the redundancy of a candidate geometry says over sampled stripes:
 * at the right level, chunk, layout and order, parity (XOR for raid4/5,
 * P+Q for raid6) and mirror copies hold everywhere; at a wrong one almost
 * nowhere. Rows that are all zeros prove nothing and are skipped, as are
 * rows whose missing members leave no redundancy to check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"
#include "probe/probe.h"
#include "uraid.h"

#define SAMPLES 32
#define BLK     4096u

int probe_view_geometry(const struct probe_input *in, const struct probe_candidate *c,
                        struct layout_geometry *g);
void probe_redundancy(const struct probe_input *in, struct probe_candidate *c, uint64_t *bytes);

static bool zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static int rd(const struct probe_input *in, const struct probe_candidate *c, int role,
              uint64_t msec, uint8_t *buf, uint64_t *bytes)
{
	int m = c->order[role];
	if (m < 0)
		return -1;
	uint64_t off = (c->data_offset + msec) * 512;
	if (off + BLK > in->size[m])
		return -1;
	*bytes += BLK;
	return in->read(in->ctx, m, buf, BLK, off);
}

/* 1 agrees, 0 disagrees, -1 proves nothing. */
static int parity_row(const struct probe_input *in, const struct probe_candidate *c,
                      const struct layout_geometry *g, const struct layout_ops *ops, uint64_t msec,
                      uint8_t *mem, uint64_t *bytes)
{
	struct layout_stripe s;
	ops->stripe(g, msec / g->chunk_sectors, &s);
	bool has_q = s.q_role >= 0;
	int role_of[LAYOUT_MAX_MEMBERS + 2];
	void *blk[LAYOUT_MAX_MEMBERS + 2];
	int k = s.ndata, nb = layout_stripe_blocks(&s, role_of), nmiss = 0, miss[3];
	bool allzero = true;
	for (int i = 0; i < nb; i++) {
		blk[i] = mem + (size_t)i * BLK;
		if (rd(in, c, role_of[i], msec, blk[i], bytes) < 0) {
			if (nmiss == 2)
				return -1;
			miss[nmiss++] = i;
			memset(blk[i], 0, BLK);
		} else if (!zero(blk[i], BLK))
			allzero = false;
	}
	if (allzero || nmiss >= nb - k)
		return -1;
	/* Leave one more present block out, rebuild it, compare. */
	int extra = -1;
	for (int i = nb - 1; i >= 0 && extra < 0; i--) {
		bool m = false;
		for (int j = 0; j < nmiss; j++)
			m |= miss[j] == i;
		if (!m && !zero(blk[i], BLK))
			extra = i;
	}
	if (extra < 0)
		return -1;
	uint8_t *save = mem + (size_t)nb * BLK;
	memcpy(save, blk[extra], BLK);
	miss[nmiss++] = extra;
	const struct uraid_parity *pp = uraid_parity_get("portable");
	if (!pp || pp->recover(k, BLK, blk, has_q, nmiss, miss) < 0)
		return -1;
	return memcmp(save, blk[extra], BLK) == 0;
}

static int mirror_row(const struct probe_input *in, const struct probe_candidate *c,
                      const struct layout_geometry *g, const struct layout_ops *ops, uint64_t lsec,
                      uint8_t *mem, uint64_t *bytes)
{
	int have = 0;
	uint8_t *first = mem, *other = mem + BLK;
	for (int k = 0; k < ops->ncopies(g); k++) {
		struct layout_loc loc;
		uint64_t run;
		if (ops->map(g, lsec, k, &loc, &run) < 0 || run < BLK / 512)
			return -1;
		if (rd(in, c, loc.role, loc.sector, have ? other : first, bytes) < 0)
			continue;
		if (have && memcmp(first, other, BLK))
			return 0;
		have++;
	}
	return have >= 2 && !zero(first, BLK) ? 1 : -1;
}

/* The role of a full row whose block equals the XOR of the whole row (so
 * the others XOR to zero): Q in raid6. -1 when no single role's does, or
 * the row is incomplete. */
static int q_by_xor(const struct probe_input *in, const struct probe_candidate *c, int n,
                    uint64_t msec, uint8_t *mem, uint64_t *bytes)
{
	uint8_t *acc = mem + (size_t)n * BLK;
	memset(acc, 0, BLK);
	for (int role = 0; role < n; role++) {
		uint8_t *b = mem + (size_t)role * BLK;
		if (rd(in, c, role, msec, b, bytes) < 0)
			return -1;
		for (unsigned i = 0; i < BLK; i++)
			acc[i] ^= b[i];
	}
	int q = -1;
	for (int role = 0; role < n; role++) {
		const uint8_t *b = mem + (size_t)role * BLK;
		if (!zero(b, BLK) && !memcmp(acc, b, BLK)) {
			if (q >= 0)
				return -1;
			q = role;
		}
	}
	return q;
}

/* The rotation a parity candidate claims, row by row: in raid6 the member
 * that holds Q is the one whose leaving out makes the XOR of the row vanish,
 * whatever the data order; in raid4/5 the XOR is the same whichever member
 * holds P, so what tells rotations apart is the data: each data chunk's
 * last window is more like the next data chunk's first window (the volume
 * goes on there) than like the other chunks of the row. */
#define ROT_ROWS 16
static bool s_is_raid5(const struct probe_candidate *c)
{
	return c->level == URAID_LEVEL_RAID5 || c->level == URAID_LEVEL_RAID4;
}
static void rotation(const struct probe_input *in, struct probe_candidate *c,
                     const struct layout_geometry *g, const struct layout_ops *ops, uint8_t *mem,
                     uint64_t *bytes)
{
	int n = c->raid_devices, qrows = 0, qright = 0, listed = 0;
	uint64_t rows = g->dev_sectors / g->chunk_sectors;
	uint32_t csz = g->chunk_sectors * 512;
	char list[200] = "";
	size_t ll = 0;
	uint8_t *first = malloc((size_t)n * PROBE_WIN * 2);
	if (!first || rows < 2 || csz < 2 * PROBE_WIN || n > PROBE_MAX_MEMBERS) {
		free(first);
		return;
	}
	uint8_t *last = first + (size_t)n * PROBE_WIN;
	for (int i = 0; i < ROT_ROWS; i++) {
		uint64_t row = rows * (uint64_t)i / ROT_ROWS + (rows > 2 * ROT_ROWS ? 1 : 0);
		if (row >= rows)
			continue;
		struct layout_stripe s;
		ops->stripe(g, row, &s);
		uint64_t msec = row * g->chunk_sectors;
		if (s.q_role >= 0) {
			int q = q_by_xor(in, c, n, msec, mem, bytes);
			if (q >= 0) {
				qrows++;
				qright += q == s.q_role;
				if (listed < 3 && ll < sizeof(list))
					ll += (size_t)snprintf(
					    list + ll, sizeof(list) - ll,
					    "%srow %llu Q on member %d", listed++ ? ", " : "",
					    (unsigned long long)row, c->order[q] + 1);
			}
		} else if (listed < 3 && c->order[s.p_role] >= 0 && ll < sizeof(list))
			ll += (size_t)snprintf(list + ll, sizeof(list) - ll,
			                       "%srow %llu P on member %d", listed++ ? ", " : "",
			                       (unsigned long long)row, c->order[s.p_role] + 1);
		/* the data chunks' edges in this row */
		bool have[PROBE_MAX_MEMBERS] = {0};
		for (int role = 0; role < n; role++) {
			int m = c->order[role];
			uint64_t off = (c->data_offset + msec) * 512;
			if (m < 0 || off + csz > in->size[m])
				continue;
			*bytes += 2 * PROBE_WIN;
			have[role] = in->read(in->ctx, m, first + (size_t)role * PROBE_WIN,
			                      PROBE_WIN, off) == 0 &&
			             in->read(in->ctx, m, last + (size_t)role * PROBE_WIN,
			                      PROBE_WIN, off + csz - PROBE_WIN) == 0;
		}
		for (int d = 0; d + 1 < s.ndata; d++) {
			int a = s.data_role[d], b = s.data_role[d + 1];
			if (!have[a] || !have[b])
				continue;
			const uint8_t *la = last + (size_t)a * PROBE_WIN;
			double right = probe_window_dist(la, first + (size_t)b * PROBE_WIN),
			       other = 2;
			for (int x = 0; x < n; x++)
				if (x != a && x != b && have[x]) {
					double e =
					    probe_window_dist(la, first + (size_t)x * PROBE_WIN);
					other = e < other ? e : other;
				}
			if (other > 1)
				continue;
			c->rot_agree += right + PROBE_MARGIN < other;
			c->rot_disagree += right > other + PROBE_MARGIN;
		}
	}
	free(first);
	size_t l = strlen(c->evidence);
	if (qrows)
		l +=
		    (size_t)snprintf(c->evidence + l, sizeof(c->evidence) - l,
		                     "; rotation: Q (the member whose leaving out zeroes the row's "
		                     "XOR) where the layout puts it in %d of %d sampled rows (%s)",
		                     qright, qrows, list);
	else if (s_is_raid5(c))
		l += (size_t)snprintf(c->evidence + l, sizeof(c->evidence) - l,
		                      "; rotation: the layout puts P at %s (XOR alone cannot tell "
		                      "which member holds P)",
		                      list[0] ? list : "-");
	if (l < sizeof(c->evidence))
		snprintf(c->evidence + l, sizeof(c->evidence) - l,
		         "; data chunk order in the rows, by content continuity: %d boundaries "
		         "agree, %d disagree",
		         c->rot_agree, c->rot_disagree);
}

void probe_redundancy(const struct probe_input *in, struct probe_candidate *c, uint64_t *bytes)
{
	struct layout_geometry g;
	if (probe_view_geometry(in, c, &g) < 0)
		return;
	const struct layout_ops *ops = layout_ops_for(g.level);
	bool parity = ops->stripe != NULL, mirror = ops->ncopies(&g) > 1;
	if (!parity && !mirror)
		return;
	uint8_t *mem = malloc((size_t)(c->raid_devices + 3) * BLK);
	if (!mem)
		return;
	uint64_t span = parity ? g.dev_sectors : ops->array_sectors(&g);
	int agree = 0, disagree = 0;
	for (int i = 0; i < SAMPLES; i++) {
		/* Spread over the area, 4 KiB aligned (a chunk is at least that). */
		uint64_t at = (span / SAMPLES) * (uint64_t)i + (span / SAMPLES / 2);
		at &= ~(uint64_t)(BLK / 512 - 1);
		if (at + BLK / 512 > span)
			continue;
		int v = parity ? parity_row(in, c, &g, ops, at, mem, bytes)
		               : mirror_row(in, c, &g, ops, at, mem, bytes);
		agree += v == 1;
		disagree += v == 0;
	}
	free(mem);
	c->agree += agree;
	c->disagree += disagree;
	size_t l = strlen(c->evidence);
	if (agree + disagree)
		snprintf(c->evidence + l, sizeof(c->evidence) - l,
		         "%s: %d of %d sampled %s with data agree", parity ? "parity" : "copies",
		         agree, agree + disagree, parity ? "stripes" : "blocks");
	else
		snprintf(c->evidence + l, sizeof(c->evidence) - l,
		         "%s: nothing to check (the members missing leave no redundancy, or the "
		         "sampled rows are empty)",
		         parity ? "parity" : "copies");
	if (c->level == URAID_LEVEL_RAID1) {
		l = strlen(c->evidence);
		for (int r = 0, k = 0; r < c->raid_devices && l < sizeof(c->evidence); r++)
			if (c->order[r] >= 0)
				l += (size_t)snprintf(c->evidence + l, sizeof(c->evidence) - l,
				                      "%s%d", k++ ? ", " : "; the copies: members ",
				                      c->order[r] + 1);
		if (l < sizeof(c->evidence))
			snprintf(c->evidence + l, sizeof(c->evidence) - l,
			         " (as given; identical members: one candidate for every order)");
	}
	if (parity && (mem = malloc((size_t)(c->raid_devices + 3) * BLK)) != NULL) {
		rotation(in, c, &g, ops, mem, bytes);
		free(mem);
	}
}
