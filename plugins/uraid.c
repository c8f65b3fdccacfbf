/* nbdkit-uraid-plugin: serve an md array assembled by liburaid over NBD.
 *
 *   nbdkit uraid member=PATH member=PATH ... [readonly=true] [name=NAME]
 *          [control=false] [direct=true] [keep-going=true] [force=true]
 *          [overlay=DIR]
 *
 * overlay=DIR assembles through copy-on-write overlays in DIR
 * (uraid_assemble_overlay): the members are opened read-only and every
 * write goes to an overlay file per member there.
 *
 * One array per nbdkit process, assembled in .after_fork (the engine starts
 * threads, which must not exist when nbdkit forks into the background) after
 * a read-only trial assembly in .get_ready that reports errors to the user
 * while they can still see them. While served, the engine's control server
 * listens on $URAID_RUN_DIR/NAME.sock so `uraid status/fail/add/check/stop
 * NAME` from another shell act on the array; `uraid stop NAME` shuts nbdkit
 * down. The array is stopped cleanly (flushed, marked clean) in .cleanup.
 *
 * nbdkit's plugin API is process-wide by design, so the array state lives in
 * one static struct here; the library itself keeps no global state.
 */
#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "uraid.h"
#include "uraid_geom.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

#define MAX_MEMBERS 256
#define ZERO_BUF    (1u << 20)

static struct {
	/* configuration */
	char *members[MAX_MEMBERS];
	int nmembers;
	bool readonly;
	bool built; /* build=: an array without superblocks (uraid_build) */
	struct uraid_build_opts build;
	bool control;
	bool direct;
	bool keep_going;   /* read-only: unreadable ranges read as zeros */
	bool force;        /* URAID_FORCE: assemble --force's rules */
	int unreadable_fd; /* RUN/NAME.unreadable, -1 when none */
	char name[64];
	char array[256]; /* array=: an ARRAY line of the configuration file */
	char *config;    /* config=FILE (default $URAID_CONFIG, /etc/uraid/uraid.conf) */
	char *overlay;   /* overlay=DIR, resolved; NULL: none */
	/* running */
	struct uraid_array *a;
	struct uraid_status st; /* geometry as assembled (sizes do not change) */
	uint32_t logical_block;
	struct uraid_control *ctl;
	char sock[PATH_MAX]; /* control socket path, removed after the array stopped */
	pthread_t watcher;
	bool watcher_running;
	pthread_mutex_t lock; /* guards `quit` */
	bool quit;
	/* Writes that are not aligned to 512 bytes read, patch and rewrite the
	 * sectors at their edges; they hold this exclusively so no other write
	 * lands between their read and their write. Aligned writes share it. */
	pthread_rwlock_t rmw;
	void *zeros;
} g = {.control = true,
       .unreadable_fd = -1,
       .lock = PTHREAD_MUTEX_INITIALIZER,
       .rmw = PTHREAD_RWLOCK_INITIALIZER};

static void uraid_load(void)
{
	/* Every request allocates buffers of a stripe or more (nbdkit's request
	 * buffer, the engine's stripe buffers). Above glibc's default mmap
	 * threshold each one is a fresh mmap whose pages fault in zeroed and
	 * are unmapped on free: at 1 MiB requests that page-fault churn cost
	 * more than the RAID work. Keep such blocks on the heap instead. */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	/* The process is nbdkit's, the plugin its owner here: members in
	 * memory are mapped only under the SIGBUS guard. */
	if (uraid_member_map_guard_install() < 0)
		nbdkit_debug("uraid: no SIGBUS guard: members in memory stay unmapped");
}

static void uraid_unload(void)
{
	for (int i = 0; i < g.nmembers; i++)
		free(g.members[i]);
	g.nmembers = 0;
	free(g.config);
	g.config = NULL;
	free(g.overlay);
	g.overlay = NULL;
}

