/* The ranges `uraid cat --keep-going` could not read, and the map it writes
 * of them: GNU ddrescue's mapfile format (ddrescuelog reads it), with a
 * comment before each bad area naming the members behind it and what each
 * answered to a direct read (uraid_locate with the probe). */
#ifndef URAID_CLI_CAT_MAP_H
#define URAID_CLI_CAT_MAP_H

#include <stdint.h>
#include <stdio.h>

#include "uraid.h"

struct cat_range {
	uint64_t off, len; /* array bytes */
};

struct cat_map {
	struct cat_range *r;
	size_t n, cap;
	uint64_t bad_bytes;
};

/* Record [off, off + len) as unreadable (joined to the last range when
 * they touch). -ENOMEM. */
int cat_map_add(struct cat_map *m, uint64_t off, uint64_t len);
void cat_map_free(struct cat_map *m);

/* The mapfile for a read of [start, end) of an array of `size` bytes:
 * '+' read, '-' unreadable, '?' outside the range read. `a` (NULL: a
 * running array, read through its daemon) names the members behind each
 * bad area. `what` is the first comment line (the command). */
int cat_map_write(const struct cat_map *m, FILE *f, struct uraid_array *a, uint64_t start,
                  uint64_t end, uint64_t size, const char *what);

/* One line per member piece behind [off, off + len) into f, each starting
 * with `prefix`: where, what it holds, what a direct read answered. At most
 * `max_pieces` pieces; says how many more there were. */
void cat_map_describe(FILE *f, const char *prefix, struct uraid_array *a, uint64_t off,
                      uint64_t len, int max_pieces);

#endif
