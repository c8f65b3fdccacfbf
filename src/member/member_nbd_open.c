/* Opening an NBD member: parse its URI, connect within the timeout, take
 * the server's sizes and capabilities (member_nbd.c has the requests). */
#ifdef HAVE_LIBNBD
#include "member/member_nbd_int.h"
#include "util/errmsg.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

/* Default timeout: timeout= in the URI, else URAID_NBD_MEMBER_TIMEOUT (seconds),
 * else 30 s. */
static unsigned timeout_of(const struct nbd_uri *u)
{
	if (u->timeout_s)
		return u->timeout_s;
	const char *env = getenv("URAID_NBD_MEMBER_TIMEOUT");
	if (env) {
		char *end;
		long v = strtol(env, &end, 10);
		if (*env && !*end && v > 0 && v <= NBD_URI_TIMEOUT_MAX)
			return (unsigned)v;
	}
	return NBD_DEFAULT_TIMEOUT_S;
}

/* Requests are small and answered at once: no Nagle delay on TCP (the
 * call fails harmlessly on a Unix socket). */
static void set_nodelay(struct nbd_member *nm)
{
	int fd = nbd_aio_get_fd(nm->h), one = 1;
	if (fd >= 0)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Connect within the timeout (a server that accepts and never answers must
 * not hang the open). */
static int connect_timed(struct nbd_member *nm, char *err, size_t errlen)
{
	const char *u = nm->m.name;
	if (nbd_aio_connect_uri(nm->h, nm->uri.connect) < 0)
		return errmsg(err, errlen, -ECONNREFUSED, "%s: cannot connect: %s", u,
		              nbd_get_error());
	uint64_t deadline = nbd_now_ns() + nm->timeout_ns;
	while (nbd_aio_is_connecting(nm->h)) {
		uint64_t now = nbd_now_ns();
		if (now >= deadline)
			return errmsg(err, errlen, -ETIMEDOUT,
			              "%s: the server did not finish the handshake in %llu s", u,
			              (unsigned long long)(nm->timeout_ns / 1000000000u));
		int ms = (int)((deadline - now) / 1000000u) + 1;
		if (nbd_poll(nm->h, ms > 1000 ? 1000 : ms) < 0)
			break;
	}
	if (!nbd_aio_is_ready(nm->h)) {
		const char *e = nbd_get_error();
		return errmsg(err, errlen, -ECONNREFUSED, "%s: cannot connect: %s", u,
		              e ? e : "the server closed the connection");
	}
	return 0;
}

int member_open_nbd(const char *uri, unsigned flags, struct member **out, char *err, size_t errlen)
{
	if (!out)
		return errmsg(err, errlen, -EINVAL, "member_open_nbd: no result pointer");
	*out = NULL;
	struct nbd_member *nm = calloc(1, sizeof(*nm));
	if (!nm)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	nm->efd = -1;
	pthread_mutex_init(&nm->lock, NULL);
	pthread_mutex_init(&nm->rmw_lock, NULL);
	nm->m.ops = &nbd_member_ops;
	nm->m.priv = nm;
	nm->m.dio_align = 1;
	nm->m.mem_align = 1;
	member_set_name(&nm->m, uri);
	char e[200];
	int rc = nbd_uri_parse(uri, &nm->uri, e, sizeof(e));
	if (rc < 0) {
		errmsg(err, errlen, rc, "%s: bad NBD URI: %s", uri, e);
		goto fail;
	}
	if (strlen(uri) >= sizeof(nm->m.name)) {
		rc = errmsg(err, errlen, -EINVAL, "%s: URI too long for a member name (%zu bytes)",
		            uri, sizeof(nm->m.name) - 1);
		goto fail;
	}
	nm->timeout_ns = (uint64_t)timeout_of(&nm->uri) * 1000000000u;
	nm->h = nbd_create();
	if (!nm->h) {
		rc = errmsg(err, errlen, -ENOMEM, "%s: nbd_create: %s", uri, nbd_get_error());
		goto fail;
	}
	/* Files a URI may name: TLS keys and certificates (nbd_uri.h lets
	 * through no other parameter that reads one). */
	nbd_set_uri_allow_local_file(nm->h, nm->uri.tls);
	if (nm->uri.tls && !nm->uri.user[0]) {
		/* libnbd would ask getlogin_r, which a daemon has no answer for */
		char pwbuf[1024];
		struct passwd pw, *pp = NULL;
		if (getpwuid_r(geteuid(), &pw, pwbuf, sizeof(pwbuf), &pp) == 0 && pp)
			nbd_set_tls_username(nm->h, pp->pw_name);
	}
	nbd_set_request_block_size(nm->h, true);
	if ((rc = connect_timed(nm, err, errlen)) < 0)
		goto fail;
	int64_t size = nbd_get_size(nm->h);
	if (size <= 0) {
		rc = errmsg(err, errlen, -EIO, "%s: the export has no size", uri);
		goto fail;
	}
	bool ro = nbd_is_read_only(nm->h) == 1;
	if (ro && !(flags & MEMBER_RDONLY)) {
		rc = errmsg(err, errlen, -EROFS, "%s: the server exports it read-only", uri);
		goto fail;
	}
	int64_t minb = nbd_get_block_size(nm->h, LIBNBD_SIZE_MINIMUM);
	int64_t prefb = nbd_get_block_size(nm->h, LIBNBD_SIZE_PREFERRED);
	int64_t maxb = nbd_get_block_size(nm->h, LIBNBD_SIZE_MAXIMUM);
	nm->min_block = minb > 0 ? (uint32_t)minb : 1;
	nm->pref_block = prefb > 0 ? (uint32_t)prefb : 4096;
	nm->max_piece = maxb > 0 && maxb < NBD_PIECE_MAX ? (uint32_t)maxb : NBD_PIECE_MAX;
	if (nm->min_block > 4096 || (nm->min_block & (nm->min_block - 1)) ||
	    nm->max_piece < nm->min_block) {
		rc = errmsg(err, errlen, -EINVAL,
		            "%s: the server's block sizes (minimum %u, maximum %u) do not suit "
		            "md (a power of two up to 4096)",
		            uri, nm->min_block, nm->max_piece);
		goto fail;
	}
	nm->max_piece -= nm->max_piece % nm->min_block;
	nm->can_fua = nbd_can_fua(nm->h) == 1;
	nm->can_flush = nbd_can_flush(nm->h) == 1;
	nm->can_zero = nbd_can_zero(nm->h) == 1;
	nm->can_trim = nbd_can_trim(nm->h) == 1;
	nm->m.size = (uint64_t)size / 512 * 512;
	nm->m.logical_block = nm->min_block > 512 ? nm->min_block : 512;
	nm->m.readonly = flags & MEMBER_RDONLY;
	nm->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (nm->efd < 0) {
		rc = -errno;
		errmsg(err, errlen, rc, "%s: eventfd: %s", uri, strerror(-rc));
		goto fail;
	}
	set_nodelay(nm);
	*out = &nm->m;
	return 0;
fail:
	if (nm->h)
		nbd_close(nm->h);
	nm->h = NULL;
	if (nm->efd >= 0)
		close(nm->efd);
	nm->efd = -1;
	pthread_mutex_destroy(&nm->lock);
	pthread_mutex_destroy(&nm->rmw_lock);
	free(nm);
	return rc;
}
#endif
