/* Process identity from /proc: start time, executable, arguments. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_proc.h"

unsigned long long proc_start_time(pid_t pid)
{
	if (pid <= 0)
		return 0;
	char p[64], buf[1024];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* "PID (COMM) STATE f4 ... f22": COMM may hold spaces and ')'. */
	char *s = strrchr(buf, ')');
	if (!s || s[1] != ' ')
		return 0;
	s += 2;
	if (*s == 'Z' || *s == 'X')
		return 0;
	/* s is field 3; the start time is field 22. */
	for (int field = 3; field < 22; field++) {
		s = strchr(s, ' ');
		if (!s)
			return 0;
		s++;
	}
	char *end;
	errno = 0;
	unsigned long long t = strtoull(s, &end, 10);
	return errno || end == s ? 0 : t;
}

/* Does /proc/PID/cmdline hold `arg` as one whole argument? */
static bool has_arg(pid_t pid, const char *arg)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/cmdline", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		return false;
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == cap)
			break;
	}
	close(fd);
	buf[n] = 0;
	bool found = false;
	for (size_t i = 0; i < n && !found; i += strlen(buf + i) + 1)
		found = !strcmp(buf + i, arg);
	free(buf);
	return found;
}

enum proc_match proc_check(pid_t pid, unsigned long long start, const char *exe, const char *arg,
                           char *why, size_t whylen)
{
	if (pid <= 0 || start == 0 || proc_start_time(pid) != start)
		return PROC_GONE;
	char p[64], target[PATH_MAX];
	snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(p, target, sizeof(target) - 1);
	if (n < 0) {
		snprintf(why, whylen, "pid %d: cannot read its executable: %s", (int)pid,
		         strerror(errno));
		return PROC_OTHER;
	}
	target[n] = 0;
	char *del = strstr(target, " (deleted)");
	if (del && !del[10])
		*del = 0; /* upgraded while running: still the same program */
	const char *base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strcmp(base, exe)) {
		snprintf(why, whylen, "pid %d runs %s, not %s", (int)pid, target, exe);
		return PROC_OTHER;
	}
	if (arg && !has_arg(pid, arg)) {
		snprintf(why, whylen, "pid %d (%s) was not started with '%s'", (int)pid, target,
		         arg);
		return PROC_OTHER;
	}
	/* Checked once more: the process may have ended while we looked. */
	return proc_start_time(pid) == start ? PROC_SAME : PROC_GONE;
}

void cli_msleep(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}
