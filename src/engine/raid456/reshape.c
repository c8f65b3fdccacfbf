/* raid4/5/6 reshape: one batch of the move from the old layout to the new
 * (pers.h's reshape op; engine/core/reshape.h has the views, the copy and
 * the safety rule, engine/sync/reshape.c the scheduling). The data is read
 * in the old view, reconstructed where a member cannot serve, and written
 * as whole stripes of the new one, parity computed from it. */
#include <errno.h>

#include "engine/core/reshape.h"
#include "engine/raid456/raid456.h"

static int write_new(struct eng_array *a, const uint8_t *buf, uint64_t lsec, uint64_t n)
{
	struct eng_reshape *rs = a->rs;
	/* A member the move fills counts for the stripes it writes (md's
	 * analyse_stripe: "if we've reshaped into here, we assume it is
	 * Insync"). */
	if (!rs->r.backwards)
		for (int i = 0; i < a->nmem; i++)
			if (eng_reshape_fills(a->mem[i]))
				a->mem[i]->recovery_offset = eng_reshape_rows(rs, lsec + n);
	uint64_t w = eng_stripe_width(a);
	struct eng_req rq = {.q = a->ioq};
	if (lsec % w || n % w)
		return -EINVAL;
	return eng_write_full_stripes(a, &rq, lsec / w, (int)(n / w), buf);
}

int eng_r456_reshape(struct eng_array *a, uint64_t lsec, uint64_t n)
{
	return eng_reshape_copy(a, lsec, n, eng_parity_read_members, write_new);
}
