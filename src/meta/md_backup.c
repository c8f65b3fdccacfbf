/* mdadm's backup superblock of a reshape's critical section (md_backup.h). */
#include <errno.h>
#include <string.h>

#include "meta/md_backup.h"
#include "util/endian.h"
#include "util/errmsg.h"

#define O_MAGIC  0
#define O_UUID   16
#define O_MTIME  32
#define O_DEV    40
#define O_ARRAY  48
#define O_LEN    56
#define O_CSUM   64
#define O_DEV2   72
#define O_ARRAY2 80
#define O_LEN2   88
#define O_CSUM2  96

static const char magic1[16] = "md_backup_data-1", magic2[16] = "md_backup_data-2";

uint32_t md_backup_csum(const uint8_t *buf, size_t len)
{
	/* mdadm's bsb_csum adds buf[0] (a signed char) at every step; kept
	 * as it is, since that is what every mdadm writes and checks. The
	 * arithmetic is modulo 2^32, as the int of mdadm on its targets. */
	uint32_t c = 0, b = (uint32_t)(int32_t)(int8_t)buf[0];
	for (size_t i = 0; i < len; i++)
		c = (c << 3) + b;
	return c;
}

void md_backup_encode(const struct md_backup_sb *b, uint8_t out[MD_BACKUP_SB_BYTES])
{
	memset(out, 0, MD_BACKUP_SB_BYTES);
	memcpy(out + O_MAGIC, b->version == 2 ? magic2 : magic1, 16);
	memcpy(out + O_UUID, b->set_uuid, 16);
	put_le64(out + O_MTIME, b->mtime);
	put_le64(out + O_DEV, b->devstart);
	put_le64(out + O_ARRAY, b->arraystart);
	put_le64(out + O_LEN, b->length);
	/* mdadm keeps the second section's fields in a "-1" block too
	 * (devstart2 is set when the backup starts): they are encoded as
	 * given, only sb_csum2 is "-2"'s. */
	put_le64(out + O_DEV2, b->devstart2);
	put_le64(out + O_ARRAY2, b->arraystart2);
	put_le64(out + O_LEN2, b->length2);
	put_le32(out + O_CSUM, md_backup_csum(out, O_CSUM));
	if (b->version == 2)
		put_le32(out + O_CSUM2, md_backup_csum(out, O_CSUM2));
}

static int section(uint64_t dev, uint64_t start, uint64_t len, const char *which, char *err,
                   size_t errlen)
{
	/* Byte offsets mdadm computes (sectors * 512) must not wrap. */
	const uint64_t lim = UINT64_MAX / 512;
	if (dev > lim || start > lim || len > lim || start + len > lim || start + len < start)
		return errmsg(err, errlen, -EINVAL,
		              "backup %s section out of range (devstart %llu, arraystart %llu, "
		              "length %llu)",
		              which, (unsigned long long)dev, (unsigned long long)start,
		              (unsigned long long)len);
	return 0;
}

int md_backup_decode(const uint8_t in[MD_BACKUP_SB_BYTES], struct md_backup_sb *b, char *err,
                     size_t errlen)
{
	memset(b, 0, sizeof(*b));
	if (!memcmp(in, magic1, 16))
		b->version = 1;
	else if (!memcmp(in, magic2, 16))
		b->version = 2;
	else
		return errmsg(err, errlen, -ENOENT, "no md_backup_data-1/-2 magic");
	uint32_t c = get_le32(in + O_CSUM), want = md_backup_csum(in, O_CSUM);
	if (c != want)
		return errmsg(err, errlen, -EINVAL,
		              "bad backup-metadata checksum (0x%08x, should be 0x%08x)", c, want);
	if (b->version == 2) {
		c = get_le32(in + O_CSUM2);
		want = md_backup_csum(in, O_CSUM2);
		if (c != want)
			return errmsg(err, errlen, -EINVAL,
			              "bad backup-metadata checksum2 (0x%08x, should be 0x%08x)", c,
			              want);
	}
	memcpy(b->set_uuid, in + O_UUID, 16);
	b->mtime = get_le64(in + O_MTIME);
	b->devstart = get_le64(in + O_DEV);
	b->arraystart = get_le64(in + O_ARRAY);
	b->length = get_le64(in + O_LEN);
	b->devstart2 = get_le64(in + O_DEV2);
	b->arraystart2 = get_le64(in + O_ARRAY2);
	b->length2 = get_le64(in + O_LEN2);
	int rc = section(b->devstart, b->arraystart, b->length, "first", err, errlen);
	if (rc == 0 && b->version == 2) {
		rc = section(b->devstart2, b->arraystart2, b->length2, "second", err, errlen);
		if (rc == 0 && b->devstart2 > UINT64_MAX / 512 - b->devstart)
			rc = errmsg(err, errlen, -EINVAL,
			            "backup second section out of range (devstart %llu + %llu)",
			            (unsigned long long)b->devstart,
			            (unsigned long long)b->devstart2);
	}
	return rc;
}

void md_backup_uuid(const struct md_sb *sb, uint8_t out[16])
{
	if (sb->version != MD_SB_0_90) {
		memcpy(out, sb->set_uuid, 16);
		return;
	}
	/* md_super.h keeps 0.90's words big-endian; mdadm copies its int[4]
	 * (host order, little-endian here). */
	memset(out, 0, 16);
	for (int w = 0; w < 4; w++) {
		if (w && sb->v0.minor_version < 90)
			break;
		for (int k = 0; k < 4; k++)
			out[w * 4 + k] = sb->set_uuid[w * 4 + 3 - k];
	}
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

uint64_t md_backup_blocks(uint32_t old_chunk, uint32_t old_data, uint32_t new_chunk,
                          uint32_t new_data)
{
	uint64_t a = (uint64_t)old_chunk * old_data, b = (uint64_t)new_chunk * new_data;
	if (!a || !b)
		return 0;
	return a / gcd(a, b) * b;
}
