/* Creating md superblocks with the choices mdadm 4.2 makes (its Create.c and
 * super1.c/super0.c), so a member uraid creates examines like one mdadm made.
 * All sizes in 512-byte sectors unless a name says KiB. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "meta/md_ppl.h"
#include "meta/md_sb_internal.h"
#include "util/errmsg.h"

#define MIB_SECTORS 2048u

static bool level_is_chunked(int level)
{
	return level == 0 || level == 4 || level == 5 || level == 6 || level == 10;
}

/* The chunk mdadm works with: none for raid1, linear's rounding, else the chunk. */
static uint32_t create_chunk(const struct md_create_params *p)
{
	return p->level == 1 ? 0 : p->chunk_sectors;
}

/* Room mdadm keeps for a write-intent bitmap: 4 KiB, 64 KiB above 8 GiB,
 * 128 KiB from 200 GiB on (a multiple of 4 KiB for 4K-sector disks). */
static uint64_t bitmap_space(uint64_t sectors)
{
	if (sectors < 128)
		return 0;
	if (sectors - 128 >= 200ull * 1024 * 1024 * 2)
		return 256;
	if (sectors - 8 > 8ull * 1024 * 1024 * 2)
		return 128;
	return 8;
}

/* The room mdadm keeps between superblock and data for its log: the
 * bitmap's, or with the PPL consistency policy the PPL area (1 MiB). */
static uint64_t log_room(const struct md_create_params *p, uint64_t sectors)
{
	return p && p->ppl ? MD_PPL_AREA_SECTORS : bitmap_space(sectors);
}

static uint64_t data_offset_with(enum md_sb_version v, uint64_t dev_sectors, uint32_t chunk_sectors,
                                 uint64_t room)
{
	if (v != MD_SB_1_1 && v != MD_SB_1_2)
		return 0;
	/* Reshape headroom: 128 MiB, halved while it exceeds ~0.1% of the
	 * device, but never below two chunks. */
	uint64_t headroom = 128ull * 1024 * 2;
	while ((headroom << 10) > dev_sectors &&
	       (chunk_sectors == 0 || headroom / 2 >= 2ull * chunk_sectors))
		headroom >>= 1;
	/* 12 KiB of superblock area, the bitmap (or PPL) room, the headroom;
	 * whole MiBs */
	uint64_t off = 24 + room + headroom;
	return (off + MIB_SECTORS - 1) / MIB_SECTORS * MIB_SECTORS;
}

uint64_t md_sb_default_data_offset(enum md_sb_version v, uint64_t dev_sectors,
                                   uint32_t chunk_sectors)
{
	return data_offset_with(v, dev_sectors, chunk_sectors, bitmap_space(dev_sectors));
}

static uint64_t usable_with(enum md_sb_version v, uint64_t dev_sectors, uint64_t data_offset,
                            uint64_t room)
{
	switch (v) {
	case MD_SB_1_1:
	case MD_SB_1_2: return dev_sectors > data_offset ? dev_sectors - data_offset : 0;
	case MD_SB_1_0: {
		/* superblock (8 KiB reserve), bad block log (4 KiB), bitmap room */
		uint64_t dev = dev_sectors & ~(uint64_t)7;
		uint64_t overhead = 16 + 8 + room;
		return dev > overhead ? dev - overhead : 0;
	}
	case MD_SB_0_90: {
		int64_t loc = md_sb_location(v, dev_sectors);
		return loc > 0 ? (uint64_t)loc : 0;
	}
	}
	return 0;
}

uint64_t md_sb_usable_sectors(enum md_sb_version v, uint64_t dev_sectors, uint64_t data_offset)
{
	return usable_with(v, dev_sectors, data_offset, bitmap_space(dev_sectors));
}

