/* md write-intent bitmap, on-disk format (kernel md-engine/bitmap/bitmap.h bitmap_super_s,
 * as mdadm -X reads it): a 256-byte little-endian header followed by one bit
 * per bitmap chunk, bit i at byte i/8, bit i%8 (the kernel's little-endian
 * bit order on little-endian longs).
 *
 * Header layout (byte offsets): 0 magic "bitm", 4 version, 8 uuid[16],
 * 24 events, 32 events_cleared, 40 sync_size (sectors), 48 state,
 * 52 chunksize (bytes), 56 daemon_sleep (seconds), 60 write_behind,
 * 64 sectors_reserved, 68 nodes, 72 cluster_name[64], 136..255 zero.
 */
#ifndef URAID_MD_BITMAP_H
#define URAID_MD_BITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meta/md_super.h"

#define MD_BITMAP_MAGIC     0x6d746962u
#define MD_BITMAP_SB_BYTES  256
#define MD_BITMAP_V_HOSTEND 3 /* bits in host order (little-endian here) */
#define MD_BITMAP_V_LE      4 /* what mdadm writes */
#define MD_BITMAP_V_CLUSTER 5
/* state bits (the kernel's enum bitmap_state are bit numbers) */
#define MD_BITMAP_STALE            (1u << 1)
#define MD_BITMAP_WRITE_ERROR      (1u << 2)
#define MD_BITMAP_DEFAULT_DELAY    5     /* seconds: mdadm's daemon_sleep */
#define MD_BITMAP_MAX_WRITE_BEHIND 16383 /* the kernel's COUNTER_MAX */
/* 0.90: the bitmap follows the 4 KiB superblock inside its 64 KiB area. */
#define MD_BITMAP_090_OFFSET 8
#define MD_BITMAP_090_ROOM   120

struct md_bitmap_sb {
	uint32_t magic, version;
	uint8_t uuid[16];
	uint64_t events, events_cleared;
	uint64_t sync_size; /* sectors covered (per member for striped levels) */
	uint32_t state;
	uint32_t chunksize;    /* bytes, power of two >= 512 */
	uint32_t daemon_sleep; /* seconds */
	uint32_t write_behind;
	uint32_t sectors_reserved;
	uint32_t nodes;
	char cluster_name[65]; /* NUL-terminated copy of the 64-byte field */
};

/* Decode and validate a header (len >= 256), with the kernel's refusals:
 * bad magic, unknown version, chunksize not a power of two or < 512,
 * daemon_sleep 0, write_behind too large, non-terminated names are fine
 * (the field is fixed-size) but non-zero padding is not checked (the kernel
 * ignores it). -EINVAL with a message naming the field. */
int md_bitmap_decode(const void *buf, size_t len, struct md_bitmap_sb *out, char *err,
                     size_t errlen);
/* Encode into 256 bytes (padding zeroed). */
void md_bitmap_encode(const struct md_bitmap_sb *sb, void *buf);

/* Bits (chunks) the bitmap has: sync_size sectors in chunksize pieces. */
uint64_t md_bitmap_bits(const struct md_bitmap_sb *sb);
/* Bytes the bit area takes on disk, rounded up to whole 512-byte sectors
 * after the header (as the kernel reads it). */
uint64_t md_bitmap_bytes(const struct md_bitmap_sb *sb);

/* md_bitmap_resize with chunksize 0 (an array resized or a raid10 reshaped
 * to `blocks` sectors of bits): the chunk (bytes) stays while header + bits
 * fit `space_sectors`, else it doubles until they fit (never past 2^30). */
uint32_t md_bitmap_resize_chunk(uint32_t chunk_bytes, uint64_t blocks, uint64_t space_sectors);
/* The bits of the resized bitmap: new bit j is set when an old set bit's
 * chunk overlaps j's chunk below both ends, and (mark_new) for every new
 * chunk reaching past old_blocks (the sectors the old bits stood for:
 * what md's resize marks needing sync, here on disk too, so a resync
 * narrowed by the bitmap still covers it). `nbits` bits written, bytes
 * after them untouched. */
void md_bitmap_resize_bits(const uint8_t *old, uint64_t old_nbits, uint64_t old_chunk_sectors,
                           uint64_t old_blocks, uint8_t *nbm, uint64_t nbits,
                           uint64_t chunk_sectors, bool mark_new);

