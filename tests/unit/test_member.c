/* Member backends (file buffered, file O_DIRECT, memory, fault wrapper with
 * no rules, in-memory copy-on-write view) against a shadow byte array; open errors; read-only;
 * discard. */
#include "test_member_common.h"
#include "sim/member_fault.h"

#include <sys/mman.h>

#define FSIZE (4u << 20)

static unsigned char *shadow_new(uint64_t size)
{
	unsigned char *s = calloc(1, size + 1);
	if (!s)
		abort();
	return s;
}

/* Off-by-one probes at the member's end, through the ops and the wrappers. */
static void check_end(struct member *m, unsigned char *shadow)
{
	unsigned char buf[200];
	const uint64_t size = m->size;
	memset(buf, 0x77, sizeof(buf));
	/* op-level write crossing the end: the part that fits, then -ENOSPC */
	ssize_t w = m->ops->pwrite(m, buf, 100, size - 50, 0);
	CHECKF(w == 50, "%s: pwrite across end: %zd", m->ops->kind, w);
	if (w == 50)
		memset(shadow + size - 50, 0x77, 50);
	CHECK(m->ops->pwrite(m, buf, 10, size, 0) == -ENOSPC);
	CHECK(m->ops->pwrite(m, buf, 10, size + 4096, 0) == -ENOSPC);
	/* member_write refuses without writing anything */
	memset(buf, 0x11, sizeof(buf));
	CHECK(member_write(m, buf, 100, size - 99, 0) == -ENOSPC);
	CHECK(member_write(m, buf, 1, UINT64_MAX, 0) == -ENOSPC);
	CHECK(member_write(m, buf, 0, size, 0) == 0);
	/* reads: short at the end, 0 past it */
	ssize_t r = m->ops->pread(m, buf, 100, size - 30);
	CHECKF(r == 30, "%s: pread across end: %zd", m->ops->kind, r);
	CHECK(memcmp(buf, shadow + size - 30, 30) == 0);
	CHECK(m->ops->pread(m, buf, 100, size) == 0);
	CHECK(m->ops->pread(m, buf, 100, UINT64_MAX - 5) == 0);
	CHECK(member_read(m, buf, 31, size - 30) == -EIO);
	CHECK(member_read(m, buf, 30, size - 30) == 0);
	CHECK(memcmp(buf, shadow + size - 30, 30) == 0);
}

static void check_discard(struct member *m, unsigned char *shadow, uint64_t seed)
{
	uint64_t rs = seed;
	for (int i = 0; i < 6; i++) {
		uint64_t off = t_rand(&rs) % m->size;
		uint64_t len = t_rand(&rs) % (3 * 65536);
		if (len > m->size - off)
			len = m->size - off;
		int rc = member_discard(m, off, len);
		CHECKF(rc == 0, "%s: discard %" PRIu64 "@%" PRIu64 ": %d", m->ops->kind, len, off,
		       rc);
		if (rc == 0)
			memset(shadow + off, 0, len);
	}
	CHECK(member_discard(m, m->size - 10, 11) == -EINVAL);
	CHECK(member_discard(m, m->size + 1, 0) == -EINVAL);
	CHECK(member_discard(m, m->size, 0) == 0);
	unsigned char *all = malloc(m->size);
	CHECK(member_read(m, all, m->size, 0) == 0);
	CHECK(memcmp(all, shadow, m->size) == 0);
	free(all);
}

