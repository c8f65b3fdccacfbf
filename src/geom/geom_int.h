/* Internals shared by the GEOM engine files (geom_*_run.c, geom_*_ctl.c,
 * geom/common.c): metadata write-back and helpers both classes use. */
#ifndef URAID_ENGINE_GEOM_INT_H
#define URAID_ENGINE_GEOM_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "geom/geom.h"
#include "member/member.h"

/* geom/common.c */
/* A random 32-bit id (mirror/device/disk ids: uniqueness is best effort). */
uint32_t geom_random_id(void);
/* GEOM names are 1-15 characters (16 bytes on disk with the NUL). */
int geom_check_name(const char *name, const char *what, char *err, size_t errlen);
/* The provider name -h stores: the member's base name, at most 15 bytes. */
void geom_provider_name(const struct member *m, char out[17]);
void geom_close_members(struct member **m, int n);
/* Of the components' (genid, syncid, synchronizing) triples: the newest
 * genid, then the newest syncid among the not-synchronizing ones with it. */
void geom_newest_ids(const uint32_t *genid, const uint32_t *syncid, const bool *syncing, int n,
                     uint32_t *maxgen, uint32_t *maxsync);
/* Warn (appending to warn) that a component is stale and left out. */
void geom_warn_stale(char *warn, size_t warnlen, const char *name, uint32_t genid, uint32_t maxgen);
/* Take / release the pair of locks a membership change needs: the I/O
 * rwlock exclusively (no read in flight uses a member), then the state mutex. */
void geom_lock_all(pthread_rwlock_t *iolock, pthread_mutex_t *lock);
void geom_unlock_all(pthread_rwlock_t *iolock, pthread_mutex_t *lock);

/* A component's flags as written back: SYNCHRONIZING while syncing (else
 * it and FORCE_SYNC cleared), DIRTY as the device is. gmirror and graid3
 * give these three flags the same bits (DIRTY 1, SYNCHRONIZING 2,
 * FORCE_SYNC 4). */
uint64_t geom_dflags_update(uint64_t dflags, bool syncing, bool dirty);
/* Before the first write: a device started without all components moves
 * its syncid on (the absent ones must not look current when they come
 * back), and one that keeps failsync marks itself dirty. True when the
 * metadata must be written. */
bool geom_first_write(bool *bump_syncid, uint32_t *syncid, bool *dirty, bool nofailsync);

uint64_t geom_now_ns(void); /* CLOCK_MONOTONIC */

void geom_ioq_pool_init(struct geom_ioq_pool *p);
void geom_ioq_pool_destroy(struct geom_ioq_pool *p);
/* Run ios[0..n) as one batch, the members in parallel; each result is 0 or
 * a negative errno (a short transfer counts as -EIO). Returns 0 or the
 * first error. */
int geom_io_batch(struct geom_ioq_pool *p, struct member_io *ios, int n);

/* geom/mirror.c (caller holds g->lock) */
int geom_mirror_write_md(struct geom_mirror *g, int i);
void geom_mirror_write_all_md(struct geom_mirror *g);
/* Copy the disks' states and priorities into the balance state. */
void geom_mirror_sync_bal(struct geom_mirror *g);

/* geom/raid3.c (caller holds g->lock) */
void geom_raid3_write_all_md(struct geom_raid3 *g);

#endif
