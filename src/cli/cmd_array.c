/* Verbs for running arrays: daemon (internal), assemble, fail, remove, add,
 * replace, check, repair, stop, write. All but daemon/assemble talk to the
 * array's daemon through its control socket. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_array.h"
#include "uraid.h"

static void msleep(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* uraid daemon NAME MEMBER...: assemble read-write and serve the control
 * socket until "stop" or SIGTERM/SIGINT. */
static int daemon_run(int argc, char **argv)
{
	const char *name = argv[1];
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	/* Before any thread exists, so only sigtimedwait below sees them. */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	char err[512], warn[2048];
	struct uraid_array *a;
	/* `uraid assemble --force` / `--overlay DIR` hand their options over in
	 * the environment. */
	const char *fv = getenv("URAID_DAEMON_FORCE");
	unsigned flags = fv && !strcmp(fv, "1") ? URAID_FORCE : 0;
	unsetenv("URAID_DAEMON_FORCE");
	/* and its --update, applied by this read-write assembly */
	unsigned uflags = 0;
	cli_update_flags(getenv("URAID_DAEMON_UPDATE"), &uflags); /* checked by assemble */
	flags |= uflags;
	unsetenv("URAID_DAEMON_UPDATE");
	/* `uraid create` says the members are new (mdstat's member order) */
	const char *cv = getenv("URAID_DAEMON_CREATED");
	flags |= cv && !strcmp(cv, "1") ? URAID_CREATED : 0;
	unsetenv("URAID_DAEMON_CREATED");
	/* frozen until the speed limits below are set */
	flags |= URAID_FROZEN;
	char overlay[URAID_OVERLAY_DIR_MAX] = "";
	const char *ov = getenv("URAID_DAEMON_OVERLAY");
	if (ov && *ov)
		snprintf(overlay, sizeof(overlay), "%s", ov);
	unsetenv("URAID_DAEMON_OVERLAY");
	/* `uraid build` hands its geometry over the same way (no superblocks). */
	char bs[256] = "";
	const char *bv = getenv("URAID_DAEMON_BUILD");
	if (bv)
		snprintf(bs, sizeof(bs), "%s", bv);
	struct uraid_build_opts bo;
	int rc;
	warn[0] = 0;
	if (bs[0]) {
		rc = uraid_build_spec_parse(bs, &bo, err, sizeof(err));
		if (rc == 0)
			rc = uraid_build(&bo, (const char *const *)argv + 2, argc - 2, flags, &a,
			                 err, sizeof(err));
		/* Kept for `serve NAME`, which builds it again under nbdkit. */
		if (rc == 0 && uraid_run_write(name, ".build", bs, err, sizeof(err)) < 0)
			fprintf(stderr, "uraid: daemon %s: warning: %s\n", name, err);
	} else {
		uraid_run_unlink(name, ".build", err, sizeof(err));
		/* mdadm's backup of a reshape's critical section: given
		 * (assemble --backup-file), else the one `uraid grow
		 * --backup-file` recorded for this name (mdadm's
		 * /run/mdadm/backup_file-*), read only where it is needed. */
		char bk[4096] = "";
		bool given = false;
		const char *bv2 = getenv("URAID_DAEMON_BACKUP_FILE");
		if (bv2 && *bv2) {
			snprintf(bk, sizeof(bk), "%s", bv2);
			given = true;
		} else if (uraid_run_read(name, ".backup_file", bk, sizeof(bk), err, sizeof(err)) <
		               0 ||
		           access(bk, F_OK) < 0) {
			bk[0] = 0;
		}
		unsetenv("URAID_DAEMON_BACKUP_FILE");
		rc = -ENOENT;
		if (bk[0] && !overlay[0]) {
			rc = uraid_assemble_backup((const char *const *)argv + 2, argc - 2, flags,
			                           bk, &a, err, sizeof(err), warn, sizeof(warn));
			if (rc < 0 && !given)
				fprintf(stderr,
				        "uraid: daemon %s: warning: the recorded backup file: %s\n",
				        name, err);
		}
		if (rc < 0 && !given)
			rc = uraid_assemble_overlay((const char *const *)argv + 2, argc - 2, flags,
			                            overlay[0] ? overlay : NULL, &a, err,
			                            sizeof(err), warn, sizeof(warn));
	}
	unsetenv("URAID_DAEMON_BUILD");
	if (warn[0])
		fprintf(stderr, "uraid: daemon %s: warning: %s", name, warn);
	if (rc < 0)
		return cli_error("daemon", "%s", err);
	/* md's sync_speed_min/max, KiB/s: set while the array is still
	 * frozen (URAID_FROZEN above), so the first sync batch keeps them. */
	const char *smin = getenv("URAID_SYNC_SPEED_MIN"), *smax = getenv("URAID_SYNC_SPEED_MAX");
	if (smin || smax)
		uraid_sync_speed(a, smin ? strtoull(smin, NULL, 10) : 1000,
		                 smax ? strtoull(smax, NULL, 10) : 0);
	int frc = uraid_sync_freeze(a, false, err, sizeof(err));
	if (frc < 0 && frc != -EOPNOTSUPP) /* GEOM arrays have no frozen */
		fprintf(stderr, "uraid: daemon %s: warning: %s\n", name, err);
	/* md's stripe_cache_size default for raid4/5/6 (URAID_STRIPE_CACHE
	 * overrides, 0 = off; `uraid stripe-cache` changes it later). */
	const char *scs = getenv("URAID_STRIPE_CACHE");
	unsigned long sc = scs && *scs ? strtoul(scs, NULL, 10) : URAID_STRIPE_CACHE_DEFAULT;
	int scrc = uraid_set_stripe_cache(a, sc > URAID_STRIPE_CACHE_MAX ? ~0u : (unsigned)sc);
	if (scrc < 0 && scs && *scs)
		fprintf(stderr, "uraid: daemon %s: warning: stripe cache %s not set (%s)\n", name,
		        scs, strerror(-scrc));
	char path[PATH_MAX];
	if (cli_sock_path(name, path, sizeof(path), err, sizeof(err)) < 0) {
		uraid_stop(a);
		return cli_error("daemon", "%s", err);
	}
	/* attach --via ublk: before the control socket answers, so the device
	 * exists (or the daemon has failed) once attach sees the socket. */
	struct ublk_export *ublk = NULL;
	if (daemon_ublk_start(name, argv + 2, argc - 2, a, &ublk) < 0) {
		uraid_stop(a);
		return 1;
	}
	struct uraid_control *c;
	rc = uraid_control_start(a, path, &c, err, sizeof(err));
	if (rc < 0) {
		daemon_ublk_stop(name, ublk);
		uraid_stop(a);
		return cli_error("daemon", "%s", err);
	}
	/* the run directory's mdstat: the socket's directory is the run dir */
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = 0;
		uraid_control_mdstat(c, dir, name);
	}
	fprintf(stderr, "uraid: daemon %s: running, control socket %s%s%s\n", name, path,
	        overlay[0] ? ", members read-only, every write to the overlay in " : "", overlay);

	fflush(stderr);
	for (;;) {
		if (uraid_control_wait(c, 200) == 0)
			break;
		struct timespec zero = {0, 0};
		int sig = sigtimedwait(&set, NULL, &zero);
		if (sig > 0) {
			fprintf(stderr, "uraid: daemon %s: signal %d, stopping\n", name, sig);
			break;
		}
	}
	daemon_ublk_stop(name, ublk);
	uraid_control_close(c);
	rc = uraid_stop(a);
	if (bs[0])
		uraid_run_unlink(name, ".build", err, sizeof(err));
	fprintf(stderr, "uraid: daemon %s: stopped%s\n", name, rc < 0 ? " with errors" : "");
	return rc < 0 ? 1 : 0;
}

