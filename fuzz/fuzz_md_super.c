/* libFuzzer target for the md superblock codecs. Each input is a 4 KiB
 * block, tried as every superblock version, once as given and once with its
 * checksum fixed (so the fuzzer gets past the checksum to the field checks).
 * Whatever decodes must survive validation, and re-encode consistently:
 * 1.x keeps every byte (encode(decode(b)) == b), 0.90 is stable after one
 * round (decode(encode(decode(b))) encodes to the same bytes). The tail of
 * the input also drives md_create_plan/md_sb_init with odd parameters. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "meta/md_reshape.h"
#include "meta/md_super.h"
#include "util/endian.h"

static void roundtrip(enum md_sb_version v, const uint8_t *b, uint64_t dev_sectors)
{
	static struct md_sb sb, sb2; /* large: keep off the stack */
	static uint8_t enc[MD_SB_BYTES], enc2[MD_SB_BYTES];
	char err[256];
	if (md_sb_decode(v, b, MD_SB_BYTES, &sb, err, sizeof(err)) != 0)
		return;
	(void)md_sb_check_features(&sb, err, sizeof(err));
	(void)md_sb_check_device(&sb, dev_sectors, err, sizeof(err));
	(void)md_sb_role(&sb);
	(void)md_sb_clean(&sb);
	/* The reshape fields: decoded, judged against the device, and stored
	 * back as decoded (md_sb_reshape_store of what md_sb_reshape read
	 * decodes to the same). */
	struct md_reshape r, r2;
	if (md_sb_reshape(&sb, &r, err, sizeof(err)) == 0 && r.active) {
		(void)md_reshape_check_device(&sb, &r, dev_sectors, err, sizeof(err));
		(void)md_reshape_done(&r, dev_sectors);
		static struct md_sb sb3;
		sb3 = sb;
		md_sb_reshape_store(&sb3, &r);
		if (md_sb_reshape(&sb3, &r2, err, sizeof(err)) != 0 || !r2.active ||
		    r2.position != r.position || r2.backwards != r.backwards ||
		    r2.offset_delta != r.offset_delta || r2.old.raid_disks != r.old.raid_disks ||
		    r2.new.chunk_sectors != r.new.chunk_sectors)
			abort();
	}
	if (md_sb_bytes(&sb) > MD_SB_BYTES)
		abort();
	char uuid[36];
	md_uuid_format(sb.set_uuid, uuid);
	(void)md_sb_local_to_host(&sb, "fuzzhost");
	if (md_sb_encode(&sb, enc, sizeof(enc)) != 0)
		abort(); /* anything decode accepts must encode */
	if (v != MD_SB_0_90 && memcmp(enc, b, MD_SB_BYTES) != 0)
		abort();
	if (md_sb_decode(v, enc, sizeof(enc), &sb2, err, sizeof(err)) != 0)
		abort();
	if (md_sb_encode(&sb2, enc2, sizeof(enc2)) != 0 || memcmp(enc, enc2, MD_SB_BYTES) != 0)
		abort();
	if (sb2.events != sb.events || sb2.level != sb.level || sb2.size != sb.size ||
	    sb2.raid_disks != sb.raid_disks || md_sb_role(&sb2) != md_sb_role(&sb))
		abort();
}

static void fix_checksum(enum md_sb_version v, uint8_t *b)
{
	uint32_t c = md_sb_checksum(v, b);
	put_le32(b + (v == MD_SB_0_90 ? 152 : 216), c);
}

static void create(const uint8_t *d, size_t n)
{
	if (n < 64)
		return;
	static const enum md_sb_version vers[] = {MD_SB_0_90, MD_SB_1_0, MD_SB_1_1, MD_SB_1_2};
	static const int levels[] = {-1, 0, 1, 4, 5, 6, 10, 3, -4};
	struct md_create_params p;
	memset(&p, 0, sizeof(p));
	p.version = vers[d[0] % 4];
	p.level = levels[d[1] % 9];
	p.layout = get_le32(d + 2);
	p.chunk_sectors = get_le32(d + 6) % 65536;
	p.raid_disks = d[10] % 40;
	p.spare_disks = d[11] % 4;
	p.size = get_le64(d + 12) % (1ull << 40);
	if (d[20] & 1)
		p.size = 0;
	p.assume_clean = d[20] & 2;
	p.data_offset = (d[20] & 4) ? get_le32(d + 21) : 0;
	memcpy(p.name, d + 25, 8);
	memcpy(p.homehost, "fuzz", 5);
	memcpy(p.set_uuid, d + 33, 8);
	uint64_t devs[44];
	unsigned nd = p.raid_disks + p.spare_disks;
	uint64_t base = get_le64(d + 40) % (1ull << 44);
	for (unsigned i = 0; i < nd; i++)
		devs[i] = base + i * 4096;
	char err[256];
	if (nd == 0 || md_create_plan(&p, devs, nd, err, sizeof(err)) != 0)
		return;
	static struct md_sb sb, back;
	static uint8_t enc[MD_SB_BYTES];
	for (unsigned i = 0; i < nd; i++) {
		int role = i < p.raid_disks ? (int)i : -1;
		if (md_sb_init(&sb, &p, role, i, d + 33, devs[i], err, sizeof(err)) != 0)
			continue;
		if (md_sb_encode(&sb, enc, sizeof(enc)) != 0)
			abort();
		if (md_sb_decode(p.version, enc, sizeof(enc), &back, err, sizeof(err)) != 0)
			abort();
		if (md_sb_role(&back) != role)
			abort();
		if (p.version != MD_SB_0_90 && md_sb_check_device(&back, devs[i], err, sizeof(err)))
			abort(); /* what init makes fits the device it was made for */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t b[MD_SB_BYTES], fixed[MD_SB_BYTES];
	memset(b, 0, sizeof(b));
	memcpy(b, data, size < sizeof(b) ? size : sizeof(b));
	uint64_t dev = 24;
	if (size >= 8)
		dev += get_le64(data + size - 8) % (1ull << 40);
	static const enum md_sb_version vers[] = {MD_SB_0_90, MD_SB_1_0, MD_SB_1_1, MD_SB_1_2};
	for (int i = 0; i < 4; i++) {
		roundtrip(vers[i], b, dev);
		memcpy(fixed, b, sizeof(fixed));
		fix_checksum(vers[i], fixed);
		roundtrip(vers[i], fixed, dev);
	}
	if (size > MD_SB_BYTES)
		create(data + MD_SB_BYTES, size - MD_SB_BYTES);
	else
		create(data, size);
	return 0;
}
