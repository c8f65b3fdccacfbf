/* md superblocks: 0.90 and 1.0/1.1/1.2, decoded into one host-order struct
 * and encoded back bit-exactly. Byte order is explicit (little-endian on
 * disk for 1.x; host order — little on x86 — for 0.90); nothing casts disk
 * buffers to host structs.
 */
#ifndef URAID_MD_SUPER_H
#define URAID_MD_SUPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "member/member.h"

#define MD_SB_MAGIC 0xa92b4efcu
#define MD_SB1_MAX_DEVS 1920 /* (4096 - 256) / 2 */
#define MD_SB0_MAX_DEVS 27

/* Roles in dev_roles[] (1.x). Values below 0xff00 are the slot. */
#define MD_ROLE_SPARE 0xffffu
#define MD_ROLE_FAULTY 0xfffeu
#define MD_ROLE_JOURNAL 0xfffdu

/* feature_map bits (1.x). */
#define MD_FEATURE_BITMAP_OFFSET 1u
#define MD_FEATURE_RECOVERY_OFFSET 2u
#define MD_FEATURE_RESHAPE_ACTIVE 4u
#define MD_FEATURE_BAD_BLOCKS 8u
#define MD_FEATURE_REPLACEMENT 16u
#define MD_FEATURE_RESHAPE_BACKWARDS 32u
#define MD_FEATURE_NEW_OFFSET 64u
#define MD_FEATURE_RECOVERY_BITMAP 128u
#define MD_FEATURE_CLUSTERED 256u
#define MD_FEATURE_JOURNAL 512u
#define MD_FEATURE_PPL 1024u
#define MD_FEATURE_MULTIPLE_PPLS 2048u
#define MD_FEATURE_RAID0_LAYOUT 4096u

#define MD_RESYNC_NONE UINT64_MAX /* resync_offset when clean */

enum md_sb_version { MD_SB_0_90 = 0, MD_SB_1_0 = 10, MD_SB_1_1 = 11, MD_SB_1_2 = 12 };

/* 0.90 per-disk descriptor (mdp_disk_t). */
struct md_sb0_disk {
	uint32_t number, major, minor, raid_disk, state;
};

struct md_sb {
	enum md_sb_version version;
	uint32_t feature_map;
	uint8_t set_uuid[16];
	char set_name[33];            /* NUL-terminated (1.x) */
	uint64_t ctime, utime;        /* 1.x raw fields (low 40 bits seconds) */
	int32_t level;
	uint32_t layout;
	uint64_t size;                /* sectors of each member used by the array */
	uint32_t chunk_sectors;
	uint32_t raid_disks;
	int32_t bitmap_offset;        /* sectors from the superblock (signed) */
	/* reshape (only meaningful with MD_FEATURE_RESHAPE_ACTIVE) */
	uint32_t new_level;
	uint64_t reshape_position;
	int32_t delta_disks;
	uint32_t new_layout, new_chunk, new_offset;
	uint64_t data_offset, data_size, super_offset; /* sectors */
	uint64_t recovery_offset;     /* sectors; journal_tail for journal devices */
	uint32_t dev_number;
	uint32_t cnt_corrected_read;
	uint8_t device_uuid[16];
	uint8_t devflags;
	uint8_t bblog_shift;
	uint16_t bblog_size;
	uint32_t bblog_offset;
	uint64_t events;
	uint64_t resync_offset;       /* MD_RESYNC_NONE when clean */
	uint32_t sb_csum;             /* as read (decode) / as written (encode) */
	uint32_t max_dev;
	uint16_t dev_roles[MD_SB1_MAX_DEVS];
	/* 0.90 only */
	struct {
		uint32_t minor_version, patch_version, gvalid_words, md_minor, not_persistent;
		uint32_t nr_disks, active_disks, working_disks, failed_disks, spare_disks;
		uint32_t state; /* bit 0 clean, 1 errors */
		uint32_t level_size_kib;
		struct md_sb0_disk disks[MD_SB0_MAX_DEVS];
		struct md_sb0_disk this_disk;
	} v0;
};

/* Where the superblock of `version` sits on a member of dev_sectors sectors,
 * in sectors; -ENOSPC when the member is too small. */
int64_t md_sb_location(enum md_sb_version version, uint64_t dev_sectors);

/* Decode a 4096-byte superblock buffer. Validates magic, version, checksum,
 * max_dev bounds; -EINVAL with a message otherwise. Does not judge features
 * (see md_sb_check_features) or sizes against the device (md_sb_check_device). */
int md_sb_decode(enum md_sb_version version, const uint8_t *buf, size_t len, struct md_sb *sb,
                 char *err, size_t errlen);
/* Encode into a 4096-byte buffer, computing the checksum. */
int md_sb_encode(const struct md_sb *sb, uint8_t *buf, size_t len);
uint32_t md_sb_checksum(enum md_sb_version version, const uint8_t *buf);

/* Refuse feature bits uraid does not implement, naming them. */
int md_sb_check_features(const struct md_sb *sb, char *err, size_t errlen);
/* Sizes and offsets fit inside a member of dev_sectors sectors. */
int md_sb_check_device(const struct md_sb *sb, uint64_t dev_sectors, char *err, size_t errlen);

/* This member's role: slot >= 0, or -1 spare, -2 faulty, -3 journal. */
int md_sb_role(const struct md_sb *sb);
/* Is the array clean (resync_offset / 0.90 state)? */
bool md_sb_clean(const struct md_sb *sb);

/* Probe a member for any md superblock (1.2, 1.1, 1.0, 0.90 in that order
 * of preference); -ENOENT when there is none. */
int md_sb_load(struct member *m, struct md_sb *sb, char *err, size_t errlen);
/* Write the superblock to its location on the member. */
int md_sb_store(struct member *m, const struct md_sb *sb);

/* Creation defaults, as mdadm 4.2 chooses them. */
struct md_create_params {
	enum md_sb_version version;   /* default 1.2 */
	int level;
	uint32_t layout;
	uint32_t chunk_sectors;       /* default 1024 (512 KiB) for striped levels */
	uint32_t raid_disks;
	char name[33];
	char homehost[65];
	uint8_t set_uuid[16];         /* caller fills (random) */
	uint64_t size;                /* sectors per member, 0 = as large as the smallest allows */
	bool assume_clean;
	uint64_t ctime;               /* seconds */
};
/* Fill sb for the member in `role` (or -1 for spare) of the given size.
 * data_offset follows mdadm's rule for the version. */
int md_sb_init(struct md_sb *sb, const struct md_create_params *p, int role,
               uint32_t dev_number, const uint8_t device_uuid[16], uint64_t dev_sectors,
               char *err, size_t errlen);

/* "fc:..." style formatting as mdadm prints UUIDs ("xxxxxxxx:xxxxxxxx:..."). */
void md_uuid_format(const uint8_t uuid[16], char out[36]);

#endif
