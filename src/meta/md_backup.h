/* mdadm's backup of a reshape's critical section (mdadm Grow.c: struct
 * mdp_backup_super, "md_backup_data-1" / "-2"): a 512-byte superblock
 * saying which array sectors the file (or a spare's tail) holds, written
 * before the reshape overwrites them and read back by mdadm's Grow_restart
 * (mdadm --assemble --backup-file). Pure codec, little-endian fields:
 *
 *   0 magic[16]  16 set_uuid[16]  32 mtime  40 devstart  48 arraystart
 *  56 length  64 sb_csum (u32)  68 pad  72 devstart2  80 arraystart2
 *  88 length2  96 sb_csum2 (u32)  100..511 zero
 *
 * All positions in 512-byte sectors: devstart is where the data lies in
 * the backup (a file: sector 8, the superblock at byte 0), arraystart and
 * length the array sectors it holds; "-2" adds a second section at
 * devstart + devstart2. The checksums are mdadm's bsb_csum, which (as
 * mdadm computes it, and so as every mdadm checks it) folds the first byte
 * of the block once per byte counted: csum = csum * 8 + (signed char)buf[0]. */
#ifndef URAID_MD_BACKUP_H
#define URAID_MD_BACKUP_H

#include <stddef.h>
#include <stdint.h>

#include "meta/md_super.h"

#define MD_BACKUP_SB_BYTES 512
/* A backup file as mdadm makes it: the superblock at byte 0, the data at
 * sector 8 (reshape_open_backup_file's offset 8 * 512), the file blocks + 8
 * sectors long. */
#define MD_BACKUP_FILE_DATA 8

struct md_backup_sb {
	int version;          /* 1 or 2 ("md_backup_data-1" / "-2") */
	uint8_t set_uuid[16]; /* as mdadm's uuid_from_super gives it (md_backup_uuid) */
	uint64_t mtime;       /* seconds since the epoch */
	uint64_t devstart, arraystart, length;
	uint64_t devstart2, arraystart2, length2; /* version 2 only */
};

/* mdadm's bsb_csum over the first len bytes of buf. */
uint32_t md_backup_csum(const uint8_t *buf, size_t len);

/* The 512 bytes mdadm writes for b (checksums computed, padding zero). */
void md_backup_encode(const struct md_backup_sb *b, uint8_t out[MD_BACKUP_SB_BYTES]);

/* Decode and check as Grow_restart does: the magic, the checksum (and the
 * second one for "-2"), sections that do not wrap around; -EINVAL with a
 * message naming what is wrong, -ENOENT when the magic is not there. */
int md_backup_decode(const uint8_t in[MD_BACKUP_SB_BYTES], struct md_backup_sb *b, char *err,
                     size_t errlen);

/* The array uuid as mdadm puts it in the backup: 1.x the 16 bytes as on
 * disk; 0.90 the four host-order (little-endian) words, uuid words 1-3
 * zero below minor version 90 (uuid_from_super0). */
void md_backup_uuid(const struct md_sb *sb, uint8_t out[16]);

/* mdadm's compute_backup_blocks: the smallest number of array sectors that
 * is a whole number of old stripes and of new ones. */
uint64_t md_backup_blocks(uint32_t old_chunk, uint32_t old_data, uint32_t new_chunk,
                          uint32_t new_data);

#endif
