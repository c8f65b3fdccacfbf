/* Helpers shared by the verbs that start arrays: the read-only check and
 * daemon start behind assemble, incremental and the configuration's users;
 * loading the configuration; which arrays run. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_array.h"
#include "member/member.h"
#include "meta/md_super.h"
#include "uraid.h"

int cli_update_flags(const char *update, unsigned *flags)
{
	*flags = 0;
	if (!update)
		return 0;
	if (!strcmp(update, "no-bbl"))
		*flags = URAID_UPDATE_NO_BBL;
	else if (!strcmp(update, "force-no-bbl"))
		*flags = URAID_UPDATE_FORCE_NO_BBL;
	else
		return -EINVAL;
	return 0;
}

int cli_uuid_filter(const char *verb, const char *uuid, int *n, char **members)
{
	char want[36];
	if (uraid_uuid_parse(uuid, want) < 0)
		return cli_error(verb, "Bad uuid: %s", uuid), -EINVAL;
	int kept = 0;
	for (int i = 0; i < *n; i++) {
		struct member *m;
		struct md_sb sb;
		char err[512], got[36];
		bool other = false;
		if (member_open_file(members[i], MEMBER_RDONLY, 0, &m, err, sizeof(err)) == 0) {
			static const uint8_t zero[16];
			if (md_sb_load(m, &sb, err, sizeof(err)) == 0 &&
			    memcmp(sb.set_uuid, zero, sizeof(zero))) {
				md_uuid_format(sb.set_uuid, got);
				other = strcmp(got, want) != 0;
			}
			member_close(m);
		}
		/* (one that cannot be read stays: the assembly refuses it) */
		if (other)
			cli_error(verb, "%s has wrong uuid.", members[i]);
		else
			members[kept++] = members[i];
	}
	*n = kept;
	return kept ? 0 : -ENOENT;
}

int cli_dirty_degraded(const char *verb, const struct uraid_status *st, const char *member)
{
	/* mdadm's Assemble: "/dev/mdN assembled from N drives - not enough
	 * to start the array while not clean - consider --force." */
	const char *colon = strchr(st->name, ':');
	const char *nm = colon ? colon + 1 : st->name;
	int ok = 0;
	for (int i = 0; i < st->nmembers; i++)
		ok += st->members[i].role >= 0 && st->members[i].state == URAID_MEMBER_IN_SYNC;
	return cli_error(verb,
	                 "%s assembled from %d drive%s - not enough to start the array while not "
	                 "clean - consider --force.",
	                 nm[0] ? nm : member, ok, ok == 1 ? "" : "s");
}

int cli_update_refuse(const char *verb, const char *update)
{
	/* mdadm.c's --update words (mdadm 4.2) */
	static const char *const md[] = {"sparc2.2",
	                                 "super-minor",
	                                 "summaries",
	                                 "resync",
	                                 "uuid",
	                                 "name",
	                                 "homehost",
	                                 "home-cluster",
	                                 "nodes",
	                                 "devicesize",
	                                 "bitmap",
	                                 "no-bitmap",
	                                 "bbl",
	                                 "no-bbl",
	                                 "force-no-bbl",
	                                 "ppl",
	                                 "no-ppl",
	                                 "metadata",
	                                 "revert-reshape",
	                                 "layout-original",
	                                 "layout-alternate",
	                                 "layout-unspecified",
	                                 "byteorder"};
	for (size_t i = 0; i < sizeof(md) / sizeof(md[0]); i++)
		if (!strcmp(update, md[i]))
			return cli_error(verb,
			                 "--update=%s is not supported (uraid knows no-bbl and "
			                 "force-no-bbl)",
			                 update);
	cli_error(verb,
	          "'--update=%s' is invalid.  Valid --update options are:\n"
	          "     'no-bbl', 'force-no-bbl'",
	          update);
	return 2;
}

/* mdadm's req_cnt: the members the freshest superblock of those given
 * counts as working (1.x: roles in a slot; 0.90: disks active, in sync and
 * not faulty in a slot); -1 when none has an md superblock. */
static int working_recorded(int n, char **members)
{
	struct md_sb *best = malloc(2 * sizeof(*best)), *sb = best + 1;
	bool have = false;
	for (int i = 0; best && i < n; i++) {
		struct member *m;
		char err[512];
		if (member_open_file(members[i], MEMBER_RDONLY, 0, &m, err, sizeof(err)) < 0)
			continue;
		if (md_sb_load(m, sb, err, sizeof(err)) == 0 &&
		    (!have || sb->events > best->events)) {
			*best = *sb;
			have = true;
		}
		member_close(m);
	}
	int req = -1;
	if (have && best->version == MD_SB_0_90) {
		req = 0;
		for (int d = 0; d < MD_SB0_MAX_DEVS; d++) {
			const struct md_sb0_disk *k = &best->v0.disks[d];
			/* md_p.h: faulty 0, active 1, sync 2 */
			req += (k->state & 6u) == 6u && !(k->state & 1u) &&
			       k->raid_disk < best->raid_disks;
		}
	} else if (have) {
		req = 0;
		for (uint32_t d = 0; d < best->max_dev && d < MD_SB1_MAX_DEVS; d++)
			req += best->dev_roles[d] < best->raid_disks;
	}
	free(best);
	return req;
}

/* mdadm's Assemble without --run: "/dev/mdN assembled from N drives -
 * need all M to start it (use --run to insist)." 0, or the exit status
 * (printed). */
