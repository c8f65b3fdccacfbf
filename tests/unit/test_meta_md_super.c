/* md superblock decode/encode against superblocks the real kernel md and
 * mdadm wrote (shared md-vectors), checked field by field against the
 * `mdadm --examine` text recorded when they were made. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../harness.h"
#include "md_vectors.h"
#include "test_md_memdev.h"
#include "meta/md_super.h"

/* ---- independent references -------------------------------------------- */

/* Checksum the slow way: copy, blank the checksum field, add the words. */
static uint32_t naive_csum(const uint8_t *sbuf, int is_v090)
{
	uint8_t b[4096];
	memcpy(b, sbuf, sizeof(b));
	size_t len;
	if (is_v090) {
		memset(b + 152, 0, 4);
		len = 4096;
	} else {
		memset(b + 216, 0, 4);
		uint32_t maxdev = b[220] | b[221] << 8 | b[222] << 16 | (uint32_t)b[223] << 24;
		len = 256 + 2 * (size_t)maxdev;
		if (len > 4096)
			len = 4096;
	}
	uint64_t s = 0;
	size_t i = 0;
	for (; i + 4 <= len; i += 4) {
		uint32_t w = 0;
		for (int k = 3; k >= 0; k--)
			w = w * 256 + b[i + k];
		s += w;
	}
	if (len - i == 2)
		s += b[i] + 256u * b[i + 1];
	while (s >> 32) /* fold once as md does: low + high, truncated */
		s = (uint32_t)((s & 0xffffffff) + (s >> 32)), s &= 0xffffffff;
	return (uint32_t)s;
}

/* Where the superblock of each version lies, from the md documentation. */
static uint64_t ref_location(enum md_sb_version v, uint64_t sectors)
{
	switch (v) {
	case MD_SB_1_1: return 0;
	case MD_SB_1_2: return 8;
	case MD_SB_1_0: return (sectors - 16) / 8 * 8;
	default: return sectors / 128 * 128 - 128;
	}
}

/* ---- the shared vectors --------------------------------------------------- */

static const char *level_word(int level)
{
	static const struct {
		int l;
		const char *n;
	} t[] = {{-1, "linear"}, {0, "raid0"}, {1, "raid1"},  {4, "raid4"},
	         {5, "raid5"},   {6, "raid6"}, {10, "raid10"}};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].l == level)
			return t[i].n;
	return "?";
}

static void uuid_text(const uint8_t u[16], char *out)
{
	for (int i = 0; i < 16; i++)
		out += sprintf(out, "%s%02x", i && i % 4 == 0 ? ":" : "", u[i]);
}

/* "Mon Nov 30 03:52:07 2026" for seconds since the epoch, UTC. */
static void time_text(uint64_t secs, char *out)
{
	time_t t = (time_t)secs;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%a %b %e %H:%M:%S %Y", &tm);
}

static int expect_u64(const struct mdv_examine *ex, const char *key, uint64_t *v)
{
	const char *s = mdv_get(ex, key);
	if (!s)
		return -1;
	*v = strtoull(s, NULL, 0);
	return 0;
}

