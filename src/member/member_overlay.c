/* The copy-on-write member (member_overlay.h): reads from the store where
 * the map says it holds the block, else from the base; writes only to the
 * store; the map made durable in flushes, after the data it claims. */
#include "member/member_overlay_int.h"
#include "util/endian.h"
#include "util/errmsg.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BS ((uint64_t)MEMBER_OVERLAY_BLOCK)
/* Copy-on-write is serialized per group of blocks, on a fixed set of locks
 * shared by hashing (a 1 MiB request takes 17 at most). */
#define GROUP_BLOCKS 16u
#define NLOCKS       64u
/* One op moves at most this much (member_xfer loops for the rest). */
#define IO_MAX     ((size_t)1 << 30)
#define PAGE_WORDS (OVL_PAGE / 8)

struct overlay {
	struct member m;
	struct member *base, *store; /* store NULL: read-only, no overlay file yet */
	struct ovl_header h;
	uint64_t nblocks;
	/* Bit b: the store holds block b. Set (under map_lock) only after the
	 * block's data was written; read without the lock. */
	_Atomic uint64_t *map;
	size_t nwords;
	/* Map pages with bits the store's map does not have yet (map_lock). */
	uint8_t *dirty;
	size_t npages;
	_Atomic uint64_t held;
	pthread_mutex_t map_lock;
	pthread_mutex_t flush_lock; /* one flush at a time: map pages in order */
	pthread_mutex_t cow[NLOCKS];
};

static const struct member_ops overlay_ops;

static struct overlay *ov_of(struct member *m)
{
	return (struct overlay *)m;
}

bool member_is_overlay(const struct member *m)
{
	return m && m->ops == &overlay_ops;
}

static bool held(struct overlay *o, uint64_t b)
{
	return (atomic_load_explicit(&o->map[b / 64], memory_order_acquire) >> (b % 64)) & 1;
}

bool member_overlay_holds(struct member *m, uint64_t block)
{
	struct overlay *o = ov_of(m);
	return member_is_overlay(m) && block < o->nblocks && held(o, block);
}

uint64_t member_overlay_held(struct member *m)
{
	return member_is_overlay(m) ? atomic_load(&ov_of(m)->held) : 0;
}

static bool all_held(struct overlay *o, uint64_t b0, uint64_t b1)
{
	for (uint64_t b = b0; b <= b1; b++)
		if (!held(o, b))
			return false;
	return true;
}

/* Record blocks [b0, b1] as held, once their data is in the store. */
static void claim(struct overlay *o, uint64_t b0, uint64_t b1)
{
	pthread_mutex_lock(&o->map_lock);
	for (uint64_t b = b0; b <= b1; b++) {
		uint64_t bit = 1ull << (b % 64);
		uint64_t was = atomic_fetch_or_explicit(&o->map[b / 64], bit, memory_order_release);
		if (!(was & bit)) {
			atomic_fetch_add(&o->held, 1);
			o->dirty[b / (OVL_PAGE * 8)] = 1;
		}
	}
	pthread_mutex_unlock(&o->map_lock);
}

/* The copy-on-write locks of blocks [b0, b1], always in ascending order. */
static bool lock_wanted(uint64_t b0, uint64_t b1, unsigned i)
{
	uint64_t g0 = b0 / GROUP_BLOCKS, g1 = b1 / GROUP_BLOCKS;
	if (g1 - g0 + 1 >= NLOCKS)
		return true;
	unsigned s0 = (unsigned)(g0 % NLOCKS), s1 = (unsigned)(g1 % NLOCKS);
	return s0 <= s1 ? i >= s0 && i <= s1 : i <= s1 || i >= s0;
}

static void cow_lock(struct overlay *o, uint64_t b0, uint64_t b1)
{
	for (unsigned i = 0; i < NLOCKS; i++)
		if (lock_wanted(b0, b1, i))
			pthread_mutex_lock(&o->cow[i]);
}

static void cow_unlock(struct overlay *o, uint64_t b0, uint64_t b1)
{
	for (unsigned i = NLOCKS; i-- > 0;)
		if (lock_wanted(b0, b1, i))
			pthread_mutex_unlock(&o->cow[i]);
}

