/* raid4: dedicated parity on the last member. md records it as level 4;
 * mdadm 4.2 writes layout 0 (seen on 1.2 and 0.90 arrays) and the kernel
 * ignores the layout word for level 4: parity is always on the last member. */
#include <errno.h>

#include "layout/layout_int.h"
#include "util/errmsg.h"

static int raid4_validate(const struct layout_geometry *g, char *err, size_t errlen)
{
	int rc = layout_check_disks(g, 2, LAYOUT_MAX_MEMBERS, err, errlen);
	if (rc)
		return rc;
	if (g->layout > LAYOUT_PARITY_N)
		return errmsg(err, errlen, -EINVAL, "raid4: unknown layout %u (mdadm writes 0)",
		              g->layout);
	rc = layout_check_chunk_pow2(g, err, errlen);
	return rc ? rc : parity_check_size(g, err, errlen);
}

const struct layout_ops layout_raid4_ops = {
    .level = URAID_LEVEL_RAID4,
    .name = "raid4",
    .validate = raid4_validate,
    .array_sectors = parity_array_sectors,
    .ncopies = layout_one_copy,
    .map = parity_map,
    .stripe = parity_stripe,
    .readable = parity_readable,
    .member_used = parity_member_used,
    .unmap = parity_unmap,
};
