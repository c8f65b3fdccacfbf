/* Life cycle and request entry points of an md array: setup after assemble
 * or create, reads and writes through the level's personality, flush, stop,
 * status and counters. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/md.h"
#include "engine/core/reshape.h"
#include "engine/reshape_backup.h"
#include "engine/sync/sync.h"
#include "engine/core/log.h"
#include "engine/sync/workers.h"
#include "util/errmsg.h"

int eng_array_setup(struct eng_array *a, char *err, size_t errlen)
{
	char e[256];
	a->ops = layout_ops_for(a->geo.level);
	a->pers = eng_pers_for(a->geo.level);
	if (!a->ops || !a->pers)
		return errmsg(err, errlen, -EOPNOTSUPP, "RAID level %d is not supported",
		              a->geo.level);
	/* The geometry first: everything below computes with it. A missing
	 * slot's size is unknown (0); a stand-in lets the layout's parameters
	 * be checked, and the readability test below refuses the levels that
	 * needed the missing member's data. */
	struct layout_geometry g = a->geo;
	uint64_t stand_in = 0;
	for (int r = 0; r < g.raid_disks; r++)
		if (a->slot[r] >= 0 && g.member_sectors[r] > stand_in)
			stand_in = g.member_sectors[r];
	for (int r = 0; r < g.raid_disks; r++)
		if (a->slot[r] < 0)
			g.member_sectors[r] = stand_in;
	int rc = a->ops->validate(&g, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc, "unsupported geometry: %s", e);
	bool missing[LAYOUT_MAX_MEMBERS];
	int have = 0;
	for (int r = 0; r < a->geo.raid_disks; r++) {
		missing[r] = a->slot[r] < 0 || a->mem[a->slot[r]]->state != URAID_MEMBER_IN_SYNC;
		have += !missing[r];
	}
	/* (mid-reshape, eng_reshape_assembled checked both geometries, a
	 * member the move fills counted as md's raid5_calc_degraded counts
	 * it) */
	if (!a->rs && !a->ops->readable(&a->geo, missing)) {
		char slots[512] = "";
		size_t used = 0;
		for (int r = 0; r < a->geo.raid_disks && used + 8 < sizeof(slots); r++)
			if (missing[r])
				used += (size_t)snprintf(slots + used, sizeof(slots) - used, "%s%d",
				                         used ? "," : "", r);
		return errmsg(err, errlen, -ENODEV,
		              "too few working members for %s with %d slots: %d in sync, slot(s) "
		              "%s missing",
		              a->ops->name, a->geo.raid_disks, have, slots);
	}
	if (a->pers->start) {
		rc = a->pers->start(a, err, errlen);
		if (rc < 0)
			return rc;
	}
	a->array_sectors = a->ops->array_sectors(&a->geo);
	a->ncopies = a->ops->ncopies(&a->geo);
	eng_reshape_setup(a);
	const char *eio = getenv("URAID_ENGINE_IO");
	a->sync_io = !(eio && strcmp(eio, "ioq") == 0) && eng_members_on_tmpfs(a);
	rc = member_ioq_open(128, &a->ioq);
	if (rc < 0)
		return errmsg(err, errlen, rc, "cannot set up the I/O queue");
	if (a->pers->consistency) {
		if (a->ref.version == MD_SB_0_90)
			a->resync_offset = md_sb_clean(&a->ref) ? MD_RESYNC_NONE : 0;
		else
			a->resync_offset = a->ref.resync_offset;
	} else {
		a->resync_offset = MD_RESYNC_NONE;
	}
	rc = eng_logs_load(a, err, errlen);
	if (rc < 0)
		return rc;
	/* md's MD_FEATURE_RECOVERY_BITMAP: the recovery of a re-added member
	 * (what the bitmap marks, engine/readd.c) was interrupted; md resumes
	 * it at the recovery offset on the marked chunks only, and so does
	 * uraid. Without a bitmap it is a full recovery from the offset. */
	for (int i = 0; i < a->nmem; i++) {
		struct eng_member *em = a->mem[i];
		if (em->state == URAID_MEMBER_REBUILDING && !em->replacement && em->role >= 0 &&
		    (em->sb.feature_map & MD_FEATURE_RECOVERY_BITMAP) && a->log &&
		    a->log->recover_marked)
			a->log->recover_marked(a, em->role, em);
	}
	a->dirty = false;
	a->speed_min = 1000;
	a->speed_max = 200000;
	a->action = URAID_SYNC_IDLE;
	pthread_mutex_init(&a->lock, NULL);
	pthread_rwlock_init(&a->iolock, NULL);
	pthread_mutex_init(&a->ioq_mu, NULL);
	pthread_mutex_init(&a->sc_cfg, NULL);
	for (int i = 0; i < ENG_STRIPE_LOCKS; i++)
		pthread_mutex_init(&a->stripe_mu[i], NULL);
	pthread_cond_init(&a->cond, NULL);
	eng_bufpool_init(&a->pool);
	a->inited = true;
	if (a->log && a->log->start) {
		rc = a->log->start(a, err, errlen);
		if (rc < 0)
			return rc;
	}
	if (a->h.flags & URAID_FROZEN)
		a->frozen = true;
	if (!a->readonly) {
		eng_lock(a);
		eng_sync_schedule(a);
		eng_unlock(a);
		if (!(a->h.flags & URAID_NO_SYNC_THREAD))
			eng_sync_thread_start(a);
	}
	return 0;
}

