/* Creating superblocks: md_create_plan/md_sb_init against what mdadm 4.2 (in
 * the real kernel, via shared/mdvm) chose for members of 4 MiB .. 20 GiB, an
 * independent statement of the data offset rule up to 10 TiB, round trips
 * through encode/decode and store/load, and (with URAID_MD_WRITE_DIR) member
 * files for tests/integration/examine_mdadm.sh to hand to mdadm --examine. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness.h"
#include "md_vectors.h"
#include "test_md_memdev.h"
#include "meta/md_super.h"

void md_sha1(const void *data, size_t len, uint8_t out[20]); /* src/meta internal */

/* mdadm --create --homehost=mdvmref --name=t --metadata=V --level=L
 * --raid-devices=2 [--chunk=C] [--assume-clean] on two members of `sectors`
 * each, stopped, superblock of the first member read back (mdvm, kernel
 * 6.1.0-57, mdadm 4.2-5). Columns: version, level, chunk KiB (mdadm default
 * 512 where not given), layout, assume-clean, member sectors, then what the
 * superblock held: data_offset, data_size, size, super_offset, bblog offset,
 * bblog size (0.90: size only). */
static const struct mdadm_fact {
	enum md_sb_version v;
	int level, chunk_kib;
	unsigned layout;
	int clean;
	uint64_t sectors, data_offset, data_size, size, super_offset;
	int bblog_offset, bblog_size;
} mdadm_facts[] = {
    {MD_SB_1_2, 1, 0, 0, 1, 8192ull, 2048ull, 6144ull, 6144ull, 8ull, 16, 8},
    {MD_SB_1_2, 5, 64, 2, 1, 8192ull, 2048ull, 6144ull, 6144ull, 8ull, 16, 8},
    {MD_SB_1_2, 0, 512, 1, 0, 8192ull, 4096ull, 4096ull, 0ull, 8ull, 8, 8},
    {MD_SB_1_2, 10, 512, 258, 1, 8192ull, 4096ull, 4096ull, 4096ull, 8ull, 16, 8},
    {MD_SB_1_2, -1, 0, 0, 0, 8192ull, 2048ull, 6144ull, 0ull, 8ull, 8, 8},
    {MD_SB_1_2, 5, 128, 2, 0, 8192ull, 2048ull, 6144ull, 6144ull, 8ull, 16, 8},
    {MD_SB_1_1, 1, 0, 0, 1, 8192ull, 2048ull, 6144ull, 6144ull, 0ull, 16, 8},
    {MD_SB_1_1, 5, 64, 2, 1, 8192ull, 2048ull, 6144ull, 6144ull, 0ull, 16, 8},
    {MD_SB_1_1, 0, 512, 1, 0, 8192ull, 4096ull, 4096ull, 0ull, 0ull, 8, 8},
    {MD_SB_1_1, 10, 512, 258, 1, 8192ull, 4096ull, 4096ull, 4096ull, 0ull, 16, 8},
    {MD_SB_1_1, -1, 0, 0, 0, 8192ull, 2048ull, 6144ull, 0ull, 0ull, 8, 8},
    {MD_SB_1_1, 5, 128, 2, 0, 8192ull, 2048ull, 6144ull, 6144ull, 0ull, 16, 8},
    {MD_SB_1_0, 1, 0, 0, 1, 8192ull, 0ull, 8160ull, 8064ull, 8176ull, -8, 8},
    {MD_SB_1_0, 5, 64, 2, 1, 8192ull, 0ull, 8160ull, 8064ull, 8176ull, -8, 8},
    {MD_SB_1_0, 0, 512, 1, 0, 8192ull, 0ull, 8168ull, 0ull, 8176ull, -8, 8},
    {MD_SB_1_0, 10, 512, 258, 1, 8192ull, 0ull, 8160ull, 7168ull, 8176ull, -8, 8},
    {MD_SB_1_0, -1, 0, 0, 0, 8192ull, 0ull, 8168ull, 0ull, 8176ull, -8, 8},
    {MD_SB_1_0, 5, 128, 2, 0, 8192ull, 0ull, 8160ull, 7936ull, 8176ull, -8, 8},
    {MD_SB_0_90, 1, 0, 0, 1, 8192ull, 0ull, 0ull, 8064ull, 0ull, 0, 0},
    {MD_SB_0_90, 5, 64, 2, 1, 8192ull, 0ull, 0ull, 8064ull, 0ull, 0, 0},
    {MD_SB_0_90, 10, 512, 258, 1, 8192ull, 0ull, 0ull, 7168ull, 0ull, 0, 0},
    {MD_SB_0_90, -1, 0, 0, 0, 8192ull, 0ull, 0ull, 0ull, 0ull, 0, 0},
    {MD_SB_0_90, 5, 128, 2, 0, 8192ull, 0ull, 0ull, 7936ull, 0ull, 0, 0},
    {MD_SB_1_2, 1, 0, 0, 1, 204800ull, 2048ull, 202752ull, 202752ull, 8ull, 16, 8},
    {MD_SB_1_2, 5, 64, 2, 1, 204800ull, 2048ull, 202752ull, 202752ull, 8ull, 16, 8},
    {MD_SB_1_2, 0, 512, 1, 0, 204800ull, 4096ull, 200704ull, 0ull, 8ull, 8, 8},
    {MD_SB_1_2, 10, 512, 258, 1, 204800ull, 4096ull, 200704ull, 200704ull, 8ull, 16, 8},
    {MD_SB_1_2, -1, 0, 0, 0, 204800ull, 2048ull, 202752ull, 0ull, 8ull, 8, 8},
    {MD_SB_1_1, 1, 0, 0, 1, 204800ull, 2048ull, 202752ull, 202752ull, 0ull, 16, 8},
    {MD_SB_1_1, 5, 64, 2, 1, 204800ull, 2048ull, 202752ull, 202752ull, 0ull, 16, 8},
    {MD_SB_1_1, 0, 512, 1, 0, 204800ull, 4096ull, 200704ull, 0ull, 0ull, 8, 8},
    {MD_SB_1_1, 10, 512, 258, 1, 204800ull, 4096ull, 200704ull, 200704ull, 0ull, 16, 8},
    {MD_SB_1_1, -1, 0, 0, 0, 204800ull, 2048ull, 202752ull, 0ull, 0ull, 8, 8},
    {MD_SB_1_0, 1, 0, 0, 1, 204800ull, 0ull, 204768ull, 204672ull, 204784ull, -8, 8},
    {MD_SB_1_0, 5, 64, 2, 1, 204800ull, 0ull, 204768ull, 204672ull, 204784ull, -8, 8},
    {MD_SB_1_0, 0, 512, 1, 0, 204800ull, 0ull, 204776ull, 0ull, 204784ull, -8, 8},
    {MD_SB_1_0, 10, 512, 258, 1, 204800ull, 0ull, 204768ull, 203776ull, 204784ull, -8, 8},
    {MD_SB_1_0, -1, 0, 0, 0, 204800ull, 0ull, 204776ull, 0ull, 204784ull, -8, 8},
    {MD_SB_0_90, 1, 0, 0, 1, 204800ull, 0ull, 0ull, 204672ull, 0ull, 0, 0},
    {MD_SB_0_90, 5, 64, 2, 1, 204800ull, 0ull, 0ull, 204672ull, 0ull, 0, 0},
    {MD_SB_0_90, 10, 512, 258, 1, 204800ull, 0ull, 0ull, 203776ull, 0ull, 0, 0},
    {MD_SB_0_90, -1, 0, 0, 0, 204800ull, 0ull, 0ull, 0ull, 0ull, 0, 0},
    {MD_SB_1_2, 1, 0, 0, 1, 2097152ull, 4096ull, 2093056ull, 2093056ull, 8ull, 16, 8},
    {MD_SB_1_2, 5, 64, 2, 1, 2097152ull, 4096ull, 2093056ull, 2093056ull, 8ull, 16, 8},
    {MD_SB_1_2, 0, 512, 1, 0, 2097152ull, 4096ull, 2093056ull, 0ull, 8ull, 8, 8},
    {MD_SB_1_2, 10, 512, 258, 1, 2097152ull, 4096ull, 2093056ull, 2093056ull, 8ull, 16, 8},
    {MD_SB_1_2, -1, 0, 0, 0, 2097152ull, 4096ull, 2093056ull, 0ull, 8ull, 8, 8},
    {MD_SB_1_1, 1, 0, 0, 1, 2097152ull, 4096ull, 2093056ull, 2093056ull, 0ull, 16, 8},
    {MD_SB_1_1, 5, 64, 2, 1, 2097152ull, 4096ull, 2093056ull, 2093056ull, 0ull, 16, 8},
    {MD_SB_1_1, 0, 512, 1, 0, 2097152ull, 4096ull, 2093056ull, 0ull, 0ull, 8, 8},
    {MD_SB_1_1, 10, 512, 258, 1, 2097152ull, 4096ull, 2093056ull, 2093056ull, 0ull, 16, 8},
    {MD_SB_1_1, -1, 0, 0, 0, 2097152ull, 4096ull, 2093056ull, 0ull, 0ull, 8, 8},
    {MD_SB_1_0, 1, 0, 0, 1, 2097152ull, 0ull, 2097120ull, 2097024ull, 2097136ull, -8, 8},
    {MD_SB_1_0, 5, 64, 2, 1, 2097152ull, 0ull, 2097120ull, 2097024ull, 2097136ull, -8, 8},
    {MD_SB_1_0, 0, 512, 1, 0, 2097152ull, 0ull, 2097128ull, 0ull, 2097136ull, -8, 8},
    {MD_SB_1_0, 10, 512, 258, 1, 2097152ull, 0ull, 2097120ull, 2096128ull, 2097136ull, -8, 8},
    {MD_SB_1_0, -1, 0, 0, 0, 2097152ull, 0ull, 2097128ull, 0ull, 2097136ull, -8, 8},
    {MD_SB_0_90, 1, 0, 0, 1, 2097152ull, 0ull, 0ull, 2097024ull, 0ull, 0, 0},
    {MD_SB_0_90, 5, 64, 2, 1, 2097152ull, 0ull, 0ull, 2097024ull, 0ull, 0, 0},
    {MD_SB_0_90, 10, 512, 258, 1, 2097152ull, 0ull, 0ull, 2096128ull, 0ull, 0, 0},
    {MD_SB_0_90, -1, 0, 0, 0, 2097152ull, 0ull, 0ull, 0ull, 0ull, 0, 0},
    {MD_SB_1_2, 1, 0, 0, 1, 41943040ull, 34816ull, 41908224ull, 41908224ull, 8ull, 136, 8},
    {MD_SB_1_2, 5, 64, 2, 1, 41943040ull, 34816ull, 41908224ull, 41908224ull, 8ull, 136, 8},
    {MD_SB_1_2, 0, 512, 1, 0, 41943040ull, 34816ull, 41908224ull, 0ull, 8ull, 8, 8},
    {MD_SB_1_2, 10, 512, 258, 1, 41943040ull, 34816ull, 41908224ull, 41908224ull, 8ull, 136, 8},
    {MD_SB_1_2, -1, 0, 0, 0, 41943040ull, 34816ull, 41908224ull, 0ull, 8ull, 8, 8},
    {MD_SB_1_1, 1, 0, 0, 1, 41943040ull, 34816ull, 41908224ull, 41908224ull, 0ull, 136, 8},
    {MD_SB_1_1, 5, 64, 2, 1, 41943040ull, 34816ull, 41908224ull, 41908224ull, 0ull, 136, 8},
    {MD_SB_1_1, 0, 512, 1, 0, 41943040ull, 34816ull, 41908224ull, 0ull, 0ull, 8, 8},
    {MD_SB_1_1, 10, 512, 258, 1, 41943040ull, 34816ull, 41908224ull, 41908224ull, 0ull, 136, 8},
    {MD_SB_1_1, -1, 0, 0, 0, 41943040ull, 34816ull, 41908224ull, 0ull, 0ull, 8, 8},
    {MD_SB_1_0, 1, 0, 0, 1, 41943040ull, 0ull, 41942888ull, 41942784ull, 41943024ull, -8, 8},
    {MD_SB_1_0, 5, 64, 2, 1, 41943040ull, 0ull, 41942888ull, 41942784ull, 41943024ull, -8, 8},
    {MD_SB_1_0, 0, 512, 1, 0, 41943040ull, 0ull, 41943016ull, 0ull, 41943024ull, -8, 8},
    {MD_SB_1_0, 10, 512, 258, 1, 41943040ull, 0ull, 41942888ull, 41942016ull, 41943024ull, -8, 8},
    {MD_SB_1_0, -1, 0, 0, 0, 41943040ull, 0ull, 41943016ull, 0ull, 41943024ull, -8, 8},
    {MD_SB_0_90, 1, 0, 0, 1, 41943040ull, 0ull, 0ull, 41942912ull, 0ull, 0, 0},
    {MD_SB_0_90, 5, 64, 2, 1, 41943040ull, 0ull, 0ull, 41942912ull, 0ull, 0, 0},
    {MD_SB_0_90, 10, 512, 258, 1, 41943040ull, 0ull, 0ull, 41942016ull, 0ull, 0, 0},
    {MD_SB_0_90, -1, 0, 0, 0, 41943040ull, 0ull, 0ull, 0ull, 0ull, 0, 0},
};

