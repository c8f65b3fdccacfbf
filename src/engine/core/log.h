/* A log: what md keeps beside the data so that an unclean stop does not
 * cost a full resync or lose parity consistency: the write-intent bitmap
 * (engine/bitmap/) or the write journal (engine/journal/), and next the
 * partial parity log. md allows one per array (its consistency policy), so
 * an array has at most one: a->log, its state in a->log_state. The log
 * types are listed in engine/logs.c, which loads the one the superblocks
 * name.
 *
 * Writes reach a log through the core: the inline hooks below are what the
 * core, the personalities and the sync scheduler call; each does nothing
 * when the array has no log or the log has no such op. Every op runs with
 * eng_lock held unless it says otherwise. */
#ifndef URAID_ENGINE_CORE_LOG_H
#define URAID_ENGINE_CORE_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/core/engine.h"

struct eng_stripe_buf;

struct eng_log_ops {
	const char *name; /* "bitmap", "journal": messages name it */
	/* Is there one of these on the array (superblocks, a log member)?
	 * Then load it, before the first request; the locks are not set up
	 * yet. 0 or a negative errno with a message. */
	bool (*present)(const struct eng_array *a);
	int (*load)(struct eng_array *a, char *err, size_t errlen);
	/* After the locks are set up, before the first request (takes the
	 * lock itself): the journal writes back what replay found. */
	int (*start)(struct eng_array *a, char *err, size_t errlen);
	void (*free)(struct eng_array *a); /* no lock: the array is going */

	/* Writes. */
	/* Takes the whole write of logical sectors [lsec, lsec+nsec) (no
	 * lock held: it takes what it needs) instead of the core's paths. */
	int (*write)(struct eng_array *a, const uint8_t *buf, uint64_t lsec, uint64_t nsec);
	/* Locked path: before a write of [lsec, lsec+nsec) reaches members. */
	int (*write_start)(struct eng_array *a, uint64_t lsec, uint64_t nsec);
	/* Shared path (iolock shared): may this write go to the members now? */
	bool (*write_ready)(struct eng_array *a, uint64_t lsec, uint64_t nsec);
	/* No lock held: make write_ready true; <0: take the locked path. */
	int (*write_prepare)(struct eng_array *a, uint64_t lsec, uint64_t nsec);
	/* A parity write of rows [co, co+nsec of each buffer) of n stripes,
	 * positions in `dirty` (NULL: all): logged, durable on return, before
	 * the members are written. Rows are whole `row_sectors` blocks. */
	int (*log_stripes)(struct eng_array *a, struct eng_stripe_buf *sb, int n, uint64_t co,
	                   const bool *dirty);
	unsigned row_sectors;

	/* Reads. */
	/* Newer data than the members hold (a write-back cache) over buf;
	 * reads_locked: then no read may bypass the lock. */
	bool (*reads_locked)(const struct eng_array *a);
	void (*overlay)(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec);

	/* Flush and stop. */
	/* Before the members are flushed: write out what only the log holds. */
	int (*flush)(struct eng_array *a);
	/* After they were flushed: what is durable needs no log any more
	 * (bits cleared; at a stop the journal's tail moves up). */
	int (*synced)(struct eng_array *a, bool stopping);

	/* Superblocks (core/super.c). */
	/* May the superblocks say clean while writes run (the journal makes
	 * parity right after a crash)? */
	bool (*keeps_clean)(const struct eng_array *a);
	/* The log's own member, if any: its device number and role word for
	 * the role table; -1 when none. */
	int (*role)(const struct eng_array *a, uint16_t *role_word);
	/* After every superblock update of the members. */
	int (*sb_written)(struct eng_array *a);
	/* Before superblocks that make the array's sync range larger are
	 * written: cover it (the bitmap resizes, durable first). */
	int (*cover)(struct eng_array *a);

	/* Background work. */
	/* Resync, or recovery of a re-added member: the first position >= pos
	 * that needs work, and in *len how far it goes (NULL: everything). */
	uint64_t (*next_dirty)(struct eng_array *a, uint64_t pos, uint64_t end, uint64_t *len);
	/* A spare starts rebuilding `role`: nothing on it can be trusted. */
	void (*full_recovery)(struct eng_array *a, int role);
	/* Re-add (engine/readd.c): does the log hold every write the array
	 * took since a member's superblock said `events` (md's bitmap rule)?
	 * Then recovering what it marks is enough, and recover_marked makes
	 * next_dirty do that for em, now rebuilding `role`. */
	bool (*covers_since)(const struct eng_array *a, uint64_t events);
	void (*recover_marked)(struct eng_array *a, int role, const struct eng_member *em);

	void (*status)(const struct eng_array *a, struct uraid_status *st);
};

static inline int eng_log_write_start(struct eng_array *a, uint64_t lsec, uint64_t nsec)
{
	return a->log && a->log->write_start ? a->log->write_start(a, lsec, nsec) : 0;
}

static inline int eng_log_stripes(struct eng_array *a, struct eng_stripe_buf *sb, int n,
                                  uint64_t co, const bool *dirty)
{
	return a->log && a->log->log_stripes ? a->log->log_stripes(a, sb, n, co, dirty) : 0;
}

/* Widen rows [*lo, *hi) of a chunk to the log's row size. */
static inline void eng_log_rows(const struct eng_array *a, uint64_t *lo, uint64_t *hi)
{
	uint64_t r = a->log ? a->log->row_sectors : 0;
	if (r > 1) {
		*lo -= *lo % r;
		*hi += (r - *hi % r) % r;
	}
}

static inline bool eng_log_reads_locked(const struct eng_array *a)
{
	return a->log && a->log->reads_locked && a->log->reads_locked(a);
}

static inline void eng_log_overlay(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	if (a->log && a->log->overlay)
		a->log->overlay(a, buf, lsec, nsec);
}

static inline int eng_log_flush(struct eng_array *a)
{
	return a->log && a->log->flush ? a->log->flush(a) : 0;
}

static inline int eng_log_synced(struct eng_array *a, bool stopping)
{
	return a->log && a->log->synced ? a->log->synced(a, stopping) : 0;
}

static inline uint64_t eng_log_next_dirty(struct eng_array *a, uint64_t pos, uint64_t end,
                                          uint64_t *len)
{
	if (a->log && a->log->next_dirty)
		return a->log->next_dirty(a, pos, end, len);
	*len = end > pos ? end - pos : 0;
	return pos;
}

static inline void eng_log_full_recovery(struct eng_array *a, int role)
{
	if (a->log && a->log->full_recovery)
		a->log->full_recovery(a, role);
}

#endif
