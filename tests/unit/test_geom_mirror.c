/* gmirror engine on file-backed components: label layout, balanced reads
 * traced per disk through the engine, failed member skipped (fault
 * wrapper), dirty resync after an unclean stop and -F, insert + sync with
 * interruption, -n leaves a stale disk until rebuild, genid keeps a failed
 * disk out, remove, configure on a running mirror. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "../harness.h"
#include "geom/geom.h"
#include "member/member.h"
#include "sim/member_fault.h"

#define CSIZE (128 * 1024 + 512)
#include "test_geom_common.h"

/* Open disks listed in idx[0..n). */
static struct geom_mirror *open_gm(const int *idx, int n, char *warn, size_t wl)
{
	struct member *m[GEOM_MAX_DISKS];
	for (int i = 0; i < n; i++)
		m[i] = open_one(idx[i]);
	struct geom_mirror *g = NULL;
	char err[256] = "", w[512];
	int rc = geom_mirror_open(m, n, false, &g, err, sizeof(err), warn ? warn : w,
	                          warn ? wl : sizeof(w));
	CHECKF(rc == 0, "open: %s", err);
	return rc == 0 ? g : NULL;
}

static void label(int n, const struct geom_label_opts *o)
{
	struct member *m[GEOM_MAX_DISKS];
	for (int i = 0; i < n; i++)
		m[i] = open_one(i);
	char err[256] = "";
	CHECKF(geom_mirror_label(o, m, n, err, sizeof(err)) == 0, "%s", err);
	for (int i = 0; i < n; i++)
		member_close(m[i]);
}

static const int all3[] = {0, 1, 2};

struct trace {
	int n;
	int disk[4096];
};
static void tracer(void *ctx, int disk, uint64_t off, uint64_t len)
{
	struct trace *t = ctx;
	if (t->n < 4096)
		t->disk[t->n++] = disk;
}

static void label_and_io(void)
{
	make_files(3);
	struct geom_label_opts o = {.name = "gm0"};
	label(3, &o);
	struct geom_mirror_md md;
	char err[256];
	for (int i = 0; i < 3; i++) {
		struct member *m = open_one(i);
		CHECK(geom_mirror_read(m, &md, err, sizeof(err)) == 0);
		CHECK(md.all == 3 && md.priority == i && md.balance == GEOM_BALANCE_LOAD &&
		      md.slice == 4096 && md.mediasize == CSIZE - 512 && md.syncid == 1);
		member_close(m);
	}
	struct geom_mirror *g = open_gm(all3, 3, NULL, 0);
	if (!g)
		return;
	size_t size = g->mediasize;
	uint8_t *data = malloc(size), *back = malloc(size), *disk = malloc(size);
	uint64_t seed = 21;
	t_fill(&seed, data, size);
	CHECK(geom_mirror_write_at(g, data, size, 0) == 0);
	/* every balance reads back the same bytes, traces differ as specified */
	static const int bals[] = {GEOM_BALANCE_ROUND_ROBIN, GEOM_BALANCE_PREFER,
	                           GEOM_BALANCE_SPLIT, GEOM_BALANCE_LOAD};
	for (int b = 0; b < 4; b++) {
		CHECK(geom_mirror_configure(g, bals[b], 8192, err, sizeof(err)) == 0);
		struct trace t = {0};
		g->trace = tracer, g->trace_ctx = &t;
		for (size_t off = 0; off < size; off += 16384) {
			size_t l = size - off < 16384 ? size - off : 16384;
			memset(back, 0, l);
			CHECK(geom_mirror_read_at(g, back, l, off) == 0);
			CHECK(memcmp(back, data + off, l) == 0);
		}
		g->trace = NULL;
		int cnt[3] = {0};
		for (int k = 0; k < t.n; k++)
			cnt[t.disk[k]]++;
		if (bals[b] == GEOM_BALANCE_PREFER)
			CHECK(cnt[2] == t.n); /* priority 2 is the biggest */
		else if (bals[b] == GEOM_BALANCE_LOAD)
			CHECK(cnt[0] == t.n || cnt[1] == t.n || cnt[2] == t.n); /* sequential */
		else
			CHECK(cnt[0] > 0 && cnt[1] > 0 && cnt[2] > 0);
		if (bals[b] == GEOM_BALANCE_SPLIT)
			CHECK(t.n ==
			      3 * (int)(size / 16384)); /* 16 KiB > slice: one piece per disk */
	}
	/* configure persisted the balance in every disk's metadata */
	geom_mirror_close(g);
	for (int i = 0; i < 3; i++) {
		read_disk(i, disk, size);
		CHECK(memcmp(disk, data, size) == 0);
		struct member *m = open_one(i);
		CHECK(geom_mirror_read(m, &md, err, sizeof(err)) == 0);
		CHECK(md.balance == GEOM_BALANCE_LOAD && md.slice == 8192);
		CHECK((md.dflags & GEOM_MIRROR_DISK_DIRTY) == 0); /* clean close */
		member_close(m);
	}
	free(data);
	free(back);
	free(disk);
	rm_files(3);
}

