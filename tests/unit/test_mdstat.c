/* uraid_mdstat_format against /proc/mdstat as the kernel printed it (Debian
 * 6.1 in shared/mdvm) for arrays in the same states: the expected texts are
 * the kernel's lines with its vdX names replaced by the names given here.
 * Each array below is described as uraid_status reports it. */
#include <errno.h>

#include "../harness.h"
#include "uraid.h"

static struct uraid_member_status mem(const char *name, int role, uint32_t nr,
                                      enum uraid_member_state s, unsigned flags)
{
	struct uraid_member_status m = {.role = role, .dev_number = nr, .state = s, .flags = flags};
	snprintf(m.name, sizeof(m.name), "/some/dir/%s", name);
	return m;
}

static void expect(const char *name, const struct uraid_status *st, const char *want)
{
	char got[4096];
	int n = uraid_mdstat_format(name, st, got, sizeof(got));
	CHECKF(n == (int)strlen(want) && !strcmp(got, want), "%s:\n--- got (%d)\n%s--- want\n%s",
	       name, n, n > 0 ? got : "", want);
}

static struct uraid_status raid5(void)
{
	struct uraid_status st = {.level = 5,
	                          .layout = 2,
	                          .chunk_sectors = 128,
	                          .raid_disks = 4,
	                          .metadata = 12,
	                          .array_sectors = 43008,
	                          .dev_sectors = 14336};
	st.members[0] = mem("vdc", 0, 0, URAID_MEMBER_IN_SYNC, 0);
	st.members[1] = mem("vdd", 1, 5, URAID_MEMBER_REBUILDING, 0);
	st.members[2] = mem("vde", 2, 2, URAID_MEMBER_IN_SYNC, 0);
	st.members[3] = mem("vdf", 3, 4, URAID_MEMBER_IN_SYNC, 0);
	st.members[4] = mem("vdg", -1, 6, URAID_MEMBER_SPARE, 0);
	st.nmembers = 5;
	st.degraded = 1;
	return st;
}

/* Recovery onto vdd with vdg a spare: kernel at 1024 of 7168 blocks. */
static void mdstat_recovery(void)
{
	struct uraid_status st = raid5();
	st.sync_action = URAID_SYNC_RECOVER;
	st.sync_done = 3072;
	st.sync_total = 14336;
	st.sync_speed_kibs = 512;
	expect("md1", &st,
	       "md1 : active raid5 vdg[6](S) vdd[5] vdf[4] vde[2] vdc[0]\n"
	       "      21504 blocks super 1.2 level 5, 64k chunk, algorithm 2 [4/3] [U_UU]\n"
	       "      [====>................]  recovery = 20.0% (1536/7168) finish=0.1min "
	       "speed=512K/sec\n"
	       "      \n");
}

/* The same array in sync, checking; a member failed; the replacement. */
static void mdstat_check_fail_replace(void)
{
	struct uraid_status st = raid5();
	st.members[1].state = URAID_MEMBER_IN_SYNC;
	st.degraded = 0;
	st.sync_action = URAID_SYNC_CHECK;
	st.sync_done = 2048;
	st.sync_total = 14336;
	st.sync_speed_kibs = 341;
	expect("md1", &st,
	       "md1 : active raid5 vdg[6](S) vdd[5] vdf[4] vde[2] vdc[0]\n"
	       "      21504 blocks super 1.2 level 5, 64k chunk, algorithm 2 [4/4] [UUUU]\n"
	       "      [==>..................]  check = 13.3% (1024/7168) finish=0.2min "
	       "speed=341K/sec\n"
	       "      \n");
	st.sync_action = URAID_SYNC_REPAIR; /* md says resync for a repair */
	st.sync_done = 3856;
	expect("md1", &st,
	       "md1 : active raid5 vdg[6](S) vdd[5] vdf[4] vde[2] vdc[0]\n"
	       "      21504 blocks super 1.2 level 5, 64k chunk, algorithm 2 [4/4] [UUUU]\n"
	       "      [====>................]  resync = 20.0% (1928/7168) finish=0.2min "
	       "speed=341K/sec\n"
	       "      \n");
	st.sync_action = URAID_SYNC_RECOVER; /* replace vdc by vdg */
	st.sync_done = 2048;
	st.members[4] = mem("vdg", 0, 6, URAID_MEMBER_REBUILDING, URAID_MEMBER_F_REPLACEMENT);
	expect("md1", &st,
	       "md1 : active raid5 vdg[6](R) vdd[5] vdf[4] vde[2] vdc[0]\n"
	       "      21504 blocks super 1.2 level 5, 64k chunk, algorithm 2 [4/4] [UUUU]\n"
	       "      [==>..................]  recovery = 13.3% (1024/7168) finish=0.2min "
	       "speed=341K/sec\n"
	       "      \n");
	st = raid5();
	st.members[1] = mem("(missing)", 1, 0, URAID_MEMBER_MISSING, 0);
	st.members[4] = mem("vdd", -1, 1, URAID_MEMBER_FAULTY, 0);
	expect("md1", &st,
	       "md1 : active raid5 vdf[4] vde[2] vdd[1](F) vdc[0]\n"
	       "      21504 blocks super 1.2 level 5, 64k chunk, algorithm 2 [4/3] [U_UU]\n"
	       "      \n");
}

