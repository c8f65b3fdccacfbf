/* Write-intent bitmap of a running array (see engine/bitmap/bitmap.h). */
#include "engine/bitmap/bitmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/engine.h"
#include "util/errmsg.h"

static bool bm_level_ok(int level)
{
	return level == URAID_LEVEL_RAID1 || level == URAID_LEVEL_RAID4 ||
	       level == URAID_LEVEL_RAID5 || level == URAID_LEVEL_RAID6 ||
	       level == URAID_LEVEL_RAID10;
}

uint64_t eng_bitmap_coverage(const struct eng_array *a)
{
	/* The resync's positions: array sectors for raid10 (the kernel's
	 * resync_max_sectors = raid10_size()), member sectors for the others. */
	return a->pers->sync_size(a);
}

uint64_t eng_bitmap_area_sectors(const struct eng_array *a)
{
	const struct eng_bitmap *b = eng_bitmap_of(a);
	return b ? (b->img_len + 4095) / 4096 * 8 : 0;
}

uint64_t eng_bitmap_where(const struct eng_array *a, const struct eng_member *em)
{
	return (uint64_t)((int64_t)em->sb.super_offset + a->ref.bitmap_offset) * 512;
}

bool eng_bitmap_member_used(const struct eng_array *a, int i)
{
	const struct eng_member *em = a->mem[i];
	return em->m && em->role >= 0 && em->role < a->geo.raid_disks && a->slot[em->role] == i &&
	       (em->state == URAID_MEMBER_IN_SYNC || em->state == URAID_MEMBER_REBUILDING);
}

/* Write bytes [from, to) of the image (whole sectors, the header sector too
 * when its events are behind) to every member in use, FUA: durable before
 * any data write that relies on it. */
static int bm_write_range(struct eng_array *a, size_t from, size_t to)
{
	struct eng_bitmap *b = eng_bitmap_of(a);
	b->sb.events = a->events;
	b->sb.sync_size = eng_bitmap_coverage(a);
	md_bitmap_encode(&b->sb, b->img);
	from = from / 512 * 512;
	to = (to + 511) / 512 * 512;
	if (to > b->img_len)
		to = b->img_len;
	bool hdr = b->hdr_events != a->events && from > 0;
	struct member_io io[2 * ENG_MAX_MEMBERS];
	int n = 0, who[2 * ENG_MAX_MEMBERS];
	for (int i = 0; i < a->nmem; i++) {
		if (!eng_bitmap_member_used(a, i))
			continue;
		uint64_t base = eng_bitmap_where(a, a->mem[i]);
		if (hdr) {
			io[n] = (struct member_io){.m = a->mem[i]->m,
			                           .op = MEMBER_OP_WRITE,
			                           .buf = b->img,
			                           .len = 512,
			                           .off = base,
			                           .flags = MEMBER_FUA};
			who[n++] = i;
		}
		io[n] = (struct member_io){.m = a->mem[i]->m,
		                           .op = MEMBER_OP_WRITE,
		                           .buf = b->img + from,
		                           .len = to - from,
		                           .off = base + from,
		                           .flags = MEMBER_FUA};
		who[n++] = i;
	}
	eng_ioq_run(a, a->ioq, io, n);
	for (int k = 0; k < n; k++)
		if (io[k].result < 0)
			eng_member_failed(a, a->mem[who[k]]->role, "bitmap write failed");
	b->hdr_events = a->events;
	return eng_array_readable(a) ? 0 : -EIO;
}

int eng_bitmap_write_header(struct eng_array *a)
{
	return bm_write_range(a, 0, 512);
}

int eng_bitmap_write_all(struct eng_array *a)
{
	return bm_write_range(a, 0, eng_bitmap_of(a)->img_len);
}

static bool bm_degraded(const struct eng_array *a)
{
	for (int r = 0; r < a->geo.raid_disks; r++)
		if (a->slot[r] < 0 || a->mem[a->slot[r]]->state != URAID_MEMBER_IN_SYNC)
			return true;
	return false;
}

