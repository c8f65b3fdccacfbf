/* uraid — software RAID in user space, on-disk compatible with Linux md.
 *
 * Public API of liburaid. Conventions: functions return 0 (or a count) on
 * success and a negative errno on failure; where an `err` buffer is taken it
 * receives a human-readable message naming the problem. The library keeps no
 * global mutable state: everything hangs off handles the caller owns.
 */
#ifndef URAID_H
#define URAID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define URAID_VERSION "0.1.0"

/* md RAID levels, numbered as in the md superblock. */
enum uraid_level {
	URAID_LEVEL_LINEAR = -1,
	URAID_LEVEL_RAID0 = 0,
	URAID_LEVEL_RAID1 = 1,
	URAID_LEVEL_RAID4 = 4,
	URAID_LEVEL_RAID5 = 5,
	URAID_LEVEL_RAID6 = 6,
	URAID_LEVEL_RAID10 = 10,
};

/* ------------------------------------------------------------------------
 * Parity (src/parity/): XOR and RAID6 P+Q over GF(2^8), polynomial 0x11d,
 * generator {02}, exactly as Linux md and ISA-L compute them.
 *
 * Block arrays follow ISA-L's convention: `blocks` holds k data pointers in
 * syndrome order S0..Sk-1, then P, then (for P+Q) Q. Lengths are in bytes,
 * any length >= 1, any alignment (aligned buffers take the fast path).
 * ------------------------------------------------------------------------ */

#define URAID_PARITY_MAX_DATA 253

struct uraid_parity {
	const char *name; /* "portable", "isal", "avx2", "avx512" */
	/* P = D0 ^ ... ^ Dk-1 into blocks[k]. k >= 1. */
	int (*xor_gen)(int k, size_t len, void *const *blocks);
	/* P into blocks[k], Q into blocks[k+1]. k >= 2. */
	int (*pq_gen)(int k, size_t len, void *const *blocks);
	/* Read-modify-write: update P (when p != NULL) and Q (when q != NULL)
	 * for `n` changed data blocks with distinct syndrome indices idx[0..n-1],
	 * old contents old[], new contents new_[]. The other data blocks are not
	 * read. All arguments are checked before anything is written. */
	int (*pq_update)(int k, size_t len, void *p, void *q, int n, const int *idx,
	                 const void *const *old, const void *const *new_);
	/* Rebuild `nfail` (1 or 2) lost blocks in place. blocks[] as for pq_gen
	 * (k data, P, Q; pass has_q = false for RAID4/5 where blocks[k+1] is
	 * absent); fail[] are indices 0..k+1 (k = P, k+1 = Q). */
	int (*recover)(int k, size_t len, void *const *blocks, bool has_q, int nfail,
	               const int *fail);
	/* xor_gen that also copies data block i to copies[i] (NULL: not
	 * copied) in the same pass over the data: a full-stripe write straight
	 * into members in memory. copies == NULL: xor_gen. Copies alias
	 * neither the data nor P. */
	int (*xor_copy_gen)(int k, size_t len, void *const *blocks, void *const *copies);
};

/* Pick a backend. name == NULL: the URAID_PARITY environment variable if set
 * (and non-empty), else the fastest this CPU supports. Returns NULL and sets
 * errno to ENOENT for an unknown name, ENOTSUP for a backend this CPU cannot
 * run; there is no silent fallback. The result points at constant data. */
const struct uraid_parity *uraid_parity_get(const char *name);

/* Names of all backends compiled in, NULL-terminated. */
const char *const *uraid_parity_backends(void);

/* Result of uraid_pq_locate. */
struct uraid_locate {
	size_t columns_bad;   /* byte columns where P or Q disagree */
	size_t columns_fixed; /* columns repaired (single-member errors) */
	int member;           /* index 0..k+1 of the one block found wrong, -1 if none,
	                         -2 if different columns blame different blocks */
	size_t first_bad;     /* first bad byte offset (valid if columns_bad > 0) */
};

/* With all k+2 blocks present and at most one of them silently wrong, find
 * which block is wrong in each byte column (as mdadm's raid6check does) and,
 * when `repair` is set, fix it. Returns 0 when every bad column blames the
 * same single member, -EILSEQ ("not a single-member error") when a column
 * cannot come from one member or columns blame different members — then
 * nothing is written, even with `repair`. -EINVAL for bad arguments; `out`
 * may be NULL. */
int uraid_pq_locate(const struct uraid_parity *pp, int k, size_t len, void *const *blocks,
                    bool repair, struct uraid_locate *out);

/* ------------------------------------------------------------------------
 * Engine (src/engine/): running md arrays. An array handle owns its members
 * and serialises I/O internally, so several threads may call read/write on
 * one handle. Offsets and lengths are bytes, multiples of 512.
 * ------------------------------------------------------------------------ */

struct uraid_array;
struct member;

/* Assemble/create flags. */
/* URAID_RDONLY: never write to a member (open O_RDONLY).
 * URAID_NO_SYNC_THREAD: no background sync thread; the caller drives
 * resync/recovery/check with uraid_sync_step.
 * URAID_DIRECT: open member files with O_DIRECT.
 * The other assemble flags are defined beside the calls they serve:
 * URAID_FORCE 8, URAID_CREATED 16, URAID_UPDATE_NO_BBL 32,
 * URAID_UPDATE_FORCE_NO_BBL 64, URAID_OVERLAY 128, URAID_FROZEN 256; a new one takes the next
 * free bit (src/engine/api.c checks that no two share one). */
#define URAID_RDONLY         1u
#define URAID_NO_SYNC_THREAD 2u
#define URAID_DIRECT         4u

enum uraid_member_state {
	URAID_MEMBER_IN_SYNC = 0,
	URAID_MEMBER_FAULTY,
	URAID_MEMBER_MISSING,
	URAID_MEMBER_SPARE,
	URAID_MEMBER_REBUILDING,
	URAID_MEMBER_STALE,    /* GEOM: out of date, waits for a rebuild (autosync off) */
	URAID_MEMBER_INACTIVE, /* gmirror: deactivated by request, not used */
};

enum uraid_sync_action {
	URAID_SYNC_IDLE = 0,
	URAID_SYNC_RESYNC,  /* make parity/mirrors consistent after an unclean stop */
	URAID_SYNC_RECOVER, /* rebuild onto a spare */
	URAID_SYNC_CHECK,   /* count mismatches, change nothing */
	URAID_SYNC_REPAIR,  /* count mismatches and fix them */
	URAID_SYNC_RESHAPE, /* restripe to a new geometry (uraid_array_reshape_start) */
};

/* Assemble from member image/device paths, in any order. Leaves out stale
 * members (with a warning in `warn`, if given). */
int uraid_assemble(const char *const *paths, int n, unsigned flags, struct uraid_array **out,
                   char *err, size_t errlen, char *warn, size_t warnlen);
/* The same from opened members; the array takes ownership of all of them
 * (they are closed on stop, and on failure). */
int uraid_assemble_members(struct member **members, int n, unsigned flags, struct uraid_array **out,
                           char *err, size_t errlen, char *warn, size_t warnlen);

