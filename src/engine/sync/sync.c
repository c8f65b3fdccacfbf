/* Background sync work: resync after an unclean stop, recovery onto a spare
 * or a replacement, check and repair. Work advances one batch (many stripes,
 * a few MiB of member I/O) at a time under the array lock, so requests
 * interleave with it; progress is kept in the superblocks (resync_offset,
 * recovery_offset) so an interrupted run resumes. The level-specific work is
 * in engine/raid456/sync.c, engine/mirror/sync.c and engine/sync/replace.c (see engine/sync/sync.h
 * for positions).
 *
 * Speed, as md: up to sync_speed_max while the array is otherwise idle;
 * while foreground requests arrive, down to sync_speed_min (never below),
 * with smaller batches so requests wait less for the lock. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/core/log.h"
#include "engine/core/reshape.h"
#include "engine/sync/sync.h"
#include "engine/sync/workers.h"
#include "util/errmsg.h"

#define PERSIST_NS      1000000000ull /* checkpoint progress about once a second */
#define IDLE_CLEAN_NS   2000000000ull /* mark clean after this long without writes */
#define FG_RECENT_NS    500000000ull  /* foreground requests this recent: array busy */
#define MARK_NS         3000000000ull /* speed measured (and limited) over this window */
#define BUSY_SECTORS    512u          /* batch per member while the array is busy */
#define MAX_SLEEP_NS    200000000ull  /* throttling sleeps at most this at a time */
#define SYNC_ALIGN      8u            /* sectors: checkpoints on 4 KiB boundaries */
#define MEMBER_CHECK_NS 500000000ull  /* members checked for change this often */

static bool has_redundancy(const struct eng_array *a)
{
	return a->pers->redundant(a);
}

/* Recovery walks member sectors; the rest the personality's positions. */
static uint64_t sync_end(const struct eng_array *a, enum uraid_sync_action act)
{
	if (act == URAID_SYNC_RECOVER)
		return a->geo.dev_sectors;
	return a->pers->sync_size(a);
}

bool sync_role_rebuilding(const struct eng_array *a, int role)
{
	return role >= 0 && role < a->geo.raid_disks && a->slot[role] >= 0 &&
	       a->mem[a->slot[role]]->state == URAID_MEMBER_REBUILDING;
}

bool sync_in_memory(const struct eng_array *a)
{
	for (int r = 0; r < a->geo.raid_disks; r++) {
		if (a->slot[r] < 0)
			continue;
		const struct eng_member *em = a->mem[a->slot[r]];
		if (em->state != URAID_MEMBER_FAULTY && !eng_data_member(em)->in_memory)
			return false;
		/* the workers' plain requests neither record nor clear bad blocks */
		if (em->bbl.n > 0)
			return false;
	}
	return true;
}

static bool any_rebuilding(const struct eng_array *a)
{
	for (int r = 0; r < a->geo.raid_disks; r++)
		if (sync_role_rebuilding(a, r))
			return true;
	return false;
}

/* Where recovery stands: the lowest checkpoint of everything rebuilt. */
static uint64_t recovery_from(const struct eng_array *a)
{
	uint64_t from = eng_replace_from(a);
	for (int r = 0; r < a->geo.raid_disks; r++)
		if (sync_role_rebuilding(a, r) && a->mem[a->slot[r]]->recovery_offset < from)
			from = a->mem[a->slot[r]]->recovery_offset;
	return from;
}

uint64_t sync_count_mismatch(const uint8_t *x, const uint8_t *y, uint64_t nsec)
{
	uint64_t n = 0;
	for (uint64_t s = 0; s < nsec; s += SYNC_MISMATCH_UNIT) {
		uint64_t len = nsec - s < SYNC_MISMATCH_UNIT ? nsec - s : SYNC_MISMATCH_UNIT;
		if (memcmp(x + s * 512, y + s * 512, len * 512))
			n += SYNC_MISMATCH_UNIT;
	}
	return n;
}

static void speed_mark(struct eng_array *a)
{
	a->speed_t0_ns = eng_now_ns();
	a->speed_pos0 = a->sync_pos;
}