int eng_bitmap_alloc(struct eng_array *a, const struct md_bitmap_sb *sb, char *err, size_t errlen)
{
	struct md_bitmap_sb cov = *sb;
	/* As the kernel: the bits follow the array's own range, whatever
	 * sync_size the header was written with (mdadm estimates it for
	 * raid10). */
	cov.sync_size = eng_bitmap_coverage(a);
	uint64_t len = MD_BITMAP_SB_BYTES + md_bitmap_bytes(&cov);
	if (len > ENG_BITMAP_MAX_IMAGE)
		return errmsg(err, errlen, -EINVAL, "bitmap of %llu bytes is too large",
		              (unsigned long long)len);
	struct eng_bitmap *b = calloc(1, sizeof(*b));
	if (b)
		b->img = eng_alloc(len);
	if (!b || !b->img) {
		free(b);
		return errmsg(err, errlen, -ENOMEM, "out of memory for the bitmap");
	}
	b->sb = cov;
	b->blocks = cov.sync_size;
	b->nbits = md_bitmap_bits(&cov);
	b->touched = calloc(b->nbits ? b->nbits : 1, 1);
	if (!b->touched || member_ioq_open(16, &b->q) < 0) {
		free(b->touched);
		free(b->img);
		free(b);
		return errmsg(err, errlen, -ENOMEM, "out of memory for the bitmap");
	}
	pthread_mutex_init(&b->mu, NULL);
	b->chunk_sectors = cov.chunksize / 512;
	b->img_len = (size_t)len;
	b->hdr_events = UINT64_MAX;
	a->log_state = b;
	return 0;
}

bool eng_bitmap_present(const struct eng_array *a)
{
	return (a->ref.feature_map & MD_FEATURE_BITMAP_OFFSET) != 0;
}

int eng_bitmap_load(struct eng_array *a, char *err, size_t errlen)
{
	/* Writes would have to keep the bitmap in step, or the kernel's next
	 * bitmap-based resync would miss them. */
	if (!bm_level_ok(a->geo.level))
		return a->readonly ? 0
		                   : errmsg(err, errlen, -EOPNOTSUPP,
		                            "uraid keeps write-intent bitmaps only for "
		                            "raid1/4/5/6/10, not %s: read-only use only (or remove "
		                            "the bitmap with mdadm --grow --bitmap=none)",
		                            level_name(a->geo.level));
	int src = -1;
	for (int i = 0; i < a->nmem && src < 0; i++)
		if (eng_bitmap_member_used(a, i) && a->mem[i]->state == URAID_MEMBER_IN_SYNC)
			src = i;
	if (src < 0)
		return errmsg(err, errlen, -EIO, "no in-sync member to read the bitmap from");
	struct eng_member *em = a->mem[src];
	uint8_t *hdr = eng_alloc(512);
	if (!hdr)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	struct md_bitmap_sb sb;
	char why[160];
	int rc = member_read(em->m, hdr, 512, eng_bitmap_where(a, em));
	if (rc == 0)
		rc = md_bitmap_decode(hdr, 512, &sb, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "read error %d", rc);
	free(hdr);
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s: bitmap at sector %d from the superblock: %s",
		              em->m->name, a->ref.bitmap_offset, why);
	uint8_t uuid[16];
	md_bitmap_uuid(&a->ref, uuid);
	if (memcmp(sb.uuid, uuid, 16))
		return errmsg(err, errlen, -EINVAL, "%s: bitmap belongs to another array (uuid)",
		              em->m->name);
	rc = eng_bitmap_alloc(a, &sb, err, errlen);
	if (rc < 0)
		return rc;
	struct eng_bitmap *b = eng_bitmap_of(a);
	/* Where the kernel would refuse to write it, uraid does not either. */
	for (int i = 0; i < a->nmem; i++) {
		if (!eng_bitmap_member_used(a, i))
			continue;
		rc = md_bitmap_check_place(&a->mem[i]->sb, a->ref.bitmap_offset, a->geo.dev_sectors,
		                           b->img_len, why, sizeof(why));
		if (rc < 0) {
			eng_bitmap_free(a);
			return errmsg(err, errlen, rc, "%s: %s", a->mem[i]->m->name, why);
		}
	}
	rc = member_read(em->m, b->img, b->img_len, eng_bitmap_where(a, em));
	if (rc < 0) {
		eng_bitmap_free(a);
		return errmsg(err, errlen, rc, "%s: cannot read the bitmap", em->m->name);
	}
	/* Bits past the last chunk mean nothing (mdadm writes them set). */
	uint8_t *bits = b->img + MD_BITMAP_SB_BYTES;
	for (uint64_t i = b->nbits; i < (b->img_len - MD_BITMAP_SB_BYTES) * 8; i++)
		md_bitmap_assign(bits, i, false);
	b->hdr_events = sb.events;
	/* The kernel's rule: a bitmap older than the superblocks may have
	 * missed writes, so only a fresh one may narrow the resync. */
	b->use_for_resync = a->resync_offset != MD_RESYNC_NONE && sb.events >= a->events &&
	                    !(sb.state & MD_BITMAP_STALE);
	if (sb.state & MD_BITMAP_STALE) {
		/* As md_bitmap_load: a stale bitmap (one a resize left half
		 * written, engine/bitmap/bitmap_resize.c) counts as all dirty,
		 * and the flag goes with the next header write. */
		for (uint64_t i = 0; i < b->nbits; i++)
			md_bitmap_assign(bits, i, true);
		b->sb.state &= ~MD_BITMAP_STALE;
		b->hdr_events = UINT64_MAX;
	}
	return 0;
}

