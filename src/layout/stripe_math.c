/* Stripe math shared by raid4, raid5 and raid6: where P, Q and each data
 * chunk of a stripe live, following md's algorithms (kernel raid5.c
 * raid5_compute_sector) and md's Q syndrome order (raid6_d0 /
 * raid6_idx_to_slot). */
#include <errno.h>

#include "layout/layout_int.h"
#include "util/errmsg.h"

int parity_ndata(const struct layout_geometry *g)
{
	return g->raid_disks - (g->level == URAID_LEVEL_RAID6 ? 2 : 1);
}

/* RAID5-style placement over `n` members (raid5 itself, and the data+P part
 * of the raid6 "-6" layouts, which use n = raid_disks - 1). */
static int r5_parity(uint32_t alg, int n, uint64_t stripe)
{
	int rot = (int)(stripe % (uint64_t)n);
	switch (alg) {
	case LAYOUT_LEFT_ASYMMETRIC:
	case LAYOUT_LEFT_SYMMETRIC: return n - 1 - rot; /* parity walks leftwards */
	case LAYOUT_RIGHT_ASYMMETRIC:
	case LAYOUT_RIGHT_SYMMETRIC: return rot; /* parity walks rightwards */
	case LAYOUT_PARITY_0: return 0;
	default: return n - 1; /* LAYOUT_PARITY_N */
	}
}

static int r5_data(uint32_t alg, int n, int pd, int idx)
{
	switch (alg) {
	case LAYOUT_LEFT_SYMMETRIC:
	case LAYOUT_RIGHT_SYMMETRIC:
		/* data starts just after parity and wraps round */
		return (pd + 1 + idx) % n;
	default:
		/* asymmetric / parity-first / parity-last: data fills the
		 * members left to right, stepping over parity */
		return idx < pd ? idx : idx + 1;
	}
}

void parity_pq(const struct layout_geometry *g, uint64_t stripe, int *pd, int *qd)
{
	int n = g->raid_disks;
	uint32_t alg = g->layout;

	*qd = -1;
	if (g->level == URAID_LEVEL_RAID4) {
		*pd = n - 1;
		return;
	}
	if (g->level == URAID_LEVEL_RAID5) {
		*pd = r5_parity(alg, n, stripe);
		return;
	}
	/* raid6 */
	if (alg >= LAYOUT_LEFT_ASYMMETRIC_6) {
		/* RAID5 layout over the first n-1 members, Q on the last; the
		 * -6 ids are the raid5 ids plus 16 */
		*pd = r5_parity(alg - LAYOUT_LEFT_ASYMMETRIC_6, n - 1, stripe);
		*qd = n - 1;
		return;
	}
	switch (alg) {
	case LAYOUT_PARITY_0:
		*pd = 0;
		*qd = 1;
		return;
	case LAYOUT_PARITY_N:
		*pd = n - 2;
		*qd = n - 1;
		return;
	default:
		*pd = r5_parity(alg, n, stripe);
		*qd = (*pd + 1) % n; /* Q follows P, wrapping to member 0 */
		return;
	}
}

int parity_data_role(const struct layout_geometry *g, uint64_t stripe, int pd, int qd, int idx)
{
	int n = g->raid_disks;
	uint32_t alg = g->layout;

	(void)stripe;
	if (g->level == URAID_LEVEL_RAID4)
		return idx;
	if (g->level == URAID_LEVEL_RAID5)
		return r5_data(alg, n, pd, idx);
	if (alg >= LAYOUT_LEFT_ASYMMETRIC_6)
		return r5_data(alg - LAYOUT_LEFT_ASYMMETRIC_6, n - 1, pd, idx);
	switch (alg) {
	case LAYOUT_PARITY_0: return idx + 2;
	case LAYOUT_PARITY_N: return idx;
	case LAYOUT_LEFT_SYMMETRIC:
	case LAYOUT_RIGHT_SYMMETRIC: return (pd + 2 + idx) % n; /* after P and Q */
	default:
		/* asymmetric: left to right, skipping the P,Q pair (which is
		 * "Q ... P" with Q on member 0 when P is last) */
		if (pd == n - 1)
			return idx + 1;
		return idx < pd ? idx : idx + 2;
	}
}

uint64_t parity_array_sectors(const struct layout_geometry *g)
{
	uint64_t per = g->dev_sectors - g->dev_sectors % g->chunk_sectors;
	return per * (uint64_t)parity_ndata(g);
}

