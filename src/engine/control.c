/* Control server: a unix socket that lets other processes (the uraid CLI,
 * later the nbdkit plugin's users) manage a running array. See uraid.h for
 * the protocol. One thread accepts, one thread per connection serves. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "util/errmsg.h"
#include "util/sockio.h"

#define MAX_CLIENTS 64
#define MAX_LINE    4096

struct uraid_control {
	struct uraid_array *a;
	int lfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_t acceptor;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int clients[MAX_CLIENTS]; /* fds of live connections, -1 free */
	int nclients;
	bool stop_requested, closing;
};

struct client {
	struct uraid_control *c;
	int fd;
	char buf[MAX_LINE];
	size_t have; /* bytes buffered beyond what was consumed */
};

/* Next request line (without the newline); 0 at EOF, -1 on error. */
static int read_line(struct client *cl, char *line, size_t len)
{
	for (;;) {
		char *nl = memchr(cl->buf, '\n', cl->have);
		if (nl) {
			size_t n = (size_t)(nl - cl->buf);
			if (n >= len)
				return -1;
			memcpy(line, cl->buf, n);
			line[n] = 0;
			memmove(cl->buf, nl + 1, cl->have - n - 1);
			cl->have -= n + 1;
			return 1;
		}
		if (cl->have == sizeof(cl->buf))
			return -1;
		ssize_t r = recv(cl->fd, cl->buf + cl->have, sizeof(cl->buf) - cl->have, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 && cl->have == 0 ? 0 : -1;
		cl->have += (size_t)r;
	}
}

/* Payload bytes: first what the line reader already buffered. */
static int read_payload(struct client *cl, void *p, size_t len)
{
	char *b = p;
	size_t take = cl->have < len ? cl->have : len;
	memcpy(b, cl->buf, take);
	memmove(cl->buf, cl->buf + take, cl->have - take);
	cl->have -= take;
	b += take;
	len -= take;
	while (len) {
		ssize_t r = recv(cl->fd, b, len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		b += r;
		len -= (size_t)r;
	}
	return 0;
}

static int reply_ok(int fd, const void *body, size_t len)
{
	char hdr[64];
	int n = snprintf(hdr, sizeof(hdr), "OK %zu\n", len);
	int rc = sock_send_all(fd, hdr, (size_t)n);
	if (rc == 0 && len)
		rc = sock_send_all(fd, body, len);
	return rc;
}

static int reply_err(int fd, int rc, const char *msg)
{
	char line[600];
	const char *m = msg && msg[0] ? msg : strerror(-rc);
	int n = snprintf(line, sizeof(line), "ERR %d ", -rc);
	/* one line: newlines in messages become spaces */
	for (const char *p = m; *p && n < (int)sizeof(line) - 2; p++)
		line[n++] = *p == '\n' ? ' ' : *p;
	line[n++] = '\n';
	return sock_send_all(fd, line, (size_t)n);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		return -EINVAL;
	*v = x;
	return 0;
}

/* One request; returns -1 when the connection must close. */
static int serve_one(struct client *cl, char *line)
{
	struct uraid_array *a = cl->c->a;
	char err[512] = "";
	char *argv[4] = {0};
	int argc = 0;
	for (char *save = NULL, *t = strtok_r(line, " ", &save); t && argc < 4;
	     t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	if (argc == 0)
		return reply_err(cl->fd, -EINVAL, "empty request");
	const char *verb = argv[0];
	int rc;
	if (!strcmp(verb, "status")) {
		struct uraid_status *st = malloc(sizeof(*st));
		if (!st)
			return reply_err(cl->fd, -ENOMEM, NULL);
		uraid_status(a, st);
		rc = reply_ok(cl->fd, st, sizeof(*st));
		free(st);
		return rc;
	}
	if (!strcmp(verb, "read") || !strcmp(verb, "write")) {
		uint64_t off, len;
		/* After a bad header the payload cannot be skipped reliably:
		 * answer, then close the connection. */
		const char *bad = NULL;
		if (argc != 3 || parse_u64(argv[1], &off) || parse_u64(argv[2], &len))
			bad = "usage: read|write OFFSET LENGTH";
		else if (len > URAID_CONTROL_MAX_IO)
			bad = "length above the per-request limit";
		if (bad) {
			reply_err(cl->fd, -EINVAL, bad);
			return -1;
		}
		void *buf = eng_alloc(len);
		if (!buf) {
			reply_err(cl->fd, -ENOMEM, NULL);
			return -1;
		}
		if (verb[0] == 'r') {
			rc = uraid_read(a, buf, len, off);
			rc = rc < 0 ? reply_err(cl->fd, rc, NULL) : reply_ok(cl->fd, buf, len);
		} else if (read_payload(cl, buf, len) < 0) {
			rc = -1;
		} else {
			rc = uraid_write(a, buf, len, off);
			rc = rc < 0 ? reply_err(cl->fd, rc, NULL) : reply_ok(cl->fd, NULL, 0);
		}
		free(buf);
		return rc;
	}
	if (!strcmp(verb, "flush"))
		rc = uraid_flush(a);
	else if (!strcmp(verb, "fail") && argc == 2)
		rc = uraid_fail(a, argv[1], err, sizeof(err));
	else if (!strcmp(verb, "remove") && argc == 2)
		rc = uraid_remove(a, argv[1], err, sizeof(err));
	else if (!strcmp(verb, "add") && argc == 2)
		rc = uraid_add(a, argv[1], err, sizeof(err));
	else if (!strcmp(verb, "re-add") && argc == 2) /* bitmap helper */
		rc = uraid_re_add(a, argv[1], err, sizeof(err));
	else if (!strcmp(verb, "check"))
		rc = uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err));
	else if (!strcmp(verb, "repair"))
		rc = uraid_sync_action(a, URAID_SYNC_REPAIR, err, sizeof(err));
	else if (!strcmp(verb, "idle"))
		rc = uraid_sync_action(a, URAID_SYNC_IDLE, err, sizeof(err));
	else if (!strcmp(verb, "speed") && argc == 3) {
		uint64_t mn, mx;
		rc = parse_u64(argv[1], &mn) || parse_u64(argv[2], &mx) ? -EINVAL : 0;
		if (rc == 0)
			uraid_sync_speed(a, mn, mx);
	} else if (!strcmp(verb, "stop")) {
		pthread_mutex_lock(&cl->c->lock);
		cl->c->stop_requested = true;
		pthread_cond_broadcast(&cl->c->cond);
		pthread_mutex_unlock(&cl->c->lock);
		rc = 0;
	} else {
		snprintf(err, sizeof(err), "unknown request '%s' or wrong arguments", verb);
		rc = -EINVAL;
	}
	return rc < 0 ? reply_err(cl->fd, rc, err) : reply_ok(cl->fd, NULL, 0);
}

static void *client_thread(void *arg)
{
	struct client *cl = arg;
	char line[MAX_LINE];
	while (read_line(cl, line, sizeof(line)) > 0)
		if (serve_one(cl, line) < 0)
			break;
	struct uraid_control *c = cl->c;
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (c->clients[i] == cl->fd)
			c->clients[i] = -1;
	close(cl->fd);
	c->nclients--;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	free(cl);
	return NULL;
}

static void *accept_thread(void *arg)
{
	struct uraid_control *c = arg;
	for (;;) {
		struct pollfd pfd = {.fd = c->lfd, .events = POLLIN};
		int pr = poll(&pfd, 1, 200);
		pthread_mutex_lock(&c->lock);
		bool closing = c->closing;
		pthread_mutex_unlock(&c->lock);
		if (closing)
			return NULL;
		if (pr <= 0)
			continue;
		int fd = accept(c->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		struct client *cl = calloc(1, sizeof(*cl));
		pthread_mutex_lock(&c->lock);
		int slot = -1;
		for (int i = 0; i < MAX_CLIENTS && slot < 0; i++)
			if (c->clients[i] < 0)
				slot = i;
		pthread_t t;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (!cl || slot < 0) {
			pthread_mutex_unlock(&c->lock);
			reply_err(fd, -EBUSY, "too many connections");
			close(fd);
			free(cl);
		} else {
			cl->c = c;
			cl->fd = fd;
			c->clients[slot] = fd;
			c->nclients++;
			if (pthread_create(&t, &at, client_thread, cl) != 0) {
				c->clients[slot] = -1;
				c->nclients--;
				close(fd);
				free(cl);
			}
			pthread_mutex_unlock(&c->lock);
		}
		pthread_attr_destroy(&at);
	}
}

int uraid_control_start(struct uraid_array *a, const char *path, struct uraid_control **out,
                        char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path))
		return errmsg(err, errlen, -ENAMETOOLONG, "socket path too long: %s", path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errmsg(err, errlen, -errno, "socket: %s", strerror(errno));
	/* A socket file nobody answers on is left from a crash: replace it. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		return errmsg(err, errlen, -EADDRINUSE, "%s: an array is already served there",
		              path);
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
		int e = errno;
		close(fd);
		return errmsg(err, errlen, -e, "%s: %s", path, strerror(e));
	}
	struct uraid_control *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		unlink(path);
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	}
	c->a = a;
	c->lfd = fd;
	snprintf(c->path, sizeof(c->path), "%s", path);
	for (int i = 0; i < MAX_CLIENTS; i++)
		c->clients[i] = -1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	if (pthread_create(&c->acceptor, NULL, accept_thread, c) != 0) {
		close(fd);
		unlink(path);
		free(c);
		return errmsg(err, errlen, -EAGAIN, "cannot start the control thread");
	}
	*out = c;
	return 0;
}

int uraid_control_wait(struct uraid_control *c, int timeout_ms)
{
	pthread_mutex_lock(&c->lock);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (timeout_ms >= 0) {
		uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)timeout_ms * 1000000ull;
		ts.tv_sec += (time_t)(ns / 1000000000ull);
		ts.tv_nsec = (long)(ns % 1000000000ull);
	}
	int rc = 0;
	while (!c->stop_requested && rc == 0)
		rc = timeout_ms < 0 ? pthread_cond_wait(&c->cond, &c->lock)
		                    : pthread_cond_timedwait(&c->cond, &c->lock, &ts);
	bool stop = c->stop_requested;
	pthread_mutex_unlock(&c->lock);
	return stop ? 0 : -ETIMEDOUT;
}

void uraid_control_close(struct uraid_control *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->closing = true;
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->acceptor, NULL);
	close(c->lfd);
	unlink(c->path);
	pthread_mutex_lock(&c->lock);
	/* Wake connections blocked in recv; a request in progress finishes. */
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (c->clients[i] >= 0)
			shutdown(c->clients[i], SHUT_RD);
	while (c->nclients > 0)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	free(c);
}
