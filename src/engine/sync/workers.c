/* Two workers for sync pieces (engine/sync/workers.h). */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sync/workers.h"

struct job {
	int n;
	int (*fn)(void *ctx, int worker, int i);
	void *ctx;
	int next; /* next piece to hand out (atomic) */
	int err;  /* first error (atomic; 0 = none) */
};

struct sync_workers {
	pthread_t t;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *job; /* posted and not yet finished by the helper */
	bool quit;
};

static void work(struct job *j, int worker)
{
	for (;;) {
		if (__atomic_load_n(&j->err, __ATOMIC_RELAXED))
			return;
		int i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (i >= j->n)
			return;
		int rc = j->fn(j->ctx, worker, i);
		if (rc < 0) {
			int zero = 0;
			__atomic_compare_exchange_n(&j->err, &zero, rc, false, __ATOMIC_RELAXED,
			                            __ATOMIC_RELAXED);
		}
	}
}

static void *helper(void *arg)
{
	struct sync_workers *sp = arg;
	pthread_mutex_lock(&sp->mu);
	for (;;) {
		while (!sp->job && !sp->quit)
			pthread_cond_wait(&sp->cv, &sp->mu);
		if (sp->quit)
			break;
		struct job *j = sp->job;
		pthread_mutex_unlock(&sp->mu);
		work(j, 1);
		pthread_mutex_lock(&sp->mu);
		sp->job = NULL; /* done: the caller may return */
		pthread_cond_broadcast(&sp->cv);
	}
	pthread_mutex_unlock(&sp->mu);
	return NULL;
}

static struct sync_workers *start(void)
{
	const char *env = getenv("URAID_SYNC_PAR");
	if (env && !strcmp(env, "0"))
		return NULL;
	struct sync_workers *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return NULL;
	pthread_mutex_init(&sp->mu, NULL);
	pthread_cond_init(&sp->cv, NULL);
	if (pthread_create(&sp->t, NULL, helper, sp) != 0) {
		pthread_cond_destroy(&sp->cv);
		pthread_mutex_destroy(&sp->mu);
		free(sp);
		return NULL;
	}
	return sp;
}

int sync_workers_run(struct sync_workers **sp, int n, int (*fn)(void *ctx, int worker, int i),
                     void *ctx)
{
	struct job j = {.n = n, .fn = fn, .ctx = ctx};
	/* One piece: nothing to share. */
	if (n > 1 && !*sp)
		*sp = start();
	struct sync_workers *p = n > 1 ? *sp : NULL;
	if (p) {
		pthread_mutex_lock(&p->mu);
		p->job = &j;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	work(&j, 0);
	if (p) {
		pthread_mutex_lock(&p->mu);
		while (p->job)
			pthread_cond_wait(&p->cv, &p->mu);
		pthread_mutex_unlock(&p->mu);
	}
	return j.err;
}

void sync_workers_free(struct sync_workers *sp)
{
	if (!sp)
		return;
	pthread_mutex_lock(&sp->mu);
	sp->quit = true;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
	pthread_join(sp->t, NULL);
	pthread_cond_destroy(&sp->cv);
	pthread_mutex_destroy(&sp->mu);
	free(sp);
}
