/* Finding and writing md superblocks on a member. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta/md_sb_internal.h"
#include "util/errmsg.h"

static void *alloc_block(size_t len)
{
	void *p = NULL;
	/* 4 KiB alignment keeps O_DIRECT members happy */
	if (posix_memalign(&p, 4096, len))
		return NULL;
	return p;
}

int md_sb_load_version(struct member *m, enum md_sb_version v, struct md_sb *sb, char *err,
                       size_t errlen)
{
	const char *vn = md_sb_version_name(v);
	uint64_t dev_sectors = m->size / 512;
	int64_t loc = md_sb_location(v, dev_sectors);
	if (loc < 0)
		return errmsg(err, errlen, -ENOSPC,
		              "%s: too small (%llu sectors) for a %s superblock", m->name,
		              (unsigned long long)dev_sectors, vn);
	uint8_t *buf = alloc_block(MD_SB_BYTES);
	if (!buf)
		return errmsg(err, errlen, -ENOMEM, "%s: out of memory", m->name);
	int rc = member_read(m, buf, MD_SB_BYTES, (uint64_t)loc * 512);
	if (rc < 0) {
		free(buf);
		return errmsg(err, errlen, rc, "%s: reading the %s superblock at sector %lld: %s",
		              m->name, vn, (long long)loc, strerror(-rc));
	}
	char why[200];
	rc = md_sb_decode(v, buf, MD_SB_BYTES, sb, why, sizeof(why));
	free(buf);
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s: %s superblock at sector %lld: %s", m->name, vn,
		              (long long)loc, why);
	if (v == MD_SB_0_90) {
		/* 0.90 does not record its place: data runs from 0 to the superblock */
		sb->super_offset = (uint64_t)loc;
		sb->data_offset = 0;
		sb->data_size = (uint64_t)loc;
	}
	rc = md_sb_check_device(sb, dev_sectors, why, sizeof(why));
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s: %s superblock at sector %lld: %s", m->name, vn,
		              (long long)loc, why);
	return 0;
}

/* Seconds of creation, for choosing between several superblocks. */
static uint64_t ctime_seconds(const struct md_sb *sb)
{
	return sb->version == MD_SB_0_90 ? sb->ctime : sb->ctime & 0xffffffffffull;
}

int md_sb_load(struct member *m, struct md_sb *sb, char *err, size_t errlen)
{
	static const enum md_sb_version order[] = {MD_SB_1_2, MD_SB_1_1, MD_SB_1_0, MD_SB_0_90};
	struct md_sb *cand = malloc(sizeof(*cand));
	if (!cand)
		return errmsg(err, errlen, -ENOMEM, "%s: out of memory", m->name);
	char why[300], first_bad[300] = "";
	int first_bad_rc = 0, found = 0, rc;
	uint64_t best_ctime = 0;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		rc = md_sb_load_version(m, order[i], cand, why, sizeof(why));
		if (rc == 0) {
			/* Several valid ones: a member re-used with another metadata
			 * version keeps the old block; the newest creation wins (as
			 * mdadm does), ties go to the order above. */
			if (!found || ctime_seconds(cand) > best_ctime) {
				*sb = *cand;
				best_ctime = ctime_seconds(cand);
			}
			found = 1;
		} else if (rc != -ENOENT && rc != -ENOSPC && !first_bad_rc) {
			first_bad_rc = rc;
			snprintf(first_bad, sizeof(first_bad), "%s", why);
		}
	}
	free(cand);
	if (found)
		return 0;
	if (first_bad_rc)
		return errmsg(err, errlen, first_bad_rc, "%s", first_bad);
	return errmsg(err, errlen, -ENOENT, "%s: no md superblock found", m->name);
}

int md_sb_store(struct member *m, const struct md_sb *sb)
{
	if (m->readonly)
		return -EROFS;
	int64_t loc = md_sb_location(sb->version, m->size / 512);
	if (loc < 0)
		return (int)loc;
	if (sb->version != MD_SB_0_90 && sb->super_offset != (uint64_t)loc)
		return -EINVAL; /* a superblock that claims to live elsewhere */
	size_t unit = m->logical_block > 512 ? m->logical_block : 512;
	size_t nbytes = md_sb_bytes(sb);
	size_t wlen = (nbytes + unit - 1) / unit * unit;
	if (wlen > MD_SB_BYTES)
		wlen = MD_SB_BYTES;
	uint8_t *enc = alloc_block(MD_SB_BYTES);
	uint8_t *out = alloc_block(MD_SB_BYTES);
	int rc = -ENOMEM;
	if (!enc || !out)
		goto done;
	rc = md_sb_encode(sb, enc, MD_SB_BYTES);
	if (rc < 0)
		goto done;
	if (wlen > nbytes) {
		/* md writes only nbytes; keep the rest of the I/O unit as it is */
		rc = member_read(m, out, wlen, (uint64_t)loc * 512);
		if (rc < 0)
			goto done;
	}
	memcpy(out, enc, nbytes);
	rc = member_write(m, out, wlen, (uint64_t)loc * 512, MEMBER_FUA);
done:
	free(enc);
	free(out);
	return rc < 0 ? rc : 0;
}
