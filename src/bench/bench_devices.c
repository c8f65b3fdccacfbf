/* Block devices as bench members (--members-dev): the list, and the checks
 * made before anything is written. A benchmark destroys what its members
 * hold, so a device is only used when it is identified with certainty as
 * holding nothing: no md superblock (0.90, 1.0, 1.1, 1.2), no partition
 * table, no filesystem, swap, LUKS, LVM or GEOM label we know by its magic,
 * nothing blkid's low-level probe recognises, no partitions in sysfs — or
 * when the user said --force-destroy. A device in use (mounted, swap, held
 * by md/dm, a partition of it in use: the kernel refuses an exclusive open)
 * is refused even then. Everything found is reported by name. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bench/bench_workloads.h"
#include "util/endian.h"
#include "util/errmsg.h"

#define MD_MAGIC    0xa92b4efcu
#define PROBE_BYTES (128u << 10) /* read at each end of the device */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

int bw_dev_list(const char *arg, char (*out)[256], int max, int *n, char *err, size_t errlen)
{
	struct stat st;
	*n = 0;
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
		DIR *d = opendir(arg);
		if (!d)
			return errmsg(err, errlen, -errno, "--members-dev %s: %s", arg,
			              strerror(errno));
		struct dirent *e;
		while ((e = readdir(d))) {
			char p[512];
			struct stat ds;
			if (e->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", arg, e->d_name);
			/* stat follows links (/dev/disk/by-id style directories) */
			if (stat(p, &ds) < 0 || !S_ISBLK(ds.st_mode))
				continue;
			size_t pl = strlen(p);
			if (*n == max || pl >= 256) {
				closedir(d);
				return errmsg(err, errlen, -EINVAL,
				              "--members-dev %s: more than %d devices, or a path "
				              "over 255 bytes",
				              arg, max);
			}
			memcpy(out[(*n)++], p, pl + 1);
		}
		closedir(d);
		qsort(out, (size_t)*n, sizeof(out[0]), cmp_str);
		if (*n == 0)
			return errmsg(err, errlen, -ENOENT,
			              "--members-dev %s: no block devices in this directory", arg);
		return 0;
	}
	for (const char *s = arg; *s;) {
		size_t l = strcspn(s, ",");
		if (l == 0 || l >= 256 || *n == max)
			return errmsg(err, errlen, -EINVAL,
			              "--members-dev %s: a list DEV,DEV,... (at most %d) or a "
			              "directory",
			              arg, max);
		memcpy(out[*n], s, l);
		out[(*n)++][l] = 0;
		s += l + (s[l] == ',');
	}
	return *n ? 0 : errmsg(err, errlen, -EINVAL, "--members-dev: empty list");
}

static void found_add(char *found, size_t len, const char *what)
{
	size_t l = strlen(found);
	if (l && l + 2 < len)
		snprintf(found + l, len - l, "; ");
	l = strlen(found);
	snprintf(found + l, len - l, "%s", what);
}

static bool mem_has(const uint8_t *buf, size_t len, size_t off, const char *magic, size_t ml)
{
	return off + ml <= len && !memcmp(buf + off, magic, ml);
}

/* md superblock at byte `off` of the device (head buffer from 0, tail
 * buffer from tail_off). */
static void probe_md(const uint8_t *head, const uint8_t *tail, uint64_t tail_off, uint64_t size,
                     char *found, size_t len)
{
	struct {
		const char *name;
		uint64_t off;
	} at[4] = {
	    {"md superblock 1.1", 0},
	    {"md superblock 1.2", 4096},
	    /* 1.0: 8 KiB from the end, 4 KiB aligned */
	    {"md superblock 1.0", size >= 8192 ? ((size - 8192) & ~4095ull) : 0},
	    /* 0.90: 64 KiB from the end of the last whole 64 KiB */
	    {"md superblock 0.90", size >= 131072 ? (size & ~65535ull) - 65536 : 0},
	};
	for (int i = 0; i < 4; i++) {
		uint64_t off = at[i].off;
		const uint8_t *p = NULL;
		if (i < 2 && off + 4 <= PROBE_BYTES)
			p = head + off;
		else if (i >= 2 && off >= tail_off && off + 4 <= tail_off + PROBE_BYTES)
			p = tail + (off - tail_off);
		if (i >= 2 && at[i].off == 0)
			continue;
		if (p && get_le32(p) == MD_MAGIC)
			found_add(found, len, at[i].name);
	}
}

