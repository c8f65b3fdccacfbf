/* Files and block devices as members: pread/pwrite on one descriptor,
 * O_DIRECT when the filesystem or device allows it, with a bounce buffer for
 * requests that are not aligned for O_DIRECT. */
#include "member/member_guard.h"
#include "member/member_int.h"
#include "util/errmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/uio.h>
#include <unistd.h>

/* Largest span one bounce buffer covers; bigger unaligned requests are
 * bounced in pieces so a huge request does not need a huge allocation. */
#define BOUNCE_MAX (1u << 20)
/* O_DIRECT alignment to assume for files when the kernel does not report it
 * (statx STATX_DIOALIGN, Linux 6.1+): safe for 512- and 4096-byte devices. */
#define DIO_FALLBACK_ALIGN 4096u

struct file_member {
	struct member m;
	int fd;
	bool blockdev;
	dev_t dev; /* the opened inode, for file_check */
	ino_t ino;
	/* Its absolute path at open (NULL when unknown): a relative name would
	 * name another file once the process changed directory (nbdkit does). */
	char *abspath;
	/* Serializes read-modify-write of edge blocks by unaligned writes. */
	pthread_mutex_t rmw_lock;
	/* In memory (m.in_memory): the file mapped shared, [0, map_len), and
	 * one bit per 4 KiB page known to have memory behind it (data there
	 * at open, or written since, and not punched out). Requests on such
	 * pages are memory copies without a system call; elsewhere pread and
	 * pwrite (a copy into a hole of a mapping would allocate on a page
	 * fault, where a full tmpfs raises SIGBUS instead of ENOSPC, and a
	 * read would fill holes). NULL: not mapped. */
	uint8_t *map;
	size_t map_len;
	uint64_t *backed;
};

#define MAP_PAGE 4096u

