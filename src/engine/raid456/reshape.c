/* raid4/5/6 reshape: one batch of the move from the old layout to the new
 * (pers.h's reshape op; engine/core/reshape.h has the views and the
 * safety rule, engine/sync/reshape.c the scheduling). The data is read in
 * the old view, reconstructed where a member cannot serve, and written as
 * whole stripes of the new one, parity computed from it. */
#include <errno.h>
#include <string.h>

#include "engine/core/reshape.h"
#include "engine/raid456/raid456.h"

int eng_r456_reshape(struct eng_array *a, uint64_t lsec, uint64_t n)
{
	struct eng_reshape *rs = a->rs;
	uint8_t *buf = eng_buf_get(a, n * 512);
	if (!buf)
		return -ENOMEM;
	uint64_t old_end = rs->size[0], rd = 0;
	if (lsec < old_end)
		rd = old_end - lsec < n ? old_end - lsec : n;
	int rc = 0;
	if (rd) {
		eng_reshape_view(a, 0);
		rc = eng_parity_read_members(a, buf, lsec, rd);
	}
	memset(buf + rd * 512, 0, (n - rd) * 512);
	if (rc == 0) {
		eng_reshape_view(a, 1);
		/* A member the move fills counts for the stripes it writes
		 * (md's analyse_stripe: "if we've reshaped into here, we
		 * assume it is Insync"). */
		if (!rs->r.backwards)
			for (int i = 0; i < a->nmem; i++)
				if (eng_reshape_fills(a->mem[i]))
					a->mem[i]->recovery_offset = eng_reshape_rows(rs, lsec + n);
		uint64_t w = eng_stripe_width(a);
		struct eng_req rq = {.q = a->ioq};
		if (lsec % w || n % w)
			rc = -EINVAL;
		else
			rc = eng_write_full_stripes(a, &rq, lsec / w, (int)(n / w), buf);
	}
	eng_reshape_view(a, -1);
	eng_buf_put(a, buf);
	return rc;
}