/* The daemon's pid in NAME.pid from its start (before the assembly, so a
 * hung one can be found) to its exit: whoever started it (a test's
 * timeout) can stop it by that pid. */
int cmd_daemon(int argc, char **argv)
{
	if (argc < 3)
		return cli_error("daemon", "usage: uraid daemon NAME MEMBER...");
	const char *name = argv[1];
	if (cli_check_name("daemon", name))
		return 1;
	char err[512], pid[32];
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (uraid_run_write(name, ".pid", pid, err, sizeof(err)) < 0)
		fprintf(stderr, "uraid: daemon %s: warning: %s\n", name, err);
	int rc = daemon_run(argc, argv);
	/* only ours: a daemon started after a refusal of ours keeps its own */
	char now[32];
	if (uraid_run_read(name, ".pid", now, sizeof(now), err, sizeof(err)) >= 0 &&
	    !strcmp(now, pid))
		uraid_run_unlink(name, ".pid", err, sizeof(err));
	return rc;
}

int cmd_assemble(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"name", required_argument, NULL, 'N'},   {"force", no_argument, NULL, 'f'},
	    {"scan", no_argument, NULL, 's'},         {"config", required_argument, NULL, 'c'},
	    {"incremental", no_argument, NULL, 'I'},  {"run", no_argument, NULL, 'R'},
	    {"update", required_argument, NULL, 'U'}, {"overlay", required_argument, NULL, 'O'},
	    {"help", no_argument, NULL, 'h'},         {"backup-file", required_argument, NULL, 'B'},
	    {"uuid", required_argument, NULL, 'u'},   {NULL, 0, NULL, 0}};
	const char *name = NULL, *config = NULL, *update = NULL, *overlay = NULL, *backup = NULL,
	           *uuid = NULL;
	bool force = false, scan = false, incremental = false, run = false;
	int c;
	optind = 1;
	/* getopt's complaints as mdadm's read: "uraid: assemble: ..." */
	char prog[] = "uraid: assemble", *argv0 = argv[0];
	argv[0] = prog;
	while ((c = getopt_long(argc, argv, "N:fsc:IRU:O:hB:u:", opts, NULL)) != -1) {
		switch (c) {
		case 'u':
			if (uuid) {
				argv[0] = argv0;
				cli_error("assemble", "uuid cannot be set twice.  Second value %s.",
				          optarg);
				return 2;
			}
			uuid = optarg;
			char parsed[36];
			if (uraid_uuid_parse(uuid, parsed) < 0) {
				argv[0] = argv0;
				cli_error("assemble", "Bad uuid: %s", optarg);
				return 2;
			}
			break;
		case 'N': name = optarg; break;
		case 'f': force = true; break;
		case 's': scan = true; break;
		case 'c': config = optarg; break;
		case 'I': incremental = true; break;
		case 'R': run = true; break;
		case 'O': overlay = optarg; break;
		case 'B': backup = optarg; break;
		case 'U':
			update = optarg;
			unsigned uflags;
			if (cli_update_flags(optarg, &uflags) < 0) {
				argv[0] = argv0;
				return cli_update_refuse("assemble", optarg);
			}
			break;
		case 'h':
			printf(
			    "usage: uraid assemble [--name NAME] [--force] [--uuid=UUID] "
			    "[--update=no-bbl|"
			    "force-no-bbl] [--overlay DIR] [--backup-file=FILE] MEMBER...\n"
			    "       uraid assemble [--config FILE] [--force] NAME\n"
			    "       uraid assemble [--config FILE] --scan\n"
			    "       uraid assemble --incremental [--run] DEV (as uraid "
			    "incremental)\n"
			    "  Checks the members, then starts a daemon that runs the array\n"
			    "  (resync/recovery in the background) and serves its control "
			    "socket.\n"
			    "  As mdadm's: a member missing that the superblocks still count as\n"
			    "  working is waited for (\"need all N to start it\"): --run starts\n"
			    "  the array degraded. --uuid=UUID: members of another array are\n"
			    "  left out (\"X has wrong uuid.\"), exit 2 when none is left.\n"
			    "  NAME: an ARRAY line of the configuration file (--config, else\n"
			    "  $URAID_CONFIG, else " URAID_CONFIG_DEFAULT "); its members are the\n"
			    "  DEVICE candidates whose superblock has its UUID. --scan: every\n"
			    "  ARRAY line whose members are found and that is not running.\n"
			    "  --force, as mdadm's: members left out (stale, or marked faulty\n"
			    "  by the others) are forced back in, the freshest first, while the\n"
			    "  array cannot start without them (their event counts raised, their\n"
			    "  faulty marks cleared); and a raid4/5/6 that is dirty (not stopped\n"
			    "  cleanly) and degraded starts, which md refuses: parity written at\n"
			    "  the crash may not match its data.\n"
			    "  --update=no-bbl removes the members' bad block logs when they\n"
			    "  record nothing (refused otherwise); --update=force-no-bbl removes\n"
			    "  them with their entries (mdadm 4.2).\n"
			    "  --overlay DIR opens every member read-only and sends every write\n"
			    "  (superblocks, resync, recovery, yours) to a copy-on-write overlay\n"
			    "  file per member in DIR (a directory of yours that nobody else can\n"
			    "  write; made when missing): see 'uraid overlay'.\n"
			    "  --backup-file=FILE: mdadm's backup of an in-place reshape's\n"
			    "  critical section (mdadm --grow --backup-file, uraid grow\n"
			    "  --backup-file): restored first where the reshape stopped in it.\n");
			argv[0] = argv0;
			return 0;
		default:
			argv[0] = argv0;
			fprintf(stderr, "Usage: uraid assemble --help\n  for help\n");
			return 2;
		}
	}
	argv[0] = argv0;
	if ((update || overlay) &&
	    (incremental || scan || (argc - optind == 1 && access(argv[optind], F_OK))))
		return cli_error("assemble",
		                 "--update and --overlay go with the members named on the "
		                 "command line");
	if (uuid && (incremental || scan || (argc - optind == 1 && access(argv[optind], F_OK))))
		return cli_error("assemble",
		                 "--uuid goes with the members named on the command line");
	/* mdadm's --backup-file: handed to the daemon (which works from "/")
	 * as an absolute path, for a reshape interrupted in its critical
	 * section (restored from it, engine/reshape_backup.c). */
	char bkabs[PATH_MAX + 1];
	if (backup) {
		if (overlay)
			return cli_error("assemble",
			                 "--backup-file does not go with --overlay (the "
			                 "restore writes to the members)");
		/* mdadm's Grow_restart only warns of a file it cannot read
		 * (its child unlinks it once a grow is past the critical
		 * section): the array's need of it decides, and the engine
		 * refuses one that needs it in mdadm's words */
		if (access(backup, R_OK) < 0)
			fprintf(stderr, "uraid: assemble: backup file %s inaccessible: %s\n",
			        backup, strerror(errno));
		else if (!realpath(backup, bkabs))
			return cli_error("assemble", "%s: %s", backup, strerror(errno));
		else
			setenv("URAID_DAEMON_BACKUP_FILE", bkabs, 1);
	}
	if (incremental)
		return cli_incremental("assemble", config, run, scan, argc - optind, argv + optind);
	if (scan) {
		if (optind < argc || name)
			return cli_error("assemble", "--scan takes no members and no --name");
		return cli_assemble_scan("assemble", config, force);
	}
	if (optind >= argc)
		return cli_error("assemble", "no members given");
	struct stat sb;
	if (argc - optind == 1 && stat(argv[optind], &sb) < 0 && errno == ENOENT)
		return cli_assemble_named("assemble", config, argv[optind], name, force);
	if (config)
		return cli_error("assemble", "--config goes with an array NAME or --scan");
	int n = argc - optind;
	if (uuid && cli_uuid_filter("assemble", uuid, &n, argv + optind) < 0)
		return 2;
	return cli_assemble_start("assemble", name, force, force || run, update, overlay, n,
	                          argv + optind);
}

