/* Simulated disks: a member wrapper that stores data in an inner member and
 * models only the timing of a disk (or SSD) and of the controller it hangs on,
 * so a benchmark on one machine shows what real spindles would do.
 *
 * The model, per member: sustained media rate (optionally zoned: linear from
 * the outer rate at offset 0 to the inner rate at the modelled disk's end),
 * a distance-dependent seek t(d) = t_track + (t_full - t_track) * sqrt(d / D)
 * with t_full chosen so the average over random position pairs equals the
 * profile's average seek (E[sqrt(|u - v|)] = 8/15 for uniform u, v), a
 * rotating platter (the angle of each byte is fixed by the transfer time from
 * offset 0, so a waiting head really loses the revolution), per-command
 * overhead, a read-ahead cache (after a media read the head keeps streaming
 * up to one segment ahead; the last `cache_segments` segments stay cached), a
 * write cache (on: writes complete at interface speed and drain in the
 * background in arrival order, a full cache throttles, flush waits for the
 * drain; off: writes pay the mechanics) and an elevator over a batch of
 * requests (member_ioq; queue_depth commands visible at once).
 *
 * The member's byte range is the start of the modelled disk; when the profile
 * has no capacity the member is the whole disk (a small test member then
 * behaves like a full-size one: random offsets cost average seeks).
 *
 * A shared bus (struct sim_bus) caps the sum of all its members' transfers:
 * model time is cut into 100 us slots, each with room for rate * 100 us bytes;
 * a transfer fills slots from its start at no more than its own rate. Members
 * proceed in parallel; each member's mechanics are serialised (one head).
 *
 * Time: every member keeps a model clock in nanoseconds. With time_scale N > 0
 * model time is real time (CLOCK_MONOTONIC since the bus or member was made)
 * times N, and a request returns when real time reaches its modelled
 * completion divided by N (what attaching a simulated array under a real file
 * system needs). With time_scale 0 ("virtual time") nothing sleeps: the
 * members share one virtual clock (struct sim_clock, a discrete-event
 * scheduler): a request arrives at the calling actor's time and moves that
 * time to its completion; actors (threads registered with the clock) take
 * turns, the earliest first, each only while all others wait on the clock.
 * Runs then take as long as their computation and give the same figures bit
 * for bit whatever the host's load. A member opened without a clock gets a
 * private one (its requests queue one after another, as before).
 */
#ifndef URAID_MEMBER_SIM_H
#define URAID_MEMBER_SIM_H

#include "member/member.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_NAME_MAX 64
#define SIM_DESC_MAX 256

/* Rates are MB/s with MB = 10^6 bytes, as drive data sheets give them. */
struct sim_profile {
	char name[SIM_NAME_MAX];
	char description[SIM_DESC_MAX]; /* the kind of drive the figures describe */
	double rate_outer_mbs;          /* sustained media rate at offset 0 */
	double rate_inner_mbs;          /* at the modelled disk's end (= outer: not zoned) */
	double rpm;                     /* 0: no platter (solid state) */
	double seek_track_ms;           /* track-to-track seek */
	double seek_avg_ms;             /* average over random position pairs */
	double overhead_us;             /* per command (controller, firmware) */
	double interface_mbs;           /* link rate: cache hits, cached writes */
	unsigned cache_segments;        /* read-ahead segments kept; 0 = no read-ahead */
	uint64_t segment_bytes;         /* read-ahead length of one segment */
	bool write_cache;               /* writes complete once in the cache */
	uint64_t write_cache_bytes;     /* its size */
	unsigned queue_depth;           /* commands the elevator sees at once; 1 = FIFO */
	uint64_t capacity_bytes;        /* modelled disk; 0 = the member is the whole disk */
	/* Parallel ATA: disks that share one channel (master and slave) when
	 * attached as a PC attaches them; a channel carries one command at a
	 * time, from its start to its completion (struct sim_channel). 0: a
	 * link of its own (SATA, SAS, NVMe). */
	unsigned channel_disks;
};

