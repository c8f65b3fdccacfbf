/* Overlay files (member_overlay_int.h): the header and the commit sector,
 * the identity of a base, the map as stored, and the overlay directory
 * (finding, opening and creating overlay files). */
#include "member/member_overlay_int.h"
#include "util/endian.h"
#include "util/errmsg.h"
#include "util/md5.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

uint64_t ovl_blocks(uint64_t member_bytes)
{
	return (member_bytes + MEMBER_OVERLAY_BLOCK - 1) / MEMBER_OVERLAY_BLOCK;
}

uint64_t ovl_map_bytes(uint64_t member_bytes)
{
	uint64_t bytes = (ovl_blocks(member_bytes) + 7) / 8;
	return (bytes + OVL_PAGE - 1) / OVL_PAGE * OVL_PAGE;
}

uint64_t member_overlay_store_bytes(uint64_t member_bytes)
{
	return OVL_HDR_BYTES + ovl_map_bytes(member_bytes) +
	       ovl_blocks(member_bytes) * MEMBER_OVERLAY_BLOCK;
}

int ovl_member_fd(struct member *m)
{
	return m->ops->fd ? m->ops->fd(m) : -1;
}

int ovl_flock(int fd, bool shared)
{
	if (fd < 0)
		return 0;
	if (flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0)
		return 0;
	return errno == EWOULDBLOCK ? -EBUSY : -errno;
}

/* MD5 of the first and the last OVL_FINGERPRINT bytes (the whole member
 * when smaller): where md (0.90, 1.x) and GEOM keep their metadata, so an
 * assembly without the overlay, which always updates the superblocks,
 * changes it. */
static int fingerprint(struct member *base, uint8_t out[16], char *err, size_t errlen)
{
	uint64_t size = base->size;
	uint64_t head = size < OVL_FINGERPRINT ? size : OVL_FINGERPRINT;
	uint64_t tail_off = size - head > head ? size - head : head;
	unsigned char *buf = malloc(OVL_FINGERPRINT);
	if (!buf)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	struct md5_ctx c;
	md5_init(&c);
	int rc = member_read(base, buf, (size_t)head, 0);
	if (rc == 0)
		md5_update(&c, buf, (size_t)head);
	if (rc == 0 && tail_off < size) {
		rc = member_read(base, buf, (size_t)(size - tail_off), tail_off);
		if (rc == 0)
			md5_update(&c, buf, (size_t)(size - tail_off));
	}
	free(buf);
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s: cannot read it: %s", base->name, strerror(-rc));
	md5_final(&c, out);
	return 0;
}

int ovl_identity_of(struct member *base, struct ovl_identity *id, char *err, size_t errlen)
{
	memset(id, 0, sizeof(*id));
	id->size = base->size;
	int fd = ovl_member_fd(base);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0) {
		if (S_ISREG(st.st_mode)) {
			id->kind = OVL_KIND_FILE;
			id->mtime_sec = (uint64_t)st.st_mtim.tv_sec;
			id->mtime_nsec = (uint64_t)st.st_mtim.tv_nsec;
		} else if (S_ISBLK(st.st_mode)) {
			id->kind = OVL_KIND_BLOCKDEV;
			id->rdev = (uint64_t)st.st_rdev;
		}
		id->dev = (uint64_t)st.st_dev;
		id->ino = (uint64_t)st.st_ino;
	}
	char *abs = realpath(base->name, NULL);
	const char *p = abs ? abs : base->name;
	if (strlen(p) >= sizeof(id->path)) {
		free(abs);
		return errmsg(err, errlen, -ENAMETOOLONG,
		              "%s: path too long for an overlay (at most %d bytes)", base->name,
		              OVL_PATH_MAX - 1);
	}
	snprintf(id->path, sizeof(id->path), "%s", p);
	free(abs);
	return fingerprint(base, id->fingerprint, err, errlen);
}

