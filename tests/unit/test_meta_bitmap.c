/* md write-intent bitmap codec: round trips against a reference encoder
 * written byte by byte from the kernel's field offsets, refusals of broken
 * headers, the bit order, mdadm 4.2's default chunk choice (properties plus
 * hand-worked values), and the host's `mdadm --examine-bitmap` reading what
 * we encode (fields and dirty count). Fixed seeds. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "../harness.h"
#include "meta/md_bitmap.h"

static void ref_put(uint8_t *b, int off, uint64_t v, int width)
{
	for (int i = 0; i < width; i++)
		b[off + i] = (uint8_t)(v >> (8 * i));
}

static void random_sb(uint64_t *rs, struct md_bitmap_sb *s)
{
	memset(s, 0, sizeof(*s));
	s->magic = MD_BITMAP_MAGIC;
	s->version = 3 + (uint32_t)(t_rand(rs) % 3);
	t_fill(rs, s->uuid, 16);
	s->events = t_rand(rs);
	s->events_cleared = t_rand(rs);
	s->sync_size = t_rand(rs) >> 24;
	s->state = (uint32_t)t_rand(rs) & 6;
	s->chunksize = 512u << (t_rand(rs) % 22);
	s->daemon_sleep = 1 + (uint32_t)(t_rand(rs) % 300);
	s->write_behind = (uint32_t)(t_rand(rs) % 16384);
	s->sectors_reserved = (uint32_t)t_rand(rs);
	s->nodes = (uint32_t)(t_rand(rs) % 32);
	int n = (int)(t_rand(rs) % 65);
	for (int i = 0; i < n; i++)
		s->cluster_name[i] = (char)('a' + t_rand(rs) % 26);
}

static void round_trip(void)
{
	uint64_t rs = 0xb17b17;
	for (int it = 0; it < 2000; it++) {
		struct md_bitmap_sb s, d;
		random_sb(&rs, &s);
		uint8_t ref[256] = {0}, got[256];
		ref_put(ref, 0, s.magic, 4);
		ref_put(ref, 4, s.version, 4);
		memcpy(ref + 8, s.uuid, 16);
		ref_put(ref, 24, s.events, 8);
		ref_put(ref, 32, s.events_cleared, 8);
		ref_put(ref, 40, s.sync_size, 8);
		ref_put(ref, 48, s.state, 4);
		ref_put(ref, 52, s.chunksize, 4);
		ref_put(ref, 56, s.daemon_sleep, 4);
		ref_put(ref, 60, s.write_behind, 4);
		ref_put(ref, 64, s.sectors_reserved, 4);
		ref_put(ref, 68, s.nodes, 4);
		memcpy(ref + 72, s.cluster_name, strlen(s.cluster_name));
		memset(got, 0xee, sizeof(got));
		md_bitmap_encode(&s, got);
		CHECKF(!memcmp(ref, got, 256), "iteration %d: encoding differs", it);
		char err[128];
		CHECK(md_bitmap_decode(ref, 256, &d, err, sizeof(err)) == 0);
		CHECK(!memcmp(&s, &d, sizeof(s)));
	}
}

static void refusals(void)
{
	struct md_bitmap_sb s, d;
	uint64_t rs = 7;
	random_sb(&rs, &s);
	uint8_t b[256];
	char err[128];
	struct {
		int off, width;
		uint64_t v;
		const char *word;
	} bad[] = {
	    {0, 4, 0x6d746961, "magic"},
	    {4, 4, 2, "version"},
	    {4, 4, 6, "version"},
	    {52, 4, 0, "chunksize"},
	    {52, 4, 256, "chunksize"},
	    {52, 4, 4096 + 512, "chunksize"},
	    {56, 4, 0, "daemon_sleep"},
	    {60, 4, 16384, "write_behind"},
	    {40, 8, UINT64_MAX, "sync_size"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		md_bitmap_encode(&s, b);
		ref_put(b, bad[i].off, bad[i].v, bad[i].width);
		err[0] = 0;
		CHECKF(md_bitmap_decode(b, 256, &d, err, sizeof(err)) == -EINVAL, "case %zu", i);
		CHECKF(strstr(err, bad[i].word) != NULL, "case %zu: '%s' does not name %s", i, err,
		       bad[i].word);
	}
	md_bitmap_encode(&s, b);
	CHECK(md_bitmap_decode(b, 255, &d, err, sizeof(err)) == -EINVAL);
	CHECK(md_bitmap_decode(NULL, 256, &d, err, sizeof(err)) == -EINVAL);
}

static void bits_and_order(void)
{
	uint64_t rs = 0xb175;
	uint8_t bits[512];
	for (int it = 0; it < 200; it++) {
		memset(bits, 0, sizeof(bits));
		bool model[4096] = {0};
		for (int k = 0; k < 300; k++) {
			uint64_t i = t_rand(&rs) % 4096;
			bool v = t_rand(&rs) % 3 != 0;
			md_bitmap_assign(bits, i, v);
			model[i] = v;
		}
		uint64_t nb = 1 + t_rand(&rs) % 4096, want = 0;
		for (uint64_t i = 0; i < 4096; i++) {
			/* little-endian bit order: bit i is byte i/8, value 1 << i%8 */
			CHECK(((bits[i >> 3] & (1u << (i & 7))) != 0) == model[i]);
			CHECK(md_bitmap_test(bits, i) == model[i]);
			want += i < nb && model[i];
		}
		CHECK_EQ_U64(md_bitmap_count(bits, nb), want);
	}
	struct md_bitmap_sb s = {.chunksize = 65536, .sync_size = 2097152};
	CHECK_EQ_U64(md_bitmap_bits(&s), 16384);
	s.sync_size = 2097153;
	CHECK_EQ_U64(md_bitmap_bits(&s), 16385);
	/* 256 + 2049 bytes round up to 5 sectors: 2560 - 256 bytes of bits */
	CHECK_EQ_U64(md_bitmap_bytes(&s), 2304);
}

