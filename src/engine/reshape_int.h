/* Shared by engine/reshape.c, reshape_level.c and takeover.c (the
 * pairs call each other). Level changes that move data
 * (engine/reshape_level.c), as mdadm's
 * Grow.c analyse_change plans them: a takeover to the intermediate level
 * and layout (engine/takeover.c), then a reshape at that level
 * (engine/reshape.c), and for raid6 -> raid5 a takeover once the reshape
 * is over. Called with the array locked. */
#ifndef URAID_ENGINE_RESHAPE_INT_H
#define URAID_ENGINE_RESHAPE_INT_H

#include "engine/core/engine.h"
#include "uraid.h"

/* o->level differs from the array's: plan, takeover, start the reshape. */
int eng_reshape_level_locked(struct eng_array *a, const struct uraid_reshape_opts *o, char *err,
                             size_t errlen);
/* Its refusals (md cannot, too few spares, fewer data members) with
 * nothing changed. */
int eng_reshape_level_check(struct eng_array *a, const struct uraid_reshape_opts *o, char *err,
                            size_t errlen);
/* engine/reshape.c: a reshape that keeps the level (o->level ignored). */
int eng_reshape_start_locked(struct eng_array *a, const struct uraid_reshape_opts *o, char *err,
                             size_t errlen);
/* engine/takeover.c: eng_takeover with the array locked. FILL: the new
 * empty slots go to spares (eng_reshape_fill_slots); NOWRITE: the
 * superblocks are left to the caller, whose one write (the reshape's
 * start, its end) records the takeover with it, so a cut amid the
 * members' writes leaves them a reshape apart, which assembly resolves
 * (the freshest speaks), never a bare level apart, which it refuses as
 * mdadm does. */
#define ENG_TAKEOVER_FILL    1u
#define ENG_TAKEOVER_NOWRITE 2u
int eng_takeover_locked(struct eng_array *a, int level, uint32_t layout, int raid_disks,
                        unsigned how, char *err, size_t errlen);
/* engine/takeover.c: each empty slot to a spare, rebuilding from 0: the
 * reshape fills it. */
void eng_reshape_fill_slots(struct eng_array *a);

struct md_reshape;
/* engine/reshape_raid10.c: a raid10 reshape as md's raid10_check_reshape
 * / raid10_start_reshape and mdadm's raid10_reshape allow it, planned with
 * the room there is before and after the data (engine/reshape.c): *r, and
 * the *need spares[] that take the slots roles[] (a degraded array's empty
 * ones first); *cut, where not 0, the component size mdadm sets first (a
 * shrink with too little room after the data); nothing changed. dry: a
 * member a recovery is rebuilding counts as the spare it was. And the check
 * raid10_run makes of one in progress. */
int eng_reshape_raid10_plan(const struct eng_array *a, const struct uraid_reshape_opts *o,
                            uint64_t before, uint64_t after, bool dry, struct md_reshape *r,
                            int *spares, int *roles, int *need, uint64_t *cut, char *err,
                            size_t errlen);
int eng_reshape_raid10_check(const struct md_reshape *r, char *err, size_t errlen);

/* engine/reshape.c: a recovery onto a spare stops (mdadm freezes the
 * array before a reshape) and its member is a spare again, for the
 * reshape to give it a slot as md's raid5_start_reshape does; a
 * replacement's copy is left running. */
void eng_reshape_stop_recovery(struct eng_array *a);

#endif
