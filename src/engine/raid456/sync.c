/* Sync work of the parity levels (raid4/5/6): recovery onto rebuilding
 * members, resync, check and repair.
 *
 * The batch path reads a run of member rows from every member with one
 * request per member (consecutive chunk rows of a member are contiguous),
 * then works stripe by stripe on pointers into those buffers and writes
 * each rebuilt member with one request. Anything unusual in a batch (a
 * read error, a member missing during a resync, a mismatch to repair) goes
 * to the per-chunk path, which retries, reconstructs and repairs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/raid456/raid456.h"
#include "engine/sync/sync.h"
#include "engine/sync/workers.h"

/* Syndrome position of data index di (md's Q order for raid6). */
static int data_pos(const struct layout_stripe *ls, bool has_q, int di)
{
	return has_q ? ls->q_index[di] : di;
}

int sync_parity_piece(struct eng_array *a, uint64_t pos, uint64_t n)
{
	uint64_t chunk = a->geo.chunk_sectors;
	struct eng_stripe_buf sb;
	int rc = eng_stripe_buf_init(a, &sb, pos / chunk, n);
	if (rc < 0)
		return rc;
	uint64_t co = pos % chunk;
	int npos = eng_stripe_npos(&sb);
	bool lost[LAYOUT_MAX_MEMBERS + 2] = {0}, dirty[LAYOUT_MAX_MEMBERS + 2] = {0};
	size_t len = n * 512;
	switch (a->action) {
	case URAID_SYNC_RESYNC: {
		bool want[LAYOUT_MAX_MEMBERS + 2] = {0};
		for (int p = 0; p < sb.nsyn; p++)
			want[p] = true;
		rc = eng_stripe_read(a, &sb, co, want, NULL);
		if (rc == -EAGAIN)
			rc = eng_stripe_read_all(a, &sb, co, NULL);
		if (rc == 0)
			rc = eng_stripe_gen(a, &sb);
		for (int p = sb.nsyn; p < npos; p++)
			dirty[p] = true;
		break;
	}
	case URAID_SYNC_RECOVER:
		rc = eng_stripe_read_all(a, &sb, co, lost);
		for (int p = 0; p < npos; p++)
			dirty[p] = lost[p] && sync_role_rebuilding(a, sb.pos_role[p]);
		break;
	case URAID_SYNC_CHECK:
	case URAID_SYNC_REPAIR: {
		rc = eng_stripe_read_all(a, &sb, co, lost);
		if (rc < 0)
			break;
		uint8_t *orig = eng_buf_get(a, (size_t)npos * len);
		if (!orig) {
			rc = -ENOMEM;
			break;
		}
		for (int p = 0; p < npos; p++)
			memcpy(orig + p * len, sb.blk[p], len);
		rc = eng_stripe_gen(a, &sb);
		uint64_t bad = 0;
		for (uint64_t s = 0; s < n; s += SYNC_MISMATCH_UNIT) {
			uint64_t l = n - s < SYNC_MISMATCH_UNIT ? n - s : SYNC_MISMATCH_UNIT;
			for (int p = sb.nsyn; p < npos; p++)
				if (memcmp(orig + p * len + s * 512, (uint8_t *)sb.blk[p] + s * 512,
				           l * 512)) {
					bad += SYNC_MISMATCH_UNIT;
					break;
				}
		}
		a->mismatches += bad;
		if (a->action == URAID_SYNC_REPAIR && bad && sb.has_q) {
			/* RAID6: find the one member that is wrong, fix that one. */
			for (int p = 0; p < npos; p++)
				memcpy(sb.blk[p], orig + p * len, len);
			struct uraid_locate loc;
			int lr = uraid_pq_locate(a->pp, sb.nsyn, len, sb.blk, true, &loc);
			if (lr < 0)
				rc = eng_stripe_gen(a, &sb); /* not a single-member error */
			for (int p = 0; p < npos; p++)
				dirty[p] = sb.pos_role[p] >= 0 &&
				           memcmp(orig + p * len, sb.blk[p], len) != 0;
		} else if (a->action == URAID_SYNC_REPAIR && bad) {
			for (int p = sb.nsyn; p < npos; p++)
				dirty[p] = true;
		}
		eng_buf_put(a, orig);
		break;
	}
	default: break;
	}
	if (rc == 0)
		rc = eng_stripe_write(a, &sb, co, dirty);
	eng_stripe_buf_free(a, &sb);
	return rc;
}