static int partial_refuse(const char *verb, const struct uraid_status *st, const char *name, int n,
                          char **members)
{
	int ok = 0, rebuilding = 0, spares = 0;
	for (int i = 0; i < st->nmembers; i++) {
		const struct uraid_member_status *m = &st->members[i];
		/* (a replacement being copied counts as rebuilding, one copied
		 * not at all, as mdadm counts them) */
		if (m->role >= 0) {
			ok += m->state == URAID_MEMBER_IN_SYNC &&
			      !(m->flags & URAID_MEMBER_F_REPLACEMENT);
			rebuilding += m->state == URAID_MEMBER_REBUILDING;
		} else if (m->state == URAID_MEMBER_SPARE) {
			spares++;
		}
	}
	int req = working_recorded(n, members);
	if (req < 0 || ok + rebuilding >= req)
		return 0;
	char more[96] = "";
	if (rebuilding)
		snprintf(more, sizeof(more), "%s %d rebuilding", spares ? "," : " and", rebuilding);
	if (spares)
		snprintf(more + strlen(more), sizeof(more) - strlen(more), " and %d spare%s",
		         spares, spares == 1 ? "" : "s");
	char need[64];
	if (req == st->raid_disks)
		snprintf(need, sizeof(need), "need all %d to start it", req);
	else
		snprintf(need, sizeof(need), "need %d to start", req);
	return cli_error(verb, "%s assembled from %d drive%s%s - %s (use --run to insist).", name,
	                 ok, ok == 1 ? "" : "s", more, need);
}

int cli_assemble_start(const char *verb, const char *want, bool force, bool partial,
                       const char *update, const char *overlay, int n, char **members)
{
	if (want && cli_run_ready(verb, want))
		return 1;
	/* Check first, read-only, so refusals reach the user directly. */
	char err[512], warn[2048];
	struct uraid_array *a;
	unsigned uflags;
	if (cli_update_flags(update, &uflags) < 0)
		return cli_update_refuse(verb, update);
	int rc = uraid_assemble_overlay((const char *const *)members, n,
	                                URAID_RDONLY | URAID_NO_SYNC_THREAD |
	                                    (force ? URAID_FORCE : 0) | uflags,
	                                overlay, &a, err, sizeof(err), warn, sizeof(warn));
	if (warn[0])
		fprintf(stderr, "uraid: %s: warning: %s", verb, warn);
	if (rc < 0)
		return cli_error(verb, "%s", err);
	/* Resolved and checked by the library: the daemon works from "/". */
	char ovdir[URAID_OVERLAY_DIR_MAX] = "";
	if (overlay)
		snprintf(ovdir, sizeof(ovdir), "%s", uraid_overlay_dir(a));
	struct uraid_status st;
	uraid_status(a, &st);
	uraid_stop(a);
	/* The read-only check only warns about a dirty degraded array; the
	 * daemon's read-write assembly would refuse it. */
	if (!force && strstr(warn, "dirty degraded array"))
		return cli_dirty_degraded(verb, &st, members[0]);
	char nm[URAID_NAME_MAX + 1];
	if (cli_pick_name(verb, want, st.name, members[0], nm, sizeof(nm)))
		return 1;
	if (!partial && (rc = partial_refuse(verb, &st, nm, n, members)) != 0)
		return rc;
	if (force)
		setenv("URAID_DAEMON_FORCE", "1", 1);
	if (update)
		setenv("URAID_DAEMON_UPDATE", update, 1);
	rc = cli_start_daemon(verb, nm, n, members, ovdir[0] ? ovdir : NULL);
	unsetenv("URAID_DAEMON_FORCE");
	unsetenv("URAID_DAEMON_UPDATE");
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cli_config_load(const char *verb, const char *path, struct uraid_config **c)
{
	char err[4096 + 256];
	if (uraid_config_load(path, c, err, sizeof(err)) < 0)
		return cli_error(verb, "%s", err);
	return 0;
}

int cli_running_arrays(const char *verb, char ***names, int *n)
{
	char rd[PATH_MAX], err[PATH_MAX + 256];
	*names = NULL;
	*n = 0;
	int rc = uraid_run_dir(false, rd, sizeof(rd), err, sizeof(err));
	/* No run directory: nothing runs. One not to be trusted: say so. */
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return cli_error(verb, "%s", err);
	DIR *d = opendir(rd);
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l <= 5 || strcmp(e->d_name + l - 5, ".sock"))
			continue;
		char *nm = strndup(e->d_name, l - 5);
		char **nn = nm ? realloc(*names, (size_t)(*n + 1) * sizeof(*nn)) : NULL;
		if (!nn || uraid_name_check(nm, NULL, 0) < 0) {
			free(nm);
			if (!nn)
				break;
			*names = nn;
			continue;
		}
		*names = nn;
		nn[(*n)++] = nm;
	}
	closedir(d);
	qsort(*names, (size_t)*n, sizeof(**names), cmp_str);
	return 0;
}

bool cli_array_running(const char *name)
{
	struct uraid_status st;
	return uraid_control_status(name, &st, NULL, 0) == 0;
}

int cli_config_members(const char *arr, char ***paths, int *n)
{
	struct uraid_config *c;
	char err[4096 + 256];
	if (uraid_config_load(NULL, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "uraid: warning: %s\n", err);
		return -1;
	}
	const struct uraid_config_array *a = uraid_config_find(c, arr);
	int rc = a ? uraid_config_members(c, a, paths, n, err, sizeof(err)) : -1;
	uraid_config_free(c);
	if (rc < 0)
		return -1;
	for (int i = 0; i < *n; i++) {
		char *r = cli_member_path((*paths)[i]);
		if (r) {
			free((*paths)[i]);
			(*paths)[i] = r;
		}
	}
	if (*n == 0) {
		uraid_config_paths_free(*paths, *n);
		return -1;
	}
	return 0;
}
