/* The md array class: each entry of struct eng_class is the md function of
 * the same name, called on the md array the handle is embedded in. */
#include <errno.h>

#include "engine/bitmap/bitmap.h"
#include "engine/journal/journal.h"
#include "engine/md.h"
#include "engine/ppl/ppl.h"
#include "engine/sync/sync.h"
#include "member/member.h"
#include "util/errmsg.h"

/* Membership and logs stay as they are while the data moves. */
static int busy_reshaping(struct uraid_array *h, struct member *m, char *err, size_t errlen)
{
	if (!__atomic_load_n(&eng_of(h)->rs, __ATOMIC_ACQUIRE))
		return 0;
	if (m)
		member_close(m);
	return errmsg(err, errlen, -EBUSY, "a reshape is in progress; wait for it to finish");
}

static uint64_t md_size(const struct uraid_array *h)
{
	return eng_size(eng_container_of(h, const struct eng_array, h));
}

static int md_read(struct uraid_array *h, void *buf, size_t len, uint64_t off)
{
	return eng_read(eng_of(h), buf, len, off);
}

static int md_write(struct uraid_array *h, const void *buf, size_t len, uint64_t off)
{
	return eng_write(eng_of(h), buf, len, off);
}

static int md_flush(struct uraid_array *h)
{
	return eng_flush(eng_of(h));
}

static int md_zero(struct uraid_array *h, uint64_t off, uint64_t len, unsigned flags)
{
	return eng_zero(eng_of(h), off, len, flags);
}

static bool md_discard_safe(struct uraid_array *h)
{
	return eng_discard_safe(eng_of(h));
}

static int md_stop(struct uraid_array *h)
{
	return eng_stop(eng_of(h));
}

static void md_drop(struct uraid_array *h)
{
	eng_drop(eng_of(h));
}

static int md_status(struct uraid_array *h, struct uraid_status *st)
{
	int rc = eng_status(eng_of(h), st);
	if (rc == 0) /* engine/discard.c's view, asked here: it writes through array.c */
		st->discard_safe = eng_discard_safe(eng_of(h));
	return rc;
}

static int md_io_stats(struct uraid_array *h, struct uraid_io_stats *st)
{
	return eng_io_stats(eng_of(h), st);
}

static int md_fail(struct uraid_array *h, const char *member, char *err, size_t errlen)
{
	return eng_fail(eng_of(h), member, err, errlen);
}

static int md_remove(struct uraid_array *h, const char *member, char *err, size_t errlen)
{
	return eng_remove(eng_of(h), member, err, errlen);
}

static int md_add_member(struct uraid_array *h, struct member *m, char *err, size_t errlen)
{
	int busy = busy_reshaping(h, m, err, errlen);
	if (busy)
		return busy;
	return eng_add_member(eng_of(h), m, err, errlen);
}

static int md_replace_member(struct uraid_array *h, const char *old, struct member *m, char *err,
                             size_t errlen)
{
	int busy = busy_reshaping(h, m, err, errlen);
	if (busy)
		return busy;
	return eng_replace_member(eng_of(h), old, m, err, errlen);
}

static int md_re_add_member(struct uraid_array *h, struct member *m, char *err, size_t errlen)
{
	int busy = busy_reshaping(h, m, err, errlen);
	if (busy)
		return busy;
	return eng_re_add_member(eng_of(h), m, err, errlen);
}

static int md_sync_action(struct uraid_array *h, enum uraid_sync_action act, char *err,
                          size_t errlen)
{
	return eng_sync_action(eng_of(h), act, err, errlen);
}

static int md_sync_step(struct uraid_array *h, uint64_t max_sectors)
{
	return eng_sync_step(eng_of(h), max_sectors);
}

static int md_sync_wait(struct uraid_array *h)
{
	return eng_sync_wait(eng_of(h));
}

static void md_sync_speed(struct uraid_array *h, uint64_t min_kibs, uint64_t max_kibs)
{
	eng_sync_speed(eng_of(h), min_kibs, max_kibs);
}

static int md_bitmap_add(struct uraid_array *h, uint32_t chunk_bytes, char *err, size_t errlen)
{
	int busy = busy_reshaping(h, NULL, err, errlen);
	if (busy)
		return busy;
	return eng_bitmap_add(eng_of(h), chunk_bytes, err, errlen);
}

