/* Array verbs' shared plumbing: names, the run directory, starting the
 * daemon, and the client side of the control socket. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
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

#include "cli/cli.h"
#include "cli/cli_array.h"
#include "member/member.h"
#include "util/sockio.h"

int cli_check_name(const char *verb, const char *name)
{
	char err[256];
	if (uraid_name_check(name, err, sizeof(err)) < 0)
		return cli_error(verb, "%s", err);
	return 0;
}

int cli_run_ready(const char *verb, const char *name)
{
	char err[PATH_MAX + 256], dir[PATH_MAX];
	if (cli_check_name(verb, name))
		return 1;
	if (uraid_run_dir(true, dir, sizeof(dir), err, sizeof(err)) < 0)
		return cli_error(verb, "%s", err);
	return 0;
}

int cli_sock_path(const char *name, char *path, size_t len, char *err, size_t errlen)
{
	return uraid_run_path(name, ".sock", false, path, len, err, errlen);
}

/* The file name stem of a member: "m0" for /x/m0.img. */
static int member_stem(const char *member, char *name, size_t len)
{
	const char *b = strrchr(member, '/');
	b = b ? b + 1 : member;
	size_t n = strlen(b);
	const char *dot = strchr(b, '.');
	if (dot && dot != b)
		n = (size_t)(dot - b);
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(name, b, n);
	name[n] = 0;
	return 0;
}

int cli_pick_name(const char *verb, const char *want, const char *md_name, const char *member,
                  char *name, size_t len)
{
	char err[256];
	if (want) {
		if (cli_check_name(verb, want))
			return 1;
		if (strlen(want) >= len)
			return cli_error(verb, "name '%s' is longer than %zu characters", want,
			                 len - 1);
		snprintf(name, len, "%s", want);
		return 0;
	}
	if (md_name && md_name[0]) {
		/* md names are "homehost:name"; the array is known by the name. */
		const char *colon = strchr(md_name, ':');
		const char *n = colon ? colon + 1 : md_name;
		if (strlen(n) < len && uraid_name_check(n, err, sizeof(err)) == 0) {
			snprintf(name, len, "%s", n);
			return 0;
		}
		if (n[0])
			fprintf(stderr, "uraid: %s: note: the md name '%.40s' is not usable here\n",
			        verb, n);
	}
	if (member_stem(member, name, len) < 0)
		return cli_error(
		    verb,
		    "cannot name the array after %s: its name would be longer than %zu "
		    "characters; give --name NAME",
		    member, len - 1);
	if (uraid_name_check(name, err, sizeof(err)) < 0)
		return cli_error(verb, "cannot name the array after %s: %s; give --name NAME",
		                 member, err);
	return 0;
}

/* Print a file of the run directory (a log), each line after prefix. */
void cli_print_run_file(const char *prefix, const char *name, const char *suffix)
{
	char err[512], line[1024];
	int fd = uraid_run_open(name, suffix, O_RDONLY, err, sizeof(err));
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		fprintf(stderr, "%s(%s)\n", prefix, err);
		return;
	}
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "%s%s", prefix, line);
	fclose(f);
}

int cli_start_daemon(const char *verb, const char *name, int n, char **members, const char *overlay)
{
	char err[PATH_MAX + 256], log[PATH_MAX];
	struct uraid_status st;
	if (cli_run_ready(verb, name))
		return 1;
	if (uraid_control_status(name, &st, err, sizeof(err)) == 0)
		return cli_error(verb, "an array named '%s' is already running", name);
	if (uraid_run_path(name, ".log", false, log, sizeof(log), err, sizeof(err)) < 0)
		return cli_error(verb, "%s", err);
	/* Opened here, so a refusal reaches the user; the daemon inherits it. */
	int lfd = uraid_run_open(name, ".log", O_WRONLY | O_CREAT, err, sizeof(err));
	if (lfd < 0)
		return cli_error(verb, "daemon log: %s", err);
	char **args = calloc((size_t)n + 4, sizeof(*args));
	if (!args) {
		close(lfd);
		return cli_error(verb, "out of memory");
	}
	args[0] = "uraid";
	args[1] = "daemon";
	args[2] = (char *)name;
	for (int i = 0; i < n; i++) {
		/* An absent member of a built array keeps its place. */
		bool missing = !strcmp(members[i], "missing") && getenv("URAID_DAEMON_BUILD");
		args[3 + i] = missing ? strdup("missing") : cli_member_path(members[i]);
		if (!args[3 + i]) {
			int e = errno;
			for (int j = 0; j < i; j++)
				free(args[3 + j]);
			free(args);
			close(lfd);
			return cli_error(verb, "%s: %s", members[i], strerror(e));
		}
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		for (int i = 0; i < n; i++)
			free(args[3 + i]);
		free(args);
		close(lfd);
		return cli_error(verb, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		setsid();
		int nfd = open("/dev/null", O_RDONLY);
		dup2(lfd, 1);
		dup2(lfd, 2);
		if (nfd >= 0)
			dup2(nfd, 0);
		if (chdir("/") < 0)
			_exit(126);
		if (overlay)
			setenv("URAID_DAEMON_OVERLAY", overlay, 1);
		execv("/proc/self/exe", args);
		_exit(127);
	}
	close(lfd);
	for (int i = 0; i < n; i++)
		free(args[3 + i]);
	free(args);
	/* Wait for the socket to answer, or the daemon to give up. */
	for (int i = 0; i < 300; i++) {
		if (uraid_control_status(name, &st, err, sizeof(err)) == 0) {
			fprintf(stderr, "uraid: %s: array %s started (daemon pid %d, log %s)\n",
			        verb, name, (int)pid, log);
			return 0;
		}
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			fprintf(stderr, "uraid: %s: the array daemon exited:\n", verb);
			cli_print_run_file("", name, ".log");
			return 1;
		}
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGTERM);
	return cli_error(verb, "the array daemon did not answer (log %s)", log);
}

char *cli_member_path(const char *path)
{
	return member_is_remote(path) ? strdup(path) : realpath(path, NULL);
}
