/* The room a reshape moves the data offset into with an internal bitmap
 * (engine/reshape.c room_before/room_after): md's new_offset_store lets the
 * offset move up while the used sectors still fit the member's data_size,
 * and super_1_allow_new_offset refuses nothing upwards (1.1/1.2 keep the
 * bitmap before the data; 1.0 after it, below the superblock, and mdadm's
 * space_after stops there). So a raid5 5 -> 4 shrink (backwards, the
 * offset moving up) with a bitmap runs on 1.2 and on 1.0 where the members
 * are larger than --size: it ends at 4 members, the content is what was
 * written, the bitmap is the same size and loads again at the next
 * assembly, check finds no mismatch. Where nothing is free after the data
 * it is refused as without a bitmap ("Cannot grow - need backup-file"),
 * not a byte of any member changed. */
#include "reshape_common.h"

#define RM_N      5
#define RM_DISK   (2u << 20)
#define RM_SECTOR 512 /* --size, per member; 0: all of it */

static void rm_images(struct te_disk *d, uint8_t (*img)[RM_DISK])
{
	for (int i = 0; i < RM_N; i++)
		CHECK(d[i].mem->ops->pread(d[i].mem, img[i], RM_DISK, 0) == RM_DISK);
}

/* A 1.x (metadata 10 or 12) raid5 of 5 with an internal bitmap, --size
 * `sectors`, shrunk to 4 after --array-size. want_ok: it must run to the
 * end; else be refused in mdadm's words, nothing written. */
static void shrink_with_bitmap(int metadata, uint64_t sectors, bool want_ok)
{
	struct te_disk d[RM_N];
	char err[512], warn[512];
	static uint8_t before[RM_N][RM_DISK], after[RM_N][RM_DISK];
	memset(d, 0, sizeof(d));
	rsc_disks_open(d, RM_N, "q", RM_DISK);
	struct uraid_create_opts o = rsc_opts(URAID_LEVEL_RAID5, RM_N, 16, sectors);
	o.metadata = metadata;
	struct uraid_array *a = NULL;
	CHECKF(te_create(&o, d, RM_N, &a) == 0, "1.%d: create", metadata % 10);
	if (!a) {
		rsc_disks_close(d, RM_N);
		return;
	}
	CHECKF(uraid_bitmap_add(a, 4096, err, sizeof(err)) == 0, "1.%d: bitmap: %s", metadata % 10,
	       err);
	struct uraid_status st0, st;
	memset(&st0, 0, sizeof(st0));
	uraid_status(a, &st0);
	uint64_t per = st0.dev_sectors;
	uint64_t size = per * 3 * 512; /* what 4 members hold */
	CHECKF(uraid_grow(a, URAID_GROW_ARRAY_SIZE, size / 512, err, sizeof(err)) == 0,
	       "1.%d: array size: %s", metadata % 10, err);
	uint8_t *shadow = malloc(size);
	uint64_t r = 0x400f + (uint64_t)metadata;
	for (uint64_t i = 0; i < size; i++)
		shadow[i] = (uint8_t)t_rand(&r);
	CHECK(uraid_write(a, shadow, size, 0) == 0 && uraid_flush(a) == 0);
	CHECK(uraid_sync_wait(a) == 0);
	rm_images(d, before);
	struct uraid_reshape_opts ro = {.raid_disks = 4, .layout = -1};
	int rc = uraid_array_reshape_start(a, &ro, err, sizeof(err));
	if (!want_ok) {
		CHECKF(rc < 0 && strstr(err, "Cannot grow - need backup-file"),
		       "1.%d, no room after the data: refused in mdadm's words: %d %s",
		       metadata % 10, rc, err);
		rm_images(d, after);
		CHECKF(!memcmp(before, after, sizeof(before)), "1.%d: the refusal wrote",
		       metadata % 10);
		uraid_stop(a);
		rsc_disks_close(d, RM_N);
		free(shadow);
		return;
	}
	CHECKF(rc == 0, "1.%d with a bitmap, room after the data: the shrink starts: %s",
	       metadata % 10, err);
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECKF(rc < 0 || st.reshape == 2, "1.%d: it runs backwards (reshape %d)", metadata % 10,
	       st.reshape);
	CHECK(te_sync_all(a) == 0);
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECKF(st.reshape == 0 && st.raid_disks == 4, "1.%d: reshape %d, %d members", metadata % 10,
	       st.reshape, st.raid_disks);
	CHECKF(st.bitmap_chunk_kib == st0.bitmap_chunk_kib && st.bitmap_chunks == st0.bitmap_chunks,
	       "1.%d: bitmap %u KiB x %llu after, %u KiB x %llu before", metadata % 10,
	       st.bitmap_chunk_kib, (unsigned long long)st.bitmap_chunks, st0.bitmap_chunk_kib,
	       (unsigned long long)st0.bitmap_chunks);
	CHECK(te_verify(a, shadow, size) == 0);
	CHECK(uraid_stop(a) == 0);
	/* assembled again: the superblocks' new offset, the bitmap loads */
	struct member *mm[RM_N];
	for (int i = 0; i < RM_N; i++)
		mm[i] = te_borrow(&d[i]);
	a = NULL;
	rc = uraid_assemble_members(mm, RM_N, URAID_NO_SYNC_THREAD, &a, err, sizeof(err), warn,
	                            sizeof(warn));
	CHECKF(rc == 0, "1.%d: assembled after the shrink: %s", metadata % 10, err);
	if (rc == 0) {
		memset(&st, 0, sizeof(st));
		uraid_status(a, &st);
		CHECKF(st.raid_disks == 4 && st.bitmap_chunks == st0.bitmap_chunks,
		       "1.%d: %d members, bitmap of %llu chunks", metadata % 10, st.raid_disks,
		       (unsigned long long)st.bitmap_chunks);
		CHECK(te_verify(a, shadow, size) == 0);
		uint64_t mis = rsc_check(a);
		CHECKF(mis == 0, "1.%d: %llu mismatches", metadata % 10, (unsigned long long)mis);
		uraid_stop(a);
	}
	rsc_disks_close(d, RM_N);
	free(shadow);
}

static void bitmap_room_12(void)
{
	shrink_with_bitmap(12, RM_SECTOR, true);
}

static void bitmap_room_10(void)
{
	shrink_with_bitmap(10, RM_SECTOR, true);
}

static void bitmap_no_room(void)
{
	shrink_with_bitmap(12, 0, false);
}

TEST_MAIN(T(bitmap_room_12), T(bitmap_room_10), T(bitmap_no_room))
