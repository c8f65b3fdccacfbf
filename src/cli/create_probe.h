/* create's check of what the members already hold (create_probe.c). */
#ifndef URAID_CLI_CREATE_PROBE_H
#define URAID_CLI_CREATE_PROBE_H

#include <stdbool.h>

/* Report on stderr what path holds that create would overwrite (md
 * superblock, GEOM metadata, partition table, file system, swap); returns
 * how many findings. A missing or unreadable path has none. Read-only. */
int create_probe_member(const char *path);
/* Probe every path; with findings and !run, ask on the terminal (stdin must
 * be one). 0 to go on, else 1 with the refusal printed. */
int create_confirm(char **paths, int n, bool run);

#endif
