/* Shared helpers for the engine tests: in-memory members that outlive an
 * array (so a "crash" can be simulated by dropping the array and assembling
 * again), a shadow copy of the logical contents, and independent checks of
 * member contents. */
#ifndef TEST_ENGINE_COMMON_H
#define TEST_ENGINE_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "layout/layout.h"
#include "member/member.h"
#include "sim/member_fault.h"
#include "uraid.h"

#define TE_MAX 16

/* A disk: a mem member behind a fault wrapper, owned by the test. */
struct te_disk {
	struct member *mem;   /* the storage */
	struct member *fault; /* wraps mem, owned by the test */
	char name[32];
	char path[96]; /* te_disk_open_file: the file, removed on close */
};

/* The array's view of a disk: forwards to the fault wrapper; closing it
 * (array stop or drop) leaves the disk intact. */
struct te_borrow {
	struct member m;
	struct member *inner;
};

static inline ssize_t te_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct member *in = ((struct te_borrow *)m)->inner;
	return in->ops->pread(in, buf, len, off);
}
static inline ssize_t te_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                                unsigned flags)
{
	struct member *in = ((struct te_borrow *)m)->inner;
	return in->ops->pwrite(in, buf, len, off, flags);
}
static inline int te_flush(struct member *m)
{
	struct member *in = ((struct te_borrow *)m)->inner;
	return in->ops->flush ? in->ops->flush(in) : 0;
}
static inline int te_fd(struct member *m)
{
	(void)m;
	return -1;
}
static inline void te_close(struct member *m)
{
	free(m);
}
static inline void *te_map_addr(struct member *m, uint64_t off, size_t len)
{
	return member_map_addr(((struct te_borrow *)m)->inner, off, len);
}
static const struct member_ops te_borrow_ops = {
    .kind = "borrow",
    .pread = te_pread,
    .pwrite = te_pwrite,
    .flush = te_flush,
    .fd = te_fd,
    .close = te_close,
    .map_addr = te_map_addr,
};

static inline struct member *te_borrow(struct te_disk *d)
{
	struct te_borrow *b = calloc(1, sizeof(*b));
	if (!b)
		abort();
	b->m.ops = &te_borrow_ops;
	snprintf(b->m.name, sizeof(b->m.name), "%s", d->name);
	b->m.size = d->mem->size;
	b->m.logical_block = 512;
	b->inner = d->fault;
	return &b->m;
}

/* The same, straight to the storage (no injected faults). */
static inline struct member *te_borrow_raw(struct te_disk *d)
{
	struct member *m = te_borrow(d);
	((struct te_borrow *)m)->inner = d->mem;
	return m;
}

static inline void te_disk_open(struct te_disk *d, const char *name, uint64_t size)
{
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (member_open_mem(name, size, &d->mem) < 0 || member_fault_wrap(d->mem, &d->fault) < 0)
		abort();
}

/* The same storage as a file in `dir` (a tmpfs: mapped where the process
 * installed the SIGBUS guard). */
static inline void te_disk_open_file(struct te_disk *d, const char *name, const char *dir,
                                     uint64_t size)
{
	char err[256];
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->path, sizeof(d->path), "%s/%s", dir, name);
	if (member_open_file(d->path, MEMBER_CREATE, size, &d->mem, err, sizeof(err)) < 0 ||
	    member_fault_wrap(d->mem, &d->fault) < 0) {
		fprintf(stderr, "%s: %s\n", d->path, err);
		abort();
	}
}

static inline void te_disk_close(struct te_disk *d)
{
	if (d->fault)
		member_close(d->fault); /* owns mem */
	d->fault = d->mem = NULL;
	if (d->path[0])
		unlink(d->path);
	d->path[0] = 0;
}

static inline int te_assemble(struct te_disk *disks, const int *idx, int n, struct uraid_array **a,
                              char *warn, size_t warnlen)
{
	struct member *mm[TE_MAX];
	char err[512];
	for (int i = 0; i < n; i++)
		mm[i] = te_borrow(&disks[idx[i]]);
	int rc =
	    uraid_assemble_members(mm, n, URAID_NO_SYNC_THREAD, a, err, sizeof(err), warn, warnlen);
	if (rc < 0)
		fprintf(stderr, "assemble: %s\n", err);
	return rc;
}

