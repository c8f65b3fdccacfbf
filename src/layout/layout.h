/* Layout personalities: pure address math, no I/O.
 *
 * Every md level (linear, raid0, raid1, raid4, raid5, raid6, raid10) is one
 * personality in its own file behind `struct layout_ops`. All sectors are
 * 512-byte sectors. Member sectors are relative to the member's data area
 * (the engine adds the superblock's data_offset).
 */
#ifndef URAID_LAYOUT_H
#define URAID_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uraid.h"

#define LAYOUT_MAX_MEMBERS 256

/* md layout numbers for raid5/6 (md_p.h / mdadm maps.c). */
enum {
	LAYOUT_LEFT_ASYMMETRIC = 0,
	LAYOUT_RIGHT_ASYMMETRIC = 1,
	LAYOUT_LEFT_SYMMETRIC = 2,
	LAYOUT_RIGHT_SYMMETRIC = 3,
	LAYOUT_PARITY_0 = 4, /* parity-first */
	LAYOUT_PARITY_N = 5, /* parity-last (raid4-like) */
	LAYOUT_DDF_ZERO_RESTART = 8,
	LAYOUT_DDF_N_RESTART = 9,
	LAYOUT_DDF_N_CONTINUE = 10,
	LAYOUT_LEFT_ASYMMETRIC_6 = 16,
	LAYOUT_RIGHT_ASYMMETRIC_6 = 17,
	LAYOUT_LEFT_SYMMETRIC_6 = 18,
	LAYOUT_RIGHT_SYMMETRIC_6 = 19,
	LAYOUT_PARITY_0_6 = 20,
};

/* raid0 multi-zone layouts (feature bit 4096). */
enum { RAID0_LAYOUT_NONE = 0, RAID0_LAYOUT_ORIG = 1, RAID0_LAYOUT_ALT = 2 };

/* What a personality needs to know about an array. Filled from the md
 * superblock (or from create parameters). */
struct layout_geometry {
	int level; /* enum uraid_level */
	/* md layout word (raid5/6 algorithm, raid10 n/f/o, raid0 zone layout).
	 * raid0 1.x: pass 0 unless the superblock has MD_FEATURE_RAID0_LAYOUT,
	 * as the kernel ignores the field then (multi-zone arrays are refused). */
	uint32_t layout;
	uint32_t chunk_sectors; /* chunk size in sectors; linear: rounding (0 = none) */
	int raid_disks;
	/* Striped and mirrored levels (1, 4, 5, 6, 10): sectors of each member
	 * the array uses (md superblock `size`; 0.90: size KiB * 2). raid4/5/6
	 * round it down to the chunk; raid10 derives its own per-member use and
	 * far-copy stride from it exactly as the kernel does (see member_used). */
	uint64_t dev_sectors;
	/* linear and raid0: usable data sectors of the member in each role
	 * (1.x: superblock `data_size`; 0.90: the superblock's sector offset,
	 * as data runs from 0 up to it), before chunk rounding. */
	uint64_t member_sectors[LAYOUT_MAX_MEMBERS];
};

struct layout_loc {
	int role;        /* member role (slot), 0..raid_disks-1 */
	uint64_t sector; /* sector within that member's data area */
};

/* One stripe of a parity level (raid4/5/6). */
struct layout_stripe {
	int ndata;       /* data blocks per stripe (k) */
	int p_role;      /* role holding P */
	int q_role;      /* role holding Q, -1 for raid4/5 */
	uint64_t sector; /* first member sector of this stripe's chunks (same on every member) */
	int data_role[LAYOUT_MAX_MEMBERS]; /* data index (array order) -> role */
	/* data index -> position in the Q syndrome (md order: members from
	 * the one after Q, wrapping, skipping P and Q); raid4/5: data order */
	int q_index[LAYOUT_MAX_MEMBERS];
};

/* The roles of stripe s's blocks in the order src/parity/'s gen and recover
 * take them (data in syndrome order, then P, then Q when there is one);
 * returns the number of blocks (ndata + 1 or ndata + 2). role_of holds
 * LAYOUT_MAX_MEMBERS + 2 entries. */
int layout_stripe_blocks(const struct layout_stripe *s, int *role_of);

