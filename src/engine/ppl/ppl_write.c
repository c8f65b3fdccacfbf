/* Logging stripe writes (md's ppl_write_stripe / ppl_log_stripe /
 * ppl_submit_iounit): the stripes of one write go, per parity member, into
 * one I/O unit — a header with an entry per stripe and the partial parity
 * of each — written with FUA to that member's log before the data and
 * parity reach the members. A stripe whose parity member is missing or not
 * in sync is not logged (there is no parity to protect); a write to every
 * data chunk of its rows gets an entry without partial parity (md recovers
 * such a stripe from the data alone).
 *
 * md recovers only the newest unit of each log (its walk stops at the
 * highest generation) and submits a unit only once the previous one's
 * stripes are written and, with volatile caches, flushed. Here the stripe
 * writes of a unit are done when the next unit comes (writes are serial
 * under eng_lock); the members they went to are flushed then, before the
 * new unit replaces the old one as the newest. */
#include <errno.h>
#include <string.h>

#include "engine/ppl/ppl_int.h"
#include "engine/raid456/raid456.h"

uint64_t eng_ppl_piece(const struct eng_array *a, uint64_t lsec, uint64_t nsec)
{
	uint64_t chunk = a->geo.chunk_sectors, width = eng_stripe_width(a);
	if (lsec % width == 0 && nsec >= width)
		return nsec / width * width; /* whole stripes: no partial parity */
	/* One chunk of one stripe: its rows, widened to 4 KiB, are all the
	 * partial parity the write needs (md's case 0), and they must fit
	 * the smallest log's unit. */
	uint64_t n = chunk - lsec % chunk;
	const struct eng_ppl *p = eng_ppl_of(a);
	uint64_t space = UINT64_MAX;
	for (int r = 0; p && r < p->ndisks; r++)
		if (p->log[r].m) {
			uint64_t s = md_ppl_unit_space(p->log[r].sectors) / 512;
			if (s < space)
				space = s;
		}
	uint64_t lead = lsec % chunk % MD_PPL_HEADER_SECTORS;
	if (space != UINT64_MAX && n + lead > space)
		n = space - lead;
	return n < nsec ? n : nsec;
}

/* The roles a stripe write touches, and whether its parity member can
 * hold a log entry for rows [msec, msec+nsec). */
static uint64_t stripe_roles(const struct eng_stripe_buf *b, const bool *dirty)
{
	uint64_t mask = 0;
	for (int q = 0; q < eng_stripe_npos(b); q++)
		if (b->pos_role[q] >= 0 && (!dirty || dirty[q]) && b->pos_role[q] < 64)
			mask |= 1ull << b->pos_role[q];
	return mask;
}

/* The members the last unit of `role`'s log wrote: durable now. */
static void flush_unflushed(struct eng_array *a, struct eng_ppl_log *l)
{
	for (int r = 0; r < a->geo.raid_disks && l->unflushed; r++) {
		if (!(l->unflushed >> r & 1))
			continue;
		struct member *m = eng_role_member(a, r);
		if (m && eng_role_writable(a, r) && member_flush(m) < 0)
			eng_member_failed(a, r, "flush failed");
	}
	l->unflushed = 0;
}

/* Entry (and partial parity, into pp) of one stripe's write; 1 when it
 * goes into the log, 0 when not (parity member not in sync), <0 error. */
