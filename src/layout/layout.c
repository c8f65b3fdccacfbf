/* The registry of layout personalities: one descriptor per md level. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout_int.h"
#include "util/errmsg.h"

const struct layout_ops *layout_ops_for(int level)
{
	switch (level) {
	case URAID_LEVEL_LINEAR: return &layout_linear_ops;
	case URAID_LEVEL_RAID0: return &layout_raid0_ops;
	case URAID_LEVEL_RAID1: return &layout_raid1_ops;
	case URAID_LEVEL_RAID4: return &layout_raid4_ops;
	case URAID_LEVEL_RAID5: return &layout_raid5_ops;
	case URAID_LEVEL_RAID6: return &layout_raid6_ops;
	case URAID_LEVEL_RAID10: return &layout_raid10_ops;
	default: return NULL;
	}
}

int layout_validate(const struct layout_geometry *g, char *err, size_t errlen)
{
	if (!g)
		return errmsg(err, errlen, -EINVAL, "no geometry");
	const struct layout_ops *ops = layout_ops_for(g->level);
	if (!ops)
		return errmsg(err, errlen, -EOPNOTSUPP, "unsupported RAID level %d", g->level);
	return ops->validate(g, err, errlen);
}
