/* Whole-buffer socket writes for the control channel (client and server). */
#ifndef URAID_SOCKIO_H
#define URAID_SOCKIO_H

#include <stddef.h>

/* Send all len bytes (retrying on EINTR and partial sends, never raising
 * SIGPIPE); 0 or -EPIPE once the peer is gone. */
int sock_send_all(int fd, const void *p, size_t len);

#endif