static uint64_t md_bitmap_skipped(struct uraid_array *h, bool recovery)
{
	return eng_bitmap_skipped(eng_of(h), recovery);
}

static int md_set_stripe_cache(struct uraid_array *h, unsigned stripes)
{
	return eng_set_stripe_cache(eng_of(h), stripes);
}

static int md_journal_mode(struct uraid_array *h, enum uraid_journal_mode mode, char *err,
                           size_t errlen)
{
	int busy = busy_reshaping(h, NULL, err, errlen);
	if (busy)
		return busy;
	return eng_journal_mode(eng_of(h), mode, err, errlen);
}

static int md_journal_add_member(struct uraid_array *h, struct member *m, char *err, size_t errlen)
{
	int busy = busy_reshaping(h, m, err, errlen);
	if (busy)
		return busy;
	return eng_journal_add_member(eng_of(h), m, err, errlen);
}

static int md_consistency_policy(struct uraid_array *h, enum uraid_consistency_policy policy,
                                 char *err, size_t errlen)
{
	int busy = busy_reshaping(h, NULL, err, errlen);
	if (busy)
		return busy;
	return eng_ppl_policy(eng_of(h), policy, err, errlen);
}

static int md_locate(struct uraid_array *h, uint64_t off, uint64_t len, unsigned flags,
                     struct uraid_place *out, int max, uint64_t *piece)
{
	return eng_locate(eng_of(h), off, len, flags, out, max, piece);
}

static int md_grow(struct uraid_array *h, enum uraid_grow_what what, uint64_t value, char *err,
                   size_t errlen)
{
	return eng_grow(eng_of(h), what, value, err, errlen);
}

static int md_takeover(struct uraid_array *h, int level, uint32_t layout, int raid_disks, char *err,
                       size_t errlen)
{
	return eng_takeover(eng_of(h), level, layout, raid_disks, err, errlen);
}

static int md_grow_add_member(struct uraid_array *h, struct member *m, char *err, size_t errlen)
{
	return eng_linear_append(eng_of(h), m, err, errlen);
}

static int md_reshape_start(struct uraid_array *h, const struct uraid_reshape_opts *o, char *err,
                            size_t errlen)
{
	return eng_reshape_start(eng_of(h), o, err, errlen);
}

static int md_set_readonly(struct uraid_array *h, enum uraid_ro_mode mode, char *err, size_t errlen)
{
	return eng_set_readonly(eng_of(h), mode, err, errlen);
}

static int md_sync_freeze(struct uraid_array *h, bool frozen, char *err, size_t errlen)
{
	return eng_sync_freeze(eng_of(h), frozen, err, errlen);
}

static int md_add_member_flags(struct uraid_array *h, struct member *m, unsigned flags, char *err,
                               size_t errlen)
{
	return eng_add_member_flags(eng_of(h), m, flags, err, errlen);
}

const struct eng_class eng_md_class = {
    .name = "md",
    .size = md_size,
    .read = md_read,
    .write = md_write,
    .flush = md_flush,
    .zero = md_zero,
    .discard_safe = md_discard_safe,
    .stop = md_stop,
    .drop = md_drop,
    .status = md_status,
    .io_stats = md_io_stats,
    .fail = md_fail,
    .remove = md_remove,
    .add_member = md_add_member,
    .replace_member = md_replace_member,
    .re_add_member = md_re_add_member,
    .sync_action = md_sync_action,
    .sync_step = md_sync_step,
    .sync_wait = md_sync_wait,
    .sync_speed = md_sync_speed,
    .bitmap_add = md_bitmap_add,
    .bitmap_skipped = md_bitmap_skipped,
    .set_stripe_cache = md_set_stripe_cache,
    .journal_mode = md_journal_mode,
    .journal_add_member = md_journal_add_member,
    .consistency_policy = md_consistency_policy,
    .locate = md_locate,
    .grow = md_grow,
    .takeover = md_takeover,
    .grow_add_member = md_grow_add_member,
    .reshape_start = md_reshape_start,
    .set_readonly = md_set_readonly,
    .sync_freeze = md_sync_freeze,
    .add_member_flags = md_add_member_flags,
};