static void file_backend(unsigned flags, uint64_t size, const char *tag, uint64_t seed,
                         bool expect_direct)
{
	char path[128], err[256] = "";
	tm_path(path, sizeof(path), tag);
	unlink(path);
	struct member *m = NULL;
	int rc = member_open_file(path, flags | MEMBER_CREATE, size, &m, err, sizeof(err));
	CHECKF(rc == 0, "open %s: %d %s", path, rc, err);
	if (rc)
		return;
	CHECK(strcmp(m->ops->kind, "file") == 0);
	CHECK_EQ_U64(m->size, size);
	CHECK_EQ_U64(m->logical_block, 512);
	CHECK(strcmp(m->name, path) == 0);
	CHECKF(m->direct == expect_direct, "direct %d", m->direct);
	if (m->direct) {
		CHECK(m->dio_align >= 512 && m->dio_align <= 4096);
		CHECK(m->mem_align >= 1 && m->mem_align <= 4096);
	}
	CHECK(m->ops->fd(m) >= 0);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (uint64_t)st.st_size == size);
	CHECKF((uint64_t)st.st_blocks * 512 < 65536, "created file not sparse: %lld blocks",
	       (long long)st.st_blocks);

	unsigned char *shadow = shadow_new(size);
	tm_random_io(m, shadow, seed, 600);
	tm_big_unaligned(m, shadow, seed + 2);
	check_end(m, shadow);
	CHECK(member_flush(m) == 0);
	CHECK(tm_file_equals(path, shadow, size));

	/* discard punches holes: the file gets smaller on disk */
	unsigned char *ones = malloc(1 << 20);
	memset(ones, 0xff, 1 << 20);
	CHECK(member_write(m, ones, 1 << 20, 0, 0) == 0);
	memset(shadow, 0xff, 1 << 20);
	CHECK(member_flush(m) == 0);
	struct stat before, after;
	CHECK(stat(path, &before) == 0);
	CHECK(member_discard(m, 4096, 512 * 1024) == 0);
	memset(shadow + 4096, 0, 512 * 1024);
	CHECK(stat(path, &after) == 0);
	CHECKF(after.st_blocks + 512 * 1024 / 512 <= before.st_blocks,
	       "punch hole freed nothing: %lld -> %lld", (long long)before.st_blocks,
	       (long long)after.st_blocks);
	free(ones);
	check_discard(m, shadow, seed + 1);
	member_close(m);
	CHECK(tm_file_equals(path, shadow, size));

	/* reopening with MEMBER_CREATE and another size keeps the file */
	rc = member_open_file(path, flags | MEMBER_CREATE, size * 2, &m, err, sizeof(err));
	CHECK(rc == 0);
	if (rc == 0) {
		CHECK_EQ_U64(m->size, size);
		member_close(m);
	}
	CHECK(tm_file_equals(path, shadow, size));
	free(shadow);
	unlink(path);
}

static void file_buffered(void)
{
	file_backend(0, FSIZE, "buf", 101, false);
}

static void file_direct(void)
{
	file_backend(MEMBER_DIRECT, FSIZE, "dio", 202, true);
}

/* O_DIRECT cannot rewrite the tail of a file that ends mid-block without
 * growing it, so such a file is opened through the page cache. */
static void file_direct_odd_size(void)
{
	file_backend(MEMBER_DIRECT, FSIZE + 100, "odd", 303, false);
}

/* procfs, like tmpfs on older kernels, refuses O_DIRECT with EINVAL: the
 * member opens through the page cache and says so. */
static void direct_refused_falls_back(void)
{
	char err[256] = "";
	struct member *m = NULL;
	int rc = member_open_file("/proc/version", MEMBER_RDONLY | MEMBER_DIRECT, 0, &m, err,
	                          sizeof(err));
	CHECKF(rc == 0, "%d %s", rc, err);
	if (!m)
		return;
	CHECK(!m->direct);
	CHECK(m->dio_align == 1 && m->mem_align == 1);
	CHECK(m->readonly);
	char buf[16];
	CHECK(m->ops->pread(m, buf, 3, 1) == 0); /* procfs reports size 0 */
	member_close(m);
}

static void mem_backend(void)
{
	struct member *m = NULL;
	CHECK(member_open_mem("m0", FSIZE, &m) == 0);
	if (!m)
		return;
	CHECK(strcmp(m->ops->kind, "mem") == 0);
	CHECK(strcmp(m->name, "m0") == 0);
	CHECK_EQ_U64(m->size, FSIZE);
	CHECK(m->ops->fd(m) == -1);
	CHECK(!m->direct && !m->readonly);
	unsigned char *shadow = shadow_new(FSIZE);
	tm_random_io(m, shadow, 404, 600);
	tm_big_unaligned(m, shadow, 406);
	check_end(m, shadow);
	check_discard(m, shadow, 405);
	CHECK(member_flush(m) == 0);
	member_close(m);
	free(shadow);
	CHECK(member_open_mem("z", 0, &m) == -EINVAL && m == NULL);
}

