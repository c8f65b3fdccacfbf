/* Whole-stripe writes straight into members in memory: where every member
 * of a stripe is mapped (member_map_addr), the data chunks go from the
 * caller's buffer into their members' pages and the parity is computed
 * into the parity members' pages, under the SIGBUS guard. No scratch
 * parity, no member request.
 *
 * raid4/5: one pass over the data, the copies and the XOR of P together
 * (the parity backend's xor_copy_gen). raid6: slice by slice, the data
 * slices are copied into the members, then pq_gen reads them again from
 * the caller's buffer (still in the cache) and stores P and Q into the P
 * and Q members' pages. DDF layouts (syndrome positions without a member)
 * go the member-request way.
 *
 * Only where nothing else needs the requests: no log (bitmap, journal or
 * PPL: their hooks see the stripes before the members get them), no
 * reshape in progress (the member-request path alone knows its views), no
 * bad blocks on the stripe's members (writes there clear them, through
 * member requests), every member of the stripe writable (in sync or being
 * rebuilt). A stripe that does not qualify, or whose copy faults (a member
 * file cut under the array), ends this path; the caller writes it and the
 * rest by member requests, which fail that member as any write error
 * does. */
#include <errno.h>
#include <string.h>

#include "engine/core/log.h"
#include "engine/raid456/raid456.h"
#include "member/member_guard.h"

/* raid6: bytes per member per slice; the stripe's data slices stay in the
 * L1/L2 cache between the copies and pq_gen. */
#define PQ_SLICE ((size_t)64 << 10)

struct mapped_stripe {
	const struct uraid_parity *pp;
	int k;
	bool has_q;
	size_t len;
	/* The caller's data chunks in syndrome order, then P (and Q): their
	 * places in the members for the parity, the caller's for the data. */
	void *blk[MEMBER_MAP_RUN_MAX];
	void *copy[MEMBER_MAP_RUN_MAX]; /* syndrome position i's place in its member */
	int rc;
};

/* Under the guard: only the parity kernel's copies and arithmetic. */
static void mapped_fn(void *ctx)
{
	struct mapped_stripe *m = ctx;
	if (!m->has_q) {
		m->rc = m->pp->xor_copy_gen(m->k, m->len, m->blk, m->copy);
		return;
	}
	void *b[MEMBER_MAP_RUN_MAX];
	for (size_t o = 0; o < m->len && m->rc == 0; o += PQ_SLICE) {
		size_t n = m->len - o < PQ_SLICE ? m->len - o : PQ_SLICE;
		for (int i = 0; i < m->k + 2; i++)
			b[i] = (uint8_t *)m->blk[i] + o;
		for (int i = 0; i < m->k; i++)
			memcpy((uint8_t *)m->copy[i] + o, b[i], n);
		m->rc = m->pp->pq_gen(m->k, n, b);
	}
}

/* The mapped bytes of `role`'s chunk at data-area sector msec, or NULL. */
static void *role_addr(struct eng_array *a, int role, uint64_t msec, uint64_t nsec)
{
	if (!eng_role_writable(a, role) || eng_role_bad(a, role, msec, nsec))
		return NULL;
	const struct eng_member *em = a->mem[a->slot[role]];
	return member_map_addr(eng_data_member(em), (em->sb.data_offset + msec) * 512, nsec * 512);
}

int eng_write_full_mapped(struct eng_array *a, uint64_t s0, int n, const uint8_t *src)
{
	uint64_t chunk = a->geo.chunk_sectors;
	bool has_q = a->geo.level == URAID_LEVEL_RAID6;
	if (a->log || a->rs || (!has_q && !a->pp->xor_copy_gen) ||
	    a->geo.raid_disks > MEMBER_MAP_RUN_MAX)
		return 0;
	size_t clen = chunk * 512;
	for (int j = 0; j < n; j++) {
		struct layout_stripe ls;
		a->ops->stripe(&a->geo, s0 + (uint64_t)j, &ls);
		struct mapped_stripe ms = {.pp = a->pp, .k = ls.ndata, .has_q = has_q, .len = clen};
		void *addr[MEMBER_MAP_RUN_MAX];
		size_t alen[MEMBER_MAP_RUN_MAX];
		int npar = has_q ? 2 : 1;
		const uint8_t *sdata = src + (size_t)j * (size_t)ls.ndata * clen;
		for (int di = 0; di < ls.ndata + npar; di++) {
			int role = di < ls.ndata    ? ls.data_role[di]
			           : di == ls.ndata ? ls.p_role
			                            : ls.q_role;
			/* Syndrome position: raid6 data in Q order, which must
			 * be 0..k-1 (no DDF positions without a member). */
			int pos = di;
			if (has_q && di < ls.ndata) {
				pos = ls.q_index[di];
				if (pos < 0 || pos >= ls.ndata)
					return j;
			}
			addr[di] = role_addr(a, role, ls.sector, chunk);
			if (!addr[di])
				return j;
			alen[di] = clen;
			if (di < ls.ndata) {
				ms.blk[pos] = (void *)(sdata + (size_t)di * clen); /* only read */
				ms.copy[pos] = addr[di];
			} else {
				ms.blk[pos] = addr[di];
			}
		}
		if (member_map_run(mapped_fn, &ms, addr, alen, ls.ndata + npar) < 0 || ms.rc < 0)
			return j;
		for (int di = 0; di < ls.ndata + npar; di++)
			eng_count_io(a, true, clen);
	}
	return n;
}

struct mapped_rmw {
	const struct uraid_parity *pp;
	int k, idx;
	size_t len;
	void *p, *q, *old;
	const void *new_;
	int rc;
};

/* Under the guard: P (and Q) updated from the old and the new data in the
 * members' pages, then the new data over the old. */
static void rmw_fn(void *ctx)
{
	struct mapped_rmw *m = ctx;
	const void *old = m->old;
	m->rc = m->pp->pq_update(m->k, m->len, m->p, m->q, 1, &m->idx, &old, &m->new_);
	if (m->rc == 0)
		memcpy(m->old, m->new_, m->len);
}

int eng_write_rmw_mapped(struct eng_array *a, const struct eng_stripe_buf *sb, int di, uint64_t co,
                         uint64_t nrows, const uint8_t *src)
{
	if (a->log || a->rs)
		return 0;
	int p = sb->has_q ? sb->ls.q_index[di] : di, npar = sb->has_q ? 2 : 1;
	uint64_t msec = sb->ls.sector + co;
	size_t len = nrows * 512;
	void *addr[3] = {0};
	size_t alen[3] = {len, len, len};
	int role[3] = {sb->pos_role[p], sb->pos_role[sb->nsyn],
	               sb->has_q ? sb->pos_role[sb->nsyn + 1] : -1};
	for (int i = 0; i < 1 + npar; i++)
		if (!(addr[i] = role_addr(a, role[i], msec, nrows)))
			return 0;
	struct mapped_rmw m = {.pp = a->pp,
	                       .k = sb->nsyn,
	                       .idx = p,
	                       .len = len,
	                       .p = addr[1],
	                       .q = sb->has_q ? addr[2] : NULL,
	                       .old = addr[0],
	                       .new_ = src};
	if (member_map_run(rmw_fn, &m, addr, alen, 1 + npar) < 0 || m.rc < 0)
		return -EIO;
	for (int i = 0; i < 1 + npar; i++) {
		eng_count_io(a, false, len);
		eng_count_io(a, true, len);
	}
	return 1;
}
