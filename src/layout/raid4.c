/* raid4: dedicated parity on the last member. md records it as level 4;
 * mdadm 4.2 writes layout 0 (seen on 1.2 and 0.90 arrays) and the kernel
 * ignores the layout word for level 4: parity is always on the last member. */
#include <errno.h>

#include "layout/layout_int.h"
#include "util/errmsg.h"

static int raid4_validate(const struct layout_geom *g, char *err, size_t errlen)
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

static int raid4_ncopies(const struct layout_geom *g)
{
	(void)g;
	return 1;
}

static bool raid4_readable(const struct layout_geom *g, const bool *missing)
{
	int lost = 0;
	for (int r = 0; r < g->raid_disks; r++)
		lost += missing[r];
	return lost <= 1;
}

const struct layout_ops layout_raid4_ops = {
    .level = URAID_LEVEL_RAID4,
    .name = "raid4",
    .validate = raid4_validate,
    .array_sectors = parity_array_sectors,
    .ncopies = raid4_ncopies,
    .map = parity_map,
    .stripe = parity_stripe,
    .readable = raid4_readable,
    .member_used = parity_member_used,
    .unmap = parity_unmap,
};