static ssize_t overlay_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct overlay *o = ov_of(m);
	member_op_bounds(m, MEMBER_OP_READ, &len, off, IO_MAX);
	size_t done = 0;
	while (done < len) {
		uint64_t pos = off + done, end = off + len;
		bool h = held(o, pos / BS);
		/* The run of blocks on the same side. */
		uint64_t next = (pos / BS + 1) * BS;
		while (next < end && held(o, next / BS) == h)
			next += BS;
		size_t n = (size_t)((next < end ? next : end) - pos);
		int rc = h ? member_read(o->store, (char *)buf + done, n, o->h.data_off + pos)
		           : member_read(o->base, (char *)buf + done, n, pos);
		if (rc < 0)
			return rc;
		done += n;
	}
	return (ssize_t)len;
}

/* Block b, of which the write covers [pos, wend) only, is not held yet: the
 * base's bytes around the new ones go to the store with them. */
static int copy_on_write(struct overlay *o, uint64_t b, const unsigned char *src, uint64_t pos,
                         uint64_t wend)
{
	unsigned char blk[MEMBER_OVERLAY_BLOCK];
	uint64_t start = b * BS;
	uint64_t have = o->m.size - start < BS ? o->m.size - start : BS;
	memset(blk + have, 0, (size_t)(BS - have));
	int rc = member_read(o->base, blk, (size_t)have, start);
	if (rc < 0)
		return rc;
	memcpy(blk + (pos - start), src, (size_t)(wend - pos));
	return member_write(o->store, blk, sizeof(blk), o->h.data_off + start, 0);
}

/* A write touching blocks the store does not hold, under their locks:
 * partly covered ones are copied first, the rest goes straight in. */
static int write_cow(struct overlay *o, const unsigned char *buf, size_t len, uint64_t off)
{
	uint64_t end = off + len, pos = off, seg = off;
	int rc = 0;
	while (pos < end && rc == 0) {
		uint64_t b = pos / BS, bstart = b * BS;
		uint64_t bend = bstart + BS < o->m.size ? bstart + BS : o->m.size;
		uint64_t wend = end < bstart + BS ? end : bstart + BS;
		if (!(pos == bstart && wend >= bend) && !held(o, b)) {
			if (pos > seg)
				rc = member_write(o->store, buf + (seg - off), (size_t)(pos - seg),
				                  o->h.data_off + seg, 0);
			if (rc == 0)
				rc = copy_on_write(o, b, buf + (pos - off), pos, wend);
			seg = wend;
		}
		pos = wend;
	}
	if (rc == 0 && end > seg)
		rc = member_write(o->store, buf + (seg - off), (size_t)(end - seg),
		                  o->h.data_off + seg, 0);
	return rc;
}

static int overlay_flush(struct member *m);

static ssize_t overlay_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                              unsigned flags)
{
	struct overlay *o = ov_of(m);
	int rc = member_op_bounds(m, MEMBER_OP_WRITE, &len, off, IO_MAX);
	if (rc < 0)
		return rc;
	if (len == 0)
		return 0;
	uint64_t b0 = off / BS, b1 = (off + len - 1) / BS;
	/* Held blocks are never copied again: no lock needed. */
	if (all_held(o, b0, b1)) {
		rc = member_write(o->store, buf, len, o->h.data_off + off, 0);
	} else {
		cow_lock(o, b0, b1);
		rc = write_cow(o, buf, len, off);
		if (rc == 0)
			claim(o, b0, b1);
		cow_unlock(o, b0, b1);
	}
	if (rc == 0 && (flags & MEMBER_FUA))
		rc = overlay_flush(m);
	return rc < 0 ? rc : (ssize_t)len;
}

/* Map page p as stored: the words little-endian, zeros past the map. */
static void page_bytes(struct overlay *o, size_t p, uint8_t *out)
{
	memset(out, 0, OVL_PAGE);
	for (size_t i = 0; i < PAGE_WORDS && p * PAGE_WORDS + i < o->nwords; i++)
		put_le64(out + i * 8,
		         atomic_load_explicit(&o->map[p * PAGE_WORDS + i], memory_order_relaxed));
}

/* The data first, then the map pages that claim it: the pages are copied
 * before the store is flushed, so every bit they carry belongs to a write
 * that completed before that flush began. */
