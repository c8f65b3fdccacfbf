/* The reconnect policy for remote members (NBD), run by the control server
 * of a daemon or of `uraid serve`'s nbdkit: a thread that publishes the
 * remote members' links in RUN/NAME.links (status --verbose prints them)
 * every second and runs uraid_remote_reconnect every URAID_NBD_RECONNECT
 * seconds (default 5; 0 turns reconnecting off). */
#ifndef URAID_CONTROL_REMOTE_WATCH_H
#define URAID_CONTROL_REMOTE_WATCH_H

#include "uraid.h"

struct remote_watch;
/* NULL when it cannot start (the array then runs without the policy). */
struct remote_watch *remote_watch_start(struct uraid_array *a, const char *name);
void remote_watch_stop(struct remote_watch *w);

#endif