/* A huge member costs nothing until written. */
static void mem_large_sparse(void)
{
	struct member *m = NULL;
	const uint64_t size = 1ull << 40; /* 1 TiB of address space */
	CHECK(member_open_mem("big", size, &m) == 0);
	if (!m)
		return;
	unsigned char w[4096], r[4096];
	memset(w, 0x3c, sizeof(w));
	CHECK(member_write(m, w, sizeof(w), size - 4096, 0) == 0);
	CHECK(member_read(m, r, sizeof(r), size - 4096) == 0);
	CHECK(memcmp(r, w, sizeof(w)) == 0);
	CHECK(member_read(m, r, sizeof(r), size / 2) == 0);
	memset(w, 0, sizeof(w));
	CHECK(memcmp(r, w, sizeof(r)) == 0);
	member_close(m);
}

/* The wrapper with no rules behaves exactly like what it wraps. */
static void fault_passthrough(void)
{
	char path[128], err[256];
	tm_path(path, sizeof(path), "fpass");
	unlink(path);
	struct member *in = NULL, *f = NULL;
	CHECK(member_open_file(path, MEMBER_CREATE | MEMBER_DIRECT, FSIZE, &in, err, sizeof(err)) ==
	      0);
	if (!in)
		return;
	CHECK(member_fault_wrap(in, &f) == 0);
	CHECK(strcmp(f->ops->kind, "fault") == 0);
	CHECK(f->ops->fd(f) == -1);
	CHECK(strcmp(f->name, path) == 0);
	CHECK_EQ_U64(f->size, FSIZE);
	unsigned char *shadow = shadow_new(FSIZE);
	tm_random_io(f, shadow, 505, 400);
	check_end(f, shadow);
	check_discard(f, shadow, 506);
	CHECK(member_flush(f) == 0);
	CHECK(member_fault_hits(f) == 0);
	member_close(f);
	CHECK(tm_file_equals(path, shadow, FSIZE));
	free(shadow);
	unlink(path);
}

static void readonly(void)
{
	char path[128], err[256] = "";
	tm_path(path, sizeof(path), "ro");
	unlink(path);
	struct member *m = NULL;
	CHECK(member_open_file(path, MEMBER_CREATE, 65536, &m, err, sizeof(err)) == 0);
	if (!m)
		return;
	unsigned char *shadow = shadow_new(65536);
	uint64_t rs = 7;
	t_fill(&rs, shadow, 65536);
	CHECK(member_write(m, shadow, 65536, 0, 0) == 0);
	member_close(m);
	for (unsigned fl = 0; fl <= MEMBER_DIRECT; fl += MEMBER_DIRECT) {
		CHECK(member_open_file(path, MEMBER_RDONLY | fl, 0, &m, err, sizeof(err)) == 0);
		if (!m)
			continue;
		CHECK(m->readonly);
		unsigned char buf[1000];
		memset(buf, 0, sizeof(buf));
		CHECK(member_write(m, buf, sizeof(buf), 100, 0) == -EROFS);
		CHECK(member_write(m, buf, sizeof(buf), 100, MEMBER_FUA) == -EROFS);
		CHECK(m->ops->pwrite(m, buf, 512, 0, 0) == -EROFS);
		CHECK(member_discard(m, 0, 4096) == -EROFS);
		CHECK(m->ops->discard(m, 0, 4096) == -EROFS);
		CHECK(member_read(m, buf, sizeof(buf), 333) == 0);
		CHECK(memcmp(buf, shadow + 333, sizeof(buf)) == 0);
		CHECK(member_flush(m) == 0);
		member_close(m);
	}
	CHECK(tm_file_equals(path, shadow, 65536));
	/* read-only and create do not mix */
	CHECK(member_open_file(path, MEMBER_RDONLY | MEMBER_CREATE, 4096, &m, err, sizeof(err)) ==
	      -EINVAL);
	free(shadow);
	unlink(path);
}

