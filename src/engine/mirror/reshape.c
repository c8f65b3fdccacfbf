/* raid10 reshape: one batch of the move from the old layout to the new
 * (pers.h's reshape op; engine/core/reshape.h has the views, the copy and
 * the safety rule, engine/sync/reshape.c the scheduling), as md's raid10
 * reshape_request does it: the data read from one copy of the old layout
 * (another where a read fails), then written to every copy of the new. */
#include "engine/core/reshape.h"
#include "engine/mirror/mirror.h"

static int write_new(struct eng_array *a, const uint8_t *buf, uint64_t lsec, uint64_t n)
{
	struct eng_req rq = {.q = a->ioq};
	return eng_mirror_write(a, &rq, buf, lsec, n);
}

int eng_mirror_reshape(struct eng_array *a, uint64_t lsec, uint64_t n)
{
	return eng_reshape_copy(a, lsec, n, eng_mirror_read, write_new);
}
