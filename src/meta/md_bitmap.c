/* md write-intent bitmap header codec and bit helpers (see md_bitmap.h). */
#include "meta/md_bitmap.h"

#include <errno.h>
#include <string.h>

#include "util/endian.h"
#include "util/errmsg.h"

#define SECTORS_MAX (1ull << 62)

int md_bitmap_decode(const void *buf, size_t len, struct md_bitmap_sb *out, char *err,
                     size_t errlen)
{
	const uint8_t *p = buf;
	if (!buf || !out)
		return errmsg(err, errlen, -EINVAL, "bitmap: no buffer");
	if (len < MD_BITMAP_SB_BYTES)
		return errmsg(err, errlen, -EINVAL, "bitmap: header needs %d bytes, have %zu",
		              MD_BITMAP_SB_BYTES, len);
	memset(out, 0, sizeof(*out));
	out->magic = get_le32(p + 0);
	out->version = get_le32(p + 4);
	memcpy(out->uuid, p + 8, 16);
	out->events = get_le64(p + 24);
	out->events_cleared = get_le64(p + 32);
	out->sync_size = get_le64(p + 40);
	out->state = get_le32(p + 48);
	out->chunksize = get_le32(p + 52);
	out->daemon_sleep = get_le32(p + 56);
	out->write_behind = get_le32(p + 60);
	out->sectors_reserved = get_le32(p + 64);
	out->nodes = get_le32(p + 68);
	/* The name is a string: whatever follows its terminator is not kept. */
	size_t nl = strnlen((const char *)p + 72, 64);
	memcpy(out->cluster_name, p + 72, nl);

	if (out->magic != MD_BITMAP_MAGIC)
		return errmsg(err, errlen, -EINVAL, "bitmap: bad magic %#x (want %#x)", out->magic,
		              MD_BITMAP_MAGIC);
	if (out->version < MD_BITMAP_V_HOSTEND || out->version > MD_BITMAP_V_CLUSTER)
		return errmsg(err, errlen, -EINVAL, "bitmap: unknown version %u", out->version);
	if (out->chunksize < 512 || (out->chunksize & (out->chunksize - 1)))
		return errmsg(err, errlen, -EINVAL,
		              "bitmap: chunksize %u is not a power of two of at least 512",
		              out->chunksize);
	if (out->daemon_sleep == 0)
		return errmsg(err, errlen, -EINVAL, "bitmap: daemon_sleep 0 is out of range");
	if (out->write_behind > MD_BITMAP_MAX_WRITE_BEHIND)
		return errmsg(err, errlen, -EINVAL,
		              "bitmap: write_behind %u is out of range (max %d)", out->write_behind,
		              MD_BITMAP_MAX_WRITE_BEHIND);
	if (out->sync_size > UINT64_MAX / 512)
		return errmsg(err, errlen, -EINVAL, "bitmap: sync_size %llu sectors is absurd",
		              (unsigned long long)out->sync_size);
	return 0;
}

void md_bitmap_encode(const struct md_bitmap_sb *sb, void *buf)
{
	uint8_t *p = buf;
	memset(p, 0, MD_BITMAP_SB_BYTES);
	put_le32(p + 0, sb->magic);
	put_le32(p + 4, sb->version);
	memcpy(p + 8, sb->uuid, 16);
	put_le64(p + 24, sb->events);
	put_le64(p + 32, sb->events_cleared);
	put_le64(p + 40, sb->sync_size);
	put_le32(p + 48, sb->state);
	put_le32(p + 52, sb->chunksize);
	put_le32(p + 56, sb->daemon_sleep);
	put_le32(p + 60, sb->write_behind);
	put_le32(p + 64, sb->sectors_reserved);
	put_le32(p + 68, sb->nodes);
	memcpy(p + 72, sb->cluster_name, strnlen(sb->cluster_name, 64));
}

uint64_t md_bitmap_bits(const struct md_bitmap_sb *sb)
{
	if (sb->chunksize < 512)
		return 0;
	uint64_t per = sb->chunksize / 512;
	return sb->sync_size / per + (sb->sync_size % per != 0);
}

