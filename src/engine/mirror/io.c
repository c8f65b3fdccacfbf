/* Requests of the mirrored levels (raid1, raid10). Reads go to the readable copy whose member last
 * read just before the piece (a sequential stream stays on one member), else to the one whose last
 * read ended nearest (md's read_balance); a failed read falls back to the next copy and the good
 * data is written back over the bad copy (md's read-error correction). */
#include <errno.h>
#include <string.h>

#include "engine/mirror/mirror.h"

#define BATCH          64
#define REGION_SECTORS 2048 /* largest piece per member request */

/* Piece of [lsec, lsec+nsec) that stays contiguous on every copy. */
static int piece(struct eng_array *a, uint64_t lsec, uint64_t nsec, uint64_t *len)
{
	struct layout_loc loc;
	int rc = a->ops->map(&a->geo, lsec, 0, &loc, len);
	if (rc < 0)
		return rc;
	uint64_t to_region = REGION_SECTORS - lsec % REGION_SECTORS;
	if (*len > to_region)
		*len = to_region;
	if (*len > nsec)
		*len = nsec;
	return 0;
}

/* The longest run from lsec (at most len) that one copy can serve without
 * touching a recorded bad range; 0 when none can serve lsec itself. */
static uint64_t best_run(struct eng_array *a, uint64_t lsec, uint64_t len)
{
	uint64_t best = 0;
	for (int c = 0; c < a->ncopies && best < len; c++) {
		struct layout_loc loc;
		uint64_t l;
		if (a->ops->map(&a->geo, lsec, c, &loc, &l) < 0)
			return 0;
		uint64_t run = eng_role_readable_run(a, loc.role, loc.sector, len);
		if (run > best)
			best = run;
	}
	return best;
}

static int read_piece_copies(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t len,
                             int first);

/* Slow path for one piece: try every copy, repair the ones that failed.
 * When bad ranges leave no copy that can serve all of it, it is read in
 * runs around them, as md's read_balance reads up to a copy's first bad
 * sector and takes the rest from another. */
static int read_piece_any(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t len, int first)
{
	while (len) {
		uint64_t run = best_run(a, lsec, len);
		if (run == 0)
			run = len; /* no copy at all: read_piece_copies says -EIO */
		int rc = read_piece_copies(a, buf, lsec, run, first);
		if (rc < 0)
			return rc;
		buf += run * 512;
		lsec += run;
		len -= run;
	}
	return 0;
}

static int read_piece_copies(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t len,
                             int first)
{
	int bad_role[LAYOUT_MAX_MEMBERS];
	uint64_t bad_sec[LAYOUT_MAX_MEMBERS];
	int nbad = 0;
	for (int i = 0; i < a->ncopies; i++) {
		int c = (first + i) % a->ncopies;
		struct layout_loc loc;
		uint64_t l;
		if (a->ops->map(&a->geo, lsec, c, &loc, &l) < 0)
			return -EIO;
		if (!eng_role_readable(a, loc.role, loc.sector, len))
			continue;
		/* Two tries per copy: a transient error is not worth a rewrite.
		 * A failfast member fails at once instead (md's failfast). */
		int rd = eng_member_io(a, loc.role, false, buf, loc.sector, len);
		if (rd < 0 && eng_role_failfast(a, loc.role, false) && !a->readonly) {
			eng_member_failed(a, loc.role, "failfast: read error");
			continue;
		}
		if (rd < 0 && eng_member_io(a, loc.role, false, buf, loc.sector, len) < 0) {
			bad_role[nbad] = loc.role;
			bad_sec[nbad++] = loc.sector;
			continue;
		}
		for (int b = 0; b < nbad && !a->readonly; b++) {
			if (eng_member_io(a, bad_role[b], true, buf, bad_sec[b], len) < 0)
				/* md's fix_read_error: a failed rewrite is a write
				 * error (r1_sync_page_io: bad block, or md_error) */
				eng_write_failed(a, bad_role[b], buf, bad_sec[b], len, 1,
				                 "read error, and rewriting from a mirror failed");
			else if (a->slot[bad_role[b]] >= 0)
				a->mem[a->slot[bad_role[b]]]->sb.cnt_corrected_read++;
		}
		return 0;
	}
	/* Every copy failed; md fails the request rather than the last copy. */
	return -EIO;
}

