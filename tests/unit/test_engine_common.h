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
static const struct member_ops te_borrow_ops = {
    .kind = "borrow",
    .pread = te_pread,
    .pwrite = te_pwrite,
    .flush = te_flush,
    .fd = te_fd,
    .close = te_close,
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

static inline void te_disk_close(struct te_disk *d)
{
	if (d->fault)
		member_close(d->fault); /* owns mem */
	d->fault = d->mem = NULL;
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

static inline int te_sync_all(struct uraid_array *a)
{
	int rc, guard = 0;
	while ((rc = uraid_sync_step(a, 256)) > 0 && guard++ < 1000000)
		;
	return rc;
}

#endif
