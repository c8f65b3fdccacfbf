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
	size_t columns_bad;  /* byte columns where P or Q disagree */
	size_t columns_fixed; /* columns repaired (single-member errors) */
	int member;          /* index 0..k+1 of the one block found wrong, -1 if none,
	                        -2 if different columns blame different blocks */
	size_t first_bad;    /* first bad byte offset (valid if columns_bad > 0) */
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

#ifdef __cplusplus
}
#endif
#endif
