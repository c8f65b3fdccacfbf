/* md's Partial Parity Log (drivers/md/raid5-ppl.c) as a log of raid5
 * arrays (core/log.h; format in meta/md_ppl.h): before a stripe's data and
 * parity reach the members, the partial parity of the write (the XOR of
 * the data chunks it leaves alone) goes, durable, to the log of the
 * stripe's parity member; after a crash the assembly rewrites the parity
 * of every logged stripe from that partial parity and the data the
 * members hold, so no resync is needed and, with a member missing, what
 * it held is rebuilt right (the write hole). What the engine sees of it:
 * the log descriptor, and switching an array's consistency policy. */
#ifndef URAID_ENGINE_PPL_H
#define URAID_ENGINE_PPL_H

#include <stddef.h>

#include "engine/core/log.h"

extern const struct eng_log_ops eng_log_ppl;

/* uraid_consistency_policy of an md array (ppl_policy.c): resync <-> ppl
 * on a running raid5 with 1.x metadata, as mdadm --grow
 * --consistency-policy. 0 or a negative errno with md's or mdadm's words. */
int eng_ppl_policy(struct eng_array *a, enum uraid_consistency_policy policy, char *err,
                   size_t errlen);

#endif
