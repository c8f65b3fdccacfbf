/* Placeholder until the parity module lands: backend selection only. */
#include <errno.h>
#include <stddef.h>

#include "uraid.h"

static const char *const backends[] = {NULL};

const struct uraid_parity *uraid_parity_get(const char *name)
{
	(void)name;
	errno = ENOSYS;
	return NULL;
}

const char *const *uraid_parity_backends(void)
{
	return backends;
}