int ovl_identity_check(const struct ovl_header *h, const struct ovl_identity *now, bool content,
                       char *why, size_t len)
{
	const struct ovl_identity *was = &h->id;
	if (now->size != was->size)
		return errmsg(why, len, -ESTALE,
		              "it is %llu bytes now, %llu when the overlay was made",
		              (unsigned long long)now->size, (unsigned long long)was->size);
	if (now->kind != was->kind)
		return errmsg(why, len, -ESTALE, "it is a %s now, a %s when the overlay was made",
		              now->kind == OVL_KIND_FILE ? "file" : "device",
		              was->kind == OVL_KIND_FILE ? "file" : "device");
	if (!content)
		return 0;
	if (now->kind == OVL_KIND_FILE &&
	    (now->mtime_sec != was->mtime_sec || now->mtime_nsec != was->mtime_nsec)) {
		char a[32], b[32];
		time_t ta = (time_t)was->mtime_sec, tb = (time_t)now->mtime_sec;
		strftime(a, sizeof(a), "%Y-%m-%d %H:%M:%S", localtime(&ta));
		strftime(b, sizeof(b), "%Y-%m-%d %H:%M:%S", localtime(&tb));
		return errmsg(why, len, -ESTALE,
		              "it was modified at %s.%09llu, after the overlay was made (it was "
		              "last modified at %s.%09llu then)",
		              b, (unsigned long long)now->mtime_nsec, a,
		              (unsigned long long)was->mtime_nsec);
	}
	if (memcmp(now->fingerprint, was->fingerprint, 16))
		return errmsg(why, len, -ESTALE,
		              "its first or last MiB (where its superblock lives) differs from "
		              "when the overlay was made");
	return 0;
}

void ovl_default_key(const struct ovl_identity *id, const char *name, char *key, size_t len)
{
	if (id->kind == OVL_KIND_FILE) {
		snprintf(key, len, "f%llx-%llx", (unsigned long long)id->dev,
		         (unsigned long long)id->ino);
		return;
	}
	if (id->kind == OVL_KIND_BLOCKDEV) {
		snprintf(key, len, "b%u-%u", major((dev_t)id->rdev), minor((dev_t)id->rdev));
		return;
	}
	size_t k = 0;
	key[k++] = 'm';
	key[k++] = '-';
	for (const char *p = name; *p && k + 1 < len; p++)
		key[k++] = (strchr("/.", *p) || (unsigned char)*p <= ' ') ? '_' : *p;
	key[k] = 0;
}

/* ---- header ---- */

static void put_str(uint8_t *p, size_t room, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n < room ? n : room - 1);
}

/* A NUL-terminated string field, or -EINVAL. */
static int get_str(const uint8_t *p, size_t room, char *out)
{
	if (!memchr(p, 0, room))
		return -EINVAL;
	memcpy(out, p, room);
	return 0;
}

static void header_encode(const struct ovl_header *h, uint8_t *b)
{
	memset(b, 0, OVL_HDR_BYTES);
	memcpy(b, OVL_MAGIC, 8);
	put_le32(b + 8, h->version);
	put_le32(b + 12, h->block_bytes);
	put_le64(b + 16, h->id.size);
	put_le64(b + 24, h->map_off);
	put_le64(b + 32, h->map_bytes);
	put_le64(b + 40, h->data_off);
	put_le32(b + 48, h->id.kind);
	put_le64(b + 56, h->id.dev);
	put_le64(b + 64, h->id.ino);
	put_le64(b + 72, h->id.rdev);
	put_le64(b + 80, h->id.mtime_sec);
	put_le64(b + 88, h->id.mtime_nsec);
	memcpy(b + 96, h->id.fingerprint, 16);
	put_le64(b + 112, h->created);
	put_str(b + 120, MEMBER_OVERLAY_TAG_MAX, h->tag);
	put_str(b + 184, MEMBER_OVERLAY_KEY_MAX, h->key);
	put_str(b + 248, OVL_PATH_MAX, h->id.path);
	md5(b, OVL_HDR_SUM_OFF, b + OVL_HDR_SUM_OFF);
}

static int header_decode(const uint8_t *b, struct ovl_header *h, char *err, size_t errlen)
{
	memset(h, 0, sizeof(*h));
	if (memcmp(b, OVL_MAGIC, 8))
		return errmsg(err, errlen, -ENOENT, "no overlay header");
	uint8_t sum[16];
	md5(b, OVL_HDR_SUM_OFF, sum);
	if (memcmp(sum, b + OVL_HDR_SUM_OFF, 16))
		return errmsg(err, errlen, -EINVAL, "overlay header damaged (checksum)");
	h->version = get_le32(b + 8);
	h->block_bytes = get_le32(b + 12);
	if (h->version != OVL_VERSION || h->block_bytes != MEMBER_OVERLAY_BLOCK)
		return errmsg(
		    err, errlen, -EINVAL,
		    "overlay version %u with %u-byte blocks (this uraid reads version %u, "
		    "%u-byte blocks)",
		    h->version, h->block_bytes, OVL_VERSION, MEMBER_OVERLAY_BLOCK);
	h->id.size = get_le64(b + 16);
	h->map_off = get_le64(b + 24);
	h->map_bytes = get_le64(b + 32);
	h->data_off = get_le64(b + 40);
	h->id.kind = get_le32(b + 48);
	h->id.dev = get_le64(b + 56);
	h->id.ino = get_le64(b + 64);
	h->id.rdev = get_le64(b + 72);
	h->id.mtime_sec = get_le64(b + 80);
	h->id.mtime_nsec = get_le64(b + 88);
	memcpy(h->id.fingerprint, b + 96, 16);
	h->created = get_le64(b + 112);
	if (get_str(b + 120, MEMBER_OVERLAY_TAG_MAX, h->tag) < 0 ||
	    get_str(b + 184, MEMBER_OVERLAY_KEY_MAX, h->key) < 0 ||
	    get_str(b + 248, OVL_PATH_MAX, h->id.path) < 0)
		return errmsg(err, errlen, -EINVAL, "overlay header damaged (a name)");
	if (h->id.size == 0 || h->map_off != OVL_HDR_BYTES ||
	    h->map_bytes != ovl_map_bytes(h->id.size) || h->data_off != h->map_off + h->map_bytes)
		return errmsg(err, errlen, -EINVAL, "overlay header damaged (its layout)");
	return 0;
}

