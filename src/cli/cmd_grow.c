/* uraid grow NAME: mdadm --grow on a running array. The options are
 * mdadm's; the changes that move no data (bitmap, component size, array
 * size, raid1's mirror count) go to the array's daemon over the control
 * socket ("grow WHAT N", uraid_grow); the ones that move data go to the
 * restripe (cmd_grow_restripe.c), decided by cli_grow_needs_restripe. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/grow.h"
#include "layout/layout.h"
#include "uraid.h"

static const char usage_text[] =
    "usage: uraid grow NAME [--size=K|max] [--array-size=K|max]\n"
    "         [--bitmap=internal|none [--bitmap-chunk=SIZE]] [--raid-devices=N] [--level=L]\n"
    "         [--consistency-policy=resync|ppl]\n"
    "         [--layout=NAME] [--chunk=K] [--backup-file=FILE] [--force]\n"
    "         [--add MEMBER]\n"
    "  mdadm --grow on the running array NAME. Sizes are KiB unless a K/M/G/T\n"
    "  suffix says otherwise; 'max' is all the members allow.\n"
    "  --size: space used on each member (raid1/4/5/6/10); the new region is\n"
    "    resynced. Shrinking needs --array-size at or below the new size first.\n"
    "  --array-size: the size the array exports, kept in memory only (as md):\n"
    "    the next assembly exports the full size again.\n"
    "  --bitmap=internal|none: add or remove the write-intent bitmap\n"
    "    (--bitmap-chunk: the added one's chunk, a power of two).\n"
    "  --consistency-policy=resync|ppl: a raid5's partial parity log off or on\n"
    "    (as `uraid consistency-policy`), when no shape change is asked.\n"
    "  --raid-devices=N on raid1: more mirrors (spares added before become\n"
    "    mirrors and are recovered) or fewer (the slots removed must be empty).\n"
    "  --level: md's takeovers that move no data (raid0 <-> raid4/5 parity-last,\n"
    "    the parity member failed out on the way to raid0,\n"
    "    and raid10 near-2, raid1 <-> raid5 of 2, raid5 <-> raid6 with the -6\n"
    "    layout: --layout=preserve); slots added are recovered onto spares.\n"
    "  --force: more members than spares (mdadm's \"Need N spares\"): the new\n"
    "    slots are left empty, the array degraded (raid1, raid4/5/6).\n"
    "  --add MEMBER: a linear array appends it; others take it with\n"
    "    --raid-devices or --level, as a spare first.\n"
    "  Changes that restripe (raid4/5/6 members, chunk, layout, and the level\n"
    "  changes raid5 -> raid6, raid6 -> raid5, raid4 -> raid5, raid0 ->\n"
    "  raid4/5 with another layout or more members and raid5 -> raid0, done as\n"
    "  mdadm does them: a takeover and the reshape) are handed to the reshape.\n";

/* mdadm's parse_size: a number above 0, then K (the default), M, G, T or
 * s (sectors), upper case only; sectors, or -1 when it is none of those. */
static long long md_parse_size(const char *size)
{
	char *c;
	errno = 0;
	long long s = strtoll(size, &c, 10), mul = 2;
	if (s <= 0 || errno)
		return -1;
	switch (*c) {
	case 'K': c++; break;
	case 'M': c++, mul = 2048; break;
	case 'G': c++, mul = 2048LL * 1024; break;
	case 'T': c++, mul = 2048LL * 1024 * 1024; break;
	case 's': c++, mul = 1; break;
	default: break;
	}
	if (*c || s > LLONG_MAX / 4 / mul)
		return -1;
	return s * mul;
}

/* --size (at least 8 sectors) and --array-size (KiB, uraid's unit: at
 * least 2 sectors, where mdadm would set md's array_size to 0): mdadm's
 * KiB, or "max" (-2). Its parse errors exit 2, as its option parser does. */
static int parse_kib(const char *what, const char *s, long long min_sectors, int64_t *out)
{
	if (!strcmp(s, "max")) {
		*out = -2;
		return 0;
	}
	long long v = md_parse_size(s);
	if (v < min_sectors) {
		cli_error("grow", "invalid %s: %s", what, s);
		return 2;
	}
	*out = (int64_t)(v / 2);
	return 0;
}

