/* uraid serve (an array over NBD through nbdkit and the uraid plugin) and
 * uraid geometry (stripe geometry and the matching mkfs options). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../plugins/uraid_geom.h"
#include "cli/cli.h"
#include "cli/cli_array.h"
#include "cli/serve.h"
#include "layout/layout.h"
#include "uraid.h"

#define PLUGIN_FILE "nbdkit-uraid-plugin.so"

void serve_msleep(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

const char *serve_run_dir(void)
{
	const char *d = getenv("URAID_RUN_DIR");
	return d && *d ? d : "/run/uraid";
}

void serve_run_path(const char *name, const char *suffix, char *path, size_t len)
{
	snprintf(path, len, "%s/%s%s", serve_run_dir(), name, suffix);
}

bool serve_pid_alive(pid_t pid)
{
	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH))
		return false;
	/* A zombie nobody reaps (the daemon's parent may be a container init
	 * that does not) has exited for our purposes. */
	char p[64], buf[512];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *rp = strrchr(buf, ')');
	return !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
}

bool serve_wait_pid(pid_t pid, int ms)
{
	for (int t = 0; t < ms; t += 50) {
		if (!serve_pid_alive(pid))
			return true;
		serve_msleep(50);
	}
	return !serve_pid_alive(pid);
}

int serve_lookup(const char *name, char *uri, size_t urilen, pid_t *pid)
{
	char path[PATH_MAX], line[PATH_MAX + 16];
	serve_run_path(name, ".export", path, sizeof(path));
	FILE *f = fopen(path, "r");
	if (!f)
		return -ENOENT;
	long p = 0;
	uri[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "pid=", 4))
			p = strtol(line + 4, NULL, 10);
		else if (!strncmp(line, "uri=", 4))
			snprintf(uri, urilen, "%s", line + 4);
	}
	fclose(f);
	if (p <= 0 || !uri[0] || !serve_pid_alive((pid_t)p))
		return -ENOENT;
	*pid = (pid_t)p;
	return 0;
}

/* The plugin: $URAID_NBDKIT_PLUGIN, else next to this uraid binary (the
 * build tree), else nbdkit's plugin directory ("uraid"). */
static void plugin_path(char *out, size_t len)
{
	const char *e = getenv("URAID_NBDKIT_PLUGIN");
	if (e && *e) {
		snprintf(out, len, "%s", e);
		return;
	}
	char self[PATH_MAX - 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(out, len, "%s/%s", self, PLUGIN_FILE);
			if (access(out, R_OK) == 0)
				return;
		}
	}
	snprintf(out, len, "uraid");
}

static void print_log(const char *verb, const char *log)
{
	FILE *f = fopen(log, "r");
	char line[1024];
	fprintf(stderr, "uraid: %s: nbdkit said:\n", verb);
	while (f && fgets(line, sizeof(line), f))
		fprintf(stderr, "  %s", line);
	if (f)
		fclose(f);
}

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

/* Members of a running array (its daemon's view): every member that holds
 * data or may receive it (in sync, rebuilding, spare); faulty ones stay out. */
static int handover(const char *verb, const char *name, char ***members, int *n)
{
	struct uraid_status st;
	char err[512], sock[PATH_MAX];
	if (cli_ctl_status(name, &st, err, sizeof(err)) < 0)
		return cli_error(verb, "%s", err);
	char **mm = calloc((size_t)st.nmembers + 1, sizeof(*mm));
	if (!mm)
		return cli_error(verb, "out of memory");
	int k = 0;
	for (int i = 0; i < st.nmembers; i++) {
		enum uraid_member_state s = st.members[i].state;
		/* GEOM: stale and inactive components stay connected too. */
		if (s == URAID_MEMBER_IN_SYNC || s == URAID_MEMBER_REBUILDING ||
		    s == URAID_MEMBER_SPARE || s == URAID_MEMBER_STALE ||
		    s == URAID_MEMBER_INACTIVE)
			mm[k++] = strdup(st.members[i].name);
	}
	if (cli_ctl(name, "stop", NULL, 0, NULL, NULL, err, sizeof(err)) < 0)
		return cli_error(verb, "stopping the daemon of %s: %s", name, err);
	cli_sock_path(name, sock, sizeof(sock));
	for (int i = 0; i < 600; i++) {
		struct stat sb;
		/* The daemon removes its socket before it has stopped the array;
		 * it is done when it has let go of the members' locks. */
		if (stat(sock, &sb) < 0 && members_unlocked(mm, k)) {
			*members = mm;
			*n = k;
			fprintf(stderr, "uraid: %s: took %s over from its daemon (%d members)\n",
			        verb, name, k);
			return 0;
		}
		serve_msleep(50);
	}
	return cli_error(verb, "the daemon of %s did not stop within 30 s", name);
}