int md_create_plan(struct md_create_params *p, const uint64_t *dev_sectors, unsigned n, char *err,
                   size_t errlen)
{
	if (n == 0)
		return errmsg(err, errlen, -EINVAL, "no members");
	const char *vn = md_sb_version_name(p->version);
	if (level_is_chunked(p->level) && p->chunk_sectors == 0)
		return errmsg(err, errlen, -EINVAL, "level %d needs a chunk size", p->level);
	uint32_t chunk = create_chunk(p);
	if (chunk && (chunk < 8 || (chunk & (chunk - 1))))
		return errmsg(err, errlen, -EINVAL,
		              "chunk size %u sectors is not a power of two of at least 4 KiB",
		              chunk);
	bool explicit_offset = p->data_offset != 0;
	if (p->ppl && (p->version == MD_SB_0_90 || p->level != 5))
		return errmsg(err, errlen, -EINVAL,
		              p->version == MD_SB_0_90
		                  ? "0.90 metadata does not support PPL"
		                  : "PPL consistency policy is only supported for RAID level 5");
	if (p->data_offset == 0)
		p->data_offset = data_offset_with(p->version, dev_sectors[0], chunk,
		                                  log_room(p, dev_sectors[0]));
	if (p->version != MD_SB_1_1 && p->version != MD_SB_1_2)
		p->data_offset = 0; /* 1.0 and 0.90 keep the data at sector 0 */

	uint64_t min_kib = 0;
	uint64_t first_chunks = 0, first_zone = 0;
	p->raid0_layout = false;
	for (unsigned i = 0; i < n; i++) {
		uint64_t use = usable_with(p->version, dev_sectors[i], p->data_offset,
		                           log_room(p, dev_sectors[i]));
		uint64_t kib = use / 2;
		if (chunk)
			kib &= ~(uint64_t)(chunk / 2 - 1);
		if (kib == 0 || md_sb_location(p->version, dev_sectors[i]) < 0)
			return errmsg(err, errlen, -ENOSPC,
			              "member %u (%llu sectors) has no room for data after %s "
			              "metadata",
			              i, (unsigned long long)dev_sectors[i], vn);
		if (i == 0 || kib < min_kib)
			min_kib = kib;
		/* raid0 zones differ when members hold different chunk counts.
		 * mdadm compares whole devices (unless a data offset was given);
		 * the kernel's zones come from the data areas. Flag either, so the
		 * result matches mdadm wherever mdadm flags it and still assembles
		 * where mdadm's rule misses a difference (chunks above 1 MiB). */
		if (p->level == 0 && chunk) {
			uint64_t c =
			    (dev_sectors[i] - (explicit_offset ? p->data_offset : 0)) / chunk;
			uint64_t z = use / chunk;
			if (i == 0) {
				first_chunks = c;
				first_zone = z;
			} else if ((c != first_chunks || z != first_zone) && p->layout != 0) {
				p->raid0_layout = true;
			}
		}
	}
	if (p->size == 0) {
		if (p->level > 0) {
			p->size = min_kib * 2;
			if (p->level == 1)
				p->size &= ~(uint64_t)127; /* whole 64 KiB, for a later reshape */
		}
	} else if (p->size > min_kib * 2) {
		return errmsg(err, errlen, -ENOSPC,
		              "requested size %llu sectors exceeds the smallest member's room "
		              "(%llu sectors)",
		              (unsigned long long)p->size, (unsigned long long)min_kib * 2);
	}
	if (p->version == MD_SB_0_90 && p->size >= 4ull * 1024 * 1024 * 1024 * 2)
		return errmsg(err, errlen, -EINVAL,
		              "0.90 metadata supports at most 4 TiB per member");
	return 0;
}

static void set_name_1x(struct md_sb *sb, const struct md_create_params *p)
{
	char name[sizeof(p->name)];
	/* mdadm names /dev/md0 "0" */
	snprintf(name, sizeof(name), "%.*s", (int)sizeof(p->name) - 1, p->name[0] ? p->name : "0");
	size_t hl = strnlen(p->homehost, sizeof(p->homehost));
	memset(sb->set_name, 0, sizeof(sb->set_name));
	size_t nl = strlen(name);
	if (hl && !strchr(name, ':') && hl + 1 + nl < 32) {
		memcpy(sb->set_name, p->homehost, hl);
		sb->set_name[hl] = ':';
		memcpy(sb->set_name + hl + 1, name, nl);
	} else {
		memcpy(sb->set_name, name, nl < 31 ? nl : 31);
	}
}