static void check_against_log(const char *arr, int i, const struct md_sb *sb,
                              const struct mdv_examine *ex, uint64_t dev_sectors)
{
	const char *v;
	char buf[128];
	uint64_t u;
	int is090 = sb->version == MD_SB_0_90;
	CHECKF((v = mdv_get(ex, "Version")) &&
	           !strcmp(v, is090 ? "0.90.00"
	                            : (sb->version == MD_SB_1_2   ? "1.2"
	                               : sb->version == MD_SB_1_1 ? "1.1"
	                                                          : "1.0")),
	       "%s m%d version %s", arr, i, v ? v : "(none)");
	CHECKF((v = mdv_get(ex, "Raid Level")) && !strcmp(v, level_word(sb->level)),
	       "%s m%d level %d vs %s", arr, i, sb->level, v ? v : "-");
	CHECKF(!expect_u64(ex, "Raid Devices", &u) && u == sb->raid_disks, "%s m%d raid disks", arr,
	       i);
	CHECKF(!expect_u64(ex, "Events", &u) && u == sb->events, "%s m%d events", arr, i);
	uuid_text(sb->set_uuid, buf);
	v = mdv_get(ex, is090 ? "UUID" : "Array UUID");
	CHECKF(v && !strncmp(v, buf, 35), "%s m%d uuid %s vs %s", arr, i, buf, v ? v : "-");
	CHECKF((v = mdv_get(ex, "State")) && !strcmp(v, md_sb_clean(sb) ? "clean" : "active"),
	       "%s m%d state", arr, i);
	time_text(is090 ? sb->ctime : sb->ctime & 0xffffffffffull, buf);
	CHECKF((v = mdv_get(ex, "Creation Time")) && !strcmp(v, buf), "%s m%d ctime %s vs %s", arr,
	       i, buf, v ? v : "-");
	time_text(is090 ? sb->utime : sb->utime & 0xffffffffffull, buf);
	CHECKF((v = mdv_get(ex, "Update Time")) && !strcmp(v, buf), "%s m%d utime %s vs %s", arr, i,
	       buf, v ? v : "-");
	snprintf(buf, sizeof(buf), "%x - correct", sb->sb_csum);
	CHECKF((v = mdv_get(ex, "Checksum")) && !strcmp(v, buf), "%s m%d checksum %s vs %s", arr, i,
	       buf, v ? v : "-");
	if (sb->level == 0 || sb->level >= 4) {
		snprintf(buf, sizeof(buf), "%uK", sb->chunk_sectors / 2);
		CHECKF((v = mdv_get(ex, "Chunk Size")) && !strcmp(v, buf), "%s m%d chunk", arr, i);
	}
	if (sb->level == 5 || sb->level == 6) {
		static const char *names[] = {"left-asymmetric", "right-asymmetric",
		                              "left-symmetric", "right-symmetric"};
		v = mdv_get(ex, "Layout");
		CHECKF(v && sb->layout < 4 && !strcmp(v, names[sb->layout]), "%s m%d layout", arr,
		       i);
	}
	if (sb->level == 10) {
		snprintf(buf, sizeof(buf), "near=%u", sb->layout & 255);
		CHECKF((v = mdv_get(ex, "Layout")) && !strcmp(v, buf) && (sb->layout >> 8) == 1,
		       "%s m%d raid10 layout %x", arr, i, sb->layout);
	}
	if (is090) {
		CHECKF(!expect_u64(ex, "Used Dev Size", &u) && u * 2 == sb->size,
		       "%s m%d used size", arr, i);
		CHECKF(!expect_u64(ex, "Total Devices", &u) && u == sb->v0.nr_disks, "%s m%d nr",
		       arr, i);
		CHECKF(!expect_u64(ex, "Active Devices", &u) && u == sb->v0.active_disks,
		       "%s m%d active", arr, i);
		CHECKF(sb->super_offset == ref_location(MD_SB_0_90, dev_sectors),
		       "%s m%d 0.90 location", arr, i);
		CHECKF(md_sb_role(sb) == i, "%s m%d role %d", arr, i, md_sb_role(sb));
		return;
	}
	snprintf(buf, sizeof(buf), "0x%x", sb->feature_map);
	CHECKF((v = mdv_get(ex, "Feature Map")) && !strcmp(v, buf), "%s m%d features", arr, i);
	CHECKF((v = mdv_get(ex, "Name")) && !strncmp(v, sb->set_name, strlen(sb->set_name)) &&
	           v[strlen(sb->set_name)] == ' ',
	       "%s m%d name '%s' vs '%s'", arr, i, sb->set_name, v ? v : "-");
	CHECKF(!expect_u64(ex, "Avail Dev Size", &u) && u == sb->data_size, "%s m%d avail", arr, i);
	CHECKF(!expect_u64(ex, "Data Offset", &u) && u == sb->data_offset, "%s m%d data off", arr,
	       i);
	CHECKF(!expect_u64(ex, "Super Offset", &u) && u == sb->super_offset &&
	           u == ref_location(sb->version, dev_sectors),
	       "%s m%d super off", arr, i);
	uuid_text(sb->device_uuid, buf);
	CHECKF((v = mdv_get(ex, "Device UUID")) && !strcmp(v, buf), "%s m%d dev uuid", arr, i);
	/* "512 entries available at offset 16 sectors": 8-byte entries */
	snprintf(buf, sizeof(buf), "%u entries available at offset %d sectors",
	         sb->bblog_size * 512u / 8, (int32_t)sb->bblog_offset);
	CHECKF((v = mdv_get(ex, "Bad Block Log")) && !strcmp(v, buf), "%s m%d bblog %s vs %s", arr,
	       i, buf, v ? v : "-");
	/* mdadm counts free space before the data from 36 KiB past the
	 * superblock (what the kernel reserves) or the end of the bad block log,
	 * whichever is later; and after the data to the end of the member */
	uint64_t bb_end = sb->super_offset + (uint64_t)(int32_t)sb->bblog_offset + sb->bblog_size;
	uint64_t earliest = sb->super_offset + 72 > bb_end ? sb->super_offset + 72 : bb_end;
	snprintf(buf, sizeof(buf), "before=%llu sectors, after=%llu sectors",
	         (unsigned long long)(sb->data_offset - earliest),
	         (unsigned long long)(dev_sectors - sb->data_offset - sb->data_size));
	CHECKF((v = mdv_get(ex, "Unused Space")) && !strcmp(v, buf), "%s m%d unused %s vs %s", arr,
	       i, buf, v ? v : "-");
	if (sb->level == -1) /* size 0 for linear: md uses each member whole */
		CHECKF(!expect_u64(ex, "Used Dev Size", &u) && u == sb->size, "%s m%d used", arr,
		       i);
	v = mdv_get(ex, "Device Role");
	snprintf(buf, sizeof(buf), "Active device %d", md_sb_role(sb));
	CHECKF(v && !strcmp(v, buf), "%s m%d role %s vs %s", arr, i, buf, v ? v : "-");
	/* the array state line, rebuilt from the role table */
	char st[64] = "";
	for (uint32_t s = 0; s < sb->raid_disks && s < 60; s++) {
		int cnt = 0;
		for (uint32_t d = 0; d < sb->max_dev; d++)
			cnt += sb->dev_roles[d] == s;
		strcat(st, cnt == 1 ? "A" : cnt == 0 ? "." : "?");
	}
	CHECKF((v = mdv_get(ex, "Array State")) && !strncmp(v, st, strlen(st)) &&
	           v[strlen(st)] == ' ',
	       "%s m%d array state %s", arr, i, st);
	if (sb->level > 0 && (v = mdv_get(ex, "Array Size"))) {
		uint64_t data = sb->level == 1   ? 1
		                : sb->level == 6 ? sb->raid_disks - 2
		                : sb->level == 10
		                    ? sb->raid_disks / ((sb->layout & 255) * (sb->layout >> 8))
		                    : sb->raid_disks - 1;
		CHECKF(strtoull(v, NULL, 10) == sb->size * data / 2, "%s m%d array size", arr, i);
	}
}

