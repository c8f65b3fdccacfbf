/* The overlay file format and what the overlay's files share
 * (member_overlay.c: the wrapper; member_overlay_file.c: header, identity,
 * the directory; member_overlay_dir.c: status, commit, discard).
 *
 * Store layout (little-endian):
 *   [0, 4096)          header: magic "URAIDOVL", version 1, block size,
 *                      member size, map offset/size, data offset, the
 *                      base's identity (kind, dev, ino, rdev, modification
 *                      time, fingerprint), creation time, array tag, member
 *                      key, base path; MD5 of [0, 3056) at 3056. Written
 *                      once, before the file gets its name.
 *   [3584, 4096)       commit sector, one 512-byte sector written alone:
 *                      "URAIDCMT", state (1: a commit is writing the base),
 *                      MD5 of the 16 bytes before it. Zeros: no commit.
 *   [4096, data_off)   the map: bit b (byte b / 8, bit b % 8) set when the
 *                      overlay holds block b; whole 4 KiB pages.
 *   [data_off, ...)    block b at data_off + b * 4096 (sparse). */
#ifndef URAID_MEMBER_OVERLAY_INT_H
#define URAID_MEMBER_OVERLAY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "member/member_int.h"
#include "member/member_overlay.h"

#define OVL_MAGIC         "URAIDOVL"
#define OVL_VERSION       1u
#define OVL_HDR_BYTES     4096u
#define OVL_PAGE          4096u /* map page: the unit the map is written in */
#define OVL_PATH_MAX      2800  /* the base's path, NUL included */
#define OVL_HDR_SUM_OFF   3056u
#define OVL_COMMIT_OFF    3584u
#define OVL_COMMIT_MAGIC  "URAIDCMT"
#define OVL_FINGERPRINT   (1u << 20) /* bytes hashed at each end of the base */
#define OVL_KIND_OTHER    0u         /* no descriptor (memory, a wrapper) */
#define OVL_KIND_FILE     1u
#define OVL_KIND_BLOCKDEV 2u

/* What makes a base the member an overlay was made of. */
struct ovl_identity {
	uint32_t kind;
	uint64_t dev, ino, rdev;
	uint64_t mtime_sec, mtime_nsec; /* regular files only (else 0) */
	uint64_t size;
	uint8_t fingerprint[16]; /* MD5 of its first and last OVL_FINGERPRINT bytes */
	char path[OVL_PATH_MAX]; /* absolute when it could be resolved */
};

struct ovl_header {
	uint32_t version, block_bytes;
	uint64_t map_off, map_bytes, data_off;
	uint64_t created; /* unix seconds */
	char tag[MEMBER_OVERLAY_TAG_MAX];
	char key[MEMBER_OVERLAY_KEY_MAX];
	struct ovl_identity id; /* id.size: the member's size */
};

/* Blocks of a member, bytes of its map. */
uint64_t ovl_blocks(uint64_t member_bytes);
uint64_t ovl_map_bytes(uint64_t member_bytes);

/* The base's identity (fstat through its descriptor when it has one, the
 * fingerprint read through its ops). */
int ovl_identity_of(struct member *base, struct ovl_identity *id, char *err, size_t errlen);
/* 0 when `now` is still the member `h` was made of; else -ESTALE with why
 * naming the difference. Without `content`, size and kind only (a commit
 * that was interrupted changed the rest itself). */
int ovl_identity_check(const struct ovl_header *h, const struct ovl_identity *now, bool content,
                       char *why, size_t len);
/* The key of a base without one given: device and inode (files), device
 * number (block devices), else its name made safe. */
void ovl_default_key(const struct ovl_identity *id, const char *name, char *key, size_t len);

/* The header of a store: 0, -ENOENT (no header: not an overlay), -EINVAL
 * (damaged, with err saying what). *committing: a commit was interrupted. */
int ovl_header_read(struct member *store, struct ovl_header *h, bool *committing, char *err,
                    size_t errlen);
/* Write the commit sector (durable when it returns). */
int ovl_commit_mark(struct member *store, bool committing);
/* Read the store's map into words (bits past the member's blocks cleared);
 * *held: bits set. */
int ovl_map_load(struct member *store, const struct ovl_header *h, uint64_t *words, size_t nwords,
                 uint64_t *held);

/* flock the descriptor without waiting: -EBUSY when someone holds it. */
int ovl_flock(int fd, bool shared);
/* The descriptor of a member, or -1. */
int ovl_member_fd(struct member *m);

/* Overlay files of a directory: each name ending in MEMBER_OVERLAY_SUFFIX
 * that does not start with '.' (files being made). fn returns non-zero to
 * stop (returned). */
int ovl_scan(int dirfd, int (*fn)(const char *name, void *ctx), void *ctx);
/* The file whose name ends in ".KEY.uovl": 0 and name filled, -ENOENT,
 * -EEXIST when several do. */
int ovl_find(int dirfd, const char *key, char *name, size_t len);
/* Open an overlay file of the directory as a member (read-only or not),
 * after checking it is a regular file of the caller's that nobody else may
 * write and that the name was not swapped between the check and the open. */
int ovl_store_open(int dirfd, const char *dirpath, const char *name, bool rdonly,
                   struct member **out, char *err, size_t errlen);
/* Create the overlay file of `base` in the directory (formatted, synced,
 * then renamed into place); fills its name. */
int ovl_store_create(int dirfd, const char *dirpath, struct member *base, const char *tag,
                     const char *key, char *name, size_t len, char *err, size_t errlen);

#endif