static struct md_create_params base_params(enum md_sb_version v, int level, uint32_t chunk_kib,
                                           uint32_t layout, uint32_t raid_disks)
{
	struct md_create_params p;
	memset(&p, 0, sizeof(p));
	p.version = v;
	p.level = level;
	p.layout = layout;
	p.chunk_sectors = chunk_kib * 2;
	p.raid_disks = raid_disks;
	snprintf(p.name, sizeof(p.name), "t");
	snprintf(p.homehost, sizeof(p.homehost), "mdvmref");
	for (int i = 0; i < 16; i++)
		p.set_uuid[i] = (uint8_t)(0x11 * i);
	p.ctime = 1764474000;
	return p;
}

static void test_mdadm_facts(void)
{
	size_t n = sizeof(mdadm_facts) / sizeof(mdadm_facts[0]);
	CHECK(n >= 70);
	for (size_t i = 0; i < n; i++) {
		const struct mdadm_fact *f = &mdadm_facts[i];
		struct md_create_params p =
		    base_params(f->v, f->level, (uint32_t)f->chunk_kib, f->layout, 2);
		p.assume_clean = f->clean;
		uint64_t devs[2] = {f->sectors, f->sectors};
		char err[256] = "";
		int rc = md_create_plan(&p, devs, 2, err, sizeof(err));
		CHECKF(rc == 0, "fact %zu: plan: %s", i, err);
		struct md_sb sb;
		uint8_t du[16] = {1, 2, 3};
		rc = md_sb_init(&sb, &p, 0, 0, du, f->sectors, err, sizeof(err));
		CHECKF(rc == 0, "fact %zu: init: %s", i, err);
		if (rc)
			continue;
		CHECKF(sb.size == f->size,
		       "fact %zu (v%d level %d %llu sectors): size %llu, mdadm %llu", i, f->v,
		       f->level, (unsigned long long)f->sectors, (unsigned long long)sb.size,
		       (unsigned long long)f->size);
		CHECK(sb.layout == f->layout);
		CHECK(sb.level == f->level);
		CHECK(sb.chunk_sectors == (uint32_t)f->chunk_kib * 2);
		if (f->v == MD_SB_0_90)
			continue;
		CHECKF(sb.data_offset == f->data_offset,
		       "fact %zu (v%d level %d %llu sectors): data offset %llu, mdadm %llu", i,
		       f->v, f->level, (unsigned long long)f->sectors,
		       (unsigned long long)sb.data_offset, (unsigned long long)f->data_offset);
		CHECKF(sb.data_size == f->data_size, "fact %zu: data size %llu, mdadm %llu", i,
		       (unsigned long long)sb.data_size, (unsigned long long)f->data_size);
		CHECK(sb.super_offset == f->super_offset);
		CHECKF((int32_t)sb.bblog_offset == f->bblog_offset &&
		           sb.bblog_size == f->bblog_size,
		       "fact %zu: bblog %d/%u, mdadm %d/%d", i, (int32_t)sb.bblog_offset,
		       sb.bblog_size, f->bblog_offset, f->bblog_size);
		CHECK(sb.max_dev == 128);
		CHECK(!strcmp(sb.set_name, "mdvmref:t"));
		CHECK(sb.feature_map == 0);
	}
}

