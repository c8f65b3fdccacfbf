/* Stripe cache write-out: runs of consecutive heads of one stripe go to the
 * members as one request per member, parity from the data when every head
 * of the run is complete, else by read-modify-write or reconstruct-write
 * (whichever reads fewer members, with engine/raid456/stripe.c's rules: reconstruct above
 * the resync point or with a member missing). Also the idle thread, the
 * size setting and the counters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/core/log.h"
#include "engine/raid456/raid456.h"
#include "engine/raid456/stripe_cache_int.h"

#define SC_TICK_NS 20000000ull /* idle thread period */

/* Copy the cached sectors of data index di of heads [t0, t0+nh) of
 * stripe s over dst (rows of the run). */
static void overlay_block(const struct eng_scache *sc, uint64_t s, uint64_t t0, uint64_t nh, int di,
                          uint8_t *dst)
{
	uint64_t hs = sc->hs;
	uint8_t full_mask = (uint8_t)((1u << hs) - 1);
	for (uint64_t t = 0; t < nh; t++) {
		const struct sc_head *h = sc_lookup(sc, s * sc->hpc + t0 + t);
		const uint8_t *src = h->data + (size_t)di * hs * 512;
		if (h->dirty[di] == full_mask) {
			memcpy(dst + t * hs * 512, src, hs * 512);
			continue;
		}
		for (uint64_t j = 0; j < hs; j++)
			if (h->dirty[di] >> j & 1)
				memcpy(dst + (t * hs + j) * 512, src + j * 512, 512);
	}
}

struct overlay_src {
	const struct eng_scache *sc;
	uint64_t s, t0, nh;
};

static void overlay_fill(void *ctx, int di, uint8_t *block)
{
	const struct overlay_src *c = ctx;
	overlay_block(c->sc, c->s, c->t0, c->nh, di, block);
}

/* Write heads [t0, t0+nh) of stripe s; `complete`: all of them are. */
static int writeout_run(struct eng_array *a, struct eng_scache *sc, uint64_t s, uint64_t t0,
                        uint64_t nh, bool complete)
{
	uint64_t hs = sc->hs, co = t0 * hs, nrows = nh * hs, chunk = a->geo.chunk_sectors;
	uint8_t full_mask = (uint8_t)((1u << hs) - 1);
	struct eng_stripe_buf sb;
	int rc = eng_stripe_buf_init(a, &sb, s, nrows);
	if (rc < 0)
		return rc;
	int npos = eng_stripe_npos(&sb), npar = eng_nparity(a);
	uint64_t msec = sb.ls.sector + co;
	bool full[LAYOUT_MAX_MEMBERS + 2] = {0}, touched[LAYOUT_MAX_MEMBERS + 2] = {0};
	bool want[LAYOUT_MAX_MEMBERS + 2] = {0}, dirty[LAYOUT_MAX_MEMBERS + 2] = {0};
	int ntouched = 0, nnotfull = 0;
	bool all_avail = true;
	for (int di = 0; di < sb.k; di++) {
		int p = eng_stripe_data_pos(&sb, di);
		full[p] = true;
		for (uint64_t t = 0; t < nh; t++) {
			uint8_t m = sc_lookup(sc, s * sc->hpc + t0 + t)->dirty[di];
			full[p] &= m == full_mask;
			touched[p] |= m != 0;
		}
		ntouched += touched[p];
		nnotfull += !full[p];
		if (!eng_role_readable(a, sb.pos_role[p], msec, nrows))
			all_avail = false;
	}
	for (int p = sb.nsyn; p < npos; p++)
		if (!eng_role_readable(a, sb.pos_role[p], msec, nrows))
			all_avail = false;
	/* Members get this data now: the array must say "active" and a
	 * write-intent bitmap must cover it first (it may have been added
	 * after the write was cached). */
	__atomic_store_n(&a->last_write_ns, eng_now_ns(), __ATOMIC_RELAXED);
	rc = eng_mark_dirty(a);
	for (int di = 0; di < sb.k && rc == 0; di++)
		if (touched[eng_stripe_data_pos(&sb, di)])
			rc = eng_log_write_start(a, s * sc->width + (uint64_t)di * chunk + co,
			                         nrows);
	if (rc < 0)
		goto out;
	uint64_t reads0 = __atomic_load_n(&a->nio_reads, __ATOMIC_RELAXED);
	if (complete) {
		for (int di = 0; di < sb.k; di++)
			overlay_block(sc, s, t0, nh, di, sb.blk[eng_stripe_data_pos(&sb, di)]);
		rc = eng_stripe_gen(a, &sb) < 0 ? -EIO : 0;
		sc->full_runs++;
		goto write;
	}
	bool synced = a->resync_offset == MD_RESYNC_NONE || msec + nrows <= a->resync_offset;
	if (synced && all_avail && ntouched + npar < nnotfull) {
		for (int p = 0; p < npos; p++)
			want[p] = p >= sb.nsyn || touched[p];
		rc = eng_stripe_read(a, &sb, co, want, NULL);
		if (rc == 0) {
			struct overlay_src ctx = {sc, s, t0, nh};
			rc = eng_stripe_rmw(a, &sb, touched, ntouched, nrows, overlay_fill, &ctx);
			if (rc == -ENOMEM)
				goto out;
			sc->rmw_runs++;
			goto write;
		}
		/* A read failed: reconstruct-write rebuilds what it needs. */
	}
	bool need_rebuild = false;
	for (int di = 0; di < sb.k; di++) {
		int p = eng_stripe_data_pos(&sb, di);
		want[p] = !full[p];
		if (!full[p] && !eng_role_readable(a, sb.pos_role[p], msec, nrows))
			need_rebuild = true;
	}
	for (int p = sb.nsyn; p < npos; p++)
		want[p] = false;
	rc = need_rebuild ? -EAGAIN : eng_stripe_read(a, &sb, co, want, NULL);
	if (rc == -EAGAIN)
		rc = eng_stripe_read_all(a, &sb, co, NULL);
	if (rc < 0)
		goto out;
	for (int di = 0; di < sb.k; di++)
		if (touched[eng_stripe_data_pos(&sb, di)])
			overlay_block(sc, s, t0, nh, di, sb.blk[eng_stripe_data_pos(&sb, di)]);
	rc = eng_stripe_gen(a, &sb) < 0 ? -EIO : 0;
	sc->rcw_runs++;
write:
	sc->reads_writeout += __atomic_load_n(&a->nio_reads, __ATOMIC_RELAXED) - reads0;
	if (rc == 0) {
		for (int p = 0; p < npos; p++)
			dirty[p] = touched[p] || p >= sb.nsyn;
		rc = eng_stripe_write(a, &sb, co, dirty);
	}
out:
	eng_stripe_buf_free(a, &sb);
	return rc;
}

