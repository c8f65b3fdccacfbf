/* A gmirror or graid3 behind the public uraid_array handle: assemble
 * recognises the metadata, and the entry points (read, write, flush,
 * status, fail, remove, add, sync, stop) come here through struct
 * eng_class. A background thread runs the synchronization gmirror's and
 * graid3's kernel workers would (unless URAID_NO_SYNC_THREAD). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "geom/class_int.h"
#include "geom/geom.h"
#include "geom/geom_int.h"
#include "member/member.h"
#include "meta/md_super.h"
#include "util/errmsg.h"

#define SYNC_STEP_BYTES (1024u * 1024u)
#define GEOM_IDLE_NS    (5ull * 1000000000ull) /* gmirror's default idletime, 5 s */

static const struct eng_class geom_class;

struct geom_array *geom_class_of(struct uraid_array *a)
{
	return a->cls == &geom_class ? eng_container_of(a, struct geom_class_array, h)->g : NULL;
}

bool geom_class_probe(struct member **mm, int n)
{
	bool geom = false;
	for (int i = 0; i < n; i++) {
		struct md_sb sb;
		char e[256];
		if (md_sb_load(mm[i], &sb, e, sizeof(e)) != -ENOENT)
			return false; /* an md superblock (or a damaged one): md decides */
		struct geom_mirror_md gm;
		struct geom_raid3_md rm;
		geom |= geom_mirror_read(mm[i], &gm, NULL, 0) != -ENOENT ||
		        geom_raid3_read(mm[i], &rm, NULL, 0) != -ENOENT;
	}
	return geom;
}

static struct geom_class_array *P(struct uraid_array *a)
{
	return geom_handle(a);
}

/* Work left: a component being synchronized. */
static bool syncing(struct geom_array *g)
{
	bool any = false;
	if (g->mirror) {
		pthread_mutex_lock(&g->mirror->lock);
		for (int i = 0; i < g->mirror->ndisks; i++)
			any |= g->mirror->disk[i].state == GEOM_DISK_SYNCING;
		pthread_mutex_unlock(&g->mirror->lock);
	} else {
		pthread_mutex_lock(&g->raid3->lock);
		for (int i = 0; i < g->raid3->ncomp; i++)
			any |= g->raid3->c[i].m && g->raid3->c[i].state == GEOM_DISK_SYNCING;
		pthread_mutex_unlock(&g->raid3->lock);
	}
	return any;
}

static void timed_wait(struct geom_class_array *p, uint64_t ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t t = (uint64_t)ts.tv_nsec + ns;
	ts.tv_sec += (time_t)(t / 1000000000ull);
	ts.tv_nsec = (long)(t % 1000000000ull);
	pthread_cond_timedwait(&p->cond, &p->mu, &ts);
}

