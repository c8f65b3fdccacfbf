/* Shared by the parts of `uraid examine`: the superblock report
 * (cmd_examine.c), the bad block listing (cmd_examine_bbl.c) and the
 * bitmap report (cmd_examine_bitmap.c). */
#ifndef URAID_CLI_EXAMINE_INT_H
#define URAID_CLI_EXAMINE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "key": "value" with JSON escapes, to stdout. */
void examine_json_str(const char *key, const char *s);
/* examine --badblocks over argv[0..argc): the exit status. */
int examine_badblocks(int argc, char **argv, bool json);
/* examine --bitmap over argv[0..argc) (mdadm -X): the exit status. */
int examine_bitmap(int argc, char **argv);
/* mdadm's human_size: " (7.00 MiB 7.34 MB)", nothing below 5000 KiB. */
void examine_human_size(uint64_t bytes, char *out, size_t len);

#endif
