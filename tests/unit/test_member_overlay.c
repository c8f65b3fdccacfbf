/* The copy-on-write overlay (src/member/member_overlay.c) against models
 * written here:
 *  - a shadow copy of the member under random concurrent reads, writes
 *    (byte-granular, several threads writing different bytes of the same
 *    4 KiB blocks) and flushes, directly and through member_ioq batches:
 *    every read matches the shadow, the base never changes, the map holds
 *    exactly the blocks written, and a reopened overlay shows the same;
 *  - power cuts (sim/member_crash.h under the store: lost, torn and
 *    reordered cached writes) at random requests: after the crash no block
 *    is claimed that was not written (each sector of a held block holds a
 *    version some write put there), what was flushed is there exactly, and
 *    unwritten blocks read the base;
 *  - refusals: another array's overlay, a changed base, no header, an
 *    interrupted commit, read-only overlays; overlay files in a directory
 *    (found again by key, locked while open, listed, committed, discarded). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness.h"
#include "member/member_overlay.h"
#include "sim/member_crash.h"
#include "uraid.h"
#include "util/md5.h"

#define BLK MEMBER_OVERLAY_BLOCK

static struct member *mem_with(const unsigned char *data, uint64_t size)
{
	struct member *m = NULL;
	CHECK(member_open_mem("mem", size, &m) == 0);
	if (m && data)
		CHECK(member_write(m, data, (size_t)size, 0, 0) == 0);
	return m;
}

/* An overlay over a memory base holding `base`, on a fresh memory store
 * (formatted) or on one holding `store`. */
static struct member *open_ov(const unsigned char *base, uint64_t size, const unsigned char *store,
                              struct member **basep, struct member **storep)
{
	char err[512];
	struct member *b = mem_with(base, size);
	uint64_t sb = member_overlay_store_bytes(size);
	struct member *s = mem_with(store, sb);
	if (!store)
		CHECKF(member_overlay_format(b, s, "md:test", "k1", err, sizeof(err)) == 0, "%s",
		       err);
	struct member *o = NULL;
	int rc = member_overlay_open_store(b, s, "md:test", 0, &o, err, sizeof(err));
	CHECKF(rc == 0, "open: %s", err);
	if (basep)
		*basep = b;
	if (storep)
		*storep = s;
	return o;
}

static unsigned char *dump(struct member *m)
{
	unsigned char *p = malloc(m->size);
	CHECK(p && member_read(m, p, (size_t)m->size, 0) == 0);
	return p;
}

/* ---- concurrent I/O against a shadow ---- */

#define NTHR  4
#define CSIZE ((3u << 20) + 1536) /* last block partial */
#define REGA  (1u << 20)          /* [0, REGA): thread t owns bytes t*1K..t*1K+1K of each block */
#define SLICE (BLK / NTHR)
#define ITERS 3000

struct world {
	struct member *ov;
	unsigned char *shadow;
	uint8_t written[CSIZE / BLK + 1]; /* per block: some thread wrote it */
	pthread_mutex_t wlock;
	pthread_barrier_t start;
};

struct thr {
	struct world *w;
	int t;
	uint64_t seed;
	int bad;
};

/* A random piece of thread t's bytes: in region A a part of its slice of
 * one block, in region B anywhere in its zone (zones do not start on block
 * boundaries, so neighbours share a block). Region A's blocks are taken in
 * order (*seq) on the first pass, so every thread writes a block the
 * overlay does not hold yet at about the same time (copy-on-write races). */
