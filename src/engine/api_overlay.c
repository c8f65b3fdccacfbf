/* Assembly through copy-on-write overlays (include/uraid.h,
 * uraid_assemble_overlay): every member opened read-only behind an overlay
 * (member/member_overlay.c) in one trusted directory, then assembled as
 * usual, so nothing the array does reaches a member.
 *
 * An overlay directory belongs to one array: each overlay records the
 * array's tag (md: its uuid; GEOM: name and id) read from the members'
 * metadata, and a directory holding an overlay of another array is
 * refused. A member is found again by its key: its md device uuid (1.x),
 * else its device and inode. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/api_int.h"
#include "engine/core/class.h"
#include "member/member_overlay.h"
#include "meta/geom.h"
#include "meta/md_super.h"
#include "util/errmsg.h"

/* The array the metadata of `m` names (tag) and the member's key ("" for
 * the default), or -ENOENT when it has none. */
static int member_tag(struct member *m, char *tag, size_t tlen, char *key, size_t klen)
{
	struct md_sb sb;
	struct geom_mirror_md gm;
	struct geom_raid3_md g3;
	char e[256], u[36];
	key[0] = 0;
	if (md_sb_load(m, &sb, e, sizeof(e)) == 0) {
		md_uuid_format(sb.set_uuid, u);
		snprintf(tag, tlen, "md:%s", u);
		if (sb.version != MD_SB_0_90) {
			size_t k = (size_t)snprintf(key, klen, "d");
			for (int i = 0; i < 16 && k + 2 < klen; i++)
				k += (size_t)snprintf(key + k, klen - k, "%02x", sb.device_uuid[i]);
		}
		return 0;
	}
	if (geom_mirror_read(m, &gm, e, sizeof(e)) == 0) {
		snprintf(tag, tlen, "gmirror:%s:%08x", gm.name, gm.mid);
		snprintf(key, klen, "g%08x", gm.did);
		return 0;
	}
	if (geom_raid3_read(m, &g3, e, sizeof(e)) == 0) {
		snprintf(tag, tlen, "graid3:%s:%08x", g3.name, g3.id);
		snprintf(key, klen, "r%08x-%u", g3.id, g3.no);
		return 0;
	}
	return -ENOENT;
}

static void close_all(struct member **mm, int n)
{
	for (int i = 0; i < n; i++)
		if (mm[i])
			member_close(mm[i]);
}

static int open_base(const char *path, unsigned flags, struct member **m, char *err, size_t errlen)
{
	char e[512];
	unsigned mf = MEMBER_RDONLY | ((flags & URAID_DIRECT) ? MEMBER_DIRECT : 0);
	int rc = member_open_file(path, mf, 0, m, e, sizeof(e));
	if (rc < 0)
		return strstr(e, path) ? errmsg(err, errlen, rc, "%s", e)
		                       : errmsg(err, errlen, rc, "%s: %s", path, e);
	return 0;
}

/* The members' common tag: every member with metadata must name the same
 * array (members without, such as a blank spare, get that array's). */
static int common_tag(struct member **base, int n, const char *const *paths, char *tag, size_t tlen,
                      char (*keys)[MEMBER_OVERLAY_KEY_MAX], char *err, size_t errlen)
{
	int first = -1;
	tag[0] = 0;
	for (int i = 0; i < n; i++) {
		char t[MEMBER_OVERLAY_TAG_MAX];
		if (member_tag(base[i], t, sizeof(t), keys[i], sizeof(keys[i])) < 0)
			continue;
		if (first < 0) {
			first = i;
			snprintf(tag, tlen, "%s", t);
		} else if (strcmp(t, tag)) {
			return errmsg(err, errlen, -EINVAL,
			              "%s belongs to array %s, %s to array %s: one overlay "
			              "directory is for one array",
			              paths[first], tag, paths[i], t);
		}
	}
	if (first < 0)
		return errmsg(err, errlen, -EINVAL,
		              "none of the members has an md superblock or GEOM metadata, so "
		              "there is no array to overlay");
	return 0;
}