void sc_writeout_stripe(struct eng_array *a, uint64_t s, enum sc_why why)
{
	struct eng_scache *sc = a->sc;
	uint64_t base = s * sc->hpc;
	for (uint64_t t = 0; t < sc->hpc;) {
		struct sc_head *h = sc_lookup(sc, base + t);
		if (!h) {
			t++;
			continue;
		}
		/* A run: consecutive heads, all complete or all not. */
		bool complete = h->nfull == (unsigned)sc->k;
		uint64_t e = t + 1;
		for (; e < sc->hpc; e++) {
			const struct sc_head *n = sc_lookup(sc, base + e);
			if (!n || (n->nfull == (unsigned)sc->k) != complete)
				break;
		}
		int rc = writeout_run(a, sc, s, t, e - t, complete);
		if (rc < 0 && sc->error == 0)
			sc->error = rc;
		/* Written or lost (the array failed): released either way. */
		for (uint64_t i = t; i < e; i++)
			sc_release(sc, sc_lookup(sc, base + i));
		if (why == SC_WHY_EVICT)
			sc->evicted += e - t;
		else if (why == SC_WHY_IDLE)
			sc->idle += e - t;
		t = e;
	}
}

int eng_scache_drain(struct eng_array *a)
{
	struct eng_scache *sc = a->sc;
	if (!sc)
		return 0;
	while (sc->lru.next != &sc->lru)
		sc_writeout_stripe(a, sc->lru.next->key / sc->hpc, SC_WHY_DRAIN);
	int rc = sc->error;
	sc->error = 0;
	return rc;
}

/* Stripes whose oldest head was last written before `cutoff`. */
static void writeout_idle(struct eng_array *a, uint64_t cutoff)
{
	struct eng_scache *sc = a->sc;
	while (sc->lru.next != &sc->lru && sc->lru.next->touched_ns < cutoff)
		sc_writeout_stripe(a, sc->lru.next->key / sc->hpc, SC_WHY_IDLE);
}

static void *idle_thread(void *arg)
{
	struct eng_array *a = arg;
	struct eng_scache *sc = a->sc;
	pthread_mutex_lock(&sc->mu);
	while (!sc->thr_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + SC_TICK_NS;
		ts.tv_sec += (time_t)(ns / 1000000000ull);
		ts.tv_nsec = (long)(ns % 1000000000ull);
		pthread_cond_timedwait(&sc->cv, &sc->mu, &ts);
		if (sc->thr_stop || __atomic_load_n(&sc->used, __ATOMIC_RELAXED) == 0)
			continue;
		pthread_mutex_unlock(&sc->mu);
		eng_lock(a);
		writeout_idle(a, eng_now_ns() - SC_IDLE_NS);
		eng_unlock(a);
		pthread_mutex_lock(&sc->mu);
	}
	pthread_mutex_unlock(&sc->mu);
	return NULL;
}

/* Without eng_lock held: the thread may be waiting for it. */
static void thread_stop(struct eng_scache *sc)
{
	if (!sc || !sc->thr_running)
		return;
	pthread_mutex_lock(&sc->mu);
	sc->thr_stop = true;
	pthread_cond_broadcast(&sc->cv);
	pthread_mutex_unlock(&sc->mu);
	pthread_join(sc->thr, NULL);
	sc->thr_running = false;
}