static void pick(int t, uint64_t *rs, uint64_t *seq, uint64_t *off, size_t *len)
{
	if (*seq < REGA / BLK || t_rand(rs) % 2) {
		uint64_t b = *seq < REGA / BLK ? (*seq)++ : t_rand(rs) % (REGA / BLK);
		uint64_t s = b * BLK + (uint64_t)t * SLICE;
		uint64_t a = t_rand(rs) % SLICE;
		*off = s + a;
		*len = 1 + (size_t)(t_rand(rs) % (SLICE - a));
		return;
	}
	uint64_t zone = (CSIZE - REGA) / NTHR;
	uint64_t z0 = REGA + (uint64_t)t * zone;
	uint64_t z1 = t == NTHR - 1 ? CSIZE : z0 + zone;
	*off = z0 + t_rand(rs) % (z1 - z0);
	uint64_t max = z1 - *off < 70000 ? z1 - *off : 70000;
	*len = 1 + (size_t)(t_rand(rs) % max);
	if (t_rand(rs) % 3 == 0) { /* sector-aligned, as the engine sends */
		*off &= ~(uint64_t)511;
		*len = (*len + 511) & ~(size_t)511;
		if (*off + *len > z1)
			*len = (size_t)(z1 - *off) & ~(size_t)511;
		if (*len == 0 || *off < z0)
			*len = 0;
	}
}

static void mark_written(struct world *w, uint64_t off, size_t len)
{
	pthread_mutex_lock(&w->wlock);
	for (uint64_t b = off / BLK; b <= (off + len - 1) / BLK; b++)
		w->written[b] = 1;
	pthread_mutex_unlock(&w->wlock);
}

static void *worker(void *arg)
{
	struct thr *th = arg;
	struct world *w = th->w;
	uint64_t rs = th->seed, seq = 0;
	unsigned char *buf = malloc(80000), *buf2 = malloc(80000); /* 70000 rounded up */
	struct member_ioq *q = NULL;
	if (member_ioq_open(8, &q) < 0)
		th->bad++;
	pthread_barrier_wait(&w->start);
	for (int it = 0; it < ITERS && !th->bad; it++) {
		uint64_t off, off2;
		size_t len, len2;
		pick(th->t, &rs, &seq, &off, &len);
		if (len == 0)
			continue;
		/* the first pass over region A: writes only, in step */
		unsigned op = seq <= REGA / BLK ? 1 : (unsigned)(t_rand(&rs) % 20);
		if (op < 8) {
			t_fill(&rs, buf, len);
			if (member_write(w->ov, buf, len, off, op == 0 ? MEMBER_FUA : 0) < 0)
				th->bad++;
			memcpy(w->shadow + off, buf, len);
			mark_written(w, off, len);
		} else if (op < 16) {
			if (member_read(w->ov, buf, len, off) < 0 ||
			    memcmp(buf, w->shadow + off, len)) {
				fprintf(stderr, "thread %d: read of %zu at %llu differs\n", th->t,
				        len, (unsigned long long)off);
				th->bad++;
			}
		} else if (op < 19) {
			/* a write and a read of another piece in one member_ioq batch,
			 * then a flush */
			pick(th->t, &rs, &seq, &off2, &len2);
			if (len2 == 0)
				continue;
			t_fill(&rs, buf, len);
			struct member_io io[3] = {
			    {.m = w->ov, .op = MEMBER_OP_WRITE, .buf = buf, .len = len, .off = off},
			    {.m = w->ov,
			     .op = MEMBER_OP_READ,
			     .buf = buf2,
			     .len = len2,
			     .off = off2},
			    {.m = w->ov, .op = MEMBER_OP_FLUSH}};
			bool overlap = off < off2 + len2 && off2 < off + len;
			/* overlapping requests of one batch are undefined: read alone */
			int rc = member_ioq_run(q, io, overlap ? 1 : 3);
			if (rc < 0)
				th->bad++;
			memcpy(w->shadow + off, buf, len);
			mark_written(w, off, len);
			if (!overlap && memcmp(buf2, w->shadow + off2, len2)) {
				fprintf(stderr, "thread %d: batched read differs\n", th->t);
				th->bad++;
			}
		} else if (member_flush(w->ov) < 0) {
			th->bad++;
		}
	}
	member_ioq_close(q);
	free(buf);
	free(buf2);
	return NULL;
}

