/* Running FreeBSD GEOM arrays (gmirror and graid3) and the pure read
 * balance policy of gmirror. See src/meta/geom.h for the on-disk metadata. */
#ifndef URAID_ENGINE_GEOM_H
#define URAID_ENGINE_GEOM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meta/geom.h"

struct member;

#define GEOM_MAX_DISKS 32

/* I/O queues for batches that reach several components at once (a graid3
 * stripe, a gmirror split read, a mirrored write), kept for reuse; one per
 * request in flight (geom/common.c). */
#define GEOM_IOQ_POOL 8
struct member_ioq;
struct geom_ioq_pool {
	pthread_mutex_t mu;
	int n;
	struct member_ioq *q[GEOM_IOQ_POOL];
};

/* ---- Balance policy: state in, member index (or pieces) out; no I/O. ----
 *
 * load:        score = decaying average of each disk's in-flight count
 *              (x GEOM_LOAD_SCALE), minus a bonus when the disk's head
 *              (end of its last request) is exactly at the request start
 *              (2 x scale) or within GEOM_TRACK_BYTES of it (1 x scale);
 *              the lowest score wins, ties go to the lowest index. After
 *              each choice every disk's average moves 1/8 of the way toward
 *              its current in-flight count.
 * prefer:      the active disk with the biggest priority (gmirror(8)),
 *              ties to the lowest index.
 * round-robin: active disks in turn.
 * split:       requests longer than `slice` bytes are cut into one piece
 *              per active disk, each a whole number of sectors (the last
 *              takes the rest); shorter ones go round-robin. */
#define GEOM_LOAD_SCALE  256
#define GEOM_TRACK_BYTES (1024 * 1024)

struct geom_bal_disk {
	bool active;
	uint8_t priority;
	uint64_t head;     /* byte offset where its last request ended */
	unsigned inflight; /* requests issued and not yet done */
	uint32_t load;     /* decaying in-flight average x GEOM_LOAD_SCALE */
};

struct geom_bal {
	int balance; /* enum geom_balance */
	uint32_t slice;
	uint32_t sectorsize;
	int ndisks;
	int rr_next;
	struct geom_bal_disk d[GEOM_MAX_DISKS];
};

struct geom_piece {
	int disk;
	uint64_t off, len;
};

/* Choose where to read [off, off+len). Fills out[] (room for ndisks
 * pieces), marks each chosen disk in flight, returns the number of pieces,
 * or -EIO when no disk is active. */
int geom_bal_choose(struct geom_bal *b, uint64_t off, uint64_t len, struct geom_piece *out);
/* A piece finished: its disk is no longer in flight. */
void geom_bal_done(struct geom_bal *b, int disk);

/* ---- Running gmirror ---- */

enum geom_disk_state {
	GEOM_DISK_ACTIVE = 0,
	GEOM_DISK_SYNCING, /* being synchronized; holds data below sync_offset */
	GEOM_DISK_STALE,   /* out of date, waits for a rebuild (-n / autosync off) */
	GEOM_DISK_FAILED,
	GEOM_DISK_NONE,     /* empty slot */
	GEOM_DISK_INACTIVE, /* gmirror deactivate: connected, never used, metadata kept */
};

struct geom_mirror_disk {
	struct member *m;
	struct geom_mirror_md md; /* last metadata written/read */
	enum geom_disk_state state;
	uint64_t reads; /* pieces served (for status and tests) */
};

struct geom_mirror {
	pthread_mutex_t lock;    /* state: disks, balance, metadata */
	pthread_rwlock_t iolock; /* shared by reads in flight, exclusive for remove */
	char name[17];
	uint32_t mid;
	uint64_t mediasize;
	uint32_t sectorsize;
	uint64_t mflags;
	uint32_t genid, syncid;
	bool dirty;             /* DIRTY written to the disks since open */
	uint64_t last_write_ns; /* CLOCK_MONOTONIC of the last write (idle marking) */
	bool bump_syncid; /* started without all disks: first write makes the absent ones stale */
	bool rdonly;
	bool destroyed; /* metadata cleared (destroy): nothing is written any more */
	int ndisks;     /* connected disks in disk[] */
	int all;        /* disks the metadata counts (md_all): absent ones may come back */
	struct geom_mirror_disk disk[GEOM_MAX_DISKS];
	struct geom_bal bal;
	int md_balance; /* balance stored on disk (bal.balance may be a session override) */
	struct geom_ioq_pool ioqs;
	/* Optional trace hook (tests, bench): called for each piece read. */
	void (*trace)(void *ctx, int disk, uint64_t off, uint64_t len);
	void *trace_ctx;
};

struct geom_label_opts {
	const char *name;
	int balance;        /* enum geom_balance; 0 = load */
	uint32_t slice;     /* 0 = 4096 */
	bool nofailsync;    /* -F */
	bool noautosync;    /* -n */
	bool hardcode;      /* -h: store provider names */
	bool round_robin;   /* graid3 -r */
	bool verify;        /* graid3 -w */
	uint32_t blocksize; /* graid3 -s: provider sector size, 0 = default */
};

