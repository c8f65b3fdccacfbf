/* The raid456 personality (raid4, raid5, raid6): requests through the
 * stripe cache when it is on (stripe_cache*.c) or straight to the members
 * (stripe.c), and sync work by stripe rows (sync.c). */
#include <errno.h>
#include <string.h>

#include "engine/raid456/raid456.h"
#include "engine/raid456/stripe_cache.h"
#include "engine/sync/sync.h"
#include "util/errmsg.h"

static int r456_start(struct eng_array *a, char *err, size_t errlen)
{
	a->pp = uraid_parity_get(NULL);
	if (!a->pp)
		return errmsg(err, errlen, -ENOSYS, "no parity backend available");
	return 0;
}

static bool r456_redundant(const struct eng_array *a)
{
	(void)a;
	return true;
}

static int r456_read(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	int rc = eng_parity_read_members(a, buf, lsec, nsec);
	/* Cached writes are newer than what the members hold. */
	if (rc == 0)
		eng_scache_overlay(a, buf, lsec, nsec);
	return rc;
}

static int r456_write(struct eng_array *a, const struct eng_req *rq, const uint8_t *buf,
                      uint64_t lsec, uint64_t nsec)
{
	/* The stripe cache takes the locked path's writes (it changes only
	 * under eng_lock); it sends whole stripes straight through. */
	if (!rq->shared && eng_scache_active(a))
		return eng_scache_write(a, rq, buf, lsec, nsec);
	return eng_parity_write_direct(a, rq, buf, lsec, nsec);
}

/* Whole stripes on members that all serve them (every slot in sync, no
 * bad block recorded there): zeroed on every member, data and parity
 * alike, since zeros are the parity of zeros (raid6: P = Q = 0). The
 * cache's heads of those stripes are dropped first. Where a member does not
 * zero what it discards, member_write_zeroes zeroes without unmapping.
 * Partial stripes and stripes of a degraded array are written (parity
 * updated): nothing redundancy still needs is discarded. */
static bool r456_whole_ok(const struct eng_array *a, uint64_t msec, uint64_t n)
{
	for (int r = 0; r < a->geo.raid_disks; r++)
		if (a->slot[r] < 0 || a->mem[a->slot[r]]->state != URAID_MEMBER_IN_SYNC ||
		    eng_role_bad(a, r, msec, n))
			return false;
	return true;
}

static int r456_zero(struct eng_array *a, uint64_t lsec, uint64_t nsec, unsigned mflags)
{
	/* Parity needs zeros: a discard is a write-zeroes here. */
	mflags &= ~MEMBER_ZERO_DISCARD;
	uint64_t w = eng_stripe_width(a), chunk = a->geo.chunk_sectors;
	uint64_t head = lsec % w ? w - lsec % w : 0;
	if (head > nsec)
		head = nsec;
	int rc = head ? eng_zero_by_write(a, lsec, head) : 0;
	lsec += head;
	nsec -= head;
	uint64_t s0 = lsec / w, ns = nsec / w;
	if (rc == 0 && ns) {
		if (r456_whole_ok(a, s0 * chunk, ns * chunk)) {
			eng_scache_drop(a, s0, ns);
			for (int r = 0; r < a->geo.raid_disks; r++)
				eng_member_zero(a, r, s0 * chunk, ns * chunk, mflags);
			if (!eng_array_readable(a))
				rc = -EIO;
		} else {
			rc = eng_zero_by_write(a, lsec, ns * w);
		}
	}
	if (rc == 0 && nsec > ns * w)
		rc = eng_zero_by_write(a, lsec + ns * w, nsec - ns * w);
	return rc;
}

/* With a stripe cache only whole stripes it holds nothing of bypass the
 * lock; everything else goes into the cache (locked path). */
static bool r456_fast_write_ok(const struct eng_array *a, uint64_t lsec, uint64_t nsec)
{
	if (!eng_scache_active(a))
		return true;
	uint64_t w = eng_stripe_width(a);
	return lsec % w == 0 && nsec % w == 0 && !eng_scache_holds(a, lsec / w, (lsec + nsec) / w);
}

