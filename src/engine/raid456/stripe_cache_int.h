/* Stripe cache internals shared by engine/raid456/stripe_cache.c (heads, filling, reads)
 * and engine/raid456/stripe_cache_out.c (write-out, idle thread, size, counters). */
#ifndef URAID_ENGINE_STRIPE_CACHE_INT_H
#define URAID_ENGINE_STRIPE_CACHE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/raid456/stripe_cache.h"

/* One stripe head: rows [t*hs, t*hs+hs) of every data block of a stripe. */
struct sc_head {
	uint64_t key;                /* stripe * hpc + t */
	struct sc_head *hnext;       /* hash chain */
	struct sc_head *prev, *next; /* LRU, oldest first (free list: next only) */
	uint64_t touched_ns;         /* last write into it */
	unsigned nfull;              /* data blocks whose every sector is cached */
	uint8_t *data;               /* k blocks of hs sectors, by data index */
	uint8_t *dirty;              /* per data index: bit j = sector j cached */
};

enum sc_why { SC_WHY_FULL, SC_WHY_EVICT, SC_WHY_IDLE, SC_WHY_DRAIN };

struct eng_scache {
	unsigned size, used; /* heads allowed / holding data (used: atomic reads) */
	unsigned requested;  /* the size asked for; size is capped at the heads the array has */
	uint64_t hs;         /* sectors per head per member: 8 (4 KiB), less for tiny chunks */
	uint64_t hpc;        /* heads per stripe (chunk / hs) */
	int k;               /* data blocks per stripe */
	uint64_t width;      /* logical sectors per stripe */
	unsigned nbuckets;   /* power of two */
	struct sc_head **hash;
	struct sc_head lru; /* sentinel */
	struct sc_head *free;
	/* All heads and their memory, allocated (and touched) when the size
	 * is set, as md does: no allocation or first-touch fault on the write
	 * path. */
	struct sc_head *heads;
	uint8_t *mem, *dirty_mem;
	int error; /* first write-out error since the last drain */
	uint64_t write_sectors, read_hits, full_runs, rmw_runs, rcw_runs, evicted, idle;
	uint64_t reads_direct, reads_writeout;
	/* idle write-out thread */
	pthread_t thr;
	bool thr_running, thr_stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

struct sc_head *sc_lookup(const struct eng_scache *sc, uint64_t key);
/* Unhash a head and put it on the free list. */
void sc_release(struct eng_scache *sc, struct sc_head *h);
/* Write out (and release) every cached head of stripe s. Errors are kept
 * in sc->error. Caller holds eng_lock. */
void sc_writeout_stripe(struct eng_array *a, uint64_t s, enum sc_why why);

#endif
