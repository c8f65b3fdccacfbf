/* The NBD member URI parser (nbd_uri.h): pure string checks. */
#include "member/nbd_uri.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/errmsg.h"

static const struct {
	const char *prefix;
	bool tls, unix_socket;
} schemes[] = {
    {"nbd://", false, false},
    {"nbds://", true, false},
    {"nbd+unix://", false, true},
    {"nbds+unix://", true, true},
};

bool nbd_uri_is(const char *name)
{
	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (!strncmp(name, schemes[i].prefix, strlen(schemes[i].prefix)))
			return true;
	return false;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decode [s, s+n) into out (cap bytes); -1 on a bad escape, a NUL
 * byte or overflow. */
static int decode(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '%') {
			if (i + 2 >= n)
				return -1;
			int h = hexval(s[i + 1]), l = hexval(s[i + 2]);
			if (h < 0 || l < 0 || (h == 0 && l == 0))
				return -1;
			c = (char)(h * 16 + l);
			i += 2;
		}
		if (o + 1 >= cap)
			return -1;
		out[o++] = c;
	}
	out[o] = 0;
	return 0;
}

static bool is_unreserved_host(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_';
}

static int parse_host(const char *s, size_t n, struct nbd_uri *u, char *err, size_t errlen)
{
	const char *port = NULL;
	size_t hn = n;
	if (n && s[0] == '[') {
		const char *close = memchr(s, ']', n);
		if (!close)
			return errmsg(err, errlen, -EINVAL, "unclosed '[' in the host");
		size_t in = (size_t)(close - s - 1);
		if (in == 0)
			return errmsg(err, errlen, -EINVAL, "empty IPv6 address");
		for (size_t i = 1; i <= in; i++) {
			char c = s[i];
			if (!(hexval(c) >= 0 || c == ':' || c == '.'))
				return errmsg(err, errlen, -EINVAL,
				              "bad character in an IPv6 address");
		}
		if (in >= sizeof(u->host))
			return errmsg(err, errlen, -EINVAL, "host too long");
		memcpy(u->host, s + 1, in);
		u->host[in] = 0;
		size_t rest = n - (size_t)(close - s) - 1;
		if (rest) {
			if (close[1] != ':')
				return errmsg(err, errlen, -EINVAL, "junk after ']' in the host");
			port = close + 2;
		}
		hn = 0;
	} else {
		const char *colon = memchr(s, ':', n);
		if (colon) {
			hn = (size_t)(colon - s);
			port = colon + 1;
		}
		if (hn == 0)
			return errmsg(err, errlen, -EINVAL, "no host (nbd://HOST[:PORT]/EXPORT)");
		if (hn >= sizeof(u->host))
			return errmsg(err, errlen, -EINVAL, "host too long");
		for (size_t i = 0; i < hn; i++)
			if (!is_unreserved_host(s[i]))
				return errmsg(err, errlen, -EINVAL,
				              "bad character '%c' in the host",
				              s[i] >= 32 && s[i] < 127 ? s[i] : '?');
		memcpy(u->host, s, hn);
		u->host[hn] = 0;
	}
	u->port = NBD_URI_DEFAULT_PORT;
	if (port) {
		size_t pn = (size_t)(s + n - port);
		unsigned v = 0;
		if (pn == 0 || pn > 5)
			return errmsg(err, errlen, -EINVAL, "bad port (1..65535)");
		for (size_t i = 0; i < pn; i++) {
			if (port[i] < '0' || port[i] > '9')
				return errmsg(err, errlen, -EINVAL, "bad port (1..65535)");
			v = v * 10 + (unsigned)(port[i] - '0');
		}
		if (v == 0 || v > 65535)
			return errmsg(err, errlen, -EINVAL, "bad port %u (1..65535)", v);
		u->port = v;
	}
	return 0;
}

static int parse_timeout(const char *v, size_t n, unsigned *out, char *err, size_t errlen)
{
	unsigned t = 0;
	if (n == 0 || n > 4)
		goto bad;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			goto bad;
		t = t * 10 + (unsigned)(v[i] - '0');
	}
	if (t == 0 || t > NBD_URI_TIMEOUT_MAX)
		goto bad;
	*out = t;
	return 0;
bad:
	return errmsg(err, errlen, -EINVAL, "bad timeout= (whole seconds, 1..%d)",
	              NBD_URI_TIMEOUT_MAX);
}

static const char *const passed[] = {"tls-certificates", "tls-psk-file", "tls-verify-peer"};

/* Append [s, s+n) to u->connect. */
static int put(struct nbd_uri *u, size_t *len, const char *s, size_t n)
{
	if (*len + n >= sizeof(u->connect))
		return -1;
	memcpy(u->connect + *len, s, n);
	*len += n;
	u->connect[*len] = 0;
	return 0;
}