static void mdstat_raid1_bitmap_090(void)
{
	struct uraid_status st = {.level = 1,
	                          .raid_disks = 2,
	                          .metadata = 12,
	                          .array_sectors = 14336,
	                          .bitmap_chunk_kib = 65536,
	                          .bitmap_pages = 1,
	                          .bitmap_pages_used = 1};
	st.members[0] = mem("vda", 0, 0, URAID_MEMBER_IN_SYNC, 0);
	st.members[1] = mem("vdb", 1, 1, URAID_MEMBER_IN_SYNC, 0);
	st.nmembers = 2;
	expect("md0", &st,
	       "md0 : active raid1 vdb[1] vda[0]\n"
	       "      7168 blocks super 1.2 [2/2] [UU]\n"
	       "      bitmap: 1/1 pages [4KB], 65536KB chunk\n"
	       "\n");
	st.bitmap_chunk_kib = 0;
	st.metadata = 0; /* 0.90: no "super" */
	st.array_sectors = 16256;
	st.members[0] = mem("vdi", 0, 0, URAID_MEMBER_IN_SYNC, 0);
	st.members[1] = mem("vdj", 1, 1, URAID_MEMBER_IN_SYNC, URAID_MEMBER_F_WRITEMOSTLY);
	expect("md4", &st,
	       "md4 : active raid1 vdj[1](W) vdi[0]\n"
	       "      8128 blocks [2/2] [UU]\n"
	       "      \n");
}

static void mdstat_raid10_0_linear_6(void)
{
	struct uraid_status st = {.level = 10,
	                          .layout = 0x10201,
	                          .chunk_sectors = 128,
	                          .raid_disks = 3,
	                          .metadata = 12,
	                          .array_sectors = 21504};
	for (int i = 0; i < 3; i++) {
		char n[8];
		snprintf(n, sizeof(n), "vd%c", 'a' + i);
		st.members[i] = mem(n, i, (uint32_t)i, URAID_MEMBER_IN_SYNC, 0);
	}
	st.nmembers = 3;
	expect("md2", &st,
	       "md2 : active raid10 vdc[2] vdb[1] vda[0]\n"
	       "      10752 blocks super 1.2 64K chunks 2 offset-copies [3/3] [UUU]\n"
	       "      \n");
	st.layout = 0x201;
	st.raid_disks = 4;
	st.array_sectors = 28672;
	st.members[3] = mem("vdd", 3, 3, URAID_MEMBER_IN_SYNC, 0);
	st.nmembers = 4;
	expect("md2", &st,
	       "md2 : active raid10 vdd[3] vdc[2] vdb[1] vda[0]\n"
	       "      14336 blocks super 1.2 64K chunks 2 far-copies [4/4] [UUUU]\n"
	       "      \n");
	st.layout = 0x102;
	expect("md2", &st,
	       "md2 : active raid10 vdd[3] vdc[2] vdb[1] vda[0]\n"
	       "      14336 blocks super 1.2 64K chunks 2 near-copies [4/4] [UUUU]\n"
	       "      \n");
	st.level = 0;
	st.layout = 2;
	st.raid_disks = 2;
	st.nmembers = 2;
	expect("md5", &st,
	       "md5 : active raid0 vdb[1] vda[0]\n"
	       "      14336 blocks super 1.2 64k chunks\n"
	       "      \n");
	st.level = URAID_LEVEL_LINEAR;
	st.layout = 0;
	st.chunk_sectors = 0;
	expect("md6", &st,
	       "md6 : active linear vdb[1] vda[0]\n"
	       "      14336 blocks super 1.2 0k rounding\n"
	       "      \n");
	st.level = 6;
	st.layout = 2;
	st.chunk_sectors = 64;
	st.raid_disks = 4;
	st.nmembers = 4;
	st.metadata = 10;
	st.array_sectors = 32640;
	expect("md3", &st,
	       "md3 : active raid6 vdd[3] vdc[2] vdb[1] vda[0]\n"
	       "      16320 blocks super 1.0 level 6, 32k chunk, algorithm 2 [4/4] [UUUU]\n"
	       "      \n");
}

