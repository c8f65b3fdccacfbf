/* graid3 metadata (FreeBSD sys/geom/raid3/g_raid3.h, version 5). */
#include <errno.h>
#include <string.h>

#include "meta/geom.h"
#include "util/endian.h"
#include "util/errmsg.h"
#include "util/md5.h"

enum {
	RO_MAGIC = 0,
	RO_VERSION = 16,
	RO_NAME = 20,
	RO_ID = 36,
	RO_NO = 40,
	RO_ALL = 42,
	RO_GENID = 44,
	RO_SYNCID = 48,
	RO_MEDIASIZE = 52,
	RO_SECTORSIZE = 60,
	RO_SYNC_OFFSET = 64,
	RO_MFLAGS = 72,
	RO_DFLAGS = 80,
	RO_PROVIDER = 88,
	RO_PROVSIZE = 104,
	RO_HASH = 112,
};

int geom_raid3_decode(const uint8_t *sec, size_t len, struct geom_raid3_md *md, char *err,
                      size_t errlen)
{
	if (len < GEOM_RAID3_MD_LEN)
		return errmsg(err, errlen, -EINVAL,
		              "graid3 metadata: buffer of %zu bytes too short", len);
	if (memcmp(sec + RO_MAGIC, GEOM_RAID3_MAGIC, sizeof(GEOM_RAID3_MAGIC)) != 0)
		return errmsg(err, errlen, -ENOENT, "no graid3 metadata (magic mismatch)");
	memset(md, 0, sizeof(*md));
	md->version = get_le32(sec + RO_VERSION);
	if (md->version != GEOM_RAID3_VERSION)
		return errmsg(err, errlen, -EINVAL,
		              "graid3 metadata version %u unsupported (want %d)", md->version,
		              GEOM_RAID3_VERSION);
	uint8_t hash[16];
	md5(sec, RO_HASH, hash);
	if (memcmp(hash, sec + RO_HASH, 16) != 0)
		return errmsg(err, errlen, -EINVAL,
		              "graid3 metadata MD5 mismatch (corrupt sector)");
	memcpy(md->name, sec + RO_NAME, 16);
	md->id = get_le32(sec + RO_ID);
	md->no = get_le16(sec + RO_NO);
	md->all = get_le16(sec + RO_ALL);
	md->genid = get_le32(sec + RO_GENID);
	md->syncid = get_le32(sec + RO_SYNCID);
	md->mediasize = get_le64(sec + RO_MEDIASIZE);
	md->sectorsize = get_le32(sec + RO_SECTORSIZE);
	md->sync_offset = get_le64(sec + RO_SYNC_OFFSET);
	md->mflags = get_le64(sec + RO_MFLAGS);
	md->dflags = get_le64(sec + RO_DFLAGS);
	memcpy(md->provider, sec + RO_PROVIDER, 16);
	md->provsize = get_le64(sec + RO_PROVSIZE);
	/* graid3 only runs with 2^n + 1 components (n >= 1). */
	unsigned d = md->all ? md->all - 1u : 0;
	if (md->all < 3 || (d & (d - 1)) != 0)
		return errmsg(err, errlen, -EINVAL,
		              "graid3 metadata: %u components (must be 2^n + 1, at least 3)",
		              md->all);
	if (md->no >= md->all)
		return errmsg(err, errlen, -EINVAL, "graid3 metadata: component number %u of %u",
		              md->no, md->all);
	if (md->sectorsize == 0 || md->sectorsize % d != 0 || md->sectorsize / d < 512 ||
	    ((md->sectorsize / d) & (md->sectorsize / d - 1)) != 0 || md->sectorsize > (1u << 24))
		return errmsg(err, errlen, -EINVAL,
		              "graid3 metadata: sector size %u is not %u data components times a "
		              "power-of-two component sector",
		              md->sectorsize, d);
	if (md->mediasize % md->sectorsize)
		return errmsg(err, errlen, -EINVAL,
		              "graid3 metadata: media size %llu not a multiple of sector size %u",
		              (unsigned long long)md->mediasize, md->sectorsize);
	if (md->sync_offset > md->mediasize / d)
		return errmsg(err, errlen, -EINVAL,
		              "graid3 metadata: sync offset %llu beyond component data size",
		              (unsigned long long)md->sync_offset);
	if ((md->mflags & GEOM_RAID3_DEV_ROUND_ROBIN) && (md->mflags & GEOM_RAID3_DEV_VERIFY))
		return errmsg(err, errlen, -EINVAL,
		              "graid3 metadata: round-robin and verify flags both set");
	return 0;
}

static void put_str16(uint8_t *dst, const char *src)
{
	memset(dst, 0, 16);
	memcpy(dst, src, strnlen(src, 15));
}

int geom_raid3_encode(const struct geom_raid3_md *md, uint8_t *out, size_t len)
{
	if (len < GEOM_RAID3_MD_LEN)
		return -EINVAL;
	memset(out, 0, len);
	memcpy(out + RO_MAGIC, GEOM_RAID3_MAGIC, sizeof(GEOM_RAID3_MAGIC));
	put_le32(out + RO_VERSION, GEOM_RAID3_VERSION);
	put_str16(out + RO_NAME, md->name);
	put_le32(out + RO_ID, md->id);
	put_le16(out + RO_NO, md->no);
	put_le16(out + RO_ALL, md->all);
	put_le32(out + RO_GENID, md->genid);
	put_le32(out + RO_SYNCID, md->syncid);
	put_le64(out + RO_MEDIASIZE, md->mediasize);
	put_le32(out + RO_SECTORSIZE, md->sectorsize);
	put_le64(out + RO_SYNC_OFFSET, md->sync_offset);
	put_le64(out + RO_MFLAGS, md->mflags);
	put_le64(out + RO_DFLAGS, md->dflags);
	put_str16(out + RO_PROVIDER, md->provider);
	put_le64(out + RO_PROVSIZE, md->provsize);
	md5(out, RO_HASH, out + RO_HASH);
	return 0;
}
