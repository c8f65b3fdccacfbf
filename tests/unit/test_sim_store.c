/* The simulated members' data store (sim_store.c) against a plain memory
 * member as the reference: random mixes of stamped blocks (one 8-byte word
 * differing), arbitrary data, partial and unaligned writes, zeroing and
 * reads across block edges must read back byte for byte as memory does;
 * stamped data must cost a shared copy per distinct rest, not per block. */
#include "../harness.h"
#include "member/member.h"
#include "sim/member_sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SIZE (8u << 20)

/* A block of the bench's kind: a fixed pattern with an offset stamp. */
static void stamped(uint8_t *b, size_t len, uint64_t off)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)((i * 131 + 7) ^ (i >> 12)); /* per block of a MiB */
	for (size_t k = 0; k + 8 <= len; k += 4096) {
		uint64_t v = (off + k) ^ 0x5552414944424e43ULL;
		memcpy(b + k, &v, 8);
	}
}

static void matches_memory(void)
{
	struct member *st = NULL, *ref = NULL;
	CHECK(sim_store_open("s", SIZE, &st) == 0);
	CHECK(member_open_mem("r", SIZE, &ref) == 0);
	if (!st || !ref)
		return;
	uint8_t *buf = malloc(1u << 20), *a = malloc(1u << 20), *b = malloc(1u << 20);
	uint64_t rng = 42;
	int mismatches = 0;
	for (int op = 0; op < 3000; op++) {
		uint64_t kind = t_rand(&rng) % 8;
		uint64_t off = t_rand(&rng) % SIZE, len = 1 + t_rand(&rng) % (256u << 10);
		if (kind < 5) /* block-aligned offsets, 512 multiples mostly */
			off &= ~(uint64_t)(kind < 3 ? 4095 : 511), len = (len + 511) & ~511ull;
		if (off + len > SIZE)
			len = SIZE - off;
		if (len == 0)
			continue;
		switch (kind) {
		case 0:
		case 1:
		case 5: stamped(buf, len, off); break;
		case 7: { /* zero a range (512-aligned) */
			uint64_t zo = off & ~511ull, zl = len & ~511ull;
			if (zl == 0 || zo + zl > SIZE)
				continue;
			CHECK(member_write_zeroes(st, zo, zl, 0) == 0);
			CHECK(member_write_zeroes(ref, zo, zl, 0) == 0);
		}
			continue;
		default: t_fill(&rng, buf, len);
		}
		CHECK(member_write(st, buf, len, off, 0) == 0);
		CHECK(member_write(ref, buf, len, off, 0) == 0);
		/* a read across what was written, edges included */
		uint64_t ro = off > 3000 ? off - 3000 : 0, rl = len + 6000;
		if (ro + rl > SIZE)
			rl = SIZE - ro;
		if (rl > (1u << 20))
			rl = 1u << 20;
		CHECK(member_read(st, a, rl, ro) == 0);
		CHECK(member_read(ref, b, rl, ro) == 0);
		mismatches += memcmp(a, b, rl) != 0;
	}
	CHECKF(mismatches == 0, "%d reads differ from memory", mismatches);
	/* the whole member at the end */
	for (uint64_t off = 0; off < SIZE; off += 1u << 20) {
		CHECK(member_read(st, a, 1u << 20, off) == 0);
		CHECK(member_read(ref, b, 1u << 20, off) == 0);
		CHECKF(!memcmp(a, b, 1u << 20), "MiB %llu differs",
		       (unsigned long long)(off >> 20));
	}
	free(buf), free(a), free(b);
	member_close(st);
	member_close(ref);
}

/* 8 MiB of stamped 1 MiB writes: 256 distinct rests (the pattern's position
 * in a 1 MiB buffer), whatever the offset; a read past never-written data
 * is zeros; a write past the end is refused. */
static void stamped_data_is_small(void)
{
	struct member *st = NULL;
	CHECK(sim_store_open("s", SIZE, &st) == 0);
	if (!st)
		return;
	uint8_t *buf = malloc(1u << 20);
	for (uint64_t off = 0; off + (1u << 20) <= SIZE; off += 1u << 20) {
		stamped(buf, 1u << 20, off);
		CHECK(member_write(st, buf, 1u << 20, off, 0) == 0);
	}
	uint64_t blocks = 0, copies = 0;
	CHECK(sim_store_stats(st, &blocks, &copies) == 0);
	CHECK_EQ_U64(blocks, SIZE / 4096);
	CHECKF(copies == 256, "%llu copies", (unsigned long long)copies);
	for (uint64_t off = 0; off < SIZE; off += 1u << 20) {
		uint8_t *want = malloc(1u << 20);
		stamped(want, 1u << 20, off);
		CHECK(member_read(st, buf, 1u << 20, off) == 0);
		CHECK(!memcmp(buf, want, 1u << 20));
		free(want);
	}
	CHECK(member_write_zeroes(st, 4096, 8192, 0) == 0);
	CHECK(member_read(st, buf, 4096, 8192) == 0);
	int nz = 0;
	for (int i = 0; i < 4096; i++)
		nz += buf[i] != 0;
	CHECK(nz == 0);
	CHECK(member_write(st, buf, 4096, SIZE, 0) < 0);
	free(buf);
	member_close(st);
	struct member *bad = NULL;
	CHECK(sim_store_open("x", 1000, &bad) == -EINVAL && !bad);
	struct member *m = NULL;
	CHECK(member_open_mem("m", 1u << 20, &m) == 0);
	CHECK(sim_store_stats(m, &blocks, &copies) == -EINVAL);
	member_close(m);
}

TEST_MAIN(T(matches_memory), T(stamped_data_is_small))
