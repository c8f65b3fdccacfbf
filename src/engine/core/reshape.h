/* A reshape (restripe) of an md array in progress: two geometries and the
 * position between them (meta/md_reshape.h). Requests are split at the
 * position and each piece runs through the personality with the array's
 * view (a->geo, a->ops, every member's data offset) switched to the side
 * that holds it, as md's raid5 uses conf->previous_* and data_offset for
 * stripes not yet reshaped, the new geometry and new_data_offset for the
 * others. At rest the view is the geometry with more members (the new one,
 * the old one of a shrink, so that flushes and failures reach every member
 * holding data) with the data offsets the superblocks record (the old ones).
 *
 * Direction (md's reshape_backwards): forwards the move runs from sector 0
 * up and the data offset moves down (into room before the data area);
 * backwards, a shrink or a change of layout/chunk where the room is after
 * the data area, it runs from the end down to 0 and the data offset moves
 * up, so the new rows always lie above the old rows still needed.
 *
 * Crash safety, md's rule (reshape_request's safepos/writepos): the
 * superblocks record a position `safe` (reshape_position); after a crash
 * everything on the old side of it is read from the old layout. So a move
 * never writes new-layout rows over old-layout rows that hold data on the
 * old side of `safe`; when it would, the progress made so far is made
 * durable and recorded first (eng_reshape_checkpoint), and a move that
 * would overlap even then is refused: an in-place reshape at its start
 * needs mdadm's backup of that critical section, which uraid writes and
 * moves in one step (engine/reshape_backup.h). Writes to the new
 * side between `safe` and the progress also checkpoint first, so what they
 * write is where a crash would look for it. */
#ifndef URAID_ENGINE_CORE_RESHAPE_H
#define URAID_ENGINE_CORE_RESHAPE_H

#include "engine/core/engine.h"
#include "meta/md_backup.h"
#include "meta/md_reshape.h"

struct eng_reshape {
	struct md_reshape r;           /* r.position: how far the move got (memory) */
	uint64_t safe;                 /* the position the superblocks record */
	struct layout_geometry geo[2]; /* [0] old, [1] new */
	const struct layout_ops *ops[2];
	uint64_t size[2];       /* logical sectors each geometry holds */
	uint64_t checkpoint_ns; /* when `safe` was last written */
	uint64_t start;         /* backwards: the position it starts from (md's raid5_size) */
	int rest;               /* the view at rest: 0 old (a shrink), 1 new */
	bool assembled;         /* set up from the superblocks (md's raid10_run) */
	/* Run once the move is over, the array at the new geometry, before
	 * the superblocks are written (raid6 -> raid5: the takeover that
	 * drops Q; engine/reshape_level.c). */
	int (*then)(struct eng_array *a, int level);
	int then_level;
	/* Assembled in its critical section with mdadm's backup of it
	 * (engine/reshape_backup.c): written back once the array is set up;
	 * the move waits until then. The member is the caller's. */
	struct member *restore;
	struct md_backup_sb restore_bsb;
	/* mdadm's sliding backup (engine/reshape_slide.c): an in-place
	 * reshape that keeps or cuts the data members copies each window of
	 * stripes to this file before it moves it. window runs one step of
	 * such a move (engine/sync/reshape.c calls it: forwards for every
	 * batch, backwards where the move is no longer safe without it). */
	struct member *slide;
	bool slide_owned; /* closed by eng_reshape_free */
	int slide_part;   /* the section the next window uses (0, 1) */
	int slide_parts;  /* how many the file holds */
	int slide_live;   /* the section holding a window (-1: none) */
	uint64_t slide_blocks;
	struct md_backup_sb slide_bsb;
	int (*window)(struct eng_array *a, uint64_t *done);
};

/* rs freed, its sliding backup closed where it owns it. */
void eng_reshape_free(struct eng_reshape *rs);

/* A member the reshape fills: a slot the old geometry lacks (a takeover's
 * new parity slot, a degraded array's empty one) given to a spare, which
 * the move writes as it goes; as md does, it is rebuilding with its
 * recovery_offset at the reshape position's row of the new geometry, and
 * is not there at all for the old one (eng_reshape_view). */
static inline bool eng_reshape_fills(const struct eng_member *em)
{
	return em->role >= 0 && em->state == URAID_MEMBER_REBUILDING && !em->replacement;
}

struct uraid_reshape_opts;
/* The reshape o asks of the array as it stands: r's old
 * shape the array's geometry at `level`, the new one that with o's member
 * count, layout and chunk where given; active, at position 0. */
void eng_reshape_shape(const struct eng_array *a, int level, const struct uraid_reshape_opts *o,
                       struct md_reshape *r);
/* mdadm's refusal of a shape holding fewer than the
 * array's sectors (new_size); 0 where it holds them all. */
int eng_reshape_refuse_cut(const struct eng_array *a, uint64_t new_size, char *err, size_t errlen);

/* One batch of a move (the personalities' reshape op): logical
 * [lsec, lsec+n) read in the old view by read_old (what the old geometry
 * does not hold, a grow's new end, is zeros), then written in the new view
 * by write_new; the view at rest again after. */
typedef int (*eng_reshape_read_fn)(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t n);
typedef int (*eng_reshape_write_fn)(struct eng_array *a, const uint8_t *buf, uint64_t lsec,
                                    uint64_t n);
int eng_reshape_copy(struct eng_array *a, uint64_t lsec, uint64_t n, eng_reshape_read_fn read_old,
                     eng_reshape_write_fn write_new);
/* 0: old geometry and data offsets, 1: new, -1: at rest. */
void eng_reshape_view(struct eng_array *a, int v);
/* How many sectors from lsec (up to end) lie on one side, *is_new which. */
uint64_t eng_reshape_piece(const struct eng_array *a, uint64_t lsec, uint64_t end, bool *is_new);
/* May logical [lsec, lsec+n) move to the new layout with `safe` as the
 * recorded position (no new row over a needed old one)? */
bool eng_reshape_move_safe(const struct eng_array *a, uint64_t lsec, uint64_t n, uint64_t safe);
/* Members flushed, then the superblocks record the progress as the
 * position (safe = position). */
int eng_reshape_checkpoint(struct eng_array *a);
/* The move is over: the superblocks say the new geometry, data offsets
 * moved, feature bits cleared (as md's raid5_finish_reshape and
 * md_finish_reshape leave them); a->rs freed, the array's size grown. */
int eng_reshape_complete(struct eng_array *a);
/* How far the move got and how far it goes, in logical sectors counted
 * from its start (a backwards move counts down from rs->start), as md's
 * sync thread shows a reshape's progress. */
uint64_t eng_reshape_progress(const struct eng_reshape *rs);
uint64_t eng_reshape_total(const struct eng_reshape *rs);
/* What md's status shows as a reshape's total (its resync_max_sectors):
 * eng_reshape_total's but for raid10, whose move md counts to the smaller
 * geometry's size (the new end of a grow is resynced after it). */
uint64_t eng_reshape_md_total(const struct eng_reshape *rs);
/* Rows (member sectors) of the new geometry holding logical [0, lsec). */
uint64_t eng_reshape_rows(const struct eng_reshape *rs, uint64_t lsec);
/* Logical sectors of geometry g on members of dev_sectors (raid5_size). */
uint64_t eng_reshape_geo_size(const struct layout_geometry *g, uint64_t dev_sectors);

#endif