struct uraid_create_opts {
	int level;       /* enum uraid_level */
	bool layout_set; /* else mdadm's default for the level */
	uint32_t layout;
	uint32_t chunk_sectors; /* 0 = default (512 KiB) */
	int raid_devices;
	int spare_devices;
	int metadata; /* 0 (0.90), 10, 11, 12 (1.x); 0 with metadata_set false = 1.2 */
	bool metadata_set;
	char name[33];
	uint64_t member_bytes; /* uraid_create: size of member files to create when missing */
	uint64_t size_sectors; /* per-member data sectors used, 0 = largest possible */
	bool assume_clean;     /* skip the initial resync */
	/* raid4/5/6, metadata 1.x: the last member given is a write journal
	 * (mdadm --write-journal); not counted in raid/spare devices. */
	bool write_journal;
	/* enum uraid_consistency_policy (mdadm --consistency-policy): resync
	 * (0, md's default; a bitmap is added with uraid_bitmap_add), or ppl:
	 * md's partial parity log, raid5 with 1.x metadata only. */
	int consistency_policy;
	/* md's per-device flags, bit i for the i-th member given (the first
	 * 64): write-mostly (raid1 reads it only when no other copy can
	 * serve) and failfast (raid1/raid10: failed on its first error while
	 * the array can lose it), as mdadm --write-mostly / --failfast. */
	uint64_t write_mostly, failfast;
	/* With write_journal: 1 + how many members were named before the
	 * journal (mdadm numbers devices in command-line order, the journal
	 * where --write-journal stood); 0: after all of them. */
	int journal_pos;
};
/* Validate everything, then write superblocks. Without assume_clean the
 * array starts with a resync pending (run by the sync thread, or by the
 * caller with uraid_sync_step under URAID_NO_SYNC_THREAD). */
int uraid_create(const struct uraid_create_opts *o, const char *const *paths, int n, unsigned flags,
                 struct uraid_array **out, char *err, size_t errlen);
int uraid_create_members(const struct uraid_create_opts *o, struct member **members, int n,
                         unsigned flags, struct uraid_array **out, char *err, size_t errlen);

/* mdadm --build: run an array that has no superblock, its geometry given by
 * the caller (recovery of arrays whose metadata is gone, foreign images).
 * Nothing is written to a member, ever: members are opened read-only and
 * every write is refused with -EROFS, whatever the level. paths[i] is the
 * member of role i, or NULL / "missing" for an absent one (the level must
 * still be readable without it). data_offset_sectors is where each member's
 * data starts; size_sectors the data sectors used of each member (0: all of
 * the smallest, after the data offset). -EINVAL with a message naming the
 * problem for bad geometry, a member given twice, or one smaller than the
 * geometry needs. uraid_status reports metadata -1 (none). */
struct uraid_build_opts {
	int level;       /* enum uraid_level */
	bool layout_set; /* else mdadm's default for the level */
	uint32_t layout;
	uint32_t chunk_sectors; /* 0 = 512 KiB (striped levels) */
	int raid_devices;
	uint64_t data_offset_sectors;
	uint64_t size_sectors;
};
int uraid_build(const struct uraid_build_opts *o, const char *const *paths, int n, unsigned flags,
                struct uraid_array **out, char *err, size_t errlen);
/* The geometry as one word, "level=5,raid-devices=4,chunk=128,layout=2,
 * data-offset=2048,size=0" (chunk in KiB, offsets and size in sectors),
 * for a process that builds the same array again (the daemon, nbdkit). */
int uraid_build_spec_format(const struct uraid_build_opts *o, char *buf, size_t len);
int uraid_build_spec_parse(const char *spec, struct uraid_build_opts *o, char *err, size_t errlen);

/* Flush, mark clean in the superblocks, close the members, free. */
int uraid_stop(struct uraid_array *a);
/* Close without touching the superblocks (as a crash would leave them). */
void uraid_drop(struct uraid_array *a);

uint64_t uraid_size(const struct uraid_array *a); /* bytes */
int uraid_read(struct uraid_array *a, void *buf, size_t len, uint64_t off);
int uraid_write(struct uraid_array *a, const void *buf, size_t len, uint64_t off);
int uraid_flush(struct uraid_array *a);
/* Discard and write-zeroes: afterwards [off, off+len) (512-byte aligned,
 * inside the array) reads back as zeros, at every level. URAID_ZERO_MAY_TRIM
 * lets the members that zero what they discard deallocate it (punch
 * holes, a write-zeroes that may unmap) where that keeps the level's copies
 * and parity true: raid0/1/10 and linear always, raid4/5/6 for whole
 * stripes of a healthy array; the rest is written as zeros (parity
 * updated).
 * URAID_ZERO_FAST (NBD's fast zero): -ENOTSUP unless uraid_discard_safe,
 * nothing changed. uraid_discard is uraid_write_zeroes with MAY_TRIM at
 * raid4/5/6; linear, raid0, raid1 and raid10 pass it down to every copy as
 * md does (BLKDISCARD, punched holes), and the range then reads back what
 * the members give after a discard (zeros where uraid_discard_safe). With
 * a journal or a partial parity log the zeros are written through it. */
#define URAID_ZERO_MAY_TRIM 1u
#define URAID_ZERO_FAST     2u
int uraid_write_zeroes(struct uraid_array *a, uint64_t off, uint64_t len, unsigned flags);
int uraid_discard(struct uraid_array *a, uint64_t off, uint64_t len);
/* Do discards deallocate everywhere (md's devices_handle_discard_safely:
 * every slot in sync on a member that reads back zeros after a discard, and
 * no log that takes the writes)? Then a fast zero works. */
bool uraid_discard_safe(struct uraid_array *a);

/* Where an array range lives (uraid_locate): every member piece that holds
 * its data, a copy of it, or what rebuilds it (the other data and the
 * parity of its stripe row). */
enum uraid_place_kind {
	URAID_PLACE_DATA, /* the data itself (linear, raid0, raid4/5/6) */
	URAID_PLACE_COPY, /* one copy of it (raid1, raid10) */
	URAID_PLACE_PEER, /* other data of the same stripe row (rebuilds it) */
	URAID_PLACE_P,    /* the row's parity P */
	URAID_PLACE_Q,    /* the row's syndrome Q (raid6) */
};
struct uraid_place {
	int slot;                      /* the member's role */
	char member[256];              /* its name; "" when the slot has none */
	enum uraid_member_state state; /* URAID_MEMBER_MISSING when none */
	enum uraid_place_kind kind;
	uint64_t member_offset; /* bytes from the start of the member device */
	/* With URAID_LOCATE_PROBE: 0 when the member read the piece just now,
	 * else a negative errno (-ENODEV no member, -ESTALE not in sync
	 * there, -ENODATA recorded in its bad block log, so never read
	 * there, or the read's error). 0 without the flag. */
	int probe;
};
#define URAID_LOCATE_PROBE 1u
#define URAID_LOCATE_MAX   (2 * 256) /* places one range can have, at most */
/* The places of the array range [off, off + len) (off and len multiples of
 * the array's block_bytes, len > 0): fills up to `max` entries and returns
 * how many there are (more than max: the rest left out), *piece = the bytes
 * from off (at most len) that those same places hold, so a caller walks a
 * range piece by piece. The probe reads each member piece directly (at
 * most 1 MiB of it), nothing written: which members fail there. -EINVAL
 * for a bad range; -EOPNOTSUPP for classes without it (GEOM). */
int uraid_locate(struct uraid_array *a, uint64_t off, uint64_t len, unsigned flags,
                 struct uraid_place *out, int max, uint64_t *piece);
const char *uraid_place_kind_name(enum uraid_place_kind k); /* "data", "copy", ... */

/* Entries for every slot and every member of the largest array (the
 * engine's 256 members; a missing slot is an entry of its own). */