static int uraid_config(const char *key, const char *value)
{
	if (!strcmp(key, "member")) {
		if (g.nmembers == MAX_MEMBERS) {
			nbdkit_error("more than %d members", MAX_MEMBERS);
			return -1;
		}
		/* A built array's absent member keeps its place (build=). */
		char *p = !strcmp(value, "missing") || uraid_member_is_remote(value)
		              ? strdup(value)
		              : nbdkit_realpath(value);
		if (!p)
			return -1;
		g.members[g.nmembers++] = p;
	} else if (!strcmp(key, "readonly") || !strcmp(key, "control") || !strcmp(key, "direct") ||
	           !strcmp(key, "keep-going") || !strcmp(key, "force")) {
		int b = nbdkit_parse_bool(value);
		if (b < 0)
			return -1;
		if (key[0] == 'r')
			g.readonly = b;
		else if (key[0] == 'c')
			g.control = b;
		else if (key[0] == 'd')
			g.direct = b;
		else if (key[0] == 'f')
			g.force = b;
		else
			g.keep_going = b;
	} else if (!strcmp(key, "build")) {
		char err[256];
		if (uraid_build_spec_parse(value, &g.build, err, sizeof(err)) < 0) {
			nbdkit_error("build=: %s", err);
			return -1;
		}
		g.built = true;
	} else if (!strcmp(key, "name")) {
		char err[256];
		if (uraid_name_check(value, err, sizeof(err)) < 0) {
			nbdkit_error("name=: %s", err);
			return -1;
		}
		snprintf(g.name, sizeof(g.name), "%s", value);
	} else if (!strcmp(key, "overlay")) {
		/* nbdkit changes directory: made absolute now (the library
		 * checks and resolves it at assembly). */
		char *p = nbdkit_absolute_path(value);
		if (!p)
			return -1;
		free(g.overlay);
		g.overlay = p;
	} else if (!strcmp(key, "array")) {
		snprintf(g.array, sizeof(g.array), "%s", value);
	} else if (!strcmp(key, "config")) {
		free(g.config);
		g.config = nbdkit_realpath(value);
		if (!g.config)
			return -1;
	} else {
		nbdkit_error("unknown parameter '%s'", key);
		return -1;
	}
	return 0;
}

/* array=NAME: its members found through the configuration file, as
 * `uraid assemble NAME` finds them. */
static int members_from_config(void)
{
	struct uraid_config *c;
	char err[4096 + 256];
	if (uraid_config_load(g.config, &c, err, sizeof(err)) < 0) {
		nbdkit_error("array=%s: %s", g.array, err);
		return -1;
	}
	const struct uraid_config_array *a = uraid_config_find(c, g.array);
	if (!a) {
		nbdkit_error("array=%s: no such ARRAY line in %s", g.array, c->file);
		uraid_config_free(c);
		return -1;
	}
	char **paths;
	int n;
	int rc = uraid_config_members(c, a, &paths, &n, err, sizeof(err));
	bool got = rc == 0;
	if (rc == 0 && n == 0) {
		nbdkit_error("array=%s: no member found (%s line %d)", g.array, c->file, a->line);
		rc = -1;
	} else if (rc == 0 && n > MAX_MEMBERS) {
		nbdkit_error("array=%s: more than %d members", g.array, MAX_MEMBERS);
		rc = -1;
	} else if (rc < 0) {
		nbdkit_error("array=%s: %s", g.array, err);
	}
	for (int i = 0; rc == 0 && i < n; i++) {
		g.members[g.nmembers] =
		    uraid_member_is_remote(paths[i]) ? strdup(paths[i]) : realpath(paths[i], NULL);
		if (!g.members[g.nmembers])
			rc = -1;
		else
			g.nmembers++;
	}
	if (rc == 0 && !g.name[0] && a->name[0])
		snprintf(g.name, sizeof(g.name), "%s", a->name);
	if (got)
		uraid_config_paths_free(paths, n);
	uraid_config_free(c);
	return rc < 0 ? -1 : 0;
}

