/* create --assume-clean: do the members read back as zeros (so that
 * skipping the initial resync leaves copies and parity true)? */
#ifndef URAID_CLI_CREATE_ZEROES_H
#define URAID_CLI_CREATE_ZEROES_H

#include <stdbool.h>
#include <stddef.h>

/* 1 when every member read back zeros, 0 when one did not (why: which,
 * where, and how it was looked at), -errno when one could not be read.
 * Regular files: every allocated extent is read (SEEK_DATA skips holes);
 * block devices: a sample (the first and last MiB and 256 blocks spread
 * over the device). Missing paths (created by --size) are zeros. */
int create_members_zero(char *const *paths, int n, char *why, size_t len);

#endif
