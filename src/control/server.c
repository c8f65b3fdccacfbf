/* Control server: a unix socket that lets other processes (the uraid CLI,
 * later the nbdkit plugin's users) manage a running array. See uraid.h for
 * the protocol. One thread accepts, one thread per connection serves.
 *
 * Clients are not trusted: lines and payloads are bounded, every number is
 * parsed strictly, a request that cannot be framed closes the connection
 * after its ERR, and a client that stalls is dropped after the timeout
 * (socket receive/send timeouts), so at most MAX_CLIENTS threads can be held
 * and none forever. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control/remote_watch.h"
#include "uraid.h"
#include "util/errmsg.h"
#include "util/sockio.h"

#define MAX_CLIENTS        64
#define MAX_LINE           URAID_CONTROL_MAX_LINE
#define MAX_ARGS           6
#define DEFAULT_TIMEOUT_MS 30000

struct uraid_control {
	struct uraid_array *a;
	int lfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_t acceptor;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int clients[MAX_CLIENTS]; /* fds of live connections, -1 free */
	int nclients;
	int timeout_ms;
	uint64_t io_inflight; /* read/write buffer bytes held by connections */
	bool stop_requested, closing;
	/* uraid_control_mdstat: where to publish, and the text last published */
	char *mdstat_dir, *mdstat_name, *mdstat;
	struct remote_watch *remote; /* remote members' reconnect policy */
};

/* Keep this array's part of the run directory's mdstat current: called
 * from the accept loop (every 200 ms), written only when it changed. */
static void mdstat_tick(struct uraid_control *c)
{
	pthread_mutex_lock(&c->lock);
	bool on = c->mdstat_name != NULL;
	pthread_mutex_unlock(&c->lock);
	if (!on)
		return;
	struct uraid_status st;
	char *text = malloc(URAID_MDSTAT_TEXT_MAX);
	if (!text || uraid_status(c->a, &st) < 0) {
		free(text);
		return;
	}
	if (uraid_mdstat_format(c->mdstat_name, &st, text, URAID_MDSTAT_TEXT_MAX) < 0 ||
	    (c->mdstat && !strcmp(c->mdstat, text)) ||
	    uraid_mdstat_publish(c->mdstat_dir, c->mdstat_name, text) < 0) {
		free(text);
		return;
	}
	free(c->mdstat);
	c->mdstat = text;
}

/* All connections together hold at most this much request buffer: 64
 * clients asking for 16 MiB each would otherwise pin 1 GiB. */
#define IO_BUDGET (4ull * URAID_CONTROL_MAX_IO)

static void io_budget_take(struct uraid_control *c, uint64_t len)
{
	pthread_mutex_lock(&c->lock);
	while (c->io_inflight && c->io_inflight + len > IO_BUDGET && !c->closing)
		pthread_cond_wait(&c->cond, &c->lock);
	c->io_inflight += len;
	pthread_mutex_unlock(&c->lock);
}