static int stripe_entry(struct eng_array *a, struct eng_stripe_buf *b, uint64_t co,
                        const bool *dirty, struct md_ppl_entry *e, uint8_t *pp)
{
	int prole = b->pos_role[b->nsyn];
	uint64_t chunk = a->geo.chunk_sectors, len = b->nsec * 512;
	if (dirty && !dirty[b->nsyn])
		return 0; /* no parity write */
	if (!eng_role_writable(a, prole) ||
	    !eng_role_readable(a, prole, b->ls.sector + co, b->nsec))
		return 0; /* md: parity member not in sync, nothing to log */
	int d0 = -1, d1 = -1, nmod = 0;
	for (int di = 0; di < b->k; di++) {
		int q = eng_stripe_data_pos(b, di);
		if (b->pos_role[q] < 0 || (dirty && !dirty[q]))
			continue;
		if (d0 < 0)
			d0 = di;
		d1 = di;
		nmod++;
	}
	/* md's recovery takes the modified chunks as one run from the first
	 * (ppl_recover_entry); the personality writes one contiguous range
	 * per stripe, and this log's write op one chunk or whole stripes. */
	if (nmod == 0 || d1 - d0 + 1 != nmod)
		return -EINVAL;
	uint64_t s = b->ls.sector / chunk;
	e->data_sector = s * (uint64_t)b->k * chunk + (uint64_t)d0 * chunk + co;
	e->data_size = (uint32_t)((uint64_t)nmod * len);
	e->parity_disk = (uint32_t)prole;
	if (nmod == b->k) {
		e->pp_size = 0; /* every data chunk written: parity from the data */
		e->checksum = 0;
		return 1;
	}
	/* The chunks left alone, XORed: the new parity without the new data
	 * (the same in read-modify-write and reconstruct-write). */
	void *src[LAYOUT_MAX_MEMBERS + 2];
	int ns = 0;
	src[ns++] = b->blk[b->nsyn];
	for (int di = d0; di <= d1; di++)
		src[ns++] = b->blk[eng_stripe_data_pos(b, di)];
	src[ns] = pp;
	if (a->pp->xor_gen(ns, len, src) < 0)
		return -EIO;
	e->pp_size = (uint32_t)len;
	e->checksum = md_ppl_checksum(pp, len);
	return 1;
}

int eng_ppl_log_stripes(struct eng_array *a, struct eng_stripe_buf *sb, int n, uint64_t co,
                        const bool *dirty)
{
	struct eng_ppl *p = eng_ppl_of(a);
	if (!p)
		return 0;
	bool done[LAYOUT_MAX_MEMBERS] = {0};
	size_t row_bytes = (size_t)(n ? sb[0].nsec : 0) * 512;
	int rc = eng_ppl_buf(p, MD_PPL_HEADER_SIZE + (size_t)n * row_bytes);
	if (rc < 0)
		return rc;
	/* One unit per parity member, its stripes in the order given. */
	for (int i = 0; i < n; i++) {
		int prole = sb[i].pos_role[sb[i].nsyn];
		if (prole < 0 || prole >= p->ndisks || done[prole])
			continue;
		done[prole] = true;
		struct eng_ppl_log *l = &p->log[prole];
		struct member *m = eng_ppl_member(a, prole);
		if (m && l->m != m) {
			/* A member new in this slot (rebuilt, replaced, re-added):
			 * its log starts empty, as md's ppl_modify_log starts it. */
			if (eng_ppl_log_reset(a, prole) < 0)
				l->m = NULL;
		}
		if (!m || !l->m)
			continue;
		struct md_ppl_header h;
		md_ppl_init(&h, p->signature, 0);
		uint64_t pp_sectors = 0, roles = 0;
		uint8_t *pp = p->buf + MD_PPL_HEADER_SIZE;
		for (int j = i; j < n; j++) {
			if (sb[j].pos_role[sb[j].nsyn] != prole)
				continue;
			if (h.entries_count == MD_PPL_MAX_ENTRIES)
				return -ENOSPC;
			struct md_ppl_entry *e = &h.entries[h.entries_count];
			rc = stripe_entry(a, &sb[j], co, dirty, e, pp + pp_sectors * 512);
			if (rc < 0)
				return rc;
			if (rc == 0)
				continue;
			h.entries_count++;
			pp_sectors += e->pp_size / 512;
			roles |= stripe_roles(&sb[j], dirty);
		}
		if (h.entries_count == 0)
			continue;
		if (pp_sectors * 512 > md_ppl_unit_space(l->sectors))
			return -ENOSPC; /* eng_ppl_piece keeps writes below this */
		uint64_t need = MD_PPL_HEADER_SECTORS + pp_sectors;
		flush_unflushed(a, l);
		if (!eng_role_writable(a, prole))
			continue; /* the flush failed it */
		uint32_t at = l->multi ? l->next : 0;
		if (at + need > l->sectors)
			at = 0; /* md rewinds when the rest of the area is too short */
		h.generation = ++p->generation;
		md_ppl_encode(&h, p->buf);
		rc = eng_ppl_area_io(a, prole, true, p->buf, at, need);
		if (rc < 0) {
			/* md fails the member whose log write failed; the stripe
			 * then goes on without its parity. */
			eng_member_failed(a, prole, "PPL write failed");
			if (!eng_array_readable(a))
				return -EIO;
			continue;
		}
		l->next = (uint32_t)(at + need);
		l->unflushed = roles;
	}
	return 0;
}
