/* uraid: the program's entry point and its table of verbs (src/cli/ for the
 * verbs, src/bench/ for `uraid bench`). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "uraid.h"

/* The stripe-cache usage below quotes it. */
_Static_assert(URAID_STRIPE_CACHE_MAX == 32768, "stripe-cache usage text");

/* Verbs marked OWN parse their options themselves (getopt, with --help);
 * for the others main does: --help/-h prints `usage` and exits 0, any other
 * argument starting with '-' is refused as an unknown option, "--" ends the
 * options (what follows may start with '-'). */
#define OWN 1
static const struct {
	const char *name;
	cli_cmd_fn *fn;
	const char *help;
	const char *usage; /* option-less verbs: their arguments */
	int flags;
} verbs[] = {
    {"create", cmd_create, "create an md array on members (mdadm --create)", NULL, OWN},
    {"assemble", cmd_assemble, "assemble and run an array from its members", NULL, OWN},
    {"build", cmd_build, "run an array without superblocks, read-only (mdadm --build)", NULL, OWN},
    {"probe", cmd_probe, "find an array's superblocks, or its geometry from its data", NULL, OWN},
    {"examine", cmd_examine, "print the md superblock of members (mdadm --examine)", NULL, OWN},
    {"cat", cmd_cat, "read an array's contents from member images (read-only)", NULL, OWN},
    {"write", cmd_write, "write stdin into a running array", NULL, OWN},
    {"detail", cmd_detail_main, "what mdadm --detail prints for a running array", NULL, OWN},
    {"status", cmd_status, "what /proc/mdstat shows for the running arrays", NULL, OWN},
    {"fail", cmd_fail, "mark a member faulty", "NAME MEMBER", 0},
    {"remove", cmd_remove, "remove a failed or spare member", "NAME MEMBER", 0},
    {"add", cmd_add, "add a spare (rebuilds onto it when degraded)", NULL, OWN},
    {"re-add", cmd_re_add, "put a briefly missing member back (bitmap: dirty chunks only)",
     "NAME MEMBER", 0},
    {"add-journal", cmd_add_journal, "add a write journal (raid4/5/6; md --add-journal)",
     "NAME MEMBER", 0},
    {"journal-mode", cmd_journal_mode, "write journal mode: write-through|write-back",
     "NAME write-through|write-back", 0},
    {"consistency-policy", cmd_consistency_policy,
     "md's consistency policy of a raid5: resync|ppl (mdadm --grow --consistency-policy)",
     "NAME resync|ppl", 0},
    {"grow", cmd_grow, "change size, bitmap, members or level of an array (mdadm --grow)", NULL,
     OWN},
    {"replace", cmd_replace, "rebuild a member onto a new one, then drop it", "NAME OLD NEW", 0},
    {"check", cmd_check, "read all, count parity/mirror mismatches", "NAME", 0},
    {"repair", cmd_repair, "like check, and fix what is found", "NAME", 0},
    {"stop", cmd_stop, "stop a running array, marking it clean", "NAME", 0},
    {"stripe-cache", cmd_stripe_cache, "set/show the stripe cache of a raid4/5/6 array",
     "NAME [ENTRIES]\n  ENTRIES: md's stripe_cache_size (4 KiB stripe heads, 0 = off, at "
     "most 32768); without it, shows the cache and the member I/O counters",
     0},
    {"zero-superblock", cmd_zero_superblock, "zero md superblocks (mdadm --zero-superblock)", NULL,
     OWN},
    {"readonly", cmd_readonly, "make a running array read-only (mdadm --readonly)", NULL, OWN},
    {"readwrite", cmd_readwrite, "make a read-only array writable (mdadm --readwrite)", "NAME", 0},
    {"wait", cmd_wait, "wait for resync/recovery to finish (mdadm --wait)", "NAME...", 0},
    {"action", cmd_action, "md's sync_action (mdadm --action)",
     "NAME idle|frozen|check|repair|resync|recover\n  Does not wait: see 'uraid wait'", 0},
    {"sync-speed", cmd_sync_speed, "md's sync_speed_min/max of a running array", NULL, OWN},
    {"add-spare", cmd_add_spare, "add a member as a spare, never a re-add (mdadm --add-spare)",
     "NAME MEMBER", 0},
    {"incremental", cmd_incremental, "add one member to its array, start it when complete", NULL,
     OWN},
    {"monitor", cmd_monitor, "watch arrays, run PROGRAM / mail on md's events", NULL, OWN},
    {"serve", cmd_serve, "serve an array over NBD", NULL, OWN},
    {"attach", cmd_attach, "attach a served array as a local loop device", NULL, OWN},
    {"detach", cmd_detach, "undo attach",
     "NAME|/dev/loopN\n  Removes the loop device, unmounts nbdfuse and, when attach "
     "started\n  the serve itself, stops nbdkit and the array",
     0},
    {"geometry", cmd_geometry, "stripe geometry and mkfs options",
     "NAME | MEMBER...\n  Stripe unit and width of the array, the NBD block size hints "
     "'uraid\n  serve' advertises, and the mkfs.xfs / mkfs.ext4 options that align a\n  "
     "file system to the stripes (a loop device over the export cannot\n  pass the "
     "geometry to mkfs)",
     0},
    {"overlay", cmd_overlay, "status, commit or discard the overlays of --overlay DIR", NULL, OWN},
    {"mirror", cmd_mirror, "FreeBSD gmirror-compatible mirrors", NULL, OWN},
    {"raid3", cmd_raid3, "FreeBSD graid3-compatible RAID3", NULL, OWN},
    {"bench", cmd_bench, "benchmarks (parity, engine, workloads)", NULL, OWN},
    {"version", cmd_version, "version and parity backend in use", "", 0},
    {"daemon", cmd_daemon, NULL, NULL, OWN}, /* internal: the process that runs an array */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: uraid VERB [OPTIONS] ...\n\nverbs:\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (verbs[i].help)
			fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].help);
	fprintf(f, "\n'uraid VERB --help' describes each verb.\n");
}

