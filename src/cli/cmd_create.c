/* uraid create: mdadm --create for member files and block devices. All
 * parameters and members are checked before anything is written. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_array.h"
#include "cli/create_probe.h"
#include "cli/create_refuse.h"
#include "cli/create_zeroes.h"
#include "layout/layout.h"
#include "meta/md_bitmap.h"
#include "uraid.h"

static void create_usage(FILE *f)
{
	fprintf(f, "usage: uraid create --level=L --raid-devices=N [--chunk=64K] [--layout=NAME]\n"
	           "         [--metadata=1.2] [--assume-clean] [--spare-devices=N] [--name=NAME]\n"
	           "         [--size=BYTES] [--bitmap=internal|none] [--bitmap-chunk=SIZE]\n"
	           "         [--write-journal=DEV] [--consistency-policy=resync|ppl]\n"
	           "         [--run] [--force] [--discard]\n"
	           "         [--no-daemon] [--write-mostly|--readwrite] [--failfast|--nofailfast]\n"
	           "         MEMBER...\n"
	           "  Writes md superblocks (mdadm-compatible) and starts the array: a daemon\n"
	           "  holds it open and runs the initial resync in the background. --size creates\n"
	           "  missing member files of that size. --no-daemon runs the initial resync in\n"
	           "  this process and leaves the array stopped. --bitmap=internal adds md's\n"
	           "  write-intent bitmap (raid1/4/5/6/10, any metadata); without --bitmap,\n"
	           "  as mdadm 4.2, one is added when members are over 100 GiB. A member that\n"
	           "  holds an md superblock, GEOM metadata, a partition table or a file\n"
	           "  system is reported and create asks before overwriting it (stdin must\n"
	           "  be a terminal); --run (or --force) creates without asking.\n"
	           "  --write-mostly / --failfast flag the members named after them (md's\n"
	           "  device flags; --readwrite / --nofailfast stop flagging): raid1 reads a\n"
	           "  write-mostly member only when no other copy can serve; a failfast\n"
	           "  member of raid1/raid10 is failed on its first error while the array\n"
	           "  can lose it.\n"
	           "  --assume-clean skips the initial resync: refused unless the members read\n"
	           "  back as zeros (files: their allocated extents; devices: a sample), or\n"
	           "  --force (--run) insists. --discard discards (zeroes) every member's data\n"
	           "  area and skips the resync: zeros are consistent copies and parity.\n");
}

static int parse_metadata(const char *s, int *v)
{
	static const struct {
		const char *name;
		int v;
	} names[] = {{"0.90", 0}, {"0.9", 0},  {"0", 0},  {"1.0", 10},
	             {"1.1", 11}, {"1.2", 12}, {"1", 12}, {"default", 12}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name)) {
			*v = names[i].v;
			return 0;
		}
	return -EINVAL;
}

/* mdadm 4.2 adds an internal bitmap unasked when the per-member size is
 * over 100 GiB, for every level with redundancy. */
#define DEFAULT_BITMAP_MIN_SECTORS (100ull * 1024 * 1024 * 2)

enum bitmap_choice { BITMAP_DEFAULT, BITMAP_NONE, BITMAP_INTERNAL };

/* The engine keeps md's internal bitmap for these (engine/bitmap/bitmap.c), with
 * every metadata version. */
static bool bitmap_supported(int metadata, int level)
{
	(void)metadata;
	return level == URAID_LEVEL_RAID1 || level == URAID_LEVEL_RAID4 ||
	       level == URAID_LEVEL_RAID5 || level == URAID_LEVEL_RAID6 ||
	       level == URAID_LEVEL_RAID10;
}

static const char *metadata_name(int v)
{
	return v == 0 ? "0.90" : v == 10 ? "1.0" : v == 11 ? "1.1" : "1.2";
}

/* Bytes of a member as create will see it: an existing file or block
 * device, else the --size it will be created with; 0 when unknown. */
