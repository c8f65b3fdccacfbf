/* A running gmirror: label, open (stale/dirty detection), balanced reads,
 * mirrored writes, synchronization with persisted sync_offset, and the
 * management verbs. One mutex serializes everything: simple and correct;
 * gmirror's value here is compatibility, not peak concurrency. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "geom/geom.h"
#include "geom/geom_int.h"
#include "member/member.h"
#include "util/errmsg.h"

/* Fill the device-wide fields of disk i's metadata from g, then write it. */
int geom_mirror_write_md(struct geom_mirror *g, int i)
{
	struct geom_mirror_disk *d = &g->disk[i];
	if (g->rdonly || g->destroyed || d->state == GEOM_DISK_FAILED || d->state == GEOM_DISK_NONE)
		return 0;
	struct geom_mirror_md *md = &d->md;
	memcpy(md->name, g->name, sizeof(md->name));
	md->mid = g->mid;
	md->all = (uint8_t)g->all;
	md->genid = g->genid;
	if (d->state == GEOM_DISK_ACTIVE)
		md->syncid = g->syncid;
	md->slice = g->bal.slice;
	md->balance = (uint8_t)g->md_balance;
	md->mediasize = g->mediasize;
	md->sectorsize = g->sectorsize;
	md->mflags = g->mflags;
	md->provsize = d->m->size;
	md->dflags = geom_dflags_update(md->dflags, d->state == GEOM_DISK_SYNCING, g->dirty);
	int rc = geom_mirror_write(d->m, md, NULL, 0);
	if (rc < 0)
		geom_mirror_fail_disk(g, i);
	return rc;
}

void geom_mirror_write_all_md(struct geom_mirror *g)
{
	for (int i = 0; i < g->ndisks; i++)
		geom_mirror_write_md(g, i);
}

void geom_mirror_sync_bal(struct geom_mirror *g)
{
	g->bal.ndisks = g->ndisks;
	g->bal.sectorsize = g->sectorsize;
	for (int i = 0; i < g->ndisks; i++) {
		g->bal.d[i].active = g->disk[i].state == GEOM_DISK_ACTIVE;
		g->bal.d[i].priority = g->disk[i].md.priority;
	}
}

void geom_mirror_fail_disk(struct geom_mirror *g, int i)
{
	if (i < 0 || i >= g->ndisks || g->disk[i].state == GEOM_DISK_FAILED)
		return;
	g->disk[i].state = GEOM_DISK_FAILED;
	/* A new genid keeps the failed disk from coming back as current. */
	g->genid++;
	geom_mirror_sync_bal(g);
	geom_mirror_write_all_md(g);
}

