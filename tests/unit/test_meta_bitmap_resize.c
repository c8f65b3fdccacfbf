/* md_bitmap_resize's pure part (meta/md_bitmap.c): the chunk chosen for a
 * resized bitmap and the bits carried, against a slow model written from
 * md's rules (every pair of old and new chunks compared; the chunk found by
 * counting header and bit bytes sector by sector), random cases with fixed
 * seeds, and hand-worked values. */
#include <stdio.h>

#include "../harness.h"
#include "meta/md_bitmap.h"

/* Header + bits in 512-byte sectors: a chunk per started chunk of
 * blocks, a byte per started 8 bits, a sector per started 512 bytes. */
static uint64_t model_sectors(uint64_t blocks, uint64_t chunk_sectors)
{
	uint64_t nbits = blocks / chunk_sectors + (blocks % chunk_sectors ? 1 : 0);
	uint64_t bytes = 256 + nbits / 8 + (nbits % 8 ? 1 : 0);
	uint64_t sect = 0;
	while (sect * 512 < bytes)
		sect++;
	return sect;
}

static uint32_t model_chunk(uint32_t chunk, uint64_t blocks, uint64_t space)
{
	uint64_t c = chunk;
	while (model_sectors(blocks, c / 512) > space && c < (1ull << 30))
		c += c;
	return (uint32_t)c;
}

static bool model_bit(const uint8_t *old, uint64_t onb, uint64_t oc, uint64_t oblocks, uint64_t nnb,
                      uint64_t nc, bool mark_new, uint64_t j)
{
	uint64_t lo = j * nc, hi = (j + 1) * nc;
	if (mark_new && hi > oblocks)
		return true;
	uint64_t end = onb * oc < nnb * nc ? onb * oc : nnb * nc;
	for (uint64_t i = 0; i < onb; i++) {
		if (!((old[i / 8] >> (i % 8)) & 1))
			continue;
		uint64_t a = i * oc > lo ? i * oc : lo;
		uint64_t b = (i + 1) * oc < hi ? (i + 1) * oc : hi;
		if (b > end)
			b = end;
		if (a < b)
			return true;
	}
	return false;
}

static void chunk_choice(void)
{
	uint64_t rs = 11;
	for (int t = 0; t < 3000; t++) {
		uint32_t chunk = 512u << (t_rand(&rs) % 16);
		uint64_t blocks = 1 + t_rand(&rs) % (1ull << (10 + t_rand(&rs) % 24));
		uint64_t space = 1 + t_rand(&rs) % 300;
		uint32_t got = md_bitmap_resize_chunk(chunk, blocks, space);
		uint32_t want = model_chunk(chunk, blocks, space);
		CHECKF(got == want, "chunk %u blocks %llu space %llu: %u, model %u", chunk,
		       (unsigned long long)blocks, (unsigned long long)space, got, want);
	}
	/* hand-worked: 1.2's space is the old bitmap's sectors. A raid10
	 * near-2 of 4 x 19200 sectors (38400 array sectors) with 64 KiB
	 * chunks has 300 bits: 256 + 38 bytes, one sector; 5 members, 48000
	 * sectors: 375 bits, 256 + 47 bytes, still one sector: the chunk
	 * stays. */
	CHECK(md_bitmap_resize_chunk(65536, 48000, 1) == 65536);
	/* 2048 more bits need a second sector: with one the chunk doubles */
	CHECK(md_bitmap_resize_chunk(512, 2000, 1) == 512);
	CHECK(md_bitmap_resize_chunk(512, 2000 + 8 * 256, 1) == 1024);
	/* 0.90's 120 sectors: 489,472 bits at most */
	CHECK(md_bitmap_resize_chunk(4096, 8ull * 489472, 120) == 4096);
	CHECK(md_bitmap_resize_chunk(4096, 8ull * 489472 + 8, 120) == 8192);
}

static void carry_bits(void)
{
	uint64_t rs = 12;
	uint8_t old[16], nbm[40];
	for (int t = 0; t < 3000; t++) {
		uint64_t oc = 1ull << (t_rand(&rs) % 6);
		uint64_t oblocks = 1 + t_rand(&rs) % (8 * sizeof(old) * oc);
		uint64_t onb = (oblocks + oc - 1) / oc;
		uint64_t nc = oc << (t_rand(&rs) % 3);
		uint64_t nblocks = 1 + t_rand(&rs) % (8 * sizeof(nbm) * nc);
		if (nblocks > 8 * sizeof(old) * oc * 2)
			nblocks = 1 + nblocks % (8 * sizeof(old) * oc * 2);
		uint64_t nnb = (nblocks + nc - 1) / nc;
		if (nnb > 8 * sizeof(nbm))
			continue;
		t_fill(&rs, old, sizeof(old));
		if (t % 4 == 0)
			memset(old, 0, sizeof(old));
		bool mark = t_rand(&rs) % 2;
		memset(nbm, 0xa5, sizeof(nbm));
		md_bitmap_resize_bits(old, onb, oc, oblocks, nbm, nnb, nc, mark);
		for (uint64_t j = 0; j < nnb; j++) {
			bool want = model_bit(old, onb, oc, oblocks, nnb, nc, mark, j);
			CHECKF(
			    md_bitmap_test(nbm, j) == want,
			    "t %d bit %llu: old %llu x %llu (%llu sectors), new %llu x %llu: %d, "
			    "model %d",
			    t, (unsigned long long)j, (unsigned long long)onb,
			    (unsigned long long)oc, (unsigned long long)oblocks,
			    (unsigned long long)nnb, (unsigned long long)nc, md_bitmap_test(nbm, j),
			    want);
		}
		for (uint64_t j = nnb; j < (nnb + 7) / 8 * 8; j++) /* the byte's rest untouched */
			CHECK(md_bitmap_test(nbm, j) == ((0xa5 >> (j % 8)) & 1));
	}
	/* hand-worked: bits 1 and 4 of 6 at chunk 2, chunk doubled: 0 and 2 */
	uint8_t o = (1 << 1) | (1 << 4), n = 0;
	md_bitmap_resize_bits(&o, 6, 2, 12, &n, 3, 4, false);
	CHECK(n == ((1 << 0) | (1 << 2)));
	/* grown to 20 sectors at chunk 4: bits 3, 4 new */
	n = 0;
	md_bitmap_resize_bits(&o, 6, 2, 12, &n, 5, 4, true);
	CHECK(n == ((1 << 0) | (1 << 2) | (1 << 3) | (1 << 4)));
	/* shrunk to 7 sectors at chunk 2: bits 0..3, only bit 1 stays */
	n = 0xff;
	md_bitmap_resize_bits(&o, 6, 2, 12, &n, 4, 2, true);
	CHECK((n & 0xf) == (1 << 1));
}

TEST_MAIN(T(chunk_choice), T(carry_bits))
