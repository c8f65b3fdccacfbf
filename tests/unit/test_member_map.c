/* member_map: read-only views of tmpfs file members. The view must show
 * exactly what pread shows (also after writes), across mapping windows;
 * ranges past the end of a file that was truncated behind the member's back
 * are refused (mapping them would raise SIGBUS on access); members that
 * cannot guarantee a failure-free mapping (other file systems, O_DIRECT,
 * wrappers, memory) do not offer it. Fixed seeds. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../harness.h"
#include "member/member.h"

#define MB             (1u << 20)
#define TMPFS_MAGIC_NR 0x01021994

static bool make_dir(char *dir, size_t len, const char *base)
{
	snprintf(dir, len, "%s/uraid-map-XXXXXX", base);
	return mkdtemp(dir) != NULL;
}

/* A file of `size` bytes whose first `fill` bytes are random. */
static void make_file(const char *path, uint64_t size, uint64_t fill, uint64_t seed)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, (off_t)size) == 0);
	uint8_t *b = malloc(MB);
	for (uint64_t off = 0; off < fill; off += MB) {
		t_fill(&seed, b, MB);
		CHECK(pwrite(fd, b, MB, (off_t)off) == MB);
	}
	free(b);
	close(fd);
}

static struct member *open_path(const char *path, unsigned flags)
{
	struct member *m = NULL;
	char err[256];
	int rc = member_open_file(path, flags, 0, &m, err, sizeof(err));
	CHECKF(rc == 0, "%s", err);
	return m;
}

/* Compare a view of [off, off+len) with pread's bytes. */
static bool view_matches(struct member *m, uint64_t off, size_t len)
{
	const void *v = NULL;
	int rc = member_map(m, off, len, &v);
	CHECKF(rc == 0, "map [%llu, +%zu): %d", (unsigned long long)off, len, rc);
	if (rc != 0)
		return false;
	uint8_t *b = malloc(len);
	bool ok = member_read(m, b, len, off) == 0 && memcmp(v, b, len) == 0;
	free(b);
	return ok;
}

static void map_reads_what_pread_reads(void)
{
	char dir[64], path[96];
	CHECK(make_dir(dir, sizeof(dir), "/dev/shm"));
	snprintf(path, sizeof(path), "%s/m", dir);
	make_file(path, 3 * MB, 3 * MB, 11);
	struct member *m = open_path(path, 0);
	if (!m) {
		unlink(path);
		rmdir(dir);
		return;
	}
	uint64_t rs = 12;
	for (int i = 0; i < 50; i++) {
		uint64_t off = t_rand(&rs) % (3 * MB);
		size_t len = 1 + (size_t)(t_rand(&rs) % (3 * MB - off));
		CHECKF(view_matches(m, off, len), "round %d", i);
	}
	/* Writes through the member show in a view taken before them (one
	 * page cache) and in a new one. */
	const void *before = NULL;
	CHECK(member_map(m, MB, 8192, &before) == 0);
	uint8_t w[8192];
	t_fill(&rs, w, sizeof(w));
	CHECK(member_write(m, w, sizeof(w), MB, 0) == 0);
	CHECK(before && memcmp(before, w, sizeof(w)) == 0);
	CHECK(view_matches(m, MB - 4096, 3 * 4096));
	member_unmap(m);
	CHECK(view_matches(m, 0, 4096)); /* maps again after an unmap */
	member_close(m);
	unlink(path);
	rmdir(dir);
}

static void map_across_windows(void)
{
	char dir[64], path[96];
	CHECK(make_dir(dir, sizeof(dir), "/dev/shm"));
	snprintf(path, sizeof(path), "%s/m", dir);
	/* 66 MiB sparse, random bytes around the 64 MiB mark (windows are
	 * 64 MiB) and at the start. */
	make_file(path, 66 * MB, MB, 21);
	int fd = open(path, O_RDWR);
	uint8_t *b = malloc(2 * MB);
	uint64_t rs = 22;
	t_fill(&rs, b, 2 * MB);
	CHECK(pwrite(fd, b, 2 * MB, 63 * MB) == 2 * MB);
	close(fd);
	free(b);
	struct member *m = open_path(path, 0);
	if (!m) {
		unlink(path);
		rmdir(dir);
		return;
	}
	CHECK(view_matches(m, 63 * MB + 512, MB));        /* inside the first window */
	CHECK(view_matches(m, 64 * MB - 4096, 2 * 4096)); /* straddles two windows */
	CHECK(view_matches(m, 0, MB));                    /* back to the first */
	CHECK(view_matches(m, 65 * MB, MB));              /* the file's last bytes */
	member_close(m);
	unlink(path);
	rmdir(dir);
}

