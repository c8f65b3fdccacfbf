/* `uraid serve NAME` / `uraid attach NAME` of an array a daemon runs: the
 * daemon is stopped and nbdkit assembles the same members. Every part goes
 * along (slots, spares, replacements, the write journal): an array started
 * without its journal refuses every write and, once stopped, records the
 * journal as faulty for good. Afterwards the array under nbdkit must report
 * the members and journal it had before; if not, it is handed back to a
 * daemon with the same members. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_proc.h"
#include "cli/cli_array.h"
#include "member/member.h"
#include "cli/serve.h"
#include "uraid.h"

/* No process holds the exclusive lock a running array takes on its members. */
static bool members_unlocked(char **mm, int n)
{
	for (int i = 0; i < n; i++) {
		int fd = open(mm[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		int busy = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
		close(fd);
		if (busy)
			return false;
	}
	return true;
}

/* Ask NAME's process (daemon or nbdkit) to stop; wait until its socket is
 * gone and it let go of every member. 0, or an exit status. */
static int stop_and_wait(const char *verb, const char *name, char **mm, int n)
{
	char err[PATH_MAX + 256], sock[PATH_MAX];
	if (cli_sock_path(name, sock, sizeof(sock), err, sizeof(err)) < 0)
		return cli_error(verb, "%s", err);
	if (uraid_control_request(name, "stop", NULL, 0, NULL, NULL, err, sizeof(err)) < 0)
		return cli_error(verb, "stopping %s: %s", name, err);
	for (int i = 0; i < 600; i++) {
		struct stat sb;
		/* The socket goes before the array has stopped; it is done when
		 * it has let go of the members' locks. */
		if (stat(sock, &sb) < 0 && members_unlocked(mm, n))
			return 0;
		cli_msleep(50);
	}
	return cli_error(verb, "%s did not stop within 30 s", name);
}

/* The members a daemon must hand over: every one that holds data or may
 * receive it. Faulty members stay out (the others' superblocks record them
 * faulty), as does a journal that failed (writes stay refused, as before). */
static bool carried(enum uraid_member_state s)
{
	return s != URAID_MEMBER_FAULTY && s != URAID_MEMBER_MISSING;
}

int serve_handover(const char *verb, const char *name, struct uraid_status *before, char ***members,
                   int *n)
{
	char err[512];
	if (uraid_control_status(name, before, err, sizeof(err)) < 0)
		return cli_error(verb, "%s", err);
	/* A status lists at most URAID_STATUS_MAX_MEMBERS: more would be lost. */
	if (before->nmembers >= URAID_STATUS_MAX_MEMBERS)
		return cli_error(
		    verb,
		    "%s has %d or more members, more than its status can list; stop it "
		    "and serve its members by path",
		    name, URAID_STATUS_MAX_MEMBERS);
	char **mm = calloc((size_t)before->nmembers + 2, sizeof(*mm));
	if (!mm)
		return cli_error(verb, "out of memory");
	int k = 0, rc = 0;
	/* A built array (no superblocks) goes over with its geometry, which its
	 * daemon recorded, and its members in role order, absent ones named
	 * "missing": nbdkit builds it again (build=, from this environment). */
	bool built = before->metadata == -1;
	char spec[256];
	if (built) {
		if (uraid_run_read(name, ".build", spec, sizeof(spec), err, sizeof(err)) < 0) {
			free(mm);
			return cli_error(
			    verb, "%s has no superblocks, and its geometry is lost: %s", name, err);
		}
		spec[strcspn(spec, "\n")] = 0;
		setenv("URAID_DAEMON_BUILD", spec, 1);
	}
	for (int i = 0; i < before->nmembers && !rc; i++) {
		const struct uraid_member_status *m = &before->members[i];
		if (built && m->state == URAID_MEMBER_MISSING) {
			if (!(mm[k++] = strdup("missing")))
				rc = cli_error(verb, "out of memory");
			continue;
		}
		if (!carried(m->state))
			continue;
		if (m->name[0] != '/' && !member_is_remote(m->name))
			rc = cli_error(verb, "member '%s' of %s has no path to hand over", m->name,
			               name);
		else if (!(mm[k++] = strdup(m->name)))
			rc = cli_error(verb, "out of memory");
	}
	if (!rc && before->journal == 1) {
		if (before->journal_name[0] != '/')
			rc = cli_error(verb, "the journal '%s' of %s has no path to hand over",
			               before->journal_name, name);
		else if (!(mm[k++] = strdup(before->journal_name)))
			rc = cli_error(verb, "out of memory");
	}
	if (!rc)
		rc = stop_and_wait(verb, name, mm, k);
	if (rc) {
		for (int i = 0; i < k; i++)
			free(mm[i]);
		free(mm);
		return rc;
	}
	fprintf(stderr, "uraid: %s: took %s over from its daemon (%d members%s)\n", verb, name, k,
	        before->journal == 1 ? " with the journal" : "");
	*members = mm;
	*n = k;
	return 0;
}

static const struct uraid_member_status *find(const struct uraid_status *st, const char *name)
{
	for (int i = 0; i < st->nmembers; i++)
		if (!strcmp(st->members[i].name, name))
			return &st->members[i];
	return NULL;
}

/* b, faulty now, was replaced meanwhile: the replacement `before` was
 * rebuilding holds its slot, in sync (md marks the old member faulty). */
static bool replaced(const struct uraid_status *before, const struct uraid_status *after,
                     const struct uraid_member_status *b)
{
	for (int i = 0; i < after->nmembers; i++) {
		const struct uraid_member_status *x = &after->members[i];
		const struct uraid_member_status *was = find(before, x->name);
		if (x->role == b->role && x->state == URAID_MEMBER_IN_SYNC && was && was != b &&
		    was->state == URAID_MEMBER_REBUILDING)
			return true;
	}
	return false;
}

/* Every part `before` had, still there in `after`; prints each difference. */
static int compare(const char *verb, const struct uraid_status *before,
                   const struct uraid_status *after)
{
	int bad = 0;
	if (strcmp(before->uuid, after->uuid) || before->raid_disks != after->raid_disks)
		bad = cli_error(verb, "now array %s with %d slots, before %s with %d", after->uuid,
		                after->raid_disks, before->uuid, before->raid_disks);
	for (int i = 0; i < before->nmembers; i++) {
		const struct uraid_member_status *b = &before->members[i];
		if (!carried(b->state))
			continue;
		const struct uraid_member_status *a = find(after, b->name);
		if (a && a->state == URAID_MEMBER_FAULTY && replaced(before, after, b))
			continue;
		if (!a || !carried(a->state))
			bad = cli_error(verb, "member %s is %s", b->name,
			                a ? "faulty now" : "missing");
		else if (b->role >= 0 && a->role != b->role)
			bad = cli_error(verb, "member %s was in slot %d, now %d", b->name, b->role,
			                a->role);
	}
	if (strcmp(after->overlay, before->overlay))
		bad = cli_error(verb, "overlay before: %s, now: %s",
		                before->overlay[0] ? before->overlay : "none",
		                after->overlay[0] ? after->overlay : "none");
	if (after->journal != before->journal ||
	    (before->journal == 1 && strcmp(after->journal_name, before->journal_name)))
		bad = cli_error(verb, "journal before: %s, now: %s",
		                before->journal == 1   ? before->journal_name
		                : before->journal == 2 ? "failed"
		                                       : "none",
		                after->journal == 1   ? after->journal_name
		                : after->journal == 2 ? "failed"
		                                      : "none");
	return bad;
}

int serve_check_takeover(const char *verb, const char *name, const struct uraid_status *before,
                         char **mm, int n)
{
	struct uraid_status after;
	char err[512];
	int rc = uraid_control_status(name, &after, err, sizeof(err));
	if (rc < 0)
		rc = cli_error(verb, "after the takeover: %s", err);
	else
		rc = compare(verb, before, &after);
	if (!rc)
		return 0;
	/* Not served with everything it had: give it back to a daemon. */
	cli_error(verb, "%s does not run with every part it had; handing it back to a daemon",
	          name);
	if (stop_and_wait(verb, name, mm, n) == 0)
		cli_start_daemon(verb, name, n, mm, before->overlay[0] ? before->overlay : NULL);
	return 1;
}