void eng_array_free(struct eng_array *a)
{
	if (!a)
		return;
	sync_workers_free(a->workers);
	eng_reshape_free(a->rs);
	if (a->pers && a->pers->stop)
		a->pers->stop(a); /* cached writes are lost, as in a crash */
	if (a->log && a->log->free)
		a->log->free(a);
	if (a->logdev) {
		if (a->logdev->m)
			member_close(a->logdev->m);
		free(a->logdev);
	}
	for (int i = 0; i < a->nmem; i++) {
		if (a->mem[i]->m)
			member_close(a->mem[i]->m);
		free(a->mem[i]);
	}
	if (a->ioq)
		member_ioq_close(a->ioq);
	if (a->inited) {
		pthread_mutex_destroy(&a->lock);
		pthread_mutex_destroy(&a->sc_cfg);
		pthread_rwlock_destroy(&a->iolock);
		eng_ioq_pool_free(a);
		for (int i = 0; i < ENG_STRIPE_LOCKS; i++)
			pthread_mutex_destroy(&a->stripe_mu[i]);
		pthread_cond_destroy(&a->cond);
		eng_bufpool_destroy(&a->pool);
	}
	free(a);
}

uint64_t eng_size(const struct eng_array *a)
{
	return a->array_sectors * 512;
}

static int check_range(const struct eng_array *a, size_t len, uint64_t off)
{
	if (off % 512 || len % 512)
		return -EINVAL;
	if (off > a->array_sectors * 512 || len > a->array_sectors * 512 - off)
		return -ERANGE;
	return 0;
}

int eng_read(struct eng_array *a, void *buf, size_t len, uint64_t off)
{
	__atomic_add_fetch(&a->fg_ios, 1,
	                   __ATOMIC_RELAXED); /* sync throttling (engine/sync/sync.c) */
	int rc = check_range(a, len, off);
	if (rc < 0 || len == 0)
		return rc;
	/* Healthy arrays: reads in parallel, each on its own I/O queue. Any
	 * trouble (-EAGAIN) goes the locked way, which repairs and rebuilds. */
	/* A log may hold newer data than the members (write-back journal). */
	rc = eng_log_reads_locked(a) ? -EAGAIN : eng_fast_read(a, buf, off / 512, len / 512);
	if (rc != -EAGAIN)
		return rc;
	eng_lock(a);
	rc = a->rs ? eng_reshape_read(a, buf, off / 512, len / 512)
	           : a->pers->read(a, buf, off / 512, len / 512);
	if (rc == 0)
		eng_log_overlay(a, buf, off / 512, len / 512);
	eng_unlock(a);
	return rc;
}

/* md's read-auto: the first write makes the array read-write. */
static bool auto_rw(struct eng_array *a)
{
	eng_lock(a);
	bool rw = a->ro_auto;
	if (rw) {
		a->readonly = a->ro_auto = false;
		eng_sync_schedule(a);
		pthread_cond_broadcast(&a->cond);
	}
	eng_unlock(a);
	return rw;
}

