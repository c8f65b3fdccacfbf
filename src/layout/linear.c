/* linear: members concatenated in role order. As the kernel's linear.c does,
 * a non-zero chunk ("rounding") rounds each member's data size down to a
 * multiple of it; 1.x arrays made by mdadm record rounding 0, so there the
 * whole data_size is used. */
#include <errno.h>

#include "layout/layout_int.h"
#include "util/errmsg.h"

static uint64_t linear_member_used(const struct layout_geometry *g, int role)
{
	uint64_t s = g->member_sectors[role];
	if (g->chunk_sectors)
		s -= s % g->chunk_sectors;
	return s;
}

static int linear_validate(const struct layout_geometry *g, char *err, size_t errlen)
{
	int rc = layout_check_disks(g, 1, LAYOUT_MAX_MEMBERS, err, errlen);
	if (rc)
		return rc;
	uint64_t tot = 0;
	for (int r = 0; r < g->raid_disks; r++)
		if (__builtin_add_overflow(tot, linear_member_used(g, r), &tot))
			return errmsg(err, errlen, -EINVAL, "linear: array size overflows 64 bits");
	if (tot == 0)
		return errmsg(err, errlen, -EINVAL, "linear: array would be empty");
	return 0;
}

static uint64_t linear_array_sectors(const struct layout_geometry *g)
{
	uint64_t tot = 0;
	for (int r = 0; r < g->raid_disks; r++)
		tot += linear_member_used(g, r);
	return tot;
}

static int linear_map(const struct layout_geometry *g, uint64_t lsec, int copy,
                      struct layout_loc *loc, uint64_t *len)
{
	if (copy != 0)
		return -ERANGE;
	uint64_t start = 0;
	for (int r = 0; r < g->raid_disks; r++) {
		uint64_t sz = linear_member_used(g, r);
		if (lsec - start < sz && lsec >= start) {
			loc->role = r;
			loc->sector = lsec - start;
			if (len)
				*len = sz - loc->sector;
			return 0;
		}
		start += sz;
	}
	return -ERANGE;
}

static int linear_unmap(const struct layout_geometry *g, int role, uint64_t msec, uint64_t *lsec)
{
	if (role < 0 || role >= g->raid_disks || msec >= linear_member_used(g, role))
		return -ERANGE;
	uint64_t start = 0;
	for (int r = 0; r < role; r++)
		start += linear_member_used(g, r);
	*lsec = start + msec;
	return LAYOUT_DATA;
}

const struct layout_ops layout_linear_ops = {
    .level = URAID_LEVEL_LINEAR,
    .name = "linear",
    .validate = linear_validate,
    .array_sectors = linear_array_sectors,
    .ncopies = layout_one_copy,
    .map = linear_map,
    .stripe = NULL,
    .readable = layout_none_missing,
    .member_used = linear_member_used,
    .unmap = linear_unmap,
};
