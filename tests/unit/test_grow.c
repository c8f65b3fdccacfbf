/* uraid_grow and uraid_takeover through the engine on memory members (no
 * daemon; ASan watches the personality switches): a takeover chain raid0
 * -> raid5 -> raid6 -> raid5 -> raid0 -> raid10 -> raid0 and raid1 <->
 * raid5 of 2, raid0 -> raid4 <-> raid5 -> raid4 -> raid0, spares recovered into the slots each
 * adds, the data compared with what was written after every step and a check finding no mismatches;
 * --size on members with room (the new region resynced),
 * --array-size in memory, raid1's mirror count; md's refusals leave the
 * array as it was. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "member/member.h"
#include "uraid.h"

#define MEMBER (4u << 20)
#define DATA   (2u << 20)

static uint8_t shadow[DATA], buf[DATA];
static int seq;

static struct member *mem(uint64_t bytes)
{
	char nm[32];
	snprintf(nm, sizeof(nm), "grow%d", seq++);
	struct member *m = NULL;
	CHECK(member_open_mem(nm, bytes, &m) == 0);
	return m;
}

static struct uraid_array *make(int level, int n, uint64_t size_sectors)
{
	struct member *m[8];
	for (int i = 0; i < n; i++)
		m[i] = mem(MEMBER);
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = level;
	o.raid_devices = n;
	o.chunk_sectors = 128;
	o.size_sectors = size_sectors;
	o.assume_clean = true;
	struct uraid_array *a = NULL;
	char err[256];
	int rc = uraid_create_members(&o, m, n, URAID_NO_SYNC_THREAD, &a, err, sizeof(err));
	CHECKF(rc == 0, "create: %s", err);
	uint64_t st = 7;
	t_fill(&st, shadow, sizeof(shadow));
	if (a)
		CHECK(uraid_write(a, shadow, DATA, 0) == 0);
	return a;
}

static void settle(struct uraid_array *a)
{
	while (uraid_sync_step(a, 1u << 16) > 0)
		;
}

static bool same(struct uraid_array *a)
{
	memset(buf, 0, sizeof(buf));
	return uraid_read(a, buf, DATA, 0) == 0 && !memcmp(buf, shadow, DATA);
}

static bool clean(struct uraid_array *a)
{
	char err[256];
	if (uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) < 0)
		return false;
	settle(a);
	struct uraid_status st;
	uraid_status(a, &st);
	return st.mismatch_cnt == 0;
}

static void add(struct uraid_array *a)
{
	char err[256];
	CHECKF(uraid_add_member(a, mem(MEMBER), err, sizeof(err)) == 0, "add: %s", err);
	settle(a);
}

static void status(struct uraid_array *a, struct uraid_status *st)
{
	memset(st, 0, sizeof(*st));
	uraid_status(a, st);
}

static int tk(struct uraid_array *a, int level, uint32_t layout)
{
	char err[256];
	int rc = uraid_takeover(a, level, layout, 0, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "# takeover to %d: %s\n", level, err);
	return rc;
}

static void takeover_chain(void)
{
	struct uraid_array *a = make(URAID_LEVEL_RAID0, 2, 0);
	if (!a)
		return;
	struct uraid_status st;
	uint64_t size = uraid_size(a);
	CHECK(tk(a, URAID_LEVEL_RAID5, 2) == -EINVAL); /* left-symmetric would restripe */
	CHECK(tk(a, URAID_LEVEL_RAID5, UINT32_MAX) == 0);
	status(a, &st);
	CHECK(st.level == 5 && st.layout == 5 && st.raid_disks == 3 && st.degraded == 1);
	CHECK(same(a));
	add(a);
	status(a, &st);
	CHECK(st.degraded == 0);
	CHECK(same(a) && clean(a));
	CHECK(tk(a, URAID_LEVEL_RAID6, UINT32_MAX) == 0);
	add(a);
	status(a, &st);
	CHECK(st.level == 6 && st.raid_disks == 4 && st.degraded == 0);
	CHECK(same(a) && clean(a));
	CHECK(tk(a, URAID_LEVEL_RAID5, UINT32_MAX) == 0);
	status(a, &st);
	CHECK(st.level == 5 && st.raid_disks == 3 && st.spares == 1);
	CHECK(same(a) && clean(a));
	char err[256];
	CHECK(tk(a, URAID_LEVEL_RAID0, UINT32_MAX) == -EINVAL);
	CHECK(uraid_fail(a, "#2", err, sizeof(err)) == 0);
	CHECK(tk(a, URAID_LEVEL_RAID0, UINT32_MAX) < 0); /* the spare took slot 2: rebuilding */
	settle(a);
	CHECK(uraid_fail(a, "#2", err, sizeof(err)) == 0);
	status(a, &st);
	for (int i = st.nmembers - 1; i >= 0; i--)
		if (st.members[i].state == URAID_MEMBER_FAULTY)
			uraid_remove(a, st.members[i].name, err, sizeof(err));
	CHECK(tk(a, URAID_LEVEL_RAID0, UINT32_MAX) == 0);
	status(a, &st);
	CHECK(st.level == 0 && st.raid_disks == 2);
	CHECK(uraid_size(a) >= size && same(a));
	CHECK(tk(a, URAID_LEVEL_RAID10, UINT32_MAX) == 0);
	status(a, &st);
	CHECK(st.level == 10 && st.raid_disks == 4 && st.layout == 0x102 && st.degraded == 2);
	CHECK(same(a));
	add(a);
	add(a);
	status(a, &st);
	CHECK(st.degraded == 0);
	CHECK(same(a) && clean(a));
	CHECK(tk(a, URAID_LEVEL_RAID0, UINT32_MAX) == 0);
	status(a, &st);
	CHECK(st.level == 0 && st.raid_disks == 2 && st.nmembers == 2);
	CHECK(same(a));
	CHECK(tk(a, URAID_LEVEL_RAID6, UINT32_MAX) == -EINVAL);
	uraid_stop(a);
}

