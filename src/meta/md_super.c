/* md superblocks: the version-neutral entry points (decode/encode dispatch,
 * placement, validation against the device and against what uraid
 * implements, roles and state). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "meta/md_sb_internal.h"
#include "util/errmsg.h"

const char *md_sb_version_name(enum md_sb_version v)
{
	switch (v) {
	case MD_SB_0_90: return "0.90";
	case MD_SB_1_0: return "1.0";
	case MD_SB_1_1: return "1.1";
	case MD_SB_1_2: return "1.2";
	}
	return "?";
}

int md_sb_version_parse(const char *s, enum md_sb_version *v)
{
	static const struct {
		const char *name;
		enum md_sb_version v;
	} names[] = {
	    {"0.90", MD_SB_0_90}, {"0.9", MD_SB_0_90}, {"0", MD_SB_0_90}, {"1.0", MD_SB_1_0},
	    {"1.1", MD_SB_1_1},   {"1.2", MD_SB_1_2},  {"1", MD_SB_1_2},  {"default", MD_SB_1_2},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (s && !strcmp(s, names[i].name)) {
			*v = names[i].v;
			return 0;
		}
	return -EINVAL;
}

static bool is_v1(enum md_sb_version v)
{
	return v == MD_SB_1_0 || v == MD_SB_1_1 || v == MD_SB_1_2;
}

int64_t md_sb_location(enum md_sb_version version, uint64_t dev_sectors)
{
	switch (version) {
	case MD_SB_1_0:
	case MD_SB_1_1:
	case MD_SB_1_2:
		/* md refuses members below 24 sectors for any 1.x placement. */
		if (dev_sectors < 24)
			return -ENOSPC;
		if (version == MD_SB_1_1)
			return 0;
		if (version == MD_SB_1_2)
			return 8;
		/* at least 8 KiB, less than 12 KiB from the end, 4 KiB aligned */
		return (int64_t)((dev_sectors - 16) & ~(uint64_t)7);
	case MD_SB_0_90:
		if (dev_sectors < MD_SB0_RESERVED_SECTORS)
			return -ENOSPC;
		return (int64_t)((dev_sectors & ~(uint64_t)(MD_SB0_RESERVED_SECTORS - 1)) -
		                 MD_SB0_RESERVED_SECTORS);
	}
	return -EINVAL;
}

int md_sb_decode(enum md_sb_version version, const uint8_t *buf, size_t len, struct md_sb *sb,
                 char *err, size_t errlen)
{
	if (!buf || !sb || len < MD_SB_BYTES)
		return errmsg(err, errlen, -EINVAL, "superblock buffer of %zu bytes (need %u)", len,
		              MD_SB_BYTES);
	if (is_v1(version))
		return md_sb1_decode(version, buf, sb, err, errlen);
	if (version == MD_SB_0_90)
		return md_sb0_decode(buf, sb, err, errlen);
	return errmsg(err, errlen, -EINVAL, "unknown superblock version %d", (int)version);
}

int md_sb_encode(const struct md_sb *sb, uint8_t *buf, size_t len)
{
	if (!sb || !buf || len < MD_SB_BYTES)
		return -EINVAL;
	if (is_v1(sb->version))
		return md_sb1_encode(sb, buf);
	if (sb->version == MD_SB_0_90)
		return md_sb0_encode(sb, buf);
	return -EINVAL;
}

uint32_t md_sb_checksum(enum md_sb_version version, const uint8_t *buf)
{
	return version == MD_SB_0_90 ? md_sb0_checksum(buf) : md_sb1_checksum(buf);
}

size_t md_sb_bytes(const struct md_sb *sb)
{
	if (sb->version == MD_SB_0_90)
		return MD_SB_BYTES;
	size_t n =
	    256 + 2 * (size_t)(sb->max_dev > MD_SB1_MAX_DEVS ? MD_SB1_MAX_DEVS : sb->max_dev);
	return (n + 511) & ~(size_t)511;
}

/* feature_map bits uraid refuses, with the words messages use. Bitmap
 * offset, recovery offset (bitmap-based recovery too), bad blocks (the log
 * is judged when it is loaded: meta/md_badblocks.c), replacement, the raid0
 * layout and the partial parity log (engine/ppl/) are understood. */
static const struct {
	uint32_t bit;
	const char *what;
} refused_features[] = {
    {MD_FEATURE_RESHAPE_ACTIVE, "reshape in progress"},
    {MD_FEATURE_RESHAPE_BACKWARDS, "reshape backwards"},
    {MD_FEATURE_NEW_OFFSET, "data offset change (reshape)"},
    {MD_FEATURE_CLUSTERED, "clustered md"},
    {MD_FEATURE_JOURNAL, "journal"},
};

