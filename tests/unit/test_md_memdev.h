/* A member over a caller's buffer: the test double the md superblock tests
 * store to and load from. Reads stop at the end of the buffer; a write at or
 * past the end fails with -ENOSPC and one that crosses it is cut short. */
#ifndef URAID_TEST_MD_MEMDEV_H
#define URAID_TEST_MD_MEMDEV_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "member/member.h"

struct memdev {
	struct member m;
	uint8_t *buf;
};

static ssize_t memdev_pread(struct member *m, void *b, size_t len, uint64_t off)
{
	struct memdev *d = (struct memdev *)m;
	if (off >= m->size)
		return 0;
	if (len > m->size - off)
		len = m->size - off;
	memcpy(b, d->buf + off, len);
	return (ssize_t)len;
}

static ssize_t memdev_pwrite(struct member *m, const void *b, size_t len, uint64_t off, unsigned fl)
{
	struct memdev *d = (struct memdev *)m;
	if (off >= m->size)
		return -ENOSPC;
	if (len > m->size - off)
		len = m->size - off;
	memcpy(d->buf + off, b, len);
	return (ssize_t)len;
}

static const struct member_ops memdev_ops = {
    .kind = "testmem", .pread = memdev_pread, .pwrite = memdev_pwrite};

/* The member does not own `buf`. */
static void memdev_init(struct memdev *d, uint8_t *buf, size_t len, const char *name)
{
	memset(d, 0, sizeof(*d));
	d->m.ops = &memdev_ops;
	d->m.size = len;
	d->m.logical_block = 512;
	snprintf(d->m.name, sizeof(d->m.name), "%s", name);
	d->buf = buf;
}

#endif
