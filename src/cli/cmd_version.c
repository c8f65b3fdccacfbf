/* uraid version: program version and the parity backend chosen for this CPU. */
#include <stdio.h>

#include "cli/cli.h"
#include "uraid.h"

int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	const struct uraid_parity *pp = uraid_parity_get(NULL);
	printf("uraid %s\n", URAID_VERSION);
	printf("parity backend: %s\n",
	       pp ? pp->name : "(none: URAID_PARITY names an unsupported backend)");
	printf("parity backends compiled in:");
	for (const char *const *b = uraid_parity_backends(); *b; b++)
		printf(" %s", *b);
	printf("\n");
	return pp ? 0 : 1;
}