/* md's level number for the struct (linear: LEVEL_LINEAR_ASK). */
static int parse_level(const char *s, int *out)
{
	int l;
	if (level_parse(s, &l) < 0) {
		cli_error("grow", "invalid raid level: %s", s);
		return 2;
	}
	*out = l == URAID_LEVEL_LINEAR ? LEVEL_LINEAR_ASK : l;
	return 0;
}

static int md_level(int l)
{
	return l == LEVEL_LINEAR_ASK ? URAID_LEVEL_LINEAR : l;
}

bool cli_grow_needs_restripe(const struct cli_grow_args *ga, int cur_level, int cur_layout,
                             int64_t cur_chunk_kib, int cur_raid_disks)
{
	int to = ga->level == -1 ? cur_level : md_level(ga->level);
	int n = ga->raid_devices == -1 ? cur_raid_disks : ga->raid_devices;
	int lay = ga->layout;
	if (ga->chunk_kib != -1 && ga->chunk_kib != cur_chunk_kib && to != URAID_LEVEL_RAID1 &&
	    to != URAID_LEVEL_LINEAR)
		return true;
	if (to == cur_level) {
		if (lay != -1 && lay != cur_layout)
			return true;
		/* raid1 gains or loses mirrors, linear appends: nothing moves. */
		if (n != cur_raid_disks)
			return to != URAID_LEVEL_RAID1 && to != URAID_LEVEL_LINEAR;
		return false;
	}
	/* md's takeovers, which keep every block where it is. */
	switch (cur_level) {
	case URAID_LEVEL_RAID0:
		if ((to == URAID_LEVEL_RAID4 || to == URAID_LEVEL_RAID5) &&
		    (n == cur_raid_disks + 1 || ga->raid_devices == -1))
			/* mdadm's raid5 default is left-symmetric: a restripe
			 * after the takeover unless parity-last is asked. */
			return to == URAID_LEVEL_RAID5 && lay != 5;
		if (to == URAID_LEVEL_RAID10)
			return ga->raid_devices != -1 && n != cur_raid_disks * 2;
		return true;
	case URAID_LEVEL_RAID1: return !(to == URAID_LEVEL_RAID5 && cur_raid_disks == 2 && n == 2);
	case URAID_LEVEL_RAID4:
		if (to == URAID_LEVEL_RAID0)
			return false;
		if (to == URAID_LEVEL_RAID5)
			return lay != -1 && lay != 5;
		return true;
	case URAID_LEVEL_RAID5:
		if (to == URAID_LEVEL_RAID0 || to == URAID_LEVEL_RAID4)
			return cur_layout != 5;
		if (to == URAID_LEVEL_RAID1)
			return cur_raid_disks != 2 || n != 2;
		if (to == URAID_LEVEL_RAID6)
			return lay != cli_grow_layout_6_of(cur_layout) ||
			       (ga->raid_devices != -1 && n != cur_raid_disks + 1);
		return true;
	case URAID_LEVEL_RAID6:
		if (to == URAID_LEVEL_RAID5)
			return ((cur_layout < 16 || cur_layout > 20) && cur_layout != 5) ||
			       (ga->raid_devices != -1 && n != cur_raid_disks - 1);
		return true;
	case URAID_LEVEL_RAID10:
		return !(to == URAID_LEVEL_RAID0 && cur_layout == 0x102 && cur_raid_disks % 2 == 0);
	}
	return true;
}

static int request(const char *name, const char *what, unsigned long long v, char *err,
                   size_t errlen)
{
	char line[128];
	snprintf(line, sizeof(line), "grow %s %llu", what, v);
	return uraid_control_request(name, line, NULL, 0, NULL, NULL, err, errlen);
}

static int do_array_size(const struct cli_grow_args *ga)
{
	char err[512];
	unsigned long long v =
	    ga->array_size_kib == -2 ? 0 : (unsigned long long)ga->array_size_kib;
	int rc = request(ga->name, "array-size", v * 2, err, sizeof(err));
	if (rc == -E2BIG) {
		cli_error("grow", "--array-size setting is too large.");
		fprintf(stderr, "       (%s)\n", err);
		return 1;
	}
	if (rc < 0)
		return cli_error("grow", "Error setting array size: %s", err);
	return 0;
}

