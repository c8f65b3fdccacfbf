/* FreeBSD GEOM configurations for `uraid bench` (--geom / --levels
 * gmirror,graid3): specs "mirror:BALANCE", "raid3", "raid3-r", and arrays
 * labelled on a bench member set, run through the common uraid_array. */
#ifndef URAID_BENCH_GEOM_H
#define URAID_BENCH_GEOM_H

#include <stddef.h>
#include <stdint.h>

#include "uraid.h"

struct member;

/* "mirror:load|prefer|round-robin|split", "mirror:split/NNNk" (split with a
 * slice of NNN KiB, default 4 KiB), "raid3", "raid3-r" into a level
 * (URAID_LEVEL_GMIRROR/GRAID3), a layout word (gmirror: the balance id, the
 * slice in KiB above bit 8;
 * graid3: 1 for -r) and a short label for reports ("load", "rr", "r", "-").
 * -EINVAL for anything else. */
int bw_geom_parse(const char *spec, int *level, uint32_t *layout, char *label, size_t len);
/* Every spec `--levels gmirror` / `graid3` stands for, NULL-terminated. */
const char *const *bw_geom_all(int level);
/* Label ms[0..n) and assemble them (caller-driven sync); the members pass
 * to the array, and are closed on failure. */
int bw_geom_create_members(struct member **ms, int n, int level, uint32_t layout,
                           struct uraid_array **out, char *err, size_t errlen);
/* Smallest component count: gmirror 1, graid3 3 (then 5, 9, 17, 33). */
int bw_geom_min_members(int level);
/* Whether a graid3 can have n components (2^k + 1). */
int bw_geom_members_ok(int level, int n);

#endif
