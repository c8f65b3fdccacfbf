/* graid3 engine on file-backed components: placement checked byte by byte
 * against a slow reference mapping, every component lost in turn, -w
 * catching a flipped bit (fault wrapper), -r reading through parity,
 * rebuild restoring a component bit-exact, label refusals. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "../harness.h"
#include "geom/geom.h"
#include "member/member.h"
#include "sim/member_fault.h"

#define CSIZE (256 * 1024 + 512) /* component size */
#include "test_geom_common.h"

static struct geom_raid3 *open_r3(int n, int except)
{
	struct member *m[GEOM_MAX_DISKS + 1];
	open_members(n, m, except);
	struct geom_raid3 *g = NULL;
	char err[256] = "", warn[256];
	int rc =
	    geom_raid3_open(m, n - (except >= 0), false, &g, err, sizeof(err), warn, sizeof(warn));
	CHECKF(rc == 0, "open: %s", err);
	return rc == 0 ? g : NULL;
}

static void label(int n, struct geom_label_opts *o)
{
	struct member *m[GEOM_MAX_DISKS + 1];
	open_members(n, m, -1);
	char err[256] = "";
	CHECKF(geom_raid3_label(o, m, n, err, sizeof(err)) == 0, "%s", err);
	for (int i = 0; i < n; i++)
		member_close(m[i]);
}

/* Reference placement, written per byte: provider byte b lives in
 * component (b % ps) / atom at offset (b / ps) * atom + (b % atom). */
static void check_placement(int n, uint32_t ps, const uint8_t *data, uint64_t len)
{
	uint32_t d = (uint32_t)n - 1, atom = ps / d;
	struct member *m[GEOM_MAX_DISKS + 1];
	open_members(n, m, -1);
	uint64_t clen = len / d;
	uint8_t *cb[GEOM_MAX_DISKS + 1] = {0};
	for (int i = 0; i < n; i++) {
		cb[i] = malloc(clen);
		CHECK(member_read(m[i], cb[i], clen, 0) == 0);
	}
	int bad = 0;
	for (uint64_t b = 0; b < len; b++) {
		uint32_t j = (uint32_t)(b % ps);
		uint64_t co = (b / ps) * atom + j % atom;
		bad += cb[j / atom][co] != data[b];
	}
	for (uint64_t co = 0; co < clen; co++) {
		uint8_t x = 0;
		for (int i = 0; i < n - 1; i++)
			x ^= cb[i][co];
		bad += cb[n - 1][co] != x;
	}
	CHECKF(bad == 0, "%d misplaced bytes (n=%d)", bad, n);
	for (int i = 0; i < n; i++) {
		free(cb[i]);
		member_close(m[i]);
	}
}

static void placement_and_lose_each(void)
{
	static const int ns[] = {3, 5, 9};
	for (size_t t = 0; t < 3; t++) {
		int n = ns[t];
		make_files(n);
		struct geom_label_opts o = {.name = "r3t"};
		label(n, &o);
		struct geom_raid3 *g = open_r3(n, -1);
		if (!g)
			return;
		uint64_t size = g->mediasize;
		CHECK(g->psector == 512u * (uint32_t)(n - 1));
		CHECK(size == (CSIZE - 512ull) * (uint64_t)(n - 1));
		uint8_t *data = malloc(size), *back = malloc(size);
		uint64_t seed = 100 + (uint64_t)n;
		t_fill(&seed, data, size);
		/* several writes of random aligned extents, then one full */
		for (int i = 0; i < 20; i++) {
			uint64_t secs = size / g->psector;
			uint64_t a = t_rand(&seed) % secs, l = 1 + t_rand(&seed) % (secs - a);
			if (l > 64)
				l = 64;
			CHECK(geom_raid3_write_at(g, data + a * g->psector, l * g->psector,
			                          a * g->psector) == 0);
		}
		CHECK(geom_raid3_write_at(g, data, size, 0) == 0);
		CHECK(geom_raid3_read_at(g, back, size, 0) == 0);
		CHECK(memcmp(back, data, size) == 0);
		CHECK(geom_raid3_write_at(g, data, 100, 0) == -EINVAL);
		CHECK(geom_raid3_close(g) == 0);
		check_placement(n, 512u * (uint32_t)(n - 1), data, size);
		for (int lost = 0; lost < n; lost++) {
			g = open_r3(n, lost);
			if (!g)
				continue;
			memset(back, 0, size);
			CHECK(geom_raid3_read_at(g, back, size, 0) == 0);
			CHECKF(memcmp(back, data, size) == 0, "n %d without component %d", n, lost);
			geom_raid3_close(g);
		}
		free(data);
		free(back);
		rm_files(n);
	}
}

