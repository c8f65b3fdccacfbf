/* Loading a kernel module on demand (the export paths: ublk_drv, nbd). */
#ifndef URAID_UTIL_MODPROBE_H
#define URAID_UTIL_MODPROBE_H

/* Runs `modprobe -q MODULE` with its output discarded and waits for it.
 * One try, no error: the caller looks again for what the module provides
 * (a module built in, absent or refused all look the same here). */
void util_modprobe(const char *module);

#endif