/* Signatures by magic, at the offsets their formats define. */
static void probe_magic(const uint8_t *h, const uint8_t *tail, uint64_t tail_off, uint64_t size,
                        char *found, size_t len)
{
	const size_t H = PROBE_BYTES;
	probe_md(h, tail, tail_off, size, found, len);
	if (mem_has(h, H, 512, "EFI PART", 8) || mem_has(h, H, 4096, "EFI PART", 8))
		found_add(found, len, "GPT partition table");
	else if (h[510] == 0x55 && h[511] == 0xaa)
		found_add(found, len, "DOS partition table or boot sector (0x55AA at byte 510)");
	if (h[1080] == 0x53 && h[1081] == 0xef)
		found_add(found, len, "ext2/3/4 filesystem");
	if (mem_has(h, H, 0, "XFSB", 4))
		found_add(found, len, "XFS filesystem");
	if (mem_has(h, H, 65600, "_BHRfS_M", 8))
		found_add(found, len, "btrfs filesystem");
	if (mem_has(h, H, 4086, "SWAPSPACE2", 10) || mem_has(h, H, 4086, "SWAP-SPACE", 10))
		found_add(found, len, "swap space");
	if (mem_has(h, H, 0, "LUKS\xba\xbe", 6))
		found_add(found, len, "LUKS encrypted volume");
	for (size_t s = 0; s < 4; s++)
		if (mem_has(h, H, s * 512, "LABELONE", 8))
			found_add(found, len, "LVM physical volume");
	if (mem_has(h, H, 32769, "CD001", 5))
		found_add(found, len, "ISO 9660 filesystem");
	if (mem_has(h, H, 3, "NTFS    ", 8))
		found_add(found, len, "NTFS filesystem");
	if (mem_has(h, H, 0x52, "FAT32   ", 8) || mem_has(h, H, 0x36, "FAT1", 4))
		found_add(found, len, "FAT filesystem");
	/* FreeBSD GEOM labels live in the last sector */
	if (size >= 512 && size - 512 >= tail_off) {
		const uint8_t *last = tail + (size - 512 - tail_off);
		if (!memcmp(last, "GEOM::", 6)) {
			char what[64];
			snprintf(what, sizeof(what), "GEOM label (%.*s)", 12, (const char *)last);
			for (char *c = what; *c; c++)
				if ((unsigned char)*c < 32 || (unsigned char)*c > 126)
					*c = '?';
			found_add(found, len, what);
		}
	}
}

/* blkid's low-level probe (superblocks and partition tables it knows and we
 * may not: ZFS, bcache, VDO, ...). Absent blkid: nothing added. */
static void probe_blkid(const char *dev, char *found, size_t len)
{
	char cmd[600], line[512];
	if (strchr(dev, '\''))
		return;
	snprintf(cmd, sizeof(cmd), "blkid -p -o export '%s' 2>/dev/null", dev);
	FILE *p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "TYPE=", 5) || !strncmp(line, "PTTYPE=", 7)) {
			char what[600];
			snprintf(what, sizeof(what), "blkid: %s", line);
			found_add(found, len, what);
		}
	}
	pclose(p);
}