static void *sync_thread(void *arg)
{
	struct geom_class_array *p = arg;
	pthread_mutex_lock(&p->mu);
	while (!p->thread_stop) {
		pthread_mutex_unlock(&p->mu);
		int rc = geom_array_sync_step(p->g, SYNC_STEP_BYTES);
		pthread_mutex_lock(&p->mu);
		p->sync_err = rc < 0 ? rc : 0;
		if (rc == 1) {
			p->synced += SYNC_STEP_BYTES;
			/* sync_speed_max: pause until the average falls back. */
			uint64_t el = geom_now_ns() - p->speed_t0;
			uint64_t due = p->speed_max ? (p->synced - p->speed_b0) / 1024 *
			                                  1000000000ull / p->speed_max
			                            : 0;
			if (el > 0)
				p->speed_kibs =
				    (p->synced - p->speed_b0) / 1024 * 1000000000ull / el;
			if (due > el)
				timed_wait(p, due - el);
			continue;
		}
		p->speed_t0 = geom_now_ns();
		p->speed_b0 = p->synced;
		p->speed_kibs = 0;
		pthread_cond_broadcast(&p->cond); /* sync_wait */
		/* gmirror's idletime: clean after a quiet spell, so a crash later
		 * needs no resynchronization. */
		pthread_mutex_unlock(&p->mu);
		geom_array_idle(p->g, GEOM_IDLE_NS);
		pthread_mutex_lock(&p->mu);
		if (p->thread_stop)
			break;
		timed_wait(p, 200000000ull);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static void wake(struct geom_class_array *p)
{
	pthread_mutex_lock(&p->mu);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->mu);
}

static void thread_stop(struct geom_class_array *p)
{
	if (!p->thread_running)
		return;
	pthread_mutex_lock(&p->mu);
	p->thread_stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	p->thread_running = false;
}

static int check_range(struct uraid_array *a, size_t len, uint64_t off)
{
	uint32_t bs = P(a)->g->blocksize;
	if (off % bs || len % bs)
		return -EINVAL;
	if (off > P(a)->array_sectors * 512 || len > P(a)->array_sectors * 512 - off)
		return -ERANGE;
	return 0;
}

static int g_read(struct uraid_array *a, void *buf, size_t len, uint64_t off)
{
	int rc = check_range(a, len, off);
	if (rc < 0 || len == 0)
		return rc;
	return geom_array_read(P(a)->g, buf, len, off);
}

static int g_write(struct uraid_array *a, const void *buf, size_t len, uint64_t off)
{
	if (P(a)->readonly)
		return -EROFS;
	int rc = check_range(a, len, off);
	if (rc < 0 || len == 0)
		return rc;
	return geom_array_write(P(a)->g, buf, len, off);
}

/* BIO_DELETE passed down; a fast zero is not offered (the classes do not
 * track whether every component zeroes what it discards). */
static int g_zero(struct uraid_array *a, uint64_t off, uint64_t len, unsigned flags)
{
	if (P(a)->readonly)
		return -EROFS;
	if (flags & URAID_ZERO_FAST)
		return -ENOTSUP;
	int rc = check_range(a, (size_t)len, off);
	if (rc < 0 || len == 0)
		return rc;
	return geom_array_zero(P(a)->g, off, len,
	                       (flags & URAID_ZERO_MAY_TRIM) ? MEMBER_ZERO_UNMAP : 0);
}

static int g_flush(struct uraid_array *a)
{
	return P(a)->readonly ? 0 : geom_array_flush(P(a)->g);
}

static enum uraid_member_state state_of(enum geom_disk_state s)
{
	switch (s) {
	case GEOM_DISK_ACTIVE: return URAID_MEMBER_IN_SYNC;
	case GEOM_DISK_SYNCING: return URAID_MEMBER_REBUILDING;
	case GEOM_DISK_STALE: return URAID_MEMBER_STALE;
	case GEOM_DISK_FAILED: return URAID_MEMBER_FAULTY;
	case GEOM_DISK_INACTIVE: return URAID_MEMBER_INACTIVE;
	default: return URAID_MEMBER_MISSING;
	}
}

static void count_member(struct uraid_status *st, struct uraid_member_status *ms)
{
	switch (ms->state) {
	case URAID_MEMBER_IN_SYNC: st->working++; break;
	case URAID_MEMBER_FAULTY: st->failed++, st->degraded++; break;
	default: st->degraded++; break;
	}
}

static void mirror_status(struct geom_mirror *g, struct uraid_status *st)
{
	pthread_mutex_lock(&g->lock);
	snprintf(st->name, sizeof(st->name), "%s", g->name);
	snprintf(st->uuid, sizeof(st->uuid), "%08x", g->mid);
	st->level = URAID_LEVEL_GMIRROR;
	st->raid_disks = g->all;
	st->metadata = GEOM_MIRROR_VERSION;
	st->array_sectors = g->mediasize / 512;
	st->dev_sectors = g->mediasize / 512;
	st->events = g->genid;
	st->clean = !g->dirty;
	st->block_bytes = g->sectorsize;
	st->geom_balance = g->bal.balance;
	st->geom_slice = g->bal.slice;
	st->geom_flags = g->mflags;
	st->geom_genid = g->genid;
	st->geom_syncid = g->syncid;
	uint64_t done = UINT64_MAX;
	/* GEOM_MAX_DISKS (+ 1) fit in the status's URAID_STATUS_MAX_MEMBERS */
	for (int i = 0; i < g->ndisks && i < GEOM_MAX_DISKS; i++) {
		const struct geom_mirror_disk *d = &g->disk[i];
		struct uraid_member_status *ms = &st->members[st->nmembers++];
		snprintf(ms->name, sizeof(ms->name), "%s", d->m->name);
		ms->role = i;
		ms->dev_number = d->md.did;
		ms->state = state_of(d->state);
		ms->priority = d->md.priority;
		if (d->state == GEOM_DISK_SYNCING) {
			ms->recovery_offset = d->md.sync_offset / 512;
			if (ms->recovery_offset < done)
				done = ms->recovery_offset;
		}
		count_member(st, ms);
	}
	/* Disks the metadata counts but that are not connected. */
	for (int i = g->ndisks; i < g->all && st->nmembers < URAID_STATUS_MAX_MEMBERS; i++) {
		struct uraid_member_status *ms = &st->members[st->nmembers++];
		snprintf(ms->name, sizeof(ms->name), "(missing)");
		ms->role = i;
		ms->state = URAID_MEMBER_MISSING;
		count_member(st, ms);
	}
	if (done != UINT64_MAX) {
		st->sync_action = URAID_SYNC_RECOVER;
		st->sync_done = done;
		st->sync_total = g->mediasize / 512;
	}
	pthread_mutex_unlock(&g->lock);
}

static void raid3_status(struct geom_raid3 *g, struct uraid_status *st)
{
	pthread_mutex_lock(&g->lock);
	snprintf(st->name, sizeof(st->name), "%s", g->name);
	snprintf(st->uuid, sizeof(st->uuid), "%08x", g->id);
	st->level = URAID_LEVEL_GRAID3;
	st->raid_disks = g->ncomp;
	st->metadata = GEOM_RAID3_VERSION;
	st->array_sectors = g->mediasize / 512;
	st->dev_sectors = g->mediasize / (uint64_t)(g->ncomp - 1) / 512;
	st->events = g->genid;
	st->clean = !g->dirty;
	st->block_bytes = g->psector;
	st->geom_flags = g->mflags;
	st->geom_genid = g->genid;
	st->geom_syncid = g->syncid;
	st->geom_parity_errors = g->parity_errors;
	for (int i = 0; i < g->ncomp && i < GEOM_MAX_DISKS + 1; i++) {
		const struct geom_raid3_comp *c = &g->c[i];
		struct uraid_member_status *ms = &st->members[st->nmembers++];
		snprintf(ms->name, sizeof(ms->name), "%s", c->m ? c->m->name : "(missing)");
		ms->role = i;
		ms->dev_number = (uint32_t)i;
		ms->state = c->m ? state_of(c->state) : URAID_MEMBER_MISSING;
		if (c->m && c->state == GEOM_DISK_SYNCING) {
			ms->recovery_offset = c->md.sync_offset / 512;
			st->sync_action = URAID_SYNC_RECOVER;
			st->sync_done = ms->recovery_offset;
			st->sync_total = st->dev_sectors;
		}
		count_member(st, ms);
	}
	pthread_mutex_unlock(&g->lock);
}

static int g_status(struct uraid_array *a, struct uraid_status *st)
{
	struct geom_class_array *p = P(a);
	if (p->g->mirror)
		mirror_status(p->g->mirror, st);
	else
		raid3_status(p->g->raid3, st);
	st->readonly = P(a)->readonly;
	pthread_mutex_lock(&p->mu);
	st->sync_speed_kibs = st->sync_action ? p->speed_kibs : 0;
	pthread_mutex_unlock(&p->mu);
	return 0;
}

int geom_class_find(struct uraid_array *a, const char *name)
{
	struct geom_array *g = P(a)->g;
	int n = g->mirror ? g->mirror->ndisks : g->raid3->ncomp;
	if (name[0] == '#') {
		char *end;
		long v = strtol(name + 1, &end, 10);
		return *end || end == name + 1 || v < 0 || v >= n ? -1 : (int)v;
	}
	for (int i = 0; i < n; i++) {
		struct member *m = g->mirror ? g->mirror->disk[i].m : g->raid3->c[i].m;
		if (m && !strcmp(m->name, name))
			return i;
	}
	return -1;
}

static int fail_one(struct uraid_array *a, const char *name, char *err, size_t errlen)
{
	if (P(a)->readonly)
		return errmsg(err, errlen, -EROFS, "array is read-only");
	struct geom_array *g = P(a)->g;
	int i = geom_class_find(a, name);
	if (i < 0)
		return errmsg(err, errlen, -ENOENT, "%s is not a component of this array", name);
	int rc = 0;
	if (g->mirror) {
		struct geom_mirror *m = g->mirror;
		pthread_mutex_lock(&m->lock);
		int others = 0;
		for (int k = 0; k < m->ndisks; k++)
			others += k != i && m->disk[k].state == GEOM_DISK_ACTIVE;
		if (m->disk[i].state == GEOM_DISK_ACTIVE && !others)
			rc = errmsg(err, errlen, -EBUSY,
			            "failing %s would leave mirror %s without an active component",
			            name, m->name);
		else
			geom_mirror_fail_disk(m, i);
		pthread_mutex_unlock(&m->lock);
	} else {
		struct geom_raid3 *r = g->raid3;
		pthread_mutex_lock(&r->lock);
		int others = 0;
		for (int k = 0; k < r->ncomp; k++)
			others += k != i && !(r->c[k].m && r->c[k].state == GEOM_DISK_ACTIVE);
		if (r->c[i].m && r->c[i].state == GEOM_DISK_ACTIVE && others)
			rc = errmsg(err, errlen, -EBUSY,
			            "failing %s would leave raid3 %s with two components gone",
			            name, r->name);
		else
			geom_raid3_fail(r, i);
		pthread_mutex_unlock(&r->lock);
	}
	return rc;
}

static int remove_one(struct uraid_array *a, const char *name, char *err, size_t errlen)
{
	if (P(a)->readonly)
		return errmsg(err, errlen, -EROFS, "array is read-only");
	struct geom_array *g = P(a)->g;
	int i = geom_class_find(a, name);
	if (i < 0)
		return errmsg(err, errlen, -ENOENT, "%s is not a component of this array", name);
	return g->mirror ? geom_mirror_remove(g->mirror, i, err, errlen)
	                 : geom_raid3_remove(g->raid3, i, err, errlen);
}

int geom_class_insert(struct uraid_array *a, struct member *m, int prio, int number, bool inactive,
                      char *err, size_t errlen)
{
	struct geom_array *g = P(a)->g;
	int rc;
	if (P(a)->readonly)
		rc = errmsg(err, errlen, -EROFS, "array is read-only");
	else if (m->readonly)
		rc = errmsg(err, errlen, -EROFS, "%s is read-only", m->name);
	else if ((rc = member_lock(m)) < 0)
		rc = errmsg(err, errlen, rc, "%s is in use by a running array", m->name);
	else if (geom_class_find(a, m->name) >= 0)
		rc = errmsg(err, errlen, -EEXIST, "%s is already a component", m->name);
	if (rc < 0) {
		member_close(m);
		return rc;
	}
	if (g->mirror) {
		rc = geom_mirror_insert(g->mirror, m, (uint8_t)prio, err, errlen);
		if (rc < 0)
			member_close(m); /* else the mirror owns it */
		else if (inactive)
			rc = geom_mirror_deactivate(g->mirror, g->mirror->ndisks - 1, err, errlen);
	} else {
		struct geom_raid3 *r = g->raid3;
		if (number < 0) /* the first empty or failed slot */
			for (int i = 0; i < r->ncomp && number < 0; i++)
				if (!r->c[i].m || r->c[i].state == GEOM_DISK_FAILED)
					number = i;
		if (number < 0)
			rc = errmsg(err, errlen, -EBUSY, "raid3 %s has every component", r->name);
		else
			rc = geom_raid3_insert(r, number, m, err, errlen);
		if (rc < 0)
			member_close(m);
	}
	wake(P(a));
	return rc;
}

void geom_class_mgmt(struct uraid_array *a, bool lock)
{
	if (lock)
		pthread_mutex_lock(&P(a)->mgmt);
	else
		pthread_mutex_unlock(&P(a)->mgmt);
}

static int g_fail(struct uraid_array *a, const char *name, char *err, size_t errlen)
{
	geom_class_mgmt(a, true);
	int rc = fail_one(a, name, err, errlen);
	geom_class_mgmt(a, false);
	return rc;
}

static int g_remove(struct uraid_array *a, const char *name, char *err, size_t errlen)
{
	geom_class_mgmt(a, true);
	int rc = remove_one(a, name, err, errlen);
	geom_class_mgmt(a, false);
	return rc;
}

static int g_add_member(struct uraid_array *a, struct member *m, char *err, size_t errlen)
{
	geom_class_mgmt(a, true);
	int rc = geom_class_insert(a, m, 0, -1, false, err, errlen);
	geom_class_mgmt(a, false);
	return rc;
}

static int g_sync_action(struct uraid_array *a, enum uraid_sync_action act, char *err,
                         size_t errlen)
{
	if (act == URAID_SYNC_IDLE)
		return 0;
	return errmsg(err, errlen, -EOPNOTSUPP,
	              "%s has no check/repair; rebuild a component instead",
	              P(a)->g->mirror ? "gmirror" : "graid3");
}

static int g_sync_step(struct uraid_array *a, uint64_t max_sectors)
{
	if (P(a)->readonly)
		return 0;
	struct geom_class_array *p = P(a);
	uint64_t done = 0;
	int rc = 1;
	while (rc == 1 && done < max_sectors) {
		uint64_t left = (max_sectors - done) * 512;
		uint64_t n = max_sectors - done > SYNC_STEP_BYTES / 512 ? SYNC_STEP_BYTES : left;
		rc = geom_array_sync_step(p->g, n);
		done += n / 512;
	}
	return rc < 0 ? rc : syncing(p->g);
}

static int g_sync_wait(struct uraid_array *a)
{
	struct geom_class_array *p = P(a);
	if (P(a)->readonly)
		return 0;
	if (!p->thread_running) {
		int rc;
		while ((rc = g_sync_step(a, UINT64_MAX / 1024)) > 0)
			;
		return rc;
	}
	/* Until nothing is left, or the thread keeps failing (a source
	 * component gone: the work cannot finish). */
	pthread_mutex_lock(&p->mu);
	p->sync_err = 0;
	while (syncing(p->g) && p->sync_err == 0) {
		pthread_cond_broadcast(&p->cond);
		timed_wait(p, 50000000ull);
	}
	int rc = p->sync_err;
	pthread_mutex_unlock(&p->mu);
	return rc;
}

static void g_sync_speed(struct uraid_array *a, uint64_t min_kibs, uint64_t max_kibs)
{
	struct geom_class_array *p = P(a);
	pthread_mutex_lock(&p->mu);
	p->speed_min = min_kibs; /* kept for status; the thread never idles while work waits */
	p->speed_max = max_kibs;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->mu);
}

