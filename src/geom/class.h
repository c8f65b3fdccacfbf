/* The GEOM class behind struct uraid_array (geom/class.c) and its verbs
 * (geom/class_ctl.c). */
#ifndef URAID_ENGINE_GEOM_URAID_H
#define URAID_ENGINE_GEOM_URAID_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "geom/geom.h"
#include "uraid.h"

struct member;

struct geom_priv {
	struct geom_array *g;
	/* One management request at a time (fail, remove, add, uraid_geom_ctl):
	 * component indices stay valid from lookup to action. */
	pthread_mutex_t mgmt;
	int sync_err;       /* last synchronization error of the thread, 0 after a success */
	pthread_mutex_t mu; /* guards the fields below; cond wakes the sync thread */
	pthread_cond_t cond;
	pthread_t thread;
	bool thread_running, thread_stop;
	uint64_t speed_min, speed_max; /* KiB/s */
	uint64_t speed_kibs;           /* recent synchronization speed */
	uint64_t speed_t0, speed_b0;   /* start of the current measurement */
	uint64_t synced;               /* bytes synchronized by the thread */
};

/* The GEOM handle behind a, NULL for md arrays. */
struct geom_array *eng_geom_of(struct uraid_array *a);
/* Component index of a path or "#N", -1 when none. */
int eng_geom_find(struct uraid_array *a, const char *name);
/* Insert m (ownership passes, also on failure): gmirror with priority and
 * optionally inactive; graid3 into slot `number` (-1: the first empty or
 * failed one). */
int eng_geom_insert(struct uraid_array *a, struct member *m, int prio, int number, bool inactive,
                    char *err, size_t errlen);
/* Take / release the management mutex (see struct geom_priv). */
void eng_geom_mgmt(struct uraid_array *a, bool lock);
/* The provider size changed (gmirror resize). */
void eng_geom_resized(struct uraid_array *a);
/* Work for the sync thread may be waiting. */
void eng_geom_wake(struct uraid_array *a);

#endif
