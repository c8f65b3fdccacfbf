/* create --assume-clean's check that the members hold zeros. */
#include "cli/create_zeroes.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define ZBUF (1u << 20)

/* Is [off, off+len) of fd zeros? 1 yes, 0 no (*at: the first non-zero
 * byte), -errno. */
static int range_zero(int fd, unsigned char *buf, uint64_t off, uint64_t len, uint64_t *at)
{
	while (len) {
		size_t n = len < ZBUF ? (size_t)len : ZBUF;
		ssize_t r = pread(fd, buf, n, (off_t)off);
		if (r < 0)
			return -errno;
		if (r == 0)
			return 1;
		for (ssize_t i = 0; i < r; i++)
			if (buf[i]) {
				*at = off + (uint64_t)i;
				return 0;
			}
		off += (uint64_t)r;
		len -= (uint64_t)r;
	}
	return 1;
}

/* Every allocated extent of a regular file. */
static int file_zero(int fd, uint64_t size, unsigned char *buf, uint64_t *at)
{
	uint64_t pos = 0;
	while (pos < size) {
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
		if (d < 0)
			return errno == ENXIO ? 1 : range_zero(fd, buf, pos, size - pos, at);
		off_t h = lseek(fd, d, SEEK_HOLE);
		uint64_t end = h < 0 ? size : (uint64_t)h;
		int rc = range_zero(fd, buf, (uint64_t)d, end - (uint64_t)d, at);
		if (rc <= 0)
			return rc;
		pos = end;
	}
	return 1;
}

static int device_sample(int fd, uint64_t size, unsigned char *buf, uint64_t *at)
{
	uint64_t edge = size < ZBUF ? size : ZBUF;
	int rc = range_zero(fd, buf, 0, edge, at);
	if (rc == 1)
		rc = range_zero(fd, buf, size - edge, edge, at);
	for (int i = 1; rc == 1 && i < 256; i++) {
		uint64_t off = size / 256 * (uint64_t)i / 4096 * 4096;
		rc = range_zero(fd, buf, off, size - off < 4096 ? size - off : 4096, at);
	}
	return rc;
}

int create_members_zero(char *const *paths, int n, char *why, size_t len)
{
	unsigned char *buf = malloc(ZBUF);
	if (!buf)
		return -ENOMEM;
	int rc = 1;
	for (int i = 0; i < n && rc == 1; i++) {
		struct stat st;
		if (stat(paths[i], &st) < 0 && errno == ENOENT)
			continue; /* --size creates it sparse */
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			snprintf(why, len, "cannot read %s: %s", paths[i], strerror(errno));
			break;
		}
		uint64_t at = 0, size = (uint64_t)st.st_size;
		bool dev = S_ISBLK(st.st_mode);
		if (dev && ioctl(fd, BLKGETSIZE64, &size) < 0)
			size = 0;
		rc = dev ? device_sample(fd, size, buf, &at) : file_zero(fd, size, buf, &at);
		close(fd);
		if (rc == 0)
			snprintf(why, len, "%s holds data at byte %llu (%s)", paths[i],
			         (unsigned long long)at,
			         dev ? "a sample of the device was read"
			             : "its allocated extents were read");
		else if (rc < 0)
			snprintf(why, len, "cannot read %s: %s", paths[i], strerror(-rc));
	}
	free(buf);
	return rc;
}