int ovl_header_read(struct member *store, struct ovl_header *h, bool *committing, char *err,
                    size_t errlen)
{
	uint8_t b[OVL_HDR_BYTES];
	*committing = false;
	if (store->size < OVL_HDR_BYTES)
		return errmsg(err, errlen, -ENOENT, "too small for an overlay");
	int rc = member_read(store, b, sizeof(b), 0);
	if (rc < 0)
		return errmsg(err, errlen, rc, "cannot read it: %s", strerror(-rc));
	rc = header_decode(b, h, err, errlen);
	if (rc < 0)
		return rc;
	if (store->size < member_overlay_store_bytes(h->id.size))
		return errmsg(err, errlen, -EINVAL, "truncated to %llu bytes (%llu expected)",
		              (unsigned long long)store->size,
		              (unsigned long long)member_overlay_store_bytes(h->id.size));
	const uint8_t *c = b + OVL_COMMIT_OFF;
	uint8_t sum[16];
	md5(c, 16, sum);
	if (!memcmp(c, OVL_COMMIT_MAGIC, 8) && !memcmp(sum, c + 16, 16))
		*committing = get_le64(c + 8) == 1;
	return 0;
}

int ovl_commit_mark(struct member *store, bool committing)
{
	uint8_t s[512] = {0};
	memcpy(s, OVL_COMMIT_MAGIC, 8);
	put_le64(s + 8, committing ? 1 : 0);
	md5(s, 16, s + 16);
	int rc = member_write(store, s, sizeof(s), OVL_COMMIT_OFF, MEMBER_FUA);
	return rc < 0 ? rc : member_flush(store);
}

int member_overlay_format(struct member *base, struct member *store, const char *tag,
                          const char *key, char *err, size_t errlen)
{
	struct ovl_header h = {.version = OVL_VERSION, .block_bytes = MEMBER_OVERLAY_BLOCK};
	int rc = ovl_identity_of(base, &h.id, err, errlen);
	if (rc < 0)
		return rc;
	if (store->size < member_overlay_store_bytes(base->size))
		return errmsg(err, errlen, -ENOSPC, "%s: %llu bytes, an overlay of %s needs %llu",
		              store->name, (unsigned long long)store->size, base->name,
		              (unsigned long long)member_overlay_store_bytes(base->size));
	if (tag && strlen(tag) >= sizeof(h.tag))
		return errmsg(err, errlen, -ENAMETOOLONG, "array tag '%s' too long", tag);
	if (key && strlen(key) >= sizeof(h.key))
		return errmsg(err, errlen, -ENAMETOOLONG, "member key '%s' too long", key);
	snprintf(h.tag, sizeof(h.tag), "%s", tag ? tag : "");
	if (key)
		snprintf(h.key, sizeof(h.key), "%s", key);
	else
		ovl_default_key(&h.id, base->name, h.key, sizeof(h.key));
	h.map_off = OVL_HDR_BYTES;
	h.map_bytes = ovl_map_bytes(base->size);
	h.data_off = h.map_off + h.map_bytes;
	h.created = (uint64_t)time(NULL);
	uint8_t *b = calloc(1, OVL_PAGE);
	if (!b)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	/* An empty map: the store may hold anything (a reused memory member). */
	for (uint64_t off = 0; off < h.map_bytes && rc == 0; off += OVL_PAGE)
		rc = member_write(store, b, OVL_PAGE, h.map_off + off, 0);
	if (rc == 0) {
		header_encode(&h, b);
		rc = member_write(store, b, OVL_HDR_BYTES, 0, 0);
	}
	free(b);
	if (rc == 0)
		rc = member_flush(store);
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s: cannot write the overlay header: %s",
		              store->name, strerror(-rc));
	return 0;
}

