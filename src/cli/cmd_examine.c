/* uraid examine MEMBER...: the md superblock of each member, worded and laid
 * out as `mdadm --examine` (mdadm 4.2) prints it, or as JSON with --json;
 * with --badblocks the bad block logs (cmd_examine_bbl.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_array.h"
#include "cli/examine_int.h"
#include "meta/md_super.h"
#include "member/member.h"
#include "util/endian.h"

/* ---- names as mdadm prints them ------------------------------------------ */

static const char *level_text(int32_t level)
{
	switch (level) {
	case -1: return "linear";
	case 0: return "raid0";
	case 1: return "raid1";
	case 4: return "raid4";
	case 5: return "raid5";
	case 6: return "raid6";
	case 10: return "raid10";
	case -4: return "multipath";
	case -5: return "faulty";
	case -100: return "container";
	}
	return "-unknown-";
}

/* raid5 and raid6 share the first six names; raid6 adds DDF and "-6". */
static const char *parity_layout_text(int level, uint32_t layout)
{
	static const char *const base[] = {"left-asymmetric", "right-asymmetric", "left-symmetric",
	                                   "right-symmetric", "parity-first",     "parity-last"};
	static const char *const r6[] = {
	    [8] = "ddf-zero-restart",   [9] = "ddf-N-restart",       [10] = "ddf-N-continue",
	    [16] = "left-asymmetric-6", [17] = "right-asymmetric-6", [18] = "left-symmetric-6",
	    [19] = "right-symmetric-6", [20] = "parity-first-6",
	};
	if (layout < 6)
		return base[layout];
	if (level == 6 && layout < sizeof(r6) / sizeof(r6[0]) && r6[layout])
		return r6[layout];
	return "-unknown-";
}

static const char *raid0_layout_text(uint32_t layout)
{
	switch (layout) {
	case 0: return "dangerous";
	case 1: return "original";
	case 2: return "alternate";
	}
	return "-unknown-";
}

/* " near=2", " near=2, far=2", " offset=2", "NO REDUNDANCY" */
static void raid10_layout_text(uint32_t layout, char *out, size_t len)
{
	unsigned near = layout & 255, far = (layout >> 8) & 255;
	size_t n = 0;
	const char *sep = "";
	out[0] = 0;
	if (near != 1) {
		n += (size_t)snprintf(out + n, len - n, "%s near=%u", sep, near);
		sep = ",";
	}
	if (far != 1 && n < len)
		n += (size_t)snprintf(out + n, len - n, "%s %s=%u", sep,
		                      (layout & 0x10000) ? "offset" : "far", far);
	if (near * far == 1 && n < len)
		snprintf(out + n, len - n, "NO REDUNDANCY");
}

/* ctime(3) without the newline, local time. */
static void time_text(uint64_t secs, char *out, size_t len)
{
	time_t t = (time_t)secs;
	struct tm tm;
	if (!localtime_r(&t, &tm) || !strftime(out, len, "%a %b %e %H:%M:%S %Y", &tm))
		snprintf(out, len, "%llu", (unsigned long long)secs);
}

/* ---- what a member holds ---------------------------------------------------- */

struct bitmap_info {
	bool valid; /* magic and uuid match */
	uint64_t sync_size;
	uint32_t chunksize, nodes;
	char cluster_name[65];
	/* mdadm drops a bitmap that does not belong to the array from its copy
	 * of the superblock and then finds that copy's checksum "expected" to
	 * be different: examine shows the same */
	bool dropped;
	uint32_t dropped_csum;
};

struct exam {
	const char *path;
	struct md_sb sb;
	uint64_t dev_sectors;
	struct bitmap_info bm;
};

/* mdadm reads the bitmap header and drops the bitmap bit when it is not
 * a bitmap of this array; examine then shows the map without it. */