/* A job starts: the throttle's window and md's marks (status's speed and
 * finish: md_do_sync's marks, stepped every 3 s, the window the last 30 s
 * of them) from here. */
static void job_start(struct eng_array *a)
{
	speed_mark(a);
	a->sync_work = 0;
	rate_marks_start(&a->marks, a->speed_t0_ns);
}

/* n more positions done (md's io_sectors: what was worked on, not what
 * a bitmap let the job skip). */
static void job_done(struct eng_array *a, uint64_t n)
{
	a->sync_work += n;
	rate_marks_update(&a->marks, eng_now_ns(), a->sync_work);
}

void eng_sync_schedule(struct eng_array *a)
{
	if (a->action != URAID_SYNC_IDLE || a->readonly || a->frozen || a->broken ||
	    !has_redundancy(a))
		return;
	/* A reshape first: recovery and resync positions are in one layout. */
	if (a->rs) {
		a->action = URAID_SYNC_RESHAPE;
		a->sync_pos = eng_reshape_progress(a->rs);
		a->sync_end = eng_reshape_total(a->rs);
		a->mismatches = 0;
		job_start(a);
		a->persist_ns = a->speed_t0_ns;
		return;
	}
	/* A spare fills the first empty slot. */
	if (!any_rebuilding(a)) {
		for (int r = 0; r < a->geo.raid_disks; r++) {
			if (a->slot[r] >= 0)
				continue;
			int spare = -1;
			for (int i = 0; i < a->nmem && spare < 0; i++)
				if (a->mem[i]->state == URAID_MEMBER_SPARE && a->mem[i]->m)
					spare = i;
			if (spare < 0)
				break;
			struct eng_member *em = a->mem[spare];
			em->role = r;
			em->state = URAID_MEMBER_REBUILDING;
			em->recovery_offset = 0;
			em->sb.feature_map &= ~MD_FEATURE_RECOVERY_BITMAP;
			a->slot[r] = spare;
			eng_log_full_recovery(a, r); /* a spare: nothing on it to trust */
			if (a->geo.level == 0 || a->geo.level == URAID_LEVEL_LINEAR)
				break;
			a->geo.member_sectors[r] = em->sb.data_size;
			eng_sb_write_all(a);
		}
	}
	if (any_rebuilding(a) || eng_replace_any(a)) {
		a->action = URAID_SYNC_RECOVER;
		a->sync_pos = recovery_from(a);
	} else if (a->resync_offset != MD_RESYNC_NONE && a->pers->resync_pointless(a)) {
		/* As md's raid5/raid1 sync_request: with no redundancy left
		 * there is nothing to make consistent, so the resync "skips"
		 * the whole array and the array is clean again. */
		a->resync_offset = MD_RESYNC_NONE;
		eng_sb_write_all(a);
		return;
	} else if (a->resync_offset != MD_RESYNC_NONE) {
		a->action = URAID_SYNC_RESYNC;
		a->sync_pos = a->resync_offset;
	} else {
		return;
	}
	a->sync_end = sync_end(a, a->action);
	a->mismatches = 0;
	if (a->sync_pos > a->sync_end)
		a->sync_pos = a->sync_end;
	job_start(a);
	a->persist_ns = a->speed_t0_ns;
}

static void finish(struct eng_array *a)
{
	sync_workers_free(a->workers); /* the job's helper worker */
	a->workers = NULL;
	switch (a->action) {
	case URAID_SYNC_RESYNC:
		a->resync_offset = MD_RESYNC_NONE;
		eng_sb_write_all(a);
		break;
	case URAID_SYNC_RECOVER:
		for (int r = 0; r < a->geo.raid_disks; r++)
			if (a->slot[r] >= 0 &&
			    a->mem[a->slot[r]]->state == URAID_MEMBER_REBUILDING) {
				a->mem[a->slot[r]]->state = URAID_MEMBER_IN_SYNC;
				a->mem[a->slot[r]]->recovery_offset = 0;
			}
		sync_replace_finish(a);
		eng_sb_write_all(a);
		break;
	case URAID_SYNC_CHECK:
	case URAID_SYNC_REPAIR: a->last_mismatch_cnt = a->mismatches; break;
	case URAID_SYNC_RESHAPE:
		if (a->rs && eng_reshape_complete(a) < 0)
			fprintf(stderr,
			        "uraid: reshape done, but writing the superblocks failed\n");
		break;
	default: break;
	}
	a->action = URAID_SYNC_IDLE;
	a->sync_pos = a->sync_end = 0;
	pthread_cond_broadcast(&a->cond);
}

