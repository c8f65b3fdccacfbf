/* The choice of I/O personality by md level: the one place that knows
 * which family serves which level. A new family adds its descriptor here. */
#include "engine/md.h"
#include "engine/mirror/mirror.h"
#include "engine/plain/plain.h"
#include "engine/raid456/raid456.h"

const struct eng_pers *eng_pers_for(int level)
{
	switch (level) {
	case URAID_LEVEL_LINEAR:
	case URAID_LEVEL_RAID0: return &eng_pers_plain;
	case URAID_LEVEL_RAID1:
	case URAID_LEVEL_RAID10: return &eng_pers_mirror;
	case URAID_LEVEL_RAID4:
	case URAID_LEVEL_RAID5:
	case URAID_LEVEL_RAID6: return &eng_pers_raid456;
	default: return NULL;
	}
}