/* The data offset rule, stated the other way round: the headroom is the
 * larger of "the largest halving of 128 MiB that is at most 1/1024 of the
 * member" and "the largest halving below four chunks". */
static uint64_t ref_data_offset(uint64_t dev, uint32_t chunk)
{
	uint64_t h_dev = 0, h_chunk = 0;
	for (int k = 0; k <= 18; k++) {
		uint64_t h = 262144ull >> k;
		if (!h_dev && h * 1024 <= dev)
			h_dev = h;
		if (chunk && !h_chunk && h < 4ull * chunk)
			h_chunk = h;
	}
	uint64_t head = h_dev > h_chunk ? h_dev : h_chunk;
	uint64_t bm = dev >= 200ull * 2097152 + 128 ? 256 : dev > 8ull * 2097152 + 8 ? 128 : 8;
	uint64_t off = 24 + bm + head;
	return (off + 2047) / 2048 * 2048;
}

static void test_data_offset_rule(void)
{
	uint64_t rng = 1234;
	static const uint32_t chunks[] = {0, 8, 64, 128, 256, 1024, 2048, 8192};
	for (int i = 0; i < 20000; i++) {
		/* 4 MiB .. 10 TiB, log-uniform */
		int bits = 13 + (int)(t_rand(&rng) % 22);
		uint64_t dev = (1ull << bits) + t_rand(&rng) % (1ull << bits);
		uint32_t chunk = chunks[t_rand(&rng) % 8];
		uint64_t got = md_sb_default_data_offset(MD_SB_1_2, dev, chunk);
		CHECKF(got == ref_data_offset(dev, chunk), "dev %llu chunk %u: %llu vs %llu",
		       (unsigned long long)dev, chunk, (unsigned long long)got,
		       (unsigned long long)ref_data_offset(dev, chunk));
		CHECK(md_sb_default_data_offset(MD_SB_1_1, dev, chunk) == got);
		CHECK(md_sb_default_data_offset(MD_SB_1_0, dev, chunk) == 0);
		CHECK(md_sb_default_data_offset(MD_SB_0_90, dev, chunk) == 0);
	}
	/* Well-known mdadm 4.x values: 1 TB and larger disks get 264192 sectors. */
	CHECK(md_sb_default_data_offset(MD_SB_1_2, 1953525168ull, 1024) == 264192);
	CHECK(md_sb_default_data_offset(MD_SB_1_2, 10ull << 31, 1024) == 264192);
	CHECK(md_sb_default_data_offset(MD_SB_1_2, 16384, 128) == 2048); /* shared vectors */
}

