/* gmirror metadata (FreeBSD sys/geom/mirror/g_mirror.h, version 4). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "member/member.h"
#include "meta/geom.h"
#include "util/endian.h"
#include "util/errmsg.h"
#include "util/md5.h"

/* Byte offsets inside the packed struct. */
enum {
	MO_MAGIC = 0,
	MO_VERSION = 16,
	MO_NAME = 20,
	MO_MID = 36,
	MO_DID = 40,
	MO_ALL = 44,
	MO_GENID = 45,
	MO_SYNCID = 49,
	MO_PRIORITY = 53,
	MO_SLICE = 54,
	MO_BALANCE = 58,
	MO_MEDIASIZE = 59,
	MO_SECTORSIZE = 67,
	MO_SYNC_OFFSET = 71,
	MO_MFLAGS = 79,
	MO_DFLAGS = 87,
	MO_PROVIDER = 95,
	MO_PROVSIZE = 111,
	MO_HASH = 119,
};

static const char *const balance_names[] = {"none", "round-robin", "load", "split", "prefer"};

const char *geom_balance_name(int balance)
{
	if (balance < 0 || balance > GEOM_BALANCE_PREFER)
		return NULL;
	return balance_names[balance];
}

int geom_balance_parse(const char *name)
{
	for (int i = 0; i <= GEOM_BALANCE_PREFER; i++)
		if (strcmp(name, balance_names[i]) == 0)
			return i;
	return -EINVAL;
}

static void get_str16(char dst[17], const uint8_t *src)
{
	memcpy(dst, src, 16);
	dst[16] = '\0';
}

static void put_str16(uint8_t *dst, const char *src)
{
	/* strlcpy semantics as FreeBSD writes it: at most 15 chars + NUL. */
	memset(dst, 0, 16);
	size_t n = strnlen(src, 15);
	memcpy(dst, src, n);
}

static bool pow2_sector(uint32_t s)
{
	return s >= 512 && s <= (1u << 20) && (s & (s - 1)) == 0;
}

int geom_mirror_decode(const uint8_t *sec, size_t len, struct geom_mirror_md *md, char *err,
                       size_t errlen)
{
	if (len < GEOM_MIRROR_MD_LEN)
		return errmsg(err, errlen, -EINVAL,
		              "gmirror metadata: buffer of %zu bytes too short", len);
	if (memcmp(sec + MO_MAGIC, GEOM_MIRROR_MAGIC, sizeof(GEOM_MIRROR_MAGIC)) != 0)
		return errmsg(err, errlen, -ENOENT, "no gmirror metadata (magic mismatch)");
	memset(md, 0, sizeof(*md));
	md->version = get_le32(sec + MO_VERSION);
	if (md->version != GEOM_MIRROR_VERSION)
		return errmsg(err, errlen, -EINVAL,
		              "gmirror metadata version %u unsupported (want %d)", md->version,
		              GEOM_MIRROR_VERSION);
	uint8_t hash[16];
	md5(sec, MO_HASH, hash);
	if (memcmp(hash, sec + MO_HASH, 16) != 0)
		return errmsg(err, errlen, -EINVAL,
		              "gmirror metadata MD5 mismatch (corrupt sector)");
	get_str16(md->name, sec + MO_NAME);
	md->mid = get_le32(sec + MO_MID);
	md->did = get_le32(sec + MO_DID);
	md->all = sec[MO_ALL];
	md->genid = get_le32(sec + MO_GENID);
	md->syncid = get_le32(sec + MO_SYNCID);
	md->priority = sec[MO_PRIORITY];
	md->slice = get_le32(sec + MO_SLICE);
	md->balance = sec[MO_BALANCE];
	md->mediasize = get_le64(sec + MO_MEDIASIZE);
	md->sectorsize = get_le32(sec + MO_SECTORSIZE);
	md->sync_offset = get_le64(sec + MO_SYNC_OFFSET);
	md->mflags = get_le64(sec + MO_MFLAGS);
	md->dflags = get_le64(sec + MO_DFLAGS);
	get_str16(md->provider, sec + MO_PROVIDER);
	md->provsize = get_le64(sec + MO_PROVSIZE);
	if (md->all == 0)
		return errmsg(err, errlen, -EINVAL, "gmirror metadata: number of disks is 0");
	if (md->balance > GEOM_BALANCE_PREFER)
		return errmsg(err, errlen, -EINVAL, "gmirror metadata: unknown balance %u",
		              md->balance);
	if (!pow2_sector(md->sectorsize))
		return errmsg(err, errlen, -EINVAL, "gmirror metadata: bad sector size %u",
		              md->sectorsize);
	if (md->mediasize % md->sectorsize)
		return errmsg(err, errlen, -EINVAL,
		              "gmirror metadata: media size %llu not a multiple of sector size %u",
		              (unsigned long long)md->mediasize, md->sectorsize);
	if (md->sync_offset > md->mediasize)
		return errmsg(err, errlen, -EINVAL,
		              "gmirror metadata: sync offset %llu beyond media size %llu",
		              (unsigned long long)md->sync_offset,
		              (unsigned long long)md->mediasize);
	return 0;
}

