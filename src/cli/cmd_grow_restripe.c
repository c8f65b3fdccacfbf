/* Placeholder for the restriping grows (raid-devices of raid4/5/6/10,
 * chunk, layout, level changes that move data): replaced by the reshape. */
#include <stdio.h>

#include "cli/grow.h"

int cli_grow_restripe(const struct cli_grow_args *ga)
{
	fprintf(stderr,
	        "uraid grow: %s: this change needs a reshape, which uraid does not do yet\n",
	        ga->name ? ga->name : "array");
	return 1;
}