/* A recovery piece that could not be rebuilt, again one stripe unit at a
 * time: a unit that still cannot (bad blocks recorded on too many of the
 * row's other members) is recorded in the rebuilding members' bad block
 * logs and the recovery goes on (md's handle_failed_sync); without room
 * there the member fails. */
static int recover_by_units(struct eng_array *a, uint64_t pos, uint64_t n)
{
	bool recorded = false;
	for (uint64_t u = pos, end = pos + n; u < end;) {
		uint64_t len = RAID456_BB_UNIT - u % RAID456_BB_UNIT;
		if (len > end - u)
			len = end - u;
		int rc = sync_parity_piece(a, u, len);
		if (rc == -EIO && eng_array_readable(a)) {
			for (int r = 0; r < a->geo.raid_disks; r++) {
				if (a->slot[r] < 0 || !sync_role_rebuilding(a, r))
					continue;
				int b = eng_bbl_add(a->mem[a->slot[r]], u, len);
				if (b < 0) {
					eng_member_failed(a, r,
					                  b == -ENOSPC
					                      ? "nothing to recover from, and its "
					                        "bad block log is full"
					                      : "nothing to recover from");
					return -EIO;
				}
				recorded = true;
			}
			rc = 0;
		}
		if (rc < 0)
			return rc;
		u += len;
	}
	if (!recorded)
		return 0;
	fprintf(stderr,
	        "uraid: recovery: member sectors %llu-%llu hold units no redundancy "
	        "covers; recorded in the rebuilding member's bad block log (reads there "
	        "answer EIO, as md's)\n",
	        (unsigned long long)pos, (unsigned long long)(pos + n - 1));
	return eng_sb_write_all(a);
}

/* The careful path over [pos, pos+n), chunk piece by chunk piece. */
static int by_pieces(struct eng_array *a, uint64_t pos, uint64_t n)
{
	uint64_t chunk = a->geo.chunk_sectors;
	for (uint64_t end = pos + n; pos < end;) {
		uint64_t len = chunk - pos % chunk;
		if (len > end - pos)
			len = end - pos;
		int rc = sync_parity_piece(a, pos, len);
		if (rc == -EIO && a->action == URAID_SYNC_RECOVER && eng_array_readable(a))
			rc = recover_by_units(a, pos, len);
		if (rc < 0)
			return rc;
		if (a->action == URAID_SYNC_IDLE)
			return 0;
		pos += len;
	}
	return 0;
}

struct pbatch {
	uint64_t pos, n;
	uint8_t *mem;
	uint8_t *role_buf[LAYOUT_MAX_MEMBERS];
	uint8_t *scratch_p, *scratch_q, *zero; /* plen bytes each: the largest piece */
	size_t plen;
	bool zeroed;
	bool readable[LAYOUT_MAX_MEMBERS];
	bool target[LAYOUT_MAX_MEMBERS]; /* recovery writes this role */
	bool single;                     /* recovery of one lost member: the minimal reads */
};

/* Blocks of the stripe piece at member sector msec (len sectors) in
 * syndrome order; positions whose role is not readable go into fail[]. */
static int piece_blocks(struct eng_array *a, struct pbatch *b, const struct layout_stripe *ls,
                        uint64_t msec, uint64_t len, void **blk, int *nsyn_out, int *fail)
{
	bool has_q = a->geo.level == URAID_LEVEL_RAID6;
	int k = ls->ndata, nsyn = k, nf = 0;
	if (has_q)
		for (int i = 0; i < k; i++)
			if (ls->q_index[i] + 1 > nsyn)
				nsyn = ls->q_index[i] + 1;
	size_t off = (msec - b->pos) * 512;
	if (nsyn > k && !b->zeroed) {
		/* DDF layouts: syndrome positions without a member count as zero. */
		memset(b->zero, 0, b->plen);
		b->zeroed = true;
	}
	for (int p = 0; p < nsyn; p++)
		blk[p] = b->zero;
	for (int di = 0; di < k; di++) {
		int p = data_pos(ls, has_q, di), role = ls->data_role[di];
		blk[p] = b->role_buf[role] + off;
		if (!b->readable[role] && nf < 3)
			fail[nf++] = p;
	}
	blk[nsyn] = b->role_buf[ls->p_role] + off;
	if (!b->readable[ls->p_role] && nf < 3)
		fail[nf++] = nsyn;
	if (has_q) {
		blk[nsyn + 1] = b->role_buf[ls->q_role] + off;
		if (!b->readable[ls->q_role] && nf < 3)
			fail[nf++] = nsyn + 1;
	}
	*nsyn_out = nsyn;
	return nf;
}