void eng_bitmap_free(struct eng_array *a)
{
	struct eng_bitmap *b = eng_bitmap_of(a);
	if (!b)
		return;
	pthread_mutex_destroy(&b->mu);
	member_ioq_close(b->q);
	free(b->img);
	free(b->touched);
	free(b);
	a->log_state = NULL;
}

/* The kernel's re-add rule: bits are never cleared while a member is
 * missing, so a member whose events are at least events_cleared missed only
 * writes whose bits are still set. */
bool eng_bitmap_covers_since(const struct eng_array *a, uint64_t events)
{
	const struct eng_bitmap *b = eng_bitmap_of(a);
	return b && !(b->sb.state & MD_BITMAP_STALE) && events >= b->sb.events_cleared;
}

void eng_bitmap_recover_marked(struct eng_array *a, int role, const struct eng_member *em)
{
	struct eng_bitmap *b = eng_bitmap_of(a);
	if (!b || role < 0 || role >= LAYOUT_MAX_MEMBERS)
		return;
	b->partial[role] = true;
	b->partial_em[role] = em;
	memcpy(b->partial_uuid[role], em->sb.device_uuid, 16);
}

void eng_bitmap_range(const struct eng_array *a, uint64_t lsec, uint64_t nsec, uint64_t *i0,
                      uint64_t *i1)
{
	const struct eng_bitmap *b = eng_bitmap_of(a);
	uint64_t m0, m1;
	a->pers->sync_range(a, lsec, nsec, &m0, &m1);
	*i0 = m0 / b->chunk_sectors;
	*i1 = (m1 - 1) / b->chunk_sectors + 1;
	if (*i1 > b->nbits)
		*i1 = b->nbits;
}

bool eng_bitmap_covered(struct eng_array *a, uint64_t lsec, uint64_t nsec)
{
	struct eng_bitmap *b = eng_bitmap_of(a);
	if (!b || nsec == 0)
		return true;
	uint64_t i0, i1;
	eng_bitmap_range(a, lsec, nsec, &i0, &i1);
	/* Preparers (engine/bitmap/bitmap_fast.c) may OR bits in meanwhile: atomic loads. */
	const uint8_t *bits = b->img + MD_BITMAP_SB_BYTES;
	for (uint64_t i = i0; i < i1; i++)
		if (!((__atomic_load_n(&bits[i / 8], __ATOMIC_ACQUIRE) >> (i % 8)) & 1))
			return false;
	for (uint64_t i = i0; i < i1; i++)
		if (!__atomic_load_n(&b->touched[i], __ATOMIC_RELAXED))
			__atomic_store_n(&b->touched[i], 1, __ATOMIC_RELAXED);
	return true;
}

