/* uraid attach / detach: an array as a local block device, by the best path
 * the kernel offers (--via forces one): ublk (/dev/ublkbN served by uraid's
 * daemon, attach_kernel.c), else the kernel NBD client (/dev/nbdN on the
 * serve's unix socket), else without either driver: nbdfuse exposes the
 * export as a file on a private FUSE mountpoint, and a loop device (direct
 * I/O, so the page cache is not doubled) sits on that file.
 *
 * RUN/NAME.attach records what attach made (attach.h): the loop device, the
 * FUSE mount, nbdfuse's pid and start time, and whether attach started the
 * serve itself (then nbdkit's pid and start time). detach checks all of it
 * against the system (attach_verify), then undoes it in reverse: loop
 * device, FUSE mount, nbdfuse, and nbdkit when the serve was implicit. */
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

#include "cli/attach.h"
#include "cli/cli.h"
#include "cli/cli_array.h"
#include "cli/cli_proc.h"
#include "cli/serve.h"
#include "export/nbd/nbd_kernel.h"
#include "export/ublk/ublk.h"

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

static int save(const char *verb, const struct attach_state *s)
{
	char err[PATH_MAX + 256];
	if (attach_save(s, err, sizeof(err)) < 0)
		return cli_error(verb, "%s", err);
	return 0;
}

/* Stop the recorded process: wait grace_ms for it to end by itself, then
 * SIGTERM, then SIGKILL; each signal only while it is still the process
 * recorded (pid and start time, program). */
static void stop_proc(pid_t pid, unsigned long long start, const char *exe, const char *arg,
                      int grace_ms)
{
	char why[PATH_MAX + 64];
	if (proc_check(pid, start, exe, arg, why, sizeof(why)) != PROC_SAME ||
	    serve_wait_pid(pid, grace_ms))
		return;
	if (proc_check(pid, start, exe, arg, why, sizeof(why)) == PROC_SAME)
		kill(pid, SIGTERM);
	if (!serve_wait_pid(pid, 5000) &&
	    proc_check(pid, start, exe, arg, why, sizeof(why)) == PROC_SAME)
		kill(pid, SIGKILL);
}

/* Undo everything in s, in order; returns 0 when nothing is left. Only for
 * a state this process made, or one attach_verify accepted. */
static int undo(const char *verb, struct attach_state *s)
{
	if (s->kind == ATTACH_UBLK)
		return attach_ublk_undo(verb, s);
	int bad = s->kind == ATTACH_NBD ? attach_nbd_undo(verb, s) : 0;
	if (bad)
		return bad;
	char file[PATH_MAX], fstype[64];
	if (s->loop[0] && attach_loop_bound(s->loop, file, sizeof(file))) {
		char *av[] = {"losetup", "-d", s->loop, NULL};
		if (run(av, NULL, 0) != 0)
			bad = cli_error(verb, "losetup -d %s failed", s->loop);
		/* The kernel lets go of the file once the last opener is gone. */
		for (int i = 0; i < 200 && attach_loop_bound(s->loop, file, sizeof(file)); i++)
			cli_msleep(50);
		if (attach_loop_bound(s->loop, file, sizeof(file)))
			bad = cli_error(verb, "%s is still bound (in use?)", s->loop);
	}
	if (bad)
		return bad;
	if (s->mount[0] && attach_mounted(s->mount, fstype, sizeof(fstype))) {
		int rc = -1;
		for (int i = 0;
		     i < 100 && (rc = umount2(s->mount, UMOUNT_NOFOLLOW)) < 0 && errno == EBUSY;
		     i++)
			cli_msleep(50);
		if (rc < 0 && attach_mounted(s->mount, fstype, sizeof(fstype)))
			return cli_error(verb, "cannot unmount %s: %s", s->mount, strerror(errno));
	}
	/* nbdfuse exits once its file system is unmounted. */
	stop_proc(s->fuse_pid, s->fuse_start, "nbdfuse", s->mount, 10000);
	if (s->mount[0])
		rmdir(s->mount);
	if (s->implicit && s->nbdkit_pid > 0) {
		char err[PATH_MAX + 256], arg[URAID_NAME_MAX + 8];
		snprintf(arg, sizeof(arg), "name=%s", s->name);
		if (uraid_control_request(s->name, "stop", NULL, 0, NULL, NULL, err, sizeof(err)) <
		        0 &&
		    serve_pid_alive(s->nbdkit_pid))
			fprintf(stderr, "uraid: %s: asking %s to stop: %s\n", verb, s->name, err);
		/* Stopping flushes and marks the array clean: give it time. */
		stop_proc(s->nbdkit_pid, s->nbdkit_start, "nbdkit", arg, 60000);
		if (proc_check(s->nbdkit_pid, s->nbdkit_start, "nbdkit", arg, err, sizeof(err)) ==
		    PROC_SAME)
			return cli_error(verb, "nbdkit (pid %d) did not stop", (int)s->nbdkit_pid);
		uraid_run_unlink(s->name, ".export", err, sizeof(err));
		uraid_run_unlink(s->name, ".nbd", err, sizeof(err));
	}
	return 0;
}