static void concurrent_model(void)
{
	uint64_t rs = 0x0e71a7;
	unsigned char *base = malloc(CSIZE);
	t_fill(&rs, base, CSIZE);
	struct world w = {.shadow = malloc(CSIZE)};
	pthread_mutex_init(&w.wlock, NULL);
	pthread_barrier_init(&w.start, NULL, NTHR);
	memcpy(w.shadow, base, CSIZE);
	struct member *b, *s;
	w.ov = open_ov(base, CSIZE, NULL, &b, &s);
	if (!w.ov)
		return;
	CHECK(member_is_overlay(w.ov) && w.ov->size == CSIZE && !w.ov->readonly);
	pthread_t tid[NTHR];
	struct thr th[NTHR];
	for (int t = 0; t < NTHR; t++) {
		th[t] = (struct thr){.w = &w, .t = t, .seed = t_rand(&rs)};
		CHECK(pthread_create(&tid[t], NULL, worker, &th[t]) == 0);
	}
	for (int t = 0; t < NTHR; t++) {
		pthread_join(tid[t], NULL);
		CHECKF(th[t].bad == 0, "thread %d: %d bad requests", t, th[t].bad);
	}
	unsigned char *now = dump(w.ov), *bnow = dump(b);
	CHECK(memcmp(now, w.shadow, CSIZE) == 0);
	CHECKF(memcmp(bnow, base, CSIZE) == 0, "the base was written");
	uint64_t nb = (CSIZE + BLK - 1) / BLK, held = 0, wrong = 0;
	for (uint64_t k = 0; k < nb; k++) {
		held += w.written[k];
		wrong += member_overlay_holds(w.ov, k) != (bool)w.written[k];
	}
	CHECK_EQ_U64(wrong, 0);
	CHECK_EQ_U64(member_overlay_held(w.ov), held);
	/* Flushed, then reopened from a copy of the store: the same view. */
	CHECK(member_flush(w.ov) == 0);
	unsigned char *st = dump(s);
	member_close(w.ov);
	struct member *o2 = open_ov(base, CSIZE, st, NULL, NULL);
	if (o2) {
		unsigned char *again = dump(o2);
		CHECK(memcmp(again, w.shadow, CSIZE) == 0);
		CHECK_EQ_U64(member_overlay_held(o2), held);
		free(again);
		member_close(o2);
	}
	free(now);
	free(bnow);
	free(st);
	free(base);
	free(w.shadow);
	pthread_mutex_destroy(&w.wlock);
	pthread_barrier_destroy(&w.start);
}

/* Copy-on-write races alone: every thread writes its quarter of each
 * block, block after block in step, so first writes to a block the overlay
 * does not hold meet all the time; none of them may undo another's. */
#define RSIZE (8u << 20)

struct race {
	struct member *ov;
	pthread_barrier_t *start;
	int t, bad;
	uint64_t seed;
	unsigned char *shadow;
};

static void *racer(void *arg)
{
	struct race *r = arg;
	unsigned char piece[SLICE];
	uint64_t rs = r->seed;
	pthread_barrier_wait(r->start);
	for (uint64_t b = 0; b < RSIZE / BLK; b++) {
		uint64_t off = b * BLK + (uint64_t)r->t * SLICE;
		t_fill(&rs, piece, 8);
		memset(piece + 8, piece[0], SLICE - 8);
		if (member_write(r->ov, piece, SLICE, off, 0) < 0)
			r->bad++;
		memcpy(r->shadow + off, piece, SLICE);
	}
	return NULL;
}

