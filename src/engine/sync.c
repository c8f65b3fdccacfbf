/* Background sync work: resync after an unclean stop, recovery onto a spare,
 * check and repair. Work advances one window at a time under the array lock
 * so requests interleave with it; progress is kept in the superblocks
 * (resync_offset, recovery_offset) so an interrupted run resumes.
 *
 * Positions: member sectors (rows) for the parity levels, logical sectors
 * for raid1/raid10 (equal to member sectors for raid1). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/bitmap.h"
#include "engine/engine.h"
#include "util/errmsg.h"

#define SYNC_WINDOW   1024          /* sectors per step (512 KiB) */
#define PERSIST_NS    1000000000ull /* checkpoint progress about once a second */
#define IDLE_CLEAN_NS 2000000000ull /* mark clean after this long without writes */
#define MISMATCH_UNIT 8             /* md counts mismatches in 4 KiB pages, as sectors */

static bool has_redundancy(const struct uraid_array *a)
{
	return eng_is_parity(a) || (eng_is_mirror(a) && a->ncopies > 1);
}

static uint64_t sync_end(const struct uraid_array *a)
{
	return eng_is_parity(a) ? a->geom.dev_sectors : a->array_sectors;
}

static bool any_rebuilding(const struct uraid_array *a)
{
	for (int r = 0; r < a->geom.raid_disks; r++)
		if (a->slot[r] >= 0 && a->mem[a->slot[r]]->state == URAID_MEMBER_REBUILDING)
			return true;
	return false;
}

/* Member sector below which a rebuilding member is complete, for a sync
 * position: exact for parity levels and raid1, conservative for raid10
 * near layouts, 0 (restart) for raid10 far/offset copies. */
static uint64_t recovery_checkpoint(const struct uraid_array *a, uint64_t pos)
{
	if (eng_is_parity(a) || a->geom.level == URAID_LEVEL_RAID1)
		return pos;
	uint32_t near = a->geom.layout & 0xff, far = (a->geom.layout >> 8) & 0xff;
	if (far != 1 || (a->geom.layout >> 16) || !a->geom.chunk_sectors)
		return 0;
	uint64_t chunk = a->geom.chunk_sectors;
	uint64_t rows = pos / chunk * near / (uint64_t)a->geom.raid_disks;
	return rows * chunk;
}

void eng_sync_schedule(struct uraid_array *a)
{
	if (a->action != URAID_SYNC_IDLE || a->readonly || !has_redundancy(a))
		return;
	/* A spare fills the first empty slot. */
	if (!any_rebuilding(a)) {
		for (int r = 0; r < a->geom.raid_disks; r++) {
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
			a->slot[r] = spare;
			eng_bitmap_full_recovery(a, r); /* a spare: nothing on it to trust */
			if (a->geom.level == 0 || a->geom.level == URAID_LEVEL_LINEAR)
				break;
			a->geom.member_sectors[r] = em->sb.data_size;
			eng_sb_write_all(a);
		}
	}
	if (any_rebuilding(a)) {
		uint64_t from = UINT64_MAX;
		for (int r = 0; r < a->geom.raid_disks; r++)
			if (a->slot[r] >= 0 &&
			    a->mem[a->slot[r]]->state == URAID_MEMBER_REBUILDING &&
			    a->mem[a->slot[r]]->recovery_offset < from)
				from = a->mem[a->slot[r]]->recovery_offset;
		/* raid10 positions are logical; restart there from the beginning
		 * unless the checkpoint maps back exactly (it does for raid1). */
		if (a->geom.level == URAID_LEVEL_RAID10)
			from = 0;
		a->action = URAID_SYNC_RECOVER;
		a->sync_pos = from;
	} else if (a->resync_offset != MD_RESYNC_NONE) {
		a->action = URAID_SYNC_RESYNC;
		a->sync_pos = a->resync_offset;
	} else {
		return;
	}
	a->sync_end = sync_end(a);
	a->mismatches = 0;
	a->speed_t0_ns = eng_now_ns();
	a->speed_pos0 = a->sync_pos;
	a->persist_ns = a->speed_t0_ns;
	if (a->sync_pos > a->sync_end)
		a->sync_pos = a->sync_end;
}

static uint64_t count_mismatch(const uint8_t *x, const uint8_t *y, uint64_t nsec)
{
	uint64_t n = 0;
	for (uint64_t s = 0; s < nsec; s += MISMATCH_UNIT) {
		uint64_t len = nsec - s < MISMATCH_UNIT ? nsec - s : MISMATCH_UNIT;
		if (memcmp(x + s * 512, y + s * 512, len * 512))
			n += MISMATCH_UNIT;
	}
	return n;
}