static void attach_usage(FILE *f)
{
	fprintf(f, "usage: uraid attach [--via ublk|nbd|fuse] [--name NAME] --unix PATH\n"
	           "       uraid attach [--via ...] NAME (an array served with 'uraid serve')\n"
	           "       uraid attach [--via ...] [--name NAME] [--force] [--overlay DIR]\n"
	           "                    MEMBER...|NAME  (serves it first)\n"
	           "  Root only. Makes the array a block device and prints it, by the best\n"
	           "  path the kernel offers (--via forces one): ublk (/dev/ublkbN, served by\n"
	           "  uraid's daemon on the member files, or taken over from NAME's daemon),\n"
	           "  else the kernel NBD client (/dev/nbdN on the serve's unix socket), else\n"
	           "  fuse: the NBD export mounted with\n"
	           "  nbdfuse on a private directory and a loop device (direct I/O) on it.\n"
	           "  'uraid detach NAME|DEVICE' undoes it all. --overlay DIR: the\n"
	           "  members read-only, every write (mkfs, fsck) to overlays in DIR;\n"
	           "  --force: as assemble --force.\n");
}

/* nbdfuse in the background on s->mount; waits until it serves. */
static int start_fuse(const char *verb, struct attach_state *s, const char *uri)
{
	char pidfile[PATH_MAX], log[PATH_MAX], err[PATH_MAX + 256], text[64];
	if (serve_run_path(verb, s->name, ".nbdfuse.pid", pidfile, sizeof(pidfile)) ||
	    serve_run_path(verb, s->name, ".nbdfuse.log", log, sizeof(log)))
		return 1;
	uraid_run_unlink(s->name, ".nbdfuse.pid", err, sizeof(err));
	int lfd = uraid_run_open(s->name, ".nbdfuse.log", O_WRONLY | O_CREAT, err, sizeof(err));
	if (lfd < 0)
		return cli_error(verb, "nbdfuse log: %s", err);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(lfd);
		return cli_error(verb, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		setsid();
		int nfd = open("/dev/null", O_RDWR | O_CLOEXEC);
		dup2(lfd, 1);
		dup2(lfd, 2);
		if (nfd >= 0)
			dup2(nfd, 0);
		execlp("nbdfuse", "nbdfuse", "-P", pidfile, s->mount, uri, (char *)NULL);
		fprintf(stderr, "cannot run nbdfuse: %s\n", strerror(errno));
		_exit(127);
	}
	close(lfd);
	/* exec keeps the start time: recorded now, it is nbdfuse's. */
	s->fuse_pid = pid;
	s->fuse_start = proc_start_time(pid);
	for (int i = 0; i < 400; i++) {
		if (uraid_run_read(s->name, ".nbdfuse.pid", text, sizeof(text), err, sizeof(err)) >
		    0) {
			uraid_run_unlink(s->name, ".nbdfuse.pid", err, sizeof(err));
			return 0;
		}
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			s->fuse_pid = 0;
			fprintf(stderr, "uraid: %s: nbdfuse exited:\n", verb);
			cli_print_run_file("  ", s->name, ".nbdfuse.log");
			return 1;
		}
		cli_msleep(50);
	}
	return cli_error(verb, "nbdfuse did not come up within 20 s (log %s)", log);
}