/* Resync / check / repair of one stripe piece: parity regenerated into
 * scratch and compared. Mismatches are counted (check) or handed to the
 * careful path, which rewrites them (resync, repair). */
static int piece_compare(struct eng_array *a, struct pbatch *b, void **blk, int nsyn, uint64_t msec,
                         uint64_t len)
{
	bool has_q = a->geo.level == URAID_LEVEL_RAID6;
	uint8_t *p_read = blk[nsyn], *q_read = has_q ? blk[nsyn + 1] : NULL;
	blk[nsyn] = b->scratch_p;
	if (has_q)
		blk[nsyn + 1] = b->scratch_q;
	int rc = has_q ? a->pp->pq_gen(nsyn, len * 512, blk) : a->pp->xor_gen(nsyn, len * 512, blk);
	if (rc < 0)
		return -EIO;
	uint64_t bad = 0;
	for (uint64_t s = 0; s < len; s += SYNC_MISMATCH_UNIT) {
		size_t off = s * 512,
		       l = (len - s < SYNC_MISMATCH_UNIT ? len - s : SYNC_MISMATCH_UNIT) * 512;
		if (memcmp(p_read + off, b->scratch_p + off, l) ||
		    (has_q && memcmp(q_read + off, b->scratch_q + off, l)))
			bad += SYNC_MISMATCH_UNIT;
	}
	if (!bad)
		return 0;
	if (a->action == URAID_SYNC_CHECK) {
		a->mismatches += bad;
		return 0;
	}
	return sync_parity_piece(a, msec, len);
}

/* The one lost block of a stripe piece from the others: P, or a data block,
 * is the XOR of the rest (RAID6 as well: md's single-failure recovery, Q
 * is not read); a lost Q is regenerated (P goes to scratch, not read). */
static int rebuild_one(struct eng_array *a, struct pbatch *b, void **blk, int nsyn, int lost,
                       uint64_t len)
{
	if (lost == nsyn + 1) {
		blk[nsyn] = b->scratch_p;
		return a->pp->pq_gen(nsyn, len * 512, blk) < 0 ? -EIO : 0;
	}
	void *x[LAYOUT_MAX_MEMBERS + 2];
	int nx = 0;
	for (int p = 0; p <= nsyn; p++)
		if (p != lost && blk[p] != b->zero)
			x[nx++] = blk[p];
	x[nx] = blk[lost];
	return a->pp->xor_gen(nx, len * 512, x) < 0 ? -EIO : 0;
}

/* Recovering one lost RAID6 member needs k blocks per stripe: Q is not
 * read (nor P when Q is the one lost). */
static bool read_skipped(const struct eng_array *a, const struct pbatch *b, int lost_role,
                         const struct layout_stripe *ls, int role)
{
	return b->single && a->geo.level == URAID_LEVEL_RAID6 &&
	       role == (lost_role == ls->q_role ? ls->p_role : ls->q_role);
}

/* Reads of member rows [from, to) of the batch into its buffers: every
 * readable role, except that recovering one lost RAID6 member needs only
 * k blocks per stripe (Q is skipped, or P when Q is the one lost). */
static int add_reads(struct eng_array *a, const struct pbatch *b, int lost_role, uint64_t from,
                     uint64_t to, struct sync_iolist *l)
{
	uint64_t chunk = a->geo.chunk_sectors;
	int rc = 0;
	for (int r = 0; r < a->geo.raid_disks && rc == 0; r++) {
		if (!b->readable[r])
			continue;
		for (uint64_t msec = from, len; msec < to && rc == 0; msec += len) {
			len = chunk - msec % chunk;
			if (len > to - msec)
				len = to - msec;
			if (b->single && a->geo.level == URAID_LEVEL_RAID6) {
				struct layout_stripe ls;
				a->ops->stripe(&a->geo, msec / chunk, &ls);
				if (read_skipped(a, b, lost_role, &ls, r))
					continue;
			}
			rc = sync_iol_add(a, l, r, false, b->role_buf[r] + (msec - b->pos) * 512,
			                  msec, len);
		}
	}
	return rc;
}

