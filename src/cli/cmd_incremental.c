/* uraid incremental DEV (mdadm --incremental): members arrive one at a time,
 * as udev reports them or a boot script lists them. Each is recorded under
 * its array in RUN/NAME.incremental ("uuid=U" then "member=PATH" lines);
 * once the members seen cover every slot at the newest event count the
 * array starts (--run: as soon as it can start degraded). `--run --scan`
 * starts every pending array that can. A running array gets the member
 * added (re-added when its bitmap allows). The run directory itself is
 * flock()ed while the record changes, so concurrent udev events queue. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_array.h"
#include "cli/cli_proc.h"
#include "member/member.h"
#include "meta/md_super.h"
#include "uraid.h"

#define INCR_SUFFIX  ".incremental"
#define INCR_MAX_DEV 256
#define INCR_TEXT    (INCR_MAX_DEV * (PATH_MAX + 16))

struct pending {
	char uuid[36];
	char *dev[INCR_MAX_DEV];
	int n;
};

static void pending_free(struct pending *p)
{
	for (int i = 0; i < p->n; i++)
		free(p->dev[i]);
	p->n = 0;
}

static int load_sb(const char *path, struct md_sb *sb, char *err, size_t errlen)
{
	struct member *m;
	int rc = member_open_file(path, MEMBER_RDONLY, 0, &m, err, errlen);
	if (rc < 0)
		return rc;
	rc = md_sb_load(m, sb, err, errlen);
	member_close(m);
	return rc;
}

/* 0 and *p (empty when there is no record), or 1 printed. */
static int pending_read(const char *verb, const char *name, struct pending *p)
{
	char *buf = malloc(INCR_TEXT), err[PATH_MAX + 256];
	memset(p, 0, sizeof(*p));
	if (!buf)
		return cli_error(verb, "out of memory");
	int rc = uraid_run_read(name, INCR_SUFFIX, buf, INCR_TEXT, err, sizeof(err));
	if (rc == -ENOENT) {
		free(buf);
		return 0;
	}
	if (rc < 0) {
		free(buf);
		return cli_error(verb, "%s", err);
	}
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		if (!strncmp(l, "uuid=", 5))
			snprintf(p->uuid, sizeof(p->uuid), "%s", l + 5);
		else if (!strncmp(l, "member=", 7) && p->n < INCR_MAX_DEV)
			p->dev[p->n++] = strdup(l + 7);
	}
	free(buf);
	for (int i = 0; i < p->n; i++)
		if (!p->dev[i])
			return cli_error(verb, "out of memory");
	return 0;
}

static int pending_write(const char *verb, const char *name, const struct pending *p)
{
	char *buf = malloc(INCR_TEXT), err[PATH_MAX + 256];
	if (!buf)
		return cli_error(verb, "out of memory");
	size_t o = (size_t)snprintf(buf, INCR_TEXT, "uuid=%s\n", p->uuid);
	for (int i = 0; i < p->n && o < INCR_TEXT; i++)
		o += (size_t)snprintf(buf + o, INCR_TEXT - o, "member=%s\n", p->dev[i]);
	int rc = uraid_run_write(name, INCR_SUFFIX, buf, err, sizeof(err));
	free(buf);
	return rc < 0 ? cli_error(verb, "%s", err) : 0;
}

/* Slots covered by members at the newest event count, and raid_disks. */
static void coverage(const struct pending *p, int *have, int *need)
{
	struct md_sb sb;
	uint64_t newest = 0;
	bool seen[MD_SB1_MAX_DEVS] = {false};
	char err[512];
	*have = *need = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < p->n; i++) {
			if (load_sb(p->dev[i], &sb, err, sizeof(err)) < 0)
				continue;
			if (pass == 0) {
				if (sb.events >= newest) {
					newest = sb.events;
					*need = (int)sb.raid_disks;
				}
				continue;
			}
			int role = md_sb_role(&sb);
			if (sb.events == newest && role >= 0 && role < *need &&
			    role < MD_SB1_MAX_DEVS && !seen[role]) {
				seen[role] = true;
				(*have)++;
			}
		}
}