/* mdadm --assemble adds the member it took the superblock from last, and a
 * later add is newer still: md lists them newest first (the kernel's
 * lines for that assembly of a raid5, then a spare added). */
static void mdstat_bind_order(void)
{
	struct uraid_status st = {.level = 5,
	                          .layout = 2,
	                          .chunk_sectors = 128,
	                          .raid_disks = 4,
	                          .metadata = 12,
	                          .array_sectors = 43008};
	static const uint32_t order[] = {4, 1, 2, 3};
	for (int i = 0; i < 4; i++) {
		char n[16];
		snprintf(n, sizeof(n), "a%d", i);
		st.members[i] = mem(n, i, (uint32_t)i, URAID_MEMBER_IN_SYNC, 0);
		st.members[i].order = order[i];
	}
	st.nmembers = 4;
	expect("md0", &st,
	       "md0 : active raid5 a0[0] a3[3] a2[2] a1[1]\n"
	       "      21504 blocks super 1.2 level 5, 64k chunk, algorithm 2 [4/4] [UUUU]\n"
	       "      \n");
	st.members[1] = mem("(missing)", 1, 0, URAID_MEMBER_MISSING, 0);
	st.members[4] = mem("a4", 1, 4, URAID_MEMBER_REBUILDING, 0);
	st.members[4].order = 5;
	st.members[5] = mem("a1", -1, 1, URAID_MEMBER_FAULTY, URAID_MEMBER_F_LEFT_OUT);
	st.nmembers = 6;
	st.degraded = 1;
	expect("md0", &st,
	       "md0 : active raid5 a4[4] a0[0] a3[3] a2[2]\n"
	       "      21504 blocks super 1.2 level 5, 64k chunk, algorithm 2 [4/3] [U_UU]\n"
	       "      \n");
}

/* Too small a buffer, and a GEOM array (no md personality): refused. */
static void mdstat_refusals(void)
{
	struct uraid_status st = raid5();
	char small[16];
	CHECK(uraid_mdstat_format("md1", &st, small, sizeof(small)) == -ENOSPC);
	st.level = URAID_LEVEL_GMIRROR;
	char buf[512];
	CHECK(uraid_mdstat_format("gm", &st, buf, sizeof(buf)) == -EINVAL);
}

/* raid5 4->5 reshaping (mdadm --grow, throttled): the kernel's line with
 * the progress per member of the new layout, as uraid's status reports
 * it during a reshape. */
