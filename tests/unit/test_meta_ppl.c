/* md's partial parity log format (meta/md_ppl): checksums against a bitwise
 * crc32c, a header laid out byte by byte from the kernel's structs
 * (include/uapi/linux/raid/md_p.h), a log the real kernel wrote
 * (tests/vectors/ppl), what an entry covers in the kernel's own examples
 * (the comments of drivers/md/raid5-ppl.c), the area checks of
 * ppl_validate_rdev and mdadm's placement, and the decoder's refusals. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "meta/md_ppl.h"

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

/* struct ppl_header: reserved[512] (0xff), signature @512, padding @516,
 * generation @520, entries_count @528, checksum @532, entries @536, each
 * struct ppl_header_entry of 24 bytes: data_sector u64, pp_size,
 * data_size, parity_disk, checksum. The checksum is ~crc32c over the 4 KiB
 * with its own field zero. */
static void ref_header(uint8_t *b, uint32_t sig, uint64_t gen, int n, const struct md_ppl_entry *e)
{
	memset(b, 0, 4096);
	memset(b, 0xff, 512);
	le32(b + 512, sig);
	le64(b + 520, gen);
	le32(b + 528, (uint32_t)n);
	for (int i = 0; i < n; i++) {
		uint8_t *p = b + 536 + 24 * i;
		le64(p, e[i].data_sector);
		le32(p + 8, e[i].pp_size);
		le32(p + 12, e[i].data_size);
		le32(p + 16, e[i].parity_disk);
		le32(p + 20, e[i].checksum);
	}
	le32(b + 532, ~crc_ref(~0u, b, 4096));
}

static void checksums_match_reference(void)
{
	uint64_t rs = 0x9911;
	uint8_t buf[8192];
	t_fill(&rs, buf, sizeof(buf));
	int bad = 0;
	for (int t = 0; t < 200; t++) {
		size_t off = t_rand(&rs) % 64, len = t_rand(&rs) % (sizeof(buf) - 64);
		bad += md_ppl_checksum(buf + off, len) != (uint32_t)~crc_ref(~0u, buf + off, len);
	}
	CHECK_EQ_U64(bad, 0);
	uint8_t uuid[16];
	for (int i = 0; i < 16; i++)
		uuid[i] = (uint8_t)(0xa0 + i);
	CHECK_EQ_U64(md_ppl_signature(uuid), (uint32_t)~crc_ref(~0u, uuid, 16));
	/* The standard CRC-32C check value. */
	CHECK_EQ_U64(md_ppl_checksum("123456789", 9), 0xe3069283u);
}

static void hand_built_header_matches_encoder(void)
{
	struct md_ppl_entry e[3] = {
	    {.data_sector = 8,
	     .pp_size = 12288,
	     .data_size = 24576,
	     .parity_disk = 3,
	     .checksum = 0x11223344},
	    {.data_sector = 1ull << 33,
	     .pp_size = 0,
	     .data_size = 3 << 16,
	     .parity_disk = 0,
	     .checksum = 0},
	    {.data_sector = 200,
	     .pp_size = 4096,
	     .data_size = 4096,
	     .parity_disk = 63,
	     .checksum = 0xdeadbeef},
	};
	uint8_t want[4096], got[4096];
	ref_header(want, 0x19af5441, 0x0102030405060708ull, 3, e);
	struct md_ppl_header h;
	md_ppl_init(&h, 0x19af5441, 0x0102030405060708ull);
	h.entries_count = 3;
	memcpy(h.entries, e, sizeof(e));
	md_ppl_encode(&h, got);
	CHECK(memcmp(want, got, 4096) == 0);
	CHECK_EQ_U64(h.checksum, rd32(want + 532));
	struct md_ppl_header d;
	char err[256];
	CHECK(md_ppl_decode(want, &d, err, sizeof(err)) == 0);
	CHECK_EQ_U64(d.signature, 0x19af5441);
	CHECK_EQ_U64(d.generation, 0x0102030405060708ull);
	CHECK_EQ_U64(d.entries_count, 3);
	CHECK(memcmp(d.entries, e, sizeof(e)) == 0);
	/* The full table round-trips too. */
	md_ppl_init(&h, 7, 9);
	h.entries_count = MD_PPL_MAX_ENTRIES;
	for (int i = 0; i < MD_PPL_MAX_ENTRIES; i++)
		h.entries[i] = (struct md_ppl_entry){(uint64_t)i * 8, 4096, 4096, (uint32_t)i % 5,
		                                     (uint32_t)i * 77};
	md_ppl_encode(&h, got);
	CHECK(md_ppl_decode(got, &d, err, sizeof(err)) == 0);
	CHECK(d.entries_count == MD_PPL_MAX_ENTRIES &&
	      !memcmp(d.entries, h.entries, sizeof(h.entries)));
	/* 148 entries end at 536 + 148 * 24 = 4088: md's PPL_HDR_MAX_ENTRIES. */
	CHECK_EQ_U64(536 + MD_PPL_MAX_ENTRIES * 24, 4088);
}