static struct file_member *fm_of(struct member *m)
{
	return (struct file_member *)m;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Read until `len` bytes or end of file; returns bytes read or -errno. */
static ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return done ? (ssize_t)done : -errno;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

/* One write call; `dsync` makes it durable (FUA) before returning. */
static ssize_t write_once(int fd, const void *buf, size_t len, uint64_t off, bool dsync)
{
	ssize_t r;
	if (!dsync) {
		r = pwrite(fd, buf, len, (off_t)off);
		return r < 0 ? -errno : r;
	}
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	r = pwritev2(fd, &iov, 1, (off_t)off, RWF_DSYNC);
	if (r >= 0)
		return r;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -errno;
	/* Kernel without RWF_DSYNC: the same guarantee in two steps. */
	r = pwrite(fd, buf, len, (off_t)off);
	if (r < 0)
		return -errno;
	if (fdatasync(fd) < 0)
		return -errno;
	return r;
}

static ssize_t write_full(int fd, const void *buf, size_t len, uint64_t off, bool dsync)
{
	size_t done = 0;
	while (done < len) {
		ssize_t r = write_once(fd, (const char *)buf + done, len - done, off + done, dsync);
		if (r == -EINTR || r == -EAGAIN)
			continue;
		if (r < 0)
			return r;
		if (r == 0)
			return -EIO;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

/* A bounce buffer for an aligned span of `span` bytes (a multiple of the
 * alignment): the whole span when small, else BOUNCE_MAX at a time. */
static void *bounce_alloc(const struct member *m, uint64_t span, size_t *cap)
{
	size_t align = m->mem_align > m->dio_align ? m->mem_align : m->dio_align;
	size_t n = span < BOUNCE_MAX ? (size_t)span : BOUNCE_MAX;
	if (n < m->dio_align)
		n = m->dio_align;
	void *b = NULL;
	if (align < sizeof(void *))
		align = sizeof(void *);
	if (posix_memalign(&b, align, n) != 0)
		return NULL;
	*cap = n;
	return b;
}

/* An unaligned read on an O_DIRECT descriptor: read the aligned span that
 * covers it piece by piece and copy out the requested bytes. */
static ssize_t bounce_read(struct file_member *f, void *buf, size_t len, uint64_t off)
{
	const uint64_t a = f->m.dio_align;
	const uint64_t span_end = (off + len + a - 1) / a * a;
	size_t cap;
	unsigned char *b = bounce_alloc(&f->m, span_end - off / a * a, &cap);
	if (!b)
		return -ENOMEM;
	size_t done = 0;
	ssize_t ret = 0;
	while (done < len) {
		uint64_t pos = off + done;
		uint64_t start = pos / a * a;
		uint64_t end = start + cap < span_end ? start + cap : span_end;
		ssize_t r = pread_full(f->fd, b, (size_t)(end - start), start);
		if (r < 0) {
			ret = r;
			break;
		}
		size_t skip = (size_t)(pos - start);
		if ((size_t)r <= skip)
			break; /* end of file */
		size_t n = (size_t)r - skip;
		if (n > len - done)
			n = len - done;
		memcpy((char *)buf + done, b + skip, n);
		done += n;
		if ((uint64_t)r < end - start)
			break;
	}
	free(b);
	return done ? (ssize_t)done : ret;
}

/* Fill [dst, dst+len) from the device at `off`, zeros past end of file. */
static int read_block(struct file_member *f, unsigned char *dst, size_t len, uint64_t off)
{
	ssize_t r = pread_full(f->fd, dst, len, off);
	if (r < 0)
		return (int)r;
	memset(dst + r, 0, len - (size_t)r);
	return 0;
}

/* An unaligned write on an O_DIRECT descriptor: for each piece of the
 * aligned span, read the partially covered edge blocks, patch in the new
 * bytes, write the whole aligned piece. */
static ssize_t bounce_write(struct file_member *f, const void *buf, size_t len, uint64_t off,
                            bool dsync)
{
	const uint64_t a = f->m.dio_align;
	const uint64_t span_end = (off + len + a - 1) / a * a;
	size_t cap;
	unsigned char *b = bounce_alloc(&f->m, span_end - off / a * a, &cap);
	if (!b)
		return -ENOMEM;
	size_t done = 0;
	ssize_t ret = 0;
	pthread_mutex_lock(&f->rmw_lock);
	while (done < len) {
		uint64_t pos = off + done;
		uint64_t start = pos / a * a;
		uint64_t end = start + cap < span_end ? start + cap : span_end;
		size_t span = (size_t)(end - start);
		size_t skip = (size_t)(pos - start);
		size_t n = span - skip;
		if (n > len - done)
			n = len - done;
		int rc = 0;
		if (skip)
			rc = read_block(f, b, (size_t)a, start);
		/* The tail block needs reading unless the head read covered it. */
		if (rc == 0 && skip + n < span && !(skip && span == a))
			rc = read_block(f, b + span - a, (size_t)a, end - a);
		if (rc < 0) {
			ret = rc;
			break;
		}
		memcpy(b + skip, (const char *)buf + done, n);
		ssize_t w = write_full(f->fd, b, span, start, dsync);
		if (w < 0) {
			ret = w;
			break;
		}
		done += n;
	}
	pthread_mutex_unlock(&f->rmw_lock);
	free(b);
	return done ? (ssize_t)done : ret;
}

/* One pread/pwrite transfers at most this much (Linux caps at 2 GiB - 4 KiB). */
#define IO_MAX ((size_t)1 << 30)

/* Every page of [off, off+len) backed (and mapped). */
static bool map_covers(const struct file_member *f, size_t len, uint64_t off)
{
	if (!f->map || off + len > f->map_len)
		return false;
	for (uint64_t p = off / MAP_PAGE, e = (off + len - 1) / MAP_PAGE; p <= e; p++) {
		uint64_t w = __atomic_load_n(&f->backed[p / 64], __ATOMIC_RELAXED);
		if (p % 64 == 0 && e - p >= 63 && w == ~0ull) {
			p += 63;
			continue;
		}
		if (!(w >> (p % 64) & 1))
			return false;
	}
	return true;
}

/* Pages touching [off, off+len) marked backed (set) or not. Pages newly
 * backed get their page table entries in one call, not one fault each on
 * their first copy (a 1 MiB copy into fresh entries: 256 faults). */
static void map_mark(struct file_member *f, uint64_t off, uint64_t len, bool set)
{
	if (!f->map || len == 0 || off >= f->map_len)
		return;
	uint64_t end = off + len > f->map_len ? f->map_len : off + len;
	uint64_t first = UINT64_MAX, last = 0;
	for (uint64_t p = off / MAP_PAGE, e = (end - 1) / MAP_PAGE; p <= e; p++) {
		uint64_t bit = 1ull << (p % 64);
		if (!set) {
			__atomic_and_fetch(&f->backed[p / 64], ~bit, __ATOMIC_RELAXED);
		} else if (!(__atomic_fetch_or(&f->backed[p / 64], bit, __ATOMIC_RELAXED) & bit)) {
			first = first < p ? first : p;
			last = p;
		}
	}
#ifdef MADV_POPULATE_WRITE
	/* Linux 5.14+; without it the faults come on first use. */
	if (first <= last) {
		uint64_t a = first * MAP_PAGE, b = (last + 1) * MAP_PAGE;
		b = b > f->map_len ? f->map_len : b;
		(void)madvise(f->map + a, (size_t)(b - a),
		              f->m.readonly ? MADV_POPULATE_READ : MADV_POPULATE_WRITE);
	}
#endif
}

/* A tmpfs file opened without O_DIRECT: mapped, the pages with data marked
 * (SEEK_DATA), where the process installed the SIGBUS guard (member_guard.h:
 * a copy to or from a page that a truncation cut off raises SIGBUS, which
 * the guard turns into -EIO, failing the member as an unmapped one is) and
 * URAID_MEMBER_MMAP is not 0. */
static void map_open(struct file_member *f)
{
	const char *env = getenv("URAID_MEMBER_MMAP");
	if (!f->m.in_memory || f->m.size == 0 || f->m.size > SIZE_MAX ||
	    (env && !strcmp(env, "0")) || !member_map_guard_installed())
		return;
	size_t len = (size_t)f->m.size, words = (len / MAP_PAGE + 64) / 64;
	f->backed = calloc(words, sizeof(uint64_t));
	void *p = f->backed ? mmap(NULL, len, PROT_READ | (f->m.readonly ? 0 : PROT_WRITE),
	                           MAP_SHARED, f->fd, 0)
	                    : MAP_FAILED;
	if (p == MAP_FAILED) {
		free(f->backed);
		f->backed = NULL;
		return;
	}
	f->map = p;
	f->map_len = len;
	f->m.mapped = true;
	for (off_t pos = 0; pos < (off_t)len;) {
		off_t d = lseek(f->fd, pos, SEEK_DATA);
		off_t h = d < 0 ? -1 : lseek(f->fd, d, SEEK_HOLE);
		if (d < 0 || h <= d)
			break;
		/* Only whole pages: a data extent's partial page is backed too,
		 * but nothing is lost by leaving it to pread/pwrite. */
		uint64_t a = ((uint64_t)d + MAP_PAGE - 1) / MAP_PAGE * MAP_PAGE;
		uint64_t b = (uint64_t)h / MAP_PAGE * MAP_PAGE;
		if (b > a)
			map_mark(f, a, b - a, true);
		pos = h;
	}
}

static ssize_t file_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct file_member *f = fm_of(m);
	member_op_bounds(m, MEMBER_OP_READ, &len, off, IO_MAX);
	if (len == 0)
		return 0;
	if (map_covers(f, len, off)) {
		int rc = member_map_copy(buf, f->map + off, len, f->map, f->map_len);
		return rc < 0 ? rc : (ssize_t)len;
	}
	if (!member_aligned(m, buf, len, off))
		return bounce_read(f, buf, len, off);
	ssize_t r = pread(f->fd, buf, len, (off_t)off);
	return r < 0 ? -errno : r;
}

static ssize_t file_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                           unsigned flags)
{
	struct file_member *f = fm_of(m);
	int rc = member_op_bounds(m, MEMBER_OP_WRITE, &len, off, IO_MAX);
	if (rc < 0)
		return rc;
	if (len == 0)
		return 0;
	bool dsync = flags & MEMBER_FUA;
	/* tmpfs has nothing to make durable: FUA asks for nothing more. */
	if (map_covers(f, len, off)) {
		rc = member_map_copy(f->map + off, buf, len, f->map, f->map_len);
		return rc < 0 ? rc : (ssize_t)len;
	}
	if (!member_aligned(m, buf, len, off))
		return bounce_write(f, buf, len, off, dsync);
	/* Mapped, into a hole: not past the end of a file cut short under
	 * the array, which the write would extend again (see m.mapped). */
	struct stat st;
	if (f->map && (fstat(f->fd, &st) < 0 || (uint64_t)st.st_size < m->size))
		return -EIO;
	ssize_t r = write_once(f->fd, buf, len, off, dsync);
	if (r > 0)
		map_mark(f, off, (uint64_t)r, true); /* a written page is backed */
	return r;
}

static void *file_map_addr(struct member *m, uint64_t off, size_t len)
{
	struct file_member *f = fm_of(m);
	return map_covers(f, len, off) ? f->map + off : NULL;
}

static int file_flush(struct member *m)
{
	return fdatasync(fm_of(m)->fd) < 0 ? -errno : 0;
}

/* Block devices: PUNCH_HOLE is the kernel's write-zeroes with unmap allowed
 * and no fallback (zeros guaranteed, -EOPNOTSUPP without the offload),
 * ZERO_RANGE the same without unmap, falling back to writing zeros; both
 * need logical-block alignment. Files: holes and zeroed extents. */
static int file_fallocate(struct file_member *f, int mode, uint64_t off, uint64_t len)
{
	if (f->blockdev && (off % f->m.logical_block || len % f->m.logical_block))
		return -EINVAL;
	/* Pages may lose their memory, whatever the outcome. */
	map_mark(f, off, len, false);
	if (fallocate(f->fd, mode | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) < 0)
		return errno == ENOSYS || errno == ENOTTY ? -EOPNOTSUPP : -errno;
	return 0;
}

static int blk_ioctl(struct file_member *f, unsigned long req, uint64_t off, uint64_t len)
{
	if (off % f->m.logical_block || len % f->m.logical_block)
		return -EINVAL;
	uint64_t range[2] = {off, len};
	if (ioctl(f->fd, req, range) < 0)
		return errno == ENOTTY || errno == EOPNOTSUPP ? -EOPNOTSUPP : -errno;
	return 0;
}

/* A discard: BLKDISCARD on a block device (what reads back after is the
 * device's business), a punched hole in a file. */
static int file_discard(struct member *m, uint64_t off, uint64_t len)
{
	struct file_member *f = fm_of(m);
	int rc = member_discard_check(m, off, len);
	if (rc < 0 || len == 0)
		return rc;
	if (f->blockdev)
		return blk_ioctl(f, BLKDISCARD, off, len);
	return file_fallocate(f, FALLOC_FL_PUNCH_HOLE, off, len);
}

/* Zeros, always: MEMBER_ZERO_UNMAP punches (a device's write-zeroes that
 * may unmap), else zeroed extents; a device without the offload gets
 * BLKZEROOUT, which writes the zeros where it must. */
static int file_write_zeroes(struct member *m, uint64_t off, uint64_t len, unsigned flags)
{
	struct file_member *f = fm_of(m);
	int rc = file_fallocate(
	    f, (flags & MEMBER_ZERO_UNMAP) ? FALLOC_FL_PUNCH_HOLE : FALLOC_FL_ZERO_RANGE, off, len);
	if (rc == -EOPNOTSUPP && f->blockdev)
		rc = blk_ioctl(f, BLKZEROOUT, off, len);
	return rc;
}

/* A SCSI disk's write-zeroes, as sd chose it (scsi_disk/.../zeroing_mode):
 * true when it may unmap (WRITE SAME with UNMAP, on a disk whose unmapped
 * blocks read back zeros: LBPRZ), false when it writes zeros in place, and
 * true when the device is not a SCSI disk (nothing to tell). */
static bool scsi_zeroing_unmaps(dev_t rdev)
{
	char pat[128];
	const char *fmt[] = {"/sys/dev/block/%u:%u/device/scsi_disk/*/zeroing_mode",
	                     "/sys/dev/block/%u:%u/../device/scsi_disk/*/zeroing_mode"};
	for (int i = 0; i < 2; i++) {
		snprintf(pat, sizeof(pat), fmt[i], major(rdev), minor(rdev));
		glob_t g;
		if (glob(pat, 0, NULL, &g) != 0)
			continue;
		char mode[64] = "";
		FILE *fp = fopen(g.gl_pathv[0], "re");
		globfree(&g);
		if (!fp)
			continue;
		bool ok = fgets(mode, sizeof(mode), fp) != NULL;
		fclose(fp);
		return ok && strstr(mode, "unmap") != NULL;
	}
	return true;
}

/* Does the device zero what it is told to discard? Linux dropped
 * discard_zeroes_data (4.12: always 0, BLKDISCARDZEROES too); what
 * guarantees zeros now is the write-zeroes offload (queue/
 * write_zeroes_max_bytes > 0), which PUNCH_HOLE on the device uses with
 * unmap allowed. A SCSI disk whose write-zeroes only writes zeros in place
 * (no LBPRZ) does not count: it gives nothing back. A partition reads its
 * disk's queue. */
static bool blockdev_zeroes(dev_t rdev)
{
	char path[128];
	const char *fmt[] = {"/sys/dev/block/%u:%u/queue/write_zeroes_max_bytes",
	                     "/sys/dev/block/%u:%u/../queue/write_zeroes_max_bytes"};
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), fmt[i], major(rdev), minor(rdev));
		FILE *fp = fopen(path, "re");
		if (!fp)
			continue;
		unsigned long long v = 0;
		int ok = fscanf(fp, "%llu", &v);
		fclose(fp);
		return ok == 1 && v > 0 && scsi_zeroing_unmaps(rdev);
	}
	return false;
}