int eng_write(struct eng_array *a, const void *buf, size_t len, uint64_t off)
{
	if (__atomic_load_n(&a->readonly, __ATOMIC_RELAXED) && !auto_rw(a))
		return -EROFS;
	if (__atomic_load_n(&a->broken, __ATOMIC_RELAXED))
		return -EIO; /* a member the array cannot lose failed a write */
	__atomic_add_fetch(&a->fg_ios, 1,
	                   __ATOMIC_RELAXED); /* sync throttling (engine/sync/sync.c) */
	int rc = check_range(a, len, off);
	if (rc < 0 || len == 0)
		return rc;
	if (a->log && a->log->write) /* a log that takes every write (journal) */
		return a->log->write(a, buf, off / 512, len / 512);
	/* Writes to different stripes of a healthy array run in parallel. */
	bool redo = false;
	rc = eng_fast_write(a, buf, off / 512, len / 512, &redo);
	if (rc != -EAGAIN)
		return rc;
	eng_lock(a);
	if (a->readonly) { /* made read-only since the check above */
		eng_unlock(a);
		return -EROFS;
	}
	/* md marks the array active before the first write after idle, so an
	 * unclean stop is recognised on the next assembly. */
	__atomic_store_n(&a->last_write_ns, eng_now_ns(), __ATOMIC_RELAXED);
	rc = eng_mark_dirty(a);
	if (rc == 0)
		rc = eng_log_write_start(a, off / 512, len / 512);
	struct eng_req rq = {.q = a->ioq, .force_rcw = redo};
	if (rc == 0)
		rc = a->rs ? eng_reshape_write(a, &rq, buf, off / 512, len / 512)
		           : a->pers->write(a, &rq, buf, off / 512, len / 512);
	eng_unlock(a);
	return rc;
}

static int flush_locked(struct eng_array *a)
{
	int rc = 0;
	eng_members_check(a); /* a member that changed is not flushed as if it had not */
	for (int r = 0; r < a->geo.raid_disks; r++) {
		struct member *m = eng_role_member(a, r);
		if (!m || !eng_role_writable(a, r))
			continue;
		int f = member_flush(m);
		if (f < 0) {
			eng_member_failed(a, r, "flush failed");
			if (!eng_array_readable(a))
				rc = -EIO;
		}
	}
	return rc;
}

int eng_flush(struct eng_array *a)
{
	if (a->readonly)
		return 0;
	eng_lock(a);
	/* The personality's cache first: what it holds is acknowledged data;
	 * then what only the log holds, then the members; then the log may
	 * drop what is durable now. */
	int rc = a->pers->drain ? a->pers->drain(a) : 0;
	if (rc == 0)
		rc = eng_log_flush(a);
	int f = flush_locked(a);
	if (rc == 0)
		rc = f;
	if (rc == 0 && a->broken)
		rc = -EIO; /* what failed to reach a member is not durable */
	if (rc == 0)
		rc = eng_log_synced(a, false);
	eng_unlock(a);
	return rc;
}

int eng_stop(struct eng_array *a)
{
	int rc = 0;
	eng_sync_thread_stop(a); /* also of an array made read-only while running */
	if (!a->readonly) {
		eng_lock(a);
		rc = a->pers->drain ? a->pers->drain(a) : 0;
		if (rc == 0)
			rc = eng_log_flush(a);
		int f = flush_locked(a);
		if (rc == 0)
			rc = f;
		/* Clean: resync_offset records how far an interrupted resync got
		 * (MD_RESYNC_NONE when complete). Then, members durable and the
		 * array clean, the log is needed no more (every bit cleared, the
		 * journal's tail moved up). A broken array stays as its last
		 * superblocks say: its members may disagree where a write failed. */
		/* A reshape records how far it got, as md's stop does. */
		if (rc == 0 && a->rs && !a->broken)
			rc = eng_reshape_checkpoint(a);
		if (rc == 0 && a->rs && !a->broken)
			rc = eng_slide_stop(a);
		int c = a->broken ? -EIO : eng_mark_clean(a);
		if (rc == 0)
			rc = c;
		c = eng_log_synced(a, true);
		if (rc == 0)
			rc = c;
		eng_unlock(a);
	}
	eng_array_free(a);
	return rc;
}