static void test_raid0_layout(void)
{
	/* the shared multi-zone note: 8/12/16 MiB members need a layout */
	struct md_create_params p = base_params(MD_SB_1_2, 0, 512, 1, 3);
	uint64_t devs[3] = {16384, 24576, 32768};
	char err[256];
	CHECK(md_create_plan(&p, devs, 3, err, sizeof(err)) == 0 && p.raid0_layout);
	struct md_sb sb;
	CHECK(md_sb_init(&sb, &p, 1, 1, NULL, devs[1], err, sizeof(err)) == 0);
	CHECK(sb.feature_map == MD_FEATURE_RAID0_LAYOUT && sb.size == 0);
	uint64_t same[3] = {16384, 16384, 16384};
	p = base_params(MD_SB_1_2, 0, 512, 1, 3);
	CHECK(md_create_plan(&p, same, 3, err, sizeof(err)) == 0 && !p.raid0_layout);
	p = base_params(MD_SB_1_2, 0, 512, 0, 3); /* layout 0 ("dangerous"): no flag */
	CHECK(md_create_plan(&p, devs, 3, err, sizeof(err)) == 0 && !p.raid0_layout);
	/* 2 MiB chunks: equal whole-device chunk counts, different data areas */
	p = base_params(MD_SB_1_2, 0, 2048, 1, 2);
	uint64_t off = md_sb_default_data_offset(MD_SB_1_2, 10 * 4096 + 2048, 4096);
	CHECK(off % 4096 == 2048); /* so the two counts can disagree */
	uint64_t two[2] = {10 * 4096 + 2048, 10 * 4096 + 2047};
	CHECK(md_create_plan(&p, two, 2, err, sizeof(err)) == 0 && p.raid0_layout);
	/* odd chunk sizes are refused */
	p = base_params(MD_SB_1_2, 5, 3, 2, 3);
	CHECK(md_create_plan(&p, same, 3, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "power of two"), "%s", err);
	/* explicit data offset: bad block log placement as mdadm */
	struct md_sb s2;
	p = base_params(MD_SB_1_2, 1, 0, 0, 2);
	uint64_t d16[2] = {16384, 16384};
	static const struct {
		uint64_t off;
		int bb_off, bb_size;
	} bb[] = {{16, 0, 0}, {24, 8, 8}, {31, 15, 8}, {32, 16, 8}, {2048, 16, 8}};
	for (size_t i = 0; i < sizeof(bb) / sizeof(bb[0]); i++) {
		p.data_offset = bb[i].off;
		p.size = 0;
		CHECKF(md_create_plan(&p, d16, 2, err, sizeof(err)) == 0, "%s", err);
		CHECK(md_sb_init(&s2, &p, 0, 0, NULL, 16384, err, sizeof(err)) == 0);
		CHECKF((int)s2.bblog_offset == bb[i].bb_off && s2.bblog_size == bb[i].bb_size,
		       "offset %llu: bblog %u/%u", (unsigned long long)bb[i].off, s2.bblog_offset,
		       s2.bblog_size);
		CHECK(md_sb_check_device(&s2, 16384, err, sizeof(err)) == 0);
		CHECK(s2.data_offset == bb[i].off && s2.size == (16384 - bb[i].off) / 128 * 128);
	}
}

