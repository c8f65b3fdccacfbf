/* gmirror/graid3 verbs that change an array (configure, insert, remove,
 * rebuild, activate, deactivate, forget, resize, destroy): one request for
 * uraid_geom_ctl, sent to the array's daemon when NAME is running, else run
 * on the member files (assembled, changed, synchronized, stopped). Also
 * status/list of a running array and dump of the metadata sectors. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_array.h"
#include "cli/cmd_geom.h"
#include "cli/status_geom.h"
#include "layout/layout.h"
#include "member/member.h"
#include "meta/geom.h"
#include "uraid.h"

bool geom_cli_running(const char *name)
{
	struct uraid_status st;
	char err[512];
	return uraid_control_status(name, &st, err, sizeof(err)) == 0 && cli_is_geom(st.level);
}

void geom_cli_member(char *req, size_t len, const char *path)
{
	char *rp = cli_member_path(path);
	size_t l = strlen(req);
	snprintf(req + l, len - l, " member=%s", rp ? rp : path);
	free(rp);
}

static int stop_running(const char *verb, const char *name)
{
	char *av[] = {"stop", (char *)name, NULL};
	int rc = cmd_stop(2, av);
	return rc ? cli_error(verb, "stopping %s failed", name) : 0;
}

/* Assemble the member files paths[0..n) (by absolute path, as a daemon
 * would) with `flags`, and check they hold a `level` array (0: gmirror or
 * graid3) named `name` (NULL: any). Returns 0 with *out set, or an exit
 * status (message printed). */
static int assemble_files(const char *verb, int level, const char *name, char **paths, int n,
                          unsigned flags, struct uraid_array **out)
{
	char err[512] = "", warn[2048] = "";
	*out = NULL;
	char **abs = calloc((size_t)n, sizeof(*abs));
	if (!abs)
		return cli_error(verb, "out of memory");
	int status = 0;
	for (int i = 0; i < n; i++) {
		abs[i] = cli_member_path(paths[i]);
		if (!abs[i] && !status)
			status = cli_error(verb, "%s: %s", paths[i], strerror(errno));
	}
	struct uraid_array *a = NULL;
	int rc = status ? 0
	                : uraid_assemble((const char *const *)abs, n, flags, &a, err, sizeof(err),
	                                 warn, sizeof(warn));
	if (rc == -ENOENT) /* md's "no md superblock" would mislead here */
		status = cli_error(verb, "%s: no %s metadata", paths[0],
		                   level ? level_name(level) : "gmirror or graid3");
	else if (rc < 0)
		status = cli_error(verb, "%s", err);
	if (warn[0])
		fprintf(stderr, "uraid: warning: %s", warn);
	for (int i = 0; i < n; i++)
		free(abs[i]);
	free(abs);
	if (!a)
		return status;
	struct uraid_status st;
	uraid_status(a, &st);
	if (level ? st.level != level : !cli_is_geom(st.level))
		status = cli_error(verb, "the components hold a %s, not a %s", level_name(st.level),
		                   level ? level_name(level) : "gmirror or graid3");
	else if (name && strcmp(st.name, name) != 0)
		status = cli_error(verb, "components belong to %s %s, not %s", level_name(level),
		                   st.name, name);
	if (status) {
		uraid_stop(a);
		return status;
	}
	*out = a;
	return 0;
}

/* What gmirror's autosync would do before the device goes away, then a
 * clean stop. */
static int finish(const char *verb, struct uraid_array *a, int status)
{
	int rc = uraid_sync_wait(a);
	if (rc < 0 && !status)
		status = cli_error(verb, "synchronization failed: %s", strerror(-rc));
	rc = uraid_stop(a);
	if (rc < 0 && !status)
		status = cli_error(verb, "stop: %s", strerror(-rc));
	return status;
}

int geom_cli_open(const char *verb, char **paths, int n, unsigned flags, struct uraid_array **out)
{
	return assemble_files(verb, 0, NULL, paths, n, flags, out);
}

int geom_cli_request(const char *verb, int level, const char *name, char **paths, int n,
                     const char *req)
{
	char err[512] = "";
	if (n == 0) {
		char line[8192];
		snprintf(line, sizeof(line), "geom %s", req);
		if (uraid_control_request(name, line, NULL, 0, NULL, NULL, err, sizeof(err)) < 0)
			return cli_error(verb, "%s", err);
		return strncmp(req, "destroy", 7) ? 0 : stop_running(verb, name);
	}
	struct uraid_array *a;
	int status = assemble_files(verb, level, name, paths, n, URAID_NO_SYNC_THREAD, &a);
	if (status)
		return status;
	if (uraid_geom_ctl(a, req, err, sizeof(err)) < 0)
		status = cli_error(verb, "%s", err);
	return finish(verb, a, status);
}