static void io_budget_put(struct uraid_control *c, uint64_t len)
{
	pthread_mutex_lock(&c->lock);
	c->io_inflight -= len;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

struct client {
	struct uraid_control *c;
	int fd;
	char buf[MAX_LINE];
	size_t have; /* bytes buffered beyond what was consumed */
};

/* Next request line (without the newline) and its length; 0 at EOF, -1 on
 * error or timeout, -2 when no newline comes within MAX_LINE bytes. */
static int read_line(struct client *cl, char *line, size_t len, size_t *linelen)
{
	for (;;) {
		char *nl = memchr(cl->buf, '\n', cl->have);
		if (nl) {
			size_t n = (size_t)(nl - cl->buf);
			if (n >= len)
				return -2;
			memcpy(line, cl->buf, n);
			line[n] = 0;
			*linelen = n;
			memmove(cl->buf, nl + 1, cl->have - n - 1);
			cl->have -= n + 1;
			return 1;
		}
		if (cl->have == sizeof(cl->buf))
			return -2;
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
	if (*s < '0' || *s > '9') /* strtoull would take "-1", " 1", "+1" */
		return -EINVAL;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || end == s || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

static int reply_text(int fd, int rc, char *text)
{
	if (rc < 0) {
		free(text);
		return reply_err(fd, rc, "cannot encode the reply");
	}
	rc = reply_ok(fd, text, (size_t)rc);
	free(text);
	return rc;
}

/* read/write: their header frames the payload, so a bad one ends the
 * connection after the answer. */
static int serve_io(struct client *cl, char **argv, int argc)
{
	struct uraid_array *a = cl->c->a;
	uint64_t off, len;
	const char *bad = NULL;
	if (argc != 3 || parse_u64(argv[1], &off) || parse_u64(argv[2], &len))
		bad = "usage: read|write OFFSET LENGTH (decimal bytes)";
	else if (len > URAID_CONTROL_MAX_IO)
		bad = "length above the per-request limit (16 MiB)";
	if (bad) {
		reply_err(cl->fd, -EINVAL, bad);
		return -1;
	}
	io_budget_take(cl->c, len);
	/* Page-aligned: the array may pass it to O_DIRECT members. */
	void *buf = NULL;
	if (posix_memalign(&buf, 4096, len ? len : 1) != 0)
		buf = NULL;
	if (!buf) {
		io_budget_put(cl->c, len);
		reply_err(cl->fd, -ENOMEM, NULL);
		return -1;
	}
	int rc;
	if (argv[0][0] == 'r') {
		rc = uraid_read(a, buf, len, off);
		rc = rc < 0 ? reply_err(cl->fd, rc, NULL) : reply_ok(cl->fd, buf, len);
	} else if (read_payload(cl, buf, len) < 0) {
		rc = -1; /* the client went away or stalled */
	} else {
		rc = uraid_write(a, buf, len, off);
		const char *why = NULL;
		struct uraid_status *st = rc == -EROFS ? malloc(sizeof(*st)) : NULL;
		if (st && uraid_status(a, st) == 0 && st->journal == 2)
			why = "writes refused: the write journal is missing or failed (uraid "
			      "add-journal NAME DEV)";
		rc = rc < 0 ? reply_err(cl->fd, rc, why) : reply_ok(cl->fd, NULL, 0);
		free(st);
	}
	free(buf);
	io_budget_put(cl->c, len);
	return rc;
}

/* One request; returns -1 when the connection must close. */
static int serve_one(struct client *cl, char *line, size_t linelen)
{
	struct uraid_array *a = cl->c->a;
	char err[512] = "";
	if (memchr(line, 0, linelen))
		return reply_err(cl->fd, -EINVAL, "NUL byte in the request");
	/* GEOM verbs: the rest of the line is one request for uraid_geom_ctl. */
	if (!strncmp(line, "geom ", 5)) {
		int rc = uraid_geom_ctl(a, line + 5, err, sizeof(err));
		return rc < 0 ? reply_err(cl->fd, rc, err) : reply_ok(cl->fd, NULL, 0);
	}
	char *argv[MAX_ARGS] = {0};
	int argc = 0;
	for (char *save = NULL, *t = strtok_r(line, " ", &save); t;
	     t = strtok_r(NULL, " ", &save)) {
		if (argc == MAX_ARGS) {
			bool io = !strcmp(argv[0], "read") || !strcmp(argv[0], "write");
			reply_err(cl->fd, -EINVAL, "too many arguments");
			return io ? -1 : 0;
		}
		argv[argc++] = t;
	}
	if (argc == 0)
		return reply_err(cl->fd, -EINVAL, "empty request");
	const char *verb = argv[0];
	if (!strcmp(verb, "read") || !strcmp(verb, "write"))
		return serve_io(cl, argv, argc);
	/* Arguments arrive %-escaped; decode in place (never longer). */
	for (int i = 1; i < argc; i++)
		if (uraid_ctl_unescape(argv[i], strlen(argv[i]), argv[i], strlen(argv[i]) + 1) < 0)
			return reply_err(cl->fd, -EINVAL, "bad %-escape in an argument");
	int rc;
	if (!strcmp(verb, "hello") && argc == 1)
		return reply_ok(cl->fd, "uraid-control 1\n", 16);
	if (!strcmp(verb, "status") && argc == 1) {
		struct uraid_status *st = malloc(sizeof(*st));
		char *text = malloc(URAID_STATUS_TEXT_MAX);
		if (!st || !text) {
			free(st);
			free(text);
			return reply_err(cl->fd, -ENOMEM, NULL);
		}
		uraid_status(a, st);
		rc = uraid_status_encode(st, text, URAID_STATUS_TEXT_MAX);
		free(st);
		return reply_text(cl->fd, rc, text);
	}
	if (!strcmp(verb, "stats") && argc == 1) {
		struct uraid_io_stats io;
		char *text = malloc(4096);
		if (!text)
			return reply_err(cl->fd, -ENOMEM, NULL);
		uraid_io_stats(a, &io);
		return reply_text(cl->fd, uraid_io_stats_encode(&io, text, 4096), text);
	}
	if (!strcmp(verb, "flush") && argc == 1) {
		rc = uraid_flush(a);
	} else if (!strcmp(verb, "fail") && argc == 2) {
		rc = uraid_fail(a, argv[1], err, sizeof(err));
	} else if (!strcmp(verb, "remove") && argc == 2) {
		rc = uraid_remove(a, argv[1], err, sizeof(err));
	} else if (!strcmp(verb, "add") && argc == 2) {
		rc = uraid_add(a, argv[1], err, sizeof(err));
	} else if (!strcmp(verb, "re-add") && argc == 2) { /* bitmap: dirty chunks only */
		rc = uraid_re_add(a, argv[1], err, sizeof(err));
	} else if (!strcmp(verb, "replace") && argc == 3) {
		rc = uraid_replace(a, argv[1], argv[2], err, sizeof(err));
	} else if (!strcmp(verb, "add-journal") && argc == 2) { /* write journal */
		rc = uraid_journal_add(a, argv[1], err, sizeof(err));
	} else if (!strcmp(verb, "journal-mode") && argc == 2) {
		rc = uraid_journal_mode(
		    a,
		    !strcmp(argv[1], "wb") || !strcmp(argv[1], "write-back") ? URAID_JOURNAL_WB
		    : !strcmp(argv[1], "wt") || !strcmp(argv[1], "write-through")
		        ? URAID_JOURNAL_WT
		        : (enum uraid_journal_mode) - 1,
		    err, sizeof(err));
	} else if (!strcmp(verb, "consistency-policy") && argc == 2) {
		rc = uraid_consistency_policy(a,
		                              !strcmp(argv[1], "ppl") ? URAID_POLICY_PPL
		                              : !strcmp(argv[1], "resync")
		                                  ? URAID_POLICY_RESYNC
		                                  : (enum uraid_consistency_policy) - 1,
		                              err, sizeof(err));
	} else if (!strcmp(verb, "check") && argc == 1) {
		rc = uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err));
	} else if (!strcmp(verb, "repair") && argc == 1) {
		rc = uraid_sync_action(a, URAID_SYNC_REPAIR, err, sizeof(err));
	} else if (!strcmp(verb, "idle") && argc == 1) {
		rc = uraid_sync_action(a, URAID_SYNC_IDLE, err, sizeof(err));
	} else if (!strcmp(verb, "frozen") && argc == 1) { /* md's sync_action words */
		rc = uraid_sync_freeze(a, true, err, sizeof(err));
	} else if ((!strcmp(verb, "resync") || !strcmp(verb, "recover")) && argc == 1) {
		rc = uraid_sync_freeze(a, false, err, sizeof(err));
	} else if (!strcmp(verb, "readonly") && argc == 1) { /* md's array_state */
		rc = uraid_set_readonly(a, URAID_RO, err, sizeof(err));
	} else if (!strcmp(verb, "read-auto") && argc == 1) {
		rc = uraid_set_readonly(a, URAID_RO_AUTO, err, sizeof(err));
	} else if (!strcmp(verb, "readwrite") && argc == 1) {
		rc = uraid_set_readonly(a, URAID_RW, err, sizeof(err));
	} else if (!strcmp(verb, "add-spare") && argc == 2) { /* never a re-add */
		rc = uraid_add_spare(a, argv[1], err, sizeof(err));
	} else if (!strcmp(verb, "add-flags") && argc == 3) { /* URAID_ADD_* flags, member */
		uint64_t f;
		rc = parse_u64(argv[1], &f) || f > 7 ? -EINVAL : 0;
		if (rc == 0)
			rc = uraid_add_flags(a, argv[2], (unsigned)f, err, sizeof(err));
		else
			snprintf(err, sizeof(err), "usage: add-flags FLAGS MEMBER");
	} else if (!strcmp(verb, "speed") && argc == 3) {
		uint64_t mn, mx;
		rc = parse_u64(argv[1], &mn) || parse_u64(argv[2], &mx) ? -EINVAL : 0;
		if (rc == 0)
			uraid_sync_speed(a, mn, mx);
		else
			snprintf(err, sizeof(err), "usage: speed MIN_KIBS MAX_KIBS");
	} else if (!strcmp(verb, "stripe-cache") && argc == 2) {
		uint64_t n;
		rc = parse_u64(argv[1], &n) || n > URAID_STRIPE_CACHE_MAX ? -EINVAL : 0;
		if (rc == 0)
			rc = uraid_set_stripe_cache(a, (unsigned)n);
		if (rc == -EINVAL)
			snprintf(err, sizeof(err),
			         "stripe cache: a size 0..%u for raid4/5/6 arrays only",
			         URAID_STRIPE_CACHE_MAX);
		else if (rc == -EROFS)
			snprintf(err, sizeof(err), "stripe cache: the array is read-only");
	} else if (!strcmp(verb, "grow") && argc == 3) { /* uraid grow: changes moving no data */
		static const struct {
			const char *w;
			enum uraid_grow_what what;
		} grows[] = {{"bitmap-internal", URAID_GROW_BITMAP_INTERNAL},
		             {"bitmap-none", URAID_GROW_BITMAP_NONE},
		             {"size", URAID_GROW_SIZE},
		             {"array-size", URAID_GROW_ARRAY_SIZE},
		             {"raid-devices", URAID_GROW_RAID_DISKS}};
		uint64_t v;
		rc = -EINVAL;
		snprintf(err, sizeof(err), "usage: grow WHAT NUMBER");
		for (size_t k = 0; k < sizeof(grows) / sizeof(grows[0]); k++)
			if (!strcmp(argv[1], grows[k].w) && !parse_u64(argv[2], &v))
				rc = uraid_grow(a, grows[k].what, v, err, sizeof(err));
	} else if (!strcmp(verb, "grow-add") && argc == 2) { /* linear: append a member */
		rc = uraid_grow_add(a, argv[1], err, sizeof(err));
	} else if (!strcmp(verb, "takeover") && argc == 4) { /* md level change, no data moved */
		uint64_t l, lay = UINT32_MAX, n;
		rc = parse_u64(argv[1], &l) || l > 10 ||
		             (strcmp(argv[2], "any") &&
		              (parse_u64(argv[2], &lay) || lay > UINT32_MAX)) ||
		             parse_u64(argv[3], &n) || n > 4096
		         ? -EINVAL
		         : 0;
		if (rc == 0)
			rc = uraid_takeover(a, (int)l, (uint32_t)lay, (int)n, err, sizeof(err));
		else
			snprintf(err, sizeof(err), "usage: takeover LEVEL LAYOUT|any N");
	} else if ((!strcmp(verb, "reshape") || !strcmp(verb, "reshape-force")) && argc >= 4 &&
	           argc <= 6) {
		/* reshape RAID_DISKS LAYOUT CHUNK_SECTORS [LEVEL [BACKUP_FILE]]
		 * (0, -1, 0, 0: unchanged; the file's absolute path, escaped);
		 * reshape-force: mdadm's --force (uraid_reshape_opts.force) */
		char *e1, *e2, *e3, *e4 = "";
		long nd = strtol(argv[1], &e1, 10), lay = strtol(argv[2], &e2, 10);
		unsigned long ch = strtoul(argv[3], &e3, 10);
		long lv = argc >= 5 ? strtol(argv[4], &e4, 10) : 0;
		struct uraid_reshape_opts o = {.raid_disks = (int)nd,
		                               .layout = (int)lay,
		                               .chunk_sectors = (uint32_t)ch,
		                               .level = (int)lv,
		                               .backup_file = argc == 6 ? argv[5] : NULL,
		                               .force = verb[7] == '-'};
		if (*e1 || *e2 || *e3 || *e4 || nd < 0 || nd > 4096 || lay < -1 ||
		    ch > UINT32_MAX || lv < 0 || (lv > 10 && lv != URAID_RESHAPE_TO_RAID0)) {
			rc = -EINVAL;
			snprintf(
			    err, sizeof(err),
			    "usage: reshape RAID_DISKS LAYOUT CHUNK_SECTORS [LEVEL [BACKUP_FILE]]");
		} else {
			rc = uraid_array_reshape_start(a, &o, err, sizeof(err));
		}
	} else if (!strcmp(verb, "stop") && argc == 1) {
		pthread_mutex_lock(&cl->c->lock);
		cl->c->stop_requested = true;
		pthread_cond_broadcast(&cl->c->cond);
		pthread_mutex_unlock(&cl->c->lock);
		rc = 0;
	} else {
		char e[64];
		uraid_ctl_escape(verb, e, sizeof(e));
		snprintf(err, sizeof(err), "unknown request '%s' or wrong number of arguments", e);
		rc = -EINVAL;
	}
	return rc < 0 ? reply_err(cl->fd, rc, err) : reply_ok(cl->fd, NULL, 0);
}

static void *client_thread(void *arg)
{
	struct client *cl = arg;
	char line[MAX_LINE];
	size_t n;
	for (;;) {
		int r = read_line(cl, line, sizeof(line), &n);
		if (r == -2)
			reply_err(cl->fd, -EINVAL,
			          "request line too long (no newline within 4096 bytes)");
		if (r <= 0 || serve_one(cl, line, n) < 0)
			break;
	}
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
		mdstat_tick(c);
		if (pr <= 0)
			continue;
		int fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			/* EMFILE and friends: the listening socket stays readable,
			 * do not spin on it. */
			struct timespec pause = {0, 10 * 1000 * 1000};
			nanosleep(&pause, NULL);
			continue;
		}
		pthread_mutex_lock(&c->lock);
		int tmo = c->timeout_ms;
		pthread_mutex_unlock(&c->lock);
		struct timeval tv = {tmo / 1000, (tmo % 1000) * 1000};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
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
	/* Owner only: the socket can add members (and so write superblocks
	 * on any file the daemon may open) and read or write the array. */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0600) < 0 ||
	    listen(fd, 16) < 0) {
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
	c->timeout_ms = DEFAULT_TIMEOUT_MS;
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

void uraid_control_set_timeout(struct uraid_control *c, int timeout_ms)
{
	if (timeout_ms <= 0)
		return;
	pthread_mutex_lock(&c->lock);
	c->timeout_ms = timeout_ms;
	pthread_mutex_unlock(&c->lock);
}

void uraid_control_mdstat(struct uraid_control *c, const char *dir, const char *name)
{
	char *d = strdup(dir), *n = strdup(name);
	pthread_mutex_lock(&c->lock);
	if (d && n && !c->mdstat_name) {
		c->mdstat_dir = d;
		c->mdstat_name = n; /* set last: the acceptor reads it under the lock */
		d = n = NULL;
		if (!c->remote)
			c->remote = remote_watch_start(c->a, name);
	}
	pthread_mutex_unlock(&c->lock);
	free(d);
	free(n);
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
	remote_watch_stop(c->remote);
	close(c->lfd);
	unlink(c->path);
	if (c->mdstat)
		uraid_mdstat_publish(c->mdstat_dir, c->mdstat_name, NULL);
	free(c->mdstat);
	free(c->mdstat_dir);
	free(c->mdstat_name);
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
