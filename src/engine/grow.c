/* The grows of a running md array that move no data, as md does them when
 * mdadm --grow asks: the write-intent bitmap removed (added by
 * engine/bitmap/bitmap_add.c), the per-member size (md's update_size and
 * the personalities' resize: the new region is resynced), the exported
 * array size (md's array_size: in memory only, never in a superblock) and
 * raid1's number of mirrors (raid1_reshape: spares fill the new slots and
 * are recovered; fewer slots only when the removed ones are empty). */
#include <errno.h>
#include <string.h>

#include "engine/bitmap/bitmap.h"
#include "engine/core/log.h"
#include "engine/md.h"
#include "engine/sync/sync.h"
#include "util/errmsg.h"

static bool sync_busy(const struct eng_array *a)
{
	if (a->action != URAID_SYNC_IDLE)
		return true;
	for (int i = 0; i < a->nmem; i++)
		if (a->mem[i]->state == URAID_MEMBER_REBUILDING)
			return true;
	return false;
}

static int bitmap_remove(struct eng_array *a, char *err, size_t errlen)
{
	if (a->log != &eng_log_bitmap)
		return errmsg(err, errlen, -ENOENT, "no bitmap found");
	if (sync_busy(a))
		return errmsg(err, errlen, -EBUSY, "a resync or recovery is running");
	/* What the bitmap covered is on the members before the superblocks
	 * stop naming it: from then on only the dirty flag protects them. */
	for (int r = 0; r < a->geo.raid_disks; r++) {
		struct member *m = eng_role_member(a, r);
		if (m && eng_role_writable(a, r) && member_flush(m) < 0)
			eng_member_failed(a, r, "flush failed");
	}
	/* As md's super_1_sync/super_90_sync without a bitmap: the feature
	 * bit (0.90: the state bit) goes, the offset word stays as it was. */
	uint32_t features = a->ref.feature_map;
	uint32_t state0 = a->ref.v0.state;
	a->ref.feature_map &= ~MD_FEATURE_BITMAP_OFFSET;
	a->ref.v0.state &= ~(1u << MD_SB0_BITMAP_PRESENT);
	a->log = NULL;
	int rc = eng_sb_write_all(a);
	if (rc < 0) {
		a->log = &eng_log_bitmap;
		a->ref.feature_map = features;
		a->ref.v0.state = state0;
		return errmsg(err, errlen, rc, "writing the superblocks failed");
	}
	eng_bitmap_free(a);
	return 0;
}

/* Sectors this member can give the array (md's rdev->sectors after mdadm
 * sets each member's size to "max", super_1_rdev_size_change and
 * super_90_rdev_size_change): 1.1/1.2 everything after the data offset;
 * 1.0 up to the superblock less md's bitmap room and 4 KiB for the bad
 * block log; 0.90 up to the superblock. The superblock stays where the
 * member's size at assembly puts it. */
static uint64_t member_room(const struct eng_array *a, const struct eng_member *em)
{
	uint64_t s = em->m->size / 512;
	if (a->ref.version == MD_SB_1_1 || a->ref.version == MD_SB_1_2)
		return s > em->sb.data_offset ? s - em->sb.data_offset : 0;
	if (a->ref.version == MD_SB_1_0) {
		/* super_1_choose_bm_space */
		uint64_t bm = s < 128                               ? 0
		              : s - 128 >= 200ull * 1024 * 1024 * 2 ? 256
		              : s - 8 > 8ull * 1024 * 1024 * 2      ? 128
		                                                    : 8;
		uint64_t end = em->sb.super_offset;
		return end > bm + 8 + em->sb.data_offset ? end - bm - 8 - em->sb.data_offset : 0;
	}
	return em->sb.data_size;
}

static bool is_1x(const struct eng_array *a)
{
	return a->ref.version != MD_SB_0_90;
}

static bool member_counts(const struct eng_member *em)
{
	return em->m && !em->left_out && em->state != URAID_MEMBER_FAULTY;
}

