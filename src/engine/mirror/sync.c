/* Sync work of the mirrored levels (raid1, raid10).
 *
 * Recovery walks the rebuilding member's own sectors (as md's raid10 does):
 * each run of them is found in the layout (unmap), read from another copy
 * (adjacent pieces from the same source member merged into one request)
 * and written with one request, so the checkpoint (recovery_offset) is
 * exact for near, far and offset layouts alike.
 *
 * Resync, check and repair walk logical sectors: every copy of a run is
 * read in one batch and compared with the first; differing copies are
 * rewritten (resync, repair) and counted (check, repair). A read error
 * sends the run to the per-piece path, which tries every copy and repairs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/mirror/mirror.h"
#include "engine/sync/sync.h"
#include "engine/sync/workers.h"

/* One map piece [pos, pos+n) the careful way (per-copy retries). */
static int mirror_piece(struct eng_array *a, uint64_t pos, uint64_t n)
{
	uint8_t *src = eng_buf_get(a, n * 512), *cmp = eng_buf_get(a, n * 512);
	int rc = 0;
	if (!src || !cmp) {
		rc = -ENOMEM;
		goto out;
	}
	struct layout_loc loc[LAYOUT_MAX_MEMBERS];
	int good = -1;
	for (int c = 0; c < a->ncopies; c++) {
		uint64_t l;
		if (a->ops->map(&a->geo, pos, c, &loc[c], &l) < 0) {
			rc = -EIO;
			goto out;
		}
	}
	/* The source: the first copy that reads (two tries each); copies that
	 * failed both get the good data written back, as on a normal read. */
	bool bad_copy[LAYOUT_MAX_MEMBERS] = {0};
	for (int c = 0; c < a->ncopies && good < 0; c++) {
		if (!eng_role_readable(a, loc[c].role, loc[c].sector, n))
			continue;
		if (eng_member_io(a, loc[c].role, false, src, loc[c].sector, n) == 0 ||
		    eng_member_io(a, loc[c].role, false, src, loc[c].sector, n) == 0)
			good = c;
		else
			bad_copy[c] = true;
	}
	if (good < 0) {
		rc = -EIO;
		goto out;
	}
	for (int c = 0; c < good; c++)
		if (bad_copy[c] && eng_member_io(a, loc[c].role, true, src, loc[c].sector, n) < 0)
			eng_write_failed(a, loc[c].role, src, loc[c].sector, n, 1,
			                 "read error, and rewriting it failed");
	for (int c = 0; c < a->ncopies; c++) {
		if (c == good || !eng_role_writable(a, loc[c].role))
			continue;
		int role = loc[c].role;
		bool write = false;
		if (a->action == URAID_SYNC_RESYNC) {
			write = true;
		} else if (eng_role_readable(a, role, loc[c].sector, n)) { /* check / repair */
			if (eng_member_io(a, role, false, cmp, loc[c].sector, n) < 0) {
				eng_member_failed(a, role, "read error during check");
				continue;
			}
			uint64_t bad = sync_count_mismatch(src, cmp, n);
			a->mismatches += bad;
			write = bad && a->action == URAID_SYNC_REPAIR;
		}
		if (write && eng_member_io(a, role, true, src, loc[c].sector, n) < 0)
			eng_write_failed(a, role, src, loc[c].sector, n, 1,
			                 "write error during sync");
	}
	if (!eng_array_readable(a))
		rc = -EIO;
out:
	eng_buf_put(a, src);
	eng_buf_put(a, cmp);
	return rc;
}

/* Length of the map piece at lsec, at most n. */
static int piece_len(struct eng_array *a, uint64_t lsec, uint64_t n, uint64_t *len)
{
	struct layout_loc loc;
	if (a->ops->map(&a->geo, lsec, 0, &loc, len) < 0)
		return -EIO;
	if (*len > n)
		*len = n;
	return 0;
}

/* The longest run from lsec (at most len) one copy reads without touching
 * a recorded bad range, so the careful path takes each piece from a copy
 * that can serve it whole (as md's sync reads around bad blocks); len when
 * none can serve lsec (mirror_piece then says -EIO). */
static uint64_t good_run(struct eng_array *a, uint64_t lsec, uint64_t len)
{
	uint64_t best = 0;
	for (int c = 0; c < a->ncopies && best < len; c++) {
		struct layout_loc loc;
		uint64_t l;
		if (a->ops->map(&a->geo, lsec, c, &loc, &l) < 0)
			return len;
		uint64_t run = eng_role_readable_run(a, loc.role, loc.sector, len);
		if (run > best)
			best = run;
	}
	return best ? best : len;
}

