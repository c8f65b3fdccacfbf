/* raid1: every member holds the whole array at the same sectors. */
#include <errno.h>

#include "layout/layout_int.h"
#include "util/errmsg.h"

static int raid1_validate(const struct layout_geometry *g, char *err, size_t errlen)
{
	int rc = layout_check_disks(g, 1, LAYOUT_MAX_MEMBERS, err, errlen);
	if (rc)
		return rc;
	if (g->dev_sectors == 0)
		return errmsg(err, errlen, -EINVAL, "raid1: member size is 0 sectors");
	return 0;
}

static uint64_t raid1_array_sectors(const struct layout_geometry *g)
{
	return g->dev_sectors;
}

static int raid1_ncopies(const struct layout_geometry *g)
{
	return g->raid_disks;
}

static int raid1_map(const struct layout_geometry *g, uint64_t lsec, int copy,
                     struct layout_loc *loc, uint64_t *len)
{
	if (lsec >= g->dev_sectors || copy < 0 || copy >= g->raid_disks)
		return -ERANGE;
	loc->role = copy;
	loc->sector = lsec;
	if (len)
		*len = g->dev_sectors - lsec;
	return 0;
}

static bool raid1_readable(const struct layout_geometry *g, const bool *missing)
{
	for (int r = 0; r < g->raid_disks; r++)
		if (!missing[r])
			return true;
	return false;
}

static uint64_t raid1_member_used(const struct layout_geometry *g, int role)
{
	(void)role;
	return g->dev_sectors;
}

static int raid1_unmap(const struct layout_geometry *g, int role, uint64_t msec, uint64_t *lsec)
{
	if (role < 0 || role >= g->raid_disks || msec >= g->dev_sectors)
		return -ERANGE;
	*lsec = msec;
	return LAYOUT_DATA;
}

const struct layout_ops layout_raid1_ops = {
    .level = URAID_LEVEL_RAID1,
    .name = "raid1",
    .validate = raid1_validate,
    .array_sectors = raid1_array_sectors,
    .ncopies = raid1_ncopies,
    .map = raid1_map,
    .stripe = NULL,
    .readable = raid1_readable,
    .member_used = raid1_member_used,
    .unmap = raid1_unmap,
};