#define URAID_STATUS_MAX_MEMBERS 512
#define URAID_OVERLAY_DIR_MAX    1024 /* an overlay directory's path, NUL included */
struct uraid_member_status {
	char name[256];
	int role; /* slot, -1 spare/none */
	uint32_t dev_number;
	enum uraid_member_state state;
	uint64_t recovery_offset; /* sectors (rebuilding) */
	int priority;             /* gmirror component priority, 0 otherwise */
	unsigned flags;           /* URAID_MEMBER_F_* */
	uint32_t order;           /* when it joined the running array (0: not known) */
};
/* uraid_member_status.flags (mdstat's (W) and (R), mdadm's writemostly). */
#define URAID_MEMBER_F_WRITEMOSTLY 1u
#define URAID_MEMBER_F_REPLACEMENT 2u /* rebuilt as the replacement of slot `role` */
#define URAID_MEMBER_F_LEFT_OUT    4u /* left out at assembly: md would not hold it */
struct uraid_status {
	char name[33];
	char uuid[36];
	int level;
	uint32_t layout;
	uint32_t chunk_sectors;
	int raid_disks;
	int metadata; /* 0, 10, 11, 12 */
	uint64_t array_sectors;
	uint64_t dev_sectors; /* per member */
	uint64_t events;
	uint64_t ctime, utime; /* superblock creation / update time, seconds */
	int md_minor;          /* 0.90: the preferred minor; -1 otherwise */
	bool readonly, clean;
	/* A write failed on a member the array could not lose: writes are
	 * refused, reads served (md's broken array) until it is stopped. */
	bool broken;
	int working, failed, spares, degraded; /* degraded = slots without an in-sync member */
	/* entries in members[]: slots first, then spares, faulty members and
	 * replacements (role = the slot they replace, URAID_MEMBER_F_REPLACEMENT) */
	int nmembers;
	struct uraid_member_status members[URAID_STATUS_MAX_MEMBERS];
	enum uraid_sync_action sync_action;
	uint64_t sync_done, sync_total; /* sectors */
	uint64_t sync_speed_kibs;       /* recent speed */
	uint64_t mismatch_cnt;          /* sectors, from the last check/repair */
	unsigned stripe_cache_size;     /* stripe cache entries (raid4/5/6), 0 = none */
	/* Internal write-intent bitmap (0 chunk: none), as /proc/mdstat's
	 * "bitmap: U/P pages [KB], C KB chunk": P pages of md's in-memory
	 * counters (2048 chunks each), U of them with a bit set. */
	uint32_t bitmap_chunk_kib;
	uint64_t bitmap_chunks, bitmap_dirty; /* bits, and bits set */
	uint32_t bitmap_pages, bitmap_pages_used;
	/* I/O unit in bytes: offsets and lengths must be multiples of it (512
	 * for md; graid3: its provider sector). */
	uint32_t block_bytes;
	/* FreeBSD GEOM arrays (level URAID_LEVEL_GMIRROR / GRAID3), 0 otherwise.
	 * layout and chunk_sectors stay 0 for them. */
	int geom_balance;    /* gmirror: 1 round-robin, 2 load, 3 split, 4 prefer */
	uint32_t geom_slice; /* gmirror split: bytes */
	uint64_t geom_flags; /* device flags as on disk (URAID_GEOM_F_*) */
	uint32_t geom_genid, geom_syncid;
	uint64_t geom_parity_errors; /* graid3 -w: reads refused on a parity mismatch */
	/* Write journal (md's (J) device). */
	int journal;            /* 0 none, 1 working, 2 missing/failed (writes refused) */
	char journal_name[256]; /* its path */
	uint32_t journal_dev_number;
	int journal_mode;        /* enum uraid_journal_mode */
	uint64_t journal_cached; /* write-back: 4 KiB pages not yet on the members */
	/* Partial parity log (consistency policy ppl): 1 when on; entries its
	 * recovery at assembly rewrote parity for, and what it could not use
	 * (entries whose partial parity failed its checksum, members without
	 * a valid log), after which md resyncs. */
	int ppl;
	uint64_t ppl_recovered, ppl_mismatches;
	/* Assembled through overlays (uraid_assemble_overlay): their directory,
	 * else "". */
	char overlay[URAID_OVERLAY_DIR_MAX];
	/* md reshape in progress (running or recorded): 0 none, 1 forward,
	 * 2 backwards; level/layout/chunk_sectors above are the old geometry,
	 * raid_disks the new count (as md keeps them), the new ones here. */
	int reshape;
	uint64_t reshape_position; /* array sectors */
	int reshape_delta_disks;
	uint32_t reshape_new_layout, reshape_new_chunk_sectors;
	/* md's read-auto (readonly too: the first write makes it read-write),
	 * sync_action frozen, and a resync due but not running (mdstat's
	 * resync=PENDING when it cannot run: read-only or frozen). */
	bool auto_readonly, frozen, resync_pending;
	uint64_t sync_speed_min, sync_speed_max; /* KiB/s, uraid_sync_speed's limits */
	/* uraid_discard_safe: discards deallocate at every level here. */
	bool discard_safe;
	/* md's speed window (md_do_sync's marks, a sample every 3 s, over the
	 * last 30 s or since the job started): sync positions done in it and
	 * its whole seconds (at least 1); sync_speed_kibs is their quotient.
	 * 0 and 0 where the class keeps no marks. */
	uint64_t sync_window_sectors;
	uint32_t sync_window_secs;
};
int uraid_status(struct uraid_array *a, struct uraid_status *st);

/* Member management by name (the path given at assemble/add) or by slot
 * number given as "#N". */
int uraid_fail(struct uraid_array *a, const char *member, char *err, size_t errlen);
int uraid_remove(struct uraid_array *a, const char *member, char *err, size_t errlen);
int uraid_add(struct uraid_array *a, const char *path, char *err, size_t errlen);
int uraid_add_member(struct uraid_array *a, struct member *m, char *err, size_t errlen);
/* md's replace: `path` (or m, which the array then owns) is rebuilt as the
 * replacement of the in-sync member `old` while `old` keeps serving reads
 * and receiving writes, so the array is never degraded; when the copy
 * completes `old` is marked faulty (then `remove` it) and the new member
 * takes its slot. Recorded in the 1.x superblocks (replacement feature,
 * recovery_offset), so an interrupted replace resumes at the next assembly
 * (here or in the kernel). -EOPNOTSUPP for 0.90 metadata and levels
 * without redundancy; failing the new member abandons the replace. */
int uraid_replace(struct uraid_array *a, const char *old, const char *path, char *err,
                  size_t errlen);
int uraid_replace_member(struct uraid_array *a, const char *old, struct member *m, char *err,
                         size_t errlen);

/* Add an internal write-intent bitmap to a running array (raid1/4/5/6/10,
 * any metadata version), placed as mdadm --grow --bitmap=internal places
 * it: chunk_bytes 0 = mdadm's default. After an unclean stop only the
 * chunks the bitmap marks are resynced; a re-added member (uraid_re_add)
 * only gets the chunks written while it was away. */