static void failed_disk_skipped_and_genid(void)
{
	make_files(3);
	struct geom_label_opts o = {.name = "gmf", .balance = GEOM_BALANCE_ROUND_ROBIN};
	label(3, &o);
	struct geom_mirror *g = open_gm(all3, 3, NULL, 0);
	if (!g)
		return;
	size_t len = 64 * 1024;
	uint8_t *data = malloc(len), *back = malloc(len);
	uint64_t seed = 22;
	t_fill(&seed, data, len);
	CHECK(geom_mirror_write_at(g, data, len, 0) == 0);
	struct member *f;
	CHECK(member_fault_wrap(g->disk[1].m, &f) == 0);
	g->disk[1].m = f;
	struct member_fault_rule r = {.op = MEMBER_OP_READ, .error = EIO};
	CHECK(member_fault_add(f, &r) == 0);
	struct trace t = {0};
	g->trace = tracer, g->trace_ctx = &t;
	for (int i = 0; i < 12; i++) {
		CHECK(geom_mirror_read_at(g, back, 4096, (uint64_t)i * 4096) == 0);
		CHECK(memcmp(back, data + i * 4096, 4096) == 0);
	}
	CHECK(g->disk[1].state == GEOM_DISK_FAILED);
	int after = 0;
	for (int k = 0; k < t.n; k++)
		after += t.disk[k] == 1;
	CHECK(after == 1); /* one failed attempt, never again */
	uint32_t gen = g->genid;
	CHECK(gen == 1);
	g->trace = NULL;
	geom_mirror_close(g);
	/* next open: the failed disk's genid is old, it stays out */
	char warn[512] = "";
	g = open_gm(all3, 3, warn, sizeof(warn));
	CHECK(g && g->ndisks == 2);
	CHECKF(strstr(warn, "stale") != NULL, "%s", warn);
	geom_mirror_close(g);
	free(data);
	free(back);
	rm_files(3);
}

/* Unclean stop: DIRTY stays on disk; reopening resyncs the non-master
 * disks from the master (biggest priority). With -F nothing is synced. */
