/* Block devices: a loop device over a scratch file, with 512- and
 * 4096-byte logical blocks. The device is configured with AUTOCLEAR, so the
 * kernel detaches it when the last descriptor closes, even if this test
 * crashes; it is also detached explicitly at the end. Skips (with a note)
 * where loop devices cannot be set up (no root, no loop driver). */
#include "test_member_common.h"

#include <linux/loop.h>
#include <sys/ioctl.h>

#define LSIZE (8u << 20)

struct loopdev {
	int fd; /* held open for the whole test: keeps the device attached */
	char dev[64];
	char backing[128];
};

/* Attach `backing` to a free loop device; 0, or -errno (then skip). */
static int loop_attach(struct loopdev *l, unsigned block_size)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -errno;
	int bfd = open(l->backing, O_RDWR | O_CLOEXEC);
	if (bfd < 0) {
		close(ctl);
		return -errno;
	}
	int rc = -EBUSY;
	/* Other programs may grab the same free device: retry a few times. */
	for (int tries = 0; tries < 20 && rc == -EBUSY; tries++) {
		int n = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (n < 0) {
			rc = -errno;
			break;
		}
		snprintf(l->dev, sizeof(l->dev), "/dev/loop%d", n);
		l->fd = open(l->dev, O_RDWR | O_CLOEXEC);
		if (l->fd < 0) {
			rc = -errno;
			break;
		}
		struct loop_config cfg;
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (unsigned)bfd;
		cfg.block_size = block_size;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
		if (ioctl(l->fd, LOOP_CONFIGURE, &cfg) == 0) {
			rc = 0;
		} else {
			rc = -errno;
			close(l->fd);
			l->fd = -1;
		}
	}
	close(bfd);
	close(ctl);
	return rc;
}

static void loop_detach(struct loopdev *l)
{
	if (l->fd < 0)
		return;
	ioctl(l->fd, LOOP_CLR_FD, 0);
	close(l->fd);
	l->fd = -1;
}

