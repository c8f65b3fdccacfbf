/* uraid grow's refusals that mdadm 4.2 makes before asking the kernel
 * anything (cli/grow.h): mdadm.c's --grow checks, Grow_reshape's, its
 * layout parsing, analyse_change's and reshape_array's spare and size
 * counts, in mdadm's words and order, before uraid grow sends a request, so
 * nothing is written. Those the kernel (uraid's engine) makes are the
 * engine's (cli_grow_engine_error puts the ones mdadm words on several
 * lines back on them). tests/integration/grow_refuse.table lists them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/grow.h"
#include "layout/layout.h"
#include "meta/md_super.h"
#include "uraid.h"

static int md_to(const struct cli_grow_args *ga, int cur)
{
	if (ga->level == -1)
		return cur;
	return ga->level == LEVEL_LINEAR_ASK ? URAID_LEVEL_LINEAR : ga->level;
}

int cli_grow_layout_6_of(int r5)
{
	return r5 >= 0 && r5 <= 3 ? r5 + 16 : r5 == 4 ? 20 : r5 == 5 ? 5 : -1;
}

/* mdadm 4.2's parse_layout_10 ('n', 'o' or 'f' and 1 to 200 copies, no
 * more): the layout, or LAYOUT_BAD_10 for its -1, which is not mdadm's
 * UnSet, so analyse_change goes on with it (and refuses it as a layout
 * of another copy count). */
static int parse_layout_10(const char *layout)
{
	char *cp;
	if (layout[0] != 'n' && layout[0] != 'f' && layout[0] != 'o')
		return LAYOUT_BAD_10;
	int copies = (int)strtoul(layout + 1, &cp, 10);
	if (copies < 1 || copies > 200 || *cp)
		return LAYOUT_BAD_10;
	if (layout[0] == 'n')
		return 256 + copies;
	if (layout[0] == 'o')
		return 0x10000 + (copies << 8) + 1;
	return 1 + (copies << 8);
}

/* Grow_reshape's layout parsing: the name is for the level asked (or the
 * array's); preserve / normalise are raid6's. */
static int resolve_layout(struct cli_grow_args *ga, const struct uraid_status *st, const char *name)
{
	int lvl = st->level, to = md_to(ga, lvl), cur = (int)st->layout;
	bool same = ga->level == -1; /* mdadm: new_level UnSet */
	if (!name) {
		/* (mdadm's "no change requested" comes first) */
		bool change =
		    (ga->raid_devices != -1 && ga->raid_devices != st->raid_disks) || to != lvl ||
		    (ga->chunk_kib != -1 && ga->chunk_kib != (int64_t)st->chunk_sectors / 2);
		if (change && lvl == URAID_LEVEL_RAID6 && to == URAID_LEVEL_RAID6 && cur >= 16) {
			cli_error("grow",
			          "%s has a non-standard layout.  If you wish to preserve this",
			          ga->name);
			fputs("       during the reshape, please specify --layout=preserve\n"
			      "       If you want to change it, specify a layout or use "
			      "--layout=normalise\n",
			      stderr);
			return 1;
		}
		return 0;
	}
	if (!strcmp(name, "normalise") || !strcmp(name, "normalize")) {
		if (lvl != URAID_LEVEL_RAID6 || !same)
			return cli_error(
			    "grow", "%s is only meaningful when reshaping a RAID6 array.", name);
		/* the -6 twin's raid5 layout; others unchanged */
		ga->layout = cur >= 16 && cur <= 19 ? cur - 16 : cur == 20 ? 4 : -1;
		return 0;
	}
	if (!strcmp(name, "preserve")) {
		if (lvl == URAID_LEVEL_RAID6 && same)
			ga->layout = cur;
		else if (lvl == URAID_LEVEL_RAID5 && to == URAID_LEVEL_RAID6)
			ga->layout = cli_grow_layout_6_of(cur);
		else
			return cli_error("grow", "%s in only meaningful when reshaping to RAID6",
			                 name);
		return ga->layout < 0
		           ? cli_error("grow", "--layout=preserve: no -6 layout for this "
		                               "raid5 layout")
		           : 0;
	}
	if (to != URAID_LEVEL_RAID5 && to != URAID_LEVEL_RAID6 && to != URAID_LEVEL_RAID10)
		return cli_error("grow", "layout not meaningful with this level");
	if (to == URAID_LEVEL_RAID10) {
		ga->layout = parse_layout_10(name);
		return 0;
	}
	uint32_t v;
	if (layout_parse(to, name, &v) < 0)
		return cli_error("grow", "layout %s not understood for this level", name);
	ga->layout = (int)v;
	return 0;
}

