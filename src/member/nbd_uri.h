/* NBD member names (member_nbd.c): the URIs libnbd connects to, checked by
 * a pure parser before anything touches the network.
 *
 *   nbd://HOST[:PORT][/EXPORT]            TCP (port 10809 by default)
 *   nbds://[USER@]HOST[:PORT][/EXPORT]    TCP with TLS (required)
 *   nbd+unix:///EXPORT?socket=PATH        a Unix socket
 *   nbds+unix://[USER@]/EXPORT?socket=PATH  a Unix socket with TLS
 *
 * USER (TLS only) is the PSK identity, by default the user running uraid.
 *
 * HOST is a name, an IPv4 address or [an IPv6 address]. Query parameters,
 * joined with '&': socket= (Unix schemes only, required there), timeout=
 * (seconds a request may take before the member is failed, 1..3600; uraid's,
 * not passed on) and libnbd's TLS ones (tls-certificates=, tls-psk-file=,
 * tls-verify-peer=), passed on as written. Anything else is an
 * error, so a typo does not silently fall back to a default. */
#ifndef URAID_NBD_URI_H
#define URAID_NBD_URI_H

#include <stdbool.h>
#include <stddef.h>

#define NBD_URI_MAX          1024 /* a whole URI, NUL included */
#define NBD_URI_TIMEOUT_MAX  3600 /* seconds */
#define NBD_URI_DEFAULT_PORT 10809

struct nbd_uri {
	bool tls;
	bool unix_socket;
	char host[256];            /* TCP: the host as written, without brackets */
	char user[64];             /* TLS: USER@, "" when not given */
	unsigned port;             /* TCP */
	char exportname[256];      /* decoded */
	char socket[256];          /* Unix: the socket's path, decoded */
	unsigned timeout_s;        /* 0: not given */
	char connect[NBD_URI_MAX]; /* what libnbd is given: the URI less timeout= */
};

/* Does `name` use one of the schemes above (its syntax not yet checked)? */
bool nbd_uri_is(const char *name);

/* Parse and check `s`; 0, or -EINVAL with `err` naming what is wrong. Pure:
 * no allocation, no I/O. */
int nbd_uri_parse(const char *s, struct nbd_uri *out, char *err, size_t errlen);

#endif