int eng_set_readonly(struct eng_array *a, enum uraid_ro_mode mode, char *err, size_t errlen)
{
	if (mode != URAID_RW && mode != URAID_RO && mode != URAID_RO_AUTO)
		return errmsg(err, errlen, -EINVAL, "unknown read-only mode %d", (int)mode);
	if (a->h.flags & URAID_RDONLY) {
		if (mode == URAID_RO)
			return 0;
		return errmsg(err, errlen, -EROFS,
		              "the array was assembled read-only (its members are open "
		              "read-only): stop it and assemble it again");
	}
	int rc = 0;
	eng_lock(a);
	if (mode == URAID_RW) {
		a->readonly = a->ro_auto = false;
		eng_sync_schedule(a);
	} else if (a->readonly) {
		a->ro_auto = mode == URAID_RO_AUTO;
	} else {
		/* As md_set_readonly: background work stops where it is, what
		 * is cached goes out, the superblocks say clean (resync_offset
		 * keeps an unfinished resync) and the log is synced. */
		eng_sync_interrupt(a);
		rc = a->pers->drain ? a->pers->drain(a) : 0;
		if (rc == 0)
			rc = eng_log_flush(a);
		int f = flush_locked(a);
		if (rc == 0)
			rc = f;
		if (rc == 0 && !a->broken)
			rc = eng_mark_clean(a);
		if (rc == 0 && !a->broken)
			rc = eng_log_synced(a, true);
		if (rc < 0)
			errmsg(err, errlen, rc, "writing out before going read-only failed: %s",
			       strerror(-rc));
		a->readonly = true;
		a->ro_auto = mode == URAID_RO_AUTO;
	}
	pthread_cond_broadcast(&a->cond);
	eng_unlock(a);
	return rc;
}

void eng_drop(struct eng_array *a)
{
	eng_sync_thread_stop(a);
	eng_array_free(a);
}

/* What mdstat flags a member with: (W) write-mostly (1.x devflags bit 0,
 * 0.90 the disk state bit), (R) a replacement. */
static unsigned member_flags(const struct eng_array *a, const struct eng_member *em)
{
	bool wm = a->ref.version == MD_SB_0_90
	              ? (em->sb.v0.this_disk.state >> MD_DISK_WRITEMOSTLY) & 1
	              : em->sb.devflags & 1;
	return (wm ? URAID_MEMBER_F_WRITEMOSTLY : 0) |
	       (em->replacement ? URAID_MEMBER_F_REPLACEMENT : 0) |
	       (em->left_out ? URAID_MEMBER_F_LEFT_OUT : 0);
}

