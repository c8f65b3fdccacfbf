/* member in_memory: set only where every request is a page-cache copy (a
 * tmpfs file opened without O_DIRECT), because sync work then reads and
 * writes synchronously on two threads. Wrappers (whose requests must keep
 * passing through them, and whose state is not built for that), O_DIRECT,
 * memory members and other file systems must leave it false. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../harness.h"
#include "member/member.h"
#include "uraid.h"
#include "sim/member_fault.h"

#define MB             (1u << 20)
#define TMPFS_MAGIC_NR 0x01021994

static bool make_file(char *dir, size_t dlen, char *path, size_t plen, const char *base)
{
	snprintf(dir, dlen, "%s/uraid-inmem-XXXXXX", base);
	if (!mkdtemp(dir))
		return false;
	snprintf(path, plen, "%s/m", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	bool ok = fd >= 0 && ftruncate(fd, MB) == 0;
	if (fd >= 0)
		close(fd);
	CHECK(ok);
	return ok;
}

static struct member *open_path(const char *path, unsigned flags)
{
	struct member *m = NULL;
	char err[256];
	int rc = member_open_file(path, flags, 0, &m, err, sizeof(err));
	CHECKF(rc == 0, "%s", err);
	return m;
}

static void tmpfs_file_is_in_memory(void)
{
	char dir[64], path[96];
	if (!make_file(dir, sizeof(dir), path, sizeof(path), "/dev/shm"))
		return;
	struct member *m = open_path(path, 0), *f = NULL;
	if (m) {
		CHECK(m->in_memory && !m->direct);
		CHECK(member_fault_wrap(m, &f) == 0);
		CHECK(f && !f->in_memory); /* the wrapper's requests pass through it */
		member_close(f);
	}
	/* O_DIRECT, where tmpfs grants it: not the page cache's copies. */
	m = open_path(path, MEMBER_DIRECT);
	if (m) {
		CHECK(m->in_memory == !m->direct);
		member_close(m);
	}
	unlink(path);
	rmdir(dir);
}

static void others_are_not(void)
{
	struct member *m = NULL;
	if (member_open_mem("mem", MB, &m) == 0) {
		CHECK(!m->in_memory);
		member_close(m);
	}
	/* The build tree's file system, when it is not tmpfs: requests there
	 * may wait on a disk. */
	struct statfs sf;
	char dir[64], path[96];
	if (statfs(".", &sf) == 0 && sf.f_type != TMPFS_MAGIC_NR &&
	    make_file(dir, sizeof(dir), path, sizeof(path), ".")) {
		if ((m = open_path(path, 0))) {
			CHECK(!m->in_memory);
			member_close(m);
		}
		unlink(path);
		rmdir(dir);
	}
}

/* Lines of /proc/self/maps that name `path`. */
static int mappings_of(const char *path)
{
	FILE *fp = fopen("/proc/self/maps", "re");
	char line[512];
	int n = 0;
	while (fp && fgets(line, sizeof(line), fp))
		n += strstr(line, path) != NULL;
	if (fp)
		fclose(fp);
	return n;
}

static uint64_t blocks_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (uint64_t)st.st_blocks : UINT64_MAX;
}

/* A tmpfs member is mapped (member_file.c): its pages with memory behind
 * them are copied to and from without system calls, holes go through
 * pread/pwrite. Random writes, reads and discards through the member (512
 * B units, across page edges, into holes and data) against a shadow, and
 * the file read through a descriptor of its own against it after each;
 * reads never give a hole memory (st_blocks unchanged by a read of it all),
 * a discard gives it back (mapped: the SIGBUS guard installed, as the uraid
 * program and the nbdkit plugin do). The same unmapped (URAID_MEMBER_MMAP=0). */
static void mapped_copies(bool mapped)
{
	char dir[64], path[96];
	if (!make_file(dir, sizeof(dir), path, sizeof(path), "/dev/shm"))
		return;
	uint8_t *shadow = calloc(1, MB), *buf = malloc(MB), *got = malloc(MB);
	uint64_t seed = mapped ? 41 : 42;
	/* Data at open in the first quarter, holes elsewhere. */
	int fd = open(path, O_RDWR);
	t_fill(&seed, shadow, MB / 4);
	CHECK(fd >= 0 && pwrite(fd, shadow, MB / 4, 0) == MB / 4);
	CHECK(uraid_member_map_guard_install() == 0);
	if (!mapped)
		setenv("URAID_MEMBER_MMAP", "0", 1);
	struct member *m = open_path(path, 0);
	unsetenv("URAID_MEMBER_MMAP");
	CHECKF(mappings_of(path) == (mapped ? 1 : 0), "%s: %d mappings", path, mappings_of(path));
	int bad = 0;
	for (int i = 0; m && i < 400 && !bad; i++) {
		uint64_t len = (t_rand(&seed) % 64 + 1) * 512;
		uint64_t off = t_rand(&seed) % ((MB - len) / 512 + 1) * 512;
		unsigned op = (unsigned)(t_rand(&seed) % 8);
		if (op < 4) {
			t_fill(&seed, buf, len);
			bad |= member_write(m, buf, len, off, op == 3 ? MEMBER_FUA : 0) != 0;
			memcpy(shadow + off, buf, len);
		} else if (op < 7) {
			bad |= member_read(m, buf, len, off) != 0 || memcmp(buf, shadow + off, len);
		} else {
			bad |= member_discard(m, off, len) != 0;
			memset(shadow + off, 0, len);
		}
		bad |= pread(fd, got, MB, 0) != MB || memcmp(got, shadow, MB);
		CHECKF(!bad, "%s: step %d (op %u, %llu bytes at %llu)",
		       mapped ? "mapped" : "unmapped", i, op, (unsigned long long)len,
		       (unsigned long long)off);
	}
	if (m) {
		/* A hole of its own, read through the member. */
		CHECK(member_discard(m, MB / 2, MB / 4) == 0);
		memset(shadow + MB / 2, 0, MB / 4);
		uint64_t before = blocks_of(path);
		CHECK(member_read(m, buf, MB, 0) == 0 && !memcmp(buf, shadow, MB));
		CHECKF(blocks_of(path) == before, "a read gave holes memory: %llu -> %llu blocks",
		       (unsigned long long)before, (unsigned long long)blocks_of(path));
		/* Written again, then read: the copies come back. */
		t_fill(&seed, buf, MB / 4);
		CHECK(member_write(m, buf, MB / 4, MB / 2, 0) == 0);
		memcpy(shadow + MB / 2, buf, MB / 4);
		CHECK(member_read(m, got, MB, 0) == 0 && !memcmp(got, shadow, MB));
		member_close(m);
	}
	if (fd >= 0)
		close(fd);
	free(shadow);
	free(buf);
	free(got);
	unlink(path);
	rmdir(dir);
}

static void mapped(void)
{
	mapped_copies(true);
}
static void unmapped(void)
{
	mapped_copies(false);
}

TEST_MAIN(T(tmpfs_file_is_in_memory), T(others_are_not), T(mapped), T(unmapped))
