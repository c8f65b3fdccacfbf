/* The public array calls of include/uraid.h. Each checks what needs no
 * knowledge of the array's class, then hands the request to the class
 * (core/class.h): md (md_class.c) or FreeBSD GEOM (geom/class.c). Assembly
 * tries the classes in turn: GEOM when no member carries an md superblock
 * and one carries GEOM metadata, md otherwise. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/api_int.h"
#include "engine/md.h"
#include "geom/class.h"
#include "member/member.h"
#include "util/errmsg.h"

/* One bit each: flags defined in different sections of uraid.h once
 * shared a value, and an assembly then did what another flag asked. */
_Static_assert((URAID_RDONLY ^ URAID_NO_SYNC_THREAD ^ URAID_DIRECT ^ URAID_FORCE ^ URAID_CREATED ^
                URAID_UPDATE_NO_BBL ^ URAID_UPDATE_FORCE_NO_BBL ^ URAID_OVERLAY ^ URAID_FROZEN) ==
                   (URAID_RDONLY | URAID_NO_SYNC_THREAD | URAID_DIRECT | URAID_FORCE |
                    URAID_CREATED | URAID_UPDATE_NO_BBL | URAID_UPDATE_FORCE_NO_BBL |
                    URAID_OVERLAY | URAID_FROZEN),
               "two assemble flags share a bit");

static void close_all(struct member **mm, int n)
{
	for (int i = 0; i < n; i++)
		if (mm[i])
			member_close(mm[i]);
}

/* Open a member file named by a caller; the message names the path. */
static int open_path(const char *path, unsigned mf, struct member **m, char *err, size_t errlen)
{
	char e[256];
	int rc = member_open_file(path, mf, 0, m, e, sizeof(e));
	if (rc < 0)
		return strstr(e, path) ? errmsg(err, errlen, rc, "%s", e)
		                       : errmsg(err, errlen, rc, "%s: %s", path, e);
	return 0;
}

/* A member given to a running array is opened the way its members were
 * (through an overlay too: nothing may reach it directly). */
static int open_for(const struct uraid_array *a, const char *path, struct member **m, char *err,
                    size_t errlen)
{
	if (a->flags & URAID_RDONLY)
		return errmsg(err, errlen, -EROFS, "array is read-only");
	if (a->flags & URAID_OVERLAY)
		return eng_open_overlay_for(a, path, m, err, errlen);
	return open_path(path, (a->flags & URAID_DIRECT) ? MEMBER_DIRECT : 0, m, err, errlen);
}

/* An operation the array's class does not have. */
static int unsupported(const struct uraid_array *a, const char *what, char *err, size_t errlen)
{
	return errmsg(err, errlen, -EOPNOTSUPP, "%s arrays have no %s", a->cls->name, what);
}

int uraid_assemble_members(struct member **mm, int n, unsigned flags, struct uraid_array **out,
                           char *err, size_t errlen, char *warn, size_t warnlen)
{
	*out = NULL;
	if (warn && warnlen)
		warn[0] = 0;
	if (n >= 1 && n <= ENG_MAX_MEMBERS && geom_class_probe(mm, n))
		return geom_class_assemble(mm, n, flags, out, err, errlen, warn, warnlen);
	struct eng_array *a;
	int rc = eng_assemble(mm, n, flags, &a, err, errlen, warn, warnlen);
	if (rc == 0)
		*out = &a->h;
	return rc;
}

int uraid_assemble(const char *const *paths, int n, unsigned flags, struct uraid_array **out,
                   char *err, size_t errlen, char *warn, size_t warnlen)
{
	*out = NULL;
	if (warn && warnlen)
		warn[0] = 0;
	if (n < 1 || n > ENG_MAX_MEMBERS)
		return errmsg(err, errlen, -EINVAL, "need 1 to %d members, got %d", ENG_MAX_MEMBERS,
		              n);
	struct member **mm = calloc((size_t)n, sizeof(*mm));
	if (!mm)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	unsigned mf = (flags & URAID_RDONLY) ? MEMBER_RDONLY : 0;
	if (flags & URAID_DIRECT)
		mf |= MEMBER_DIRECT;
	for (int i = 0; i < n; i++) {
		int rc = 0;
		for (int j = 0; j < i && rc == 0; j++)
			if (!strcmp(paths[i], paths[j]))
				rc = errmsg(err, errlen, -EINVAL, "%s given twice", paths[i]);
		if (rc == 0)
			rc = open_path(paths[i], mf, &mm[i], err, errlen);
		if (rc == -ENOENT || rc == -EACCES)
			/* mdadm's select_devices */
			errmsg(err, errlen, rc,
			       "cannot open device %s: %s\n%s has no superblock - assembly aborted",
			       paths[i], strerror(-rc), paths[i]);
		if (rc < 0) {
			close_all(mm, n);
			free(mm);
			return rc;
		}
	}
	int rc = uraid_assemble_members(mm, n, flags, out, err, errlen, warn, warnlen);
	free(mm);
	return rc;
}