static int overlay_flush(struct member *m)
{
	struct overlay *o = ov_of(m);
	if (!o->store || m->readonly)
		return 0;
	pthread_mutex_lock(&o->flush_lock);
	pthread_mutex_lock(&o->map_lock);
	size_t n = 0;
	for (size_t p = 0; p < o->npages; p++)
		n += o->dirty[p];
	size_t *which = n ? malloc(n * sizeof(*which)) : NULL;
	uint8_t *pages = n ? malloc(n * OVL_PAGE) : NULL;
	int rc = n && (!which || !pages) ? -ENOMEM : 0;
	for (size_t p = 0, k = 0; rc == 0 && k < n; p++) {
		if (!o->dirty[p])
			continue;
		which[k] = p;
		page_bytes(o, p, pages + k * OVL_PAGE);
		o->dirty[p] = 0;
		k++;
	}
	pthread_mutex_unlock(&o->map_lock);
	if (rc == 0)
		rc = member_flush(o->store);
	for (size_t k = 0; rc == 0 && k < n; k++)
		rc = member_write(o->store, pages + k * OVL_PAGE, OVL_PAGE,
		                  o->h.map_off + which[k] * OVL_PAGE, 0);
	if (rc == 0 && n)
		rc = member_flush(o->store);
	if (rc < 0 && which) {
		/* Not durable: the next flush writes these pages again. */
		pthread_mutex_lock(&o->map_lock);
		for (size_t k = 0; k < n; k++)
			o->dirty[which[k]] = 1;
		pthread_mutex_unlock(&o->map_lock);
	}
	pthread_mutex_unlock(&o->flush_lock);
	free(which);
	free(pages);
	return rc;
}

static int overlay_discard(struct member *m, uint64_t off, uint64_t len)
{
	return -EOPNOTSUPP;
}

static int overlay_fd(struct member *m)
{
	/* No descriptor: member_ioq runs the requests through the ops above. */
	return -1;
}

static int overlay_check(struct member *m, char *why, size_t len)
{
	return member_check(ov_of(m)->base, why, len);
}

static void overlay_free(struct overlay *o)
{
	if (o->store)
		member_close(o->store);
	if (o->base)
		member_close(o->base);
	pthread_mutex_destroy(&o->map_lock);
	pthread_mutex_destroy(&o->flush_lock);
	for (unsigned i = 0; i < NLOCKS; i++)
		pthread_mutex_destroy(&o->cow[i]);
	free((void *)o->map);
	free(o->dirty);
	free(o);
}

static void overlay_close(struct member *m)
{
	struct overlay *o = ov_of(m);
	/* What was written reaches the map even without a last flush; a
	 * process that dies first loses it, like a power cut. */
	int rc = overlay_flush(m);
	if (rc < 0)
		fprintf(stderr, "uraid: overlay %s: writes since the last flush lost: %s\n",
		        o->store->name, strerror(-rc));
	overlay_free(o);
}

static const struct member_ops overlay_ops = {
    .kind = "overlay",
    .pread = overlay_pread,
    .pwrite = overlay_pwrite,
    .flush = overlay_flush,
    .discard = overlay_discard,
    .fd = overlay_fd,
    .close = overlay_close,
    .check = overlay_check,
};

/* The header of `store` describes an overlay of `base` (as it is now) for
 * the array `tag`. */
static int check_header(struct overlay *o, const char *tag, char *err, size_t errlen)
{
	char e[512];
	bool committing;
	struct member *store = o->store;
	int rc = ovl_header_read(store, &o->h, &committing, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s: %s", store->name,
		              rc == -ENOENT ? "not an overlay (no header)" : e);
	if (committing)
		return errmsg(err, errlen, -EBUSY,
		              "%s: a commit of this overlay onto %s was interrupted; run 'uraid "
		              "overlay commit' on its directory again to finish it",
		              store->name, o->h.id.path);
	if (tag && strcmp(tag, o->h.tag))
		return errmsg(err, errlen, -EEXIST,
		              "%s is an overlay of another array (%s), not of %s's (%s)",
		              store->name, o->h.tag, o->base->name, tag);
	struct ovl_identity now;
	rc = ovl_identity_of(o->base, &now, err, errlen);
	if (rc < 0)
		return rc;
	rc = ovl_identity_check(&o->h, &now, true, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc,
		              "%s changed since its overlay %s was made: %s; the overlay does not "
		              "fit it any more (discard it, or put the member back as it was)",
		              o->base->name, store->name, e);
	return 0;
}