static void verify_catches_flip(void)
{
	int n = 5;
	make_files(n);
	struct geom_label_opts o = {.name = "r3w", .verify = true};
	label(n, &o);
	struct geom_raid3 *g = open_r3(n, -1);
	if (!g)
		return;
	/* label -w leaves parity out of date: the first start recomputes it */
	CHECK(g->c[n - 1].state == GEOM_DISK_SYNCING && g->c[n - 1].md.syncid == 0);
	while (geom_raid3_sync_step(g, 65536) == 1)
		;
	CHECK(g->c[n - 1].state == GEOM_DISK_ACTIVE);
	size_t len = 64 * g->psector;
	uint8_t *data = malloc(len), *back = malloc(len);
	uint64_t seed = 9;
	t_fill(&seed, data, len);
	CHECK(geom_raid3_write_at(g, data, len, 0) == 0);
	CHECK(geom_raid3_read_at(g, back, len, 0) == 0 && memcmp(back, data, len) == 0);
	/* flip a bit on reads of data component 2 inside the second sector */
	struct member *f;
	CHECK(member_fault_wrap(g->c[2].m, &f) == 0);
	g->c[2].m = f;
	struct member_fault_rule r = {
	    .op = MEMBER_OP_READ, .off = 512, .len = 512, .flip_bit = true};
	CHECK(member_fault_add(f, &r) == 0);
	CHECK(geom_raid3_read_at(g, back, len, 0) == -EIO);
	CHECK(g->parity_errors == 1);
	/* a read that does not touch the flipped range is fine */
	CHECK(geom_raid3_read_at(g, back, g->psector, 0) == 0);
	CHECK(memcmp(back, data, g->psector) == 0);
	/* without -w the flip goes unnoticed: proves the check is what caught it */
	char err[256];
	CHECK(geom_raid3_configure(g, 0, GEOM_RAID3_DEV_VERIFY, err, sizeof(err)) == 0);
	CHECK(geom_raid3_read_at(g, back, len, 0) == 0);
	CHECK(memcmp(back, data, len) != 0);
	CHECK(geom_raid3_configure(g, GEOM_RAID3_DEV_VERIFY | GEOM_RAID3_DEV_ROUND_ROBIN, 0, err,
	                           sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "cannot be combined") != NULL, "%s", err);
	geom_raid3_close(g);
	free(data);
	free(back);
	rm_files(n);
}

/* -r: reads rotate through parity; a flipped bit in one data component then
 * shows up only on the reads that use that component, proving parity is
 * really used for reconstruction on the others. */
static void round_robin_uses_parity(void)
{
	int n = 3;
	make_files(n);
	struct geom_label_opts o = {.name = "r3r", .round_robin = true};
	label(n, &o);
	struct geom_raid3 *g = open_r3(n, -1);
	if (!g)
		return;
	size_t len = 8 * g->psector;
	uint8_t *data = malloc(len), *back = malloc(len);
	uint64_t seed = 11;
	t_fill(&seed, data, len);
	CHECK(geom_raid3_write_at(g, data, len, 0) == 0);
	struct member *f;
	CHECK(member_fault_wrap(g->c[0].m, &f) == 0);
	g->c[0].m = f;
	struct member_fault_rule r = {.op = MEMBER_OP_READ, .flip_bit = true};
	CHECK(member_fault_add(f, &r) == 0);
	int good = 0, badr = 0;
	for (int i = 0; i < 3 * n; i++) {
		CHECK(geom_raid3_read_at(g, back, len, 0) == 0);
		if (memcmp(back, data, len) == 0)
			good++;
		else
			badr++;
	}
	/* component 0 skipped on 1 read in n: rebuilt from parity, correct */
	CHECK(good == 3 && badr == 3 * n - 3);
	geom_raid3_close(g);
	free(data);
	free(back);
	rm_files(n);
}