static int do_size(const struct cli_grow_args *ga, const struct uraid_status *st)
{
	char err[512];
	unsigned long long v = ga->size_kib == -2 ? 0 : (unsigned long long)ga->size_kib;
	/* Grow_reshape sets a size other than the one there (or max) only */
	if (v && v == st->dev_sectors / 2) {
		fprintf(stderr, "uraid: grow: %s: no change requested\n", ga->name);
		return 0;
	}
	int rc = request(ga->name, "size", v * 2, err, sizeof(err));
	if (rc < 0) {
		cli_error("grow", "Cannot set device size for %s: %s", ga->name, strerror(-rc));
		fprintf(stderr, "       (%s)\n", err);
		if (rc == -EBUSY && st->bitmap_chunk_kib)
			fprintf(stderr,
			        "       Bitmap must be removed before size can be changed\n");
		return 1;
	}
	struct uraid_status now;
	if (uraid_control_status(ga->name, &now, err, sizeof(err)) < 0)
		return cli_error("grow", "%s", err);
	if (now.dev_sectors == st->dev_sectors)
		fprintf(stderr, "uraid: grow: component size of %s unchanged at %lluK\n", ga->name,
		        (unsigned long long)now.dev_sectors / 2);
	else
		fprintf(stderr, "uraid: grow: component size of %s has been set to %lluK\n",
		        ga->name, (unsigned long long)now.dev_sectors / 2);
	return 0;
}

static int do_bitmap(const struct cli_grow_args *ga, const struct uraid_status *st)
{
	char err[512];
	bool add = !strcmp(ga->bitmap, "internal");
	if (!add && strcmp(ga->bitmap, "none")) {
		cli_error("grow", "Cannot set bitmap file for %s: %s", ga->name,
		          strerror(EOPNOTSUPP));
		fputs(strcmp(ga->bitmap, "clustered")
		          ? "       (uraid keeps internal bitmaps only)\n"
		          : "       (uraid has no clustered md)\n",
		      stderr);
		return 1;
	}
	if (add && st->bitmap_chunk_kib)
		return cli_error("grow", "bitmap already present on %s", ga->name);
	if (!add && !st->bitmap_chunk_kib)
		return cli_error("grow", "no bitmap found on %s", ga->name);
	int rc = request(ga->name, add ? "bitmap-internal" : "bitmap-none",
	                 add ? ga->bitmap_chunk : 0, err, sizeof(err));
	if (rc < 0)
		return cli_error("grow", "failed to %s internal bitmap: %s", add ? "set" : "remove",
		                 err);
	return 0;
}

/* mdadm's Grow_consistency_policy: resync <-> ppl on a raid5. */
static int do_policy(const struct cli_grow_args *ga, const struct uraid_status *st)
{
	if (strcmp(ga->policy, "resync") && strcmp(ga->policy, "ppl"))
		return cli_error("grow", "Operation not supported for consistency policy %s",
		                 ga->policy);
	if (st->level != URAID_LEVEL_RAID5)
		return cli_error("grow", "Operation not supported for array level %d", st->level);
	const char *cur = st->ppl                ? "ppl"
	                  : st->bitmap_chunk_kib ? "bitmap"
	                  : st->journal          ? "journal"
	                                         : "resync";
	if (!strcmp(cur, ga->policy))
		return cli_error("grow", "Consistency policy is already %s", cur);
	if (strcmp(cur, "resync") && strcmp(cur, "ppl"))
		return cli_error("grow", "Current consistency policy is %s, cannot change to %s",
		                 cur, ga->policy);
	char line[64], err[512];
	snprintf(line, sizeof(line), "consistency-policy %s", ga->policy);
	if (uraid_control_request(ga->name, line, NULL, 0, NULL, NULL, err, sizeof(err)) < 0)
		return cli_error("grow", "%s", err);
	return 0;
}

static int do_raid_devices(const struct cli_grow_args *ga)
{
	char err[512];
	int rc = request(ga->name, "raid-devices", (unsigned long long)ga->raid_devices, err,
	                 sizeof(err));
	if (rc < 0) { /* reshape_array's, md having refused the raid_disks */
		cli_error("grow", "failed to set raid disks");
		fprintf(stderr, "       (%s: %s)\n", strerror(-rc), err);
		return 1;
	}
	return 0;
}

