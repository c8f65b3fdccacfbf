/* md's resync marks (see rate_marks.h). */
#include "util/rate_marks.h"

void rate_marks_start(struct rate_marks *m, uint64_t now_ns)
{
	for (int i = 0; i < RATE_MARKS; i++) {
		m->t[i] = now_ns;
		m->cnt[i] = 0;
	}
	m->last = 0;
	m->mark_t = now_ns;
	m->mark_cnt = 0;
	m->cnt_now = 0;
}

void rate_marks_tick(struct rate_marks *m, uint64_t now_ns)
{
	if (now_ns < m->t[m->last] + RATE_MARK_STEP_NS)
		return;
	/* the window now starts at the oldest sample, which the new one
	 * replaces */
	int next = (m->last + 1) % RATE_MARKS;
	m->mark_t = m->t[next];
	m->mark_cnt = m->cnt[next];
	m->t[next] = now_ns;
	m->cnt[next] = m->cnt_now;
	m->last = next;
}

void rate_marks_update(struct rate_marks *m, uint64_t now_ns, uint64_t cnt)
{
	if (cnt > m->cnt_now)
		m->cnt_now = cnt;
	rate_marks_tick(m, now_ns);
}

void rate_marks_window(const struct rate_marks *m, uint64_t now_ns, uint64_t *db, uint64_t *dt_s)
{
	uint64_t dt = now_ns > m->mark_t ? (now_ns - m->mark_t) / 1000000000ull : 0;
	*dt_s = dt ? dt : 1;
	*db = m->cnt_now > m->mark_cnt ? m->cnt_now - m->mark_cnt : 0;
}