uint64_t md_bitmap_bytes(const struct md_bitmap_sb *sb)
{
	uint64_t b = (md_bitmap_bits(sb) + 7) / 8;
	return (b + MD_BITMAP_SB_BYTES + 511) / 512 * 512 - MD_BITMAP_SB_BYTES;
}

uint32_t md_bitmap_resize_chunk(uint32_t chunk_bytes, uint64_t blocks, uint64_t space_sectors)
{
	uint64_t chunk = chunk_bytes;
	for (;;) {
		uint64_t per = chunk / 512;
		uint64_t bytes = MD_BITMAP_SB_BYTES + ((blocks + per - 1) / per + 7) / 8;
		/* md stops doubling below the 32-bit header field's top bit */
		if (bytes <= space_sectors * 512 || chunk >= (1ull << 30))
			return (uint32_t)chunk;
		chunk *= 2;
	}
}

void md_bitmap_resize_bits(const uint8_t *old, uint64_t old_nbits, uint64_t old_chunk_sectors,
                           uint64_t old_blocks, uint8_t *nbm, uint64_t nbits,
                           uint64_t chunk_sectors, bool mark_new)
{
	/* Walk the common range in steps that end at the next boundary of
	 * either chunk size, as md's copy loop does. */
	uint64_t end = old_nbits * old_chunk_sectors, nend = nbits * chunk_sectors;
	if (nend < end)
		end = nend;
	for (uint64_t j = 0; j < nbits; j++)
		md_bitmap_assign(nbm, j, false);
	for (uint64_t s = 0; s < end;) {
		uint64_t i = s / old_chunk_sectors, j = s / chunk_sectors;
		uint64_t next_old = (i + 1) * old_chunk_sectors, next_new = (j + 1) * chunk_sectors;
		if (md_bitmap_test(old, i)) {
			md_bitmap_assign(nbm, j, true);
			s = next_old < next_new ? next_old : next_new;
		} else {
			s = next_old;
		}
	}
	if (!mark_new)
		return;
	for (uint64_t j = old_blocks / chunk_sectors; j < nbits; j++)
		md_bitmap_assign(nbm, j, true);
}

bool md_bitmap_test(const uint8_t *bits, uint64_t bit)
{
	return (bits[bit / 8] >> (bit % 8)) & 1;
}

void md_bitmap_assign(uint8_t *bits, uint64_t bit, bool dirty)
{
	uint8_t m = (uint8_t)(1u << (bit % 8));
	if (dirty)
		bits[bit / 8] |= m;
	else
		bits[bit / 8] &= (uint8_t)~m;
}

uint64_t md_bitmap_count(const uint8_t *bits, uint64_t nbits)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < nbits / 8; i++)
		n += (uint64_t)__builtin_popcount(bits[i]);
	for (uint64_t i = nbits / 8 * 8; i < nbits; i++)
		n += md_bitmap_test(bits, i);
	return n;
}

uint32_t md_bitmap_choose_chunk(uint64_t size_sectors, uint64_t room_sectors, uint32_t requested)
{
	/* Without a requested chunk mdadm considers at most 128 KiB of bitmap. */
	if (!requested && room_sectors > 256)
		room_sectors = 256;
	if (room_sectors <= 1)
		return 0;
	uint64_t max_bits = (room_sectors * 512 - MD_BITMAP_SB_BYTES) * 8;
	uint64_t chunk = 4096; /* the kernel cannot do sub-page chunks */
	uint64_t bits = size_sectors * 512 / chunk + 1;
	while (bits > max_bits) {
		chunk *= 2;
		bits = (bits + 1) / 2;
	}
	if (!requested)
		return chunk < (64u << 20) ? (64u << 20)
		                           : (chunk > UINT32_MAX ? 0 : (uint32_t)chunk);
	return requested < chunk ? 0 : requested;
}