static void map_refuses_short_file(void)
{
	char dir[64], path[96];
	CHECK(make_dir(dir, sizeof(dir), "/dev/shm"));
	snprintf(path, sizeof(path), "%s/m", dir);
	make_file(path, 8 * MB, 8 * MB, 31);
	struct member *m = open_path(path, 0);
	if (!m) {
		unlink(path);
		rmdir(dir);
		return;
	}
	CHECK(view_matches(m, 0, 8 * MB));
	/* Truncated behind the member's back: m->size still says 8 MiB. */
	CHECK(truncate(path, 4 * MB + 100) == 0);
	const void *v = (const void *)1;
	CHECK(member_map(m, 0, 8 * MB, &v) == -ENXIO && v == NULL);
	CHECK(member_map(m, 4 * MB, 4096, &v) == -ENXIO); /* partly past the end */
	CHECK(member_map(m, 5 * MB, 4096, &v) == -ENXIO); /* wholly past it */
	CHECK(member_map(m, 8 * MB, 4096, &v) == -ENXIO); /* past the member too */
	CHECK(member_map(m, 0, 0, &v) == -ENXIO);         /* empty */
	CHECK(view_matches(m, 4 * MB - 8192, 8192));      /* what is left still maps */
	/* Reads of the lost part fail the ordinary way. */
	uint8_t b[4096];
	CHECK(member_read(m, b, sizeof(b), 6 * MB) < 0);
	member_close(m);
	unlink(path);
	rmdir(dir);
}

static void map_not_offered(void)
{
	char dir[64], path[96], err[256];
	const void *v;
	/* tmpfs, but wrapped: requests must keep passing through the wrapper. */
	CHECK(make_dir(dir, sizeof(dir), "/dev/shm"));
	snprintf(path, sizeof(path), "%s/m", dir);
	make_file(path, MB, MB, 41);
	struct member *m = open_path(path, 0), *f = NULL;
	if (m && member_fault_wrap(m, &f) == 0) {
		CHECK(member_map(f, 0, 4096, &v) == -EOPNOTSUPP);
		member_close(f);
	}
	/* O_DIRECT, where tmpfs grants it: reads bypass the page cache. */
	m = open_path(path, MEMBER_DIRECT);
	if (m) {
		CHECK(member_map(m, 0, 4096, &v) == (m->direct ? -EOPNOTSUPP : 0));
		member_close(m);
	}
	unlink(path);
	rmdir(dir);
	/* Memory members. */
	if (member_open_mem("mem", MB, &m) == 0) {
		CHECK(member_map(m, 0, 4096, &v) == -EOPNOTSUPP);
		member_close(m);
	}
	/* A file system other than tmpfs (a read error under a mapping would
	 * arrive as SIGBUS): the build tree's. */
	struct statfs sf;
	if (statfs(".", &sf) == 0 && sf.f_type != TMPFS_MAGIC_NR &&
	    make_dir(dir, sizeof(dir), ".")) {
		snprintf(path, sizeof(path), "%s/m", dir);
		make_file(path, MB, MB, 42);
		if (member_open_file(path, 0, 0, &m, err, sizeof(err)) == 0) {
			CHECK(member_map(m, 0, 4096, &v) == -EOPNOTSUPP);
			member_close(m);
		}
		unlink(path);
		rmdir(dir);
	}
	CHECK(member_map(NULL, 0, 4096, &v) == -EINVAL);
}

TEST_MAIN(T(map_reads_what_pread_reads), T(map_across_windows), T(map_refuses_short_file),
          T(map_not_offered))
