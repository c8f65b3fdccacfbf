/* Write-zeroes and discard of every member backend against a shadow: files
 * (buffered, O_DIRECT) deallocate only when allowed (SEEK_HOLE tells),
 * memory, the fault and sim-crash wrappers (which write the zeros through
 * their own write path) and the copy-on-write view; each says whether a
 * discard leaves zeros. */
#include "test_member_common.h"
#include "sim/member_crash.h"
#include "sim/member_fault.h"

#define ZSIZE (2u << 20)

/* Random write-zeroes over a member filled with ones, compared with a
 * shadow; aligned and odd ranges. */
static void zero_against_shadow(struct member *m, unsigned flags, uint64_t seed)
{
	unsigned char *shadow = malloc(m->size), *all = malloc(m->size);
	memset(shadow, 0xa5, m->size);
	CHECK(member_write(m, shadow, m->size, 0, 0) == 0);
	uint64_t rs = seed;
	for (int i = 0; i < 40; i++) {
		uint64_t off = t_rand(&rs) % m->size, len = t_rand(&rs) % (200 * 1024);
		if (i % 2) {
			off &= ~(uint64_t)4095;
			len = (len & ~(uint64_t)4095) + 4096;
		}
		if (len > m->size - off)
			len = m->size - off;
		int rc = member_write_zeroes(m, off, len, flags);
		CHECKF(rc == 0, "%s: zero %" PRIu64 "@%" PRIu64 ": %d", m->ops->kind, len, off, rc);
		if (rc == 0)
			memset(shadow + off, 0, len);
	}
	CHECK(member_write_zeroes(m, m->size - 10, 11, flags) == -EINVAL);
	CHECK(member_write_zeroes(m, m->size, 0, flags) == 0);
	CHECK(member_read(m, all, m->size, 0) == 0);
	CHECKF(memcmp(all, shadow, m->size) == 0, "%s: content differs from the shadow",
	       m->ops->kind);
	free(all);
	free(shadow);
}

/* Bytes the file has allocated (ext4 reports unwritten extents as holes
 * to SEEK_HOLE, so blocks are what tells a zeroed range from a punched one). */
static uint64_t allocated(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

static void file_case(unsigned oflags, const char *tag)
{
	char path[128], err[256] = "";
	tm_path(path, sizeof(path), tag);
	unlink(path);
	struct member *m = NULL;
	int rc = member_open_file(path, oflags | MEMBER_CREATE, ZSIZE, &m, err, sizeof(err));
	CHECKF(rc == 0, "%s: %s", path, err);
	if (rc)
		return;
	CHECK(m->discard_zeroes);
	zero_against_shadow(m, 0, 11);
	CHECK(member_flush(m) == 0);
	/* Without unmap the file stays allocated. */
	CHECKF(allocated(path) >= ZSIZE, "%s: zero without unmap freed space: %" PRIu64, tag,
	       allocated(path));
	zero_against_shadow(m, MEMBER_ZERO_UNMAP, 12);
	CHECK(member_flush(m) == 0);
	uint64_t before = allocated(path);
	CHECK(member_write_zeroes(m, 0, ZSIZE, MEMBER_ZERO_UNMAP) == 0);
	CHECKF(allocated(path) + 256 * 1024 <= before,
	       "%s: unmap freed nothing: %" PRIu64 " -> %" PRIu64, tag, before, allocated(path));
	/* discard itself: a hole reading zeros */
	unsigned char ones[4096];
	memset(ones, 1, sizeof(ones));
	CHECK(member_write(m, ones, 4096, 1 << 20, 0) == 0);
	CHECK(member_discard(m, 1 << 20, 4096) == 0);
	CHECK(member_read(m, ones, 4096, 1 << 20) == 0);
	CHECK(ones[0] == 0 && ones[4095] == 0);
	member_close(m);
	unlink(path);
}

static void file_buffered(void)
{
	file_case(0, "zb");
}

static void file_direct(void)
{
	file_case(MEMBER_DIRECT, "zd");
}

static void mem_backend(void)
{
	struct member *m = NULL;
	CHECK(member_open_mem("z", ZSIZE, &m) == 0);
	CHECK(m->discard_zeroes);
	zero_against_shadow(m, 0, 21);
	zero_against_shadow(m, MEMBER_ZERO_UNMAP, 22);
	member_close(m);
}

static void fault_wrapper(void)
{
	struct member *inner = NULL, *f = NULL;
	CHECK(member_open_mem("zf", ZSIZE, &inner) == 0);
	CHECK(member_fault_wrap(inner, &f) == 0);
	CHECK(f->discard_zeroes);
	zero_against_shadow(f, MEMBER_ZERO_UNMAP, 31);
	/* an error rule on writes fails a write-zeroes too */
	struct member_fault_rule r = {.op = MEMBER_OP_WRITE, .error = EIO};
	CHECK(member_fault_add(f, &r) == 0);
	CHECK(member_write_zeroes(f, 0, 4096, MEMBER_ZERO_UNMAP) == -EIO);
	member_close(f);
}

/* The crash model takes no discard: zeros go through its cache as writes,
 * so a power cut before a flush can lose them like any write. */
static void crash_wrapper(void)
{
	struct crash_ctl *c = NULL;
	struct member *inner = NULL, *m = NULL;
	CHECK(crash_ctl_new(&c) == 0);
	CHECK(member_open_mem("zc", ZSIZE, &inner) == 0);
	CHECK(member_crash_wrap(inner, c, &m) == 0);
	CHECK(!m->discard_zeroes);
	zero_against_shadow(m, MEMBER_ZERO_UNMAP, 41);
	CHECK(member_crash_pending(m) > 0);
	CHECK(member_flush(m) == 0);
	CHECK(member_crash_pending(m) == 0);
	member_close(m);
	crash_ctl_free(c);
}

static void cow_view(void)
{
	struct member *inner = NULL, *m = NULL;
	CHECK(member_open_mem("zv", ZSIZE, &inner) == 0);
	unsigned char ones[4096];
	memset(ones, 0xee, sizeof(ones));
	CHECK(member_write(inner, ones, 4096, 0, 0) == 0);
	CHECK(member_cow_wrap(inner, &m) == 0);
	CHECK(member_write_zeroes(m, 0, 4096, MEMBER_ZERO_UNMAP) == 0);
	unsigned char b[4096];
	CHECK(member_read(m, b, 4096, 0) == 0);
	CHECK(b[0] == 0 && b[4095] == 0);
	zero_against_shadow(m, MEMBER_ZERO_UNMAP, 51);
	member_close(m);
}

static void readonly(void)
{
	char path[128], err[256];
	tm_path(path, sizeof(path), "zr");
	unlink(path);
	struct member *m = NULL;
	CHECK(member_open_file(path, MEMBER_CREATE, ZSIZE, &m, err, sizeof(err)) == 0);
	member_close(m);
	CHECK(member_open_file(path, MEMBER_RDONLY, 0, &m, err, sizeof(err)) == 0);
	CHECK(member_write_zeroes(m, 0, 4096, 0) == -EROFS);
	CHECK(member_write_zeroes(m, 0, 4096, MEMBER_ZERO_UNMAP) == -EROFS);
	member_close(m);
	unlink(path);
}

TEST_MAIN(T(file_buffered), T(file_direct), T(mem_backend), T(fault_wrapper), T(crash_wrapper),
          T(cow_view), T(readonly))