int uraid_bitmap_add(struct uraid_array *a, uint32_t chunk_bytes, char *err, size_t errlen);
/* mdadm --grow's changes that move no data, on a running md array, each
 * recorded in the superblocks as md records it:
 * BITMAP_INTERNAL: uraid_bitmap_add (value: chunk bytes, 0 = default);
 * BITMAP_NONE: the bitmap dropped (-ENOENT without one, -EBUSY while a
 *   sync runs);
 * SIZE: sectors of each member used (0 = all every member has; 1.1/1.2:
 *   after the data offset, 1.0/0.90: up to the superblock), as md's
 *   update_size (raid4/5/6 rounded to the chunk, raid10 whole chunks),
 *   raid1/4/5/6/10 only; a larger size resyncs the new region; -ENOSPC
 *   when a member lacks the room or the array would shrink below its
 *   exported size, -EBUSY with a bitmap or log or while a sync runs;
 * ARRAY_SIZE: the exported size in sectors (0 = the full size), kept in
 *   memory only as md's array_size (-E2BIG above the full size);
 * RAID_DISKS: raid1's number of mirrors: more slots are filled from the
 *   spares and recovered; fewer when the slots removed hold no member
 *   (-EBUSY), the others renumbered from slot 0 as md's raid1_reshape. */
enum uraid_grow_what {
	URAID_GROW_BITMAP_INTERNAL = 1,
	URAID_GROW_BITMAP_NONE,
	URAID_GROW_SIZE,
	URAID_GROW_ARRAY_SIZE,
	URAID_GROW_RAID_DISKS,
};
int uraid_grow(struct uraid_array *a, enum uraid_grow_what what, uint64_t value, char *err,
               size_t errlen);
/* md's takeovers (mdadm --grow --level without a reshape): every block
 * stays where it is; slots the new level adds start missing and are
 * recovered onto spares (add one after). raid0 of one zone -> raid4/raid5
 * (parity-last, layout 5: parity slot added) or raid10 near-2 (members in
 * the even slots); raid4, raid5 parity-last -> raid0 with the parity slot
 * empty; raid10 near-2 -> raid0 (of each pair the second member is failed
 * and removed when the first is there, as mdadm does); raid1 <-> raid5 of
 * 2 members; raid5 -> raid6 with the "-6" twin of its layout (Q slot
 * added) and raid6 with a -6 or parity-last layout -> raid5 (the Q member
 * becomes a spare); raid4 <-> raid5 parity-last. layout UINT32_MAX and
 * raid_disks 0: what md chooses (else they must match it). -EINVAL in md's
 * words for others, -EBUSY with a bitmap/journal/ppl or a sync pending. */
int uraid_takeover(struct uraid_array *a, int level, uint32_t layout, int raid_disks, char *err,
                   size_t errlen);
/* md's linear hot-add (mdadm --grow --add): path becomes the last member
 * of a linear array, which grows by what it holds. -EINVAL elsewhere. */
int uraid_grow_add(struct uraid_array *a, const char *path, char *err, size_t errlen);
/* Sectors (per member) the last bitmap-guided resync skipped as clean. */
uint64_t uraid_bitmap_resync_skipped(struct uraid_array *a);

/* Start check/repair, or IDLE to interrupt whatever runs. */
int uraid_sync_action(struct uraid_array *a, enum uraid_sync_action action, char *err,
                      size_t errlen);
/* Do up to max_sectors of pending sync work now, in this thread. Returns 1
 * while work remains, 0 when idle, negative errno on failure. */
int uraid_sync_step(struct uraid_array *a, uint64_t max_sectors);
/* Wait until no sync work remains (background thread). */
int uraid_sync_wait(struct uraid_array *a);
/* Speed limits in KiB/s (md's sync_speed_min/max); 0 max = unlimited. */
void uraid_sync_speed(struct uraid_array *a, uint64_t min_kibs, uint64_t max_kibs);
/* md's sync_action "frozen": the running job stops where it is (its
 * checkpoint kept) and none starts until unfrozen (false; requesting idle,
 * check or repair unfreezes too, as in md). */
int uraid_sync_freeze(struct uraid_array *a, bool frozen, char *err, size_t errlen);

/* md's array_state of a running md array: read-write; read-only (mdadm
 * --readonly: background work stops where it is, caches are written out,
 * the superblocks marked clean, writes refused with -EROFS); read-auto
 * (read-only until the first write, which makes it read-write, as mdadm
 * --incremental starts arrays). -EROFS for read-write on an array assembled
 * with URAID_RDONLY. */
enum uraid_ro_mode { URAID_RW = 0, URAID_RO = 1, URAID_RO_AUTO = 2 };
int uraid_set_readonly(struct uraid_array *a, enum uraid_ro_mode mode, char *err, size_t errlen);
/* mdadm --add-spare: like uraid_add, but always as a new spare, never put
 * back into its old slot as a re-add. */
int uraid_add_spare(struct uraid_array *a, const char *path, char *err, size_t errlen);
/* uraid_add with options: URAID_ADD_SPARE (as uraid_add_spare), and md's
 * device flags for the new member (mdadm --add --write-mostly /
 * --failfast; a member put back as a re-add keeps the flags it had). */
#define URAID_ADD_SPARE       1u
#define URAID_ADD_WRITEMOSTLY 2u
#define URAID_ADD_FAILFAST    4u
int uraid_add_flags(struct uraid_array *a, const char *path, unsigned flags, char *err,
                    size_t errlen);
int uraid_add_member_flags(struct uraid_array *a, struct member *m, unsigned flags, char *err,
                           size_t errlen);

/* Stripe cache of a raid4/5/6 array, like md's stripe_cache_size: the
 * number of stripe heads (each one 4 KiB row of every data member, as md's)
 * that hold small writes until they fill whole stripes or a flush, eviction
 * (LRU) or idle period (~50 ms; none under URAID_NO_SYNC_THREAD) writes
 * them out. A write cache: uraid_write returns once the data is cached;
 * uraid_flush (and uraid_stop) make it durable, uraid_drop loses it, reads
 * see it. Arrays start with it off (0); md's default size is 256, what the
 * uraid daemon uses. Resizing writes the cache out first. 0 turns it off.
 * -EINVAL for levels without parity or a size above the maximum; -EROFS on
 * a read-only array; a write-out error (array failed) is returned. */
#define URAID_STRIPE_CACHE_MAX     32768u
#define URAID_STRIPE_CACHE_DEFAULT 256u
int uraid_set_stripe_cache(struct uraid_array *a, unsigned stripes);

/* Write journal (md's raid5-cache). Write-through logs data and parity of
 * every stripe write before the members are written; write-back also
 * acknowledges a write once its data is in the journal and writes the array
 * later (flush, cache full, stop). Like md, the mode is not persistent: every
 * assembly starts in write-through. */
enum uraid_journal_mode { URAID_JOURNAL_WT = 0, URAID_JOURNAL_WB = 1 };
int uraid_journal_mode(struct uraid_array *a, enum uraid_journal_mode mode, char *err,
                       size_t errlen);
/* Add a journal member (mdadm --add-journal) to a raid4/5/6 array with 1.x
 * metadata whose journal is missing or failed (or that never had one):
 * writes work again afterwards. */
int uraid_journal_add(struct uraid_array *a, const char *path, char *err, size_t errlen);
int uraid_journal_add_member(struct uraid_array *a, struct member *m, char *err, size_t errlen);
/* md's consistency policy of a running raid5 with 1.x metadata, as mdadm
 * --grow --consistency-policy: resync <-> ppl (the partial parity log: the
 * partial parity of every stripe write is logged on the stripe's parity
 * member first, and an unclean stop is repaired from it at assembly instead
 * of by a resync, the write hole closed). Enabling places the log as mdadm
 * does (in the metadata area, 1 MiB when there is room; -ENOSPC "Not enough
 * space to add ppl" when there is not); a bitmap or journal excludes it. */