int eng_mirror_read(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	struct member_io io[BATCH];
	uint64_t io_lsec[BATCH];
	int io_first[BATCH], io_role[BATCH];
	while (nsec) {
		int n = 0;
		while (nsec && n < BATCH) {
			uint64_t len;
			int rc = piece(a, lsec, nsec, &len);
			if (rc < 0)
				return rc;
			int chosen = -1;
			uint64_t best = UINT64_MAX;
			struct layout_loc loc = {0}, cl;
			for (int c = 0; c < a->ncopies && best > 0; c++) {
				uint64_t l;
				if (a->ops->map(&a->geo, lsec, c, &cl, &l) < 0)
					return -EIO;
				if (!eng_role_readable(a, cl.role, cl.sector, len))
					continue;
				uint64_t h = __atomic_load_n(&a->mem[a->slot[cl.role]]->head,
				                             __ATOMIC_RELAXED);
				uint64_t d = h > cl.sector ? h - cl.sector : cl.sector - h;
				if (eng_role_write_mostly(a, cl.role))
					d = UINT64_MAX - 1; /* only when no other copy can serve */
				if (d < best) {
					best = d;
					chosen = c;
					loc = cl;
				}
			}
			if (chosen < 0) {
				/* no copy without a bad range over all of it */
				rc = read_piece_any(a, buf, lsec, len, 0);
				if (rc < 0)
					return rc;
				buf += len * 512;
				lsec += len;
				nsec -= len;
				continue;
			}
			__atomic_store_n(&a->mem[a->slot[loc.role]]->head, loc.sector + len,
			                 __ATOMIC_RELAXED);
			eng_set_io(a, &io[n], loc.role, false, buf, loc.sector, len);
			io_lsec[n] = lsec;
			io_first[n] = chosen;
			io_role[n] = loc.role;
			n++;
			buf += len * 512;
			lsec += len;
			nsec -= len;
		}
		eng_ioq_run(a, a->ioq, io, n);
		for (int i = 0; i < n; i++) {
			if (member_io_done(&io[i]))
				continue;
			/* md's failfast: failed now, the other copies serve */
			if (eng_role_failfast(a, io_role[i], false) && !a->readonly)
				eng_member_failed(a, io_role[i], "failfast: read error");
			int rc =
			    read_piece_any(a, io[i].buf, io_lsec[i], io[i].len / 512, io_first[i]);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* After write errors: md completes a mirrored write only when a copy in
 * sync took it (raid1 R1BIO_Uptodate); a copy whose failed units went into
 * its bad block log did not. Every piece of [lsec, lsec+nsec) has a copy
 * that now reads it back whole? */
static bool pieces_written(struct eng_array *a, uint64_t lsec, uint64_t nsec)
{
	while (nsec) {
		uint64_t len;
		if (piece(a, lsec, nsec, &len) < 0)
			return false;
		bool ok = false;
		for (int c = 0; c < a->ncopies && !ok; c++) {
			struct layout_loc loc;
			uint64_t l;
			if (a->ops->map(&a->geo, lsec, c, &loc, &l) < 0)
				return false;
			ok = eng_role_readable(a, loc.role, loc.sector, len);
		}
		if (!ok)
			return false;
		lsec += len;
		nsec -= len;
	}
	return true;
}

int eng_mirror_write(struct eng_array *a, const struct eng_req *rq, const uint8_t *buf,
                     uint64_t lsec, uint64_t nsec)
{
	struct member_io io[BATCH];
	int io_role[BATCH];
	while (nsec) {
		int n = 0;
		uint64_t batch_lsec = lsec;
		while (nsec && n + a->ncopies <= BATCH) {
			uint64_t len;
			int rc = piece(a, lsec, nsec, &len);
			if (rc < 0)
				return rc;
			for (int c = 0; c < a->ncopies; c++) {
				struct layout_loc loc;
				uint64_t l;
				if (a->ops->map(&a->geo, lsec, c, &loc, &l) < 0)
					return -EIO;
				if (!eng_role_writable(a, loc.role))
					continue;
				eng_set_io(a, &io[n], loc.role, true, (void *)buf, loc.sector, len);
				io_role[n++] = loc.role;
			}
			buf += len * 512;
			lsec += len;
			nsec -= len;
		}
		eng_ioq_run(a, rq->q, io, n);
		bool failed = false;
		for (int i = 0; i < n; i++) {
			if (member_io_done(&io[i]))
				continue;
			if (rq->shared)
				return -EBUSY;
			eng_write_failed_io(a, io_role[i], &io[i], 1, "write error");
			failed = true;
		}
		if (!eng_array_readable(a))
			return -EIO;
		if (failed && !pieces_written(a, batch_lsec, lsec - batch_lsec))
			return -EIO;
	}
	return 0;
}