static uint64_t member_bytes(const char *path, uint64_t create_size)
{
	struct stat sb;
	if (stat(path, &sb) < 0)
		return create_size;
	if (S_ISREG(sb.st_mode))
		return (uint64_t)sb.st_size < create_size ? create_size : (uint64_t)sb.st_size;
	uint64_t bytes = 0;
	int fd = S_ISBLK(sb.st_mode) ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0)
			bytes = 0;
		close(fd);
	}
	return bytes;
}

/* Where mdadm would put the bitmap on a member of `bytes`: the sectors its
 * bits stand for are the member's data area (raid10: times raid_devices /
 * copies, the array size). */
static int plan_for(int md, const struct uraid_create_opts *o, uint64_t bytes, uint32_t chunk,
                    struct md_bitmap_plan *plan)
{
	enum md_sb_version v = (enum md_sb_version)md;
	uint32_t c = o->chunk_sectors ? o->chunk_sectors : 1024;
	uint64_t dev = bytes / 512;
	uint64_t use = md_sb_usable_sectors(v, dev, md_sb_default_data_offset(v, dev, c));
	if (o->level == URAID_LEVEL_RAID10) {
		uint32_t l = o->layout_set ? o->layout : layout_default(o->level);
		uint64_t copies = (l & 0xff) * ((l >> 8) & 0xff);
		use = copies ? use * (uint64_t)o->raid_devices / copies : use;
	}
	if (md == 0)
		return md_bitmap_plan_090(use, chunk, plan);
	return md_bitmap_plan_1x(md % 10, use, chunk, plan);
}

/* A requested bitmap chunk too small for the room mdadm's rule leaves on
 * the smallest member is refused here, before anything is written;
 * uraid_bitmap_add checks the exact room afterwards. */
static int check_bitmap_chunk(int md, const struct uraid_create_opts *o, uint32_t chunk,
                              char **members, int n)
{
	uint64_t min = UINT64_MAX;
	for (int i = 0; i < n; i++) {
		uint64_t b = member_bytes(members[i], o->member_bytes);
		if (b && b < min)
			min = b;
	}
	struct md_bitmap_plan plan;
	if (!chunk || min == UINT64_MAX || plan_for(md, o, min, chunk, &plan) != -EINVAL)
		return 0;
	uint64_t need = 4096;
	while (need < (1ull << 31) && plan_for(md, o, min, (uint32_t)need, &plan) == -EINVAL)
		need *= 2;
	return cli_error("create",
	                 "--bitmap-chunk=%uK is too small for members of %llu MiB: at least "
	                 "%lluK fits",
	                 chunk / 1024, (unsigned long long)(min >> 20),
	                 (unsigned long long)need / 1024);
}

/* --raid-devices / --spare-devices: mdadm's parse_num, at least min (exit 2
 * otherwise, in mdadm's words: "invalid number of WHAT: S"). */
static int parse_count(const char *s, long min, const char *what, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < min || v > INT_MAX) {
		cli_error("create", "invalid number of %s: %s", what, s);
		return 2;
	}
	*out = (int)v;
	return 0;
}

/* --chunk: md keeps it in sectors (32 bits); the engine wants a power of two
 * of at least 4 KiB. A bare number is KiB, as in mdadm. */
static int parse_chunk(const char *s, uint32_t *sectors)
{
	unsigned long long v;
	int rc = cli_parse_size(s, 1024, &v);
	if (rc == -ERANGE)
		return cli_error("create", "--chunk=%s is too large (does not fit in 64 bits)", s);
	if (rc < 0 || v < 4096 || v % 1024) { /* mdadm's option parser: exit 2 */
		cli_error("create", "invalid chunk/rounding value: %s", s);
		return 2;
	}
	if (v / 512 > UINT32_MAX)
		return cli_error("create",
		                 "--chunk=%s is too large: md records the chunk size in 32 bits of "
		                 "sectors (less than 2 TiB)",
		                 s);
	if (v & (v - 1))
		return cli_error("create",
		                 "--chunk=%s (%llu bytes): must be a power of two of at least 4K",
		                 s, v);
	*sectors = (uint32_t)(v / 512);
	return 0;
}

/* A chunk must fit the members (the engine's own check quotes a placeholder
 * size when it does not). */
