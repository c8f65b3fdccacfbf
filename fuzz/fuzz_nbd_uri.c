/* libFuzzer target for the NBD member URI parser (src/member/nbd_uri.c):
 * any bytes either parse or are refused with a message; what parses has
 * bounded, terminated fields, a scheme the member layer recognises, a port
 * in range for TCP, a socket path for Unix schemes, a timeout in range, and
 * a connect string that parses again to the same fields without timeout=. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "member/nbd_uri.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[NBD_URI_MAX + 8];
	if (size >= sizeof(s))
		size = sizeof(s) - 1;
	memcpy(s, data, size);
	s[size] = 0;
	struct nbd_uri u, v;
	char err[256] = "";
	int rc = nbd_uri_parse(s, &u, err, sizeof(err));
	if (rc < 0) {
		if (rc != -EINVAL || !err[0])
			abort();
		return 0;
	}
	if (!nbd_uri_is(s) || memchr(u.host, 0, sizeof(u.host)) == NULL ||
	    memchr(u.connect, 0, sizeof(u.connect)) == NULL)
		abort();
	if (!u.unix_socket && (u.port == 0 || u.port > 65535 || !u.host[0]))
		abort();
	if (u.unix_socket && !u.socket[0])
		abort();
	if (u.timeout_s > NBD_URI_TIMEOUT_MAX)
		abort();
	if (nbd_uri_parse(u.connect, &v, err, sizeof(err)) != 0 || v.timeout_s ||
	    strcmp(v.connect, u.connect) || strcmp(v.host, u.host) || v.port != u.port ||
	    strcmp(v.socket, u.socket) || strcmp(v.exportname, u.exportname) || v.tls != u.tls ||
	    strcmp(v.user, u.user))
		abort();
	return 0;
}
