/* md raid5-cache journal format (meta/md_journal): crc32c against a bitwise
 * reference and the standard check value, meta blocks built byte by byte
 * from the kernel's struct layout, a log written by the real kernel
 * (tests/vectors/journal), and the decoder's refusals. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "meta/md_journal.h"

/* Bit by bit, reflected polynomial 0x82f63b78, no inversion (crc32c_le). */
static uint32_t crc_ref(uint32_t crc, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
	}
	return crc;
}

static void le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void crc32c_matches_reference(void)
{
	/* The standard CRC-32C check value (with the usual inversions). */
	const char *s = "123456789";
	CHECK_EQ_U64(md_crc32c(~0u, s, 9) ^ ~0u, 0xe3069283u);
	CHECK_EQ_U64(crc_ref(~0u, (const uint8_t *)s, 9) ^ ~0u, 0xe3069283u);
	uint64_t rs = 0xc3c3;
	uint8_t *buf = malloc(9000);
	t_fill(&rs, buf, 9000);
	int bad = 0;
	for (int t = 0; t < 300; t++) {
		size_t off = t_rand(&rs) % 64, len = t_rand(&rs) % (9000 - 64);
		uint32_t seed = (uint32_t)t_rand(&rs);
		bad += md_crc32c(seed, buf + off, len) != crc_ref(seed, buf + off, len);
	}
	CHECK_EQ_U64(bad, 0);
	/* Chaining: crc(a||b) = crc(crc(a), b). */
	CHECK_EQ_U64(md_crc32c(md_crc32c(7, buf, 100), buf + 100, 333), md_crc32c(7, buf, 433));
	free(buf);
}

/* A meta block laid out by hand from the kernel's structs (r5l_meta_block:
 * magic, checksum, version, 3 zero bytes, meta_size, seq, position; then
 * r5l_payload_data_parity: type, flags, size, location, checksum[]). */
static void hand_built_block_matches_encoder(void)
{
	uint8_t uuid[16];
	for (int i = 0; i < 16; i++)
		uuid[i] = (uint8_t)(0x10 + i);
	uint32_t seed = crc_ref(~0u, uuid, 16);
	CHECK_EQ_U64(mdj_uuid_seed(uuid), seed);
	uint8_t want[4096];
	memset(want, 0, sizeof(want));
	le32(want, 0x6433c509);
	want[8] = 1;
	le64(want + 16, 0x123456789aULL);
	le64(want + 24, 4096);
	size_t o = 32;
	/* data, array sector 64, csum 0xaabbccdd */
	le16(want + o, 0);
	le32(want + o + 4, 8);
	le64(want + o + 8, 64);
	le32(want + o + 16, 0xaabbccdd);
	o += 20;
	/* raid6 parity: P and Q checksums, stripe sector 24 */
	le16(want + o, 1);
	le32(want + o + 4, 16);
	le64(want + o + 8, 24);
	le32(want + o + 16, 0x01020304);
	le32(want + o + 20, 0x05060708);
	o += 24;
	/* flush of stripe 1000 */
	le16(want + o, 2);
	le32(want + o + 4, 8);
	le64(want + o + 8, 1000);
	o += 16;
	le32(want + 12, (uint32_t)o);
	le32(want + 4, crc_ref(seed, want, 4096));

	struct mdj_meta *m = calloc(1, sizeof(*m));
	mdj_init(m, 0x123456789aULL, 4096);
	CHECK(mdj_add_data(m, 64, 0xaabbccdd) == 0);
	CHECK(mdj_add_parity(m, 24, 0x01020304, 0x05060708, true) == 0);
	CHECK(mdj_add_flush(m, 1000) == 0);
	CHECK_EQ_U64(mdj_pages(m), 3);
	uint8_t got[4096];
	mdj_encode(m, seed, got);
	CHECK(memcmp(got, want, 4096) == 0);

	struct mdj_meta *d = calloc(1, sizeof(*d));
	CHECK(mdj_decode(want, seed, d, NULL, 0) == 0);
	CHECK_EQ_U64(d->seq, 0x123456789aULL);
	CHECK_EQ_U64(d->position, 4096);
	CHECK_EQ_U64(d->meta_size, o);
	CHECK(d->npay == 3);
	if (d->npay == 3) {
		CHECK(d->pay[0].type == MDJ_DATA && d->pay[0].location == 64 &&
		      d->pay[0].csum[0] == 0xaabbccdd && d->pay[0].log_pages == 1);
		CHECK(d->pay[1].type == MDJ_PARITY && d->pay[1].sectors == 16 &&
		      d->pay[1].csum[1] == 0x05060708 && d->pay[1].log_pages == 2);
		CHECK(d->pay[2].type == MDJ_FLUSH && d->pay[2].location == 1000 &&
		      d->pay[2].log_pages == 0);
	}
	/* The wrong seed (another array) does not validate. */
	CHECK(mdj_decode(want, seed ^ 1, d, NULL, 0) == -EILSEQ);
	free(m);
	free(d);
}