int eng_status(struct eng_array *a, struct uraid_status *st)
{
	st->block_bytes = 512;
	eng_lock(a);
	snprintf(st->name, sizeof(st->name), "%s", a->ref.set_name);
	md_uuid_format(a->ref.set_uuid, st->uuid);
	st->level = a->geo.level;
	st->layout = a->geo.layout;
	st->chunk_sectors = a->geo.chunk_sectors;
	st->raid_disks = a->geo.raid_disks;
	st->metadata = (int)a->ref.version;
	st->array_sectors = a->array_sectors;
	st->dev_sectors = a->geo.dev_sectors;
	st->events = a->events;
	/* 1.x times: seconds in the low 40 bits (the rest microseconds) */
	uint64_t tmask = a->ref.version == MD_SB_0_90 ? UINT64_MAX : (1ull << 40) - 1;
	st->ctime = a->ref.ctime & tmask;
	st->utime = a->ref.utime & tmask;
	for (int i = 0; i < a->nmem; i++)
		if (!a->mem[i]->left_out && (a->mem[i]->sb.utime & tmask) > st->utime)
			st->utime = a->mem[i]->sb.utime & tmask;
	st->md_minor = a->ref.version == MD_SB_0_90 ? (int)a->ref.v0.md_minor : -1;
	st->readonly = a->readonly;
	st->auto_readonly = a->readonly && a->ro_auto;
	st->frozen = a->frozen;
	st->resync_pending = a->resync_offset != MD_RESYNC_NONE && a->action != URAID_SYNC_RESYNC;
	/* md's in_sync: a resync due but not running (frozen, read-only)
	 * leaves an idle array clean, as mdadm --detail shows it */
	st->clean =
	    !a->dirty && (a->resync_offset == MD_RESYNC_NONE || a->action != URAID_SYNC_RESYNC);
	st->broken = a->broken;
	int n = 0;
	_Static_assert(2 * ENG_MAX_MEMBERS <= URAID_STATUS_MAX_MEMBERS,
	               "a status lists every slot and every member");
	/* Slots in order first, as mdadm --detail lists them. */
	for (int r = 0; r < a->geo.raid_disks && n < URAID_STATUS_MAX_MEMBERS; r++) {
		struct uraid_member_status *ms = &st->members[n++];
		ms->role = r;
		if (a->slot[r] < 0) {
			ms->state = URAID_MEMBER_MISSING;
			snprintf(ms->name, sizeof(ms->name), "(missing)");
			st->degraded++;
			continue;
		}
		const struct eng_member *em = a->mem[a->slot[r]];
		snprintf(ms->name, sizeof(ms->name), "%s", em->m->name);
		ms->dev_number = em->sb.dev_number;
		ms->state = em->state;
		ms->recovery_offset = em->recovery_offset;
		ms->flags = member_flags(a, em);
		ms->order = em->bind_seq;
		if (em->state == URAID_MEMBER_IN_SYNC)
			st->working++;
		else
			st->degraded++;
	}
	for (int i = 0; i < a->nmem && n < URAID_STATUS_MAX_MEMBERS; i++) {
		const struct eng_member *em = a->mem[i];
		if (em->role >= 0 && em->role < a->geo.raid_disks && a->slot[em->role] == i)
			continue;
		struct uraid_member_status *ms = &st->members[n++];
		snprintf(ms->name, sizeof(ms->name), "%s", em->m ? em->m->name : "?");
		ms->role = em->replacement ? em->role : -1;
		ms->dev_number = em->sb.dev_number;
		ms->state = em->state;
		ms->recovery_offset = em->replacement ? em->recovery_offset : 0;
		ms->flags = member_flags(a, em);
		ms->order = em->bind_seq;
		if (em->state == URAID_MEMBER_FAULTY)
			st->failed++;
		else
			st->spares++;
	}
	st->nmembers = n;
	st->sync_action = a->action;
	st->sync_done = a->sync_pos;
	st->sync_total = a->sync_end;
	st->sync_speed_kibs = a->speed_kibs;
	if (a->action != URAID_SYNC_IDLE) { /* md's: over its marks' window */
		uint64_t db, dt;
		rate_marks_window(&a->marks, eng_now_ns(), &db, &dt);
		st->sync_window_sectors = db;
		st->sync_window_secs = (uint32_t)dt;
		st->sync_speed_kibs = db / 2 / dt;
	}
	st->sync_speed_min = a->speed_min;
	st->sync_speed_max = a->speed_max;
	st->stripe_cache_size = a->pers->cache_size ? a->pers->cache_size(a) : 0;
	if (a->log && a->log->status)
		a->log->status(a, st);
	if (a->rs) {
		const struct md_reshape *r = &a->rs->r;
		st->reshape = r->backwards ? 2 : 1;
		st->reshape_position = r->position;
		st->reshape_delta_disks = (int)r->new.raid_disks - (int)r->old.raid_disks;
		st->reshape_new_layout = r->new.layout;
		st->reshape_new_chunk_sectors = r->new.chunk_sectors;
		/* md shows a raid4/5/6 reshape's progress per member (new
		 * layout), raid10's in array sectors */
		uint64_t nd = r->new.level == URAID_LEVEL_RAID10
		                  ? 1
		                  : (uint64_t)md_reshape_data_disks(&r->new);
		if (a->action == URAID_SYNC_RESHAPE && nd) {
			st->sync_done /= nd;
			st->sync_total /= nd;
			st->sync_speed_kibs /= nd;
			st->sync_window_sectors /= nd;
		}
		/* md counts a raid10 move to the smaller geometry's size and
		 * then resyncs a grow's new end, which uraid's move zeroes:
		 * shown as md shows it, a resync from there. */
		uint64_t mt = eng_reshape_md_total(a->rs);
		if (a->action == URAID_SYNC_RESHAPE && r->new.level == URAID_LEVEL_RAID10) {
			if (r->backwards || a->sync_pos <= mt)
				st->sync_total = mt;
			else
				st->sync_action = URAID_SYNC_RESYNC;
		}
		st->level = r->old.level;
		/* md's raid_disks (a shrink's old slots stay listed) */
		st->raid_disks = (int)r->new.raid_disks;
		st->layout = r->old.layout;
		st->chunk_sectors = r->old.chunk_sectors;
	}
	st->mismatch_cnt = a->action == URAID_SYNC_CHECK || a->action == URAID_SYNC_REPAIR
	                       ? a->mismatches
	                       : a->last_mismatch_cnt;
	eng_unlock(a);
	return 0;
}

int eng_io_stats(struct eng_array *a, struct uraid_io_stats *st)
{
	eng_lock(a);
	st->member_reads = a->nio_reads;
	st->member_writes = a->nio_writes;
	st->member_read_bytes = a->nio_rbytes;
	st->member_write_bytes = a->nio_wbytes;
	if (a->pers->cache_stats)
		a->pers->cache_stats(a, st);
	eng_unlock(a);
	return 0;
}

int eng_set_stripe_cache(struct eng_array *a, unsigned stripes)
{
	if (a->rs && stripes) /* the cache keeps stripes of one geometry */
		return -EBUSY;
	return a->pers->set_cache ? a->pers->set_cache(a, stripes) : -EINVAL;
}