/* Label: write metadata to every member (all assumed in sync, as gmirror
 * label does). Checks everything before writing anything. */
int geom_mirror_label(const struct geom_label_opts *o, struct member **m, int n, char *err,
                      size_t errlen);
/* Open a mirror from members (any order); takes ownership of all members
 * on success and on failure. Stale members (older genid) are refused with a
 * warning; members with an older syncid or an unfinished sync are
 * synchronized (unless NOAUTOSYNC: then left STALE). After an unclean stop
 * (DIRTY) all but the master are resynchronized unless NOFAILSYNC. */
int geom_mirror_open(struct member **m, int n, bool rdonly, struct geom_mirror **out, char *err,
                     size_t errlen, char *warn, size_t warnlen);
int geom_mirror_read_at(struct geom_mirror *g, void *buf, size_t len, uint64_t off);
int geom_mirror_write_at(struct geom_mirror *g, const void *buf, size_t len, uint64_t off);
/* BIO_DELETE: every copy's range zeroed (member_write_zeroes flags). */
int geom_mirror_zero_at(struct geom_mirror *g, uint64_t off, uint64_t len, unsigned mflags);
int geom_mirror_flush(struct geom_mirror *g);
/* Copy up to `bytes` more onto every SYNCING disk; returns 1 while work
 * remains, 0 when all are in sync (their metadata updated), <0 on error. */
int geom_mirror_sync_step(struct geom_mirror *g, uint64_t bytes);
/* Change balance/slice (running or not) and write the metadata. */
int geom_mirror_configure(struct geom_mirror *g, int balance, uint32_t slice, char *err,
                          size_t errlen);
int geom_mirror_set_priority(struct geom_mirror *g, int disk, uint8_t prio, char *err,
                             size_t errlen);
/* Fail a disk (I/O error path and tests): it stops serving, genid bumps. */
void geom_mirror_fail_disk(struct geom_mirror *g, int disk);
/* Insert a new member: it gets metadata and is synchronized (SYNCING). */
int geom_mirror_insert(struct geom_mirror *g, struct member *m, uint8_t prio, char *err,
                       size_t errlen);
/* Remove disk i: its metadata is cleared, the others' disk count drops. */
int geom_mirror_remove(struct geom_mirror *g, int disk, char *err, size_t errlen);
/* Mark a STALE disk for synchronization (gmirror rebuild). */
int geom_mirror_rebuild(struct geom_mirror *g, int disk, char *err, size_t errlen);
/* geom/mirror_ctl.c: the rest of gmirror(8)'s verbs on an open mirror. */
/* Device flags (NOAUTOSYNC, NOFAILSYNC): turning autosync on starts the
 * synchronization of STALE disks. */
int geom_mirror_set_flags(struct geom_mirror *g, uint64_t set, uint64_t clear, char *err,
                          size_t errlen);
/* deactivate: the disk stays connected with the INACTIVE flag and is not
 * used; the syncid moves on so it is synchronized when activated again. The
 * last active disk is refused. */
int geom_mirror_deactivate(struct geom_mirror *g, int disk, char *err, size_t errlen);
/* activate: an INACTIVE disk is synchronized (STALE with autosync off). */
int geom_mirror_activate(struct geom_mirror *g, int disk, char *err, size_t errlen);
/* forget: absent disks are dropped from the count (md_all = connected). */
int geom_mirror_forget(struct geom_mirror *g, char *err, size_t errlen);
/* resize: new provider size in bytes, 0 = the largest every component holds
 * (its size less the metadata sector). */
int geom_mirror_resize(struct geom_mirror *g, uint64_t size, char *err, size_t errlen);
/* destroy: clear the metadata of every connected disk; afterwards reads and
 * writes fail with -ENXIO and close writes nothing. */
int geom_mirror_destroy(struct geom_mirror *g, char *err, size_t errlen);
/* Close without writing metadata (as a crash would leave the disks). */
void geom_mirror_drop(struct geom_mirror *g);
/* Idle marking (see geom_array_idle). */
int geom_mirror_idle(struct geom_mirror *g, uint64_t idle_ns);
/* Clean stop: DIRTY cleared, members closed, g freed. */
int geom_mirror_close(struct geom_mirror *g);

/* ---- Running graid3 ---- */

struct geom_raid3_comp {
	struct member *m; /* NULL when missing */
	struct geom_raid3_md md;
	enum geom_disk_state state;
};

struct geom_raid3 {
	pthread_mutex_t lock;    /* state: components, flags, metadata */
	pthread_rwlock_t iolock; /* shared by reads in flight, exclusive for insert/remove */
	char name[17];
	uint32_t id;
	int ncomp; /* components, the last one parity */
	uint32_t psector;
	uint64_t mediasize;
	uint64_t mflags; /* GEOM_RAID3_DEV_* */
	uint32_t genid, syncid;
	bool dirty, rdonly;
	uint64_t last_write_ns; /* CLOCK_MONOTONIC of the last write (idle marking) */
	bool bump_syncid;       /* started degraded: first write makes the absent component stale */
	unsigned rr_next;       /* -r: data component to skip next */
	uint64_t parity_errors; /* -w: reads refused for a parity mismatch */
	struct geom_ioq_pool ioqs;
	struct geom_raid3_comp c[GEOM_MAX_DISKS + 1];
};