static int uraid_config_complete(void)
{
	if (g.array[0]) {
		if (g.nmembers) {
			nbdkit_error("array= and member= exclude each other");
			return -1;
		}
		if (members_from_config() < 0)
			return -1;
	}
	if (g.nmembers == 0) {
		nbdkit_error("no members: pass member=PATH for each member of the array");
		return -1;
	}
	if (g.built && !g.readonly) {
		nbdkit_error("build= (an array without superblocks) needs readonly=true");
		return -1;
	}
	if (g.keep_going && !g.readonly) {
		/* Zeros in place of data are honest only where nothing is
		 * written over them. */
		nbdkit_error("keep-going=true needs readonly=true");
		return -1;
	}
	return 0;
}

#define uraid_config_help                                                                   \
	"member=PATH       (repeat) member image or device of the md array\n"               \
	"array=NAME        the members of ARRAY NAME in the configuration file\n"           \
	"config=FILE       that file (default $URAID_CONFIG, /etc/uraid/uraid.conf)\n"      \
	"readonly=BOOL     assemble read-only: never write to any member\n"                 \
	"build=SPEC        no superblocks: the geometry (uraid build's, as its daemon\n"    \
	"                  records it); members in role order, 'missing' for absent ones\n" \
	"name=NAME         control socket name (default: the array name)\n"                 \
	"control=BOOL      run the control socket (default true)\n"                         \
	"direct=BOOL       open members with O_DIRECT\n"                                    \
	"keep-going=BOOL   (readonly) ranges no member can supply read as zeros,\n"         \
	"                  each logged and listed in $URAID_RUN_DIR/NAME.unreadable\n"      \
	"force=BOOL        as uraid assemble --force (dropped members forced back in)\n"    \
	"overlay=DIR       members read-only, every write to copy-on-write overlays in DIR"

static unsigned assemble_flags(void)
{
	return (g.readonly ? URAID_RDONLY : 0) | (g.direct ? URAID_DIRECT : 0) |
	       (g.force ? URAID_FORCE : 0);
}

static int assemble(unsigned flags, struct uraid_array **out)
{
	char err[512] = "", warn[2048] = "";
	int rc = g.built
	             ? uraid_build(&g.build, (const char *const *)g.members, g.nmembers, flags, out,
	                           err, sizeof(err))
	             : uraid_assemble_overlay((const char *const *)g.members, g.nmembers, flags,
	                                      g.overlay, out, err, sizeof(err), warn, sizeof(warn));
	if (warn[0])
		nbdkit_debug("uraid: %s", warn);
	if (rc < 0) {
		nbdkit_error("cannot assemble the array: %s", err);
		return -1;
	}
	return 0;
}

/* The name `uraid status NAME` knows the array by: name=, else the md name
 * without its "host:" prefix, else the first member's file name stem; the
 * first that passes uraid_name_check (the CLI's rule, cli_pick_name). */
static int pick_name(const struct uraid_status *st)
{
	char err[256];
	if (g.name[0])
		return 0;
	const char *colon = strchr(st->name, ':');
	snprintf(g.name, sizeof(g.name), "%s", colon ? colon + 1 : st->name);
	if (uraid_name_check(g.name, err, sizeof(err)) == 0)
		return 0;
	const char *b = strrchr(g.members[0], '/');
	b = b ? b + 1 : g.members[0];
	size_t n = strcspn(b[0] == '.' ? b + 1 : b, ".") + (b[0] == '.');
	if (n < sizeof(g.name)) {
		memcpy(g.name, b, n);
		g.name[n] = 0;
		if (uraid_name_check(g.name, err, sizeof(err)) == 0)
			return 0;
	}
	g.name[0] = 0;
	if (g.control) {
		nbdkit_error("no usable array name (%s); pass name=NAME", err);
		return -1;
	}
	return 0;
}

/* Trial run before nbdkit forks: read-only and without the sync thread, so
 * nothing is written and no thread is left behind; errors reach the user. */
static int uraid_get_ready(void)
{
	struct uraid_array *a;
	if (assemble(URAID_RDONLY | URAID_NO_SYNC_THREAD | (assemble_flags() & ~URAID_RDONLY), &a) <
	    0)
		return -1;
	uraid_status(a, &g.st);
	uraid_stop(a);
	if (pick_name(&g.st) < 0)
		return -1;
	g.logical_block = uraid_geom_logical_block((const char *const *)g.members, g.nmembers);
	return 0;
}

