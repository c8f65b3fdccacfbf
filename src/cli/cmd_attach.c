/* uraid attach / detach: a served array as a local block device, without the
 * kernel's nbd driver: nbdfuse exposes the export as a file on a private
 * FUSE mountpoint, and a loop device (direct I/O, so the page cache is not
 * doubled) sits on that file.
 *
 * RUN/NAME.attach records what attach made, one "key=value" a line: name,
 * loop, mount, fuse_pid, implicit (1 when attach started the serve itself),
 * nbdkit_pid. detach undoes it in reverse: loop device, FUSE mount, nbdfuse,
 * and nbdkit when the serve was implicit. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_array.h"
#include "cli/serve.h"

struct attach_state {
	char name[64];
	char loop[256];
	char mount[PATH_MAX];
	pid_t fuse_pid;
	bool implicit;
	pid_t nbdkit_pid;
};

/* Run argv, stdout into out (NUL-terminated, may be NULL); returns the exit
 * status, or -1 when it could not run. stderr passes through. */
static int run(char *const *argv, char *out, size_t outlen)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(p[1], 1);
		execvp(argv[0], argv);
		fprintf(stderr, "uraid: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	size_t n = 0;
	char sink[256];
	for (;;) {
		char *dst = out && n + 1 < outlen ? out + n : sink;
		size_t room = out && n + 1 < outlen ? outlen - n - 1 : sizeof(sink);
		ssize_t r = read(p[0], dst, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (dst != sink)
			n += (size_t)r;
	}
	close(p[0]);
	if (out && outlen)
		out[n] = 0;
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int save_state(const struct attach_state *s)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	serve_run_path(s->name, ".attach", path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "name=%s\nloop=%s\nmount=%s\nfuse_pid=%d\nimplicit=%d\nnbdkit_pid=%d\n", s->name,
	        s->loop, s->mount, (int)s->fuse_pid, s->implicit ? 1 : 0, (int)s->nbdkit_pid);
	if (fclose(f) != 0 || rename(tmp, path) < 0)
		return -errno;
	return 0;
}

static int load_state(const char *path, struct attach_state *s)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	memset(s, 0, sizeof(*s));
	char line[PATH_MAX + 32];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *v = strchr(line, '=');
		if (!v)
			continue;
		*v++ = 0;
		if (!strcmp(line, "name"))
			snprintf(s->name, sizeof(s->name), "%s", v);
		else if (!strcmp(line, "loop"))
			snprintf(s->loop, sizeof(s->loop), "%s", v);
		else if (!strcmp(line, "mount"))
			snprintf(s->mount, sizeof(s->mount), "%s", v);
		else if (!strcmp(line, "fuse_pid"))
			s->fuse_pid = (pid_t)atoi(v);
		else if (!strcmp(line, "implicit"))
			s->implicit = atoi(v) != 0;
		else if (!strcmp(line, "nbdkit_pid"))
			s->nbdkit_pid = (pid_t)atoi(v);
	}
	fclose(f);
	return s->name[0] ? 0 : -EINVAL;
}

/* Is a loop device still bound to a backing file? */
static bool loop_bound(const char *loop)
{
	const char *b = strrchr(loop, '/');
	char p[400];
	struct stat sb;
	snprintf(p, sizeof(p), "/sys/block/%s/loop/backing_file", b ? b + 1 : loop);
	return stat(p, &sb) == 0;
}

static bool is_mounted(const char *dir)
{
	FILE *f = fopen("/proc/self/mounts", "r");
	char line[PATH_MAX * 2];
	bool found = false;
	size_t n = strlen(dir);
	while (f && !found && fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');
		found = sp && !strncmp(sp + 1, dir, n) && sp[1 + n] == ' ';
	}
	if (f)
		fclose(f);
	return found;
}

static void stop_pid(pid_t pid, int grace_ms)
{
	if (pid <= 0 || serve_wait_pid(pid, grace_ms))
		return;
	kill(pid, SIGTERM);
	if (!serve_wait_pid(pid, 5000))
		kill(pid, SIGKILL);
}