static void speed_update(struct eng_array *a)
{
	uint64_t now = eng_now_ns();
	if (a->sync_pos < a->speed_pos0)
		speed_mark(a);
	else if (now > a->speed_t0_ns + 100000000ull)
		a->speed_kibs =
		    (a->sync_pos - a->speed_pos0) / 2 * 1000000000ull / (now - a->speed_t0_ns);
}

void eng_sync_interrupt(struct eng_array *a)
{
	if (a->action == URAID_SYNC_IDLE)
		return;
	sync_workers_free(a->workers);
	a->workers = NULL;
	if (a->action == URAID_SYNC_CHECK || a->action == URAID_SYNC_REPAIR)
		a->last_mismatch_cnt = a->mismatches;
	else /* resync_offset / recovery_offset: where it resumes */
		eng_sb_write_all(a);
	a->action = URAID_SYNC_IDLE;
	a->sync_pos = a->sync_end = 0;
	pthread_cond_broadcast(&a->cond);
}

int eng_sync_freeze(struct eng_array *a, bool frozen, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	eng_lock(a);
	a->frozen = frozen;
	if (frozen)
		eng_sync_interrupt(a);
	else
		eng_sync_schedule(a);
	pthread_cond_broadcast(&a->cond);
	eng_unlock(a);
	return 0;
}

/* Positions per batch: the personality's bound (SYNC_BATCH_BYTES across
 * the members a batch holds in memory), on checkpoint boundaries. */
static uint64_t batch_limit(const struct eng_array *a)
{
	uint64_t n = a->pers->sync_batch(a, a->action);
	return n >= SYNC_ALIGN ? n - n % SYNC_ALIGN : SYNC_ALIGN;
}

static int run_recovery(struct eng_array *a, uint64_t pos, uint64_t n)
{
	/* What this batch rebuilds; members that change role meanwhile (a
	 * replacement taking over a failed slot) keep their own checkpoint. */
	struct eng_member *tgt[ENG_MAX_MEMBERS];
	bool was_repl[ENG_MAX_MEMBERS];
	int nt = 0;
	for (int i = 0; i < a->nmem; i++)
		if (a->mem[i]->role >= 0 && a->mem[i]->state == URAID_MEMBER_REBUILDING) {
			was_repl[nt] = a->mem[i]->replacement;
			tgt[nt++] = a->mem[i];
		}
	int rc = 0;
	if (any_rebuilding(a))
		rc = a->pers->recover(a, pos, n);
	if (rc == 0 && eng_replace_any(a))
		rc = sync_replace_copy(a, pos, n);
	if (rc < 0)
		return rc;
	for (int t = 0; t < nt; t++)
		for (int i = 0; i < a->nmem; i++)
			if (a->mem[i] == tgt[t] && tgt[t]->replacement == was_repl[t] &&
			    tgt[t]->role >= 0 && tgt[t]->state == URAID_MEMBER_REBUILDING &&
			    tgt[t]->recovery_offset < pos + n)
				tgt[t]->recovery_offset = pos + n;
	uint64_t from = recovery_from(a);
	a->sync_pos = from < a->sync_end ? from : a->sync_end;
	uint64_t now = eng_now_ns();
	if (now - a->persist_ns > PERSIST_NS) {
		a->persist_ns = now;
		eng_sb_write_all(a);
	}
	return 0;
}