/* analyse_change's level conversions, by the array's level. */
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
		if (to == URAID_LEVEL_RAID5 && ga->raid_devices != -1 && ga->raid_devices < 2)
			return "Number of disks too small for RAID5";
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
		if (to != URAID_LEVEL_RAID4 && to != URAID_LEVEL_RAID5 && to != URAID_LEVEL_RAID6 &&
		    to != URAID_LEVEL_RAID10)
			return "Impossible level change requested";
		return NULL;
	case URAID_LEVEL_RAID4:
	case URAID_LEVEL_RAID5:
		if (to == URAID_LEVEL_RAID1 && st->raid_disks != 2)
			return "Can only convert a 2-device array to RAID1";
		if (to == URAID_LEVEL_RAID1 && nd)
			return "Cannot set raid_disk when converting RAID5->RAID1";
		if (to != URAID_LEVEL_RAID0 && to != URAID_LEVEL_RAID1 && to != URAID_LEVEL_RAID4 &&
		    to != URAID_LEVEL_RAID5 && to != URAID_LEVEL_RAID6)
			return "Impossible level change requested";
		return NULL;
	case URAID_LEVEL_RAID6:
		if (to != URAID_LEVEL_RAID4 && to != URAID_LEVEL_RAID5)
			return "Impossible level change requested";
		if (to == URAID_LEVEL_RAID4)
			return "Cannot convert to RAID4 from this level";
		return NULL;
	}
	return NULL;
}

/* Members that count as mdadm's spare_disks (md counts one being rebuilt). */
static int spares_of(const struct uraid_status *st, bool adding)
{
	int have = adding;
	for (int i = 0; i < st->nmembers; i++)
		have += st->members[i].state == URAID_MEMBER_SPARE ||
		        st->members[i].state == URAID_MEMBER_REBUILDING;
	return have;
}

static int parity_of(int level)
{
	return level == URAID_LEVEL_RAID6                                 ? 2
	       : level == URAID_LEVEL_RAID4 || level == URAID_LEVEL_RAID5 ? 1
	                                                                  : 0;
}

/* analyse_change's chunk checks. */
static int chunk_refusal(const struct cli_grow_args *ga, const struct uraid_status *st, int to)
{
	if (ga->chunk_kib == -1)
		return 0;
	if (to == URAID_LEVEL_RAID1 || to == URAID_LEVEL_LINEAR)
		return cli_error("grow", "chunk size not meaningful for this level");
	uint64_t dev_kib = st->dev_sectors / 2;
	if (ga->chunk_kib > 0 && dev_kib && dev_kib % (uint64_t)ga->chunk_kib) {
		cli_error("grow",
		          "New chunk size (%lldK) does not evenly divide device size (%lluk)",
		          (long long)ga->chunk_kib, (unsigned long long)dev_kib);
		cli_error("grow", "After shrinking any filesystem, \"uraid grow %s --size %llu\"",
		          ga->name,
		          (unsigned long long)(dev_kib - dev_kib % (uint64_t)ga->chunk_kib));
		return cli_error("grow",
		                 "will shrink the array so the given chunk size would work.");
	}
	return 0;
}

static bool striped(int level)
{
	return level == URAID_LEVEL_RAID0 || level == URAID_LEVEL_RAID4 ||
	       level == URAID_LEVEL_RAID5 || level == URAID_LEVEL_RAID6;
}

int cli_grow_data_disks(const struct cli_grow_args *ga, const struct uraid_status *st, int to,
                        int *before, int *after)
{
	int from = st->level;
	if (!striped(from) || !striped(to))
		return -1;
	*before = st->raid_disks - parity_of(from);
	*after = ga->raid_devices > 0 ? ga->raid_devices - parity_of(to) : *before;
	if (from == URAID_LEVEL_RAID0)
		return to == URAID_LEVEL_RAID0 ? URAID_LEVEL_RAID4 : to;
	if (from == URAID_LEVEL_RAID6 || to == URAID_LEVEL_RAID6)
		return URAID_LEVEL_RAID6;
	return to == URAID_LEVEL_RAID5 ? URAID_LEVEL_RAID5 : from;
}