/* A served array runs on the overlays in `overlay` (realpath'ed). */
static int served_on(const char *name, const char *overlay)
{
	struct uraid_status st;
	char err[512];
	if (uraid_control_status(name, &st, err, sizeof(err)) < 0)
		return cli_error("attach", "%s", err);
	char *r = realpath(overlay, NULL);
	bool same = r && !strcmp(r, st.overlay);
	free(r);
	if (same)
		return 0;
	return cli_error("attach", "%s is served %s%s, not on the overlays in %s", name,
	                 st.overlay[0] ? "on the overlays in " : "on its members directly",
	                 st.overlay, overlay);
}

/* Start the serve (or find it) and fill s->name, uri. */
static int find_export(int argc, char **argv, int first, const char *unix_path, const char *want,
                       const char *overlay, bool force, struct attach_state *s, char *uri,
                       size_t urilen)
{
	int n = argc - first;
	if (unix_path && (overlay || force))
		return cli_error("attach",
		                 "--overlay and --force cannot apply to an export of --unix %s",
		                 unix_path);
	if (unix_path) {
		char *rp = realpath(unix_path, NULL);
		if (!rp)
			return cli_error("attach", "%s: %s", unix_path, strerror(errno));
		snprintf(uri, urilen, "nbd+unix:///?socket=%s", rp);
		int rc = cli_pick_name("attach", want, NULL, rp, s->name, sizeof(s->name));
		free(rp);
		return rc;
	}
	if (n == 1 && !strchr(argv[first], '/') && uraid_name_check(argv[first], NULL, 0) == 0 &&
	    serve_lookup(argv[first], uri, urilen, &s->nbdkit_pid) == 0) {
		snprintf(s->name, sizeof(s->name), "%s", argv[first]);
		s->nbdkit_pid = 0; /* not ours to stop */
		if (force)
			return cli_error(
			    "attach", "--force is for member files: %s is served already", s->name);
		return overlay ? served_on(s->name, overlay) : 0;
	}
	struct serve_opts o = {.name = want, .overlay = overlay, .force = force};
	int rc = serve_start("attach", &o, n, argv + first, s->name, sizeof(s->name), uri, urilen,
	                     &s->nbdkit_pid);
	if (rc)
		return rc;
	s->implicit = true;
	s->nbdkit_start = proc_start_time(s->nbdkit_pid);
	return 0;
}

/* The logical block for the loop or nbd device: the array's I/O unit
 * (graid3: its provider sector; the drivers take at most 4096, larger
 * units are widened by the plugin). */
static unsigned array_block(const char *name)
{
	struct uraid_status ast;
	char err[PATH_MAX + 256];
	unsigned bs = 512;
	if (uraid_control_status(name, &ast, err, sizeof(err)) == 0 && ast.block_bytes > 512)
		bs = ast.block_bytes > 4096 ? 4096 : ast.block_bytes;
	return bs;
}

/* The device on stdout; on stderr the path taken and why better ones were
 * not. */
static void said(const char *verb, const struct attach_state *s, const char *why)
{
	printf("%s\n", attach_device(s));
	fprintf(stderr, "uraid: %s: %s attached via %s as %s%s%s%s\n", verb, s->name,
	        attach_kind_name(s->kind), attach_device(s), why[0] ? " (" : "", why,
	        why[0] ? ")" : "");
}

/* --via, or the best path available. ublk serves member files itself, so
 * it cannot take an export (--unix) or an array nbdkit serves; an array a
 * daemon runs it takes over (*takeover). */
