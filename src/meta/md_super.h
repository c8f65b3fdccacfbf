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

#define MD_SB_MAGIC     0xa92b4efcu
#define MD_SB1_MAX_DEVS 1920 /* (4096 - 256) / 2 */
#define MD_SB0_MAX_DEVS 27

/* Roles in dev_roles[] (1.x). Values below 0xff00 are the slot. */
#define MD_ROLE_SPARE   0xffffu
#define MD_ROLE_FAULTY  0xfffeu
#define MD_ROLE_JOURNAL 0xfffdu

/* feature_map bits (1.x). */
#define MD_FEATURE_BITMAP_OFFSET     1u
#define MD_FEATURE_RECOVERY_OFFSET   2u
#define MD_FEATURE_RESHAPE_ACTIVE    4u
#define MD_FEATURE_BAD_BLOCKS        8u
#define MD_FEATURE_REPLACEMENT       16u
#define MD_FEATURE_RESHAPE_BACKWARDS 32u
#define MD_FEATURE_NEW_OFFSET        64u
#define MD_FEATURE_RECOVERY_BITMAP   128u
#define MD_FEATURE_CLUSTERED         256u
#define MD_FEATURE_JOURNAL           512u
#define MD_FEATURE_PPL               1024u
#define MD_FEATURE_MULTIPLE_PPLS     2048u
#define MD_FEATURE_RAID0_LAYOUT      4096u

#define MD_RESYNC_NONE UINT64_MAX /* resync_offset when clean */

enum md_sb_version { MD_SB_0_90 = 0, MD_SB_1_0 = 10, MD_SB_1_1 = 11, MD_SB_1_2 = 12 };

/* 0.90 per-disk descriptor (mdp_disk_t). */
struct md_sb0_disk {
	uint32_t number, major, minor, raid_disk, state;
};

struct md_sb {
	enum md_sb_version version;
	uint32_t feature_map;
	uint8_t set_uuid[16];  /* 0.90: the four words big-endian, so md_uuid_format
	                          prints them as mdadm does */
	char set_name[33];     /* 1.x: the 32 raw bytes (NUL-padded) + a NUL */
	uint64_t ctime, utime; /* 1.x raw fields (low 40 bits seconds); 0.90 seconds */
	int32_t level;
	uint32_t layout;
	uint64_t size; /* sectors of each member used by the array */
	uint32_t chunk_sectors;
	uint32_t raid_disks;
	int32_t bitmap_offset; /* sectors from the superblock (signed); with PPL the
	                          same 4 bytes hold ppl offset (s16) and size (u16) */
	/* reshape (only meaningful with MD_FEATURE_RESHAPE_ACTIVE) */
	uint32_t new_level;
	uint64_t reshape_position;
	int32_t delta_disks;
	uint32_t new_layout, new_chunk, new_offset;
	uint64_t data_offset, data_size, super_offset; /* sectors; 0.90: decode leaves
	                                 super_offset/data_size 0, md_sb_load fills them */
	uint64_t recovery_offset; /* sectors; journal_tail for journal devices */
	uint32_t dev_number;
	uint32_t cnt_corrected_read;
	uint8_t device_uuid[16];
	uint8_t devflags;
	uint8_t bblog_shift;
	uint16_t bblog_size;
	uint32_t bblog_offset; /* signed on disk (1.0 puts the log before the sb) */
	uint64_t events;
	uint64_t resync_offset; /* MD_RESYNC_NONE when clean; 0.90: derived from
	                           state/recovery_cp as the kernel does (md_sb_set_clean
	                           updates both) */
	uint32_t sb_csum;       /* as read (decode) / as written (encode) */
	uint32_t max_dev;
	/* All 1920 slots of the 4 KiB block as read; only [0, max_dev) are roles
	 * (and covered by the checksum). Kept so encode(decode(b)) == b. */
	uint16_t dev_roles[MD_SB1_MAX_DEVS];
	/* 1.x reserved bytes, kept as read (md writes zeros). */
	uint32_t pad0;
	uint8_t pad3[32];
	/* 0.90 only */
	struct {
		uint32_t minor_version, patch_version, gvalid_words, md_minor, not_persistent;
		uint32_t nr_disks, active_disks, working_disks, failed_disks, spare_disks;
		uint32_t state;          /* bit 0 clean, 1 errors, 8 bitmap present */
		uint32_t level_size_kib; /* informational: encode writes size / 2 */
		uint64_t cp_events;      /* checkpoint events (kernel copies events here) */
		uint32_t recovery_cp;    /* resync checkpoint, 0xffffffff when clean */
		/* reshape (minor_version 91) */
		uint64_t reshape_position;
		uint32_t new_level, delta_disks, new_layout, new_chunk;
		uint32_t root_pv, root_block;
		struct md_sb0_disk disks[MD_SB0_MAX_DEVS];
		struct md_sb0_disk this_disk;
	} v0;
};