static void test_shared_vectors(void)
{
	char arrays[64][64];
	int na = mdv_arrays(arrays, 64);
	CHECKF(na >= 8, "found %d arrays under %s/md-vectors/images (set URAID_SHARED)", na,
	       mdv_shared());
	int members = 0;
	for (int a = 0; a < na; a++) {
		for (int i = 0; i < 32; i++) {
			size_t len;
			uint8_t *img = mdv_load_image(arrays[a], i, &len);
			if (!img)
				break;
			members++;
			struct memdev d;
			memdev_init(&d, img, len, arrays[a]);
			struct md_sb sb;
			char err[256] = "";
			int rc = md_sb_load(&d.m, &sb, err, sizeof(err));
			CHECKF(rc == 0, "%s m%d: %s", arrays[a], i, err);
			if (rc == 0) {
				struct mdv_examine ex;
				CHECKF(mdv_examine(arrays[a], i, &ex) == 0, "no log for %s m%d",
				       arrays[a], i);
				check_against_log(arrays[a], i, &sb, &ex, len / 512);
				CHECKF(md_sb_check_features(&sb, err, sizeof(err)) == 0, "%s: %s",
				       arrays[a], err);
				/* bit-exact: encoding the decoded block gives the block back */
				uint8_t enc[4096];
				CHECK(md_sb_encode(&sb, enc, sizeof(enc)) == 0);
				const uint8_t *orig = img + sb.super_offset * 512;
				CHECKF(!memcmp(enc, orig, 4096), "%s m%d: encode(decode) differs",
				       arrays[a], i);
				CHECK(naive_csum(orig, sb.version == MD_SB_0_90) == sb.sb_csum);
			}
			free(img);
		}
	}
	CHECKF(members >= 30, "only %d members decoded", members);
}

