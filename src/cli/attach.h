/* The attach record RUN/NAME.attach (attach_state.c) and what it may be
 * trusted for. detach unmounts, removes a directory and stops processes on
 * its word, so its text alone proves nothing: each thing it names is checked
 * against the system before anything is done to it (attach_verify). */
#ifndef URAID_CLI_ATTACH_H
#define URAID_CLI_ATTACH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "uraid.h"

struct attach_state {
	char name[URAID_NAME_MAX + 1];
	char loop[32];        /* /dev/loopN, bound to MOUNT/nbd */
	char mount[PATH_MAX]; /* RUN/NAME.fuse.XXXXXX, where nbdfuse is mounted */
	pid_t fuse_pid;       /* nbdfuse, and its start time (cli_proc.h) */
	unsigned long long fuse_start;
	bool implicit; /* attach started the serve: detach stops nbdkit */
	pid_t nbdkit_pid;
	unsigned long long nbdkit_start;
};

/* One "key=value" a line: name, loop, mount, fuse_pid, fuse_start,
 * implicit, nbdkit_pid, nbdkit_start. Written with uraid_run_write. */
int attach_save(const struct attach_state *s, char *err, size_t errlen);
/* Read and check the form of NAME's record: the name it holds is NAME,
 * loop a /dev/loopN, mount a FUSE directory uraid makes for NAME in the run
 * directory, numbers numbers. -ENOENT when there is none. */
int attach_load(const char *name, struct attach_state *s, char *err, size_t errlen);
/* What the record names, as the system sees it now: a loop device still
 * bound must be bound to MOUNT/nbd, a mount there must be nbdfuse's, a
 * process alive with the recorded pid and start time must be the nbdfuse
 * serving MOUNT / the nbdkit serving NAME. 0, or -EPERM naming the first
 * thing that does not match (then nothing may be done). */
int attach_verify(const struct attach_state *s, char *err, size_t errlen);

/* The loop device is bound to a backing file (its path into file). */
bool attach_loop_bound(const char *loop, char *file, size_t len);
/* Something is mounted on dir; its file system type into fstype. */
bool attach_mounted(const char *dir, char *fstype, size_t len);

#endif
