/* TEMPORARY: weak stand-ins for the src/member API so src/meta and
 * `uraid examine` link and run before src/member is merged. The real
 * (strong) definitions replace these at link time; delete this file once
 * src/member is in main. Files only, pread/pwrite, no O_DIRECT. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "member/member.h"
#include "util/errmsg.h"

#define WEAK __attribute__((weak))

static int fb_fd(struct member *m)
{
	return (int)(intptr_t)m->priv;
}

static ssize_t fb_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fb_fd(m), buf, len, (off_t)off);
	return n < 0 ? -errno : n;
}

static ssize_t fb_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                         unsigned flags)
{
	ssize_t n = pwrite(fb_fd(m), buf, len, (off_t)off);
	if (n < 0)
		return -errno;
	if ((flags & MEMBER_FUA) && fdatasync(fb_fd(m)) < 0)
		return -errno;
	return n;
}

static int fb_flush(struct member *m)
{
	return fdatasync(fb_fd(m)) < 0 ? -errno : 0;
}

static int fb_discard(struct member *m, uint64_t off, uint64_t len)
{
	return -EOPNOTSUPP;
}

static int fb_getfd(struct member *m)
{
	return fb_fd(m);
}

static void fb_close(struct member *m)
{
	close(fb_fd(m));
}

static const struct member_ops fb_ops = {
    .kind = "file",
    .pread = fb_pread,
    .pwrite = fb_pwrite,
    .flush = fb_flush,
    .discard = fb_discard,
    .fd = fb_getfd,
    .close = fb_close,
};

WEAK int member_open_file(const char *path, unsigned flags, uint64_t size, struct member **out,
                          char *err, size_t errlen)
{
	int oflags = (flags & MEMBER_RDONLY) ? O_RDONLY : O_RDWR;
	if (flags & MEMBER_CREATE)
		oflags |= O_CREAT;
	int fd = open(path, oflags | O_CLOEXEC, 0644);
	if (fd < 0)
		return errmsg(err, errlen, -errno, "%s: %s", path, strerror(errno));
	struct stat st;
	uint64_t bytes = 0;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return errmsg(err, errlen, -e, "%s: %s", path, strerror(e));
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0) {
			int e = errno;
			close(fd);
			return errmsg(err, errlen, -e, "%s: %s", path, strerror(e));
		}
	} else if (S_ISREG(st.st_mode)) {
		bytes = (uint64_t)st.st_size;
		if ((flags & MEMBER_CREATE) && bytes < size) {
			if (ftruncate(fd, (off_t)size) < 0) {
				int e = errno;
				close(fd);
				return errmsg(err, errlen, -e, "%s: %s", path, strerror(e));
			}
			bytes = size;
		}
	} else {
		close(fd);
		return errmsg(err, errlen, -EINVAL, "%s: not a file or block device", path);
	}
	struct member *m = calloc(1, sizeof(*m));
	if (!m) {
		close(fd);
		return errmsg(err, errlen, -ENOMEM, "%s: out of memory", path);
	}
	m->ops = &fb_ops;
	snprintf(m->name, sizeof(m->name), "%s", path);
	m->size = bytes;
	m->logical_block = 512;
	m->readonly = (flags & MEMBER_RDONLY) != 0;
	m->priv = (void *)(intptr_t)fd;
	*out = m;
	return 0;
}

WEAK void member_close(struct member *m)
{
	if (!m)
		return;
	m->ops->close(m);
	free(m);
}

WEAK int member_read(struct member *m, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = m->ops->pread(m, (char *)buf + done, len - done, off + done);
		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO; /* short read before len */
		done += (size_t)n;
	}
	return 0;
}

WEAK int member_write(struct member *m, const void *buf, size_t len, uint64_t off, unsigned flags)
{
	if (m->readonly)
		return -EROFS;
	size_t done = 0;
	while (done < len) {
		ssize_t n =
		    m->ops->pwrite(m, (const char *)buf + done, len - done, off + done, flags);
		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

WEAK int member_flush(struct member *m)
{
	return m->ops->flush(m);
}