static void cow_race(void)
{
	uint64_t rs = 0xace;
	unsigned char *base = malloc(RSIZE), *shadow = malloc(RSIZE);
	for (int round = 0; round < 3; round++) {
		t_fill(&rs, base, 4096);
		for (uint64_t o = 4096; o < RSIZE; o += 4096)
			memcpy(base + o, base, 4096);
		memcpy(shadow, base, RSIZE);
		struct member *ov = open_ov(base, RSIZE, NULL, NULL, NULL);
		if (!ov)
			break;
		pthread_t tid[NTHR];
		struct race r[NTHR];
		pthread_barrier_t start;
		pthread_barrier_init(&start, NULL, NTHR);
		for (int t = 0; t < NTHR; t++) {
			r[t] = (struct race){.ov = ov,
			                     .start = &start,
			                     .t = t,
			                     .seed = t_rand(&rs),
			                     .shadow = shadow};
			CHECK(pthread_create(&tid[t], NULL, racer, &r[t]) == 0);
		}
		for (int t = 0; t < NTHR; t++) {
			pthread_join(tid[t], NULL);
			CHECK(r[t].bad == 0);
		}
		pthread_barrier_destroy(&start);
		unsigned char *now = dump(ov);
		uint64_t wrong = 0;
		for (uint64_t o = 0; o < RSIZE; o += SLICE)
			wrong += memcmp(now + o, shadow + o, SLICE) != 0;
		CHECKF(wrong == 0, "round %d: %llu quarter-blocks lost to another write", round,
		       (unsigned long long)wrong);
		free(now);
		member_close(ov);
	}
	free(base);
	free(shadow);
}

/* ---- power cuts ---- */

#define KSIZE  (64 * 4096 + 1024) /* 65 blocks, the last one partial */
#define KSEC   (KSIZE / 512)
#define KBLK   ((KSIZE + BLK - 1) / BLK)
#define MAXVER 64

struct kmodel {
	unsigned char view[KSIZE];    /* what reads must return now */
	unsigned char flushed[KSIZE]; /* the view at the last successful flush */
	bool written[KBLK];           /* some write (even a failed one) touched it */
	bool since_flush[KBLK];       /* touched after the last successful flush */
	bool durable[KBLK];           /* written and flushed since */
	uint64_t ver[KSEC][MAXVER];   /* hashes of the contents a sector held in the store */
	int nver[KSEC];
};