static int parity_step(struct uraid_array *a, uint64_t pos, uint64_t n)
{
	uint64_t chunk = a->geom.chunk_sectors;
	struct eng_stripe_buf sb;
	int rc = eng_stripe_buf_init(a, &sb, pos / chunk, n);
	if (rc < 0)
		return rc;
	uint64_t co = pos % chunk;
	int npos = eng_stripe_npos(&sb);
	bool lost[LAYOUT_MAX_MEMBERS + 2] = {0}, dirty[LAYOUT_MAX_MEMBERS + 2] = {0};
	size_t len = n * 512;
	switch (a->action) {
	case URAID_SYNC_RESYNC: {
		bool want[LAYOUT_MAX_MEMBERS + 2] = {0};
		for (int p = 0; p < sb.nsyn; p++)
			want[p] = true;
		rc = eng_stripe_read(a, &sb, co, want, NULL);
		if (rc == -EAGAIN)
			rc = eng_stripe_read_all(a, &sb, co, NULL);
		if (rc == 0)
			rc = eng_stripe_gen(a, &sb);
		for (int p = sb.nsyn; p < npos; p++)
			dirty[p] = true;
		break;
	}
	case URAID_SYNC_RECOVER:
		rc = eng_stripe_read_all(a, &sb, co, lost);
		for (int p = 0; p < npos; p++) {
			int role = sb.pos_role[p];
			dirty[p] = lost[p] && role >= 0 && a->slot[role] >= 0 &&
			           a->mem[a->slot[role]]->state == URAID_MEMBER_REBUILDING;
		}
		break;
	case URAID_SYNC_CHECK:
	case URAID_SYNC_REPAIR: {
		rc = eng_stripe_read_all(a, &sb, co, lost);
		if (rc < 0)
			break;
		uint8_t *orig = eng_buf_get(a, (size_t)npos * len);
		if (!orig) {
			rc = -ENOMEM;
			break;
		}
		for (int p = 0; p < npos; p++)
			memcpy(orig + p * len, sb.blk[p], len);
		rc = eng_stripe_gen(a, &sb);
		uint64_t bad = 0;
		for (uint64_t s = 0; s < n; s += MISMATCH_UNIT) {
			uint64_t l = n - s < MISMATCH_UNIT ? n - s : MISMATCH_UNIT;
			for (int p = sb.nsyn; p < npos; p++)
				if (memcmp(orig + p * len + s * 512, (uint8_t *)sb.blk[p] + s * 512,
				           l * 512)) {
					bad += MISMATCH_UNIT;
					break;
				}
		}
		a->mismatches += bad;
		if (a->action == URAID_SYNC_REPAIR && bad && sb.has_q) {
			/* RAID6: find the one member that is wrong, fix that one. */
			for (int p = 0; p < npos; p++)
				memcpy(sb.blk[p], orig + p * len, len);
			struct uraid_locate loc;
			int lr = uraid_pq_locate(a->pp, sb.nsyn, len, sb.blk, true, &loc);
			if (lr < 0)
				rc = eng_stripe_gen(a, &sb); /* not a single-member error */
			for (int p = 0; p < npos; p++)
				dirty[p] = sb.pos_role[p] >= 0 &&
				           memcmp(orig + p * len, sb.blk[p], len) != 0;
		} else if (a->action == URAID_SYNC_REPAIR && bad) {
			for (int p = sb.nsyn; p < npos; p++)
				dirty[p] = true;
		}
		eng_buf_put(a, orig);
		break;
	}
	default: break;
	}
	if (rc == 0)
		rc = eng_stripe_write(a, &sb, co, dirty);
	eng_stripe_buf_free(a, &sb);
	return rc;
}