static void read_bitmap(struct member *m, struct exam *e)
{
	struct md_sb *sb = &e->sb;
	if (!(sb->feature_map & MD_FEATURE_BITMAP_OFFSET))
		return;
	int64_t at = (int64_t)sb->super_offset + sb->bitmap_offset;
	uint8_t b[512];
	if (sb->version == MD_SB_0_90)
		at = (int64_t)sb->super_offset + 8;
	if (at < 0 || (uint64_t)at + 1 > e->dev_sectors ||
	    member_read(m, b, sizeof(b), (uint64_t)at * 512) < 0)
		goto drop;
	uint8_t uuid[16];
	memcpy(uuid, sb->set_uuid, 16);
	if (sb->version == MD_SB_0_90) /* 0.90 keeps host-order words */
		for (int w = 0; w < 4; w++)
			for (int k = 0; k < 4; k++)
				uuid[4 * w + k] = sb->set_uuid[4 * w + 3 - k];
	if (get_le32(b) != 0x6d746962 || memcmp(b + 8, uuid, 16))
		goto drop;
	e->bm.valid = true;
	e->bm.sync_size = get_le64(b + 40);
	e->bm.chunksize = get_le32(b + 52);
	e->bm.nodes = get_le32(b + 68);
	memcpy(e->bm.cluster_name, b + 72, 64);
	e->bm.cluster_name[64] = 0;
	return;
drop:
	sb->feature_map &= ~MD_FEATURE_BITMAP_OFFSET;
	if (sb->version == MD_SB_0_90)
		sb->v0.state &= ~(1u << MD_SB0_BITMAP_PRESENT);
	uint8_t enc[MD_SB_BYTES];
	if (md_sb_encode(sb, enc, sizeof(enc)) == 0) {
		e->bm.dropped = true;
		e->bm.dropped_csum = md_sb_checksum(sb->version, enc);
	}
}

static void print_checksum(const struct exam *e)
{
	if (e->bm.dropped && e->bm.dropped_csum != e->sb.sb_csum)
		printf("       Checksum : %x - expected %x\n", e->sb.sb_csum, e->bm.dropped_csum);
	else
		printf("       Checksum : %x - correct\n", e->sb.sb_csum);
}

static int32_t ppl_offset(const struct md_sb *sb)
{
	return (int16_t)((uint32_t)sb->bitmap_offset & 0xffff);
}

static uint32_t ppl_size(const struct md_sb *sb)
{
	return (uint32_t)sb->bitmap_offset >> 16;
}

static bool any_ppl(const struct md_sb *sb)
{
	return sb->feature_map & (MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS);
}

/* Free space before and after the data, as mdadm's getinfo works it out
 * (including its quirks: relative bitmap end, unsigned wrap). Returns false
 * when mdadm would not print the line. */
static bool unused_space(const struct exam *e, uint64_t *before, uint64_t *after)
{
	const struct md_sb *sb = &e->sb;
	int64_t bm_off = 0, ppl_off = 0, ppl_sz = 0;
	if (sb->feature_map & MD_FEATURE_BITMAP_OFFSET) {
		bm_off = sb->bitmap_offset;
	} else if (any_ppl(sb)) {
		ppl_off = ppl_offset(sb);
		ppl_sz = ppl_size(sb);
	}
	uint64_t data_size = sb->level <= 0 ? sb->data_size : sb->size;
	uint64_t so = sb->super_offset;
	*before = *after = 0;
	if (sb->data_offset < so) {
		uint64_t end = so;
		*before = sb->data_offset;
		if (sb->bblog_offset && sb->bblog_size) {
			uint64_t bb = so + (uint64_t)(int64_t)(int32_t)sb->bblog_offset;
			if (bb < end)
				end = bb;
		}
		uint64_t lim = so + (uint64_t)bm_off + (uint64_t)ppl_off;
		if (lim < end)
			end = lim;
		if (sb->data_offset + data_size < end)
			*after = end - data_size - sb->data_offset;
	} else {
		uint64_t earliest = so + 72;
		if (bm_off > 0) {
			uint64_t bytes = 0;
			if (e->bm.chunksize) {
				uint64_t bits =
				    (e->bm.sync_size * 512 + e->bm.chunksize - 1) / e->bm.chunksize;
				bytes = ((bits + 7) / 8 + 256 + 4095) / 4096 * 4096;
			}
			uint64_t bmend = (uint64_t)bm_off + bytes / 512;
			if (bmend > earliest)
				earliest = bmend;
		} else if (ppl_off > 0) {
			uint64_t pplend = (uint64_t)(ppl_off + ppl_sz);
			if (pplend > earliest)
				earliest = pplend;
		}
		if (sb->bblog_offset && sb->bblog_size) {
			uint64_t bbend =
			    so + (uint64_t)(int64_t)(int32_t)sb->bblog_offset + sb->bblog_size;
			if (bbend > earliest)
				earliest = bbend;
		}
		if (earliest < sb->data_offset)
			*before = sb->data_offset - earliest;
		*after = e->dev_sectors - data_size - sb->data_offset;
	}
	if (*before == 0 && *after == 0)
		*after = 1; /* mdadm's marker for "no room", which it does not print */
	return *after != 1 && !(sb->feature_map & MD_FEATURE_NEW_OFFSET);
}

