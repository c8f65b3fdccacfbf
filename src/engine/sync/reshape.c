/* The reshape sync action: one batch of the move at a time under the
 * array lock (the window being moved is locked with it), through the
 * personality's reshape op, with md's checkpoint rule (core/reshape.h):
 * the position is recorded before a batch would write over old rows the
 * recorded position still needs, and about once a second. */
#include <errno.h>
#include <stdio.h>

#include "engine/core/reshape.h"
#include "engine/sync/sync.h"

#define RESHAPE_CHECKPOINT_NS 1000000000ull

int sync_reshape_batch(struct eng_array *a, uint64_t max, uint64_t *done)
{
	struct eng_reshape *rs = a->rs;
	*done = 0;
	if (!rs || rs->r.backwards || !a->pers->reshape)
		return -EOPNOTSUPP;
	uint64_t w = md_reshape_unit(&rs->r);
	uint64_t pos = rs->r.position, end = rs->size[1];
	if (pos >= end)
		return 0;
	uint64_t n = end - pos, lim = SYNC_BATCH_BYTES / 512;
	if (n > lim)
		n = lim;
	if (n > max)
		n = max;
	n -= n % w;
	if (n < w)
		n = w;
	if (n > end - pos) /* the end is on a stripe of the new geometry */
		n = end - pos;
	while (!eng_reshape_move_safe(a, pos, n, rs->safe)) {
		if (rs->safe != pos) {
			int rc = eng_reshape_checkpoint(a);
			if (rc < 0)
				return rc;
			continue;
		}
		if (n > w) {
			n = n / 2 - n / 2 % w;
			if (n < w)
				n = w;
			continue;
		}
		fprintf(stderr,
		        "uraid: reshape cannot go on safely at sector %llu: the new layout would "
		        "overwrite old data still needed after a crash (md needs mdadm's backup "
		        "file here, which uraid does not support)\n",
		        (unsigned long long)pos);
		return -ENOSPC;
	}
	int rc = a->pers->reshape(a, pos, n);
	if (rc < 0)
		return rc;
	rs->r.position = pos + n;
	*done = n;
	if (eng_now_ns() - rs->checkpoint_ns > RESHAPE_CHECKPOINT_NS && rs->r.position < end)
		return eng_reshape_checkpoint(a);
	return 0;
}
