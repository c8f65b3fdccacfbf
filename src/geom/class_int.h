/* Internals shared by the GEOM class (class.c) and its verbs (class_ctl.c). */
#ifndef URAID_GEOM_CLASS_INT_H
#define URAID_GEOM_CLASS_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "geom/class.h"

/* A GEOM array as the public calls see it. */
struct geom_class_array {
	struct uraid_array h;
	struct geom_array *g;
	bool readonly;
	uint64_t array_sectors; /* provider size (relaxed atomic: resize changes it) */
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

/* The GEOM array of a handle the caller knows to be one. */
static inline struct geom_class_array *geom_handle(struct uraid_array *a)
{
	return eng_container_of(a, struct geom_class_array, h);
}

/* uraid_geom_ctl of a GEOM array (geom/class_ctl.c). */
int geom_class_ctl(struct uraid_array *a, const char *request, char *err, size_t errlen);
/* Component index of a path or "#N", -1 when none. */
int geom_class_find(struct uraid_array *a, const char *name);
/* Insert m (ownership passes, also on failure): gmirror with priority and
 * optionally inactive; graid3 into slot `number` (-1: the first empty or
 * failed one). */
int geom_class_insert(struct uraid_array *a, struct member *m, int prio, int number, bool inactive,
                      char *err, size_t errlen);
/* Take / release the management mutex (see struct geom_class_array). */
void geom_class_mgmt(struct uraid_array *a, bool lock);
/* The provider size changed (gmirror resize). */
void geom_class_resized(struct uraid_array *a);
/* Work for the sync thread may be waiting. */
void geom_class_wake(struct uraid_array *a);

#endif
