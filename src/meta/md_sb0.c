/* md superblock 0.90 (mdp_super_t): 1024 32-bit words in host byte order,
 * which is little-endian on every machine uraid supports (x86-64), so it is
 * read and written as little-endian words. The kernel rebuilds the whole
 * block from scratch on every update, so words md does not use are zero and
 * are not kept. */
#include <errno.h>
#include <string.h>

#include "meta/md_sb_internal.h"
#include "util/endian.h"
#include "util/errmsg.h"

/* Word indices (byte offset = 4 * index). */
enum {
	W_MAGIC = 0,
	W_MAJOR = 1,
	W_MINOR = 2,
	W_PATCH = 3,
	W_GVALID = 4,
	W_UUID0 = 5,
	W_CTIME = 6,
	W_LEVEL = 7,
	W_SIZE = 8,
	W_NR_DISKS = 9,
	W_RAID_DISKS = 10,
	W_MD_MINOR = 11,
	W_NOT_PERSISTENT = 12,
	W_UUID1 = 13, /* ..15 */
	W_UTIME = 32,
	W_STATE = 33,
	W_ACTIVE = 34,
	W_WORKING = 35,
	W_FAILED = 36,
	W_SPARE = 37,
	W_CSUM = 38,
	W_EVENTS_LO = 39, /* little-endian hosts keep lo before hi */
	W_EVENTS_HI = 40,
	W_CP_EVENTS_LO = 41,
	W_CP_EVENTS_HI = 42,
	W_RECOVERY_CP = 43,
	W_RESHAPE_POS = 44, /* u64 over 44..45 */
	W_NEW_LEVEL = 46,
	W_DELTA_DISKS = 47,
	W_NEW_LAYOUT = 48,
	W_NEW_CHUNK = 49,
	W_LAYOUT = 64,
	W_CHUNK_SIZE = 65,
	W_ROOT_PV = 66,
	W_ROOT_BLOCK = 67,
	W_DISKS = 128,     /* 27 descriptors of 32 words */
	W_THIS_DISK = 992, /* one more descriptor */
	DISK_WORDS = 32,
};

static uint32_t word(const uint8_t *buf, unsigned w)
{
	return get_le32(buf + 4 * w);
}

static void put_word(uint8_t *buf, unsigned w, uint32_t v)
{
	put_le32(buf + 4 * w, v);
}

uint32_t md_sb0_checksum(const uint8_t *buf)
{
	uint64_t sum = 0;
	for (unsigned w = 0; w < MD_SB_BYTES / 4; w++)
		if (w != W_CSUM)
			sum += word(buf, w);
	return (uint32_t)((sum & 0xffffffffu) + (sum >> 32));
}

static void get_disk(const uint8_t *buf, unsigned w, struct md_sb0_disk *d)
{
	d->number = word(buf, w);
	d->major = word(buf, w + 1);
	d->minor = word(buf, w + 2);
	d->raid_disk = word(buf, w + 3);
	d->state = word(buf, w + 4);
}

static void put_disk(uint8_t *buf, unsigned w, const struct md_sb0_disk *d)
{
	put_word(buf, w, d->number);
	put_word(buf, w + 1, d->major);
	put_word(buf, w + 2, d->minor);
	put_word(buf, w + 3, d->raid_disk);
	put_word(buf, w + 4, d->state);
}

/* 0.90 keeps the uuid as four host-order words; store them big-endian so the
 * 16 bytes print like mdadm's "%08x:%08x:%08x:%08x". */
static void uuid_word_out(uint8_t *dst, uint32_t v)
{
	dst[0] = (uint8_t)(v >> 24);
	dst[1] = (uint8_t)(v >> 16);
	dst[2] = (uint8_t)(v >> 8);
	dst[3] = (uint8_t)v;
}

static uint32_t uuid_word_in(const uint8_t *src)
{
	return (uint32_t)src[0] << 24 | (uint32_t)src[1] << 16 | (uint32_t)src[2] << 8 | src[3];
}

