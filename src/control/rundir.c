/* The run directory ($URAID_RUN_DIR, default /run/uraid) and array names,
 * checked in one place for the CLI and the nbdkit plugin (issue #24).
 *
 * Everything uraid keeps there (control sockets, logs, state files) is
 * acted on as root, so the directory must be one nobody else can change:
 * owned by the caller (root: by root), not writable by group or others, and
 * reached through directories and symbolic links that only root or the
 * caller own, none writable by others unless sticky (so nobody else can
 * rename the run directory away and put their own in its place). Every use
 * checks it again; files in it are opened relative to the checked
 * directory, never following a symbolic link, and created exclusively. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uraid.h"
#include "util/errmsg.h"
#include "util/trusted_dir.h"

int uraid_name_check(const char *name, char *err, size_t errlen)
{
	if (!name || !name[0])
		return errmsg(err, errlen, -EINVAL, "an array name cannot be empty (%s)",
		              URAID_NAME_RULE);
	size_t n = strlen(name);
	if (n > URAID_NAME_MAX)
		return errmsg(err, errlen, -ENAMETOOLONG,
		              "array name '%.20s...' is %zu characters long (%s)", name, n,
		              URAID_NAME_RULE);
	if (name[0] == '.' || name[0] == '-')
		return errmsg(err, errlen, -EINVAL, "array name '%s' starts with '%c' (%s)", name,
		              name[0], URAID_NAME_RULE);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		          (c >= '0' && c <= '9') || strchr("._+-:@", c);
		if (!ok) {
			/* The name may hold anything: show the byte, not the text. */
			if (c > 0x20 && c < 0x7f)
				return errmsg(err, errlen, -EINVAL,
				              "array name '%s' holds the character '%c' (%s)", name,
				              c, URAID_NAME_RULE);
			return errmsg(err, errlen, -EINVAL,
			              "array name holds the byte 0x%02x at position %zu (%s)", c,
			              i + 1, URAID_NAME_RULE);
		}
	}
	return 0;
}

static const char *dir_setting(void)
{
	const char *d = getenv("URAID_RUN_DIR");
	return d && *d ? d : URAID_RUN_DIR_DEFAULT;
}

static const struct trusted_dir_words run_dir_words = {
    .what = "run directory",
    .elsewhere = "set URAID_RUN_DIR to a directory of your own",
    .another = "another URAID_RUN_DIR",
};

/* The run directory, checked (util/trusted_dir.c), created when asked: an
 * O_PATH descriptor of it or a negative errno. */
static int open_dir(bool create, char *path, size_t len, char *err, size_t errlen)
{
	return trusted_dir_open(dir_setting(), &run_dir_words, create, path, len, err, errlen);
}