bool md_bitmap_test(const uint8_t *bits, uint64_t bit);
void md_bitmap_assign(uint8_t *bits, uint64_t bit, bool dirty);
uint64_t md_bitmap_count(const uint8_t *bits, uint64_t nbits);

/* mdadm 4.2's chunk for `size_sectors` (per-member sync size) given the
 * sectors reserved for the bitmap (`room`, header included): the smallest
 * power-of-two chunk >= 4 KiB whose bits fit, and with no chunk requested
 * (requested == 0) at least 64 MiB and at most 128 KiB of bitmap considered.
 * Returns 0 when a requested chunk is too small for the room or there is no
 * room at all. */
uint32_t md_bitmap_choose_chunk(uint64_t size_sectors, uint64_t room_sectors, uint32_t requested);

/* Where mdadm 4.2 puts an internal bitmap when it creates a 1.x array with
 * --bitmap=internal, and which chunk it picks:
 *   room: mdadm's choose_bm_space(size): 0 below 64 sectors, 8 sectors (4 KiB)
 *     up to 8 GiB, 128 (64 KiB) above, 256 (128 KiB) from 200 GiB on;
 *   1.1/1.2: bitmap_offset +8 (4 KiB after the superblock), bad-block log
 *     after the bitmap space;
 *   1.0: the bitmap sits before the superblock, 4 KiB-aligned, with 8
 *     sectors of bad-block log below it: bitmap_offset = -(bitmap sectors
 *     rounded to 4 KiB) - 8.
 * The superblock gets MD_FEATURE_BITMAP_OFFSET (1); mdadm writes the first
 * bitmap with every bit set (the first assembly resyncs everything) and
 * the header's events 0. minor: 0, 1 or 2. Returns 0, -ENOSPC when there is
 * no room, -EINVAL for a requested chunk too small for the room. */
struct md_bitmap_plan {
	int32_t bitmap_offset; /* sectors from the superblock */
	uint32_t chunksize;    /* bytes */
	uint64_t room;         /* sectors available for header + bits */
	uint64_t bits;
};
unsigned long md_bitmap_bm_space(uint64_t dev_sectors);
int md_bitmap_plan_1x(int minor, uint64_t size_sectors, uint32_t requested_chunk,
                      struct md_bitmap_plan *out);

/* Where mdadm 4.2 puts an internal bitmap it adds to an existing array
 * (mdadm --grow --bitmap=internal, bitmap location free to choose), from
 * one member's superblock:
 *   0.90: always 8 sectors after the superblock, at most 60 KiB;
 *   1.0: room = super_offset - data_offset - data_size, less the bad-block
 *     log (at least 8 sectors); the bitmap sits right below the log,
 *     4 KiB-aligned: offset -(bitmap 4 KiB blocks * 8) - log sectors. With
 *     under 6 sectors of room and max_dev <= 384 mdadm falls back to 1 KiB
 *     after the superblock (offset 2, 3 KiB of room);
 *   1.1/1.2: 8 sectors after the superblock, up to the bad-block log (or
 *     8 sectors below the data when there is none).
 * bits_sectors: the sectors the bits stand for (mdadm: per-member size, or
 * for raid10 size * raid_disks / copies). Returns 0, -ENOSPC (no room),
 * -EINVAL (requested chunk too small for the room). */
int md_bitmap_plan_add(const struct md_sb *sb, uint64_t bits_sectors, uint32_t requested_chunk,
                       struct md_bitmap_plan *out);
/* 0.90 (create or add, the same rule). */
int md_bitmap_plan_090(uint64_t bits_sectors, uint32_t requested_chunk, struct md_bitmap_plan *out);

/* The 16 uuid bytes a bitmap header of this array carries: the kernel
 * copies mddev->uuid, which is the superblock's raw uuid bytes (for 0.90
 * four little-endian words; md_sb keeps them big-endian for printing). */
void md_bitmap_uuid(const struct md_sb *sb, uint8_t out[16]);

/* The kernel's placement rule (md-engine/bitmap/bitmap.c write_sb_page): a bitmap of
 * `bytes` (header included) at `offset` sectors from this member's
 * superblock must not run into the data (data_offset + used_sectors) nor,
 * below the superblock, into the superblock; 0.90 keeps it inside the
 * 64 KiB reserved area. -ENOSPC with the reason in err otherwise. */
int md_bitmap_check_place(const struct md_sb *sb, int32_t offset, uint64_t used_sectors,
                          uint64_t bytes, char *err, size_t errlen);

#endif