static void verb_usage(FILE *f, size_t i)
{
	fprintf(f, "usage: uraid %s%s%s\n", verbs[i].name, verbs[i].usage[0] ? " " : "",
	        verbs[i].usage);
	fprintf(f, "  %s\n", verbs[i].help);
}

/* argv[0] is the verb. */
static int run_verb(size_t i, int argc, char **argv)
{
	if (verbs[i].flags & OWN)
		return verbs[i].fn(argc, argv);
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args)
		return cli_error(verbs[i].name, "out of memory");
	int n = 0;
	bool options = true;
	args[n++] = argv[0];
	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];
		if (options && !strcmp(a, "--")) {
			options = false;
			continue;
		}
		if (options && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
			verb_usage(stdout, i);
			free(args);
			return 0;
		}
		if (options && a[0] == '-' && a[1]) {
			cli_error(verbs[i].name, "unknown option '%s'", a);
			verb_usage(stderr, i);
			free(args);
			return 2;
		}
		args[n++] = argv[k];
	}
	int rc = verbs[i].fn(n, args);
	free(args);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *verb = argv[1];
	/* Members in memory are mapped only under the SIGBUS guard, which is
	 * the process's to install. */
	if (uraid_member_map_guard_install() < 0)
		fprintf(stderr, "uraid: cannot install the SIGBUS guard: members stay unmapped\n");
	if (!strcmp(verb, "--help") || !strcmp(verb, "-h") || !strcmp(verb, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(verb, "--version"))
		verb = "version";
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(verbs[i].name, verb))
			return run_verb(i, argc - 1, argv + 1);
	fprintf(stderr, "uraid: unknown verb '%s'\n", verb);
	usage(stderr);
	return 2;
}