/* Data disks and the copies divisor for the Array Size line; 0 = none. */
static int data_disks(const struct md_sb *sb, int *denom)
{
	*denom = 1;
	switch (sb->level) {
	case 1: return 1;
	case 4:
	case 5: return (int)sb->raid_disks - 1;
	case 6: return (int)sb->raid_disks - 2;
	case 10:
		*denom = (int)((sb->layout & 255) * ((sb->layout >> 8) & 255));
		return *denom ? (int)sb->raid_disks : 0;
	}
	return 0;
}

static const char *layout_text(const struct md_sb *sb, char *buf, size_t len)
{
	if (sb->level == 5 || sb->level == 6)
		return parity_layout_text(sb->level, sb->layout);
	if (sb->level == 10) {
		raid10_layout_text(sb->layout, buf, len);
		return buf;
	}
	if (sb->level == 0 && (sb->feature_map & MD_FEATURE_RAID0_LAYOUT))
		return raid0_layout_text(sb->layout);
	return NULL;
}

static uint32_t role_raw(const struct md_sb *sb)
{
	return sb->dev_number < sb->max_dev ? sb->dev_roles[sb->dev_number] : MD_ROLE_SPARE;
}

/* "AAAA" etc.; *inconsistent when a role appears oddly. */
static void array_state(const struct md_sb *sb, int delta_extra, char *out, size_t len,
                        bool *inconsistent)
{
	size_t n = 0;
	*inconsistent = false;
	for (uint32_t d = 0; d < sb->raid_disks + (uint32_t)delta_extra && n + 1 < len; d++) {
		int cnt = 0;
		for (uint32_t i = 0; i < sb->max_dev; i++)
			cnt += sb->dev_roles[i] == d;
		char c = cnt == 2 && sb->level != 0 ? 'R' : cnt == 1 ? 'A' : cnt == 0 ? '.' : '?';
		if (c == '?')
			*inconsistent = true;
		out[n++] = c;
	}
	out[n] = 0;
	for (uint32_t i = 0; i < sb->max_dev; i++) {
		uint32_t r = sb->dev_roles[i];
		if (r <= 0xff00 && r > sb->raid_disks + (uint32_t)delta_extra)
			*inconsistent = true;
	}
}

/* ---- mdadm-style text ------------------------------------------------------- */

static void print_reshape_1x(const struct md_sb *sb)
{
	char hs[64], buf[64];
	examine_human_size(sb->reshape_position << 9, hs, sizeof(hs));
	printf("  Reshape pos'n : %llu%s\n", (unsigned long long)sb->reshape_position / 2, hs);
	if (sb->delta_disks) {
		printf("  Delta Devices : %d", sb->delta_disks);
		printf(" (%lld->%d)\n", (long long)sb->raid_disks - sb->delta_disks,
		       (int)sb->raid_disks);
	}
	if (sb->new_level != (uint32_t)sb->level)
		printf("      New Level : %s\n", level_text((int32_t)sb->new_level));
	if (sb->new_layout != sb->layout) {
		if (sb->level == 5 || sb->level == 6)
			printf("     New Layout : %s\n",
			       parity_layout_text(sb->level, sb->new_layout));
		if (sb->level == 10) {
			raid10_layout_text(sb->new_layout, buf, sizeof(buf));
			printf("     New Layout :%s\n", buf);
		}
	}
	if (sb->new_chunk != sb->chunk_sectors)
		printf("  New Chunksize : %uK\n", sb->new_chunk / 2);
	printf("\n");
}

