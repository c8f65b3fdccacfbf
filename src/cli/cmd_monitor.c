/* uraid monitor (mdadm --monitor): polls the running arrays' status through
 * their control sockets and reports md's events (Fail, FailSpare,
 * SpareActive, DegradedArray, SparesMissing, RebuildStarted, RebuildNN,
 * RebuildFinished, DeviceDisappeared, NewArray, MoveSpare, TestMessage) the
 * way mdadm does: `PROGRAM EVENT /dev/md/NAME [COMPONENT]`, a mail through
 * `sendmail -t` for the Fail*, Test*, Spares* and Degrade* events, or a line
 * on stdout when neither is set. Arrays of one spare-group lend a spare to
 * one that lost a member. The decisions follow mdadm's Monitor.c, with
 * uraid's member states for md's disk flags. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_array.h"
#include "cli/cli_proc.h"
#include "uraid.h"

#define PCT_NONE    (-1) /* no sync running */
#define PCT_UNKNOWN (-2) /* not looked yet */
#define MON_MAX     256

struct mon_array {
	char name[URAID_NAME_MAX + 1];
	char dev[URAID_NAME_MAX + 16]; /* "/dev/md/NAME", what events name */
	bool from_config, from_scan;
	bool seen; /* a status was taken (mdadm's utime != 0) */
	int err;   /* consecutive polls it was not there */
	int expected_spares;
	char spare_group[64];
	int percent;
	struct uraid_status st;
	int active, spares;
};

struct mon {
	const char *program, *mail, *mailfrom;
	bool test;
	int increments;
	struct mon_array *a;
	int n;
};

static void run_program(const struct mon *m, const char *event, const char *dev, const char *disc)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		execl(m->program, m->program, event, dev, disc, (char *)NULL);
		_exit(2);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
}

/* sendmail from PATH, else where systems keep it. */
static void exec_sendmail(void)
{
	const char *path = getenv("PATH");
	char np[8192];
	snprintf(np, sizeof(np), "%s:/usr/sbin:/usr/lib", path && *path ? path : "/usr/bin:/bin");
	setenv("PATH", np, 1);
	execlp("sendmail", "sendmail", "-t", (char *)NULL);
	_exit(127);
}

