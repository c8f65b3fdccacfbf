/* Two workers for sync pieces (sync_par.h). */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sync_par.h"

struct par {
	int n;
	int (*fn)(void *ctx, int worker, int i);
	void *ctx;
	int next; /* next piece to hand out (atomic) */
	int err;  /* first error (atomic; 0 = none) */
};

static void work(struct par *p, int worker)
{
	for (;;) {
		if (__atomic_load_n(&p->err, __ATOMIC_RELAXED))
			return;
		int i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
		if (i >= p->n)
			return;
		int rc = p->fn(p->ctx, worker, i);
		if (rc < 0) {
			int zero = 0;
			__atomic_compare_exchange_n(&p->err, &zero, rc, false, __ATOMIC_RELAXED,
			                            __ATOMIC_RELAXED);
		}
	}
}

static void *helper(void *arg)
{
	work(arg, 1);
	return NULL;
}

int sync_par_run(int n, int (*fn)(void *ctx, int worker, int i), void *ctx)
{
	struct par p = {.n = n, .fn = fn, .ctx = ctx};
	const char *env = getenv("URAID_SYNC_PAR");
	pthread_t t;
	/* One piece: nothing to share. */
	bool threaded =
	    n > 1 && !(env && !strcmp(env, "0")) && pthread_create(&t, NULL, helper, &p) == 0;
	work(&p, 0);
	if (threaded)
		pthread_join(t, NULL);
	return p.err;
}
