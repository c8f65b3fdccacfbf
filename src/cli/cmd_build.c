/* uraid build: mdadm --build, an array with no superblock (src/engine/
 * build_class.c), run by a daemon like any array and read-only for good. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_array.h"
#include "layout/layout.h"
#include "uraid.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: uraid build --level=L --raid-devices=N [--chunk=SIZE] [--layout=NAME]\n"
	           "         [--data-offset=SIZE] [--size=SIZE] [--name=NAME] MEMBER|missing ...\n"
	           "  Runs an array that has no superblock (mdadm --build) from members given in\n"
	           "  role order, 'missing' for an absent one, for linear, raid0, raid1, raid4,\n"
	           "  raid5, raid6 and raid10. Nothing is ever written to a member: the array is\n"
	           "  read-only (cat NAME, serve NAME --readonly, attach NAME --readonly, stop).\n"
	           "  --chunk (default 64K for linear, whose rounding it is, and raid0, as in\n"
	           "  mdadm --build; 512K for the others; linear takes 0, no rounding, as md's\n"
	           "  1.x linear arrays have), --data-offset (default 0: where each member's data\n"
	           "  starts) and --size (data used of each member; default all of the smallest)\n"
	           "  take K/M/G suffixes or s for sectors; a bare number is KiB, as in mdadm.\n"
	           "  `uraid probe` prints this line for members whose superblocks are gone.\n");
}

/* A size option: bare number KiB, suffix s for 512-byte sectors. */
static int parse_sectors(const char *opt, const char *s, uint64_t *sectors)
{
	unsigned long long v;
	size_t n = strlen(s);
	if (n > 1 && (s[n - 1] == 's' || s[n - 1] == 'S')) {
		char *end;
		errno = 0;
		v = strtoull(s, &end, 10);
		if (errno || end != s + n - 1)
			return cli_error("build", "bad %s '%s'", opt, s);
		*sectors = v;
		return 0;
	}
	if (cli_parse_size(s, 1024, &v) < 0 || v % 512)
		return cli_error(
		    "build", "bad %s '%s': a size such as 1M, 2048s or 1024 (KiB), whole sectors",
		    opt, s);
	*sectors = v / 512;
	return 0;
}

static int parse_opts(int argc, char **argv, struct uraid_build_opts *o, const char **name)
{
	static const struct option opts[] = {{"level", required_argument, NULL, 'l'},
	                                     {"raid-devices", required_argument, NULL, 'n'},
	                                     {"chunk", required_argument, NULL, 'c'},
	                                     {"layout", required_argument, NULL, 'p'},
	                                     {"data-offset", required_argument, NULL, 'd'},
	                                     {"size", required_argument, NULL, 'z'},
	                                     {"name", required_argument, NULL, 'N'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	const char *level = NULL, *layout = NULL;
	bool chunk_zero = false;
	int c;
	uint64_t v;
	optind = 1;
	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "l:n:c:p:d:z:N:h", opts, NULL)) != -1) {
		switch (c) {
		case 'l': level = optarg; break;
		case 'p': layout = optarg; break;
		case 'N': *name = optarg; break;
		case 'n': {
			char *end;
			long r = strtol(optarg, &end, 10);
			if (*end || r < 1 || r > LAYOUT_MAX_MEMBERS)
				return cli_error("build", "--raid-devices '%s': must be 1 to %d",
				                 optarg, LAYOUT_MAX_MEMBERS);
			o->raid_devices = (int)r;
			break;
		}
		case 'c':
			if (parse_sectors("--chunk", optarg, &v))
				return 1;
			/* 0: a linear array without rounding (md's 1.x ones),
			 * which mdadm --build cannot give (--chunk=0 refused) */
			if (v == 0)
				chunk_zero = true;
			else if (v < 8 || (v & (v - 1)) || v > UINT32_MAX)
				return cli_error("build",
				                 "--chunk=%s: must be a power of two of at "
				                 "least 4K (0: a linear array without rounding)",
				                 optarg);
			o->chunk_sectors = (uint32_t)v;
			break;
		case 'd':
			if (parse_sectors("--data-offset", optarg, &o->data_offset_sectors))
				return 1;
			break;
		case 'z':
			if (parse_sectors("--size", optarg, &o->size_sectors))
				return 1;
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (!level || !o->raid_devices)
		return cli_error("build", "--level and --raid-devices are required");
	if (level_parse(level, &o->level) < 0)
		return cli_error("build", "unknown level '%s'", level);
	if (chunk_zero && o->level != URAID_LEVEL_LINEAR)
		return cli_error("build",
		                 "--chunk=0: only a linear array goes without (its rounding)");
	if (layout) {
		if (layout_parse(o->level, layout, &o->layout) < 0)
			return cli_error("build", "unknown layout '%s' for %s", layout,
			                 level_name(o->level));
		o->layout_set = true;
	}
	if (optind >= argc)
		return cli_error("build", "no members given");
	/* mdadm's --build default for these (Build.c): 64K chunk or rounding;
	 * the library's (512K, none) is what the other levels keep */
	if (!o->chunk_sectors && !chunk_zero &&
	    (o->level == URAID_LEVEL_RAID0 || o->level == URAID_LEVEL_LINEAR))
		o->chunk_sectors = 128;
	return 0;
}

int cmd_build(int argc, char **argv)
{
	struct uraid_build_opts o;
	const char *want = NULL;
	int rc = parse_opts(argc, argv, &o, &want);
	if (rc)
		return rc;
	int n = argc - optind;
	char **mm = argv + optind;
	/* Built once here, so refusals reach the user, then again by the daemon. */
	char err[512], spec[256];
	struct uraid_array *a;
	if (uraid_build(&o, (const char *const *)mm, n, URAID_NO_SYNC_THREAD, &a, err,
	                sizeof(err)) < 0)
		return cli_error("build", "%s", err);
	uint64_t bytes = uraid_size(a);
	uraid_stop(a);
	const char *first = mm[0];
	for (int i = 0; i < n; i++)
		if (strcmp(mm[i], "missing")) {
			first = mm[i];
			break;
		}
	char nm[URAID_NAME_MAX + 1];
	if (cli_pick_name("build", want, NULL, first, nm, sizeof(nm)))
		return 1;
	uraid_build_spec_format(&o, spec, sizeof(spec));
	setenv("URAID_DAEMON_BUILD", spec, 1);
	rc = cli_start_daemon("build", nm, n, mm, NULL);
	unsetenv("URAID_DAEMON_BUILD");
	if (rc == 0)
		fprintf(stderr,
		        "uraid: build: %s is read-only, %llu bytes; `uraid cat %s` reads it\n", nm,
		        (unsigned long long)bytes, nm);
	return rc;
}