static uint64_t sec_hash(const unsigned char *p)
{
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < 512; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* A write of buf at [off, off + len) may now be in the store (even a failed
 * one may have reached its cache): every sector of each block it touches,
 * as the block reads with the write applied, counts as written. */
static void record(struct kmodel *k, const unsigned char *buf, uint64_t off, size_t len)
{
	unsigned char blk[BLK];
	for (uint64_t b = off / BLK; b <= (off + len - 1) / BLK; b++) {
		uint64_t s0 = b * BLK, s1 = s0 + BLK < KSIZE ? s0 + BLK : KSIZE;
		memcpy(blk, k->view + s0, (size_t)(s1 - s0));
		uint64_t lo = off > s0 ? off : s0, hi = off + len < s1 ? off + len : s1;
		memcpy(blk + (lo - s0), buf + (lo - off), (size_t)(hi - lo));
		for (uint64_t s = s0 / 512; s < s1 / 512; s++)
			if (k->nver[s] < MAXVER)
				k->ver[s][k->nver[s]++] = sec_hash(blk + (s * 512 - s0));
		k->written[b] = true;
		k->since_flush[b] = true;
	}
}

static bool known(const struct kmodel *k, uint64_t s, const unsigned char *p)
{
	uint64_t h = sec_hash(p);
	for (int i = 0; i < k->nver[s]; i++)
		if (k->ver[s][i] == h)
			return true;
	return false;
}

/* A flush (or FUA write) succeeded: all of the view is durable. */
static void flushed(struct kmodel *k)
{
	for (unsigned x = 0; x < KBLK; x++) {
		if (!k->since_flush[x])
			continue;
		uint64_t s0 = (uint64_t)x * BLK, s1 = s0 + BLK < KSIZE ? s0 + BLK : KSIZE;
		memcpy(k->flushed + s0, k->view + s0, (size_t)(s1 - s0));
		k->durable[x] = true;
		k->since_flush[x] = false;
	}
}

static void crash_trial(uint64_t seed, int *claimed_bad, int *lost, int *trials_crashed)
{
	uint64_t rs = seed;
	char err[512];
	static struct kmodel k;
	static unsigned char base[KSIZE], buf[KSIZE];
	memset(&k, 0, sizeof(k));
	t_fill(&rs, base, KSIZE);
	memcpy(k.view, base, KSIZE);
	memcpy(k.flushed, base, KSIZE);
	struct crash_ctl *c;
	struct member *b = mem_with(base, KSIZE), *smem, *s, *o = NULL;
	CHECK(crash_ctl_new(&c) == 0);
	CHECK(member_open_mem("store", member_overlay_store_bytes(KSIZE), &smem) == 0);
	CHECK(member_crash_wrap(smem, c, &s) == 0);
	CHECKF(member_overlay_format(b, s, "md:test", "k1", err, sizeof(err)) == 0, "%s", err);
	CHECKF(member_overlay_open_store(b, s, "md:test", 0, &o, err, sizeof(err)) == 0, "%s", err);
	if (!o)
		return;
	crash_ctl_arm(c, crash_ctl_requests(c) + 1 + t_rand(&rs) % 120);
	for (int op = 0; op < 60 && !crash_ctl_crashed(c); op++) {
		if (t_rand(&rs) % 6 == 0) {
			if (member_flush(o) == 0)
				flushed(&k);
			continue;
		}
		/* Sector-aligned, as the engine writes: the crash model tears a
		 * write into 512-byte pieces counted from its start, which only
		 * match the sectors checked below when it starts on one. */
		uint64_t off = t_rand(&rs) % KSIZE & ~(uint64_t)511;
		size_t len = 512 * (1 + (size_t)(t_rand(&rs) % 18));
		if (off + len > KSIZE)
			len = (size_t)(KSIZE - off);
		t_fill(&rs, buf, len);
		record(&k, buf, off, len);
		bool fua = t_rand(&rs) % 8 == 0;
		int rc = member_write(o, buf, len, off, fua ? MEMBER_FUA : 0);
		if (rc == 0)
			memcpy(k.view + off, buf, len);
		/* FUA: durable on completion, and everything before it (the overlay
		 * flushes to make it so) */
		if (rc == 0 && fua)
			flushed(&k);
	}
	*trials_crashed += crash_ctl_crashed(c);
	struct crash_stats cs;
	CHECK(crash_apply(c, t_rand(&rs), &cs) == 0);
	unsigned char *stored = dump(s); /* the durable state, before close flushes */
	member_close(o);
	crash_ctl_free(c);
	struct member *o2 = open_ov(base, KSIZE, stored, NULL, NULL);
	free(stored);
	if (!o2)
		return;
	unsigned char *got = dump(o2);
	for (uint64_t x = 0; x < KBLK; x++) {
		bool h = member_overlay_holds(o2, x);
		for (uint64_t s2 = x * 8; s2 < (x + 1) * 8 && s2 < KSEC; s2++) {
			const unsigned char *p = got + s2 * 512;
			if (h && !known(&k, s2, p)) {
				(*claimed_bad)++;
				fprintf(stderr,
				        "seed %llx: block %llu held, sector %llu never written\n",
				        (unsigned long long)seed, (unsigned long long)x,
				        (unsigned long long)s2);
			}
			if (!h && memcmp(p, base + s2 * 512, 512))
				(*claimed_bad)++;
			if (k.durable[x] && !k.since_flush[x] &&
			    (!h || memcmp(p, k.flushed + s2 * 512, 512))) {
				(*lost)++;
				fprintf(stderr, "seed %llx: block %llu flushed, not there\n",
				        (unsigned long long)seed, (unsigned long long)x);
			}
		}
		if (!k.written[x] && h)
			(*claimed_bad)++;
	}
	free(got);
	member_close(o2);
}

static void crash_torn_map(void)
{
	uint64_t rs = 0x7042;
	int claimed_bad = 0, lost = 0, crashed = 0;
	for (int trial = 0; trial < 200; trial++)
		crash_trial(t_rand(&rs), &claimed_bad, &lost, &crashed);
	CHECKF(claimed_bad == 0, "%d sectors claimed but never written (or base wrong)",
	       claimed_bad);
	CHECKF(lost == 0, "%d flushed sectors lost", lost);
	CHECKF(crashed > 100, "only %d of 200 trials crashed mid-run", crashed);
}

/* ---- refusals and read-only overlays ---- */

static void refusals(void)
{
	uint64_t rs = 0x4ef;
	const uint64_t size = 3u << 20;
	char err[512];
	unsigned char *base = malloc(size), *blk = malloc(BLK);
	t_fill(&rs, base, size);
	struct member *s;
	struct member *o = open_ov(base, size, NULL, NULL, &s);
	t_fill(&rs, blk, BLK);
	CHECK(o && member_write(o, blk, BLK, 8192, 0) == 0 && member_flush(o) == 0);
	unsigned char *st = dump(s);
	member_close(o);
	struct member *b, *m, *out;

	/* another array's tag */
	b = mem_with(base, size);
	m = mem_with(st, member_overlay_store_bytes(size));
	int rc = member_overlay_open_store(b, m, "md:other", 0, &out, err, sizeof(err));
	CHECKF(rc == -EEXIST && strstr(err, "another array (md:test)"), "%d %s", rc, err);

	/* the base changed in its first MiB, then in its last */
	for (int where = 0; where < 2; where++) {
		base[where ? size - 100 : 4096] ^= 1;
		b = mem_with(base, size);
		m = mem_with(st, member_overlay_store_bytes(size));
		rc = member_overlay_open_store(b, m, "md:test", 0, &out, err, sizeof(err));
		CHECKF(rc == -ESTALE && strstr(err, "changed since its overlay"), "%d %s", rc, err);
		base[where ? size - 100 : 4096] ^= 1;
	}
	/* a store without a header; a damaged header */
	b = mem_with(base, size);
	m = mem_with(NULL, member_overlay_store_bytes(size));
	rc = member_overlay_open_store(b, m, NULL, 0, &out, err, sizeof(err));
	CHECKF(rc == -ENOENT && strstr(err, "not an overlay"), "%d %s", rc, err);
	st[200] ^= 1;
	b = mem_with(base, size);
	m = mem_with(st, member_overlay_store_bytes(size));
	rc = member_overlay_open_store(b, m, NULL, 0, &out, err, sizeof(err));
	CHECKF(rc == -EINVAL && strstr(err, "damaged"), "%d %s", rc, err);
	st[200] ^= 1;

	/* read-only: the view, no writes; without a store: the base */
	b = mem_with(base, size);
	m = mem_with(st, member_overlay_store_bytes(size));
	m->readonly = true;
	rc = member_overlay_open_store(b, m, "md:test", OVERLAY_RDONLY, &out, err, sizeof(err));
	CHECKF(rc == 0, "%s", err);
	if (rc == 0) {
		unsigned char *v = dump(out);
		CHECK(memcmp(v + 8192, blk, BLK) == 0 && memcmp(v, base, 8192) == 0);
		CHECK(member_write(out, blk, 512, 0, 0) == -EROFS);
		free(v);
		member_close(out);
	}
	b = mem_with(base, size);
	CHECK(member_overlay_open_store(b, NULL, NULL, OVERLAY_RDONLY, &out, err, sizeof(err)) ==
	      0);
	if (out) {
		unsigned char *v = dump(out);
		CHECK(memcmp(v, base, size) == 0);
		free(v);
		member_close(out);
	}
	b = mem_with(base, size);
	CHECK(member_overlay_open_store(b, NULL, NULL, 0, &out, err, sizeof(err)) == -EINVAL);
	free(st);
	free(base);
	free(blk);
}

/* ---- overlay files in a directory ---- */

static void directory(void)
{
	char dir[128], mpath[160], err[1024];
	snprintf(dir, sizeof(dir), "/var/tmp/uraid-test-ovl-%ld", (long)getpid());
	CHECK(mkdir(dir, 0700) == 0);
	snprintf(mpath, sizeof(mpath), "%s/member.img", dir);
	char ovdir[160];
	snprintf(ovdir, sizeof(ovdir), "%s/ov", dir);
	CHECK(mkdir(ovdir, 0700) == 0);
	uint64_t rs = 0xd1;
	const uint64_t size = 5u << 20;
	unsigned char *data = malloc(size), *want = malloc(size);
	t_fill(&rs, data, size);
	int fd = open(mpath, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0 && write(fd, data, size) == (ssize_t)size);
	close(fd);
	memcpy(want, data, size);

	char dpath[4096];
	int dfd = member_overlay_dir_open(ovdir, false, dpath, sizeof(dpath), err, sizeof(err));
	CHECKF(dfd >= 0, "%s", err);
	struct member *base, *o = NULL, *o2 = NULL, *busy = NULL;
	CHECK(member_open_file(mpath, MEMBER_RDONLY, 0, &base, err, sizeof(err)) == 0);
	CHECKF(member_overlay_open(base, dfd, dpath, "md:a", NULL, 0, &o, err, sizeof(err)) == 0,
	       "%s", err);
	/* a second user of the overlay, and a writable user of the member */
	CHECK(member_open_file(mpath, MEMBER_RDONLY, 0, &base, err, sizeof(err)) == 0);
	CHECK(member_overlay_open(base, dfd, dpath, "md:a", NULL, 0, &o2, err, sizeof(err)) ==
	      -EBUSY);
	CHECKF(strstr(err, "in use by a running array"), "%s", err);
	CHECK(member_open_file(mpath, 0, 0, &busy, err, sizeof(err)) == 0);
	CHECK(busy && member_lock(busy) == -EBUSY);
	member_close(busy);
	/* writes: an unaligned one and a run of blocks */
	unsigned char *w = malloc(300000);
	t_fill(&rs, w, 300000);
	CHECK(o && member_write(o, w, 1000, 4095, 0) == 0);
	memcpy(want + 4095, w, 1000);
	CHECK(member_write(o, w, 300000, size - 300000, MEMBER_FUA) == 0);
	memcpy(want + size - 300000, w, 300000);
	uint64_t held = member_overlay_held(o);
	/* another array may not use the directory */
	CHECK(member_overlay_dir_check(dfd, dpath, "md:b", err, sizeof(err)) == -EEXIST);
	CHECKF(strstr(err, "another array (md:a"), "%s", err);
	CHECK(member_overlay_dir_check(dfd, dpath, "md:a", err, sizeof(err)) == 0);

	struct uraid_overlay_info *info;
	int n = 0;
	CHECKF(uraid_overlay_list(ovdir, &info, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n == 1);
	if (n == 1) {
		CHECK(info[0].in_use && info[0].member_state == 0);
		CHECK(strstr(info[0].member, "/member.img") && !strcmp(info[0].array, "md:a"));
		CHECK_EQ_U64(info[0].held_bytes, held * BLK);
		CHECK(strstr(info[0].file, "member.img.f") == info[0].file);
	}
	free(info);
	CHECK(uraid_overlay_commit(ovdir, NULL, err, sizeof(err)) == -EBUSY);
	CHECKF(strstr(err, "in use by a running array"), "%s", err);
	CHECK(uraid_overlay_discard(ovdir, NULL, err, sizeof(err)) == -EBUSY);
	member_close(o);

	/* found again by its key; the view is the same */
	CHECK(member_open_file(mpath, MEMBER_RDONLY, 0, &base, err, sizeof(err)) == 0);
	CHECK(member_overlay_open(base, dfd, dpath, "md:a", NULL, OVERLAY_RDONLY, &o, err,
	                          sizeof(err)) == 0);
	if (o) {
		unsigned char *v = dump(o);
		CHECK(memcmp(v, want, size) == 0);
		free(v);
		member_close(o);
	}
	fd = open(mpath, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, w, 300000, 0) == 300000 && memcmp(w, data, 300000) == 0);
	close(fd);

	/* a file named as another member's overlay: refused by its header */
	CHECK(uraid_overlay_list(ovdir, &info, &n, err, sizeof(err)) == 0 && n == 1);
	if (n == 1) {
		char from[600], to[600];
		snprintf(from, sizeof(from), "%s/%s", ovdir, info[0].file);
		snprintf(to, sizeof(to), "%s/other.kother.uovl", ovdir);
		CHECK(rename(from, to) == 0);
		CHECK(member_open_file(mpath, MEMBER_RDONLY, 0, &base, err, sizeof(err)) == 0);
		CHECK(member_overlay_open(base, dfd, dpath, "md:a", "kother", 0, &o, err,
		                          sizeof(err)) == -EEXIST);
		CHECKF(strstr(err, "overlay of another member"), "%s", err);
		CHECK(rename(to, from) == 0);
	}
	free(info);

	uint64_t bytes = 0;
	CHECKF(uraid_overlay_commit(ovdir, &bytes, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U64(bytes, held * BLK);
	fd = open(mpath, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, data, size, 0) == (ssize_t)size &&
	      memcmp(data, want, size) == 0);
	close(fd);
	CHECK(uraid_overlay_list(ovdir, &info, &n, err, sizeof(err)) == 0 && n == 0);
	free(info);
	CHECK(uraid_overlay_commit(ovdir, NULL, err, sizeof(err)) == -ENOENT);

	/* an interrupted commit: open refuses, discard refuses, commit finishes */
	CHECK(member_open_file(mpath, MEMBER_RDONLY, 0, &base, err, sizeof(err)) == 0);
	CHECK(member_overlay_open(base, dfd, dpath, "md:a", NULL, 0, &o, err, sizeof(err)) == 0);
	CHECK(o && member_write(o, w, 4096, 0, 0) == 0);
	member_close(o);
	char name[600] = "";
	struct uraid_overlay_info *li;
	CHECK(uraid_overlay_list(ovdir, &li, &n, err, sizeof(err)) == 0 && n == 1);
	if (n == 1) {
		snprintf(name, sizeof(name), "%s/%s", ovdir, li[0].file);
		struct member *st;
		CHECK(member_open_file(name, 0, 0, &st, err, sizeof(err)) == 0);
		unsigned char sec[512] = "URAIDCMT\1";
		/* the commit sector as a commit marks it: magic, state 1, MD5 */
		md5(sec, 16, sec + 16);
		CHECK(member_write(st, sec, 512, 3584, 0) == 0);
		member_close(st);
	}
	free(li);
	CHECK(member_open_file(mpath, MEMBER_RDONLY, 0, &base, err, sizeof(err)) == 0);
	CHECK(member_overlay_open(base, dfd, dpath, "md:a", NULL, 0, &o, err, sizeof(err)) ==
	      -EBUSY);
	CHECKF(strstr(err, "was interrupted"), "%s", err);
	CHECK(uraid_overlay_discard(ovdir, NULL, err, sizeof(err)) == -EBUSY);
	/* the member changed meanwhile (as the commit would change it): still
	 * finished, since the fingerprint cannot match any more */
	fd = open(mpath, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, "x", 1, 100) == 1);
	close(fd);
	CHECKF(uraid_overlay_commit(ovdir, &bytes, err, sizeof(err)) == 0, "%s", err);
	fd = open(mpath, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, data, 4096, 0) == 4096 && memcmp(data, w, 4096) == 0);
	close(fd);

	close(dfd);
	free(w);
	free(data);
	free(want);
	unlink(mpath);
	rmdir(ovdir);
	CHECK(rmdir(dir) == 0);
}

TEST_MAIN(T(concurrent_model), T(cow_race), T(crash_torn_map), T(refusals), T(directory))