int uraid_create_members(const struct uraid_create_opts *o, struct member **mm, int n,
                         unsigned flags, struct uraid_array **out, char *err, size_t errlen)
{
	struct eng_array *a;
	int rc = eng_create_members(o, mm, n, flags, &a, err, errlen);
	*out = rc == 0 ? &a->h : NULL;
	return rc;
}

int uraid_create(const struct uraid_create_opts *o, const char *const *paths, int n, unsigned flags,
                 struct uraid_array **out, char *err, size_t errlen)
{
	struct eng_array *a;
	int rc = eng_create_files(o, paths, n, flags, &a, err, errlen);
	*out = rc == 0 ? &a->h : NULL;
	return rc;
}

int uraid_stop(struct uraid_array *a)
{
	return a ? a->cls->stop(a) : 0;
}

void uraid_drop(struct uraid_array *a)
{
	if (a)
		a->cls->drop(a);
}

uint64_t uraid_size(const struct uraid_array *a)
{
	return a->cls->size(a);
}

int uraid_read(struct uraid_array *a, void *buf, size_t len, uint64_t off)
{
	return a->cls->read(a, buf, len, off);
}

int uraid_write(struct uraid_array *a, const void *buf, size_t len, uint64_t off)
{
	return a->cls->write(a, buf, len, off);
}

int uraid_flush(struct uraid_array *a)
{
	return a->cls->flush(a);
}

_Static_assert((URAID_ZERO_MAY_TRIM ^ URAID_ZERO_FAST) == (URAID_ZERO_MAY_TRIM | URAID_ZERO_FAST),
               "two write-zeroes flags share a bit");

int uraid_write_zeroes(struct uraid_array *a, uint64_t off, uint64_t len, unsigned flags)
{
	if (!a || (flags & ~(URAID_ZERO_MAY_TRIM | URAID_ZERO_FAST)))
		return -EINVAL;
	if (!a->cls->zero)
		return -EOPNOTSUPP;
	return a->cls->zero(a, off, len, flags);
}

_Static_assert(!(ENG_ZERO_DISCARD & (URAID_ZERO_MAY_TRIM | URAID_ZERO_FAST)),
               "the engine's discard flag shares a bit with a public one");

int uraid_discard(struct uraid_array *a, uint64_t off, uint64_t len)
{
	if (!a)
		return -EINVAL;
	if (!a->cls->zero)
		return -EOPNOTSUPP;
	return a->cls->zero(a, off, len, URAID_ZERO_MAY_TRIM | ENG_ZERO_DISCARD);
}

bool uraid_discard_safe(struct uraid_array *a)
{
	return a && a->cls->discard_safe && a->cls->discard_safe(a);
}

int uraid_locate(struct uraid_array *a, uint64_t off, uint64_t len, unsigned flags,
                 struct uraid_place *out, int max, uint64_t *piece)
{
	struct uraid_status st;
	if (!a || !piece || max < 0 || (max && !out) || (flags & ~URAID_LOCATE_PROBE))
		return -EINVAL;
	*piece = 0;
	if (!a->cls->locate)
		return -EOPNOTSUPP;
	memset(&st, 0, sizeof(st));
	uint32_t unit = a->cls->status(a, &st) == 0 && st.block_bytes ? st.block_bytes : 512;
	uint64_t size = a->cls->size(a);
	if (len == 0 || off % unit || len % unit || off >= size || len > size - off)
		return -EINVAL;
	return a->cls->locate(a, off, len, flags, out, max, piece);
}

