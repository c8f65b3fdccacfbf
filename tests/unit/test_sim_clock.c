/* The shared virtual clock (sim_clock.c) against a plain single-threaded
 * discrete-event model: actors (threads) issuing requests to members on one
 * clock get exactly the completions the reference computes, whatever the
 * host's scheduling (the threads sleep at random in real time), and two runs
 * agree bit for bit. Many actors with zero-length steps finish (no lost
 * wake-up, no deadlock), and an actor ending lets the others go on. */
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "sim/member_sim.h"

#include <stdio.h>
#include <stdlib.h>

#define NMEM    3
#define NACT    6
#define NSTEP   40
#define RATE    100.0 /* MB/s: 100 bytes per us */
#define THINK_0 100e3 /* ns */

/* A disk with no mechanics: a FIFO server at RATE, one request at a time. */
static struct sim_profile fifo_disk(void)
{
	struct sim_profile p;
	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "fifo");
	p.rate_outer_mbs = p.rate_inner_mbs = RATE;
	p.interface_mbs = RATE;
	p.queue_depth = 1;
	return p;
}

static size_t req_len(int a, int s)
{
	return (size_t)(1 + (a * 7 + s * 3) % 5) * 65536;
}

static int req_mem(int a, int s)
{
	return (a + 2 * s) % NMEM;
}

static double think(int a)
{
	return (a % 3) * THINK_0;
}

/* The reference: the earliest (time, actor) goes next; a member serves in
 * arrival order. */
static void reference(double done[NACT][NSTEP])
{
	double next[NACT] = {0}, free_at[NMEM] = {0};
	int step[NACT] = {0};
	for (;;) {
		int best = -1;
		for (int a = 0; a < NACT; a++)
			if (step[a] < NSTEP && (best < 0 || next[a] < next[best]))
				best = a;
		if (best < 0)
			break;
		int s = step[best]++, m = req_mem(best, s);
		double start = next[best] > free_at[m] ? next[best] : free_at[m];
		double d = start + (double)req_len(best, s) / (RATE * 1e6 / 1e9);
		free_at[m] = d;
		done[best][s] = d;
		next[best] = d + think(best);
	}
}

struct actor_arg {
	struct sim_clock *c;
	struct sim_actor *actor;
	struct member **m;
	int index;
	unsigned seed;
	double done[NSTEP];
};

static void *actor_main(void *p)
{
	struct actor_arg *a = p;
	static unsigned char bufs[NACT][5 * 65536];
	sim_clock_bind(a->c, a->actor);
	double t = 0;
	for (int s = 0; s < NSTEP; s++) {
		/* Shake the host's schedule: results must not notice. */
		if (rand_r(&a->seed) % 3 == 0)
			usleep(rand_r(&a->seed) % 300);
		sim_clock_wait(a->c, a->actor, t);
		size_t len = req_len(a->index, s);
		if (member_read(a->m[req_mem(a->index, s)], bufs[a->index], len, 0) != 0)
			abort();
		a->done[s] = sim_clock_now(a->c);
		t = a->done[s] + think(a->index);
	}
	sim_clock_actor_done(a->c, a->actor, t);
	return NULL;
}

static void run(double out[NACT][NSTEP], unsigned seed, double *end)
{
	struct sim_clock *c = NULL;
	CHECK(sim_clock_create(&c) == 0);
	struct sim_profile p = fifo_disk();
	struct member *m[NMEM];
	for (int i = 0; i < NMEM; i++) {
		struct member *in = NULL;
		char err[256];
		CHECK(member_open_mem("clk", 1u << 20, &in) == 0);
		CHECKF(member_sim_open_clock(in, &p, NULL, c, 0, &m[i], err, sizeof(err)) == 0,
		       "%s", err);
	}
	struct actor_arg a[NACT];
	pthread_t th[NACT];
	for (int i = 0; i < NACT; i++) {
		a[i] = (struct actor_arg){.c = c, .m = m, .index = i, .seed = seed + (unsigned)i};
		CHECK(sim_clock_actor_add(c, &a[i].actor) == 0);
	}
	for (int i = 0; i < NACT; i++)
		pthread_create(&th[i], NULL, actor_main, &a[i]);
	for (int i = 0; i < NACT; i++) {
		pthread_join(th[i], NULL);
		memcpy(out[i], a[i].done, sizeof(a[i].done));
	}
	*end = sim_clock_now(c); /* this thread is no actor: the clock's time */
	for (int i = 0; i < NMEM; i++)
		member_close(m[i]);
	sim_clock_destroy(c);
}

static void matches_reference(void)
{
	static double want[NACT][NSTEP], got[NACT][NSTEP], again[NACT][NSTEP];
	reference(want);
	double end1, end2;
	run(got, 1, &end1);
	run(again, 977, &end2);
	int bad = 0;
	double last = 0;
	for (int a = 0; a < NACT; a++) {
		for (int s = 0; s < NSTEP; s++) {
			if (fabs(got[a][s] - want[a][s]) > 1e-6 * want[a][s] && bad++ < 5)
				CHECKF(0, "actor %d step %d: %.1f ns, the reference %.1f", a, s,
				       got[a][s], want[a][s]);
			last = got[a][s] + think(a) > last ? got[a][s] + think(a) : last;
		}
	}
	CHECKF(bad == 0, "%d completions differ from the reference", bad);
	CHECKF(memcmp(got, again, sizeof(got)) == 0,
	       "two runs under different host schedules differ");
	CHECKF(end1 == last && end2 == end1, "clock at the end %.1f, last actor ended %.1f", end1,
	       last);
}

/* 32 actors of 200 zero-time steps each, some ending early. */
struct spin_arg {
	struct sim_clock *c;
	struct sim_actor *actor;
	int steps;
	_Atomic int *order_bad;
	double *last_at;
	pthread_mutex_t *mu;
};

static void *spin_main(void *p)
{
	struct spin_arg *a = p;
	sim_clock_bind(a->c, a->actor);
	double t = 0;
	for (int s = 0; s < a->steps; s++) {
		double at = sim_clock_wait(a->c, a->actor, t);
		pthread_mutex_lock(a->mu);
		if (at < *a->last_at)
			(*a->order_bad)++;
		*a->last_at = at;
		pthread_mutex_unlock(a->mu);
		t = at + (s % 4 == 0 ? 0 : 1000.0 * (s % 7));
	}
	sim_clock_actor_done(a->c, a->actor, t);
	return NULL;
}

static void many_actors_finish(void)
{
	enum { N = 32 };
	struct sim_clock *c = NULL;
	CHECK(sim_clock_create(&c) == 0);
	struct spin_arg a[N];
	pthread_t th[N];
	_Atomic int bad = 0;
	double last_at = 0;
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	for (int i = 0; i < N; i++) {
		a[i] = (struct spin_arg){c, NULL, i % 5 == 0 ? 3 : 200, &bad, &last_at, &mu};
		CHECK(sim_clock_actor_add(c, &a[i].actor) == 0);
	}
	for (int i = 0; i < N; i++)
		pthread_create(&th[i], NULL, spin_main, &a[i]);
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	CHECKF(bad == 0, "%d times an actor went on earlier than the one before", (int)bad);
	CHECK(sim_clock_now(c) > 0);
	sim_clock_destroy(c);
}

TEST_MAIN(T(matches_reference), T(many_actors_finish))
