/* Reshapes md refuses (engine/reshape.c, reshape_level.c,
 * reshape_raid10.c): level changes md cannot make or not with these
 * members, raid10 changes md's raid10_check_reshape refuses, a degraded
 * grow without the spare for the new slot, and 0.90 in-place changes
 * without a backup file. Each is refused in mdadm's (or the kernel's)
 * words and not a byte of any member changes. */
#include "reshape_common.h"

#define RS_SECTORS 512 /* per member */
#define RS_DISK    (2u << 20)

/* Level changes md cannot make, or not with these members: refused in
 * mdadm's words, and not a byte of any member changes. */
static bool refused(int level, int n, int spares, const struct uraid_reshape_opts *ro,
                    const char *want)
{
	struct te_disk d[TE_MAX];
	memset(d, 0, sizeof(d));
	int nd = n + spares;
	rsc_disks_open(d, nd, "f", RS_DISK);
	struct uraid_create_opts o = rsc_opts(level, n, 16, RS_SECTORS);
	struct uraid_array *a = NULL;
	char err[512] = "";
	bool ok = false;
	if (te_create(&o, d, n, &a) < 0) {
		CHECKF(0, "level %d, %d members: create failed", level, n);
		goto out;
	}
	for (int i = n; i < nd; i++)
		if (uraid_add_member(a, te_borrow(&d[i]), err, sizeof(err)) < 0)
			goto out;
	CHECK(uraid_flush(a) == 0);
	static uint8_t before[TE_MAX][RS_DISK], after[RS_DISK];
	for (int i = 0; i < nd; i++)
		CHECK(te_pread(d[i].fault, before[i], RS_DISK, 0) == RS_DISK);
	int rc = uraid_array_reshape_start(a, ro, err, sizeof(err));
	CHECK(uraid_flush(a) == 0);
	bool same = true;
	for (int i = 0; i < nd; i++) {
		CHECK(te_pread(d[i].fault, after, RS_DISK, 0) == RS_DISK);
		same = same && !memcmp(before[i], after, sizeof(after));
	}
	ok = rc < 0 && strstr(err, want) && same;
	CHECKF(ok, "level %d -> %d, %d members + %d spares: rc %d, \"%s\", members %s", level,
	       ro->level, n, spares, rc, err, same ? "unchanged" : "WRITTEN");
out:
	if (a)
		uraid_stop(a);
	for (int i = 0; i < nd; i++)
		te_disk_close(&d[i]);
	return ok;
}

static void level_refusals(void)
{
	struct uraid_reshape_opts ro = {.layout = -1, .level = URAID_LEVEL_RAID6};
	refused(URAID_LEVEL_RAID5, 4, 0, &ro,
	        "Need 1 spare to avoid degraded array, and only have 0.");
	ro.raid_disks = 6;
	refused(URAID_LEVEL_RAID5, 4, 1, &ro,
	        "Need 2 spares to avoid degraded array, and only have 1.");
	ro.raid_disks = 4;
	refused(URAID_LEVEL_RAID5, 4, 1, &ro, "this change will reduce the size of the array");
	ro = (struct uraid_reshape_opts){.layout = -1, .level = URAID_LEVEL_RAID6};
	refused(URAID_LEVEL_RAID1, 2, 1, &ro, "Impossible level change requested");
	ro.level = URAID_LEVEL_RAID5;
	ro.raid_disks = 3;
	refused(URAID_LEVEL_RAID6, 5, 0, &ro, "this change will reduce the size of the array");
	ro.raid_disks = 0;
	ro.layout = 8; /* rotating-zero-restart: no raid5 twin */
	refused(URAID_LEVEL_RAID6, 5, 0, &ro, "Please specify new layout");
}

/* raid10 changes md refuses: in mdadm's (or the kernel's) words, nothing
 * written. */
static void raid10_refusals(void)
{
	struct uraid_reshape_opts ro = {.layout = 0x202}; /* far-2 */
	refused(URAID_LEVEL_RAID10, 4, 0, &ro, "Cannot reshape RAID10 to far-mode");
	ro.layout = 0x103; /* near-3 */
	refused(URAID_LEVEL_RAID10, 4, 0, &ro,
	        "Cannot change number of copies when reshaping RAID10");
	ro = (struct uraid_reshape_opts){.layout = -1, .raid_disks = 5};
	refused(URAID_LEVEL_RAID10, 4, 0, &ro, "needs 1 spare(s)");
	ro.raid_disks = 3;
	refused(URAID_LEVEL_RAID10, 4, 0, &ro, "this change will reduce the size of the array");
	ro.raid_disks = 1;
	refused(URAID_LEVEL_RAID10, 4, 0, &ro, "needs at least 2 members");
	ro = (struct uraid_reshape_opts){.layout = -1, .chunk_sectors = 24};
	refused(URAID_LEVEL_RAID10, 4, 0, &ro, "not a multiple of the new chunk");
}