int ovl_map_load(struct member *store, const struct ovl_header *h, uint64_t *words, size_t nwords,
                 uint64_t *held)
{
	uint8_t *page = malloc(OVL_PAGE);
	if (!page)
		return -ENOMEM;
	uint64_t nblocks = ovl_blocks(h->id.size);
	int rc = 0;
	*held = 0;
	for (uint64_t off = 0; off < h->map_bytes && rc == 0; off += OVL_PAGE) {
		rc = member_read(store, page, OVL_PAGE, h->map_off + off);
		for (size_t i = 0; rc == 0 && i < OVL_PAGE / 8; i++) {
			size_t w = (size_t)(off / 8) + i;
			if (w >= nwords)
				break;
			uint64_t v = get_le64(page + i * 8);
			uint64_t first = (uint64_t)w * 64;
			/* Bits past the last block mean nothing; keep them out. */
			if (first + 64 > nblocks)
				v &= first >= nblocks ? 0 : (~0ull >> (64 - (nblocks - first)));
			words[w] = v;
			*held += (uint64_t)__builtin_popcountll(v);
		}
	}
	free(page);
	return rc;
}

/* ---- the directory ---- */

int ovl_scan(int dirfd, int (*fn)(const char *name, void *ctx), void *ctx)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return -e;
	}
	int rc = 0;
	struct dirent *e;
	const size_t sl = strlen(MEMBER_OVERLAY_SUFFIX);
	while (rc == 0 && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (e->d_name[0] == '.' || l <= sl ||
		    strcmp(e->d_name + l - sl, MEMBER_OVERLAY_SUFFIX))
			continue;
		rc = fn(e->d_name, ctx);
	}
	closedir(d);
	return rc;
}

struct find_ctx {
	char tail[MEMBER_OVERLAY_KEY_MAX + 16];
	char *name;
	size_t len;
	int found;
};

static int find_one(const char *name, void *ctx)
{
	struct find_ctx *f = ctx;
	size_t l = strlen(name), tl = strlen(f->tail);
	if (l <= tl || strcmp(name + l - tl, f->tail))
		return 0;
	if (f->found++ == 0)
		snprintf(f->name, f->len, "%s", name);
	return 0;
}

int ovl_find(int dirfd, const char *key, char *name, size_t len)
{
	struct find_ctx f = {.name = name, .len = len};
	snprintf(f.tail, sizeof(f.tail), ".%s%s", key, MEMBER_OVERLAY_SUFFIX);
	int rc = ovl_scan(dirfd, find_one, &f);
	if (rc < 0)
		return rc;
	return f.found == 0 ? -ENOENT : f.found > 1 ? -EEXIST : 0;
}

int ovl_store_open(int dirfd, const char *dirpath, const char *name, bool rdonly,
                   struct member **out, char *err, size_t errlen)
{
	struct stat sb, fb;
	*out = NULL;
	if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return errmsg(err, errlen, -errno, "%s/%s: %s", dirpath, name, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return errmsg(err, errlen, -EINVAL, "%s/%s is not a regular file", dirpath, name);
	if (sb.st_uid != geteuid())
		return errmsg(err, errlen, -EPERM, "%s/%s belongs to uid %u, not to uid %u",
		              dirpath, name, (unsigned)sb.st_uid, (unsigned)geteuid());
	if (sb.st_mode & (S_IWGRP | S_IWOTH))
		return errmsg(err, errlen, -EPERM,
		              "%s/%s is writable by group or others (mode %04o)", dirpath, name,
		              (unsigned)(sb.st_mode & 07777));
	char path[PATH_MAX];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dirpath, name) >= sizeof(path))
		return errmsg(err, errlen, -ENAMETOOLONG, "%s/%s: path too long", dirpath, name);
	struct member *m;
	int rc = member_open_file(path, rdonly ? MEMBER_RDONLY : 0, 0, &m, err, errlen);
	if (rc < 0)
		return rc;
	int fd = ovl_member_fd(m);
	if (fd < 0 || fstat(fd, &fb) < 0 || fb.st_dev != sb.st_dev || fb.st_ino != sb.st_ino) {
		member_close(m);
		return errmsg(err, errlen, -EAGAIN, "%s changed while being opened", path);
	}
	*out = m;
	return 0;
}