static void print_1x(const struct exam *e, const char *homehost)
{
	const struct md_sb *sb = &e->sb;
	char uuid[40], hs[64], tbuf[64], buf[128];
	printf("          Magic : %08x\n", MD_SB_MAGIC);
	printf("        Version : 1.%c\n", sb->super_offset <= 4   ? '1'
	                                   : sb->super_offset <= 8 ? '2'
	                                                           : '0');
	printf("    Feature Map : 0x%x\n", sb->feature_map);
	md_uuid_format(sb->set_uuid, uuid);
	printf("     Array UUID : %s\n", uuid);
	printf("           Name : %.32s", sb->set_name);
	if (md_sb_local_to_host(sb, homehost))
		printf("  (local to host %s)", homehost);
	printf("\n");
	if (e->bm.valid && e->bm.nodes > 0 && (sb->feature_map & MD_FEATURE_BITMAP_OFFSET))
		printf("   Cluster Name : %-64s\n", e->bm.cluster_name);
	time_text(sb->ctime & 0xffffffffffull, tbuf, sizeof(tbuf));
	printf("  Creation Time : %s\n", tbuf);
	printf("     Raid Level : %s\n", level_text(sb->level));
	printf("   Raid Devices : %u\n", sb->raid_disks);
	printf("\n");
	examine_human_size(sb->data_size << 9, hs, sizeof(hs));
	printf(" Avail Dev Size : %llu sectors%s\n", (unsigned long long)sb->data_size, hs);
	/* mdadm tests the level as unsigned: every level but raid0 gets here */
	if (sb->level != 0) {
		int denom, dd = data_disks(sb, &denom);
		if (dd > 0) {
			uint64_t asize = (sb->size << 9) * (uint64_t)dd / (uint64_t)denom;
			examine_human_size(asize, hs, sizeof(hs));
			printf("     Array Size : %llu KiB%s\n", (unsigned long long)(asize >> 10),
			       hs);
		}
		if (sb->size != sb->data_size) {
			examine_human_size(sb->size << 9, hs, sizeof(hs));
			printf("  Used Dev Size : %llu sectors%s\n", (unsigned long long)sb->size,
			       hs);
		}
	}
	if (sb->data_offset)
		printf("    Data Offset : %llu sectors\n", (unsigned long long)sb->data_offset);
	if (sb->new_offset && (sb->feature_map & MD_FEATURE_NEW_OFFSET))
		printf("     New Offset : %llu sectors\n",
		       (unsigned long long)(sb->data_offset + (int64_t)(int32_t)sb->new_offset));
	printf("   Super Offset : %llu sectors\n", (unsigned long long)sb->super_offset);
	if (sb->feature_map & MD_FEATURE_RECOVERY_OFFSET)
		printf("Recovery Offset : %llu sectors\n", (unsigned long long)sb->recovery_offset);
	uint64_t before, after;
	if (unused_space(e, &before, &after))
		printf("   Unused Space : before=%llu sectors, after=%llu sectors\n",
		       (unsigned long long)before, (unsigned long long)after);
	printf("          State : %s\n", sb->resync_offset == MD_RESYNC_NONE ? "clean" : "active");
	md_uuid_format(sb->device_uuid, uuid);
	printf("    Device UUID : %s\n", uuid);
	printf("\n");
	if (sb->feature_map & MD_FEATURE_BITMAP_OFFSET)
		printf("Internal Bitmap : %ld sectors from superblock\n", (long)sb->bitmap_offset);
	else if (any_ppl(sb))
		printf("            PPL : %u sectors at offset %d sectors from superblock\n",
		       ppl_size(sb), (int)(uint16_t)ppl_offset(sb));
	int delta_extra = 0;
	if (sb->feature_map & MD_FEATURE_RESHAPE_ACTIVE) {
		print_reshape_1x(sb);
		if (sb->delta_disks < 0) /* bounded: the role table has 1920 slots */
			delta_extra =
			    sb->delta_disks < -MD_SB1_MAX_DEVS ? MD_SB1_MAX_DEVS : -sb->delta_disks;
	}
	if (sb->devflags) {
		printf("          Flags :");
		if (sb->devflags & 1)
			printf(" write-mostly");
		if (sb->devflags & 2)
			printf(" failfast");
		printf("\n");
	}
	time_text(sb->utime & 0xffffffffffull, tbuf, sizeof(tbuf));
	printf("    Update Time : %s\n", tbuf);
	if (sb->bblog_size && sb->bblog_offset) {
		printf("  Bad Block Log : %d entries available at offset %ld sectors",
		       sb->bblog_size * 512 / 8, (long)(int32_t)sb->bblog_offset);
		if (sb->feature_map & MD_FEATURE_BAD_BLOCKS)
			printf(" - bad blocks present.");
		printf("\n");
	}
	print_checksum(e);
	printf("         Events : %llu\n", (unsigned long long)sb->events);
	printf("\n");
	const char *lt = layout_text(sb, buf, sizeof(buf));
	if (lt)
		printf("         Layout :%s%s\n", sb->level == 10 ? "" : " ", lt);
	if (sb->level == 0 || sb->level == 4 || sb->level == 5 || sb->level == 6 || sb->level == 10)
		printf("     Chunk Size : %uK\n", sb->chunk_sectors / 2);
	else if (sb->level == -1)
		printf("       Rounding : %uK\n", sb->chunk_sectors / 2);
	printf("\n");
	uint32_t role = role_raw(sb);
	printf("   Device Role : ");
	if (role >= MD_ROLE_FAULTY)
		printf("spare\n");
	else if (role == MD_ROLE_JOURNAL)
		printf("Journal\n");
	else if (sb->feature_map & MD_FEATURE_REPLACEMENT)
		printf("Replacement device %u\n", role);
	else
		printf("Active device %u\n", role);
	char st[MD_SB1_MAX_DEVS + 8];
	bool bad;
	array_state(sb, delta_extra, st, sizeof(st), &bad);
	printf("   Array State : %s ('A' == active, '.' == missing, 'R' == replacing)\n", st);
	if (bad) {
		printf("WARNING Array state is inconsistent - each number should appear only "
		       "once\n");
		for (uint32_t d = 0; d < sb->max_dev; d++)
			if (sb->dev_roles[d] >= MD_ROLE_FAULTY)
				printf(" %u:-", d);
			else
				printf(" %u:%u", d, sb->dev_roles[d]);
		printf("\n");
	}
}