static int init_1x(struct md_sb *sb, const struct md_create_params *p, int role,
                   uint32_t dev_number, uint64_t dev_sectors, char *err, size_t errlen)
{
	uint32_t ndevs = p->raid_disks + p->spare_disks;
	if (ndevs > MD_SB1_MAX_DEVS || dev_number >= MD_SB1_MAX_DEVS)
		return errmsg(err, errlen, -EINVAL, "%u members exceed 1.x's %u", ndevs,
		              MD_SB1_MAX_DEVS);
	int64_t loc = md_sb_location(p->version, dev_sectors);
	if (loc < 0)
		return errmsg(err, errlen, -ENOSPC, "member of %llu sectors is too small",
		              (unsigned long long)dev_sectors);
	set_name_1x(sb, p);
	sb->ctime = sb->utime = p->ctime;
	/* role table sized like mdadm: whole 512-byte sectors */
	size_t bytes = (256 + 2 * (size_t)ndevs + 511) & ~(size_t)511;
	sb->max_dev = (uint32_t)(bytes - 256) / 2;
	for (unsigned i = 0; i < MD_SB1_MAX_DEVS; i++)
		sb->dev_roles[i] = MD_ROLE_SPARE;
	for (uint32_t i = 0; i < p->raid_disks; i++)
		sb->dev_roles[i] = (uint16_t)i;
	int rc = md_sb_set_role(sb, dev_number, role);
	if (rc < 0)
		return errmsg(err, errlen, rc, "role %d is not a valid md role", role);
	sb->dev_number = dev_number;
	sb->events = 0;
	if (p->level == 0 && p->raid0_layout)
		sb->feature_map |= MD_FEATURE_RAID0_LAYOUT;

	uint64_t bm_space = log_room(p, sb->size);
	if (p->ppl) {
		/* mdadm's write_init_super1: the log right after the superblock
		 * (1.1/1.2), or below the bad block log under it (1.0). */
		sb->feature_map |= MD_FEATURE_PPL;
		md_ppl_set_area(sb,
		                p->version == MD_SB_1_0 ? -(int16_t)(MD_PPL_AREA_SECTORS + 8) : 8,
		                MD_PPL_AREA_SECTORS);
	}
	if (p->version == MD_SB_1_0) {
		uint64_t so = (uint64_t)loc;
		sb->super_offset = so;
		sb->data_offset = 0;
		bm_space += 8; /* and the bad block log */
		if (so < sb->size + bm_space)
			bm_space = so > sb->size ? so - sb->size : 0;
		sb->data_size = so - bm_space;
		if (bm_space >= 8) {
			sb->bblog_size = 8;
			sb->bblog_offset = (uint32_t)-8; /* just before the superblock */
		}
	} else {
		uint64_t so = (uint64_t)loc;
		uint64_t doff = p->data_offset
		                    ? p->data_offset
		                    : data_offset_with(p->version, dev_sectors, create_chunk(p),
		                                       log_room(p, dev_sectors));
		if (doff < so + 8 || doff >= dev_sectors)
			return errmsg(err, errlen, -EINVAL,
			              "data offset %llu does not fit a member of %llu sectors",
			              (unsigned long long)doff, (unsigned long long)dev_sectors);
		sb->super_offset = so;
		sb->data_offset = doff;
		sb->data_size = dev_sectors - doff;
		/* bad block log after the bitmap room when it fits, else right
		 * before the data, else none */
		if (doff >= so + 8 + bm_space + 8) {
			sb->bblog_size = 8;
			sb->bblog_offset = (uint32_t)(8 + bm_space);
		} else if (doff >= so + 16) {
			sb->bblog_size = 8;
			sb->bblog_offset = (uint32_t)(doff - 8 - so);
		}
	}
	if (sb->size > sb->data_size)
		return errmsg(err, errlen, -ENOSPC,
		              "size %llu sectors exceeds this member's data area (%llu)",
		              (unsigned long long)sb->size, (unsigned long long)sb->data_size);
	return 0;
}

