/* Two workers for sync pieces: the calling thread and one helper thread
 * take the pieces of a batch in turn, so on two CPUs the page-cache copies
 * of a rebuild on in-memory members (and its parity work) run on both. The helper lives
 * for one call, under the array lock: every piece, writes included, is done
 * when sync_par_run returns, before the batch's checkpoint moves.
 *
 * Without a helper (pthread_create failed, or URAID_SYNC_PAR=0 in the
 * environment, for comparisons) the caller does every piece itself. */
#ifndef URAID_SYNC_PAR_H
#define URAID_SYNC_PAR_H

#define SYNC_PAR_WORKERS 2

/* Runs fn(ctx, worker, i) for every i in [0, n), worker 0 or 1 (each
 * worker's calls are sequential, so per-worker buffers need no lock).
 * Stops handing out pieces after the first negative return, which it
 * returns; 0 when all succeeded. */
int sync_par_run(int n, int (*fn)(void *ctx, int worker, int i), void *ctx);

#endif
