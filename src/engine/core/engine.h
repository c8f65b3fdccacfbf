/* The core of the md engine: the state of a running md array (struct
 * eng_array) and what every part of the engine builds on: member slots and
 * their I/O (util.c), superblock updates (super.c), failing and dropping
 * members (slot.c), replacements (replace.c), scratch buffers (bufpool.c).
 * The personalities (pers.h), logs (log.h) and the sync scheduler see an
 * array only through this. Everything hangs off struct eng_array; there is
 * no global state.
 *
 * Locking: see struct eng_array.
 */
#ifndef URAID_ENGINE_H
#define URAID_ENGINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/core/class.h"
#include "engine/core/pers.h"
#include "layout/layout.h"
#include "member/member.h"
#include "meta/md_badblocks.h"
#include "meta/md_super.h"
#include "uraid.h"
#include "util/rate_marks.h"

#define ENG_MAX_MEMBERS  LAYOUT_MAX_MEMBERS
#define ENG_POOL_BUFS    16 /* scratch buffers kept per array */
#define ENG_STRIPE_LOCKS 64

struct eng_array;

/* engine/core/bufpool.c: reusable, uninitialised scratch buffers (own mutex, so it can
 * be used without the array lock). */
struct eng_bufpool {
	pthread_mutex_t mu;
	struct {
		void *p;
		size_t cap;
		bool busy;
	} e[ENG_POOL_BUFS];
};
void eng_bufpool_init(struct eng_bufpool *bp);
void eng_bufpool_destroy(struct eng_bufpool *bp);
/* len bytes, page-aligned, contents undefined; NULL on failure. */
void *eng_buf_get(struct eng_array *a, size_t len);
void eng_buf_put(struct eng_array *a, void *p);

struct eng_log_ops;
struct sync_workers;
struct eng_scache;
struct eng_stripe_buf;
struct eng_reshape;

struct eng_member {
	struct member *m;
	struct md_sb sb; /* this member's superblock as last written/read */
	int role;        /* slot, or -1 (spare / not in the array) */
	enum uraid_member_state state;
	/* Left out at assembly (stale, or marked faulty by the others): not
	 * part of the array, never written, no entry in its role table. */
	bool left_out;
	uint64_t recovery_offset; /* sectors of the data area already rebuilt */
	/* Member sector just past the last mirror read sent here (read
	 * balancing; accessed with relaxed atomics, a hint only). */
	uint64_t head;
	/* replace (engine/sync/replace.c): this member is being rebuilt as the
	 * replacement of slot `role` while the slot's member still serves. */
	bool replacement;
	/* Data I/O of the slot goes here when set (a tee that also writes the
	 * slot's replacement); superblock and bitmap I/O always use `m`. */
	struct member *data_m;
	/* The tee itself (engine/sync/replace.c), kept here so it lives exactly as
	 * long as the member: writes go to `m` and to tee_to's member. */
	struct member tee;
	struct eng_member *tee_to;
	int tee_err; /* first write error of tee_to (atomic), 0 = none */
	/* md's bad block log of this member (core/badblocks.c): has_bbl when
	 * the superblock gives it one; bbl.r the ranges never read here
	 * (absolute member sectors), bbl_dirty when they changed since the log
	 * was written. write_error_seen: md's WriteErrorSeen, a write to this
	 * member failed since assembly; from then on a write over a recorded
	 * range no longer clears it. */
	bool has_bbl, bbl_dirty, write_error_seen;
	struct md_bbl bbl;
	/* During a reshape (core/reshape.h): the old and the new data offset
	 * (md's data_offset and new_data_offset); sb.data_offset follows the
	 * view the array is in. */
	uint64_t reshape_doff[2];
	/* When it joined the array, as md binds devices (mdstat lists the
	 * newest first): assembly's order (eng_bind_order), then each add. */
	uint32_t bind_seq;
};

static inline struct member *eng_data_member(const struct eng_member *em)
{
	return em->data_m ? em->data_m : em->m;
}

/* md's per-device flags, from the member's own superblock: WriteMostly
 * (1.x devflags bit 0, 0.90 disk state bit 9) and FailFast (bit 1, 10). */
#define ENG_DEV_WRITEMOSTLY 1u
#define ENG_DEV_FAILFAST    2u
static inline unsigned eng_member_devflags(const struct eng_member *em)
{
	if (em->sb.version == MD_SB_0_90)
		return ((em->sb.v0.this_disk.state >> MD_DISK_WRITEMOSTLY) & 1) |
		       (((em->sb.v0.this_disk.state >> MD_DISK_FAILFAST) & 1) << 1);
	return em->sb.devflags & (ENG_DEV_WRITEMOSTLY | ENG_DEV_FAILFAST);
}
/* Set them in a superblock (both places 0.90 keeps them). */
void eng_sb_set_devflags(struct md_sb *sb, unsigned flags);

