/* A minimal NBD server inside the bench process, so the filesystem
 * workloads can run on an array whose members exist only here (simulated
 * disks, memory): nbdfuse connects to it and a loop device goes on top,
 * as `uraid attach` does for a daemon's export. Fixed newstyle handshake
 * (NBD_OPT_GO / INFO / EXPORT_NAME; other options answered "unsupported"),
 * simple replies, read / write (FUA) / flush / disconnect, requests served
 * one at a time by one thread. Written from the NBD protocol description
 * (network byte order throughout). */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bench/bench_workloads.h"
#include "util/errmsg.h"

#define NBD_MAGIC_INIT  0x4e42444d41474943ull /* "NBDMAGIC" */
#define NBD_MAGIC_OPT   0x49484156454f5054ull /* "IHAVEOPT" */
#define NBD_MAGIC_REP   0x0003e889045565a9ull
#define NBD_MAGIC_REQ   0x25609513u
#define NBD_MAGIC_SIMPL 0x67446698u

#define NBD_FLAG_FIXED_NEWSTYLE 1u
#define NBD_FLAG_NO_ZEROES      2u
#define NBD_TFLAG_HAS_FLAGS     1u
#define NBD_TFLAG_SEND_FLUSH    4u
#define NBD_TFLAG_SEND_FUA      8u

#define NBD_OPT_EXPORT_NAME 1u
#define NBD_OPT_ABORT       2u
#define NBD_OPT_INFO        6u
#define NBD_OPT_GO          7u
#define NBD_REP_ACK         1u
#define NBD_REP_INFO        3u
#define NBD_REP_ERR_UNSUP   0x80000001u
#define NBD_INFO_EXPORT     0u

#define NBD_CMD_READ  0u
#define NBD_CMD_WRITE 1u
#define NBD_CMD_DISC  2u
#define NBD_CMD_FLUSH 3u
#define NBD_CMD_FUA   1u /* request flag */

#define NBD_MAX_REQ BW_NBD_MAX_REQ

struct bw_nbd {
	struct uraid_array *a;
	int lfd;
	pthread_t thr;
	atomic_bool stop;
	atomic_int cfd; /* the connection being served, -1 none */
	uint8_t *buf;
};

static int full_read(int fd, void *p, size_t len)
{
	for (size_t d = 0; d < len;) {
		ssize_t r = read(fd, (uint8_t *)p + d, len - d);
		if (r <= 0)
			return r == 0 ? -ECONNRESET : -errno;
		d += (size_t)r;
	}
	return 0;
}

static int full_write(int fd, const void *p, size_t len)
{
	for (size_t d = 0; d < len;) {
		ssize_t r = send(fd, (const uint8_t *)p + d, len - d, MSG_NOSIGNAL);
		if (r <= 0)
			return r == 0 ? -ECONNRESET : -errno;
		d += (size_t)r;
	}
	return 0;
}

static int opt_reply(int fd, uint32_t opt, uint32_t type, const void *data, uint32_t len)
{
	uint8_t h[20];
	uint64_t m = htobe64(NBD_MAGIC_REP);
	uint32_t o = htobe32(opt), t = htobe32(type), l = htobe32(len);
	memcpy(h, &m, 8);
	memcpy(h + 8, &o, 4);
	memcpy(h + 12, &t, 4);
	memcpy(h + 16, &l, 4);
	int r = full_write(fd, h, sizeof(h));
	return r == 0 && len ? full_write(fd, data, len) : r;
}

/* Handshake up to the transmission phase: 0, or < 0 (client gone, aborted). */
static int handshake(uint64_t export_size, int fd)
{
	uint8_t hello[18];
	uint64_t m1 = htobe64(NBD_MAGIC_INIT), m2 = htobe64(NBD_MAGIC_OPT);
	uint16_t hf = htobe16(NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES);
	memcpy(hello, &m1, 8);
	memcpy(hello + 8, &m2, 8);
	memcpy(hello + 16, &hf, 2);
	uint32_t cflags;
	int r = full_write(fd, hello, sizeof(hello));
	if (r == 0)
		r = full_read(fd, &cflags, 4);
	bool zeroes = r == 0 && !(be32toh(cflags) & NBD_FLAG_NO_ZEROES);
	uint16_t tflags = htobe16(NBD_TFLAG_HAS_FLAGS | NBD_TFLAG_SEND_FLUSH | NBD_TFLAG_SEND_FUA);
	uint64_t size = htobe64(export_size);
	while (r == 0) {
		uint8_t oh[16];
		if ((r = full_read(fd, oh, sizeof(oh))) < 0)
			break;
		uint64_t magic;
		uint32_t opt, len;
		memcpy(&magic, oh, 8);
		memcpy(&opt, oh + 8, 4);
		memcpy(&len, oh + 12, 4);
		opt = be32toh(opt);
		len = be32toh(len);
		if (be64toh(magic) != NBD_MAGIC_OPT || len > 65536)
			return -EPROTO;
		uint8_t data[65536];
		if (len && (r = full_read(fd, data, len)) < 0)
			break;
		if (opt == NBD_OPT_EXPORT_NAME) {
			/* size, flags, and 124 zero bytes unless the client said not */
			uint8_t rep[10 + 124] = {0};
			memcpy(rep, &size, 8);
			memcpy(rep + 8, &tflags, 2);
			return full_write(fd, rep, zeroes ? sizeof(rep) : 10);
		}
		if (opt == NBD_OPT_ABORT) {
			opt_reply(fd, opt, NBD_REP_ACK, NULL, 0);
			return -ECONNRESET;
		}
		if (opt == NBD_OPT_INFO || opt == NBD_OPT_GO) {
			uint8_t info[12];
			uint16_t it = htobe16(NBD_INFO_EXPORT);
			memcpy(info, &it, 2);
			memcpy(info + 2, &size, 8);
			memcpy(info + 10, &tflags, 2);
			r = opt_reply(fd, opt, NBD_REP_INFO, info, sizeof(info));
			if (r == 0)
				r = opt_reply(fd, opt, NBD_REP_ACK, NULL, 0);
			if (r == 0 && opt == NBD_OPT_GO)
				return 0;
			continue;
		}
		r = opt_reply(fd, opt, NBD_REP_ERR_UNSUP, NULL, 0);
	}
	return r;
}