static void send_mail(const struct mon *m, const char *event, const char *dev, const char *disc)
{
	int p[2];
	if (pipe(p) < 0)
		return;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[0], 0);
		close(p[0]);
		close(p[1]);
		exec_sendmail();
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return;
	}
	FILE *f = fdopen(p[1], "w");
	if (!f) {
		close(p[1]);
	} else {
		char host[256] = "";
		gethostname(host, sizeof(host) - 1);
		if (m->mailfrom && *m->mailfrom)
			fprintf(f, "From: %s\n", m->mailfrom);
		else
			fprintf(f, "From: uraid monitoring <root>\n");
		fprintf(f, "To: %s\nSubject: %s event on %s:%s\n\n", m->mail, event, dev, host);
		fprintf(f, "This is an automatically generated mail message from uraid\n");
		fprintf(f, "running on %s\n\n", host);
		fprintf(f, "A %s event had been detected on md device %s.\n\n", event, dev);
		if (disc && disc[0] != ' ')
			fprintf(f, "It could be related to component device %s.\n\n", disc);
		if (disc && disc[0] == ' ')
			fprintf(f, "Extra information:%s.\n\n", disc);
		fprintf(f, "Faithfully yours, etc.\n");
		fprintf(f, "\nP.S. The arrays' status ('uraid status') is currently:\n\n");
		fflush(f);
		/* uraid status writes straight into the mail */
		pid_t sp = fork();
		if (sp == 0) {
			dup2(p[1], 1);
			int nul = open("/dev/null", O_WRONLY);
			if (nul >= 0)
				dup2(nul, 2);
			execl("/proc/self/exe", "uraid", "status", (char *)NULL);
			_exit(127);
		}
		if (sp > 0)
			while (waitpid(sp, NULL, 0) < 0 && errno == EINTR)
				;
		fclose(f);
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static void alert(const struct mon *m, const char *event, const char *dev, const char *disc)
{
	if (!m->program && !m->mail) {
		time_t now = time(NULL);
		char tb[32];
		ctime_r(&now, tb);
		printf("%1.15s: %s on %s %s\n", tb + 4, event, dev, disc ? disc : "unknown device");
		fflush(stdout);
	}
	if (m->program)
		run_program(m, event, dev, disc);
	if (m->mail && (!strncmp(event, "Fail", 4) || !strncmp(event, "Test", 4) ||
	                !strncmp(event, "Spares", 6) || !strncmp(event, "Degrade", 7)))
		send_mail(m, event, dev, disc);
}

static bool in_sync(const struct uraid_member_status *ms)
{
	return ms->role >= 0 && ms->state == URAID_MEMBER_IN_SYNC;
}

static const struct uraid_member_status *member_named(const struct uraid_status *st,
                                                      const char *name)
{
	for (int i = 0; i < st->nmembers; i++)
		if (st->members[i].state != URAID_MEMBER_MISSING &&
		    !strcmp(st->members[i].name, name))
			return &st->members[i];
	return NULL;
}

/* Fail: a member that was in sync is not any more (faulty or gone);
 * FailSpare: one that was not in sync turned faulty; SpareActive: one came
 * into sync. */
static void member_events(const struct mon *m, const struct mon_array *ma,
                          const struct uraid_status *now)
{
	const struct uraid_status *was = &ma->st;
	for (int i = 0; i < was->nmembers; i++) {
		const struct uraid_member_status *o = &was->members[i];
		if (o->state == URAID_MEMBER_MISSING)
			continue;
		const struct uraid_member_status *c = member_named(now, o->name);
		if (in_sync(o) && !(c && in_sync(c)))
			alert(m, "Fail", ma->dev, o->name);
		else if (c && c->state == URAID_MEMBER_FAULTY && o->state != URAID_MEMBER_FAULTY)
			alert(m, "FailSpare", ma->dev, o->name);
		else if (c && in_sync(c) && !in_sync(o))
			alert(m, "SpareActive", ma->dev, o->name);
	}
	for (int i = 0; i < now->nmembers; i++) {
		const struct uraid_member_status *c = &now->members[i];
		if (c->state != URAID_MEMBER_MISSING && in_sync(c) && !member_named(was, c->name))
			alert(m, "SpareActive", ma->dev, c->name);
	}
}

static int sync_percent(const struct uraid_status *st)
{
	if (st->sync_action == URAID_SYNC_IDLE || !st->sync_total)
		return PCT_NONE;
	return (int)(st->sync_done * 100 / st->sync_total);
}

/* One array, one poll: true when it is degraded with no spare (a
 * candidate for a spare from its group). */
static bool check_array(const struct mon *m, struct mon_array *ma)
{
	if (m->test)
		alert(m, "TestMessage", ma->dev, NULL);
	struct uraid_status now;
	if (uraid_control_status(ma->name, &now, NULL, 0) < 0) {
		if (!ma->err)
			alert(m, "DeviceDisappeared", ma->dev, NULL);
		ma->err++;
		return false;
	}
	if (now.level == URAID_LEVEL_RAID0 || now.level == URAID_LEVEL_LINEAR) {
		if (!ma->err && !ma->from_config)
			alert(m, "DeviceDisappeared", ma->dev, " Wrong-Level");
		ma->err++;
		return false;
	}
	bool new_array = false;
	if (ma->err) {
		ma->err = 0;
		ma->percent = PCT_NONE;
		new_array = true;
		alert(m, "NewArray", ma->dev, NULL);
	}
	int active = 0, spares = 0;
	for (int i = 0; i < now.nmembers; i++) {
		const struct uraid_member_status *c = &now.members[i];
		active += in_sync(c);
		spares += c->state == URAID_MEMBER_SPARE || c->state == URAID_MEMBER_REBUILDING;
	}
	if (!ma->seen && active < now.raid_disks)
		alert(m, "DegradedArray", ma->dev, NULL);
	if (!ma->seen && ma->expected_spares > 0 && spares < ma->expected_spares)
		alert(m, "SparesMissing", ma->dev, NULL);
	int pct = sync_percent(&now);
	if (ma->percent == PCT_NONE && pct >= 0)
		alert(m, "RebuildStarted", ma->dev, NULL);
	if (ma->percent >= 0 && pct >= 0 && pct / m->increments > ma->percent / m->increments) {
		char ev[24];
		snprintf(ev, sizeof(ev), "Rebuild%02d", pct);
		alert(m, ev, ma->dev, NULL);
	}
	if (pct == PCT_NONE && ma->percent >= 0) {
		if (now.mismatch_cnt) {
			char cnt[80];
			snprintf(cnt, sizeof(cnt), " mismatches found: %llu (on raid level %d)",
			         (unsigned long long)now.mismatch_cnt, now.level);
			alert(m, "RebuildFinished", ma->dev, cnt);
		} else {
			alert(m, "RebuildFinished", ma->dev, NULL);
		}
	}
	ma->percent = pct;
	if (ma->seen && !new_array)
		member_events(m, ma, &now);
	ma->st = now;
	ma->seen = true;
	ma->active = active;
	ma->spares = spares;
	return active < now.raid_disks && spares == 0;
}

/* A spare of a healthy array of the same spare-group moves to the one that
 * lost a member (mdadm's try_spare_migration). */
static void move_spares(const struct mon *m)
{
	for (int t = 0; t < m->n; t++) {
		struct mon_array *to = &m->a[t];
		if (to->err || !to->seen || !to->spare_group[0] || to->spares ||
		    to->active >= to->st.raid_disks)
			continue;
		for (int f = 0; f < m->n; f++) {
			struct mon_array *from = &m->a[f];
			if (f == t || from->err || !from->seen || from->spares <= 0 ||
			    from->active < from->st.raid_disks ||
			    strcmp(from->spare_group, to->spare_group))
				continue;
			const struct uraid_member_status *sp = NULL;
			for (int i = 0; i < from->st.nmembers && !sp; i++)
				if (from->st.members[i].state == URAID_MEMBER_SPARE)
					sp = &from->st.members[i];
			if (!sp)
				continue;
			char line[PATH_MAX + 16], esc[PATH_MAX], err[512];
			uraid_ctl_escape(sp->name, esc, sizeof(esc));
			snprintf(line, sizeof(line), "remove %s", esc);
			if (uraid_control_request(from->name, line, NULL, 0, NULL, NULL, err,
			                          sizeof(err)) < 0) {
				fprintf(stderr, "uraid: monitor: cannot remove %s from %s: %s\n",
				        sp->name, from->name, err);
				continue;
			}
			snprintf(line, sizeof(line), "add %s", esc);
			if (uraid_control_request(to->name, line, NULL, 0, NULL, NULL, err,
			                          sizeof(err)) < 0) {
				fprintf(stderr, "uraid: monitor: cannot add %s to %s: %s\n",
				        sp->name, to->name, err);
				/* give it back */
				uraid_control_request(from->name, line, NULL, 0, NULL, NULL, NULL,
				                      0);
				continue;
			}
			from->spares--;
			to->spares++;
			alert(m, "MoveSpare", to->dev, from->dev);
			break;
		}
	}
}

static struct mon_array *mon_add(struct mon *m, const char *name)
{
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->a[i].name, name))
			return &m->a[i];
	if (m->n == MON_MAX || uraid_name_check(name, NULL, 0) < 0)
		return NULL;
	/* In front: mdadm prepends to its list, so it checks arrays (and
	 * reports their events) in the reverse of the order it learnt them. */
	memmove(&m->a[1], &m->a[0], (size_t)m->n * sizeof(m->a[0]));
	m->n++;
	struct mon_array *ma = &m->a[0];
	memset(ma, 0, sizeof(*ma));
	snprintf(ma->name, sizeof(ma->name), "%s", name);
	snprintf(ma->dev, sizeof(ma->dev), "/dev/md/%s", name);
	ma->percent = PCT_UNKNOWN;
	ma->expected_spares = -1;
	return ma;
}

