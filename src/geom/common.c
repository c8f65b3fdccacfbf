/* Helpers gmirror and graid3 share: ids, names, the choice of the current
 * components, stale warnings, the membership-change lock pair. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "geom/geom_int.h"
#include "member/member.h"
#include "util/errmsg.h"

uint32_t geom_random_id(void)
{
	uint32_t v = 0;
	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint32_t)(uintptr_t)&v ^ 0x9e3779b9u; /* only ids: uniqueness is best effort */
	return v;
}

int geom_check_name(const char *name, const char *what, char *err, size_t errlen)
{
	if (!name || !name[0] || strlen(name) > 15)
		return errmsg(err, errlen, -EINVAL, "%s name must be 1-15 characters", what);
	return 0;
}

void geom_provider_name(const struct member *m, char out[17])
{
	const char *base = strrchr(m->name, '/');
	base = base ? base + 1 : m->name;
	memset(out, 0, 17);
	memcpy(out, base, strnlen(base, 16 - 1));
}

void geom_close_members(struct member **m, int n)
{
	for (int i = 0; i < n; i++)
		if (m[i]) {
			member_close(m[i]);
			m[i] = NULL;
		}
}

void geom_newest_ids(const uint32_t *genid, const uint32_t *syncid, const bool *syncing, int n,
                     uint32_t *maxgen, uint32_t *maxsync)
{
	uint32_t g = 0, s = 0;
	for (int i = 0; i < n; i++)
		if (genid[i] > g)
			g = genid[i];
	for (int i = 0; i < n; i++)
		if (genid[i] == g && !syncing[i] && syncid[i] > s)
			s = syncid[i];
	*maxgen = g;
	*maxsync = s;
}

void geom_warn_stale(char *warn, size_t warnlen, const char *name, uint32_t genid, uint32_t maxgen)
{
	if (!warn || !warnlen)
		return;
	size_t used = strnlen(warn, warnlen);
	if (used + 1 < warnlen)
		snprintf(warn + used, warnlen - used, "%s: stale (genid %u < %u), left out\n", name,
		         genid, maxgen);
}

void geom_lock_all(pthread_rwlock_t *iolock, pthread_mutex_t *lock)
{
	pthread_rwlock_wrlock(iolock);
	pthread_mutex_lock(lock);
}

void geom_unlock_all(pthread_rwlock_t *iolock, pthread_mutex_t *lock)
{
	pthread_mutex_unlock(lock);
	pthread_rwlock_unlock(iolock);
}

void geom_ioq_pool_init(struct geom_ioq_pool *p)
{
	pthread_mutex_init(&p->mu, NULL);
	p->n = 0;
}

void geom_ioq_pool_destroy(struct geom_ioq_pool *p)
{
	for (int i = 0; i < p->n; i++)
		member_ioq_close(p->q[i]);
	p->n = 0;
	pthread_mutex_destroy(&p->mu);
}

int geom_io_batch(struct geom_ioq_pool *p, struct member_io *ios, int n)
{
	struct member_ioq *q = NULL;
	pthread_mutex_lock(&p->mu);
	if (p->n)
		q = p->q[--p->n];
	pthread_mutex_unlock(&p->mu);
	if (!q && member_ioq_open(64, &q) < 0)
		q = NULL;
	int rc = 0;
	if (q) {
		member_ioq_run(q, ios, n);
	} else { /* no queue at all: one by one */
		for (int i = 0; i < n; i++) {
			int r = ios[i].op == MEMBER_OP_READ
			            ? member_read(ios[i].m, ios[i].buf, ios[i].len, ios[i].off)
			        : ios[i].op == MEMBER_OP_WRITE
			            ? member_write(ios[i].m, ios[i].buf, ios[i].len, ios[i].off,
			                           ios[i].flags)
			            : member_flush(ios[i].m);
			ios[i].result = r < 0 ? r : (ssize_t)ios[i].len;
		}
	}
	for (int i = 0; i < n; i++) {
		if (ios[i].result >= 0 && (size_t)ios[i].result != ios[i].len &&
		    ios[i].op != MEMBER_OP_FLUSH)
			ios[i].result = -EIO;
		else if (ios[i].result > 0)
			ios[i].result = 0;
		if (ios[i].result < 0 && rc == 0)
			rc = (int)ios[i].result;
	}
	if (q) {
		pthread_mutex_lock(&p->mu);
		if (p->n < GEOM_IOQ_POOL) {
			p->q[p->n++] = q;
			q = NULL;
		}
		pthread_mutex_unlock(&p->mu);
		if (q)
			member_ioq_close(q);
	}
	return rc;
}

uint64_t geom_dflags_update(uint64_t dflags, bool syncing, bool dirty)
{
	enum { DIRTY = 0x01, SYNCHRONIZING = 0x02, FORCE_SYNC = 0x04 };
	if (syncing)
		dflags |= SYNCHRONIZING;
	else
		dflags &= ~(uint64_t)(SYNCHRONIZING | FORCE_SYNC);
	return dirty ? dflags | DIRTY : dflags & ~(uint64_t)DIRTY;
}

bool geom_first_write(bool *bump_syncid, uint32_t *syncid, bool *dirty, bool nofailsync)
{
	bool changed = false;
	if (*bump_syncid) {
		(*syncid)++;
		*bump_syncid = false;
		changed = true;
	}
	if (!*dirty && !nofailsync) {
		*dirty = true;
		changed = true;
	}
	return changed;
}

uint64_t geom_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
