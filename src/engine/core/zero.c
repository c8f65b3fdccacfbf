/* Zeroing member ranges for the personalities' zero ops (discard,
 * write-zeroes; engine/discard.c is the entry point). */
#include <errno.h>
#include <stdlib.h>

#include "engine/core/engine.h"

#define ZERO_BUF_BYTES (1u << 20)

int eng_member_zero(struct eng_array *a, int role, uint64_t msec, uint64_t nsec, unsigned mflags)
{
	struct eng_member *em = a->mem[a->slot[role]];
	/* A discard leaves a recorded bad block alone (it rewrites nothing):
	 * zeros written there clear it, as a write would. */
	if ((mflags & MEMBER_ZERO_DISCARD) && eng_role_bad(a, role, msec, nsec))
		mflags &= ~MEMBER_ZERO_DISCARD;
	int rc = member_write_zeroes(eng_data_member(em), (em->sb.data_offset + msec) * 512,
	                             nsec * 512, mflags);
	eng_count_io(a, true, nsec * 512);
	if (rc == 0) {
		eng_bbl_written(em, msec, nsec);
		return 0;
	}
	eng_member_failed(a, role, "write-zeroes failed");
	return rc;
}

int eng_zero_by_write(struct eng_array *a, uint64_t lsec, uint64_t nsec)
{
	size_t cap = nsec * 512 < ZERO_BUF_BYTES ? (size_t)(nsec * 512) : ZERO_BUF_BYTES;
	uint8_t *z = eng_alloc(cap);
	if (!z)
		return -ENOMEM;
	struct eng_req rq = {.q = a->ioq};
	int rc = 0;
	while (nsec && rc == 0) {
		uint64_t n = nsec < cap / 512 ? nsec : cap / 512;
		rc = a->pers->write(a, &rq, z, lsec, n);
		lsec += n;
		nsec -= n;
	}
	free(z);
	return rc;
}
