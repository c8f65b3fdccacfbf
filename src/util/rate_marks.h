/* md's resync speed window (md_do_sync's marks, status_resync's db/dt): a
 * ring of RATE_MARKS samples (time, count), a new one taken each
 * RATE_MARK_STEP_NS when the count is updated or the clock looked at; the
 * speed is measured from the sample the newest replaced (so over about
 * RATE_MARKS steps, 30 s) to now, in whole seconds (at least 1), as md's
 * /proc/mdstat shows it. Pure: the caller passes the time. */
#ifndef URAID_UTIL_RATE_MARKS_H
#define URAID_UTIL_RATE_MARKS_H

#include <stdint.h>

#define RATE_MARKS        10            /* md's SYNC_MARKS */
#define RATE_MARK_STEP_NS 3000000000ull /* md's SYNC_MARK_STEP: 3 s */

struct rate_marks {
	uint64_t t[RATE_MARKS], cnt[RATE_MARKS];
	int last;
	uint64_t mark_t, mark_cnt; /* md's resync_mark, resync_mark_cnt */
	uint64_t cnt_now;          /* md's curr_mark_cnt */
};

/* Every sample at now_ns with count 0 (md at the start of a sync). */
void rate_marks_start(struct rate_marks *m, uint64_t now_ns);
/* The count is now cnt (it only grows); a sample is taken if one is due. */
void rate_marks_update(struct rate_marks *m, uint64_t now_ns, uint64_t cnt);
/* A sample if one is due (md steps its marks while it sleeps over the
 * limit too). */
void rate_marks_tick(struct rate_marks *m, uint64_t now_ns);
/* The window at now_ns: *db counted since its start, *dt_s its whole
 * seconds, at least 1. */
void rate_marks_window(const struct rate_marks *m, uint64_t now_ns, uint64_t *db, uint64_t *dt_s);

#endif