/* Partitions of a whole disk, from sysfs. */
static void probe_partitions(dev_t rdev, char *found, size_t len)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u", major(rdev), minor(rdev));
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	int parts = 0;
	while ((e = readdir(d))) {
		char p[512];
		snprintf(p, sizeof(p), "%s/%s/partition", dir, e->d_name);
		parts += e->d_name[0] != '.' && access(p, F_OK) == 0;
	}
	closedir(d);
	if (parts) {
		char what[64];
		snprintf(what, sizeof(what), "%d partition(s)", parts);
		found_add(found, len, what);
	}
}

int bw_dev_probe(const char *dev, uint64_t *size, char *found, size_t foundlen, char *err,
                 size_t errlen)
{
	found[0] = 0;
	struct stat st;
	if (stat(dev, &st) < 0)
		return errmsg(err, errlen, -errno, "%s: %s", dev, strerror(errno));
	if (!S_ISBLK(st.st_mode))
		return errmsg(err, errlen, -ENOTBLK,
		              "%s: not a block device (member files: --members-dir)", dev);
	/* O_EXCL on a block device: the kernel refuses it while the device is
	 * mounted, swapped on, held by md/dm, or a partition of it is. */
	int fd = open(dev, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0 && errno == EBUSY)
		return errmsg(err, errlen, -EBUSY,
		              "%s: in use (mounted, swap, or held by md/dm/another program); "
		              "not touching it",
		              dev);
	if (fd < 0)
		return errmsg(err, errlen, -errno, "%s: %s", dev, strerror(errno));
	uint64_t bytes = 0;
	uint8_t *head = calloc(1, PROBE_BYTES), *tail = calloc(1, PROBE_BYTES);
	int r = 0;
	if (!head || !tail)
		r = errmsg(err, errlen, -ENOMEM, "out of memory");
	else if (ioctl(fd, BLKGETSIZE64, &bytes) < 0)
		r = errmsg(err, errlen, -errno, "%s: cannot read its size: %s", dev,
		           strerror(errno));
	uint64_t tail_off = bytes > PROBE_BYTES ? (bytes - PROBE_BYTES) & ~511ull : 0;
	/* Short reads leave zeroes, but a device too small to hold the probed
	 * areas is refused anyway (members need megabytes). */
	if (r == 0 && bytes < 2 * PROBE_BYTES)
		r = errmsg(err, errlen, -ENOSPC, "%s: only %llu bytes", dev,
		           (unsigned long long)bytes);
	if (r == 0 && (pread(fd, head, PROBE_BYTES, 0) != (ssize_t)PROBE_BYTES ||
	               pread(fd, tail, PROBE_BYTES, (off_t)tail_off) != (ssize_t)PROBE_BYTES))
		r = errmsg(err, errlen, -EIO, "%s: cannot read it to see what it holds", dev);
	if (r == 0) {
		probe_magic(head, tail, tail_off, bytes, found, foundlen);
		probe_partitions(st.st_rdev, found, foundlen);
	}
	close(fd);
	free(head);
	free(tail);
	if (r == 0)
		probe_blkid(dev, found, foundlen);
	*size = bytes;
	return r;
}

int bw_dev_check(char (*devs)[256], int n, bool force, char *err, size_t errlen)
{
	dev_t seen[BW_MAX_MEMBERS];
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (stat(devs[i], &st) == 0) {
			for (int k = 0; k < i; k++)
				if (seen[k] == st.st_rdev)
					return errmsg(
					    err, errlen, -EINVAL,
					    "--members-dev: %s and %s are the same device", devs[k],
					    devs[i]);
			seen[i] = st.st_rdev;
		}
		char found[1024];
		uint64_t size;
		int r = bw_dev_probe(devs[i], &size, found, sizeof(found), err, errlen);
		if (r < 0)
			return r;
		if (found[0] && !force)
			return errmsg(err, errlen, -EEXIST,
			              "%s holds: %s. Refusing to overwrite it; --force-destroy "
			              "destroys what it holds",
			              devs[i], found);
		if (found[0])
			fprintf(stderr,
			        "uraid: bench: warning: %s holds: %s; destroying it "
			        "(--force-destroy)\n",
			        devs[i], found);
	}
	return 0;
}
