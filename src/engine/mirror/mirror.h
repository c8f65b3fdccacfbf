/* The mirror personality (raid1, raid10): its descriptor (mirror.c),
 * requests (io.c) and sync work (sync.c). */
#ifndef URAID_ENGINE_MIRROR_H
#define URAID_ENGINE_MIRROR_H

#include "engine/core/engine.h"

extern const struct eng_pers eng_pers_mirror;

/* io.c */
int eng_mirror_read(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec);
int eng_mirror_write(struct eng_array *a, const struct eng_req *rq, const uint8_t *buf,
                     uint64_t lsec, uint64_t nsec);

/* sync.c */
/* Resync / check / repair of logical sectors [pos, pos+n). */
int sync_mirror_batch(struct eng_array *a, uint64_t pos, uint64_t n);
/* Recovery of member sectors [pos, pos+n) of every rebuilding slot member. */
int sync_mirror_recover(struct eng_array *a, uint64_t pos, uint64_t n);
/* Data of member sectors [msec, msec+n) of `role` as the array holds it,
 * from any copy (read errors repaired), without using `role` itself. */
int sync_mirror_role_data(struct eng_array *a, int role, uint8_t *buf, uint64_t msec, uint64_t n);

/* reshape.c: move logical [lsec, lsec+n) from the old raid10 layout to
 * the new (pers.h's reshape). */
int eng_mirror_reshape(struct eng_array *a, uint64_t lsec, uint64_t n);

#endif
