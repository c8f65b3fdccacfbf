/* The configuration file's users among the verbs: assemble NAME and
 * assemble --scan (members found by superblock UUID among the DEVICE
 * candidates), examine --scan and detail --scan (ARRAY lines as mdadm prints
 * them, which the configuration file accepts back). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_array.h"
#include "layout/layout.h"
#include "member/member.h"
#include "meta/md_super.h"
#include "uraid.h"

/* Start one ARRAY line's array: 0 started, 1 failed (printed), -1 skipped
 * quietly (scan: no member found, or already running). */
static int assemble_line(const char *verb, const struct uraid_config *c,
                         const struct uraid_config_array *a, const char *want, bool force,
                         bool scan)
{
	const char *name = want ? want : a->name[0] ? a->name : NULL;
	if (name && cli_array_running(name)) {
		if (scan)
			return -1;
		return cli_error(verb, "%s is already running", name);
	}
	char **paths, err[512];
	int n;
	if (uraid_config_members(c, a, &paths, &n, err, sizeof(err)) < 0)
		return cli_error(verb, "%s", err);
	if (n == 0) {
		uraid_config_paths_free(paths, n);
		if (scan)
			return -1;
		return cli_error(verb, "%s (%s line %d): no member found among the candidates",
		                 a->devname[0] ? a->devname : a->name, c->file, a->line);
	}
	int rc = cli_assemble_start(verb, name, force, true, NULL, NULL, n, paths);
	if (rc == 0)
		fprintf(stderr, "uraid: %s: %s has been started with %d member%s\n", verb,
		        name ? name : a->uuid, n, n == 1 ? "" : "s");
	uraid_config_paths_free(paths, n);
	return rc ? 1 : 0;
}

int cli_assemble_named(const char *verb, const char *config, const char *arr, const char *want,
                       bool force)
{
	struct uraid_config *c;
	if (cli_config_load(verb, config, &c))
		return 1;
	const struct uraid_config_array *a = uraid_config_find(c, arr);
	int rc;
	if (!a)
		rc = cli_error(verb, "%s: no such member file, and no ARRAY line names it in %s",
		               arr, c->file);
	else
		rc = assemble_line(verb, c, a, want, force, false);
	uraid_config_free(c);
	return rc;
}

int cli_assemble_scan(const char *verb, const char *config, bool force)
{
	struct uraid_config *c;
	if (cli_config_load(verb, config, &c))
		return 1;
	int status = 0, started = 0;
	for (int i = 0; i < c->narrays; i++) {
		int rc = assemble_line(verb, c, &c->arrays[i], NULL, force, true);
		if (rc > 0)
			status = 1;
		else if (rc == 0)
			started++;
	}
	if (!c->narrays)
		status = cli_error(verb, "no ARRAY lines in %s", c->file);
	else if (!started && !status)
		fprintf(stderr, "uraid: %s: no arrays found in config file or automatically\n",
		        verb);
	uraid_config_free(c);
	/* as mdadm: nothing assembled is a failure */
	return status || !started ? 1 : 0;
}

/* ---- examine --scan ---- */

struct found {
	struct md_sb sb; /* of the first member seen */
	char **devs;
	int ndevs, spares;
};

/* Newest first, as mdadm lists them. */
static void print_devices(char **devs, int n)
{
	printf("devices=");
	for (int i = n - 1; i >= 0; i--)
		printf("%s%s", i < n - 1 ? "," : "", devs[i]);
}

static void print_found(const struct found *f, bool verbose)
{
	const struct md_sb *sb = &f->sb;
	char uuid[36];
	md_uuid_format(sb->set_uuid, uuid);
	if (sb->version == MD_SB_0_90) {
		printf("ARRAY /dev/md%u", sb->v0.md_minor);
		if (verbose)
			printf(" level=%s num-devices=%u", level_name(sb->level), sb->raid_disks);
		printf(" UUID=%s\n", uuid);
	} else {
		const char *colon = strchr(sb->set_name, ':');
		const char *nm = colon ? colon + 1 : sb->set_name;
		printf("ARRAY ");
		if (nm[0])
			printf("/dev/md/%s ", nm);
		if (verbose)
			printf(" level=%s", level_name(sb->level));
		printf(" metadata=%s", md_sb_version_name(sb->version));
		if (verbose)
			printf(" num-devices=%u", sb->raid_disks);
		printf(" UUID=%s", uuid);
		if (sb->set_name[0])
			printf(" name=%s", sb->set_name);
		printf("\n");
	}
	/* md's own continuation: spares seen among the members, and (verbose)
	 * which devices hold the array */
	if (f->spares || verbose) {
		if (f->spares)
			printf("   spares=%d", f->spares);
		if (verbose) {
			printf("   ");
			print_devices(f->devs, f->ndevs);
		}
		printf("\n");
	}
}