static const char *state_word(enum uraid_member_state s)
{
	switch (s) {
	case URAID_MEMBER_IN_SYNC: return "ACTIVE";
	case URAID_MEMBER_REBUILDING: return "SYNCHRONIZING";
	case URAID_MEMBER_STALE: return "STALE";
	case URAID_MEMBER_FAULTY: return "FAILED";
	case URAID_MEMBER_INACTIVE: return "INACTIVE";
	default: return "MISSING";
	}
}

/* gmirror/graid3 status (a table) or list (every field), from uraid_status. */
static void print_status(const struct uraid_status *s, bool list)
{
	const struct uraid_status st = *s;
	char fl[64];
	bool mirror = st.level == URAID_LEVEL_GMIRROR;
	cli_geom_flags(&st, fl, sizeof(fl));
	if (list) {
		const char *b = geom_balance_name(st.geom_balance);
		printf("Geom name: %s\nState: %s\nComponents: %d\n", st.name,
		       st.working == st.raid_disks ? "COMPLETE" : "DEGRADED", st.raid_disks);
		if (mirror)
			printf("Balance: %s\nSlice: %u\n", b ? b : "?", st.geom_slice);
		printf(
		    "Flags: %s\nGenID: %u\nSyncID: %u\nID: %s\nMediasize: %llu\nSectorsize: %u\n",
		    fl, st.geom_genid, st.geom_syncid, st.uuid,
		    (unsigned long long)st.array_sectors * 512, st.block_bytes);
		for (int i = 0; i < st.nmembers; i++) {
			const struct uraid_member_status *m = &st.members[i];
			printf("%d. Name: %s\n   State: %s\n", i + 1, m->name,
			       state_word(m->state));
			if (mirror)
				printf("   Priority: %d\n   ID: %u\n", m->priority, m->dev_number);
			else
				printf("   Number: %d%s\n", m->role,
				       m->role == st.raid_disks - 1 ? " (parity)" : "");
		}
		return;
	}
	char nm[48];
	snprintf(nm, sizeof(nm), "%s/%s", mirror ? "mirror" : "raid3", st.name);
	printf("%-16s %-9s Components\n", "Name", "Status");
	for (int i = 0; i < st.nmembers; i++) {
		const struct uraid_member_status *m = &st.members[i];
		char extra[48] = "";
		if (m->state == URAID_MEMBER_REBUILDING && st.sync_total)
			snprintf(extra, sizeof(extra), " %llu%%",
			         (unsigned long long)(m->recovery_offset * 100 / st.sync_total));
		printf("%-16s %-9s %s (%s%s)\n", i ? "" : nm,
		       i                             ? ""
		       : st.working == st.raid_disks ? "COMPLETE"
		                                     : "DEGRADED",
		       m->name, state_word(m->state), extra);
	}
}

int geom_cli_status(const char *verb, int level, const char *name, char **paths, int n, bool list)
{
	struct uraid_status st;
	char err[512];
	if (n == 0) {
		if (uraid_control_status(name, &st, err, sizeof(err)) < 0)
			return cli_error(verb, "%s", err);
		print_status(&st, list);
		return 0;
	}
	struct uraid_array *a;
	int status =
	    assemble_files(verb, level, name, paths, n, URAID_RDONLY | URAID_NO_SYNC_THREAD, &a);
	if (status)
		return status;
	uraid_status(a, &st);
	print_status(&st, list);
	uraid_stop(a);
	return 0;
}

int geom_cli_stop(const char *verb, int level, const char *name, char **paths, int n)
{
	if (n == 0)
		return stop_running(verb, name);
	struct uraid_array *a;
	int status = assemble_files(verb, level, name, paths, n, URAID_NO_SYNC_THREAD, &a);
	return status ? status : finish(verb, a, 0);
}

static void flag_words(char *buf, size_t len, uint64_t f, const char *const *names)
{
	buf[0] = 0;
	for (int b = 0; names[b]; b++)
		if (f & (1ull << b)) {
			size_t l = strlen(buf);
			snprintf(buf + l, len - l, "%s%s", l ? ", " : "", names[b]);
		}
	if (!buf[0])
		snprintf(buf, len, "NONE");
}