static void dirty_resync_and_nofailsync(void)
{
	for (int nofail = 0; nofail < 2; nofail++) {
		make_files(2);
		struct geom_label_opts o = {.name = "gmd", .nofailsync = nofail};
		label(2, &o);
		const int both[] = {0, 1};
		struct geom_mirror *g = open_gm(both, 2, NULL, 0);
		if (!g)
			return;
		uint8_t buf[4096];
		memset(buf, 0xaa, sizeof(buf));
		CHECK(geom_mirror_write_at(g, buf, sizeof(buf), 0) == 0);
		geom_mirror_drop(g); /* crash: no clean close, no metadata written */
		/* a write that reached only disk 1 (the master, priority 1) */
		struct member *m = open_one(1);
		memset(buf, 0x55, sizeof(buf));
		CHECK(member_write(m, buf, sizeof(buf), 0, 0) == 0);
		member_close(m);
		g = open_gm(both, 2, NULL, 0);
		if (!g)
			return;
		if (!nofail) {
			CHECK(g->disk[0].state == GEOM_DISK_SYNCING &&
			      g->disk[1].state == GEOM_DISK_ACTIVE);
			while (geom_mirror_sync_step(g, 16384) == 1)
				;
			CHECK(g->disk[0].state == GEOM_DISK_ACTIVE);
		} else {
			CHECK(g->disk[0].state == GEOM_DISK_ACTIVE &&
			      g->disk[1].state == GEOM_DISK_ACTIVE);
		}
		geom_mirror_close(g);
		uint8_t d0[4096];
		read_disk(0, d0, sizeof(d0));
		CHECK(nofail ? d0[0] == 0xaa : memcmp(d0, buf, sizeof(buf)) == 0);
		rm_files(2);
	}
}

static void insert_sync_interrupted(void)
{
	make_files(3);
	struct geom_label_opts o = {.name = "gmi"};
	label(1, &o);
	const int one[] = {0};
	struct geom_mirror *g = open_gm(one, 1, NULL, 0);
	if (!g)
		return;
	size_t size = g->mediasize;
	uint8_t *data = malloc(size), *disk = malloc(size);
	uint64_t seed = 23;
	t_fill(&seed, data, size);
	CHECK(geom_mirror_write_at(g, data, size, 0) == 0);
	char err[256];
	CHECK(geom_mirror_insert(g, open_one(1), 5, err, sizeof(err)) == 0);
	CHECK(g->disk[1].state == GEOM_DISK_SYNCING);
	CHECK(geom_mirror_sync_step(g, 32768) == 1);
	/* a write during the sync lands on the new disk too */
	memset(data + 100 * 512, 0x3c, 512);
	CHECK(geom_mirror_write_at(g, data + 100 * 512, 512, 100 * 512) == 0);
	geom_mirror_close(g);
	const int two[] = {0, 1};
	g = open_gm(two, 2, NULL, 0);
	if (!g)
		return;
	CHECK(g->disk[1].state == GEOM_DISK_SYNCING && g->disk[1].md.sync_offset == 32768);
	while (geom_mirror_sync_step(g, 8192) == 1)
		;
	CHECK(g->disk[1].state == GEOM_DISK_ACTIVE && g->disk[1].md.priority == 5);
	geom_mirror_close(g);
	read_disk(1, disk, size);
	CHECK(memcmp(disk, data, size) == 0);
	/* -n (noautosync): an out of date disk waits for rebuild */
	g = open_gm(two, 2, NULL, 0);
	CHECK(g != NULL);
	if (!g)
		return;
	CHECK(geom_mirror_configure(g, GEOM_BALANCE_PREFER, 0, err, sizeof(err)) == 0);
	g->mflags |= GEOM_MIRROR_DEV_NOAUTOSYNC;
	CHECK(geom_mirror_insert(g, open_one(2), 0, err, sizeof(err)) == 0);
	geom_mirror_close(g);
	g = open_gm(all3, 3, NULL, 0);
	CHECK(g && g->disk[2].state == GEOM_DISK_STALE);
	CHECK(geom_mirror_sync_step(g, 8192) == 0); /* nothing to do */
	CHECK(geom_mirror_rebuild(g, 2, err, sizeof(err)) == 0);
	while (geom_mirror_sync_step(g, 65536) == 1)
		;
	CHECK(g->disk[2].state == GEOM_DISK_ACTIVE);
	/* remove disk 0: its metadata is gone, the others count 2 disks */
	CHECK(geom_mirror_remove(g, 0, err, sizeof(err)) == 0);
	CHECK(g->ndisks == 2);
	geom_mirror_close(g);
	struct member *m = open_one(0);
	struct geom_mirror_md md;
	CHECK(geom_mirror_read(m, &md, err, sizeof(err)) == -ENOENT);
	member_close(m);
	m = open_one(2);
	CHECK(geom_mirror_read(m, &md, err, sizeof(err)) == 0 && md.all == 2);
	member_close(m);
	read_disk(2, disk, size);
	CHECK(memcmp(disk, data, size) == 0);
	free(data);
	free(disk);
	rm_files(3);
}