/* reshape_array's spare counts for a level change between raid0/4/5/6:
 * for the larger geometry at the intermediate level (unless --force, and
 * not to or from raid0), and for its data members. */
static int level_spares_refusal(const struct cli_grow_args *ga, const struct uraid_status *st,
                                int have)
{
	int to = md_to(ga, st->level), before, after;
	int re = cli_grow_data_disks(ga, st, to, &before, &after);
	if (re < 0)
		return 0;
	int most = before > after ? before : after;
	int need = most + parity_of(re) - st->raid_disks;
	if (!ga->force && to > 1 && st->level > 1 && need > have) {
		cli_error("grow", "Need %d spare%s to avoid degraded array, and only have %d.",
		          need, need == 1 ? "" : "s", have);
		fputs("       Use --force to over-ride this check.\n", stderr);
		return 1;
	}
	need = most - st->raid_disks;
	if (need > have)
		return cli_error("grow",
		                 "Need %d spare%s to create working array, and only have %d.", need,
		                 need == 1 ? "" : "s", have);
	return 0;
}

/* reshape_array's counts for a raid4/5/6/10 reshape that keeps the level:
 * spares for the new data members (with --force too), and the size. */
static int reshape_refusal(const struct cli_grow_args *ga, const struct uraid_status *st,
                           bool adding)
{
	int lvl = st->level, n = ga->raid_devices == -1 ? st->raid_disks : ga->raid_devices;
	int par = parity_of(lvl), have = spares_of(st, adding);
	if (md_to(ga, lvl) != lvl)
		return level_spares_refusal(ga, st, have);
	if (parity_of(lvl) == 0 && lvl != URAID_LEVEL_RAID10)
		return 0;
	int need = n - par - st->raid_disks;
	if (need > have)
		return cli_error("grow",
		                 "Need %d spare%s to create working array, and only have %d.", need,
		                 need == 1 ? "" : "s", have);
	uint64_t chunk = ga->chunk_kib > 0 ? (uint64_t)ga->chunk_kib * 2 : st->chunk_sectors;
	if (lvl == URAID_LEVEL_RAID10 || !chunk || n >= st->raid_disks)
		return 0;
	uint64_t size = (st->dev_sectors - st->dev_sectors % chunk) * (uint64_t)(n - par);
	if (size >= st->array_sectors)
		return 0;
	cli_error("grow", "this change will reduce the size of the array.");
	fprintf(stderr,
	        "       use --grow --array-size first to truncate array.\n"
	        "       e.g. uraid grow %s --array-size %llu\n",
	        ga->name, (unsigned long long)size / 2);
	return 1;
}