static int simple_reply(int fd, uint32_t error, uint64_t cookie, const void *data, size_t len)
{
	uint8_t h[16];
	uint32_t m = htobe32(NBD_MAGIC_SIMPL), e = htobe32(error);
	memcpy(h, &m, 4);
	memcpy(h + 4, &e, 4);
	memcpy(h + 8, &cookie, 8); /* opaque: echoed as received */
	int r = full_write(fd, h, sizeof(h));
	return r == 0 && len ? full_write(fd, data, len) : r;
}

/* NBD error numbers are Linux's for the ones used here. */
static uint32_t nbd_errno(int r)
{
	return r == -EINVAL ? EINVAL : r == -ENOSPC ? ENOSPC : r == -EROFS ? EPERM : EIO;
}

void bw_nbd_serve(struct uraid_array *a, uint8_t *buf, int fd)
{
	uint64_t size = uraid_size(a);
	if (handshake(size, fd) < 0)
		return;
	for (;;) {
		uint8_t q[28];
		if (full_read(fd, q, sizeof(q)) < 0)
			return;
		uint32_t magic, len;
		uint16_t flags, type;
		uint64_t cookie, off;
		memcpy(&magic, q, 4);
		memcpy(&flags, q + 4, 2);
		memcpy(&type, q + 6, 2);
		memcpy(&cookie, q + 8, 8);
		memcpy(&off, q + 16, 8);
		memcpy(&len, q + 24, 4);
		flags = be16toh(flags);
		type = be16toh(type);
		off = be64toh(off);
		len = be32toh(len);
		if (be32toh(magic) != NBD_MAGIC_REQ)
			return;
		if (type == NBD_CMD_DISC)
			return;
		bool inside = len <= NBD_MAX_REQ && off <= size && len <= size - off;
		int r = 0;
		if (type == NBD_CMD_WRITE) {
			if (len > NBD_MAX_REQ)
				return; /* cannot even skip its payload sanely */
			if (full_read(fd, buf, len) < 0)
				return;
			r = !inside ? -EINVAL : uraid_write(a, buf, len, off);
			if (r == 0 && (flags & NBD_CMD_FUA))
				r = uraid_flush(a);
			if (simple_reply(fd, r ? nbd_errno(r) : 0, cookie, NULL, 0) < 0)
				return;
		} else if (type == NBD_CMD_READ) {
			r = !inside ? -EINVAL : uraid_read(a, buf, len, off);
			if (simple_reply(fd, r ? nbd_errno(r) : 0, cookie, buf, r ? 0 : len) < 0)
				return;
		} else if (type == NBD_CMD_FLUSH) {
			r = uraid_flush(a);
			if (simple_reply(fd, r ? nbd_errno(r) : 0, cookie, NULL, 0) < 0)
				return;
		} else if (simple_reply(fd, EINVAL, cookie, NULL, 0) < 0) {
			return;
		}
	}
}

static void *accept_loop(void *arg)
{
	struct bw_nbd *n = arg;
	while (!atomic_load(&n->stop)) {
		struct pollfd p = {.fd = n->lfd, .events = POLLIN};
		if (poll(&p, 1, 100) <= 0)
			continue;
		int fd = accept4(n->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		atomic_store(&n->cfd, fd);
		bw_nbd_serve(n->a, n->buf, fd);
		atomic_store(&n->cfd, -1);
		close(fd);
	}
	return NULL;
}

int bw_nbd_start(struct uraid_array *a, const char *sock, struct bw_nbd **out, char *err,
                 size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(sock) >= sizeof(sa.sun_path))
		return errmsg(err, errlen, -ENAMETOOLONG, "socket path %s too long", sock);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	struct bw_nbd *n = calloc(1, sizeof(*n));
	if (!n || !(n->buf = malloc(NBD_MAX_REQ))) {
		free(n);
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	}
	n->a = a;
	atomic_store(&n->cfd, -1);
	n->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(sock);
	if (n->lfd < 0 || bind(n->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(n->lfd, 4) < 0) {
		int e = errno;
		if (n->lfd >= 0)
			close(n->lfd);
		free(n->buf);
		free(n);
		return errmsg(err, errlen, -e, "NBD socket %s: %s", sock, strerror(e));
	}
	int r = pthread_create(&n->thr, NULL, accept_loop, n);
	if (r) {
		close(n->lfd);
		free(n->buf);
		free(n);
		return errmsg(err, errlen, -r, "thread: %s", strerror(r));
	}
	*out = n;
	return 0;
}

void bw_nbd_stop(struct bw_nbd *n)
{
	if (!n)
		return;
	atomic_store(&n->stop, true);
	/* A client still connected (nbdfuse stuck) must not keep us here. */
	int fd = atomic_load(&n->cfd);
	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);
	pthread_join(n->thr, NULL);
	close(n->lfd);
	free(n->buf);
	free(n);
}
