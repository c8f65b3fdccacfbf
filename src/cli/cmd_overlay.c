/* uraid overlay status|commit|discard DIR: the copy-on-write overlays that
 * `--overlay DIR` made (include/uraid.h, uraid_overlay_*). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "uraid.h"

static void overlay_usage(FILE *f)
{
	fprintf(f, "usage: uraid overlay status|commit|discard DIR\n"
	           "  The overlays 'uraid assemble|serve|attach|cat --overlay DIR' use: one\n"
	           "  file per member holding every block the array wrote, the members\n"
	           "  untouched.\n"
	           "  status   per member: its path, the bytes its overlay holds, whether an\n"
	           "           array runs on it and whether the member changed since\n"
	           "  commit   write what the overlays hold to the members (refused while an\n"
	           "           array runs on them, or when a member changed since), then\n"
	           "           remove the overlays; an interrupted commit is finished by\n"
	           "           running it again\n"
	           "  discard  remove the overlays: the members stay as they are\n");
}

static void human(uint64_t b, char *out, size_t len)
{
	if (b >= (1ull << 30))
		snprintf(out, len, "%.2f GiB", (double)b / (double)(1ull << 30));
	else
		snprintf(out, len, "%.2f MiB", (double)b / (double)(1ull << 20));
}

static int overlay_status(const char *dir)
{
	struct uraid_overlay_info *v;
	int n;
	char err[4096];
	if (uraid_overlay_list(dir, &v, &n, err, sizeof(err)) < 0)
		return cli_error("overlay", "%s", err);
	printf("overlay directory %s: %d overlay%s%s%s\n", dir, n, n == 1 ? "" : "s",
	       n ? ", array " : "", n ? v[0].array : "");
	for (int i = 0; i < n; i++) {
		const struct uraid_overlay_info *o = &v[i];
		char held[32], size[32];
		if (!o->member[0]) {
			printf("  %s: %s\n", o->file, o->problem);
			continue;
		}
		human(o->held_bytes, held, sizeof(held));
		human(o->member_bytes, size, sizeof(size));
		printf("  %s: holds %s (%" PRIu64 " bytes) of %s, in %s%s%s\n", o->member, held,
		       o->held_bytes, size, o->file, strcmp(o->array, v[0].array) ? ", array " : "",
		       strcmp(o->array, v[0].array) ? o->array : "");
		if (o->in_use)
			printf("      in use by a running array\n");
		if (o->commit_interrupted)
			printf(
			    "      a commit was interrupted: run 'uraid overlay commit' again\n");
		if (o->member_state < 0)
			printf("      %s\n", o->problem);
	}
	free(v);
	return 0;
}

int cmd_overlay(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		overlay_usage(stdout);
		return 0;
	}
	if (argc != 3 || argv[2][0] == '-') {
		overlay_usage(stderr);
		return 2;
	}
	const char *what = argv[1], *dir = argv[2];
	char err[4096];
	if (!strcmp(what, "status"))
		return overlay_status(dir);
	if (!strcmp(what, "commit")) {
		uint64_t bytes = 0;
		if (uraid_overlay_commit(dir, &bytes, err, sizeof(err)) < 0)
			return cli_error("overlay", "commit: %s", err);
		fprintf(stderr,
		        "uraid: overlay: committed %" PRIu64 " bytes to the members; the "
		        "overlays in %s are removed\n",
		        bytes, dir);
		return 0;
	}
	if (!strcmp(what, "discard")) {
		int n = 0;
		if (uraid_overlay_discard(dir, &n, err, sizeof(err)) < 0)
			return cli_error("overlay", "discard: %s", err);
		fprintf(stderr, "uraid: overlay: removed %d overlay%s from %s\n", n,
		        n == 1 ? "" : "s", dir);
		return 0;
	}
	overlay_usage(stderr);
	return cli_error("overlay", "unknown action '%s' (status, commit or discard)", what);
}
