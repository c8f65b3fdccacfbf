/* The attach record RUN/NAME.attach (attach_state.c) and what it may be
 * trusted for. detach unmounts, removes a directory and stops processes on
 * its word, so its text alone proves nothing: each thing it names is checked
 * against the system before anything is done to it (attach_verify). */
#ifndef URAID_CLI_ATTACH_H
#define URAID_CLI_ATTACH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uraid.h"

/* How the array was made a block device (attach --via). */
enum attach_kind {
	ATTACH_FUSE = 0, /* nbdfuse + a loop device (the default of old records) */
	ATTACH_UBLK,     /* /dev/ublkbN served by uraid's daemon */
	ATTACH_NBD,      /* /dev/nbdN: the kernel NBD client on the serve's socket */
};

struct attach_state {
	char name[URAID_NAME_MAX + 1];
	enum attach_kind kind;
	int dev;          /* ublk device id / nbd index; -1 (fuse) */
	char device[32];  /* /dev/ublkbN or /dev/nbdN */
	pid_t daemon_pid; /* ublk: the daemon serving it, and its start time */
	unsigned long long daemon_start;
	char loop[32];        /* /dev/loopN, bound to MOUNT/nbd */
	char mount[PATH_MAX]; /* RUN/NAME.fuse.XXXXXX, where nbdfuse is mounted */
	pid_t fuse_pid;       /* nbdfuse, and its start time (cli_proc.h) */
	unsigned long long fuse_start;
	bool implicit; /* attach started the serve: detach stops nbdkit */
	pid_t nbdkit_pid;
	unsigned long long nbdkit_start;
};

/* One "key=value" a line: name, kind (fuse, ublk, nbd; absent: fuse), dev,
 * loop, mount, fuse_pid, fuse_start, implicit, nbdkit_pid, nbdkit_start,
 * daemon_pid, daemon_start. Written with uraid_run_write. */
int attach_save(const struct attach_state *s, char *err, size_t errlen);
/* Read and check the form of NAME's record: the name it holds is NAME,
 * loop a /dev/loopN, mount a FUSE directory uraid makes for NAME in the run
 * directory, numbers numbers. -ENOENT when there is none. */
int attach_load(const char *name, struct attach_state *s, char *err, size_t errlen);
/* What the record names, as the system sees it now: a loop device still
 * bound must be bound to MOUNT/nbd, a mount there must be nbdfuse's, a
 * process alive with the recorded pid and start time must be the nbdfuse
 * serving MOUNT / the nbdkit serving NAME. 0, or -EPERM naming the first
 * thing that does not match (then nothing may be done). ublk: the device
 * is served by the recorded daemon (or by none); nbd: /dev/nbdN, when
 * connected, has backend "uraid:NAME". */
int attach_verify(const struct attach_state *s, char *err, size_t errlen);

/* The loop device is bound to a backing file (its path into file). */
bool attach_loop_bound(const char *loop, char *file, size_t len);
/* Something is mounted on dir; its file system type into fstype. */
bool attach_mounted(const char *dir, char *fstype, size_t len);

const char *attach_kind_name(enum attach_kind k);
int attach_kind_parse(const char *s, enum attach_kind *k); /* -EINVAL: no such kind */

/* attach_kernel.c: the ublk and kernel NBD paths. */
/* The best path this kernel offers: ublk (when can_ublk: attach serves the
 * member files itself), else the kernel NBD client, else fuse; why the
 * better ones were passed over into why. */
enum attach_kind attach_pick(bool can_ublk, char *why, size_t len);
/* Start a daemon on the members serving /dev/ublkbN; fills s (name, dev,
 * device, daemon), saved. 0 or an exit status (printed). */
int attach_ublk(const char *verb, int n, char **members, const char *want, const char *overlay,
                bool force, struct attach_state *s);
/* The same for NAME, an array a daemon runs: taken over with every member
 * it has (serve_handover), given back to a plain daemon when the ublk one
 * cannot start or does not run with all of them. */
int attach_ublk_takeover(const char *verb, const char *name, struct attach_state *s);
int attach_ublk_undo(const char *verb, struct attach_state *s);
/* Connect /dev/nbdN to the export at uri (nbd+unix://...): fills s->dev,
 * s->device. 0 or an exit status (printed). */
int attach_nbd(const char *verb, const char *uri, uint32_t block, struct attach_state *s);
int attach_nbd_undo(const char *verb, struct attach_state *s);
/* The device the record names still exists (bound, connected). */
bool attach_present(const struct attach_state *s);
const char *attach_device(const struct attach_state *s);

#endif
