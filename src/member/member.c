/* Backend-independent member helpers: full-length read/write loops, bounds
 * and permission checks shared by the synchronous and io_uring paths. */
#include "member/member_int.h"

#include <errno.h>
#include <sys/file.h>
#include <limits.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void member_set_name(struct member *m, const char *name)
{
	snprintf(m->name, sizeof(m->name), "%s", name ? name : "");
}

void member_close(struct member *m)
{
	if (m && m->ops && m->ops->close)
		m->ops->close(m);
}

bool member_aligned(const struct member *m, const void *buf, size_t len, uint64_t off)
{
	if (!m->direct)
		return true;
	return (uintptr_t)buf % m->mem_align == 0 && off % m->dio_align == 0 &&
	       len % m->dio_align == 0;
}

int member_check_io(const struct member *m, enum member_op op, const void *buf, size_t *len,
                    uint64_t off)
{
	if (!m || !m->ops || (op != MEMBER_OP_READ && op != MEMBER_OP_WRITE))
		return -EINVAL;
	if (*len && !buf)
		return -EFAULT;
	if (op == MEMBER_OP_WRITE) {
		if (m->readonly)
			return -EROFS;
		if (off > m->size || *len > m->size - off)
			return -ENOSPC;
		return 0;
	}
	if (off >= m->size)
		*len = 0;
	else if (*len > m->size - off)
		*len = (size_t)(m->size - off);
	return 0;
}

int member_op_bounds(const struct member *m, enum member_op op, size_t *len, uint64_t off,
                     size_t max)
{
	if (op == MEMBER_OP_WRITE) {
		if (m->readonly)
			return -EROFS;
		if (off >= m->size && *len)
			return -ENOSPC;
	}
	if (off >= m->size)
		*len = 0;
	else if (*len > m->size - off)
		*len = (size_t)(m->size - off);
	if (*len > max)
		*len = max;
	return 0;
}

int member_discard_check(const struct member *m, uint64_t off, uint64_t len)
{
	if (m->readonly)
		return -EROFS;
	if (off > m->size || len > m->size - off)
		return -EINVAL;
	return 0;
}

void member_wrap_init(struct member *w, const struct member *inner, const struct member_ops *ops,
                      void *priv)
{
	w->ops = ops;
	w->priv = priv;
	memcpy(w->name, inner->name, sizeof(w->name));
	w->size = inner->size;
	w->logical_block = inner->logical_block;
	w->readonly = inner->readonly;
	w->direct = false;
	w->dio_align = 1;
	w->mem_align = 1;
}

