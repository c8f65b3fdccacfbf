/* raid10 reshape: one batch of the move from the old layout to the new
 * (pers.h's reshape op; engine/core/reshape.h has the views and the
 * safety rule, engine/sync/reshape.c the scheduling), as md's raid10
 * reshape_request does it: the data read from one copy of the old layout
 * (another where a read fails), then written to every copy of the new. */
#include <errno.h>
#include <string.h>

#include "engine/core/reshape.h"
#include "engine/mirror/mirror.h"

int eng_mirror_reshape(struct eng_array *a, uint64_t lsec, uint64_t n)
{
	struct eng_reshape *rs = a->rs;
	uint8_t *buf = eng_buf_get(a, n * 512);
	if (!buf)
		return -ENOMEM;
	/* What the old geometry does not hold (a grow's new end) is zeros. */
	uint64_t old_end = rs->size[0], rd = 0;
	if (lsec < old_end)
		rd = old_end - lsec < n ? old_end - lsec : n;
	int rc = 0;
	if (rd) {
		eng_reshape_view(a, 0);
		rc = eng_mirror_read(a, buf, lsec, rd);
	}
	memset(buf + rd * 512, 0, (n - rd) * 512);
	if (rc == 0) {
		eng_reshape_view(a, 1);
		struct eng_req rq = {.q = a->ioq};
		rc = eng_mirror_write(a, &rq, buf, lsec, n);
	}
	eng_reshape_view(a, -1);
	eng_buf_put(a, buf);
	return rc;
}
