/* The kernel NBD client over generic netlink (nbd_kernel.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/nbd-netlink.h>
#include <linux/nbd.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/modprobe.h"
#include "export/nbd/nbd_kernel.h"
#include "export/nbd/nbd_wire.h"

#ifndef NBD_CFLAG_DESTROY_ON_DISCONNECT
#define NBD_CFLAG_DESTROY_ON_DISCONNECT (1 << 0)
#endif
#define MAX_CONN 8

/* A netlink message under construction. */
struct msg {
	union {
		struct nlmsghdr h;
		char buf[1024];
	};
};

static struct nlattr *put(struct msg *m, uint16_t type, const void *data, size_t len)
{
	size_t at = NLMSG_ALIGN(m->h.nlmsg_len);
	size_t total = NLA_HDRLEN + len;
	if (at + NLA_ALIGN(total) > sizeof(m->buf))
		return NULL;
	struct nlattr *a = (struct nlattr *)(m->buf + at);
	a->nla_type = type;
	a->nla_len = (uint16_t)total;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	m->h.nlmsg_len = (uint32_t)(at + NLA_ALIGN(total));
	return a;
}

static void put_u32(struct msg *m, uint16_t type, uint32_t v)
{
	put(m, type, &v, 4);
}

static void put_u64(struct msg *m, uint16_t type, uint64_t v)
{
	put(m, type, &v, 8);
}

/* Close a nest opened with put(m, type | NLA_F_NESTED, NULL, 0). */
static void end_nest(struct msg *m, struct nlattr *a)
{
	a->nla_len = (uint16_t)((m->buf + m->h.nlmsg_len) - (char *)a);
}

static void start(struct msg *m, uint16_t family, uint8_t cmd, uint8_t version)
{
	memset(m, 0, sizeof(*m));
	m->h.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m->h.nlmsg_type = family;
	m->h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	m->h.nlmsg_seq = 1;
	struct genlmsghdr *g = NLMSG_DATA(&m->h);
	g->cmd = cmd;
	g->version = version;
}

/* Walk the attributes of a genetlink reply: the first of `type` (its
 * payload, *len), or NULL. */
static const void *find_attr(const struct nlmsghdr *h, uint16_t type, size_t *len)
{
	const char *p = (const char *)NLMSG_DATA(h) + GENL_HDRLEN;
	const char *end = (const char *)h + h->nlmsg_len;
	while (p + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
			break;
		if ((a->nla_type & NLA_TYPE_MASK) == type) {
			*len = a->nla_len - NLA_HDRLEN;
			return p + NLA_HDRLEN;
		}
		p += NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

/* Send m and read replies until the ack: 0 or the kernel's error; a reply
 * carrying `want` (an attribute of u16/u32 size) fills *val. */
static int talk(int fd, struct msg *m, uint16_t want, uint32_t *val)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	if (sendto(fd, m->buf, m->h.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	char buf[8192];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);
				return e->error;
			}
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			size_t len;
			const void *v = want ? find_attr(h, want, &len) : NULL;
			if (v && val && len >= 2)
				*val = len >= 4 ? *(const uint32_t *)v : *(const uint16_t *)v;
		}
	}
}

