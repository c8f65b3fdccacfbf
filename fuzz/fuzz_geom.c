/* libFuzzer target for the GEOM metadata codecs (gmirror v4, graid3 v5).
 * Each input is tried as given and with its MD5 fixed (so the fuzzer gets
 * past the hash to the field checks). Whatever decodes must re-encode to a
 * sector that decodes to the same fields and encodes to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "meta/geom.h"
#include "util/md5.h"

static void try_mirror(const uint8_t *b)
{
	struct geom_mirror_md a, c;
	uint8_t e1[512], e2[512];
	char err[256];
	if (geom_mirror_decode(b, 512, &a, err, sizeof(err)) != 0)
		return;
	if (geom_mirror_encode(&a, e1, sizeof(e1)) != 0)
		abort();
	if (geom_mirror_decode(e1, sizeof(e1), &c, err, sizeof(err)) != 0)
		abort();
	geom_mirror_encode(&c, e2, sizeof(e2));
	if (memcmp(e1, e2, sizeof(e1)) != 0 || a.mid != c.mid || a.sync_offset != c.sync_offset)
		abort();
	(void)geom_balance_name(a.balance);
}

static void try_raid3(const uint8_t *b)
{
	struct geom_raid3_md a, c;
	uint8_t e1[512], e2[512];
	char err[256];
	if (geom_raid3_decode(b, 512, &a, err, sizeof(err)) != 0)
		return;
	if (geom_raid3_encode(&a, e1, sizeof(e1)) != 0)
		abort();
	if (geom_raid3_decode(e1, sizeof(e1), &c, err, sizeof(err)) != 0)
		abort();
	geom_raid3_encode(&c, e2, sizeof(e2));
	if (memcmp(e1, e2, sizeof(e1)) != 0 || a.no != c.no || a.sectorsize != c.sectorsize)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t b[512] = {0};
	memcpy(b, data, size < sizeof(b) ? size : sizeof(b));
	try_mirror(b);
	try_raid3(b);
	/* Same bytes with the magic and a valid MD5 forced in. */
	uint8_t m[512];
	memcpy(m, b, sizeof(m));
	memcpy(m, "GEOM::MIRROR\0\0\0\0", 16);
	m[16] = 4, m[17] = m[18] = m[19] = 0;
	md5(m, 119, m + 119);
	try_mirror(m);
	memcpy(m, b, sizeof(m));
	memcpy(m, "GEOM::RAID3\0\0\0\0\0", 16);
	m[16] = 5, m[17] = m[18] = m[19] = 0;
	md5(m, 112, m + 112);
	try_raid3(m);
	return 0;
}