const char *uraid_place_kind_name(enum uraid_place_kind k)
{
	switch (k) {
	case URAID_PLACE_DATA: return "data";
	case URAID_PLACE_COPY: return "copy";
	case URAID_PLACE_PEER: return "row data";
	case URAID_PLACE_P: return "parity P";
	case URAID_PLACE_Q: return "syndrome Q";
	}
	return "?";
}

int uraid_status(struct uraid_array *a, struct uraid_status *st)
{
	memset(st, 0, sizeof(*st));
	int rc = a->cls->status(a, st);
	snprintf(st->overlay, sizeof(st->overlay), "%s", a->overlay_dir);
	return rc;
}

int uraid_io_stats(struct uraid_array *a, struct uraid_io_stats *st)
{
	memset(st, 0, sizeof(*st));
	return a->cls->io_stats ? a->cls->io_stats(a, st) : 0; /* no counters: all zero */
}

int uraid_fail(struct uraid_array *a, const char *member, char *err, size_t errlen)
{
	return a->cls->fail(a, member, err, errlen);
}

int uraid_remove(struct uraid_array *a, const char *member, char *err, size_t errlen)
{
	return a->cls->remove(a, member, err, errlen);
}

int uraid_add_member(struct uraid_array *a, struct member *m, char *err, size_t errlen)
{
	return a->cls->add_member(a, m, err, errlen);
}

int uraid_add(struct uraid_array *a, const char *path, char *err, size_t errlen)
{
	struct member *m;
	int rc = open_for(a, path, &m, err, errlen);
	return rc < 0 ? rc : uraid_add_member(a, m, err, errlen);
}

int uraid_replace_member(struct uraid_array *a, const char *old, struct member *m, char *err,
                         size_t errlen)
{
	if (!a->cls->replace_member) {
		member_close(m);
		return unsupported(a, "replace (insert the new member, then remove the old one)",
		                   err, errlen);
	}
	return a->cls->replace_member(a, old, m, err, errlen);
}

int uraid_replace(struct uraid_array *a, const char *old, const char *path, char *err,
                  size_t errlen)
{
	struct member *m;
	int rc = open_for(a, path, &m, err, errlen);
	return rc < 0 ? rc : uraid_replace_member(a, old, m, err, errlen);
}

int uraid_re_add_member(struct uraid_array *a, struct member *m, char *err, size_t errlen)
{
	if (!a || !m)
		return -EINVAL;
	if (!a->cls->re_add_member) {
		member_close(m);
		return unsupported(a, "re-add", err, errlen);
	}
	return a->cls->re_add_member(a, m, err, errlen);
}

int uraid_re_add(struct uraid_array *a, const char *path, char *err, size_t errlen)
{
	if (!a || !path)
		return -EINVAL;
	struct member *m;
	int rc = open_for(a, path, &m, err, errlen);
	return rc < 0 ? rc : uraid_re_add_member(a, m, err, errlen);
}

int uraid_sync_action(struct uraid_array *a, enum uraid_sync_action action, char *err,
                      size_t errlen)
{
	return a->cls->sync_action(a, action, err, errlen);
}

int uraid_sync_step(struct uraid_array *a, uint64_t max_sectors)
{
	return a->cls->sync_step(a, max_sectors);
}

int uraid_sync_wait(struct uraid_array *a)
{
	return a->cls->sync_wait(a);
}

void uraid_sync_speed(struct uraid_array *a, uint64_t min_kibs, uint64_t max_kibs)
{
	a->cls->sync_speed(a, min_kibs, max_kibs);
}

int uraid_bitmap_add(struct uraid_array *a, uint32_t chunk_bytes, char *err, size_t errlen)
{
	if (!a->cls->bitmap_add)
		return unsupported(a, "write-intent bitmap", err, errlen);
	return a->cls->bitmap_add(a, chunk_bytes, err, errlen);
}

int uraid_grow(struct uraid_array *a, enum uraid_grow_what what, uint64_t value, char *err,
               size_t errlen)
{
	if (!a->cls->grow)
		return unsupported(a, "grow", err, errlen);
	return a->cls->grow(a, what, value, err, errlen);
}

int uraid_takeover(struct uraid_array *a, int level, uint32_t layout, int raid_disks, char *err,
                   size_t errlen)
{
	if (!a->cls->takeover)
		return unsupported(a, "level change", err, errlen);
	return a->cls->takeover(a, level, layout, raid_disks, err, errlen);
}