/* --add MEMBER: linear arrays append it (md's linear hot-add), the others
 * get it as a spare first (mdadm --grow --add), before the other changes. */
static int do_add(const char *name, const char *path, bool linear)
{
	char *r = realpath(path, NULL);
	/* Grow_Add_device's words for a linear array, Manage_subdevs' others */
	if (!r && linear)
		return cli_error("grow", "cannot open %s", path);
	if (!r)
		return cli_error("grow", "stat failed for %s: %s", path, strerror(errno));
	char esc[PATH_MAX * 3 + 1], line[sizeof(esc) + 16], err[512];
	size_t need = uraid_ctl_escape(r, esc, sizeof(esc));
	free(r);
	if (need >= sizeof(esc))
		return cli_error("grow", "%s: path too long", path);
	snprintf(line, sizeof(line), "%s %s", linear ? "grow-add" : "add", esc);
	if (uraid_control_request(name, line, NULL, 0, NULL, NULL, err, sizeof(err)) < 0)
		return cli_error("grow", "add new device failed for %s: %s", path, err);
	return 0;
}

static int sanity(const struct cli_grow_args *ga, const struct uraid_status *st)
{
	if (st->level == URAID_LEVEL_GMIRROR || st->level == URAID_LEVEL_GRAID3)
		return cli_error("grow", "%s is a GEOM array: see 'uraid mirror' / 'uraid raid3'",
		                 ga->name);
	/* mdadm.c's --grow: --array-size is set first, alone. */
	if (ga->array_size_kib != -1 && (ga->raid_devices != -1 || ga->level != -1)) {
		cli_error("grow", "cannot change array size in same operation as changing "
		                  "raiddisks or level.");
		fputs("    Change size first, then check that data is still intact.\n", stderr);
		return 1;
	}
	return 0;
}

/* mdadm.c's --grow after the array size: --add alone (no --raid-devices
 * or --level) takes no geometry change and is Grow_Add_device's, for
 * linear arrays only; --bitmap none but --level. */
static int alone(const struct cli_grow_args *ga, int level, bool layout, bool add)
{
	bool geometry = ga->size_kib != -1 || ga->chunk_kib != -1 || layout;
	bool add_alone = add && ga->raid_devices == -1 && ga->level == -1;
	if (add_alone && (geometry || ga->bitmap))
		return cli_error("grow", "--add cannot be used with other geometry changes in "
		                         "--grow mode");
	if (add_alone && level != URAID_LEVEL_LINEAR)
		return cli_error("grow", "can only add devices to linear arrays");
	if (ga->bitmap && (geometry || ga->raid_devices != -1 || add))
		return cli_error("grow", "--bitmap changes cannot be used with other geometry "
		                         "changes in --grow mode");
	return 0;
}

/* mdadm.c's refusal of an option given a second time (its text, with
 * the second value for %s), NULL if c is not one already set. */
static const char *once(int c, const struct cli_grow_args *ga, const char *layout)
{
	switch (c) {
	case 'n': return ga->raid_devices != -1 ? "raid-devices set twice" : NULL;
	case 'l':
		return ga->level != -1 ? "raid level may only be set once.  Second value is %s."
		                       : NULL;
	case 'p': return layout ? "layout may only be sent once.  Second value was %s" : NULL;
	case 'c':
		return ga->chunk_kib != -1
		           ? "chunk/rounding may only be specified once. Second value is %s."
		           : NULL;
	case 'z':
		return ga->size_kib != -1 ? "size may only be specified once. Second value is %s."
		                          : NULL;
	case 'Z':
		return ga->array_size_kib != -1
		           ? "array-size may only be specified once. Second value is %s."
		           : NULL;
	case 'b': return ga->bitmap ? "bitmap cannot be set twice. Second value: %s." : NULL;
	case 'B': return ga->backup_file ? "backup file already specified, rejecting %s" : NULL;
	}
	return NULL;
}