static int init_090(struct md_sb *sb, const struct md_create_params *p, int role,
                    uint32_t dev_number, uint64_t dev_sectors, char *err, size_t errlen)
{
	uint32_t ndevs = p->raid_disks + p->spare_disks;
	if (ndevs > MD_SB0_MAX_DEVS || dev_number >= MD_SB0_MAX_DEVS)
		return errmsg(err, errlen, -EINVAL, "0.90 metadata supports at most %u devices",
		              MD_SB0_MAX_DEVS);
	int64_t loc = md_sb_location(MD_SB_0_90, dev_sectors);
	if (loc < 0)
		return errmsg(err, errlen, -ENOSPC, "member of %llu sectors is too small for 0.90",
		              (unsigned long long)dev_sectors);
	if (sb->size % 2 || sb->size / 2 > UINT32_MAX || sb->size > (uint64_t)loc)
		return errmsg(err, errlen, -EINVAL, "size %llu sectors does not fit 0.90",
		              (unsigned long long)sb->size);
	if (p->ctime > UINT32_MAX)
		return errmsg(err, errlen, -EINVAL, "creation time beyond 0.90's 32 bits");
	sb->v0.minor_version = 90;
	sb->v0.level_size_kib = (uint32_t)(sb->size / 2);
	sb->ctime = sb->utime = p->ctime;
	sb->v0.nr_disks = ndevs;
	sb->v0.active_disks = p->raid_disks;
	sb->v0.working_disks = ndevs;
	sb->v0.spare_disks = p->spare_disks;
	if (p->homehost[0]) {
		/* mdadm tags random 0.90 uuids with the homehost's SHA-1 */
		uint8_t h[20];
		md_sha1(p->homehost, strnlen(p->homehost, sizeof(p->homehost)), h);
		for (int j = 0; j < 4; j++) {
			sb->set_uuid[8 + j] = h[3 - j];
			sb->set_uuid[12 + j] = h[7 - j];
		}
	}
	const uint32_t in_sync = 1u << MD_DISK_ACTIVE | 1u << MD_DISK_SYNC;
	for (uint32_t i = 0; i < ndevs; i++) {
		struct md_sb0_disk *d = &sb->v0.disks[i];
		d->number = i;
		d->raid_disk = i;
		d->state = i < p->raid_disks ? in_sync : 0;
	}
	struct md_sb0_disk *me = &sb->v0.disks[dev_number];
	me->number = dev_number;
	if (role >= 0) {
		if ((uint32_t)role >= p->raid_disks)
			return errmsg(err, errlen, -EINVAL, "role %d outside %u raid disks", role,
			              p->raid_disks);
		me->raid_disk = (uint32_t)role;
		me->state = in_sync;
	} else if (role == -1) {
		me->state = 0;
	} else {
		return errmsg(err, errlen, -EINVAL, "0.90 members are created active or spare");
	}
	sb->v0.this_disk = *me;
	sb->dev_number = dev_number;
	sb->max_dev = MD_SB0_MAX_DEVS;
	sb->events = 1;
	sb->super_offset = (uint64_t)loc;
	sb->data_offset = 0;
	sb->data_size = (uint64_t)loc;
	return 0;
}

int md_sb_init(struct md_sb *sb, const struct md_create_params *p, int role, uint32_t dev_number,
               const uint8_t device_uuid[16], uint64_t dev_sectors, char *err, size_t errlen)
{
	memset(sb, 0, sizeof(*sb));
	switch (p->version) {
	case MD_SB_0_90:
	case MD_SB_1_0:
	case MD_SB_1_1:
	case MD_SB_1_2: break;
	default: return errmsg(err, errlen, -EINVAL, "unknown metadata version %d", p->version);
	}
	if (p->raid_disks == 0)
		return errmsg(err, errlen, -EINVAL, "no raid devices");
	sb->version = p->version;
	memcpy(sb->set_uuid, p->set_uuid, 16);
	if (device_uuid && p->version != MD_SB_0_90)
		memcpy(sb->device_uuid, device_uuid, 16);
	sb->level = p->level;
	sb->layout = p->layout;
	/* raid1 has no chunk; linear keeps its rounding (0 by default) */
	sb->chunk_sectors = create_chunk(p);
	if (level_is_chunked(p->level) && sb->chunk_sectors == 0)
		return errmsg(err, errlen, -EINVAL, "level %d needs a chunk size", p->level);
	sb->raid_disks = p->raid_disks;
	/* md stores 0 for linear/raid0: their members are used whole */
	sb->size = p->level > 0 ? p->size : 0;
	if (p->level > 0 && sb->size == 0) {
		/* no plan: as large as this member allows */
		struct md_create_params one = *p;
		int rc = md_create_plan(&one, &dev_sectors, 1, err, errlen);
		if (rc < 0)
			return rc;
		sb->size = one.size;
	}
	int rc = p->version == MD_SB_0_90
	             ? init_090(sb, p, role, dev_number, dev_sectors, err, errlen)
	             : init_1x(sb, p, role, dev_number, dev_sectors, err, errlen);
	if (rc < 0)
		return rc;
	/* mdadm starts linear/raid0 and --assume-clean arrays clean, the rest
	 * need a resync */
	md_sb_set_clean(sb, p->assume_clean || p->level <= 0, 0);
	if (p->version == MD_SB_0_90) {
		sb->v0.cp_events = 0; /* mdadm leaves the checkpoint unset */
		sb->v0.recovery_cp = 0;
	}
	return 0;
}
