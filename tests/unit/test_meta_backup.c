/* mdadm's backup superblock codec (src/meta/md_backup.c) against blocks
 * built here field by field from mdadm's struct mdp_backup_super (Grow.c:
 * magic[16], set_uuid[16], then u64 mtime, devstart, arraystart, length, u32
 * sb_csum, u32 pad1, u64 devstart2, arraystart2, length2, u32 sb_csum2, zero
 * padding to 512) with bsb_csum as written there: an int, shifted left by 3
 * and buf[0] added once per byte. Refusals name the broken field. */
#include <errno.h>

#include "../harness.h"
#include "meta/md_backup.h"

static void le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Grow.c's bsb_csum, as written (char buf, int csum). */
static uint32_t ref_csum(const char *buf, int len)
{
	uint32_t csum = 0;
	for (int i = 0; i < len; i++)
		csum = (csum << 3) + (uint32_t)(int)buf[0];
	return csum;
}

static void ref_block(uint8_t *b, int version, const uint8_t uuid[16], uint64_t mtime, uint64_t dev,
                      uint64_t start, uint64_t len, uint64_t dev2, uint64_t start2, uint64_t len2)
{
	memset(b, 0, 512);
	memcpy(b, version == 2 ? "md_backup_data-2" : "md_backup_data-1", 16);
	memcpy(b + 16, uuid, 16);
	le(b + 32, mtime, 8);
	le(b + 40, dev, 8);
	le(b + 48, start, 8);
	le(b + 56, len, 8);
	le(b + 64, ref_csum((const char *)b, 64), 4);
	le(b + 72, dev2, 8);
	le(b + 80, start2, 8);
	le(b + 88, len2, 8);
	if (version == 2)
		le(b + 96, ref_csum((const char *)b, 96), 4);
}

static const uint8_t U[16] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

static void known_bytes(void)
{
	/* By hand: 'm' = 109, 8^i vanishes mod 2^32 from i = 11, so both
	 * checksums are 109 * (8^11 - 1) / 7 mod 2^32. */
	uint32_t hand = (uint32_t)(109ull * ((1ull << 33) - 1) / 7 % (1ull << 32));
	CHECK_EQ_U64(hand, 0x24924915u);
	uint8_t ref[512], out[512];
	ref_block(ref, 1, U, 1700000000, 8, 0, 1536, 1536, 0, 0);
	CHECK_EQ_U64(ref[64] | ref[65] << 8 | ref[66] << 16 | (uint32_t)ref[67] << 24, hand);
	struct md_backup_sb b = {.version = 1,
	                         .mtime = 1700000000,
	                         .devstart = 8,
	                         .arraystart = 0,
	                         .length = 1536,
	                         .devstart2 = 1536};
	memcpy(b.set_uuid, U, 16);
	md_backup_encode(&b, out);
	CHECK(!memcmp(ref, out, 512));
	struct md_backup_sb d;
	char err[160];
	CHECK(md_backup_decode(ref, &d, err, sizeof(err)) == 0);
	CHECK(!memcmp(&d, &b, sizeof(b)));
	ref_block(ref, 2, U, 42, 8, 3072, 1536, 1536, 4608, 1536);
	b = (struct md_backup_sb){.version = 2,
	                          .mtime = 42,
	                          .devstart = 8,
	                          .arraystart = 3072,
	                          .length = 1536,
	                          .devstart2 = 1536,
	                          .arraystart2 = 4608,
	                          .length2 = 1536};
	memcpy(b.set_uuid, U, 16);
	md_backup_encode(&b, out);
	CHECK(!memcmp(ref, out, 512));
	CHECK(md_backup_decode(ref, &d, err, sizeof(err)) == 0 && !memcmp(&d, &b, sizeof(b)));
	CHECK_EQ_U64(md_backup_csum(ref, 96), ref_csum((const char *)ref, 96));
	/* A first byte with the top bit set is added sign-extended, as a
	 * char on x86. */
	uint8_t hi[8] = {0xf0};
	CHECK_EQ_U64(md_backup_csum(hi, 3), ref_csum((const char *)hi, 3));
}

static void refusals(void)
{
	uint8_t b[512];
	struct md_backup_sb d;
	char err[160];
	ref_block(b, 1, U, 1, 8, 0, 16, 16, 0, 0);
	b[3] = 'X';
	CHECK(md_backup_decode(b, &d, err, sizeof(err)) == -ENOENT && strstr(err, "magic"));
	ref_block(b, 1, U, 1, 8, 0, 16, 16, 0, 0);
	b[64] ^= 1;
	CHECK(md_backup_decode(b, &d, err, sizeof(err)) == -EINVAL && strstr(err, "checksum ("));
	ref_block(b, 2, U, 1, 8, 0, 16, 16, 16, 16);
	b[96] ^= 1;
	CHECKF(md_backup_decode(b, &d, err, sizeof(err)) == -EINVAL && strstr(err, "checksum2"),
	       "%s", err);
	/* A "-1" block carries no second checksum: zero is fine there. */
	ref_block(b, 1, U, 1, 8, 0, 16, 16, 0, 0);
	CHECK(md_backup_decode(b, &d, err, sizeof(err)) == 0);
	ref_block(b, 1, U, 1, 8, UINT64_MAX / 512, 16, 16, 0, 0);
	CHECK(md_backup_decode(b, &d, err, sizeof(err)) == -EINVAL && strstr(err, "first section"));
	ref_block(b, 2, U, 1, 8, 0, 16, UINT64_MAX / 512, 0, 16);
	CHECK(md_backup_decode(b, &d, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "second section"));
}

static void uuid_and_blocks(void)
{
	/* 0.90: the words big-endian in md_sb, mdadm's int[4] copied from a
	 * little-endian host: each word's bytes reversed. */
	struct md_sb sb;
	memset(&sb, 0, sizeof(sb));
	sb.version = MD_SB_0_90;
	sb.v0.minor_version = 90;
	memcpy(sb.set_uuid, U, 16);
	uint8_t out[16];
	md_backup_uuid(&sb, out);
	static const uint8_t want0[16] = {0xef, 0xbe, 0xad, 0xde, 4,  3,  2,  1,
	                                  8,    7,    6,    5,    12, 11, 10, 9};
	CHECK(!memcmp(out, want0, 16));
	sb.version = MD_SB_1_2;
	md_backup_uuid(&sb, out);
	CHECK(!memcmp(out, U, 16));
	/* compute_backup_blocks: lcm(ochunk * odata, nchunk * ndata). */
	CHECK_EQ_U64(md_backup_blocks(128, 3, 128, 4), 1536);
	CHECK_EQ_U64(md_backup_blocks(1024, 3, 1024, 4), 12288);
	CHECK_EQ_U64(md_backup_blocks(16, 3, 16, 4), 192);
	CHECK_EQ_U64(md_backup_blocks(128, 3, 64, 3), 384);
	CHECK_EQ_U64(md_backup_blocks(0, 3, 64, 3), 0);
}

TEST_MAIN(T(known_bytes), T(refusals), T(uuid_and_blocks))
