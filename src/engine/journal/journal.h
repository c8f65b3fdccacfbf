/* Write journal of raid4/5/6 arrays (md's raid5-cache, format in
 * meta/md_journal.h): every stripe write is logged (data + parity, crc32c)
 * to a separate journal member and made durable before the members are
 * written; at assembly the log from journal_tail on is replayed, so a crash
 * never leaves parity that disagrees with its data. Write-back mode
 * acknowledges once the data is in the journal and writes the array later.
 *
 * Locking: everything here runs under eng_lock (journal arrays always take
 * the locked write path, see uraid_write).
 */
#ifndef URAID_ENGINE_JOURNAL_H
#define URAID_ENGINE_JOURNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/core/log.h"
#include "meta/md_journal.h"

struct eng_journal_pending;

#define ENG_GC_MAX    256  /* pages in one write-back group commit */
#define ENG_WB_FIN    1024 /* fast write-back units in flight, at most */
#define WB_FAST_PAGES 16   /* largest fast write-back request: 64 KiB */

/* The write-back cache (writeback.c): 4 KiB pages by array page number. */
struct eng_wb_cache {
	size_t cap;     /* slots, power of two */
	size_t n;       /* cached pages */
	size_t max;     /* pages before a write-out */
	uint64_t *key;  /* array page number + 1; 0 = empty slot */
	uint8_t **data; /* 4 KiB each */
	/* Log sectors the write-out of the cache needs at most. */
	uint64_t out_cost;
};

struct eng_journal {
	struct eng_member em; /* the journal member (em.m NULL when missing) */
	bool failed;          /* missing, faulty or an I/O error: writes refused */
	bool in_memory;       /* read-only array: replayed into copy-on-write views */
	char why[160];        /* why writes are refused */
	enum uraid_journal_mode mode;
	uint32_t seed;     /* crc32c seed from the array uuid */
	uint64_t size;     /* ring sectors (multiple of 8) */
	uint64_t tail;     /* journal_tail: meta block recovery starts from */
	uint64_t head;     /* where the next meta block goes */
	uint64_t seq;      /* seq of the next meta block */
	uint64_t last_pos; /* the last unit written (a valid meta block) */
	bool dirty_tail;   /* units written since the tail was last moved */
	/* Build area of one log write: meta blocks + pages, in ring order. */
	uint8_t *buf;
	size_t buf_cap;
	struct mdj_meta meta; /* unit being built */
	/* Replay results (engine/journal/replay.c). */
	uint64_t replayed_rows, replayed_data_only;
	struct eng_journal_pending *pending; /* data-only pages to write back */
	/* Write-back cache (engine/journal/writeback.c), NULL in write-through. */
	struct eng_wb_cache *wb;
	/* Write-back group commit (engine/journal/writeback.c). */
	bool gc_io;  /* a batch's log write is in flight (lock released) */
	size_t gc_n; /* pages pending for the next batch */
	uint8_t *gc_pg[ENG_GC_MAX];
	uint64_t gc_page[ENG_GC_MAX];
	uint64_t gc_gen;     /* generation of the batch being filled */
	uint64_t gc_done;    /* last generation written */
	uint64_t gc_err_gen; /* generation of the last failure */
	int gc_err;
	uint8_t *gc_buf;
	size_t gc_cap;
	/* Write-back fast path (eng_wb_fast_write): under iolock shared. */
	pthread_mutex_t mu; /* ring reservation and the cache */
	pthread_cond_t cv;
	bool mu_inited;
	uint64_t inflight;    /* units reserved, not yet acknowledged */
	uint64_t waiters;     /* writers waiting for an earlier unit */
	uint64_t durable_seq; /* every unit up to this seq is durable */
	bool fin[ENG_WB_FIN]; /* by seq: written */
	int fast_err;         /* a fast log write failed */
};

/* The write journal as the array's log (journal_log.c). */
extern const struct eng_log_ops eng_log_journal;

/* The journal of an array whose log is the journal. */
static inline struct eng_journal *eng_journal_of(const struct eng_array *a)
{
	return (struct eng_journal *)a->log_state;
}

/* Pages the write-back cache holds (0 in write-through). */
static inline uint64_t eng_wb_pages(const struct eng_array *a)
{
	const struct eng_journal *j = eng_journal_of(a);
	return j && j->wb ? j->wb->n : 0;
}

static inline bool eng_wb_has(const struct eng_array *a)
{
	return eng_wb_pages(a) > 0;
}

/* journal.c: the log itself. */
/* The journal state (a->log_state), allocated when there is none. */
struct eng_journal *eng_journal_new(struct eng_array *a);
/* Free the state (and close the journal member); not the write-back cache. */
void eng_journal_free(struct eng_array *a);
/* Writes refused from now on, for `why`. */
void eng_journal_set_failed(struct eng_journal *j, const char *why);
/* Ring size and checksum seed from the journal member's superblock. */
int eng_journal_geometry(struct eng_array *a, char *err, size_t errlen);
/* Log the rows [co, co+nsec) of n stripe buffers (positions in `dirty`,
 * all real positions when NULL): data pages, P (and Q); durable on return. */
int eng_journal_log(struct eng_array *a, struct eng_stripe_buf *sb, int n, uint64_t co,
                    const bool *dirty);
/* Largest piece (sectors) of a write at lsec the journal takes in one go. */
uint64_t eng_journal_piece(const struct eng_array *a, uint64_t lsec, uint64_t nsec);
/* Members flushed: the log before the last unit is no longer needed. */
int eng_journal_reclaim(struct eng_array *a);
/* The journal member failed (I/O error): writes refused from now on. */
void eng_journal_fail(struct eng_array *a, const char *why);
/* Write the journal member's superblock (after every superblock update). */
int eng_journal_sb_write(struct eng_array *a);
/* Role table entry for the journal device, or -1 when there is none. */
int eng_journal_dev(const struct eng_array *a, uint16_t *role_word);
/* Read or write one ring range (ring sectors, may wrap); flags as for
 * member_write (MEMBER_FUA: durable on return). */
int eng_journal_ring_io(struct eng_array *a, bool write, void *buf, uint64_t pos, uint64_t nsec,
                        unsigned flags);

/* journal_log.c: uraid_journal_mode of an md array. */
int eng_journal_mode(struct eng_array *a, enum uraid_journal_mode mode, char *err, size_t errlen);
/* journal_add.c: uraid_journal_add_member of an md array. */
int eng_journal_add_member(struct eng_array *a, struct member *m, char *err, size_t errlen);

/* replay.c: scan from the tail, replay data+parity stripes, keep data-only
 * pages for the log's start. */
int eng_journal_replay(struct eng_array *a, char *err, size_t errlen);
int eng_journal_replay_finish(struct eng_array *a);

/* writeback.c: write-back cache. */
int eng_wb_enable(struct eng_array *a);
void eng_wb_free(struct eng_array *a);
/* A write in write-back mode: logged (data only) and cached. Locked path. */
int eng_wb_write(struct eng_array *a, const uint8_t *buf, uint64_t lsec, uint64_t nsec);
/* The same for aligned writes without the array lock; -EAGAIN: locked path. */
int eng_wb_fast_write(struct eng_array *a, const uint8_t *buf, uint64_t lsec, uint64_t nsec);
/* Newest data over what was read from the members. */
void eng_wb_overlay(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec);
/* Write every cached page to the array (logged with parity). */
int eng_wb_flush(struct eng_array *a);
/* Wait until no write-back batch is in flight (before any other log write). */
void eng_wb_quiesce(struct eng_array *a);

#endif