static void test_plan_errors(void)
{
	char err[256] = "";
	struct md_create_params p = base_params(MD_SB_1_2, 5, 64, 2, 3);
	uint64_t tiny[3] = {2048, 16384, 16384};
	CHECK(md_create_plan(&p, tiny, 3, err, sizeof(err)) == -ENOSPC);
	CHECKF(strstr(err, "member 0"), "%s", err);
	p = base_params(MD_SB_1_2, 5, 0, 2, 3);
	CHECK(md_create_plan(&p, tiny + 1, 2, err, sizeof(err)) == -EINVAL);
	p = base_params(MD_SB_0_90, 1, 0, 0, 2);
	uint64_t huge[2] = {5ull << 31, 5ull << 31}; /* 5 TiB */
	CHECK(md_create_plan(&p, huge, 2, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "0.90"), "%s", err);
	p = base_params(MD_SB_1_2, 1, 0, 0, 2);
	p.size = 1ull << 40;
	CHECK(md_create_plan(&p, huge, 2, err, sizeof(err)) == -ENOSPC);
	struct md_sb sb;
	p = base_params(MD_SB_0_90, 5, 64, 2, 30);
	CHECK(md_sb_init(&sb, &p, 0, 0, NULL, 1 << 20, err, sizeof(err)) == -EINVAL);
	p = base_params(MD_SB_1_2, 5, 64, 2, 4);
	p.raid_disks = 0;
	CHECK(md_sb_init(&sb, &p, 0, 0, NULL, 1 << 20, err, sizeof(err)) == -EINVAL);
}

/* Random creates of every version: init -> encode -> decode gives the same
 * superblock back, valid for its device, with the roles asked for. */
static void test_init_roundtrip(void)
{
	static const enum md_sb_version vers[] = {MD_SB_0_90, MD_SB_1_0, MD_SB_1_1, MD_SB_1_2};
	static const int levels[] = {-1, 0, 1, 4, 5, 6, 10};
	uint64_t rng = 99;
	for (int it = 0; it < 400; it++) {
		enum md_sb_version v = vers[it % 4];
		int level = levels[t_rand(&rng) % 7];
		uint32_t nd = 2 + (uint32_t)(t_rand(&rng) % 10),
		         spares = (uint32_t)(t_rand(&rng) % 3);
		uint32_t layout = level == 10  ? 0x102
		                  : level >= 5 ? (uint32_t)(t_rand(&rng) % 4)
		                               : 0;
		uint32_t chunk = (uint32_t)(4u << (t_rand(&rng) % 8));
		struct md_create_params p =
		    base_params(v, level, level == 1 ? 0 : chunk, layout, nd);
		p.spare_disks = spares;
		p.assume_clean = t_rand(&rng) & 1;
		uint64_t dev = 16384 + t_rand(&rng) % (1ull << 26);
		uint64_t devs[16];
		for (uint32_t i = 0; i < nd + spares; i++)
			devs[i] = dev + t_rand(&rng) % 100000;
		char err[256] = "";
		CHECKF(md_create_plan(&p, devs, nd + spares, err, sizeof(err)) == 0, "%s", err);
		for (uint32_t i = 0; i < nd + spares; i++) {
			struct md_sb sb, back;
			uint8_t du[16];
			t_fill(&rng, du, sizeof(du));
			int role = i < nd ? (int)i : -1;
			int rc = md_sb_init(&sb, &p, role, i, du, devs[i], err, sizeof(err));
			CHECKF(rc == 0, "init v%d level %d: %s", v, level, err);
			if (rc)
				continue;
			uint8_t buf[4096], buf2[4096];
			CHECK(md_sb_encode(&sb, buf, sizeof(buf)) == 0);
			rc = md_sb_decode(v, buf, sizeof(buf), &back, err, sizeof(err));
			CHECKF(rc == 0, "decode own: %s", err);
			if (v == MD_SB_0_90) { /* implied by the place it was read from */
				back.super_offset = sb.super_offset;
				back.data_size = sb.data_size;
			}
			CHECK(md_sb_encode(&back, buf2, sizeof(buf2)) == 0 &&
			      !memcmp(buf, buf2, 4096));
			CHECK(md_sb_role(&back) == role);
			CHECK(md_sb_clean(&back) == (p.assume_clean || level <= 0));
			CHECK(back.events == (v == MD_SB_0_90 ? 1u : 0u));
			CHECK(md_sb_check_device(&back, devs[i], err, sizeof(err)) == 0);
			CHECK(md_sb_check_features(&back, err, sizeof(err)) == 0);
			CHECK(back.level == level && back.raid_disks == nd);
			CHECK(!memcmp(back.set_uuid, sb.set_uuid, 16));
			if (v != MD_SB_0_90) {
				CHECK(!memcmp(back.device_uuid, du, 16));
				uint32_t a = 0;
				for (uint32_t d = 0; d < back.max_dev; d++)
					a += back.dev_roles[d] < nd;
				CHECK(a == nd);
				CHECK(back.max_dev * 2 + 256 == md_sb_bytes(&back));
			} else {
				CHECK(md_sb_local_to_host(&back, "mdvmref"));
				CHECK(back.v0.nr_disks == nd + spares &&
				      back.v0.spare_disks == spares);
			}
		}
	}
}