/* The same, starting a dirty degraded raid4/5/6 too (URAID_FORCE), as tests
 * that crash a degraded array and carry on mean to. */
static inline int te_assemble_force(struct te_disk *disks, const int *idx, int n,
                                    struct uraid_array **a, char *warn, size_t warnlen)
{
	struct member *mm[TE_MAX];
	char err[512];
	for (int i = 0; i < n; i++)
		mm[i] = te_borrow(&disks[idx[i]]);
	int rc = uraid_assemble_members(mm, n, URAID_NO_SYNC_THREAD | URAID_FORCE, a, err,
	                                sizeof(err), warn, warnlen);
	if (rc < 0)
		fprintf(stderr, "assemble: %s\n", err);
	return rc;
}

static inline int te_create(const struct uraid_create_opts *o, struct te_disk *disks, int n,
                            struct uraid_array **a)
{
	struct member *mm[TE_MAX];
	char err[512];
	for (int i = 0; i < n; i++)
		mm[i] = te_borrow(&disks[i]);
	int rc = uraid_create_members(o, mm, n, URAID_NO_SYNC_THREAD, a, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "create: %s\n", err);
	return rc;
}

/* Whole-array comparison with the shadow, in pieces of varying size. */
static inline int te_verify(struct uraid_array *a, const uint8_t *shadow, uint64_t size)
{
	uint8_t *buf = malloc(1 << 20);
	int bad = 0;
	for (uint64_t off = 0; off < size && !bad;) {
		uint64_t n = size - off < (1 << 20) ? size - off : (1 << 20);
		int rc = uraid_read(a, buf, n, off);
		if (rc < 0 || memcmp(buf, shadow + off, n)) {
			fprintf(stderr, "verify: mismatch/error (%d) in [%llu, +%llu)\n", rc,
			        (unsigned long long)off, (unsigned long long)n);
			bad = 1;
		}
		off += n;
	}
	free(buf);
	return bad;
}

/* The geometry a status describes (raid1/4/5/6/10: no per-member sizes). */
static inline void te_geom(const struct uraid_status *st, struct layout_geometry *g)
{
	memset(g, 0, sizeof(*g));
	g->level = st->level;
	g->layout = st->layout;
	g->chunk_sectors = st->chunk_sectors;
	g->raid_disks = st->raid_disks;
	g->dev_sectors = st->dev_sectors;
}

/* Data offset (sectors) of a disk with a 1.2 superblock (4 KiB in, the u64
 * at byte 128), read from the storage itself. */
static inline uint64_t te_data_offset(struct member *m)
{
	uint8_t sb[512];
	if (member_read(m, sb, sizeof(sb), 8 * 512) < 0)
		return UINT64_MAX;
	uint64_t doff = 0;
	for (int i = 7; i >= 0; i--)
		doff = doff << 8 | sb[128 + i];
	return doff;
}

/* What member `role` of the array `st` describes must hold, computed from
 * the array's contents `shadow` alone: data and mirror copies where the
 * layout's map puts them, P (XOR) and Q (pq_gen) of every stripe. img gets
 * the member's used sectors from the start of its data area; def[s] says
 * whether sector s holds anything (raid10 leaves some unused). Returns the
 * number of used sectors (the length of img and def). */
