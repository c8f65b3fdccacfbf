/* Shared by cmd_geom.c (uraid mirror / raid3 verbs) and cmd_geom_ctl.c. */
#ifndef URAID_CLI_CMD_GEOM_H
#define URAID_CLI_CMD_GEOM_H

#include <stdbool.h>
#include <stddef.h>

struct uraid_array;

/* NAME is a running gmirror/graid3 (its daemon or serve answers). */
bool geom_cli_running(const char *name);
/* Assemble gmirror/graid3 member files (either class) with `flags`;
 * returns 0 or an exit status (message printed). */
int geom_cli_open(const char *verb, char **paths, int n, unsigned flags, struct uraid_array **out);
/* Append " member=ABSPATH" to req. */
void geom_cli_member(char *req, size_t len, const char *path);
/* Run one uraid_geom_ctl request: on the running array NAME when n == 0,
 * else on the members paths[0..n) (level URAID_LEVEL_GMIRROR/GRAID3 must
 * match, and NAME). Returns the exit status. */
int geom_cli_request(const char *verb, int level, const char *name, char **paths, int n,
                     const char *req);
/* gmirror/graid3 status or list (from uraid_status) of the running array
 * NAME (n == 0) or of the member files. */
int geom_cli_status(const char *verb, int level, const char *name, char **paths, int n, bool list);
/* stop: the running array, or the member files (synchronized, closed
 * cleanly). */
int geom_cli_stop(const char *verb, int level, const char *name, char **paths, int n);
/* gmirror clear / graid3 clear: zero the metadata sector of each file that
 * carries metadata of the class; files a running array holds are refused. */
int geom_cli_clear(const char *verb, bool mirror, char **paths, int n);
/* gmirror dump / graid3 dump: the metadata of each file. */
int geom_cli_dump(const char *verb, bool mirror, char **paths, int n);

#endif