static void *watch_stop(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&g.lock);
		bool quit = g.quit;
		pthread_mutex_unlock(&g.lock);
		if (quit)
			return NULL;
		if (uraid_control_wait(g.ctl, 200) == 0) {
			nbdkit_debug("uraid: stop requested on the control socket");
			nbdkit_shutdown();
			return NULL;
		}
	}
}

static bool socket_answers(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(path);
	if (n >= sizeof(sa.sun_path))
		return false;
	memcpy(sa.sun_path, path, n + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

static int start_control(void)
{
	char err[PATH_MAX + 256], rd[PATH_MAX];
	/* Owner and mode checked (and created 0700) by the library. */
	if (uraid_run_dir(true, rd, sizeof(rd), err, sizeof(err)) < 0) {
		nbdkit_error("%s", err);
		return -1;
	}
	/* `uraid stop NAME` returns once NAME.sock is gone, but the control
	 * server removes its socket when it closes, before the array is stopped
	 * (flushed, marked clean). So it listens on a private name that is then
	 * renamed into place, and .cleanup removes NAME.sock only after
	 * uraid_stop: when `uraid stop` returns, the members are final. */
	char tmp[PATH_MAX + 96], final[PATH_MAX + 96];
	snprintf(final, sizeof(final), "%s/%s.sock", rd, g.name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.sock.%d", rd, g.name, (int)getpid());
	if (socket_answers(final)) {
		nbdkit_error("control socket %s: an array named %s is already running", final,
		             g.name);
		return -1;
	}
	if (uraid_control_start(g.a, tmp, &g.ctl, err, sizeof(err)) < 0) {
		nbdkit_error("control socket: %s", err);
		return -1;
	}
	if (rename(tmp, final) < 0) {
		nbdkit_error("control socket: rename %s to %s: %s", tmp, final, strerror(errno));
		uraid_control_close(g.ctl);
		g.ctl = NULL;
		return -1;
	}
	snprintf(g.sock, sizeof(g.sock), "%s", final);
	uraid_control_mdstat(g.ctl, rd, g.name); /* the run directory's mdstat */
	if (pthread_create(&g.watcher, NULL, watch_stop, NULL) != 0) {
		nbdkit_error("cannot start the control watcher thread");
		uraid_control_close(g.ctl);
		g.ctl = NULL;
		return -1;
	}
	g.watcher_running = true;
	return 0;
}

static int uraid_after_fork(void)
{
	g.zeros = calloc(1, ZERO_BUF);
	if (!g.zeros) {
		nbdkit_error("out of memory");
		return -1;
	}
	if (assemble(assemble_flags(), &g.a) < 0)
		return -1;
	uraid_status(g.a, &g.st);
	if (g.keep_going && g.name[0]) {
		char err[256]; /* a new list for this run */
		g.unreadable_fd = uraid_run_open(g.name, ".unreadable",
		                                 O_WRONLY | O_CREAT | O_APPEND, err, sizeof(err));
		if (g.unreadable_fd < 0)
			nbdkit_error("keep-going: no list of unreadable ranges: %s", err);
	}
	if (g.control && start_control() < 0) {
		uraid_stop(g.a);
		g.a = NULL;
		return -1;
	}
	nbdkit_debug("uraid: serving %s (%s, %d members, %llu bytes)", g.name,
	             g.st.level == URAID_LEVEL_LINEAR ? "linear" : "raid", g.st.raid_disks,
	             (unsigned long long)g.st.array_sectors * 512);
	return 0;
}

static void uraid_cleanup(void)
{
	if (g.watcher_running) {
		pthread_mutex_lock(&g.lock);
		g.quit = true;
		pthread_mutex_unlock(&g.lock);
		pthread_join(g.watcher, NULL);
		g.watcher_running = false;
	}
	if (g.ctl) {
		uraid_control_close(g.ctl);
		g.ctl = NULL;
	}
	if (g.a) {
		int rc = uraid_stop(g.a);
		if (rc < 0)
			nbdkit_error("stopping the array: %s", strerror(-rc));
		g.a = NULL;
	}
	if (g.sock[0]) {
		unlink(g.sock);
		g.sock[0] = 0;
	}
	if (g.unreadable_fd >= 0) {
		close(g.unreadable_fd);
		g.unreadable_fd = -1;
	}
	free(g.zeros);
	g.zeros = NULL;
}

static void *uraid_open(int readonly)
{
	(void)readonly;
	/* Every connection shares the one array: the handle only needs to be
	 * non-NULL. */
	return &g;
}

static int64_t uraid_get_size(void *h)
{
	(void)h;
	return (int64_t)uraid_size(g.a);
}

static int uraid_can_write(void *h)
{
	(void)h;
	return !g.readonly;
}

static int uraid_can_flush(void *h)
{
	(void)h;
	return 1;
}

static int uraid_can_fua(void *h)
{
	(void)h;
	/* The engine has no per-write FUA: a FUA write is followed by a full
	 * flush of the members in the same request. */
	return NBDKIT_FUA_NATIVE;
}

static int uraid_can_zero(void *h)
{
	(void)h;
	return 1;
}

static int uraid_can_fast_zero(void *h)
{
	(void)h;
	/* A fast zero is done where every member zeroes what it discards
	 * (uraid_discard_safe); elsewhere it fails at once with the ENOTSUP
	 * the protocol defines. Advertised either way: nbdkit 1.32 aborts on a
	 * FAST_ZERO request from a client that ignores the flags when it is
	 * not (assertion in backend_zero). */
	return 1;
}

static int uraid_can_trim(void *h)
{
	(void)h;
	/* Every level takes discards (uraid_discard): mapped and passed down
	 * for linear/raid0/1/10 and GEOM, whole stripes of raid4/5/6 given
	 * back on members that zero what they discard, zeros written there
	 * elsewhere. */
	return !g.readonly;
}

static int uraid_can_multi_conn(void *h)
{
	(void)h;
	/* All connections share one array handle in this process, the engine
	 * writes to the members before a request completes (no write-back cache
	 * of its own), and a flush fsyncs every member: a flush on any
	 * connection therefore covers writes completed on all of them. */
	return 1;
}

static int uraid_block_size(void *h, uint32_t *minimum, uint32_t *preferred, uint32_t *maximum)
{
	(void)h;
	uraid_geom_block_size(&g.st, g.logical_block, minimum, preferred, maximum, NULL);
	return 0;
}

static int fail(int rc, const char *what, uint32_t count, uint64_t offset)
{
	nbdkit_error("%s of %u bytes at %llu: %s", what, count, (unsigned long long)offset,
	             strerror(-rc));
	nbdkit_set_error(-rc);
	return -1;
}

/* The array's I/O unit: 512, or a graid3's provider sector (a power of two). */
static uint64_t unit(void)
{
	return g.st.block_bytes > 512 ? g.st.block_bytes : 512;
}

static bool aligned(uint32_t count, uint64_t offset)
{
	return count % unit() == 0 && offset % unit() == 0;
}

/* A request not aligned to the I/O unit: widen it to whole units. */
static void widen(uint32_t count, uint64_t offset, uint64_t *woff, size_t *wlen)
{
	uint64_t u = unit();
	*woff = offset / u * u;
	*wlen = (size_t)((offset + count + u - 1) / u * u - *woff);
}

/* keep-going: a range no member can supply, as zeros, on the record (the
 * log, and RUN/NAME.unreadable: "OFFSET LENGTH" per line). */
static void unreadable(uint64_t off, uint64_t len)
{
	nbdkit_error("keep-going: array bytes %llu..%llu unreadable on every member and not "
	             "rebuildable: returned as zeros",
	             (unsigned long long)off, (unsigned long long)(off + len - 1));
	if (g.unreadable_fd < 0)
		return;
	char line[64];
	int n = snprintf(line, sizeof(line), "%llu %llu\n", (unsigned long long)off,
	                 (unsigned long long)len);
	if (write(g.unreadable_fd, line, (size_t)n) != n) /* O_APPEND: one line at a time */
		nbdkit_error("keep-going: cannot record the range: %s", strerror(errno));
}

/* uraid_read, and with keep-going an EIO read again unit by unit. */
static int array_read(void *buf, size_t len, uint64_t off)
{
	int rc = uraid_read(g.a, buf, len, off);
	if (rc != -EIO || !g.keep_going)
		return rc;
	uint64_t u = unit(), bad = 0, nbad = 0;
	for (size_t done = 0; done < len; done += u) {
		rc = uraid_read(g.a, (char *)buf + done, u, off + done);
		if (rc == -EIO) {
			memset((char *)buf + done, 0, u);
			if (!nbad)
				bad = off + done;
			nbad += u;
			continue;
		}
		if (nbad)
			unreadable(bad, nbad);
		nbad = 0;
		if (rc < 0)
			return rc;
	}
	if (nbad)
		unreadable(bad, nbad);
	return 0;
}

static int uraid_pread(void *h, void *buf, uint32_t count, uint64_t offset, uint32_t flags)
{
	(void)h;
	(void)flags;
	if (aligned(count, offset)) {
		int rc = array_read(buf, count, offset);
		return rc < 0 ? fail(rc, "read", count, offset) : 0;
	}
	uint64_t woff;
	size_t wlen;
	widen(count, offset, &woff, &wlen);
	char *b = malloc(wlen);
	if (!b)
		return fail(-ENOMEM, "read", count, offset);
	int rc = array_read(b, wlen, woff);
	if (rc == 0)
		memcpy(buf, b + (offset - woff), count);
	free(b);
	return rc < 0 ? fail(rc, "read", count, offset) : 0;
}

static int write_locked(const void *buf, uint32_t count, uint64_t offset)
{
	if (aligned(count, offset)) {
		pthread_rwlock_rdlock(&g.rmw);
		int rc = uraid_write(g.a, buf, count, offset);
		pthread_rwlock_unlock(&g.rmw);
		return rc;
	}
	uint64_t woff;
	size_t wlen;
	widen(count, offset, &woff, &wlen);
	char *b = malloc(wlen);
	if (!b)
		return -ENOMEM;
	pthread_rwlock_wrlock(&g.rmw);
	/* Only the edge sectors carry old bytes, but the whole range is read:
	 * unaligned writes are rare (clients see the minimum block size). */
	int rc = uraid_read(g.a, b, wlen, woff);
	if (rc == 0) {
		memcpy(b + (offset - woff), buf, count);
		rc = uraid_write(g.a, b, wlen, woff);
	}
	pthread_rwlock_unlock(&g.rmw);
	free(b);
	return rc;
}

static int uraid_pwrite(void *h, const void *buf, uint32_t count, uint64_t offset, uint32_t flags)
{
	(void)h;
	int rc = write_locked(buf, count, offset);
	if (rc == 0 && (flags & NBDKIT_FLAG_FUA))
		rc = uraid_flush(g.a);
	return rc < 0 ? fail(rc, "write", count, offset) : 0;
}

/* Zeros written over [off, off+left) through the unaligned-write path. */
static int zero_by_write(uint64_t off, uint32_t left)
{
	int rc = 0;
	while (left && rc == 0) {
		uint32_t n = left < ZERO_BUF ? left : ZERO_BUF;
		/* Keep the pieces aligned after an unaligned start. */
		if (n == ZERO_BUF && off % unit())
			n -= (uint32_t)(off % unit());
		rc = write_locked(g.zeros, n, off);
		off += n;
		left -= n;
	}
	return rc;
}

/* The whole blocks of [offset, offset+count) through uraid_write_zeroes,
 * or uraid_discard for a trim (under the read side of the RMW lock, as an
 * aligned write), the edges written as zeros unless it is a trim (which
 * may leave them). */
static int zero_range(uint32_t count, uint64_t offset, unsigned zflags, bool discard)
{
	bool edges = !discard;
	uint64_t u = unit(), first = (offset + u - 1) / u * u, end = offset + count;
	uint64_t last = end / u * u;
	if (first >= last)
		return edges ? zero_by_write(offset, count) : 0;
	int rc = 0;
	if (edges && first > offset)
		rc = zero_by_write(offset, (uint32_t)(first - offset));
	if (rc == 0 && edges && end > last)
		rc = zero_by_write(last, (uint32_t)(end - last));
	if (rc == 0) {
		pthread_rwlock_rdlock(&g.rmw);
		rc = discard ? uraid_discard(g.a, first, last - first)
		             : uraid_write_zeroes(g.a, first, last - first, zflags);
		pthread_rwlock_unlock(&g.rmw);
	}
	return rc;
}

static int uraid_zero(void *h, uint32_t count, uint64_t offset, uint32_t flags)
{
	(void)h;
	unsigned zflags = (flags & NBDKIT_FLAG_MAY_TRIM ? URAID_ZERO_MAY_TRIM : 0) |
	                  (flags & NBDKIT_FLAG_FAST_ZERO ? URAID_ZERO_FAST : 0);
	/* A fast zero fails before anything is written. */
	if ((flags & NBDKIT_FLAG_FAST_ZERO) && !uraid_discard_safe(g.a)) {
		nbdkit_set_error(ENOTSUP);
		return -1;
	}
	int rc = zero_range(count, offset, zflags, false);
	if (rc == -ENOTSUP && (flags & NBDKIT_FLAG_FAST_ZERO)) {
		nbdkit_set_error(ENOTSUP);
		return -1;
	}
	if (rc == 0 && (flags & NBDKIT_FLAG_FUA))
		rc = uraid_flush(g.a);
	return rc < 0 ? fail(rc, "zero", count, offset) : 0;
}

/* A trim: uraid_discard, the array's space given back where the members
 * can; whole blocks only (a trim promises nothing about what reads back). */
static int uraid_trim(void *h, uint32_t count, uint64_t offset, uint32_t flags)
{
	(void)h;
	int rc = zero_range(count, offset, 0, true);
	if (rc == 0 && (flags & NBDKIT_FLAG_FUA))
		rc = uraid_flush(g.a);
	return rc < 0 ? fail(rc, "trim", count, offset) : 0;
}

static int uraid_flush_cb(void *h, uint32_t flags)
{
	(void)h;
	(void)flags;
	int rc = uraid_flush(g.a);
	return rc < 0 ? fail(rc, "flush", 0, 0) : 0;
}

static void uraid_dump_plugin(void)
{
	printf("uraid_version=%s\n", URAID_VERSION);
}

static struct nbdkit_plugin plugin = {
    .name = "uraid",
    .longname = "uraid: Linux md compatible software RAID in user space",
    .version = URAID_VERSION,
    .description = "Serve an md array (linear, raid0/1/4/5/6/10), a FreeBSD gmirror or graid3 "
                   "assembled from its members",
    .load = uraid_load,
    .unload = uraid_unload,
    .config = uraid_config,
    .config_complete = uraid_config_complete,
    .config_help = uraid_config_help,
    .magic_config_key = "member",
    .get_ready = uraid_get_ready,
    .after_fork = uraid_after_fork,
    .cleanup = uraid_cleanup,
    .open = uraid_open,
    .get_size = uraid_get_size,
    .can_write = uraid_can_write,
    .can_flush = uraid_can_flush,
    .can_fua = uraid_can_fua,
    .can_zero = uraid_can_zero,
    .can_fast_zero = uraid_can_fast_zero,
    .can_trim = uraid_can_trim,
    .can_multi_conn = uraid_can_multi_conn,
    .block_size = uraid_block_size,
    .pread = uraid_pread,
    .pwrite = uraid_pwrite,
    .zero = uraid_zero,
    .trim = uraid_trim,
    .flush = uraid_flush_cb,
    .dump_plugin = uraid_dump_plugin,
    .errno_is_preserved = 0,
};

NBDKIT_REGISTER_PLUGIN(plugin)