static void round_trip_full_block(void)
{
	uint64_t rs = 0x70ad;
	struct mdj_meta *m = calloc(1, sizeof(*m)), *d = calloc(1, sizeof(*d));
	mdj_init(m, 99, 8);
	int n = 0;
	for (;;) {
		int rc = t_rand(&rs) % 3
		             ? mdj_add_data(m, t_rand(&rs) & ~7ull, (uint32_t)t_rand(&rs))
		             : mdj_add_parity(m, t_rand(&rs) & ~7ull, (uint32_t)t_rand(&rs),
		                              (uint32_t)t_rand(&rs), t_rand(&rs) & 1);
		if (rc == -ENOSPC)
			break;
		n++;
	}
	CHECK(n > 150 && mdj_meta_bytes(m) <= 4096 && mdj_meta_bytes(m) > 4096 - 24);
	uint8_t b[4096], b2[4096];
	mdj_encode(m, 0xfeed, b);
	CHECK(mdj_decode(b, 0xfeed, d, NULL, 0) == 0);
	CHECK(d->npay == n);
	mdj_encode(d, 0xfeed, b2);
	CHECK(memcmp(b, b2, 4096) == 0);
	CHECK_EQ_U64(mdj_pages(d), mdj_pages(m));
	free(m);
	free(d);
}

static void decoder_refuses_bad_blocks(void)
{
	struct mdj_meta *m = calloc(1, sizeof(*m)), *d = calloc(1, sizeof(*d));
	mdj_init(m, 5, 0);
	mdj_add_data(m, 8, 1);
	uint8_t b[4096];
	char err[128];
	mdj_encode(m, 3, b);
	CHECK(mdj_decode(b, 3, d, err, sizeof(err)) == 0);
	b[100] ^= 1; /* beyond meta_size, but the checksum covers the block */
	CHECK(mdj_decode(b, 3, d, err, sizeof(err)) == -EILSEQ);
	b[100] ^= 1;
	b[0] ^= 1;
	CHECK(mdj_decode(b, 3, d, err, sizeof(err)) == -ENOENT);
	b[0] ^= 1;
	b[8] = 2; /* version */
	CHECK(mdj_decode(b, 3, d, err, sizeof(err)) == -ENOENT);
	b[8] = 1;
	/* Malformed but correctly checksummed: each must be -EINVAL. */
	static const struct {
		size_t off;
		uint32_t v;
	} bad[] = {
	    {12, 4097}, /* meta_size beyond the block */
	    {12, 16},   /* meta_size inside the header */
	    {12, 40},   /* payload cut by meta_size */
	    {36, 24},   /* data payload of 3 pages */
	    {32, 7},    /* unknown payload type */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t c[4096];
		memcpy(c, b, 4096);
		if (bad[i].off == 32)
			le16(c + 32, (uint16_t)bad[i].v);
		else
			le32(c + bad[i].off, bad[i].v);
		le32(c + 4, 0);
		le32(c + 4, crc_ref(3, c, 4096));
		CHECKF(mdj_decode(c, 3, d, err, sizeof(err)) == -EINVAL, "case %zu", i);
	}
	free(m);
	free(d);
}

/* A log the kernel wrote (see tests/vectors/journal/README.md). */
static void kernel_log_decodes(void)
{
	FILE *f = fopen("tests/vectors/journal/kernel-r5-wt.bin", "rb");
	CHECK(f != NULL);
	if (!f)
		return;
	uint8_t *v = malloc(36864);
	CHECK(fread(v, 1, 36864, f) == 36864);
	fclose(f);
	const uint8_t *sb = v, *log = v + 4096;
	CHECK_EQ_U64(rd32(sb), 0xa92b4efc);
	CHECK(sb[0x100 + 2 * 0] == 0xfd && sb[0x100 + 1] == 0xff); /* dev 0: journal */
	uint32_t seed = mdj_uuid_seed(sb + 16);
	struct mdj_meta *m = calloc(1, sizeof(*m));
	char err[128];
	CHECKF(mdj_decode(log, seed, m, err, sizeof(err)) == 0, "%s", err);
	uint64_t s0 = m->seq;
	CHECK(m->position == 0 && m->npay == 0 && m->meta_size == 32);
	CHECKF(mdj_decode(log + 4096, seed, m, err, sizeof(err)) == 0, "%s", err);
	CHECK(m->position == 8 && m->seq == s0 + 10001 && m->npay == 0);
	/* Units at 16 (sectors 16..39) and 40: data page + parity page each. */
	for (int u = 0; u < 2; u++) {
		size_t pos = 16 + 24 * (size_t)u;
		CHECKF(mdj_decode(log + pos * 512, seed, m, err, sizeof(err)) == 0, "%s", err);
		CHECK(m->position == pos && m->seq == s0 + 10002 + (uint64_t)u);
		CHECK(m->npay == 2);
		if (m->npay != 2)
			continue;
		/* dd wrote 4 KiB pages in order: array sector 8u; left-symmetric,
		 * 2 data disks, 128-sector chunks: parity row = same sector. */
		CHECK(m->pay[0].type == MDJ_DATA && m->pay[0].location == 8 * (uint64_t)u);
		CHECK(m->pay[1].type == MDJ_PARITY && m->pay[1].location == 8 * (uint64_t)u &&
		      m->pay[1].sectors == 8);
		const uint8_t *data = log + (pos + 8) * 512, *par = log + (pos + 16) * 512;
		CHECK_EQ_U64(md_crc32c(seed, data, 4096), m->pay[0].csum[0]);
		CHECK_EQ_U64(md_crc32c(seed, par, 4096), m->pay[1].csum[0]);
		/* The other data page of the row was zero: P equals the data. */
		CHECK(memcmp(data, par, 4096) == 0);
	}
	/* journal_tail in the superblock (recovery_offset) */
	CHECK(rd64(sb + 152) % 8 == 0);
	free(m);
	free(v);
}

#define T(fn)           \
	{               \
#fn, fn \
	}
TEST_MAIN(T(crc32c_matches_reference), T(hand_built_block_matches_encoder),
          T(round_trip_full_block), T(decoder_refuses_bad_blocks), T(kernel_log_decodes))