ssize_t member_xfer(struct member *m, enum member_op op, void *buf, size_t len, uint64_t off,
                    unsigned flags)
{
	unsigned char *p = buf;
	size_t done = 0;
	/* ssize_t results cannot describe more than SSIZE_MAX bytes. */
	if (len > SSIZE_MAX)
		return -EINVAL;
	while (done < len) {
		ssize_t r;
		if (op == MEMBER_OP_READ)
			r = m->ops->pread(m, p + done, len - done, off + done);
		else
			r = m->ops->pwrite(m, p + done, len - done, off + done, flags);
		if (r == -EINTR || r == -EAGAIN)
			continue;
		if (r < 0)
			return r;
		if (r == 0)
			return op == MEMBER_OP_READ ? (ssize_t)done : -EIO;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

int member_read(struct member *m, void *buf, size_t len, uint64_t off)
{
	size_t want = len;
	int rc = member_check_io(m, MEMBER_OP_READ, buf, &want, off);
	if (rc < 0)
		return rc;
	if (want < len)
		return -EIO; /* the request reaches past the member's end */
	ssize_t r = member_xfer(m, MEMBER_OP_READ, buf, len, off, 0);
	if (r < 0)
		return (int)r;
	return (size_t)r == len ? 0 : -EIO;
}

int member_write(struct member *m, const void *buf, size_t len, uint64_t off, unsigned flags)
{
	int rc = member_check_io(m, MEMBER_OP_WRITE, buf, &len, off);
	if (rc < 0)
		return rc;
	ssize_t r = member_xfer(m, MEMBER_OP_WRITE, (void *)buf, len, off, flags);
	if (r < 0)
		return (int)r;
	return (size_t)r == len ? 0 : -EIO;
}

int member_flush(struct member *m)
{
	if (!m || !m->ops)
		return -EINVAL;
	return m->ops->flush ? m->ops->flush(m) : 0;
}

int member_discard(struct member *m, uint64_t off, uint64_t len)
{
	if (!m || !m->ops)
		return -EINVAL;
	int rc = member_discard_check(m, off, len);
	if (rc < 0)
		return rc;
	if (len == 0)
		return 0;
	if (!m->ops->discard)
		return -EOPNOTSUPP;
	return m->ops->discard(m, off, len);
}

/* Zeros written the ordinary way, a bounded buffer at a time. */
static int write_zero_buffers(struct member *m, uint64_t off, uint64_t len)
{
	size_t cap = len < (1u << 20) ? (size_t)len : (1u << 20);
	void *z = calloc(1, cap);
	if (!z)
		return -ENOMEM;
	int rc = 0;
	while (len && rc == 0) {
		size_t n = len < cap ? (size_t)len : cap;
		rc = member_write(m, z, n, off, 0);
		off += n;
		len -= n;
	}
	free(z);
	return rc;
}

int member_write_zeroes(struct member *m, uint64_t off, uint64_t len, unsigned flags)
{
	if (!m || !m->ops)
		return -EINVAL;
	int rc = member_discard_check(m, off, len);
	if (rc < 0 || len == 0)
		return rc;
	/* Edges that are not whole logical blocks are written. */
	uint64_t b = m->logical_block ? m->logical_block : 512;
	uint64_t first = (off + b - 1) / b * b, last = (off + len) / b * b;
	if (first >= last)
		return write_zero_buffers(m, off, len);
	if (first > off && (rc = write_zero_buffers(m, off, first - off)) < 0)
		return rc;
	if (last < off + len && (rc = write_zero_buffers(m, last, off + len - last)) < 0)
		return rc;
	rc = -EOPNOTSUPP;
	if ((flags & MEMBER_ZERO_DISCARD) && m->ops->discard)
		rc = m->ops->discard(m, first, last - first);
	if (rc != -EOPNOTSUPP && rc != -EINVAL)
		return rc;
	flags &= ~MEMBER_ZERO_DISCARD;
	/* Deallocate only where that is known to leave zeros. */
	if (!m->discard_zeroes)
		flags &= ~MEMBER_ZERO_UNMAP;
	rc = -EOPNOTSUPP;
	if (m->ops->write_zeroes)
		rc = m->ops->write_zeroes(m, first, last - first, flags);
	else if ((flags & MEMBER_ZERO_UNMAP) && m->ops->discard)
		rc = m->ops->discard(m, first, last - first);
	if (rc == -EOPNOTSUPP || rc == -EINVAL)
		rc = write_zero_buffers(m, first, last - first);
	return rc;
}

int member_lock(struct member *m)
{
	int fd = m->ops->fd ? m->ops->fd(m) : -1;
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? -EBUSY : -errno;
	return 0;
}

int member_check(struct member *m, char *why, size_t len)
{
	if (len)
		why[0] = 0;
	return m->ops->check ? m->ops->check(m, why, len) : 0;
}

void member_describe(struct member *m, char *buf, size_t len)
{
	if (len)
		buf[0] = 0;
	if (m && m->ops && m->ops->describe && len)
		m->ops->describe(m, buf, len);
}

void *member_map_addr(struct member *m, uint64_t off, size_t len)
{
	if (!m->ops->map_addr || m->readonly || len == 0 || off > m->size || len > m->size - off)
		return NULL;
	return m->ops->map_addr(m, off, len);
}