int geom_mirror_encode(const struct geom_mirror_md *md, uint8_t *out, size_t len)
{
	if (len < GEOM_MIRROR_MD_LEN)
		return -EINVAL;
	memset(out, 0, len);
	memcpy(out + MO_MAGIC, GEOM_MIRROR_MAGIC, sizeof(GEOM_MIRROR_MAGIC));
	put_le32(out + MO_VERSION, GEOM_MIRROR_VERSION);
	put_str16(out + MO_NAME, md->name);
	put_le32(out + MO_MID, md->mid);
	put_le32(out + MO_DID, md->did);
	out[MO_ALL] = md->all;
	put_le32(out + MO_GENID, md->genid);
	put_le32(out + MO_SYNCID, md->syncid);
	out[MO_PRIORITY] = md->priority;
	put_le32(out + MO_SLICE, md->slice);
	out[MO_BALANCE] = md->balance;
	put_le64(out + MO_MEDIASIZE, md->mediasize);
	put_le32(out + MO_SECTORSIZE, md->sectorsize);
	put_le64(out + MO_SYNC_OFFSET, md->sync_offset);
	put_le64(out + MO_MFLAGS, md->mflags);
	put_le64(out + MO_DFLAGS, md->dflags);
	put_str16(out + MO_PROVIDER, md->provider);
	put_le64(out + MO_PROVSIZE, md->provsize);
	md5(out, MO_HASH, out + MO_HASH);
	return 0;
}

uint64_t geom_md_offset(const struct member *m)
{
	uint32_t bs = m->logical_block ? m->logical_block : 512;
	return m->size / bs * bs - bs;
}

static int read_last(struct member *m, uint8_t **buf, char *err, size_t errlen)
{
	uint32_t bs = m->logical_block ? m->logical_block : 512;
	if (m->size < 2ull * bs)
		return errmsg(err, errlen, -EINVAL, "%s: too small (%llu bytes) for GEOM metadata",
		              m->name, (unsigned long long)m->size);
	*buf = calloc(1, bs);
	if (!*buf)
		return -ENOMEM;
	int rc = member_read(m, *buf, bs, geom_md_offset(m));
	if (rc < 0) {
		free(*buf);
		return errmsg(err, errlen, rc, "%s: reading metadata sector: %s", m->name,
		              strerror(-rc));
	}
	return (int)bs;
}

static int write_last(struct member *m, const uint8_t *buf, char *err, size_t errlen)
{
	uint32_t bs = m->logical_block ? m->logical_block : 512;
	int rc = member_write(m, buf, bs, geom_md_offset(m), MEMBER_FUA);
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s: writing metadata sector: %s", m->name,
		              strerror(-rc));
	return 0;
}

int geom_mirror_read(struct member *m, struct geom_mirror_md *md, char *err, size_t errlen)
{
	uint8_t *buf;
	int bs = read_last(m, &buf, err, errlen);
	if (bs < 0)
		return bs;
	char why[200] = "";
	int rc = geom_mirror_decode(buf, (size_t)bs, md, why, sizeof(why));
	free(buf);
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s: %s", m->name, why);
	return 0;
}

int geom_mirror_write(struct member *m, const struct geom_mirror_md *md, char *err, size_t errlen)
{
	uint32_t bs = m->logical_block ? m->logical_block : 512;
	uint8_t *buf = calloc(1, bs);
	if (!buf)
		return -ENOMEM;
	geom_mirror_encode(md, buf, bs);
	int rc = write_last(m, buf, err, errlen);
	free(buf);
	return rc;
}

int geom_raid3_read(struct member *m, struct geom_raid3_md *md, char *err, size_t errlen)
{
	uint8_t *buf;
	int bs = read_last(m, &buf, err, errlen);
	if (bs < 0)
		return bs;
	char why[200] = "";
	int rc = geom_raid3_decode(buf, (size_t)bs, md, why, sizeof(why));
	free(buf);
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s: %s", m->name, why);
	return 0;
}

int geom_raid3_write(struct member *m, const struct geom_raid3_md *md, char *err, size_t errlen)
{
	uint32_t bs = m->logical_block ? m->logical_block : 512;
	uint8_t *buf = calloc(1, bs);
	if (!buf)
		return -ENOMEM;
	geom_raid3_encode(md, buf, bs);
	int rc = write_last(m, buf, err, errlen);
	free(buf);
	return rc;
}

int geom_clear(struct member *m, char *err, size_t errlen)
{
	uint32_t bs = m->logical_block ? m->logical_block : 512;
	if (m->size < 2ull * bs)
		return errmsg(err, errlen, -EINVAL, "%s: too small for GEOM metadata", m->name);
	uint8_t *buf = calloc(1, bs);
	if (!buf)
		return -ENOMEM;
	int rc = write_last(m, buf, err, errlen);
	free(buf);
	return rc;
}