#define MD_FEATURES_KNOWN                                                                    \
	(MD_FEATURE_BITMAP_OFFSET | MD_FEATURE_RECOVERY_OFFSET | MD_FEATURE_RESHAPE_ACTIVE | \
	 MD_FEATURE_BAD_BLOCKS | MD_FEATURE_REPLACEMENT | MD_FEATURE_RESHAPE_BACKWARDS |     \
	 MD_FEATURE_NEW_OFFSET | MD_FEATURE_RECOVERY_BITMAP | MD_FEATURE_CLUSTERED |         \
	 MD_FEATURE_JOURNAL | MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS | MD_FEATURE_RAID0_LAYOUT)

int md_sb_check_features(const struct md_sb *sb, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(refused_features) / sizeof(refused_features[0]); i++)
		if (sb->feature_map & refused_features[i].bit)
			return errmsg(err, errlen, -EOPNOTSUPP,
			              "%s (feature 0x%x) is not supported by uraid",
			              refused_features[i].what, refused_features[i].bit);
	if (sb->feature_map & ~(uint32_t)MD_FEATURES_KNOWN)
		return errmsg(err, errlen, -EOPNOTSUPP, "unknown md feature bits 0x%x",
		              sb->feature_map & ~(uint32_t)MD_FEATURES_KNOWN);
	switch (sb->level) {
	case -1:
	case 0:
	case 1:
	case 4:
	case 5:
	case 6:
	case 10: break;
	default:
		return errmsg(err, errlen, -EOPNOTSUPP, "md level %d is not supported by uraid",
		              sb->level);
	}
	if (sb->version == MD_SB_0_90 && sb->v0.not_persistent)
		return errmsg(err, errlen, -EOPNOTSUPP, "0.90 array marked not persistent");
	return 0;
}

int md_sb_check_device(const struct md_sb *sb, uint64_t dev_sectors, char *err, size_t errlen)
{
	const char *vn = md_sb_version_name(sb->version);
	int64_t loc = md_sb_location(sb->version, dev_sectors);
	if (loc < 0)
		return errmsg(err, errlen, -ENOSPC,
		              "member of %llu sectors is too small for a %s superblock",
		              (unsigned long long)dev_sectors, vn);
	if (sb->version == MD_SB_0_90) {
		/* data from sector 0 up to the superblock */
		if (sb->size > (uint64_t)loc)
			return errmsg(err, errlen, -EINVAL,
			              "used size %llu sectors runs into the 0.90 superblock at "
			              "sector %lld",
			              (unsigned long long)sb->size, (long long)loc);
		return 0;
	}
	if (sb->super_offset != (uint64_t)loc)
		return errmsg(err, errlen, -EINVAL,
		              "super_offset %llu does not match where a %s superblock sits on a "
		              "member of %llu sectors (%lld)",
		              (unsigned long long)sb->super_offset, vn,
		              (unsigned long long)dev_sectors, (long long)loc);
	if (sb->data_offset > dev_sectors || sb->data_size > dev_sectors - sb->data_offset)
		return errmsg(err, errlen, -EINVAL,
		              "data area (offset %llu, size %llu sectors) extends past the end of "
		              "the member (%llu sectors)",
		              (unsigned long long)sb->data_offset,
		              (unsigned long long)sb->data_size, (unsigned long long)dev_sectors);
	/* A journal device's data area is its log, not array data: md keeps
	 * the array's size in its superblock all the same. */
	if (sb->size > sb->data_size && md_sb_role(sb) != -3)
		return errmsg(err, errlen, -EINVAL,
		              "used size %llu sectors exceeds the data area (%llu sectors)",
		              (unsigned long long)sb->size, (unsigned long long)sb->data_size);
	if (sb->version == MD_SB_1_0) {
		if (sb->data_offset + sb->data_size > sb->super_offset)
			return errmsg(err, errlen, -EINVAL,
			              "data area (offset %llu, size %llu sectors) overlaps the 1.0 "
			              "superblock at sector %llu",
			              (unsigned long long)sb->data_offset,
			              (unsigned long long)sb->data_size,
			              (unsigned long long)sb->super_offset);
	} else {
		uint64_t sb_end = sb->super_offset + md_sb_bytes(sb) / 512;
		if (sb->data_offset < sb_end)
			return errmsg(err, errlen, -EINVAL,
			              "data offset %llu lies inside the %s superblock (sectors "
			              "%llu-%llu)",
			              (unsigned long long)sb->data_offset, vn,
			              (unsigned long long)sb->super_offset,
			              (unsigned long long)sb_end - 1);
	}
	return 0;
}