struct layout_ops {
	int level;
	const char *name; /* "linear", "raid0", ... as in /proc/mdstat */
	/* Refuse geometry the kernel refuses (bad chunk, too few members, unknown
	 * or unsupported layout, multi-zone raid0 without a layout, ...):
	 * -EINVAL or -EOPNOTSUPP with a message naming the problem. */
	int (*validate)(const struct layout_geometry *g, char *err, size_t errlen);
	/* Logical size of the array in sectors, as the kernel computes it.
	 * Call validate first: the other ops assume a valid geometry. */
	uint64_t (*array_sectors)(const struct layout_geometry *g);
	/* Copies of each logical sector: 1 for linear/0/4/5/6, n for raid1, the
	 * near/far/offset copy count for raid10. */
	int (*ncopies)(const struct layout_geometry *g);
	/* Where copy `copy` of logical sector `lsec` lives. *len receives how many
	 * sectors from lsec stay contiguous on that member (to the end of the
	 * chunk, zone or member) — the same for every copy. Returns 0 or -ERANGE. */
	int (*map)(const struct layout_geometry *g, uint64_t lsec, int copy, struct layout_loc *loc,
	           uint64_t *len);
	/* Parity levels only (NULL elsewhere): the roles of stripe `stripe`. The
	 * data of stripe s covers logical sectors [s*k*chunk, (s+1)*k*chunk). */
	void (*stripe)(const struct layout_geometry *g, uint64_t stripe, struct layout_stripe *s);
	/* Can every logical sector still be read with the members in `missing`
	 * (indexed by role) gone? Exact for the array's size: raid10 only
	 * checks the copy sets some chunk of this array uses (the kernel's
	 * enough() checks them all; the two differ only for arrays with fewer
	 * chunks than members). */
	bool (*readable)(const struct layout_geometry *g, const bool *missing);
	/* Sectors at the start of `role`'s data area that the array uses (data,
	 * copies, parity); anything after is unused by md. */
	uint64_t (*member_used)(const struct layout_geometry *g, int role);
	/* Reverse of map: what member sector `msec` of `role` holds.
	 * LAYOUT_DATA with *lsec = the logical sector (one of its copies);
	 * LAYOUT_P / LAYOUT_Q with *lsec = the first logical sector of that
	 * stripe's data; -ERANGE when md does not use that sector. */
	int (*unmap)(const struct layout_geometry *g, int role, uint64_t msec, uint64_t *lsec);
};

enum { LAYOUT_DATA = 0, LAYOUT_P = 1, LAYOUT_Q = 2 };

/* The personality for a level, or NULL. */
const struct layout_ops *layout_ops_for(int level);

/* Convenience: find ops and validate. */
int layout_validate(const struct layout_geometry *g, char *err, size_t errlen);

/* Names <-> numbers, mdadm's spelling ("left-symmetric", "ls", "n2", "f2",
 * "o2", "original", "alternate", ...). Return -EINVAL for unknown names. */
int layout_parse(int level, const char *name, uint32_t *layout);
int layout_name(int level, uint32_t layout, char *buf, size_t len);
int level_parse(const char *name, int *level); /* "raid5", "5", "linear", "mirror", ... */
const char *level_name(int level);
/* The same, NULL for a level uraid does not know. */
const char *level_name_or_null(int level);
/* mdadm's default layout for a level (left-symmetric, n2, ...). */
uint32_t layout_default(int level);

/* FreeBSD graid3 (src/layout/raid3.c): ncomp = 2^n + 1 components, the last
 * one parity. Each provider sector of `psector` bytes is cut into
 * d = ncomp - 1 atoms of psector / d bytes; atom i goes to data component i
 * at component offset (provider offset) / d, parity is their XOR. */
struct raid3_geom {
	int ncomp;
	uint32_t psector;
};
/* 0 when ncomp is 2^n + 1 (3..33) and psector a multiple of d whose atom is
 * a power of two >= 512; else -EINVAL. */
int raid3_validate(const struct raid3_geom *g);
static inline uint64_t raid3_comp_off(const struct raid3_geom *g, uint64_t prov_off)
{
	return prov_off / (uint64_t)(g->ncomp - 1);
}
/* Split len bytes (a multiple of psector) into the d data buffers
 * (len / d bytes each) and compute parity into comp[d]. */
void raid3_scatter(const struct raid3_geom *g, const uint8_t *src, size_t len,
                   uint8_t *const *comp);
/* Join the d data buffers back into len bytes. */
void raid3_gather(const struct raid3_geom *g, const uint8_t *const *comp, size_t len, uint8_t *dst);
/* comp[skip] = XOR of all other ncomp - 1 buffers (clen bytes each). */
void raid3_rebuild(const struct raid3_geom *g, uint8_t *const *comp, size_t clen, int skip);
/* True when the XOR of all ncomp buffers is zero everywhere. */
bool raid3_consistent(const struct raid3_geom *g, const uint8_t *const *comp, size_t clen);

#endif