static void from_config(struct mon_array *ma, const struct uraid_config_array *ca)
{
	ma->expected_spares = ca->spares;
	snprintf(ma->spare_group, sizeof(ma->spare_group), "%s", ca->spare_group);
}

/* --scan: running arrays not yet watched join, as mdadm's add_new_arrays
 * (err set, so the next poll reports NewArray). True when one did. */
static bool add_running(const struct mon *cm, struct mon *m, const struct uraid_config *c)
{
	char **names;
	int n;
	bool added = false;
	if (cli_running_arrays("monitor", &names, &n))
		return false;
	for (int i = 0; i < n; i++) {
		bool known = false;
		for (int k = 0; k < m->n && !known; k++)
			known = !strcmp(m->a[k].name, names[i]);
		struct uraid_status st;
		if (known || uraid_control_status(names[i], &st, NULL, 0) < 0 ||
		    st.level == URAID_LEVEL_RAID0 || st.level == URAID_LEVEL_LINEAR)
			continue;
		struct mon_array *ma = mon_add(m, names[i]);
		if (!ma)
			continue;
		ma->err = 1;
		ma->from_scan = true;
		const struct uraid_config_array *ca = uraid_config_find(c, names[i]);
		if (ca)
			from_config(ma, ca);
		if (cm->test)
			alert(cm, "TestMessage", ma->dev, NULL);
		added = true;
	}
	uraid_config_paths_free(names, n);
	return added;
}

static volatile sig_atomic_t mon_stop;
static void on_signal(int sig)
{
	(void)sig;
	mon_stop = 1;
}

