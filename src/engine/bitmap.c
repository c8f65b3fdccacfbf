/* Write-intent bitmap of a running array (see bitmap.h). */
#include "engine/bitmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "util/errmsg.h"

#define BM_MAX_IMAGE (8u << 20) /* refuse absurd bitmaps rather than allocate */

static bool bm_level_ok(int level)
{
	return level == URAID_LEVEL_RAID1 || level == URAID_LEVEL_RAID4 ||
	       level == URAID_LEVEL_RAID5 || level == URAID_LEVEL_RAID6;
}

bool eng_bitmap_supported(int md_version, int level)
{
	return (md_version == MD_SB_1_1 || md_version == MD_SB_1_2) && bm_level_ok(level);
}

static uint64_t bm_where(const struct uraid_array *a, const struct eng_member *em)
{
	return (uint64_t)((int64_t)em->sb.super_offset + a->ref.bitmap_offset) * 512;
}

static bool bm_member_used(const struct uraid_array *a, int i)
{
	const struct eng_member *em = a->mem[i];
	return em->m && em->role >= 0 && em->role < a->geom.raid_disks && a->slot[em->role] == i &&
	       (em->state == URAID_MEMBER_IN_SYNC || em->state == URAID_MEMBER_REBUILDING);
}

/* Write header + bits, flushed, to every member in use. */
static int bm_write_all(struct uraid_array *a)
{
	struct eng_bitmap *b = a->bitmap;
	b->sb.events = a->events;
	md_bitmap_encode(&b->sb, b->img);
	for (int i = 0; i < a->nmem; i++) {
		if (!bm_member_used(a, i))
			continue;
		struct eng_member *em = a->mem[i];
		int rc = member_write(em->m, b->img, b->img_len, bm_where(a, em), 0);
		if (rc == 0)
			rc = member_flush(em->m);
		if (rc < 0)
			eng_member_failed(a, em->role, "bitmap write failed");
	}
	return eng_array_readable(a) ? 0 : -EIO;
}

static bool bm_degraded(const struct uraid_array *a)
{
	for (int r = 0; r < a->geom.raid_disks; r++)
		if (a->slot[r] < 0 || a->mem[a->slot[r]]->state != URAID_MEMBER_IN_SYNC)
			return true;
	return false;
}

static int bm_alloc(struct uraid_array *a, const struct md_bitmap_sb *sb, char *err, size_t errlen)
{
	uint64_t len = MD_BITMAP_SB_BYTES + md_bitmap_bytes(sb);
	if (len > BM_MAX_IMAGE)
		return errmsg(err, errlen, -EINVAL, "bitmap of %llu bytes is too large",
		              (unsigned long long)len);
	struct eng_bitmap *b = calloc(1, sizeof(*b));
	if (b)
		b->img = eng_alloc(len);
	if (!b || !b->img) {
		free(b);
		return errmsg(err, errlen, -ENOMEM, "out of memory for the bitmap");
	}
	b->sb = *sb;
	b->nbits = md_bitmap_bits(sb);
	b->chunk_sectors = sb->chunksize / 512;
	b->img_len = (size_t)len;
	a->bitmap = b;
	return 0;
}