/* Members are known to the daemon by absolute path. */
static const char *member_arg(const char *m, char *buf, size_t len)
{
	char *r = m[0] == '#' ? NULL : cli_member_path(m);
	/* %-escaped for the control protocol (spaces, '%', any byte). Too
	 * long: a lone '%', which the daemon refuses rather than act on a
	 * truncated path. */
	size_t need = uraid_ctl_escape(r ? r : m, buf, len);
	free(r);
	return need < len ? buf : "%";
}

static int simple(const char *verb, int argc, char **argv, const char *req, bool member)
{
	if (argc != (member ? 3 : 2))
		return cli_error(verb, "usage: uraid %s NAME%s", verb, member ? " MEMBER" : "");
	char line[PATH_MAX + 64], mb[PATH_MAX], err[512];
	snprintf(line, sizeof(line), "%s%s%s", req, member ? " " : "",
	         member ? member_arg(argv[2], mb, sizeof(mb)) : "");
	int rc = uraid_control_request(argv[1], line, NULL, 0, NULL, NULL, err, sizeof(err));
	if (rc < 0)
		return cli_error(verb, "%s", err);
	return 0;
}

int cmd_fail(int argc, char **argv)
{
	return simple("fail", argc, argv, "fail", true);
}

int cmd_remove(int argc, char **argv)
{
	return simple("remove", argc, argv, "remove", true);
}