/* Every single-byte change in the checksummed range makes decode fail. */
static void flip_all(const uint8_t *orig, enum md_sb_version v, size_t checked, uint64_t *rng)
{
	uint8_t b[4096];
	struct md_sb sb;
	int survived = 0;
	for (size_t off = 0; off < checked; off++) {
		memcpy(b, orig, sizeof(b));
		uint8_t x = (uint8_t)(1 + t_rand(rng) % 255);
		b[off] ^= x;
		if (md_sb_decode(v, b, sizeof(b), &sb, NULL, 0) == 0) {
			survived++;
			fprintf(stderr, "flip at %zu (^%02x) still decodes\n", off, x);
		}
	}
	CHECK(survived == 0);
	/* bytes after the checked range are not part of the superblock */
	if (checked < 4096) {
		memcpy(b, orig, sizeof(b));
		b[4095] ^= 0x5a;
		CHECK(md_sb_decode(v, b, sizeof(b), &sb, NULL, 0) == 0);
	}
}

static void test_flips(void)
{
	uint64_t rng = 42;
	size_t len;
	uint8_t *img = mdv_load_image("raid5-ls", 3, &len);
	CHECK(img != NULL);
	if (img) {
		flip_all(img + 8 * 512, MD_SB_1_2, 256 + 2 * 128, &rng);
		free(img);
	}
	img = mdv_load_image("raid5-e0.90", 1, &len);
	CHECK(img != NULL);
	if (img) {
		flip_all(img + ref_location(MD_SB_0_90, len / 512) * 512, MD_SB_0_90, 4096, &rng);
		free(img);
	}
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static void refix_csum(uint8_t *b)
{
	put32(b + 216, naive_csum(b, 0));
}

static void test_corrupt_fields(void)
{
	size_t len;
	uint8_t *img = mdv_load_image("raid1-3", 0, &len);
	CHECK(img != NULL);
	if (!img)
		return;
	uint64_t dev = len / 512;
	const uint8_t *orig = img + 8 * 512;
	uint8_t b[4096];
	struct md_sb sb;
	char err[256];

	memcpy(b, orig, 4096);
	put32(b + 220, 5000); /* max_dev beyond the block */
	refix_csum(b);
	err[0] = 0;
	CHECK(md_sb_decode(MD_SB_1_2, b, 4096, &sb, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "max_dev"), "message: %s", err);

	memcpy(b, orig, 4096);
	put64(b + 128, dev); /* data offset at the end of the device */
	refix_csum(b);
	CHECK(md_sb_decode(MD_SB_1_2, b, 4096, &sb, err, sizeof(err)) == 0);
	err[0] = 0;
	CHECK(md_sb_check_device(&sb, dev, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "past the end"), "message: %s", err);

	memcpy(b, orig, 4096);
	put64(b + 128, 4); /* data inside the superblock */
	refix_csum(b);
	CHECK(md_sb_decode(MD_SB_1_2, b, 4096, &sb, err, sizeof(err)) == 0);
	CHECK(md_sb_check_device(&sb, dev, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "inside"), "message: %s", err);

	memcpy(b, orig, 4096);
	put64(b + 80, sb.data_size + 1); /* used size beyond the data area */
	refix_csum(b);
	CHECK(md_sb_decode(MD_SB_1_2, b, 4096, &sb, err, sizeof(err)) == 0);
	CHECK(md_sb_check_device(&sb, dev, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "used size"), "message: %s", err);

	memcpy(b, orig, 4096);
	put64(b + 144, 0); /* super_offset of a 1.1 block in a 1.2 place */
	refix_csum(b);
	err[0] = 0;
	CHECK(md_sb_decode(MD_SB_1_2, b, 4096, &sb, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "super_offset"), "message: %s", err);
	/* ... and as 1.1 it decodes but does not sit on this device where claimed */
	CHECK(md_sb_decode(MD_SB_1_1, b, 4096, &sb, err, sizeof(err)) == 0);

	memcpy(b, orig, 4096);
	put32(b + 160, 200); /* dev_number beyond max_dev (128) */
	refix_csum(b);
	err[0] = 0;
	CHECK(md_sb_decode(MD_SB_1_2, b, 4096, &sb, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "dev_number"), "message: %s", err);

	memcpy(b, orig, 4096);
	put32(b + 4, 2); /* major version 2 */
	refix_csum(b);
	CHECK(md_sb_decode(MD_SB_1_2, b, 4096, &sb, err, sizeof(err)) == -EINVAL);
	CHECK(md_sb_decode(MD_SB_1_2, b, 100, &sb, err, sizeof(err)) == -EINVAL);

	/* a member shorter than the data area claims */
	memcpy(b, orig, 4096);
	CHECK(md_sb_decode(MD_SB_1_2, b, 4096, &sb, err, sizeof(err)) == 0);
	CHECK(md_sb_check_device(&sb, dev - 1, err, sizeof(err)) == -EINVAL);
	CHECK(md_sb_check_device(&sb, dev, err, sizeof(err)) == 0);
	CHECK(md_sb_check_device(&sb, 10, err, sizeof(err)) == -ENOSPC);
	free(img);
}

static void test_features(void)
{
	struct md_sb sb;
	memset(&sb, 0, sizeof(sb));
	sb.version = MD_SB_1_2;
	sb.level = 5;
	char err[256];
	static const struct {
		uint32_t bit;
		const char *word;
	} refused[] = {{4, "reshape"},     {32, "reshape"},  {64, "offset"},
	               {256, "clustered"}, {512, "journal"}, {1u << 20, "unknown"}};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		sb.feature_map = refused[i].bit;
		err[0] = 0;
		CHECK(md_sb_check_features(&sb, err, sizeof(err)) == -EOPNOTSUPP);
		CHECKF(strstr(err, refused[i].word), "feature %x: %s", refused[i].bit, err);
	}
	/* 0x80: md's bitmap-based recovery of a re-added member (engine/array.c) */
	sb.feature_map = MD_FEATURE_BITMAP_OFFSET | MD_FEATURE_RECOVERY_OFFSET |
	                 MD_FEATURE_RAID0_LAYOUT | MD_FEATURE_REPLACEMENT |
	                 MD_FEATURE_BAD_BLOCKS | /* the log is judged where it is loaded */
	                 MD_FEATURE_RECOVERY_BITMAP;
	CHECK(md_sb_check_features(&sb, err, sizeof(err)) == 0);
	/* The partial parity log is uraid's own (engine/ppl/): the log judges
	 * level and combinations. */
	sb.feature_map = MD_FEATURE_PPL;
	CHECK(md_sb_check_features(&sb, err, sizeof(err)) == 0);
	sb.feature_map = MD_FEATURE_MULTIPLE_PPLS;
	CHECK(md_sb_check_features(&sb, err, sizeof(err)) == 0);
	sb.feature_map = 0;
	sb.level = -4; /* multipath */
	CHECK(md_sb_check_features(&sb, err, sizeof(err)) == -EOPNOTSUPP);
}

