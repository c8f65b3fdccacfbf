/* Stripe cache of the parity levels (placeholder, moved from sync.c). */
#include <errno.h>

#include "engine/engine.h"

int uraid_set_stripe_cache(struct uraid_array *a, unsigned stripes)
{
	if (!eng_is_parity(a) || stripes > URAID_STRIPE_CACHE_MAX)
		return -EINVAL;
	return stripes ? -ENOTSUP : 0;
}