/* Shrunk (a file truncated under the array: later writes would silently
 * extend it again and its hole read back as zeros), gone from its path, or
 * replaced there by another file or device. */
static int file_check(struct member *m, char *why, size_t len)
{
	struct file_member *f = fm_of(m);
	struct stat st, at;
	if (fstat(f->fd, &st) < 0) {
		int e = errno;
		snprintf(why, len, "%s: fstat: %s", m->name, strerror(e));
		return -e;
	}
	uint64_t now = (uint64_t)st.st_size;
	if (f->blockdev && ioctl(f->fd, BLKGETSIZE64, &now) < 0)
		now = m->size;
	if (now < m->size) {
		snprintf(why, len, "%s shrank from %llu to %llu bytes", m->name,
		         (unsigned long long)m->size, (unsigned long long)now);
		return -ENODEV;
	}
	if (!f->abspath)
		return 0;
	if (stat(f->abspath, &at) < 0) {
		snprintf(why, len, "%s vanished (%s)", m->name, strerror(errno));
		return -ENODEV;
	}
	if (at.st_dev != f->dev || at.st_ino != f->ino ||
	    (f->blockdev && at.st_rdev != st.st_rdev)) {
		snprintf(why, len, "%s was replaced: the path names another %s now", m->name,
		         f->blockdev ? "device" : "file");
		return -ENODEV;
	}
	return 0;
}

