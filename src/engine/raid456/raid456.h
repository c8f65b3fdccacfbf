/* The raid456 personality (raid4, raid5, raid6): its descriptor
 * (raid456.c), stripe buffers and the member I/O of stripes (stripe.c), the
 * stripe cache (stripe_cache*.c) and sync work (sync.c). The write journal
 * (engine/journal/) builds on the stripe buffers too. */
#ifndef URAID_ENGINE_RAID456_H
#define URAID_ENGINE_RAID456_H

#include "engine/core/engine.h"

extern const struct eng_pers eng_pers_raid456;

static inline bool eng_raid456(const struct eng_array *a)
{
	return a->pers == &eng_pers_raid456;
}

/* Parity blocks per stripe: 2 for raid6 (P and Q), else 1. */
static inline int eng_nparity(const struct eng_array *a)
{
	return a->geo.level == URAID_LEVEL_RAID6 ? 2 : 1;
}

/* md's stripe unit (RAID5_STRIPE_SECTORS, 4 KiB): md judges a member's
 * bad blocks per stripe head of this size, and records them so. */
#define RAID456_BB_UNIT 8

/* Logical sectors of one stripe's data. */
static inline uint64_t eng_stripe_width(const struct eng_array *a)
{
	return (uint64_t)(a->geo.raid_disks - eng_nparity(a)) * a->geo.chunk_sectors;
}

/* stripe.c: stripe buffers and the member I/O of stripes. */
/* Syndrome position of data index di. */
int eng_stripe_data_pos(const struct eng_stripe_buf *sb, int di);
/* Whole stripes [s0, s0+n) from src: parity from the data, no reads. */
int eng_write_full_stripes(struct eng_array *a, const struct eng_req *rq, uint64_t s0, int n,
                           const uint8_t *src);
/* stripe_mapped.c: the first of whole stripes [s0, s0+n) from src written
 * straight into mapped members (raid4/5/6); returns how many (0..n), the rest
 * for eng_write_full_stripes' member requests. */
int eng_write_full_mapped(struct eng_array *a, uint64_t s0, int n, const uint8_t *src);
/* stripe_mapped.c: a read-modify-write of rows [co, co+nrows) of data index
 * di of stripe buffer sb (its layout and roles; no bytes read) from src,
 * straight in mapped members: P (and Q) updated in the parity members'
 * pages from the old and new data, the new data then over the old. 1: done;
 * 0: not possible here (a log, a reshape, a member not mapped, writable or
 * without bad blocks there), nothing written; -EIO: a page faulted part
 * way, the parity there may be half updated: the caller must reconstruct-
 * write (parity from the data alone). */
struct eng_stripe_buf;
int eng_write_rmw_mapped(struct eng_array *a, const struct eng_stripe_buf *sb, int di, uint64_t co,
                         uint64_t nrows, const uint8_t *src);
/* Logical sectors as the members hold them (reconstructed where a member
 * cannot serve; no cache). */
int eng_parity_read_members(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec);
/* A write straight to the members (no cache): whole stripes from the data,
 * the rest by read-modify-write or reconstruct-write. */
int eng_parity_write_direct(struct eng_array *a, const struct eng_req *rq, const uint8_t *buf,
                            uint64_t lsec, uint64_t nsec);
/* Read the rows [co, co+n) of stripe `s` for every role into blocks laid out
 * in syndrome order (k data, P, Q); roles unreadable are reconstructed when
 * possible. */
struct eng_stripe_buf {
	struct layout_stripe ls;
	int k;    /* data blocks */
	int nsyn; /* syndrome positions (k, or more for DDF layouts) */
	bool has_q;
	uint64_t nsec;        /* rows held */
	uint8_t *mem;         /* (nsyn + 1 or 2) * nsec * 512 */
	struct member_ioq *q; /* a->ioq unless the request brings its own */
	bool shared;          /* eng_req.shared: errors give -EBUSY, no repairs */
	void *blk[LAYOUT_MAX_MEMBERS + 2];
	int pos_role[LAYOUT_MAX_MEMBERS + 2]; /* syndrome position -> role, -1 for zero fill */
};
int eng_stripe_buf_init(struct eng_array *a, struct eng_stripe_buf *sb, uint64_t stripe,
                        uint64_t nsec);
void eng_stripe_buf_free(struct eng_array *a, struct eng_stripe_buf *sb);
/* Read rows [co, co+nsec) of all members; missing/failed ones are
 * reconstructed. `lost` receives the positions that had to be rebuilt. */
int eng_stripe_read_all(struct eng_array *a, struct eng_stripe_buf *sb, uint64_t co, bool *lost);
/* Read only the positions in `want`; -EAGAIN when one of them cannot be
 * read (the caller then uses eng_stripe_read_all). */
int eng_stripe_read(struct eng_array *a, struct eng_stripe_buf *sb, uint64_t co, const bool *want,
                    bool *lost);
/* Write the positions in `dirty` to every writable member. */
int eng_stripe_write(struct eng_array *a, struct eng_stripe_buf *sb, uint64_t co,
                     const bool *dirty);
/* Regenerate P (and Q) from the data positions. */
int eng_stripe_gen(struct eng_array *a, struct eng_stripe_buf *sb);
/* Read-modify-write of P (and Q) over the touched data blocks of `sb`, whose
 * old data and old parity are in it: fill(ctx, di, block) puts the new bytes
 * of data index di over a copy of its old block; parity is updated from old
 * and new, then the new blocks replace the old. 0, -ENOMEM or -EIO. */
typedef void (*eng_rmw_fill_fn)(void *ctx, int di, uint8_t *block);
int eng_stripe_rmw(struct eng_array *a, struct eng_stripe_buf *sb, const bool *touched,
                   int ntouched, uint64_t nrows, eng_rmw_fill_fn fill, void *ctx);
static inline int eng_stripe_npos(const struct eng_stripe_buf *sb)
{
	return sb->nsyn + (sb->has_q ? 2 : 1);
}

/* sync.c: resync, check, repair and recovery of member rows [pos, pos+n)
 * (a->action says which); any chunk boundaries, large member requests. */
int sync_parity_batch(struct eng_array *a, uint64_t pos, uint64_t n);
/* Only rows [pos, pos+n) of one chunk: the careful path (read retries,
 * reconstruction, read-error correction), also for RAID6 repair. */
int sync_parity_piece(struct eng_array *a, uint64_t pos, uint64_t n);

/* reshape.c: the reshape op (pers.h). */
int eng_r456_reshape(struct eng_array *a, uint64_t lsec, uint64_t n);

#endif
