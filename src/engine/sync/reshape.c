/* The reshape sync action: one batch of the move at a time under the
 * array lock (the window being moved is locked with it), through the
 * personality's reshape op, forwards from sector 0 or backwards from the
 * end (md's reshape_backwards), with md's checkpoint rule (core/reshape.h):
 * the position is recorded before a batch would write over old rows the
 * recorded position still needs, and about once a second. -EAGAIN while a
 * restore from mdadm's backup is pending (rs->restore). */
#include <errno.h>
#include <stdio.h>

#include "engine/core/reshape.h"
#include "engine/sync/sync.h"

#define RESHAPE_CHECKPOINT_NS 1000000000ull

int sync_reshape_batch(struct eng_array *a, uint64_t max, uint64_t *done)
{
	struct eng_reshape *rs = a->rs;
	*done = 0;
	if (!rs || !a->pers->reshape)
		return -EOPNOTSUPP;
	/* The critical section is written back first: nothing to do until
	 * then, and the caller waits for the restore (or a stop) to signal
	 * a->cond rather than calling again at once. */
	if (rs->restore)
		return -EAGAIN;
	bool back = rs->r.backwards;
	/* mdadm's sliding backup: forwards every window is backed up */
	if (rs->window && !back)
		return rs->window(a, done);
	uint64_t w = md_reshape_unit(&rs->r);
	/* Forwards [pos, pos + n) moves, backwards [pos - n, pos): left is
	 * how much remains in the direction of the move. */
	uint64_t pos = rs->r.position, end = rs->size[1];
	uint64_t left = back ? pos : (pos < end ? end - pos : 0);
	if (!left)
		return 0;
	uint64_t n = left, lim = SYNC_BATCH_BYTES / 512;
	if (n > lim)
		n = lim;
	if (n > max)
		n = max;
	n -= n % w;
	if (n < w)
		n = w;
	if (n > left) /* the end is on a stripe of the new geometry */
		n = left;
	while (!eng_reshape_move_safe(a, back ? pos - n : pos, n, rs->safe)) {
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
		/* a shrink's critical section, at its end: backed up */
		if (rs->window)
			return rs->window(a, done);
		fprintf(stderr,
		        "uraid: reshape cannot go on safely at sector %llu: the new layout would "
		        "overwrite old data still needed after a crash (md needs mdadm's backup "
		        "of the critical section here: start or assemble it with --backup-file)\n",
		        (unsigned long long)pos);
		return -ENOSPC;
	}
	int rc = a->pers->reshape(a, back ? pos - n : pos, n);
	if (rc < 0)
		return rc;
	rs->r.position = back ? pos - n : pos + n;
	*done = n;
	if (eng_now_ns() - rs->checkpoint_ns > RESHAPE_CHECKPOINT_NS && n < left)
		return eng_reshape_checkpoint(a);
	return 0;
}