/* Where the superblock of `version` sits on a member of dev_sectors sectors,
 * in sectors; -ENOSPC when the member is too small. */
int64_t md_sb_location(enum md_sb_version version, uint64_t dev_sectors);

/* Decode a 4096-byte superblock buffer. Validates magic (-ENOENT when it is
 * not there), major version, checksum, max_dev and raid_disks bounds,
 * dev_number inside the role table, 1.1/1.2 super_offset (0/8); -EINVAL with a
 * message otherwise. Does not judge features (see md_sb_check_features) or
 * sizes against the device (md_sb_check_device). For 1.x every byte of the
 * block is kept, so encode(decode(b)) == b; 0.90 drops reserved words (the
 * kernel writes them as zero). 0.90 leaves super_offset/data_size 0 (the
 * block does not record its place; md_sb_load fills them). */
int md_sb_decode(enum md_sb_version version, const uint8_t *buf, size_t len, struct md_sb *sb,
                 char *err, size_t errlen);
/* Encode into a 4096-byte buffer, computing the checksum. -EINVAL when a
 * field does not fit the version (0.90: odd size, size >= 4 TiB, times or
 * chunk beyond 32 bits). */
int md_sb_encode(const struct md_sb *sb, uint8_t *buf, size_t len);
uint32_t md_sb_checksum(enum md_sb_version version, const uint8_t *buf);

/* Refuse feature bits uraid does not implement, naming them. */
int md_sb_check_features(const struct md_sb *sb, char *err, size_t errlen);
/* Sizes and offsets fit inside a member of dev_sectors sectors: super_offset
 * is where this version belongs on such a member, the data area is inside the
 * member and clear of the superblock, size <= data_size. */
int md_sb_check_device(const struct md_sb *sb, uint64_t dev_sectors, char *err, size_t errlen);

/* This member's role: slot >= 0, or -1 spare, -2 faulty, -3 journal. 1.x:
 * dev_roles[dev_number] (not dev_number itself); the slot is returned as
 * recorded, callers compare it with raid_disks. 0.90: this_disk. */
int md_sb_role(const struct md_sb *sb);
/* A 0.90 member a reshape (minor 91) fills: active without the sync bit
 * (md's super_90_sync; 0.90 has no recovery_offset, the filled rows follow
 * reshape_position). md_sb_role gives its slot. */
bool md_sb0_filling(const struct md_sb *sb);
/* Is the array clean (resync_offset / 0.90 state)? */
bool md_sb_clean(const struct md_sb *sb);

/* Probe a member for any md superblock (1.2, 1.1, 1.0, 0.90), each decoded
 * and checked against the member size. Several valid ones (a member re-used
 * with another version): the newest creation time wins, ties in that order.
 * -ENOENT when there is none, else the first corrupt one's error. */
int md_sb_load(struct member *m, struct md_sb *sb, char *err, size_t errlen);
/* Write the superblock to its location on the member: md_sb_bytes() of it
 * (rounded up to the member's logical block, the rest of that block kept),
 * with MEMBER_FUA. -EROFS on read-only members, -EINVAL when a 1.x
 * super_offset does not match the member. */
int md_sb_store(struct member *m, const struct md_sb *sb);

/* Creation defaults, as mdadm 4.2 chooses them. */
struct md_create_params {
	enum md_sb_version version; /* default 1.2 */
	int level;
	uint32_t layout;
	uint32_t chunk_sectors; /* default 1024 (512 KiB) for striped levels */
	uint32_t raid_disks;
	char name[33];
	char homehost[65];
	uint8_t set_uuid[16]; /* caller fills (random) */
	uint64_t size;        /* sectors per member, 0 = as large as the smallest allows */
	bool assume_clean;
	uint64_t ctime; /* seconds */
	/* Added for uraid (mdadm computes these once for the whole array; see
	 * md_create_plan, which fills them from all member sizes): */
	uint32_t spare_disks; /* members beyond raid_disks (roles table) */
	uint64_t data_offset; /* 1.1/1.2: sectors, 0 = mdadm's default for this member */
	bool raid0_layout;    /* set MD_FEATURE_RAID0_LAYOUT (multi-zone raid0) */
	/* Consistency policy ppl (raid5, 1.x): mdadm's 1 MiB PPL area in place
	 * of the bitmap room, MD_FEATURE_PPL (meta/md_ppl.h). */
	bool ppl;
};
/* Fill sb for the member in `role` (or -1 for spare) of the given size.
 * data_offset follows mdadm's rule for the version. The role table says
 * device i has role i for i < raid_disks, then spare_disks spares; then
 * dev_roles[dev_number] = role. events 0 (1.x) / 1 (0.90) as mdadm writes;
 * clean (MD_RESYNC_NONE) with assume_clean or for linear/raid0. Never adds
 * a bitmap (mdadm --bitmap=none). */
