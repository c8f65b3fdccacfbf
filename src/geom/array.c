/* One handle over gmirror and graid3 for front ends (see geom/geom.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "geom/geom.h"
#include "member/member.h"
#include "uraid.h"
#include "util/errmsg.h"

int geom_detect(const char *path, enum geom_kind *kind, char *err, size_t errlen)
{
	struct member *m;
	int rc = member_open_file(path, MEMBER_RDONLY, 0, &m, err, errlen);
	if (rc < 0)
		return rc;
	struct geom_mirror_md mm;
	struct geom_raid3_md rm;
	char why[256] = "";
	*kind = GEOM_KIND_NONE;
	rc = geom_mirror_read(m, &mm, why, sizeof(why));
	if (rc == 0) {
		*kind = GEOM_KIND_MIRROR;
	} else if (rc == -ENOENT) {
		rc = geom_raid3_read(m, &rm, why, sizeof(why));
		if (rc == 0)
			*kind = GEOM_KIND_RAID3;
	}
	member_close(m);
	if (rc == -ENOENT)
		return 0; /* neither class: kind stays NONE */
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s", why);
	return 0;
}

int geom_array_open(const char *const *paths, int n, unsigned flags, int balance,
                    struct geom_array **out, char *err, size_t errlen, char *warn, size_t warnlen)
{
	if (n < 1 || n > GEOM_MAX_DISKS + 1)
		return errmsg(err, errlen, -EINVAL, "need 1 to %d components", GEOM_MAX_DISKS + 1);
	if (balance > GEOM_BALANCE_PREFER)
		return errmsg(err, errlen, -EINVAL, "unknown balance %d", balance);
	enum geom_kind kind;
	int rc = geom_detect(paths[0], &kind, err, errlen);
	if (rc < 0)
		return rc;
	if (kind == GEOM_KIND_NONE)
		return errmsg(err, errlen, -ENOENT, "%s: not a GEOM array", paths[0]);
	bool rdonly = flags & URAID_RDONLY;
	unsigned mflags = (rdonly ? MEMBER_RDONLY : 0) | (flags & URAID_DIRECT ? MEMBER_DIRECT : 0);
	struct member *m[GEOM_MAX_DISKS + 1] = {0};
	for (int i = 0; i < n; i++) {
		rc = member_open_file(paths[i], mflags, 0, &m[i], err, errlen);
		if (rc < 0) {
			for (int j = 0; j < i; j++)
				member_close(m[j]);
			return rc;
		}
	}
	return geom_array_open_members(m, n, flags, balance, out, err, errlen, warn, warnlen);
}

int geom_array_open_members(struct member **m, int n, unsigned flags, int balance,
                            struct geom_array **out, char *err, size_t errlen, char *warn,
                            size_t warnlen)
{
	int rc = 0;
	if (n < 1 || n > GEOM_MAX_DISKS + 1 || balance > GEOM_BALANCE_PREFER) {
		for (int i = 0; i < n && i <= GEOM_MAX_DISKS; i++)
			member_close(m[i]);
		return errmsg(err, errlen, -EINVAL, "bad component count %d or balance %d", n,
		              balance);
	}
	bool rdonly = flags & URAID_RDONLY;
	struct geom_mirror_md mm;
	enum geom_kind kind = GEOM_KIND_NONE;
	char why[256] = "";
	/* The class of the first member with metadata; the open then names a
	 * member without it. */
	rc = -ENOENT;
	for (int i = 0; i < n && rc == -ENOENT; i++) {
		rc = geom_mirror_read(m[i], &mm, why, sizeof(why));
		if (rc == 0) {
			kind = GEOM_KIND_MIRROR;
		} else if (rc == -ENOENT) {
			struct geom_raid3_md rm;
			rc = geom_raid3_read(m[i], &rm, why, sizeof(why));
			if (rc == 0)
				kind = GEOM_KIND_RAID3;
		}
	}
	struct geom_array *a = rc == 0 ? calloc(1, sizeof(*a)) : NULL;
	if (!a) {
		for (int i = 0; i < n; i++)
			member_close(m[i]);
		if (rc == -ENOENT)
			return errmsg(err, errlen, -ENOENT, "%s: not a GEOM array", m[0]->name);
		return rc < 0 ? errmsg(err, errlen, rc, "%s", why) : -ENOMEM;
	}
	a->kind = kind;
	if (kind == GEOM_KIND_MIRROR) {
		rc = geom_mirror_open(m, n, rdonly, &a->mirror, err, errlen, warn, warnlen);
		if (rc == 0) {
			a->size = a->mirror->mediasize;
			a->blocksize = a->mirror->sectorsize;
			if (balance >= GEOM_BALANCE_ROUND_ROBIN)
				a->mirror->bal.balance = balance; /* session only */
		}
	} else {
		rc = geom_raid3_open(m, n, rdonly, &a->raid3, err, errlen, warn, warnlen);
		if (rc == 0) {
			a->size = a->raid3->mediasize;
			a->blocksize = a->raid3->psector;
		}
	}
	if (rc < 0) {
		free(a);
		return rc;
	}
	*out = a;
	return 0;
}

int geom_array_read(struct geom_array *a, void *buf, size_t len, uint64_t off)
{
	return a->mirror ? geom_mirror_read_at(a->mirror, buf, len, off)
	                 : geom_raid3_read_at(a->raid3, buf, len, off);
}

int geom_array_write(struct geom_array *a, const void *buf, size_t len, uint64_t off)
{
	return a->mirror ? geom_mirror_write_at(a->mirror, buf, len, off)
	                 : geom_raid3_write_at(a->raid3, buf, len, off);
}

int geom_array_zero(struct geom_array *a, uint64_t off, uint64_t len, unsigned mflags)
{
	return a->mirror ? geom_mirror_zero_at(a->mirror, off, len, mflags)
	                 : geom_raid3_zero_at(a->raid3, off, len, mflags);
}

int geom_array_flush(struct geom_array *a)
{
	return a->mirror ? geom_mirror_flush(a->mirror) : geom_raid3_flush(a->raid3);
}

int geom_array_sync_step(struct geom_array *a, uint64_t bytes)
{
	return a->mirror ? geom_mirror_sync_step(a->mirror, bytes)
	                 : geom_raid3_sync_step(a->raid3, bytes);
}

int geom_array_idle(struct geom_array *a, uint64_t idle_ns)
{
	return a->mirror ? geom_mirror_idle(a->mirror, idle_ns)
	                 : geom_raid3_idle(a->raid3, idle_ns);
}

int geom_array_close(struct geom_array *a)
{
	if (!a)
		return 0;
	int rc = a->mirror ? geom_mirror_close(a->mirror) : geom_raid3_close(a->raid3);
	free(a);
	return rc;
}