static void free_array(struct uraid_array *a)
{
	struct geom_class_array *p = P(a);
	pthread_mutex_destroy(&p->mu);
	pthread_mutex_destroy(&p->mgmt);
	pthread_cond_destroy(&p->cond);
	free(p);
}

static int g_stop(struct uraid_array *a)
{
	struct geom_class_array *p = P(a);
	thread_stop(p);
	int rc = geom_array_close(p->g);
	free_array(a);
	return rc;
}

static void g_drop(struct uraid_array *a)
{
	struct geom_class_array *p = P(a);
	thread_stop(p);
	if (p->g->mirror)
		geom_mirror_drop(p->g->mirror);
	else
		geom_raid3_drop(p->g->raid3);
	free(p->g);
	free_array(a);
}

static uint64_t g_size(const struct uraid_array *a)
{
	const struct geom_class_array *p = eng_container_of(a, const struct geom_class_array, h);
	return __atomic_load_n(&p->array_sectors, __ATOMIC_RELAXED) * 512;
}

static const struct eng_class geom_class = {
    .name = "GEOM",
    .size = g_size,
    .read = g_read,
    .write = g_write,
    .flush = g_flush,
    .zero = g_zero,
    .status = g_status,
    .fail = g_fail,
    .remove = g_remove,
    .add_member = g_add_member,
    .sync_action = g_sync_action,
    .sync_step = g_sync_step,
    .sync_wait = g_sync_wait,
    .sync_speed = g_sync_speed,
    .stop = g_stop,
    .drop = g_drop,
    .ctl = geom_class_ctl,
};