int eng_bitmap_load(struct uraid_array *a, char *err, size_t errlen)
{
	if (!(a->ref.feature_map & MD_FEATURE_BITMAP_OFFSET))
		return 0;
	if (a->ref.version != MD_SB_1_1 && a->ref.version != MD_SB_1_2)
		return a->readonly
		           ? 0
		           : errmsg(err, errlen, -EOPNOTSUPP,
		                    "internal bitmaps are supported with 1.1/1.2 metadata only "
		                    "(assemble read-only to read this array)");
	if (!bm_level_ok(a->geom.level))
		return a->readonly
		           ? 0
		           : errmsg(err, errlen, -EOPNOTSUPP,
		                    "internal bitmaps on %s are not supported yet (assemble "
		                    "read-only to read this array)",
		                    level_name(a->geom.level));
	int src = -1;
	for (int i = 0; i < a->nmem && src < 0; i++)
		if (bm_member_used(a, i) && a->mem[i]->state == URAID_MEMBER_IN_SYNC)
			src = i;
	if (src < 0)
		return errmsg(err, errlen, -EIO, "no in-sync member to read the bitmap from");
	struct eng_member *em = a->mem[src];
	uint8_t *hdr = eng_alloc(512);
	if (!hdr)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	struct md_bitmap_sb sb;
	char why[160];
	int rc = member_read(em->m, hdr, 512, bm_where(a, em));
	if (rc == 0)
		rc = md_bitmap_decode(hdr, 512, &sb, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "read error %d", rc);
	free(hdr);
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s: bitmap at sector %d from the superblock: %s",
		              em->m->name, a->ref.bitmap_offset, why);
	if (memcmp(sb.uuid, a->ref.set_uuid, 16))
		return errmsg(err, errlen, -EINVAL, "%s: bitmap belongs to another array (uuid)",
		              em->m->name);
	if (sb.sync_size < a->geom.dev_sectors)
		return errmsg(err, errlen, -EINVAL,
		              "%s: bitmap covers %llu sectors, the members use %llu", em->m->name,
		              (unsigned long long)sb.sync_size,
		              (unsigned long long)a->geom.dev_sectors);
	rc = bm_alloc(a, &sb, err, errlen);
	if (rc < 0)
		return rc;
	rc = member_read(em->m, a->bitmap->img, a->bitmap->img_len, bm_where(a, em));
	if (rc < 0) {
		eng_bitmap_free(a);
		return errmsg(err, errlen, rc, "%s: cannot read the bitmap", em->m->name);
	}
	/* The kernel's rule: a bitmap older than the superblocks may have
	 * missed writes, so only a fresh one may narrow the resync. */
	a->bitmap->use_for_resync = a->resync_offset != MD_RESYNC_NONE && sb.events >= a->events &&
	                            !(sb.state & MD_BITMAP_STALE);
	return 0;
}

void eng_bitmap_free(struct uraid_array *a)
{
	if (!a->bitmap)
		return;
	free(a->bitmap->img);
	free(a->bitmap);
	a->bitmap = NULL;
}

int eng_bitmap_start_write(struct uraid_array *a, uint64_t lsec, uint64_t nsec)
{
	struct eng_bitmap *b = a->bitmap;
	if (!b || nsec == 0)
		return 0;
	uint64_t m0 = lsec, m1 = lsec + nsec; /* member sectors touched, raid1 */
	if (eng_is_parity(a)) {
		uint64_t chunk = a->geom.chunk_sectors;
		uint64_t k = (uint64_t)(a->geom.raid_disks - eng_nparity(a));
		m0 = lsec / (k * chunk) * chunk;
		m1 = ((lsec + nsec - 1) / (k * chunk) + 1) * chunk;
	}
	bool changed = false;
	uint8_t *bits = b->img + MD_BITMAP_SB_BYTES;
	for (uint64_t i = m0 / b->chunk_sectors; i <= (m1 - 1) / b->chunk_sectors && i < b->nbits;
	     i++) {
		if (!md_bitmap_test(bits, i)) {
			md_bitmap_assign(bits, i, true);
			changed = true;
		}
	}
	return changed ? bm_write_all(a) : 0;
}

int eng_bitmap_clear_synced(struct uraid_array *a)
{
	struct eng_bitmap *b = a->bitmap;
	if (!b || a->readonly)
		return 0;
	/* Bits may go only when the data they guard is durable everywhere and
	 * nothing still needs them (a pending resync, a missing member). */
	bool can_clear =
	    a->resync_offset == MD_RESYNC_NONE && a->action != URAID_SYNC_RESYNC && !bm_degraded(a);
	for (int i = 0; i < a->nmem && can_clear; i++)
		if (bm_member_used(a, i) && member_flush(a->mem[i]->m) < 0)
			can_clear = false;
	if (can_clear) {
		memset(b->img + MD_BITMAP_SB_BYTES, 0, b->img_len - MD_BITMAP_SB_BYTES);
		b->sb.events_cleared = a->events;
		b->use_for_resync = false;
	}
	return bm_write_all(a);
}

uint64_t eng_bitmap_next_dirty(struct uraid_array *a, uint64_t pos, uint64_t end, uint64_t *len)
{
	struct eng_bitmap *b = a->bitmap;
	*len = end > pos ? end - pos : 0;
	if (!b || !b->use_for_resync || pos >= end)
		return pos;
	const uint8_t *bits = b->img + MD_BITMAP_SB_BYTES;
	uint64_t i = pos / b->chunk_sectors;
	while (i < b->nbits && !md_bitmap_test(bits, i))
		i++;
	uint64_t p = i * b->chunk_sectors > pos ? i * b->chunk_sectors : pos;
	if (i >= b->nbits || p >= end) {
		b->resync_skipped += end - pos;
		*len = 0;
		return end;
	}
	b->resync_skipped += p - pos;
	uint64_t j = i;
	while (j < b->nbits && md_bitmap_test(bits, j))
		j++;
	uint64_t stop = j * b->chunk_sectors < end ? j * b->chunk_sectors : end;
	*len = stop - p;
	return p;
}

