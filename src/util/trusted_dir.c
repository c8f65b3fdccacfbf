/* The rule every trusted directory of uraid's follows (trusted_dir.h):
 * the run directory and overlay directories are acted on as root, so
 * nobody else may be able to change them or what leads to them. Moved here
 * from src/control/rundir.c so the member layer's overlays share it. */
#include "util/trusted_dir.h"
#include "util/errmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Symbolic links followed while resolving the path, as the kernel's limit. */
#define MAX_LINKS 40

/* A symbolic link, or a directory on the way, that someone other than root
 * and the caller could change. */
static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* `path` made absolute with every symbolic link resolved, into out; each
 * link followed must belong to root or the caller (a link of another user
 * could be pointed elsewhere between two uses). A last component that does
 * not exist is kept (it may be created). */
static int resolve(const char *path, const char *what, char *out, size_t outlen, char *err,
                   size_t errlen)
{
	char todo[PATH_MAX * 2], cur[PATH_MAX];
	int links = 0;
	if (path[0] == '/') {
		snprintf(todo, sizeof(todo), "%s", path);
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)))
			return errmsg(err, errlen, -errno, "%s %s: getcwd: %s", what, path,
			              strerror(errno));
		if ((size_t)snprintf(todo, sizeof(todo), "%s/%s", cwd, path) >= sizeof(todo))
			return errmsg(err, errlen, -ENAMETOOLONG, "%s %s: path too long", what,
			              path);
	}
	cur[0] = 0; /* "" stands for "/" */
	char *p = todo;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		char *end = strchr(p, '/');
		size_t clen = end ? (size_t)(end - p) : strlen(p);
		char comp[NAME_MAX + 1];
		if (clen > NAME_MAX)
			return errmsg(err, errlen, -ENAMETOOLONG, "%s %s: name too long", what,
			              path);
		memcpy(comp, p, clen);
		comp[clen] = 0;
		p += clen;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			char *slash = strrchr(cur, '/');
			if (slash)
				*slash = 0;
			continue;
		}
		size_t cl = strlen(cur);
		if (cl + 1 + clen >= sizeof(cur))
			return errmsg(err, errlen, -ENAMETOOLONG, "%s %s: path too long", what,
			              path);
		char next[PATH_MAX + NAME_MAX + 2];
		snprintf(next, sizeof(next), "%s/%s", cur, comp);
		struct stat sb;
		if (lstat(next, &sb) < 0) {
			int e = errno;
			/* Only the last component may be missing. */
			while (*p == '/')
				p++;
			if (e == ENOENT && !*p) {
				memcpy(cur, next, strlen(next) + 1);
				break;
			}
			return errmsg(err, errlen, -e, "%s %s: %s: %s", what, path, next,
			              strerror(e));
		}
		if (!S_ISLNK(sb.st_mode)) {
			memcpy(cur, next, strlen(next) + 1);
			continue;
		}
		if (!trusted_owner(sb.st_uid))
			return errmsg(err, errlen, -EPERM,
			              "%s %s: the symbolic link %s belongs to uid %u, "
			              "not to root or uid %u (the user running uraid), so it could "
			              "be pointed elsewhere",
			              what, path, next, (unsigned)sb.st_uid, (unsigned)geteuid());
		if (++links > MAX_LINKS)
			return errmsg(err, errlen, -ELOOP, "%s %s: too many links", what, path);
		char target[PATH_MAX];
		ssize_t tl = readlink(next, target, sizeof(target) - 1);
		if (tl < 0)
			return errmsg(err, errlen, -errno, "%s %s: readlink %s: %s", what, path,
			              next, strerror(errno));
		target[tl] = 0;
		char rest[PATH_MAX * 2];
		if ((size_t)snprintf(rest, sizeof(rest), "%s/%s", target, p) >= sizeof(rest))
			return errmsg(err, errlen, -ENAMETOOLONG, "%s %s: path too long", what,
			              path);
		memcpy(todo, rest, strlen(rest) + 1);
		p = todo;
		if (target[0] == '/')
			cur[0] = 0;
	}
	if ((size_t)snprintf(out, outlen, "%s", cur[0] ? cur : "/") >= outlen)
		return errmsg(err, errlen, -ENAMETOOLONG, "%s %s: path too long", what, path);
	return 0;
}

