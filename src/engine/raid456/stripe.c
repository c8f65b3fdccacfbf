/* Parity levels (raid4/5/6): reads with reconstruction, read-error
 * correction, and writes by full stripe, read-modify-write or
 * reconstruct-write. Blocks of a stripe are held in syndrome order: k data
 * positions (more for DDF layouts, where unused positions stay zero), then
 * P, then Q. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/log.h"
#include "engine/raid456/raid456.h"

#define BATCH 64

int eng_stripe_data_pos(const struct eng_stripe_buf *sb, int di)
{
	return sb->has_q ? sb->ls.q_index[di] : di;
}
#define data_pos eng_stripe_data_pos

int eng_stripe_buf_init(struct eng_array *a, struct eng_stripe_buf *sb, uint64_t stripe,
                        uint64_t nsec)
{
	memset(sb, 0, sizeof(*sb));
	a->ops->stripe(&a->geo, stripe, &sb->ls);
	sb->k = sb->ls.ndata;
	sb->has_q = a->geo.level == URAID_LEVEL_RAID6;
	sb->nsyn = sb->k;
	if (sb->has_q)
		for (int i = 0; i < sb->k; i++)
			if (sb->ls.q_index[i] + 1 > sb->nsyn)
				sb->nsyn = sb->ls.q_index[i] + 1;
	if (sb->k < 1 || sb->nsyn > LAYOUT_MAX_MEMBERS)
		return -EINVAL;
	sb->nsec = nsec;
	sb->q = a->ioq;
	/* No Q slot for RAID4/5: nothing reads or writes it. */
	int nblk = sb->nsyn + (sb->has_q ? 2 : 1);
	size_t blen = (size_t)nsec * 512;
	sb->mem = eng_buf_get(a, (size_t)nblk * blen);
	if (!sb->mem)
		return -ENOMEM;
	for (int i = 0; i < LAYOUT_MAX_MEMBERS + 2; i++) {
		sb->blk[i] = i < nblk ? sb->mem + (size_t)i * blen : NULL;
		sb->pos_role[i] = -1;
	}
	for (int i = 0; i < sb->k; i++)
		sb->pos_role[data_pos(sb, i)] = sb->ls.data_role[i];
	/* Syndrome positions without a member (DDF layouts) count as zero in
	 * P and Q; everything else is read or written before it is used. */
	for (int i = 0; i < sb->nsyn; i++)
		if (sb->pos_role[i] < 0)
			memset(sb->blk[i], 0, blen);
	sb->pos_role[sb->nsyn] = sb->ls.p_role;
	if (sb->has_q)
		sb->pos_role[sb->nsyn + 1] = sb->ls.q_role;
	return 0;
}

void eng_stripe_buf_free(struct eng_array *a, struct eng_stripe_buf *sb)
{
	eng_buf_put(a, sb->mem);
	sb->mem = NULL;
}

/* Run a batch; returns the number of requests that failed. */
static int run_batch(struct eng_array *a, struct member_ioq *q, struct member_io *io, int n)
{
	if (n == 0)
		return 0;
	eng_ioq_run(a, q, io, n);
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += !member_io_done(&io[i]);
	return bad;
}

static bool run_batch_failed(const struct member_io *io, int n)
{
	for (int i = 0; i < n; i++)
		if (!member_io_done(&io[i]))
			return true;
	return false;
}

/* md judges a member's bad blocks per stripe head (RAID456_BB_UNIT), so a
 * member with a bad sector in a unit is missing for the whole unit and two
 * such members in one unit of a raid5 are too many, in other units they
 * are not. */
#define BB_UNIT RAID456_BB_UNIT

static bool stripe_has_bad(const struct eng_array *a, const struct eng_stripe_buf *sb,
                           uint64_t msec)
{
	for (int p = 0; p < eng_stripe_npos(sb); p++)
		if (eng_role_bad(a, sb->pos_role[p], msec, sb->nsec))
			return true;
	return false;
}

