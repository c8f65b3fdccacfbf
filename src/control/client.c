/* The client side of the control socket (protocol in include/uraid.h): one
 * request to the array running under a name, its reply, and the status and
 * counters decoded. The CLI's verbs use it; public API only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "uraid.h"
#include "util/sockio.h"

static int connect_to(const char *name, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int rc =
	    uraid_run_path(name, ".sock", false, sa.sun_path, sizeof(sa.sun_path), err, errlen);
	if (rc < 0)
		return rc;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		struct stat sb;
		if (e == ENOENT)
			snprintf(err, errlen, "array '%s' is not running (no control socket %s)",
			         name, sa.sun_path);
		else if (e == ECONNREFUSED)
			snprintf(
			    err, errlen,
			    "array '%s' is not running (%s is left from a process that is gone)",
			    name, sa.sun_path);
		else if ((e == EACCES || e == EPERM) && lstat(sa.sun_path, &sb) == 0)
			snprintf(
			    err, errlen,
			    "array '%s': permission denied on its control socket %s (owner uid "
			    "%u, mode %04o; you are uid %u)",
			    name, sa.sun_path, (unsigned)sb.st_uid, (unsigned)(sb.st_mode & 07777),
			    (unsigned)geteuid());
		else
			snprintf(err, errlen, "array '%s': cannot connect to %s: %s", name,
			         sa.sun_path, strerror(e));
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

int uraid_control_request(const char *name, const char *line, const void *payload, size_t plen,
                          char **body, size_t *blen, char *err, size_t errlen)
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

int uraid_control_status(const char *name, struct uraid_status *st, char *err, size_t errlen)
{
	char *body;
	size_t len;
	int rc = uraid_control_request(name, "status", NULL, 0, &body, &len, err, errlen);
	if (rc < 0)
		return rc;
	char e[256];
	rc = uraid_status_decode(body, len, st, e, sizeof(e));
	free(body);
	if (rc < 0)
		snprintf(err, errlen, "array '%s': status: %s", name, e);
	return rc;
}

int uraid_control_stats(const char *name, struct uraid_io_stats *st, char *err, size_t errlen)
{
	char *body;
	size_t len;
	int rc = uraid_control_request(name, "stats", NULL, 0, &body, &len, err, errlen);
	if (rc < 0)
		return rc;
	char e[256];
	rc = uraid_io_stats_decode(body, len, st, e, sizeof(e));
	free(body);
	if (rc < 0)
		snprintf(err, errlen, "array '%s': stats: %s", name, e);
	return rc;
}