static void one_loop(unsigned block_size, uint64_t seed)
{
	struct loopdev l = {.fd = -1};
	char tag[32];
	snprintf(tag, sizeof(tag), "loop%u", block_size);
	tm_path(l.backing, sizeof(l.backing), tag);
	unsigned char *shadow = malloc(LSIZE);
	uint64_t rs = seed;
	t_fill(&rs, shadow, LSIZE);
	FILE *fp = fopen(l.backing, "wb");
	CHECK(fp && fwrite(shadow, 1, LSIZE, fp) == LSIZE);
	if (fp)
		fclose(fp);
	int rc = loop_attach(&l, block_size);
	if (rc < 0) {
		printf("ok - loop%u # SKIP cannot set up a loop device: %s\n", block_size,
		       strerror(-rc));
		unlink(l.backing);
		free(shadow);
		return;
	}
	char err[256] = "";
	struct member *m = NULL, *m2 = NULL;
	rc = member_open_file(l.dev, MEMBER_DIRECT | MEMBER_EXCL, 0, &m, err, sizeof(err));
	CHECKF(rc == 0, "open %s: %d %s", l.dev, rc, err);
	if (rc)
		goto out;
	CHECK(strcmp(m->ops->kind, "blockdev") == 0);
	CHECK_EQ_U64(m->size, LSIZE);
	CHECK_EQ_U64(m->logical_block, block_size);
	CHECK(m->direct);
	CHECK_EQ_U64(m->dio_align, block_size);

	/* O_EXCL: a second exclusive open is refused, a plain one is not */
	err[0] = 0;
	rc = member_open_file(l.dev, MEMBER_EXCL, 0, &m2, err, sizeof(err));
	CHECKF(rc == -EBUSY && m2 == NULL, "second exclusive open: %d", rc);
	CHECKF(strstr(err, "in use") && strstr(err, l.dev), "message: %s", err);
	rc = member_open_file(l.dev, MEMBER_RDONLY, 0, &m2, err, sizeof(err));
	CHECK(rc == 0);
	if (m2)
		member_close(m2);

	/* contents written through the backing file are there */
	unsigned char *all = malloc(LSIZE);
	CHECK(member_read(m, all, LSIZE, 0) == 0);
	CHECK(memcmp(all, shadow, LSIZE) == 0);

	tm_random_io(m, shadow, seed + 1, 300);
	tm_big_unaligned(m, shadow, seed + 2);

	/* end of device: reads stop, writes fail */
	unsigned char buf[8192];
	memset(buf, 0x6b, sizeof(buf));
	CHECK(m->ops->pread(m, buf, 4096, LSIZE) == 0);
	CHECK(m->ops->pwrite(m, buf, 4096, LSIZE, 0) == -ENOSPC);
	CHECK(member_write(m, buf, 8192, LSIZE - 4096, 0) == -ENOSPC);
	CHECK(member_write(m, buf, 4096, LSIZE - 4096, MEMBER_FUA) == 0);
	memcpy(shadow + LSIZE - 4096, buf, 4096);
	/* the kernel's own answer past the end, without the member's checks */
	CHECK(pwrite(m->ops->fd(m), all, 4096, LSIZE) < 0);

	/* discard: block-aligned only; loop punches holes, reading zeros */
	CHECK(member_discard(m, 100, 4096) == -EINVAL);
	rc = member_discard(m, 65536, 131072);
	CHECKF(rc == 0 || rc == -EOPNOTSUPP, "discard: %d", rc);
	if (rc == 0)
		memset(shadow + 65536, 0, 131072);

	/* batched I/O on the device, both queue kinds */
	for (int k = 0; k < 2; k++) {
		if (k)
			setenv("URAID_IOQ", "sync", 1);
		struct member_ioq *q = NULL;
		CHECK(member_ioq_open(4, &q) == 0);
		unsetenv("URAID_IOQ");
		unsigned char *a = tm_alloc(65536, 0), *b = tm_alloc(10000, 3);
		unsigned char *ra = tm_alloc(65536, 0), *rb = tm_alloc(10000, 5);
		t_fill(&rs, a, 65536);
		t_fill(&rs, b, 10000);
		uint64_t oa = 1 << 20, ob = (2 << 20) + 77 + 100000 * (uint64_t)k;
		struct member_io w[] = {
		    {.m = m, .op = MEMBER_OP_WRITE, .buf = a, .len = 65536, .off = oa},
		    {.m = m,
		     .op = MEMBER_OP_WRITE,
		     .buf = b,
		     .len = 10000,
		     .off = ob,
		     .flags = MEMBER_FUA},
		    {.m = m, .op = MEMBER_OP_FLUSH},
		};
		CHECK(q && member_ioq_run(q, w, 3) == 0);
		CHECK(w[0].result == 65536 && w[1].result == 10000 && w[2].result == 0);
		memcpy(shadow + oa, a, 65536);
		memcpy(shadow + ob, b, 10000);
		struct member_io r[] = {
		    {.m = m, .op = MEMBER_OP_READ, .buf = ra, .len = 65536, .off = oa},
		    {.m = m, .op = MEMBER_OP_READ, .buf = rb, .len = 10000, .off = LSIZE - 5000},
		};
		CHECK(q && member_ioq_run(q, r, 2) == 0);
		CHECK(r[0].result == 65536 && memcmp(ra, a, 65536) == 0);
		CHECK(r[1].result == 5000 && memcmp(rb, shadow + LSIZE - 5000, 5000) == 0);
		tm_free(a, 0);
		tm_free(b, 3);
		tm_free(ra, 0);
		tm_free(rb, 5);
		member_ioq_close(q);
	}
	CHECK(member_flush(m) == 0);
	member_close(m);
	m = NULL;

	/* an exclusive holder outside uraid makes EXCL opens fail */
	int holder = open(l.dev, O_RDONLY | O_EXCL | O_CLOEXEC);
	CHECK(holder >= 0);
	rc = member_open_file(l.dev, MEMBER_EXCL, 0, &m2, err, sizeof(err));
	CHECK(rc == -EBUSY);
	if (holder >= 0)
		close(holder);
	rc = member_open_file(l.dev, MEMBER_EXCL, 0, &m2, err, sizeof(err));
	CHECK(rc == 0);
	if (m2)
		member_close(m2);
	free(all);
out:
	loop_detach(&l);
	/* what the device wrote is in the backing file, read without member code */
	CHECK(tm_file_equals(l.backing, shadow, LSIZE));
	unlink(l.backing);
	free(shadow);
}

static void loop512(void)
{
	one_loop(512, 1000);
}

static void loop4096(void)
{
	one_loop(4096, 2000);
}

TEST_MAIN(T(loop512), T(loop4096))
