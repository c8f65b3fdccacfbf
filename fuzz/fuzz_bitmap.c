/* libFuzzer target for the md bitmap header codec. The first 256 bytes are a
 * header (the magic is forced in half the runs so the field checks are
 * reached); what decodes must re-encode to the same bytes up to the
 * cluster-name terminator and the zero padding, decode again to the same
 * struct, and its bit area must stay within what bits/bytes promise. The
 * rest of the input is a bit area for test/assign/count. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "meta/md_bitmap.h"
#include "util/endian.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < MD_BITMAP_SB_BYTES + 1)
		return 0;
	uint8_t b[MD_BITMAP_SB_BYTES], enc[MD_BITMAP_SB_BYTES];
	memcpy(b, data + 1, MD_BITMAP_SB_BYTES - 1);
	b[MD_BITMAP_SB_BYTES - 1] = data[0];
	if (data[0] & 1)
		put_le32(b, MD_BITMAP_MAGIC);
	struct md_bitmap_sb sb, sb2;
	char err[128];
	if (md_bitmap_decode(b, sizeof(b), &sb, err, sizeof(err)) != 0) {
		if (!memchr(err, 0, sizeof(err)) || !err[0])
			abort(); /* a refusal always says why */
		return 0;
	}
	md_bitmap_encode(&sb, enc);
	if (memcmp(enc, b, 72)) /* every numeric field and the uuid survive */
		abort();
	if (md_bitmap_decode(enc, sizeof(enc), &sb2, err, sizeof(err)) != 0 ||
	    memcmp(&sb, &sb2, sizeof(sb)))
		abort();
	uint64_t bits = md_bitmap_bits(&sb);
	if (md_bitmap_bytes(&sb) * 8 < bits || (md_bitmap_bytes(&sb) + MD_BITMAP_SB_BYTES) % 512)
		abort();
	/* Bit helpers over the rest of the input. */
	size_t nb = size - MD_BITMAP_SB_BYTES - 1;
	if (nb == 0)
		return 0;
	uint8_t *area = malloc(nb);
	if (!area)
		return 0;
	memcpy(area, data + MD_BITMAP_SB_BYTES + 1, nb);
	uint64_t n = (uint64_t)nb * 8, before = md_bitmap_count(area, n);
	uint64_t i = (sb.events ^ sb.sync_size) % n;
	bool was = md_bitmap_test(area, i);
	md_bitmap_assign(area, i, !was);
	if (md_bitmap_test(area, i) == was || md_bitmap_count(area, n) != before + (was ? -1 : 1))
		abort();
	free(area);
	return 0;
}