/* Rows [msec, msec+nsec) of a member, within one BB_UNIT, as md's stripe
 * head judges them: a bad sector anywhere in the unit makes the member
 * missing for all of it (analyse_stripe asks is_badblock for the whole
 * RAID5_STRIPE_SECTORS), not only for the rows asked. */
static bool unit_readable(const struct eng_array *a, int role, uint64_t msec, uint64_t nsec)
{
	uint64_t u0 = msec / BB_UNIT * BB_UNIT;
	return eng_role_present(a, role, msec, nsec) && !eng_role_bad(a, role, u0, BB_UNIT);
}

/* eng_stripe_read one BB_UNIT at a time (views into sb's blocks). */
static int read_by_units(struct eng_array *a, struct eng_stripe_buf *sb, uint64_t co,
                         const bool *want, bool *lost_out)
{
	int npos = eng_stripe_npos(sb);
	bool lost_any[LAYOUT_MAX_MEMBERS + 2] = {0};
	for (uint64_t u = co, end = co + sb->nsec; u < end;) {
		uint64_t m = sb->ls.sector + u, len = (m / BB_UNIT + 1) * BB_UNIT - m;
		if (len > end - u)
			len = end - u;
		struct eng_stripe_buf v = *sb;
		v.nsec = len;
		v.mem = NULL;
		for (int p = 0; p < npos; p++)
			v.blk[p] = sb->blk[p] ? (uint8_t *)sb->blk[p] + (u - co) * 512 : NULL;
		bool lost[LAYOUT_MAX_MEMBERS + 2] = {0};
		int rc = eng_stripe_read(a, &v, u, want, lost);
		if (rc < 0)
			return rc;
		for (int p = 0; p < npos; p++)
			lost_any[p] |= lost[p];
		u += len;
	}
	if (lost_out)
		memcpy(lost_out, lost_any, sizeof(bool) * (size_t)npos);
	return 0;
}

/* Read the positions in `want` (all real positions when NULL) of rows
 * [co, co+nsec); positions that cannot be read are rebuilt from the rest
 * when redundancy allows. Members that were in sync but failed the read get
 * the rebuilt data written back (md's read-error correction), and so do the
 * recorded bad ranges of members that have not failed a write: raid5's
 * analyse_stripe treats such a block, once computed, as a read error to
 * correct, and the successful write clears the range (R5_MadeGood). */
