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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../plugins/uraid_geom.h"
#include "cli/cli.h"
#include "cli/cli_array.h"
#include "cli/cli_proc.h"
#include "cli/serve.h"
#include "layout/layout.h"
#include "uraid.h"

#define PLUGIN_FILE "nbdkit-uraid-plugin.so"

int serve_run_path(const char *verb, const char *name, const char *suffix, char *path, size_t len)
{
	char err[PATH_MAX + 256];
	if (uraid_run_path(name, suffix, false, path, len, err, sizeof(err)) < 0)
		return cli_error(verb, "%s", err);
	return 0;
}

bool serve_pid_alive(pid_t pid)
{
	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH))
		return false;
	/* A zombie nobody reaps (the daemon's parent may be a container init
	 * that does not) has exited for our purposes. */
	return proc_start_time(pid) != 0;
}

bool serve_wait_pid(pid_t pid, int ms)
{
	for (int t = 0; t < ms; t += 50) {
		if (!serve_pid_alive(pid))
			return true;
		cli_msleep(50);
	}
	return !serve_pid_alive(pid);
}

/* The value of "key=" in a state file's text, into out; false if absent. */
static bool state_value(const char *text, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, kl) || l[kl] != '=')
			continue;
		const char *v = l + kl + 1;
		size_t vl = strcspn(v, "\n");
		if (vl >= len)
			return false;
		memcpy(out, v, vl);
		out[vl] = 0;
		return true;
	}
	return false;
}

