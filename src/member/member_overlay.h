/* Copy-on-write members (member_overlay.c): a wrapper that reads the real
 * member (the base, opened read-only) and keeps every write in an overlay
 * store of its own, as a device-mapper snapshot does, so a forced assembly,
 * a resync, a repair or fsck can be tried on an array without changing a
 * byte of its members. `uraid overlay commit` writes what the overlay holds
 * to the members afterwards; discarding it drops the attempt.
 *
 * The store (a sparse file, one per member, in a directory the caller
 * trusts) holds a header naming the base (its path, size, modification time
 * and a fingerprint of its first and last MiB, where md and GEOM keep their
 * metadata), a map of the 4 KiB blocks the overlay holds, and those blocks.
 * Reads come from the store where the map says so, else from the base.
 * A block is copied (base bytes around the written ones) on its first
 * write; the map on disk changes only in a flush, after the data it claims
 * is durable, so a crash never leaves the map claiming a block that was not
 * written (a torn map page holds old and new bits, both true). Writes not
 * yet flushed may be lost in a crash, as on a disk with a volatile cache.
 *
 * Concurrency: reads and writes may come from any number of threads (the
 * engine's fast path, member_ioq batches; the wrapper has no descriptor, so
 * batches call its ops synchronously). Copy-on-write of a block is
 * serialized against other writes to it; flushes are serialized. */
#ifndef URAID_MEMBER_OVERLAY_H
#define URAID_MEMBER_OVERLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "member/member.h"

#define MEMBER_OVERLAY_BLOCK   4096u
#define MEMBER_OVERLAY_TAG_MAX 64 /* the array tag, NUL included */
#define MEMBER_OVERLAY_KEY_MAX 64 /* a member key, NUL included */
/* Overlay files in their directory end with this. */
#define MEMBER_OVERLAY_SUFFIX ".uovl"

/* Open flags. */
#define OVERLAY_RDONLY 1u /* read through an overlay; write and create nothing */

/* Bytes a store needs for a base of member_bytes. */
uint64_t member_overlay_store_bytes(uint64_t member_bytes);

/* Make `store` an empty overlay of `base`: header (base's identity, `tag`
 * naming the array, `key` naming the member in its directory), empty map.
 * Writes only to store; flushes it. */
int member_overlay_format(struct member *base, struct member *store, const char *tag,
                          const char *key, char *err, size_t errlen);

/* Stack an overlay on `base` with `store`, both then owned by the wrapper
 * (closed with it, and on failure). store may be NULL with OVERLAY_RDONLY:
 * every read passes to base. Refused (naming the problem): a store that is
 * not an overlay or is damaged, one made for another member or for another
 * array than `tag` (NULL: any), a base that changed since (size,
 * fingerprint, a file's modification time), an unfinished commit. */
int member_overlay_open_store(struct member *base, struct member *store, const char *tag,
                              unsigned flags, struct member **out, char *err, size_t errlen);

/* The overlay of `base` in the directory `dirfd` (trusted by the caller;
 * `dirpath` is its path): the file whose name ends in ".KEY.uovl", KEY being
 * `key` (the member's md device uuid, say) or, when NULL, one made from the
 * base's device and inode. Created (0600, complete before it gets its name)
 * when missing, unless OVERLAY_RDONLY. While open, the wrapper holds a lock
 * on the file (exclusive; shared when read-only) and a shared one on the
 * base, so no second array uses the overlay, `uraid overlay commit` waits
 * for the array to stop, and the member cannot be assembled writable
 * meanwhile: -EBUSY. Takes ownership of base (closed on failure too). */
int member_overlay_open(struct member *base, int dirfd, const char *dirpath, const char *tag,
                        const char *key, unsigned flags, struct member **out, char *err,
                        size_t errlen);

/* Is m an overlay wrapper; does it hold block `block` (of
 * MEMBER_OVERLAY_BLOCK bytes); how many blocks does it hold. */
bool member_is_overlay(const struct member *m);
bool member_overlay_holds(struct member *m, uint64_t block);
uint64_t member_overlay_held(struct member *m);

/* Check an overlay directory by the run directory's rule (util/
 * trusted_dir.h), creating a missing last component when asked: an O_PATH
 * descriptor and its resolved path, or a negative errno with err naming the
 * directory and the problem. */
int member_overlay_dir_open(const char *dir, bool create, char *path, size_t len, char *err,
                            size_t errlen);

/* Refuse (-EEXIST, naming a file and its array) when the directory holds
 * an overlay of another array than `tag`, or an overlay it cannot read. */
int member_overlay_dir_check(int dirfd, const char *dirpath, const char *tag, char *err,
                             size_t errlen);

#endif
