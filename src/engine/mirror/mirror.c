/* The mirror personality (raid1, raid10): every logical sector has
 * a->ncopies copies (layout_ops.map names them); requests in io.c, resync,
 * check, repair and recovery in sync.c. Resync positions are logical
 * sectors, as md's raid1/raid10 sync_request walks them. */
#include <errno.h>

#include "engine/mirror/mirror.h"
#include "engine/sync/sync.h"

static bool mirror_redundant(const struct eng_array *a)
{
	return a->ncopies > 1;
}

/* Mirrors not known consistent: md reads one fixed copy there, and so does
 * the locked path. */
static bool mirror_fast_read_ok(const struct eng_array *a)
{
	return a->resync_offset == MD_RESYNC_NONE && a->action == URAID_SYNC_IDLE;
}

static uint64_t mirror_lock_unit(const struct eng_array *a)
{
	(void)a;
	return ENG_REGION_SECTORS;
}

static uint64_t mirror_sync_size(const struct eng_array *a)
{
	return a->array_sectors;
}

static void mirror_sync_range(const struct eng_array *a, uint64_t lsec, uint64_t nsec, uint64_t *p0,
                              uint64_t *p1)
{
	(void)a;
	*p0 = lsec;
	*p1 = lsec + nsec;
}

/* A resync reads every copy of its positions; a recovery reads one copy
 * and writes the rebuilt member. */
static uint64_t mirror_sync_batch(const struct eng_array *a, enum uraid_sync_action act)
{
	uint64_t per = act == URAID_SYNC_RECOVER ? 1 : (uint64_t)(a->ncopies > 0 ? a->ncopies : 1);
	uint64_t n = SYNC_BATCH_BYTES / 512 / per;
	return n > SYNC_BATCH_SECTORS ? SYNC_BATCH_SECTORS : n;
}

/* Every writable copy of each mapped piece zeroed on its member (a
 * rebuilding one too: zeros are its data from now on), or for a discard
 * discarded there as md's raid1/raid10 pass it down (MEMBER_ZERO_DISCARD;
 * copies on members that do not zero what they discard may then differ,
 * and check counts them as md's does). A copy that fails is failed, as a
 * write error without a bad block log would. */
static int mirror_zero(struct eng_array *a, uint64_t lsec, uint64_t nsec, unsigned mflags)
{
	while (nsec) {
		struct layout_loc loc;
		uint64_t len;
		if (a->ops->map(&a->geo, lsec, 0, &loc, &len) < 0)
			return -EIO;
		if (len > nsec)
			len = nsec;
		for (int c = 0; c < a->ncopies; c++) {
			uint64_t l;
			if (a->ops->map(&a->geo, lsec, c, &loc, &l) < 0)
				return -EIO;
			if (eng_role_writable(a, loc.role))
				eng_member_zero(a, loc.role, loc.sector, len, mflags);
		}
		if (!eng_array_readable(a))
			return -EIO;
		lsec += len;
		nsec -= len;
	}
	return 0;
}

/* raid1 down to one in-sync copy (as md's raid1 sync_request); raid10
 * always resyncs what it has. */
/* raid1_resize keeps the size asked; raid10_resize (near and offset
 * layouts only) keeps calc_sectors' whole chunks: the array's chunks, then
 * the chunks each member holds, copies included, rounded up. raid1 is the
 * geometry without a chunk. */
static uint64_t mirror_resize(const struct eng_array *a, uint64_t sectors)
{
	const struct layout_geometry *g = &a->geo;
	uint64_t c = g->chunk_sectors, near = g->layout & 0xff, far = (g->layout >> 8) & 0xff;
	if (!c)
		return sectors;
	if (!near || !far || (far > 1 && !((g->layout >> 16) & 1)))
		return 0;
	uint64_t n = (uint64_t)g->raid_disks;
	uint64_t chunks = sectors / c / far * n / near;
	return (chunks * near * far + n - 1) / n * c;
}

static bool mirror_resync_pointless(const struct eng_array *a)
{
	if (a->geo.level != URAID_LEVEL_RAID1)
		return false;
	int insync = 0;
	for (int r = 0; r < a->geo.raid_disks; r++)
		insync += a->slot[r] >= 0 && a->mem[a->slot[r]]->state == URAID_MEMBER_IN_SYNC;
	return insync <= 1;
}

const struct eng_pers eng_pers_mirror = {
    .name = "mirror",
    .consistency = true,
    .redundant = mirror_redundant,
    .read = eng_mirror_read,
    .write = eng_mirror_write,
    .zero = mirror_zero,
    .fast_read_ok = mirror_fast_read_ok,
    .lock_unit = mirror_lock_unit,
    .sync_size = mirror_sync_size,
    .sync_range = mirror_sync_range,
    .sync_batch = mirror_sync_batch,
    .resync = sync_mirror_batch,
    .recover = sync_mirror_recover,
    .role_data = sync_mirror_role_data,
    .resync_pointless = mirror_resync_pointless,
    .resize = mirror_resize,
    .reshape = eng_mirror_reshape,
};