static int pick_kind(const char *via, int argc, char **argv, int first, const char *unix_path,
                     enum attach_kind *kind, bool *takeover, char *why, size_t whylen)
{
	int n = argc - first;
	char uri[PATH_MAX + 64];
	pid_t pid;
	bool named =
	    n == 1 && !strchr(argv[first], '/') && uraid_name_check(argv[first], NULL, 0) == 0;
	bool served = named && serve_lookup(argv[first], uri, sizeof(uri), &pid) == 0;
	bool can_ublk = !unix_path && !served;
	*takeover = named && !served && cli_array_running(argv[first]);
	if (!via) {
		*kind = attach_pick(can_ublk, why, whylen);
		return 0;
	}
	if (attach_kind_parse(via, kind) < 0)
		return cli_error("attach", "--via %s: not ublk, nbd or fuse", via);
	char w[512];
	if (*kind == ATTACH_UBLK && !can_ublk)
		return cli_error("attach",
		                 "--via ublk serves the array itself: %s is %s (stop it, or use "
		                 "--via nbd|fuse)",
		                 unix_path ? unix_path : argv[first],
		                 unix_path ? "an NBD export" : "served by nbdkit");
	if (*kind == ATTACH_UBLK && ublk_available(w, sizeof(w)) < 0)
		return cli_error("attach", "--via ublk: %s", w);
	if (*kind == ATTACH_NBD && nbd_kernel_available(w, sizeof(w)) < 0)
		return cli_error("attach", "--via nbd: %s", w);
	snprintf(why, whylen, "--via %s", via);
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {{"unix", required_argument, NULL, 'U'},
	                                     {"name", required_argument, NULL, 'N'},
	                                     {"overlay", required_argument, NULL, 'O'},
	                                     {"force", no_argument, NULL, 'F'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {"via", required_argument, NULL, 'V'},
	                                     {NULL, 0, NULL, 0}};
	const char *unix_path = NULL, *want = NULL, *overlay = NULL, *via = NULL;
	bool force = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "U:N:O:h", opts, NULL)) != -1) {
		switch (c) {
		case 'U': unix_path = optarg; break;
		case 'N': want = optarg; break;
		case 'O': overlay = optarg; break;
		case 'F': force = true; break;
		case 'V': via = optarg; break;
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
	if (want && cli_check_name("attach", want))
		return 1;
	struct attach_state s = {.dev = -1}, old;
	char uri[PATH_MAX + 64], dir[PATH_MAX], err[PATH_MAX + 256], why[768] = "";
	enum attach_kind kind;
	bool takeover;
	int rc = pick_kind(via, argc, argv, optind, unix_path, &kind, &takeover, why, sizeof(why));
	if (rc)
		return rc;
	if (kind == ATTACH_UBLK && takeover && (overlay || force))
		return cli_error("attach",
		                 "--overlay and --force are for member files: %s runs already",
		                 argv[optind]);
	if (kind == ATTACH_UBLK) {
		rc = takeover ? attach_ublk_takeover("attach", argv[optind], &s)
		              : attach_ublk("attach", n, argv + optind, want, overlay, force, &s);
		if (rc)
			return rc;
		said("attach", &s, why);
		return 0;
	}
	rc = find_export(argc, argv, optind, unix_path, want, overlay, force, &s, uri, sizeof(uri));
	if (rc)
		return rc;
	if (attach_load(s.name, &old, err, sizeof(err)) == 0 && attach_present(&old)) {
		rc = cli_error("attach", "%s is already attached as %s", s.name,
		               attach_device(&old));
		if (s.implicit)
			undo("attach", &s);
		return rc;
	}
	if (kind == ATTACH_NBD) {
		rc = save("attach", &s);
		if (rc == 0)
			rc = attach_nbd("attach", uri, array_block(s.name), &s);
		if (rc == 0)
			rc = save("attach", &s);
		if (rc) {
			undo("attach", &s);
			uraid_run_unlink(s.name, ".attach", err, sizeof(err));
			return rc;
		}
		said("attach", &s, why);
		return 0;
	}
	if (uraid_run_dir(true, dir, sizeof(dir), err, sizeof(err)) < 0) {
		rc = cli_error("attach", "%s", err);
		if (s.implicit)
			undo("attach", &s);
		return rc;
	}
	/* A private directory: only root may look at the exported file. */
	if ((size_t)snprintf(s.mount, sizeof(s.mount), "%.*s/%s.fuse.XXXXXX",
	                     (int)(sizeof(s.mount) - URAID_NAME_MAX - 16), dir,
	                     s.name) >= sizeof(s.mount) ||
	    !mkdtemp(s.mount)) {
		rc = cli_error("attach", "mkdtemp %s: %s", s.mount, strerror(errno));
		s.mount[0] = 0;
		undo("attach", &s);
		return rc;
	}
	rc = save("attach", &s);
	if (rc == 0)
		rc = start_fuse("attach", &s, uri);
	if (rc == 0)
		rc = save("attach", &s);
	if (rc == 0) {
		char file[PATH_MAX + 8], out[256], ss[16];
		snprintf(file, sizeof(file), "%s/nbd", s.mount);
		/* The loop device's logical block follows the array's I/O unit
		 * (graid3: its provider sector; loop takes at most 4096, larger
		 * units are widened by the plugin). */
		snprintf(ss, sizeof(ss), "%u", array_block(s.name));
		char *av[] = {
		    "losetup", "--direct-io=on", "--sector-size", ss, "--find", "--show", file,
		    NULL};
		int st = run(av, out, sizeof(out));
		out[strcspn(out, "\n")] = 0;
		if (st != 0 || strncmp(out, "/dev/loop", 9) || strlen(out) >= sizeof(s.loop))
			rc = cli_error("attach", "losetup on %s failed", file);
		else
			memcpy(s.loop, out, strlen(out) + 1);
	}
	if (rc == 0)
		rc = save("attach", &s);
	if (rc) {
		undo("attach", &s);
		uraid_run_unlink(s.name, ".attach", err, sizeof(err));
		return rc;
	}
	said("attach", &s, why);
	return 0;
}

/* The name of the attach record of a loop device. */
static int find_by_loop(const char *loop, char *name, size_t len)
{
	char dir[PATH_MAX], err[PATH_MAX + 256];
	if (uraid_run_dir(false, dir, sizeof(dir), err, sizeof(err)) < 0)
		return -ENOENT;
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = -ENOENT;
	while (d && rc < 0 && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < 8 || l - 7 >= len || strcmp(e->d_name + l - 7, ".attach"))
			continue;
		struct attach_state s;
		snprintf(name, len, "%.*s", (int)(l - 7), e->d_name);
		if (uraid_name_check(name, NULL, 0) == 0 &&
		    attach_load(name, &s, err, sizeof(err)) == 0 &&
		    !strcmp(attach_device(&s), loop))
			rc = 0;
	}
	if (d)
		closedir(d);
	return rc;
}

int cmd_detach(int argc, char **argv)
{
	if (argc != 2)
		return cli_error("detach", "usage: uraid detach NAME|DEVICE");
	char name[URAID_NAME_MAX + 1], err[PATH_MAX + 512];
	struct attach_state s;
	if (!strncmp(argv[1], "/dev/", 5)) {
		if (find_by_loop(argv[1], name, sizeof(name)) < 0)
			return cli_error("detach", "%s was not attached by uraid", argv[1]);
	} else {
		if (cli_check_name("detach", argv[1]))
			return 1;
		snprintf(name, sizeof(name), "%s", argv[1]);
	}
	int rc = attach_load(name, &s, err, sizeof(err));
	if (rc == -ENOENT)
		return cli_error("detach", "%s is not attached", argv[1]);
	if (rc < 0)
		return cli_error("detach", "%s", err);
	if (attach_verify(&s, err, sizeof(err)) < 0)
		return cli_error("detach", "refusing to act on %s.attach: %s; nothing was changed",
		                 name, err);
	rc = undo("detach", &s);
	if (rc)
		return rc;
	uraid_run_unlink(name, ".attach", err, sizeof(err));
	return 0;
}
