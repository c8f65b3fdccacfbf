/* libFuzzer target for mdadm's backup superblock codec (meta/md_backup).
 * The input is a 512-byte block (zero-padded); with bit 0 of the last
 * input byte set, both checksums are fixed up so the field checks are
 * reached. What decodes must encode back to the same bytes (the padding
 * and, for "-1", the second checksum zero) and decode to the same fields;
 * what is refused says why. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "meta/md_backup.h"
#include "util/endian.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t b[MD_BACKUP_SB_BYTES], out[MD_BACKUP_SB_BYTES];
	memset(b, 0, sizeof(b));
	memcpy(b, data, size < sizeof(b) ? size : sizeof(b));
	if (size && (data[size - 1] & 1)) {
		put_le32(b + 64, md_backup_csum(b, 64));
		put_le32(b + 96, md_backup_csum(b, 96));
	}
	struct md_backup_sb d, d2;
	char err[160];
	err[0] = 0;
	int rc = md_backup_decode(b, &d, err, sizeof(err));
	if (rc < 0) {
		if ((rc != -EINVAL && rc != -ENOENT) || !err[0])
			abort();
		return 0;
	}
	md_backup_encode(&d, out);
	if (d.version == 1)
		memset(b + 96, 0, 4);
	memset(b + 68, 0, 4);
	memset(b + 100, 0, sizeof(b) - 100);
	if (memcmp(b, out, sizeof(b)))
		abort();
	if (md_backup_decode(out, &d2, err, sizeof(err)) != 0 || memcmp(&d, &d2, sizeof(d)))
		abort();
	return 0;
}
