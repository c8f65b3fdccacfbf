/* md's raid5-cache journal ("write journal", mdadm --write-journal): the
 * on-disk format of the log, bit-compatible with Linux md. Pure encode /
 * decode / checksum, no I/O.
 *
 * The log lives in the journal member's data area (data_offset onwards),
 * a ring of 4 KiB blocks. Each I/O unit is one meta block followed by the
 * 4 KiB pages its payloads describe, in payload order:
 *
 *   meta block (little-endian): magic u32 | checksum u32 | version u8 |
 *     zero u8 | zero u16 | meta_size u32 | seq u64 | position u64 |
 *     payloads...                                     (header: 32 bytes)
 *   data/parity payload: type u16 | flags u16 | size u32 (sectors) |
 *     location u64 | checksum u32 x (size / 8)        (16 + 4n bytes)
 *   flush payload: type u16 | flags u16 | size u32 (bytes) | stripe u64 x
 *     (size / 8)                                      (8 + size bytes)
 *
 * A data payload is one page of array data at array sector `location`; a
 * parity payload is P (and Q for raid6, size 16) of the 4 KiB stripe row at
 * member sector `location` (relative to data_offset). The meta block
 * checksum is crc32c over the whole 4 KiB block with the checksum field
 * zero; page checksums are crc32c over each page. Both are seeded with
 * crc32c(~0, array uuid) and use the kernel's crc32c_le convention (no
 * final inversion). `position` is the block's own sector in the ring and
 * `seq` increases by one per meta block; the journal member's superblock
 * (recovery_offset, "journal_tail") names where recovery starts.
 */
#ifndef URAID_MD_JOURNAL_H
#define URAID_MD_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MDJ_MAGIC         0x6433c509u
#define MDJ_VERSION       1
#define MDJ_BLOCK         4096u
#define MDJ_BLOCK_SECTORS 8u
#define MDJ_HDR_BYTES     32u

enum mdj_type { MDJ_DATA = 0, MDJ_PARITY = 1, MDJ_FLUSH = 2 };

/* Upper bound of payloads in one meta block: (4096 - 32) / 20. */
#define MDJ_MAX_PAYLOADS 203

/* One payload. Flush payloads are kept one stripe per entry (`location`);
 * a kernel flush payload listing several stripes decodes into several
 * entries (and so encodes back as several payloads). */
struct mdj_payload {
	uint16_t type, flags;
	uint32_t sectors;   /* data/parity: 8, or 16 for P+Q */
	uint64_t location;  /* array sector (data), member sector (parity), stripe (flush) */
	uint32_t csum[2];   /* page checksums, sectors / 8 of them */
	uint32_t log_pages; /* pages following the meta block it owns */
};

struct mdj_meta {
	uint64_t seq;
	uint64_t position; /* sectors in the ring */
	uint32_t meta_size;
	uint32_t checksum; /* as read (decode) / as written (encode) */
	int npay;
	struct mdj_payload pay[MDJ_MAX_PAYLOADS];
};

/* crc32c (Castagnoli) register update without pre/post inversion, as the
 * kernel's crc32c_le(seed, buf, len). SSE4.2 when the CPU has it. */
uint32_t md_crc32c(uint32_t crc, const void *buf, size_t len);
/* The seed of every journal checksum: crc32c_le(~0, uuid, 16). */
uint32_t mdj_uuid_seed(const uint8_t uuid[16]);

/* Start an empty meta block (no payloads). */
void mdj_init(struct mdj_meta *m, uint64_t seq, uint64_t position);
/* Bytes the meta block uses so far. */
uint32_t mdj_meta_bytes(const struct mdj_meta *m);
/* Append payloads; -ENOSPC when the meta block has no room left. */
int mdj_add_data(struct mdj_meta *m, uint64_t array_sector, uint32_t csum);
int mdj_add_parity(struct mdj_meta *m, uint64_t member_sector, uint32_t csum_p, uint32_t csum_q,
                   bool has_q);
int mdj_add_flush(struct mdj_meta *m, uint64_t stripe_sector);
/* Pages (4 KiB) that follow the meta block. */
uint32_t mdj_pages(const struct mdj_meta *m);

/* Encode into a 4096-byte block, computing meta_size and the checksum. */
void mdj_encode(const struct mdj_meta *m, uint32_t seed, uint8_t *block);
/* Decode and validate a 4096-byte block: -ENOENT when magic or version is
 * not there, -EILSEQ on a checksum mismatch, -EINVAL (with a message) when
 * meta_size or a payload is malformed. Checks nothing about seq/position
 * (the caller knows what it expects). */
int mdj_decode(const uint8_t *block, uint32_t seed, struct mdj_meta *m, char *err, size_t errlen);

#endif
