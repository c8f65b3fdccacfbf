/* In-memory member: an anonymous MAP_NORESERVE mapping, so a large member
 * costs only the pages actually written. */
#include "member/member_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct mem_member {
	struct member m;
	unsigned char *base;
};

static struct mem_member *mm_of(struct member *m)
{
	return (struct mem_member *)m;
}

static ssize_t mem_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	member_op_bounds(m, MEMBER_OP_READ, &len, off, SSIZE_MAX);
	memcpy(buf, mm_of(m)->base + off, len);
	return (ssize_t)len;
}

static ssize_t mem_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                          unsigned flags)
{
	int rc = member_op_bounds(m, MEMBER_OP_WRITE, &len, off, SSIZE_MAX);
	if (rc < 0)
		return rc;
	memcpy(mm_of(m)->base + off, buf, len);
	return (ssize_t)len;
}

static int mem_flush(struct member *m)
{
	return 0;
}

/* Zero the range; whole pages go back to the kernel (reading as zeros). */
static int mem_discard(struct member *m, uint64_t off, uint64_t len)
{
	int rc = member_discard_check(m, off, len);
	if (rc < 0)
		return rc;
	unsigned char *base = mm_of(m)->base;
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t first = (off + page - 1) / page * page;
	uint64_t last = (off + len) / page * page;
	if (first >= last) {
		memset(base + off, 0, (size_t)len);
		return 0;
	}
	memset(base + off, 0, (size_t)(first - off));
	memset(base + last, 0, (size_t)(off + len - last));
	if (madvise(base + first, (size_t)(last - first), MADV_DONTNEED) < 0)
		memset(base + first, 0, (size_t)(last - first));
	return 0;
}

static int mem_write_zeroes(struct member *m, uint64_t off, uint64_t len, unsigned flags)
{
	if (flags & MEMBER_ZERO_UNMAP)
		return mem_discard(m, off, len);
	memset(mm_of(m)->base + off, 0, (size_t)len);
	return 0;
}

static int mem_fd(struct member *m)
{
	return -1;
}

static void mem_close(struct member *m)
{
	struct mem_member *mm = mm_of(m);
	munmap(mm->base, (size_t)m->size);
	free(mm);
}

static const struct member_ops mem_ops = {
    .kind = "mem",
    .pread = mem_pread,
    .pwrite = mem_pwrite,
    .flush = mem_flush,
    .discard = mem_discard,
    .write_zeroes = mem_write_zeroes,
    .fd = mem_fd,
    .close = mem_close,
};

int member_open_mem(const char *name, uint64_t size, struct member **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (size == 0 || size > SIZE_MAX / 2)
		return -EINVAL;
	struct mem_member *mm = calloc(1, sizeof(*mm));
	if (!mm)
		return -ENOMEM;
	void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		free(mm);
		return -ENOMEM;
	}
	mm->base = p;
	mm->m.ops = &mem_ops;
	mm->m.priv = mm;
	mm->m.size = size;
	mm->m.logical_block = 512;
	mm->m.dio_align = 1;
	mm->m.mem_align = 1;
	mm->m.discard_zeroes = true;
	member_set_name(&mm->m, name ? name : "mem");
	*out = &mm->m;
	return 0;
}
