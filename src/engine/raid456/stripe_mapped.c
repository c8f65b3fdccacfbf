/* Whole-stripe writes of raid4/5 straight into members in memory: where
 * every member of a stripe is mapped (member_map_addr), each data chunk is
 * copied from the caller's buffer into its member's pages while P is
 * accumulated straight into the P member's pages, in one pass over the data
 * (the parity backend's xor_copy_gen), under the SIGBUS guard. No scratch
 * parity, no second read of the data, no member request.
 *
 * Only where nothing else needs the requests: no log (journal or PPL:
 * they log data and parity before the members get them), no bad blocks on
 * the stripe's members (writes there clear them, through member requests),
 * every member writable. A stripe that does not qualify, or whose copy
 * faults (a member file cut under the array), ends this path; the caller
 * writes it and the rest by member requests, which fail that member as
 * any write error does. */
#include "engine/core/log.h"
#include "engine/raid456/raid456.h"
#include "member/member_guard.h"

struct mapped_stripe {
	const struct uraid_parity *pp;
	int k;
	size_t len;
	void *blk[MEMBER_MAP_RUN_MAX];  /* the caller's data chunks, then P */
	void *copy[MEMBER_MAP_RUN_MAX]; /* data chunk i's place in its member */
	int rc;
};

/* Under the guard: only the parity kernel's copies and XOR. */
static void mapped_fn(void *ctx)
{
	struct mapped_stripe *m = ctx;
	m->rc = m->pp->xor_copy_gen(m->k, m->len, m->blk, m->copy);
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
	if (a->geo.level == URAID_LEVEL_RAID6 || a->log || !a->pp->xor_copy_gen ||
	    a->geo.raid_disks > MEMBER_MAP_RUN_MAX)
		return 0;
	size_t clen = chunk * 512;
	for (int j = 0; j < n; j++) {
		struct layout_stripe ls;
		a->ops->stripe(&a->geo, s0 + (uint64_t)j, &ls);
		struct mapped_stripe ms = {.pp = a->pp, .k = ls.ndata, .len = clen};
		void *addr[MEMBER_MAP_RUN_MAX];
		size_t alen[MEMBER_MAP_RUN_MAX];
		const uint8_t *sdata = src + (size_t)j * (size_t)ls.ndata * clen;
		for (int di = 0; di <= ls.ndata; di++) {
			int role = di < ls.ndata ? ls.data_role[di] : ls.p_role;
			addr[di] = role_addr(a, role, ls.sector, chunk);
			if (!addr[di])
				return j;
			alen[di] = clen;
			if (di < ls.ndata) {
				ms.blk[di] = (void *)(sdata + (size_t)di * clen); /* only read */
				ms.copy[di] = addr[di];
			} else {
				ms.blk[di] = addr[di];
			}
		}
		if (member_map_run(mapped_fn, &ms, addr, alen, ls.ndata + 1) < 0 || ms.rc < 0)
			return j;
		for (int di = 0; di <= ls.ndata; di++)
			eng_count_io(a, true, clen);
	}
	return n;
}