/* Check the members read-only (errors reach the user directly, not only
 * nbdkit's log) and work out the array's name. */
static int trial(const char *verb, int n, char **members, const char *want, char *name,
                 size_t namelen)
{
	char err[512], warn[2048];
	struct uraid_array *a;
	int rc =
	    uraid_assemble((const char *const *)members, n, URAID_RDONLY | URAID_NO_SYNC_THREAD, &a,
	                   err, sizeof(err), warn, sizeof(warn));
	if (warn[0])
		fprintf(stderr, "uraid: %s: warning: %s", verb, warn);
	if (rc < 0)
		return cli_error(verb, "%s", err);
	struct uraid_status st;
	uraid_status(a, &st);
	uraid_stop(a);
	if (want) {
		snprintf(name, namelen, "%s", want);
	} else {
		const char *colon = strchr(st.name, ':');
		snprintf(name, namelen, "%s", colon ? colon + 1 : st.name);
		if (!name[0] || strchr(name, '/'))
			cli_default_name(members[0], name, namelen);
	}
	return 0;
}

/* A unix socket left by an nbdkit that is gone (nbdkit does not remove it)
 * is replaced; one that answers belongs to a live server. */
static int claim_socket(const char *verb, const char *sock)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(sock) >= sizeof(sa.sun_path))
		return cli_error(verb, "socket path too long: %s", sock);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cli_error(verb, "socket: %s", strerror(errno));
	int c = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	if (c == 0)
		return cli_error(verb, "%s: a server is already listening there", sock);
	struct stat sb;
	if (lstat(sock, &sb) == 0 && S_ISSOCK(sb.st_mode))
		unlink(sock);
	return 0;
}

static void sock_path(const struct serve_opts *o, const char *name, char *sock, size_t len)
{
	if (o->unix_path) {
		char *dir = strdup(o->unix_path), *slash = dir ? strrchr(dir, '/') : NULL;
		char *rdir =
		    slash ? (*slash = 0, realpath(dir[0] ? dir : "/", NULL)) : realpath(".", NULL);
		snprintf(sock, len, "%s/%s", rdir ? rdir : ".", slash ? slash + 1 : o->unix_path);
		free(dir);
		free(rdir);
	} else {
		serve_run_path(name, ".nbd", sock, len);
	}
}

static void free_list(char **l, int n)
{
	for (int i = 0; l && i < n; i++)
		free(l[i]);
	free(l);
}

static void free_argv(char **av)
{
	for (size_t i = 0; av[i]; i++)
		free(av[i]);
	free(av);
}

