/* md's Partial Parity Log (drivers/md/raid5-ppl.c, mdadm --consistency-policy=ppl):
 * the on-disk format, bit-compatible with Linux md. Pure encode / decode /
 * checksum and the placement rules of mdadm and the kernel; no I/O.
 *
 * Every member of a raid5 array keeps its own log in its metadata area, at
 * ppl.offset sectors from its superblock, ppl.size sectors long (the two
 * 16-bit halves of the superblock's bitmap_offset word, feature bit
 * MD_FEATURE_PPL, or MD_FEATURE_MULTIPLE_PPLS when the area holds several
 * logs one after the other). A write to a stripe is logged on the stripe's
 * parity member. One log write (an "I/O unit") is a 4 KiB header followed
 * by the partial parity of its entries, in entry order:
 *
 *   header (little-endian): reserved[512] (0xff) | signature u32 |
 *     padding u32 (0) | generation u64 | entries_count u32 | checksum u32 |
 *     entries[148] (zero beyond entries_count)
 *   entry: data_sector u64 | pp_size u32 | data_size u32 | parity_disk u32 |
 *     checksum u32                                        (24 bytes)
 *
 * data_sector is the array sector of the first modified data (512-byte
 * units for md's own metadata), data_size the bytes of data the entry
 * covers, pp_size the bytes of its partial parity (the XOR of the stripe's
 * data chunks the write leaves alone; 0 for a write to every data chunk),
 * parity_disk the raid disk holding the stripe's parity. Checksums are
 * ~crc32c(~0, bytes) in the kernel's crc32c_le convention: the header over
 * its 4096 bytes with the checksum field zero, an entry over its partial
 * parity, the signature over the array uuid.
 */
#ifndef URAID_MD_PPL_H
#define URAID_MD_PPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meta/md_super.h"

#define MD_PPL_HEADER_SIZE    4096u
#define MD_PPL_HEADER_SECTORS 8u
#define MD_PPL_RESERVED       512u
#define MD_PPL_ENTRY_BYTES    24u
#define MD_PPL_MAX_ENTRIES    148 /* (4096 - 512 - 4 * 4 - 8) / 24 */
/* Partial parity of one I/O unit when the area holds several logs (the
 * kernel's PPL_SPACE_SIZE), and the area size from which it does. */
#define MD_PPL_SPACE_SIZE        (128u * 1024)
#define MD_PPL_MULTI_MIN_SECTORS (2 * (MD_PPL_SPACE_SIZE + MD_PPL_HEADER_SIZE) / 512)
/* The area mdadm reserves for 1.x metadata (MULTIPLE_PPL_AREA_SIZE_SUPER1). */
#define MD_PPL_AREA_SECTORS 2048u
/* md keeps one flush bit per member (an unsigned long): at most 64. */
#define MD_PPL_MAX_DISKS 64

struct md_ppl_entry {
	uint64_t data_sector;
	uint32_t pp_size, data_size;
	uint32_t parity_disk;
	uint32_t checksum;
};

struct md_ppl_header {
	uint32_t signature;
	uint32_t padding; /* as read; encode writes 0 */
	uint64_t generation;
	uint32_t entries_count;
	uint32_t checksum; /* as read (decode) / as written (encode) */
	struct md_ppl_entry entries[MD_PPL_MAX_ENTRIES];
};

/* crc32c_le(~0, bytes) inverted: every PPL checksum and the signature. */
uint32_t md_ppl_checksum(const void *buf, size_t len);
uint32_t md_ppl_signature(const uint8_t uuid[16]);

/* An empty header (no entries). */
void md_ppl_init(struct md_ppl_header *h, uint32_t signature, uint64_t generation);
/* Encode into a 4096-byte buffer, computing the checksum (stored in h). */
void md_ppl_encode(struct md_ppl_header *h, uint8_t *buf);
/* Decode a 4096-byte header: -EILSEQ when its checksum does not match (a
 * torn write, or no header: md ends the log there), -EINVAL with a message
 * when the checksum holds but entries_count is impossible. The signature
 * is not judged here (the caller knows the array). */
int md_ppl_decode(const uint8_t *buf, struct md_ppl_header *h, char *err, size_t errlen);

/* The stripe rows an entry describes, as md's recovery reads it
 * (ppl_recover_entry): array sectors [first, last) of data index 0 and,
 * each one chunk further, of data_disks - 1 more data chunks; row i of the
 * entry is sector first + i of the first chunk, rows [0, strip_sectors). */
struct md_ppl_extent {
	uint64_t first, last;
	uint32_t data_disks, strip_sectors;
};
/* The geometry an entry must fit: chunk, data members, array size, and the
 * room the log has for partial parity. */
struct md_ppl_limits {
	uint32_t chunk_sectors;
	uint32_t data_disks;
	uint64_t array_sectors;
};
/* The extent of e; -EINVAL with a message naming the field when md could
 * not have written e for this geometry: sizes not in whole sectors, no
 * data, more partial parity than a chunk, sizes that do not divide, rows
 * leaving the chunk or the entry leaving its stripe or the array. */
int md_ppl_entry_extent(const struct md_ppl_entry *e, const struct md_ppl_limits *l,
                        struct md_ppl_extent *x, char *err, size_t errlen);

/* The PPL area from the superblock word (offset in sectors from the
 * superblock, signed; size in sectors). */
static inline int16_t md_ppl_offset(const struct md_sb *sb)
{
	return (int16_t)(uint16_t)((uint32_t)sb->bitmap_offset & 0xffff);
}
static inline uint16_t md_ppl_size(const struct md_sb *sb)
{
	return (uint16_t)((uint32_t)sb->bitmap_offset >> 16);
}
static inline void md_ppl_set_area(struct md_sb *sb, int16_t offset, uint16_t size)
{
	sb->bitmap_offset = (int32_t)((uint32_t)(uint16_t)offset | (uint32_t)size << 16);
}
static inline bool md_ppl_enabled(const struct md_sb *sb)
{
	return sb->version != MD_SB_0_90 &&
	       (sb->feature_map & (MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS));
}

/* The kernel's ppl_validate_rdev for a member of dev_sectors sectors: the
 * area holds the header and at least one 4 KiB of partial parity, overlaps
 * neither the data nor the superblock; *usable gets the size the kernel
 * works with (partial parity room rounded down to 4 KiB, plus the header).
 * -ENOSPC / -EINVAL with md's words otherwise. */
int md_ppl_check_area(const struct md_sb *sb, uint64_t dev_sectors, uint16_t *usable, char *err,
                      size_t errlen);
/* Does a log of `sectors` hold several I/O units (the kernel's
 * use_multippl), and how much partial parity fits one of them. */
bool md_ppl_multi(uint32_t sectors);
uint32_t md_ppl_unit_space(uint32_t sectors);
/* mdadm --grow --consistency-policy=ppl (super1's update "ppl"): where the
 * log goes on a member whose superblock is sb: between the superblock and
 * the bad block log or the data (1.1/1.2), between the data and the bad
 * block log (1.0); 1 MiB when there is room, else what the chunk needs.
 * -ENOSPC ("Not enough space to add ppl") when it cannot hold one. */
int md_ppl_place_grow(const struct md_sb *sb, int16_t *offset, uint16_t *size, char *err,
                      size_t errlen);

#endif