static void rebuild_bit_exact(void)
{
	int n = 5;
	make_files(n);
	struct geom_label_opts o = {.name = "r3b"};
	label(n, &o);
	struct geom_raid3 *g = open_r3(n, -1);
	if (!g)
		return;
	uint64_t size = g->mediasize, clen = size / (uint64_t)(n - 1);
	uint8_t *data = malloc(size);
	uint64_t seed = 12;
	t_fill(&seed, data, size);
	CHECK(geom_raid3_write_at(g, data, size, 0) == 0);
	geom_raid3_close(g);
	for (int victim = 0; victim < n; victim++) {
		char p[96];
		path_of(victim, p, sizeof(p));
		struct member *m;
		char err[256];
		CHECK(member_open_file(p, 0, 0, &m, err, sizeof(err)) == 0);
		uint8_t *orig = malloc(clen), *now = malloc(clen), *junk = malloc(clen);
		CHECK(member_read(m, orig, clen, 0) == 0);
		t_fill(&seed, junk, clen);
		CHECK(member_write(m, junk, clen, 0, 0) == 0);
		member_close(m);
		g = open_r3(n, -1);
		if (!g)
			break;
		CHECK(geom_raid3_rebuild(g, victim, err, sizeof(err)) == 0);
		/* interrupt half way: progress is persisted, reopening resumes */
		CHECK(geom_raid3_sync_step(g, clen / 2 / 512 * 512) == 1);
		geom_raid3_close(g);
		g = open_r3(n, -1);
		CHECK(g && g->c[victim].state == GEOM_DISK_SYNCING &&
		      g->c[victim].md.sync_offset == clen / 2 / 512 * 512);
		int rc;
		while ((rc = geom_raid3_sync_step(g, 8192)) == 1)
			;
		CHECK(rc == 0 && g->c[victim].state == GEOM_DISK_ACTIVE);
		geom_raid3_close(g);
		CHECK(member_open_file(p, 0, 0, &m, err, sizeof(err)) == 0);
		CHECK(member_read(m, now, clen, 0) == 0);
		CHECKF(memcmp(now, orig, clen) == 0, "component %d not restored", victim);
		member_close(m);
		free(orig);
		free(now);
		free(junk);
	}
	free(data);
	rm_files(n);
}

static void label_refusals(void)
{
	make_files(4);
	struct member *m[4];
	open_members(4, m, -1);
	char err[256] = "";
	struct geom_label_opts o = {.name = "x"};
	CHECK(geom_raid3_label(&o, m, 4, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "2^n + 1") != NULL, "%s", err);
	struct geom_label_opts rw = {.name = "x", .round_robin = true, .verify = true};
	CHECK(geom_raid3_label(&rw, m, 3, err, sizeof(err)) == -EINVAL);
	struct geom_label_opts bs = {.name = "x", .blocksize = 1536};
	CHECK(geom_raid3_label(&bs, m, 3, err, sizeof(err)) == -EINVAL);
	/* nothing was written by the refused labels */
	struct geom_raid3_md md;
	for (int i = 0; i < 4; i++) {
		CHECK(geom_raid3_read(m[i], &md, err, sizeof(err)) == -ENOENT);
		member_close(m[i]);
	}
	rm_files(4);
}

/* Two components failing while running: reads and writes give -EIO, no
 * crash, and a single failure before that is survived. */
static void double_failure_eio(void)
{
	int n = 3;
	make_files(n);
	struct geom_label_opts o = {.name = "r3x"};
	label(n, &o);
	struct geom_raid3 *g = open_r3(n, -1);
	if (!g)
		return;
	uint8_t buf[2048], back[2048];
	memset(buf, 0x5a, sizeof(buf));
	CHECK(geom_raid3_write_at(g, buf, 1024, 0) == 0);
	char err[256];
	CHECK(geom_raid3_remove(g, 0, err, sizeof(err)) == 0);
	CHECK(geom_raid3_read_at(g, back, 1024, 0) == 0 && memcmp(back, buf, 1024) == 0);
	CHECK(geom_raid3_remove(g, 1, err, sizeof(err)) == -EBUSY);
	geom_raid3_fail(g, 1);
	CHECK(geom_raid3_read_at(g, back, 1024, 0) == -EIO);
	CHECK(geom_raid3_write_at(g, buf, 1024, 0) == -EIO);
	geom_raid3_close(g);
	rm_files(n);
}

/* Written while component 1 was absent: it returns stale (older syncid),
 * reads rebuild its part from parity until it is rebuilt bit-exact. */
