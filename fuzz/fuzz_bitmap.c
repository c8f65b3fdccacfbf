/* libFuzzer target for the md bitmap header codec. The first 256 bytes are a
 * header (the magic is forced in half the runs so the field checks are
 * reached); what decodes must re-encode to the same bytes up to the
 * cluster-name terminator and the zero padding, decode again to the same
 * struct, and its bit area must stay within what bits/bytes promise. The
 * rest of the input is a bit area for test/assign/count. The header bytes
 * also drive the placement rules (md_bitmap_plan_add / _090 and the
 * kernel's placement check) over arbitrary superblock fields: no crash, a
 * plan's chunk is a power of two of at least 4 KiB (the one asked for, if
 * any), and below a 1.0 superblock there is room for at least a 4 KiB block
 * and the 8-sector bad-block log. */
#include <errno.h>
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
	{
		static const enum md_sb_version vs[] = {MD_SB_0_90, MD_SB_1_0, MD_SB_1_1,
		                                        MD_SB_1_2};
		struct md_sb msb;
		memset(&msb, 0, sizeof(msb));
		msb.version = vs[data[0] >> 6];
		msb.super_offset = get_le64(b + 8) >> (b[16] % 48);
		msb.data_offset = get_le64(b + 24) >> (b[17] % 48);
		msb.data_size = get_le64(b + 32) >> (b[18] % 48);
		msb.bblog_size = (uint16_t)get_le32(b + 40);
		msb.bblog_offset = get_le32(b + 44);
		msb.max_dev = get_le32(b + 48) % 4096;
		uint64_t secs = get_le64(b + 56) >> (b[19] % 64);
		uint32_t req = b[20] % 3 ? 0 : 1u << (b[21] % 32);
		struct md_bitmap_plan plan;
		int prc = md_bitmap_plan_add(&msb, secs, req, &plan);
		if (prc == 0) {
			if (plan.chunksize < 4096 || (plan.chunksize & (plan.chunksize - 1)))
				abort();
			if (req && plan.chunksize != req)
				abort();
			/* at least one 4 KiB block and an 8-sector log below a 1.0 sb */
			if (msb.version == MD_SB_1_0 && plan.bitmap_offset < 0 &&
			    plan.bitmap_offset > -16)
				abort();
			(void)md_bitmap_check_place(&msb, plan.bitmap_offset, secs,
			                            512 * (uint64_t)b[22], err, sizeof(err));
		} else if (prc != -ENOSPC && prc != -EINVAL) {
			abort();
		}
		if (md_bitmap_plan_090(secs, req, &plan) == 0 &&
		    plan.bitmap_offset != MD_BITMAP_090_OFFSET)
			abort();
	}
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