/* md's --add [--write-mostly] [--failfast] (options parsed here). */
int cmd_add(int argc, char **argv)
{
	static const struct option opts[] = {{"write-mostly", no_argument, NULL, 'W'},
	                                     {"failfast", no_argument, NULL, 'F'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	static const char usage[] =
	    "usage: uraid add [--write-mostly] [--failfast] NAME MEMBER\n"
	    "  Adds a spare (rebuilt onto when a slot is empty); a former member whose\n"
	    "  slot is empty goes back into it (md's re-add: with a bitmap only what\n"
	    "  it missed is recovered). --write-mostly / --failfast set md's device\n"
	    "  flags on a new member (raid1 reads a write-mostly member only when no\n"
	    "  other copy can serve; raid1/raid10 fail a failfast member on its first\n"
	    "  error while they can lose it).\n";
	unsigned flags = 0;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'W': flags |= URAID_ADD_WRITEMOSTLY; break;
		case 'F': flags |= URAID_ADD_FAILFAST; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (argc - optind != 2) {
		fputs(usage, stderr);
		return 2;
	}
	char line[PATH_MAX + 64], mb[PATH_MAX], err[512];
	if (flags)
		snprintf(line, sizeof(line), "add-flags %u %s", flags,
		         member_arg(argv[optind + 1], mb, sizeof(mb)));
	else
		snprintf(line, sizeof(line), "add %s",
		         member_arg(argv[optind + 1], mb, sizeof(mb)));
	if (uraid_control_request(argv[optind], line, NULL, 0, NULL, NULL, err, sizeof(err)) < 0)
		return cli_error("add", "%s", err);
	return 0;
}

/* md's --re-add: back into its old slot; with a bitmap only the chunks
 * written while it was away are recovered. */
int cmd_re_add(int argc, char **argv)
{
	return simple("re-add", argc, argv, "re-add", true);
}

int cmd_add_journal(int argc, char **argv)
{
	return simple("add-journal", argc, argv, "add-journal", true);
}

int cmd_journal_mode(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[2], "write-through") && strcmp(argv[2], "write-back") &&
	                  strcmp(argv[2], "wt") && strcmp(argv[2], "wb")))
		return cli_error("journal-mode",
		                 "usage: uraid journal-mode NAME write-through|write-back");
	char line[128], err[512];
	snprintf(line, sizeof(line), "journal-mode %s", argv[2]);
	if (uraid_control_request(argv[1], line, NULL, 0, NULL, NULL, err, sizeof(err)) < 0)
		return cli_error("journal-mode", "%s", err);
	return 0;
}