/* Built-in profiles: "ide-2002", "sata-7200-2007", "raptor-10k-2008",
 * "ssd-sata", "nvme", and the disks of the published tables: "wd2500js",
 * "wd5000aaks", "wd-velociraptor-300", "wd5001abys", "ide-7mbs-2002". NULL
 * (errno ENOENT) for an unknown name. */
const struct sim_profile *sim_profile_find(const char *name);
/* Names of the built-in profiles, NULL-terminated. */
const char *const *sim_profile_names(void);

/* Range and consistency checks (what sim_profile_parse and member_sim_open
 * apply): -EINVAL with a message naming the field. */
int sim_profile_check(const struct sim_profile *p, char *err, size_t errlen);

/* The key = value format, one setting a line, '#' starts a comment:
 *   base = sata-7200-2007     (optional, first: start from a built-in)
 *   name = my-disk
 *   description = free text
 *   rate_mbs = 75             (sets outer and inner: not zoned)
 *   rate_outer_mbs = 75       rate_inner_mbs = 40
 *   rpm = 7200                seek_avg_ms = 8.5        seek_track_ms = 0.8
 *   overhead_us = 100         interface_mbs = 300
 *   cache_segments = 16       segment_kib = 512
 *   write_cache = on|off      write_cache_kib = 8192
 *   queue_depth = 32          capacity_mib = 0
 * Parsing is strict: an unknown or repeated key, a bad or out-of-range number,
 * a missing '=' give -EINVAL and a message "ORIGIN:LINE: ...". Without
 * `base`, rate (rate_mbs or rate_outer_mbs) is required; the rest defaults to
 * a solid-state device with no caches. */
int sim_profile_parse(const char *text, const char *origin, struct sim_profile *out, char *err,
                      size_t errlen);
int sim_profile_parse_file(const char *path, struct sim_profile *out, char *err, size_t errlen);
/* What --disk-model takes: a built-in name, else a model file's path.
 * Messages name the file and line, or say the name is neither. */
int sim_profile_load(const char *name_or_path, struct sim_profile *out, char *err, size_t errlen);
/* Write `p` in the format above (every key, no base). Returns the length, or
 * -ENOSPC when `len` is too small. */
int sim_profile_format(const struct sim_profile *p, char *buf, size_t len);

/* A controller/bus shared by members: total transfer rate rate_mbs. Thread
 * safe. Destroy it after closing all its members. */
struct sim_bus;
int sim_bus_create(double rate_mbs, struct sim_bus **out, char *err, size_t errlen);
void sim_bus_destroy(struct sim_bus *bus);
/* Latest modelled completion among the bus's members (ns). */
uint64_t sim_bus_model_ns(struct sim_bus *bus);
uint64_t sim_bus_bytes(struct sim_bus *bus); /* bytes moved over the bus */

/* A parallel ATA channel (sim_bus.c): the disks on it (master, slave) have
 * no overlapped or queued commands, so the channel is taken by one command
 * from when it starts until it completes (a write into a full cache holds
 * it while the cache drains; a flush until the cache is empty), as Linux's
 * IDE driver serialises a channel's requests (one hwgroup). Thread safe;
 * destroy it after closing its members. */
struct sim_channel;
int sim_channel_create(struct sim_channel **out);
void sim_channel_destroy(struct sim_channel *c);
/* Put simulated member m on channel c (NULL: off it), before its first
 * request; -EINVAL when m is not a simulated member. */
int member_sim_set_channel(struct member *m, struct sim_channel *c);