static void refusals(void)
{
	make_files(2);
	struct member *m[2] = {open_one(0), open_one(1)};
	char err[256];
	struct geom_label_opts o = {.name = "a-name-that-is-too-long"};
	CHECK(geom_mirror_label(&o, m, 2, err, sizeof(err)) == -EINVAL);
	/* open without metadata: clear error, members closed */
	struct geom_mirror *g;
	CHECK(geom_mirror_open(m, 2, false, &g, err, sizeof(err), NULL, 0) == -ENOENT);
	CHECKF(strstr(err, "no gmirror metadata") != NULL, "%s", err);
	struct geom_label_opts ok = {.name = "gmr"};
	label(2, &ok);
	const int both[] = {0, 1};
	g = open_gm(both, 2, NULL, 0);
	uint8_t b[512] = {0};
	CHECK(g && geom_mirror_write_at(g, b, 512, g->mediasize) == -EINVAL);
	CHECK(geom_mirror_read_at(g, b, 100, 0) == -EINVAL);
	CHECK(geom_mirror_configure(g, 7, 0, err, sizeof(err)) == -EINVAL);
	CHECK(geom_mirror_remove(g, 5, err, sizeof(err)) == -EINVAL);
	geom_mirror_close(g);
	rm_files(2);
}

/* Several threads reading at once (reads run outside the state lock):
 * every read returns the right bytes under every balance, and each piece
 * is accounted to exactly one disk. */
struct reader_arg {
	struct geom_mirror *g;
	const uint8_t *data;
	uint64_t seed;
	int bad;
};
static void *reader(void *p)
{
	struct reader_arg *a = p;
	uint8_t buf[16384];
	for (int i = 0; i < 200; i++) {
		uint64_t secs = a->g->mediasize / 512;
		uint64_t l = 1 + t_rand(&a->seed) % 32, s = t_rand(&a->seed) % (secs - l);
		if (geom_mirror_read_at(a->g, buf, l * 512, s * 512) != 0 ||
		    memcmp(buf, a->data + s * 512, l * 512) != 0)
			a->bad++;
	}
	return NULL;
}

static void concurrent_readers(void)
{
	make_files(3);
	struct geom_label_opts o = {.name = "gmc"};
	label(3, &o);
	struct geom_mirror *g = open_gm(all3, 3, NULL, 0);
	if (!g)
		return;
	uint8_t *data = malloc(g->mediasize);
	uint64_t seed = 31;
	t_fill(&seed, data, g->mediasize);
	CHECK(geom_mirror_write_at(g, data, g->mediasize, 0) == 0);
	char err[256];
	for (int b = GEOM_BALANCE_ROUND_ROBIN; b <= GEOM_BALANCE_PREFER; b++) {
		CHECK(geom_mirror_configure(g, b, 4096, err, sizeof(err)) == 0);
		uint64_t before = g->disk[0].reads + g->disk[1].reads + g->disk[2].reads;
		pthread_t t[5];
		struct reader_arg a[5];
		for (int i = 0; i < 5; i++) {
			a[i] = (struct reader_arg){g, data, 1000 + (uint64_t)i, 0};
			pthread_create(&t[i], NULL, reader, &a[i]);
		}
		for (int i = 0; i < 5; i++) {
			pthread_join(t[i], NULL);
			CHECKF(a[i].bad == 0, "balance %d reader %d: %d bad reads", b, i, a[i].bad);
		}
		uint64_t after = g->disk[0].reads + g->disk[1].reads + g->disk[2].reads;
		CHECK(after - before >= 1000);
		for (int d = 0; d < 3; d++)
			CHECK(g->bal.d[d].inflight == 0);
	}
	geom_mirror_close(g);
	free(data);
	rm_files(3);
}