static int by_pieces(struct eng_array *a, uint64_t pos, uint64_t n)
{
	for (uint64_t end = pos + n; pos < end;) {
		uint64_t len;
		int rc = piece_len(a, pos, end - pos, &len);
		if (rc == 0)
			len = good_run(a, pos, len);
		if (rc == 0)
			rc = mirror_piece(a, pos, len);
		if (rc < 0)
			return rc;
		if (a->action == URAID_SYNC_IDLE)
			return 0;
		pos += len;
	}
	return 0;
}

int sync_mirror_batch(struct eng_array *a, uint64_t pos, uint64_t n)
{
	int nc = a->ncopies;
	size_t blen = n * 512;
	uint8_t *mem = eng_buf_get(a, (size_t)nc * blen);
	struct sync_iolist rd = {0}, wr = {0};
	int rc = mem ? 0 : -ENOMEM;
	bool careful = false;
	/* Read every copy of the run, copy c into mem + c * blen. */
	for (uint64_t l = pos; l < pos + n && rc == 0 && !careful;) {
		uint64_t len;
		rc = piece_len(a, l, pos + n - l, &len);
		for (int c = 0; c < nc && rc == 0 && !careful; c++) {
			struct layout_loc loc;
			uint64_t ml;
			if (a->ops->map(&a->geo, l, c, &loc, &ml) < 0) {
				rc = -EIO;
				break;
			}
			careful = !eng_role_readable(a, loc.role, loc.sector, len);
			if (!careful)
				rc =
				    sync_iol_add(a, &rd, loc.role, false,
				                 mem + c * blen + (l - pos) * 512, loc.sector, len);
		}
		l += len;
	}
	if (rc == 0 && !careful)
		careful = !sync_iol_run(a, &rd);
	for (uint64_t l = pos; l < pos + n && rc == 0 && !careful;) {
		uint64_t len;
		rc = piece_len(a, l, pos + n - l, &len);
		size_t off = (l - pos) * 512;
		for (int c = 1; c < nc && rc == 0; c++) {
			uint64_t bad = sync_count_mismatch(mem + off, mem + c * blen + off, len);
			if (!bad)
				continue;
			if (a->action != URAID_SYNC_RESYNC)
				a->mismatches += bad;
			if (a->action == URAID_SYNC_CHECK)
				continue;
			struct layout_loc loc;
			uint64_t ml;
			if (a->ops->map(&a->geo, l, c, &loc, &ml) < 0)
				rc = -EIO;
			else
				rc = sync_iol_add(a, &wr, loc.role, true, mem + off, loc.sector,
				                  len);
		}
		l += len;
	}
	if (rc == 0 && !careful && wr.n && !sync_iol_run(a, &wr)) {
		for (int i = 0; i < wr.n; i++)
			if (!member_io_done(&wr.io[i]))
				eng_write_failed_io(a, wr.role[i], &wr.io[i], 1,
				                    "write error during sync");
		if (!eng_array_readable(a))
			rc = -EIO;
	}
	eng_buf_put(a, mem);
	sync_iol_free(&rd);
	sync_iol_free(&wr);
	if (rc == 0 && careful)
		rc = by_pieces(a, pos, n);
	return rc;
}

/* The piece of `role`'s member sectors starting at msec: its logical
 * sector, the copy index that lives there and the run length. -ERANGE for
 * sectors md leaves unused (then *len is the distance to the next chunk). */
static int role_piece(struct eng_array *a, int role, uint64_t msec, uint64_t max, uint64_t *lsec,
                      int *copy, uint64_t *len)
{
	int kind = a->ops->unmap(&a->geo, role, msec, lsec);
	if (kind != LAYOUT_DATA) {
		uint64_t cs = a->geo.chunk_sectors ? a->geo.chunk_sectors : 1;
		*len = cs - msec % cs;
		if (*len > max)
			*len = max;
		return -ERANGE;
	}
	for (int c = 0; c < a->ncopies; c++) {
		struct layout_loc loc;
		uint64_t l;
		if (a->ops->map(&a->geo, *lsec, c, &loc, &l) < 0)
			return -EIO;
		if (loc.role == role && loc.sector == msec) {
			*copy = c;
			*len = l < max ? l : max;
			return 0;
		}
	}
	return -EIO; /* unmap and map disagree: a layout bug */
}

