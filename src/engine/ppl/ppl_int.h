/* The partial parity log's own state and what its files share: the area
 * of each member's log (ppl_area.c), logging stripe writes (ppl_write.c),
 * recovery at assembly (ppl_recover.c), the log descriptor (ppl_log.c)
 * and the consistency policy switch (ppl_policy.c).
 *
 * Locking: everything runs under eng_lock (a PPL array takes every write
 * on the locked path: ppl_log.c's write op). */
#ifndef URAID_ENGINE_PPL_INT_H
#define URAID_ENGINE_PPL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/ppl/ppl.h"
#include "meta/md_ppl.h"

/* One member's log: the slot's member holds it in its metadata area. */
struct eng_ppl_log {
	const struct member *m; /* the member the fields below are for; NULL: set up anew */
	uint64_t start;         /* device sector of the area */
	uint32_t sectors;       /* usable sectors (the kernel's rounding) */
	bool multi;             /* several I/O units, one after the other */
	uint32_t next;          /* sector in the area where the next unit goes */
	/* Roles the last unit's stripe writes went to, not flushed since: md
	 * recovers only a log's newest unit, so they must be durable before
	 * another unit replaces it. */
	uint64_t unflushed;
};

struct eng_ppl {
	uint32_t signature;
	uint64_t generation; /* of the newest unit (md's seq, from 0 at assembly) */
	int ndisks;
	struct eng_ppl_log log[MD_PPL_MAX_DISKS];
	/* What the assembly's recovery did. */
	uint64_t recovered, mismatches;
	bool marked_clean; /* recovery made parity consistent: superblocks to write */
	bool in_memory;    /* read-only: recovered into copy-on-write views */
	/* Build area of one unit: header + partial parity. */
	uint8_t *buf;
	size_t cap;
};

/* The state of an array whose log is the PPL (callers are its ops, or
 * check a->log first: naming eng_log_ppl here would make every file of
 * the log call ppl_log.c). */
static inline struct eng_ppl *eng_ppl_of(const struct eng_array *a)
{
	return (struct eng_ppl *)a->log_state;
}

/* ppl_area.c */
/* The member holding role's log, NULL when the slot has none. */
struct member *eng_ppl_member(const struct eng_array *a, int role);
/* Set up role's log for its current member (area from its superblock,
 * start of the area); 0 or a negative errno with a message naming the
 * member. */
int eng_ppl_log_setup(struct eng_array *a, int role, char *err, size_t errlen);
/* Start role's log afresh, as md does at every start and for a member
 * added to a slot: the area zeroed, an empty header at its start. */
int eng_ppl_log_reset(struct eng_array *a, int role);
/* Read or write `sectors` of role's area from sector `at` of it (FUA
 * when writing). */
int eng_ppl_area_io(struct eng_array *a, int role, bool write, void *buf, uint64_t at,
                    uint64_t sectors);
/* The state, with every log set up from the superblocks (load, enable). */
struct eng_ppl *eng_ppl_new(struct eng_array *a, char *err, size_t errlen);
void eng_ppl_free(struct eng_array *a);
/* Make the buffer hold at least len bytes. */
int eng_ppl_buf(struct eng_ppl *p, size_t len);

/* ppl_write.c: the log_stripes op. */
int eng_ppl_log_stripes(struct eng_array *a, struct eng_stripe_buf *sb, int n, uint64_t co,
                        const bool *dirty);
/* Sectors of a write at lsec the array takes in one go, so that each
 * stripe write's partial parity fits one unit: whole stripes, else one
 * chunk row range of one stripe. */
uint64_t eng_ppl_piece(const struct eng_array *a, uint64_t lsec, uint64_t nsec);

/* ppl_recover.c: the load op's reading of the logs. */
int eng_ppl_recover(struct eng_array *a, char *err, size_t errlen);

#endif