unsigned long md_bitmap_bm_space(uint64_t dev_sectors)
{
	/* Sizes stay multiples of 4 KiB for 4K-sector devices. */
	if (dev_sectors < 128)
		return 0;
	if (dev_sectors - 128 >= 200ull * 1024 * 1024 * 2)
		return 256;
	if (dev_sectors - 8 > 8ull * 1024 * 1024 * 2)
		return 128;
	return 8;
}

int md_bitmap_plan_1x(int minor, uint64_t size_sectors, uint32_t requested_chunk,
                      struct md_bitmap_plan *out)
{
	if (!out || minor < 0 || minor > 2)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	uint64_t room = md_bitmap_bm_space(size_sectors);
	if (room <= 1)
		return -ENOSPC;
	uint32_t chunk = md_bitmap_choose_chunk(size_sectors, room, requested_chunk);
	if (!chunk)
		return requested_chunk ? -EINVAL : -ENOSPC;
	out->chunksize = chunk;
	out->room = room;
	out->bits = size_sectors / (chunk / 512) + (size_sectors % (chunk / 512) != 0);
	if (minor == 0) {
		/* mdadm's estimate (one bit more than whole chunks) decides the
		 * 4 KiB blocks reserved below the superblock. */
		uint64_t est = size_sectors * 512 / chunk + 1;
		uint64_t blocks = ((est + 7) / 8 + MD_BITMAP_SB_BYTES + 4095) / 4096;
		out->bitmap_offset = -(int32_t)(blocks * 8) - 8;
	} else {
		out->bitmap_offset = 8;
	}
	return 0;
}

/* 4 KiB blocks mdadm reserves for header + bits below a 1.0 superblock; it
 * estimates one bit more than whole chunks. */
static uint64_t below_sb_sectors(uint64_t bits_sectors, uint32_t chunk)
{
	uint64_t est = bits_sectors * 512 / chunk + 1;
	return ((est + 7) / 8 + MD_BITMAP_SB_BYTES + 4095) / 4096 * 8;
}

static void plan_fill(struct md_bitmap_plan *out, uint64_t bits_sectors, uint32_t chunk,
                      uint64_t room, int32_t offset)
{
	uint64_t per = chunk / 512;
	out->chunksize = chunk;
	out->room = room;
	out->bits = bits_sectors / per + (bits_sectors % per != 0);
	out->bitmap_offset = offset;
}

int md_bitmap_plan_090(uint64_t bits_sectors, uint32_t requested_chunk, struct md_bitmap_plan *out)
{
	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	uint32_t chunk = md_bitmap_choose_chunk(bits_sectors, MD_BITMAP_090_ROOM, requested_chunk);
	if (!chunk)
		return requested_chunk ? -EINVAL : -ENOSPC;
	plan_fill(out, bits_sectors, chunk, MD_BITMAP_090_ROOM, MD_BITMAP_090_OFFSET);
	return 0;
}

