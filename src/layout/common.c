/* Checks and ops several layout personalities share. */
#include <errno.h>

#include "layout/layout_int.h"
#include "util/errmsg.h"

int layout_check_disks(const struct layout_geometry *g, int min, int max, char *err, size_t errlen)
{
	if (g->raid_disks < min)
		return errmsg(err, errlen, -EINVAL, "%s needs at least %d members, not %d",
		              level_name(g->level), min, g->raid_disks);
	if (g->raid_disks > max)
		return errmsg(err, errlen, -EINVAL, "%s takes at most %d members, not %d",
		              level_name(g->level), max, g->raid_disks);
	return 0;
}

int layout_one_copy(const struct layout_geometry *g)
{
	(void)g;
	return 1;
}

bool layout_none_missing(const struct layout_geometry *g, const bool *missing)
{
	for (int r = 0; r < g->raid_disks; r++)
		if (missing[r])
			return false;
	return true;
}

int layout_check_chunk_pow2(const struct layout_geometry *g, char *err, size_t errlen)
{
	if (g->chunk_sectors < 8 || !layout_is_pow2(g->chunk_sectors))
		return errmsg(err, errlen, -EINVAL,
		              "%s: chunk size %u sectors is not a power of two of at least 4 KiB",
		              level_name(g->level), g->chunk_sectors);
	return 0;
}
