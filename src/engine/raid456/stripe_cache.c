/* Stripe cache of the parity levels: heads, their hash and LRU, filling
 * them from writes, overlaying them on reads. Write-out is in
 * engine/raid456/stripe_cache_out.c; the design is described in engine/raid456/stripe_cache.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/raid456/raid456.h"
#include "engine/raid456/stripe_cache_int.h"

bool eng_scache_active(const struct eng_array *a)
{
	return a->sc && a->sc->size > 0;
}

unsigned eng_scache_size(const struct eng_array *a)
{
	return a->sc && a->sc->size ? a->sc->requested : 0;
}

static unsigned bucket(const struct eng_scache *sc, uint64_t key)
{
	return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 32) & (sc->nbuckets - 1);
}

struct sc_head *sc_lookup(const struct eng_scache *sc, uint64_t key)
{
	for (struct sc_head *h = sc->hash[bucket(sc, key)]; h; h = h->hnext)
		if (h->key == key)
			return h;
	return NULL;
}

static void lru_unlink(struct sc_head *h)
{
	h->prev->next = h->next;
	h->next->prev = h->prev;
}

static void lru_push_newest(struct eng_scache *sc, struct sc_head *h)
{
	h->prev = sc->lru.prev;
	h->next = &sc->lru;
	sc->lru.prev->next = h;
	sc->lru.prev = h;
}

void sc_release(struct eng_scache *sc, struct sc_head *h)
{
	struct sc_head **pp = &sc->hash[bucket(sc, h->key)];
	while (*pp != h)
		pp = &(*pp)->hnext;
	*pp = h->hnext;
	lru_unlink(h);
	h->next = sc->free;
	sc->free = h;
	__atomic_store_n(&sc->used, sc->used - 1, __ATOMIC_RELAXED);
}

/* A fresh head for `key`; when the cache is full the least recently
 * written head's stripe is written out first. NULL: out of memory. */
static struct sc_head *head_get(struct eng_array *a, struct eng_scache *sc, uint64_t key)
{
	struct sc_head *h = sc_lookup(sc, key);
	if (h)
		return h;
	while (sc->used >= sc->size && sc->lru.next != &sc->lru) {
		uint64_t before = sc->used;
		sc_writeout_stripe(a, sc->lru.next->key / sc->hpc, SC_WHY_EVICT);
		if (sc->used >= before) /* cannot happen: a write-out releases */
			return NULL;
	}
	h = sc->free;
	if (!h)
		return NULL; /* cannot happen: size heads exist, fewer are used */
	sc->free = h->next;
	h->key = key;
	h->nfull = 0;
	memset(h->dirty, 0, (size_t)sc->k);
	unsigned b = bucket(sc, key);
	h->hnext = sc->hash[b];
	sc->hash[b] = h;
	lru_push_newest(sc, h);
	__atomic_store_n(&sc->used, sc->used + 1, __ATOMIC_RELAXED);
	return h;
}

/* Member reads a write of [r0, r1) of one stripe would make straight
 * through (the choice engine/raid456/stripe.c's write_stripe makes on a healthy array). */
static uint64_t direct_reads(const struct eng_array *a, const struct eng_scache *sc, uint64_t r0,
                             uint64_t r1)
{
	uint64_t chunk = a->geo.chunk_sectors;
	uint64_t di0 = r0 / chunk, di1 = (r1 - 1) / chunk;
	uint64_t npar = (uint64_t)eng_nparity(a), k = (uint64_t)sc->k;
	uint64_t touched = di1 - di0 + 1, covered = 0;
	if (di0 == di1) {
		covered = 1; /* over the rows it spans */
	} else {
		for (uint64_t di = di0; di <= di1; di++)
			covered += r0 <= di * chunk && (di + 1) * chunk <= r1;
	}
	uint64_t uncovered = k - covered;
	if (uncovered == 0)
		return 0;
	return touched + npar < uncovered ? touched + npar : uncovered;
}

