/* Adding an internal write-intent bitmap to a running array, placed where
 * mdadm --grow --bitmap=internal puts it (meta/md_bitmap.h,
 * md_bitmap_plan_add), for every metadata version and raid1/4/5/6/10. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/bitmap/bitmap.h"
#include "engine/core/engine.h"
#include "util/errmsg.h"

static bool level_ok(int level)
{
	return level == URAID_LEVEL_RAID1 || level == URAID_LEVEL_RAID4 ||
	       level == URAID_LEVEL_RAID5 || level == URAID_LEVEL_RAID6 ||
	       level == URAID_LEVEL_RAID10;
}

/* The size mdadm sizes the bitmap for: the per-member size, for raid10
 * (whole KiB) * raid_disks / copies (mdadm's Create/Grow). */
static uint64_t mdadm_bits_sectors(const struct eng_array *a)
{
	if (a->geo.level != URAID_LEVEL_RAID10)
		return a->geo.dev_sectors;
	uint64_t copies = (a->geo.layout & 0xff) * ((a->geo.layout >> 8) & 0xff);
	if (!copies)
		return a->array_sectors;
	return a->geo.dev_sectors / 2 * (uint64_t)a->geo.raid_disks / copies * 2;
}

static bool used(const struct eng_array *a, int i)
{
	const struct eng_member *em = a->mem[i];
	return em->m && em->role >= 0 && em->role < a->geo.raid_disks && a->slot[em->role] == i &&
	       (em->state == URAID_MEMBER_IN_SYNC || em->state == URAID_MEMBER_REBUILDING);
}

/* One plan for all members: each member's own room, the largest chunk any
 * of them needs (every member must hold the same bitmap). */
static int plan_all(struct eng_array *a, uint32_t chunk_bytes, struct md_bitmap_plan *plan,
                    char *err, size_t errlen)
{
	uint64_t bs = mdadm_bits_sectors(a);
	uint32_t chunk = chunk_bytes;
	memset(plan, 0, sizeof(*plan));
	for (int pass = 0; pass < 2; pass++) {
		bool first = true;
		for (int i = 0; i < a->nmem; i++) {
			if (!used(a, i))
				continue;
			struct md_bitmap_plan p;
			int rc = md_bitmap_plan_add(&a->mem[i]->sb, bs, chunk, &p);
			if (rc == -EINVAL)
				return errmsg(err, errlen, rc,
				              "%s: bitmap chunk %u bytes is too small for the room "
				              "mdadm leaves there",
				              a->mem[i]->m->name, chunk);
			if (rc < 0)
				return errmsg(err, errlen, rc,
				              "%s: no room for a bitmap next to the %s superblock",
				              a->mem[i]->m->name,
				              md_sb_version_name(a->ref.version));
			if (first || p.chunksize > plan->chunksize)
				*plan = p;
			first = false;
		}
		if (first)
			return errmsg(err, errlen, -EIO, "no member in use to put a bitmap on");
		/* Second pass with the chunk fixed: every member gets the same
		 * offset (1.0's depends on the number of bits). */
		if (chunk == plan->chunksize)
			break;
		chunk = plan->chunksize;
	}
	return 0;
}

int eng_bitmap_add(struct eng_array *a, uint32_t chunk_bytes, char *err, size_t errlen)
{
	if (!a)
		return -EINVAL;
	if (a->readonly)
		return errmsg(err, errlen, -EROFS, "array is read-only");
	if (!level_ok(a->geo.level))
		return errmsg(err, errlen, -EOPNOTSUPP, "internal bitmaps on %s are not supported",
		              level_name(a->geo.level));
	if (chunk_bytes && (chunk_bytes < 4096 || (chunk_bytes & (chunk_bytes - 1))))
		return errmsg(err, errlen, -EINVAL,
		              "bitmap chunk %u is not a power of two of at least 4 KiB",
		              chunk_bytes);
	eng_lock(a);
	int rc = 0;
	if (a->log == &eng_log_bitmap || (a->ref.feature_map & MD_FEATURE_BITMAP_OFFSET)) {
		rc = errmsg(err, errlen, -EEXIST, "the array already has a bitmap");
		goto out;
	}
	/* md keeps one consistency policy; mdadm's Grow_addbitmap refuses a
	 * PPL array in these words (the log is named by the superblock's
	 * feature bits: this file does not know the PPL's descriptor). */
	if (a->ref.feature_map & (MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS)) {
		rc = errmsg(err, errlen, -EINVAL, "Cannot add bitmap to array with PPL");
		goto out;
	}
	if (a->log || (a->ref.feature_map & MD_FEATURE_JOURNAL)) {
		rc = errmsg(
		    err, errlen, -EINVAL,
		    "the array has a write journal: md allows a journal or a bitmap, not both");
		goto out;
	}
	struct md_bitmap_plan plan = {0};
	rc = plan_all(a, chunk_bytes, &plan, err, errlen);
	if (rc < 0)
		goto out;
	struct md_bitmap_sb sb = {
	    .magic = MD_BITMAP_MAGIC,
	    .version = MD_BITMAP_V_LE,
	    .events = a->events,
	    .events_cleared = a->events,
	    .chunksize = plan.chunksize,
	    .daemon_sleep = MD_BITMAP_DEFAULT_DELAY,
	};
	md_bitmap_uuid(&a->ref, sb.uuid);
	rc = eng_bitmap_alloc(a, &sb, err, errlen);
	if (rc < 0)
		goto out;
	a->log = &eng_log_bitmap;
	struct eng_bitmap *b = eng_bitmap_of(a);
	char why[200];
	for (int i = 0; i < a->nmem; i++) {
		if (!used(a, i))
			continue;
		rc = md_bitmap_check_place(&a->mem[i]->sb, plan.bitmap_offset, a->geo.dev_sectors,
		                           b->img_len, why, sizeof(why));
		if (rc < 0) {
			eng_bitmap_free(a);
			a->log = NULL;
			errmsg(err, errlen, rc, "%s: %s", a->mem[i]->m->name, why);
			goto out;
		}
	}
	/* A pending resync must cover everything: all bits dirty then. */
	if (a->resync_offset != MD_RESYNC_NONE)
		memset(b->img + MD_BITMAP_SB_BYTES, 0xff, b->img_len - MD_BITMAP_SB_BYTES);
	/* Bitmap first, then the superblocks that point at it, then the
	 * bitmap again with their events. */
	a->ref.bitmap_offset = plan.bitmap_offset;
	rc = eng_bitmap_write_all(a);
	if (rc == 0) {
		a->ref.feature_map |= MD_FEATURE_BITMAP_OFFSET;
		if (a->ref.version == MD_SB_0_90)
			a->ref.v0.state |= 1u << MD_SB0_BITMAP_PRESENT;
		rc = eng_sb_write_all(a);
	}
	if (rc == 0)
		rc = eng_bitmap_write_all(a);
	if (rc < 0) {
		a->ref.feature_map &= ~MD_FEATURE_BITMAP_OFFSET;
		a->ref.v0.state &= ~(1u << MD_SB0_BITMAP_PRESENT);
		eng_bitmap_free(a);
		a->log = NULL;
		errmsg(err, errlen, rc, "writing the bitmap failed");
	}
out:
	eng_unlock(a);
	return rc;
}