/* One batch of sync work; caller holds the lock. */
static int step_locked(struct eng_array *a, uint64_t max)
{
	if (a->action == URAID_SYNC_IDLE)
		eng_sync_schedule(a);
	if (a->action == URAID_SYNC_IDLE)
		return 0;
	if (a->broken) { /* nothing more is written */
		a->action = URAID_SYNC_IDLE;
		pthread_cond_broadcast(&a->cond);
		return -EIO;
	}
	if (a->action == URAID_SYNC_RESHAPE) {
		uint64_t done = 0, before = a->sync_pos;
		int rc = sync_reshape_batch(a, max, &done);
		if (rc == -EAGAIN) /* a restore pending: the caller waits */
			return rc;
		if (rc < 0) {
			fprintf(stderr, "uraid: reshape stopped at sector %llu: error %d\n",
			        (unsigned long long)a->sync_pos, rc);
			a->action = URAID_SYNC_IDLE;
			pthread_cond_broadcast(&a->cond);
			return rc;
		}
		a->sync_pos = eng_reshape_progress(a->rs);
		job_done(a, a->sync_pos > before ? a->sync_pos - before : 0);
		speed_update(a);
		if (a->sync_pos >= a->sync_end)
			finish(a);
		pthread_cond_broadcast(&a->cond);
		return a->action != URAID_SYNC_IDLE;
	}
	if (a->action == URAID_SYNC_RECOVER && !any_rebuilding(a) && !eng_replace_any(a)) {
		/* The member being rebuilt failed meanwhile. */
		a->action = URAID_SYNC_IDLE;
		pthread_cond_broadcast(&a->cond);
		return 0;
	}
	uint64_t pos = a->sync_pos, dirty_len = UINT64_MAX;
	/* The bitmap narrows a resync, and the recovery of a re-added member. */
	if (a->action == URAID_SYNC_RESYNC || a->action == URAID_SYNC_RECOVER)
		pos = a->sync_pos = eng_log_next_dirty(a, pos, a->sync_end, &dirty_len);
	if (pos >= a->sync_end) {
		finish(a);
		return 0;
	}
	uint64_t n = a->sync_end - pos, lim = batch_limit(a);
	if (n > max)
		n = max;
	if (n > lim)
		n = lim;
	if (n > dirty_len)
		n = dirty_len;
	/* Checkpoints on 4 KiB boundaries: the kernel resumes a recovery or
	 * resync at recovery_offset / resync_offset and works in 4 KiB units
	 * (md's STRIPE_SECTORS); an odd checkpoint left parity wrong there. */
	uint64_t odd = (pos + n) % SYNC_ALIGN;
	if (pos + n < a->sync_end && odd)
		n = n > odd ? n - odd : n + SYNC_ALIGN - odd; /* a small max: a little more */
	if (pos + n > a->sync_end)
		n = a->sync_end - pos;
	int rc;
	if (a->action == URAID_SYNC_RECOVER)
		rc = run_recovery(a, pos, n);
	else
		rc = a->pers->resync(a, pos, n);
	if (rc < 0) {
		fprintf(stderr, "uraid: %s stopped at sector %llu: error %d\n",
		        a->action == URAID_SYNC_RECOVER ? "recovery" : "sync",
		        (unsigned long long)pos, rc);
		a->action = URAID_SYNC_IDLE;
		pthread_cond_broadcast(&a->cond);
		return rc;
	}
	if (a->action == URAID_SYNC_IDLE) /* interrupted (idle request, member lost) */
		return 0;
	if (a->action != URAID_SYNC_RECOVER)
		a->sync_pos = pos + n;
	if (a->action == URAID_SYNC_RESYNC)
		a->resync_offset = a->sync_pos;
	job_done(a, n);
	speed_update(a);
	if (a->sync_pos >= a->sync_end)
		finish(a);
	pthread_cond_broadcast(&a->cond);
	return a->action != URAID_SYNC_IDLE;
}

int eng_sync_step(struct eng_array *a, uint64_t max_sectors)
{
	if (a->readonly)
		return 0;
	eng_lock(a);
	int rc = 0;
	uint64_t done = 0;
	while (done < max_sectors) {
		uint64_t before = a->sync_pos;
		rc = step_locked(a, max_sectors - done);
		if (rc <= 0)
			break;
		done += a->sync_pos > before ? a->sync_pos - before : 1;
	}
	if (rc >= 0) {
		/* One job finishing may leave the next due (recovery, then resync). */
		eng_sync_schedule(a);
		rc = a->action != URAID_SYNC_IDLE;
	}
	eng_unlock(a);
	return rc;
}