/* "/dev/NAME" for a block device number, as mdadm's map_dev finds it. */
static void dev_name(uint32_t major, uint32_t minor, char *out, size_t len)
{
	char path[96], line[256];
	out[0] = 0;
	if (major == 0 && minor == 0)
		return;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", major, minor);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "DEVNAME=", 8)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(out, len, "/dev/%.200s", line + 8);
		}
	fclose(f);
}

static void print_disk_row(const char *label, const struct md_sb0_disk *dp)
{
	char name[256];
	uint32_t state = dp->state;
	uint32_t wonly = state & (1u << MD_DISK_WRITEMOSTLY);
	uint32_t failfast = state & (1u << MD_DISK_FAILFAST);
	printf("%4s %5d   %5d    %5d    %5d     ", label, (int)dp->number, (int)dp->major,
	       (int)dp->minor, (int)dp->raid_disk);
	state &= ~(wonly | failfast);
	if (state & (1u << MD_DISK_FAULTY))
		printf(" faulty");
	if (state & (1u << MD_DISK_ACTIVE))
		printf(" active");
	if (state & (1u << MD_DISK_SYNC))
		printf(" sync");
	if (state & (1u << MD_DISK_REMOVED))
		printf(" removed");
	if (wonly)
		printf(" write-mostly");
	if (failfast)
		printf(" failfast");
	if (state == 0)
		printf(" spare");
	dev_name(dp->major, dp->minor, name, sizeof(name));
	if (name[0])
		printf("   %s", name);
	printf("\n");
}

