/* uraid status / detail lines for FreeBSD GEOM arrays (gmirror, graid3). */
#ifndef URAID_CLI_STATUS_GEOM_H
#define URAID_CLI_STATUS_GEOM_H

#include <stdbool.h>

#include "uraid.h"

static inline bool cli_is_geom(int level)
{
	return level == URAID_LEVEL_GMIRROR || level == URAID_LEVEL_GRAID3;
}
/* The mdstat second line's "N blocks ..." part. */
void cli_geom_mdstat(const struct uraid_status *st);
/* Extra mdadm --detail style lines. */
void cli_geom_detail(const struct uraid_status *st);
/* Extra JSON fields, each starting with a comma. */
void cli_geom_json(const struct uraid_status *st);
/* "ROUND-ROBIN VERIFY" style flag words (gmirror/graid3 list), "NONE". */
void cli_geom_flags(const struct uraid_status *st, char *buf, size_t len);

#endif