/* The empty header mdadm writes at create (write_init_ppl1) and md at every
 * assembly (ppl_write_empty_header). */
static void empty_header_as_mdadm_writes_it(void)
{
	uint8_t want[4096], got[4096];
	ref_header(want, 0xfb1aa42a, 0, 0, NULL);
	struct md_ppl_header h;
	md_ppl_init(&h, 0xfb1aa42a, 0);
	md_ppl_encode(&h, got);
	CHECK(memcmp(want, got, 4096) == 0);
	/* The one the kernel wrote (first mdvm run of this work): checksum
	 * 0xd2ece611 for signature 0xfb1aa42a. */
	CHECK_EQ_U64(h.checksum, 0xd2ece611u);
}

static uint8_t *read_vector(size_t *len)
{
	FILE *f = fopen("tests/vectors/ppl/kernel-r5-ppl.bin", "rb");
	if (!f)
		return NULL;
	uint8_t *b = malloc(1 << 18);
	*len = fread(b, 1, 1 << 18, f);
	fclose(f);
	return b;
}

/* A log the kernel wrote (see tests/vectors/ppl/README.md). */
static void kernel_log_decodes(void)
{
	size_t len = 0;
	uint8_t *v = read_vector(&len);
	CHECKF(v && len == 135168, "tests/vectors/ppl/kernel-r5-ppl.bin missing or short");
	if (!v || len != 135168) {
		free(v);
		return;
	}
	const uint8_t *sb = v, *area = v + 4096, *d0 = v + 102400, *d2 = v + 118784;
	uint32_t sig = md_ppl_signature(sb + 16);
	CHECK_EQ_U64(rd32(sb + 8), MD_FEATURE_MULTIPLE_PPLS);
	CHECK_EQ_U64(rd32(sb + 96), 8u | 2048u << 16); /* offset 8, size 2048 */
	struct md_ppl_limits lim = {
	    .chunk_sectors = 32, .data_disks = 3, .array_sectors = 1u << 20};
	/* md's walk (ppl_load_distributed): from offset 0 while the checksum,
	 * the signature and rising generations hold. */
	uint64_t off = 0, gen = 0;
	int units = 0;
	struct md_ppl_header h, last;
	memset(&last, 0, sizeof(last));
	char err[256];
	while (off + 8 <= 192) {
		if (md_ppl_decode(area + off * 512, &h, err, sizeof(err)) != 0)
			break;
		CHECK_EQ_U64(h.signature, sig);
		CHECK(h.generation == gen + 1);
		CHECK_EQ_U64(h.entries_count, 1);
		const struct md_ppl_entry *e = &h.entries[0];
		CHECK_EQ_U64(e->parity_disk, 3);
		struct md_ppl_extent x;
		CHECKF(md_ppl_entry_extent(e, &lim, &x, err, sizeof(err)) == 0, "%s", err);
		if (e->pp_size) {
			CHECK_EQ_U64(e->checksum,
			             md_ppl_checksum(area + (off + 8) * 512, e->pp_size));
			CHECK(x.data_disks == 1 && x.strip_sectors == 8);
		} else {
			CHECK(e->data_size == 49152 && e->data_sector == 0);
			CHECK(x.data_disks == 3 && x.strip_sectors == 32 && x.last == 96);
		}
		gen = h.generation;
		last = h;
		units++;
		off += 8 + e->pp_size / 512;
	}
	CHECK_EQ_U64(units, 12);
	CHECK_EQ_U64(off, 184);
	/* The last unit: data index 1, row 3 (array sector 56); its partial
	 * parity is what the write left alone, data indices 0 and 2, row 3. */
	CHECK_EQ_U64(last.entries[0].data_sector, 56);
	const uint8_t *pp = area + (off - 8) * 512;
	int bad = 0;
	for (int i = 0; i < 4096; i++)
		bad += pp[i] != (d0[3 * 4096 + i] ^ d2[3 * 4096 + i]);
	CHECK_EQ_U64(bad, 0);
	free(v);
}