/* Locking: `lock` (mutex, with `cond`) serialises writes, sync steps and
 * every state change; those also hold `iolock` exclusively (eng_lock). Reads
 * of a healthy array take only `iolock` shared (engine/fastpath.c), so they run in
 * parallel with each other but never see a state change half done. Order:
 * lock, then iolock. */
struct eng_ioq_node {
	struct member_ioq *q;
	struct eng_ioq_node *next;
};

/* A running md array. The public handle (core/class.h) is embedded: the
 * md class (md_class.c) gets from one to the other with eng_of and &a->h. */
struct eng_array {
	struct uraid_array h;
	pthread_mutex_t lock;
	pthread_rwlock_t iolock;
	pthread_mutex_t ioq_mu;                      /* guards ioq_free */
	pthread_mutex_t stripe_mu[ENG_STRIPE_LOCKS]; /* shared writes: by stripe (region) hash */
	struct eng_ioq_node *ioq_free;
	pthread_cond_t cond; /* sync thread wake-ups / progress */
	bool readonly;
	/* md's read-auto (array_state): read-only until the first write,
	 * which makes it read-write (readonly cleared, sync work resumes). */
	bool ro_auto;
	/* md's sync_action "frozen": no sync work starts or continues until
	 * idle (or check, repair, resync) is requested. */
	bool frozen;
	bool inited;        /* lock and cond initialised */
	uint32_t bind_next; /* the next member's bind_seq */

	struct layout_geometry geo;
	const struct layout_ops *ops;
	const struct eng_pers *pers; /* I/O personality of the level (engine/pers.c) */
	const struct uraid_parity *pp;
	uint64_t array_sectors;
	int ncopies;

	int nmem;
	struct eng_member *mem[ENG_MAX_MEMBERS];
	int slot[LAYOUT_MAX_MEMBERS]; /* role -> index into mem[], -1 when missing */

	struct md_sb ref; /* the array-wide superblock fields (freshest member's copy) */
	uint64_t events;
	bool dirty; /* superblocks say "active" (resync_offset 0) */
	/* A write or superblock update failed on a member the array could not
	 * lose (slot.c): writes refused, reads served, nothing more written. */
	bool broken;
	uint64_t resync_offset; /* MD_RESYNC_NONE when parity/mirrors are known consistent */

	struct member_ioq *ioq;
	/* The log (core/log.h: a write-intent bitmap or a write journal), NULL
	 * if none, and its state; logdev: a member assembly found that holds a
	 * log rather than data (md's journal role), until the log takes it. */
	const struct eng_log_ops *log;
	void *log_state;
	struct eng_member *logdev;
	/* Every member is a tmpfs file: plain synchronous calls instead of the
	 * queue for small batches and for every fast-path batch (io_uring
	 * hands tmpfs I/O to kernel workers; measured 4x fewer 4 KiB IOPS,
	 * docs/PERFORMANCE.md).
	 * URAID_ENGINE_IO=ioq keeps the queue. */
	bool sync_io;
	struct eng_bufpool pool;

	/* sync work */
	enum uraid_sync_action action;
	uint64_t sync_pos,
	    sync_end;        /* sectors: member sectors (parity, raid1) or logical (raid10) */
	uint64_t mismatches; /* sectors, this run */
	uint64_t last_mismatch_cnt;    /* from the last finished check/repair */
	uint64_t speed_min, speed_max; /* KiB/s */
	uint64_t speed_kibs;
	uint64_t speed_t0_ns, speed_pos0;
	/* The job's positions done so far and md's marks over them: the
	 * speed and finish status shows, as /proc/mdstat's (sync.c). */
	uint64_t sync_work;
	struct rate_marks marks;
	bool thread_running, thread_stop;
	pthread_t thread;
	uint64_t persist_ns; /* when progress was last written to the superblocks */
	struct sync_workers
	    *workers;           /* sync/workers.h: the helper worker of this sync job, or NULL */
	uint64_t fg_ios;        /* foreground requests so far (relaxed atomic; sync throttling) */
	uint64_t last_write_ns; /* for marking the array clean after an idle period */

	struct eng_scache *sc;  /* stripe cache (engine/raid456/stripe_cache.h), NULL when off */
	pthread_mutex_t sc_cfg; /* serialises uraid_set_stripe_cache (taken before lock) */
	/* A reshape the kernel left in progress (engine/reshape.h), NULL when
	 * none: requests are split at its position, the locked path only. */
	struct eng_reshape *rs;
	/* Member requests and bytes, reads then writes (relaxed atomics). */
	uint64_t nio_reads, nio_writes, nio_rbytes, nio_wbytes;
	/* array_sectors was set by hand (md's array_size, engine/grow.c):
	 * kept across a size change, never written to a superblock. */
	bool external_size;
};