int geom_cli_dump(const char *verb, bool mirror, char **paths, int n)
{
	static const char *const mdev[] = {"NOAUTOSYNC", "NOFAILSYNC", NULL};
	static const char *const mdisk[] = {"DIRTY",     "SYNCHRONIZING", "FORCE_SYNC", "INACTIVE",
	                                    "HARDCODED", "BROKEN",        "CANDELETE",  NULL};
	static const char *const rdev[] = {"NOAUTOSYNC", "ROUND-ROBIN", "VERIFY", "NOFAILSYNC",
	                                   NULL};
	static const char *const rdisk[] = {"DIRTY",     "SYNCHRONIZING", "FORCE_SYNC",
	                                    "HARDCODED", "BROKEN",        NULL};
	int status = 0;
	for (int i = 0; i < n; i++) {
		struct member *m;
		char err[256], df[128], mf[128];
		if (member_open_file(paths[i], MEMBER_RDONLY, 0, &m, err, sizeof(err)) < 0) {
			status = cli_error(verb, "%s", err);
			continue;
		}
		struct geom_mirror_md mm;
		struct geom_raid3_md rm;
		int rc = mirror ? geom_mirror_read(m, &mm, err, sizeof(err))
		                : geom_raid3_read(m, &rm, err, sizeof(err));
		member_close(m);
		if (rc < 0) {
			status = cli_error(verb, "%s: %s", paths[i],
			                   rc == -ENOENT ? "no metadata of this class" : err);
			continue;
		}
		printf("Metadata on %s:\n", paths[i]);
		if (mirror) {
			const char *b = geom_balance_name(mm.balance);
			flag_words(mf, sizeof(mf), mm.mflags, mdev);
			flag_words(df, sizeof(df), mm.dflags, mdisk);
			printf("     magic: %s\n   version: %u\n      name: %s\n       mid: %u\n"
			       "       did: %u\n       all: %u\n     genid: %u\n    syncid: %u\n"
			       "  priority: %u\n     slice: %u\n   balance: %s\n mediasize: %llu\n"
			       "sectorsize: %u\nsyncoffset: %llu\n    mflags: %s\n    dflags: %s\n"
			       "hcprovider: %s\n  provsize: %llu\n",
			       GEOM_MIRROR_MAGIC, mm.version, mm.name, mm.mid, mm.did, mm.all,
			       mm.genid, mm.syncid, mm.priority, mm.slice, b ? b : "?",
			       (unsigned long long)mm.mediasize, mm.sectorsize,
			       (unsigned long long)mm.sync_offset, mf, df, mm.provider,
			       (unsigned long long)mm.provsize);
		} else {
			flag_words(mf, sizeof(mf), rm.mflags, rdev);
			flag_words(df, sizeof(df), rm.dflags, rdisk);
			printf(
			    "     magic: %s\n   version: %u\n      name: %s\n        id: %u\n"
			    "        no: %u\n       all: %u\n     genid: %u\n    syncid: %u\n"
			    " mediasize: %llu\nsectorsize: %u\nsyncoffset: %llu\n    mflags: %s\n"
			    "    dflags: %s\nhcprovider: %s\n  provsize: %llu\n",
			    GEOM_RAID3_MAGIC, rm.version, rm.name, rm.id, rm.no, rm.all, rm.genid,
			    rm.syncid, (unsigned long long)rm.mediasize, rm.sectorsize,
			    (unsigned long long)rm.sync_offset, mf, df, rm.provider,
			    (unsigned long long)rm.provsize);
		}
		printf("\n");
	}
	return status;
}

int geom_cli_clear(const char *verb, bool mirror, char **paths, int n)
{
	int status = 0;
	for (int i = 0; i < n; i++) {
		char err[256] = "";
		/* A running array holds an exclusive lock on each member. */
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
			status = cli_error(verb, "%s is in use by a running array", paths[i]);
			close(fd);
			continue;
		}
		struct member *m;
		if (member_open_file(paths[i], 0, 0, &m, err, sizeof(err)) < 0) {
			status = cli_error(verb, "%s", err);
		} else {
			struct geom_mirror_md mm;
			struct geom_raid3_md rm;
			int rc = mirror ? geom_mirror_read(m, &mm, err, sizeof(err))
			                : geom_raid3_read(m, &rm, err, sizeof(err));
			if (rc == 0)
				rc = geom_clear(m, err, sizeof(err));
			if (rc < 0)
				status = cli_error(verb, "%s", err);
			member_close(m);
		}
		if (fd >= 0)
			close(fd);
	}
	return status;
}