uint64_t parity_member_used(const struct layout_geometry *g, int role)
{
	(void)role;
	return g->dev_sectors - g->dev_sectors % g->chunk_sectors;
}

int parity_map(const struct layout_geometry *g, uint64_t lsec, int copy, struct layout_loc *loc,
               uint64_t *len)
{
	uint64_t total = parity_array_sectors(g);
	if (lsec >= total || copy != 0)
		return -ERANGE;
	uint64_t cs = g->chunk_sectors, k = (uint64_t)parity_ndata(g);
	uint64_t chunk = lsec / cs, off = lsec % cs;
	uint64_t stripe = chunk / k;
	int pd, qd;
	parity_pq(g, stripe, &pd, &qd);
	loc->role = parity_data_role(g, stripe, pd, qd, (int)(chunk % k));
	loc->sector = stripe * cs + off;
	if (len)
		*len = cs - off; /* chunks end on a multiple of cs, as does the array */
	return 0;
}

void parity_stripe(const struct layout_geometry *g, uint64_t stripe, struct layout_stripe *s)
{
	int n = g->raid_disks, k = parity_ndata(g);
	int slot_of_role[LAYOUT_MAX_MEMBERS];

	s->ndata = k;
	s->sector = stripe * g->chunk_sectors;
	parity_pq(g, stripe, &s->p_role, &s->q_role);
	for (int i = 0; i < k; i++)
		s->data_role[i] = parity_data_role(g, stripe, s->p_role, s->q_role, i);
	if (s->q_role < 0) {
		for (int i = 0; i < k; i++)
			s->q_index[i] = i; /* no Q: syndrome order is data order */
		return;
	}
	/* md's syndrome order: start on the member after Q (member 0 when Q
	 * is last) and walk round, numbering every member that is neither P
	 * nor Q. */
	int start = s->q_role == n - 1 ? 0 : s->q_role + 1, slot = 0;
	for (int j = 0; j < n; j++) {
		int r = (start + j) % n;
		slot_of_role[r] = -1;
		if (r != s->p_role && r != s->q_role)
			slot_of_role[r] = slot++;
	}
	for (int i = 0; i < k; i++)
		s->q_index[i] = slot_of_role[s->data_role[i]];
}

int layout_stripe_blocks(const struct layout_stripe *s, int *role_of)
{
	bool has_q = s->q_role >= 0;
	int k = s->ndata;
	for (int d = 0; d < k; d++)
		role_of[has_q ? s->q_index[d] : d] = s->data_role[d];
	role_of[k] = s->p_role;
	if (has_q)
		role_of[k + 1] = s->q_role;
	return k + (has_q ? 2 : 1);
}

int parity_unmap(const struct layout_geometry *g, int role, uint64_t msec, uint64_t *lsec)
{
	if (role < 0 || role >= g->raid_disks || msec >= parity_member_used(g, role))
		return -ERANGE;
	uint64_t cs = g->chunk_sectors, k = (uint64_t)parity_ndata(g);
	uint64_t stripe = msec / cs, off = msec % cs;
	int pd, qd;
	parity_pq(g, stripe, &pd, &qd);
	if (role == pd || role == qd) {
		*lsec = stripe * k * cs;
		return role == pd ? LAYOUT_P : LAYOUT_Q;
	}
	/* k is small: find the data index by asking the forward map */
	for (int i = 0; i < (int)k; i++) {
		if (parity_data_role(g, stripe, pd, qd, i) == role) {
			*lsec = (stripe * k + (uint64_t)i) * cs + off;
			return LAYOUT_DATA;
		}
	}
	return -ERANGE; /* not reached for valid geometry */
}

int parity_check_size(const struct layout_geometry *g, char *err, size_t errlen)
{
	if (g->dev_sectors < g->chunk_sectors)
		return errmsg(err, errlen, -EINVAL,
		              "member size %llu sectors is smaller than one chunk (%u sectors)",
		              (unsigned long long)g->dev_sectors, g->chunk_sectors);
	uint64_t per = g->dev_sectors - g->dev_sectors % g->chunk_sectors, tot;
	if (__builtin_mul_overflow(per, (uint64_t)parity_ndata(g), &tot))
		return errmsg(err, errlen, -EINVAL, "array size overflows 64 bits");
	return 0;
}

bool parity_readable(const struct layout_geometry *g, const bool *missing)
{
	int lost = 0;
	for (int r = 0; r < g->raid_disks; r++)
		lost += missing[r];
	return lost <= g->raid_disks - parity_ndata(g);
}