/* A degraded grow md refuses (mdadm: too few spares for the new slot):
 * in mdadm's words, not a byte written. */
static void degraded_refusals(void)
{
	struct te_disk d[4];
	char err[512] = "";
	rsc_disks_open(d, 4, "g", 2u << 20);
	struct uraid_create_opts o = rsc_opts(URAID_LEVEL_RAID5, 4, 16, RS_SECTORS);
	struct uraid_array *a = NULL;
	static uint8_t before[4][RS_DISK], after[RS_DISK];
	if (te_create(&o, d, 4, &a) < 0) {
		CHECKF(0, "create failed");
		goto out;
	}
	CHECK(uraid_fail(a, "g1", err, sizeof(err)) == 0 &&
	      uraid_remove(a, "g1", err, sizeof(err)) == 0 && uraid_flush(a) == 0);
	for (int i = 0; i < 4; i++)
		CHECK(te_pread(d[i].fault, before[i], RS_DISK, 0) == RS_DISK);
	struct uraid_reshape_opts g = {.raid_disks = 5, .layout = -1};
	int rc = uraid_array_reshape_start(a, &g, err, sizeof(err));
	CHECKF(rc == -EINVAL &&
	           strstr(err, "Need 1 spare to avoid degraded array, and only have 0."),
	       "degraded 4 -> 5 without a spare: %d %s", rc, err);
	struct uraid_reshape_opts l = {.layout = -1, .level = URAID_LEVEL_RAID6};
	rc = uraid_array_reshape_start(a, &l, err, sizeof(err));
	CHECKF(rc == -EINVAL &&
	           strstr(err, "Need 1 spare to avoid degraded array, and only have 0."),
	       "degraded raid5 -> raid6 without a spare: %d %s", rc, err);
	CHECK(uraid_flush(a) == 0);
	for (int i = 0; i < 4; i++) {
		CHECK(te_pread(d[i].fault, after, RS_DISK, 0) == RS_DISK);
		CHECKF(i == 1 || !memcmp(before[i], after, sizeof(after)), "member %d written", i);
	}
out:
	if (a)
		uraid_stop(a);
	rsc_disks_close(d, 4);
}

/* A 0.90 chunk change, layout change, shrink or raid5 -> raid6 (the data
 * disks kept) without a backup file: refused in mdadm's words, not a byte
 * written. */
static void slide_refusals(void)
{
	struct te_disk d[6];
	char err[512] = "";
	rsc_disks_open(d, 6, "h", 2u << 20);
	struct uraid_create_opts o = rsc_opts(URAID_LEVEL_RAID5, 5, 16, RS_SECTORS);
	o.metadata = 0;
	struct uraid_array *a = NULL;
	static uint8_t before[6][RS_DISK], after[RS_DISK];
	if (te_create(&o, d, 5, &a) < 0) {
		CHECKF(0, "create failed");
		goto out;
	}
	CHECK(uraid_grow(a, URAID_GROW_ARRAY_SIZE, RS_SECTORS * 3, err, sizeof(err)) == 0);
	CHECK(uraid_add_member(a, te_borrow(&d[5]), err, sizeof(err)) == 0); /* raid6's Q */
	CHECK(uraid_flush(a) == 0);
	for (int i = 0; i < 6; i++)
		CHECK(te_pread(d[i].fault, before[i], RS_DISK, 0) == RS_DISK);
	struct uraid_reshape_opts ask[4] = {{.layout = -1, .chunk_sectors = 8},
	                                    {.layout = LAYOUT_RIGHT_ASYMMETRIC},
	                                    {.layout = -1, .raid_disks = 4},
	                                    {.layout = -1, .level = 6}};
	for (int k = 0; k < 4; k++) {
		int rc = uraid_array_reshape_start(a, &ask[k], err, sizeof(err));
		CHECKF(rc == -ENOSPC && strstr(err, "Cannot grow - need backup-file") &&
		           strstr(err, "--backup-file"),
		       "0.90 reshape %d without a backup file: %d %s", k, rc, err);
	}
	CHECK(uraid_flush(a) == 0);
	for (int i = 0; i < 6; i++) {
		CHECK(te_pread(d[i].fault, after, RS_DISK, 0) == RS_DISK);
		CHECKF(!memcmp(before[i], after, sizeof(after)), "member %d written", i);
	}
out:
	if (a)
		uraid_stop(a);
	rsc_disks_close(d, 6);
}

TEST_MAIN(T(level_refusals), T(raid10_refusals), T(degraded_refusals), T(slide_refusals))
