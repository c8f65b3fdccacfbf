/* The two views of an array being reshaped, checkpoints and completion
 * (engine/core/reshape.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/log.h"
#include "engine/core/reshape.h"
#include "util/errmsg.h"

/* raid10 near layouts: the rows of slot d the move has written all of
 * (the chunks below pos's: slot index r * raid_disks + d of row r holds
 * chunk (r * raid_disks + d) / near), where a copy in the row after the
 * first copy's (eng_reshape_rows) may be the only one left; other layouts
 * and levels: rows. */
static uint64_t r10_member_rows(const struct eng_reshape *rs, int d, uint64_t pos, uint64_t rows)
{
	const struct layout_geometry *g = &rs->geo[1];
	uint64_t nc = g->layout & 0xff, fc = (g->layout >> 8) & 0xff, rd = (uint64_t)g->raid_disks;
	if (g->level != URAID_LEVEL_RAID10 || fc != 1 || !nc || d < 0)
		return rows;
	uint64_t k = pos / g->chunk_sectors * nc;
	if (k <= (uint64_t)d)
		return 0;
	return (k - (uint64_t)d + rd - 1) / rd * g->chunk_sectors;
}

void eng_reshape_free(struct eng_reshape *rs)
{
	if (rs && rs->slide && rs->slide_owned)
		member_close(rs->slide);
	free(rs);
}

void eng_reshape_view(struct eng_array *a, int v)
{
	struct eng_reshape *rs = a->rs;
	int g = v < 0 ? rs->rest : v;
	a->geo = rs->geo[g];
	a->ops = rs->ops[g];
	for (int i = 0; i < a->nmem; i++)
		a->mem[i]->sb.data_offset = a->mem[i]->reshape_doff[v < 0 ? 0 : v];
	/* Filled members: rows of the new geometry the move wrote (at rest
	 * what the superblocks may say: up to the recorded position). A
	 * backwards move fills them from the end: never read until it is
	 * over (md's recovery_offset, counted from the start, says nothing
	 * of where), written throughout. */
	uint64_t pos = v < 0 ? rs->safe : rs->r.position;
	uint64_t rows = eng_reshape_rows(rs, pos);
	if (rs->r.backwards)
		rows = 0;
	for (int i = 0; i < a->nmem; i++)
		if (eng_reshape_fills(a->mem[i]))
			a->mem[i]->recovery_offset =
			    v == 0 || rs->r.backwards
			        ? 0
			        : r10_member_rows(rs, a->mem[i]->role, pos, rows);
}

uint64_t eng_reshape_piece(const struct eng_array *a, uint64_t lsec, uint64_t end, bool *is_new)
{
	const struct md_reshape *r = &a->rs->r;
	*is_new = md_reshape_done(r, lsec);
	if (lsec < r->position && r->position < end)
		end = r->position;
	return end - lsec;
}

static uint32_t data_disks(const struct layout_geometry *g)
{
	int par = g->level == URAID_LEVEL_RAID6 ? 2 : 1;
	return (uint32_t)(g->raid_disks - par);
}

/* raid10 (near and offset layouts): the member address (from the data
 * offset) of the row holding array sector s, and the one past the row of
 * the end of s's chunk, as md's first_dev_address / last_dev_address. */
static uint64_t r10_first_dev(uint64_t s, const struct layout_geometry *g)
{
	uint64_t nc = g->layout & 0xff, fc = (g->layout >> 8) & 0xff;
	return s / g->chunk_sectors * nc / (uint64_t)g->raid_disks * fc * g->chunk_sectors;
}

static uint64_t r10_last_dev(uint64_t s, const struct layout_geometry *g)
{
	uint64_t nc = g->layout & 0xff, fc = (g->layout >> 8) & 0xff, rd = (uint64_t)g->raid_disks;
	return ((s / g->chunk_sectors + 1) * nc + rd - 1) / rd * fc * g->chunk_sectors;
}