int cli_grow_refuse(struct cli_grow_args *ga, const struct uraid_status *st, bool adding,
                    const char *layout_name)
{
	int to = md_to(ga, st->level);
	bool size_only = ga->size_kib != -1;
	if (ga->bitmap) {
		if (!st->bitmap_chunk_kib && !strcmp(ga->bitmap, "internal")) {
			if (st->level == URAID_LEVEL_RAID0 || st->level == URAID_LEVEL_LINEAR)
				return cli_error("grow", "Bitmaps not meaningful with level %s",
				                 uraid_md_personality(st->level));
			if (st->ppl)
				return cli_error("grow", "Cannot add bitmap to array with PPL");
		}
		return 0;
	}
	/* Grow_reshape, in its order. */
	if (ga->level != -1 && ga->chunk_kib != -1)
		return cli_error("grow", "Cannot change array level in the same operation as "
		                         "changing chunk size.");
	if (size_only &&
	    (ga->chunk_kib != -1 || ga->level != -1 || layout_name || ga->raid_devices != -1)) {
		cli_error("grow",
		          "cannot change component size at the same time as other changes.");
		fputs("   Change size first, then check data is intact before making other "
		      "changes.\n",
		      stderr);
		return 1;
	}
	if (st->level > 1 && ga->size_kib > 1 && (int64_t)st->chunk_sectors / 2 > ga->size_kib)
		return cli_error("grow", "component size must be larger than chunk size.");
	int max = st->metadata == 0 ? MD_SB0_MAX_DEVS : MD_SB1_MAX_DEVS;
	if (ga->raid_devices > max)
		return cli_error("grow", "Cannot increase raid-disks on this array beyond %d", max);
	int need = ga->raid_devices - st->raid_disks, have = spares_of(st, adding);
	if (!ga->force && need > have) {
		cli_error("grow", "Need %d spare%s to avoid degraded array, and only have %d.",
		          need, need == 1 ? "" : "s", have);
		fputs("       Use --force to over-ride this check.\n", stderr);
		return 1;
	}
	/* mdadm's freeze(): md freezes an idle array or a recovery only. */
	bool change = size_only || ga->raid_devices != -1 || ga->level != -1 || layout_name ||
	              ga->chunk_kib != -1;
	if (change && st->sync_action != URAID_SYNC_IDLE && st->sync_action != URAID_SYNC_RECOVER)
		return cli_error("grow", "%s is performing resync/recovery and cannot be %s",
		                 ga->name, to != st->level ? "taken over" : "reshaped");
	if (size_only)
		return st->level == URAID_LEVEL_RAID0 || st->level == URAID_LEVEL_LINEAR
		           ? cli_error("grow", "Cannot set device size in this type of array.")
		           : 0;
	if (resolve_layout(ga, st, layout_name))
		return 1;
	/* analyse_change */
	if (chunk_refusal(ga, st, to))
		return 1;
	if (st->level == URAID_LEVEL_LINEAR && ga->raid_devices != -1)
		return cli_error("grow", "Only --add is supported for LINEAR, setting --raid-disks "
		                         "is not needed");
	if (st->level == URAID_LEVEL_LINEAR && (ga->level != -1 || ga->layout != -1))
		return cli_error("grow", "Only --add is supported for LINEAR, other --grow options "
		                         "are not meaningful");
	const char *why = level_refusal(ga, st, to);
	if (why)
		return cli_error("grow", "%s", why);
	/* raid10 -> raid10: mdadm's -1 has 255 x 255 copies; other uses
	 * of it would reach the kernel. */
	if (ga->layout == LAYOUT_BAD_10)
		return st->level == URAID_LEVEL_RAID10
		           ? cli_error("grow",
		                       "Cannot change number of copies when reshaping RAID10")
		           : cli_error("grow", "layout %s not understood for this level",
		                       layout_name);
	if (reshape_refusal(ga, st, adding))
		return 1;
	/* md's check_reshape: a power-of-two chunk (mdadm: the kernel's EINVAL) */
	if (ga->chunk_kib > 0 && (ga->chunk_kib & (ga->chunk_kib - 1)))
		return cli_error("grow", "Cannot set device shape for %s", ga->name);
	return 0;
}

/* The engine's refusals that mdadm words on more than one line. */
void cli_grow_engine_error(const char *name, const char *err)
{
	static const char cut[] = "this change will reduce the size of the array: use --grow "
	                          "--array-size first to truncate the array (e.g. --array-size=";
	static const char force[] = " Use --force to over-ride this check.";
	size_t el = strlen(err), fl = strlen(force);
	unsigned long long k;
	if (!strncmp(err, cut, sizeof(cut) - 1) &&
	    sscanf(err + sizeof(cut) - 1, "%lluK", &k) == 1) {
		cli_error("grow", "this change will reduce the size of the array.");
		fprintf(stderr,
		        "       use --grow --array-size first to truncate array.\n"
		        "       e.g. uraid grow %s --array-size %llu\n",
		        name, k);
		return;
	}
	/* Grow.c's backup refusals name the array; uraid's reason follows. */
	static const char *const backup[] = {
	    "Cannot grow - need a spare or backup-file to backup critical section",
	    "Cannot grow - need backup-file"};
	for (int i = 0; i < 2; i++) {
		size_t bl = strlen(backup[i]);
		if (strncmp(err, backup[i], bl) || (err[bl] != ' ' && err[bl] != ':'))
			continue;
		cli_error("grow", "%s: %s", name, backup[i]);
		if (i == 1)
			cli_error("grow", " Please provide one with \"--backup=...\"");
		const char *why = strchr(err + bl, '(');
		if (why)
			fprintf(stderr, "       %s\n", why);
		return;
	}
	/* reshape_open_backup_file's, which names the array too */
	if (!strncmp(err, "cannot create backup file ", 26)) {
		cli_error("grow", "%s: %s", name, err);
		return;
	}
	if (el > fl && !strcmp(err + el - fl, force)) {
		cli_error("grow", "%.*s", (int)(el - fl), err);
		fputs("       Use --force to over-ride this check.\n", stderr);
		return;
	}
	cli_error("grow", "%s", err);
}