static int daemonise(const char *pidfile)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return cli_error("monitor", "fork: %s", strerror(errno));
	if (pid > 0) {
		if (pidfile) {
			FILE *f = fopen(pidfile, "w");
			if (!f)
				return cli_error("monitor", "%s: %s", pidfile, strerror(errno));
			fprintf(f, "%d\n", (int)pid);
			fclose(f);
		} else {
			printf("%d\n", (int)pid);
		}
		return 0;
	}
	int nul = open("/dev/null", O_RDWR);
	if (nul >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		if (nul > 2)
			close(nul);
	}
	setsid();
	return -1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: uraid monitor [--scan] [NAME...] [--config FILE] [--program P]\n"
	           "         [--mail ADDR] [--delay S] [--oneshot] [--test] [--daemonise]\n"
	           "         [--pid-file FILE] [--increment N]\n"
	           "  Polls the arrays (NAMEs, or with --scan the configuration file's\n"
	           "  ARRAY lines and every running array) every S seconds (60) and reports\n"
	           "  md's events as mdadm --monitor does: runs P EVENT /dev/md/NAME\n"
	           "  [COMPONENT], mails ADDR through sendmail -t (Fail*, Test*, Spares*,\n"
	           "  Degrade*), else prints them. PROGRAM and MAILADDR also come from the\n"
	           "  configuration file; arrays of one spare-group share their spares.\n"
	           "  --oneshot: one poll; --test: a TestMessage for each array first.\n");
}

int cmd_monitor(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"scan", no_argument, NULL, 's'},           {"config", required_argument, NULL, 'c'},
	    {"program", required_argument, NULL, 'p'},  {"alert", required_argument, NULL, 'p'},
	    {"mail", required_argument, NULL, 'm'},     {"delay", required_argument, NULL, 'd'},
	    {"oneshot", no_argument, NULL, '1'},        {"test", no_argument, NULL, 't'},
	    {"daemonise", no_argument, NULL, 'f'},      {"daemonize", no_argument, NULL, 'f'},
	    {"pid-file", required_argument, NULL, 'i'}, {"increment", required_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
	bool scan = false, oneshot = false, daemon = false;
	const char *config = NULL, *pidfile = NULL;
	double delay = 60;
	struct mon m = {.increments = 20};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "sc:p:m:d:1tfi:r:h", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 's': scan = true; break;
		case 'c': config = optarg; break;
		case 'p': m.program = optarg; break;
		case 'm': m.mail = optarg; break;
		case 'd':
			delay = strtod(optarg, &end);
			if (*end || !(delay > 0) || delay > 86400)
				return cli_error("monitor", "--delay '%s': seconds expected",
				                 optarg);
			break;
		case '1': oneshot = true; break;
		case 't': m.test = true; break;
		case 'f': daemon = true; break;
		case 'i': pidfile = optarg; break;
		case 'r':
			m.increments = (int)strtol(optarg, &end, 10);
			if (*end || m.increments < 1 || m.increments > 99)
				return cli_error("monitor", "--increment '%s': 1..99 expected",
				                 optarg);
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	struct uraid_config *cfg;
	if (cli_config_load("monitor", config, &cfg))
		return 1;
	if (!m.mail && cfg->mailaddr[0])
		m.mail = cfg->mailaddr;
	if (!m.program && cfg->program[0])
		m.program = cfg->program;
	m.mailfrom = cfg->mailfrom;
	int status = 0;
	if (scan && !m.mail && !m.program) {
		status = cli_error("monitor", "No mail address or alert command - not monitoring.");
		goto out;
	}
	if (!scan && optind >= argc) {
		status = cli_error("monitor", "no arrays to watch: give NAMEs or --scan");
		goto out;
	}
	m.a = calloc(MON_MAX, sizeof(*m.a));
	if (!m.a) {
		status = cli_error("monitor", "out of memory");
		goto out;
	}
	for (int i = optind; i < argc; i++) {
		struct mon_array *ma = mon_add(&m, argv[i]);
		if (!ma) {
			status = cli_error("monitor", "'%s': not an array name", argv[i]);
			goto out;
		}
		const struct uraid_config_array *ca = uraid_config_find(cfg, argv[i]);
		if (ca)
			from_config(ma, ca);
	}
	if (scan)
		for (int i = 0; i < cfg->narrays; i++) {
			const struct uraid_config_array *ca = &cfg->arrays[i];
			struct mon_array *ma = ca->name[0] ? mon_add(&m, ca->name) : NULL;
			if (ma) {
				ma->from_config = true;
				from_config(ma, ca);
			}
		}
	if (daemon) {
		int rc = daemonise(pidfile);
		if (rc >= 0) {
			status = rc;
			goto out;
		}
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	while (!mon_stop) {
		bool degraded = false;
		for (int i = 0; i < m.n; i++)
			degraded |= check_array(&m, &m.a[i]);
		bool added = scan && add_running(&m, &m, cfg);
		if (degraded)
			move_spares(&m);
		m.test = false;
		if (added)
			continue; /* report them (NewArray) now, as mdadm */
		if (oneshot)
			break;
		for (long w = 0; w < (long)(delay * 10) && !mon_stop; w++)
			cli_msleep(100);
	}
	if (daemon && pidfile)
		unlink(pidfile);
out:
	free(m.a);
	uraid_config_free(cfg);
	return status;
}
