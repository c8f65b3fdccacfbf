/* raid6: P and Q, md layouts 0..5 and the RAID5->6 transition layouts
 * 16..20 (raid5 layout over n-1 members, Q on the last). The DDF layouts
 * 8..10 order Q differently and are not implemented. */
#include <errno.h>

#include "layout/layout_int.h"
#include "util/errmsg.h"

static int raid6_validate(const struct layout_geometry *g, char *err, size_t errlen)
{
	/* Q's coefficients g^i stay distinct for at most 255 data blocks;
	 * the parity backends take URAID_PARITY_MAX_DATA. */
	int rc = layout_check_disks(g, 4, URAID_PARITY_MAX_DATA + 2, err, errlen);
	if (rc)
		return rc;
	uint32_t l = g->layout;
	if (l >= LAYOUT_DDF_ZERO_RESTART && l <= LAYOUT_DDF_N_CONTINUE)
		return errmsg(err, errlen, -EOPNOTSUPP,
		              "raid6: unsupported layout %u (DDF layouts are not implemented)", l);
	if (!(l <= LAYOUT_PARITY_N || (l >= LAYOUT_LEFT_ASYMMETRIC_6 && l <= LAYOUT_PARITY_0_6)))
		return errmsg(err, errlen, -EINVAL,
		              "raid6: unknown layout %u (md knows 0..5, 8..10, 16..20)", l);
	rc = layout_check_chunk_pow2(g, err, errlen);
	return rc ? rc : parity_check_size(g, err, errlen);
}

const struct layout_ops layout_raid6_ops = {
    .level = URAID_LEVEL_RAID6,
    .name = "raid6",
    .validate = raid6_validate,
    .array_sectors = parity_array_sectors,
    .ncopies = layout_one_copy,
    .map = parity_map,
    .stripe = parity_stripe,
    .readable = parity_readable,
    .member_used = parity_member_used,
    .unmap = parity_unmap,
};