static void mdstat_reshape(void)
{
	struct uraid_status st = {.level = 5,
	                          .layout = 2,
	                          .chunk_sectors = 128,
	                          .raid_disks = 5,
	                          .metadata = 12,
	                          .array_sectors = 92160,
	                          .dev_sectors = 30720};
	const char *names[] = {"vdb", "vdc", "vdd", "vde", "vdf"};
	for (int i = 0; i < 5; i++)
		st.members[i] = mem(names[i], i, (uint32_t)i, URAID_MEMBER_IN_SYNC, 0);
	st.nmembers = 5;
	st.sync_action = URAID_SYNC_RESHAPE;
	st.sync_done = 3328;
	st.sync_total = 30720;
	st.sync_speed_kibs = 332;
	st.reshape = 1;
	st.reshape_delta_disks = 1;
	expect("md0", &st,
	       "md0 : active raid5 vdf[4] vde[3] vdd[2] vdc[1] vdb[0]\n"
	       "      46080 blocks super 1.2 level 5, 64k chunk, algorithm 2 [5/5] [UUUUU]\n"
	       "      [=>...................]  reshape =  9.6% (1664/15360) finish=0.6min "
	       "speed=332K/sec\n"
	       "      \n");
	/* a chunk change: md prints the conf's chunk, the new one, and the
	 * array's layout, the old one (raid5_status; mdadm --grow --chunk=32
	 * on 6.1, mdstat_mdvm: "32k chunk, algorithm 2" with the reshape line) */
	st.reshape_delta_disks = 0;
	st.reshape_new_chunk_sectors = 64;
	st.reshape_new_layout = 0;
	expect("md0", &st,
	       "md0 : active raid5 vdf[4] vde[3] vdd[2] vdc[1] vdb[0]\n"
	       "      46080 blocks super 1.2 level 5, 32k chunk, algorithm 2 [5/5] [UUUUU]\n"
	       "      [=>...................]  reshape =  9.6% (1664/15360) finish=0.6min "
	       "speed=332K/sec\n"
	       "      \n");
}

/* A rebuild held by the speed limit: speed and finish come from the
 * window of md's marks (db sectors in dt seconds), checked against plain
 * arithmetic: speed = db/2/dt KiB/s exactly (md's integer division, never
 * 0 while db >= 2 dt), the finish the rest at that speed within md's
 * rounding (its db/32 + 1, the tenths cut off) where db/32 >= 10. The recent
 * speed, 0 here, is not what is shown. */
static void mdstat_speed_window(void)
{
	static const struct {
		uint64_t done, db, dt;
	} w[] = {{3072, 1200, 6}, {3072, 330, 1}, {200, 9, 1}, {14000, 12000, 30}, {8, 60000, 30}};
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		struct uraid_status st = raid5();
		st.sync_action = URAID_SYNC_RECOVER;
		st.sync_done = w[i].done;
		st.sync_total = 14336;
		st.sync_speed_kibs = 0;
		st.sync_window_sectors = w[i].db;
		st.sync_window_secs = (uint32_t)w[i].dt;
		char got[4096];
		CHECK(uraid_mdstat_format("md1", &st, got, sizeof(got)) > 0);
		const char *f = strstr(got, "finish=");
		unsigned fm = 0, ft = 0;
		unsigned long long kib = 0;
		CHECKF(f && sscanf(f, "finish=%u.%umin speed=%lluK/sec", &fm, &ft, &kib) == 3, "%s",
		       got);
		CHECKF(kib == w[i].db / 2 / w[i].dt, "%zu: %llu K/sec", i, kib);
		CHECKF(kib > 0, "%zu: 0 K/sec", i);
		if (w[i].db / 32 < 10)
			continue;
		double rate = (double)w[i].db / (double)w[i].dt; /* sectors/s */
		double want = (double)(14336 - w[i].done) / rate / 60, shown = fm + ft / 10.0;
		double low = want * (1 - 1.0 / (double)(w[i].db / 32 + 1)) - 0.11;
		CHECKF(shown <= want + 0.01 && shown >= low, "%zu: finish %.1f, want %.2f", i,
		       shown, want);
	}
}

TEST_MAIN(T(mdstat_reshape), T(mdstat_recovery), T(mdstat_check_fail_replace),
          T(mdstat_raid1_bitmap_090), T(mdstat_raid10_0_linear_6), T(mdstat_bind_order),
          T(mdstat_refusals), T(mdstat_speed_window))
