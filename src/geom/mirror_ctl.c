/* gmirror(8) verbs beyond label/insert/remove/rebuild on an open mirror:
 * configure flags, activate, deactivate, forget, resize, destroy (the
 * semantics of FreeBSD's g_mirror_ctl, re-implemented here). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "geom/geom.h"
#include "geom/geom_int.h"
#include "member/member.h"
#include "util/errmsg.h"

static int count_active(const struct geom_mirror *g, int except)
{
	int n = 0;
	for (int i = 0; i < g->ndisks; i++)
		n += i != except && g->disk[i].state == GEOM_DISK_ACTIVE;
	return n;
}

int geom_mirror_set_flags(struct geom_mirror *g, uint64_t set, uint64_t clear, char *err,
                          size_t errlen)
{
	uint64_t known = GEOM_MIRROR_DEV_NOAUTOSYNC | GEOM_MIRROR_DEV_NOFAILSYNC;
	if ((set | clear) & ~known)
		return errmsg(err, errlen, -EINVAL, "unknown mirror flags 0x%llx",
		              (unsigned long long)((set | clear) & ~known));
	if (set & clear)
		return errmsg(err, errlen, -EINVAL, "a flag both set and cleared");
	pthread_mutex_lock(&g->lock);
	bool autosync_on =
	    (g->mflags & GEOM_MIRROR_DEV_NOAUTOSYNC) && (clear & GEOM_MIRROR_DEV_NOAUTOSYNC);
	g->mflags = (g->mflags & ~clear) | set;
	/* Autosync back on: the disks left stale catch up now, as gmirror
	 * reconnects them. */
	if (autosync_on && count_active(g, -1) > 0)
		for (int i = 0; i < g->ndisks; i++)
			if (g->disk[i].state == GEOM_DISK_STALE) {
				g->disk[i].state = GEOM_DISK_SYNCING;
				g->disk[i].md.sync_offset = 0;
			}
	geom_mirror_sync_bal(g);
	geom_mirror_write_all_md(g);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

static int check_disk(const struct geom_mirror *g, int disk, char *err, size_t errlen)
{
	if (disk < 0 || disk >= g->ndisks)
		return errmsg(err, errlen, -ENOENT, "mirror %s has no component %d", g->name, disk);
	return 0;
}

