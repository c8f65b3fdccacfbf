/* The arrays test_engine_badblocks*.c work on: configurations of every
 * level with a log, created on te_disks, filled with a seeded shadow and
 * stopped cleanly; assembled through borrowed members so the disks (and
 * their fault wrappers) stay with the test. */
#ifndef URAID_TEST_BBL_ARRAYS_H
#define URAID_TEST_BBL_ARRAYS_H

#include "engine/core/engine.h"
#include "test_engine_common.h"

#define MB   (1u << 20)
#define DATA 2048 /* data sectors per member the array uses */
#define MSEC 6144 /* sectors of a member */

/* ---- arrays ---------------------------------------------------------------- */

struct cfg {
	const char *name;
	int level;
	const char *layout;
	int n;
};
static const struct cfg cfgs[] = {
    {"raid1", URAID_LEVEL_RAID1, NULL, 2},
    {"raid10_n2", URAID_LEVEL_RAID10, "n2", 4},
    {"raid10_f2", URAID_LEVEL_RAID10, "f2", 3},
    {"raid4", URAID_LEVEL_RAID4, NULL, 4},
    {"raid5", URAID_LEVEL_RAID5, "left-symmetric", 4},
    {"raid6", URAID_LEVEL_RAID6, "left-symmetric", 5},
    {"raid0", URAID_LEVEL_RAID0, NULL, 3},
};
#define NCFG (sizeof(cfgs) / sizeof(cfgs[0]))

struct arr {
	const struct cfg *c;
	struct te_disk d[8];
	uint8_t *shadow;
	uint64_t size, doff;
	struct layout_geometry g;
	const struct layout_ops *ops;
};

static int asm_flags(struct arr *r, unsigned flags, struct uraid_array **a, char *err,
                     size_t errlen)
{
	struct member *mm[8];
	for (int i = 0; i < r->c->n; i++)
		mm[i] = te_borrow(&r->d[i]);
	return uraid_assemble_members(mm, r->c->n, URAID_NO_SYNC_THREAD | flags, a, err, errlen,
	                              NULL, 0);
}

static struct uraid_array *asm_ok(struct arr *r)
{
	char err[512] = "";
	struct uraid_array *a = NULL;
	int rc = asm_flags(r, 0, &a, err, sizeof(err));
	CHECKF(rc == 0, "%s: assemble: %s", r->c->name, err);
	return rc == 0 ? a : NULL;
}

/* Created, filled with a random shadow, stopped cleanly. */
static bool mk(struct arr *r, const struct cfg *c, uint64_t seed)
{
	memset(r, 0, sizeof(*r));
	r->c = c;
	for (int i = 0; i < c->n; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "m%d", i);
		te_disk_open(&r->d[i], nm, 3 * MB);
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = c->level;
	o.raid_devices = c->n;
	o.chunk_sectors = 64;
	o.size_sectors = DATA;
	o.assume_clean = true;
	if (c->layout) {
		layout_parse(c->level, c->layout, &o.layout);
		o.layout_set = true;
	}
	struct uraid_array *a = NULL;
	if (te_create(&o, r->d, c->n, &a) < 0)
		return false;
	struct eng_array *e = eng_of(a);
	r->g = e->geo;
	r->ops = e->ops;
	r->size = uraid_size(a);
	r->doff = e->mem[0]->sb.data_offset;
	r->shadow = malloc(r->size);
	uint64_t rs = seed;
	t_fill(&rs, r->shadow, r->size);
	CHECK(uraid_write(a, r->shadow, r->size, 0) == 0);
	CHECK(uraid_stop(a) == 0);
	return true;
}

static void arr_free(struct arr *r)
{
	for (int i = 0; i < r->c->n; i++)
		te_disk_close(&r->d[i]);
	free(r->shadow);
}

static bool parity(const struct arr *r)
{
	return r->c->level == URAID_LEVEL_RAID4 || r->c->level == URAID_LEVEL_RAID5 ||
	       r->c->level == URAID_LEVEL_RAID6;
}

#endif
