/* The shared virtual clock of simulated members (see member_sim.h): a
 * conservative discrete-event scheduler over registered actors. An actor
 * runs only while every other registered actor waits on the clock, and the
 * one let go is the waiter with the earliest time (ties: the earliest
 * registered), so the order of all member requests, and with it every
 * modelled completion, is a function of the inputs alone. Requests never
 * block inside the members: they are booked at the calling actor's time and
 * move its time to their completion. Threads that are no actor share one
 * pseudo-actor (`outside`), which is never scheduled. */
#include "sim/sim_int.h"
#include "util/errmsg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sim_actor {
	pthread_t thread;
	bool bound;   /* thread set (sim_clock_bind) */
	bool waiting; /* in sim_clock_wait */
	bool active;  /* registered and not yet gone */
	unsigned id;  /* registration order: the tie-break */
	double t;     /* its time: requests arrive then */
	double until; /* batch completions not yet committed to t */
	double at;    /* waiting: the time it wants to go on at */
};

struct sim_clock {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct sim_actor **actors;
	size_t nactors, cap;
	unsigned running; /* registered actors not waiting */
	unsigned next_id;
	struct sim_actor *chosen; /* let go, not yet awake */
	struct sim_actor outside;
	double frontier; /* the latest time an actor was let go at */
};

int sim_clock_create(struct sim_clock **out)
{
	if (!out)
		return -EINVAL;
	struct sim_clock *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	*out = c;
	return 0;
}

void sim_clock_destroy(struct sim_clock *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nactors; i++)
		free(c->actors[i]);
	free(c->actors);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* The actor of the calling thread, else `outside`. Caller holds mu. */
static struct sim_actor *self(struct sim_clock *c)
{
	pthread_t me = pthread_self();
	for (size_t i = 0; i < c->nactors; i++) {
		struct sim_actor *a = c->actors[i];
		if (a->active && a->bound && pthread_equal(a->thread, me))
			return a;
	}
	return &c->outside;
}

static void commit(struct sim_actor *a)
{
	if (a->until > a->t)
		a->t = a->until;
}

/* With nothing running, let the earliest waiter go. Caller holds mu. */
static void dispatch(struct sim_clock *c)
{
	if (c->running || c->chosen)
		return;
	struct sim_actor *best = NULL;
	for (size_t i = 0; i < c->nactors; i++) {
		struct sim_actor *a = c->actors[i];
		if (!a->active || !a->waiting)
			continue;
		if (!best || a->at < best->at || (a->at == best->at && a->id < best->id))
			best = a;
	}
	if (!best)
		return;
	c->chosen = best;
	pthread_cond_broadcast(&c->cv);
}

int sim_clock_actor_add(struct sim_clock *c, struct sim_actor **out)
{
	if (!c || !out)
		return -EINVAL;
	struct sim_actor *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	pthread_mutex_lock(&c->mu);
	if (c->nactors == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 16;
		struct sim_actor **n = realloc(c->actors, ncap * sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&c->mu);
			free(a);
			return -ENOMEM;
		}
		c->actors = n;
		c->cap = ncap;
	}
	commit(&c->outside);
	a->active = true;
	a->id = c->next_id++;
	a->t = a->until = c->outside.t;
	c->actors[c->nactors++] = a;
	c->running++;
	pthread_mutex_unlock(&c->mu);
	*out = a;
	return 0;
}

void sim_clock_bind(struct sim_clock *c, struct sim_actor *a)
{
	pthread_mutex_lock(&c->mu);
	a->thread = pthread_self();
	a->bound = true;
	pthread_mutex_unlock(&c->mu);
}

void sim_clock_actor_done(struct sim_clock *c, struct sim_actor *a, double end)
{
	pthread_mutex_lock(&c->mu);
	commit(a);
	if (end > a->t)
		a->t = end;
	commit(&c->outside);
	if (a->t > c->outside.t)
		c->outside.t = c->outside.until = a->t;
	a->active = false;
	c->running--;
	/* Forget it: the slot goes to the next registration. */
	for (size_t i = 0; i < c->nactors; i++) {
		if (c->actors[i] == a) {
			c->actors[i] = c->actors[--c->nactors];
			break;
		}
	}
	free(a);
	dispatch(c);
	pthread_mutex_unlock(&c->mu);
}

double sim_clock_wait(struct sim_clock *c, struct sim_actor *a, double at)
{
	pthread_mutex_lock(&c->mu);
	commit(a);
	/* Never before the frontier: the clock does not run back. */
	if (at < c->frontier)
		at = c->frontier;
	a->at = at;
	a->waiting = true;
	c->running--;
	dispatch(c);
	while (c->chosen != a)
		pthread_cond_wait(&c->cv, &c->mu);
	c->chosen = NULL;
	a->waiting = false;
	c->running++;
	a->t = a->until = at;
	c->frontier = at;
	pthread_mutex_unlock(&c->mu);
	return at;
}

void sim_clock_set(struct sim_clock *c, struct sim_actor *a, double at)
{
	pthread_mutex_lock(&c->mu);
	if (at < c->frontier)
		at = c->frontier;
	a->t = a->until = at;
	pthread_mutex_unlock(&c->mu);
}

double sim_clock_now(struct sim_clock *c)
{
	if (!c)
		return 0;
	pthread_mutex_lock(&c->mu);
	struct sim_actor *a = self(c);
	commit(a);
	double t = a->t;
	pthread_mutex_unlock(&c->mu);
	return t;
}

double sim_clock_arrival(struct sim_clock *c, bool batch)
{
	pthread_mutex_lock(&c->mu);
	struct sim_actor *a = self(c);
	if (!batch)
		commit(a);
	double t = a->t;
	pthread_mutex_unlock(&c->mu);
	return t;
}

void sim_clock_complete(struct sim_clock *c, double done, bool batch)
{
	pthread_mutex_lock(&c->mu);
	struct sim_actor *a = self(c);
	if (done > a->until)
		a->until = done;
	if (!batch)
		commit(a);
	pthread_mutex_unlock(&c->mu);
}

void sim_clock_commit(struct sim_clock *c)
{
	pthread_mutex_lock(&c->mu);
	commit(self(c));
	pthread_mutex_unlock(&c->mu);
}
