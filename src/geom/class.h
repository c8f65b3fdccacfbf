/* The GEOM array class (class.c): a gmirror or graid3 (array.c) behind the
 * public uraid_array handle, for the public calls (engine/api.c). */
#ifndef URAID_GEOM_CLASS_H
#define URAID_GEOM_CLASS_H

#include <stdbool.h>

#include "engine/core/class.h"
#include "geom/geom.h"

struct member;

/* No member has an md superblock and one carries GEOM metadata (gmirror or
 * graid3 in its last sector). */
bool geom_class_probe(struct member **mm, int n);
/* Assemble a gmirror/graid3 (ownership of the members as
 * uraid_assemble_members). */
int geom_class_assemble(struct member **mm, int n, unsigned flags, struct uraid_array **out,
                        char *err, size_t errlen, char *warn, size_t warnlen);
/* The GEOM array behind a, NULL when a is not a GEOM array. */
struct geom_array *geom_class_of(struct uraid_array *a);
#endif