/* engine/core/util.c */
/* member_ioq_run, or the requests one by one on the calling thread when
 * a->sync_io and the batch is the fast path's (q not a->ioq) or moves at
 * most ENG_SYNC_IO_MAX bytes. */
#define ENG_SYNC_IO_MAX (128u << 10)
void eng_ioq_run(struct eng_array *a, struct member_ioq *q, struct member_io *io, int n);
/* Count member requests for uraid_io_stats. */
void eng_count_io(struct eng_array *a, bool write, uint64_t bytes);
bool eng_members_on_tmpfs(const struct eng_array *a);
void *eng_alloc(size_t len); /* page-aligned, zeroed; NULL on failure */
uint64_t eng_now_ns(void);
bool eng_role_readable(const struct eng_array *a, int role, uint64_t msec, uint64_t nsec);
bool eng_role_writable(const struct eng_array *a, int role);
struct member *eng_role_member(const struct eng_array *a, int role);
void eng_set_io(struct eng_array *a, struct member_io *io, int role, bool write, void *buf,
                uint64_t msec, uint64_t nsec);
int eng_member_io(struct eng_array *a, int role, bool write, void *buf, uint64_t msec,
                  uint64_t nsec);
/* member_write_zeroes of `role`'s member sectors [msec, msec+nsec) (data
 * offset added), counted as a write; success clears the bad block ranges
 * it covers. On failure the member is failed (the array broken when it
 * cannot lose it) and the error returned. */
int eng_member_zero(struct eng_array *a, int role, uint64_t msec, uint64_t nsec, unsigned mflags);
/* Zeros written through the personality's write on the locked path, a
 * bounded buffer at a time (pieces a zero op cannot hand to the members). */
int eng_zero_by_write(struct eng_array *a, uint64_t lsec, uint64_t nsec);
/* Can every logical sector be read with the members in sync now, and is
 * what they hold what was written (not broken)? */
bool eng_array_readable(const struct eng_array *a);
/* Can the array lose the member in `role` and stay readable? */
bool eng_member_can_fail(const struct eng_array *a, int role);
/* raid1: reads avoid the slot's member when another copy can serve (md's
 * write-mostly; raid10 ignores the flag, as md does). */
bool eng_role_write_mostly(const struct eng_array *a, int role);
/* raid1/raid10: an error on the slot's member fails it at once, without
 * retry or repair, while the array can lose it (md's failfast; never for
 * writes to a write-mostly member). */
bool eng_role_failfast(const struct eng_array *a, int role, bool write);
/* A member the array cannot lose failed a request (who: its name): writes
 * are refused from now on, reads go on (md's MD_BROKEN). */
void eng_array_broken(struct eng_array *a, const char *who, const char *why);

/* Readable ignoring the bad block log: in sync, or rebuilding and past the
 * range (md's linear and raid0 never consult the log). */
bool eng_role_present(const struct eng_array *a, int role, uint64_t msec, uint64_t nsec);
/* How many sectors from msec (at most nsec) eng_role_readable would serve:
 * up to the first recorded bad sector. */
uint64_t eng_role_readable_run(const struct eng_array *a, int role, uint64_t msec, uint64_t nsec);
/* A recorded bad range on the slot's member in [msec, msec+nsec)? */
bool eng_role_bad(const struct eng_array *a, int role, uint64_t msec, uint64_t nsec);

/* engine/core/badblocks.c: md's bad block log of each member (rdev->badblocks).
 * Sectors are the member's data-area sectors unless said otherwise. */
/* Where em's log is and, when its superblock says it holds entries, what
 * they are (read from em->m). A log md could not use, or one that is
 * corrupt, is refused with a message naming the problem. */
int eng_bbl_load(struct eng_member *em, char *err, size_t errlen);
/* The first recorded bad sector in [msec, msec+nsec) and how many follow. */
bool eng_bbl_bad(const struct eng_member *em, uint64_t msec, uint64_t nsec, uint64_t *first,
                 uint64_t *n);
/* Record [msec, msec+nsec) as bad (md's rdev_set_badblocks): 1 recorded, 0
 * already there, -ENODEV without a log, -ENOSPC when the log is full. */
int eng_bbl_add(struct eng_member *em, uint64_t msec, uint64_t nsec);
/* Put back a copy of em's ranges taken before a recording that could not
 * be written (dirty: whether they were waiting to be written then). */
void eng_bbl_restore(struct eng_member *em, const struct md_bbl *l, bool dirty);
/* A write of [msec, msec+nsec) to em succeeded: the ranges it covers hold
 * good data now and are forgotten (md's IO_MADE_GOOD / R5_MadeGood ->
 * rdev_clear_badblocks), unless a write to em failed before
 * (write_error_seen: md then no longer writes there at all). */