static void print_090(const struct exam *e, const char *homehost)
{
	const struct md_sb *sb = &e->sb;
	char uuid[40], hs[64], tbuf[64], buf[64];
	printf("          Magic : %08x\n", MD_SB_MAGIC);
	printf("        Version : 0.%02u.%02u\n", sb->v0.minor_version, sb->v0.patch_version);
	md_uuid_format(sb->set_uuid, uuid);
	printf("           UUID : %s", uuid);
	if (md_sb_local_to_host(sb, homehost))
		printf(" (local to host %s)", homehost);
	printf("\n");
	if (sb->v0.not_persistent)
		printf("           Eedk : not persistent\n");
	time_text(sb->ctime, tbuf, sizeof(tbuf));
	printf("  Creation Time : %s\n", tbuf);
	printf("     Raid Level : %s\n", level_text(sb->level));
	if (sb->level > 0) {
		examine_human_size(sb->v0.level_size_kib * 1024ull, hs, sizeof(hs));
		printf("  Used Dev Size : %d%s\n", (int)sb->v0.level_size_kib, hs);
		int denom, dd = data_disks(sb, &denom);
		if (dd > 0) {
			uint64_t asize = (sb->v0.level_size_kib * 1024ull) * (uint64_t)dd / denom;
			examine_human_size(asize, hs, sizeof(hs));
			printf("     Array Size : %llu%s\n", (unsigned long long)(asize >> 10), hs);
		}
	}
	printf("   Raid Devices : %u\n", sb->raid_disks);
	printf("  Total Devices : %u\n", sb->v0.nr_disks);
	printf("Preferred Minor : %u\n", sb->v0.md_minor);
	printf("\n");
	int delta_extra = 0;
	if (sb->v0.minor_version > 90 && sb->v0.reshape_position + 1 != 0) {
		examine_human_size(sb->v0.reshape_position << 9, hs, sizeof(hs));
		printf("  Reshape pos'n : %llu%s\n",
		       (unsigned long long)sb->v0.reshape_position / 2, hs);
		int32_t dl = (int32_t)sb->v0.delta_disks;
		if (dl) {
			printf("  Delta Devices : %d (%lld->%d)\n", dl,
			       (long long)sb->raid_disks - dl, (int)sb->raid_disks);
			if (dl < 0)
				delta_extra = dl < -MD_SB0_MAX_DEVS ? MD_SB0_MAX_DEVS : -dl;
		}
		if (sb->v0.new_level != (uint32_t)sb->level)
			printf("      New Level : %s\n", level_text((int32_t)sb->v0.new_level));
		if (sb->v0.new_layout != sb->layout) {
			if (sb->level == 5 || sb->level == 6)
				printf("     New Layout : %s\n",
				       parity_layout_text(sb->level, sb->v0.new_layout));
			if (sb->level == 10)
				printf("     New Layout : near=%u, %s=%u\n",
				       sb->v0.new_layout & 255,
				       (sb->v0.new_layout & 0x10000) ? "offset" : "far",
				       (sb->v0.new_layout >> 8) & 255);
		}
		if (sb->v0.new_chunk != sb->chunk_sectors * 512)
			printf("  New Chunksize : %u\n", sb->v0.new_chunk);
		printf("\n");
	}
	time_text(sb->utime, tbuf, sizeof(tbuf));
	printf("    Update Time : %s\n", tbuf);
	printf("          State : %s\n", (sb->v0.state & 1) ? "clean" : "active");
	if (sb->v0.state & (1u << MD_SB0_BITMAP_PRESENT))
		printf("Internal Bitmap : present\n");
	printf(" Active Devices : %u\n", sb->v0.active_disks);
	printf("Working Devices : %u\n", sb->v0.working_disks);
	printf(" Failed Devices : %u\n", sb->v0.failed_disks);
	printf("  Spare Devices : %u\n", sb->v0.spare_disks);
	print_checksum(e);
	printf("         Events : %llu\n", (unsigned long long)sb->events);
	printf("\n");
	if (sb->level == 5 || sb->level == 6)
		printf("         Layout : %s\n", parity_layout_text(sb->level, sb->layout));
	if (sb->level == 10) {
		raid10_layout_text(sb->layout, buf, sizeof(buf));
		printf("         Layout :%s\n", buf);
	}
	if (sb->level == 0 || sb->level == 4 || sb->level == 5 || sb->level == 6 || sb->level == 10)
		printf("     Chunk Size : %uK\n", sb->chunk_sectors / 2);
	else if (sb->level == -1)
		printf("       Rounding : %uK\n", sb->chunk_sectors / 2);
	printf("\n");
	printf("      Number   Major   Minor   RaidDevice State\n");
	int64_t rows = (int64_t)sb->raid_disks + delta_extra + sb->v0.spare_disks;
	for (int d = -1; d < rows && d < MD_SB0_MAX_DEVS; d++) {
		char label[12];
		snprintf(label, sizeof(label), "%4d", d);
		print_disk_row(d < 0 ? "this" : label,
		               d < 0 ? &sb->v0.this_disk : &sb->v0.disks[d]);
		if (d == -1)
			printf("\n");
	}
}

