/* The kernel's NBD client (drivers/block/nbd.c) driven from user space
 * (src/export/nbd/): the handshake with an NBD server done here
 * (nbd_wire.h), then the connected sockets handed to the kernel over its
 * generic netlink family "nbd" (NBD_CMD_CONNECT), which makes /dev/nbdN;
 * NBD_CMD_DISCONNECT takes it down again. The kernel holds the sockets: no
 * process of ours stays behind. An export layer: nothing here knows the
 * array. */
#ifndef URAID_EXPORT_NBD_KERNEL_H
#define URAID_EXPORT_NBD_KERNEL_H

#include <stddef.h>
#include <stdint.h>

/* The "nbd" netlink family answers (`modprobe nbd` tried once when it
 * does not): 0, or a negative errno and why. */
int nbd_kernel_available(char *why, size_t len);
/* Connect `nconn` sockets to the NBD server on the unix socket `path`
 * (export ""), one when the server does not allow several, and hand them to
 * the kernel as a new /dev/nbdN with logical block `block` and the backend
 * identifier `ident` (shown in /sys/block/nbdN/backend); the device is
 * freed when it is disconnected. timeout_s: how long a request may wait
 * for its reply before it fails (a request in flight when the server dies
 * fails only then; requests after that fail at once). 0 and *index, or a negative errno with
 * err naming the step. */
int nbd_kernel_connect(const char *path, int nconn, uint32_t block, const char *ident,
                       unsigned timeout_s, int *index, char *err, size_t errlen);
/* Disconnect /dev/nbdN (index): 0, or a negative errno. */
int nbd_kernel_disconnect(int index, char *err, size_t errlen);
/* /sys/block/nbdN/backend into buf ("" when it has none): 0, or -ENOENT
 * when there is no such device or it is not connected. */
int nbd_kernel_backend(int index, char *buf, size_t len);

#endif