bool md_sb0_filling(const struct md_sb *sb)
{
	const struct md_sb0_disk *d = &sb->v0.this_disk;
	return sb->version == MD_SB_0_90 && (sb->feature_map & MD_FEATURE_RESHAPE_ACTIVE) &&
	       (d->state & (1u << MD_DISK_ACTIVE)) &&
	       !(d->state & ((1u << MD_DISK_SYNC) | (1u << MD_DISK_FAULTY)));
}

int md_sb_role(const struct md_sb *sb)
{
	if (sb->version == MD_SB_0_90) {
		const struct md_sb0_disk *d = &sb->v0.this_disk;
		if (d->state & (1u << MD_DISK_FAULTY))
			return -2;
		/* A shrink in progress (minor 91) still has its old slots:
		 * raid_disks is the new count. */
		uint32_t n = sb->raid_disks;
		if ((sb->feature_map & MD_FEATURE_RESHAPE_ACTIVE) && sb->delta_disks < 0)
			n += (uint32_t)-sb->delta_disks;
		if ((d->state & (1u << MD_DISK_ACTIVE)) && (d->state & (1u << MD_DISK_SYNC)) &&
		    d->raid_disk < n)
			return (int)d->raid_disk;
		/* md's super_90_validate: active without sync during a reshape
		 * is a slot the move fills (md_sb0_filling) */
		if (md_sb0_filling(sb) && d->raid_disk < n)
			return (int)d->raid_disk;
		return -1;
	}
	if (sb->dev_number >= sb->max_dev || sb->dev_number >= MD_SB1_MAX_DEVS)
		return -1; /* as md: no entry means spare */
	uint16_t r = sb->dev_roles[sb->dev_number];
	switch (r) {
	case MD_ROLE_SPARE: return -1;
	case MD_ROLE_FAULTY: return -2;
	case MD_ROLE_JOURNAL: return -3;
	}
	if (r >= 0xff00) /* reserved range md never assigns: not usable */
		return -2;
	return r;
}

int md_sb_set_role(struct md_sb *sb, uint32_t dev_number, int role)
{
	if (sb->version == MD_SB_0_90)
		return -EOPNOTSUPP; /* 0.90 describes disks in v0.disks[] */
	if (dev_number >= MD_SB1_MAX_DEVS || role < -3 || role >= 0xff00)
		return -EINVAL;
	static const uint16_t special[] = {MD_ROLE_SPARE, MD_ROLE_FAULTY, MD_ROLE_JOURNAL};
	sb->dev_roles[dev_number] = role >= 0 ? (uint16_t)role : special[-role - 1];
	if (dev_number >= sb->max_dev)
		sb->max_dev = dev_number + 1;
	return 0;
}

bool md_sb_clean(const struct md_sb *sb)
{
	if (sb->version == MD_SB_0_90)
		return sb->v0.state & (1u << MD_SB0_CLEAN);
	return sb->resync_offset == MD_RESYNC_NONE;
}

void md_sb_set_clean(struct md_sb *sb, bool clean, uint64_t resync_offset)
{
	sb->resync_offset = clean ? MD_RESYNC_NONE : resync_offset;
	if (sb->version != MD_SB_0_90)
		return;
	if (clean) {
		sb->v0.state |= 1u << MD_SB0_CLEAN;
		sb->v0.recovery_cp = 0xffffffffu;
	} else {
		sb->v0.state &= ~(1u << MD_SB0_CLEAN);
		/* 0.90 keeps a 32-bit checkpoint; beyond that resync restarts at 0 */
		sb->v0.recovery_cp = resync_offset < 0xffffffffu ? (uint32_t)resync_offset : 0;
	}
	sb->v0.cp_events = sb->events;
}

void md_uuid_format(const uint8_t uuid[16], char out[36])
{
	char *p = out;
	for (int i = 0; i < 16; i++) {
		if (i && i % 4 == 0)
			*p++ = ':';
		p += sprintf(p, "%02x", uuid[i]);
	}
	*p = 0;
}

bool md_sb_local_to_host(const struct md_sb *sb, const char *homehost)
{
	if (!homehost || !*homehost)
		return false;
	size_t l = strlen(homehost);
	if (sb->version != MD_SB_0_90)
		return l < 32 && sb->set_name[l] == ':' && !strncmp(sb->set_name, homehost, l);
	uint8_t h[20];
	md_sha1(homehost, l, h);
	/* words 2 and 3 hold the first 8 hash bytes in disk (little-endian) order;
	 * set_uuid keeps each word big-endian */
	for (int j = 0; j < 4; j++)
		if (sb->set_uuid[8 + j] != h[3 - j] || sb->set_uuid[12 + j] != h[7 - j])
			return false;
	return true;
}