static void refusals(void)
{
	uint8_t b[4096];
	struct md_ppl_entry e = {.data_sector = 0, .pp_size = 4096, .data_size = 4096};
	ref_header(b, 1, 1, 1, &e);
	struct md_ppl_header h;
	char err[256];
	b[600] ^= 1;
	err[0] = 0;
	CHECK(md_ppl_decode(b, &h, err, sizeof(err)) == -EILSEQ);
	CHECKF(strstr(err, "checksum"), "%s", err);
	/* A valid checksum over an impossible count. */
	ref_header(b, 1, 1, 1, &e);
	le32(b + 528, MD_PPL_MAX_ENTRIES + 1);
	le32(b + 532, 0);
	le32(b + 532, ~crc_ref(~0u, b, 4096));
	err[0] = 0;
	CHECK(md_ppl_decode(b, &h, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "149 entries"), "%s", err);

	struct md_ppl_limits l = {.chunk_sectors = 32, .data_disks = 3, .array_sectors = 900};
	static const struct {
		struct md_ppl_entry e;
		const char *word;
	} bad[] = {
	    {{0, 100, 4096, 0, 0}, "whole 512-byte"},
	    {{0, 0, 0, 0, 0}, "covers no data"},
	    {{0, 32768, 32768, 0, 0}, "exceeds the chunk"},
	    {{0, 4096, 12288 + 4096, 0, 0}, "times pp_size"},
	    {{0, 4096, 6144, 0, 0}, "times pp_size"},
	    {{0, 0, 4096, 0, 0}, "full-stripe"},
	    {{24, 8192, 8192, 0, 0}, "leave the chunk"},
	    {{40, 16384, 16384 * 3, 0, 0}, "starts inside a chunk"},
	    {{64, 4096, 8192, 0, 0}, "next"},
	    {{864, 4096, 12288, 0, 0}, "past the array"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct md_ppl_extent x;
		err[0] = 0;
		int rc = md_ppl_entry_extent(&bad[i].e, &l, &x, err, sizeof(err));
		CHECKF(rc == -EINVAL && strstr(err, bad[i].word), "case %zu: %d %s", i, rc, err);
	}
}

/* The cases drawn in raid5-ppl.c (16K chunk, 3 data disks). */
static void extents_as_the_kernel_draws_them(void)
{
	struct md_ppl_limits l = {.chunk_sectors = 32, .data_disks = 3, .array_sectors = 1 << 20};
	struct md_ppl_extent x;
	char err[256];
	/* The header comment: dd0 and dd1 written in rows 8..31: data_sector
	 * 8, data_size 3 * 2 * 4k, pp_size 3 * 4k. */
	struct md_ppl_entry e = {.data_sector = 8, .pp_size = 12288, .data_size = 24576};
	CHECK(md_ppl_entry_extent(&e, &l, &x, err, sizeof(err)) == 0);
	CHECK(x.first == 8 && x.data_disks == 2 && x.strip_sectors == 24 && x.last == 8 + 32 + 24);
	/* case 0: one data disk, pp_size = data_size. */
	e = (struct md_ppl_entry){.data_sector = 32 + 8, .pp_size = 8192, .data_size = 8192};
	CHECK(md_ppl_entry_extent(&e, &l, &x, err, sizeof(err)) == 0);
	CHECK(x.first == 40 && x.data_disks == 1 && x.strip_sectors == 16 && x.last == 56);
	/* case 2: every data disk, no partial parity. */
	e = (struct md_ppl_entry){.data_sector = 96 + 8, .pp_size = 0, .data_size = 3 * 8192};
	CHECK(md_ppl_entry_extent(&e, &l, &x, err, sizeof(err)) == 0);
	CHECK(x.first == 104 && x.data_disks == 3 && x.strip_sectors == 16 &&
	      x.last == 104 + 64 + 16);
	/* cases 3/4: partial parity of a whole chunk, data_size counts what
	 * was written from data_sector on. */
	e = (struct md_ppl_entry){.data_sector = 96, .pp_size = 16384, .data_size = 16384 * 2};
	CHECK(md_ppl_entry_extent(&e, &l, &x, err, sizeof(err)) == 0);
	CHECK(x.first == 96 && x.data_disks == 3 && x.strip_sectors == 32 && x.last == 160);
}

static struct md_sb sb12(uint64_t bblog)
{
	struct md_sb sb;
	memset(&sb, 0, sizeof(sb));
	sb.version = MD_SB_1_2;
	sb.super_offset = 8;
	sb.data_offset = 4096;
	sb.data_size = 45056;
	sb.max_dev = 128;
	sb.chunk_sectors = 128;
	sb.bblog_offset = (uint32_t)bblog;
	sb.bblog_size = bblog ? 8 : 0;
	return sb;
}

static void areas_and_placement(void)
{
	char err[256];
	uint16_t use = 0;
	/* 1.2 as mdadm makes it: the log right after the superblock. */
	struct md_sb sb = sb12(2056);
	md_ppl_set_area(&sb, 8, 2048);
	CHECK(md_ppl_offset(&sb) == 8 && md_ppl_size(&sb) == 2048);
	CHECK(md_ppl_check_area(&sb, 49152, &use, err, sizeof(err)) == 0 && use == 2048);
	CHECK(md_ppl_multi(2048) && md_ppl_unit_space(2048) == 128 * 1024);
	/* A size the kernel rounds: partial parity room to whole 4 KiB. */
	md_ppl_set_area(&sb, 8, 2047);
	CHECK(md_ppl_check_area(&sb, 49152, &use, err, sizeof(err)) == 0 && use == 2040);
	md_ppl_set_area(&sb, 8, 15);
	CHECK(md_ppl_check_area(&sb, 49152, &use, err, sizeof(err)) == -ENOSPC);
	CHECKF(strstr(err, "PPL space too small"), "%s", err);
	md_ppl_set_area(&sb, 8, 4096);
	CHECK(md_ppl_check_area(&sb, 49152, &use, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "overlaps with data"), "%s", err);
	md_ppl_set_area(&sb, 0, 64);
	CHECK(md_ppl_check_area(&sb, 49152, &use, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "overlaps with superblock"), "%s", err);
	md_ppl_set_area(&sb, -16, 64);
	CHECK(md_ppl_check_area(&sb, 49152, &use, err, sizeof(err)) == -EINVAL);
	CHECK(!md_ppl_multi(527) && md_ppl_multi(528));
	CHECK(md_ppl_unit_space(128) == 120 * 512);
	/* 1.0: below the bad block log under the superblock. */
	struct md_sb s0;
	memset(&s0, 0, sizeof(s0));
	s0.version = MD_SB_1_0;
	s0.super_offset = 49136;
	s0.data_offset = 0;
	s0.data_size = 49136 - 2056;
	s0.max_dev = 128;
	s0.bblog_offset = (uint32_t)-8;
	s0.bblog_size = 8;
	md_ppl_set_area(&s0, -2056, 2048);
	CHECK(md_ppl_check_area(&s0, 49152, &use, err, sizeof(err)) == 0 && use == 2048);
	md_ppl_set_area(&s0, -2056, 2064);
	CHECK(md_ppl_check_area(&s0, 49152, &use, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "overlaps with superblock"), "%s", err);

	/* mdadm --grow --consistency-policy=ppl (super1 update "ppl"). */
	int16_t off;
	uint16_t size;
	sb = sb12(2056); /* made with PPL room: the whole 1 MiB again */
	CHECK(md_ppl_place_grow(&sb, &off, &size, err, sizeof(err)) == 0 && off == 8 &&
	      size == 2048);
	sb = sb12(8 + 128); /* the bitmap room of a member above 8 GiB */
	CHECK(md_ppl_place_grow(&sb, &off, &size, err, sizeof(err)) == 0 && off == 8 &&
	      size == 128);
	sb = sb12(16); /* a small member's 4 KiB bitmap room */
	CHECK(md_ppl_place_grow(&sb, &off, &size, err, sizeof(err)) == -ENOSPC);
	CHECKF(strstr(err, "Not enough space to add ppl"), "%s", err);
	sb = sb12(0); /* no bad block log: up to the data, at most 1 MiB */
	CHECK(md_ppl_place_grow(&sb, &off, &size, err, sizeof(err)) == 0 && size == 2048);
	CHECK(md_ppl_place_grow(&s0, &off, &size, err, sizeof(err)) == 0 && off == -2056 &&
	      size == 2048);
	s0.data_size = 49136 - 16; /* the gap of a small 1.0 member made without PPL room */
	CHECK(md_ppl_place_grow(&s0, &off, &size, err, sizeof(err)) == -ENOSPC);
}

/* md_sb_init with the PPL policy, as mdadm 4.2 placed it in mdvm (24 MiB
 * members, 64K chunk): 1.2 data offset 4096, bad block log at 2056, the log
 * at 8 (2048 sectors), feature 0x400. */
static void create_places_the_log_as_mdadm(void)
{
	struct md_create_params p;
	memset(&p, 0, sizeof(p));
	p.version = MD_SB_1_2;
	p.level = 5;
	p.layout = 2;
	p.chunk_sectors = 128;
	p.raid_disks = 4;
	p.ppl = true;
	uint64_t devs[4] = {49152, 49152, 49152, 49152};
	char err[256];
	CHECKF(md_create_plan(&p, devs, 4, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U64(p.data_offset, 4096);
	CHECK_EQ_U64(p.size, 45056);
	struct md_sb sb;
	CHECKF(md_sb_init(&sb, &p, 0, 0, NULL, 49152, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U64(sb.feature_map, MD_FEATURE_PPL);
	CHECK(md_ppl_offset(&sb) == 8 && md_ppl_size(&sb) == 2048);
	CHECK_EQ_U64(sb.bblog_offset, 2056);
	uint16_t use;
	CHECKF(md_ppl_check_area(&sb, 49152, &use, err, sizeof(err)) == 0, "%s", err);
	/* Not for other levels or 0.90 (mdadm's and md's refusals). */
	p.level = 6;
	p.data_offset = 0;
	CHECK(md_create_plan(&p, devs, 4, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "only supported for RAID level 5"), "%s", err);
	p.level = 5;
	p.version = MD_SB_0_90;
	CHECK(md_create_plan(&p, devs, 4, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "0.90 metadata does not support PPL"), "%s", err);
}

TEST_MAIN(T(checksums_match_reference), T(hand_built_header_matches_encoder),
          T(empty_header_as_mdadm_writes_it), T(kernel_log_decodes), T(refusals),
          T(extents_as_the_kernel_draws_them), T(areas_and_placement),
          T(create_places_the_log_as_mdadm))
