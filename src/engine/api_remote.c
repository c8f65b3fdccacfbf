/* Remote members (NBD exports, member_nbd.c) seen from the public API: which
 * member names are remote, and each remote member's link (state, latency)
 * for `uraid status --verbose` and the daemon's reconnect policy. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/core/class.h"
#include "engine/core/engine.h"
#include "engine/md.h"
#include "member/member.h"

bool uraid_member_is_remote(const char *name)
{
	return member_is_remote(name);
}

int uraid_remote_links(struct uraid_array *h, struct uraid_remote_link *out, int max)
{
	if (!h || (max && !out))
		return -EINVAL;
	if (h->cls != &eng_md_class)
		return 0; /* GEOM arrays: local members only */
	struct eng_array *a = eng_of(h);
	eng_lock(a);
	int n = 0;
	for (int i = 0; i < a->nmem && n < max; i++) {
		struct eng_member *em = a->mem[i];
		if (!em->m || !member_is_remote(em->m->name))
			continue;
		struct uraid_remote_link *l = &out[n++];
		memset(l, 0, sizeof(*l));
		snprintf(l->name, sizeof(l->name), "%s", em->m->name);
		l->state = em->state;
		l->role = em->role;
		char why[160];
		l->link_down = member_check(em->m, why, sizeof(why)) < 0;
		member_describe(em->m, l->link, sizeof(l->link));
	}
	eng_unlock(a);
	return n;
}