static int grow_size(struct eng_array *a, uint64_t want, char *err, size_t errlen)
{
	if (!a->pers->resize)
		return errmsg(err, errlen, -EINVAL, "%s has no per-member size to change",
		              a->ops->name);
	/* An internal bitmap is resized with the array (raid1/5/10_resize ->
	 * md_bitmap_resize); the other logs are not. */
	if (a->log && a->log != &eng_log_bitmap)
		return errmsg(err, errlen, -EBUSY, "the array has a %s",
		              a->log->name ? a->log->name : "log");
	if (sync_busy(a))
		return errmsg(err, errlen, -EBUSY, "a resync or recovery is running");
	bool max = want == 0;
	uint64_t room = UINT64_MAX;
	for (int i = 0; i < a->nmem; i++)
		if (member_counts(a->mem[i]) && member_room(a, a->mem[i]) < room)
			room = member_room(a, a->mem[i]);
	if (room == UINT64_MAX)
		return errmsg(err, errlen, -ENODEV, "no working member");
	if (max)
		want = room;
	if (want > room)
		return errmsg(err, errlen, -ENOSPC,
		              "%lluK asked, the smallest member has room for %lluK",
		              (unsigned long long)want / 2, (unsigned long long)room / 2);
	uint64_t dev = a->pers->resize(a, want);
	if (dev == 0)
		return errmsg(err, errlen, -EINVAL,
		              "size %lluK holds no whole chunk, or %s cannot change size here",
		              (unsigned long long)want / 2, a->ops->name);
	if (a->ref.version == MD_SB_0_90 && dev / 2 > UINT32_MAX)
		return errmsg(err, errlen, -EOVERFLOW,
		              "0.90 metadata records at most 4 TiB per member");
	struct layout_geometry g = a->geo;
	g.dev_sectors = dev;
	char e[256];
	int rc = a->ops->validate(&g, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s", e);
	uint64_t new_sectors = a->ops->array_sectors(&g);
	/* md keeps an array size set by hand (array_size) unless it no longer
	 * fits; mdadm asks for it to be set below the new size first. */
	uint64_t exported = a->array_sectors;
	if (new_sectors < exported)
		return errmsg(err, errlen, -ENOSPC,
		              "this change will reduce the size of the array: set --array-size "
		              "to %lluK or less first",
		              (unsigned long long)new_sectors / 2);
	uint64_t old_dev = a->geo.dev_sectors;
	uint64_t old_sync = a->pers->sync_size(a);
	if (dev == old_dev)
		return 0;
	uint64_t old_ref = a->ref.size;
	struct md_sb saved[ENG_MAX_MEMBERS];
	for (int i = 0; i < a->nmem; i++)
		saved[i] = a->mem[i]->sb;
	/* mdadm writes each active member's size first (sysfs dev-N/size):
	 * 1.x records it as data_size, never below what the array uses. */
	if (is_1x(a))
		for (int i = 0; i < a->nmem; i++) {
			struct eng_member *em = a->mem[i];
			if (!member_counts(em) || em->role < 0)
				continue;
			uint64_t r = member_room(a, em);
			uint64_t ds = max ? r : want;
			if (ds > r)
				ds = r;
			if (ds >= old_dev && ds >= dev)
				em->sb.data_size = ds;
		}
	uint64_t old_resync = a->resync_offset;
	a->geo.dev_sectors = dev;
	a->ref.size = dev;
	if (!a->external_size || a->array_sectors > new_sectors)
		a->array_sectors = new_sectors;
	/* The new region holds no parity or copies yet: resync from the old
	 * end (md's recovery_cp = old size; raid10 in array sectors). */
	if (dev > old_dev && a->resync_offset > old_sync)
		a->resync_offset = old_sync;
	/* The bitmap follows the new sync size: a larger one is written
	 * before the superblocks name the size, a smaller one after. */
	rc = a->log == &eng_log_bitmap ? eng_bitmap_resize(a, eng_bitmap_coverage(a), err, errlen)
	                               : 0;
	if (rc == 0 && (rc = eng_sb_write_all(a)) < 0)
		errmsg(err, errlen, rc, "writing the superblocks failed");
	if (rc < 0) {
		a->geo.dev_sectors = old_dev;
		a->ref.size = old_ref;
		a->array_sectors = exported;
		a->resync_offset = old_resync;
		for (int i = 0; i < a->nmem; i++)
			a->mem[i]->sb = saved[i];
		char e2[64];
		if (a->log == &eng_log_bitmap)
			eng_bitmap_resize(a, old_sync, e2, sizeof(e2));
		return rc;
	}
	/* The bitmap's header as fresh as the superblocks, its stale flag (a
	 * chunk change) gone: md_update_sb writes it with them. A failed
	 * write fails that member; the size stands. */
	if (a->log == &eng_log_bitmap)
		(void)eng_bitmap_write_header(a);
	eng_sync_schedule(a);
	pthread_cond_broadcast(&a->cond);
	return 0;
}

static int set_array_size(struct eng_array *a, uint64_t sectors, char *err, size_t errlen)
{
	uint64_t full = a->ops->array_sectors(&a->geo);
	if (sectors == 0) {
		a->external_size = false;
		a->array_sectors = full;
		return 0;
	}
	if (sectors > full)
		return errmsg(err, errlen, -E2BIG, "%lluK is larger than the array's %lluK",
		              (unsigned long long)sectors / 2, (unsigned long long)full / 2);
	a->external_size = true;
	a->array_sectors = sectors;
	return 0;
}

/* raid1_reshape: the mirrors present keep their order and are numbered
 * from slot 0 up; more slots are filled from the spares and recovered. */
static int raid1_disks(struct eng_array *a, int n, char *err, size_t errlen)
{
	if (a->geo.level != URAID_LEVEL_RAID1)
		return errmsg(err, errlen, -EINVAL, "not a raid1");
	if (n < 1 || n > LAYOUT_MAX_MEMBERS ||
	    (a->ref.version == MD_SB_0_90 && n > MD_SB0_MAX_DEVS) ||
	    (a->ref.version != MD_SB_0_90 && n > MD_SB1_MAX_DEVS))
		return errmsg(err, errlen, -EINVAL, "%d devices is out of range", n);
	if (sync_busy(a))
		return errmsg(err, errlen, -EBUSY, "a resync or recovery is running");
	if (n == a->geo.raid_disks)
		return 0;
	int cnt = 0;
	for (int r = 0; r < a->geo.raid_disks; r++)
		cnt += a->slot[r] >= 0;
	if (cnt > n)
		return errmsg(err, errlen, -EBUSY, "%d slots hold members", cnt);
	int old_n = a->geo.raid_disks;
	int old_slot[LAYOUT_MAX_MEMBERS], old_role[ENG_MAX_MEMBERS];
	memcpy(old_slot, a->slot, sizeof(old_slot));
	for (int i = 0; i < a->nmem; i++)
		old_role[i] = a->mem[i]->role;
	int d2 = 0;
	int slot[LAYOUT_MAX_MEMBERS];
	for (int r = 0; r < LAYOUT_MAX_MEMBERS; r++)
		slot[r] = -1;
	for (int r = 0; r < old_n; r++) {
		int i = a->slot[r];
		if (i < 0)
			continue;
		if (n < old_n) {
			a->mem[i]->role = d2;
			slot[d2++] = i;
		} else {
			slot[r] = i;
		}
	}
	/* Replacements follow their slot. */
	for (int i = 0; i < a->nmem; i++) {
		struct eng_member *em = a->mem[i];
		if (!em->replacement || em->role < 0 || em->role >= old_n)
			continue;
		int home = old_slot[em->role];
		if (home >= 0)
			em->role = a->mem[home]->role;
	}
	memcpy(a->slot, slot, sizeof(slot));
	a->geo.raid_disks = n;
	a->ref.raid_disks = (uint32_t)n;
	int rc = eng_sb_write_all(a);
	if (rc < 0) {
		memcpy(a->slot, old_slot, sizeof(old_slot));
		for (int i = 0; i < a->nmem; i++)
			a->mem[i]->role = old_role[i];
		a->geo.raid_disks = old_n;
		a->ref.raid_disks = (uint32_t)old_n;
		return errmsg(err, errlen, rc, "writing the superblocks failed");
	}
	a->ncopies = a->ops->ncopies(&a->geo);
	if (!a->external_size)
		a->array_sectors = a->ops->array_sectors(&a->geo);
	eng_sync_schedule(a);
	pthread_cond_broadcast(&a->cond);
	return 0;
}

int eng_grow(struct eng_array *a, enum uraid_grow_what what, uint64_t value, char *err,
             size_t errlen)
{
	if (a->readonly)
		return errmsg(err, errlen, -EROFS, "array is read-only");
	if (what == URAID_GROW_BITMAP_INTERNAL)
		return eng_bitmap_add(a, (uint32_t)value, err, errlen);
	eng_lock(a);
	int rc;
	switch (what) {
	case URAID_GROW_BITMAP_NONE: rc = bitmap_remove(a, err, errlen); break;
	case URAID_GROW_SIZE: rc = grow_size(a, value, err, errlen); break;
	case URAID_GROW_ARRAY_SIZE: rc = set_array_size(a, value, err, errlen); break;
	case URAID_GROW_RAID_DISKS:
		rc = value > INT32_MAX ? errmsg(err, errlen, -EINVAL, "absurd number of devices")
		                       : raid1_disks(a, (int)value, err, errlen);
		break;
	default: rc = errmsg(err, errlen, -EINVAL, "unknown grow %d", (int)what);
	}
	eng_unlock(a);
	return rc;
}