int uraid_grow_add(struct uraid_array *a, const char *path, char *err, size_t errlen)
{
	if (!a->cls->grow_add_member)
		return unsupported(a, "grow --add", err, errlen);
	struct member *m;
	int rc = open_for(a, path, &m, err, errlen);
	return rc < 0 ? rc : a->cls->grow_add_member(a, m, err, errlen);
}

uint64_t uraid_bitmap_resync_skipped(struct uraid_array *a)
{
	return a->cls->bitmap_skipped ? a->cls->bitmap_skipped(a, false) : 0;
}

uint64_t uraid_bitmap_recovery_skipped(struct uraid_array *a)
{
	return a->cls->bitmap_skipped ? a->cls->bitmap_skipped(a, true) : 0;
}

int uraid_set_stripe_cache(struct uraid_array *a, unsigned stripes)
{
	return a->cls->set_stripe_cache ? a->cls->set_stripe_cache(a, stripes) : -EINVAL;
}

int uraid_journal_mode(struct uraid_array *a, enum uraid_journal_mode mode, char *err,
                       size_t errlen)
{
	if (!a->cls->journal_mode)
		return unsupported(a, "write journal", err, errlen);
	return a->cls->journal_mode(a, mode, err, errlen);
}

int uraid_consistency_policy(struct uraid_array *a, enum uraid_consistency_policy policy, char *err,
                             size_t errlen)
{
	if (!a->cls->consistency_policy)
		return unsupported(a, "partial parity log", err, errlen);
	return a->cls->consistency_policy(a, policy, err, errlen);
}

int uraid_journal_add_member(struct uraid_array *a, struct member *m, char *err, size_t errlen)
{
	if (!a->cls->journal_add_member) {
		member_close(m);
		return unsupported(a, "write journal", err, errlen);
	}
	return a->cls->journal_add_member(a, m, err, errlen);
}

int uraid_journal_add(struct uraid_array *a, const char *path, char *err, size_t errlen)
{
	struct member *m;
	int rc = open_for(a, path, &m, err, errlen);
	return rc < 0 ? rc : uraid_journal_add_member(a, m, err, errlen);
}

int uraid_geom_ctl(struct uraid_array *a, const char *request, char *err, size_t errlen)
{
	if (!a->cls->ctl)
		return errmsg(err, errlen, -EOPNOTSUPP, "not a GEOM array (gmirror or graid3)");
	return a->cls->ctl(a, request, err, errlen);
}

int uraid_array_reshape_start(struct uraid_array *a, const struct uraid_reshape_opts *o, char *err,
                              size_t errlen)
{
	if (!a->cls->reshape_start)
		return unsupported(a, "reshape", err, errlen);
	return a->cls->reshape_start(a, o, err, errlen);
}

int uraid_set_readonly(struct uraid_array *a, enum uraid_ro_mode mode, char *err, size_t errlen)
{
	if (!a->cls->set_readonly)
		return unsupported(a, "read-only/read-write switching", err, errlen);
	return a->cls->set_readonly(a, mode, err, errlen);
}

int uraid_sync_freeze(struct uraid_array *a, bool frozen, char *err, size_t errlen)
{
	if (!a->cls->sync_freeze)
		return unsupported(a, "frozen", err, errlen);
	return a->cls->sync_freeze(a, frozen, err, errlen);
}

int uraid_add_member_flags(struct uraid_array *a, struct member *m, unsigned flags, char *err,
                           size_t errlen)
{
	if (!a->cls->add_member_flags) {
		member_close(m);
		return unsupported(a, "add-spare, --write-mostly and --failfast", err, errlen);
	}
	return a->cls->add_member_flags(a, m, flags, err, errlen);
}

int uraid_add_flags(struct uraid_array *a, const char *path, unsigned flags, char *err,
                    size_t errlen)
{
	struct member *m;
	int rc = open_for(a, path, &m, err, errlen);
	return rc < 0 ? rc : uraid_add_member_flags(a, m, flags, err, errlen);
}

int uraid_add_spare(struct uraid_array *a, const char *path, char *err, size_t errlen)
{
	return uraid_add_flags(a, path, URAID_ADD_SPARE, err, errlen);
}