int eng_bitmap_start_write(struct eng_array *a, uint64_t lsec, uint64_t nsec)
{
	struct eng_bitmap *b = eng_bitmap_of(a);
	if (!b || nsec == 0)
		return 0;
	uint64_t i0, i1;
	eng_bitmap_range(a, lsec, nsec, &i0, &i1);
	uint8_t *bits = b->img + MD_BITMAP_SB_BYTES;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint64_t i = i0; i < i1; i++) {
		b->touched[i] = 1;
		if (!md_bitmap_test(bits, i)) {
			md_bitmap_assign(bits, i, true);
			if (lo == UINT64_MAX)
				lo = i;
			hi = i;
		}
	}
	if (lo == UINT64_MAX) /* as md: the header as fresh as the superblocks */
		return b->hdr_events == a->events ? 0 : bm_write_range(a, 0, 512);
	/* Only the sectors holding the new bits (and the header's events). */
	return bm_write_range(a, MD_BITMAP_SB_BYTES + lo / 8, MD_BITMAP_SB_BYTES + hi / 8 + 1);
}

int eng_bitmap_clear_synced(struct eng_array *a)
{
	struct eng_bitmap *b = eng_bitmap_of(a);
	if (!b || a->readonly)
		return 0;
	/* Bits may go only when the data they guard is durable everywhere and
	 * nothing still needs them (a pending resync, a missing member). */
	bool can_clear =
	    a->resync_offset == MD_RESYNC_NONE && a->action != URAID_SYNC_RESYNC && !bm_degraded(a);
	for (int i = 0; i < a->nmem && can_clear; i++)
		if (eng_bitmap_member_used(a, i) && member_flush(a->mem[i]->m) < 0)
			can_clear = false;
	uint64_t lo = UINT64_MAX, hi = 0;
	if (can_clear) {
		/* Marked clean (idle, stopping): nothing is being written. */
		bool all = !a->dirty;
		uint8_t *bits = b->img + MD_BITMAP_SB_BYTES;
		for (uint64_t i = 0; i < b->nbits; i++) {
			if (md_bitmap_test(bits, i) && (all || !b->touched[i])) {
				md_bitmap_assign(bits, i, false);
				if (lo == UINT64_MAX)
					lo = i;
				hi = i;
			}
		}
		memset(b->touched, 0, b->nbits);
		if (lo != UINT64_MAX) {
			b->sb.events_cleared = a->events;
			b->use_for_resync = false;
		}
		memset(b->partial, 0, sizeof(b->partial));
	}
	if (lo != UINT64_MAX)
		return bm_write_range(a, MD_BITMAP_SB_BYTES + lo / 8,
		                      MD_BITMAP_SB_BYTES + hi / 8 + 1);
	/* Nothing cleared: only keep the header's events as fresh as the
	 * superblocks' (the kernel's freshness rule). */
	return b->hdr_events == a->events ? 0 : bm_write_range(a, 0, 512);
}

/* Is every member being recovered one re-added with a bitmap-based recovery? */
static bool bm_recovery_partial(const struct eng_array *a)
{
	const struct eng_bitmap *b = eng_bitmap_of(a);
	bool any = false;
	for (int r = 0; r < a->geo.raid_disks; r++) {
		if (a->slot[r] < 0 || a->mem[a->slot[r]]->state != URAID_MEMBER_REBUILDING)
			continue;
		const struct eng_member *em = a->mem[a->slot[r]];
		if (!b->partial[r] || b->partial_em[r] != (const void *)em ||
		    memcmp(b->partial_uuid[r], em->sb.device_uuid, 16))
			return false;
		any = true;
	}
	return any;
}

void eng_bitmap_full_recovery(struct eng_array *a, int role)
{
	struct eng_bitmap *b = eng_bitmap_of(a);
	if (b && role >= 0 && role < LAYOUT_MAX_MEMBERS)
		b->partial[role] = false;
}

/* raid10 recovery walks the rebuilding member's own sectors (engine/mirror/sync.c)
 * while its bits cover array sectors: is any array sector held in member
 * sectors [p, p+n) (within one layout chunk) of a rebuilding role dirty? */