int geom_class_assemble(struct member **mm, int n, unsigned flags, struct uraid_array **out,
                        char *err, size_t errlen, char *warn, size_t warnlen)
{
	*out = NULL;
	if (!(flags & URAID_RDONLY))
		for (int i = 0; i < n; i++)
			if (member_lock(mm[i]) < 0) {
				int rc = errmsg(err, errlen, -EBUSY,
				                "%s is in use by a running array", mm[i]->name);
				for (int k = 0; k < n; k++)
					member_close(mm[k]);
				return rc;
			}
	struct geom_array *g;
	int rc = geom_array_open_members(mm, n, flags, -1, &g, err, errlen, warn, warnlen);
	if (rc < 0)
		return rc;
	struct geom_class_array *p = calloc(1, sizeof(*p));
	if (!p) {
		geom_array_close(g);
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	}
	p->h.cls = &geom_class;
	p->h.flags = flags;
	p->g = g;
	p->readonly = (flags & URAID_RDONLY) != 0;
	p->array_sectors = g->size / 512;
	p->speed_min = 1000;
	p->speed_max = 200000;
	p->speed_t0 = geom_now_ns();
	pthread_mutex_init(&p->mu, NULL);
	pthread_mutex_init(&p->mgmt, NULL);
	pthread_cond_init(&p->cond, NULL);
	struct uraid_array *a = &p->h;
	if (!P(a)->readonly && !(flags & URAID_NO_SYNC_THREAD)) {
		p->thread_stop = false;
		if (pthread_create(&p->thread, NULL, sync_thread, p) == 0)
			p->thread_running = true;
	}
	*out = a;
	return 0;
}

void geom_class_resized(struct uraid_array *a)
{
	struct geom_array *g = P(a)->g;
	if (g->mirror) {
		pthread_mutex_lock(&g->mirror->lock);
		g->size = g->mirror->mediasize;
		pthread_mutex_unlock(&g->mirror->lock);
	}
	__atomic_store_n(&P(a)->array_sectors, g->size / 512, __ATOMIC_RELAXED);
}

void geom_class_wake(struct uraid_array *a)
{
	wake(P(a));
}