/* A directory on the way to the trusted one. */
static int check_parent(int fd, const char *dir, const char *walked, const char *what, char *err,
                        size_t errlen)
{
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		return errmsg(err, errlen, -errno, "%s %s: %s: %s", what, dir, walked,
		              strerror(errno));
	if (!trusted_owner(sb.st_uid))
		return errmsg(err, errlen, -EPERM,
		              "%s %s: %s belongs to uid %u, not to root or uid %u "
		              "(the user running uraid), who could replace the %s",
		              what, dir, walked, (unsigned)sb.st_uid, (unsigned)geteuid(), what);
	if ((sb.st_mode & (S_IWGRP | S_IWOTH)) && !(sb.st_mode & S_ISVTX))
		return errmsg(err, errlen, -EPERM,
		              "%s %s: %s is writable by group or others without the "
		              "sticky bit (mode %04o), so another user could replace the %s",
		              what, dir, walked, (unsigned)(sb.st_mode & 07777), what);
	return 0;
}

/* The directory itself: the caller's alone. */
static int check_final(int fd, const char *dir, const struct trusted_dir_words *w, char *err,
                       size_t errlen)
{
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		return errmsg(err, errlen, -errno, "%s %s: %s", w->what, dir, strerror(errno));
	if (sb.st_uid != geteuid())
		return errmsg(err, errlen, -EPERM,
		              "%s %s belongs to uid %u, not to uid %u (the user running "
		              "uraid); remove it or %s",
		              w->what, dir, (unsigned)sb.st_uid, (unsigned)geteuid(), w->elsewhere);
	if (sb.st_mode & (S_IWGRP | S_IWOTH))
		return errmsg(err, errlen, -EPERM,
		              "%s %s is writable by group or others (mode %04o); "
		              "'chmod 700 %s' or use %s",
		              w->what, dir, (unsigned)(sb.st_mode & 07777), dir, w->another);
	return 0;
}

/* Walk the resolved path from "/" without following links, checking each
 * directory, creating the last one (0700) when asked. */
int trusted_dir_open(const char *path, const struct trusted_dir_words *w, bool create,
                     char *resolved, size_t len, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	const char *what = w->what;
	if (!path || !*path)
		return errmsg(err, errlen, -EINVAL, "%s: empty path", what);
	int rc = resolve(path, what, dir, sizeof(dir), err, errlen);
	if (rc < 0)
		return rc;
	if (resolved && (size_t)snprintf(resolved, len, "%s", dir) >= len)
		return errmsg(err, errlen, -ENAMETOOLONG, "%s %s: path too long", what, dir);
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errmsg(err, errlen, -errno, "/: %s", strerror(errno));
	char walked[PATH_MAX] = "";
	const char *p = dir;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *end = strchr(p, '/');
		size_t clen = end ? (size_t)(end - p) : strlen(p);
		bool last = !end || !end[strspn(end, "/")];
		char comp[NAME_MAX + 1];
		memcpy(comp, p, clen);
		comp[clen] = 0;
		p += clen;
		rc = check_parent(fd, dir, walked[0] ? walked : "/", what, err, errlen);
		if (rc < 0)
			break;
		size_t wl = strlen(walked);
		snprintf(walked + wl, sizeof(walked) - wl, "/%s", comp);
		int next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && last && create) {
			if (mkdirat(fd, comp, 0700) < 0 && errno != EEXIST) {
				rc = errmsg(err, errlen, -errno, "cannot create %s %s: %s", what,
				            dir, strerror(errno));
				break;
			}
			next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0) {
			int e = errno;
			if (e == ENOENT && last)
				rc = errmsg(err, errlen, -e, "%s %s does not exist", what, dir);
			else if (e == ELOOP || e == ENOTDIR)
				rc = errmsg(err, errlen, -e,
				            "%s %s: %s changed or is not a directory", what, dir,
				            walked);
			else
				rc = errmsg(err, errlen, -e, "%s %s: %s: %s", what, dir, walked,
				            strerror(e));
			break;
		}
		close(fd);
		fd = next;
	}
	if (rc == 0)
		rc = check_final(fd, dir, w, err, errlen);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}
