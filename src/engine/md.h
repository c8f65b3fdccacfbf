/* The md array class: the entry points of a running md array that
 * md_class.c puts behind the public handle (struct eng_class), and
 * assembly/creation, which the public calls (api.c) use directly. Each
 * function takes the md array itself; the caller has checked what needs no
 * knowledge of md (core/class.h). */
#ifndef URAID_ENGINE_MD_H
#define URAID_ENGINE_MD_H

#include "engine/core/engine.h"

extern const struct eng_class eng_md_class;

/* pers.c: the I/O personality of an md level, NULL when none. */
const struct eng_pers *eng_pers_for(int level);
/* logs.c: load the log the superblocks (or a log member) name, if any. */
int eng_logs_load(struct eng_array *a, char *err, size_t errlen);

/* assemble.c: members with md superblocks (ownership as
 * uraid_assemble_members). */
int eng_assemble(struct member **mm, int n, unsigned flags, struct eng_array **out, char *err,
                 size_t errlen, char *warn, size_t warnlen);
/* The same with mdadm's backup of a reshape's critical section (NULL:
 * none; the caller's, not closed): an in-place reshape interrupted in it
 * is restored from it (engine/reshape_backup.h) once set up. */
int eng_assemble_backup(struct member **mm, int n, unsigned flags, struct member *backup,
                        struct eng_array **out, char *err, size_t errlen, char *warn,
                        size_t warnlen);
/* membership.c: do the members' superblocks describe one array? A message
 * naming the odd ones out when not. The freshest speaks for the array;
 * a member within mdadm's margin of it is current. */
int eng_members_agree(struct member *const *mm, const struct md_sb *sbs, int n, char *err,
                      size_t errlen);
int eng_pick_freshest(const struct md_sb *sbs, int n);
/* --force: members left out are forced back in, mdadm's way, until the
 * array can start (names each in warn); how many. */
int eng_force_members(struct eng_array *a, char *warn, size_t warnlen);
/* Without --force: what it would force in, as "; --force would ..." for
 * the refusal ("" when forcing would not help). */
void eng_force_hint(const struct eng_array *a, char *buf, size_t len);
bool eng_sb_current(const struct md_sb *s, const struct md_sb *fresh);
/* create.c: a new array on opened members, or on member paths (created
 * when o->member_bytes asks for it), then assembled. */
int eng_create_members(const struct uraid_create_opts *o, struct member **mm, int n, unsigned flags,
                       struct eng_array **out, char *err, size_t errlen);
int eng_create_files(const struct uraid_create_opts *o, const char *const *paths, int n,
                     unsigned flags, struct eng_array **out, char *err, size_t errlen);

/* array.c: I/O and life cycle. */
uint64_t eng_size(const struct eng_array *a);
/* manage.c: uraid_grow_add (linear). */
int eng_linear_append(struct eng_array *a, struct member *m, char *err, size_t errlen);
/* takeover.c: uraid_takeover. */
int eng_takeover(struct eng_array *a, int level, uint32_t layout, int raid_disks, char *err,
                 size_t errlen);
/* grow.c: uraid_grow. */
int eng_grow(struct eng_array *a, enum uraid_grow_what what, uint64_t value, char *err,
             size_t errlen);
int eng_read(struct eng_array *a, void *buf, size_t len, uint64_t off);
int eng_write(struct eng_array *a, const void *buf, size_t len, uint64_t off);
int eng_flush(struct eng_array *a);
/* discard.c: uraid_write_zeroes (URAID_ZERO_* flags) and uraid_discard_safe. */
int eng_zero(struct eng_array *a, uint64_t off, uint64_t len, unsigned flags);
bool eng_discard_safe(struct eng_array *a);
int eng_stop(struct eng_array *a);
void eng_drop(struct eng_array *a);
int eng_status(struct eng_array *a, struct uraid_status *st);
int eng_io_stats(struct eng_array *a, struct uraid_io_stats *st);
/* locate.c: uraid_locate (arguments checked by the caller). */
int eng_locate(struct eng_array *a, uint64_t off, uint64_t len, unsigned flags,
               struct uraid_place *out, int max, uint64_t *piece);
/* md's array_state: read-only, read-auto or read-write (mdtools). */
int eng_set_readonly(struct eng_array *a, enum uraid_ro_mode mode, char *err, size_t errlen);
/* The personality's stripe cache; -EINVAL for levels without one. */
int eng_set_stripe_cache(struct eng_array *a, unsigned stripes);

/* manage.c, readd.c: members (ownership of m passes). */
int eng_fail(struct eng_array *a, const char *name, char *err, size_t errlen);
int eng_remove(struct eng_array *a, const char *name, char *err, size_t errlen);
int eng_add_member(struct eng_array *a, struct member *m, char *err, size_t errlen);
/* With URAID_ADD_* flags: a spare only (never a re-add), md's device flags. */
int eng_add_member_flags(struct eng_array *a, struct member *m, unsigned flags, char *err,
                         size_t errlen);
int eng_replace_member(struct eng_array *a, const char *old, struct member *m, char *err,
                       size_t errlen);
int eng_re_add_member(struct eng_array *a, struct member *m, char *err, size_t errlen);

/* readd.c, for add: re-add *mp, a former member whose superblock names a slot of
 * this array that is empty now, into that slot (the caller holds the lock and
 * the member's flock). Returns 1 when done, 0 when it is not such a member
 * (strict: an error saying why instead; not strict, as `add`: also when it
 * would need a full recovery, which add does as a spare), <0 on failure.
 * *mp is set to NULL once the array owns the member (even on failure). */
int eng_readd(struct eng_array *a, struct member **mp, bool strict, char *err, size_t errlen);

/* fastpath.c: read without the array mutex when every slot is in sync (mirrors: and
 * known consistent); -EAGAIN when the caller must take the locked path. */
int eng_fast_read(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec);
void eng_ioq_pool_free(struct eng_array *a);
/* Write without the array mutex: healthy, already marked dirty, parity
 * trusted; iolock shared plus the stripe locks of the range. -EAGAIN: take
 * the locked path (force_rcw set in *redo when a first attempt failed). */
int eng_fast_write(struct eng_array *a, const uint8_t *buf, uint64_t lsec, uint64_t nsec,
                   bool *redo);

/* reshape.c: arrays being reshaped (core/reshape.h). After the slots are
 * known, before eng_array_setup: a reshape the superblocks record is set
 * up (a->rs), or refused with a message (a level change, or read-write
 * where uraid cannot resume it). */
int eng_reshape_assembled(struct eng_array *a, struct member *backup, char *err, size_t errlen);
/* In eng_array_setup: the size md gives the array meanwhile. */
void eng_reshape_setup(struct eng_array *a);
/* Requests (eng_lock held), each piece in the view that holds it. */
int eng_reshape_read(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec);
int eng_reshape_write(struct eng_array *a, const struct eng_req *rq, const uint8_t *buf,
                      uint64_t lsec, uint64_t nsec);
int eng_reshape_start(struct eng_array *a, const struct uraid_reshape_opts *o, char *err,
                      size_t errlen);

/* array.c: after assembly or creation, before the first request; free. */
int eng_array_setup(struct eng_array *a, char *err, size_t errlen);
void eng_array_free(struct eng_array *a);

#endif
