/* Setup and verification shared by the reshape tests
 * (test_engine_reshape.c: power cuts; test_engine_reshape_fail.c: member
 * failures): the arrays they make, the geometry a reshape must end at, and
 * the closing check (no mismatch). */
#ifndef RESHAPE_COMMON_H
#define RESHAPE_COMMON_H

#include "test_engine_common.h"

/* An md 1.2 array made clean (--assume-clean) of `sectors` per member. */
static inline struct uraid_create_opts rsc_opts(int level, int n, uint32_t chunk, uint64_t sectors)
{
	return (struct uraid_create_opts){.level = level,
	                                  .raid_devices = n,
	                                  .chunk_sectors = chunk,
	                                  .metadata = 12,
	                                  .metadata_set = true,
	                                  .assume_clean = true,
	                                  .size_sectors = sectors};
}

/* n disks of `bytes`, named PREFIX0, PREFIX1, ... */
static inline void rsc_disks_open(struct te_disk *d, int n, const char *prefix, uint64_t bytes)
{
	for (int i = 0; i < n; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "%s%d", prefix, i);
		te_disk_open(&d[i], nm, bytes);
	}
}

static inline void rsc_disks_close(struct te_disk *d, int n)
{
	for (int i = 0; i < n; i++)
		te_disk_close(&d[i]);
}

/* A number from the environment (trial counts, seeds), else def. */
static inline uint64_t rsc_env(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	return v && *v ? strtoull(v, NULL, 0) : def;
}

/* The reshape is over at the geometry asked: to_disks members, the new
 * chunk (0: the old one kept), the layout (-1: any). */
static inline bool rsc_geometry(const struct uraid_status *st, int to_disks, uint32_t chunk,
                                uint32_t to_chunk, int layout)
{
	return st->reshape == 0 && st->raid_disks == to_disks &&
	       st->chunk_sectors == (to_chunk ? to_chunk : chunk) &&
	       (layout < 0 || st->layout == (uint32_t)layout);
}

/* check, run to its end: the mismatch count (UINT64_MAX: it did not run). */
static inline uint64_t rsc_check(struct uraid_array *a)
{
	char err[512];
	struct uraid_status st;
	if (uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) < 0 || te_sync_all(a) < 0) {
		fprintf(stderr, "check: %s\n", err);
		return UINT64_MAX;
	}
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	return st.mismatch_cnt;
}

#endif