/* Cache [r0, r1) of stripe s (relative sectors) from src. */
static int cache_piece(struct eng_array *a, struct eng_scache *sc, uint64_t s, uint64_t r0,
                       uint64_t r1, const uint8_t *src)
{
	uint64_t chunk = a->geo.chunk_sectors, hs = sc->hs;
	uint8_t full_mask = (uint8_t)((1u << hs) - 1);
	uint64_t now = eng_now_ns();
	bool completed = false;
	sc->reads_direct += direct_reads(a, sc, r0, r1);
	sc->write_sectors += r1 - r0;
	for (uint64_t r = r0; r < r1;) {
		uint64_t di = r / chunk, co = r % chunk;
		uint64_t j = co % hs, n = hs - j;
		if (n > r1 - r)
			n = r1 - r;
		struct sc_head *h = head_get(a, sc, s * sc->hpc + co / hs);
		if (!h)
			return -ENOMEM;
		memcpy(h->data + ((size_t)di * hs + j) * 512, src + (r - r0) * 512, n * 512);
		uint8_t was = h->dirty[di];
		h->dirty[di] |= (uint8_t)(((1u << n) - 1) << j);
		if (was != full_mask && h->dirty[di] == full_mask && ++h->nfull == (unsigned)sc->k)
			completed = true;
		h->touched_ns = now;
		lru_unlink(h);
		lru_push_newest(sc, h);
		r += n;
	}
	/* A stripe whose every head is complete goes out at once, as one
	 * full-stripe write. */
	if (completed) {
		for (uint64_t t = 0; t < sc->hpc; t++) {
			struct sc_head *h = sc_lookup(sc, s * sc->hpc + t);
			if (!h || h->nfull != (unsigned)sc->k)
				return 0;
		}
		sc_writeout_stripe(a, s, SC_WHY_FULL);
	}
	return 0;
}

/* Drop the heads of stripes [s0, s0+n): a whole-stripe write replaces
 * every byte they hold. */
static void drop_stripes(struct eng_scache *sc, uint64_t s0, uint64_t n)
{
	for (uint64_t s = s0; s < s0 + n && sc->used; s++)
		for (uint64_t t = 0; t < sc->hpc; t++) {
			struct sc_head *h = sc_lookup(sc, s * sc->hpc + t);
			if (h)
				sc_release(sc, h);
		}
}

void eng_scache_drop(struct eng_array *a, uint64_t s0, uint64_t n)
{
	if (a->sc)
		drop_stripes(a->sc, s0, n);
}

#define FULL_MAX 16 /* whole stripes per direct write */

int eng_scache_write(struct eng_array *a, const struct eng_req *rq, const uint8_t *buf,
                     uint64_t lsec, uint64_t nsec)
{
	struct eng_scache *sc = a->sc;
	uint64_t width = sc->width;
	while (nsec) {
		uint64_t s = lsec / width, r0 = lsec % width;
		int rc;
		uint64_t n;
		if (r0 == 0 && nsec >= width) {
			uint64_t ns = nsec / width < FULL_MAX ? nsec / width : FULL_MAX;
			drop_stripes(sc, s, ns);
			rc = eng_write_full_stripes(a, rq, s, (int)ns, buf);
			n = ns * width;
		} else {
			n = width - r0 < nsec ? width - r0 : nsec;
			rc = cache_piece(a, sc, s, r0, r0 + n, buf);
		}
		if (rc < 0)
			return rc;
		buf += n * 512;
		lsec += n;
		nsec -= n;
	}
	return 0;
}

void eng_scache_overlay(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	struct eng_scache *sc = a->sc;
	if (!sc || __atomic_load_n(&sc->used, __ATOMIC_RELAXED) == 0)
		return;
	uint64_t chunk = a->geo.chunk_sectors, hs = sc->hs, hits = 0;
	for (uint64_t l = lsec; l < lsec + nsec;) {
		uint64_t s = l / sc->width, r = l % sc->width;
		uint64_t di = r / chunk, co = r % chunk, j = co % hs, n = hs - j;
		if (n > lsec + nsec - l)
			n = lsec + nsec - l;
		const struct sc_head *h = sc_lookup(sc, s * sc->hpc + co / hs);
		for (uint64_t i = 0; h && i < n; i++) {
			if (!(h->dirty[di] >> (j + i) & 1))
				continue;
			memcpy(buf + (l - lsec + i) * 512, h->data + (di * hs + j + i) * 512, 512);
			hits++;
		}
		l += n;
	}
	if (hits)
		__atomic_add_fetch(&sc->read_hits, hits, __ATOMIC_RELAXED);
}

bool eng_scache_holds(const struct eng_array *a, uint64_t s0, uint64_t s1)
{
	const struct eng_scache *sc = a->sc;
	if (!sc || __atomic_load_n(&sc->used, __ATOMIC_RELAXED) == 0)
		return false;
	for (uint64_t s = s0; s < s1; s++)
		for (uint64_t t = 0; t < sc->hpc; t++)
			if (sc_lookup(sc, s * sc->hpc + t))
				return true;
	return false;
}
