/* md superblock 1.x (1.0, 1.1, 1.2): the on-disk layout of struct
 * mdp_superblock_1, little-endian, decoded field by field. The version only
 * says where the block sits; the bytes are the same for all three. */
#include <errno.h>
#include <string.h>

#include "meta/md_sb_internal.h"
#include "util/endian.h"
#include "util/errmsg.h"

/* Byte offsets inside the 1.x superblock. */
enum {
	SB1_MAGIC = 0,
	SB1_MAJOR = 4,
	SB1_FEATURE_MAP = 8,
	SB1_PAD0 = 12,
	SB1_SET_UUID = 16,
	SB1_SET_NAME = 32,
	SB1_CTIME = 64,
	SB1_LEVEL = 72,
	SB1_LAYOUT = 76,
	SB1_SIZE = 80,
	SB1_CHUNKSIZE = 88,
	SB1_RAID_DISKS = 92,
	SB1_BITMAP_OFFSET = 96,
	SB1_NEW_LEVEL = 100,
	SB1_RESHAPE_POSITION = 104,
	SB1_DELTA_DISKS = 112,
	SB1_NEW_LAYOUT = 116,
	SB1_NEW_CHUNK = 120,
	SB1_NEW_OFFSET = 124,
	SB1_DATA_OFFSET = 128,
	SB1_DATA_SIZE = 136,
	SB1_SUPER_OFFSET = 144,
	SB1_RECOVERY_OFFSET = 152,
	SB1_DEV_NUMBER = 160,
	SB1_CNT_CORRECTED_READ = 164,
	SB1_DEVICE_UUID = 168,
	SB1_DEVFLAGS = 184,
	SB1_BBLOG_SHIFT = 185,
	SB1_BBLOG_SIZE = 186,
	SB1_BBLOG_OFFSET = 188,
	SB1_UTIME = 192,
	SB1_EVENTS = 200,
	SB1_RESYNC_OFFSET = 208,
	SB1_SB_CSUM = 216,
	SB1_MAX_DEV = 220,
	SB1_PAD3 = 224,
	SB1_DEV_ROLES = 256,
};

uint32_t md_sb1_checksum(const uint8_t *buf)
{
	uint32_t max_dev = get_le32(buf + SB1_MAX_DEV);
	if (max_dev > MD_SB1_MAX_DEVS)
		max_dev = MD_SB1_MAX_DEVS; /* keep inside the 4 KiB block */
	size_t len = SB1_DEV_ROLES + 2 * (size_t)max_dev;
	uint64_t sum = 0;
	size_t i;
	for (i = 0; i + 4 <= len; i += 4)
		if (i != SB1_SB_CSUM) /* the checksum field counts as zero */
			sum += get_le32(buf + i);
	if (len - i == 2)
		sum += get_le16(buf + i);
	return (uint32_t)((sum & 0xffffffffu) + (sum >> 32));
}

int md_sb1_decode(enum md_sb_version version, const uint8_t *buf, struct md_sb *sb, char *err,
                  size_t errlen)
{
	uint32_t magic = get_le32(buf + SB1_MAGIC);
	if (magic != MD_SB_MAGIC)
		return errmsg(err, errlen, -ENOENT, "no md superblock (magic %08x, expected %08x)",
		              magic, MD_SB_MAGIC);
	uint32_t major = get_le32(buf + SB1_MAJOR);
	if (major != 1)
		return errmsg(err, errlen, -EINVAL,
		              "md superblock major version %u where a 1.x superblock belongs",
		              major);
	uint32_t max_dev = get_le32(buf + SB1_MAX_DEV);
	if (max_dev > MD_SB1_MAX_DEVS)
		return errmsg(err, errlen, -EINVAL,
		              "max_dev %u exceeds the %u role slots a 4 KiB superblock holds",
		              max_dev, MD_SB1_MAX_DEVS);
	uint32_t stored = get_le32(buf + SB1_SB_CSUM);
	uint32_t want = md_sb1_checksum(buf);
	if (stored != want)
		return errmsg(err, errlen, -EINVAL, "superblock checksum %08x, expected %08x",
		              stored, want);

	memset(sb, 0, sizeof(*sb));
	sb->version = version;
	sb->feature_map = get_le32(buf + SB1_FEATURE_MAP);
	sb->pad0 = get_le32(buf + SB1_PAD0);
	memcpy(sb->set_uuid, buf + SB1_SET_UUID, 16);
	memcpy(sb->set_name, buf + SB1_SET_NAME, 32);
	sb->set_name[32] = 0;
	sb->ctime = get_le64(buf + SB1_CTIME);
	sb->level = (int32_t)get_le32(buf + SB1_LEVEL);
	sb->layout = get_le32(buf + SB1_LAYOUT);
	sb->size = get_le64(buf + SB1_SIZE);
	sb->chunk_sectors = get_le32(buf + SB1_CHUNKSIZE);
	sb->raid_disks = get_le32(buf + SB1_RAID_DISKS);
	sb->bitmap_offset = (int32_t)get_le32(buf + SB1_BITMAP_OFFSET);
	sb->new_level = get_le32(buf + SB1_NEW_LEVEL);
	sb->reshape_position = get_le64(buf + SB1_RESHAPE_POSITION);
	sb->delta_disks = (int32_t)get_le32(buf + SB1_DELTA_DISKS);
	sb->new_layout = get_le32(buf + SB1_NEW_LAYOUT);
	sb->new_chunk = get_le32(buf + SB1_NEW_CHUNK);
	sb->new_offset = get_le32(buf + SB1_NEW_OFFSET);
	sb->data_offset = get_le64(buf + SB1_DATA_OFFSET);
	sb->data_size = get_le64(buf + SB1_DATA_SIZE);
	sb->super_offset = get_le64(buf + SB1_SUPER_OFFSET);
	sb->recovery_offset = get_le64(buf + SB1_RECOVERY_OFFSET);
	sb->dev_number = get_le32(buf + SB1_DEV_NUMBER);
	sb->cnt_corrected_read = get_le32(buf + SB1_CNT_CORRECTED_READ);
	memcpy(sb->device_uuid, buf + SB1_DEVICE_UUID, 16);
	sb->devflags = buf[SB1_DEVFLAGS];
	sb->bblog_shift = buf[SB1_BBLOG_SHIFT];
	sb->bblog_size = get_le16(buf + SB1_BBLOG_SIZE);
	sb->bblog_offset = get_le32(buf + SB1_BBLOG_OFFSET);
	sb->utime = get_le64(buf + SB1_UTIME);
	sb->events = get_le64(buf + SB1_EVENTS);
	sb->resync_offset = get_le64(buf + SB1_RESYNC_OFFSET);
	sb->sb_csum = stored;
	sb->max_dev = max_dev;
	memcpy(sb->pad3, buf + SB1_PAD3, sizeof(sb->pad3));
	for (unsigned i = 0; i < MD_SB1_MAX_DEVS; i++)
		sb->dev_roles[i] = get_le16(buf + SB1_DEV_ROLES + 2 * i);

	/* The version fixes where the block is; 1.1 and 1.2 also fix super_offset. */
	if (version == MD_SB_1_1 && sb->super_offset != 0)
		return errmsg(err, errlen, -EINVAL,
		              "super_offset %llu in a 1.1 superblock (must be 0)",
		              (unsigned long long)sb->super_offset);
	if (version == MD_SB_1_2 && sb->super_offset != 8)
		return errmsg(err, errlen, -EINVAL,
		              "super_offset %llu in a 1.2 superblock (must be 8)",
		              (unsigned long long)sb->super_offset);
	if (sb->dev_number >= max_dev)
		return errmsg(err, errlen, -EINVAL,
		              "dev_number %u outside the role table (max_dev %u)", sb->dev_number,
		              max_dev);
	if (sb->raid_disks > MD_SB1_MAX_DEVS)
		return errmsg(err, errlen, -EINVAL, "raid_disks %u exceeds %u", sb->raid_disks,
		              MD_SB1_MAX_DEVS);
	return 0;
}