uint64_t eng_reshape_geo_size(const struct layout_geometry *g, uint64_t dev_sectors)
{
	if (g->level == URAID_LEVEL_RAID10) {
		const struct layout_ops *ops = layout_ops_for(g->level);
		struct layout_geometry t = *g;
		t.dev_sectors = dev_sectors;
		return ops ? ops->array_sectors(&t) : 0;
	}
	return (dev_sectors - dev_sectors % g->chunk_sectors) * data_disks(g);
}

uint64_t eng_reshape_progress(const struct eng_reshape *rs)
{
	return rs->r.backwards ? rs->start - rs->r.position : rs->r.position;
}

uint64_t eng_reshape_total(const struct eng_reshape *rs)
{
	return rs->r.backwards ? rs->start : rs->size[1];
}

/* md's raid10 calc_sectors (the member sectors geometry g uses of dev)
 * and raid10_size (the array sectors of dev on rd members). */
static uint64_t r10_calc_sectors(uint64_t dev, const struct layout_geometry *g)
{
	uint64_t c = g->chunk_sectors, nc = g->layout & 0xff, fc = (g->layout >> 8) & 0xff,
	         rd = (uint64_t)g->raid_disks;
	if (!c || !nc || !fc || !rd)
		return 0;
	uint64_t chunks = dev / c / fc * rd / nc;
	return (chunks * nc * fc + rd - 1) / rd * c;
}

static uint64_t r10_size(uint64_t dev, int rd, const struct layout_geometry *g)
{
	uint64_t c = g->chunk_sectors, nc = g->layout & 0xff, fc = (g->layout >> 8) & 0xff;
	if (!c || !nc || !fc)
		return 0;
	return dev / c / fc * (uint64_t)rd / nc * c;
}

uint64_t eng_reshape_md_total(const struct eng_reshape *rs)
{
	const struct layout_geometry *o = &rs->geo[0], *n = &rs->geo[1];
	if (n->level != URAID_LEVEL_RAID10)
		return eng_reshape_total(rs);
	/* md's resync_max_sectors: raid10_run's raid10_size(mddev, 0, 0)
	 * (the old geometry's, on the members it uses); backwards
	 * raid10_start_reshape's, the new geometry on the fewer members.
	 * Assembled mid-reshape, raid10_run's conf->geo is the new geometry:
	 * calc_sectors and raid10_size by it (its chunk and copies) on the
	 * fewer members, whichever the direction; on an odd member count a
	 * chunk change makes that differ from the old geometry's. */
	int fewer = o->raid_disks < n->raid_disks ? o->raid_disks : n->raid_disks;
	if (rs->assembled)
		return r10_size(r10_calc_sectors(o->dev_sectors, n), fewer, n);
	uint64_t dev = r10_calc_sectors(o->dev_sectors, o);
	if (!rs->r.backwards)
		return r10_size(dev, o->raid_disks, o);
	return r10_size(dev, fewer, n);
}

uint64_t eng_reshape_rows(const struct eng_reshape *rs, uint64_t lsec)
{
	if (rs->geo[1].level == URAID_LEVEL_RAID10)
		return r10_first_dev(lsec, &rs->geo[1]);
	uint32_t dd = data_disks(&rs->geo[1]);
	return dd ? lsec / dd : 0;
}

bool eng_reshape_move_safe(const struct eng_array *a, uint64_t lsec, uint64_t n, uint64_t safe)
{
	const struct eng_reshape *rs = a->rs;
	const struct layout_geometry *o = &rs->geo[0], *g = &rs->geo[1];
	if (g->level == URAID_LEVEL_RAID10) {
		/* md's raid10 reshape_request: the new rows the move writes
		 * (offset_delta from the old data area) stay clear of the old
		 * rows a restart would read: forwards those from `safe` up,
		 * backwards those below it. */
		int64_t d = rs->r.offset_delta;
		if (!n)
			return true;
		if (rs->r.backwards)
			return !safe || (int64_t)r10_first_dev(lsec, g) + d >=
			                    (int64_t)r10_last_dev(safe - 1, o);
		return (int64_t)r10_last_dev(lsec + n - 1, g) + d <=
		       (int64_t)r10_first_dev(safe, o);
	}
	uint64_t ow = (uint64_t)data_disks(o) * o->chunk_sectors;
	uint64_t nw = (uint64_t)data_disks(g) * g->chunk_sectors;
	/* Rows (sectors of the old data area) the move writes, and those the
	 * old layout still needs after a crash. */
	int64_t d = rs->r.offset_delta;
	int64_t w0 = (int64_t)(lsec / nw * g->chunk_sectors) + d;
	int64_t w1 = (int64_t)((lsec + n + nw - 1) / nw * g->chunk_sectors) + d;
	int64_t r0, r1;
	if (rs->r.backwards) {
		r0 = 0;
		r1 = (int64_t)((safe + ow - 1) / ow * o->chunk_sectors);
	} else {
		r0 = (int64_t)(safe / ow * o->chunk_sectors);
		r1 = (int64_t)(a->geo.dev_sectors - a->geo.dev_sectors % o->chunk_sectors);
	}
	return w1 <= r0 || w0 >= r1;
}