static int parse_query(const char *q, struct nbd_uri *u, size_t *clen, char *err, size_t errlen)
{
	bool first = true;
	while (*q) {
		const char *amp = strchr(q, '&');
		size_t n = amp ? (size_t)(amp - q) : strlen(q);
		const char *eq = memchr(q, '=', n);
		if (!eq)
			return errmsg(err, errlen, -EINVAL,
			              "query parameter without '=' (KEY=VALUE)");
		size_t kn = (size_t)(eq - q);
		const char *v = eq + 1;
		size_t vn = n - kn - 1;
		if (kn == 6 && !memcmp(q, "socket", 6)) {
			if (!u->unix_socket)
				return errmsg(err, errlen, -EINVAL,
				              "socket= belongs to nbd+unix:// URIs only");
			if (u->socket[0])
				return errmsg(err, errlen, -EINVAL, "socket= given twice");
			if (vn == 0 || decode(v, vn, u->socket, sizeof(u->socket)) < 0)
				return errmsg(err, errlen, -EINVAL, "bad socket= path");
		} else if (kn == 7 && !memcmp(q, "timeout", 7)) {
			if (u->timeout_s)
				return errmsg(err, errlen, -EINVAL, "timeout= given twice");
			int rc = parse_timeout(v, vn, &u->timeout_s, err, errlen);
			if (rc < 0)
				return rc;
			goto next; /* uraid's own: not passed to libnbd */
		} else {
			bool ok = false;
			for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]) && !ok; i++)
				ok = strlen(passed[i]) == kn && !memcmp(q, passed[i], kn);
			if (!ok)
				return errmsg(err, errlen, -EINVAL,
				              "unknown query parameter '%.*s' (socket, timeout, "
				              "tls-certificates, tls-psk-file, tls-verify-peer)",
				              (int)(kn > 40 ? 40 : kn), q);
			if (!u->tls)
				return errmsg(err, errlen, -EINVAL,
				              "%.*s= needs a TLS scheme (nbds:// or nbds+unix://)",
				              (int)kn, q);
			char tmp[256];
			if (vn == 0 || decode(v, vn, tmp, sizeof(tmp)) < 0)
				return errmsg(err, errlen, -EINVAL, "bad value of %.*s=", (int)kn,
				              q);
		}
		if (put(u, clen, first ? "?" : "&", 1) < 0 || put(u, clen, q, n) < 0)
			return errmsg(err, errlen, -EINVAL, "URI too long");
		first = false;
	next:
		q += n;
		if (*q == '&') {
			q++;
			if (!*q)
				return errmsg(err, errlen, -EINVAL, "trailing '&' in the query");
		}
	}
	return 0;
}

int nbd_uri_parse(const char *s, struct nbd_uri *u, char *err, size_t errlen)
{
	if (!u)
		return -EINVAL;
	memset(u, 0, sizeof(*u));
	if (!s)
		return errmsg(err, errlen, -EINVAL, "no URI");
	size_t len = strnlen(s, NBD_URI_MAX);
	if (len >= NBD_URI_MAX)
		return errmsg(err, errlen, -EINVAL, "URI too long (at most %d bytes)",
		              NBD_URI_MAX - 1);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 127)
			return errmsg(
			    err, errlen, -EINVAL,
			    "URI holds a space or a control/non-ASCII byte (percent-encode "
			    "it)");
	size_t pl = 0;
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		size_t n = strlen(schemes[i].prefix);
		if (!strncmp(s, schemes[i].prefix, n)) {
			pl = n;
			u->tls = schemes[i].tls;
			u->unix_socket = schemes[i].unix_socket;
			break;
		}
	}
	if (!pl)
		return errmsg(err, errlen, -EINVAL,
		              "not an NBD URI (nbd://, nbds://, nbd+unix://, nbds+unix://)");
	if (strchr(s, '#'))
		return errmsg(err, errlen, -EINVAL, "a fragment ('#') has no meaning here");
	const char *auth = s + pl;
	const char *path = auth + strcspn(auth, "/?");
	const char *query = strchr(path, '?');
	const char *pend = query ? query : s + len;
	size_t alen = (size_t)(path - auth);
	const char *at = memchr(auth, '@', alen);
	if (at) {
		/* USER@: the TLS user name (PSK identity) */
		size_t un = (size_t)(at - auth);
		if (!u->tls)
			return errmsg(err, errlen, -EINVAL,
			              "a user name (USER@) needs a TLS scheme (nbds://)");
		if (un == 0 || un >= sizeof(u->user))
			return errmsg(err, errlen, -EINVAL, "bad user name before '@'");
		for (size_t i = 0; i < un; i++)
			if (!is_unreserved_host(auth[i]))
				return errmsg(err, errlen, -EINVAL,
				              "bad character in the user name");
		memcpy(u->user, auth, un);
		u->user[un] = 0;
		alen -= un + 1;
		auth = at + 1;
	}
	if (u->unix_socket) {
		if (alen)
			return errmsg(err, errlen, -EINVAL,
			              "nbd+unix:// takes no host: nbd+unix:///EXPORT?socket=PATH");
	} else {
		int rc = parse_host(auth, alen, u, err, errlen);
		if (rc < 0)
			return rc;
	}
	if (pend > path) {
		if (*path != '/')
			return errmsg(err, errlen, -EINVAL, "bad export path");
		if (decode(path + 1, (size_t)(pend - path - 1), u->exportname,
		           sizeof(u->exportname)) < 0)
			return errmsg(err, errlen, -EINVAL, "bad export name (escape or length)");
	}
	size_t clen = 0;
	if (put(u, &clen, s, (size_t)(pend - s)) < 0)
		return errmsg(err, errlen, -EINVAL, "URI too long");
	if (query) {
		int rc = parse_query(query + 1, u, &clen, err, errlen);
		if (rc < 0)
			return rc;
	}
	if (u->unix_socket && !u->socket[0])
		return errmsg(err, errlen, -EINVAL, "nbd+unix:// needs ?socket=PATH");
	return 0;
}
