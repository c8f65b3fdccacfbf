/* Discard and write-zeroes of an md array. A write-zeroes reads back as
 * zeros afterwards at every level. A discard (uraid_discard) is passed
 * down as md does: linear, raid0, raid1 and raid10 discard every copy on
 * its member (MEMBER_ZERO_DISCARD: BLKDISCARD, punched holes), so what it
 * reads back is the members' business; raid4/5/6 zero whole stripes (a
 * deallocating write-zeroes only where every member guarantees zeros) and
 * write the rest, since parity must stay true. The core marks the array
 * dirty and tells the log (a write-intent bitmap sets its bits first) as
 * for a write; the personality's zero op hands what it can to the members
 * (member_write_zeroes) and writes the rest. A log that takes every write
 * (journal, partial parity log) gets the zeros as writes: what it logs
 * stays what the members hold. */
#include <errno.h>
#include <stdlib.h>

#include "engine/core/log.h"
#include "engine/md.h"

#define ZERO_BUF_BYTES (1u << 20)

/* Every slot in sync on a member that zeroes what it discards. */
static bool members_zero(const struct eng_array *a)
{
	for (int r = 0; r < a->geo.raid_disks; r++) {
		if (a->slot[r] < 0 || a->mem[a->slot[r]]->state != URAID_MEMBER_IN_SYNC)
			return false;
		if (!eng_data_member(a->mem[a->slot[r]])->discard_zeroes)
			return false;
	}
	return true;
}

static bool discard_safe_locked(const struct eng_array *a)
{
	return members_zero(a) && !(a->log && a->log->write) && !a->rs;
}

bool eng_discard_safe(struct eng_array *a)
{
	eng_lock(a);
	bool ok = discard_safe_locked(a);
	eng_unlock(a);
	return ok;
}

/* Zeros written through the array's own write path (eng_write), a buffer
 * at a time: what a log that takes every write (journal, partial parity
 * log) must see, what a reshape splits at its position, and the write that
 * turns a read-auto array read-write. */
static int zero_by_write(struct eng_array *a, uint64_t off, uint64_t len)
{
	size_t cap = len < ZERO_BUF_BYTES ? (size_t)len : ZERO_BUF_BYTES;
	uint8_t *z = eng_alloc(cap);
	if (!z)
		return -ENOMEM;
	int rc = 0;
	while (len && rc == 0) {
		size_t n = len < cap ? (size_t)len : cap;
		rc = eng_write(a, z, n, off);
		off += n;
		len -= n;
	}
	free(z);
	return rc;
}

int eng_zero(struct eng_array *a, uint64_t off, uint64_t len, unsigned flags)
{
	if (__atomic_load_n(&a->broken, __ATOMIC_RELAXED))
		return -EIO;
	if (off % 512 || len % 512)
		return -EINVAL;
	if (off > a->array_sectors * 512 || len > a->array_sectors * 512 - off)
		return -ERANGE;
	if (len == 0)
		return 0;
	bool fast = flags & URAID_ZERO_FAST;
	__atomic_add_fetch(&a->fg_ios, 1, __ATOMIC_RELAXED);
	uint64_t lsec = off / 512, nsec = len / 512;
	eng_lock(a);
	if ((a->log && a->log->write) || a->rs || a->readonly) {
		/* journal/PPL, a reshape's two geometries, or read-auto (a
		 * plain read-only array is refused by eng_write) */
		eng_unlock(a);
		return fast ? -ENOTSUP : zero_by_write(a, off, len);
	}
	int rc = 0;
	if (fast && !members_zero(a))
		rc = -ENOTSUP; /* NBD's fast zero: not when it would write the zeros */
	__atomic_store_n(&a->last_write_ns, eng_now_ns(), __ATOMIC_RELAXED);
	if (rc == 0)
		rc = eng_mark_dirty(a);
	if (rc == 0)
		rc = eng_log_write_start(a, lsec, nsec);
	unsigned mflags = ((flags & URAID_ZERO_MAY_TRIM) ? MEMBER_ZERO_UNMAP : 0) |
	                  ((flags & ENG_ZERO_DISCARD) ? MEMBER_ZERO_DISCARD : 0);
	if (rc == 0)
		rc = a->pers->zero ? a->pers->zero(a, lsec, nsec, mflags)
		                   : eng_zero_by_write(a, lsec, nsec);
	if (rc == 0 && a->broken)
		rc = -EIO;
	eng_unlock(a);
	return rc;
}
