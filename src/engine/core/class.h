/* An array class: what a kind of array (md: src/engine/md_class.c; FreeBSD
 * GEOM: src/geom/class.c) does behind the public handle. The public calls
 * (src/engine/api.c) check their arguments where that needs no knowledge
 * of the class, then hand the request to the array's class; an operation
 * a class leaves NULL is refused there, with a message naming the class.
 *
 * A class embeds struct uraid_array in its own array structure and gets it
 * back with container_of; the handle itself holds only what every class
 * shares. */
#ifndef URAID_ENGINE_CORE_CLASS_H
#define URAID_ENGINE_CORE_CLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uraid.h"

struct member;

/* cls->zero from uraid_discard: a discard, not a write-zeroes; the range
 * may read back as anything afterwards where the level passes discards
 * down (linear, raid0, raid1, raid10). Above the public URAID_ZERO_* bits
 * (src/engine/api.c asserts they stay apart). */
#define ENG_ZERO_DISCARD 0x100u

/* The public handle (opaque in include/uraid.h). */
struct uraid_array {
	const struct eng_class *cls;
	/* URAID_* flags the array was assembled with: members given later
	 * (add, replace, journal) are opened the same way (O_DIRECT). */
	unsigned flags;
	/* URAID_OVERLAY (api_overlay.c): the overlay directory and the array's
	 * tag, so members given later get overlays there too. */
	char overlay_dir[URAID_OVERLAY_DIR_MAX];
	char overlay_tag[64];
};

#define eng_container_of(p, type, field) ((type *)((char *)(p)-offsetof(type, field)))

struct eng_class {
	const char *name;                              /* "md", "GEOM": messages name it */
	uint64_t (*size)(const struct uraid_array *a); /* bytes */
	int (*read)(struct uraid_array *a, void *buf, size_t len, uint64_t off);
	int (*write)(struct uraid_array *a, const void *buf, size_t len, uint64_t off);
	int (*flush)(struct uraid_array *a);
	/* uraid_write_zeroes (flags checked; uraid_discard adds
	 * ENG_ZERO_DISCARD), uraid_discard_safe. */
	int (*zero)(struct uraid_array *a, uint64_t off, uint64_t len, unsigned flags);
	bool (*discard_safe)(struct uraid_array *a);
	int (*stop)(struct uraid_array *a);  /* clean stop; frees a */
	void (*drop)(struct uraid_array *a); /* as a crash leaves it; frees a */
	int (*status)(struct uraid_array *a, struct uraid_status *st);     /* st zeroed */
	int (*io_stats)(struct uraid_array *a, struct uraid_io_stats *st); /* st zeroed */
	/* Member management; add/replace/re-add take ownership of m. */
	int (*fail)(struct uraid_array *a, const char *member, char *err, size_t errlen);
	int (*remove)(struct uraid_array *a, const char *member, char *err, size_t errlen);
	int (*add_member)(struct uraid_array *a, struct member *m, char *err, size_t errlen);
	int (*replace_member)(struct uraid_array *a, const char *old, struct member *m, char *err,
	                      size_t errlen);
	int (*re_add_member)(struct uraid_array *a, struct member *m, char *err, size_t errlen);
	/* Background work. */
	int (*sync_action)(struct uraid_array *a, enum uraid_sync_action act, char *err,
	                   size_t errlen);
	int (*sync_step)(struct uraid_array *a, uint64_t max_sectors);
	int (*sync_wait)(struct uraid_array *a);
	void (*sync_speed)(struct uraid_array *a, uint64_t min_kibs, uint64_t max_kibs);
	/* md's logs and caches (NULL elsewhere). */
	int (*bitmap_add)(struct uraid_array *a, uint32_t chunk_bytes, char *err, size_t errlen);
	uint64_t (*bitmap_skipped)(struct uraid_array *a, bool recovery);
	int (*set_stripe_cache)(struct uraid_array *a, unsigned stripes);
	int (*journal_mode)(struct uraid_array *a, enum uraid_journal_mode mode, char *err,
	                    size_t errlen);
	int (*journal_add_member)(struct uraid_array *a, struct member *m, char *err,
	                          size_t errlen);
	int (*consistency_policy)(struct uraid_array *a, enum uraid_consistency_policy policy,
	                          char *err, size_t errlen);
	/* uraid_locate, arguments checked. */
	int (*locate)(struct uraid_array *a, uint64_t off, uint64_t len, unsigned flags,
	              struct uraid_place *out, int max, uint64_t *piece);
	/* md's array_state and frozen sync_action; add with URAID_ADD_* flags. */
	int (*set_readonly)(struct uraid_array *a, enum uraid_ro_mode mode, char *err,
	                    size_t errlen);
	int (*sync_freeze)(struct uraid_array *a, bool frozen, char *err, size_t errlen);
	int (*add_member_flags)(struct uraid_array *a, struct member *m, unsigned flags, char *err,
	                        size_t errlen);
	/* The class's own verbs (GEOM: gmirror/graid3's), one request line. */
	int (*ctl)(struct uraid_array *a, const char *request, char *err, size_t errlen);
	/* uraid_grow, what checked (md: engine/grow.c). */
	int (*grow)(struct uraid_array *a, enum uraid_grow_what what, uint64_t value, char *err,
	            size_t errlen);
	int (*takeover)(struct uraid_array *a, int level, uint32_t layout, int raid_disks,
	                char *err, size_t errlen);
	int (*grow_add_member)(struct uraid_array *a, struct member *m, char *err, size_t errlen);
	/* uraid_array_reshape_start. */
	int (*reshape_start)(struct uraid_array *a, const struct uraid_reshape_opts *o, char *err,
	                     size_t errlen);
};

#endif