int cli_examine_scan(const char *config, bool verbose, int n, char **paths)
{
	struct uraid_config *c = NULL;
	char **cand = paths, err[512];
	int nc = n;
	if (n == 0) {
		if (cli_config_load("examine", config, &c))
			return 1;
		if (uraid_config_candidates(c, NULL, &cand, &nc, err, sizeof(err)) < 0) {
			uraid_config_free(c);
			return cli_error("examine", "%s", err);
		}
	}
	struct found *f = NULL;
	int nf = 0, status = 0;
	for (int i = 0; i < nc; i++) {
		struct member *m;
		struct md_sb sb;
		if (member_open_file(cand[i], MEMBER_RDONLY, 0, &m, err, sizeof(err)) < 0) {
			if (n)
				status = cli_error("examine", "%s", err);
			continue;
		}
		int rc = md_sb_load(m, &sb, err, sizeof(err));
		member_close(m);
		if (rc < 0) {
			if (n)
				status = cli_error("examine", "%s", err);
			continue;
		}
		int k;
		for (k = 0; k < nf; k++)
			if (!memcmp(f[k].sb.set_uuid, sb.set_uuid, 16))
				break;
		if (k == nf) {
			struct found *nfp = realloc(f, (size_t)(nf + 1) * sizeof(*f));
			if (!nfp) {
				status = cli_error("examine", "out of memory");
				break;
			}
			f = nfp;
			memset(&f[nf], 0, sizeof(f[nf]));
			f[nf++].sb = sb;
		}
		char **nd = realloc(f[k].devs, (size_t)(f[k].ndevs + 1) * sizeof(*nd));
		if (!nd) {
			status = cli_error("examine", "out of memory");
			break;
		}
		f[k].devs = nd;
		nd[f[k].ndevs++] = cand[i];
		if (md_sb_role(&sb) == -1)
			f[k].spares++;
	}
	for (int k = 0; k < nf; k++) {
		print_found(&f[k], verbose);
		free(f[k].devs);
	}
	free(f);
	if (c) {
		uraid_config_paths_free(cand, nc);
		uraid_config_free(c);
	}
	return status;
}

/* ---- detail --scan ---- */

static int detail_scan(bool verbose, int n, char **names)
{
	char **found = NULL;
	int nfound = 0;
	if (n == 0) {
		if (cli_running_arrays("detail", &found, &nfound))
			return 1;
		names = found;
		n = nfound;
	}
	int status = 0;
	for (int i = 0; i < n; i++) {
		struct uraid_status st;
		char err[512];
		if (uraid_control_status(names[i], &st, err, sizeof(err)) < 0) {
			status = cli_error("detail", "%s", err);
			continue;
		}
		static const char *const meta[] = {
		    [0] = "0.90", [10] = "1.0", [11] = "1.1", [12] = "1.2"};
		const char *mv = st.metadata >= 0 && st.metadata <= 12 && meta[st.metadata]
		                     ? meta[st.metadata]
		                     : NULL;
		printf("ARRAY /dev/md/%s", names[i]);
		if (verbose)
			printf(" level=%s num-devices=%d", level_name(st.level), st.raid_disks);
		if (mv)
			printf(" metadata=%s", mv);
		if (st.spares)
			printf(" spares=%d", st.spares);
		if (st.metadata != 0 && st.name[0])
			printf(" name=%s", st.name);
		printf(" UUID=%s\n", st.uuid);
		if (verbose) {
			printf("   devices=");
			int k = 0;
			for (int j = 0; j < st.nmembers; j++)
				if (st.members[j].state != URAID_MEMBER_MISSING)
					printf("%s%s", k++ ? "," : "", st.members[j].name);
			printf("\n");
		}
	}
	uraid_config_paths_free(found, nfound);
	return status;
}

/* detail: --scan here, anything else to cmd_detail (NAME, --export,
 * --verbose). */
int cmd_detail_main(int argc, char **argv)
{
	bool scan = false, verbose = false;
	int k = 1;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		scan |= !strcmp(argv[i], "--scan") || !strcmp(argv[i], "-s");
	if (!scan)
		return cmd_detail(argc, argv);
	for (; k < argc; k++) {
		if (!strcmp(argv[k], "--scan") || !strcmp(argv[k], "-s"))
			scan = true;
		else if (!strcmp(argv[k], "--verbose") || !strcmp(argv[k], "-v"))
			verbose = true;
		else if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
			printf("usage: uraid detail --scan [--verbose] [NAME...]\n"
			       "  one ARRAY line per running array, as mdadm --detail --scan\n"
			       "  prints it (uraid detail --help: the report of one array)\n");
			return 0;
		} else if (!strcmp(argv[k], "--")) {
			k++;
			break;
		} else if (argv[k][0] == '-' && argv[k][1]) {
			cli_error("detail", "unknown option '%s'", argv[k]);
			return 2;
		} else
			break;
	}
	return detail_scan(verbose, argc - k, argv + k);
}
