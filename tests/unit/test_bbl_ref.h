/* md's 1.2 superblock and bad block log as the kernel lays them out,
 * written out here for test_engine_badblocks.c (not meta/md_super.c or
 * meta/md_badblocks.c: the reference must not share the code it judges):
 * superblock fields at their byte offsets, md's checksum, log entries
 * packed as super_1_sync packs them. */
#ifndef URAID_TEST_BBL_REF_H
#define URAID_TEST_BBL_REF_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "test_engine_common.h"

#define SB_AT         8 /* 1.2: the superblock 4 KiB in */
#define F_FEATURE     8
#define F_DATA_OFFSET 128
#define F_BB_SHIFT    185
#define F_BB_SIZE     186
#define F_BB_OFFSET   188
#define F_CSUM        216
#define F_MAX_DEV     220

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}
static void put(uint8_t *p, int n, uint64_t v)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* md's 1.x checksum: le32 words over 256 + 2 * max_dev bytes, folded. */
static void ref_csum(uint8_t *sb)
{
	put(sb + F_CSUM, 4, 0);
	int n = 256 + 2 * (int)le(sb + F_MAX_DEV, 4);
	uint64_t s = 0;
	int i = 0;
	for (; i + 4 <= n; i += 4)
		s += le(sb + i, 4);
	if (n - i == 2)
		s += le(sb + i, 2);
	put(sb + F_CSUM, 4, (uint32_t)((s & 0xffffffff) + (s >> 32)));
}

struct ref_log {
	uint64_t doff, at; /* data offset, log sector (absolute) */
	unsigned size, shift;
	bool feature;
	int n;
	uint64_t s[600], len[600]; /* entries as super_1_load reads them */
};

static void ref_read(struct te_disk *d, struct ref_log *l)
{
	uint8_t sb[4096], log[4096];
	memset(l, 0, sizeof(*l));
	CHECK(member_read(d->mem, sb, sizeof(sb), SB_AT * 512) == 0);
	l->doff = le(sb + F_DATA_OFFSET, 8);
	l->feature = le(sb + F_FEATURE, 4) & 8;
	l->size = (unsigned)le(sb + F_BB_SIZE, 2);
	l->shift = sb[F_BB_SHIFT];
	l->at = (uint64_t)(SB_AT + (int32_t)le(sb + F_BB_OFFSET, 4));
	if (!l->feature || !l->size)
		return;
	CHECK(member_read(d->mem, log, sizeof(log), l->at * 512) == 0);
	for (unsigned i = 0; i < l->size * 64; i++) {
		uint64_t bb = le(log + i * 8, 8);
		if (bb + 1 == 0)
			break;
		l->s[l->n] = (bb >> 10) << l->shift;
		l->len[l->n++] = (bb & 0x3ff) << l->shift;
	}
}

/* Entries packed as super_1_sync does, the feature bit set (or the log
 * taken away: size < 0), the checksum redone. Absolute sectors. */
static void ref_write(struct te_disk *d, const uint64_t *s, const uint64_t *len, int n, int size)
{
	uint8_t sb[4096], log[4096];
	CHECK(member_read(d->mem, sb, sizeof(sb), SB_AT * 512) == 0);
	uint64_t feat = le(sb + F_FEATURE, 4);
	put(sb + F_FEATURE, 4, n ? feat | 8 : feat & ~8ull);
	if (size < 0) {
		put(sb + F_BB_OFFSET, 4, 0);
		put(sb + F_BB_SIZE, 2, 0);
	} else if (size > 0) {
		put(sb + F_BB_SIZE, 2, (uint64_t)size);
	}
	memset(log, 0xff, sizeof(log));
	for (int i = 0; i < n; i++)
		put(log + i * 8, 8, s[i] << 10 | len[i]);
	ref_csum(sb);
	CHECK(member_write(d->mem, sb, sizeof(sb), SB_AT * 512, 0) == 0);
	int32_t off = (int32_t)le(sb + F_BB_OFFSET, 4);
	if (off)
		CHECK(member_write(d->mem, log, 4096, (uint64_t)(SB_AT + off) * 512, 0) == 0);
}

#endif
