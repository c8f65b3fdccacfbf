/* In-place reshapes with mdadm's backup of the critical section
 * (engine/reshape_backup.c): a grow whose data offset cannot move (0.90
 * always, 1.x without room, or --backup-file given, as mdadm then grows in
 * place) first saves the array sectors whose old rows the first new rows
 * overwrite to a backup file in mdadm's format (meta/md_backup.h), makes
 * it durable, then moves that section; a cut in between leaves the
 * superblocks at the start and the file holding the section, which
 * assembly with the file (eng_backup_restore, as mdadm's Grow_restart)
 * writes in the new layout before the move goes on. Called with the array
 * locked. */
#ifndef URAID_ENGINE_RESHAPE_BACKUP_H
#define URAID_ENGINE_RESHAPE_BACKUP_H

#include "engine/core/engine.h"
#include "meta/md_backup.h"
#include "meta/md_reshape.h"
#include "uraid.h"

struct eng_backup {
	struct member *m;
	bool owned; /* opened here (closed by eng_backup_done) */
	struct md_backup_sb bsb;
};

/* The refusals before anything is written: no backup file of that name
 * may exist yet (mdadm creates it O_EXCL). */
int eng_backup_check(const struct uraid_reshape_opts *o, char *err, size_t errlen);
/* a->rs set up at position 0: the critical section's length chosen, the
 * file created, the section read in the old layout and written to it with
 * its superblock, flushed. Nothing of the array written yet. */
int eng_backup_save(struct eng_array *a, const struct uraid_reshape_opts *o, struct eng_backup *b,
                    char *err, size_t errlen);
/* After the superblocks record the start: the section moved, the
 * position recorded past it, the backup forgotten (length 0, as mdadm's
 * forget_backup), the file closed. */
int eng_backup_critical(struct eng_array *a, struct eng_backup *b, char *err, size_t errlen);
void eng_backup_done(struct eng_backup *b);

/* Assembly (before eng_array_setup), an in-place reshape too early to go
 * on by itself: is the backup in m one for this array and needed (uuid,
 * mtime against the superblocks' utime as mdadm allows it, the section
 * covering the position, whole new stripes)? 0 with *needed; -errno with
 * a message naming what does not match. */
int eng_backup_check_restore(struct eng_array *a, struct member *m, struct md_backup_sb *bsb,
                             bool *needed, char *err, size_t errlen);
/* After eng_array_setup: the section written in the new layout, the
 * position moved past it and recorded, the backup forgotten where the
 * file can be written. */
int eng_backup_restore(struct eng_array *a, char *err, size_t errlen);

/* engine/reshape_slide.c, mdadm's sliding backup: is r an in-place
 * reshape (no data offset change) of raid4/5/6 that keeps or cuts the
 * data members? */
bool eng_slide_kind(const struct md_reshape *r);
/* a->rs set up at its start, nothing of the array written: the backup
 * file created (o's member used instead) for two windows (one: a shrink),
 * its superblock written empty and flushed; the move then goes window by
 * window (rs->window). */
int eng_slide_start(struct eng_array *a, const struct uraid_reshape_opts *o, char *err,
                    size_t errlen);
/* Assembly of one in progress: the move goes on with m (the caller's;
 * eng_slide_adopt hands it to the array, which then closes it). */
int eng_slide_attach(struct eng_array *a, struct member *m, char *err, size_t errlen);
bool eng_slide_adopt(struct eng_array *a, struct member *m);
/* A write to logical [lsec, lsec + n) on the new side: a live section
 * holding any of it forgotten first. */
int eng_slide_written(struct eng_array *a, uint64_t lsec, uint64_t n);
/* The array stopping: a section covering the position (the last window,
 * as the array holds it), its time the superblocks', for mdadm's
 * Grow_restart, which a reshape keeping the data members needs. */
int eng_slide_stop(struct eng_array *a);

#endif