#define TMPFS_MAGIC_NR 0x01021994

static int file_fd(struct member *m)
{
	return fm_of(m)->fd;
}

static void file_close(struct member *m)
{
	struct file_member *f = fm_of(m);
	if (f->map)
		munmap(f->map, f->map_len);
	free(f->backed);
	close(f->fd);
	pthread_mutex_destroy(&f->rmw_lock);
	free(f->abspath);
	free(f);
}

static const struct member_ops file_ops = {
    .kind = "file",
    .pread = file_pread,
    .pwrite = file_pwrite,
    .flush = file_flush,
    .discard = file_discard,
    .write_zeroes = file_write_zeroes,
    .fd = file_fd,
    .close = file_close,
    .check = file_check,
    .map_addr = file_map_addr,
};

static const struct member_ops blockdev_ops = {
    .kind = "blockdev",
    .pread = file_pread,
    .pwrite = file_pwrite,
    .flush = file_flush,
    .discard = file_discard,
    .write_zeroes = file_write_zeroes,
    .fd = file_fd,
    .close = file_close,
    .check = file_check,
    .map_addr = file_map_addr,
};

/* O_DIRECT alignment of an open descriptor: what the kernel reports, else
 * the logical block size (devices) or a safe guess (files). */
static void direct_alignment(struct file_member *f)
{
	uint32_t off_align = f->blockdev ? f->m.logical_block : DIO_FALLBACK_ALIGN;
	uint32_t mem_align = off_align;
	struct statx sx;
	if (statx(f->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
	    (sx.stx_mask & STATX_DIOALIGN) && is_pow2(sx.stx_dio_offset_align) &&
	    is_pow2(sx.stx_dio_mem_align)) {
		off_align = sx.stx_dio_offset_align;
		mem_align = sx.stx_dio_mem_align;
	}
	if (f->blockdev && off_align < f->m.logical_block)
		off_align = f->m.logical_block;
	f->m.dio_align = off_align;
	f->m.mem_align = mem_align;
}

static int open_direct_or_not(const char *path, int oflags, bool want_direct, bool *direct)
{
	*direct = false;
	if (want_direct) {
		int fd = open(path, oflags | O_DIRECT);
		if (fd >= 0) {
			*direct = true;
			return fd;
		}
		/* EINVAL: this filesystem refuses O_DIRECT; use the page cache. */
		if (errno != EINVAL)
			return -errno;
	}
	int fd = open(path, oflags);
	return fd >= 0 ? fd : -errno;
}

/* Create a missing file as a sparse regular file of `size` bytes. Returns
 * 1 when created, 0 when something already exists, or -errno. */
static int create_sparse(const char *path, uint64_t size, char *err, size_t errlen)
{
	if (size == 0 || size > (uint64_t)INT64_MAX)
		return errmsg(err, errlen, -EINVAL, "%s: cannot create a member of %llu bytes",
		              path, (unsigned long long)size);
	/* 0600: the array's data is readable through its members. */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			return 0;
		int e = errno;
		return errmsg(err, errlen, -e, "cannot create %s: %s", path, strerror(e));
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		int e = errno;
		close(fd);
		unlink(path);
		return errmsg(err, errlen, -e, "cannot size %s to %llu bytes: %s", path,
		              (unsigned long long)size, strerror(e));
	}
	close(fd);
	return 1;
}