enum uraid_consistency_policy { URAID_POLICY_RESYNC = 0, URAID_POLICY_PPL = 1 };
int uraid_consistency_policy(struct uraid_array *a, enum uraid_consistency_policy policy, char *err,
                             size_t errlen);
/* Counters since assembly: member I/O of every kind, and what the stripe
 * cache did. reads avoided = sc_reads_direct - sc_reads_writeout. */
struct uraid_io_stats {
	uint64_t member_reads, member_writes; /* requests sent to members */
	uint64_t member_read_bytes, member_write_bytes;
	unsigned sc_size, sc_used;         /* stripe heads allowed / holding data */
	uint64_t sc_write_sectors;         /* sectors written into the cache */
	uint64_t sc_read_hit_sectors;      /* sectors reads took from the cache */
	uint64_t sc_full_runs;             /* write-outs of complete heads: parity from data */
	uint64_t sc_rmw_runs, sc_rcw_runs; /* write-outs needing reads */
	uint64_t sc_evicted, sc_idle;      /* heads written out: cache full / idle */
	uint64_t sc_reads_direct;          /* member reads the cached writes would have cost
	                                      written straight through (estimate) */
	uint64_t sc_reads_writeout;        /* member reads the write-outs made */
};
int uraid_io_stats(struct uraid_array *a, struct uraid_io_stats *st);

/* Control server (src/control/server.c): a unix stream socket through which
 * other processes manage a running array. Protocol version 1:
 *
 * Request: one line "VERB ARG...\n" of at most URAID_CONTROL_MAX_LINE bytes
 * (no NUL), single spaces between words; arguments %-escaped (every byte
 * outside 0x21..0x7e, and '%', as %HH) so names may hold any byte.
 * "write OFF LEN\n" is followed by exactly LEN bytes (LEN at most
 * URAID_CONTROL_MAX_IO). Reply: "OK LEN\n" + LEN bytes of body, or
 * "ERR ERRNO MESSAGE\n" (ERRNO positive, MESSAGE one line). A request that
 * cannot be framed (bad read/write header, over-long line) is answered with
 * ERR and the connection is closed; a client silent for the timeout (30 s
 * unless uraid_control_set_timeout) in the middle of a request or between
 * requests is disconnected.
 *
 * Verbs: hello (body "uraid-control 1\n"), status (body: the text of
 * uraid_status_encode), stats (uraid_io_stats_encode), read OFF LEN,
 * write OFF LEN, flush, fail M, remove M, add PATH, replace M PATH, check, repair, idle,
 * speed MIN MAX, stripe-cache N, stop, geom REQUEST (GEOM arrays: the rest
 * of the line, unescaped, to uraid_geom_ctl), grow WHAT N (uraid_grow: WHAT
 * bitmap-internal, bitmap-none, size, array-size or raid-devices; N in
 * bytes for the bitmap chunk, sectors for sizes, 0 = default/max), takeover
 * LEVEL LAYOUT N (uraid_takeover; LAYOUT "any", N 0 = md's choice),
 * grow-add PATH (uraid_grow_add), reshape RAID_DISKS LAYOUT CHUNK_SECTORS
 * [LEVEL [BACKUP_FILE]] (uraid_array_reshape_start; 0, -1, 0, 0 keep a
 * value; BACKUP_FILE an absolute path, mdadm's --backup-file; the verb
 * reshape-force sets uraid_reshape_opts.force, mdadm's --force). Each connection has
 * its own thread.
 *
 * Status and stats bodies: a first line "uraid-status 1" / "uraid-stats 1"
 * (the format's major version: a change that old readers would misread
 * bumps it), then "key=value" lines (numbers in decimal; strings
 * %-escaped; sync_action and member states by name: idle, resync, recover,
 * check, repair / in_sync, faulty, missing, spare, rebuilding, stale,
 * inactive), for status also "member=ROLE DEV_NUMBER STATE RECOVERY_OFFSET
 * PRIORITY FLAGS ORDER NAME" lines in members[] order (NAME always last: readers skip
 * fields they do not know before it), and a last line "end". Readers ignore keys they do not
 * know (newer servers add keys), refuse a duplicated key, a value out of
 * range, a missing "end" or anything after it. */
struct uraid_control;
int uraid_control_start(struct uraid_array *a, const char *sock_path, struct uraid_control **out,
                        char *err, size_t errlen);
/* Inactivity limit for connections accepted from now on (ms, > 0). */
void uraid_control_set_timeout(struct uraid_control *c, int timeout_ms);
/* Keep the array's /proc/mdstat lines in dir/NAME.mdstat and dir/mdstat
 * (uraid_mdstat_publish) while the server runs, withdrawn at its close:
 * for servers whose socket is dir/NAME.sock in the run directory. */
void uraid_control_mdstat(struct uraid_control *c, const char *dir, const char *name);
/* Block until a client sent "stop" (returns 0) or the timeout passed
 * (timeout_ms < 0: forever; returns -ETIMEDOUT). */
int uraid_control_wait(struct uraid_control *c, int timeout_ms);
/* Stop accepting, wait for connections to end, remove the socket. */
void uraid_control_close(struct uraid_control *c);
/* The client side (src/control/client.c), for the array running under
 * `name` in the run directory. One request: `line` (no newline), an
 * optional payload (write); the reply body is malloc'ed into *body
 * (NUL-terminated for convenience). 0, or a negative errno with the
 * daemon's message, or the connection's problem, in err. */
int uraid_control_request(const char *name, const char *line, const void *payload, size_t plen,
                          char **body, size_t *blen, char *err, size_t errlen);
/* status / stats of it, decoded field by field (another build's daemon is
 * fine). */
int uraid_control_status(const char *name, struct uraid_status *st, char *err, size_t errlen);
int uraid_control_stats(const char *name, struct uraid_io_stats *st, char *err, size_t errlen);
#define URAID_CONTROL_MAX_IO   (16u << 20) /* largest read/write per request */
#define URAID_CONTROL_MAX_LINE 4096u       /* request line, newline included */
#define URAID_STATUS_TEXT_MAX  (1u << 20)  /* an encoded status always fits */

/* /proc/mdstat as the md driver prints it (src/control/mdstat.c): the
 * header and trailer lines (no newline) and one array's lines, each ending
 * in a newline, its last line blank or the bitmap's. Returns the length,
 * -ENOSPC when len is too small, -EINVAL for arrays md has no personality
 * for (GEOM). uraid_md_personality: "raid5" etc., NULL for those. */
#define URAID_MDSTAT_PERSONALITIES \
	"Personalities : [raid0] [raid1] [raid10] [raid6] [raid5] [raid4] [linear] "
#define URAID_MDSTAT_UNUSED "unused devices: <none>"
int uraid_mdstat_format(const char *name, const struct uraid_status *st, char *buf, size_t len);
#define URAID_MDSTAT_TEXT_MAX (1u << 17) /* one array's lines always fit */
const char *uraid_md_personality(int level);
/* $URAID_RUN_DIR/mdstat (src/control/mdstat_file.c): publish the text of
 * the array NAME (served at dir/NAME.sock; NULL text: withdraw it) and
 * rebuild dir/mdstat from the arrays still served; 0 or negative errno. */
int uraid_mdstat_publish(const char *dir, const char *name, const char *text);
int uraid_mdstat_rebuild(const char *dir);

/* The encodings above (src/control/codec.c). encode: bytes written
 * (NUL-terminated, not counted), -ENOSPC when len is too small. decode:
 * 0, or -EPROTO with the first problem named in err; *st is zeroed then. */
