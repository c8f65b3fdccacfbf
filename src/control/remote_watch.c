/* Remote members' reconnect policy and link publishing (remote_watch.h). */
#include "control/remote_watch.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LINKS         64
#define RECONNECT_DEFAULT 5 /* seconds */
#define LINKS_TEXT_MAX    (MAX_LINKS * 600)

static const char *state_word(enum uraid_member_state s)
{
	switch (s) {
	case URAID_MEMBER_IN_SYNC: return "in sync";
	case URAID_MEMBER_FAULTY: return "faulty";
	case URAID_MEMBER_SPARE: return "spare";
	case URAID_MEMBER_REBUILDING: return "rebuilding";
	default: return "other";
	}
}

static void logf_(char *log, size_t len, size_t *at, const char *fmt, const char *a, const char *b)
{
	if (!log || *at >= len)
		return;
	int k = snprintf(log + *at, len - *at, fmt, a, b);
	if (k > 0)
		*at += (size_t)k < len - *at ? (size_t)k : len - *at - 1;
}

int uraid_remote_reconnect(struct uraid_array *a, char *log, size_t loglen)
{
	struct uraid_remote_link *l = calloc(MAX_LINKS, sizeof(*l));
	if (!l)
		return -ENOMEM;
	size_t at = 0;
	if (log && loglen)
		log[0] = 0;
	int n = uraid_remote_links(a, l, MAX_LINKS), back = 0;
	for (int i = 0; i < n; i++) {
		char err[512];
		if (l[i].state == URAID_MEMBER_IN_SYNC && l[i].link_down) {
			/* Found dead while idle: fail it now, not at its next write. */
			if (uraid_fail(a, l[i].name, err, sizeof(err)) == 0) {
				logf_(log, loglen, &at, "%s: connection lost, member failed%s\n",
				      l[i].name, "");
				l[i].state = URAID_MEMBER_FAULTY;
			}
		}
		if (l[i].state != URAID_MEMBER_FAULTY)
			continue;
		int rc = uraid_re_add(a, l[i].name, err, sizeof(err));
		const char *how = "";
		if (rc == -ESTALE) {
			/* it missed writes no bitmap covers: back as a spare,
			 * recovered completely (md's --add after a refused
			 * --re-add) */
			rc = uraid_remove(a, l[i].name, err, sizeof(err));
			if (rc == 0)
				rc = uraid_add(a, l[i].name, err, sizeof(err));
			how = " as a spare (no bitmap covers what it missed: full recovery)";
		}
		if (rc == 0) {
			back++;
			logf_(log, loglen, &at, "%s: server answers again, re-added%s\n", l[i].name,
			      how);
		} else {
			logf_(log, loglen, &at, "%s: not re-added: %s\n", l[i].name, err);
		}
	}
	free(l);
	return n < 0 ? n : back;
}

struct remote_watch {
	struct uraid_array *a;
	char name[256];
	pthread_t t;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	unsigned interval_s;
	char last[1024]; /* the last reconnect log, printed only when it changes */
	bool published;
};

static void publish(struct remote_watch *w)
{
	struct uraid_remote_link *l = calloc(MAX_LINKS, sizeof(*l));
	char *text = malloc(LINKS_TEXT_MAX);
	if (!l || !text)
		goto out;
	int n = uraid_remote_links(w->a, l, MAX_LINKS);
	char err[512];
	if (n <= 0) {
		if (w->published)
			uraid_run_unlink(w->name, ".links", err, sizeof(err));
		w->published = false;
		goto out;
	}
	size_t at = 0;
	for (int i = 0; i < n && at < LINKS_TEXT_MAX; i++) {
		int k = snprintf(text + at, LINKS_TEXT_MAX - at, "%s [%d] %s: %s\n", l[i].name,
		                 l[i].role, state_word(l[i].state), l[i].link);
		if (k > 0)
			at += (size_t)k;
	}
	if (uraid_run_write(w->name, ".links", text, err, sizeof(err)) == 0)
		w->published = true;
out:
	free(l);
	free(text);
}

static void *watch_main(void *arg)
{
	struct remote_watch *w = arg;
	unsigned tick = 0;
	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&w->cv, &w->mu, &ts);
		if (w->stop)
			break;
		pthread_mutex_unlock(&w->mu);
		tick++;
		if (w->interval_s && tick % w->interval_s == 0) {
			char log[1024];
			uraid_remote_reconnect(w->a, log, sizeof(log));
			if (strcmp(log, w->last)) {
				if (log[0])
					fprintf(stderr, "uraid: %s: %s", w->name, log);
				snprintf(w->last, sizeof(w->last), "%s", log);
			}
		}
		publish(w);
		pthread_mutex_lock(&w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct remote_watch *remote_watch_start(struct uraid_array *a, const char *name)
{
	struct remote_watch *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->a = a;
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->interval_s = RECONNECT_DEFAULT;
	const char *env = getenv("URAID_NBD_RECONNECT");
	if (env && *env) {
		char *end;
		unsigned long v = strtoul(env, &end, 10);
		if (!*end && v <= 3600)
			w->interval_s = (unsigned)v;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (pthread_create(&w->t, NULL, watch_main, w) != 0) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
		free(w);
		return NULL;
	}
	return w;
}

void remote_watch_stop(struct remote_watch *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->t, NULL);
	if (w->published) {
		char err[512];
		uraid_run_unlink(w->name, ".links", err, sizeof(err));
	}
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
}