int eng_stripe_read(struct eng_array *a, struct eng_stripe_buf *sb, uint64_t co, const bool *want,
                    bool *lost_out)
{
	int npos = sb->nsyn + (sb->has_q ? 2 : 1);
	uint64_t msec = sb->ls.sector + co;
	bool one_unit = msec / BB_UNIT == (msec + sb->nsec - 1) / BB_UNIT;
	if (!one_unit && stripe_has_bad(a, sb, msec))
		return read_by_units(a, sb, co, want, lost_out);
	struct member_io io[LAYOUT_MAX_MEMBERS + 2];
	int io_pos[LAYOUT_MAX_MEMBERS + 2];
	bool lost[LAYOUT_MAX_MEMBERS + 2] = {0};
	bool io_err[LAYOUT_MAX_MEMBERS + 2] = {0};
	int n = 0;
	for (int p = 0; p < npos; p++) {
		int role = sb->pos_role[p];
		if (role < 0 || (want && !want[p]))
			continue;
		if (one_unit ? !unit_readable(a, role, msec, sb->nsec)
		             : !eng_role_readable(a, role, msec, sb->nsec)) {
			lost[p] = true;
			continue;
		}
		eng_set_io(a, &io[n], role, false, sb->blk[p], msec, sb->nsec);
		io_pos[n++] = p;
	}
	run_batch(a, sb->q, io, n);
	int nlost = 0, fail[2];
	for (int i = 0; i < n; i++) {
		if (member_io_done(&io[i]))
			continue;
		if (sb->shared)
			return -EBUSY;
		/* One retry: a transient error is not worth a rebuild. */
		int role = sb->pos_role[io_pos[i]];
		if (eng_member_io(a, role, false, io[i].buf, msec, sb->nsec) == 0)
			continue;
		lost[io_pos[i]] = true;
		io_err[io_pos[i]] = true;
	}
	for (int p = 0; p < npos; p++)
		if (lost[p]) {
			if (nlost < 2)
				fail[nlost] = p;
			nlost++;
		}
	if (lost_out)
		memcpy(lost_out, lost, sizeof(bool) * (size_t)npos);
	if (nlost == 0)
		return 0;
	if (sb->shared)
		return -EBUSY;
	if (want) {
		/* Partial read: rebuild needs every other position. */
		return -EAGAIN;
	}
	if (nlost > eng_nparity(a))
		return -EIO;
	int rc = a->pp->recover(sb->nsyn, sb->nsec * 512, sb->blk, sb->has_q, nlost, fail);
	if (rc < 0)
		return -EIO;
	for (int p = 0; p < npos && !a->readonly; p++) {
		int role = sb->pos_role[p];
		bool bad_range = lost[p] && !io_err[p] &&
		                 eng_role_present(a, role, msec, sb->nsec) && a->slot[role] >= 0 &&
		                 !a->mem[a->slot[role]]->write_error_seen &&
		                 eng_role_bad(a, role, msec, sb->nsec);
		if (!io_err[p] && !bad_range)
			continue;
		if (eng_member_io(a, role, true, sb->blk[p], msec, sb->nsec) < 0)
			/* raid5: the rewrite's error is a write error
			 * (R5_WriteError: a bad block, or md_error) */
			eng_write_failed(a, role, sb->blk[p], msec, sb->nsec, BB_UNIT,
			                 "read error, and rewriting the rebuilt data failed");
		else if (a->slot[role] >= 0)
			a->mem[a->slot[role]]->sb.cnt_corrected_read++;
	}
	return 0;
}

int eng_stripe_read_all(struct eng_array *a, struct eng_stripe_buf *sb, uint64_t co, bool *lost)
{
	return eng_stripe_read(a, sb, co, NULL, lost);
}

/* One chunk piece that could not be read directly: rebuild it. */
static int rebuild_piece(struct eng_array *a, uint8_t *out, uint64_t stripe, int di, uint64_t co,
                         uint64_t n)
{
	struct eng_stripe_buf sb;
	int rc = eng_stripe_buf_init(a, &sb, stripe, n);
	if (rc < 0)
		return rc;
	rc = eng_stripe_read(a, &sb, co, NULL, NULL);
	if (rc == 0)
		memcpy(out, sb.blk[data_pos(&sb, di)], n * 512);
	eng_stripe_buf_free(a, &sb);
	return rc;
}