int sync_mirror_role_data(struct eng_array *a, int role, uint8_t *buf, uint64_t msec, uint64_t n)
{
	for (uint64_t end = msec + n; msec < end;) {
		uint64_t lsec, len;
		int copy;
		int rc = role_piece(a, role, msec, end - msec, &lsec, &copy, &len);
		if (rc == -ERANGE)
			memset(buf, 0, len * 512);
		else if (rc < 0 || (rc = eng_mirror_read(a, buf, lsec, len)) < 0)
			return rc;
		buf += len * 512;
		msec += len;
	}
	return 0;
}

/* The copy to rebuild `role`'s piece at logical lsec from: a readable one,
 * the previous source member when it holds one (long runs). -EIO when no
 * copy is left. */
static int pick_source(struct eng_array *a, int role, uint64_t lsec, int copy, uint64_t len,
                       int prev, struct layout_loc *pick)
{
	struct layout_loc loc;
	pick->role = -1;
	for (int c = 0; c < a->ncopies; c++) {
		uint64_t l;
		if (c == copy || a->ops->map(&a->geo, lsec, c, &loc, &l) < 0 || loc.role == role ||
		    !eng_role_readable(a, loc.role, loc.sector, len))
			continue;
		if (pick->role < 0 || loc.role == prev)
			*pick = loc;
	}
	return pick->role < 0 ? -EIO : 0;
}

/* Recovery of members in memory (sync_in_memory): [pos, end) of `role`
 * is cut into items that two workers (engine/sync/workers.h) take in turn, each
 * reading an item's pieces from another copy into a buffer of its own and
 * writing them with synchronous requests. Page-cache reads and writes are
 * memory copies, which two CPUs do faster than one thread's queued batch. */
#define DIRECT_ITEM_SECTORS 512u /* 256 KiB: a batch gives each worker several */

struct direct {
	struct eng_array *a;
	int role;
	uint64_t pos, end;
	uint8_t *wbuf[SYNC_WORKERS];
	bool read_failed, write_failed; /* atomic */
};

static int direct_item(void *ctx, int worker, int i)
{
	struct direct *d = ctx;
	struct eng_array *a = d->a;
	uint64_t from = d->pos + (uint64_t)i * DIRECT_ITEM_SECTORS;
	uint64_t to = from + DIRECT_ITEM_SECTORS < d->end ? from + DIRECT_ITEM_SECTORS : d->end;
	int src = -1;
	for (uint64_t msec = from, len; msec < to; msec += len) {
		uint64_t lsec;
		int copy;
		int rc = role_piece(a, d->role, msec, to - msec, &lsec, &copy, &len);
		if (rc == -ERANGE) /* unused by md: nothing to rebuild */
			continue;
		struct layout_loc pick;
		if (rc < 0 || (rc = pick_source(a, d->role, lsec, copy, len, src, &pick)) < 0)
			return rc;
		src = pick.role;
		struct member_io rd, wr;
		eng_set_io(a, &rd, pick.role, false, d->wbuf[worker], pick.sector, len);
		eng_set_io(a, &wr, d->role, true, d->wbuf[worker], msec, len);
		eng_count_io(a, false, rd.len);
		if (member_read(rd.m, rd.buf, rd.len, rd.off) < 0) {
			__atomic_store_n(&d->read_failed, true, __ATOMIC_RELAXED);
			return -EIO;
		}
		eng_count_io(a, true, wr.len);
		if (member_write(wr.m, wr.buf, wr.len, wr.off, 0) < 0) {
			__atomic_store_n(&d->write_failed, true, __ATOMIC_RELAXED);
			return -EIO;
		}
	}
	return 0;
}

/* Returns 1 when this path does not apply (the caller rebuilds the usual
 * way); nothing has been written then. A read error leaves the range to
 * the usual way too, which repairs as it reads (what was written is right). */
static int recover_role_direct(struct eng_array *a, int role, uint64_t pos, uint64_t end)
{
	if (!sync_in_memory(a))
		return 1;
	struct direct d = {.a = a, .role = role, .pos = pos, .end = end};
	size_t item = (size_t)DIRECT_ITEM_SECTORS * 512;
	uint8_t *mem = eng_buf_get(a, SYNC_WORKERS * item);
	if (!mem)
		return -ENOMEM;
	for (int w = 0; w < SYNC_WORKERS; w++)
		d.wbuf[w] = mem + (size_t)w * item;
	int items = (int)((end - pos + DIRECT_ITEM_SECTORS - 1) / DIRECT_ITEM_SECTORS);
	int rc = sync_workers_run(&a->workers, items, direct_item, &d);
	eng_buf_put(a, mem);
	if (d.write_failed) {
		eng_member_failed(a, role, "write error during recovery");
		return eng_array_readable(a) ? 0 : -EIO;
	}
	return d.read_failed ? 1 : rc;
}