/* Undo everything in s, in order; returns 0 when nothing is left. */
static int undo(const char *verb, struct attach_state *s)
{
	int bad = 0;
	if (s->loop[0] && loop_bound(s->loop)) {
		char *av[] = {"losetup", "-d", s->loop, NULL};
		if (run(av, NULL, 0) != 0)
			bad = cli_error(verb, "losetup -d %s failed", s->loop);
		/* The kernel lets go of the file once the last opener is gone. */
		for (int i = 0; i < 200 && loop_bound(s->loop); i++)
			serve_msleep(50);
		if (loop_bound(s->loop))
			bad = cli_error(verb, "%s is still bound (in use?)", s->loop);
	}
	if (bad)
		return bad;
	if (s->mount[0] && is_mounted(s->mount)) {
		int rc = -1;
		for (int i = 0; i < 100 && (rc = umount2(s->mount, 0)) < 0 && errno == EBUSY; i++)
			serve_msleep(50);
		if (rc < 0 && is_mounted(s->mount))
			return cli_error(verb, "cannot unmount %s: %s", s->mount, strerror(errno));
	}
	/* nbdfuse exits once its file system is unmounted. */
	stop_pid(s->fuse_pid, 10000);
	if (s->mount[0])
		rmdir(s->mount);
	if (s->implicit && s->nbdkit_pid > 0) {
		char err[512];
		if (cli_ctl(s->name, "stop", NULL, 0, NULL, NULL, err, sizeof(err)) < 0 &&
		    serve_pid_alive(s->nbdkit_pid))
			fprintf(stderr, "uraid: %s: asking %s to stop: %s\n", verb, s->name, err);
		/* Stopping flushes and marks the array clean: give it time. */
		stop_pid(s->nbdkit_pid, 60000);
		if (serve_pid_alive(s->nbdkit_pid))
			return cli_error(verb, "nbdkit (pid %d) did not stop", (int)s->nbdkit_pid);
		char p[PATH_MAX];
		serve_run_path(s->name, ".export", p, sizeof(p));
		unlink(p);
		serve_run_path(s->name, ".nbd", p, sizeof(p));
		unlink(p);
	}
	return 0;
}

static void attach_usage(FILE *f)
{
	fprintf(f, "usage: uraid attach [--name NAME] --unix PATH\n"
	           "       uraid attach NAME            (an array served with 'uraid serve')\n"
	           "       uraid attach [--name NAME] MEMBER...|NAME  (serves it first)\n"
	           "  Root only. Mounts the NBD export with nbdfuse on a private directory and\n"
	           "  puts a loop device (direct I/O) on it; prints the loop device.\n"
	           "  'uraid detach NAME|/dev/loopN' undoes it all.\n");
}

/* nbdfuse in the background on s->mount; waits until it serves. */
static int start_fuse(const char *verb, struct attach_state *s, const char *uri)
{
	char pidfile[PATH_MAX], log[PATH_MAX];
	serve_run_path(s->name, ".nbdfuse.pid", pidfile, sizeof(pidfile));
	serve_run_path(s->name, ".nbdfuse.log", log, sizeof(log));
	unlink(pidfile);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return cli_error(verb, "fork: %s", strerror(errno));
	if (pid == 0) {
		setsid();
		int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int nfd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (lfd >= 0) {
			dup2(lfd, 1);
			dup2(lfd, 2);
		}
		if (nfd >= 0)
			dup2(nfd, 0);
		execlp("nbdfuse", "nbdfuse", "-P", pidfile, s->mount, uri, (char *)NULL);
		fprintf(stderr, "cannot run nbdfuse: %s\n", strerror(errno));
		_exit(127);
	}
	s->fuse_pid = pid;
	for (int i = 0; i < 400; i++) {
		struct stat sb;
		if (stat(pidfile, &sb) == 0 && sb.st_size > 0) {
			unlink(pidfile);
			return 0;
		}
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			s->fuse_pid = 0;
			FILE *f = fopen(log, "r");
			char line[1024];
			fprintf(stderr, "uraid: %s: nbdfuse exited:\n", verb);
			while (f && fgets(line, sizeof(line), f))
				fprintf(stderr, "  %s", line);
			if (f)
				fclose(f);
			return 1;
		}
		serve_msleep(50);
	}
	return cli_error(verb, "nbdfuse did not come up within 20 s (log %s)", log);
}

int cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {{"unix", required_argument, NULL, 'U'},
	                                     {"name", required_argument, NULL, 'N'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	const char *unix_path = NULL, *want = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "U:N:h", opts, NULL)) != -1) {
		switch (c) {
		case 'U': unix_path = optarg; break;
		case 'N': want = optarg; break;
		case 'h': attach_usage(stdout); return 0;
		default: attach_usage(stderr); return 2;
		}
	}
	int n = argc - optind;
	if ((unix_path && n) || (!unix_path && !n)) {
		attach_usage(stderr);
		return 2;
	}
	if (geteuid() != 0)
		return cli_error("attach", "needs root (FUSE mount and loop devices)");
	struct attach_state s = {0};
	char uri[PATH_MAX + 64], path[PATH_MAX];
	if (unix_path) {
		char *rp = realpath(unix_path, NULL);
		if (!rp)
			return cli_error("attach", "%s: %s", unix_path, strerror(errno));
		snprintf(uri, sizeof(uri), "nbd+unix:///?socket=%s", rp);
		if (want) {
			snprintf(s.name, sizeof(s.name), "%s", want);
		} else {
			cli_default_name(rp, s.name, sizeof(s.name));
		}
		free(rp);
	} else if (n == 1 && !strchr(argv[optind], '/') &&
	           serve_lookup(argv[optind], uri, sizeof(uri), &s.nbdkit_pid) == 0) {
		snprintf(s.name, sizeof(s.name), "%s", argv[optind]);
		s.nbdkit_pid = 0; /* not ours to stop */
	} else {
		struct serve_opts o = {.name = want};
		int rc = serve_start("attach", &o, n, argv + optind, s.name, sizeof(s.name), uri,
		                     sizeof(uri), &s.nbdkit_pid);
		if (rc)
			return rc;
		s.implicit = true;
	}
	serve_run_path(s.name, ".attach", path, sizeof(path));
	struct attach_state old;
	if (load_state(path, &old) == 0 && old.loop[0] && loop_bound(old.loop)) {
		int rc = cli_error("attach", "%s is already attached as %s", s.name, old.loop);
		if (s.implicit)
			undo("attach", &s);
		return rc;
	}
	if (mkdir(serve_run_dir(), 0755) < 0 && errno != EEXIST)
		return cli_error("attach", "%s: %s", serve_run_dir(), strerror(errno));
	/* A private directory: only root may look at the exported file. */
	snprintf(s.mount, sizeof(s.mount), "%s/%s.fuse.XXXXXX", serve_run_dir(), s.name);
	if (!mkdtemp(s.mount)) {
		int rc = cli_error("attach", "mkdtemp %s: %s", s.mount, strerror(errno));
		s.mount[0] = 0;
		undo("attach", &s);
		return rc;
	}
	save_state(&s);
	int rc = start_fuse("attach", &s, uri);
	if (rc == 0) {
		save_state(&s);
		char file[PATH_MAX + 8], out[256], ss[16];
		snprintf(file, sizeof(file), "%s/nbd", s.mount);
		/* The loop device's logical block follows the array's I/O unit
		 * (graid3: its provider sector; loop takes at most 4096, larger
		 * units are widened by the plugin). */
		struct uraid_status ast;
		char e[512];
		unsigned bs = 512;
		if (cli_ctl_status(s.name, &ast, e, sizeof(e)) == 0 && ast.block_bytes > 512)
			bs = ast.block_bytes > 4096 ? 4096 : ast.block_bytes;
		snprintf(ss, sizeof(ss), "%u", bs);
		char *av[] = {
		    "losetup", "--direct-io=on", "--sector-size", ss, "--find", "--show", file,
		    NULL};
		int st = run(av, out, sizeof(out));
		out[strcspn(out, "\n")] = 0;
		if (st != 0 || strncmp(out, "/dev/loop", 9))
			rc = cli_error("attach", "losetup on %s failed", file);
		else
			snprintf(s.loop, sizeof(s.loop), "%s", out);
	}
	if (rc) {
		undo("attach", &s);
		unlink(path);
		return rc;
	}
	save_state(&s);
	printf("%s\n", s.loop);
	return 0;
}

/* The attach record of a loop device. */
static int find_by_loop(const char *loop, char *path, size_t len)
{
	DIR *d = opendir(serve_run_dir());
	struct dirent *e;
	int rc = -ENOENT;
	while (d && rc < 0 && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < 8 || strcmp(e->d_name + l - 7, ".attach"))
			continue;
		struct attach_state s;
		snprintf(path, len, "%s/%s", serve_run_dir(), e->d_name);
		if (load_state(path, &s) == 0 && !strcmp(s.loop, loop))
			rc = 0;
	}
	if (d)
		closedir(d);
	return rc;
}

int cmd_detach(int argc, char **argv)
{
	if (argc != 2 || !strcmp(argv[1], "--help")) {
		printf("usage: uraid detach NAME|/dev/loopN\n"
		       "  Removes the loop device, unmounts nbdfuse and, when attach started\n"
		       "  the serve itself, stops nbdkit and the array.\n");
		return argc == 2 ? 0 : 2;
	}
	char path[PATH_MAX];
	struct attach_state s;
	if (!strncmp(argv[1], "/dev/", 5)) {
		if (find_by_loop(argv[1], path, sizeof(path)) < 0)
			return cli_error("detach", "%s was not attached by uraid", argv[1]);
	} else {
		serve_run_path(argv[1], ".attach", path, sizeof(path));
	}
	if (load_state(path, &s) < 0)
		return cli_error("detach", "%s is not attached", argv[1]);
	int rc = undo("detach", &s);
	if (rc)
		return rc;
	unlink(path);
	return 0;
}