int uraid_bitmap_add(struct uraid_array *a, uint32_t chunk_bytes, char *err, size_t errlen)
{
	if (!a)
		return -EINVAL;
	if (a->readonly)
		return errmsg(err, errlen, -EROFS, "array is read-only");
	if (!bm_level_ok(a->geom.level))
		return errmsg(err, errlen, -EOPNOTSUPP, "internal bitmaps on %s are not supported",
		              level_name(a->geom.level));
	if (a->ref.version != MD_SB_1_1 && a->ref.version != MD_SB_1_2)
		return errmsg(err, errlen, -EOPNOTSUPP,
		              "internal bitmaps need 1.1 or 1.2 metadata here");
	if (chunk_bytes && (chunk_bytes < 4096 || (chunk_bytes & (chunk_bytes - 1))))
		return errmsg(err, errlen, -EINVAL,
		              "bitmap chunk %u is not a power of two of at least 4 KiB",
		              chunk_bytes);
	eng_lock(a);
	int rc = 0;
	if (a->bitmap || (a->ref.feature_map & MD_FEATURE_BITMAP_OFFSET)) {
		rc = errmsg(err, errlen, -EEXIST, "the array already has a bitmap");
		goto out;
	}
	/* Room between the superblock's 4 KiB and the bad-block log (or the
	 * data), on the tightest member. */
	uint64_t room = UINT64_MAX;
	for (int i = 0; i < a->nmem; i++) {
		if (!bm_member_used(a, i))
			continue;
		const struct md_sb *s = &a->mem[i]->sb;
		uint64_t top = s->data_offset - s->super_offset;
		if ((int32_t)s->bblog_offset > 8 && (uint64_t)(int32_t)s->bblog_offset < top)
			top = (uint64_t)(int32_t)s->bblog_offset;
		uint64_t r = top > 8 ? top - 8 : 0;
		if (r < room)
			room = r;
	}
	uint32_t chunk =
	    room == UINT64_MAX ? 0 : md_bitmap_choose_chunk(a->geom.dev_sectors, room, chunk_bytes);
	if (!chunk) {
		rc = errmsg(err, errlen, chunk_bytes ? -EINVAL : -ENOSPC,
		            "no room for a bitmap%s (%llu sectors between superblock and data)",
		            chunk_bytes ? " with that chunk" : "",
		            (unsigned long long)(room == UINT64_MAX ? 0 : room));
		goto out;
	}
	struct md_bitmap_sb sb = {
	    .magic = MD_BITMAP_MAGIC,
	    .version = MD_BITMAP_V_LE,
	    .events = a->events,
	    .events_cleared = a->events,
	    .sync_size = a->geom.dev_sectors,
	    .chunksize = chunk,
	    .daemon_sleep = MD_BITMAP_DEFAULT_DELAY,
	};
	memcpy(sb.uuid, a->ref.set_uuid, 16);
	if (MD_BITMAP_SB_BYTES + md_bitmap_bytes(&sb) > room * 512) {
		rc = errmsg(err, errlen, -ENOSPC, "bitmap does not fit in %llu sectors",
		            (unsigned long long)room);
		goto out;
	}
	rc = bm_alloc(a, &sb, err, errlen);
	if (rc < 0)
		goto out;
	/* A pending resync must cover everything: all bits dirty then. */
	if (a->resync_offset != MD_RESYNC_NONE)
		memset(a->bitmap->img + MD_BITMAP_SB_BYTES, 0xff,
		       a->bitmap->img_len - MD_BITMAP_SB_BYTES);
	/* Bitmap first, then the superblocks that point at it, then the
	 * bitmap again with their events. */
	a->ref.bitmap_offset = 8;
	rc = bm_write_all(a);
	if (rc == 0) {
		a->ref.feature_map |= MD_FEATURE_BITMAP_OFFSET;
		rc = eng_sb_write_all(a);
	}
	if (rc == 0)
		rc = bm_write_all(a);
	if (rc < 0) {
		a->ref.feature_map &= ~MD_FEATURE_BITMAP_OFFSET;
		eng_bitmap_free(a);
		errmsg(err, errlen, rc, "writing the bitmap failed");
	}
out:
	eng_unlock(a);
	return rc;
}

uint64_t uraid_bitmap_resync_skipped(struct uraid_array *a)
{
	eng_lock(a);
	uint64_t n = a->bitmap ? a->bitmap->resync_skipped : 0;
	eng_unlock(a);
	return n;
}