/* ---- JSON --------------------------------------------------------------------- */

void examine_json_str(const char *key, const char *s)
{
	printf("\"%s\": \"", key);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	printf("\"");
}

static void json_member(const struct exam *e, const char *homehost)
{
	const struct md_sb *sb = &e->sb;
	char uuid[40], buf[128];
	printf("{");
	examine_json_str("member", e->path);
	printf(", ");
	examine_json_str("version", md_sb_version_name(sb->version));
	printf(", \"feature_map\": %u, ", sb->feature_map);
	md_uuid_format(sb->set_uuid, uuid);
	examine_json_str("array_uuid", uuid);
	printf(", ");
	examine_json_str("name", sb->version == MD_SB_0_90 ? "" : sb->set_name);
	printf(", \"local\": %s", md_sb_local_to_host(sb, homehost) ? "true" : "false");
	bool v0 = sb->version == MD_SB_0_90;
	printf(", \"creation_time\": %llu, \"update_time\": %llu, ",
	       (unsigned long long)(v0 ? sb->ctime : sb->ctime & 0xffffffffffull),
	       (unsigned long long)(v0 ? sb->utime : sb->utime & 0xffffffffffull));
	examine_json_str("raid_level", level_text(sb->level));
	printf(", \"level\": %d, \"raid_devices\": %u, \"layout\": %u, ", sb->level, sb->raid_disks,
	       sb->layout);
	const char *lt = layout_text(sb, buf, sizeof(buf));
	examine_json_str("layout_name", lt ? (lt[0] == ' ' ? lt + 1 : lt) : "");
	printf(", \"chunk_sectors\": %u", sb->chunk_sectors);
	printf(", \"size\": %llu, \"data_offset\": %llu, \"data_size\": %llu, \"super_offset\": "
	       "%llu",
	       (unsigned long long)sb->size, (unsigned long long)sb->data_offset,
	       (unsigned long long)sb->data_size, (unsigned long long)sb->super_offset);
	printf(", \"dev_sectors\": %llu", (unsigned long long)e->dev_sectors);
	printf(", \"state\": \"%s\"", md_sb_clean(sb) ? "clean" : "active");
	if (sb->resync_offset != MD_RESYNC_NONE)
		printf(", \"resync_offset\": %llu", (unsigned long long)sb->resync_offset);
	if (!v0) {
		md_uuid_format(sb->device_uuid, uuid);
		printf(", ");
		examine_json_str("device_uuid", uuid);
		printf(", \"recovery_offset\": %llu", (unsigned long long)sb->recovery_offset);
	}
	printf(", \"checksum\": \"%x\", \"checksum_ok\": true", sb->sb_csum);
	printf(", \"events\": %llu, \"dev_number\": %u, \"role\": %d",
	       (unsigned long long)sb->events, sb->dev_number, md_sb_role(sb));
	if (!v0) {
		char st[MD_SB1_MAX_DEVS + 8];
		bool bad;
		array_state(sb, 0, st, sizeof(st), &bad);
		printf(", ");
		examine_json_str("array_state", st);
	}
	char err[256] = "";
	if (md_sb_check_features(sb, err, sizeof(err)) < 0) {
		printf(", ");
		examine_json_str("unsupported", err);
	}
	printf("}");
}