static int mirror_step(struct uraid_array *a, uint64_t pos, uint64_t n)
{
	uint8_t *src = eng_buf_get(a, n * 512), *cmp = eng_buf_get(a, n * 512);
	int rc = 0;
	if (!src || !cmp) {
		rc = -ENOMEM;
		goto out;
	}
	struct layout_loc loc[LAYOUT_MAX_MEMBERS];
	int good = -1;
	for (int c = 0; c < a->ncopies; c++) {
		uint64_t l;
		if (a->ops->map(&a->geom, pos, c, &loc[c], &l) < 0) {
			rc = -EIO;
			goto out;
		}
	}
	/* The source: the first copy that reads (two tries each); copies that
	 * failed both get the good data written back, as on a normal read. */
	bool bad_copy[LAYOUT_MAX_MEMBERS] = {0};
	for (int c = 0; c < a->ncopies && good < 0; c++) {
		if (!eng_role_readable(a, loc[c].role, loc[c].sector, n))
			continue;
		if (eng_member_io(a, loc[c].role, false, src, loc[c].sector, n) == 0 ||
		    eng_member_io(a, loc[c].role, false, src, loc[c].sector, n) == 0)
			good = c;
		else
			bad_copy[c] = true;
	}
	if (good < 0) {
		rc = -EIO;
		goto out;
	}
	for (int c = 0; c < good; c++)
		if (bad_copy[c] && eng_member_io(a, loc[c].role, true, src, loc[c].sector, n) < 0)
			eng_member_failed(a, loc[c].role, "read error, and rewriting it failed");
	for (int c = 0; c < a->ncopies; c++) {
		if (c == good || !eng_role_writable(a, loc[c].role))
			continue;
		int role = loc[c].role;
		bool rebuilding = a->mem[a->slot[role]]->state == URAID_MEMBER_REBUILDING &&
		                  !eng_role_readable(a, role, loc[c].sector, n);
		bool write = false;
		if (a->action == URAID_SYNC_RECOVER) {
			write = rebuilding;
		} else if (a->action == URAID_SYNC_RESYNC) {
			write = true;
		} else if (!rebuilding) { /* check / repair */
			if (eng_member_io(a, role, false, cmp, loc[c].sector, n) < 0) {
				eng_member_failed(a, role, "read error during check");
				continue;
			}
			uint64_t bad = count_mismatch(src, cmp, n);
			a->mismatches += bad;
			write = bad && a->action == URAID_SYNC_REPAIR;
		}
		if (write && eng_member_io(a, role, true, src, loc[c].sector, n) < 0)
			eng_member_failed(a, role, "write error during sync");
	}
	if (!eng_array_readable(a))
		rc = -EIO;
out:
	eng_buf_put(a, src);
	eng_buf_put(a, cmp);
	return rc;
}

static void finish(struct uraid_array *a)
{
	switch (a->action) {
	case URAID_SYNC_RESYNC:
		a->resync_offset = MD_RESYNC_NONE;
		eng_sb_write_all(a);
		break;
	case URAID_SYNC_RECOVER:
		for (int r = 0; r < a->geom.raid_disks; r++)
			if (a->slot[r] >= 0 &&
			    a->mem[a->slot[r]]->state == URAID_MEMBER_REBUILDING) {
				a->mem[a->slot[r]]->state = URAID_MEMBER_IN_SYNC;
				a->mem[a->slot[r]]->recovery_offset = 0;
			}
		eng_sb_write_all(a);
		break;
	case URAID_SYNC_CHECK:
	case URAID_SYNC_REPAIR: a->last_mismatch_cnt = a->mismatches; break;
	default: break;
	}
	a->action = URAID_SYNC_IDLE;
	a->sync_pos = a->sync_end = 0;
	pthread_cond_broadcast(&a->cond);
}

/* One window of sync work; caller holds the lock. */
static int step_locked(struct uraid_array *a, uint64_t max)
{
	if (a->action == URAID_SYNC_IDLE)
		eng_sync_schedule(a);
	if (a->action == URAID_SYNC_IDLE)
		return 0;
	if (a->action == URAID_SYNC_RECOVER && !any_rebuilding(a)) {
		/* The member being rebuilt failed meanwhile. */
		a->action = URAID_SYNC_IDLE;
		pthread_cond_broadcast(&a->cond);
		return 0;
	}
	uint64_t pos = a->sync_pos, dirty_len = UINT64_MAX;
	/* The bitmap narrows a resync, and the recovery of a re-added member. */
	if ((a->action == URAID_SYNC_RESYNC || a->action == URAID_SYNC_RECOVER) && a->bitmap)
		pos = a->sync_pos = eng_bitmap_next_dirty(a, pos, a->sync_end, &dirty_len);
	if (pos >= a->sync_end) {
		finish(a);
		return 0;
	}
	uint64_t n = a->sync_end - pos;
	if (n > max)
		n = max;
	if (n > SYNC_WINDOW)
		n = SYNC_WINDOW;
	if (n > dirty_len)
		n = dirty_len;
	int rc;
	if (eng_is_parity(a)) {
		uint64_t chunk = a->geom.chunk_sectors;
		if (n > chunk - pos % chunk)
			n = chunk - pos % chunk;
		rc = parity_step(a, pos, n);
	} else {
		struct layout_loc loc;
		uint64_t l;
		rc = a->ops->map(&a->geom, pos, 0, &loc, &l);
		if (rc == 0 && n > l)
			n = l;
		if (rc == 0)
			rc = mirror_step(a, pos, n);
	}
	if (rc < 0) {
		fprintf(stderr, "uraid: %s stopped at sector %llu: error %d\n",
		        a->action == URAID_SYNC_RECOVER ? "recovery" : "sync",
		        (unsigned long long)pos, rc);
		a->action = URAID_SYNC_IDLE;
		pthread_cond_broadcast(&a->cond);
		return rc;
	}
	a->sync_pos = pos + n;
	if (a->action == URAID_SYNC_RESYNC)
		a->resync_offset = a->sync_pos;
	if (a->action == URAID_SYNC_RECOVER) {
		uint64_t cp = recovery_checkpoint(a, a->sync_pos);
		for (int r = 0; r < a->geom.raid_disks; r++)
			if (a->slot[r] >= 0 &&
			    a->mem[a->slot[r]]->state == URAID_MEMBER_REBUILDING &&
			    cp > a->mem[a->slot[r]]->recovery_offset)
				a->mem[a->slot[r]]->recovery_offset = cp;
		uint64_t now = eng_now_ns();
		if (now - a->persist_ns > PERSIST_NS) {
			a->persist_ns = now;
			eng_sb_write_all(a);
		}
	}
	uint64_t now = eng_now_ns();
	if (now > a->speed_t0_ns)
		a->speed_kibs =
		    (a->sync_pos - a->speed_pos0) / 2 * 1000000000ull / (now - a->speed_t0_ns);
	if (a->sync_pos >= a->sync_end)
		finish(a);
	pthread_cond_broadcast(&a->cond);
	return a->action != URAID_SYNC_IDLE;
}