int uraid_run_dir(bool create, char *path, size_t len, char *err, size_t errlen)
{
	int fd = open_dir(create, path, len, err, errlen);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* NAME+SUFFIX, the file name of an array's entry. */
static int entry_name(const char *name, const char *suffix, char *out, size_t len, char *err,
                      size_t errlen)
{
	int rc = uraid_name_check(name, err, errlen);
	if (rc < 0)
		return rc;
	if (strchr(suffix, '/'))
		return errmsg(err, errlen, -EINVAL, "bad run directory suffix '%s'", suffix);
	if ((size_t)snprintf(out, len, "%s%s", name, suffix) >= len)
		return errmsg(err, errlen, -ENAMETOOLONG, "%s%s: name too long", name, suffix);
	return 0;
}

int uraid_run_path(const char *name, const char *suffix, bool create, char *path, size_t len,
                   char *err, size_t errlen)
{
	char ent[NAME_MAX + 1], dir[PATH_MAX];
	int rc = entry_name(name, suffix, ent, sizeof(ent), err, errlen);
	if (rc < 0)
		return rc;
	rc = uraid_run_dir(create, dir, sizeof(dir), err, errlen);
	if (rc < 0)
		return rc;
	if ((size_t)snprintf(path, len, "%s/%s", dir, ent) >= len)
		return errmsg(err, errlen, -ENAMETOOLONG, "%s/%s: path too long", dir, ent);
	return 0;
}

/* An existing entry we are about to trust: a regular file of the caller's
 * that no one else may write. */
static int check_file(int fd, const char *dir, const char *ent, char *err, size_t errlen)
{
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		return errmsg(err, errlen, -errno, "%s/%s: %s", dir, ent, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return errmsg(err, errlen, -EINVAL, "%s/%s is not a regular file", dir, ent);
	if (sb.st_uid != geteuid())
		return errmsg(err, errlen, -EPERM, "%s/%s belongs to uid %u, not to uid %u", dir,
		              ent, (unsigned)sb.st_uid, (unsigned)geteuid());
	if (sb.st_mode & (S_IWGRP | S_IWOTH))
		return errmsg(err, errlen, -EPERM,
		              "%s/%s is writable by group or others (mode %04o)", dir, ent,
		              (unsigned)(sb.st_mode & 07777));
	return 0;
}

int uraid_run_open(const char *name, const char *suffix, int flags, char *err, size_t errlen)
{
	char ent[NAME_MAX + 1], dir[PATH_MAX];
	int rc = entry_name(name, suffix, ent, sizeof(ent), err, errlen);
	if (rc < 0)
		return rc;
	bool create = flags & O_CREAT;
	int dfd = open_dir(create, dir, sizeof(dir), err, errlen);
	if (dfd < 0)
		return dfd;
	flags |= O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
	if (create) {
		/* A new file every time: whatever had the name (a link planted
		 * there, a file of someone else's) goes, nothing is followed. */
		flags = (flags & ~O_TRUNC) | O_EXCL;
		if (unlinkat(dfd, ent, 0) < 0 && errno != ENOENT) {
			rc = errmsg(err, errlen, -errno, "cannot replace %s/%s: %s", dir, ent,
			            strerror(errno));
			close(dfd);
			return rc;
		}
	}
	int fd = openat(dfd, ent, flags, 0600);
	if (fd < 0) {
		int e = errno;
		close(dfd);
		if (e == ELOOP)
			return errmsg(err, errlen, -e, "%s/%s is a symbolic link: refused", dir,
			              ent);
		return errmsg(err, errlen, -e, "%s/%s: %s", dir, ent, strerror(e));
	}
	close(dfd);
	if (!create && (rc = check_file(fd, dir, ent, err, errlen)) < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int uraid_run_write(const char *name, const char *suffix, const char *text, char *err,
                    size_t errlen)
{
	char ent[NAME_MAX + 1], tmp[NAME_MAX + 1], dir[PATH_MAX];
	int rc = entry_name(name, suffix, ent, sizeof(ent), err, errlen);
	if (rc < 0)
		return rc;
	int dfd = open_dir(true, dir, sizeof(dir), err, errlen);
	if (dfd < 0)
		return dfd;
	/* Built, then renamed over the old one: readers see all or nothing,
	 * and rename replaces a link planted under the name, never follows it. */
	if ((size_t)snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", ent, (int)getpid()) >= sizeof(tmp)) {
		close(dfd);
		return errmsg(err, errlen, -ENAMETOOLONG, "%s: name too long", ent);
	}
	unlinkat(dfd, tmp, 0);
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = errmsg(err, errlen, -errno, "%s/%s: %s", dir, tmp, strerror(errno));
		close(dfd);
		return rc;
	}
	size_t len = strlen(text), done = 0;
	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = errmsg(err, errlen, w < 0 ? -errno : -EIO, "%s/%s: write: %s", dir,
			            tmp, strerror(w < 0 ? errno : EIO));
			break;
		}
		done += (size_t)w;
	}
	if (close(fd) < 0 && rc == 0)
		rc = errmsg(err, errlen, -errno, "%s/%s: %s", dir, tmp, strerror(errno));
	if (rc == 0 && renameat(dfd, tmp, dfd, ent) < 0)
		rc = errmsg(err, errlen, -errno, "rename to %s/%s: %s", dir, ent, strerror(errno));
	if (rc < 0)
		unlinkat(dfd, tmp, 0);
	close(dfd);
	return rc;
}

int uraid_run_read(const char *name, const char *suffix, char *buf, size_t len, char *err,
                   size_t errlen)
{
	if (len == 0)
		return errmsg(err, errlen, -EINVAL, "no room to read into");
	int fd = uraid_run_open(name, suffix, O_RDONLY, err, errlen);
	if (fd < 0)
		return fd;
	size_t n = 0;
	int rc = 0;
	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, len - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = errmsg(err, errlen, -errno, "%s%s: read: %s", name, suffix,
			            strerror(errno));
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	/* A state file that does not fit is not one uraid wrote. */
	char extra;
	if (rc == 0 && n + 1 == len && read(fd, &extra, 1) == 1)
		rc = errmsg(err, errlen, -EFBIG, "%s%s: larger than %zu bytes", name, suffix,
		            len - 1);
	close(fd);
	buf[n] = 0;
	return rc < 0 ? rc : (int)n;
}

int uraid_run_unlink(const char *name, const char *suffix, char *err, size_t errlen)
{
	char ent[NAME_MAX + 1], dir[PATH_MAX];
	int rc = entry_name(name, suffix, ent, sizeof(ent), err, errlen);
	if (rc < 0)
		return rc;
	int dfd = open_dir(false, dir, sizeof(dir), err, errlen);
	if (dfd < 0)
		return dfd;
	rc = 0;
	if (unlinkat(dfd, ent, 0) < 0 && errno != ENOENT)
		rc = errmsg(err, errlen, -errno, "%s/%s: %s", dir, ent, strerror(errno));
	close(dfd);
	return rc;
}
