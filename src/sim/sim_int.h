/* Internals of the simulated member: the pure timing model (no locks, no
 * sleeping, no data) and the bus slots. Times are model nanoseconds as
 * doubles, offsets bytes. */
#ifndef URAID_SIM_INT_H
#define URAID_SIM_INT_H

#include "sim/member_sim.h"

#include <pthread.h>

/* Fill `bytes` into the bus's slots from model time `start`, at most
 * `rate` bytes/ns (the link) for this transfer. With src_rate > 0 the bytes
 * only exist from `src_start` on, at src_rate (a media read filling the
 * drive's buffer): none moves before it exists, the backlog moves at link
 * rate. src_rate <= 0: all bytes are buffered already. Returns the model time
 * the last byte crossed. Thread safe. The drive's buffer is taken to hold
 * one command's backlog (commands here are at most a few MiB). */
double sim_bus_fill(struct sim_bus *bus, double start, double bytes, double rate, double src_start,
                    double src_rate);
/* Attach a member (its time_scale must match the bus's first member's);
 * returns the bus epoch (CLOCK_MONOTONIC ns) or -EINVAL. */
int sim_bus_attach(struct sim_bus *bus, double time_scale, uint64_t *epoch_ns);
void sim_bus_detach(struct sim_bus *bus);
void sim_bus_note(struct sim_bus *bus, double completion);

/* A parallel ATA channel: free from `free_at` on (model ns). Members lock
 * it inside their own lock, around the modelling of one command. */
struct sim_channel {
	pthread_mutex_t lock;
	double free_at;
	uint64_t waits; /* commands that found it taken */
};

/* Members on the virtual clock (sim_clock.c): the calling thread's arrival
 * time, and a completion that moves it. batch: requests of one member_ioq
 * batch all arrive at the same time; sim_clock_commit (at the batch's end)
 * moves the time to the latest of their completions. */
double sim_clock_arrival(struct sim_clock *c, bool batch);
void sim_clock_complete(struct sim_clock *c, double done, bool batch);
void sim_clock_commit(struct sim_clock *c);

/* Geometry derived from a profile, in bytes and ns. */
struct sim_geom {
	double span;       /* modelled disk size */
	double ro, ri;     /* media rate at offset 0 / at span, bytes per ns */
	double period;     /* one revolution; 0 = no platter */
	double seek_track; /* seek to a neighbouring track */
	double seek_full;  /* full stroke, from the average via the sqrt curve */
	double overhead;   /* per command */
	double iface;      /* link rate, bytes per ns */
	double segment;    /* read-ahead bytes */
	unsigned nsegs;    /* kept segments */
	double wcache;     /* write cache bytes; 0 = off */
};

struct sim_seg {
	double start, end;
	uint64_t used; /* LRU stamp */
};

struct sim_dirty {
	double done; /* drained to the media at */
	double bytes;
};

struct sim_model {
	struct sim_geom g;
	struct sim_bus *bus; /* may be NULL */
	/* Head: `pos` once the committed work ends at `busy_until`; if
	 * `streaming`, it then keeps reading from pos towards `ra_limit`, the
	 * running segment beginning at `seg_start`. */
	double pos, busy_until, seg_start, ra_limit;
	bool streaming;
	double drain_until; /* last write-cache drain completes */
	double link_free;   /* the member's link is busy until (one transfer at a time) */
	struct sim_seg *segs;
	unsigned nsegs_used;
	uint64_t stamp;
	struct sim_dirty *dirty; /* ring of cached writes not yet on the media */
	size_t dhead, dlen, dcap;
	double dirty_bytes;
	struct sim_stats st;
};

void sim_geom_init(struct sim_geom *g, const struct sim_profile *p, uint64_t member_size);
/* Media transfer time over [a, b) (zoned rate integrated exactly). */
double sim_xfer_ns(const struct sim_geom *g, double a, double b);
/* Where a head streaming from `a` is after `ns`. */
double sim_advance(const struct sim_geom *g, double a, double ns);
double sim_seek_ns(const struct sim_geom *g, double from, double to);
/* Rotational wait for a head arriving at time t to reach the angle of `a`. */
double sim_rot_wait(const struct sim_geom *g, double t, double a);

int sim_model_init(struct sim_model *s, const struct sim_profile *p, uint64_t member_size,
                   struct sim_bus *bus);
void sim_model_free(struct sim_model *s);
/* Account one command arriving at model time t; return its completion. */
double sim_model_read(struct sim_model *s, double t, double off, double len);
double sim_model_write(struct sim_model *s, double t, double off, double len, bool fua);
double sim_model_flush(struct sim_model *s, double t);
/* Head position after the committed work and any read-ahead until t (the
 * elevator sorts from there). */
double sim_model_head(const struct sim_model *s, double t);

#endif