int serve_lookup(const char *name, char *uri, size_t urilen, pid_t *pid)
{
	char text[2 * PATH_MAX + 256], err[PATH_MAX + 256], v[64], arg[URAID_NAME_MAX + 8];
	if (uraid_run_read(name, ".export", text, sizeof(text), err, sizeof(err)) < 0)
		return -ENOENT;
	long p = state_value(text, "pid", v, sizeof(v)) ? strtol(v, NULL, 10) : 0;
	unsigned long long start =
	    state_value(text, "start", v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
	if (p <= 0 || !state_value(text, "uri", uri, urilen) || !uri[0])
		return -ENOENT;
	/* The nbdkit we started for NAME, not whatever has that pid now. */
	char why[PATH_MAX + 64];
	snprintf(arg, sizeof(arg), "name=%s", name);
	enum proc_match m = proc_check((pid_t)p, start, "nbdkit", arg, why, sizeof(why));
	if (m == PROC_OTHER)
		fprintf(stderr, "uraid: warning: %s.export is not trusted: %s\n", name, why);
	if (m != PROC_SAME)
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

/* Check the members read-only (errors reach the user directly, not only
 * nbdkit's log; through the overlays when `overlay`, whose resolved path
 * goes into ovdir) and work out the array's name. */
static int trial(const char *verb, int n, char **members, const char *want, const char *overlay,
                 bool force, char *ovdir, size_t ovlen, char *name, size_t namelen)
{
	char err[512], warn[2048];
	struct uraid_array *a;
	unsigned flags = URAID_RDONLY | URAID_NO_SYNC_THREAD | (force ? URAID_FORCE : 0);
	int rc = uraid_assemble_overlay((const char *const *)members, n, flags, overlay, &a, err,
	                                sizeof(err), warn, sizeof(warn));
	if (warn[0])
		fprintf(stderr, "uraid: %s: warning: %s", verb, warn);
	if (rc < 0)
		return cli_error(verb, "%s", err);
	struct uraid_status st;
	uraid_status(a, &st);
	snprintf(ovdir, ovlen, "%s", st.overlay);
	uraid_stop(a);
	return cli_pick_name(verb, want, st.name, members[0], name, namelen);
}

/* `serve NAME` of an array a daemon runs: --overlay DIR must name the
 * overlays it runs on (the array cannot move onto or off overlays while
 * running); without it the array keeps its overlays. */
static int takeover_overlay(const char *verb, const struct serve_opts *o, const char *name,
                            const struct uraid_status *st)
{
	if (!o->overlay)
		return 0;
	char *r = realpath(o->overlay, NULL);
	bool same = r && !strcmp(r, st->overlay);
	free(r);
	if (same)
		return 0;
	if (!st->overlay[0])
		return cli_error(verb,
		                 "%s runs on its members directly, not on overlays: stop it and "
		                 "serve its members with --overlay %s",
		                 name, o->overlay);
	return cli_error(verb, "%s runs on the overlays in %s, not in %s", name, st->overlay,
	                 o->overlay);
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
	if (lstat(sock, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode))
			return cli_error(verb, "%s exists and is not a socket", sock);
		unlink(sock);
	}
	return 0;
}

/* The NBD socket: --unix PATH (its directory must exist: nbdkit would
 * otherwise fail after the array was taken over), else RUN/NAME.nbd. */
static int sock_path(const char *verb, const struct serve_opts *o, const char *name, char *sock,
                     size_t len)
{
	if (!o->unix_path)
		return serve_run_path(verb, name, ".nbd", sock, len);
	const char *slash = strrchr(o->unix_path, '/');
	const char *base = slash ? slash + 1 : o->unix_path;
	if (!base[0])
		return cli_error(verb, "--unix %s: names a directory, not a socket", o->unix_path);
	char dir[PATH_MAX];
	if (slash) {
		size_t dl = (size_t)(slash - o->unix_path);
		snprintf(dir, sizeof(dir), "%.*s", (int)(dl ? dl : 1), o->unix_path);
	} else {
		snprintf(dir, sizeof(dir), ".");
	}
	char *rdir = realpath(dir, NULL);
	if (!rdir)
		return cli_error(verb, "--unix %s: directory %s: %s", o->unix_path, dir,
		                 strerror(errno));
	struct stat sb;
	int rc = 0;
	if (stat(rdir, &sb) < 0 || !S_ISDIR(sb.st_mode))
		rc = cli_error(verb, "--unix %s: %s is not a directory", o->unix_path, rdir);
	else if ((size_t)snprintf(sock, len, "%s/%s", strcmp(rdir, "/") ? rdir : "", base) >= len)
		rc = cli_error(verb, "--unix %s: path too long", o->unix_path);
	free(rdir);
	return rc;
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
                          const char *sock, const char *pidfile, const char *overlay)
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
	/* A built array taken over from its daemon (serve_handover). */
	const char *spec = getenv("URAID_DAEMON_BUILD");
	if (spec && *spec) {
		snprintf(buf, sizeof(buf), "build=%s", spec);
		ADD(buf);
	}
	if (o->readonly)
		ADD("readonly=true");
	if (o->keep_going)
		ADD("keep-going=true");
	if (o->force)
		ADD("force=true");
	if (overlay[0]) {
		snprintf(buf, sizeof(buf), "overlay=%s", overlay);
		ADD(buf);
	}
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
	char text[2 * PATH_MAX + 256], err[PATH_MAX + 256];
	snprintf(text, sizeof(text), "pid=%d\nstart=%llu\nuri=%s\nsocket=%s\n", (int)pid,
	         proc_start_time(pid), uri, sock);
	int rc = uraid_run_write(name, ".export", text, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "uraid: warning: cannot record the export: %s\n", err);
	return rc;
}

/* Wait for nbdkit (our child) until the plugin's control socket answers:
 * the array is assembled and served. */
static int wait_ready(const char *verb, const char *name, pid_t child, const char *log)
{
	char err[512];
	struct uraid_status st;
	for (int i = 0; i < 1200; i++) {
		if (uraid_control_status(name, &st, err, sizeof(err)) == 0)
			return 0;
		int status;
		if (waitpid(child, &status, WNOHANG) == child) {
			fprintf(stderr, "uraid: %s: nbdkit said:\n", verb);
			cli_print_run_file("  ", name, ".nbdkit.log");
			return cli_error(verb, "nbdkit exited before serving");
		}
		cli_msleep(50);
	}
	kill(child, SIGTERM);
	fprintf(stderr, "uraid: %s: nbdkit said:\n", verb);
	cli_print_run_file("  ", name, ".nbdkit.log");
	return cli_error(verb, "nbdkit did not come up within 60 s (log %s)", log);
}

/* After nbdkit ended: remove its export record and NBD socket, unless a
 * newer serve of the same name has replaced them. */