int cmd_grow(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"raid-devices", required_argument, NULL, 'n'},
	    {"level", required_argument, NULL, 'l'},
	    {"layout", required_argument, NULL, 'p'},
	    {"parity", required_argument, NULL, 'p'},
	    {"chunk", required_argument, NULL, 'c'},
	    {"size", required_argument, NULL, 'z'},
	    {"array-size", required_argument, NULL, 'Z'},
	    {"bitmap", required_argument, NULL, 'b'},
	    {"backup-file", required_argument, NULL, 'B'},
	    {"force", no_argument, NULL, 'f'},
	    {"add", required_argument, NULL, 'a'},
	    {"bitmap-chunk", required_argument, NULL, 'C'},
	    {"consistency-policy", required_argument, NULL, 'k'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct cli_grow_args ga = {.raid_devices = -1,
	                           .level = -1,
	                           .layout = -1,
	                           .chunk_kib = -1,
	                           .size_kib = -1,
	                           .array_size_kib = -1};
	const char *layout_name_arg = NULL, *add = NULL;
	int c, rc;
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:l:p:c:z:Z:b:fa:h", opts, NULL)) != -1) {
		/* mdadm.c: each option once (exit 2), checked before its value */
		const char *twice = once(c, &ga, layout_name_arg);
		if (twice) {
			if (c == 'n')
				cli_error("grow", "raid-devices set twice: %d and %s",
				          ga.raid_devices, optarg);
			else
				cli_error("grow", twice, optarg);
			return 2;
		}
		switch (c) {
		case 'n': { /* mdadm's parse_num */
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || v <= 0 || v > INT_MAX) {
				cli_error("grow", "invalid number of raid devices: %s", optarg);
				return 2;
			}
			ga.raid_devices = (int)v;
			break;
		}
		case 'l':
			if ((rc = parse_level(optarg, &ga.level)))
				return rc;
			break;
		case 'p': layout_name_arg = optarg; break;
		case 'c': { /* mdadm: 8 sectors at least, whole KiB; md: a power of two */
			long long v = md_parse_size(optarg);
			if (v < 8 || v % 2 || v > (1ll << 22)) {
				cli_error("grow", "invalid chunk/rounding value: %s", optarg);
				return 2;
			}
			ga.chunk_kib = (int64_t)(v / 2);
			break;
		}
		case 'z':
			if ((rc = parse_kib("size", optarg, 8, &ga.size_kib)))
				return rc;
			break;
		case 'Z':
			if ((rc = parse_kib("array size", optarg, 2, &ga.array_size_kib)))
				return rc;
			break;
		case 'b':
			if (strcmp(optarg, "internal") && strcmp(optarg, "none") &&
			    strcmp(optarg, "clustered") && !strchr(optarg, '/')) {
				cli_error("grow", "bitmap file must contain a '/', or be "
				                  "'internal', or be 'clustered', or 'none'");
				fprintf(stderr, "       not '%s'\n", optarg);
				return 2;
			}
			ga.bitmap = optarg;
			break;
		case 'B': ga.backup_file = optarg; break;
		case 'C': { /* mdadm.c: a power of two, parse_size's units */
			long long v = md_parse_size(optarg);
			if (v <= 0 || (v & (v - 1)) || v > (1ll << 31)) {
				cli_error("grow", "invalid bitmap chunksize: %s", optarg);
				return 2;
			}
			ga.bitmap_chunk = (uint64_t)v * 512;
			break;
		}
		case 'k': /* mdadm's consistency_policies map, from resync up */
			if (strcmp(optarg, "resync") && strcmp(optarg, "bitmap") &&
			    strcmp(optarg, "journal") && strcmp(optarg, "ppl")) {
				cli_error("grow", "Invalid consistency policy: %s", optarg);
				return 2;
			}
			ga.policy = optarg;
			break;
		case 'f': ga.force = true; break;
		case 'a': add = optarg; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs(usage_text, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(usage_text, stderr);
		return cli_error("grow", optind == argc ? "no array named"
		                                        : "one running array NAME (members of a "
		                                          "stopped array: assemble it first)");
	}
	ga.name = argv[optind];
	if (ga.raid_devices == 1 && !ga.force) {
		cli_error("grow",
		          "'1' is an unusual number of drives for an array, so it is probably");
		fputs("     a mistake.  If you really mean it you will need to specify --force "
		      "before\n"
		      "     setting the number of drives.\n",
		      stderr);
		return 2;
	}
	/* mdadm says so and exits 0 */
	if (ga.raid_devices == -1 && ga.level == -1 && !layout_name_arg && ga.chunk_kib == -1 &&
	    ga.size_kib == -1 && ga.array_size_kib == -1 && !ga.bitmap && !add && !ga.policy) {
		cli_error("grow", "no changes to --grow");
		return 0;
	}
	char err[512];
	struct uraid_status st;
	if (uraid_control_status(ga.name, &st, err, sizeof(err)) < 0)
		return cli_error("grow", "%s", err);
	int to = ga.level == -1 ? st.level : md_level(ga.level);
	if (sanity(&ga, &st))
		return 1;
	/* mdadm sets the array size first (in memory), whatever follows. */
	if (ga.array_size_kib != -1 && !st.readonly && do_array_size(&ga))
		return 1;
	if (alone(&ga, st.level, layout_name_arg != NULL, add != NULL) ||
	    cli_grow_refuse(&ga, &st, add != NULL, layout_name_arg))
		return 1;
	if (st.readonly)
		return cli_error("grow", "%s is read-only", ga.name);
	if (ga.bitmap)
		return do_bitmap(&ga, &st);
	if (add) {
		bool linear = st.level == URAID_LEVEL_LINEAR;
		if (linear &&
		    (ga.level != -1 || ga.size_kib != -1 || ga.layout != -1 || ga.chunk_kib != -1 ||
		     (ga.raid_devices != -1 && ga.raid_devices != st.raid_disks + 1)))
			return cli_error("grow",
			                 "a linear array only grows by one appended member");
		if (do_add(ga.name, add, linear))
			return 1;
		if (linear)
			return 0;
		if (uraid_control_status(ga.name, &st, err, sizeof(err)) < 0)
			return cli_error("grow", "%s", err);
	}
	if (ga.size_kib != -1)
		return do_size(&ga, &st);
	/* mdadm's Grow: the consistency policy when no shape change is asked */
	if (ga.policy && ga.raid_devices == -1 && ga.level == -1 && !layout_name_arg &&
	    ga.chunk_kib == -1)
		return do_policy(&ga, &st);
	int cur_layout = (int)st.layout;
	int64_t cur_chunk = st.chunk_sectors / 2;
	bool level_change = ga.level != -1 && to != st.level;
	bool n_change = ga.raid_devices != -1 && ga.raid_devices != st.raid_disks;
	bool layout_change = ga.layout != -1 && ga.layout != cur_layout;
	bool chunk_change = ga.chunk_kib != -1 && ga.chunk_kib != cur_chunk;
	if (!level_change && !n_change && !layout_change && !chunk_change) {
		if (ga.array_size_kib == -1)
			fprintf(stderr, "uraid: grow: %s: no change requested\n", ga.name);
		return 0;
	}
	if ((st.level == URAID_LEVEL_RAID1 || st.level == URAID_LEVEL_LINEAR) && chunk_change &&
	    !level_change)
		return cli_error("grow", "%s has no chunk size to change", level_name(st.level));
	if (cli_grow_needs_restripe(&ga, st.level, cur_layout, cur_chunk, st.raid_disks))
		return cli_grow_restripe(&ga);
	if (!level_change && st.level == URAID_LEVEL_RAID1)
		return do_raid_devices(&ga);
	if (!level_change)
		return cli_error("grow",
		                 st.level == URAID_LEVEL_LINEAR
		                     ? "%s: a %s grows by one member at a time: --add MEMBER"
		                     : "%s: %s: nothing to do without a reshape",
		                 ga.name, level_name(st.level));
	if (to == URAID_LEVEL_LINEAR)
		return cli_error("grow", "%s: md cannot take %s over as linear", ga.name,
		                 level_name(st.level));
	char line[128], lay[16] = "any";
	if (ga.layout != -1)
		snprintf(lay, sizeof(lay), "%d", ga.layout);
	snprintf(line, sizeof(line), "takeover %d %s %d", to, lay,
	         ga.raid_devices == -1 ? 0 : ga.raid_devices);
	rc = uraid_control_request(ga.name, line, NULL, 0, NULL, NULL, err, sizeof(err));
	if (rc < 0)
		return cli_error("grow", "%s: %s -> %s: %s", ga.name, level_name(st.level),
		                 level_name(to), err);
	fprintf(stderr, "uraid: grow: level of %s changed to %s\n", ga.name, level_name(to));
	return 0;
}