static int nl_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	struct timeval tv = {30, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* The numeric id of the "nbd" family: > 0, or a negative errno. */
static int family_id(int fd)
{
	struct msg m;
	start(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	put(&m, CTRL_ATTR_FAMILY_NAME, NBD_GENL_FAMILY_NAME, sizeof(NBD_GENL_FAMILY_NAME));
	uint32_t id = 0;
	int rc = talk(fd, &m, CTRL_ATTR_FAMILY_ID, &id);
	if (rc < 0)
		return rc;
	return id ? (int)(id & 0xffff) : -ENOENT;
}

static int family(char *err, size_t errlen, int *fdp)
{
	int fd = nl_open();
	if (fd < 0) {
		snprintf(err, errlen, "netlink: %s", strerror(-fd));
		return fd;
	}
	int id = family_id(fd);
	if (id < 0) {
		close(fd);
		snprintf(err, errlen, "no \"nbd\" netlink family (%s): is the nbd module loaded?",
		         strerror(-id));
		return id;
	}
	*fdp = fd;
	return id;
}

int nbd_kernel_available(char *why, size_t len)
{
	int fd, id = family(why, len, &fd);
	if (id < 0) {
		util_modprobe("nbd");
		id = family(why, len, &fd);
	}
	if (id < 0)
		return id;
	close(fd);
	return 0;
}

static int read_full(int fd, void *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EPROTO;
		got += (size_t)r;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
	for (size_t done = 0; done < n;) {
		ssize_t r = write(fd, (const char *)buf + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		done += (size_t)r;
	}
	return 0;
}

/* One connection through the handshake: the socket, or a negative errno. */
static int handshake(const char *path, uint64_t *size, uint16_t *tflags, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return -ENAMETOOLONG;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	struct timeval tv = {30, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	unsigned char g[NBD_WIRE_GREETING_LEN], req[32], rep[NBD_WIRE_EXPORT_LEN + 124];
	uint16_t hflags = 0;
	int rc = read_full(fd, g, sizeof(g));
	if (rc == 0)
		rc = nbd_wire_greeting(g, sizeof(g), &hflags);
	int n = rc == 0 ? nbd_wire_export_request(hflags, "", req, sizeof(req)) : rc;
	rc = n < 0 ? n : write_full(fd, req, (size_t)n);
	size_t want = NBD_WIRE_EXPORT_LEN + (hflags & NBD_WIRE_HS_NO_ZEROES ? 0 : 124);
	if (rc == 0)
		rc = read_full(fd, rep, want);
	if (rc == 0)
		rc = nbd_wire_export(rep, want, size, tflags);
	if (rc < 0) {
		snprintf(err, errlen, "NBD handshake on %s: %s", path,
		         rc == -EPROTO ? "not a (fixed newstyle) NBD server, or export refused"
		                       : strerror(-rc));
		close(fd);
		return rc;
	}
	/* The kernel's requests need no timeout of ours. */
	struct timeval none = {0, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
	return fd;
}

int nbd_kernel_connect(const char *path, int nconn, uint32_t block, const char *ident,
                       unsigned timeout_s, int *index, char *err, size_t errlen)
{
	int socks[MAX_CONN], ns = 0, rc = 0;
	uint64_t size = 0;
	uint16_t tflags = 0;
	if (nconn < 1)
		nconn = 1;
	if (nconn > MAX_CONN)
		nconn = MAX_CONN;
	for (int i = 0; i < nconn; i++) {
		uint64_t s = 0;
		uint16_t f = 0;
		int fd = handshake(path, &s, &f, err, errlen);
		if (fd < 0) {
			rc = fd;
			break;
		}
		socks[ns++] = fd;
		if (i == 0) {
			size = s;
			tflags = f;
			if (!(f & NBD_FLAG_CAN_MULTI_CONN))
				break;
		}
	}
	int nl = -1, id = rc == 0 ? family(err, errlen, &nl) : rc;
	if (id < 0) {
		rc = id;
		goto out;
	}
	struct msg m;
	start(&m, (uint16_t)id, NBD_CMD_CONNECT, NBD_GENL_VERSION);
	put_u64(&m, NBD_ATTR_SIZE_BYTES, size);
	put_u64(&m, NBD_ATTR_BLOCK_SIZE_BYTES, block);
	put_u64(&m, NBD_ATTR_SERVER_FLAGS, tflags);
	put_u64(&m, NBD_ATTR_CLIENT_FLAGS, NBD_CFLAG_DESTROY_ON_DISCONNECT);
	put_u64(&m, NBD_ATTR_TIMEOUT, timeout_s ? timeout_s : 30);
	put_u64(&m, NBD_ATTR_DEAD_CONN_TIMEOUT, 0);
	put(&m, NBD_ATTR_BACKEND_IDENTIFIER, ident, strlen(ident) + 1);
	struct nlattr *list = put(&m, NBD_ATTR_SOCKETS | NLA_F_NESTED, NULL, 0);
	for (int i = 0; list && i < ns; i++) {
		struct nlattr *item = put(&m, NBD_SOCK_ITEM | NLA_F_NESTED, NULL, 0);
		if (!item)
			break;
		put_u32(&m, NBD_SOCK_FD, (uint32_t)socks[i]);
		end_nest(&m, item);
	}
	if (list)
		end_nest(&m, list);
	uint32_t got = UINT32_MAX;
	rc = talk(nl, &m, NBD_ATTR_INDEX, &got);
	if (rc < 0)
		snprintf(err, errlen, "NBD_CMD_CONNECT: %s", strerror(-rc));
	else if (got == UINT32_MAX) {
		snprintf(err, errlen, "NBD_CMD_CONNECT: the kernel named no device");
		rc = -EPROTO;
	} else
		*index = (int)got;
out:
	if (nl >= 0)
		close(nl);
	/* The kernel holds its own references to the sockets. */
	for (int i = 0; i < ns; i++)
		close(socks[i]);
	return rc;
}

int nbd_kernel_disconnect(int index, char *err, size_t errlen)
{
	int nl, id = family(err, errlen, &nl);
	if (id < 0)
		return id;
	struct msg m;
	start(&m, (uint16_t)id, NBD_CMD_DISCONNECT, NBD_GENL_VERSION);
	put_u32(&m, NBD_ATTR_INDEX, (uint32_t)index);
	int rc = talk(nl, &m, 0, NULL);
	close(nl);
	if (rc < 0)
		snprintf(err, errlen, "/dev/nbd%d: disconnect: %s", index, strerror(-rc));
	return rc;
}

int nbd_kernel_backend(int index, char *buf, size_t len)
{
	char p[96];
	snprintf(p, sizeof(p), "/sys/block/nbd%d/pid", index);
	if (access(p, F_OK) != 0)
		return -ENOENT; /* not connected */
	snprintf(p, sizeof(p), "/sys/block/nbd%d/backend", index);
	buf[0] = 0;
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}