int md_sb0_decode(const uint8_t *buf, struct md_sb *sb, char *err, size_t errlen)
{
	uint32_t magic = word(buf, W_MAGIC);
	if (magic != MD_SB_MAGIC)
		return errmsg(err, errlen, -ENOENT, "no md superblock (magic %08x, expected %08x)",
		              magic, MD_SB_MAGIC);
	uint32_t major = word(buf, W_MAJOR);
	if (major != 0)
		return errmsg(err, errlen, -EINVAL,
		              "md superblock major version %u where a 0.90 superblock belongs",
		              major);
	uint32_t minor = word(buf, W_MINOR);
	if (minor != 90 && minor != 91)
		return errmsg(err, errlen, -EINVAL, "0.%u superblock (only 0.90 and 0.91 exist)",
		              minor);
	uint32_t stored = word(buf, W_CSUM);
	uint32_t want = md_sb0_checksum(buf);
	if (stored != want)
		return errmsg(err, errlen, -EINVAL, "superblock checksum %08x, expected %08x",
		              stored, want);
	uint32_t chunk_bytes = word(buf, W_CHUNK_SIZE);
	if (chunk_bytes % 512)
		return errmsg(err, errlen, -EINVAL, "chunk size %u bytes is not a whole sector",
		              chunk_bytes);
	uint32_t raid_disks = word(buf, W_RAID_DISKS);
	if (raid_disks > MD_SB0_MAX_DEVS)
		return errmsg(err, errlen, -EINVAL, "raid_disks %u exceeds 0.90's %u", raid_disks,
		              MD_SB0_MAX_DEVS);

	memset(sb, 0, sizeof(*sb));
	sb->version = MD_SB_0_90;
	sb->v0.minor_version = minor;
	sb->v0.patch_version = word(buf, W_PATCH);
	sb->v0.gvalid_words = word(buf, W_GVALID);
	uuid_word_out(sb->set_uuid, word(buf, W_UUID0));
	for (unsigned i = 0; i < 3; i++)
		uuid_word_out(sb->set_uuid + 4 + 4 * i, word(buf, W_UUID1 + i));
	sb->ctime = word(buf, W_CTIME);
	sb->level = (int32_t)word(buf, W_LEVEL);
	sb->v0.level_size_kib = word(buf, W_SIZE);
	sb->size = 2ull * sb->v0.level_size_kib;
	sb->v0.nr_disks = word(buf, W_NR_DISKS);
	sb->raid_disks = raid_disks;
	sb->v0.md_minor = word(buf, W_MD_MINOR);
	sb->v0.not_persistent = word(buf, W_NOT_PERSISTENT);
	sb->utime = word(buf, W_UTIME);
	sb->v0.state = word(buf, W_STATE);
	sb->v0.active_disks = word(buf, W_ACTIVE);
	sb->v0.working_disks = word(buf, W_WORKING);
	sb->v0.failed_disks = word(buf, W_FAILED);
	sb->v0.spare_disks = word(buf, W_SPARE);
	sb->sb_csum = stored;
	sb->events = (uint64_t)word(buf, W_EVENTS_HI) << 32 | word(buf, W_EVENTS_LO);
	sb->v0.cp_events = (uint64_t)word(buf, W_CP_EVENTS_HI) << 32 | word(buf, W_CP_EVENTS_LO);
	sb->v0.recovery_cp = word(buf, W_RECOVERY_CP);
	sb->v0.reshape_position = get_le64(buf + 4 * W_RESHAPE_POS);
	sb->v0.new_level = word(buf, W_NEW_LEVEL);
	sb->v0.delta_disks = word(buf, W_DELTA_DISKS);
	sb->v0.new_layout = word(buf, W_NEW_LAYOUT);
	sb->v0.new_chunk = word(buf, W_NEW_CHUNK);
	sb->layout = word(buf, W_LAYOUT);
	sb->chunk_sectors = chunk_bytes / 512;
	sb->v0.root_pv = word(buf, W_ROOT_PV);
	sb->v0.root_block = word(buf, W_ROOT_BLOCK);
	for (unsigned i = 0; i < MD_SB0_MAX_DEVS; i++)
		get_disk(buf, W_DISKS + DISK_WORDS * i, &sb->v0.disks[i]);
	get_disk(buf, W_THIS_DISK, &sb->v0.this_disk);

	/* The version-neutral fields, as the kernel derives them. */
	sb->dev_number = sb->v0.this_disk.number;
	sb->max_dev = MD_SB0_MAX_DEVS;
	if (sb->v0.state & (1u << MD_SB0_CLEAN))
		sb->resync_offset = MD_RESYNC_NONE;
	else if (sb->events == sb->v0.cp_events)
		sb->resync_offset =
		    sb->v0.recovery_cp == 0xffffffffu ? MD_RESYNC_NONE : sb->v0.recovery_cp;
	else
		sb->resync_offset = 0;
	if (sb->v0.state & (1u << MD_SB0_BITMAP_PRESENT)) {
		sb->feature_map |= MD_FEATURE_BITMAP_OFFSET;
		sb->bitmap_offset = 8; /* the bitmap follows the 4 KiB superblock */
	}
	if (minor == 91) {
		sb->feature_map |= MD_FEATURE_RESHAPE_ACTIVE;
		sb->reshape_position = sb->v0.reshape_position;
		sb->new_level = sb->v0.new_level;
		sb->delta_disks = (int32_t)sb->v0.delta_disks;
		sb->new_layout = sb->v0.new_layout;
		sb->new_chunk = sb->v0.new_chunk / 512;
	}
	if (sb->v0.this_disk.number >= MD_SB0_MAX_DEVS)
		return errmsg(err, errlen, -EINVAL,
		              "this disk's number %u outside the 0.90 disk table (%u entries)",
		              sb->v0.this_disk.number, MD_SB0_MAX_DEVS);
	return 0;
}