int uraid_assemble_overlay(const char *const *paths, int n, unsigned flags, const char *dir,
                           struct uraid_array **out, char *err, size_t errlen, char *warn,
                           size_t warnlen)
{
	if (!dir)
		return uraid_assemble(paths, n, flags, out, err, errlen, warn, warnlen);
	*out = NULL;
	if (warn && warnlen)
		warn[0] = 0;
	if (n < 1 || n > 256)
		return errmsg(err, errlen, -EINVAL, "need 1 to 256 members, got %d", n);
	char dpath[URAID_OVERLAY_DIR_MAX], tag[MEMBER_OVERLAY_TAG_MAX];
	int dfd = member_overlay_dir_open(dir, true, dpath, sizeof(dpath), err, errlen);
	if (dfd < 0)
		return dfd;
	struct member **mm = calloc((size_t)n, sizeof(*mm));
	char(*keys)[MEMBER_OVERLAY_KEY_MAX] = calloc((size_t)n, sizeof(*keys));
	int rc = mm && keys ? 0 : errmsg(err, errlen, -ENOMEM, "out of memory");
	for (int i = 0; i < n && rc == 0; i++) {
		for (int j = 0; j < i && rc == 0; j++)
			if (!strcmp(paths[i], paths[j]))
				rc = errmsg(err, errlen, -EINVAL, "%s given twice", paths[i]);
		if (rc == 0)
			rc = open_base(paths[i], flags, &mm[i], err, errlen);
	}
	if (rc == 0)
		rc = common_tag(mm, n, paths, tag, sizeof(tag), keys, err, errlen);
	if (rc == 0)
		rc = member_overlay_dir_check(dfd, dpath, tag, err, errlen);
	unsigned of = (flags & URAID_RDONLY) ? OVERLAY_RDONLY : 0;
	for (int i = 0; i < n && rc == 0; i++) {
		struct member *base = mm[i];
		mm[i] = NULL;
		rc = member_overlay_open(base, dfd, dpath, tag, keys[i][0] ? keys[i] : NULL, of,
		                         &mm[i], err, errlen);
	}
	close(dfd);
	free(keys);
	if (rc < 0) {
		if (mm)
			close_all(mm, n);
		free(mm);
		return rc;
	}
	rc = uraid_assemble_members(mm, n, flags, out, err, errlen, warn, warnlen);
	free(mm);
	if (rc < 0)
		return rc;
	(*out)->flags |= URAID_OVERLAY;
	snprintf((*out)->overlay_dir, sizeof((*out)->overlay_dir), "%s", dpath);
	snprintf((*out)->overlay_tag, sizeof((*out)->overlay_tag), "%s", tag);
	return 0;
}

const char *uraid_overlay_dir(const struct uraid_array *a)
{
	return a && (a->flags & URAID_OVERLAY) ? a->overlay_dir : NULL;
}

int eng_open_overlay_for(const struct uraid_array *a, const char *path, struct member **m,
                         char *err, size_t errlen)
{
	char dpath[URAID_OVERLAY_DIR_MAX];
	struct member *base;
	*m = NULL;
	int dfd = member_overlay_dir_open(a->overlay_dir, false, dpath, sizeof(dpath), err, errlen);
	if (dfd < 0)
		return dfd;
	int rc = open_base(path, a->flags, &base, err, errlen);
	/* A former member (re-add) keeps its key, so it finds its overlay. */
	char t[MEMBER_OVERLAY_TAG_MAX], key[MEMBER_OVERLAY_KEY_MAX];
	if (rc == 0 &&
	    (member_tag(base, t, sizeof(t), key, sizeof(key)) < 0 || strcmp(t, a->overlay_tag)))
		key[0] = 0;
	if (rc == 0)
		rc = member_overlay_open(base, dfd, dpath, a->overlay_tag, key[0] ? key : NULL, 0,
		                         m, err, errlen);
	close(dfd);
	return rc;
}