/* The in-memory copy-on-write view over a read-only member: it behaves
 * like a member holding what was written over what the file holds (the
 * odd-sized end too), and the file never changes. */
static void cow_view(void)
{
	char path[128], err[256] = "";
	tm_path(path, sizeof(path), "cow");
	unlink(path);
	const uint64_t size = FSIZE - 1536; /* the last page is short */
	struct member *m = NULL, *c = NULL;
	CHECK(member_open_file(path, MEMBER_CREATE, size, &m, err, sizeof(err)) == 0);
	if (!m)
		return;
	unsigned char *file = shadow_new(size), *shadow = shadow_new(size);
	uint64_t rs = 11;
	t_fill(&rs, file, size);
	CHECK(member_write(m, file, size, 0, 0) == 0);
	member_close(m);
	CHECK(member_open_file(path, MEMBER_RDONLY, 0, &m, err, sizeof(err)) == 0);
	if (!m)
		goto out;
	CHECK(member_cow_wrap(m, &c) == 0);
	CHECK(strcmp(c->ops->kind, "cow") == 0 && !c->readonly && c->ops->fd(c) == -1);
	CHECK_EQ_U64(c->size, size);
	memcpy(shadow, file, size);
	tm_random_io(c, shadow, 707, 600);
	tm_big_unaligned(c, shadow, 708);
	check_end(c, shadow);
	CHECK(member_flush(c) == 0);
	unsigned char *back = shadow_new(size);
	CHECK(member_read(c, back, size, 0) == 0);
	CHECK(memcmp(back, shadow, size) == 0);
	free(back);
	member_close(c);                         /* closes the file member */
	CHECK(tm_file_equals(path, file, size)); /* not a byte written to it */
out:
	free(file);
	free(shadow);
	unlink(path);
}

static void open_errors(void)
{
	char err[256], path[128];
	struct member *m = (struct member *)1;
	tm_path(path, sizeof(path), "missing");
	unlink(path);
	err[0] = 0;
	CHECK(member_open_file(path, 0, 0, &m, err, sizeof(err)) == -ENOENT);
	CHECK(m == NULL);
	CHECKF(strstr(err, path) != NULL, "message does not name the path: %s", err);
	CHECK(access(path, F_OK) != 0); /* nothing created */
	err[0] = 0;
	CHECK(member_open_file("/var/tmp", 0, 0, &m, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "not a regular file or block device") != NULL);
	CHECK(member_open_file("/dev/null", 0, 0, &m, err, sizeof(err)) == -EINVAL);
	CHECK(member_open_file(path, 0x100, 0, &m, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "unknown") != NULL);
	CHECK(member_open_file(path, MEMBER_CREATE, 0, &m, err, sizeof(err)) == -EINVAL);
	CHECK(access(path, F_OK) != 0);
	CHECK(member_open_file("", 0, 0, &m, err, sizeof(err)) == -EINVAL);
	CHECK(member_open_file(NULL, 0, 0, &m, err, sizeof(err)) == -EINVAL);
	CHECK(member_open_file(path, 0, 0, NULL, err, sizeof(err)) == -EINVAL);
	/* no error buffer is fine */
	CHECK(member_open_file(path, 0, 0, &m, NULL, 0) == -ENOENT);
	CHECK(member_open_file("/nonexistent-dir/x", MEMBER_CREATE, 4096, &m, err, sizeof(err)) ==
	      -ENOENT);
	member_close(NULL);
	/* wrappers reject broken requests */
	CHECK(member_read(NULL, err, 1, 0) == -EINVAL);
	CHECK(member_flush(NULL) == -EINVAL);
}

TEST_MAIN(T(file_buffered), T(file_direct), T(file_direct_odd_size), T(direct_refused_falls_back),
          T(mem_backend), T(mem_large_sparse), T(fault_passthrough), T(readonly), T(cow_view),
          T(open_errors))