/* Rebuild the lost blocks of the stripe piece at msec (len sectors, stripe
 * ls) in the buffers of b: one lost member the minimal way, else by the
 * parity module's recovery. */
static int rebuild_piece(struct eng_array *a, struct pbatch *b, const struct layout_stripe *ls,
                         uint64_t msec, uint64_t len)
{
	void *blk[LAYOUT_MAX_MEMBERS + 2];
	int fail[3], nsyn;
	int nf = piece_blocks(a, b, ls, msec, len, blk, &nsyn, fail);
	if (nf == 1 && b->single)
		return rebuild_one(a, b, blk, nsyn, fail[0], len) < 0 ? -EIO : 0;
	if (nf &&
	    a->pp->recover(nsyn, len * 512, blk, a->geo.level == URAID_LEVEL_RAID6, nf, fail) < 0)
		return -EIO;
	return 0;
}

/* Rebuild the targets' blocks of rows [from, to) in the batch buffers. */
static int recover_rows(struct eng_array *a, struct pbatch *b, uint64_t from, uint64_t to)
{
	uint64_t chunk = a->geo.chunk_sectors;
	for (uint64_t msec = from; msec < to;) {
		uint64_t len = chunk - msec % chunk;
		if (len > to - msec)
			len = to - msec;
		struct layout_stripe ls;
		a->ops->stripe(&a->geo, msec / chunk, &ls);
		int rc = rebuild_piece(a, b, &ls, msec, len);
		if (rc < 0)
			return rc;
		msec += len;
	}
	return 0;
}

/* Member rows per pipeline group: whole chunk rows, about this much per
 * member, so a batch has several groups to overlap. */
#define GROUP_BYTES (256u << 10)

/* Recovery by the generic (read) path, pipelined over groups of rows: the
 * reads of group g+1 go out in the same member batch as the writes of
 * group g, so on disks the sources are read while the target is written
 * (md overlaps them likewise) instead of one after the other. Every write
 * has completed when this returns. A read error sends the rest of the
 * batch to the careful path; a failed write fails its member, and the
 * rest goes the careful way too (for any other target still rebuilding). */
static int recover_pipelined(struct eng_array *a, struct pbatch *b, int lost_role)
{
	uint64_t chunk = a->geo.chunk_sectors, pos = b->pos, end = b->pos + b->n;
	uint64_t grp = GROUP_BYTES / 512 / chunk * chunk;
	if (grp < chunk)
		grp = chunk;
	int nd = a->geo.raid_disks;
	struct sync_iolist l = {0};
	/* The group boundary after msec: chunk rows, the batch's end. */
#define NEXT_END(msec) ((msec) / chunk * chunk + grp < end ? (msec) / chunk * chunk + grp : end)
	uint64_t g0 = pos, g1 = NEXT_END(pos);
	int rc = add_reads(a, b, lost_role, g0, g1, &l);
	if (rc == 0 && !sync_iol_run(a, &l)) {
		sync_iol_free(&l);
		return by_pieces(a, pos, b->n);
	}
	while (rc == 0 && g0 < end) {
		if ((rc = recover_rows(a, b, g0, g1)) < 0)
			break;
		uint64_t n0 = g1, n1 = g1 < end ? NEXT_END(g1) : end;
		sync_iol_free(&l);
		int nread = 0;
		if (n0 < end) {
			rc = add_reads(a, b, lost_role, n0, n1, &l);
			nread = l.n;
		}
		for (int r = 0; r < nd && rc == 0; r++)
			if (b->target[r])
				rc = sync_iol_add(a, &l, r, true, b->role_buf[r] + (g0 - pos) * 512,
				                  g0, g1 - g0);
		if (rc < 0)
			break;
		eng_ioq_run(a, a->ioq, l.io, l.n);
		bool read_ok = true, write_ok = true;
		for (int i = 0; i < l.n; i++) {
			bool ok = member_io_done(&l.io[i]);
			if (ok)
				continue;
			if (i < nread) {
				read_ok = false;
			} else {
				/* md: the target's bad block log, or md_error */
				if (!eng_write_failed_io(a, l.role[i], &l.io[i], 8,
				                         "write error during recovery"))
					write_ok = false;
			}
		}
		if (!eng_array_readable(a)) {
			rc = -EIO;
			break;
		}
		if (!read_ok || !write_ok) {
			/* The rest the careful way, as the array now stands (a
			 * failed target is no longer rebuilt). */
			sync_iol_free(&l);
			return n0 < end ? by_pieces(a, n0, end - n0) : 0;
		}
		g0 = n0;
		g1 = n1;
	}
#undef NEXT_END
	sync_iol_free(&l);
	return rc;
}

