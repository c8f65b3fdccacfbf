#include "util/sockio.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/types.h>

int sock_send_all(int fd, const void *p, size_t len)
{
	const char *b = p;
	while (len) {
		ssize_t w = send(fd, b, len, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EPIPE;
		b += w;
		len -= (size_t)w;
	}
	return 0;
}
