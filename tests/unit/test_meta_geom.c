/* GEOM metadata: sectors built here field by field from the g_mirror.h /
 * g_raid3.h struct layouts (offsets written out below, independently of the
 * decoder's table), hashed by the system md5sum, then decoded; encode must
 * reproduce the hand-built sector byte for byte. Corruptions are refused. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "../harness.h"
#include "member/member.h"
#include "meta/geom.h"

/* Little-endian store, byte by byte, written without util/endian.h. */
static void le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* MD5 of buf[0..len) through md5sum(1). */
static int md5sum_of(const uint8_t *buf, size_t len, uint8_t out[16])
{
	char path[] = "/tmp/uraid-geom-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	close(fd);
	char cmd[96], hex[40] = "";
	snprintf(cmd, sizeof(cmd), "md5sum %s", path);
	FILE *p = popen(cmd, "r");
	int ok = p && fscanf(p, "%32s", hex) == 1;
	if (p)
		pclose(p);
	remove(path);
	if (!ok)
		return -1;
	for (int i = 0; i < 16; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

/* struct g_mirror_metadata, packed: sizes in declaration order. */
static void build_mirror(uint8_t sec[512], uint64_t *seed, struct geom_mirror_md *want)
{
	memset(sec, 0, 512);
	memset(want, 0, sizeof(*want));
	size_t o = 0;
	memcpy(sec + o, "GEOM::MIRROR", 12);
	o += 16;
	le(sec + o, 4, 4), o += 4;
	strcpy(want->name, "gm0");
	memcpy(sec + o, "gm0", 3), o += 16;
	want->mid = (uint32_t)t_rand(seed), le(sec + o, want->mid, 4), o += 4;
	want->did = (uint32_t)t_rand(seed), le(sec + o, want->did, 4), o += 4;
	want->all = 3, sec[o++] = 3;
	want->genid = (uint32_t)t_rand(seed), le(sec + o, want->genid, 4), o += 4;
	want->syncid = (uint32_t)t_rand(seed), le(sec + o, want->syncid, 4), o += 4;
	want->priority = 7, sec[o++] = 7;
	want->slice = 4096, le(sec + o, 4096, 4), o += 4;
	want->balance = 3, sec[o++] = 3;
	want->mediasize = 1000 * 512ull, le(sec + o, want->mediasize, 8), o += 8;
	want->sectorsize = 512, le(sec + o, 512, 4), o += 4;
	want->sync_offset = 77 * 512, le(sec + o, want->sync_offset, 8), o += 8;
	want->mflags = 3, le(sec + o, 3, 8), o += 8;
	want->dflags = 0x42, le(sec + o, 0x42, 8), o += 8;
	strcpy(want->provider, "ada0");
	memcpy(sec + o, "ada0", 4), o += 16;
	want->provsize = 1001 * 512ull, le(sec + o, want->provsize, 8), o += 8;
	CHECK_EQ_U64(o, 119);
	CHECK(md5sum_of(sec, o, sec + o) == 0);
}

static void build_raid3(uint8_t sec[512], uint64_t *seed, struct geom_raid3_md *want)
{
	memset(sec, 0, 512);
	memset(want, 0, sizeof(*want));
	size_t o = 0;
	memcpy(sec + o, "GEOM::RAID3", 11), o += 16;
	le(sec + o, 5, 4), o += 4;
	strcpy(want->name, "r3data");
	memcpy(sec + o, "r3data", 6), o += 16;
	want->id = (uint32_t)t_rand(seed), le(sec + o, want->id, 4), o += 4;
	want->no = 2, le(sec + o, 2, 2), o += 2;
	want->all = 5, le(sec + o, 5, 2), o += 2;
	want->genid = (uint32_t)t_rand(seed), le(sec + o, want->genid, 4), o += 4;
	want->syncid = (uint32_t)t_rand(seed), le(sec + o, want->syncid, 4), o += 4;
	want->mediasize = 100 * 2048ull, le(sec + o, want->mediasize, 8), o += 8;
	want->sectorsize = 2048, le(sec + o, 2048, 4), o += 4;
	want->sync_offset = 10 * 512, le(sec + o, want->sync_offset, 8), o += 8;
	want->mflags = 2, le(sec + o, 2, 8), o += 8;
	want->dflags = 1, le(sec + o, 1, 8), o += 8;
	memcpy(sec + o, "", 0), o += 16;
	want->provsize = 101 * 512ull, le(sec + o, want->provsize, 8), o += 8;
	CHECK_EQ_U64(o, 112);
	CHECK(md5sum_of(sec, o, sec + o) == 0);
}

static void mirror_known_answer(void)
{
	uint64_t seed = 0x6e0a;
	uint8_t sec[512], enc[512];
	struct geom_mirror_md want, got;
	build_mirror(sec, &seed, &want);
	char err[256] = "";
	CHECKF(geom_mirror_decode(sec, sizeof(sec), &got, err, sizeof(err)) == 0, "%s", err);
	CHECK(strcmp(got.name, want.name) == 0 && strcmp(got.provider, want.provider) == 0);
	CHECK(got.version == 4 && got.mid == want.mid && got.did == want.did &&
	      got.all == want.all && got.genid == want.genid && got.syncid == want.syncid &&
	      got.priority == want.priority && got.slice == want.slice &&
	      got.balance == want.balance && got.mediasize == want.mediasize &&
	      got.sectorsize == want.sectorsize && got.sync_offset == want.sync_offset &&
	      got.mflags == want.mflags && got.dflags == want.dflags &&
	      got.provsize == want.provsize);
	CHECK(geom_mirror_encode(&want, enc, sizeof(enc)) == 0);
	CHECK(memcmp(enc, sec, sizeof(sec)) == 0);
}

static void raid3_known_answer(void)
{
	uint64_t seed = 0x7e0b;
	uint8_t sec[512], enc[512];
	struct geom_raid3_md want, got;
	build_raid3(sec, &seed, &want);
	char err[256] = "";
	CHECKF(geom_raid3_decode(sec, sizeof(sec), &got, err, sizeof(err)) == 0, "%s", err);
	CHECK(strcmp(got.name, want.name) == 0 && got.provider[0] == 0);
	CHECK(got.version == 5 && got.id == want.id && got.no == want.no && got.all == want.all &&
	      got.genid == want.genid && got.syncid == want.syncid &&
	      got.mediasize == want.mediasize && got.sectorsize == want.sectorsize &&
	      got.sync_offset == want.sync_offset && got.mflags == want.mflags &&
	      got.dflags == want.dflags && got.provsize == want.provsize);
	CHECK(geom_raid3_encode(&want, enc, sizeof(enc)) == 0);
	CHECK(memcmp(enc, sec, sizeof(sec)) == 0);
}

/* Every single-bit flip in the hashed range or the hash is refused. */
static void corruption_refused(void)
{
	uint64_t seed = 0x77;
	uint8_t sec[512];
	struct geom_mirror_md wm, gm;
	struct geom_raid3_md wr, gr;
	char err[256];
	build_mirror(sec, &seed, &wm);
	for (int bit = 0; bit < GEOM_MIRROR_MD_LEN * 8; bit++) {
		sec[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		int rc = geom_mirror_decode(sec, sizeof(sec), &gm, err, sizeof(err));
		CHECKF(rc == -EINVAL || rc == -ENOENT, "mirror bit %d accepted", bit);
		sec[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	/* Messages name the problem. */
	sec[20] ^= 1;
	geom_mirror_decode(sec, sizeof(sec), &gm, err, sizeof(err));
	CHECKF(strstr(err, "MD5") != NULL, "%s", err);
	sec[20] ^= 1;
	sec[16] = 3;
	geom_mirror_decode(sec, sizeof(sec), &gm, err, sizeof(err));
	CHECKF(strstr(err, "version 3") != NULL, "%s", err);
	build_raid3(sec, &seed, &wr);
	for (int bit = 0; bit < GEOM_RAID3_MD_LEN * 8; bit++) {
		sec[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		int rc = geom_raid3_decode(sec, sizeof(sec), &gr, err, sizeof(err));
		CHECKF(rc == -EINVAL || rc == -ENOENT, "raid3 bit %d accepted", bit);
		sec[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	CHECK(geom_raid3_decode(sec, 100, &gr, err, sizeof(err)) == -EINVAL);
}

/* Semantically absurd but correctly hashed values are refused too. */
static void absurd_fields_refused(void)
{
	uint64_t seed = 0x99;
	uint8_t sec[512];
	char err[256];
	struct geom_mirror_md m;
	struct geom_raid3_md r;
	build_mirror(sec, &seed, &m);
	m.sectorsize = 1000;
	geom_mirror_encode(&m, sec, sizeof(sec));
	CHECK(geom_mirror_decode(sec, sizeof(sec), &m, err, sizeof(err)) == -EINVAL);
	build_mirror(sec, &seed, &m);
	m.balance = 9;
	geom_mirror_encode(&m, sec, sizeof(sec));
	CHECK(geom_mirror_decode(sec, sizeof(sec), &m, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "balance") != NULL, "%s", err);
	static const int bad_all[] = {0, 1, 2, 4, 6, 8};
	for (size_t i = 0; i < sizeof(bad_all) / sizeof(bad_all[0]); i++) {
		build_raid3(sec, &seed, &r);
		r.all = (uint16_t)bad_all[i];
		r.no = 0;
		geom_raid3_encode(&r, sec, sizeof(sec));
		CHECKF(geom_raid3_decode(sec, sizeof(sec), &r, err, sizeof(err)) == -EINVAL,
		       "all=%d accepted", bad_all[i]);
	}
	build_raid3(sec, &seed, &r);
	r.mflags = GEOM_RAID3_DEV_ROUND_ROBIN | GEOM_RAID3_DEV_VERIFY;
	geom_raid3_encode(&r, sec, sizeof(sec));
	CHECK(geom_raid3_decode(sec, sizeof(sec), &r, err, sizeof(err)) == -EINVAL);
}

/* Random round trips through a member: the last sector holds it. */
static void member_round_trip(void)
{
	uint64_t seed = 0xabc;
	struct member *m;
	CHECK(member_open_mem("m", 64 * 1024, &m) == 0);
	for (int i = 0; i < 200; i++) {
		struct geom_mirror_md a = {0}, b;
		snprintf(a.name, sizeof(a.name), "n%d", i);
		a.mid = (uint32_t)t_rand(&seed);
		a.did = (uint32_t)t_rand(&seed);
		a.all = (uint8_t)(1 + t_rand(&seed) % 255);
		a.genid = (uint32_t)t_rand(&seed);
		a.syncid = (uint32_t)t_rand(&seed);
		a.priority = (uint8_t)t_rand(&seed);
		a.slice = (uint32_t)t_rand(&seed);
		a.balance = (uint8_t)(t_rand(&seed) % 5);
		a.sectorsize = 512u << (t_rand(&seed) % 4);
		a.mediasize = (t_rand(&seed) % 1000000) * a.sectorsize;
		a.sync_offset = a.mediasize ? t_rand(&seed) % a.mediasize : 0;
		a.mflags = t_rand(&seed) & 3;
		a.dflags = t_rand(&seed) & 0x7f;
		a.provsize = t_rand(&seed);
		char err[256];
		CHECK(geom_mirror_write(m, &a, err, sizeof(err)) == 0);
		CHECKF(geom_mirror_read(m, &b, err, sizeof(err)) == 0, "%s", err);
		CHECK(strcmp(a.name, b.name) == 0 && a.mid == b.mid && a.did == b.did &&
		      a.all == b.all && a.genid == b.genid && a.syncid == b.syncid &&
		      a.priority == b.priority && a.slice == b.slice && a.balance == b.balance &&
		      a.mediasize == b.mediasize && a.sectorsize == b.sectorsize &&
		      a.sync_offset == b.sync_offset && a.mflags == b.mflags &&
		      a.dflags == b.dflags && a.provsize == b.provsize && b.version == 4);
		CHECK(geom_raid3_read(m, &(struct geom_raid3_md){0}, err, sizeof(err)) == -ENOENT);
	}
	uint8_t last[512];
	CHECK(member_read(m, last, 512, 64 * 1024 - 512) == 0);
	CHECK(memcmp(last, "GEOM::MIRROR", 12) == 0);
	char err[256];
	CHECK(geom_clear(m, err, sizeof(err)) == 0);
	struct geom_mirror_md c;
	CHECK(geom_mirror_read(m, &c, err, sizeof(err)) == -ENOENT);
	member_close(m);
}

static void balance_names(void)
{
	CHECK(geom_balance_parse("load") == GEOM_BALANCE_LOAD);
	CHECK(geom_balance_parse("round-robin") == 1);
	CHECK(geom_balance_parse("split") == 3);
	CHECK(geom_balance_parse("prefer") == 4);
	CHECK(geom_balance_parse("fastest") == -EINVAL);
	CHECK(strcmp(geom_balance_name(2), "load") == 0 && geom_balance_name(5) == NULL);
}

TEST_MAIN(T(mirror_known_answer), T(raid3_known_answer), T(corruption_refused),
          T(absurd_fields_refused), T(member_round_trip), T(balance_names))