static void default_chunk(void)
{
	/* Worked by hand from mdadm 4.2's rule: 1 TiB per member, 128 KiB of
	 * bitmap: 2^28 + 1 bits at 4 KiB halve to 2^19 + 1 <= 1046528 at
	 * 2 MiB; the default is never below 64 MiB. */
	CHECK_EQ_U64(md_bitmap_choose_chunk(1ull << 31, 256, 0), 64u << 20);
	CHECK_EQ_U64(md_bitmap_choose_chunk(1ull << 31, 256, 1u << 20), 0);
	CHECK_EQ_U64(md_bitmap_choose_chunk(1ull << 31, 256, 2u << 20), 2u << 20);
	/* 64 TiB per member: 2^34 + 1 bits at 4 KiB -> 2^19 + 1 at 128 MiB. */
	CHECK_EQ_U64(md_bitmap_choose_chunk(1ull << 37, 256, 0), 128u << 20);
	CHECK_EQ_U64(md_bitmap_choose_chunk(1ull << 31, 1, 0), 0);
	/* Properties over random sizes and rooms. */
	uint64_t rs = 0xc4c;
	for (int it = 0; it < 3000; it++) {
		uint64_t size = 8 + t_rand(&rs) % (1ull << (8 + t_rand(&rs) % 34));
		uint64_t room = 2 + t_rand(&rs) % 2048;
		uint32_t req = t_rand(&rs) % 2 ? 0 : 4096u << (t_rand(&rs) % 16);
		uint32_t c = md_bitmap_choose_chunk(size, room, req);
		uint64_t r = !req && room > 256 ? 256 : room;
		uint64_t max_bits = (r * 512 - 256) * 8;
		if (req && c == 0) {
			/* too small: mdadm's bit estimate at req would not fit */
			CHECK(size * 512 / req >= max_bits);
			continue;
		}
		if (!req && c == 0) {
			/* would need a chunk past the 32-bit field */
			CHECK(size * 512 / (1ull << 31) >= max_bits / 2);
			continue;
		}
		CHECK(c && !(c & (c - 1)));
		if (req)
			CHECK(c == req);
		else
			CHECK(c >= (64u << 20));
		/* mdadm's estimate (size/chunk + 1 bits) fits in the room */
		CHECKF(size * 512 / c + 1 <= max_bits + 1, "size %llu room %llu chunk %u",
		       (unsigned long long)size, (unsigned long long)room, c);
	}
}