/* ---- the verb ------------------------------------------------------------------- */

static int examine_one(const char *path, struct exam *e, char *err, size_t errlen)
{
	struct member *m = NULL;
	int rc = member_open_file(path, MEMBER_RDONLY, 0, &m, err, errlen);
	if (rc < 0)
		return rc;
	e->path = path;
	e->dev_sectors = m->size / 512;
	memset(&e->bm, 0, sizeof(e->bm));
	rc = md_sb_load(m, &e->sb, err, errlen);
	if (rc == 0)
		read_bitmap(m, e);
	member_close(m);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: uraid examine [--json] [--homehost NAME] [--badblocks|--bitmap] MEMBER...\n"
	        "       uraid examine --scan [--verbose] [--config FILE] [MEMBER...]\n"
	        "Print the md superblock of each member as mdadm --examine does; with\n"
	        "--badblocks (mdadm's --examine-badblocks) the entries of each member's\n"
	        "bad block log instead, and whether assembly would accept the log;\n"
	        "--bitmap (mdadm's --examine-bitmap, -X) each member's internal bitmap;\n"
	        "--scan: one ARRAY line per array found (without members: among the\n"
	        "configuration file's DEVICE candidates), as mdadm --examine --scan.\n");
}

int cmd_examine(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"homehost", required_argument, NULL, 'H'},
	    {"scan", no_argument, NULL, 's'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"config", required_argument, NULL, 'c'},
	    {"badblocks", no_argument, NULL, 'b'},
	    {"examine-badblocks", no_argument, NULL, 'b'},
	    {"bitmap", no_argument, NULL, 'X'},
	    {"examine-bitmap", no_argument, NULL, 'X'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	bool json = false, scan = false, verbose = false, badblocks = false, bitmap = false;
	const char *config = NULL;
	char host[256] = "";
	const char *homehost = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "jH:svc:bXh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 's': scan = true; break;
		case 'v': verbose = true; break;
		case 'c': config = optarg; break;
		case 'H': homehost = optarg; break;
		case 'b': badblocks = true; break;
		case 'X': bitmap = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if ((scan || json) && bitmap)
		return cli_error("examine", "--bitmap does not go with --scan or --json");
	if (scan && badblocks)
		return cli_error("examine", "--badblocks does not go with --scan");
	if (badblocks && bitmap)
		return cli_error("examine", "--badblocks and --bitmap: one at a time");
	if (scan && !json)
		return cli_examine_scan(config, verbose, argc - optind, argv + optind);
	if (scan || config || verbose)
		return cli_error("examine", "--verbose and --config go with --scan, which does not "
		                            "go with --json");
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (badblocks)
		return examine_badblocks(argc - optind, argv + optind, json);
	if (bitmap)
		return examine_bitmap(argc - optind, argv + optind);
	if (!homehost) { /* as mdadm: the system's host name */
		if (gethostname(host, sizeof(host) - 1) == 0)
			homehost = host;
		else
			homehost = "";
	}
	struct exam *e = malloc(sizeof(*e));
	if (!e)
		return cli_error("examine", "out of memory");
	int status = 0, shown = 0;
	if (json)
		printf("[");
	for (int i = optind; i < argc; i++) {
		char err[512] = "";
		int rc = examine_one(argv[i], e, err, sizeof(err));
		if (rc < 0) {
			cli_error("examine", "%s", err[0] ? err : strerror(-rc));
			status = 1;
			if (json) {
				printf("%s\n{", shown++ ? "," : "");
				examine_json_str("member", argv[i]);
				printf(", ");
				examine_json_str("error", err);
				printf("}");
			}
			continue;
		}
		if (json) {
			printf("%s\n", shown++ ? "," : "");
			json_member(e, homehost);
			continue;
		}
		printf("%s:\n", argv[i]);
		if (e->sb.version == MD_SB_0_90)
			print_090(e, homehost);
		else
			print_1x(e, homehost);
		fflush(stdout);
	}
	if (json)
		printf("\n]\n");
	free(e);
	return status;
}
