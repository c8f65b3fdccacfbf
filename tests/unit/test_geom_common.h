/* Shared setup of the GEOM tests: component files in a temporary
 * directory (DIR/c0, c1, ...), opened by index. Header-only; each test
 * defines CSIZE (component bytes) before including it. */
#ifndef URAID_TEST_GEOM_COMMON_H
#define URAID_TEST_GEOM_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../harness.h"
#include "member/member.h"

static char tg_dir[64];

static inline void path_of(int i, char *p, size_t n)
{
	snprintf(p, n, "%s/c%d", tg_dir, i);
}

/* n component files of `size` bytes (zeros). */
static inline void make_files_sized(int n, uint64_t size)
{
	snprintf(tg_dir, sizeof(tg_dir), "/tmp/uraid-geom-XXXXXX");
	CHECK(mkdtemp(tg_dir) != NULL);
	for (int i = 0; i < n; i++) {
		char p[96], err[256];
		path_of(i, p, sizeof(p));
		struct member *m;
		CHECKF(member_open_file(p, MEMBER_CREATE, size, &m, err, sizeof(err)) == 0, "%s",
		       err);
		member_close(m);
	}
}

static inline void make_files(int n)
{
	make_files_sized(n, CSIZE);
}

/* Remove c0..c(n-1) and the directory. */
static inline void rm_files(int n)
{
	for (int i = 0; i < n; i++) {
		char p[96];
		path_of(i, p, sizeof(p));
		unlink(p);
	}
	rmdir(tg_dir);
}

static inline struct member *open_one(int i)
{
	char p[96], err[256];
	path_of(i, p, sizeof(p));
	struct member *m = NULL;
	CHECKF(member_open_file(p, 0, 0, &m, err, sizeof(err)) == 0, "%s", err);
	return m;
}

/* Open components 0..n-1 except `except` (-1: all) into m[0..). */
static inline void open_members(int n, struct member **m, int except)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		if (i != except)
			m[k++] = open_one(i);
}

/* The first len bytes of component i. */
static inline void read_disk(int i, uint8_t *buf, size_t len)
{
	struct member *m = open_one(i);
	CHECK(m && member_read(m, buf, len, 0) == 0);
	if (m)
		member_close(m);
}

#endif
