/* Write-intent bitmap of a running array (md's internal bitmap, 1.1/1.2
 * metadata, raid1/4/5/6). One bit per bitmap chunk of member sectors
 * (sync_size = the per-member size). A bit is set and the bitmap written
 * and flushed on every member before a write reaches the members; bits are
 * cleared only after a flush of every member made the data durable (uraid
 * clears at uraid_flush/stop, the earliest safe moment; md waits
 * daemon_sleep). After an unclean stop, a bitmap as fresh as the superblocks
 * limits the resync to the dirty chunks; a stale one means a full resync
 * (the kernel's rule). Caller holds the array lock in every function. */
#ifndef URAID_ENGINE_BITMAP_H
#define URAID_ENGINE_BITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meta/md_bitmap.h"

struct uraid_array;

struct eng_bitmap {
	struct md_bitmap_sb sb;
	uint64_t nbits;
	uint64_t chunk_sectors;
	uint8_t *img; /* header + bits, as written */
	size_t img_len;
	bool use_for_resync;     /* loaded fresh from an unclean array */
	uint64_t resync_skipped; /* sectors the last resync did not need to touch */
};

/* Can the engine keep a bitmap of this metadata version and level? */
bool eng_bitmap_supported(int md_version, int level);
/* At assembly: load the bitmap when the superblock says there is one. */
int eng_bitmap_load(struct uraid_array *a, char *err, size_t errlen);
void eng_bitmap_free(struct uraid_array *a);
/* Before a write of logical sectors [lsec, lsec+nsec) reaches members. */
int eng_bitmap_start_write(struct uraid_array *a, uint64_t lsec, uint64_t nsec);
/* Flush every member, then clear all bits (when nothing is degraded) and
 * write the bitmap with the current events. */
int eng_bitmap_clear_synced(struct uraid_array *a);
/* Resync: the first position >= pos (member sectors) inside a dirty chunk,
 * or `end`; *len receives how far that dirty run may go. */
uint64_t eng_bitmap_next_dirty(struct uraid_array *a, uint64_t pos, uint64_t end, uint64_t *len);

#endif