/* "m0.img" of "/x/m0.img", with anything but A-Z a-z 0-9 . _ + - as '_',
 * at most 64 characters: the readable part of an overlay file's name. */
static void safe_stem(const char *path, char *out, size_t len)
{
	const char *b = strrchr(path, '/');
	b = b && b[1] ? b + 1 : path;
	size_t k = 0;
	for (; *b && k + 1 < len && k < 64; b++) {
		unsigned char c = (unsigned char)*b;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		          (c >= '0' && c <= '9') || strchr("._+-", c);
		out[k++] = ok ? (char)c : '_';
	}
	out[k] = 0;
	/* Not hidden (files being made start with '.'), not empty. */
	if (k == 0)
		snprintf(out, len, "_");
	else if (out[0] == '.')
		out[0] = '_';
}

int ovl_store_create(int dirfd, const char *dirpath, struct member *base, const char *tag,
                     const char *key, char *name, size_t len, char *err, size_t errlen)
{
	char stem[80], tmp[NAME_MAX + 1], path[PATH_MAX];
	safe_stem(base->name, stem, sizeof(stem));
	if ((size_t)snprintf(name, len, "%s.%s%s", stem, key, MEMBER_OVERLAY_SUFFIX) >= len ||
	    (size_t)snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid()) >= sizeof(tmp) ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s", dirpath, tmp) >= sizeof(path))
		return errmsg(err, errlen, -ENAMETOOLONG, "%s: overlay file name too long",
		              base->name);
	unlinkat(dirfd, tmp, 0);
	int fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errmsg(err, errlen, -errno, "cannot create %s: %s", path, strerror(errno));
	uint64_t bytes = member_overlay_store_bytes(base->size);
	int rc = ftruncate(fd, (off_t)bytes) < 0 ? -errno : 0;
	close(fd);
	if (rc < 0) {
		unlinkat(dirfd, tmp, 0);
		return errmsg(err, errlen, rc, "cannot size %s to %llu bytes: %s", path,
		              (unsigned long long)bytes, strerror(-rc));
	}
	struct member *store;
	rc = ovl_store_open(dirfd, dirpath, tmp, false, &store, err, errlen);
	if (rc == 0) {
		rc = member_overlay_format(base, store, tag, key, err, errlen);
		member_close(store);
	}
	/* Complete and durable before it has the name it is found by. */
	if (rc == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		rc = errmsg(err, errlen, -errno, "rename %s to %s/%s: %s", path, dirpath, name,
		            strerror(errno));
	if (rc < 0) {
		unlinkat(dirfd, tmp, 0);
		return rc;
	}
	int dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

struct foreign_ctx {
	int dirfd;
	const char *dirpath, *tag;
	char *err;
	size_t errlen;
	int rc; /* the refusal, err naming the file */
};

/* 1 (stop) with f->rc and err set when `name` is not an overlay of f->tag. */
static int foreign_one(const char *name, void *ctx)
{
	struct foreign_ctx *f = ctx;
	struct member *store;
	char e[512];
	int rc = ovl_store_open(f->dirfd, f->dirpath, name, true, &store, e, sizeof(e));
	if (rc < 0) {
		f->rc = errmsg(f->err, f->errlen, rc, "%s", e);
		return 1;
	}
	struct ovl_header h;
	bool committing;
	rc = ovl_header_read(store, &h, &committing, e, sizeof(e));
	member_close(store);
	if (rc < 0) {
		f->rc = errmsg(f->err, f->errlen, -EINVAL, "%s/%s: %s", f->dirpath, name, e);
		return 1;
	}
	if (strcmp(h.tag, f->tag)) {
		f->rc = errmsg(f->err, f->errlen, -EEXIST,
		               "overlay directory %s holds %s, an overlay of another array (%s, "
		               "member %s), not of this one (%s): overlays of two arrays must "
		               "not mix; use another directory, or 'uraid overlay discard %s'",
		               f->dirpath, name, h.tag[0] ? h.tag : "no tag", h.id.path, f->tag,
		               f->dirpath);
		return 1;
	}
	return 0;
}

int member_overlay_dir_check(int dirfd, const char *dirpath, const char *tag, char *err,
                             size_t errlen)
{
	struct foreign_ctx f = {dirfd, dirpath, tag, err, errlen, 0};
	int rc = ovl_scan(dirfd, foreign_one, &f);
	if (rc == 1)
		return f.rc;
	if (rc < 0)
		return errmsg(err, errlen, rc, "overlay directory %s: %s", dirpath, strerror(-rc));
	return 0;
}
