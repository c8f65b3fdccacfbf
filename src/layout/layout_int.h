/* Internal helpers shared by the personalities (not part of the contract). */
#ifndef URAID_LAYOUT_INT_H
#define URAID_LAYOUT_INT_H

#include "layout/layout.h"

extern const struct layout_ops layout_linear_ops, layout_raid0_ops, layout_raid1_ops,
    layout_raid4_ops, layout_raid5_ops, layout_raid6_ops, layout_raid10_ops;

static inline bool layout_is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* raid_disks within [min, max]; names the level in the message. */
int layout_check_disks(const struct layout_geometry *g, int min, int max, char *err, size_t errlen);
/* ncopies for the levels that keep one copy of each sector (linear, raid0,
 * raid4/5/6). */
int layout_one_copy(const struct layout_geometry *g);
/* readable for the levels without redundancy (linear, raid0): every member. */
bool layout_none_missing(const struct layout_geometry *g, const bool *missing);

/* Striped levels with md's power-of-two rule (raid4/5/6/10): a power of two
 * of at least 8 sectors (4 KiB, the kernel's PAGE_SIZE). */
int layout_check_chunk_pow2(const struct layout_geometry *g, char *err, size_t errlen);

/* ---- raid4/5/6 stripe math (stripe_math.c) ----
 * A parity personality is described by the level and md algorithm; every
 * helper below assumes the geometry passed validation. */

/* Data blocks per stripe. */
int parity_ndata(const struct layout_geometry *g);
/* P and Q (-1 for raid4/5) roles of stripe `stripe`. */
void parity_pq(const struct layout_geometry *g, uint64_t stripe, int *pd, int *qd);
/* Role of data index `idx` in a stripe whose P/Q roles are pd/qd. */
int parity_data_role(const struct layout_geometry *g, uint64_t stripe, int pd, int qd, int idx);
/* Shared ops bodies. */
uint64_t parity_array_sectors(const struct layout_geometry *g);
int parity_map(const struct layout_geometry *g, uint64_t lsec, int copy, struct layout_loc *loc,
               uint64_t *len);
void parity_stripe(const struct layout_geometry *g, uint64_t stripe, struct layout_stripe *s);
uint64_t parity_member_used(const struct layout_geometry *g, int role);
int parity_unmap(const struct layout_geometry *g, int role, uint64_t msec, uint64_t *lsec);
/* Readable while no more members are missing than there are parity blocks. */
bool parity_readable(const struct layout_geometry *g, const bool *missing);
/* Size checks common to raid4/5/6 (dev_sectors holds at least one chunk,
 * array size fits 64 bits). */
int parity_check_size(const struct layout_geometry *g, char *err, size_t errlen);

#endif