int member_open_file(const char *path, unsigned flags, uint64_t size, struct member **out,
                     char *err, size_t errlen)
{
	const unsigned known = MEMBER_RDONLY | MEMBER_DIRECT | MEMBER_CREATE | MEMBER_EXCL;
	if (!out)
		return errmsg(err, errlen, -EINVAL, "member_open_file: no result pointer");
	*out = NULL;
	if (!path || !*path)
		return errmsg(err, errlen, -EINVAL, "member_open_file: empty path");
	if (member_is_remote(path))
		return member_open_nbd(path, flags, out, err, errlen);
	if (flags & ~known)
		return errmsg(err, errlen, -EINVAL, "%s: unknown open flags 0x%x", path,
		              flags & ~known);
	if ((flags & MEMBER_RDONLY) && (flags & MEMBER_CREATE))
		return errmsg(err, errlen, -EINVAL, "%s: cannot create a read-only member", path);

	struct stat st;
	bool created = false;
	if (stat(path, &st) < 0) {
		int e = errno;
		if (e != ENOENT || !(flags & MEMBER_CREATE))
			return errmsg(err, errlen, -e, "cannot open %s: %s", path, strerror(e));
		int rc = create_sparse(path, size, err, errlen);
		if (rc < 0)
			return rc;
		created = rc == 1;
		if (stat(path, &st) < 0) {
			e = errno;
			return errmsg(err, errlen, -e, "cannot open %s: %s", path, strerror(e));
		}
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return errmsg(err, errlen, -EINVAL, "%s: not a regular file or block device", path);

	bool blockdev = S_ISBLK(st.st_mode);
	int oflags = ((flags & MEMBER_RDONLY) ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	if (blockdev && (flags & MEMBER_EXCL))
		oflags |= O_EXCL;
	bool direct;
	int fd = open_direct_or_not(path, oflags, flags & MEMBER_DIRECT, &direct);
	if (fd < 0) {
		if (fd == -EBUSY)
			return errmsg(err, errlen, fd,
			              "%s: device is in use (mounted, part of an array, or "
			              "opened exclusively by another program)",
			              path);
		if (created)
			unlink(path);
		return errmsg(err, errlen, fd, "cannot open %s: %s", path, strerror(-fd));
	}

	struct file_member *f = calloc(1, sizeof(*f));
	if (!f) {
		close(fd);
		return errmsg(err, errlen, -ENOMEM, "%s: out of memory", path);
	}
	f->fd = fd;
	f->blockdev = blockdev;
	f->m.ops = blockdev ? &blockdev_ops : &file_ops;
	f->m.priv = f;
	f->m.readonly = flags & MEMBER_RDONLY;
	member_set_name(&f->m, path);
	int rc = 0;
	/* Check the descriptor itself: the path may have changed since stat. */
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		errmsg(err, errlen, rc, "%s: fstat: %s", path, strerror(-rc));
		goto fail;
	}
	if ((S_ISBLK(st.st_mode) != blockdev) || (!blockdev && !S_ISREG(st.st_mode))) {
		rc = errmsg(err, errlen, -EINVAL, "%s: changed type while being opened", path);
		goto fail;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->abspath = realpath(path, NULL);
	if (blockdev) {
		uint64_t bytes = 0;
		int lbs = 0;
		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0 || ioctl(fd, BLKSSZGET, &lbs) < 0) {
			rc = -errno;
			errmsg(err, errlen, rc, "%s: cannot query device size: %s", path,
			       strerror(-rc));
			goto fail;
		}
		if (lbs < 512 || !is_pow2((uint64_t)lbs)) {
			rc = errmsg(err, errlen, -EINVAL, "%s: odd logical block size %d", path,
			            lbs);
			goto fail;
		}
		f->m.size = bytes;
		f->m.logical_block = (uint32_t)lbs;
		f->m.discard_zeroes = blockdev_zeroes(st.st_rdev);
	} else {
		f->m.size = (uint64_t)st.st_size;
		f->m.logical_block = 512;
		f->m.discard_zeroes = true; /* a punched hole reads as zeros */
	}
	f->m.dio_align = 1;
	f->m.mem_align = 1;
	if (direct) {
		direct_alignment(f);
		/* A file whose tail is not a whole aligned block could not have its
		 * last bytes rewritten without growing it: use the page cache. */
		if (f->m.size % f->m.dio_align != 0) {
			int fl = fcntl(fd, F_GETFL);
			if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_DIRECT) < 0) {
				rc = -errno;
				errmsg(err, errlen, rc, "%s: cannot turn off O_DIRECT: %s", path,
				       strerror(-rc));
				goto fail;
			}
			direct = false;
			f->m.dio_align = 1;
			f->m.mem_align = 1;
		}
	}
	f->m.direct = direct;
	/* tmpfs keeps the data in the page cache, which is what requests see
	 * without O_DIRECT: every request is a memory copy. */
	struct statfs sfs;
	f->m.in_memory =
	    !blockdev && !direct && fstatfs(fd, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC_NR;
	map_open(f);
	pthread_mutex_init(&f->rmw_lock, NULL);
	*out = &f->m;
	return 0;
fail:
	close(fd);
	free(f->abspath);
	free(f);
	if (created)
		unlink(path);
	return rc;
}