int md_sb_init(struct md_sb *sb, const struct md_create_params *p, int role, uint32_t dev_number,
               const uint8_t device_uuid[16], uint64_t dev_sectors, char *err, size_t errlen);

/* "fc:..." style formatting as mdadm prints UUIDs ("xxxxxxxx:xxxxxxxx:..."). */
void md_uuid_format(const uint8_t uuid[16], char out[36]);

/* ---- additions (meta helper) ------------------------------------------ */

#define MD_SB_BYTES             4096u /* the block every version's superblock lives in */
#define MD_SB0_RESERVED_SECTORS 128   /* 0.90: last 64 KiB-aligned 64 KiB */

/* 0.90 per-disk state bits (md_sb0_disk.state) */
#define MD_DISK_FAULTY      0
#define MD_DISK_ACTIVE      1
#define MD_DISK_SYNC        2
#define MD_DISK_REMOVED     3
#define MD_DISK_WRITEMOSTLY 9
#define MD_DISK_FAILFAST    10
/* 0.90 array state bits (v0.state) */
#define MD_SB0_CLEAN          0
#define MD_SB0_ERRORS         1
#define MD_SB0_BITMAP_PRESENT 8

/* "0.90", "1.0", "1.1", "1.2"; parse also accepts "0", "1", "default" (1.2). */
const char *md_sb_version_name(enum md_sb_version v);
int md_sb_version_parse(const char *s, enum md_sb_version *v);

/* Bytes of the block md itself writes: 1.x 256 + 2*max_dev rounded up to 512,
 * 0.90 the whole 4096. md_sb_store writes exactly these. */
size_t md_sb_bytes(const struct md_sb *sb);

/* Mark clean (resync_offset = MD_RESYNC_NONE) or dirty from resync_offset,
 * in the version's own fields (0.90: state bit + recovery_cp). */
void md_sb_set_clean(struct md_sb *sb, bool clean, uint64_t resync_offset);

/* Load one specific version; -ENOENT (no magic there), -EINVAL (corrupt)
 * or -ENOSPC (member too small), with a message. Includes md_sb_check_device. */
int md_sb_load_version(struct member *m, enum md_sb_version v, struct md_sb *sb, char *err,
                       size_t errlen);

/* 1.x name matches "homehost:..." / 0.90 uuid words 2..3 are sha1(homehost),
 * i.e. mdadm's "(local to host X)". */
bool md_sb_local_to_host(const struct md_sb *sb, const char *homehost);

/* mdadm 4.2 data offset (sectors) for a member of dev_sectors with chunk
 * chunk_sectors (0 for raid1/linear): 0.90/1.0 give 0. */
uint64_t md_sb_default_data_offset(enum md_sb_version v, uint64_t dev_sectors,
                                   uint32_t chunk_sectors);
/* Sectors of a member mdadm offers to the array ("freesize") given the data
 * offset; 0 when the member cannot hold the metadata. */
uint64_t md_sb_usable_sectors(enum md_sb_version v, uint64_t dev_sectors, uint64_t data_offset);

/* Whole-array decisions mdadm takes at create time from all member sizes
 * (dev_sectors[0..n-1], first member first): data_offset from the first
 * member, size = the smallest usable size rounded to the chunk (raid1: to
 * 64 KiB; linear/raid0: 0, as md stores it), raid0_layout for multi-zone
 * raid0. Refuses members too small for the metadata. */
int md_create_plan(struct md_create_params *p, const uint64_t *dev_sectors, unsigned n, char *err,
                   size_t errlen);

/* Role table entry: role >= 0 slot, -1 spare, -2 faulty, -3 journal. */
int md_sb_set_role(struct md_sb *sb, uint32_t dev_number, int role);

#endif