int geom_mirror_label(const struct geom_label_opts *o, struct member **m, int n, char *err,
                      size_t errlen)
{
	int rc = geom_check_name(o->name, "mirror", err, errlen);
	if (rc < 0)
		return rc;
	if (n < 1 || n > GEOM_MAX_DISKS)
		return errmsg(err, errlen, -EINVAL, "need 1 to %d components, got %d",
		              GEOM_MAX_DISKS, n);
	if (o->balance < 0 || o->balance > GEOM_BALANCE_PREFER)
		return errmsg(err, errlen, -EINVAL, "unknown balance %d", o->balance);
	uint32_t ss = 512;
	uint64_t media = UINT64_MAX;
	for (int i = 0; i < n; i++) {
		uint32_t bs = m[i]->logical_block ? m[i]->logical_block : 512;
		if (bs > ss)
			ss = bs;
	}
	for (int i = 0; i < n; i++) {
		if (m[i]->readonly)
			return errmsg(err, errlen, -EROFS, "%s is read-only", m[i]->name);
		if (m[i]->size < 2ull * ss)
			return errmsg(err, errlen, -EINVAL, "%s: too small (%llu bytes)",
			              m[i]->name, (unsigned long long)m[i]->size);
		/* The last sector of each component holds the metadata. */
		uint64_t usable = (m[i]->size / ss - 1) * ss;
		if (usable < media)
			media = usable;
	}
	uint32_t mid = geom_random_id();
	for (int i = 0; i < n; i++) {
		struct geom_mirror_md md = {0};
		snprintf(md.name, sizeof(md.name), "%s", o->name);
		md.mid = mid;
		md.did = geom_random_id();
		md.all = (uint8_t)n;
		md.genid = 0;
		md.syncid = 1;
		md.priority = (uint8_t)i; /* position gives priority, as gmirror label */
		md.slice = o->slice ? o->slice : 4096;
		md.balance = (uint8_t)(o->balance ? o->balance : GEOM_BALANCE_LOAD);
		md.mediasize = media;
		md.sectorsize = ss;
		md.mflags = (o->noautosync ? GEOM_MIRROR_DEV_NOAUTOSYNC : 0) |
		            (o->nofailsync ? GEOM_MIRROR_DEV_NOFAILSYNC : 0);
		/* -h stores the provider name only; HARDCODED is an in-kernel flag
		 * gmirror never writes to disk. */
		if (o->hardcode)
			geom_provider_name(m[i], md.provider);
		md.provsize = m[i]->size;
		rc = geom_mirror_write(m[i], &md, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int geom_mirror_open(struct member **m, int n, bool rdonly, struct geom_mirror **out, char *err,
                     size_t errlen, char *warn, size_t warnlen)
{
	if (warn && warnlen)
		warn[0] = '\0';
	if (n < 1 || n > GEOM_MAX_DISKS) {
		geom_close_members(m, n);
		return errmsg(err, errlen, -EINVAL, "need 1 to %d components", GEOM_MAX_DISKS);
	}
	struct geom_mirror *g = calloc(1, sizeof(*g));
	struct geom_mirror_md *mds = calloc((size_t)n, sizeof(*mds));
	int rc = 0;
	if (!g || !mds) {
		rc = -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < n; i++) {
		rc = geom_mirror_read(m[i], &mds[i], err, errlen);
		if (rc < 0)
			goto fail;
		if (mds[i].mid != mds[0].mid || strcmp(mds[i].name, mds[0].name) != 0) {
			rc = errmsg(err, errlen, -EINVAL,
			            "%s belongs to mirror %s (id %u), not %s (id %u)", m[i]->name,
			            mds[i].name, mds[i].mid, mds[0].name, mds[0].mid);
			goto fail;
		}
		if (m[i]->size < mds[i].mediasize + mds[i].sectorsize) {
			rc = errmsg(err, errlen, -EINVAL, "%s: %llu bytes, smaller than the mirror",
			            m[i]->name, (unsigned long long)m[i]->size);
			goto fail;
		}
		for (int j = 0; j < i; j++)
			if (mds[j].did == mds[i].did) {
				rc = errmsg(err, errlen, -EINVAL,
				            "%s and %s have the same disk id %u", m[j]->name,
				            m[i]->name, mds[i].did);
				goto fail;
			}
	}
	pthread_mutex_init(&g->lock, NULL);
	pthread_rwlock_init(&g->iolock, NULL);
	geom_ioq_pool_init(&g->ioqs);
	g->rdonly = rdonly;
	uint32_t maxgen, maxsync, gen[GEOM_MAX_DISKS], sid[GEOM_MAX_DISKS];
	bool syn[GEOM_MAX_DISKS];
	for (int i = 0; i < n; i++) {
		gen[i] = mds[i].genid;
		sid[i] = mds[i].syncid;
		syn[i] = (mds[i].dflags & GEOM_MIRROR_DISK_SYNCHRONIZING) != 0;
	}
	geom_newest_ids(gen, sid, syn, n, &maxgen, &maxsync);
	/* The disk with the newest genid and syncid carries the device fields. */
	const struct geom_mirror_md *ref = NULL;
	for (int i = 0; i < n; i++)
		if (mds[i].genid == maxgen && mds[i].syncid == maxsync &&
		    !(mds[i].dflags & GEOM_MIRROR_DISK_SYNCHRONIZING))
			ref = &mds[i];
	if (!ref) {
		rc = errmsg(err, errlen, -EIO, "mirror %s: no component holds current data",
		            mds[0].name);
		goto fail;
	}
	memcpy(g->name, ref->name, sizeof(g->name));
	g->mid = ref->mid;
	g->mediasize = ref->mediasize;
	g->sectorsize = ref->sectorsize;
	g->mflags = ref->mflags;
	g->genid = maxgen;
	g->syncid = maxsync;
	g->bal.balance = ref->balance;
	g->md_balance = ref->balance;
	g->bal.slice = ref->slice;
	for (int i = 0; i < n; i++) {
		if (mds[i].genid < maxgen) {
			/* Disconnected after a failure: never trusted again. */
			geom_warn_stale(warn, warnlen, m[i]->name, mds[i].genid, maxgen);
			member_close(m[i]);
			m[i] = NULL;
			continue;
		}
		struct geom_mirror_disk *d = &g->disk[g->ndisks++];
		d->m = m[i];
		m[i] = NULL;
		d->md = mds[i];
		if (mds[i].dflags & GEOM_MIRROR_DISK_INACTIVE) {
			d->state = GEOM_DISK_INACTIVE; /* kept out until activated */
		} else if (mds[i].syncid == maxsync &&
		           !(mds[i].dflags & GEOM_MIRROR_DISK_SYNCHRONIZING)) {
			d->state = GEOM_DISK_ACTIVE;
		} else if (g->mflags & GEOM_MIRROR_DEV_NOAUTOSYNC) {
			d->state = GEOM_DISK_STALE;
		} else {
			d->state = GEOM_DISK_SYNCING;
			if (!(mds[i].dflags & GEOM_MIRROR_DISK_SYNCHRONIZING))
				d->md.sync_offset = 0;
		}
	}
	/* Unclean stop: copies may differ where writes were in flight. Keep the
	 * biggest-priority active disk (gmirror's master) and resync the rest. */
	bool dirty = false;
	int nact = 0, master = -1;
	for (int i = 0; i < g->ndisks; i++)
		if (g->disk[i].state == GEOM_DISK_ACTIVE) {
			nact++;
			dirty |= (g->disk[i].md.dflags & GEOM_MIRROR_DISK_DIRTY) != 0;
			if (master < 0 || g->disk[i].md.priority > g->disk[master].md.priority)
				master = i;
		}
	if (dirty && nact > 1 && !(g->mflags & GEOM_MIRROR_DEV_NOFAILSYNC) && !rdonly) {
		for (int i = 0; i < g->ndisks; i++)
			if (i != master && g->disk[i].state == GEOM_DISK_ACTIVE) {
				g->disk[i].state = GEOM_DISK_SYNCING;
				g->disk[i].md.sync_offset = 0;
			}
	}
	bool syncing = false;
	for (int i = 0; i < g->ndisks; i++)
		syncing |= g->disk[i].state == GEOM_DISK_SYNCING;
	g->all = ref->all > g->ndisks ? ref->all : g->ndisks;
	g->bump_syncid = g->ndisks < ref->all;
	if (syncing && !rdonly)
		g->syncid++; /* a new syncid sets the in-sync disks apart from the ones catching up
		              */
	geom_mirror_sync_bal(g);
	if (!rdonly)
		geom_mirror_write_all_md(g);
	free(mds);
	*out = g;
	return 0;
fail:
	geom_close_members(m, n);
	free(mds);
	free(g);
	return rc;
}

static int check_io(const struct geom_mirror *g, size_t len, uint64_t off)
{
	if (off % 512 || len % 512 || off > g->mediasize || len > g->mediasize - off)
		return -EINVAL;
	return 0;
}

int geom_mirror_read_at(struct geom_mirror *g, void *buf, size_t len, uint64_t off)
{
	int rc = check_io(g, len, off);
	if (rc < 0 || len == 0)
		return rc;
	if (g->destroyed)
		return -ENXIO;
	/* The member reads run outside the state lock so concurrent readers
	 * really overlap (that is what the load balance reacts to); the rwlock
	 * keeps remove from closing a member under them. */
	pthread_rwlock_rdlock(&g->iolock);
	pthread_mutex_lock(&g->lock);
	for (;;) {
		struct geom_piece p[GEOM_MAX_DISKS];
		int res[GEOM_MAX_DISKS];
		int n = geom_bal_choose(&g->bal, off, len, p);
		if (n < 0) {
			rc = -EIO;
			break;
		}
		pthread_mutex_unlock(&g->lock);
		/* split pieces go to their disks at the same time */
		struct member_io io[GEOM_MAX_DISKS];
		for (int k = 0; k < n; k++)
			io[k] = (struct member_io){.m = g->disk[p[k].disk].m,
			                           .op = MEMBER_OP_READ,
			                           .buf = (uint8_t *)buf + (p[k].off - off),
			                           .len = p[k].len,
			                           .off = p[k].off};
		geom_io_batch(&g->ioqs, io, n);
		for (int k = 0; k < n; k++)
			res[k] = (int)io[k].result;
		pthread_mutex_lock(&g->lock);
		rc = 0;
		for (int k = 0; k < n; k++) {
			geom_bal_done(&g->bal, p[k].disk);
			g->disk[p[k].disk].reads++;
			if (g->trace)
				g->trace(g->trace_ctx, p[k].disk, p[k].off, p[k].len);
			if (res[k] < 0) {
				geom_mirror_fail_disk(g, p[k].disk);
				rc = res[k];
			}
		}
		if (rc == 0)
			break; /* else retry the whole request on the disks left */
	}
	pthread_mutex_unlock(&g->lock);
	pthread_rwlock_unlock(&g->iolock);
	return rc;
}

int geom_mirror_write_at(struct geom_mirror *g, const void *buf, size_t len, uint64_t off)
{
	int rc = check_io(g, len, off);
	if (rc < 0 || len == 0)
		return rc;
	if (g->rdonly)
		return -EROFS;
	if (g->destroyed)
		return -ENXIO;
	pthread_mutex_lock(&g->lock);
	g->last_write_ns = geom_now_ns();
	if (geom_first_write(&g->bump_syncid, &g->syncid, &g->dirty,
	                     g->mflags & GEOM_MIRROR_DEV_NOFAILSYNC))
		geom_mirror_write_all_md(g);
	/* every copy at once */
	struct member_io io[GEOM_MAX_DISKS];
	int who[GEOM_MAX_DISKS], n = 0, ok = 0;
	for (int i = 0; i < g->ndisks; i++) {
		struct geom_mirror_disk *d = &g->disk[i];
		if (d->state != GEOM_DISK_ACTIVE && d->state != GEOM_DISK_SYNCING)
			continue;
		io[n] = (struct member_io){
		    .m = d->m, .op = MEMBER_OP_WRITE, .buf = (void *)buf, .len = len, .off = off};
		who[n++] = i;
	}
	geom_io_batch(&g->ioqs, io, n);
	for (int k = 0; k < n; k++) {
		if (io[k].result < 0)
			geom_mirror_fail_disk(g, who[k]);
		else
			ok += g->disk[who[k]].state == GEOM_DISK_ACTIVE;
	}
	pthread_mutex_unlock(&g->lock);
	return ok ? 0 : -EIO;
}

/* gmirror passes BIO_DELETE to every copy; here each copy zeroes the range
 * (member_write_zeroes), so the copies keep agreeing. */
int geom_mirror_zero_at(struct geom_mirror *g, uint64_t off, uint64_t len, unsigned mflags)
{
	int rc = check_io(g, (size_t)len, off);
	if (rc < 0 || len == 0)
		return rc;
	if (g->rdonly)
		return -EROFS;
	if (g->destroyed)
		return -ENXIO;
	pthread_mutex_lock(&g->lock);
	g->last_write_ns = geom_now_ns();
	if (geom_first_write(&g->bump_syncid, &g->syncid, &g->dirty,
	                     g->mflags & GEOM_MIRROR_DEV_NOFAILSYNC))
		geom_mirror_write_all_md(g);
	int ok = 0;
	for (int i = 0; i < g->ndisks; i++) {
		struct geom_mirror_disk *d = &g->disk[i];
		if (d->state != GEOM_DISK_ACTIVE && d->state != GEOM_DISK_SYNCING)
			continue;
		if (member_write_zeroes(d->m, off, len, mflags) < 0)
			geom_mirror_fail_disk(g, i);
		else
			ok += d->state == GEOM_DISK_ACTIVE;
	}
	pthread_mutex_unlock(&g->lock);
	return ok ? 0 : -EIO;
}

int geom_mirror_flush(struct geom_mirror *g)
{
	pthread_mutex_lock(&g->lock);
	int ok = 0;
	for (int i = 0; i < g->ndisks; i++) {
		struct geom_mirror_disk *d = &g->disk[i];
		if (d->state != GEOM_DISK_ACTIVE && d->state != GEOM_DISK_SYNCING)
			continue;
		if (member_flush(d->m) < 0)
			geom_mirror_fail_disk(g, i);
		else
			ok += d->state == GEOM_DISK_ACTIVE;
	}
	pthread_mutex_unlock(&g->lock);
	return ok ? 0 : -EIO;
}

int geom_mirror_sync_step(struct geom_mirror *g, uint64_t bytes)
{
	if (bytes == 0 || bytes % 512)
		return -EINVAL;
	pthread_mutex_lock(&g->lock);
	int rc = 0, src = -1;
	for (int i = 0; i < g->ndisks; i++)
		if (g->disk[i].state == GEOM_DISK_ACTIVE && src < 0)
			src = i;
	uint8_t *buf = malloc(bytes);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < g->ndisks; i++) {
		struct geom_mirror_disk *d = &g->disk[i];
		if (d->state != GEOM_DISK_SYNCING)
			continue;
		if (src < 0) {
			rc = -EIO;
			goto out;
		}
		uint64_t off = d->md.sync_offset;
		uint64_t n = g->mediasize - off < bytes ? g->mediasize - off : bytes;
		if (n) {
			int r = member_read(g->disk[src].m, buf, n, off);
			if (r < 0) {
				geom_mirror_fail_disk(g, src);
				rc = r;
				goto out;
			}
			if (member_write(d->m, buf, n, off, 0) < 0) {
				geom_mirror_fail_disk(g, i);
				continue;
			}
			d->md.sync_offset = off + n;
		}
		if (d->md.sync_offset >= g->mediasize) {
			member_flush(d->m);
			d->state = GEOM_DISK_ACTIVE;
			d->md.sync_offset = 0;
			geom_mirror_sync_bal(g);
		} else {
			rc = 1;
		}
		geom_mirror_write_md(g, i); /* progress survives a crash */
	}
out:
	free(buf);
	pthread_mutex_unlock(&g->lock);
	return rc;
}

int geom_mirror_configure(struct geom_mirror *g, int balance, uint32_t slice, char *err,
                          size_t errlen)
{
	if (balance < GEOM_BALANCE_ROUND_ROBIN || balance > GEOM_BALANCE_PREFER)
		return errmsg(err, errlen, -EINVAL, "unknown balance algorithm %d", balance);
	if (slice && slice % 512)
		return errmsg(err, errlen, -EINVAL, "slice %u is not a multiple of 512", slice);
	pthread_mutex_lock(&g->lock);
	g->bal.balance = balance;
	g->md_balance = balance;
	if (slice)
		g->bal.slice = slice;
	geom_mirror_write_all_md(g);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

int geom_mirror_set_priority(struct geom_mirror *g, int disk, uint8_t prio, char *err,
                             size_t errlen)
{
	if (disk < 0 || disk >= g->ndisks)
		return errmsg(err, errlen, -EINVAL, "no component %d", disk);
	pthread_mutex_lock(&g->lock);
	g->disk[disk].md.priority = prio;
	geom_mirror_sync_bal(g);
	geom_mirror_write_md(g, disk);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

int geom_mirror_insert(struct geom_mirror *g, struct member *m, uint8_t prio, char *err,
                       size_t errlen)
{
	if (g->ndisks >= GEOM_MAX_DISKS)
		return errmsg(err, errlen, -ENOSPC, "mirror %s has %d components already", g->name,
		              g->ndisks);
	if (m->size < g->mediasize + g->sectorsize)
		return errmsg(err, errlen, -ENOSPC, "%s: %llu bytes, mirror needs %llu", m->name,
		              (unsigned long long)m->size,
		              (unsigned long long)(g->mediasize + g->sectorsize));
	if (g->rdonly || m->readonly)
		return errmsg(err, errlen, -EROFS, "read-only");
	pthread_mutex_lock(&g->lock);
	struct geom_mirror_disk *d = &g->disk[g->ndisks++];
	memset(d, 0, sizeof(*d));
	d->m = m;
	d->md.did = geom_random_id();
	d->md.priority = prio;
	d->md.syncid = 0; /* holds nothing yet */
	d->md.dflags = GEOM_MIRROR_DISK_FORCE_SYNC;
	d->state = GEOM_DISK_SYNCING;
	g->all++;
	g->syncid++;
	geom_mirror_sync_bal(g);
	geom_mirror_write_all_md(g);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

int geom_mirror_remove(struct geom_mirror *g, int disk, char *err, size_t errlen)
{
	if (disk < 0 || disk >= g->ndisks)
		return errmsg(err, errlen, -EINVAL, "no component %d", disk);
	geom_lock_all(&g->iolock, &g->lock);
	int others = 0;
	for (int i = 0; i < g->ndisks; i++)
		others += i != disk && g->disk[i].state == GEOM_DISK_ACTIVE;
	if (!others) {
		geom_unlock_all(&g->iolock, &g->lock);
		return errmsg(err, errlen, -EBUSY, "%s is the last active component of %s",
		              g->disk[disk].m->name, g->name);
	}
	/* gmirror remove clears the component's metadata, failed or not (best
	 * effort: a failed disk may refuse the write). */
	geom_clear(g->disk[disk].m, NULL, 0);
	member_close(g->disk[disk].m);
	memmove(&g->disk[disk], &g->disk[disk + 1],
	        (size_t)(g->ndisks - disk - 1) * sizeof(g->disk[0]));
	g->ndisks--;
	if (g->all > g->ndisks)
		g->all--;
	g->bal.rr_next = 0;
	geom_mirror_sync_bal(g);
	geom_mirror_write_all_md(g);
	geom_unlock_all(&g->iolock, &g->lock);
	return 0;
}

int geom_mirror_rebuild(struct geom_mirror *g, int disk, char *err, size_t errlen)
{
	if (disk < 0 || disk >= g->ndisks || g->disk[disk].state == GEOM_DISK_FAILED)
		return errmsg(err, errlen, -EINVAL, "no usable component %d", disk);
	pthread_mutex_lock(&g->lock);
	int others = 0;
	for (int i = 0; i < g->ndisks; i++)
		others += i != disk && g->disk[i].state == GEOM_DISK_ACTIVE;
	if (!others) {
		pthread_mutex_unlock(&g->lock);
		return errmsg(err, errlen, -EBUSY, "no other active component to rebuild from");
	}
	g->disk[disk].state = GEOM_DISK_SYNCING;
	g->disk[disk].md.sync_offset = 0;
	g->syncid++;
	geom_mirror_sync_bal(g);
	geom_mirror_write_all_md(g);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

int geom_mirror_close(struct geom_mirror *g)
{
	if (!g)
		return 0;
	int rc = 0;
	if (g->dirty && !g->rdonly) {
		for (int i = 0; i < g->ndisks; i++)
			if (g->disk[i].state == GEOM_DISK_ACTIVE ||
			    g->disk[i].state == GEOM_DISK_SYNCING)
				member_flush(g->disk[i].m);
		g->dirty = false;
		geom_mirror_write_all_md(g);
	}
	for (int i = 0; i < g->ndisks; i++)
		member_close(g->disk[i].m);
	geom_ioq_pool_destroy(&g->ioqs);
	pthread_mutex_destroy(&g->lock);
	pthread_rwlock_destroy(&g->iolock);
	free(g);
	return rc;
}
