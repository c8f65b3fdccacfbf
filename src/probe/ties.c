/* Ties: candidates whose evidence is within noise of each other. Two such
 * candidates that read the same bytes wherever sampled (raid1 and a raid10
 * of two near copies, a member called missing that parity rebuilds as it
 * is) are one answer said twice: the lesser is dropped and named in the
 * better one's evidence; two that read differently are a tie the data cannot
 * break, and both say so (their `ties` bits), whatever order the
 * tie-breakers (fewer missing members, mdadm's defaults) put them in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"
#include "probe/probe.h"

#define PLACES 16
#define BLK    4096u

int probe_view_geometry(const struct probe_input *in, const struct probe_candidate *c,
                        struct layout_geometry *g);

static int net(const struct probe_candidate *c)
{
	return c->agree - 3 * c->disagree;
}

static uint64_t array_bytes(const struct probe_input *in, const struct probe_candidate *c)
{
	struct layout_geometry g;
	if (probe_view_geometry(in, c, &g) < 0)
		return 0;
	return layout_ops_for(g.level)->array_sectors(&g) * 512;
}

static bool zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* 1: the two read the same at every sampled place that holds data; 0: they
 * differ somewhere; -1: nothing to compare (no data at any place read). */
static int same_reading(const struct probe_input *in, const struct probe_candidate *a,
                        const struct probe_candidate *b, uint64_t *bytes)
{
	uint64_t ab = array_bytes(in, a), bb = array_bytes(in, b), span = ab < bb ? ab : bb;
	uint8_t *x = malloc(2 * BLK), *y = x ? x + BLK : NULL;
	if (!x || span < BLK)
		goto none;
	struct probe_view va = {in, a, ab, bytes, NULL, NULL};
	struct probe_view vb = {in, b, bb, bytes, NULL, NULL};
	int compared = 0;
	for (int i = 0; i < PLACES; i++) {
		uint64_t at = (span / PLACES * (uint64_t)i) & ~(uint64_t)(BLK - 1);
		if (at + BLK > span)
			continue;
		int ra = probe_view_read(&va, x, BLK, at), rb = probe_view_read(&vb, y, BLK, at);
		if (ra < 0 && rb < 0)
			continue;
		if (ra < 0 || rb < 0 || memcmp(x, y, BLK)) {
			free(x);
			return 0;
		}
		compared += !zero(x, BLK);
	}
	free(x);
	return compared ? 1 : -1;
none:
	free(x);
	return -1;
}

void probe_mark_ties(const struct probe_input *in, struct probe_result *r)
{
	for (int i = 0; i < r->ncand; i++)
		r->cand[i].ties = 0;
	for (int i = 0; i < r->ncand; i++) {
		struct probe_candidate *a = &r->cand[i];
		int noise = net(a) / 10 > 2 ? net(a) / 10 : 2;
		if (a->from_superblock)
			continue;
		for (int j = i + 1; j < r->ncand; j++) {
			struct probe_candidate *b = &r->cand[j];
			if (b->from_superblock || net(b) < net(a) - noise)
				continue;
			/* parity levels: the data chunks' continuity separates them */
			int ra = a->rot_agree - a->rot_disagree,
			    rb = b->rot_agree - b->rot_disagree;
			if (ra - rb >= 4 + (a->rot_agree + b->rot_agree) / 10)
				continue;
			int same = same_reading(in, a, b, &r->bytes_read);
			if (same == 1) {
				/* one answer said two ways: keep the better, name the other */
				char lay[64] = "";
				layout_name(b->level, b->layout, lay, sizeof(lay));
				size_t l = strlen(a->evidence);
				snprintf(
				    a->evidence + l, sizeof(a->evidence) - l,
				    "; reads the same wherever sampled as %s%s%s over %d members",
				    level_name(b->level), lay[0] ? " " : "", lay, b->raid_devices);
				memmove(b, b + 1, sizeof(*b) * (size_t)(r->ncand - j - 1));
				r->ncand--;
				j--;
				continue;
			}
			a->ties |= 1u << j;
			b->ties |= 1u << i;
		}
	}
}
