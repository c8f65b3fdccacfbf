/* Decoding an md reshape in progress from a superblock (md_reshape.h), as
 * the kernel reads it (super_1_load / super_90_load, raid5's setup_conf
 * and raid5_run checks). */
#include <errno.h>
#include <string.h>

#include "meta/md_reshape.h"
#include "util/errmsg.h"

uint32_t md_reshape_data_disks(const struct md_reshape_geom *g)
{
	uint32_t par = g->level == 6 ? 2 : (g->level == 4 || g->level == 5) ? 1 : 0;
	return g->raid_disks > par ? g->raid_disks - par : 0;
}

uint64_t md_reshape_unit(const struct md_reshape *r)
{
	/* raid10's reshape_request moves at most 64 KiB at a time and never
	 * across a boundary of the smaller chunk. */
	if (r->old.level == 10) {
		uint64_t c = r->old.chunk_sectors < r->new.chunk_sectors ? r->old.chunk_sectors
		                                                         : r->new.chunk_sectors;
		return c < 128 ? c : 128;
	}
	uint64_t ch = r->old.chunk_sectors > r->new.chunk_sectors ? r->old.chunk_sectors
	                                                          : r->new.chunk_sectors;
	return ch * md_reshape_data_disks(&r->new);
}

int md_sb_reshape(const struct md_sb *sb, struct md_reshape *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	if (!(sb->feature_map & MD_FEATURE_RESHAPE_ACTIVE))
		return 0;
	r->active = true;
	r->position = sb->reshape_position;
	r->old.level = sb->level;
	r->old.layout = sb->layout;
	r->old.chunk_sectors = sb->chunk_sectors;
	r->new.level = (int32_t)sb->new_level;
	r->new.layout = sb->new_layout;
	r->new.chunk_sectors = sb->new_chunk;
	r->new.raid_disks = sb->raid_disks;
	int64_t old_n = (int64_t)sb->raid_disks - (int64_t)sb->delta_disks;
	/* super_1_validate / super_90_validate: a shrink always runs
	 * backwards; the feature bit says so only when the count stays. */
	r->backwards = sb->delta_disks < 0 ||
	               (sb->delta_disks == 0 && (sb->feature_map & MD_FEATURE_RESHAPE_BACKWARDS));
	if (sb->version != MD_SB_0_90 && (sb->feature_map & MD_FEATURE_NEW_OFFSET))
		r->offset_delta = (int32_t)sb->new_offset;
	if (old_n < 1 || old_n > MD_SB1_MAX_DEVS)
		return errmsg(err, errlen, -EINVAL,
		              "reshape from %lld members (raid_disks %u, delta_disks %d)",
		              (long long)old_n, sb->raid_disks, sb->delta_disks);
	r->old.raid_disks = (uint32_t)old_n;
	if (!r->old.chunk_sectors || !r->new.chunk_sectors)
		return errmsg(err, errlen, -EINVAL, "reshape with a zero chunk (old %u, new %u)",
		              r->old.chunk_sectors, r->new.chunk_sectors);
	if (sb->feature_map & MD_FEATURE_NEW_OFFSET && !r->offset_delta)
		return errmsg(err, errlen, -EINVAL, "data offset change (reshape) of 0 sectors");
	if (sb->feature_map & MD_FEATURE_RESHAPE_BACKWARDS && sb->version == MD_SB_0_90)
		return errmsg(err, errlen, -EINVAL, "0.90 superblock with a 1.x feature bit");
	/* raid5_run: the position lies on a boundary of the unit md moves,
	 * the larger chunk times the new data members (raid10: its steps). */
	uint64_t unit = md_reshape_unit(r);
	if (unit && r->position != UINT64_MAX && r->position % unit)
		return errmsg(err, errlen, -EINVAL,
		              "reshape position %llu is not on a stripe boundary (%llu sectors: "
		              "the larger chunk times the new data members)",
		              (unsigned long long)r->position, (unsigned long long)unit);
	return 0;
}

int md_reshape_check_device(const struct md_sb *sb, const struct md_reshape *r,
                            uint64_t dev_sectors, char *err, size_t errlen)
{
	if (!r->active || !r->offset_delta)
		return 0;
	int64_t doff = (int64_t)sb->data_offset + r->offset_delta;
	if (doff < 0)
		return errmsg(err, errlen, -EINVAL, "new data offset %lld is before the member",
		              (long long)doff);
	uint64_t nd = (uint64_t)doff;
	if (nd + sb->size > dev_sectors || nd + sb->size < nd)
		return errmsg(err, errlen, -EINVAL,
		              "new data offset %llu + %llu sectors is beyond the member (%llu)",
		              (unsigned long long)nd, (unsigned long long)sb->size,
		              (unsigned long long)dev_sectors);
	/* 1.1/1.2 keep the superblock (and bitmap/log) before the data, 1.0
	 * after it: the new area must not reach the block itself. */
	uint64_t so = sb->super_offset;
	if (so >= nd ? nd + sb->size > so : so + MD_SB_BYTES / 512 > nd)
		return errmsg(err, errlen, -EINVAL,
		              "new data area [%llu, %llu) overlaps the superblock at %llu",
		              (unsigned long long)nd, (unsigned long long)(nd + sb->size),
		              (unsigned long long)so);
	return 0;
}

void md_sb_reshape_store(struct md_sb *sb, const struct md_reshape *r)
{
	if (!r->active) {
		sb->feature_map &= ~(MD_FEATURE_RESHAPE_ACTIVE | MD_FEATURE_RESHAPE_BACKWARDS |
		                     MD_FEATURE_NEW_OFFSET);
		if (sb->version == MD_SB_0_90)
			sb->v0.minor_version = 90;
		return;
	}
	sb->level = r->old.level;
	sb->layout = r->old.layout;
	sb->chunk_sectors = r->old.chunk_sectors;
	sb->raid_disks = r->new.raid_disks;
	sb->new_level = (uint32_t)r->new.level;
	sb->new_layout = r->new.layout;
	sb->new_chunk = r->new.chunk_sectors;
	sb->delta_disks = (int32_t)r->new.raid_disks - (int32_t)r->old.raid_disks;
	sb->reshape_position = r->position;
	sb->feature_map |= MD_FEATURE_RESHAPE_ACTIVE;
	sb->feature_map &= ~(MD_FEATURE_RESHAPE_BACKWARDS | MD_FEATURE_NEW_OFFSET);
	if (sb->version == MD_SB_0_90) {
		sb->v0.minor_version = 91;
		sb->v0.reshape_position = r->position;
		sb->v0.new_level = (uint32_t)r->new.level;
		sb->v0.delta_disks = (uint32_t)sb->delta_disks;
		sb->v0.new_layout = r->new.layout;
		sb->v0.new_chunk = r->new.chunk_sectors * 512;
		return;
	}
	if (r->backwards && sb->delta_disks == 0)
		sb->feature_map |= MD_FEATURE_RESHAPE_BACKWARDS;
	if (r->offset_delta) {
		sb->feature_map |= MD_FEATURE_NEW_OFFSET;
		sb->new_offset = (uint32_t)(int32_t)r->offset_delta;
	}
}