int md_sb0_encode(const struct md_sb *sb, uint8_t *buf)
{
	/* 0.90 stores size in KiB in 32 bits and chunk in bytes in 32 bits. */
	if (sb->size % 2 || sb->size / 2 > UINT32_MAX || sb->chunk_sectors > UINT32_MAX / 512 ||
	    sb->raid_disks > MD_SB0_MAX_DEVS || sb->ctime > UINT32_MAX || sb->utime > UINT32_MAX)
		return -EINVAL;
	memset(buf, 0, MD_SB_BYTES);
	put_word(buf, W_MAGIC, MD_SB_MAGIC);
	put_word(buf, W_MAJOR, 0);
	put_word(buf, W_MINOR, sb->v0.minor_version);
	put_word(buf, W_PATCH, sb->v0.patch_version);
	put_word(buf, W_GVALID, sb->v0.gvalid_words);
	put_word(buf, W_UUID0, uuid_word_in(sb->set_uuid));
	for (unsigned i = 0; i < 3; i++)
		put_word(buf, W_UUID1 + i, uuid_word_in(sb->set_uuid + 4 + 4 * i));
	put_word(buf, W_CTIME, (uint32_t)sb->ctime);
	put_word(buf, W_LEVEL, (uint32_t)sb->level);
	put_word(buf, W_SIZE, (uint32_t)(sb->size / 2));
	put_word(buf, W_NR_DISKS, sb->v0.nr_disks);
	put_word(buf, W_RAID_DISKS, sb->raid_disks);
	put_word(buf, W_MD_MINOR, sb->v0.md_minor);
	put_word(buf, W_NOT_PERSISTENT, sb->v0.not_persistent);
	put_word(buf, W_UTIME, (uint32_t)sb->utime);
	put_word(buf, W_STATE, sb->v0.state);
	put_word(buf, W_ACTIVE, sb->v0.active_disks);
	put_word(buf, W_WORKING, sb->v0.working_disks);
	put_word(buf, W_FAILED, sb->v0.failed_disks);
	put_word(buf, W_SPARE, sb->v0.spare_disks);
	put_word(buf, W_EVENTS_LO, (uint32_t)sb->events);
	put_word(buf, W_EVENTS_HI, (uint32_t)(sb->events >> 32));
	put_word(buf, W_CP_EVENTS_LO, (uint32_t)sb->v0.cp_events);
	put_word(buf, W_CP_EVENTS_HI, (uint32_t)(sb->v0.cp_events >> 32));
	put_word(buf, W_RECOVERY_CP, sb->v0.recovery_cp);
	put_le64(buf + 4 * W_RESHAPE_POS, sb->v0.reshape_position);
	put_word(buf, W_NEW_LEVEL, sb->v0.new_level);
	put_word(buf, W_DELTA_DISKS, sb->v0.delta_disks);
	put_word(buf, W_NEW_LAYOUT, sb->v0.new_layout);
	put_word(buf, W_NEW_CHUNK, sb->v0.new_chunk);
	put_word(buf, W_LAYOUT, sb->layout);
	put_word(buf, W_CHUNK_SIZE, sb->chunk_sectors * 512);
	put_word(buf, W_ROOT_PV, sb->v0.root_pv);
	put_word(buf, W_ROOT_BLOCK, sb->v0.root_block);
	for (unsigned i = 0; i < MD_SB0_MAX_DEVS; i++)
		put_disk(buf, W_DISKS + DISK_WORDS * i, &sb->v0.disks[i]);
	put_disk(buf, W_THIS_DISK, &sb->v0.this_disk);
	put_word(buf, W_CSUM, md_sb0_checksum(buf));
	return 0;
}
