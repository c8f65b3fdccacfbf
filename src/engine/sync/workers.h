/* Two workers for sync pieces: the calling thread and one helper thread
 * take the pieces of a batch in turn, so on two CPUs the page-cache copies
 * of a rebuild on in-memory members (and its parity work) run on both.
 * Calls come under the array lock, one at a time per array: every piece,
 * writes included, is done when sync_workers_run returns, before the batch's
 * checkpoint moves. The helper is started by the first call and kept for
 * the next batches (starting a thread per batch cost ~5 % of a rebuild at
 * memory speed) until sync_workers_free, at the end of the sync job.
 *
 * Without a helper (pthread_create failed, or URAID_SYNC_PAR=0 in the
 * environment, for comparisons) the caller does every piece itself. */
#ifndef URAID_ENGINE_SYNC_WORKERS_H
#define URAID_ENGINE_SYNC_WORKERS_H

#define SYNC_WORKERS 2

struct sync_workers;

/* Runs fn(ctx, worker, i) for every i in [0, n), worker 0 or 1 (each
 * worker's calls are sequential, so per-worker buffers need no lock).
 * *sp: the helper, started here when NULL. Stops handing out pieces after
 * the first negative return, which it returns; 0 when all succeeded. */
int sync_workers_run(struct sync_workers **sp, int n, int (*fn)(void *ctx, int worker, int i),
                     void *ctx);
/* Stops and frees the helper (NULL: nothing to do). */
void sync_workers_free(struct sync_workers *sp);

#endif