/* nbdkit's command line. */
static char **nbdkit_argv(const struct serve_opts *o, const char *name, char **members, int n,
                          const char *sock, const char *pidfile)
{
	size_t cap = (size_t)n + 32;
	char **av = calloc(cap, sizeof(*av));
	char plug[PATH_MAX], buf[PATH_MAX + 32];
	if (!av)
		return NULL;
	size_t k = 0;
#define ADD(s) av[k++] = strdup(s)
	ADD("nbdkit");
	ADD("--log=stderr");
	/* Always in the foreground: in the background nbdkit sends stderr to
	 * /dev/null, and the array is assembled after that (.after_fork), so
	 * its errors would be lost. serve backgrounds nbdkit itself. */
	ADD("--foreground");
	ADD("--pidfile");
	ADD(pidfile);
	if (o->port) {
		ADD("--ipaddr");
		ADD(o->ip_addr ? o->ip_addr : "127.0.0.1");
		snprintf(buf, sizeof(buf), "%d", o->port);
		ADD("--port");
		ADD(buf);
	} else {
		ADD("--unix");
		ADD(sock);
	}
	if (o->readonly)
		ADD("--readonly");
	if (o->tls) {
		snprintf(buf, sizeof(buf), "--tls=%s", o->tls);
		ADD(buf);
	}
	if (o->tls_certs) {
		snprintf(buf, sizeof(buf), "--tls-certificates=%s", o->tls_certs);
		ADD(buf);
	}
	plugin_path(plug, sizeof(plug));
	ADD(plug);
	for (int i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "member=%s", members[i]);
		ADD(buf);
	}
	snprintf(buf, sizeof(buf), "name=%s", name);
	ADD(buf);
	if (o->readonly)
		ADD("readonly=true");
#undef ADD
	for (size_t i = 0; i < k; i++)
		if (!av[i]) {
			for (size_t j = 0; j < k; j++)
				free(av[j]);
			free(av);
			return NULL;
		}
	return av;
}

static int write_export(const char *name, pid_t pid, const char *uri, const char *sock)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	serve_run_path(name, ".export", path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "pid=%d\nuri=%s\nsocket=%s\n", (int)pid, uri, sock);
	if (fclose(f) != 0 || rename(tmp, path) < 0)
		return -errno;
	return 0;
}

/* Wait for nbdkit (our child) until the plugin's control socket answers:
 * the array is assembled and served. */
static int wait_ready(const char *verb, const char *name, pid_t child, const char *log)
{
	char err[512];
	struct uraid_status st;
	for (int i = 0; i < 1200; i++) {
		if (cli_ctl_status(name, &st, err, sizeof(err)) == 0)
			return 0;
		int status;
		if (waitpid(child, &status, WNOHANG) == child) {
			print_log(verb, log);
			return cli_error(verb, "nbdkit exited before serving");
		}
		serve_msleep(50);
	}
	kill(child, SIGTERM);
	print_log(verb, log);
	return cli_error(verb, "nbdkit did not come up within 60 s (log %s)", log);
}

/* After nbdkit ended: remove its export record and NBD socket, unless a
 * newer serve of the same name has replaced them. */
static void forget_serve(const char *name, pid_t k, const char *sock)
{
	char path[PATH_MAX], line[64];
	serve_run_path(name, ".export", path, sizeof(path));
	FILE *f = fopen(path, "r");
	long p = 0;
	if (f && fgets(line, sizeof(line), f) && !strncmp(line, "pid=", 4))
		p = strtol(line + 4, NULL, 10);
	if (f)
		fclose(f);
	if (p != k)
		return;
	unlink(path);
	struct stat sb;
	if (lstat(sock, &sb) == 0 && S_ISSOCK(sb.st_mode))
		unlink(sock);
}