static uint64_t r456_lock_unit(const struct eng_array *a)
{
	return eng_stripe_width(a);
}

static unsigned r456_cache_size(const struct eng_array *a)
{
	return eng_scache_size(a);
}

static uint64_t r456_sync_size(const struct eng_array *a)
{
	return a->geo.dev_sectors;
}

/* Whole stripe rows: a partial write may rewrite parity anywhere in it. */
static void r456_sync_range(const struct eng_array *a, uint64_t lsec, uint64_t nsec, uint64_t *p0,
                            uint64_t *p1)
{
	uint64_t chunk = a->geo.chunk_sectors, w = eng_stripe_width(a);
	*p0 = lsec / w * chunk;
	*p1 = ((lsec + nsec - 1) / w + 1) * chunk;
}

/* Every member's rows of the batch are held at once; whole chunk rows where
 * they fit, so no stripe is split mid-run. */
static uint64_t r456_sync_batch(const struct eng_array *a, enum uraid_sync_action act)
{
	(void)act;
	uint64_t n = SYNC_BATCH_BYTES / 512 / (uint64_t)a->geo.raid_disks;
	if (n > SYNC_BATCH_SECTORS)
		n = SYNC_BATCH_SECTORS;
	uint64_t chunk = a->geo.chunk_sectors;
	if (chunk && n >= chunk)
		n -= n % chunk;
	return n;
}

/* `role`'s member sectors rebuilt from the other members of each stripe. */
static int r456_role_data(struct eng_array *a, int role, uint8_t *buf, uint64_t pos, uint64_t n)
{
	uint64_t chunk = a->geo.chunk_sectors;
	for (uint64_t end = pos + n; pos < end;) {
		uint64_t len = chunk - pos % chunk;
		if (len > end - pos)
			len = end - pos;
		struct eng_stripe_buf sb;
		int rc = eng_stripe_buf_init(a, &sb, pos / chunk, len);
		if (rc < 0)
			return rc;
		rc = eng_stripe_read_all(a, &sb, pos % chunk, NULL);
		int p = 0;
		while (rc == 0 && p < eng_stripe_npos(&sb) && sb.pos_role[p] != role)
			p++;
		if (rc == 0 && p < eng_stripe_npos(&sb))
			memcpy(buf, sb.blk[p], len * 512);
		eng_stripe_buf_free(a, &sb);
		if (rc < 0)
			return rc;
		buf += len * 512;
		pos += len;
	}
	return 0;
}

/* As md's raid5 sync_request: missing as many slots as there are parity
 * blocks, nothing is left to compare. */
/* raid5_resize: whole chunks per member. */
static uint64_t r456_resize(const struct eng_array *a, uint64_t sectors)
{
	uint64_t c = a->geo.chunk_sectors;
	return c ? sectors / c * c : sectors;
}

static bool r456_resync_pointless(const struct eng_array *a)
{
	int insync = 0;
	for (int r = 0; r < a->geo.raid_disks; r++)
		insync += a->slot[r] >= 0 && a->mem[a->slot[r]]->state == URAID_MEMBER_IN_SYNC;
	return a->geo.raid_disks - insync >= eng_nparity(a);
}

const struct eng_pers eng_pers_raid456 = {
    .name = "raid456",
    .start = r456_start,
    .stop = eng_scache_free,
    .consistency = true,
    .redundant = r456_redundant,
    .read = r456_read,
    .write = r456_write,
    .zero = r456_zero,
    .overlay = eng_scache_overlay,
    .fast_write_ok = r456_fast_write_ok,
    .lock_unit = r456_lock_unit,
    .drain = eng_scache_drain,
    .set_cache = eng_scache_set,
    .cache_size = r456_cache_size,
    .cache_stats = eng_scache_stats,
    .sync_size = r456_sync_size,
    .sync_range = r456_sync_range,
    .sync_batch = r456_sync_batch,
    .resync = sync_parity_batch,
    .recover = sync_parity_batch,
    .role_data = r456_role_data,
    .resync_pointless = r456_resync_pointless,
    .resize = r456_resize,
    .reshape = eng_r456_reshape,
};