int eng_reshape_checkpoint(struct eng_array *a)
{
	struct eng_reshape *rs = a->rs;
	/* What the new layout holds must be durable before the superblocks
	 * say so. */
	for (int r = 0; r < LAYOUT_MAX_MEMBERS; r++) {
		if (a->slot[r] < 0)
			continue;
		struct eng_member *em = a->mem[a->slot[r]];
		if (em->state == URAID_MEMBER_FAULTY || !em->m)
			continue;
		if (member_flush(eng_data_member(em)) < 0) {
			eng_member_failed(a, r, "flush failed");
			if (!eng_array_readable(a))
				return -EIO;
		}
	}
	struct md_reshape r = rs->r;
	md_sb_reshape_store(&a->ref, &r);
	int rc = eng_sb_write_all(a);
	if (rc == 0) {
		rs->safe = rs->r.position;
		rs->checkpoint_ns = eng_now_ns();
	}
	return rc;
}

int eng_reshape_complete(struct eng_array *a)
{
	struct eng_reshape *rs = a->rs;
	for (int r = 0; r < LAYOUT_MAX_MEMBERS; r++) {
		if (a->slot[r] < 0)
			continue;
		struct eng_member *em = a->mem[a->slot[r]];
		if (em->state != URAID_MEMBER_FAULTY && em->m && member_flush(em->m) < 0) {
			eng_member_failed(a, r, "flush failed");
			if (!eng_array_readable(a))
				return -EIO;
		}
	}
	/* Filled members are in sync (md's end_reshape: recovery_offset
	 * MaxSector, then raid5_spare_active), recorded first with the
	 * reshape still at its end: a cut amid the last write then finds
	 * them in sync whichever superblock they hold, never rebuilding in
	 * a layout where they hold data (a dirty degraded array). */
	bool filled = false;
	for (int i = 0; i < a->nmem; i++)
		if (eng_reshape_fills(a->mem[i])) {
			a->mem[i]->state = URAID_MEMBER_IN_SYNC;
			a->mem[i]->recovery_offset = 0;
			filled = true;
		}
	if (filled) {
		int rc = eng_reshape_checkpoint(a);
		if (rc < 0)
			return rc;
	}
	struct md_sb *ref = &a->ref;
	ref->level = rs->r.new.level;
	ref->layout = rs->r.new.layout;
	ref->chunk_sectors = rs->r.new.chunk_sectors;
	ref->raid_disks = rs->r.new.raid_disks;
	struct md_reshape none = {.active = false};
	md_sb_reshape_store(ref, &none);
	for (int i = 0; i < a->nmem; i++) {
		struct eng_member *em = a->mem[i];
		int64_t moved = (int64_t)em->reshape_doff[0] - (int64_t)em->reshape_doff[1];
		em->sb.data_offset = em->reshape_doff[1];
		/* md_finish_reshape: the data area keeps its end. */
		if (em->sb.version != MD_SB_0_90 && moved)
			em->sb.data_size = (uint64_t)((int64_t)em->sb.data_size + moved);
		em->reshape_doff[0] = em->reshape_doff[1];
	}
	/* raid5_finish_reshape: the slots a shrink gave up leave the array;
	 * their members stay as spares (md's remove_and_add_spares). */
	for (int r = rs->geo[1].raid_disks; r < rs->geo[0].raid_disks; r++) {
		if (a->slot[r] < 0)
			continue;
		struct eng_member *em = a->mem[a->slot[r]];
		em->role = -1;
		if (em->state != URAID_MEMBER_FAULTY)
			em->state = URAID_MEMBER_SPARE;
		em->recovery_offset = 0;
		a->slot[r] = -1;
	}
	a->geo = rs->geo[1];
	a->ops = rs->ops[1];
	for (int r = 0; r < a->geo.raid_disks; r++)
		if (a->slot[r] >= 0)
			a->geo.member_sectors[r] = a->mem[a->slot[r]]->sb.data_size;
	for (int r = a->geo.raid_disks; r < rs->geo[0].raid_disks; r++)
		a->geo.member_sectors[r] = 0;
	/* md sets the size after a grow; a size set by hand (a shrink's
	 * --array-size) stays while it fits. */
	uint64_t full = a->ops->array_sectors(&a->geo);
	if (!a->external_size || a->array_sectors > full ||
	    rs->r.new.raid_disks > rs->r.old.raid_disks)
		a->array_sectors = full;
	int (*then)(struct eng_array *, int) = rs->then;
	int then_level = rs->then_level;
	eng_reshape_free(rs);
	a->rs = NULL;
	/* A takeover due now is recorded in the same write. */
	if (then)
		then(a, then_level);
	/* A raid10 grow assembled mid-way loaded its bitmap for the smaller
	 * size (as md's raid10_run sizes it): it follows the larger one
	 * before the superblocks export it. */
	if (a->log && a->log->cover) {
		int rc = a->log->cover(a);
		if (rc < 0)
			return rc;
	}
	return eng_sb_write_all(a);
}

