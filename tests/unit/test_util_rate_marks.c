/* md's resync speed window (util/rate_marks.c) against a slow model that
 * keeps every sample ever taken: md_do_sync steps a mark when 3 s have
 * passed since the last one, and /proc/mdstat's window starts at the step
 * ten steps back (before ten steps: the start), so db/dt are what was done
 * since that step, in whole seconds, at least 1. Jobs at a steady rate,
 * a rate change, a pause (only the clock looked at), a job restarted. */
#include <stdbool.h>

#include "../harness.h"
#include "util/rate_marks.h"

#define S 1000000000ull /* ns */

struct model {
	uint64_t start, cnt, last_step;
	uint64_t t[4096], c[4096]; /* every step taken */
	int n;
};

static void m_start(struct model *m, uint64_t now)
{
	m->start = m->last_step = now;
	m->cnt = 0;
	m->n = 0;
}

static void m_look(struct model *m, uint64_t now)
{
	if (now - m->last_step >= 3 * S && m->n < 4096) {
		m->t[m->n] = now;
		m->c[m->n++] = m->cnt;
		m->last_step = now;
	}
}

static void m_window(const struct model *m, uint64_t now, uint64_t *db, uint64_t *dt)
{
	uint64_t t0 = m->start, c0 = 0;
	if (m->n > 10) { /* the step ten before the newest */
		t0 = m->t[m->n - 11];
		c0 = m->c[m->n - 11];
	}
	*db = m->cnt - c0;
	*dt = (now - t0) / S ? (now - t0) / S : 1;
}

static int same(const struct rate_marks *r, const struct model *m, uint64_t now)
{
	uint64_t db, dt, mdb, mdt;
	rate_marks_window(r, now, &db, &dt);
	m_window(m, now, &mdb, &mdt);
	CHECKF(db == mdb && dt == mdt, "at %.1f s: db %llu dt %llu, the model's %llu %llu",
	       (double)now / S, (unsigned long long)db, (unsigned long long)dt,
	       (unsigned long long)mdb, (unsigned long long)mdt);
	return db == mdb && dt == mdt;
}

/* rate sectors/s in steps of step_ns for secs seconds; returns the time. */
static uint64_t run(struct rate_marks *r, struct model *m, uint64_t now, uint64_t rate,
                    uint64_t step_ns, uint64_t secs, bool *ok)
{
	for (uint64_t end = now + secs * S; now < end && *ok;) {
		now += step_ns;
		m->cnt += rate * step_ns / S;
		m_look(m, now);
		if (rate)
			rate_marks_update(r, now, m->cnt);
		else
			rate_marks_tick(r, now);
		*ok = same(r, m, now);
	}
	return now;
}

static uint64_t speed(const struct rate_marks *r, uint64_t now)
{
	uint64_t db, dt;
	rate_marks_window(r, now, &db, &dt);
	return db / 2 / dt; /* KiB/s, as md prints it */
}

static void steady_rate(void)
{
	struct rate_marks r;
	struct model m;
	bool ok = true;
	uint64_t now = 5 * S;
	rate_marks_start(&r, now);
	m_start(&m, now);
	CHECK(same(&r, &m, now));
	CHECK(speed(&r, now) == 0); /* nothing done yet */
	/* 200 KiB/s, a batch every 0.25 s: never 0 once one is done, and
	 * within a second's worth of the rate */
	for (int i = 0; i < 240 && ok; i++) {
		now += S / 4;
		m.cnt += 100;
		m_look(&m, now);
		rate_marks_update(&r, now, m.cnt);
		ok = same(&r, &m, now);
		uint64_t kib = speed(&r, now);
		CHECKF(kib > 0, "at %d: 0 K/sec", i);
		if (i >= 8) /* 2 s in: dt's truncation is under half */
			CHECKF(kib >= 200 && kib <= 400, "at %d: %llu K/sec", i,
			       (unsigned long long)kib);
	}
	CHECK(ok);
	uint64_t kib = speed(&r, now);
	CHECKF(kib >= 200 && kib <= 210, "after 60 s: %llu K/sec", (unsigned long long)kib);
}

static void rate_change_and_pause(void)
{
	struct rate_marks r;
	struct model m;
	bool ok = true;
	uint64_t now = 0;
	rate_marks_start(&r, now);
	m_start(&m, now);
	now = run(&r, &m, now, 20000, S / 10, 40, &ok);
	CHECKF(speed(&r, now) > 9000 && speed(&r, now) <= 10400, "%llu",
	       (unsigned long long)speed(&r, now));
	/* slower: the window forgets the fast part within ten steps */
	now = run(&r, &m, now, 400, S / 10, 34, &ok);
	CHECKF(speed(&r, now) >= 195 && speed(&r, now) <= 215, "%llu",
	       (unsigned long long)speed(&r, now));
	/* held (the throttle sleeping, nothing done): the marks go on */
	now = run(&r, &m, now, 0, S / 5, 20, &ok);
	CHECKF(speed(&r, now) < 100, "%llu", (unsigned long long)speed(&r, now));
	now = run(&r, &m, now, 0, S / 5, 15, &ok);
	CHECK(speed(&r, now) == 0);
	CHECK(ok);
	/* a new job: from nothing again */
	rate_marks_start(&r, now);
	m_start(&m, now);
	now = run(&r, &m, now, 1000, S / 3, 20, &ok);
	CHECK(ok);
	CHECKF(speed(&r, now) >= 450 && speed(&r, now) <= 530, "%llu",
	       (unsigned long long)speed(&r, now));
}

/* Updates rarer than a step (big batches): every one steps. */
static void sparse_updates(void)
{
	struct rate_marks r;
	struct model m;
	bool ok = true;
	rate_marks_start(&r, 0);
	m_start(&m, 0);
	uint64_t now = run(&r, &m, 0, 3000, 7 * S, 140, &ok);
	CHECK(ok);
	CHECK(m.n == 20);
	CHECK(same(&r, &m, now + S / 2));
}

TEST_MAIN(T(steady_rate), T(rate_change_and_pause), T(sparse_updates))