int uraid_status_encode(const struct uraid_status *st, char *buf, size_t len);
int uraid_status_decode(const char *text, size_t len, struct uraid_status *st, char *err,
                        size_t errlen);
int uraid_io_stats_encode(const struct uraid_io_stats *st, char *buf, size_t len);
int uraid_io_stats_decode(const char *text, size_t len, struct uraid_io_stats *st, char *err,
                          size_t errlen);
/* %-escape s into out (always NUL-terminated when outlen > 0); returns the
 * length the whole escaped string needs. */
size_t uraid_ctl_escape(const char *s, char *out, size_t outlen);
/* Undo it: length, -EINVAL for a bad escape, a raw byte that needs one,
 * or an escaped NUL, -ENAMETOOLONG when it does not fit. */
int uraid_ctl_unescape(const char *s, size_t len, char *out, size_t outlen);

/* ------------------------------------------------------------------------
 * Array names and the run directory (src/control/rundir.c), shared by the
 * uraid CLI and the nbdkit plugin: the one place that decides which names
 * are accepted and whether the run directory can be trusted.
 * ------------------------------------------------------------------------ */

/* An array's name (its control socket RUN/NAME.sock, logs, state files):
 * 1 to URAID_NAME_MAX characters from A-Z a-z 0-9 . _ + - : @, the first
 * neither '.' nor '-'. So no '/', no whitespace, control characters or
 * newlines, nothing that reads as an option or a hidden file. */
#define URAID_NAME_MAX 63
#define URAID_NAME_RULE                                                                        \
	"a name is 1 to 63 characters from A-Z a-z 0-9 . _ + - : @, not starting with '.' or " \
	"'-'"
/* 0, or -EINVAL / -ENAMETOOLONG with err naming what breaks the rule. */
int uraid_name_check(const char *name, char *err, size_t errlen);

/* The run directory: $URAID_RUN_DIR, else URAID_RUN_DIR_DEFAULT. It is
 * trusted only when it belongs to the calling user (root: to root), is not
 * writable by group or others, and every directory and symbolic link on the
 * way to it belongs to root or the caller, none writable by others unless
 * sticky. Checked on every call; create makes a missing last component
 * (mode 0700, the parent must exist). Fills path (symbolic links resolved)
 * and returns 0, or -EPERM (untrusted), -ENOENT, ... with err naming the
 * directory and the problem. */
#define URAID_RUN_DIR_DEFAULT "/run/uraid"
int uraid_run_dir(bool create, char *path, size_t len, char *err, size_t errlen);
/* RUN/NAME+SUFFIX after checking the name and the directory. */
int uraid_run_path(const char *name, const char *suffix, bool create, char *path, size_t len,
                   char *err, size_t errlen);
/* Open RUN/NAME+SUFFIX, never through a symbolic link (O_NOFOLLOW and
 * O_CLOEXEC are added). With O_CREAT whatever held the name is removed and
 * a new file is created exclusively, mode 0600; without it the file must be
 * a regular file of the caller's not writable by others. A descriptor or a
 * negative errno. */
int uraid_run_open(const char *name, const char *suffix, int flags, char *err, size_t errlen);
/* Replace RUN/NAME+SUFFIX with text: written to a new temporary file
 * (exclusive, 0600), then renamed over it. */
int uraid_run_write(const char *name, const char *suffix, const char *text, char *err,
                    size_t errlen);
/* Read RUN/NAME+SUFFIX (checked as by uraid_run_open) into buf, at most
 * len - 1 bytes, NUL-terminated: the length, -ENOENT when absent, -EFBIG
 * when it is larger. */
int uraid_run_read(const char *name, const char *suffix, char *buf, size_t len, char *err,
                   size_t errlen);
/* Remove RUN/NAME+SUFFIX (absent is fine). */
int uraid_run_unlink(const char *name, const char *suffix, char *err, size_t errlen);

/* ------------------------------------------------------------------------
 * FreeBSD GEOM arrays (gmirror, graid3). uraid_assemble recognises their
 * metadata (the last sector of each component, no md superblock) and returns
 * an ordinary handle: read/write/flush/status/fail/remove/add/sync/stop work
 * as for md. uraid_status reports them with these levels.
 * ------------------------------------------------------------------------ */
#define URAID_LEVEL_GMIRROR 0x4701 /* 'G' 1 */
#define URAID_LEVEL_GRAID3  0x4703 /* 'G' 3 */

/* geom_flags bits. gmirror: */
#define URAID_GEOM_F_MIRROR_NOAUTOSYNC 0x01ull
#define URAID_GEOM_F_MIRROR_NOFAILSYNC 0x02ull
/* graid3: */
#define URAID_GEOM_F_RAID3_NOAUTOSYNC  0x01ull
#define URAID_GEOM_F_RAID3_ROUND_ROBIN 0x02ull
#define URAID_GEOM_F_RAID3_VERIFY      0x04ull
#define URAID_GEOM_F_RAID3_NOFAILSYNC  0x08ull

/* The rest of gmirror(8)/graid3(8)'s verbs on a running array, as one
 * request line of words (what the control socket's "geom" verb carries):
 *
 *   configure [balance=NAME] [slice=BYTES] [autosync=0|1] [failsync=0|1]
 *             [priority=N member=M] [round_robin=0|1] [verify=0|1]
 *   rebuild member=M          activate member=M       deactivate member=M
 *   insert member=PATH [priority=N] [inactive=1] [number=N]
 *   remove member=M | number=N                        forget
 *   resize [size=BYTES]       destroy
 *
 * M is a component's path as assembled or "#N" (its number). Semantics
 * follow gmirror/graid3 (docs/ARCHITECTURE.md, GEOM). -EINVAL names an
 * unknown verb, key or value; -EOPNOTSUPP for md arrays and for verbs the
 * class does not have (graid3: activate, deactivate, forget, resize,
 * destroy). After destroy the metadata is gone and the handle only accepts
 * uraid_stop/uraid_drop (which then write nothing). */
int uraid_geom_ctl(struct uraid_array *a, const char *request, char *err, size_t errlen);

/* ---- write-intent bitmap: re-add, forced assembly (bitmap helper) ---- */

/* Assemble flag: start a raid4/5/6 that is both dirty (not cleanly stopped)
 * and degraded. md refuses that ("cannot start dirty degraded array"): a
 * stripe written at the crash may hold parity that does not match its data,
 * and the missing member's blocks would be rebuilt from it wrong. Read-only
 * assemblies are not refused (they get a warning). */
#define URAID_FORCE 8u
/* Assemble flag: the members were just made by create, so they are bound
 * in slot order as mdadm --create adds them (/proc/mdstat's member order);
 * otherwise as mdadm --assemble adds them, the freshest member last. */
#define URAID_CREATED 16u

/* Assemble flags, mdadm's --update=no-bbl and --update=force-no-bbl: the
 * members' bad block logs are removed from their superblocks (bblog
 * offset, size and shift zeroed, MD_FEATURE_BAD_BLOCKS cleared), written as
 * the array assembles read-write. NO_BBL refuses (-EBUSY, nothing written)
 * while a member's log records bad blocks; FORCE_NO_BBL drops them (the
 * ranges are then read again like any other). 0.90 arrays have no log:
 * -EINVAL. */
#define URAID_UPDATE_NO_BBL       32u
#define URAID_UPDATE_FORCE_NO_BBL 64u