/* Recovery of members in memory (sync_in_memory): the chunk pieces of the
 * batch are rebuilt by two workers (engine/sync/workers.h), each reading a piece's
 * sources into buffers of its own with synchronous requests, rebuilding
 * the targets' blocks there and writing them. Reads from the page cache
 * are memory copies, and two CPUs make them twice as fast as one thread's
 * queued batch; nothing is held but a piece per worker. */
struct direct {
	struct eng_array *a;
	const struct pbatch *b;
	int lost_role;
	size_t per; /* bytes of worker memory: a piece per role, P, Q */
	uint8_t *wmem[SYNC_WORKERS];
	bool read_failed;                /* atomic */
	bool failed[LAYOUT_MAX_MEMBERS]; /* target writes that failed (atomic) */
};

static int direct_piece(void *ctx, int worker, int i)
{
	struct direct *d = ctx;
	struct eng_array *a = d->a;
	struct pbatch wb = *d->b; /* this worker's view: its own buffers, at the piece */
	uint64_t chunk = a->geo.chunk_sectors;
	/* Piece i: the i-th chunk piece of the batch. */
	uint64_t msec = i > 0 ? (wb.pos / chunk + (uint64_t)i) * chunk : wb.pos;
	uint64_t len = chunk - msec % chunk;
	if (len > wb.pos + wb.n - msec)
		len = wb.pos + wb.n - msec;
	int nd = a->geo.raid_disks;
	wb.pos = msec;
	for (int r = 0; r < nd; r++)
		wb.role_buf[r] = d->wmem[worker] + (size_t)r * wb.plen;
	wb.scratch_p = d->wmem[worker] + (size_t)nd * wb.plen;
	wb.scratch_q = wb.scratch_p + wb.plen;
	struct layout_stripe ls;
	a->ops->stripe(&a->geo, msec / chunk, &ls);
	for (int r = 0; r < nd; r++) {
		if (!wb.readable[r] || read_skipped(a, &wb, d->lost_role, &ls, r))
			continue;
		struct member_io io;
		eng_set_io(a, &io, r, false, wb.role_buf[r], msec, len);
		eng_count_io(a, false, io.len);
		if (member_read(io.m, io.buf, io.len, io.off) < 0) {
			__atomic_store_n(&d->read_failed, true, __ATOMIC_RELAXED);
			return -EIO;
		}
	}
	int rc = rebuild_piece(a, &wb, &ls, msec, len);
	if (rc < 0)
		return rc;
	for (int r = 0; r < nd; r++) {
		if (!wb.target[r])
			continue;
		struct member_io io;
		eng_set_io(a, &io, r, true, wb.role_buf[r], msec, len);
		eng_count_io(a, true, io.len);
		if (member_write(io.m, io.buf, io.len, io.off, 0) < 0)
			__atomic_store_n(&d->failed[r], true, __ATOMIC_RELAXED);
	}
	return 0;
}

/* Returns 1 when this path does not apply (the caller reads as usual);
 * nothing has been written then. Only when every lost role is a target:
 * the others would need a buffer of their own. A read error sends the
 * batch to the careful path (what was written already is right). */