static void heads_free(struct eng_scache *sc)
{
	while (sc->lru.next != &sc->lru)
		sc_release(sc, sc->lru.next);
	sc->free = NULL;
	free(sc->heads);
	free(sc->mem);
	free(sc->dirty_mem);
	free(sc->hash);
	sc->heads = NULL;
	sc->mem = sc->dirty_mem = NULL;
	sc->hash = NULL;
	sc->size = 0;
}

void eng_scache_free(struct eng_array *a)
{
	struct eng_scache *sc = a->sc;
	if (!sc)
		return;
	thread_stop(sc);
	heads_free(sc);
	pthread_mutex_destroy(&sc->mu);
	pthread_cond_destroy(&sc->cv);
	free(sc);
	a->sc = NULL;
}

int eng_scache_set(struct eng_array *a, unsigned stripes)
{
	if (stripes > URAID_STRIPE_CACHE_MAX)
		return -EINVAL;
	if (a->readonly)
		return stripes ? -EROFS : 0;
	/* With a write journal every stripe write must be logged first; the
	 * cache's partial write-outs are not, so the journal's write-back
	 * mode is the cache of a journaled array (uraid_journal_mode). */
	if (a->log && a->log->log_stripes && stripes)
		return -EOPNOTSUPP;
	/* One resize at a time (control connections run in parallel); the
	 * idle thread is stopped without eng_lock, which it may be waiting
	 * for. */
	pthread_mutex_lock(&a->sc_cfg);
	thread_stop(a->sc);
	eng_lock(a);
	int rc = 0;
	struct eng_scache *sc = a->sc;
	if (sc) {
		rc = eng_scache_drain(a);
		heads_free(sc);
	} else if (stripes) {
		sc = calloc(1, sizeof(*sc));
		if (!sc) {
			eng_unlock(a);
			pthread_mutex_unlock(&a->sc_cfg);
			return -ENOMEM;
		}
		pthread_mutex_init(&sc->mu, NULL);
		pthread_cond_init(&sc->cv, NULL);
		sc->lru.next = sc->lru.prev = &sc->lru;
		a->sc = sc;
	}
	if (stripes) {
		uint64_t chunk = a->geo.chunk_sectors;
		sc->hs = 8; /* md's 4 KiB; a smaller power of two for tiny chunks */
		while (chunk % sc->hs)
			sc->hs /= 2;
		sc->hpc = chunk / sc->hs;
		sc->k = a->geo.raid_disks - eng_nparity(a);
		sc->width = (uint64_t)sc->k * chunk;
		/* More heads than the array has rows of 4 KiB can never be used:
		 * memory for those only. */
		uint64_t rows = a->geo.dev_sectors / sc->hs;
		sc->requested = stripes;
		if (stripes > rows)
			stripes = rows ? (unsigned)rows : 1;
		sc->nbuckets = 64;
		while (sc->nbuckets < 2 * stripes)
			sc->nbuckets *= 2;
		size_t hb = (size_t)sc->k * sc->hs * 512;
		sc->hash = calloc(sc->nbuckets, sizeof(*sc->hash));
		sc->heads = calloc(stripes, sizeof(*sc->heads));
		sc->dirty_mem = calloc(stripes, (size_t)sc->k);
		sc->mem = eng_alloc((size_t)stripes * hb); /* zeroed: touched now */
		if (!sc->hash || !sc->heads || !sc->dirty_mem || !sc->mem) {
			heads_free(sc);
			eng_unlock(a);
			pthread_mutex_unlock(&a->sc_cfg);
			return -ENOMEM;
		}
		for (unsigned i = 0; i < stripes; i++) {
			struct sc_head *h = &sc->heads[i];
			h->data = sc->mem + (size_t)i * hb;
			h->dirty = sc->dirty_mem + (size_t)i * (size_t)sc->k;
			h->next = sc->free;
			sc->free = h;
		}
		sc->size = stripes;
	}
	eng_unlock(a);
	if (stripes && !(a->h.flags & URAID_NO_SYNC_THREAD)) {
		sc->thr_stop = false;
		if (pthread_create(&sc->thr, NULL, idle_thread, a) == 0)
			sc->thr_running = true;
	}
	pthread_mutex_unlock(&a->sc_cfg);
	return rc;
}

void eng_scache_stats(const struct eng_array *a, struct uraid_io_stats *st)
{
	const struct eng_scache *sc = a->sc;
	if (!sc)
		return;
	st->sc_size = sc->size ? sc->requested : 0;
	st->sc_used = sc->used;
	st->sc_write_sectors = sc->write_sectors;
	st->sc_read_hit_sectors = __atomic_load_n(&sc->read_hits, __ATOMIC_RELAXED);
	st->sc_full_runs = sc->full_runs;
	st->sc_rmw_runs = sc->rmw_runs;
	st->sc_rcw_runs = sc->rcw_runs;
	st->sc_evicted = sc->evicted;
	st->sc_idle = sc->idle;
	st->sc_reads_direct = sc->reads_direct;
	st->sc_reads_writeout = sc->reads_writeout;
}