/* ---- store / load on a memory member --------------------------------------- */

/* A memdev over a fresh buffer of `len` bytes of `fill`; the caller frees d->buf. */
static void mem_open(struct memdev *d, size_t len, uint8_t fill)
{
	uint8_t *buf = malloc(len);
	if (!buf) {
		perror("malloc");
		exit(1);
	}
	memset(buf, fill, len);
	char name[32];
	snprintf(name, sizeof(name), "mem%zu", len);
	memdev_init(d, buf, len, name);
}

static void test_store_load(void)
{
	static const enum md_sb_version vers[] = {MD_SB_0_90, MD_SB_1_0, MD_SB_1_1, MD_SB_1_2};
	const size_t len = 16u << 20;
	for (int k = 0; k < 4; k++) {
		for (unsigned lb = 512; lb <= 4096; lb *= 8) {
			struct memdev d;
			mem_open(&d, len, 0xa5);
			d.m.logical_block = lb;
			struct md_create_params p = base_params(vers[k], 5, 64, 2, 3);
			uint64_t devs[3] = {len / 512, len / 512, len / 512};
			char err[256] = "";
			CHECK(md_create_plan(&p, devs, 3, err, sizeof(err)) == 0);
			struct md_sb sb, got;
			CHECK(md_sb_init(&sb, &p, 2, 2, NULL, len / 512, err, sizeof(err)) == 0);
			CHECK(md_sb_store(&d.m, &sb) == 0);
			/* only the superblock's own bytes changed */
			size_t changed = 0;
			for (size_t i = 0; i < len; i++)
				changed += d.buf[i] != 0xa5;
			CHECKF(changed <= md_sb_bytes(&sb), "v%d: %zu bytes changed", vers[k],
			       changed);
			int rc = md_sb_load(&d.m, &got, err, sizeof(err));
			CHECKF(rc == 0, "load v%d: %s", vers[k], err);
			CHECK(got.version == vers[k] && md_sb_role(&got) == 2);
			CHECK(got.super_offset == sb.super_offset &&
			      got.data_offset == sb.data_offset);
			uint8_t a[4096], b[4096];
			CHECK(md_sb_encode(&sb, a, 4096) == 0 && md_sb_encode(&got, b, 4096) == 0);
			CHECK(!memcmp(a, b, md_sb_bytes(&sb)));
			/* read-only members are never written */
			d.m.readonly = true;
			CHECK(md_sb_store(&d.m, &sb) == -EROFS);
			free(d.buf);
		}
	}
}

static void test_load_choice(void)
{
	const size_t len = 16u << 20;
	struct memdev d;
	mem_open(&d, len, 0);
	char err[256] = "";
	struct md_sb old, new_, got;
	uint64_t devs[2] = {len / 512, len / 512};
	/* an old 0.90 array, then the member re-used for a 1.2 array */
	struct md_create_params p = base_params(MD_SB_0_90, 1, 0, 0, 2);
	CHECK(md_create_plan(&p, devs, 2, err, sizeof(err)) == 0);
	CHECK(md_sb_init(&old, &p, 0, 0, NULL, len / 512, err, sizeof(err)) == 0);
	CHECK(md_sb_store(&d.m, &old) == 0);
	p = base_params(MD_SB_1_2, 1, 0, 0, 2);
	p.ctime += 1000;
	CHECK(md_create_plan(&p, devs, 2, err, sizeof(err)) == 0);
	CHECK(md_sb_init(&new_, &p, 1, 1, NULL, len / 512, err, sizeof(err)) == 0);
	CHECK(md_sb_store(&d.m, &new_) == 0);
	CHECK(md_sb_load(&d.m, &got, err, sizeof(err)) == 0 && got.version == MD_SB_1_2);
	/* the newer one broken: the older valid one is what is left */
	d.buf[8 * 512 + 40] ^= 1;
	CHECK(md_sb_load(&d.m, &got, err, sizeof(err)) == 0 && got.version == MD_SB_0_90);
	CHECK(md_sb_load_version(&d.m, MD_SB_1_2, &got, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "checksum") && strstr(err, "mem"), "%s", err);
	/* nothing valid at all: the corrupt one is reported */
	memset(d.buf + len - 65536, 0, 65536);
	err[0] = 0;
	CHECK(md_sb_load(&d.m, &got, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "1.2") && strstr(err, "checksum"), "%s", err);
	memset(d.buf, 0, len);
	CHECK(md_sb_load(&d.m, &got, err, sizeof(err)) == -ENOENT);
	CHECKF(strstr(err, "no md superblock"), "%s", err);
	free(d.buf);
	/* too small for anything */
	mem_open(&d, 4096, 0);
	CHECK(md_sb_load(&d.m, &got, err, sizeof(err)) == -ENOENT);
	free(d.buf);
}