int eng_sync_action(struct eng_array *a, enum uraid_sync_action act, char *err, size_t errlen)
{
	if (a->readonly)
		return errmsg(err, errlen, -EROFS, "array is read-only");
	eng_lock(a);
	int rc = 0;
	if (act == URAID_SYNC_IDLE) {
		/* md's idle also lifts frozen */
		a->frozen = false;
		if (a->action == URAID_SYNC_CHECK || a->action == URAID_SYNC_REPAIR) {
			a->last_mismatch_cnt = a->mismatches;
			a->action = URAID_SYNC_IDLE;
		}
		eng_sync_schedule(a);
	} else if (act != URAID_SYNC_CHECK && act != URAID_SYNC_REPAIR) {
		rc = errmsg(err, errlen, -EINVAL, "only check, repair and idle can be requested");
	} else if (!has_redundancy(a)) {
		rc = errmsg(err, errlen, -EINVAL, "%s has no redundancy to check", a->ops->name);
	} else if (a->action != URAID_SYNC_IDLE) {
		rc = errmsg(err, errlen, -EBUSY, "a %s is running",
		            a->action == URAID_SYNC_RECOVER ? "recovery" : "sync");
	} else {
		bool degraded = false;
		for (int r = 0; r < a->geo.raid_disks; r++)
			degraded |=
			    a->slot[r] < 0 || a->mem[a->slot[r]]->state != URAID_MEMBER_IN_SYNC;
		if (degraded) {
			rc = errmsg(err, errlen, -EINVAL,
			            "array is degraded: nothing to check against");
		} else {
			a->frozen = false; /* as md: check and repair lift frozen */
			a->action = act;
			a->sync_pos = 0;
			a->sync_end = sync_end(a, act);
			a->mismatches = 0;
			job_start(a);
		}
	}
	pthread_cond_broadcast(&a->cond);
	eng_unlock(a);
	return rc;
}

void eng_sync_speed(struct eng_array *a, uint64_t min_kibs, uint64_t max_kibs)
{
	eng_lock(a);
	a->speed_min = min_kibs;
	a->speed_max = max_kibs;
	speed_mark(a);
	pthread_cond_broadcast(&a->cond);
	eng_unlock(a);
}

int eng_sync_wait(struct eng_array *a)
{
	if (a->readonly)
		return 0;
	if (!a->thread_running) {
		int rc;
		while ((rc = eng_sync_step(a, UINT64_MAX)) > 0)
			;
		return rc;
	}
	eng_lock(a);
	eng_sync_schedule(a);
	while (a->action != URAID_SYNC_IDLE && a->thread_running)
		eng_cond_wait(a);
	eng_unlock(a);
	return 0;
}

static void timed_wait(struct eng_array *a, uint64_t ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t t = (uint64_t)ts.tv_nsec + ns;
	ts.tv_sec += (time_t)(t / 1000000000ull);
	ts.tv_nsec = (long)(t % 1000000000ull);
	/* Readers of the fast path may run while the state lock is down. */
	pthread_rwlock_unlock(&a->iolock);
	pthread_cond_timedwait(&a->cond, &a->lock, &ts);
	pthread_rwlock_wrlock(&a->iolock);
}

/* After a batch: sleep while the sync is ahead of the speed that applies
 * (speed_max when idle, speed_min while foreground requests arrive), as
 * md's md_do_sync does. Sleeping releases the lock. */