/* The shared virtual clock (sim_clock.c). Create one per set of members that
 * a run compares (all members of an array, its bus); destroy it after
 * closing them. Actors: sim_clock_actor_add (from the thread that starts
 * them, in a fixed order: the order breaks ties), sim_clock_bind from the
 * actor's own thread, then sim_clock_wait(at) before each step: it returns
 * (the actor's time set to `at`, never earlier than any actor went on at)
 * once every other actor waits too and none waits for an earlier time.
 * Between waits the actor runs alone; its requests to members on the clock
 * arrive at its time and advance it. sim_clock_actor_done(end) ends it; the
 * clock's own time (threads that are no actor) moves to the latest end. An
 * actor must not block on anything but the clock while others wait on it. */
struct sim_clock;
struct sim_actor;
int sim_clock_create(struct sim_clock **out);
void sim_clock_destroy(struct sim_clock *c);
int sim_clock_actor_add(struct sim_clock *c, struct sim_actor **out);
void sim_clock_bind(struct sim_clock *c, struct sim_actor *a);
double sim_clock_wait(struct sim_clock *c, struct sim_actor *a, double at);
void sim_clock_actor_done(struct sim_clock *c, struct sim_actor *a, double end);
/* While it runs (between waits): set its time back or on, to no earlier than
 * the time it went on at (requests issued together, all at that time). */
void sim_clock_set(struct sim_clock *c, struct sim_actor *a, double at);
/* Model ns now for the calling thread: its actor's time, else the clock's. */
double sim_clock_now(struct sim_clock *c);

/* Wrap `inner` (which then belongs to the simulated member, also on
 * failure-free close) in the model of `p`. `bus` may be NULL (no shared
 * limit). time_scale: 0 = virtual time, N > 0 = N times faster than the
 * modelled disk. All members of one bus must use the same time_scale.
 * On failure `inner` stays the caller's. */
int member_sim_open(struct member *inner, const struct sim_profile *p, struct sim_bus *bus,
                    double time_scale, struct member **out, char *err, size_t errlen);
/* The same on a shared virtual clock (time_scale 0; NULL: a private one). */
int member_sim_open_clock(struct member *inner, const struct sim_profile *p, struct sim_bus *bus,
                          struct sim_clock *clock, double time_scale, struct member **out,
                          char *err, size_t errlen);

/* Model clock of a simulated member: the latest completion it handed out, in
 * model ns since the bus (or member) was made. 0 for other members. */
uint64_t member_sim_model_ns(struct member *m);

/* Model time now as the member sees it: with a time scale, real time since
 * the bus (or member) was made times the scale; in virtual time, its clock
 * (as member_sim_model_ns). Benchmarks measure model intervals with it. */
uint64_t member_sim_now_ns(struct member *m);

struct sim_stats {
	uint64_t reads, writes, flushes, discards;
	uint64_t bytes_read, bytes_written;
	uint64_t seeks;            /* head movements across tracks */
	uint64_t media_reads;      /* reads that needed the head (positioning) */
	uint64_t cache_hits;       /* reads served from a kept segment */
	uint64_t stream_hits;      /* reads served by the running read-ahead */
	uint64_t cache_waits;      /* writes that waited for room in the write cache */
	double busy_ns;            /* model time the head spent seeking/waiting/transferring */
	double seek_ns, rotate_ns; /* parts of busy_ns */
};
/* -EINVAL when `m` is not a simulated member. */
int member_sim_stats(struct member *m, struct sim_stats *out);

/* A lossless in-memory member for what simulated members store (sim_store.c):
 * each 4 KiB block is its first 8 bytes plus a shared copy of the rest, one
 * copy per distinct content, so stamped benchmark data of many GiB takes a
 * few MiB and no copying of pages nothing reads. `size`: a multiple of 4 KiB.
 * Returns 0 or -EINVAL / -ENOMEM. */
int sim_store_open(const char *name, uint64_t size, struct member **out);
/* Blocks of a store and the distinct copies it keeps; -EINVAL for another
 * kind of member. */
int sim_store_stats(struct member *m, uint64_t *blocks, uint64_t *copies);

#endif