int uraid_sync_step(struct uraid_array *a, uint64_t max_sectors)
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

int uraid_sync_action(struct uraid_array *a, enum uraid_sync_action act, char *err, size_t errlen)
{
	if (a->readonly)
		return errmsg(err, errlen, -EROFS, "array is read-only");
	eng_lock(a);
	int rc = 0;
	if (act == URAID_SYNC_IDLE) {
		if (a->action == URAID_SYNC_CHECK || a->action == URAID_SYNC_REPAIR) {
			a->last_mismatch_cnt = a->mismatches;
			a->action = URAID_SYNC_IDLE;
		}
	} else if (act != URAID_SYNC_CHECK && act != URAID_SYNC_REPAIR) {
		rc = errmsg(err, errlen, -EINVAL, "only check, repair and idle can be requested");
	} else if (!has_redundancy(a)) {
		rc = errmsg(err, errlen, -EINVAL, "%s has no redundancy to check", a->ops->name);
	} else if (a->action != URAID_SYNC_IDLE) {
		rc = errmsg(err, errlen, -EBUSY, "a %s is running",
		            a->action == URAID_SYNC_RECOVER ? "recovery" : "sync");
	} else {
		bool degraded = false;
		for (int r = 0; r < a->geom.raid_disks; r++)
			degraded |=
			    a->slot[r] < 0 || a->mem[a->slot[r]]->state != URAID_MEMBER_IN_SYNC;
		if (degraded) {
			rc = errmsg(err, errlen, -EINVAL,
			            "array is degraded: nothing to check against");
		} else {
			a->action = act;
			a->sync_pos = 0;
			a->sync_end = sync_end(a);
			a->mismatches = 0;
			a->speed_t0_ns = eng_now_ns();
			a->speed_pos0 = 0;
		}
	}
	pthread_cond_broadcast(&a->cond);
	eng_unlock(a);
	return rc;
}

void uraid_sync_speed(struct uraid_array *a, uint64_t min_kibs, uint64_t max_kibs)
{
	eng_lock(a);
	a->speed_min = min_kibs;
	a->speed_max = max_kibs;
	pthread_cond_broadcast(&a->cond);
	eng_unlock(a);
}

int uraid_sync_wait(struct uraid_array *a)
{
	if (a->readonly)
		return 0;
	if (!a->thread_running) {
		int rc;
		while ((rc = uraid_sync_step(a, UINT64_MAX)) > 0)
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

static void timed_wait(struct uraid_array *a, uint64_t ns)
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

static void *sync_thread(void *arg)
{
	struct uraid_array *a = arg;
	eng_lock(a);
	while (!a->thread_stop) {
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
		step_locked(a, SYNC_WINDOW);
		/* Above sync_speed_max, pause until the average falls back. */
		if (a->speed_max && a->action != URAID_SYNC_IDLE) {
			uint64_t done_kib = (a->sync_pos - a->speed_pos0) / 2;
			uint64_t due_ns = done_kib * 1000000000ull / a->speed_max;
			uint64_t el = eng_now_ns() - a->speed_t0_ns;
			if (due_ns > el)
				timed_wait(a, due_ns - el);
		}
	}
	eng_unlock(a);
	return NULL;
}

void eng_sync_thread_start(struct uraid_array *a)
{
	a->thread_stop = false;
	if (pthread_create(&a->thread, NULL, sync_thread, a) == 0)
		a->thread_running = true;
}

void eng_sync_thread_stop(struct uraid_array *a)
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

/* Placeholder until the stripe cache lands (issue #4). */
int uraid_set_stripe_cache(struct uraid_array *a, unsigned stripes)
{
	if (!eng_is_parity(a) || stripes > URAID_STRIPE_CACHE_MAX)
		return -EINVAL;
	return stripes ? -ENOTSUP : 0;
}
