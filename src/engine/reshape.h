/* An md array the kernel left mid-reshape (engine/reshape.c): two
 * geometries and the position between them (meta/md_reshape.h). Requests
 * are split at the position; each piece runs through the personality with
 * the array's view (a->geo, a->ops, every member's data offset) switched to
 * the side that holds it, as md's raid5 picks conf->previous_* for stripes
 * not yet reshaped. At rest the view is the new geometry with the data
 * offsets the superblocks record. Today uraid serves such arrays read-only
 * (assemble --readonly, cat, examine); it does not resume the reshape. */
#ifndef URAID_ENGINE_RESHAPE_H
#define URAID_ENGINE_RESHAPE_H

#include "engine/core/engine.h"
#include "meta/md_reshape.h"

struct eng_reshape {
	struct md_reshape r;
	struct layout_geometry geo[2]; /* [0] old, [1] new */
	const struct layout_ops *ops[2];
	uint64_t doff[2][ENG_MAX_MEMBERS]; /* by a->mem index: old, new data offset */
	uint64_t rest_doff[ENG_MAX_MEMBERS];
};

/* From the freshest superblock (a->ref), after the slots are known and
 * before eng_array_setup: validates both geometries, fills a->rs. -EROFS
 * (with a message) for a read-write assembly, -EOPNOTSUPP for a reshape
 * uraid cannot map (level changes, levels other than raid4/5/6). */
int eng_reshape_assembled(struct eng_array *a, char *err, size_t errlen);
/* After eng_array_setup: the array size md gives it during the reshape
 * (raid5_size with the smaller member count and both chunks). */
void eng_reshape_setup(struct eng_array *a);
/* Read [lsec, lsec+nsec) with eng_lock held, each side in its view. */
int eng_reshape_read(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec);
void eng_reshape_free(struct eng_array *a);

#endif
