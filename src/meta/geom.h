/* FreeBSD GEOM metadata: gmirror (g_mirror_metadata v4) and graid3
 * (g_raid3_metadata v5). Each lives in the last sector of its component,
 * little-endian, packed, followed by an MD5 of the bytes before it. Field
 * offsets are in docs and /work/shared/reference/FORMATS.md. */
#ifndef URAID_GEOM_META_H
#define URAID_GEOM_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct member;

#define GEOM_MIRROR_MAGIC   "GEOM::MIRROR"
#define GEOM_MIRROR_VERSION 4
#define GEOM_MIRROR_MD_LEN  135 /* 119 bytes of fields + 16 of MD5 */
#define GEOM_RAID3_MAGIC    "GEOM::RAID3"
#define GEOM_RAID3_VERSION  5
#define GEOM_RAID3_MD_LEN   128 /* 112 + 16 */

/* gmirror balance ids as stored in md_balance. */
enum geom_balance {
	GEOM_BALANCE_NONE = 0,
	GEOM_BALANCE_ROUND_ROBIN = 1,
	GEOM_BALANCE_LOAD = 2,
	GEOM_BALANCE_SPLIT = 3,
	GEOM_BALANCE_PREFER = 4,
};

/* gmirror per-disk flags (md_dflags) and device flags (md_mflags). */
#define GEOM_MIRROR_DISK_DIRTY         0x01ull
#define GEOM_MIRROR_DISK_SYNCHRONIZING 0x02ull
#define GEOM_MIRROR_DISK_FORCE_SYNC    0x04ull
#define GEOM_MIRROR_DISK_INACTIVE      0x08ull
#define GEOM_MIRROR_DISK_HARDCODED     0x10ull
#define GEOM_MIRROR_DISK_BROKEN        0x20ull
#define GEOM_MIRROR_DISK_CANDELETE     0x40ull
#define GEOM_MIRROR_DEV_NOAUTOSYNC     0x01ull
#define GEOM_MIRROR_DEV_NOFAILSYNC     0x02ull

/* graid3 flags. */
#define GEOM_RAID3_DISK_DIRTY         0x01ull
#define GEOM_RAID3_DISK_SYNCHRONIZING 0x02ull
#define GEOM_RAID3_DISK_FORCE_SYNC    0x04ull
#define GEOM_RAID3_DISK_HARDCODED     0x08ull
#define GEOM_RAID3_DISK_BROKEN        0x10ull
#define GEOM_RAID3_DEV_NOAUTOSYNC     0x01ull
#define GEOM_RAID3_DEV_ROUND_ROBIN    0x02ull
#define GEOM_RAID3_DEV_VERIFY         0x04ull
#define GEOM_RAID3_DEV_NOFAILSYNC     0x08ull

struct geom_mirror_md {
	uint32_t version;
	char name[17]; /* 16 on disk; NUL added */
	uint32_t mid;  /* mirror id, same on every disk */
	uint32_t did;  /* this disk's id */
	uint8_t all;   /* number of disks */
	uint32_t genid;
	uint32_t syncid;
	uint8_t priority;
	uint32_t slice; /* split balance: requests above this many bytes are split */
	uint8_t balance;
	uint64_t mediasize; /* mirror provider size, bytes */
	uint32_t sectorsize;
	uint64_t sync_offset; /* bytes already synchronized onto this disk */
	uint64_t mflags, dflags;
	char provider[17]; /* hardcoded provider name, "" when not hardcoded */
	uint64_t provsize; /* size of this component */
};

struct geom_raid3_md {
	uint32_t version;
	char name[17];
	uint32_t id;  /* device id */
	uint16_t no;  /* this component's number; all - 1 is parity */
	uint16_t all; /* number of components */
	uint32_t genid;
	uint32_t syncid;
	uint64_t mediasize;   /* provider size, bytes */
	uint32_t sectorsize;  /* provider sector = component sector * (all - 1) */
	uint64_t sync_offset; /* component bytes already rebuilt */
	uint64_t mflags, dflags;
	char provider[17];
	uint64_t provsize; /* size of this component */
};

/* Decode a sector (len >= the metadata length). Refuses wrong magic, a
 * version other than the one written here, a bad MD5, and field values no
 * gmirror/graid3 would write (with a message naming the field): -EINVAL, or
 * -ENOENT when the magic is absent (no metadata at all). */
int geom_mirror_decode(const uint8_t *sec, size_t len, struct geom_mirror_md *md, char *err,
                       size_t errlen);
int geom_raid3_decode(const uint8_t *sec, size_t len, struct geom_raid3_md *md, char *err,
                      size_t errlen);
/* Encode into out[0..len): fields, MD5, zeros for the rest. len must be at
 * least the metadata length (-EINVAL otherwise). md->version is ignored:
 * the current version is always written. */
int geom_mirror_encode(const struct geom_mirror_md *md, uint8_t *out, size_t len);
int geom_raid3_encode(const struct geom_raid3_md *md, uint8_t *out, size_t len);

/* Metadata sector location: the last logical block of the member. */
uint64_t geom_md_offset(const struct member *m);
/* Read/write the metadata sector of a member. Read returns -ENOENT when
 * the member carries no metadata of that class. */
int geom_mirror_read(struct member *m, struct geom_mirror_md *md, char *err, size_t errlen);
int geom_mirror_write(struct member *m, const struct geom_mirror_md *md, char *err, size_t errlen);
int geom_raid3_read(struct member *m, struct geom_raid3_md *md, char *err, size_t errlen);
int geom_raid3_write(struct member *m, const struct geom_raid3_md *md, char *err, size_t errlen);
/* Zero the metadata sector (gmirror/graid3 clear). */
int geom_clear(struct member *m, char *err, size_t errlen);

/* Balance names as gmirror(8) spells them; NULL for unknown ids. */
const char *geom_balance_name(int balance);
/* -EINVAL for an unknown name. */
int geom_balance_parse(const char *name);

#endif