void eng_bbl_written(struct eng_member *em, uint64_t msec, uint64_t nsec);
/* The successful writes of a batch (eng_ioq_run) clear what they cover. */
void eng_bbl_batch_written(struct eng_array *a, const struct member_io *io, int n);
/* Write em's log when its ranges changed (md_update_sb writes it with the
 * superblock; super.c calls this first). */
int eng_bbl_store(struct eng_member *em);
/* Drop the log from em's superblock (mdadm --update=no-bbl/force-no-bbl). */
void eng_bbl_remove(struct eng_member *em);

/* engine/core/super.c: superblock bookkeeping (caller holds the lock). */
int eng_sb_write_all(struct eng_array *a);
/* md_sb_init parameters for a new member of this array (spare, replacement,
 * journal): the array-wide fields of the running array. */
void eng_member_params(const struct eng_array *a, struct md_create_params *p);
/* The superblock to write on member em: array-wide fields from a->ref. */
void eng_sb_merge(const struct eng_array *a, const struct eng_member *em, struct md_sb *s);
int eng_mark_dirty(struct eng_array *a);
int eng_mark_clean(struct eng_array *a);

/* slot.c */
/* A member failed (I/O error or by request): mark it faulty everywhere. */
void eng_member_failed(struct eng_array *a, int role, const char *why);
/* A write of nsec sectors from buf at msec to the slot's member failed.
 * md's answer: with a bad block log the write is retried in units of
 * `unit` sectors (at least the log's block and the member's logical block;
 * raid1/raid10 narrow_write_error, raid5 records 4 KiB stripe units) and
 * each unit that fails again is recorded as bad, log and superblocks
 * written before this returns (the request is acknowledged only then);
 * without a log, or with it full, the member fails (md_error). True when
 * the member stays in the array. */
bool eng_write_failed(struct eng_array *a, int role, const void *buf, uint64_t msec, uint64_t nsec,
                      uint64_t unit, const char *why);
/* The same for a member_io set by eng_set_io. */
bool eng_write_failed_io(struct eng_array *a, int role, const struct member_io *io, uint64_t unit,
                         const char *why);
/* Is every member still the file or device it was (member_check)? One that
 * shrank, vanished or was replaced is failed (a spare marked faulty), never
 * written again: writes would silently extend a truncated file and its hole
 * would read back as zeros. */
void eng_members_check(struct eng_array *a);
/* Close and forget member i (a->mem shifts down, slots follow); the caller
 * holds the lock and writes the superblocks. */
void eng_member_drop(struct eng_array *a, int i);

/* replace.c: replace (md's want_replacement). Caller holds the lock. */
/* After assembly: a replacement whose slot is empty takes the slot, one
 * that finished takes over from the old member, else writes are teed. */
int eng_replace_assembled(struct eng_array *a);
/* The slot's member failed: its replacement (if any) takes the slot and
 * continues as an ordinary rebuild. */
void eng_replace_slot_failed(struct eng_array *a, int role);
/* Make `repl` (a new member with its superblock prepared) the replacement
 * of a->mem[old_idx] and record it; takes ownership of repl. The caller
 * schedules the copy (eng_sync_schedule). */
int eng_replace_start(struct eng_array *a, int old_idx, struct eng_member *repl);
/* Give up the replacement a->mem[idx] (it is marked faulty). */
int eng_replace_drop(struct eng_array *a, int idx);
void eng_replace_give_up(struct eng_array *a, int idx, const char *why);
/* A member being rebuilt as a slot's replacement. */
bool eng_is_replacement(const struct eng_member *em);
bool eng_replace_any(const struct eng_array *a);
/* Lowest recovery_offset of the replacements (UINT64_MAX when none). */
uint64_t eng_replace_from(const struct eng_array *a);
/* The old member's writes stop going to its replacement too. */
void eng_tee_remove(struct eng_member *old);

/* The array lock (see struct eng_array). */
static inline void eng_lock(struct eng_array *a)
{
	pthread_mutex_lock(&a->lock);
	pthread_rwlock_wrlock(&a->iolock);
}
static inline void eng_unlock(struct eng_array *a)
{
	pthread_rwlock_unlock(&a->iolock);
	pthread_mutex_unlock(&a->lock);
}
/* util.c: pthread_cond_wait on a->cond for a holder of eng_lock. */
void eng_cond_wait(struct eng_array *a);

static inline struct eng_array *eng_of(struct uraid_array *h)
{
	return eng_container_of(h, struct eng_array, h);
}

/* assemble.c: bind_seq in the order mdadm --assemble adds members to md
 * (slots in order, then spares, `last` — the member whose superblock it
 * trusts — at the end; NULL for a created array, added in slot order). */
void eng_bind_order(struct eng_array *a, const struct eng_member *last);

#endif