static void raid4(void)
{
	struct uraid_array *a = make(URAID_LEVEL_RAID0, 3, 0);
	if (!a)
		return;
	struct uraid_status st;
	CHECK(tk(a, URAID_LEVEL_RAID4, UINT32_MAX) == 0);
	status(a, &st);
	CHECK(st.level == 4 && st.layout == 5 && st.raid_disks == 4 && st.degraded == 1);
	add(a);
	CHECK(same(a) && clean(a));
	CHECK(tk(a, URAID_LEVEL_RAID5, UINT32_MAX) == 0);
	status(a, &st);
	CHECK(st.level == 5 && st.layout == 5);
	CHECK(same(a) && clean(a));
	CHECK(tk(a, URAID_LEVEL_RAID4, UINT32_MAX) == 0);
	CHECK(same(a) && clean(a));
	char err[256];
	/* a data member missing: refused, nothing changes (raid0 would
	 * lose its blocks) */
	CHECK(uraid_fail(a, "#1", err, sizeof(err)) == 0);
	uint64_t ev = (status(a, &st), st.events);
	CHECK(tk(a, URAID_LEVEL_RAID0, UINT32_MAX) == -EINVAL);
	status(a, &st);
	CHECK(st.level == 4 && st.raid_disks == 4 && st.events == ev);
	CHECK(same(a));
	uraid_stop(a);
	/* the parity member there: failed out of the array on the way
	 * (mdadm's impose_level) */
	a = make(URAID_LEVEL_RAID0, 3, 0);
	if (!a)
		return;
	CHECK(tk(a, URAID_LEVEL_RAID4, UINT32_MAX) == 0);
	add(a);
	CHECK(tk(a, URAID_LEVEL_RAID0, UINT32_MAX) == 0);
	status(a, &st);
	CHECK(st.level == 0 && st.raid_disks == 3 && st.spares == 0);
	CHECK(same(a));
	uraid_stop(a);
}

static void mirror_raid5(void)
{
	struct uraid_array *a = make(URAID_LEVEL_RAID1, 2, 0);
	if (!a)
		return;
	struct uraid_status st;
	CHECK(tk(a, URAID_LEVEL_RAID5, UINT32_MAX) == 0);
	status(a, &st);
	CHECK(st.level == 5 && st.layout == 2 && st.chunk_sectors == 128 && st.raid_disks == 2);
	CHECK(same(a) && clean(a));
	CHECK(tk(a, URAID_LEVEL_RAID1, UINT32_MAX) == 0);
	status(a, &st);
	CHECK(st.level == 1 && st.chunk_sectors == 0);
	CHECK(same(a) && clean(a));
	/* raid1's mirror count */
	char err[256];
	add(a);
	CHECK(uraid_grow(a, URAID_GROW_RAID_DISKS, 3, err, sizeof(err)) == 0);
	settle(a);
	status(a, &st);
	CHECK(st.raid_disks == 3 && st.degraded == 0);
	CHECK(uraid_grow(a, URAID_GROW_RAID_DISKS, 2, err, sizeof(err)) == -EBUSY);
	CHECK(tk(a, URAID_LEVEL_RAID5, UINT32_MAX) == -EINVAL); /* 3 mirrors */
	CHECK(uraid_fail(a, "#0", err, sizeof(err)) == 0);
	status(a, &st);
	for (int i = st.nmembers - 1; i >= 0; i--)
		if (st.members[i].state == URAID_MEMBER_FAULTY)
			uraid_remove(a, st.members[i].name, err, sizeof(err));
	CHECK(uraid_grow(a, URAID_GROW_RAID_DISKS, 2, err, sizeof(err)) == 0);
	status(a, &st);
	CHECK(st.raid_disks == 2 && st.degraded == 0);
	CHECK(same(a) && clean(a));
	uraid_stop(a);
}

