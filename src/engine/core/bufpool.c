/* Per-array pool of scratch buffers for stripe work. A stripe of 5 x 256 KiB
 * chunks needs ~1.5 MiB; allocating (mmap), zeroing and unmapping that for
 * every stripe cost more than the parity and the member I/O together
 * (docs/PERFORMANCE.md). Buffers here are handed out uninitialised: callers
 * fill or zero exactly what they use. */
#include <stdlib.h>
#include <string.h>

#include "engine/core/engine.h"

void eng_bufpool_init(struct eng_bufpool *bp)
{
	memset(bp, 0, sizeof(*bp));
	pthread_mutex_init(&bp->mu, NULL);
}

void eng_bufpool_destroy(struct eng_bufpool *bp)
{
	for (int i = 0; i < ENG_POOL_BUFS; i++)
		free(bp->e[i].p);
	pthread_mutex_destroy(&bp->mu);
	memset(bp, 0, sizeof(*bp));
}

static void *alloc_raw(size_t len)
{
	void *p = NULL;
	/* Page alignment keeps the buffers usable for O_DIRECT members. */
	if (posix_memalign(&p, 4096, len ? len : 1))
		return NULL;
	return p;
}

void *eng_buf_get(struct eng_array *a, size_t len)
{
	struct eng_bufpool *bp = &a->pool;
	int fit = -1, other = -1;
	pthread_mutex_lock(&bp->mu);
	for (int i = 0; i < ENG_POOL_BUFS; i++) {
		if (bp->e[i].busy)
			continue;
		if (bp->e[i].cap >= len && (fit < 0 || bp->e[i].cap < bp->e[fit].cap))
			fit = i;
		else if (bp->e[i].cap < len && other < 0)
			other = i;
	}
	if (fit < 0 && other >= 0) {
		/* Grow an idle entry; requests have a bounded size (one stripe
		 * or one batch), so this settles after the first few. */
		void *p = alloc_raw(len);
		if (p) {
			free(bp->e[other].p);
			bp->e[other].p = p;
			bp->e[other].cap = len;
			fit = other;
		}
	}
	void *p = NULL;
	if (fit >= 0) {
		bp->e[fit].busy = true;
		p = bp->e[fit].p;
	}
	pthread_mutex_unlock(&bp->mu);
	/* Every entry busy (more requests in flight than entries): plain
	 * allocation, freed again by eng_buf_put. */
	return p ? p : alloc_raw(len);
}

void eng_buf_put(struct eng_array *a, void *p)
{
	if (!p)
		return;
	struct eng_bufpool *bp = &a->pool;
	pthread_mutex_lock(&bp->mu);
	for (int i = 0; i < ENG_POOL_BUFS; i++)
		if (bp->e[i].p == p) {
			bp->e[i].busy = false;
			pthread_mutex_unlock(&bp->mu);
			return;
		}
	pthread_mutex_unlock(&bp->mu);
	free(p);
}
