/* member in_memory: set only where every request is a page-cache copy (a
 * tmpfs file opened without O_DIRECT), because sync work then reads and
 * writes synchronously on two threads. Wrappers (whose requests must keep
 * passing through them, and whose state is not built for that), O_DIRECT,
 * memory members and other file systems must leave it false. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../harness.h"
#include "member/member.h"
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

TEST_MAIN(T(tmpfs_file_is_in_memory), T(others_are_not))