int md_bitmap_plan_add(const struct md_sb *sb, uint64_t bits_sectors, uint32_t requested_chunk,
                       struct md_bitmap_plan *out)
{
	if (!sb || !out)
		return -EINVAL;
	if (sb->version == MD_SB_0_90)
		return md_bitmap_plan_090(bits_sectors, requested_chunk, out);
	memset(out, 0, sizeof(*out));
	/* No device has 2^62 sectors: refusing such fields keeps the signed
	 * arithmetic below from overflowing on a corrupt superblock. */
	if (sb->super_offset > SECTORS_MAX || sb->data_offset > SECTORS_MAX ||
	    sb->data_size > SECTORS_MAX || bits_sectors > SECTORS_MAX)
		return -ENOSPC;
	int64_t room, bbl;
	int32_t fixed_offset = 0; /* 0: below the superblock, sized to the bits */
	if (sb->version == MD_SB_1_0) {
		room =
		    (int64_t)sb->super_offset - (int64_t)sb->data_offset - (int64_t)sb->data_size;
		bbl = sb->bblog_size < 8 ? 8 : sb->bblog_size;
		int64_t bbl_off = (int32_t)sb->bblog_offset;
		if (bbl < -bbl_off)
			bbl = -bbl_off;
		if (room < 6 && sb->max_dev <= 384) {
			/* no room below: 3 KiB right after a 1 KiB superblock */
			room = 6;
			fixed_offset = 2;
			bbl = 0;
		}
	} else {
		room = (int64_t)sb->data_offset - (int64_t)sb->super_offset;
		bbl = sb->bblog_size;
		if (bbl)
			room = (int64_t)(int32_t)sb->bblog_offset + bbl;
		else
			bbl = 8;
		room -= 8; /* the superblock's 4 KiB */
		fixed_offset = 8;
	}
	room -= bbl;
	if (room <= 1)
		return -ENOSPC;
	uint32_t chunk = md_bitmap_choose_chunk(bits_sectors, (uint64_t)room, requested_chunk);
	if (!chunk)
		return requested_chunk ? -EINVAL : -ENOSPC;
	int32_t offset = fixed_offset;
	if (!fixed_offset) {
		uint64_t below = below_sb_sectors(bits_sectors, chunk);
		int64_t off =
		    -(int64_t)(below > (uint64_t)INT32_MAX ? (uint64_t)INT32_MAX : below) - bbl;
		if (off < INT32_MIN)
			return -ENOSPC; /* the superblock's field is 32 bits */
		offset = (int32_t)off;
	}
	plan_fill(out, bits_sectors, chunk, (uint64_t)room, offset);
	return 0;
}

void md_bitmap_uuid(const struct md_sb *sb, uint8_t out[16])
{
	memcpy(out, sb->set_uuid, 16);
	if (sb->version != MD_SB_0_90)
		return;
	for (int w = 0; w < 4; w++)
		for (int i = 0; i < 4; i++)
			out[4 * w + i] = sb->set_uuid[4 * w + 3 - i];
}

int md_bitmap_check_place(const struct md_sb *sb, int32_t offset, uint64_t used_sectors,
                          uint64_t bytes, char *err, size_t errlen)
{
	if (sb->super_offset > SECTORS_MAX || sb->data_offset > SECTORS_MAX ||
	    used_sectors > SECTORS_MAX || bytes > SECTORS_MAX)
		return errmsg(err, errlen, -ENOSPC, "superblock offsets or sizes out of range");
	int64_t so = (int64_t)sb->super_offset;
	int64_t start = so + offset;
	int64_t end = start + (int64_t)((bytes + 511) / 512);
	int64_t data_end = (int64_t)(sb->data_offset + used_sectors);
	if (sb->version == MD_SB_0_90) {
		if (offset != MD_BITMAP_090_OFFSET || bytes > (uint64_t)MD_BITMAP_090_ROOM * 512)
			return errmsg(err, errlen, -ENOSPC,
			              "bitmap of %llu bytes does not fit the 60 KiB after a 0.90 "
			              "superblock",
			              (unsigned long long)bytes);
		return 0;
	}
	if (start < 0)
		return errmsg(err, errlen, -ENOSPC, "bitmap at %d sectors starts before the member",
		              offset);
	if (offset < 0) {
		/* DATA BITMAP SUPERBLOCK */
		if (end > so)
			return errmsg(err, errlen, -ENOSPC,
			              "bitmap at %d sectors (%llu bytes) runs into the superblock",
			              offset, (unsigned long long)bytes);
		if (data_end > start)
			return errmsg(err, errlen, -ENOSPC,
			              "bitmap at %d sectors overlaps the data, which ends %lld "
			              "sectors below the superblock",
			              offset, (long long)(so - data_end));
	} else if (so < (int64_t)sb->data_offset && end > (int64_t)sb->data_offset) {
		/* SUPERBLOCK BITMAP DATA */
		return errmsg(err, errlen, -ENOSPC,
		              "bitmap at %d sectors (%llu bytes) runs into the data at sector %llu",
		              offset, (unsigned long long)bytes,
		              (unsigned long long)sb->data_offset);
	}
	return 0;
}