int serve_start(const char *verb, const struct serve_opts *o, int n, char **args, char *name,
                size_t namelen, char *uri, size_t urilen, pid_t *pid)
{
	char **members = NULL;
	int nm = 0, rc;
	char err[512], sock[PATH_MAX], pidfile[PATH_MAX], log[PATH_MAX];
	struct uraid_status st;
	if (n < 1)
		return cli_error(verb, "no members or array name given");
	struct stat sb;
	if (n == 1 && !strchr(args[0], '/') && stat(args[0], &sb) < 0) {
		/* A name: a running array to take over from its daemon. */
		snprintf(name, namelen, "%s", o->name ? o->name : args[0]);
		if (serve_lookup(args[0], uri, urilen, pid) == 0)
			return cli_error(verb, "%s is already served at %s (nbdkit pid %d)",
			                 args[0], uri, (int)*pid);
		if (cli_ctl_status(args[0], &st, err, sizeof(err)) < 0)
			return cli_error(verb,
			                 "%s: no such member file, and no running array of "
			                 "that name",
			                 args[0]);
		if (o->name && strcmp(o->name, args[0]))
			return cli_error(verb, "--name cannot rename a running array");
		sock_path(o, name, sock, sizeof(sock));
		if (!o->port && claim_socket(verb, sock))
			return 1;
		rc = handover(verb, args[0], &members, &nm);
		if (rc)
			return rc;
	} else {
		members = calloc((size_t)n, sizeof(*members));
		if (!members)
			return cli_error(verb, "out of memory");
		for (nm = 0; nm < n; nm++) {
			members[nm] = realpath(args[nm], NULL);
			if (!members[nm]) {
				rc = cli_error(verb, "%s: %s", args[nm], strerror(errno));
				free_list(members, nm);
				return rc;
			}
		}
		rc = trial(verb, nm, members, o->name, name, namelen);
		if (rc == 0 && cli_ctl_status(name, &st, err, sizeof(err)) == 0)
			rc = cli_error(verb, "an array named '%s' is already running (use --name)",
			               name);
		if (rc == 0) {
			sock_path(o, name, sock, sizeof(sock));
			if (!o->port)
				rc = claim_socket(verb, sock);
		}
		if (rc) {
			free_list(members, nm);
			return rc;
		}
	}
	if (mkdir(serve_run_dir(), 0755) < 0 && errno != EEXIST) {
		free_list(members, nm);
		return cli_error(verb, "%s: %s", serve_run_dir(), strerror(errno));
	}
	serve_run_path(name, ".nbdkit.pid", pidfile, sizeof(pidfile));
	serve_run_path(name, ".nbdkit.log", log, sizeof(log));
	unlink(pidfile);
	const char *scheme = o->tls && !strcmp(o->tls, "require") ? "nbds" : "nbd";
	if (o->port)
		snprintf(uri, urilen, "%s://%s:%d", scheme, o->ip_addr ? o->ip_addr : "127.0.0.1",
		         o->port);
	else
		snprintf(uri, urilen, "%s+unix:///?socket=%s", scheme, sock);
	char **av = nbdkit_argv(o, name, members, nm, sock, pidfile);
	free_list(members, nm);
	if (!av)
		return cli_error(verb, "out of memory");
	fflush(NULL);
	if (o->foreground) {
		/* exec keeps our pid: it is nbdkit's. */
		write_export(name, getpid(), uri, sock);
		if (!o->quiet)
			fprintf(stderr, "uraid: %s: serving %s at %s (foreground)\n", verb, name,
			        uri);
		execvp("nbdkit", av);
		return cli_error(verb, "cannot run nbdkit: %s", strerror(errno));
	}
	pid_t child = fork();
	if (child < 0)
		return cli_error(verb, "fork: %s", strerror(errno));
	if (child == 0) {
		setsid(); /* outlives this command, away from its terminal */
		int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int nfd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (lfd >= 0) {
			dup2(lfd, 1);
			dup2(lfd, 2);
		}
		if (nfd >= 0)
			dup2(nfd, 0);
		/* nbdkit in the foreground ends when its parent does, so this
		 * process stays as its parent (and reaper) until it exits. */
		pid_t k = fork();
		if (k == 0) {
			execvp("nbdkit", av);
			fprintf(stderr, "cannot run nbdkit: %s\n", strerror(errno));
			_exit(127);
		}
		int kst = 0;
		while (k > 0 && waitpid(k, &kst, 0) < 0 && errno == EINTR)
			;
		forget_serve(name, k, sock);
		_exit(k > 0 && WIFEXITED(kst) ? WEXITSTATUS(kst) : 1);
	}
	free_argv(av);
	rc = wait_ready(verb, name, child, log);
	if (rc)
		return rc;
	FILE *pf = fopen(pidfile, "r");
	int np = 0;
	if (!pf || fscanf(pf, "%d", &np) != 1 || np <= 0)
		np = 0;
	if (pf)
		fclose(pf);
	if (!np)
		return cli_error(verb, "nbdkit wrote no pidfile %s", pidfile);
	*pid = np;
	if (write_export(name, *pid, uri, sock) < 0)
		fprintf(stderr, "uraid: %s: warning: cannot record the export in %s\n", verb,
		        serve_run_dir());
	if (!o->quiet)
		fprintf(stderr, "uraid: %s: serving %s at %s (nbdkit pid %d, log %s)\n", verb, name,
		        uri, (int)*pid, log);
	return 0;
}