static void test_locations(void)
{
	uint64_t rng = 7;
	for (int i = 0; i < 2000; i++) {
		uint64_t s = 24 + t_rand(&rng) % (1ull << (10 + i % 30));
		for (int v = 0; v < 4; v++) {
			enum md_sb_version ver =
			    (enum md_sb_version[]){MD_SB_0_90, MD_SB_1_0, MD_SB_1_1, MD_SB_1_2}[v];
			int64_t loc = md_sb_location(ver, s);
			if (ver == MD_SB_0_90 && s < 128) {
				CHECK(loc == -ENOSPC);
				continue;
			}
			CHECK_EQ_U64(loc, ref_location(ver, s));
		}
	}
	CHECK(md_sb_location(MD_SB_1_2, 23) == -ENOSPC);
	CHECK(md_sb_location(MD_SB_0_90, 127) == -ENOSPC);
	CHECK(md_sb_location(MD_SB_1_0, 8 * 2048) == 8 * 2048 - 16); /* 16368 in the logs */
}

static void test_roles(void)
{
	struct md_sb sb;
	memset(&sb, 0, sizeof(sb));
	sb.version = MD_SB_1_2;
	sb.max_dev = 8;
	sb.raid_disks = 4;
	const struct {
		uint16_t raw;
		int role;
	} t[] = {{0, 0}, {3, 3}, {0xffff, -1}, {0xfffe, -2}, {0xfffd, -3}};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		sb.dev_number = 5;
		sb.dev_roles[5] = t[i].raw;
		CHECK(md_sb_role(&sb) == t[i].role);
		CHECK(md_sb_set_role(&sb, 6, t[i].role) == 0 && sb.dev_roles[6] == t[i].raw);
	}
	sb.dev_number = 9; /* beyond max_dev: md calls it a spare */
	CHECK(md_sb_role(&sb) == -1);
}

TEST_MAIN(T(test_shared_vectors), T(test_flips), T(test_corrupt_fields), T(test_features),
          T(test_locations), T(test_roles))
