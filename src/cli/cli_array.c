/* Array verbs' shared plumbing: names, the run directory, starting the
 * daemon, and the client side of the control socket. */
#include <errno.h>
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
#include "util/sockio.h"

static const char *run_dir(void)
{
	const char *d = getenv("URAID_RUN_DIR");
	return d && *d ? d : "/run/uraid";
}

void cli_sock_path(const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s.sock", run_dir(), name);
}

void cli_default_name(const char *member, char *name, size_t len)
{
	const char *b = strrchr(member, '/');
	b = b ? b + 1 : member;
	snprintf(name, len, "%s", b);
	char *dot = strchr(name, '.');
	if (dot && dot != name)
		*dot = 0;
}

static int connect_to(const char *name, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	cli_sock_path(name, sa.sun_path, sizeof(sa.sun_path));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		snprintf(err, errlen, "array '%s' is not running (%s: %s)", name, sa.sun_path,
		         strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

static int recv_full(int fd, void *p, size_t len)
{
	char *b = p;
	while (len) {
		ssize_t r = recv(fd, b, len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EPIPE;
		b += r;
		len -= (size_t)r;
	}
	return 0;
}

int cli_ctl(const char *name, const char *line, const void *payload, size_t plen, char **body,
            size_t *blen, char *err, size_t errlen)
{
	if (body)
		*body = NULL;
	if (blen)
		*blen = 0;
	int fd = connect_to(name, err, errlen);
	if (fd < 0)
		return fd;
	int rc = sock_send_all(fd, line, strlen(line));
	if (rc == 0)
		rc = sock_send_all(fd, "\n", 1);
	if (rc == 0 && plen)
		rc = sock_send_all(fd, payload, plen);
	char hdr[700];
	size_t n = 0;
	while (rc == 0 && n + 1 < sizeof(hdr)) {
		rc = recv_full(fd, hdr + n, 1);
		if (rc == 0 && hdr[n] == '\n')
			break;
		n++;
	}
	hdr[n] = 0;
	if (rc < 0) {
		snprintf(err, errlen, "array '%s': connection lost", name);
		close(fd);
		return rc;
	}
	if (!strncmp(hdr, "ERR ", 4)) {
		char *msg;
		long e = strtol(hdr + 4, &msg, 10);
		while (*msg == ' ')
			msg++;
		snprintf(err, errlen, "%s", msg);
		close(fd);
		return e > 0 ? -(int)e : -EIO;
	}
	/* "OK LEN": LEN decimal, no sign, no more than a reply can carry. */
	unsigned long long len = 0;
	char *end = NULL;
	if (!strncmp(hdr, "OK ", 3) && hdr[3] >= '0' && hdr[3] <= '9') {
		errno = 0;
		len = strtoull(hdr + 3, &end, 10);
	}
	if (!end || *end || errno || len > URAID_CONTROL_MAX_IO) {
		snprintf(err, errlen, "array '%s': bad reply '%.80s'", name, hdr);
		close(fd);
		return -EPROTO;
	}
	char *b = malloc(len + 1);
	if (!b) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = recv_full(fd, b, len);
	close(fd);
	if (rc < 0) {
		free(b);
		snprintf(err, errlen, "array '%s': connection lost", name);
		return rc;
	}
	b[len] = 0;
	if (body)
		*body = b;
	else
		free(b);
	if (blen)
		*blen = len;
	return 0;
}

int cli_ctl_status(const char *name, struct uraid_status *st, char *err, size_t errlen)
{
	char *body;
	size_t len;
	int rc = cli_ctl(name, "status", NULL, 0, &body, &len, err, errlen);
	if (rc < 0)
		return rc;
	char e[256];
	rc = uraid_status_decode(body, len, st, e, sizeof(e));
	free(body);
	if (rc < 0)
		snprintf(err, errlen, "array '%s': status: %s", name, e);
	return rc;
}

int cli_ctl_stats(const char *name, struct uraid_io_stats *st, char *err, size_t errlen)
{
	char *body;
	size_t len;
	int rc = cli_ctl(name, "stats", NULL, 0, &body, &len, err, errlen);
	if (rc < 0)
		return rc;
	char e[256];
	rc = uraid_io_stats_decode(body, len, st, e, sizeof(e));
	free(body);
	if (rc < 0)
		snprintf(err, errlen, "array '%s': stats: %s", name, e);
	return rc;
}

int cli_start_daemon(const char *verb, const char *name, int n, char **members)
{
	char err[512];
	struct uraid_status st;
	if (cli_ctl_status(name, &st, err, sizeof(err)) == 0)
		return cli_error(verb, "an array named '%s' is already running", name);
	if (mkdir(run_dir(), 0755) < 0 && errno != EEXIST)
		return cli_error(verb, "%s: %s", run_dir(), strerror(errno));
	char **args = calloc((size_t)n + 4, sizeof(*args));
	if (!args)
		return cli_error(verb, "out of memory");
	args[0] = "uraid";
	args[1] = "daemon";
	args[2] = (char *)name;
	for (int i = 0; i < n; i++) {
		args[3 + i] = realpath(members[i], NULL);
		if (!args[3 + i]) {
			int e = errno;
			for (int j = 0; j < i; j++)
				free(args[3 + j]);
			free(args);
			return cli_error(verb, "%s: %s", members[i], strerror(e));
		}
	}
	char log[PATH_MAX];
	snprintf(log, sizeof(log), "%s/%s.log", run_dir(), name);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		for (int i = 0; i < n; i++)
			free(args[3 + i]);
		free(args);
		return cli_error(verb, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		setsid();
		int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nfd = open("/dev/null", O_RDONLY);
		if (lfd >= 0) {
			dup2(lfd, 1);
			dup2(lfd, 2);
		}
		if (nfd >= 0)
			dup2(nfd, 0);
		if (chdir("/") < 0)
			_exit(126);
		execv("/proc/self/exe", args);
		_exit(127);
	}
	for (int i = 0; i < n; i++)
		free(args[3 + i]);
	free(args);
	/* Wait for the socket to answer, or the daemon to give up. */
	for (int i = 0; i < 300; i++) {
		if (cli_ctl_status(name, &st, err, sizeof(err)) == 0) {
			fprintf(stderr, "uraid: %s: array %s started (daemon pid %d, log %s)\n",
			        verb, name, (int)pid, log);
			return 0;
		}
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			FILE *f = fopen(log, "r");
			char line[1024];
			fprintf(stderr, "uraid: %s: the array daemon exited:\n", verb);
			while (f && fgets(line, sizeof(line), f))
				fputs(line, stderr);
			if (f)
				fclose(f);
			return 1;
		}
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGTERM);
	return cli_error(verb, "the array daemon did not answer (log %s)", log);
}