static int recover_direct(struct eng_array *a, struct pbatch *b, int lost_role)
{
	int nd = a->geo.raid_disks;
	uint64_t chunk = a->geo.chunk_sectors, pos = b->pos, n = b->n;
	if (!sync_in_memory(a))
		return 1;
	for (int r = 0; r < nd; r++)
		if (!b->readable[r] && !b->target[r])
			return 1;
	size_t plen = b->plen;
	struct direct d = {.a = a, .b = b, .lost_role = lost_role, .per = ((size_t)nd + 2) * plen};
	uint8_t *mem = eng_buf_get(a, SYNC_WORKERS * d.per + plen);
	if (!mem)
		return -ENOMEM;
	for (int w = 0; w < SYNC_WORKERS; w++)
		d.wmem[w] = mem + (size_t)w * d.per;
	/* Shared and read-only while the workers run (DDF layouts' empty
	 * syndrome slots). */
	b->zero = mem + SYNC_WORKERS * d.per;
	memset(b->zero, 0, plen);
	b->zeroed = true;
	int pieces = (int)((pos + n + chunk - 1) / chunk - pos / chunk);
	int rc = sync_workers_run(&a->workers, pieces, direct_piece, &d);
	eng_buf_put(a, mem);
	for (int r = 0; r < nd; r++)
		if (d.failed[r])
			eng_member_failed(a, r, "write error during recovery");
	if (!eng_array_readable(a))
		return -EIO;
	if (d.read_failed)
		return by_pieces(a, pos, n);
	return rc;
}

int sync_parity_batch(struct eng_array *a, uint64_t pos, uint64_t n)
{
	int nd = a->geo.raid_disks;
	uint64_t chunk = a->geo.chunk_sectors;
	bool recover = a->action == URAID_SYNC_RECOVER;
	struct pbatch b = {.pos = pos, .n = n};
	int nlost = 0, ntarget = 0;
	for (int r = 0; r < nd; r++) {
		b.readable[r] = eng_role_readable(a, r, pos, n);
		if (b.readable[r])
			continue;
		nlost++;
		b.target[r] = recover && sync_role_rebuilding(a, r);
		ntarget += b.target[r];
	}
	if (recover && ntarget == 0)
		return 0;
	if ((nlost && !recover) || nlost > eng_nparity(a))
		return by_pieces(a, pos, n);
	size_t blen = n * 512, plen = (n < chunk ? n : chunk) * 512;
	b.plen = plen;
	/* One lost member: each stripe needs k blocks, so RAID6 skips Q
	 * (or P when Q is the one lost); else every readable member. */
	int lost_role = -1;
	for (int r = 0; r < nd && nlost == 1; r++)
		if (!b.readable[r])
			lost_role = r;
	b.single = recover && nlost == 1;
	if (recover) {
		int rd = recover_direct(a, &b, lost_role);
		if (rd <= 0)
			return rd;
	}
	b.mem = eng_buf_get(a, (size_t)nd * blen + 3 * plen);
	if (!b.mem)
		return -ENOMEM;
	for (int r = 0; r < nd; r++)
		b.role_buf[r] = b.mem + (size_t)r * blen;
	b.scratch_p = b.mem + (size_t)nd * blen;
	b.scratch_q = b.scratch_p + plen;
	b.zero = b.scratch_q + plen;
	if (recover) {
		int rp = recover_pipelined(a, &b, lost_role);
		eng_buf_put(a, b.mem);
		return rp;
	}
	struct sync_iolist rd = {0};
	int rc = add_reads(a, &b, lost_role, pos, pos + n, &rd);
	bool read_ok = rc == 0 && sync_iol_run(a, &rd);
	sync_iol_free(&rd);
	if (!read_ok) {
		eng_buf_put(a, b.mem);
		return rc < 0 ? rc : by_pieces(a, pos, n);
	}

	/* Resync, check, repair: compare stripe by stripe. */
	for (uint64_t msec = pos; msec < pos + n && rc == 0;) {
		uint64_t len = chunk - msec % chunk;
		if (len > pos + n - msec)
			len = pos + n - msec;
		struct layout_stripe ls;
		a->ops->stripe(&a->geo, msec / chunk, &ls);
		void *blk[LAYOUT_MAX_MEMBERS + 2];
		int fail[3], nsyn;
		piece_blocks(a, &b, &ls, msec, len, blk, &nsyn, fail);
		rc = piece_compare(a, &b, blk, nsyn, msec, len);
		msec += len;
	}
	eng_buf_put(a, b.mem);
	return rc;
}