static void serve_usage(FILE *f)
{
	fprintf(f, "usage: uraid serve [--unix PATH | --port N [--ip-addr ADDR]] [--readonly]\n"
	           "         [--tls=on|require --tls-certificates DIR] [--foreground]\n"
	           "         [--name NAME] MEMBER... | NAME\n"
	           "  Assembles the array and serves it over NBD with nbdkit and the uraid\n"
	           "  plugin: on a unix socket (default $URAID_RUN_DIR/NAME.nbd) or on TCP\n"
	           "  (127.0.0.1 unless --ip-addr). NAME alone takes a running array over from\n"
	           "  its daemon. While served, uraid status/fail/add/check NAME act on it;\n"
	           "  'uraid stop NAME' stops nbdkit and the array. Prints the NBD URI.\n");
}

int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {{"unix", required_argument, NULL, 'U'},
	                                     {"port", required_argument, NULL, 'p'},
	                                     {"ip-addr", required_argument, NULL, 'i'},
	                                     {"readonly", no_argument, NULL, 'r'},
	                                     {"tls", required_argument, NULL, 'T'},
	                                     {"tls-certificates", required_argument, NULL, 'C'},
	                                     {"foreground", no_argument, NULL, 'f'},
	                                     {"name", required_argument, NULL, 'N'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	struct serve_opts o = {0};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "U:p:i:rfN:h", opts, NULL)) != -1) {
		switch (c) {
		case 'U': o.unix_path = optarg; break;
		case 'p': {
			char *end;
			long p = strtol(optarg, &end, 10);
			if (*end || p < 1 || p > 65535)
				return cli_error("serve", "--port %s: want 1..65535", optarg);
			o.port = (int)p;
			break;
		}
		case 'i': o.ip_addr = optarg; break;
		case 'r': o.readonly = true; break;
		case 'T':
			if (strcmp(optarg, "on") && strcmp(optarg, "off") &&
			    strcmp(optarg, "require"))
				return cli_error("serve", "--tls=%s: want on, off or require",
				                 optarg);
			o.tls = optarg;
			break;
		case 'C': o.tls_certs = optarg; break;
		case 'f': o.foreground = true; break;
		case 'N': o.name = optarg; break;
		case 'h': serve_usage(stdout); return 0;
		default: serve_usage(stderr); return 2;
		}
	}
	if (o.unix_path && o.port)
		return cli_error("serve", "--unix and --port exclude each other");
	if (o.ip_addr && !o.port)
		return cli_error("serve", "--ip-addr needs --port");
	if (o.tls && strcmp(o.tls, "off") && !o.tls_certs)
		return cli_error("serve", "--tls=%s needs --tls-certificates DIR", o.tls);
	if (optind >= argc) {
		serve_usage(stderr);
		return 2;
	}
	char name[64], uri[PATH_MAX + 64];
	pid_t pid;
	int rc = serve_start("serve", &o, argc - optind, argv + optind, name, sizeof(name), uri,
	                     sizeof(uri), &pid);
	if (rc)
		return rc;
	printf("%s\n", uri);
	return 0;
}

/* ---- geometry ---- */