static int check_chunk_fits(const struct uraid_create_opts *o, char **members, int n)
{
	/* linear and raid1 have no chunks (create ignores --chunk for them) */
	if (!o->chunk_sectors || o->level == URAID_LEVEL_LINEAR || o->level == URAID_LEVEL_RAID1)
		return 0;
	uint64_t chunk = (uint64_t)o->chunk_sectors * 512;
	for (int i = 0; i < n; i++) {
		uint64_t b = member_bytes(members[i], o->member_bytes);
		if (b && chunk > b)
			return cli_error("create",
			                 "--chunk of %llu KiB is larger than member %s (%llu KiB)",
			                 (unsigned long long)(chunk >> 10), members[i],
			                 (unsigned long long)(b >> 10));
	}
	return 0;
}

int cmd_create(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"level", required_argument, NULL, 'l'},
	    {"raid-devices", required_argument, NULL, 'n'},
	    {"chunk", required_argument, NULL, 'c'},
	    {"layout", required_argument, NULL, 'p'},
	    {"metadata", required_argument, NULL, 'e'},
	    {"assume-clean", no_argument, NULL, 'A'},
	    {"spare-devices", required_argument, NULL, 'x'},
	    {"name", required_argument, NULL, 'N'},
	    {"size", required_argument, NULL, 'z'},
	    {"no-daemon", no_argument, NULL, 'D'},
	    {"bitmap", required_argument, NULL, 'b'},
	    {"bitmap-chunk", required_argument, NULL, 'B'},
	    {"write-journal", required_argument, NULL, 'J'},
	    {"consistency-policy", required_argument, NULL, 'k'},
	    {"run", no_argument, NULL, 'R'},
	    {"force", no_argument, NULL, 'f'},
	    {"discard", no_argument, NULL, 'Z'},
	    {"help", no_argument, NULL, 'h'},
	    {"write-mostly", no_argument, NULL, 1001},
	    {"failfast", no_argument, NULL, 1002},
	    {"nofailfast", no_argument, NULL, 1003},
	    {"readwrite", no_argument, NULL, 1004},
	    {NULL, 0, NULL, 0},
	};
	/* Members in the order given: mdadm's --write-mostly and --failfast
	 * flag the members that follow them (--readwrite, --nofailfast undo). */
	char *mem[argc > 0 ? argc : 1];
	int nmem = 0;
	bool wm = false, ff = false;
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	struct create_refuse rf = {0};
	const char *policy = NULL;
	bool no_daemon = false, have_n = false, run = false, discard = false;
	enum bitmap_choice bitmap = BITMAP_DEFAULT;
	uint32_t bitmap_chunk = 0;
	const char *journal = NULL;
	unsigned long long v;
	int c, rc;
	optind = 1;
	while ((c = getopt_long(argc, argv, "-l:n:c:p:e:x:N:fRh", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (nmem < 64) {
				o.write_mostly |= (uint64_t)wm << nmem;
				o.failfast |= (uint64_t)ff << nmem;
			}
			mem[nmem++] = optarg;
			break;
		case 1001: wm = true; break;
		case 1002: ff = true; break;
		case 1003: ff = false; break;
		case 1004: wm = false; break;
		case 'l': /* mdadm parses each option as it comes */
			if (level_parse(optarg, &o.level) < 0) {
				cli_error("create", "invalid raid level: %s", optarg);
				return 2;
			}
			if (o.spare_devices > 0 && o.level <= 0) {
				cli_error(
				    "create",
				    "raid level %s is incompatible with spare-devices setting.",
				    optarg);
				return 2;
			}
			rf.have_level = true;
			break;
		case 'n':
			if ((rc = parse_count(optarg, 1, "raid devices", &o.raid_devices)))
				return rc;
			have_n = true;
			break;
		case 'x':
			if (rf.have_level && o.level <= 0) {
				cli_error(
				    "create",
				    "spare-devices setting is incompatible with raid level %d",
				    o.level);
				return 2;
			}
			if ((rc = parse_count(optarg, 0, "spare-devices", &o.spare_devices)))
				return rc;
			break;
		case 'c':
			if ((rc = parse_chunk(optarg, &o.chunk_sectors)))
				return rc;
			rf.chunk_set = true;
			break;
		case 'p':
			if ((rc = cli_create_layout(rf.have_level, o.level, optarg, &o.layout)))
				return rc;
			o.layout_set = true;
			break;
		case 'e':
			if (parse_metadata(optarg, &o.metadata) < 0) {
				cli_error("create", "unrecognised metadata identifier: %s", optarg);
				return 2;
			}
			o.metadata_set = true;
			break;
		case 'A': o.assume_clean = true; break;
		case 'N':
			if (cli_check_name("create", optarg))
				return 1;
			/* The md superblock holds 32 bytes of name. */
			if (strlen(optarg) >= sizeof(o.name))
				return cli_error("create",
				                 "--name '%s' is %zu characters; an md superblock "
				                 "holds at most %zu",
				                 optarg, strlen(optarg), sizeof(o.name) - 1);
			snprintf(o.name, sizeof(o.name), "%s", optarg);
			break;
		case 'f': rf.force = true; /* fall through */
		case 'R': run = true; break;
		case 'z':
			if (cli_parse_size(optarg, 1, &v) < 0 || v == 0)
				return cli_error("create", "bad --size '%s'", optarg);
			o.member_bytes = v;
			break;
		case 'D': no_daemon = true; break;
		case 'Z': discard = true; break;
		case 'b':
			if (!strcmp(optarg, "internal"))
				bitmap = BITMAP_INTERNAL;
			else if (!strcmp(optarg, "none"))
				bitmap = BITMAP_NONE;
			else if (strcmp(optarg, "clustered") && !strchr(optarg, '/')) {
				cli_error("create", "bitmap file must contain a '/', or be "
				                    "'internal', or be 'clustered', or 'none'");
				fprintf(stderr, "       not '%s'\n", optarg);
				return 2;
			}
			rf.bitmap = optarg;
			break;
		case 'B':
			/* mdadm: a bare number is KiB */
			if (cli_parse_size(optarg, 1024, &v) < 0 || v < 4096 || v & (v - 1) ||
			    v > (1ull << 31))
				return cli_error("create",
				                 "bad --bitmap-chunk '%s': need a power of two "
				                 "from 4K to 2G",
				                 optarg);
			bitmap_chunk = (uint32_t)v;
			break;
		case 'J':
			journal = optarg;
			o.journal_pos = nmem + 1; /* mdadm's device numbering */
			break;
		case 'k':
			if ((rc = cli_create_policy(optarg)))
				return rc;
			policy = optarg;
			if (!strcmp(optarg, "ppl"))
				o.consistency_policy = URAID_POLICY_PPL;
			else if (!strcmp(optarg, "resync"))
				o.consistency_policy = URAID_POLICY_RESYNC;
			else if (!strcmp(optarg, "bitmap"))
				bitmap = BITMAP_INTERNAL;
			break;
		case 'h': create_usage(stdout); return 0;
		default: create_usage(stderr); return 2;
		}
	}
	/* what follows "--", then all the members at the end of argv, in order */
	for (int k = optind; k < argc; k++) {
		if (nmem < 64) {
			o.write_mostly |= (uint64_t)wm << nmem;
			o.failfast |= (uint64_t)ff << nmem;
		}
		mem[nmem++] = argv[k];
	}
	for (int k = 0; k < nmem; k++)
		argv[argc - nmem + k] = mem[k];
	optind = argc - nmem;
	int md = o.metadata_set ? o.metadata : 12;
	rf.level = o.level;
	rf.raid_devices = have_n ? o.raid_devices : 0;
	rf.spares = o.spare_devices;
	rf.members = argc - optind;
	rf.layout_set = o.layout_set;
	rf.layout = o.layout;
	rf.policy = policy;
	rf.journal = journal != NULL;
	rf.metadata = md;
	/* uraid's own limit first (mdadm would count the members given) */
	if (o.raid_devices > LAYOUT_MAX_MEMBERS || o.spare_devices > LAYOUT_MAX_MEMBERS)
		return cli_error("create",
		                 "--raid-devices %d, --spare-devices %d: each must be 1 to %d (the "
		                 "most members uraid takes)",
		                 o.raid_devices, o.spare_devices, LAYOUT_MAX_MEMBERS);
	if ((rc = cli_create_refuse(&rf)))
		return rc;
	if (rf.bitmap && strcmp(rf.bitmap, "internal") && strcmp(rf.bitmap, "none"))
		return cli_error("create", "--bitmap=%s: uraid keeps internal bitmaps only",
		                 rf.bitmap);
	if (bitmap_chunk && bitmap != BITMAP_INTERNAL)
		return cli_error("create", "--bitmap-chunk needs --bitmap=internal");
	if (bitmap == BITMAP_INTERNAL && !bitmap_supported(md, o.level))
		return cli_error("create",
		                 "--bitmap=internal is not supported for %s with metadata %s "
		                 "(only raid1/4/5/6/10: %s has no redundancy to resync)",
		                 level_name(o.level), metadata_name(md), level_name(o.level));
	if (journal) {
		if (o.level != URAID_LEVEL_RAID4 && o.level != URAID_LEVEL_RAID5 &&
		    o.level != URAID_LEVEL_RAID6)
			return cli_error("create",
			                 "--write-journal needs --level=4, 5 or 6 (md journals "
			                 "parity writes), not %s",
			                 level_name(o.level));
		if (md == 0)
			return cli_error("create", "--write-journal needs metadata 1.x, not 0.90");
		if (bitmap == BITMAP_INTERNAL)
			return cli_error("create", "--write-journal and --bitmap=internal exclude "
			                           "each other (as in md)");
		bitmap = BITMAP_NONE;
	}
	if (o.consistency_policy == URAID_POLICY_PPL) {
		/* mdadm's words; the engine checks level and metadata. */
		if (bitmap == BITMAP_INTERNAL)
			return cli_error("create", "PPL is not compatible with bitmap");
		if (journal)
			return cli_error(
			    "create",
			    "--write-journal is not supported with consistency policy: ppl");
		bitmap = BITMAP_NONE; /* not the default one either */
	}
	int n = argc - optind;
	if (n != o.raid_devices + o.spare_devices)
		return cli_error(
		    "create",
		    "%d member(s) given, but --raid-devices=%d --spare-devices=%d need %d", n,
		    o.raid_devices, o.spare_devices, o.raid_devices + o.spare_devices);
	if (bitmap == BITMAP_INTERNAL && check_bitmap_chunk(md, &o, bitmap_chunk, argv + optind, n))
		return 1;
	if (!o.name[0] && cli_pick_name("create", NULL, NULL, argv[optind], o.name, sizeof(o.name)))
		return 1;
	if (check_chunk_fits(&o, argv + optind, n))
		return 1;
	/* Everything that can refuse goes before the first write. */
	if (!no_daemon) {
		struct uraid_status running;
		char e[512];
		if (cli_run_ready("create", o.name))
			return 1;
		if (uraid_control_status(o.name, &running, e, sizeof(e)) == 0)
			return cli_error("create", "an array named '%s' is already running",
			                 o.name);
	}
	{
		char **all = calloc((size_t)n + 1, sizeof(*all));
		if (!all)
			return cli_error("create", "out of memory");
		for (int i = 0; i < n; i++)
			all[i] = argv[optind + i];
		if (journal)
			all[n] = (char *)journal;
		int refused = create_confirm(all, n + (journal ? 1 : 0), run);
		free(all);
		if (refused)
			return 1;
	}
	if (o.assume_clean && !discard && !run) {
		char why[512] = "";
		int z = create_members_zero(argv + optind, n, why, sizeof(why));
		if (z < 0)
			return cli_error("create", "--assume-clean: %s", why);
		if (z == 0)
			return cli_error(
			    "create",
			    "--assume-clean: %s; skipping the resync would leave copies "
			    "or parity that do not match the data. Use --discard to "
			    "zero the members, or --force to insist",
			    why);
	}
	/* --discard: zeros everywhere make the resync unnecessary. */
	if (discard)
		o.assume_clean = true;
	/* Files this command creates are removed again if create fails. */
	bool *fresh = calloc((size_t)n, sizeof(*fresh));
	if (!fresh)
		return cli_error("create", "out of memory");
	for (int i = 0; i < n; i++) {
		struct stat sb;
		fresh[i] = o.member_bytes && stat(argv[optind + i], &sb) < 0 && errno == ENOENT;
	}
	char err[512];
	struct uraid_array *a;
	/* The journal goes last (uraid_create_opts.write_journal). */
	char **paths = calloc((size_t)n + 2, sizeof(*paths));
	if (!paths) {
		free(fresh);
		return cli_error("create", "out of memory");
	}
	for (int i = 0; i < n; i++)
		paths[i] = argv[optind + i];
	if (journal)
		paths[n] = (char *)journal;
	o.write_journal = journal != NULL;
	rc = uraid_create(&o, (const char *const *)paths, n + (journal ? 1 : 0),
	                  URAID_NO_SYNC_THREAD, &a, err, sizeof(err));
	if (rc < 0) {
		for (int i = 0; i < n; i++)
			if (fresh[i])
				unlink(argv[optind + i]);
		free(fresh);
		free(paths);
		return cli_error("create", "%s", err);
	}
	struct uraid_status st;
	uraid_status(a, &st);
	if (bitmap == BITMAP_DEFAULT && o.level >= URAID_LEVEL_RAID1 &&
	    st.dev_sectors > DEFAULT_BITMAP_MIN_SECTORS) {
		if (bitmap_supported(md, o.level)) {
			fprintf(stderr, "uraid: create: automatically enabling write-intent "
			                "bitmap on large array\n");
			bitmap = BITMAP_INTERNAL;
		} else {
			fprintf(stderr,
			        "uraid: create: note: mdadm would add a bitmap to this large "
			        "array; uraid cannot keep one for %s with metadata %s\n",
			        level_name(o.level), metadata_name(md));
		}
	}
	if (bitmap == BITMAP_INTERNAL) {
		rc = uraid_bitmap_add(a, bitmap_chunk, err, sizeof(err));
		if (rc < 0) {
			uraid_stop(a);
			for (int i = 0; i < n; i++)
				if (fresh[i])
					unlink(argv[optind + i]);
			free(fresh);
			free(paths);
			return cli_error("create", "bitmap: %s", err);
		}
	}
	if (discard) {
		rc = uraid_write_zeroes(a, 0, uraid_size(a), URAID_ZERO_MAY_TRIM);
		if (rc == 0)
			rc = uraid_flush(a);
		if (rc < 0) {
			uraid_stop(a);
			for (int i = 0; i < n; i++)
				if (fresh[i])
					unlink(argv[optind + i]);
			free(fresh);
			free(paths);
			return cli_error("create", "--discard: %s", strerror(-rc));
		}
	}
	free(fresh);
	fprintf(stderr, "uraid: create: array %s (%s) created: %s, %d members, %llu KiB\n", o.name,
	        st.uuid, level_name(st.level), st.raid_disks,
	        (unsigned long long)st.array_sectors / 2);
	if (no_daemon) {
		free(paths);
		rc = uraid_sync_wait(a);
		int s = uraid_stop(a);
		if (rc < 0 || s < 0)
			return cli_error("create", "initial sync failed: %s",
			                 strerror(-(rc ? rc : s)));
		return 0;
	}
	/* Hand the array to a daemon: stop here (the superblocks keep the
	 * pending resync) and let it assemble the members. */
	rc = uraid_stop(a);
	if (rc < 0) {
		free(paths);
		return cli_error("create", "%s", strerror(-rc));
	}
	setenv("URAID_DAEMON_CREATED", "1", 1);
	rc = cli_start_daemon("create", o.name, n + (journal ? 1 : 0), paths, NULL);
	unsetenv("URAID_DAEMON_CREATED");
	free(paths);
	return rc;
}