static void absent_component_becomes_stale(void)
{
	int n = 3;
	make_files(n);
	struct geom_label_opts o = {.name = "r3s"};
	label(n, &o);
	struct geom_raid3 *g = open_r3(n, 1);
	if (!g)
		return;
	size_t len = 16 * g->psector;
	uint8_t *data = malloc(len), *back = malloc(len);
	uint64_t seed = 51;
	t_fill(&seed, data, len);
	CHECK(geom_raid3_write_at(g, data, len, 0) == 0);
	geom_raid3_close(g);
	g = open_r3(n, -1);
	if (!g)
		return;
	CHECK(g->c[1].state == GEOM_DISK_SYNCING);
	CHECK(geom_raid3_read_at(g, back, len, 0) == 0 && memcmp(back, data, len) == 0);
	while (geom_raid3_sync_step(g, 65536) == 1)
		;
	CHECK(g->c[1].state == GEOM_DISK_ACTIVE);
	geom_raid3_close(g);
	g = open_r3(n, 0); /* now component 1 must carry real data */
	CHECK(g && geom_raid3_read_at(g, back, len, 0) == 0 && memcmp(back, data, len) == 0);
	geom_raid3_close(g);
	free(data);
	free(back);
	rm_files(n);
}

/* -s blocksize: a bigger provider sector means bigger atoms per component. */
static void big_blocksize(void)
{
	int n = 3;
	make_files(n);
	struct geom_label_opts o = {.name = "r3big", .blocksize = 8192};
	label(n, &o);
	struct geom_raid3 *g = open_r3(n, -1);
	if (!g)
		return;
	CHECK(g->psector == 8192);
	uint64_t size = g->mediasize;
	CHECK(size % 8192 == 0 && size <= (CSIZE - 512ull) * 2);
	uint8_t *data = malloc(size), *back = malloc(size);
	uint64_t seed = 61;
	t_fill(&seed, data, size);
	CHECK(geom_raid3_write_at(g, data, size, 0) == 0);
	CHECK(geom_raid3_write_at(g, data, 4096, 0) == -EINVAL);
	CHECK(geom_raid3_read_at(g, back, size, 0) == 0 && memcmp(back, data, size) == 0);
	geom_raid3_close(g);
	check_placement(n, 8192, data, size);
	free(data);
	free(back);
	rm_files(n);
}

/* Unclean stop (DIRTY left on disk) with parity lagging the data: the next
 * start recomputes parity; with -F (no failsync) it does not. */
static void dirty_parity_resync(void)
{
	for (int nofail = 0; nofail < 2; nofail++) {
		int n = 3;
		make_files(n);
		struct geom_label_opts o = {.name = "r3d", .nofailsync = nofail};
		label(n, &o);
		struct geom_raid3 *g = open_r3(n, -1);
		if (!g)
			return;
		uint8_t buf[4096];
		memset(buf, 0x11, sizeof(buf));
		CHECK(geom_raid3_write_at(g, buf, sizeof(buf), 0) == 0);
		geom_raid3_drop(g); /* crash: no clean close, no metadata written */
		/* a later write reached data component 0 but not parity */
		char p[96], err[256];
		path_of(0, p, sizeof(p));
		struct member *m;
		CHECK(member_open_file(p, 0, 0, &m, err, sizeof(err)) == 0);
		memset(buf, 0x99, 512);
		CHECK(member_write(m, buf, 512, 0, 0) == 0);
		member_close(m);
		g = open_r3(n, -1);
		if (!g)
			return;
		CHECK(g->c[n - 1].state == (nofail ? GEOM_DISK_ACTIVE : GEOM_DISK_SYNCING));
		while (geom_raid3_sync_step(g, 65536) == 1)
			;
		geom_raid3_close(g);
		uint8_t c0[512], c1[512], c2[512];
		struct member *mm[3];
		open_members(n, mm, -1);
		CHECK(member_read(mm[0], c0, 512, 0) == 0 && member_read(mm[1], c1, 512, 0) == 0 &&
		      member_read(mm[2], c2, 512, 0) == 0);
		int consistent = 1;
		for (int b = 0; b < 512; b++)
			consistent &= (c0[b] ^ c1[b]) == c2[b];
		CHECK(consistent == !nofail);
		for (int i = 0; i < n; i++)
			member_close(mm[i]);
		rm_files(n);
	}
}

TEST_MAIN(T(placement_and_lose_each), T(dirty_parity_resync), T(big_blocksize),
          T(absent_component_becomes_stale), T(double_failure_eio), T(verify_catches_flip),
          T(round_robin_uses_parity), T(rebuild_bit_exact), T(label_refusals))