/* mdadm --grow --consistency-policy: the partial parity log on or off. */
int cmd_consistency_policy(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[2], "resync") && strcmp(argv[2], "ppl")))
		return cli_error("consistency-policy",
		                 "usage: uraid consistency-policy NAME resync|ppl");
	char line[128], err[512];
	snprintf(line, sizeof(line), "consistency-policy %s", argv[2]);
	if (uraid_control_request(argv[1], line, NULL, 0, NULL, NULL, err, sizeof(err)) < 0)
		return cli_error("consistency-policy", "%s", err);
	return 0;
}

/* md's replace: the new member is rebuilt as a replacement while the old
 * one keeps serving (the array is never degraded); when the copy is done
 * the old member is marked faulty (then `uraid remove` it). */
int cmd_replace(int argc, char **argv)
{
	if (argc != 4)
		return cli_error("replace", "usage: uraid replace NAME OLD NEW");
	char line[2 * PATH_MAX + 64], mb[PATH_MAX], nb[PATH_MAX], err[512];
	snprintf(line, sizeof(line), "replace %s %s", member_arg(argv[2], mb, sizeof(mb)),
	         member_arg(argv[3], nb, sizeof(nb)));
	if (uraid_control_request(argv[1], line, NULL, 0, NULL, NULL, err, sizeof(err)) < 0)
		return cli_error("replace", "%s", err);
	fprintf(stderr, "uraid: replace: rebuilding %s as the replacement of %s\n", argv[3],
	        argv[2]);
	return 0;
}

