/* Shared by the two halves of `uraid examine`: the superblock report
 * (cmd_examine.c) and the bad block listing (cmd_examine_bbl.c). */
#ifndef URAID_CLI_EXAMINE_INT_H
#define URAID_CLI_EXAMINE_INT_H

#include <stdbool.h>

/* "key": "value" with JSON escapes, to stdout. */
void examine_json_str(const char *key, const char *s);
/* examine --badblocks over argv[0..argc): the exit status. */
int examine_badblocks(int argc, char **argv, bool json);

#endif
