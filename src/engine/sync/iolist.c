/* Member request lists for the sync batches (engine/sync/sync.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sync/sync.h"

/* Double the room of both arrays (16 at first). */
static int grow(struct sync_iolist *l)
{
	int cap = l->cap ? 2 * l->cap : 16;
	struct member_io *io = realloc(l->io, (size_t)cap * sizeof(*io));
	if (io)
		l->io = io;
	int *r = io ? realloc(l->role, (size_t)cap * sizeof(*r)) : NULL;
	if (!io || !r)
		return -ENOMEM;
	l->role = r;
	l->cap = cap;
	return 0;
}

int sync_iol_add(struct eng_array *a, struct sync_iolist *l, int role, bool write, uint8_t *buf,
                 uint64_t msec, uint64_t nsec)
{
	if (l->n > 0 && l->role[l->n - 1] == role) {
		struct member_io *p = &l->io[l->n - 1];
		struct member_io next;
		eng_set_io(a, &next, role, write, buf, msec, nsec);
		if (p->op == next.op && p->m == next.m && p->off + p->len == next.off &&
		    (uint8_t *)p->buf + p->len == buf) {
			p->len += next.len;
			return 0;
		}
	}
	if (l->n == l->cap && grow(l) < 0)
		return -ENOMEM;
	eng_set_io(a, &l->io[l->n], role, write, buf, msec, nsec);
	l->role[l->n++] = role;
	return 0;
}

int sync_iol_append(struct sync_iolist *l, const struct sync_iolist *from)
{
	for (int i = 0; i < from->n; i++) {
		if (l->n == l->cap && grow(l) < 0)
			return -ENOMEM;
		l->io[l->n] = from->io[i];
		l->role[l->n++] = from->role[i];
	}
	return 0;
}

void sync_iol_free(struct sync_iolist *l)
{
	free(l->io);
	free(l->role);
	memset(l, 0, sizeof(*l));
}

/* Runs the list; true when every request succeeded. */
bool sync_iol_run(struct eng_array *a, struct sync_iolist *l)
{
	eng_ioq_run(a, a->ioq, l->io, l->n);
	for (int i = 0; i < l->n; i++)
		if (!member_io_done(&l->io[i]))
			return false;
	return true;
}