int geom_mirror_deactivate(struct geom_mirror *g, int disk, char *err, size_t errlen)
{
	int rc = check_disk(g, disk, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&g->lock);
	struct geom_mirror_disk *d = &g->disk[disk];
	if (d->state == GEOM_DISK_INACTIVE) {
		pthread_mutex_unlock(&g->lock);
		return 0;
	}
	if (d->state == GEOM_DISK_FAILED) {
		pthread_mutex_unlock(&g->lock);
		return errmsg(err, errlen, -EINVAL, "%s has failed: remove it instead", d->m->name);
	}
	if (d->state == GEOM_DISK_ACTIVE && count_active(g, disk) == 0) {
		pthread_mutex_unlock(&g->lock);
		return errmsg(err, errlen, -EBUSY, "%s is the last active component of %s",
		              d->m->name, g->name);
	}
	d->state = GEOM_DISK_INACTIVE;
	d->md.dflags |= GEOM_MIRROR_DISK_INACTIVE;
	d->md.dflags &= ~GEOM_MIRROR_DISK_FORCE_SYNC;
	d->md.sync_offset = 0;
	/* The others move on: when the disk comes back its old syncid says
	 * it missed writes. */
	g->syncid++;
	geom_mirror_sync_bal(g);
	geom_mirror_write_all_md(g);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

int geom_mirror_activate(struct geom_mirror *g, int disk, char *err, size_t errlen)
{
	int rc = check_disk(g, disk, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&g->lock);
	struct geom_mirror_disk *d = &g->disk[disk];
	if (d->state != GEOM_DISK_INACTIVE) {
		pthread_mutex_unlock(&g->lock);
		return errmsg(err, errlen, -EINVAL, "%s is not inactive", d->m->name);
	}
	d->md.dflags &= ~GEOM_MIRROR_DISK_INACTIVE;
	if (count_active(g, disk) == 0) {
		/* Nothing to copy from (gmirror would start on it alone). */
		d->state = GEOM_DISK_ACTIVE;
	} else if (g->mflags & GEOM_MIRROR_DEV_NOAUTOSYNC) {
		d->state = GEOM_DISK_STALE;
	} else {
		d->state = GEOM_DISK_SYNCING;
		d->md.sync_offset = 0;
	}
	geom_mirror_sync_bal(g);
	geom_mirror_write_all_md(g);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

int geom_mirror_forget(struct geom_mirror *g, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	pthread_mutex_lock(&g->lock);
	if (g->all != g->ndisks) {
		g->all = g->ndisks;
		geom_mirror_write_all_md(g);
	}
	pthread_mutex_unlock(&g->lock);
	return 0;
}

int geom_mirror_resize(struct geom_mirror *g, uint64_t size, char *err, size_t errlen)
{
	pthread_mutex_lock(&g->lock);
	uint64_t max = UINT64_MAX;
	for (int i = 0; i < g->ndisks; i++) {
		const struct member *m = g->disk[i].m;
		uint64_t usable = (m->size / g->sectorsize - 1) * g->sectorsize;
		if (g->disk[i].state != GEOM_DISK_FAILED && usable < max)
			max = usable;
	}
	int rc = 0;
	if (size == 0)
		size = max;
	if (size == 0 || size % g->sectorsize)
		rc = errmsg(err, errlen, -EINVAL, "size %llu is not a positive multiple of %u",
		            (unsigned long long)size, g->sectorsize);
	else if (size > max)
		rc = errmsg(err, errlen, -ENOSPC,
		            "size %llu does not fit: the smallest component holds %llu",
		            (unsigned long long)size, (unsigned long long)max);
	if (rc == 0 && size != g->mediasize) {
		/* A disk still synchronizing copies up to the new end. */
		g->mediasize = size;
		for (int i = 0; i < g->ndisks; i++)
			if (g->disk[i].md.sync_offset > size)
				g->disk[i].md.sync_offset = size;
		geom_mirror_write_all_md(g);
	}
	pthread_mutex_unlock(&g->lock);
	return rc;
}

int geom_mirror_destroy(struct geom_mirror *g, char *err, size_t errlen)
{
	geom_lock_all(&g->iolock, &g->lock);
	int rc = 0;
	if (g->rdonly) {
		rc = errmsg(err, errlen, -EROFS, "mirror %s is open read-only", g->name);
	} else {
		for (int i = 0; i < g->ndisks; i++) {
			if (g->disk[i].state == GEOM_DISK_FAILED)
				continue;
			member_flush(g->disk[i].m);
			int r = geom_clear(g->disk[i].m, NULL, 0);
			if (r < 0 && rc == 0)
				rc = errmsg(err, errlen, r, "%s: clearing the metadata failed",
				            g->disk[i].m->name);
		}
		g->destroyed = true;
		g->dirty = false;
	}
	geom_unlock_all(&g->iolock, &g->lock);
	return rc;
}

void geom_mirror_drop(struct geom_mirror *g)
{
	if (!g)
		return;
	g->rdonly = true; /* close then writes nothing */
	geom_mirror_close(g);
}

int geom_mirror_idle(struct geom_mirror *g, uint64_t idle_ns)
{
	pthread_mutex_lock(&g->lock);
	int rc = 0;
	if (g->dirty && !g->rdonly && !g->destroyed &&
	    geom_now_ns() - g->last_write_ns >= idle_ns) {
		for (int i = 0; i < g->ndisks; i++)
			if (g->disk[i].state == GEOM_DISK_ACTIVE ||
			    g->disk[i].state == GEOM_DISK_SYNCING)
				member_flush(g->disk[i].m);
		g->dirty = false;
		geom_mirror_write_all_md(g);
		rc = 1;
	}
	pthread_mutex_unlock(&g->lock);
	return rc;
}
