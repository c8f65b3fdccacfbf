/* Helpers shared by the array verbs: array names, starting the daemon, and
 * the client side of the control socket (protocol in include/uraid.h). */
#ifndef URAID_CLI_ARRAY_H
#define URAID_CLI_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uraid.h"

/* uraid_name_check, printing "uraid: VERB: why" and returning 1 on failure. */
int cli_check_name(const char *verb, const char *name);
/* The name is valid and the run directory trusted (created when missing);
 * else prints why and returns 1. Verbs call it before they change anything. */
int cli_run_ready(const char *verb, const char *name);
/* The name an array runs under: `want` (--name) if given, else its md name
 * without the "homehost:" prefix, else the first member's file name stem;
 * each checked with uraid_name_check. 0, or 1 with the problem printed. */
int cli_pick_name(const char *verb, const char *want, const char *md_name, const char *member,
                  char *name, size_t len);
/* A member path as the daemon is given it: absolute (realpath), or an NBD
 * URI as written (member_is_remote). malloc'd; NULL with errno set. */
char *cli_member_path(const char *path);
/* Copy a run directory file (a log) to stderr, each line after prefix. */
void cli_print_run_file(const char *prefix, const char *name, const char *suffix);
/* Fork `uraid daemon NAME MEMBER...` and wait until its control socket
 * answers; on failure print why (the daemon's log) and return 1. With
 * `overlay` (a directory, absolute) the daemon assembles through overlays
 * there (uraid_assemble_overlay). */
int cli_start_daemon(const char *verb, const char *name, int n, char **members,
                     const char *overlay);
/* The control socket path of an array name (uraid_run_path): 0 or a
 * negative errno with err naming the problem. */
int cli_sock_path(const char *name, char *path, size_t len, char *err, size_t errlen);
/* mdadm's --update words uraid knows ("no-bbl", "force-no-bbl") as
 * assemble flags: 0 and *flags, or -EINVAL for any other word. NULL: 0. */
int cli_update_flags(const char *update, unsigned *flags);
/* mdadm's --uuid on assemble: the members whose superblock names another
 * array are left out ("X has wrong uuid."), the rest kept in order in
 * members[0 .. *n); -ENOENT when none is left, -EINVAL for a bad UUID. */
int cli_uuid_filter(const char *verb, const char *uuid, int *n, char **members);
/* An --update=WORD uraid does not know: mdadm's "'--update=WORD' is
 * invalid" (exit 2) for one mdadm does not know either, "not supported"
 * (exit 1) for one it does. Returns the exit status (printed). */
int cli_update_refuse(const char *verb, const char *update);
/* A dirty degraded raid4/5/6 the read-only check warned about, refused in
 * mdadm's words (st: the check's status; member names it without a name). */
int cli_dirty_degraded(const char *verb, const struct uraid_status *st, const char *member);
/* Assemble members read-only to check them, pick the name (want, else the
 * md name ...), then start the daemon: 0 or an exit status (printed).
 * partial: start it with members missing that the superblocks still count
 * as working (mdadm's --run, --force, or members found by a configuration);
 * else refused as mdadm refuses it ("need all N to start it"). */
int cli_assemble_start(const char *verb, const char *want, bool force, bool partial,
                       const char *update, const char *overlay, int n, char **members);

/* The configuration file (cmd_scan.c): path (--config) or NULL for
 * $URAID_CONFIG / the default. 0 and *c, or 1 with the problem printed. */
struct uraid_config;
int cli_config_load(const char *verb, const char *path, struct uraid_config **c);
/* assemble NAME (an ARRAY line) and assemble --scan. */
int cli_assemble_named(const char *verb, const char *config, const char *arr, const char *want,
                       bool force);
int cli_assemble_scan(const char *verb, const char *config, bool force);
/* The arrays with a control socket in the run directory, sorted (free with
 * uraid_config_paths_free): 0, or 1 with the problem printed. */
int cli_running_arrays(const char *verb, char ***names, int *n);
/* examine --scan (cmd_scan.c): n paths, or none for the config's DEVICE
 * candidates. */
int cli_examine_scan(const char *config, bool verbose, int n, char **paths);
/* The members of the default configuration's ARRAY line arr (absolute
 * paths): 0 with n > 0, else -1 (no such line, none found). */
int cli_config_members(const char *arr, char ***paths, int *n);
/* True when an array runs under name (its control socket answers). */
bool cli_array_running(const char *name);
/* assemble --incremental / uraid incremental (cmd_incremental.c). */
int cli_incremental(const char *verb, const char *config, bool run, bool scan, int n, char **devs);
/* daemon_ublk.c: with URAID_DAEMON_UBLK=1 in the environment (taken out),
 * serve the daemon's array as /dev/ublkbN too and record it in RUN/NAME.ublk;
 * 0 with *out NULL when not asked. A negative errno (printed) when asked
 * and it could not be done. */
struct ublk_export;
int daemon_ublk_start(const char *name, char *const *members, int n, struct uraid_array *a,
                      struct ublk_export **out);
/* Stop and delete the device, remove RUN/NAME.ublk; NULL: nothing. */
void daemon_ublk_stop(const char *name, struct ublk_export *e);

#endif
