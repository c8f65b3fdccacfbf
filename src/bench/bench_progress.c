/* Live progress of `uraid bench` workloads on stderr, like `vmstat 1`: a
 * thread wakes every interval and prints the rate since its last line. On a
 * tty the line is rewritten in place (\r); otherwise each interval adds a
 * line, so logs keep the history. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "bench/bench_workloads.h"

struct bw_progress {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop, tty;
	const char *label;
	_Atomic uint64_t *bytes; /* NULL: a step that counts no bytes */
	const struct bw_set *set;
	uint64_t interval_ns;
};

static void *progress_main(void *arg)
{
	struct bw_progress *p = arg;
	uint64_t t_start = bench_now_ns();
	uint64_t last_b = p->bytes ? atomic_load(p->bytes) : 0;
	/* Rates in the clock the figures use: model time for simulated
	 * disks, else real time. */
	uint64_t last_t = p->set ? bw_now(p->set) : t_start;
	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + p->interval_ns;
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		while (!p->stop && pthread_cond_timedwait(&p->cond, &p->lock, &ts) == 0)
			;
		if (p->stop)
			break;
		double el = (double)(bench_now_ns() - t_start) / 1e9;
		if (!p->bytes) {
			fprintf(stderr, "%s%-28s %9s %16s %7.1f s%s", p->tty ? "\r" : "", p->label,
			        "running", "", el, p->tty ? "" : "\n");
			continue;
		}
		uint64_t b = atomic_load(p->bytes), t = p->set ? bw_now(p->set) : bench_now_ns();
		double mbs =
		    t > last_t ? (double)(b - last_b) / 1e6 / ((double)(t - last_t) / 1e9) : 0;
		fprintf(stderr, "%s%-28s %9.1f MB/s %10.1f MB done %7.1f s%s", p->tty ? "\r" : "",
		        p->label, mbs, (double)b / 1e6, el, p->tty ? "" : "\n");
		last_b = b;
		last_t = t;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct bw_progress *bw_progress_start(const char *label, _Atomic uint64_t *bytes,
                                      const struct bw_set *set, double interval_s)
{
	if (interval_s <= 0)
		return NULL;
	struct bw_progress *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->label = label;
	p->bytes = bytes;
	p->set = set;
	p->interval_ns = (uint64_t)(interval_s * 1e9);
	p->tty = isatty(2);
	if (pthread_create(&p->thread, NULL, progress_main, p)) {
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->cond);
		free(p);
		return NULL;
	}
	return p;
}

void bw_progress_stop(struct bw_progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	if (p->tty)
		fputs("\r\033[K", stderr);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}