/* Re-add a member that was briefly missing (failed and removed, or absent
 * at assembly) into the slot its superblock names (md's --re-add). With a
 * bitmap whose events_cleared the member has not fallen behind, only the
 * chunks marked dirty are recovered. A member that missed writes no bitmap
 * covers is refused with -ESTALE, as md refuses it (uraid_add takes it as a
 * spare, recovered completely); one that missed nothing is recovered
 * completely. A faulty entry of the same member is dropped first. -EINVAL
 * when it is not a former member of an empty slot (use uraid_add), -EBUSY
 * while another recovery runs. uraid_add re-adds such a member by itself when the bitmap
 * allows the partial recovery. */
int uraid_re_add(struct uraid_array *a, const char *path, char *err, size_t errlen);
/* The same for an opened member; the array takes ownership (closed on
 * failure too). */
int uraid_re_add_member(struct uraid_array *a, struct member *m, char *err, size_t errlen);
/* Sectors the recoveries of re-added members skipped as clean. */
uint64_t uraid_bitmap_recovery_skipped(struct uraid_array *a);

/* ------------------------------------------------------------------------
 * The configuration file (src/control/config.c, config_scan.c): mdadm.conf's
 * syntax. Lines are "KEYWORD word...", a line starting with white space
 * continues the one before, '#' starts a comment, words may be quoted with
 * "" or ''. Keywords (any case, at least their first three letters):
 *   DEVICE glob... | partitions | containers   where members are looked for
 *   ARRAY [DEVNAME] tag=value...   UUID= name= devices=glob,... spares=N
 *         spare-group= metadata= (level= num-devices= super-minor= auto=
 *         bitmap= container= member= are accepted and ignored)
 *   MAILADDR addr   MAILFROM addr   PROGRAM path   HOMEHOST name
 *   CREATE AUTO POLICY PART-POLICY SYSFS ENCRYPTION   accepted, ignored
 * Default path URAID_CONFIG_DEFAULT, else $URAID_CONFIG, else --config.
 * ------------------------------------------------------------------------ */
#define URAID_CONFIG_DEFAULT "/etc/uraid/uraid.conf"
struct uraid_config_array {
	char devname[256];             /* as written ("/dev/md/NAME", "/dev/md0"), "" none */
	char name[URAID_NAME_MAX + 1]; /* what uraid runs it as: DEVNAME's last part,
	                                  else name= without "host:", "" none */
	char md_name[64];              /* name= as written, "" none */
	char uuid[36];                 /* UUID= as md_uuid_format prints it, "" none */
	char **devices;                /* devices= globs */
	int ndevices;
	int spares; /* spares=, -1 none */
	char spare_group[64];
	char metadata[16];
	int line; /* where it starts in the file */
};
struct uraid_config {
	char file[4096]; /* the path it was read from ("" parsed text) */
	char **device;   /* DEVICE words in order, "partitions" included */
	int ndevice;
	struct uraid_config_array *arrays;
	int narrays;
	char mailaddr[256], mailfrom[256], program[4096], homehost[256];
};
/* Parse text (len bytes; NUL bytes are refused). `file` names it in
 * messages. 0 and *out (uraid_config_free it), or -EINVAL with err saying
 * "FILE:LINE: what is wrong". */
int uraid_config_parse(const char *text, size_t len, const char *file, struct uraid_config **out,
                       char *err, size_t errlen);
/* Read and parse path, or (NULL) $URAID_CONFIG, else URAID_CONFIG_DEFAULT.
 * The default missing is an empty configuration; a path given (or
 * $URAID_CONFIG) missing is -ENOENT. */
int uraid_config_load(const char *path, struct uraid_config **out, char *err, size_t errlen);
void uraid_config_free(struct uraid_config *c);
/* The ARRAY line for NAME: its name, DEVNAME ("/dev/md/NAME" or the whole
 * DEVNAME), name= (with or without the "host:" part) or UUID. NULL if none. */
const struct uraid_config_array *uraid_config_find(const struct uraid_config *c, const char *name);
/* Candidate members: the array's devices= globs when it has them (arr may
 * be NULL), else the DEVICE lines' globs (partitions: every device in
 * /proc/partitions; no DEVICE line at all means partitions), expanded,
 * deduplicated, existing files and block devices only. *paths malloc'ed
 * (uraid_config_paths_free). */
int uraid_config_candidates(const struct uraid_config *c, const struct uraid_config_array *arr,
                            char ***paths, int *n, char *err, size_t errlen);
/* The candidates whose md superblock has arr's UUID (or, an ARRAY line
 * without UUID, its name=): 0 with *n >= 0 (0: none found). */
int uraid_config_members(const struct uraid_config *c, const struct uraid_config_array *arr,
                         char ***paths, int *n, char *err, size_t errlen);
void uraid_config_paths_free(char **paths, int n);
/* "xxxxxxxx:xxxxxxxx:xxxxxxxx:xxxxxxxx" from 32 hex digits separated by any
 * of ':' '.' '-' ' ' (mdadm's UUID= forms): 0, or -EINVAL. */
int uraid_uuid_parse(const char *s, char out[36]);
/* ---- overlays: recovery that cannot make things worse ---- */

/* Assemble like uraid_assemble, with every member behind a copy-on-write
 * overlay in the directory `dir` (dir NULL: uraid_assemble). Each member is
 * opened read-only; everything the array writes (superblock updates,
 * resync, recovery, the caller's writes) goes to the member's overlay file
 * in dir, one per member, made on first use; reads see the overlay where it
 * holds a block, else the member. So a forced assembly, a resync or fsck can
 * be tried, and its result looked at, with no change to a member; then
 * uraid_overlay_commit writes the result to the members, or
 * uraid_overlay_discard drops it. With URAID_RDONLY an existing overlay is
 * read and nothing is created.
 *
 * dir must be a directory of the caller's that nobody else can write,
 * reached as the run directory is (uraid_run_dir's rule; a missing last
 * component is created 0700, with URAID_RDONLY too: a read-only trial of a
 * first use sees the directory the writable assembly will use, empty). Refused: a directory
 * holding an overlay of another array (md: by the array uuid; GEOM: name
 * and id), members of different arrays, an overlay whose member changed
 * since it was made (size, modification time, its first or last MiB), an
 * overlay in use by another running array or a member in use by an array
 * without an overlay (-EBUSY), an unfinished commit. The array's flags get
 * URAID_OVERLAY and uraid_status reports dir; members added later (add,
 * replace, re-add, add-journal) get overlays in dir too. An overlay's map
 * is made durable by uraid_flush: writes not flushed when the process dies
 * may be lost, as on a power cut. */
#define URAID_OVERLAY 128u
/* Assemble flag: the array starts with md's sync_action frozen (no resync,
 * recovery or reshape runs until uraid_sync_freeze(a, false)), so that a
 * caller can set limits (uraid_sync_speed) before the first sync batch. */
#define URAID_FROZEN 256u
int uraid_assemble_overlay(const char *const *paths, int n, unsigned flags, const char *dir,
                           struct uraid_array **out, char *err, size_t errlen, char *warn,
                           size_t warnlen);
/* The overlay directory of an array assembled through overlays, else NULL. */
const char *uraid_overlay_dir(const struct uraid_array *a);

