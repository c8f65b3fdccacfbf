/* Helpers shared by the array verbs: array names, starting the daemon, and
 * the client side of the control socket (protocol in include/uraid.h). */
#ifndef URAID_CLI_ARRAY_H
#define URAID_CLI_ARRAY_H

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
#endif