/* Label components c[0..n) in order (the last is parity). -r and -w in
 * o->round_robin / o->verify (refused together); o->blocksize is the
 * provider sector (default: component sector x (n - 1)). */
int geom_raid3_label(const struct geom_label_opts *o, struct member **m, int n, char *err,
                     size_t errlen);
/* Open from members in any order (ownership passes, as for the mirror);
 * one component may be missing or stale (degraded). */
int geom_raid3_open(struct member **m, int n, bool rdonly, struct geom_raid3 **out, char *err,
                    size_t errlen, char *warn, size_t warnlen);
/* Offsets and lengths must be multiples of the provider sector. Reads
 * return -EIO on a parity mismatch under VERIFY (counted). */
int geom_raid3_read_at(struct geom_raid3 *g, void *buf, size_t len, uint64_t off);
int geom_raid3_write_at(struct geom_raid3 *g, const void *buf, size_t len, uint64_t off);
/* BIO_DELETE: every component's span zeroed (member_write_zeroes flags). */
int geom_raid3_zero_at(struct geom_raid3 *g, uint64_t off, uint64_t len, unsigned mflags);
int geom_raid3_flush(struct geom_raid3 *g);
/* Rebuild up to `bytes` of component data onto the SYNCING component:
 * 1 while work remains, 0 when done, <0 on error. */
int geom_raid3_sync_step(struct geom_raid3 *g, uint64_t bytes);
/* Set/clear -r / -w (refused together), -F, -n. */
int geom_raid3_configure(struct geom_raid3 *g, uint64_t set, uint64_t clear, char *err,
                         size_t errlen);
void geom_raid3_fail(struct geom_raid3 *g, int no);
/* Put a member into the missing slot `no`, to be rebuilt (SYNCING). */
int geom_raid3_insert(struct geom_raid3 *g, int no, struct member *m, char *err, size_t errlen);
/* Clear component `no`'s metadata and drop it (degraded). */
int geom_raid3_remove(struct geom_raid3 *g, int no, char *err, size_t errlen);
/* Mark component `no` for rebuild from the others. */
int geom_raid3_rebuild(struct geom_raid3 *g, int no, char *err, size_t errlen);
int geom_raid3_close(struct geom_raid3 *g);
/* Close without writing metadata (as a crash would leave the components). */
void geom_raid3_drop(struct geom_raid3 *g);
int geom_raid3_idle(struct geom_raid3 *g, uint64_t idle_ns);

/* ---- One handle for either class (export plugin, bench, CLI cat/write) ----
 * geom_array_open reads the last sector of the first path: gmirror or
 * graid3 metadata opens that class (all paths are its components, any
 * order); anything else is -ENOENT ("not a GEOM array"), so a caller can
 * try md next. flags: URAID_RDONLY, URAID_DIRECT (include/uraid.h).
 * balance >= 0 overrides a mirror's stored algorithm for this session only
 * (not written to disk); -1 keeps it. Pending synchronization is left to
 * geom_array_sync_step. */
enum geom_kind { GEOM_KIND_NONE = 0, GEOM_KIND_MIRROR, GEOM_KIND_RAID3 };
struct geom_array {
	enum geom_kind kind;
	struct geom_mirror *mirror;
	struct geom_raid3 *raid3;
	uint64_t size;      /* provider bytes */
	uint32_t blocksize; /* provider sector: I/O must be multiples of it */
};
int geom_detect(const char *path, enum geom_kind *kind, char *err, size_t errlen);
int geom_array_open(const char *const *paths, int n, unsigned flags, int balance,
                    struct geom_array **out, char *err, size_t errlen, char *warn, size_t warnlen);
/* The same over opened members (e.g. wrapped in member_sim or the fault
 * wrapper); takes ownership of them, on failure too. */
int geom_array_open_members(struct member **m, int n, unsigned flags, int balance,
                            struct geom_array **out, char *err, size_t errlen, char *warn,
                            size_t warnlen);
int geom_array_read(struct geom_array *a, void *buf, size_t len, uint64_t off);
int geom_array_write(struct geom_array *a, const void *buf, size_t len, uint64_t off);
int geom_array_flush(struct geom_array *a);
int geom_array_zero(struct geom_array *a, uint64_t off, uint64_t len, unsigned mflags);
int geom_array_sync_step(struct geom_array *a, uint64_t bytes);
/* gmirror's idle marking: after idle_ns without writes, flush and clear
 * DIRTY in the metadata so a crash later needs no resynchronization.
 * Returns 1 when it marked the device clean, 0 otherwise. */
int geom_array_idle(struct geom_array *a, uint64_t idle_ns);
int geom_array_close(struct geom_array *a);

#endif