static void throttle(struct eng_array *a, bool busy)
{
	uint64_t limit = busy ? a->speed_min : a->speed_max;
	uint64_t now = eng_now_ns();
	if (!limit) {
		if (busy) /* speed_min 0: give way entirely while requests come */
			timed_wait(a, MAX_SLEEP_NS);
		return;
	}
	bool slept = false;
	/* Sleep in slices, so a stop, a new limit or the end of the job is
	 * seen soon (the wait also wakes on a->cond). */
	while (!a->thread_stop && a->action != URAID_SYNC_IDLE && a->sync_pos >= a->speed_pos0) {
		limit = busy ? a->speed_min : a->speed_max;
		if (!limit)
			break;
		uint64_t done_kib = (a->sync_pos - a->speed_pos0) / 2;
		uint64_t due_ns = done_kib * 1000000000ull / limit, el = now - a->speed_t0_ns;
		if (due_ns <= el)
			break;
		timed_wait(a, due_ns - el < MAX_SLEEP_NS ? due_ns - el : MAX_SLEEP_NS);
		slept = true;
		now = eng_now_ns();
		rate_marks_tick(&a->marks, now); /* md steps its marks while it waits */
	}
	if (busy && !slept) /* below speed_min: go on, but let the waiting requests in first */
		timed_wait(a, 1000000ull);
}

/* The batch bound: while a speed limit holds the job, half a second's
 * worth at that limit (KiB/s: as many sectors), 128 KiB at least (md's
 * window between its speed checks), so the job moves in small steps as
 * md's does rather than in a few large batches with long sleeps between
 * (md's marks, and so the speed status shows, would see bursts). */
static uint64_t batch_bound(const struct eng_array *a, bool busy)
{
	uint64_t limit = busy ? a->speed_min : a->speed_max, n = busy ? BUSY_SECTORS : UINT64_MAX;
	if (limit) {
		uint64_t half_s = limit < 256 ? 256 : limit;
		if (half_s < n)
			n = half_s;
	}
	return n;
}

static void *sync_thread(void *arg)
{
	struct eng_array *a = arg;
	uint64_t fg_seen = 0, fg_ns = 0;
	bool was_busy = false;
	eng_lock(a);
	uint64_t checked_ns = 0;
	while (!a->thread_stop) {
		/* The members watched for change (core/slot.c), once a while. */
		uint64_t now_ns = eng_now_ns();
		if (now_ns - checked_ns > MEMBER_CHECK_NS) {
			checked_ns = now_ns;
			eng_members_check(a);
		}
		if (a->action == URAID_SYNC_IDLE)
			eng_sync_schedule(a);
		if (a->action == URAID_SYNC_IDLE) {
			if (a->dirty &&
			    eng_now_ns() - __atomic_load_n(&a->last_write_ns, __ATOMIC_RELAXED) >
			        IDLE_CLEAN_NS)
				eng_mark_clean(a);
			timed_wait(a, 200000000ull);
			continue;
		}
		/* Requests count themselves on entry, before they wait for the
		 * lock, so a request blocked behind this thread is seen too. */
		uint64_t now = eng_now_ns(), fg = __atomic_load_n(&a->fg_ios, __ATOMIC_RELAXED);
		if (fg != fg_seen) {
			fg_seen = fg;
			fg_ns = now;
		}
		bool busy = fg_ns && now - fg_ns < FG_RECENT_NS;
		if (busy != was_busy || now - a->speed_t0_ns > MARK_NS ||
		    a->sync_pos < a->speed_pos0)
			speed_mark(a);
		was_busy = busy;
		if (step_locked(a, batch_bound(a, busy)) == -EAGAIN) {
			/* The reshape waits for its critical section to be
			 * restored (eng_backup_restore signals), or a stop. */
			while (!a->thread_stop && a->rs && a->rs->restore)
				eng_cond_wait(a);
			continue;
		}
		if (a->action != URAID_SYNC_IDLE && !a->thread_stop)
			throttle(a, busy);
	}
	eng_unlock(a);
	return NULL;
}

void eng_sync_thread_start(struct eng_array *a)
{
	a->thread_stop = false;
	if (pthread_create(&a->thread, NULL, sync_thread, a) == 0)
		a->thread_running = true;
}

void eng_sync_thread_stop(struct eng_array *a)
{
	if (!a->thread_running)
		return;
	eng_lock(a);
	a->thread_stop = true;
	pthread_cond_broadcast(&a->cond);
	eng_unlock(a);
	pthread_join(a->thread, NULL);
	a->thread_running = false;
	eng_lock(a);
	pthread_cond_broadcast(&a->cond);
	eng_unlock(a);
}
