/* Shared by the public array calls (api.c) and assembly through overlays
 * (api_overlay.c), which call each other. */
#ifndef URAID_ENGINE_API_INT_H
#define URAID_ENGINE_API_INT_H

#include <stddef.h>

#include "uraid.h"

struct member;

/* Open `path` for an array assembled through overlays (add, replace,
 * re-add, add-journal): read-only, behind an overlay in the array's
 * directory; 0 or a negative errno with err naming the problem. */
int eng_open_overlay_for(const struct uraid_array *a, const char *path, struct member **m,
                         char *err, size_t errlen);

#endif