/* Requests that rebuild [from, to) of `role` through buf (which holds
 * [pos, ...)): reads from other copies into rd, writes into wr; sectors md
 * leaves unused are neither read nor written. *src: the last source member
 * (kept when it holds a copy, so reads merge into long requests). */
static int group_lists(struct eng_array *a, int role, uint64_t from, uint64_t to, uint8_t *buf,
                       uint64_t pos, int *src, struct sync_iolist *rd, struct sync_iolist *wr)
{
	int rc = 0;
	uint64_t run = from; /* start of the current run of used sectors */
	for (uint64_t msec = from; msec < to && rc == 0;) {
		uint64_t lsec, len;
		int copy;
		rc = role_piece(a, role, msec, to - msec, &lsec, &copy, &len);
		if (rc == -ERANGE) {
			/* unused by md: nothing to rebuild; close the write run */
			rc = msec > run ? sync_iol_add(a, wr, role, true, buf + (run - pos) * 512,
			                               run, msec - run)
			                : 0;
			msec += len;
			run = msec;
			continue;
		}
		if (rc < 0)
			break;
		struct layout_loc pick;
		if ((rc = pick_source(a, role, lsec, copy, len, *src, &pick)) < 0)
			break; /* no copy left to rebuild from */
		*src = pick.role;
		rc = sync_iol_add(a, rd, pick.role, false, buf + (msec - pos) * 512, pick.sector,
		                  len);
		msec += len;
	}
	if (rc == 0 && to > run)
		rc = sync_iol_add(a, wr, role, true, buf + (run - pos) * 512, run, to - run);
	return rc;
}

/* Sectors per pipeline group of a mirror recovery. */
#define GROUP_SECTORS 512u

/* Rebuild [pos, end) of one rebuilding role from the other copies, in
 * groups: the writes of group g go out in the same member batch as the
 * reads of group g+1, so on disks the source is read while the target is
 * written (as md overlaps them) rather than one after the other. A group
 * whose reads fail is read again piece by piece with repairs
 * (sync_mirror_role_data); every write has completed when this returns. */
static int recover_role(struct eng_array *a, int role, uint64_t pos, uint64_t end)
{
	uint8_t *buf = eng_buf_get(a, (end - pos) * 512);
	struct sync_iolist rd = {0}, wr = {0}, nrd = {0}, nwr = {0};
	int rc = buf ? 0 : -ENOMEM, src = -1;
	uint64_t g0 = pos, g1 = pos + GROUP_SECTORS < end ? pos + GROUP_SECTORS : end;
	if (rc == 0)
		rc = group_lists(a, role, g0, g1, buf, pos, &src, &rd, &wr);
	if (rc == 0 && !sync_iol_run(a, &rd))
		rc = sync_mirror_role_data(a, role, buf + (g0 - pos) * 512, g0, g1 - g0);
	while (rc == 0 && g0 < end) {
		uint64_t n0 = g1, n1 = g1 + GROUP_SECTORS < end ? g1 + GROUP_SECTORS : end;
		sync_iol_free(&nrd);
		sync_iol_free(&nwr);
		if (n0 < end)
			rc = group_lists(a, role, n0, n1, buf, pos, &src, &nrd, &nwr);
		int nw = wr.n;
		if (rc == 0)
			rc = sync_iol_append(&wr, &nrd); /* this group's writes, the next reads */
		if (rc < 0)
			break;
		sync_iol_run(a, &wr);
		bool write_ok = true, read_ok = true;
		for (int i = 0; i < wr.n; i++)
			if (!member_io_done(&wr.io[i]))
				*(i < nw ? &write_ok : &read_ok) = false;
		if (!write_ok) {
			/* md records the units a recovery cannot write in the
			 * target's bad block log (handle_sync_write_finished) and
			 * goes on; without one the target fails */
			bool stays = true;
			for (int i = 0; i < nw; i++)
				if (!member_io_done(&wr.io[i]))
					stays &= eng_write_failed_io(a, role, &wr.io[i], 1,
					                             "write error during recovery");
			if (!eng_array_readable(a))
				rc = -EIO;
			if (!stays || rc < 0)
				break;
		}
		if (!read_ok) /* repairs as it reads */
			rc = sync_mirror_role_data(a, role, buf + (n0 - pos) * 512, n0, n1 - n0);
		sync_iol_free(&wr);
		wr = nwr;
		nwr = (struct sync_iolist){0};
		g0 = n0;
		g1 = n1;
	}
	eng_buf_put(a, buf);
	sync_iol_free(&rd);
	sync_iol_free(&wr);
	sync_iol_free(&nrd);
	sync_iol_free(&nwr);
	return rc;
}