int member_overlay_open_store(struct member *base, struct member *store, const char *tag,
                              unsigned flags, struct member **out, char *err, size_t errlen)
{
	*out = NULL;
	bool rdonly = flags & OVERLAY_RDONLY;
	struct overlay *o = calloc(1, sizeof(*o));
	if (!o) {
		member_close(base);
		member_close(store);
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	}
	o->base = base;
	o->store = store;
	pthread_mutex_init(&o->map_lock, NULL);
	pthread_mutex_init(&o->flush_lock, NULL);
	for (unsigned i = 0; i < NLOCKS; i++)
		pthread_mutex_init(&o->cow[i], NULL);
	member_wrap_init(&o->m, base, &overlay_ops, o);
	o->m.readonly = rdonly;
	o->nblocks = ovl_blocks(base->size);
	o->nwords = (size_t)((o->nblocks + 63) / 64);
	o->npages = (size_t)(ovl_map_bytes(base->size) / OVL_PAGE);
	o->map = calloc(o->nwords ? o->nwords : 1, sizeof(*o->map));
	o->dirty = calloc(o->npages ? o->npages : 1, 1);
	int rc = 0;
	if (!o->map || !o->dirty)
		rc = errmsg(err, errlen, -ENOMEM, "out of memory");
	else if (base->size == 0)
		rc = errmsg(err, errlen, -EINVAL, "%s: empty member", base->name);
	else if (!store && !rdonly)
		rc = errmsg(err, errlen, -EINVAL, "%s: a writable overlay needs a store",
		            base->name);
	else if (store && store->readonly && !rdonly)
		rc = errmsg(err, errlen, -EROFS, "%s: read-only", store->name);
	if (rc == 0 && store)
		rc = check_header(o, tag, err, errlen);
	if (rc == 0 && store) {
		uint64_t h = 0;
		rc = ovl_map_load(store, &o->h, (uint64_t *)o->map, o->nwords, &h);
		atomic_store(&o->held, h);
		if (rc < 0)
			errmsg(err, errlen, rc, "%s: cannot read its map: %s", store->name,
			       strerror(-rc));
	}
	if (rc < 0) {
		overlay_free(o);
		return rc;
	}
	*out = &o->m;
	return 0;
}

int member_overlay_open(struct member *base, int dirfd, const char *dirpath, const char *tag,
                        const char *key, unsigned flags, struct member **out, char *err,
                        size_t errlen)
{
	char name[NAME_MAX + 1], dk[MEMBER_OVERLAY_KEY_MAX];
	bool rdonly = flags & OVERLAY_RDONLY;
	struct member *store = NULL;
	*out = NULL;
	int rc = 0;
	if (!key) {
		struct ovl_identity id;
		rc = ovl_identity_of(base, &id, err, errlen);
		ovl_default_key(&id, base->name, dk, sizeof(dk));
		key = dk;
	} else if (strlen(key) >= MEMBER_OVERLAY_KEY_MAX || strchr(key, '/') || !key[0]) {
		rc = errmsg(err, errlen, -EINVAL, "%s: bad member key '%s'", base->name, key);
	}
	/* A writable assembly of the member itself would change it under us. */
	if (rc == 0 && ovl_flock(ovl_member_fd(base), true) < 0)
		rc = errmsg(err, errlen, -EBUSY,
		            "%s is in use by a running array (not through an overlay)", base->name);
	if (rc == 0) {
		rc = ovl_find(dirfd, key, name, sizeof(name));
		if (rc == -EEXIST)
			rc = errmsg(err, errlen, rc,
			            "overlay directory %s holds several overlays of %s (*.%s%s)",
			            dirpath, base->name, key, MEMBER_OVERLAY_SUFFIX);
		else if (rc == -ENOENT && !rdonly)
			rc = ovl_store_create(dirfd, dirpath, base, tag, key, name, sizeof(name),
			                      err, errlen);
		else if (rc == -ENOENT)
			return member_overlay_open_store(base, NULL, tag, flags, out, err, errlen);
		else if (rc < 0)
			rc = errmsg(err, errlen, rc, "overlay directory %s: %s", dirpath,
			            strerror(-rc));
	}
	if (rc == 0)
		rc = ovl_store_open(dirfd, dirpath, name, rdonly, &store, err, errlen);
	if (rc == 0 && ovl_flock(ovl_member_fd(store), rdonly) < 0)
		rc = errmsg(err, errlen, -EBUSY, "%s/%s is in use by a running array", dirpath,
		            name);
	/* Found by its name; the header says whose it is (a file renamed or
	 * copied from another member's would otherwise read as that member
	 * having changed). */
	struct ovl_header h;
	bool committing;
	char e[512];
	if (rc == 0 && ovl_header_read(store, &h, &committing, e, sizeof(e)) == 0 &&
	    strcmp(h.key, key))
		rc = errmsg(err, errlen, -EEXIST,
		            "%s/%s is the overlay of another member (%s, key %s), not of %s (key "
		            "%s)",
		            dirpath, name, h.id.path, h.key, base->name, key);
	if (rc < 0) {
		member_close(store);
		member_close(base);
		return rc;
	}
	return member_overlay_open_store(base, store, tag, flags, out, err, errlen);
}
