/* Shared helpers of the member tests: a shadow model of a member (a plain
 * byte array plus the end-of-member rules spelled out case by case) and
 * randomized request generators with fixed seeds. */
#ifndef URAID_TEST_MEMBER_COMMON_H
#define URAID_TEST_MEMBER_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness.h"
#include "member/member.h"

/* Scratch files go to /var/tmp: a disk filesystem that takes O_DIRECT. */
static inline void tm_path(char *buf, size_t n, const char *tag)
{
	snprintf(buf, n, "/var/tmp/uraid-test-%s-%ld", tag, (long)getpid());
}

/* A buffer of len bytes whose start is misaligned by `skew` bytes from a
 * 4096-aligned allocation. Free with tm_free(p, skew). */
static inline unsigned char *tm_alloc(size_t len, size_t skew)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, len + skew + 1) != 0)
		abort();
	return (unsigned char *)p + skew;
}
static inline void tm_free(unsigned char *p, size_t skew)
{
	free(p - skew);
}

/* Random request geometry: a mix of sector-aligned, 4K-aligned and odd
 * offsets/lengths, some crossing or starting past the member's end. */
static inline void tm_pick(uint64_t *rs, uint64_t size, uint64_t *off, size_t *len)
{
	uint64_t kind = t_rand(rs) % 8;
	uint64_t o = t_rand(rs) % size;
	size_t l = (size_t)(t_rand(rs) % 70000);
	switch (kind) {
	case 0:
		o &= ~(uint64_t)4095;
		l = (l & ~(size_t)4095) + 4096;
		break;
	case 1:
		o &= ~(uint64_t)511;
		l = (l & ~(size_t)511) + 512;
		break;
	case 2: o = size - t_rand(rs) % 3000; break; /* near/over the end */
	case 3:
		o = size + t_rand(rs) % 3;
		l %= 5000;
		break;         /* at/past the end */
	case 4: l %= 9; break; /* tiny */
	default: break;        /* anything */
	}
	*off = o;
	*len = l;
}

/* Bytes a read of len at off gets from a member of `size` bytes. */
static inline size_t tm_expect_read(uint64_t size, uint64_t off, size_t len)
{
	if (off >= size)
		return 0;
	return size - off < len ? (size_t)(size - off) : len;
}

/* Random member_read/member_write (and op-level pread) against a shadow copy.
 * `fua_too` alternates the FUA flag on writes. */
static inline void tm_random_io(struct member *m, unsigned char *shadow, uint64_t seed, int iters)
{
	uint64_t rs = seed;
	const uint64_t size = m->size;
	for (int it = 0; it < iters; it++) {
		uint64_t off;
		size_t len;
		tm_pick(&rs, size, &off, &len);
		size_t skew = t_rand(&rs) % 4 == 0 ? (size_t)(t_rand(&rs) % 64) : 0;
		unsigned char *buf = tm_alloc(len, skew);
		bool fits = off <= size && len <= size - off;
		switch (t_rand(&rs) % 3) {
		case 0: { /* write */
			t_fill(&rs, buf, len);
			unsigned fl = t_rand(&rs) % 4 == 0 ? MEMBER_FUA : 0;
			int rc = member_write(m, buf, len, off, fl);
			if (fits) {
				CHECKF(rc == 0, "%s: write %zu@%" PRIu64 ": %d", m->ops->kind, len,
				       off, rc);
				memcpy(shadow + off, buf, len);
			} else {
				CHECKF(rc == -ENOSPC, "%s: write %zu@%" PRIu64 " past end: %d",
				       m->ops->kind, len, off, rc);
			}
			break;
		}
		case 1: { /* member_read: all or -EIO */
			memset(buf, 0xA5, len);
			int rc = member_read(m, buf, len, off);
			if (fits) {
				CHECKF(rc == 0, "%s: read %zu@%" PRIu64 ": %d", m->ops->kind, len,
				       off, rc);
				CHECKF(memcmp(buf, shadow + off, len) == 0,
				       "%s: read %zu@%" PRIu64 " data differs", m->ops->kind, len,
				       off);
			} else {
				CHECKF(rc == -EIO, "%s: read %zu@%" PRIu64 " past end: %d",
				       m->ops->kind, len, off, rc);
			}
			break;
		}
		default: { /* op-level pread loop: short only at the end */
			memset(buf, 0x5A, len);
			size_t want = tm_expect_read(size, off, len), got = 0;
			for (;;) {
				ssize_t r = m->ops->pread(m, buf + got, len - got, off + got);
				if (r <= 0) {
					CHECKF(r == 0, "%s: pread: %zd", m->ops->kind, r);
					break;
				}
				got += (size_t)r;
			}
			CHECKF(got == want, "%s: pread %zu@%" PRIu64 " got %zu want %zu",
			       m->ops->kind, len, off, got, want);
			CHECK(memcmp(buf, shadow + off, got < want ? got : want) == 0);
		}
		}
		tm_free(buf, skew);
	}
}

/* Unaligned requests larger than one bounce buffer (1 MiB): written and read
 * back with misaligned buffers, checked against the shadow. */
static inline void tm_big_unaligned(struct member *m, unsigned char *shadow, uint64_t seed)
{
	uint64_t rs = seed;
	const size_t len = (5u << 19) + 123;
	if (m->size < len + 4096)
		return;
	uint64_t off = 777 + t_rand(&rs) % (m->size - len - 1000);
	unsigned char *w = tm_alloc(len, 3), *r = tm_alloc(len + 600, 9);
	t_fill(&rs, w, len);
	CHECK(member_write(m, w, len, off, 0) == 0);
	memcpy(shadow + off, w, len);
	/* read a larger misaligned window around it */
	uint64_t roff = off - 555;
	size_t rlen = len + 600 < m->size - roff ? len + 600 : (size_t)(m->size - roff);
	CHECK(member_read(m, r, rlen, roff) == 0);
	CHECKF(memcmp(r, shadow + roff, rlen) == 0, "%s: big unaligned read differs", m->ops->kind);
	tm_free(w, 3);
	tm_free(r, 9);
}

/* Compare a file's bytes, read with plain stdio (no member code), to shadow. */
static inline bool tm_file_equals(const char *path, const unsigned char *shadow, uint64_t size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	unsigned char *b = malloc(65536);
	uint64_t pos = 0;
	bool same = true;
	size_t n;
	while (same && (n = fread(b, 1, 65536, f)) > 0) {
		if (pos + n > size || memcmp(b, shadow + pos, n) != 0)
			same = false;
		pos += n;
	}
	free(b);
	fclose(f);
	return same && pos == size;
}

#endif