/* Does a member other than `role` hold recorded bad blocks? */
static bool others_have_bad(const struct eng_array *a, int role)
{
	for (int r = 0; r < a->geo.raid_disks; r++)
		if (r != role && a->slot[r] >= 0 && a->mem[a->slot[r]]->bbl.n > 0)
			return true;
	return false;
}

/* One piece of a recovery whose sources hold recorded bad blocks: what no
 * copy can supply is recorded in the target's bad block log instead of
 * written (md's raid1/raid10 recovery: fix_sync_read_error sets the range
 * bad on the members, and the recovery goes on); without room there the
 * target fails. 1 when something was recorded. */
static int recover_piece_around_bad(struct eng_array *a, int role, uint8_t *buf, uint64_t msec,
                                    uint64_t lsec, uint64_t len)
{
	int rc = eng_mirror_read(a, buf, lsec, len);
	if (rc == 0) {
		if (eng_member_io(a, role, true, buf, msec, len) < 0 &&
		    !eng_write_failed(a, role, buf, msec, len, 1, "write error during recovery"))
			return -EIO;
		return 0;
	}
	if (rc != -EIO)
		return rc;
	int recorded = 0;
	for (uint64_t k = 0; k < len; k++) {
		if (a->slot[role] < 0)
			return -EIO;
		if (eng_mirror_read(a, buf, lsec + k, 1) == 0) {
			if (eng_member_io(a, role, true, buf, msec + k, 1) < 0 &&
			    !eng_write_failed(a, role, buf, msec + k, 1, 1,
			                      "write error during recovery"))
				return -EIO;
			continue;
		}
		rc = eng_bbl_add(a->mem[a->slot[role]], msec + k, 1);
		if (rc < 0) {
			eng_member_failed(a, role,
			                  rc == -ENOSPC ? "no copy to recover from, and its bad "
			                                  "block log is full"
			                                : "no copy to recover from");
			return -EIO;
		}
		recorded = 1;
	}
	return recorded;
}

static int recover_role_around_bad(struct eng_array *a, int role, uint64_t pos, uint64_t end)
{
	uint8_t *buf = eng_buf_get(a, (size_t)GROUP_SECTORS * 512);
	if (!buf)
		return -ENOMEM;
	int rc = 0;
	bool recorded = false;
	for (uint64_t msec = pos; msec < end && rc >= 0;) {
		uint64_t lsec, len, max = end - msec < GROUP_SECTORS ? end - msec : GROUP_SECTORS;
		int copy;
		rc = role_piece(a, role, msec, max, &lsec, &copy, &len);
		if (rc == -ERANGE) { /* unused by md */
			rc = 0;
			msec += len;
			continue;
		}
		if (rc == 0)
			rc = recover_piece_around_bad(a, role, buf, msec, lsec, len);
		recorded |= rc > 0;
		msec += len;
	}
	eng_buf_put(a, buf);
	if (recorded) {
		fprintf(stderr,
		        "uraid: slot %d: recovery found sectors no copy holds; recorded in the new "
		        "member's bad block log (reads there answer EIO, as md's)\n",
		        role);
		if (eng_sb_write_all(a) < 0 && rc >= 0)
			rc = -EIO;
	}
	return rc < 0 ? rc : 0;
}

int sync_mirror_recover(struct eng_array *a, uint64_t pos, uint64_t n)
{
	for (int r = 0; r < a->geo.raid_disks; r++) {
		if (!sync_role_rebuilding(a, r) || eng_role_readable(a, r, pos, n))
			continue;
		uint64_t end = pos + n, used = a->ops->member_used(&a->geo, r);
		if (end > used)
			end = used;
		if (pos >= end)
			continue;
		int rc = others_have_bad(a, r) ? recover_role_around_bad(a, r, pos, end)
		                               : recover_role_direct(a, r, pos, end);
		if (rc == 1)
			rc = recover_role(a, r, pos, end);
		if (rc < 0)
			return rc;
	}
	return 0;
}