/* Can it start degraded? A read-only trial assembly says. */
static bool can_start(const struct pending *p)
{
	char err[512], warn[2048];
	struct uraid_array *a;
	if (uraid_assemble((const char *const *)p->dev, p->n, URAID_RDONLY | URAID_NO_SYNC_THREAD,
	                   &a, err, sizeof(err), warn, sizeof(warn)) < 0)
		return false;
	uraid_stop(a);
	return true;
}

/* Start name from its record when complete (or, run, when it can): 0, or 1
 * printed. *started says whether it did. */
static int maybe_start(const char *verb, const char *name, struct pending *p, bool run,
                       bool *started)
{
	int have, need;
	char err[PATH_MAX + 256];
	*started = false;
	coverage(p, &have, &need);
	if (have < need && !(run && can_start(p)))
		return 0;
	int rc = cli_assemble_start(verb, name, false, true, NULL, NULL, p->n, p->dev);
	if (rc)
		return rc;
	*started = true;
	uraid_run_unlink(name, INCR_SUFFIX, err, sizeof(err));
	return 0;
}

/* The run directory, locked: a descriptor (close to unlock) or -1 printed. */
static int lock_run_dir(const char *verb)
{
	char dir[PATH_MAX], err[PATH_MAX + 256];
	if (uraid_run_dir(true, dir, sizeof(dir), err, sizeof(err)) < 0) {
		cli_error(verb, "%s", err);
		return -1;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		cli_error(verb, "%s: %s", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int incremental_one(const char *verb, const struct uraid_config *c, bool run,
                           const char *arg)
{
	char err[PATH_MAX + 256], uuid[36], name[URAID_NAME_MAX + 1];
	char *dev = realpath(arg, NULL);
	if (!dev)
		return cli_error(verb, "%s: %s", arg, strerror(errno));
	struct md_sb sb;
	int rc = load_sb(dev, &sb, err, sizeof(err));
	if (rc < 0) {
		free(dev);
		return cli_error(verb, "%s", rc == -ENOENT ? "no md superblock" : err);
	}
	md_uuid_format(sb.set_uuid, uuid);
	const struct uraid_config_array *ca = uraid_config_find(c, uuid);
	if (ca && ca->name[0])
		snprintf(name, sizeof(name), "%s", ca->name);
	else if (cli_pick_name(verb, NULL, sb.version == MD_SB_0_90 ? "" : sb.set_name, dev, name,
	                       sizeof(name))) {
		free(dev);
		return 1;
	}
	if (cli_run_ready(verb, name)) {
		free(dev);
		return 1;
	}
	int lk = lock_run_dir(verb);
	if (lk < 0) {
		free(dev);
		return 1;
	}
	struct pending p;
	if (cli_array_running(name)) {
		char line[PATH_MAX + 16], esc[PATH_MAX];
		uraid_ctl_escape(dev, esc, sizeof(esc));
		snprintf(line, sizeof(line), "add %s", esc);
		rc = uraid_control_request(name, line, NULL, 0, NULL, NULL, err, sizeof(err));
		if (rc < 0)
			rc = cli_error(verb, "%s: %s is running and did not take it: %s", dev, name,
			               err);
		else
			fprintf(stderr, "uraid: %s: %s added to %s, which was already running\n",
			        verb, dev, name);
		goto out;
	}
	rc = pending_read(verb, name, &p);
	if (rc)
		goto out;
	/* Tests widen the window between reading the record and writing it
	 * back, which the lock must cover (incremental.sh, members at once). */
	const char *hold = getenv("URAID_INCREMENTAL_HOLD_MS");
	if (hold && *hold)
		cli_msleep(strtol(hold, NULL, 10));
	if (p.n && strcmp(p.uuid, uuid)) {
		rc = cli_error(verb,
		               "%s belongs to array %s, but %s gathers the members of %s; "
		               "give the arrays distinct names",
		               dev, uuid, name, p.uuid);
		pending_free(&p);
		goto out;
	}
	snprintf(p.uuid, sizeof(p.uuid), "%s", uuid);
	int i;
	for (i = 0; i < p.n && strcmp(p.dev[i], dev); i++)
		;
	if (i == p.n) {
		if (p.n == INCR_MAX_DEV) {
			rc = cli_error(verb, "%s: more than %d members", name, INCR_MAX_DEV);
			pending_free(&p);
			goto out;
		}
		p.dev[p.n++] = strdup(dev);
	}
	rc = pending_write(verb, name, &p);
	bool started = false;
	if (rc == 0)
		rc = maybe_start(verb, name, &p, run, &started);
	if (rc == 0 && started) {
		fprintf(stderr, "uraid: %s: %s attached to %s, which has been started\n", verb, dev,
		        name);
	} else if (rc == 0) {
		int have, need;
		coverage(&p, &have, &need);
		fprintf(stderr, "uraid: %s: %s attached to %s, not enough to start (%d of %d)\n",
		        verb, dev, name, have, need);
	}
	pending_free(&p);
out:
	close(lk);
	free(dev);
	return rc;
}

/* --run --scan: every pending array that can start. */
static int incremental_scan(const char *verb)
{
	int lk = lock_run_dir(verb);
	if (lk < 0)
		return 1;
	char dir[PATH_MAX], err[PATH_MAX + 256];
	int status = 0;
	if (uraid_run_dir(false, dir, sizeof(dir), err, sizeof(err)) < 0) {
		close(lk);
		return cli_error(verb, "%s", err);
	}
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t sl = strlen(INCR_SUFFIX);
	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l <= sl || l - sl > URAID_NAME_MAX || strcmp(e->d_name + l - sl, INCR_SUFFIX))
			continue;
		char name[URAID_NAME_MAX + 1];
		memcpy(name, e->d_name, l - sl);
		name[l - sl] = 0;
		struct pending p;
		bool started = false;
		if (uraid_name_check(name, NULL, 0) < 0 || pending_read(verb, name, &p))
			continue;
		if (maybe_start(verb, name, &p, true, &started))
			status = 1;
		else if (started)
			fprintf(stderr, "uraid: %s: %s has been started with %d member%s\n", verb,
			        name, p.n, p.n == 1 ? "" : "s");
		else
			status = cli_error(verb, "%s cannot start with the members seen", name);
		pending_free(&p);
	}
	if (d)
		closedir(d);
	close(lk);
	return status;
}

int cli_incremental(const char *verb, const char *config, bool run, bool scan, int n, char **devs)
{
	if (scan) {
		if (!run || n)
			return cli_error(verb, "--scan goes with --run and no device: it starts "
			                       "every pending array that can run");
		return incremental_scan(verb);
	}
	if (n != 1)
		return cli_error(verb, "one device expected");
	struct uraid_config *c;
	if (cli_config_load(verb, config, &c))
		return 1;
	int rc = incremental_one(verb, c, run, devs[0]);
	uraid_config_free(c);
	return rc;
}

int cmd_incremental(int argc, char **argv)
{
	static const struct option opts[] = {{"run", no_argument, NULL, 'R'},
	                                     {"scan", no_argument, NULL, 's'},
	                                     {"config", required_argument, NULL, 'c'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	bool run = false, scan = false;
	const char *config = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "Rsc:h", opts, NULL)) != -1) {
		switch (c) {
		case 'R': run = true; break;
		case 's': scan = true; break;
		case 'c': config = optarg; break;
		case 'h':
			printf("usage: uraid incremental [--run] [--config FILE] DEV\n"
			       "       uraid incremental --run --scan\n"
			       "  Adds DEV to the array its superblock names (named by the\n"
			       "  configuration file's ARRAY line with its UUID, else by its md\n"
			       "  name) and starts the array once every slot has a member\n"
			       "  (--run: as soon as it can start degraded). A running array gets\n"
			       "  DEV added. --run --scan starts every pending array that can.\n"
			       "  State: $URAID_RUN_DIR/NAME.incremental.\n");
			return 0;
		default: return 2;
		}
	}
	return cli_incremental("incremental", config, run, scan, argc - optind, argv + optind);
}
