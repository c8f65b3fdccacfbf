/* uraid grow's refusals that mdadm's Grow_reshape, analyse_change and
 * Grow_addbitmap make before asking the kernel anything (cli/grow.h): the
 * same cases, in mdadm's words, before uraid grow sends a request, so
 * nothing is written. Those the kernel (uraid's engine) makes are the
 * engine's. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/grow.h"
#include "uraid.h"

#define MAX_DEVS_090 27 /* mdadm's super0 max_devs (MD_SB_DISKS) */
#define MAX_DEVS_1   384

static int md_to(const struct cli_grow_args *ga, int cur)
{
	if (ga->level == -1)
		return cur;
	return ga->level == LEVEL_LINEAR_ASK ? URAID_LEVEL_LINEAR : ga->level;
}

/* analyse_change's level conversions uraid would otherwise refuse in its
 * own words (or not at all). */
static const char *level_refusal(const struct cli_grow_args *ga, const struct uraid_status *st,
                                 int to)
{
	int from = st->level;
	bool nd = ga->raid_devices != -1 && ga->raid_devices != st->raid_disks;
	if (to == from)
		return NULL;
	switch (from) {
	case URAID_LEVEL_RAID1:
		if (to == URAID_LEVEL_RAID5 && st->raid_disks != 2)
			return "Can only convert a 2-device array to RAID5";
		if (to != URAID_LEVEL_RAID0 && to != URAID_LEVEL_RAID5)
			return "Impossibly level change request for RAID1";
		return NULL;
	case URAID_LEVEL_RAID10:
		return to == URAID_LEVEL_RAID0 ? NULL : "RAID10 can only be changed to RAID0";
	case URAID_LEVEL_RAID0:
		/* near-N: N-1 times the members more; f/o layouts are not. */
		if (to == URAID_LEVEL_RAID10 && ga->layout != -1 && ga->raid_devices == -1 &&
		    ga->layout != 0x100 + (ga->layout & 0xff))
			return "New layout impossible for RAID0->RAID10";
		if (to == URAID_LEVEL_RAID10 && ga->layout == -1 && nd &&
		    (ga->raid_devices - st->raid_disks) % st->raid_disks)
			return "Impossible number of devices for RAID0->RAID10";
		return NULL;
	case URAID_LEVEL_RAID5:
		if (to == URAID_LEVEL_RAID1 && st->raid_disks != 2)
			return "Can only convert a 2-device array to RAID1";
		if (to == URAID_LEVEL_RAID1 && nd)
			return "Cannot set raid_disk when converting RAID5->RAID1";
		return NULL;
	case URAID_LEVEL_RAID6:
		if (to == URAID_LEVEL_RAID4)
			return "Cannot convert to RAID4 from this level";
		return NULL;
	}
	return NULL;
}

int cli_grow_refuse(const struct cli_grow_args *ga, const struct uraid_status *st, bool adding)
{
	int to = md_to(ga, st->level);
	if (ga->bitmap && !st->bitmap_chunk_kib && !strcmp(ga->bitmap, "internal")) {
		if (st->level == URAID_LEVEL_RAID0 || st->level == URAID_LEVEL_LINEAR)
			return cli_error("grow", "Bitmaps not meaningful with level %s",
			                 uraid_md_personality(st->level));
		if (st->ppl)
			return cli_error("grow", "Cannot add bitmap to array with PPL");
	}
	if (ga->level != -1 && to != st->level && ga->chunk_kib != -1)
		return cli_error("grow", "Cannot change array level in the same operation as "
		                         "changing chunk size.");
	int max = st->metadata == 0 ? MAX_DEVS_090 : MAX_DEVS_1;
	if (ga->raid_devices > max)
		return cli_error("grow", "Cannot increase raid-disks on this array beyond %d", max);
	if (st->level > 1 && ga->size_kib > 1 && (int64_t)st->chunk_sectors / 2 > ga->size_kib)
		return cli_error("grow", "component size must be larger than chunk size.");
	if (ga->size_kib != -1 && st->level == URAID_LEVEL_RAID0)
		return cli_error("grow", "Component size change is not supported for RAID0");
	if (st->level == URAID_LEVEL_LINEAR && ga->raid_devices != -1 && ga->level == -1 && !adding)
		return cli_error("grow", "Only --add is supported for LINEAR, setting --raid-disks "
		                         "is not needed");
	if (st->level == URAID_LEVEL_LINEAR && ga->level == -1 && ga->chunk_kib != -1)
		return cli_error("grow", "Only --add is supported for LINEAR, other --grow options "
		                         "are not meaningful");
	if ((to == URAID_LEVEL_RAID1 || to == URAID_LEVEL_LINEAR) && ga->chunk_kib != -1)
		return cli_error("grow", "chunk size not meaningful for this level");
	uint64_t dev_kib = st->dev_sectors / 2;
	if (ga->chunk_kib > 0 && ga->size_kib == -1 && dev_kib &&
	    dev_kib % (uint64_t)ga->chunk_kib) {
		cli_error("grow",
		          "New chunk size (%lldK) does not evenly divide device size (%lluk)",
		          (long long)ga->chunk_kib, (unsigned long long)dev_kib);
		fprintf(stderr,
		        "       After shrinking any filesystem, \"uraid grow %s --size %llu\"\n"
		        "       will shrink the array so the given chunk size would work.\n",
		        ga->name,
		        (unsigned long long)(dev_kib - dev_kib % (uint64_t)ga->chunk_kib));
		return 1;
	}
	/* mdadm's freeze(): md freezes an idle array or a recovery only. */
	bool change = ga->size_kib != -1 || ga->raid_devices != -1 || ga->level != -1 ||
	              ga->layout != -1 || ga->chunk_kib != -1;
	if (change && st->sync_action != URAID_SYNC_IDLE && st->sync_action != URAID_SYNC_RECOVER)
		return cli_error("grow", "%s is performing resync/recovery and cannot be %s",
		                 ga->name, to != st->level ? "taken over" : "reshaped");
	const char *why = level_refusal(ga, st, to);
	if (why)
		return cli_error("grow", "%s", why);
	return 0;
}