int eng_parity_read_members(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	uint64_t chunk = a->geo.chunk_sectors;
	uint64_t k = (uint64_t)(a->geo.raid_disks - eng_nparity(a));
	struct member_io io[BATCH];
	uint64_t io_lsec[BATCH];
	int io_role[BATCH];
	while (nsec) {
		int n = 0;
		/* Batch the pieces whose member can serve them directly. */
		while (nsec && n < BATCH) {
			struct layout_loc loc;
			uint64_t len;
			int rc = a->ops->map(&a->geo, lsec, 0, &loc, &len);
			if (rc < 0)
				return rc;
			if (len > nsec)
				len = nsec;
			if (eng_role_readable(a, loc.role, loc.sector, len)) {
				eng_set_io(a, &io[n], loc.role, false, buf, loc.sector, len);
				io_lsec[n] = lsec;
				io_role[n] = loc.role;
				n++;
			} else {
				uint64_t s = lsec / (k * chunk), r = lsec % (k * chunk);
				rc = rebuild_piece(a, buf, s, (int)(r / chunk), r % chunk, len);
				if (rc < 0)
					return rc;
			}
			buf += len * 512;
			lsec += len;
			nsec -= len;
		}
		if (run_batch(a, a->ioq, io, n) == 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (member_io_done(&io[i]))
				continue;
			uint64_t l = io_lsec[i], s = l / (k * chunk), r = l % (k * chunk);
			(void)io_role[i];
			int rc = rebuild_piece(a, io[i].buf, s, (int)(r / chunk), r % chunk,
			                       io[i].len / 512);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* After write errors: can every unit of rows [msec, msec+nsec) still be
 * read back, counting recorded bad ranges and members gone? md fails the
 * written bios of a stripe left with more failed blocks than parity
 * (handle_failed_stripe). */
static bool rows_recoverable(const struct eng_array *a, const struct eng_stripe_buf *sb,
                             uint64_t msec, uint64_t nsec)
{
	for (uint64_t u = msec, end = msec + nsec; u < end;) {
		uint64_t len = (u / BB_UNIT + 1) * BB_UNIT - u;
		if (len > end - u)
			len = end - u;
		int lost = 0;
		for (int p = 0; p < eng_stripe_npos(sb); p++)
			if (sb->pos_role[p] >= 0 && !eng_role_readable(a, sb->pos_role[p], u, len))
				lost++;
		if (lost > eng_nparity(a))
			return false;
		u += len;
	}
	return true;
}

/* Write the given positions of rows [co, co+nsec) to every writable member;
 * a member that fails records the units in its bad block log, or fails. */
int eng_stripe_write(struct eng_array *a, struct eng_stripe_buf *sb, uint64_t co, const bool *dirty)
{
	int npos = sb->nsyn + (sb->has_q ? 2 : 1);
	uint64_t msec = sb->ls.sector + co;
	struct member_io io[LAYOUT_MAX_MEMBERS + 2];
	int io_role[LAYOUT_MAX_MEMBERS + 2];
	int n = 0;
	for (int p = 0; p < npos; p++) {
		int role = sb->pos_role[p];
		if (role < 0 || !dirty[p] || !eng_role_writable(a, role))
			continue;
		eng_set_io(a, &io[n], role, true, sb->blk[p], msec, sb->nsec);
		io_role[n++] = role;
	}
	if (run_batch(a, sb->q, io, n) == 0)
		return 0;
	if (sb->shared)
		return -EBUSY;
	for (int i = 0; i < n; i++)
		if (!member_io_done(&io[i]))
			eng_write_failed_io(a, io_role[i], &io[i], BB_UNIT, "write error");
	return eng_array_readable(a) && rows_recoverable(a, sb, msec, sb->nsec) ? 0 : -EIO;
}

int eng_stripe_gen(struct eng_array *a, struct eng_stripe_buf *sb)
{
	if (sb->has_q)
		return a->pp->pq_gen(sb->nsyn, sb->nsec * 512, sb->blk);
	return a->pp->xor_gen(sb->nsyn, sb->nsec * 512, sb->blk);
}

int eng_stripe_rmw(struct eng_array *a, struct eng_stripe_buf *sb, const bool *touched,
                   int ntouched, uint64_t nrows, eng_rmw_fill_fn fill, void *ctx)
{
	size_t len = nrows * 512;
	uint8_t *newb = eng_buf_get(a, (size_t)ntouched * len);
	const void *oldp[LAYOUT_MAX_MEMBERS], *newp[LAYOUT_MAX_MEMBERS];
	int idx[LAYOUT_MAX_MEMBERS], n = 0;
	if (!newb)
		return -ENOMEM;
	for (int di = 0; di < sb->k; di++) {
		int p = data_pos(sb, di);
		if (!touched[p])
			continue;
		uint8_t *nb = newb + (size_t)n * len;
		memcpy(nb, sb->blk[p], len);
		fill(ctx, di, nb);
		oldp[n] = sb->blk[p];
		newp[n] = nb;
		idx[n++] = p;
	}
	int rc = a->pp->pq_update(sb->nsyn, len, sb->blk[sb->nsyn],
	                          sb->has_q ? sb->blk[sb->nsyn + 1] : NULL, n, idx, oldp, newp);
	for (int i = 0; i < n; i++)
		memcpy(sb->blk[idx[i]], newp[i], len);
	eng_buf_put(a, newb);
	return rc < 0 ? -EIO : 0;
}

/* The caller's bytes over the touched rows of data block `di`. */
struct rmw_src {
	const uint8_t *src;
	const uint64_t *ta, *tb;
	uint64_t lo, r0, chunk;
};

static void rmw_fill(void *ctx, int di, uint8_t *nb)
{
	const struct rmw_src *c = ctx;
	memcpy(nb + (c->ta[di] - c->lo) * 512,
	       c->src + ((uint64_t)di * c->chunk + c->ta[di] - c->r0) * 512,
	       (c->tb[di] - c->ta[di]) * 512);
}

/* Write logical sectors [r0, r1) of stripe `s` (relative to the stripe's
 * first logical sector) from src. */
static int write_stripe(struct eng_array *a, const struct eng_req *rq, uint64_t s, uint64_t r0,
                        uint64_t r1, const uint8_t *src)
{
	uint64_t chunk = a->geo.chunk_sectors;
	int di0 = (int)(r0 / chunk), di1 = (int)((r1 - 1) / chunk);
	/* Rows touched: the hull of the touched part of every chunk (a write
	 * spanning two or more chunks touches every row of the stripe). */
	uint64_t lo = 0, hi = chunk;
	if (di0 == di1) {
		lo = r0 % chunk;
		hi = (r1 - 1) % chunk + 1;
	}
	eng_log_rows(a, &lo, &hi); /* a log of whole rows (the journal's 4 KiB) */
	uint64_t nrows = hi - lo;
	struct eng_stripe_buf sb;
	int rc = eng_stripe_buf_init(a, &sb, s, nrows);
	if (rc < 0)
		return rc;
	sb.q = rq->q;
	sb.shared = rq->shared;
	int npos = sb.nsyn + (sb.has_q ? 2 : 1);
	int npar = eng_nparity(a);
	bool touched[LAYOUT_MAX_MEMBERS + 2] = {0}, cover[LAYOUT_MAX_MEMBERS + 2] = {0};
	bool want[LAYOUT_MAX_MEMBERS + 2] = {0}, dirty[LAYOUT_MAX_MEMBERS + 2] = {0};
	uint64_t ta[LAYOUT_MAX_MEMBERS], tb[LAYOUT_MAX_MEMBERS]; /* touched rows per data index */
	int ntouched = 0, nuncovered = 0;
	bool all_avail = true;
	uint64_t msec = sb.ls.sector + lo;
	for (int di = 0; di < sb.k; di++) {
		int p = data_pos(&sb, di);
		uint64_t c0 = (uint64_t)di * chunk + lo, c1 = (uint64_t)di * chunk + hi;
		uint64_t a0 = r0 > c0 ? r0 : c0, b0 = r1 < c1 ? r1 : c1;
		if (a0 < b0) {
			touched[p] = true;
			ta[di] = a0 - (uint64_t)di * chunk;
			tb[di] = b0 - (uint64_t)di * chunk;
			cover[p] = a0 == c0 && b0 == c1;
			ntouched++;
		}
		if (!cover[p])
			nuncovered++;
		if (!eng_role_readable(a, sb.pos_role[p], msec, nrows))
			all_avail = false;
	}
	for (int p = sb.nsyn; p < npos; p++)
		if (!eng_role_readable(a, sb.pos_role[p], msec, nrows))
			all_avail = false;

	/* Above the resync point parity is not trusted yet: only
	 * reconstruct-write makes it right (as md forces rcw there). */
	bool synced = a->resync_offset == MD_RESYNC_NONE || msec + nrows <= a->resync_offset;
	bool rmw =
	    !rq->force_rcw && synced && all_avail && nuncovered > 0 && ntouched + npar < nuncovered;
	if (rmw && di0 == di1) {
		/* One chunk's rows, straight in mapped members, or no write
		 * there at all (0), or a fault: then reconstruct-write, which
		 * does not read the parity a fault may have left half updated. */
		rc = eng_write_rmw_mapped(a, &sb, di0, lo, nrows, src);
		if (rc == 1) {
			eng_stripe_buf_free(a, &sb);
			return 0;
		}
		rmw = rc == 0;
	}
	if (rmw) {
		/* Read old data of the touched blocks and old parity. */
		for (int di = 0; di < sb.k; di++)
			want[data_pos(&sb, di)] = touched[data_pos(&sb, di)];
		for (int p = sb.nsyn; p < npos; p++)
			want[p] = true;
		rc = eng_stripe_read(a, &sb, lo, want, NULL);
		if (rc == 0) {
			struct rmw_src ctx = {src, ta, tb, lo, r0, chunk};
			rc = eng_stripe_rmw(a, &sb, touched, ntouched, nrows, rmw_fill, &ctx);
			if (rc < 0) {
				eng_stripe_buf_free(a, &sb);
				return rc;
			}
			goto write;
		}
		if (rc == -EBUSY) {
			eng_stripe_buf_free(a, &sb);
			return rc;
		}
		/* A read failed: fall back to reconstruct-write. */
	}
	/* Reconstruct-write: old contents of what the write does not cover.
	 * When such a block is unreadable it must be rebuilt, which needs
	 * every position. */
	bool need_rebuild = false;
	for (int di = 0; di < sb.k; di++) {
		int p = data_pos(&sb, di);
		want[p] = !cover[p];
		if (!cover[p] && !eng_role_readable(a, sb.pos_role[p], msec, nrows))
			need_rebuild = true;
	}
	rc = need_rebuild ? -EAGAIN : eng_stripe_read(a, &sb, lo, want, NULL);
	if (rc == -EAGAIN)
		rc = eng_stripe_read(a, &sb, lo, NULL, NULL);
	if (rc < 0) {
		eng_stripe_buf_free(a, &sb);
		return rc;
	}
	for (int di = 0; di < sb.k; di++) {
		int p = data_pos(&sb, di);
		if (touched[p])
			memcpy((uint8_t *)sb.blk[p] + (ta[di] - lo) * 512,
			       src + ((uint64_t)di * chunk + ta[di] - r0) * 512,
			       (tb[di] - ta[di]) * 512);
	}
	rc = eng_stripe_gen(a, &sb);
	if (rc < 0) {
		eng_stripe_buf_free(a, &sb);
		return -EIO;
	}
write:
	for (int p = 0; p < npos; p++)
		dirty[p] = touched[p] || p >= sb.nsyn;
	rc = eng_log_stripes(a, &sb, 1, lo, dirty); /* no-op without such a log */
	if (rc == 0)
		rc = eng_stripe_write(a, &sb, lo, dirty);
	eng_stripe_buf_free(a, &sb);
	return rc;
}

#define FULL_BATCH 16 /* whole stripes per member_ioq batch */

/* Whole stripes [s0, s0+n): parity straight from the caller's buffer (no
 * reads, no copies), all stripes' member writes in one batch. */
int eng_write_full_stripes(struct eng_array *a, const struct eng_req *rq, uint64_t s0, int n,
                           const uint8_t *src)
{
	uint64_t chunk = a->geo.chunk_sectors;
	size_t clen = chunk * 512;
	int rd = a->geo.raid_disks;
	int done = eng_write_full_mapped(a, s0, n, src);
	if (done == n)
		return 0;
	s0 += (uint64_t)done;
	src += (size_t)done * (size_t)(rd - eng_nparity(a)) * clen;
	n -= done;
	struct eng_stripe_buf *sb = calloc((size_t)n, sizeof(*sb));
	struct member_io *io = calloc((size_t)n * (size_t)rd, sizeof(*io));
	int *io_role = calloc((size_t)n * (size_t)rd, sizeof(*io_role));
	uint8_t *zero = NULL;
	/* P and Q of every stripe in one pooled buffer, written before use. */
	uint8_t *pq = eng_buf_get(a, (size_t)n * 2 * clen);
	int rc = sb && io && io_role && pq ? 0 : -ENOMEM;
	int nio = 0;
	for (int j = 0; j < n && rc == 0; j++) {
		struct eng_stripe_buf *b = &sb[j];
		memset(b, 0, sizeof(*b));
		a->ops->stripe(&a->geo, s0 + (uint64_t)j, &b->ls);
		b->k = b->ls.ndata;
		b->has_q = a->geo.level == URAID_LEVEL_RAID6;
		b->nsyn = b->k;
		if (b->has_q)
			for (int i = 0; i < b->k; i++)
				if (b->ls.q_index[i] + 1 > b->nsyn)
					b->nsyn = b->ls.q_index[i] + 1;
		b->nsec = chunk;
		b->mem = pq + (size_t)j * 2 * clen;
		for (int p = 0; p < b->nsyn + 2; p++)
			b->pos_role[p] = -1;
		if (b->nsyn > b->k && !zero && !(zero = eng_alloc(clen))) {
			rc = -ENOMEM;
			break;
		}
		for (int p = 0; p < b->nsyn; p++)
			b->blk[p] = zero;
		const uint8_t *sdata = src + (size_t)j * (size_t)b->k * clen;
		for (int di = 0; di < b->k; di++) {
			int p = data_pos(b, di);
			b->blk[p] = (void *)(sdata + (size_t)di * clen); /* only read */
			b->pos_role[p] = b->ls.data_role[di];
		}
		b->blk[b->nsyn] = b->mem;
		b->blk[b->nsyn + 1] = b->mem + clen;
		b->pos_role[b->nsyn] = b->ls.p_role;
		b->pos_role[b->nsyn + 1] = b->has_q ? b->ls.q_role : -1;
		if (eng_stripe_gen(a, b) < 0) {
			rc = -EIO;
			break;
		}
		for (int p = 0; p < eng_stripe_npos(b); p++) {
			int role = b->pos_role[p];
			if (role < 0 || !eng_role_writable(a, role))
				continue;
			eng_set_io(a, &io[nio], role, true, b->blk[p], b->ls.sector, chunk);
			io_role[nio++] = role;
		}
	}
	if (rc == 0)
		rc = eng_log_stripes(a, sb, n, 0, NULL); /* no-op without such a log */
	if (rc == 0 && run_batch(a, rq->q, io, nio) && rq->shared) {
		rc = -EBUSY;
	} else if (rc == 0 && nio && run_batch_failed(io, nio)) {
		for (int i = 0; i < nio; i++)
			if (!member_io_done(&io[i]))
				eng_write_failed_io(a, io_role[i], &io[i], BB_UNIT, "write error");
		if (!eng_array_readable(a))
			rc = -EIO;
		for (int j = 0; j < n && rc == 0; j++)
			if (!rows_recoverable(a, &sb[j], sb[j].ls.sector, chunk))
				rc = -EIO;
	}
	eng_buf_put(a, pq);
	free(zero);
	free(sb);
	free(io);
	free(io_role);
	return rc;
}

int eng_parity_write_direct(struct eng_array *a, const struct eng_req *rq, const uint8_t *buf,
                            uint64_t lsec, uint64_t nsec)
{
	uint64_t chunk = a->geo.chunk_sectors;
	uint64_t width = (uint64_t)(a->geo.raid_disks - eng_nparity(a)) * chunk;
	while (nsec) {
		if (lsec % width == 0 && nsec >= width) {
			uint64_t n = nsec / width < FULL_BATCH ? nsec / width : FULL_BATCH;
			int rc = eng_write_full_stripes(a, rq, lsec / width, (int)n, buf);
			if (rc < 0)
				return rc;
			buf += n * width * 512;
			lsec += n * width;
			nsec -= n * width;
			continue;
		}
		uint64_t s = lsec / width, r0 = lsec % width;
		uint64_t n = width - r0 < nsec ? width - r0 : nsec;
		int rc = write_stripe(a, rq, s, r0, r0 + n, buf);
		if (rc < 0)
			return rc;
		buf += n * 512;
		lsec += n;
		nsec -= n;
	}
	return 0;
}