int md_sb1_encode(const struct md_sb *sb, uint8_t *buf)
{
	if (sb->max_dev > MD_SB1_MAX_DEVS)
		return -EINVAL;
	memset(buf, 0, MD_SB_BYTES);
	put_le32(buf + SB1_MAGIC, MD_SB_MAGIC);
	put_le32(buf + SB1_MAJOR, 1);
	put_le32(buf + SB1_FEATURE_MAP, sb->feature_map);
	put_le32(buf + SB1_PAD0, sb->pad0);
	memcpy(buf + SB1_SET_UUID, sb->set_uuid, 16);
	memcpy(buf + SB1_SET_NAME, sb->set_name, 32);
	put_le64(buf + SB1_CTIME, sb->ctime);
	put_le32(buf + SB1_LEVEL, (uint32_t)sb->level);
	put_le32(buf + SB1_LAYOUT, sb->layout);
	put_le64(buf + SB1_SIZE, sb->size);
	put_le32(buf + SB1_CHUNKSIZE, sb->chunk_sectors);
	put_le32(buf + SB1_RAID_DISKS, sb->raid_disks);
	put_le32(buf + SB1_BITMAP_OFFSET, (uint32_t)sb->bitmap_offset);
	put_le32(buf + SB1_NEW_LEVEL, sb->new_level);
	put_le64(buf + SB1_RESHAPE_POSITION, sb->reshape_position);
	put_le32(buf + SB1_DELTA_DISKS, (uint32_t)sb->delta_disks);
	put_le32(buf + SB1_NEW_LAYOUT, sb->new_layout);
	put_le32(buf + SB1_NEW_CHUNK, sb->new_chunk);
	put_le32(buf + SB1_NEW_OFFSET, sb->new_offset);
	put_le64(buf + SB1_DATA_OFFSET, sb->data_offset);
	put_le64(buf + SB1_DATA_SIZE, sb->data_size);
	put_le64(buf + SB1_SUPER_OFFSET, sb->super_offset);
	put_le64(buf + SB1_RECOVERY_OFFSET, sb->recovery_offset);
	put_le32(buf + SB1_DEV_NUMBER, sb->dev_number);
	put_le32(buf + SB1_CNT_CORRECTED_READ, sb->cnt_corrected_read);
	memcpy(buf + SB1_DEVICE_UUID, sb->device_uuid, 16);
	buf[SB1_DEVFLAGS] = sb->devflags;
	buf[SB1_BBLOG_SHIFT] = sb->bblog_shift;
	put_le16(buf + SB1_BBLOG_SIZE, sb->bblog_size);
	put_le32(buf + SB1_BBLOG_OFFSET, sb->bblog_offset);
	put_le64(buf + SB1_UTIME, sb->utime);
	put_le64(buf + SB1_EVENTS, sb->events);
	put_le64(buf + SB1_RESYNC_OFFSET, sb->resync_offset);
	put_le32(buf + SB1_MAX_DEV, sb->max_dev);
	memcpy(buf + SB1_PAD3, sb->pad3, sizeof(sb->pad3));
	for (unsigned i = 0; i < MD_SB1_MAX_DEVS; i++)
		put_le16(buf + SB1_DEV_ROLES + 2 * i, sb->dev_roles[i]);
	put_le32(buf + SB1_SB_CSUM, md_sb1_checksum(buf));
	return 0;
}
