/* uraid: the program's entry point and its table of verbs (src/cli/ for the
 * verbs, src/bench/ for `uraid bench`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const struct {
	const char *name;
	cli_cmd_fn *fn;
	const char *help;
} verbs[] = {
    {"create", cmd_create, "create an md array on members (mdadm --create)"},
    {"assemble", cmd_assemble, "assemble and run an array from its members"},
    {"examine", cmd_examine, "print the md superblock of members (mdadm --examine)"},
    {"cat", cmd_cat, "read an array's contents from member images (read-only)"},
    {"write", cmd_write, "write stdin into a running array"},
    {"detail", cmd_detail, "details of a running array (mdadm --detail)"},
    {"status", cmd_status, "mdstat-like view of running arrays"},
    {"fail", cmd_fail, "mark a member faulty"},
    {"remove", cmd_remove, "remove a failed or spare member"},
    {"add", cmd_add, "add a spare (rebuilds onto it when degraded)"},
    {"re-add", cmd_re_add, "put a briefly missing member back (bitmap: dirty chunks only)"},
    {"add-journal", cmd_add_journal, "add a write journal (raid4/5/6; md --add-journal)"},
    {"journal-mode", cmd_journal_mode, "write journal mode: write-through|write-back"},
    {"replace", cmd_replace, "rebuild a member onto a new one, then drop it"},
    {"check", cmd_check, "read all, count parity/mirror mismatches"},
    {"repair", cmd_repair, "like check, and fix what is found"},
    {"stop", cmd_stop, "stop a running array, marking it clean"},
    {"stripe-cache", cmd_stripe_cache, "set/show the stripe cache of a raid4/5/6 array"},
    {"serve", cmd_serve, "serve an array over NBD"},
    {"attach", cmd_attach, "attach a served array as a local loop device"},
    {"detach", cmd_detach, "undo attach"},
    {"geometry", cmd_geometry, "stripe geometry and mkfs options"},
    {"mirror", cmd_mirror, "FreeBSD gmirror-compatible mirrors"},
    {"raid3", cmd_raid3, "FreeBSD graid3-compatible RAID3"},
    {"bench", cmd_bench, "benchmarks (parity, engine, workloads)"},
    {"version", cmd_version, "version and parity backend in use"},
    {"daemon", cmd_daemon, NULL}, /* internal: the process that runs an array */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: uraid VERB [OPTIONS] ...\n\nverbs:\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (verbs[i].help)
			fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].help);
	fprintf(f, "\n'uraid VERB --help' describes each verb.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *verb = argv[1];
	if (!strcmp(verb, "--help") || !strcmp(verb, "-h") || !strcmp(verb, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(verb, "--version"))
		verb = "version";
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(verbs[i].name, verb))
			return verbs[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "uraid: unknown verb '%s'\n", verb);
	usage(stderr);
	return 2;
}