static inline uint64_t te_member_model(const struct uraid_status *st, const uint8_t *shadow,
                                       int role, uint8_t *img, bool *def)
{
	struct layout_geometry g;
	te_geom(st, &g);
	const struct layout_ops *ops = layout_ops_for(g.level);
	uint64_t used = ops->member_used(&g, role);
	memset(def, 0, used * sizeof(bool));
	if (ops->stripe) { /* raid4/5/6 */
		const struct uraid_parity *pp = uraid_parity_get(NULL);
		uint64_t chunk = g.chunk_sectors;
		size_t clen = chunk * 512;
		uint8_t *pq = malloc(2 * clen), *zero = calloc(1, clen);
		void *blk[LAYOUT_MAX_MEMBERS + 2];
		struct layout_stripe ls;
		ops->stripe(&g, 0, &ls);
		uint64_t width = (uint64_t)ls.ndata * chunk;
		for (uint64_t s = 0; s < st->array_sectors / width; s++) {
			ops->stripe(&g, s, &ls);
			bool q = ls.q_role >= 0;
			int nsyn = ls.ndata;
			for (int di = 0; q && di < ls.ndata; di++)
				nsyn = ls.q_index[di] + 1 > nsyn ? ls.q_index[di] + 1 : nsyn;
			for (int i = 0; i < nsyn; i++)
				blk[i] = zero; /* DDF positions without a member */
			for (int di = 0; di < ls.ndata; di++)
				blk[q ? ls.q_index[di] : di] =
				    (void *)(shadow + (s * width + (uint64_t)di * chunk) * 512);
			blk[nsyn] = pq;
			blk[nsyn + 1] = pq + clen;
			if (q)
				pp->pq_gen(nsyn, clen, blk);
			else
				pp->xor_gen(nsyn, clen, blk);
			const void *src = NULL;
			for (int di = 0; di < ls.ndata; di++)
				if (ls.data_role[di] == role)
					src = blk[q ? ls.q_index[di] : di];
			if (role == ls.p_role)
				src = pq;
			if (q && role == ls.q_role)
				src = pq + clen;
			if (src && ls.sector + chunk <= used) {
				memcpy(img + ls.sector * 512, src, clen);
				memset(def + ls.sector, 1, chunk * sizeof(bool));
			}
		}
		free(pq);
		free(zero);
		return used;
	}
	int nc = ops->ncopies(&g);
	for (uint64_t lsec = 0; lsec < st->array_sectors;) {
		uint64_t len = 0;
		for (int c = 0; c < nc; c++) {
			struct layout_loc loc;
			if (ops->map(&g, lsec, c, &loc, &len) < 0)
				return 0;
			if (len > st->array_sectors - lsec)
				len = st->array_sectors - lsec;
			if (loc.role == role && loc.sector + len <= used) {
				memcpy(img + loc.sector * 512, shadow + lsec * 512, len * 512);
				memset(def + loc.sector, 1, len * sizeof(bool));
			}
		}
		lsec += len ? len : 1;
	}
	return used;
}

/* Compare member m (the storage, data area at doff) with the model of
 * `role`: the number of 4 KiB pages that differ; the first few are named. */
static inline uint64_t te_member_diff(struct member *m, uint64_t doff,
                                      const struct uraid_status *st, const uint8_t *shadow,
                                      int role, const char *what)
{
	struct layout_geometry g;
	te_geom(st, &g);
	uint64_t used = layout_ops_for(g.level)->member_used(&g, role);
	uint8_t *img = malloc(used * 512), *got = malloc(used * 512);
	bool *def = malloc(used * sizeof(bool));
	uint64_t bad = 0;
	if (te_member_model(st, shadow, role, img, def) != used ||
	    member_read(m, got, used * 512, doff * 512) < 0) {
		fprintf(stderr, "%s: role %d: no model or unreadable\n", what, role);
		bad = 1;
		used = 0;
	}
	for (uint64_t p = 0; p < used; p += 8) {
		bool diff = false;
		for (uint64_t s = p; s < p + 8 && s < used; s++)
			diff |= def[s] && memcmp(img + s * 512, got + s * 512, 512);
		if (diff && bad++ < 3)
			fprintf(stderr, "%s: role %d member sector %llu differs from the model\n",
			        what, role, (unsigned long long)p);
	}
	free(img);
	free(got);
	free(def);
	return bad;
}

static inline int te_sync_all(struct uraid_array *a)
{
	int rc, guard = 0;
	while ((rc = uraid_sync_step(a, 256)) > 0 && guard++ < 1000000)
		;
	return rc;
}

#endif
