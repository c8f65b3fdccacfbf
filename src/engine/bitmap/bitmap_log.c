/* The write-intent bitmap behind the log interface (core/log.h): bits set
 * before writes reach the members (bitmap.c, bitmap_fast.c for the shared
 * path), cleared once a flush made them durable, and read back to narrow a
 * resync and the recovery of a re-added member. */
#include "engine/bitmap/bitmap.h"

static int bm_synced(struct eng_array *a, bool stopping)
{
	(void)stopping; /* marked clean at a stop: every bit goes */
	return eng_bitmap_clear_synced(a);
}

static int bm_cover(struct eng_array *a)
{
	uint64_t want = eng_bitmap_coverage(a);
	if (want <= eng_bitmap_of(a)->blocks)
		return 0;
	char e[160];
	return eng_bitmap_resize(a, want, e, sizeof(e));
}

uint64_t eng_bitmap_skipped(struct eng_array *a, bool recovery)
{
	eng_lock(a);
	const struct eng_bitmap *b = a->log == &eng_log_bitmap ? eng_bitmap_of(a) : NULL;
	uint64_t n = !b ? 0 : recovery ? b->recovery_skipped : b->resync_skipped;
	eng_unlock(a);
	return n;
}

const struct eng_log_ops eng_log_bitmap = {
    .name = "write-intent bitmap",
    .present = eng_bitmap_present,
    .load = eng_bitmap_load,
    .free = eng_bitmap_free,
    .write_start = eng_bitmap_start_write,
    .write_ready = eng_bitmap_covered,
    .write_prepare = eng_bitmap_prepare,
    .synced = bm_synced,
    .cover = bm_cover,
    .next_dirty = eng_bitmap_next_dirty,
    .full_recovery = eng_bitmap_full_recovery,
    .covers_since = eng_bitmap_covers_since,
    .recover_marked = eng_bitmap_recover_marked,
    .status = eng_bitmap_status,
};
