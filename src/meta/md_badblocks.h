/* md's bad block log (1.x superblocks): per member, the ranges md could not
 * write there (or read and not correct), so that it never reads them from
 * that member again. A pure codec and the list of ranges; no I/O.
 *
 * Where (md.c super_1_load / super_1_sync, mdadm super1.c): bblog_size
 * sectors at super_offset + bblog_offset (signed: 1.0 puts the log below the
 * superblock). bblog_offset 0 means the member has no log; the feature bit
 * MD_FEATURE_BAD_BLOCKS says the log holds entries (md clears it when the
 * last range goes, and then never reads the log).
 *
 * Entries: 64-bit little-endian words,
 *   bits 63..10  start, in blocks of 2^bblog_shift sectors
 *   bits  9..0   length, in the same blocks (md writes 1..512, BB_MAX_LEN)
 * an all-ones word ends the table (md fills the rest of its page with
 * ones). Starts are absolute member sectors: the data offset is included.
 * md's in-memory form (badblocks.h BB_MAKE) has an "acknowledged" bit 63,
 * which the disk form does not keep: a range is acknowledged once the
 * superblock that records it has been written, so everything loaded from
 * disk is acknowledged (super_1_load calls badblocks_set(..., 1)).
 */
#ifndef URAID_MD_BADBLOCKS_H
#define URAID_MD_BADBLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meta/md_super.h"

#define MD_BBL_PAGE_ENTRIES 512 /* md keeps one 4 KiB page of entries (MAX_BADBLOCKS) */
#define MD_BBL_MAX_SECTORS  8   /* super_1_load refuses a larger log */
#define MD_BBL_ENTRY_BLOCKS 512 /* md's BB_MAX_LEN: the longest entry it writes */
#define MD_BBL_LEN_FIELD    1023u
#define MD_BBL_MAX_SHIFT    21 /* md shifts entry lengths in an int */

struct md_bb_range {
	uint64_t start, len; /* absolute member sectors */
};

/* A member's log: where it is, and its ranges (sorted, disjoint, adjacent
 * ones merged, each a whole number of blocks). */
struct md_bbl {
	uint64_t sector;  /* absolute member sector of the log */
	uint32_t sectors; /* bblog_size */
	unsigned shift;   /* bblog_shift */
	int n;
	struct md_bb_range r[MD_BBL_PAGE_ENTRIES];
};

/* Where the member's log is (dev_sectors: the member's size). 1 with l's
 * place filled and no ranges; 0 when the member has none (0.90, bblog_offset
 * 0 or bblog_size 0); -EINVAL, the message naming the field, for a log md
 * could not use or that would overwrite something: flagged but without an
 * offset, more than 8 sectors, a shift beyond 21, outside the member, over
 * the superblock or the data area. */
int md_bbl_locate(const struct md_sb *sb, uint64_t dev_sectors, struct md_bbl *l, char *err,
                  size_t errlen);

/* Decode the log's bytes (len = l->sectors * 512) into l's ranges. Refused
 * (-EINVAL, naming the entry and its sectors): a length of 0, a range past
 * the end of the member, two entries that overlap. md itself writes none of
 * these. An all-zero word is skipped (what md does with it: 6.1 sets 0
 * sectors, later kernels skip it); words after the all-ones end are not
 * entries. Unsorted entries are sorted, adjacent ones merged. */
int md_bbl_decode(struct md_bbl *l, const uint8_t *buf, size_t len, uint64_t dev_sectors, char *err,
                  size_t errlen);

/* Entry i of a raw log as md and mdadm read it (start and length in
 * sectors, shift applied): 1, or 0 at the end of the table. */
int md_bbl_entry(const uint8_t *buf, size_t len, unsigned shift, int i, uint64_t *start,
                 uint64_t *sectors);

/* Encode l into len bytes: its ranges as entries of at most 512 blocks, the
 * rest all ones. -ENOSPC when they need more entries than fit. */
int md_bbl_encode(const struct md_bbl *l, uint8_t *buf, size_t len);

/* Entries l's ranges take on disk, and how many its log holds: the log's
 * sectors, at most md's one page. */
int md_bbl_entries(const struct md_bbl *l);
int md_bbl_capacity(const struct md_bbl *l);

/* Record [start, start+len) as bad (md's badblocks_set: the start rounded
 * down, the end up to whole blocks; merged with what touches it). 1 when the
 * list changed, 0 when it was already recorded, -ENOSPC (list unchanged)
 * when the log would overflow, -EINVAL for an empty or overflowing range. */
int md_bbl_add(struct md_bbl *l, uint64_t start, uint64_t len);

/* Forget [start, start+len) (md's badblocks_clear: the start rounded up, the
 * end down; ranges split). 1 when the list changed, 0 when nothing was
 * recorded there, -ENOSPC (unchanged) when a split would overflow the log. */
int md_bbl_clear(struct md_bbl *l, uint64_t start, uint64_t len);

/* Does [start, start+len) touch a recorded range? The first such range's
 * first sector inside the window and how many bad sectors follow it there. */
bool md_bbl_find(const struct md_bbl *l, uint64_t start, uint64_t len, uint64_t *first_bad,
                 uint64_t *bad_len);

#endif
