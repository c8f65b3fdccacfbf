/* Setting write-intent bits without the exclusive lock (see engine/bitmap/bitmap.h,
 * eng_bitmap_prepare): the new bits go to disk first (FUA on every member
 * holding the bitmap), and only then into the in-memory image that shared
 * writers test, so a writer that sees its bits set knows they are durable.
 * Clearing happens under the exclusive lock, which waits for preparers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/bitmap/bitmap.h"
#include "engine/core/engine.h"

#define BM_AHEAD_BYTES (16u << 20)
#define BM_AHEAD_BITS  256

int eng_bitmap_prepare(struct eng_array *a, uint64_t lsec, uint64_t nsec)
{
	if (pthread_rwlock_rdlock(&a->iolock) != 0)
		return -EAGAIN;
	struct eng_bitmap *b = eng_bitmap_of(a);
	if (!b || !a->dirty) {
		pthread_rwlock_unlock(&a->iolock);
		return -EAGAIN;
	}
	pthread_mutex_lock(&b->mu);
	uint64_t i0, i1, lo = UINT64_MAX, hi = 0;
	eng_bitmap_range(a, lsec, nsec, &i0, &i1);
	uint8_t *bits = b->img + MD_BITMAP_SB_BYTES;
	for (uint64_t i = i0; i < i1; i++)
		if (!md_bitmap_test(bits, i)) {
			if (lo == UINT64_MAX)
				lo = i;
			hi = i;
		}
	int rc = 0;
	if (lo == UINT64_MAX)
		goto out; /* another preparer set them */
	/* A sequential stream (the bit before is set) gets the bits of the
	 * next BM_AHEAD_BYTES set in the same write: one bitmap write per that
	 * much data instead of one per request (md batches bits per plug). A
	 * crash resyncs at most that much more; an unused one is cleared by
	 * the second flush after it. */
	if (i0 > 0 && md_bitmap_test(bits, i0 - 1)) {
		uint64_t ahead = BM_AHEAD_BYTES / 512 / b->chunk_sectors;
		if (ahead > BM_AHEAD_BITS)
			ahead = BM_AHEAD_BITS;
		for (uint64_t i = i1; i < i1 + ahead && i < b->nbits; i++)
			if (!md_bitmap_test(bits, i))
				hi = i;
		i1 = hi + 1;
	}
	/* The sectors holding the new bits, from the image plus those bits;
	 * sector 0 (the header) too when its events are behind. */
	size_t from = (MD_BITMAP_SB_BYTES + lo / 8) / 512 * 512;
	size_t to = (MD_BITMAP_SB_BYTES + hi / 8 + 1 + 511) / 512 * 512;
	bool hdr = b->hdr_events != a->events;
	if (hdr)
		from = 0;
	if (to > b->img_len)
		to = b->img_len;
	uint8_t *tmp = eng_buf_get(a, to - from);
	if (!tmp) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(tmp, b->img + from, to - from);
	for (uint64_t i = lo; i <= hi && i < i1; i++)
		md_bitmap_assign(tmp + MD_BITMAP_SB_BYTES - from, i, true);
	struct md_bitmap_sb hs = b->sb;
	if (hdr) {
		hs.events = a->events;
		hs.sync_size = eng_bitmap_coverage(a);
		md_bitmap_encode(&hs, tmp);
	}
	struct member_io io[ENG_MAX_MEMBERS];
	int n = 0;
	for (int i = 0; i < a->nmem; i++)
		if (eng_bitmap_member_used(a, i))
			io[n++] = (struct member_io){.m = a->mem[i]->m,
			                             .op = MEMBER_OP_WRITE,
			                             .buf = tmp,
			                             .len = to - from,
			                             .off = eng_bitmap_where(a, a->mem[i]) + from,
			                             .flags = MEMBER_FUA};
	eng_ioq_run(a, b->q, io, n);
	for (int k = 0; k < n; k++)
		if (io[k].result < 0)
			rc = -EIO; /* the locked path retries and fails the member */
	if (rc == 0) {
		/* On disk everywhere: now writers may see them. */
		for (uint64_t i = i0; i < i1; i++)
			__atomic_fetch_or(&bits[i / 8], (uint8_t)(1u << (i % 8)), __ATOMIC_RELEASE);
		if (hdr) {
			memcpy(b->img, tmp, MD_BITMAP_SB_BYTES);
			b->sb = hs;
			b->hdr_events = a->events;
		}
	}
	eng_buf_put(a, tmp);
out:
	pthread_mutex_unlock(&b->mu);
	pthread_rwlock_unlock(&a->iolock);
	return rc;
}