/* Placement as mdadm 4.2 creates 1.x arrays, worked by hand. */
static void placement_1x(void)
{
	struct md_bitmap_plan p;
	CHECK(md_bitmap_bm_space(127) == 0);
	CHECK(md_bitmap_bm_space(128) == 8);
	CHECK(md_bitmap_bm_space(8ull << 21) == 8);         /* exactly 8 GiB: 4 KiB */
	CHECK(md_bitmap_bm_space((8ull << 21) + 9) == 128); /* above: 64 KiB */
	CHECK(md_bitmap_bm_space((200ull << 21) + 128) == 256);
	/* 1.2, 1 GiB members: 8 sectors of room, 64 MiB chunks, 16 bits */
	CHECK(md_bitmap_plan_1x(2, 2097152, 0, &p) == 0);
	CHECK(p.bitmap_offset == 8 && p.chunksize == (64u << 20) && p.room == 8 && p.bits == 16);
	/* requested 4 KiB chunks on 1 GiB: 262145 estimated bits > (4096-256)*8 */
	CHECK(md_bitmap_plan_1x(2, 2097152, 4096, &p) == -EINVAL);
	/* 128 KiB chunks: 8193 bits fit in 30720 */
	CHECK(md_bitmap_plan_1x(1, 2097152, 131072, &p) == 0);
	CHECK(p.bitmap_offset == 8 && p.chunksize == 131072 && p.bits == 8192);
	/* 1.0, 1 GiB: (17 bits -> 3 bytes + 256) in one 4 KiB block, 8 below */
	CHECK(md_bitmap_plan_1x(0, 2097152, 0, &p) == 0);
	CHECK(p.bitmap_offset == -16);
	/* 1.0, 100 GiB: room 128 sectors = 522240 bits; 64 KiB chunks would
	 * need 1638401, the smallest that fits is 256 KiB. */
	CHECK(md_bitmap_plan_1x(0, 100ull << 21, 65536, &p) == -EINVAL);
	CHECK(md_bitmap_plan_1x(0, 100ull << 21, 262144, &p) == 0);
	CHECK(md_bitmap_plan_1x(0, 100ull << 21, 1u << 20, &p) == 0);
	/* 1 MiB chunks: 102401 est bits -> 12801 bytes + 256 -> 4 blocks */
	CHECK(p.bitmap_offset == -(4 * 8) - 8);
	CHECK(md_bitmap_plan_1x(2, 100, 0, &p) == -ENOSPC);
	CHECK(md_bitmap_plan_1x(3, 2097152, 0, &p) == -EINVAL);
}

/* mdadm -X reads a bitmap file (header + bits) we wrote. */
static void mdadm_reads_it(void)
{
	char path[] = "/tmp/uraid-bitmap-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	uint64_t rs = 0x3dad;
	struct md_bitmap_sb s;
	random_sb(&rs, &s);
	s.version = MD_BITMAP_V_LE;
	s.state = 0;
	s.nodes = 0;
	s.cluster_name[0] = 0;
	s.events = 1234567;
	s.events_cleared = 1234000;
	s.chunksize = 1u << 20;
	s.daemon_sleep = 5;
	s.write_behind = 0;
	s.sync_size = 409600; /* 200 MiB: 200 bits */
	uint64_t nbits = md_bitmap_bits(&s);
	uint8_t buf[256 + 4096] = {0};
	md_bitmap_encode(&s, buf);
	uint64_t dirty = 0;
	for (uint64_t i = 0; i < nbits; i++)
		if (t_rand(&rs) % 4 == 0) {
			md_bitmap_assign(buf + 256, i, true);
			dirty++;
		}
	size_t len = 256 + md_bitmap_bytes(&s);
	CHECK(write(fd, buf, len) == (ssize_t)len);
	close(fd);
	char cmd[128], line[256], uuid[64];
	snprintf(uuid, sizeof(uuid), "%02x%02x%02x%02x:%02x%02x%02x%02x", s.uuid[0], s.uuid[1],
	         s.uuid[2], s.uuid[3], s.uuid[4], s.uuid[5], s.uuid[6], s.uuid[7]);
	snprintf(cmd, sizeof(cmd), "mdadm -X %s 2>&1", path);
	FILE *p = popen(cmd, "r");
	CHECK(p != NULL);
	int seen = 0;
	while (p && fgets(line, sizeof(line), p)) {
		unsigned long long a, b;
		if (sscanf(line, " Magic : %llx", &a) == 1) {
			seen++;
			CHECK(a == MD_BITMAP_MAGIC);
		}
		if (sscanf(line, " Version : %llu", &a) == 1) {
			seen++;
			CHECK(a == 4);
		}
		if (strstr(line, "UUID :")) {
			seen++;
			CHECKF(strstr(line, uuid) != NULL, "%s vs %s", line, uuid);
		}
		if (sscanf(line, " Events : %llu", &a) == 1) {
			seen++;
			CHECK(a == s.events);
		}
		if (sscanf(line, " Events Cleared : %llu", &a) == 1) {
			seen++;
			CHECK(a == s.events_cleared);
		}
		if (sscanf(line, " Chunksize : %llu MB", &a) == 1) {
			seen++;
			CHECK(a == 1);
		}
		if (sscanf(line, " Sync Size : %llu", &a) == 1) {
			seen++; /* Sync Size is printed in KiB */
			CHECK(a == s.sync_size / 2);
		}
		if (sscanf(line, " Bitmap : %llu bits (chunks), %llu dirty", &a, &b) == 2) {
			seen++;
			CHECK_EQ_U64(a, nbits);
			CHECK_EQ_U64(b, dirty);
		}
		CHECKF(!strstr(line, "WARNING"), "mdadm: %s", line);
	}
	CHECK(p && pclose(p) == 0);
	CHECKF(seen == 8, "mdadm -X output had %d of 8 fields", seen);
	unlink(path);
}

TEST_MAIN(T(round_trip), T(refusals), T(bits_and_order), T(default_chunk), T(placement_1x),
          T(mdadm_reads_it))
