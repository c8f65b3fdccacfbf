/* Background work of md arrays: resync after an unclean stop, recovery onto
 * a spare or a replacement, check and repair. sync.c schedules it and runs
 * it one batch at a time (the thread, speed limits, checkpoints); the
 * personality does each batch (pers.h: resync, recover, role_data) with the
 * helpers below; replace.c copies onto replacements. Every function here
 * runs with eng_lock held unless it says otherwise.
 *
 * Positions: recovery (rebuild onto a spare, copy onto a replacement) runs
 * in member sectors for every level, so recovery_offset is exact and an
 * interrupted rebuild resumes where it stopped. Resync, check and repair run
 * in member sectors (rows) for parity levels and in logical sectors for
 * mirrors, as md does. */
#ifndef URAID_ENGINE_SYNC_H
#define URAID_ENGINE_SYNC_H

#include "engine/core/engine.h"

/* sync.c: the scheduler. */
void eng_sync_thread_start(struct eng_array *a);
void eng_sync_thread_stop(struct eng_array *a);
/* Pick the next needed action (recovery, resync) when idle. */
void eng_sync_schedule(struct eng_array *a);
/* The md class's sync entry points (uraid_sync_*). */
int eng_sync_step(struct eng_array *a, uint64_t max_sectors);
int eng_sync_action(struct eng_array *a, enum uraid_sync_action act, char *err, size_t errlen);
void eng_sync_speed(struct eng_array *a, uint64_t min_kibs, uint64_t max_kibs);
int eng_sync_wait(struct eng_array *a);
/* Stop the running job where it is (checkpoints written, a check's count
 * kept), as md interrupts a sync; the caller holds the lock. */
void eng_sync_interrupt(struct eng_array *a);
/* md's "frozen" (true) and what lifts it (false): idle, resync, recover. */
int eng_sync_freeze(struct eng_array *a, bool frozen, char *err, size_t errlen);

#define SYNC_MISMATCH_UNIT 8 /* md counts mismatches in 4 KiB pages, as sectors */

/* Bytes of member data one batch may hold in memory across all members it
 * reads: the lock is held for one batch, so this bounds how long foreground
 * requests wait (a few ms on tmpfs). */
#define SYNC_BATCH_BYTES (16u << 20)
/* Largest batch per member, in sectors (2 MiB). */
#define SYNC_BATCH_SECTORS 4096u

/* engine/sync/iolist.c: a growing list of member requests; a request that
 * continues the previous one (same member, next sectors, next bytes of the
 * same buffer) is merged into it. */
struct sync_iolist {
	struct member_io *io;
	int *role;
	int n, cap;
};
int sync_iol_add(struct eng_array *a, struct sync_iolist *l, int role, bool write, uint8_t *buf,
                 uint64_t msec, uint64_t nsec);
/* Append from's requests to l as they are (no merging). */
int sync_iol_append(struct sync_iolist *l, const struct sync_iolist *from);
/* Runs the list on a->ioq; true when every request succeeded. */
bool sync_iol_run(struct eng_array *a, struct sync_iolist *l);
void sync_iol_free(struct sync_iolist *l);

/* Sectors of 4 KiB units that differ between x and y (nsec sectors). */
uint64_t sync_count_mismatch(const uint8_t *x, const uint8_t *y, uint64_t nsec);

/* A rebuilding member in a slot (not a replacement). */
bool sync_role_rebuilding(const struct eng_array *a, int role);

/* Every member in a slot that is not faulty holds its data in memory
 * (member in_memory): recovery then reads and writes with synchronous
 * requests on two workers (engine/sync/workers.h) instead of queued batches. */
bool sync_in_memory(const struct eng_array *a);

/* engine/sync/reshape.c: move up to max logical sectors of a reshape
 * (a->rs) on; *done: how many moved. */
int sync_reshape_batch(struct eng_array *a, uint64_t max, uint64_t *done);

/* engine/sync/replace.c */
/* Copy member sectors [pos, pos+n) of each replaced slot onto its
 * replacement; drops replacements whose writes failed. */
int sync_replace_copy(struct eng_array *a, uint64_t pos, uint64_t n);
/* Recovery finished: replacements take over their slots. */
void sync_replace_finish(struct eng_array *a);

#endif