static int sync_verb(const char *verb, int argc, char **argv)
{
	if (argc != 2)
		return cli_error(verb, "usage: uraid %s NAME", verb);
	char err[512];
	if (uraid_control_request(argv[1], verb, NULL, 0, NULL, NULL, err, sizeof(err)) < 0)
		return cli_error(verb, "%s", err);
	struct uraid_status st;
	for (;;) {
		if (uraid_control_status(argv[1], &st, err, sizeof(err)) < 0)
			return cli_error(verb, "%s", err);
		if (st.sync_action == URAID_SYNC_IDLE)
			break;
		msleep(100);
	}
	printf("mismatch_cnt %llu\n", (unsigned long long)st.mismatch_cnt);
	return 0;
}

int cmd_check(int argc, char **argv)
{
	return sync_verb("check", argc, argv);
}

int cmd_repair(int argc, char **argv)
{
	return sync_verb("repair", argc, argv);
}

static bool members_released(const struct uraid_status *st)
{
	for (int i = 0; i < st->nmembers; i++) {
		if (st->members[i].name[0] != '/')
			continue;
		int fd = open(st->members[i].name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		bool free_now = flock(fd, LOCK_EX | LOCK_NB) == 0;
		close(fd);
		if (!free_now)
			return false;
	}
	return true;
}

int cmd_stop(int argc, char **argv)
{
	if (argc != 2)
		return cli_error("stop", "usage: uraid stop NAME");
	char err[PATH_MAX + 256], path[PATH_MAX];
	struct uraid_status st;
	if (uraid_control_status(argv[1], &st, err, sizeof(err)) < 0)
		return cli_error("stop", "%s", err);
	if (cli_sock_path(argv[1], path, sizeof(path), err, sizeof(err)) < 0)
		return cli_error("stop", "%s", err);
	if (uraid_control_request(argv[1], "stop", NULL, 0, NULL, NULL, err, sizeof(err)) < 0)
		return cli_error("stop", "%s", err);
	/* Done when the socket is gone and the daemon has let go of every
	 * member (it holds an exclusive lock on each while running), so the
	 * members can be used again right away. */
	for (int i = 0; i < 600; i++) {
		struct stat sb;
		if (stat(path, &sb) < 0 && members_released(&st))
			return 0;
		msleep(50);
	}
	return cli_error("stop", "array %s did not stop within 30 s", argv[1]);
}

/* uraid write NAME [--offset B]: stdin to the array at offset B. A partial
 * last sector keeps the bytes beyond the data. */
int cmd_write(int argc, char **argv)
{
	static const struct option opts[] = {{"offset", required_argument, NULL, 'O'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	static const char usage[] = "usage: uraid write NAME [--offset BYTES] < DATA\n"
	                            "  Writes standard input into the running array NAME at\n"
	                            "  byte BYTES (a multiple of 512) and flushes it.\n";
	unsigned long long off = 0;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'O':
			if (cli_parse_size(optarg, 1, &off) < 0)
				return cli_error("write", "bad --offset '%s' (bytes, K/M/G/T)",
				                 optarg);
			break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(usage, stderr);
		return 2;
	}
	const char *name = argv[optind];
	if (off % 512)
		return cli_error("write", "--offset must be a multiple of 512");
	char err[512], line[128];
	struct uraid_status st;
	if (uraid_control_status(name, &st, err, sizeof(err)) < 0)
		return cli_error("write", "%s", err);
	/* The daemon would refuse a write past the end with ERANGE ("Numerical
	 * result out of range"); say what is wrong instead, and when stdin is a
	 * file, before anything is written. */
	uint64_t size = st.array_sectors * 512;
	struct stat in;
	off_t pos = lseek(0, 0, SEEK_CUR);
	if (fstat(0, &in) == 0 && S_ISREG(in.st_mode) && pos >= 0 && in.st_size > pos &&
	    off + (uint64_t)(in.st_size - pos) > size)
		return cli_error("write",
		                 "%llu bytes at offset %llu run past the end of array %s (%llu "
		                 "bytes); nothing written",
		                 (unsigned long long)(in.st_size - pos), off, name,
		                 (unsigned long long)size);
	size_t cap = 4u << 20;
	uint64_t first = off;
	char *buf = malloc(cap);
	if (!buf)
		return cli_error("write", "out of memory");
	int status = 0;
	for (;;) {
		size_t n = 0;
		while (n < cap) {
			ssize_t r = read(0, buf + n, cap - n);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				status = cli_error("write", "stdin: %s", strerror(errno));
				goto out;
			}
			if (r == 0)
				break;
			n += (size_t)r;
		}
		if (n == 0)
			break;
		if (off + n > size) {
			status = cli_error("write",
			                   "the data runs past the end of array %s (%llu bytes) at "
			                   "offset %llu; %s",
			                   name, (unsigned long long)size, off,
			                   off > first ? "the data before it was written"
			                               : "nothing written");
			goto out;
		}
		size_t full = (n + 511) & ~(size_t)511;
		if (full != n) {
			/* Keep what follows the data in its last sector. */
			char *old;
			size_t olen;
			snprintf(line, sizeof(line), "read %llu 512", off + full - 512);
			if (uraid_control_request(name, line, NULL, 0, &old, &olen, err,
			                          sizeof(err)) < 0) {
				status = cli_error("write", "%s", err);
				goto out;
			}
			memcpy(buf + n, old + (n % 512), full - n);
			free(old);
		}
		snprintf(line, sizeof(line), "write %llu %zu", off, full);
		if (uraid_control_request(name, line, buf, full, NULL, NULL, err, sizeof(err)) <
		    0) {
			status = cli_error("write", "at byte %llu: %s", off, err);
			goto out;
		}
		off += full;
		if (n < cap)
			break;
	}
	/* Durable when the command returns: the daemon's stripe cache holds
	 * small writes until a flush. */
	if (uraid_control_request(name, "flush", NULL, 0, NULL, NULL, err, sizeof(err)) < 0)
		status = cli_error("write", "flush: %s", err);
out:
	free(buf);
	return status;
}