#define URAID_OVERLAY_PATH_MAX 2800 /* a member's path as an overlay records it */
struct uraid_overlay_info {
	char file[256];                      /* its file name in the directory */
	char member[URAID_OVERLAY_PATH_MAX]; /* the member it belongs to (its path) */
	char array[64];                      /* "md:UUID", "gmirror:NAME:ID", "graid3:..." */
	uint64_t member_bytes;
	uint64_t held_bytes; /* bytes of the member the overlay holds (whole 4 KiB blocks,
	                        as of the last flush) */
	uint64_t created;    /* unix time */
	bool in_use;         /* an array runs on it now */
	bool commit_interrupted;
	/* 0: the member is as it was when the overlay was made; else a negative
	 * errno (-ESTALE changed, -ENOENT gone, ...) and problem says why. A
	 * damaged overlay also has a problem (and member_state -EINVAL). */
	int member_state;
	char problem[512];
};
/* The overlays in dir, malloc'ed into *out (free it), *n of them. */
int uraid_overlay_list(const char *dir, struct uraid_overlay_info **out, int *n, char *err,
                       size_t errlen);
/* Write every block the overlays in dir hold to their members, flush them,
 * then remove the overlays; *bytes (may be NULL): bytes written. Checked
 * for every overlay before anything is written, each refusal naming the
 * problem: one in use by a running array or a member in use (-EBUSY), a
 * member that changed since its overlay was made or cannot be opened,
 * overlays of two arrays, a damaged overlay. A commit that is interrupted
 * (crash, I/O error) keeps the overlays and is finished by running it
 * again (the members' fingerprints are not checked then). */
int uraid_overlay_commit(const char *dir, uint64_t *bytes, char *err, size_t errlen);
/* Remove the overlays in dir (none in use, none with an unfinished commit:
 * -EBUSY). *n (may be NULL): how many. */
int uraid_overlay_discard(const char *dir, int *n, char *err, size_t errlen);

/* Members on other machines: a member name that is an NBD URI (nbd://HOST
 * [:PORT]/EXPORT, nbds://..., nbd+unix:///EXPORT?socket=PATH, nbds+unix://)
 * is an export reached through libnbd; see README "Remote members". */
bool uraid_member_is_remote(const char *name);
struct uraid_remote_link {
	char name[256];
	int role;
	enum uraid_member_state state;
	bool link_down; /* the connection is dead (the member fails at its next request) */
	char link[256]; /* "nbd connected, N requests, latency ..." */
};
/* The remote members of a running array, up to max: their count. */
int uraid_remote_links(struct uraid_array *a, struct uraid_remote_link *out, int max);
/* One pass of the daemon's reconnect policy (control/remote_watch.c): fail
 * an in-sync remote member whose connection died, and re-add each faulty
 * remote member whose server answers again (with a write-intent bitmap only
 * the chunks written meanwhile are recovered). Returns how many came back;
 * `log` (may be NULL) gets a line per action. */
int uraid_remote_reconnect(struct uraid_array *a, char *log, size_t loglen);
/* Restripe a running raid4/5/6 (md's reshape, mdadm --grow --raid-devices /
 * --layout / --chunk): more members (spares take the new slots), fewer (the
 * last slots' members become spares), another layout or chunk. The data
 * moves in the background (sync action URAID_SYNC_RESHAPE) into room before
 * the data area, forwards, or after it, backwards from the end (a data
 * offset change, as mdadm does with 1.x superblocks); the superblocks record the
 * position as md does, so the kernel or uraid resumes it after a stop or a
 * crash. Fields: 0 / -1 keep the current value. Needs a clean, complete
 * array without bitmap, journal, PPL or stripe cache. */
/* uraid_reshape_opts.level for raid0 (0 there is "unchanged"): a raid5 is
 * restriped to parity-last with its data members, then taken over as raid0,
 * its parity member failed out of the array (mdadm's analyse_change and
 * impose_level); raid_disks, when given, is the raid0's (one less). */
#define URAID_RESHAPE_TO_RAID0 100
struct uraid_reshape_opts {
	int raid_disks;         /* 0: unchanged */
	int layout;             /* md layout number, -1: unchanged */
	uint32_t chunk_sectors; /* 0: unchanged */
	/* Sectors the data offset moves by (md's data offset change); 0: as
	 * much room as there is on that side of the data, up to 16 MiB. */
	uint32_t move_sectors;
	/* With the member count unchanged: 0 as mdadm picks (toward the more
	 * room), 1 forwards (the data offset moves down), -1 backwards (up,
	 * the move from the end down). More members always go forwards,
	 * fewer backwards (after uraid_grow URAID_GROW_ARRAY_SIZE made the
	 * array fit). */
	int direction;
	/* The new level (mdadm --grow --level, a change that moves data:
	 * raid5 -> raid6, raid6 -> raid5, raid4/raid0 -> raid5, raid0 ->
	 * raid4, raid5 -> raid0 as URAID_RESHAPE_TO_RAID0); 0: unchanged. */
	int level;
	/* mdadm's --backup-file: a grow (more members) reshaped in place,
	 * the data offset kept (0.90 always, 1.x when given or without
	 * room): the critical section (the first new rows, written over old
	 * rows still needed) is saved to this file first, in mdadm's format,
	 * durable before it is overwritten; the file must not exist yet.
	 * NULL: none (then a grow without room is refused in mdadm's words).
	 * backup_member, when set, is used instead (not closed). */
	const char *backup_file;
	struct member *backup_member;
	/* mdadm's --force: a grow with fewer spares than new slots goes on,
	 * the slots without one left empty (the array ends degraded, as md's
	 * raid5_start_reshape leaves it) as long as the new geometry stays
	 * readable; false: refused with mdadm's "Need N spares to avoid
	 * degraded array". raid10 (md refuses it) ignores it. */
	bool force;
};
int uraid_array_reshape_start(struct uraid_array *a, const struct uraid_reshape_opts *o, char *err,
                              size_t errlen);
/* mdadm --assemble --backup-file: as uraid_assemble(_members), and an
 * in-place reshape interrupted in its critical section (refused "too early
 * for auto-recovery" without the file) is first restored from mdadm's or
 * uraid's backup of it, as mdadm's Grow_restart does: the file's uuid, its
 * time against the superblocks', its checksums and the section it holds
 * are checked (a foreign, stale or unneeded backup is refused with a
 * message), the section is written in the new layout, the position
 * recorded past it and the backup forgotten (where the file is writable);
 * the reshape then goes on. A backup given where none is needed is not
 * read. The backup member is the caller's. */
int uraid_assemble_backup(const char *const *paths, int n, unsigned flags, const char *backup_file,
                          struct uraid_array **out, char *err, size_t errlen, char *warn,
                          size_t warnlen);
int uraid_assemble_members_backup(struct member **members, int n, unsigned flags,
                                  struct member *backup, struct uraid_array **out, char *err,
                                  size_t errlen, char *warn, size_t warnlen);

/* Members in memory (tmpfs files) are mapped and copied to and from without
 * system calls, but only in a process whose owner installed this guard: a
 * SIGBUS handler that turns a fault in a member's mapping (its file
 * truncated by someone else) into -EIO, failing that member as on a disk
 * error. Process-wide state, so the library never installs it by itself:
 * the program (the uraid CLI and daemon, the nbdkit plugin's load) calls
 * it once before opening arrays. Idempotent and thread-safe; a SIGBUS that
 * is not such a fault goes on to the handler installed before (the default
 * action when there was none). URAID_MEMBER_MMAP=0 in the environment keeps
 * members unmapped. 0 or -errno. */
int uraid_member_map_guard_install(void);

#ifdef __cplusplus
}
#endif
#endif