static void forget_serve(const char *name, pid_t k, const char *sock)
{
	char text[2 * PATH_MAX + 256], err[PATH_MAX + 256], v[64];
	if (uraid_run_read(name, ".export", text, sizeof(text), err, sizeof(err)) < 0 ||
	    !state_value(text, "pid", v, sizeof(v)) || strtol(v, NULL, 10) != k)
		return;
	uraid_run_unlink(name, ".export", err, sizeof(err));
	struct stat sb;
	if (lstat(sock, &sb) == 0 && S_ISSOCK(sb.st_mode))
		unlink(sock);
}

/* An address in a URI: IPv6 literals in brackets (RFC 3986). */
static void uri_host(const char *ip, char *out, size_t len)
{
	if (strchr(ip, ':') && ip[0] != '[')
		snprintf(out, len, "[%s]", ip);
	else
		snprintf(out, len, "%s", ip);
}

int serve_start(const char *verb, const struct serve_opts *o, int n, char **args, char *name,
                size_t namelen, char *uri, size_t urilen, pid_t *pid)
{
	char **members = NULL;
	int nm = 0, rc;
	char err[PATH_MAX + 256], sock[PATH_MAX], pidfile[PATH_MAX], log[PATH_MAX];
	char ovdir[URAID_OVERLAY_DIR_MAX] = "";
	struct uraid_status st, before;
	bool takeover = false;
	if (n < 1)
		return cli_error(verb, "no members or array name given");
	if (o->name && cli_check_name(verb, o->name))
		return 1;
	struct stat sb;
	char **conf_members = NULL;
	int nconf = 0;
	char conf_name[URAID_NAME_MAX + 1] = "";
	if (n == 1 && !strchr(args[0], '/') && stat(args[0], &sb) < 0 &&
	    !cli_array_running(args[0]) &&
	    cli_config_members(args[0], &conf_members, &nconf) == 0) {
		/* An ARRAY line of the configuration file: its members. */
		snprintf(conf_name, sizeof(conf_name), "%s", args[0]);
		n = nconf;
		args = conf_members;
	}
	if (n == 1 && !strchr(args[0], '/') && stat(args[0], &sb) < 0) {
		/* A name: a running array to take over from its daemon. */
		if (uraid_name_check(args[0], err, sizeof(err)) < 0)
			return cli_error(verb, "%s: no such member file, and not an array name: %s",
			                 args[0], err);
		snprintf(name, namelen, "%s", args[0]);
		if (cli_run_ready(verb, name))
			return 1;
		if (serve_lookup(args[0], uri, urilen, pid) == 0)
			return cli_error(verb, "%s is already served at %s (nbdkit pid %d)",
			                 args[0], uri, (int)*pid);
		if (uraid_control_status(args[0], &st, err, sizeof(err)) < 0)
			return cli_error(verb, "%s: no such member file, and %s", args[0], err);
		if (o->name && strcmp(o->name, args[0]))
			return cli_error(verb, "--name cannot rename a running array");
		if (o->force)
			return cli_error(verb, "--force is for member files: %s runs already",
			                 args[0]);
		if (takeover_overlay(verb, o, args[0], &st))
			return 1;
		if (st.metadata == -1 && !o->readonly)
			return cli_error(verb,
			                 "%s was built (no superblocks) and is read-only: give "
			                 "--readonly",
			                 args[0]);
		if (sock_path(verb, o, name, sock, sizeof(sock)))
			return 1;
		if (!o->port && claim_socket(verb, sock))
			return 1;
		rc = serve_handover(verb, args[0], &before, &members, &nm);
		if (rc)
			return rc;
		snprintf(ovdir, sizeof(ovdir), "%s", before.overlay);
		takeover = true;
	} else {
		members = calloc((size_t)n, sizeof(*members));
		if (!members)
			return cli_error(verb, "out of memory");
		for (nm = 0; nm < n; nm++) {
			members[nm] = cli_member_path(args[nm]);
			if (!members[nm]) {
				rc = cli_error(verb, "%s: %s", args[nm], strerror(errno));
				free_list(members, nm);
				uraid_config_paths_free(conf_members, nconf);
				return rc;
			}
		}
		uraid_config_paths_free(conf_members, nconf);
		rc = trial(verb, nm, members,
		           o->name        ? o->name
		           : conf_name[0] ? conf_name
		                          : NULL,
		           o->overlay, o->force, ovdir, sizeof(ovdir), name, namelen);
		if (rc == 0)
			rc = cli_run_ready(verb, name);
		if (rc == 0 && uraid_control_status(name, &st, err, sizeof(err)) == 0)
			rc = cli_error(verb, "an array named '%s' is already running (use --name)",
			               name);
		if (rc == 0)
			rc = sock_path(verb, o, name, sock, sizeof(sock));
		if (rc == 0 && !o->port)
			rc = claim_socket(verb, sock);
		if (rc) {
			free_list(members, nm);
			return rc;
		}
	}
	if (serve_run_path(verb, name, ".nbdkit.pid", pidfile, sizeof(pidfile)) ||
	    serve_run_path(verb, name, ".nbdkit.log", log, sizeof(log))) {
		free_list(members, nm);
		return 1;
	}
	uraid_run_unlink(name, ".nbdkit.pid", err, sizeof(err));
	const char *scheme = o->tls && !strcmp(o->tls, "require") ? "nbds" : "nbd";
	if (o->port) {
		char host[256];
		uri_host(o->ip_addr ? o->ip_addr : "127.0.0.1", host, sizeof(host));
		snprintf(uri, urilen, "%s://%s:%d", scheme, host, o->port);
	} else {
		snprintf(uri, urilen, "%s+unix:///?socket=%s", scheme, sock);
	}
	char **av = nbdkit_argv(o, name, members, nm, sock, pidfile, ovdir);
	if (!av) {
		free_list(members, nm);
		return cli_error(verb, "out of memory");
	}
	fflush(NULL);
	if (o->foreground) {
		/* exec keeps our pid and start time: they are nbdkit's. */
		write_export(name, getpid(), uri, sock);
		if (!o->quiet)
			fprintf(stderr, "uraid: %s: serving %s at %s (foreground)\n", verb, name,
			        uri);
		execvp("nbdkit", av);
		free_list(members, nm);
		return cli_error(verb, "cannot run nbdkit: %s", strerror(errno));
	}
	int lfd = uraid_run_open(name, ".nbdkit.log", O_WRONLY | O_CREAT, err, sizeof(err));
	if (lfd < 0) {
		free_argv(av);
		free_list(members, nm);
		return cli_error(verb, "nbdkit log: %s", err);
	}
	pid_t child = fork();
	if (child < 0) {
		close(lfd);
		free_argv(av);
		free_list(members, nm);
		return cli_error(verb, "fork: %s", strerror(errno));
	}
	if (child == 0) {
		setsid(); /* outlives this command, away from its terminal */
		int nfd = open("/dev/null", O_RDWR | O_CLOEXEC);
		dup2(lfd, 1);
		dup2(lfd, 2);
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
	close(lfd);
	free_argv(av);
	rc = wait_ready(verb, name, child, log);
	if (rc && takeover) {
		/* Not served: the array goes back to a daemon, as it was. */
		fprintf(stderr, "uraid: %s: handing %s back to a daemon\n", verb, name);
		cli_start_daemon(verb, name, nm, members, ovdir[0] ? ovdir : NULL);
	} else if (rc == 0 && takeover)
		rc = serve_check_takeover(verb, name, &before, members, nm);
	free_list(members, nm);
	if (rc)
		return rc;
	char text[64];
	int np = 0;
	if (uraid_run_read(name, ".nbdkit.pid", text, sizeof(text), err, sizeof(err)) < 0 ||
	    sscanf(text, "%d", &np) != 1 || np <= 0)
		return cli_error(verb, "nbdkit wrote no pidfile %s", pidfile);
	*pid = np;
	write_export(name, *pid, uri, sock);
	if (!o->quiet)
		fprintf(stderr, "uraid: %s: serving %s at %s (nbdkit pid %d, log %s)\n", verb, name,
		        uri, (int)*pid, log);
	return 0;
}

static void serve_usage(FILE *f)
{
	fprintf(f,
	        "usage: uraid serve [--unix PATH | --port N [--ip-addr ADDR]] [--readonly]\n"
	        "         [--keep-going] [--tls=on|require --tls-certificates DIR] [--foreground]\n"
	        "         [--name NAME] [--force] [--overlay DIR] MEMBER... | NAME\n"
	        "  Assembles the array and serves it over NBD with nbdkit and the uraid\n"
	        "  plugin: on a unix socket (default $URAID_RUN_DIR/NAME.nbd) or on TCP\n"
	        "  (127.0.0.1 unless --ip-addr). NAME alone takes a running array over from\n"
	        "  its daemon. While served, uraid status/fail/add/check NAME act on it;\n"
	        "  'uraid stop NAME' stops nbdkit and the array. Prints the NBD URI.\n"
	        "  --keep-going (with --readonly): a range no member and no redundancy can\n"
	        "  supply reads as zeros instead of failing; each one is logged and listed\n"
	        "  (\"OFFSET LENGTH\" lines) in $URAID_RUN_DIR/NAME.unreadable.\n"
	        "  --overlay DIR: members read-only, every write to an overlay file per\n"
	        "  member in DIR (see 'uraid overlay'); NAME keeps the overlays it runs on.\n"
	        "  --force: as assemble --force (with --overlay: into the overlays only).\n");
}

int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {{"unix", required_argument, NULL, 'U'},
	                                     {"port", required_argument, NULL, 'p'},
	                                     {"ip-addr", required_argument, NULL, 'i'},
	                                     {"readonly", no_argument, NULL, 'r'},
	                                     {"keep-going", no_argument, NULL, 'k'},
	                                     {"tls", required_argument, NULL, 'T'},
	                                     {"tls-certificates", required_argument, NULL, 'C'},
	                                     {"foreground", no_argument, NULL, 'f'},
	                                     {"name", required_argument, NULL, 'N'},
	                                     {"overlay", required_argument, NULL, 'O'},
	                                     {"force", no_argument, NULL, 'F'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	struct serve_opts o = {0};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "U:p:i:rfN:O:h", opts, NULL)) != -1) {
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
		case 'k': o.keep_going = true; break;
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
		case 'O': o.overlay = optarg; break;
		case 'F': o.force = true; break;
		case 'h': serve_usage(stdout); return 0;
		default: serve_usage(stderr); return 2;
		}
	}
	if (o.unix_path && o.port)
		return cli_error("serve", "--unix and --port exclude each other");
	if (o.keep_going && !o.readonly)
		return cli_error("serve",
		                 "--keep-going needs --readonly (zeros in place of data are "
		                 "honest only where nothing is written over them)");
	if (o.ip_addr && !o.port)
		return cli_error("serve", "--ip-addr needs --port");
	if (o.tls && strcmp(o.tls, "off") && !o.tls_certs)
		return cli_error("serve", "--tls=%s needs --tls-certificates DIR", o.tls);
	if (optind >= argc) {
		serve_usage(stderr);
		return 2;
	}
	char name[URAID_NAME_MAX + 1], uri[PATH_MAX + 64];
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
		if (uraid_control_status(args[0], st, err, sizeof(err)) < 0)
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

/* What a discard (NBD trim, fstrim) does on these members (md's
 * devices_handle_discard_safely for raid4/5/6; passed down elsewhere). */
static void print_discard(const struct uraid_status *st)
{
	bool parity = st->level == URAID_LEVEL_RAID4 || st->level == URAID_LEVEL_RAID5 ||
	              st->level == URAID_LEVEL_RAID6;
	if (st->discard_safe)
		printf("discard: safe: every member reads back zeros after a discard; %s\n",
		       parity ? "whole stripes are discarded on every member, parity too"
		              : "passed down to every copy");
	else if (parity)
		printf("discard: not safe on these members (one is missing, does not zero what it "
		       "discards, or a log takes the writes): discards are written as zeros\n");
	else
		printf("discard: passed down to every copy (BLKDISCARD, punched holes); a member "
		       "that does not zero what it discards may read back anything there\n");
}

int cmd_geometry(int argc, char **argv)
{
	if (argc < 2)
		return cli_error("geometry", "usage: uraid geometry NAME | MEMBER...");
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
	print_discard(&st);
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