/* Written while a disk was absent: that disk comes back out of date
 * (older syncid) and is synchronized, never read as current. */
static void absent_disk_becomes_stale(void)
{
	make_files(2);
	struct geom_label_opts o = {.name = "gma"};
	label(2, &o);
	const int first[] = {0}, both[] = {0, 1};
	struct geom_mirror *g = open_gm(first, 1, NULL, 0);
	if (!g)
		return;
	uint8_t buf[8192], d1[8192];
	memset(buf, 0x77, sizeof(buf));
	CHECK(geom_mirror_write_at(g, buf, sizeof(buf), 0) == 0);
	geom_mirror_close(g);
	g = open_gm(both, 2, NULL, 0);
	if (!g)
		return;
	CHECK(g->disk[0].state == GEOM_DISK_ACTIVE && g->disk[1].state == GEOM_DISK_SYNCING);
	CHECK(geom_mirror_configure(g, GEOM_BALANCE_ROUND_ROBIN, 0, (char[64]){0}, 64) == 0);
	for (int i = 0; i < 4; i++) { /* round-robin must not pick the syncing disk */
		uint8_t back[8192];
		CHECK(geom_mirror_read_at(g, back, sizeof(back), 0) == 0);
		CHECK(memcmp(back, buf, sizeof(buf)) == 0);
	}
	while (geom_mirror_sync_step(g, 65536) == 1)
		;
	geom_mirror_close(g);
	read_disk(1, d1, sizeof(d1));
	CHECK(memcmp(d1, buf, sizeof(buf)) == 0);
	rm_files(2);
}

/* Fields as gmirror label writes them (lib/geom/mirror/geom_mirror.c):
 * genid 0, syncid 1, priority = position, random distinct disk ids, one
 * mirror id, -F/-n in mflags, dflags 0, -h stores the provider name only. */
static void label_fields_like_gmirror(void)
{
	make_files(3);
	struct geom_label_opts o = {.name = "gmh",
	                            .hardcode = true,
	                            .nofailsync = true,
	                            .noautosync = true,
	                            .balance = GEOM_BALANCE_SPLIT,
	                            .slice = 16384};
	label(3, &o);
	struct geom_mirror_md md[3];
	char err[256];
	for (int i = 0; i < 3; i++) {
		struct member *m = open_one(i);
		CHECK(geom_mirror_read(m, &md[i], err, sizeof(err)) == 0);
		member_close(m);
		char want[16];
		snprintf(want, sizeof(want), "c%d", i);
		CHECK(strcmp(md[i].provider, want) == 0 && strcmp(md[i].name, "gmh") == 0);
		CHECK(md[i].genid == 0 && md[i].syncid == 1 && md[i].priority == i &&
		      md[i].all == 3 && md[i].dflags == 0 &&
		      md[i].mflags == (GEOM_MIRROR_DEV_NOAUTOSYNC | GEOM_MIRROR_DEV_NOFAILSYNC) &&
		      md[i].balance == GEOM_BALANCE_SPLIT && md[i].slice == 16384 &&
		      md[i].sectorsize == 512 && md[i].mediasize == CSIZE - 512 &&
		      md[i].provsize == CSIZE && md[i].sync_offset == 0);
		CHECK(md[i].mid == md[0].mid);
	}
	CHECK(md[0].did != md[1].did && md[1].did != md[2].did && md[0].did != md[2].did);
	rm_files(3);
}

TEST_MAIN(T(label_and_io), T(label_fields_like_gmirror), T(absent_disk_becomes_stale),
          T(concurrent_readers), T(failed_disk_skipped_and_genid), T(dirty_resync_and_nofailsync),
          T(insert_sync_interrupted), T(refusals))