int eng_reshape_copy(struct eng_array *a, uint64_t lsec, uint64_t n, eng_reshape_read_fn read_old,
                     eng_reshape_write_fn write_new)
{
	struct eng_reshape *rs = a->rs;
	uint8_t *buf = eng_buf_get(a, n * 512);
	if (!buf)
		return -ENOMEM;
	/* What the old geometry does not hold (a grow's new end) is zeros. */
	uint64_t old_end = rs->size[0], rd = 0;
	if (lsec < old_end)
		rd = old_end - lsec < n ? old_end - lsec : n;
	int rc = 0;
	if (rd) {
		eng_reshape_view(a, 0);
		rc = read_old(a, buf, lsec, rd);
	}
	memset(buf + rd * 512, 0, (n - rd) * 512);
	if (rc == 0) {
		eng_reshape_view(a, 1);
		rc = write_new(a, buf, lsec, n);
	}
	eng_reshape_view(a, -1);
	eng_buf_put(a, buf);
	return rc;
}

void eng_reshape_shape(const struct eng_array *a, int level, const struct uraid_reshape_opts *o,
                       struct md_reshape *r)
{
	*r = (struct md_reshape){.active = true, .position = 0};
	r->old.level = r->new.level = (uint32_t)level;
	r->old.layout = a->geo.layout;
	r->old.chunk_sectors = a->geo.chunk_sectors;
	r->old.raid_disks = (uint32_t)a->geo.raid_disks;
	r->new = r->old;
	if (o->raid_disks > 0)
		r->new.raid_disks = (uint32_t)o->raid_disks;
	if (o->layout >= 0)
		r->new.layout = (uint32_t)o->layout;
	if (o->chunk_sectors)
		r->new.chunk_sectors = o->chunk_sectors;
}

int eng_reshape_refuse_cut(const struct eng_array *a, uint64_t new_size, char *err, size_t errlen)
{
	if (new_size >= a->array_sectors)
		return 0;
	return errmsg(err, errlen, -ENOSPC,
	              "this change will reduce the size of the array: use --grow "
	              "--array-size first to truncate the array (e.g. --array-size=%lluK)",
	              (unsigned long long)new_size / 2);
}
