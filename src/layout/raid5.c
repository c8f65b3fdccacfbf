/* raid5: distributed single parity, md layouts 0..5 (left/right
 * asymmetric/symmetric, parity-first, parity-last). */
#include <errno.h>

#include "layout/layout_int.h"
#include "util/errmsg.h"

static int raid5_validate(const struct layout_geometry *g, char *err, size_t errlen)
{
	int rc = layout_check_disks(g, 2, LAYOUT_MAX_MEMBERS, err, errlen);
	if (rc)
		return rc;
	if (g->layout > LAYOUT_PARITY_N)
		return errmsg(err, errlen, -EINVAL, "raid5: unknown layout %u (md knows 0..5)",
		              g->layout);
	rc = layout_check_chunk_pow2(g, err, errlen);
	return rc ? rc : parity_check_size(g, err, errlen);
}

const struct layout_ops layout_raid5_ops = {
    .level = URAID_LEVEL_RAID5,
    .name = "raid5",
    .validate = raid5_validate,
    .array_sectors = parity_array_sectors,
    .ncopies = layout_one_copy,
    .map = parity_map,
    .stripe = parity_stripe,
    .readable = parity_readable,
    .member_used = parity_member_used,
    .unmap = parity_unmap,
};