static void sizes(void)
{
	/* 1.2 members of 4 MiB used for 2 MiB each: room to grow. */
	struct uraid_array *a = make(URAID_LEVEL_RAID5, 3, 4096);
	if (!a)
		return;
	char err[256];
	struct uraid_status st;
	status(a, &st);
	CHECK_EQ_U64(st.dev_sectors, 4096);
	CHECK(uraid_grow(a, URAID_GROW_SIZE, 1u << 20, err, sizeof(err)) == -ENOSPC);
	CHECK(uraid_grow(a, URAID_GROW_SIZE, 0, err, sizeof(err)) == 0);
	status(a, &st);
	CHECK(st.dev_sectors > 4096 && st.dev_sectors % 128 == 0);
	CHECK(st.sync_action == URAID_SYNC_RESYNC || st.sync_action == URAID_SYNC_IDLE);
	CHECK(st.sync_done <= 4096 || st.sync_action == URAID_SYNC_IDLE);
	settle(a);
	CHECK(same(a) && clean(a));
	uint64_t full = uraid_size(a);
	CHECK(uraid_grow(a, URAID_GROW_ARRAY_SIZE, full / 512 + 8, err, sizeof(err)) == -E2BIG);
	CHECK(uraid_grow(a, URAID_GROW_ARRAY_SIZE, 8192, err, sizeof(err)) == 0);
	CHECK_EQ_U64(uraid_size(a), 8192 * 512);
	CHECK(uraid_read(a, buf, 4096, 8192 * 512) < 0);
	CHECK(uraid_grow(a, URAID_GROW_SIZE, 1024, err, sizeof(err)) == -ENOSPC);
	CHECK(uraid_grow(a, URAID_GROW_SIZE, 4096, err, sizeof(err)) == 0);
	CHECK(uraid_grow(a, URAID_GROW_ARRAY_SIZE, 0, err, sizeof(err)) == 0);
	CHECK_EQ_U64(uraid_size(a), 8192 * 512);
	CHECK(uraid_grow(a, URAID_GROW_BITMAP_NONE, 0, err, sizeof(err)) == -ENOENT);
	CHECK(uraid_grow(a, URAID_GROW_BITMAP_INTERNAL, 0, err, sizeof(err)) == 0);
	/* md resizes the bitmap with the members (raid5_resize ->
	 * md_bitmap_resize): its bits follow the new per-member size, the
	 * chunk doubled while header + bits outgrow 1.2's space (the old
	 * bitmap's sectors). */
	status(a, &st);
	uint64_t ck = st.bitmap_chunk_kib * 2, nb0 = st.bitmap_chunks;
	uint64_t space = (256 + (nb0 + 7) / 8 + 511) / 512;
	CHECK_EQ_U64(nb0, (4096 + ck - 1) / ck);
	CHECK(uraid_grow(a, URAID_GROW_SIZE, 0, err, sizeof(err)) == 0);
	settle(a);
	status(a, &st);
	CHECK(st.dev_sectors > 4096);
	while (256 + ((st.dev_sectors + ck - 1) / ck + 7) / 8 > space * 512)
		ck *= 2;
	CHECK_EQ_U64(st.bitmap_chunk_kib * 2, ck);
	CHECK_EQ_U64(st.bitmap_chunks, (st.dev_sectors + ck - 1) / ck);
	CHECK(same(a) && clean(a));
	CHECK(uraid_grow(a, URAID_GROW_ARRAY_SIZE, 8192, err, sizeof(err)) == 0);
	CHECKF(uraid_grow(a, URAID_GROW_SIZE, 4096, err, sizeof(err)) == 0, "%s", err);
	CHECK(uraid_grow(a, URAID_GROW_ARRAY_SIZE, 0, err, sizeof(err)) == 0);
	status(a, &st);
	CHECK_EQ_U64(st.bitmap_chunks, (4096 + ck - 1) / ck);
	CHECK(uraid_grow(a, URAID_GROW_BITMAP_NONE, 0, err, sizeof(err)) == 0);
	status(a, &st);
	CHECK(st.bitmap_chunk_kib == 0);
	CHECK(uraid_read(a, buf, DATA, 0) == 0 &&
	      !memcmp(buf, shadow, 8192 * 512 > DATA ? DATA : 8192 * 512));
	uraid_stop(a);
	/* raid0 has no per-member size */
	a = make(URAID_LEVEL_RAID0, 2, 0);
	if (a) {
		CHECK(uraid_grow(a, URAID_GROW_SIZE, 0, err, sizeof(err)) == -EINVAL);
		CHECK(uraid_grow(a, URAID_GROW_RAID_DISKS, 3, err, sizeof(err)) == -EINVAL);
		uraid_stop(a);
	}
}

TEST_MAIN(T(takeover_chain), T(raid4), T(mirror_raid5), T(sizes))