static int status_of(int n, char **args, struct uraid_status *st, uint32_t *lb)
{
	char err[512], warn[2048];
	struct stat sb;
	if (n == 1 && !strchr(args[0], '/') && stat(args[0], &sb) < 0) {
		if (cli_ctl_status(args[0], st, err, sizeof(err)) < 0)
			return cli_error("geometry", "%s: no such member file, and %s", args[0],
			                 err);
		const char *names[URAID_STATUS_MAX_MEMBERS];
		int k = 0;
		for (int i = 0; i < st->nmembers; i++)
			if (st->members[i].state != URAID_MEMBER_MISSING)
				names[k++] = st->members[i].name;
		*lb = uraid_geom_logical_block(names, k);
		return 0;
	}
	struct uraid_array *a;
	int rc = uraid_assemble((const char *const *)args, n, URAID_RDONLY | URAID_NO_SYNC_THREAD,
	                        &a, err, sizeof(err), warn, sizeof(warn));
	if (rc < 0)
		return cli_error("geometry", "%s", err);
	uraid_status(a, st);
	uraid_stop(a);
	*lb = uraid_geom_logical_block((const char *const *)args, n);
	return 0;
}

/* A byte count as mkfs.xfs reads it: KiB with a k suffix when whole. */
static void xfs_size(uint64_t b, char *buf, size_t len)
{
	if (b % 1024 == 0)
		snprintf(buf, len, "%lluk", (unsigned long long)(b / 1024));
	else
		snprintf(buf, len, "%llu", (unsigned long long)b);
}

int cmd_geometry(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		printf("usage: uraid geometry NAME | MEMBER...\n"
		       "  Stripe unit and width of the array, the NBD block size hints 'uraid\n"
		       "  serve' advertises, and the mkfs.xfs / mkfs.ext4 options that align a\n"
		       "  file system to the stripes (a loop device over the export cannot\n"
		       "  pass the geometry to mkfs).\n");
		return argc < 2 ? 2 : 0;
	}
	struct uraid_status st;
	uint32_t lb = 512;
	int rc = status_of(argc - 1, argv + 1, &st, &lb);
	if (rc)
		return rc;
	int data = uraid_geom_data_disks(st.level, st.layout, st.raid_disks);
	uint64_t su = (uint64_t)st.chunk_sectors * 512;
	uint32_t mn, pref, mx;
	int cut;
	uraid_geom_block_size(&st, lb, &mn, &pref, &mx, &cut);
	char lay[64] = "";
	layout_name(st.level, st.layout, lay, sizeof(lay));
	printf("level: %s\n", level_name(st.level));
	if (lay[0])
		printf("layout: %s\n", lay);
	printf("raid disks: %d\n", st.raid_disks);
	printf("array size: %llu bytes\n", (unsigned long long)st.array_sectors * 512);
	if (data == 0) {
		printf("data disks: 0 (no striping)\n");
		printf("sunit: 0 sectors (0 bytes)\nswidth: 0 sectors (0 bytes)\n");
	} else {
		printf("chunk: %llu bytes\n", (unsigned long long)su);
		printf("data disks: %d\n", data);
		printf("sunit: %u sectors (%llu bytes)\n", st.chunk_sectors,
		       (unsigned long long)su);
		printf("swidth: %llu sectors (%llu bytes)\n",
		       (unsigned long long)st.chunk_sectors * (uint64_t)data,
		       (unsigned long long)su * (uint64_t)data);
	}
	printf("nbd block size: minimum %u, preferred %u, maximum %u\n", mn, pref, mx);
	if (cut)
		printf("note: the stripe width %llu is not a power of two; the preferred block "
		       "size is the largest power of two dividing it\n",
		       (unsigned long long)su * (uint64_t)data);
	if (data == 0) {
		printf("mkfs.xfs: (no stripe options)\nmkfs.ext4: (no stripe options)\n");
		return 0;
	}
	char sus[32];
	xfs_size(su, sus, sizeof(sus));
	printf("mkfs.xfs -d su=%s,sw=%d\n", sus, data);
	if (su >= 4096 && su % 4096 == 0)
		printf("mkfs.ext4 -E stride=%llu,stripe-width=%llu\n",
		       (unsigned long long)(su / 4096), (unsigned long long)(su / 4096 * data));
	else
		printf("mkfs.ext4: (chunk smaller than a 4 KiB block: no stripe options)\n");
	return 0;
}