static bool r10_range_dirty(const struct eng_array *a, uint64_t p, uint64_t n)
{
	const struct eng_bitmap *b = eng_bitmap_of(a);
	const uint8_t *bits = b->img + MD_BITMAP_SB_BYTES;
	for (int r = 0; r < a->geo.raid_disks; r++) {
		if (a->slot[r] < 0 || a->mem[a->slot[r]]->state != URAID_MEMBER_REBUILDING)
			continue;
		uint64_t l;
		if (a->ops->unmap(&a->geo, r, p, &l) < 0)
			continue; /* not holding array data there */
		for (uint64_t i = l / b->chunk_sectors; i <= (l + n - 1) / b->chunk_sectors; i++)
			if (i < b->nbits && md_bitmap_test(bits, i))
				return true;
	}
	return false;
}

static uint64_t r10_next_dirty(struct eng_array *a, uint64_t pos, uint64_t end, uint64_t *len,
                               uint64_t *skipped)
{
	/* Units that lie in one layout chunk and one bitmap chunk (both
	 * powers of two), so the recovery writes exactly the dirty ones. */
	uint64_t bcs = eng_bitmap_of(a)->chunk_sectors;
	uint64_t cs = a->geo.chunk_sectors < bcs ? a->geo.chunk_sectors : bcs;
	uint64_t p = pos;
	while (p < end) {
		uint64_t ce = (p / cs + 1) * cs < end ? (p / cs + 1) * cs : end;
		if (r10_range_dirty(a, p, ce - p))
			break;
		p = ce;
	}
	*skipped += p - pos;
	uint64_t q = p;
	while (q < end) {
		uint64_t ce = (q / cs + 1) * cs < end ? (q / cs + 1) * cs : end;
		if (!r10_range_dirty(a, q, ce - q))
			break;
		q = ce;
	}
	*len = q - p;
	return p;
}

uint64_t eng_bitmap_next_dirty(struct eng_array *a, uint64_t pos, uint64_t end, uint64_t *len)
{
	struct eng_bitmap *b = eng_bitmap_of(a);
	*len = end > pos ? end - pos : 0;
	if (!b || pos >= end)
		return pos;
	uint64_t *skipped;
	if (a->action == URAID_SYNC_RESYNC && b->use_for_resync)
		skipped = &b->resync_skipped;
	else if (a->action == URAID_SYNC_RECOVER && bm_recovery_partial(a))
		skipped = &b->recovery_skipped;
	else
		return pos;
	if (a->action == URAID_SYNC_RECOVER && a->geo.level == URAID_LEVEL_RAID10)
		return r10_next_dirty(a, pos, end, len, skipped);
	const uint8_t *bits = b->img + MD_BITMAP_SB_BYTES;
	uint64_t i = pos / b->chunk_sectors;
	while (i < b->nbits && !md_bitmap_test(bits, i))
		i++;
	uint64_t p = i * b->chunk_sectors > pos ? i * b->chunk_sectors : pos;
	if (i >= b->nbits || p >= end) {
		*skipped += end - pos;
		*len = 0;
		return end;
	}
	*skipped += p - pos;
	uint64_t j = i;
	while (j < b->nbits && md_bitmap_test(bits, j))
		j++;
	uint64_t stop = j * b->chunk_sectors < end ? j * b->chunk_sectors : end;
	*len = stop - p;
	return p;
}

/* md keeps a 16-bit counter per chunk in pages of 4 KiB. */
#define COUNTERS_PER_PAGE 2048

void eng_bitmap_status(const struct eng_array *a, struct uraid_status *st)
{
	const struct eng_bitmap *b = eng_bitmap_of(a);
	if (!b)
		return;
	st->bitmap_chunk_kib = (uint32_t)(b->chunk_sectors / 2);
	st->bitmap_chunks = b->nbits;
	st->bitmap_pages = (uint32_t)((b->nbits + COUNTERS_PER_PAGE - 1) / COUNTERS_PER_PAGE);
	const uint8_t *bits = b->img + MD_BITMAP_SB_BYTES;
	uint64_t page_seen = UINT64_MAX;
	for (uint64_t i = 0; i < b->nbits; i++) {
		if (!((__atomic_load_n(&bits[i / 8], __ATOMIC_RELAXED) >> (i % 8)) & 1))
			continue;
		st->bitmap_dirty++;
		if (i / COUNTERS_PER_PAGE != page_seen) {
			page_seen = i / COUNTERS_PER_PAGE;
			st->bitmap_pages_used++;
		}
	}
}