static void test_sha1(void)
{
	/* FIPS 180 examples */
	static const struct {
		const char *in;
		const char *hex;
	} kat[] = {
	    {"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
	    {"", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
	    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	     "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
	};
	for (size_t i = 0; i < sizeof(kat) / sizeof(kat[0]); i++) {
		uint8_t h[20];
		char hex[41];
		md_sha1(kat[i].in, strlen(kat[i].in), h);
		for (int k = 0; k < 20; k++)
			sprintf(hex + 2 * k, "%02x", h[k]);
		CHECKF(!strcmp(hex, kat[i].hex), "sha1(%s) = %s", kat[i].in, hex);
	}
	/* the real 0.90 vector says "(local to host mdref)" */
	size_t len;
	uint8_t *img = mdv_load_image("raid5-e0.90", 0, &len);
	CHECK(img != NULL);
	if (img) {
		struct md_sb sb;
		uint64_t at = (len / 512 / 128 * 128 - 128) * 512;
		CHECK(md_sb_decode(MD_SB_0_90, img + at, 4096, &sb, NULL, 0) == 0);
		CHECK(md_sb_local_to_host(&sb, "mdref"));
		CHECK(!md_sb_local_to_host(&sb, "mdvm"));
		free(img);
	}
}

/* ---- member files for mdadm --examine (tests/integration/examine_mdadm.sh) --- */

static const struct write_cfg {
	const char *tag;
	enum md_sb_version v;
	int level;
	uint32_t layout, chunk_kib, ndev, spares;
	uint64_t mib[6]; /* member sizes; 0 = same as the first */
	bool clean;
	const char *name;
} write_cfgs[] = {
    {"r5ls-12", MD_SB_1_2, 5, 2, 64, 4, 0, {16}, false, "r5"},
    {"r6ra-12", MD_SB_1_2, 6, 1, 32, 5, 1, {20}, true, "r6"},
    {"r6ls6-12", MD_SB_1_2, 6, 18, 128, 4, 0, {12}, true, "r6b"},
    {"r1-11", MD_SB_1_1, 1, 0, 0, 3, 0, {100}, true, "mirror"},
    {"r10f2-10", MD_SB_1_0, 10, 0x201, 512, 4, 0, {64}, false, "far"},
    {"r10o2-12", MD_SB_1_2, 10, 0x10201, 256, 3, 0, {40}, true, "offset"},
    {"r10n3-11", MD_SB_1_1, 10, 0x103, 64, 4, 0, {24}, true, "n3"},
    {"r4-12", MD_SB_1_2, 4, 5, 64, 3, 0, {16}, true, "r4"},
    {"r0alt-12", MD_SB_1_2, 0, 2, 512, 3, 0, {8, 12, 16}, false, "zones"},
    {"r0-10", MD_SB_1_0, 0, 1, 32, 2, 0, {8}, false, "stripe"},
    {"lin-12", MD_SB_1_2, -1, 0, 0, 3, 0, {8, 16, 24}, false, "lin"},
    {"r1big-12", MD_SB_1_2, 1, 0, 0, 2, 0, {20480}, true, "big"},
    {"r5la-090", MD_SB_0_90, 5, 0, 128, 3, 1, {8}, false, ""},
    {"r1-090", MD_SB_0_90, 1, 0, 0, 2, 0, {1024}, true, ""},
    {"r10-090", MD_SB_0_90, 10, 0x102, 64, 4, 0, {16}, true, ""},
    {"longname-12", MD_SB_1_2, 1, 0, 0, 2, 0, {8}, true, "a-name-that-is-exactly-31-chars"},
};

static int write_one_cfg(const char *dir, const struct write_cfg *c, FILE *man, uint64_t *rng)
{
	uint32_t n = c->ndev + c->spares;
	uint64_t devs[8];
	for (uint32_t i = 0; i < n; i++)
		devs[i] = (c->mib[i < 6 && c->mib[i] ? i : 0]) << 11;
	struct md_create_params p = base_params(c->v, c->level, c->chunk_kib, c->layout, c->ndev);
	p.spare_disks = c->spares;
	p.assume_clean = c->clean;
	snprintf(p.name, sizeof(p.name), "%s", c->name);
	t_fill(rng, p.set_uuid, 16);
	char err[256] = "";
	if (md_create_plan(&p, devs, n, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: plan: %s\n", c->tag, err);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		char path[1200];
		snprintf(path, sizeof(path), "%s/%s-m%u.img", dir, c->tag, i);
		int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
		if (fd < 0 || ftruncate(fd, (off_t)(devs[i] * 512)) < 0) {
			fprintf(stderr, "%s: cannot create\n", path);
			return -1;
		}
		close(fd);
		struct member *m = NULL;
		if (member_open_file(path, 0, 0, &m, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			return -1;
		}
		struct md_sb sb;
		uint8_t du[16];
		t_fill(rng, du, 16);
		int role = i < c->ndev ? (int)i : -1;
		int rc = md_sb_init(&sb, &p, role, i, du, devs[i], err, sizeof(err));
		if (rc == 0)
			rc = md_sb_store(m, &sb);
		member_close(m);
		if (rc < 0) {
			fprintf(stderr, "%s: %s (%d)\n", path, err, rc);
			return -1;
		}
		char uuid[40];
		md_uuid_format(sb.set_uuid, uuid);
		/* file version level layout chunk_kib raid_disks data_offset
		 * super_offset uuid name role events size */
		fprintf(man, "%s\t%s\t%d\t%u\t%u\t%u\t%llu\t%llu\t%s\t%s\t%d\t%llu\t%llu\n", path,
		        md_sb_version_name(sb.version), sb.level, sb.layout, sb.chunk_sectors / 2,
		        sb.raid_disks, (unsigned long long)sb.data_offset,
		        (unsigned long long)sb.super_offset, uuid,
		        sb.version == MD_SB_0_90 ? "-" : sb.set_name, role,
		        (unsigned long long)sb.events, (unsigned long long)sb.size);
	}
	return 0;
}

/* With URAID_MD_WRITE_DIR set, leave the files there (and manifest.tsv);
 * otherwise write into a temporary directory, read everything back and
 * clean up. */
static void t_write_members(void)
{
	const char *env = getenv("URAID_MD_WRITE_DIR");
	char tmp[] = "/tmp/uraid-md-write.XXXXXX";
	const char *dir = env && *env ? env : mkdtemp(tmp);
	CHECK(dir != NULL);
	if (!dir)
		return;
	char mp[1200];
	snprintf(mp, sizeof(mp), "%s/manifest.tsv", dir);
	FILE *man = fopen(mp, "w");
	CHECK(man != NULL);
	if (!man)
		return;
	uint64_t rng = 2026;
	for (size_t i = 0; i < sizeof(write_cfgs) / sizeof(write_cfgs[0]); i++)
		CHECKF(write_one_cfg(dir, &write_cfgs[i], man, &rng) == 0, "%s", write_cfgs[i].tag);
	fclose(man);
	/* read back what was written */
	man = fopen(mp, "r");
	char line[2048];
	int members = 0;
	while (man && fgets(line, sizeof(line), man)) {
		char *path = strtok(line, "\t");
		struct member *m = NULL;
		char err[256] = "";
		CHECK(member_open_file(path, MEMBER_RDONLY, 0, &m, err, sizeof(err)) == 0);
		if (!m)
			continue;
		struct md_sb sb;
		CHECKF(md_sb_load(m, &sb, err, sizeof(err)) == 0, "%s", err);
		member_close(m);
		members++;
		if (!env || !*env)
			unlink(path);
	}
	if (man)
		fclose(man);
	CHECK(members >= 40);
	if (!env || !*env) {
		unlink(mp);
		rmdir(dir);
	}
}

/* ---- bit-exact against superblocks mdadm itself wrote --------------------- */

/* A large member that only keeps the 64 KiB around its superblock. */
struct winmem {
	struct member m;
	uint64_t base;
	uint8_t win[65536];
};

static ssize_t win_pread(struct member *m, void *b, size_t len, uint64_t off)
{
	struct winmem *w = (struct winmem *)m;
	memset(b, 0, len);
	for (size_t i = 0; i < len; i++)
		if (off + i >= w->base && off + i < w->base + sizeof(w->win))
			((uint8_t *)b)[i] = w->win[off + i - w->base];
	return (ssize_t)len;
}

static ssize_t win_pwrite(struct member *m, const void *b, size_t len, uint64_t off, unsigned f)
{
	struct winmem *w = (struct winmem *)m;
	if (off < w->base || off + len > w->base + sizeof(w->win))
		return -EIO; /* nothing outside the superblock area may be written */
	memcpy(w->win + (off - w->base), b, len);
	return (ssize_t)len;
}

static const struct member_ops win_ops = {
    .kind = "testwin", .pread = win_pread, .pwrite = win_pwrite};

static void test_bitexact_vs_mdadm(void)
{
	/* fuzz/corpus/fuzz_md_super/v1x-mdadm-*: the first member of arrays made
	 * in mdvm with mdadm --create --homehost=mdvmref --name=t --assume-clean
	 * (raid0: plain) on two equal members, read back after mdadm --stop */
	static const struct {
		const char *file;
		enum md_sb_version v;
		int level;
		uint32_t layout, chunk_kib;
		uint64_t sectors;
	} cases[] = {
	    {"v10-mdadm-raid1-1g", MD_SB_1_0, 1, 0, 0, 2097152},
	    {"v11-mdadm-raid10-1g", MD_SB_1_1, 10, 0x102, 512, 2097152},
	    {"v12-mdadm-raid0-20g", MD_SB_1_2, 0, 1, 512, 41943040},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char path[256];
		snprintf(path, sizeof(path), "fuzz/corpus/fuzz_md_super/%s", cases[k].file);
		uint8_t ref[4096];
		FILE *f = fopen(path, "rb");
		CHECKF(f && fread(ref, 1, 4096, f) == 4096, "%s (run from the repo top)", path);
		if (f)
			fclose(f);
		if (!f)
			continue;
		struct md_sb theirs, ours;
		char err[256] = "";
		CHECK(md_sb_decode(cases[k].v, ref, 4096, &theirs, err, sizeof(err)) == 0);
		/* same random and time inputs as mdadm had */
		struct md_create_params p =
		    base_params(cases[k].v, cases[k].level, cases[k].chunk_kib, cases[k].layout, 2);
		memcpy(p.set_uuid, theirs.set_uuid, 16);
		p.ctime = theirs.ctime;
		p.assume_clean = true;
		uint64_t devs[2] = {cases[k].sectors, cases[k].sectors};
		CHECK(md_create_plan(&p, devs, 2, err, sizeof(err)) == 0);
		CHECKF(md_sb_init(&ours, &p, 0, 0, theirs.device_uuid, cases[k].sectors, err,
		                  sizeof(err)) == 0,
		       "%s", err);
		static struct winmem w;
		memset(&w, 0, sizeof(w));
		w.m.ops = &win_ops;
		w.m.size = cases[k].sectors * 512;
		w.m.logical_block = 512;
		w.base = (uint64_t)md_sb_location(cases[k].v, cases[k].sectors) * 512;
		CHECK(md_sb_store(&w.m, &ours) == 0);
		size_t diff = 0, first = 0;
		for (size_t i = 0; i < 4096; i++)
			if (w.win[i] != ref[i] && !diff++)
				first = i;
		CHECKF(diff == 0, "%s: %zu bytes differ from mdadm's, first at %zu", cases[k].file,
		       diff, first);
	}
}

TEST_MAIN(T(test_bitexact_vs_mdadm), T(test_mdadm_facts), T(test_data_offset_rule),
          T(test_raid0_layout), T(test_plan_errors), T(test_init_roundtrip), T(test_store_load),
          T(test_load_choice), T(test_sha1), T(t_write_members))
