/* The data store under simulated members (sim_store_open, member_sim.h): a
 * lossless in-memory member that keeps each 4 KiB block as its first 8 bytes
 * plus a reference to a shared copy of the other 4088 (one copy per distinct
 * content). Benchmarks write blocks that differ only in their 8-byte stamp,
 * and bytewise parity of such blocks repeats too, so ten 1 GiB members hold a
 * few hundred distinct blocks instead of 10 GiB: no page is faulted or
 * copied that nothing reads, while everything written reads back exactly
 * (arbitrary data just costs one shared copy per block, as memory would).
 * One mutex per member; the copies are immutable once made. */
#include "member/member_wrap.h"
#include "sim/member_sim.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BLK      4096u
#define SLAB_TPL 256u /* copies per 1 MiB slab */

struct store {
	struct member m;
	pthread_mutex_t lock;
	uint64_t nblocks;
	uint64_t *head; /* first 8 bytes of each block */
	uint32_t *tid;  /* its shared copy: 0 = zeros, else 1..ntpl */
	size_t map_bytes;
	uint8_t **slab; /* copies (whole blocks, first 8 bytes zero) */
	uint32_t nslab, slab_cap, ntpl;
	uint64_t *tpl_hash; /* hash of copy i + 1, for rehashing */
	uint32_t *ht;       /* open addressing: copy ids, 0 = empty */
	uint32_t ht_cap;    /* power of two */
};

static uint64_t rotl(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

static uint64_t word(const uint8_t *p, size_t i)
{
	uint64_t w;
	memcpy(&w, p + 8 * i, 8);
	return w;
}

/* Hash of bytes 8..4095 of a block (collisions are resolved by memcmp). */
static uint64_t tail_hash(const uint8_t *p)
{
	const uint64_t K = 0x9e3779b97f4a7c15ULL;
	uint64_t a = 1, b = 2, c = 3, d = 4;
	size_t i = 1;
	for (; i + 3 < BLK / 8; i += 4) {
		a = rotl((a ^ word(p, i)) * K, 31);
		b = rotl((b ^ word(p, i + 1)) * K, 31);
		c = rotl((c ^ word(p, i + 2)) * K, 31);
		d = rotl((d ^ word(p, i + 3)) * K, 31);
	}
	for (; i < BLK / 8; i++)
		a = rotl((a ^ word(p, i)) * K, 31);
	uint64_t h = a ^ rotl(b, 16) ^ rotl(c, 32) ^ rotl(d, 48);
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

static uint8_t *tpl(const struct store *s, uint32_t id)
{
	return s->slab[(id - 1) / SLAB_TPL] + (size_t)((id - 1) % SLAB_TPL) * BLK;
}

static int ht_grow(struct store *s)
{
	uint32_t cap = s->ht_cap ? s->ht_cap * 2 : 1024;
	uint32_t *ht = calloc(cap, sizeof(*ht));
	if (!ht)
		return -ENOMEM;
	for (uint32_t id = 1; id <= s->ntpl; id++) {
		uint32_t k = (uint32_t)s->tpl_hash[id - 1] & (cap - 1);
		while (ht[k])
			k = (k + 1) & (cap - 1);
		ht[k] = id;
	}
	free(s->ht);
	s->ht = ht;
	s->ht_cap = cap;
	return 0;
}

/* The id of the shared copy of block p's bytes 8..4095, made if new. */
static int tpl_find(struct store *s, const uint8_t *p, uint32_t *out)
{
	uint64_t h = tail_hash(p);
	if ((uint64_t)s->ntpl + 2 >= s->ht_cap)
		return -ENOMEM; /* the table could not grow */
	uint32_t k = (uint32_t)h & (s->ht_cap - 1);
	for (uint32_t id; (id = s->ht[k]); k = (k + 1) & (s->ht_cap - 1))
		if (s->tpl_hash[id - 1] == h && !memcmp(tpl(s, id) + 8, p + 8, BLK - 8)) {
			*out = id;
			return 0;
		}
	if (s->ntpl % SLAB_TPL == 0) {
		if (s->nslab == s->slab_cap) {
			uint32_t cap = s->slab_cap ? s->slab_cap * 2 : 16;
			uint8_t **n = realloc(s->slab, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			s->slab = n;
			s->slab_cap = cap;
		}
		uint64_t *hn = realloc(s->tpl_hash, ((size_t)s->ntpl + SLAB_TPL) * sizeof(*hn));
		if (hn)
			s->tpl_hash = hn;
		uint8_t *slab = hn ? malloc((size_t)SLAB_TPL * BLK) : NULL;
		if (!slab)
			return -ENOMEM;
		s->slab[s->nslab++] = slab;
	}
	uint32_t id = ++s->ntpl;
	uint8_t *t = tpl(s, id);
	memset(t, 0, 8);
	memcpy(t + 8, p + 8, BLK - 8);
	s->tpl_hash[id - 1] = h;
	s->ht[k] = id;
	if ((uint64_t)s->ntpl * 2 > s->ht_cap)
		ht_grow(s); /* failing, the table fills up further */
	*out = id;
	return 0;
}

static void block_get(const struct store *s, uint64_t b, uint8_t *dst)
{
	uint32_t id = s->tid[b];
	if (id)
		memcpy(dst + 8, tpl(s, id) + 8, BLK - 8);
	else
		memset(dst + 8, 0, BLK - 8);
	memcpy(dst, &s->head[b], 8);
}

static bool tpl_is(const struct store *s, uint32_t id, const uint8_t *p)
{
	return id && id <= s->ntpl && !memcmp(tpl(s, id) + 8, p + 8, BLK - 8);
}

static int block_put(struct store *s, uint64_t b, const uint8_t *src)
{
	/* Copies are numbered as first seen, so a sequential run of data
	 * often continues the previous block's copy by one, or rewrites a
	 * block with what it held: tried before hashing. */
	uint32_t id = b ? s->tid[b - 1] + 1 : 0;
	if (!tpl_is(s, id, src) && !tpl_is(s, id = s->tid[b], src)) {
		int r = tpl_find(s, src, &id);
		if (r < 0)
			return r;
	}
	memcpy(&s->head[b], src, 8);
	s->tid[b] = id;
	return 0;
}

/* Bytes [off, off + len) to (wr: from) buf, block by block; partial blocks
 * through a block-sized bounce. Caller holds the lock. */
static int xfer(struct store *s, bool wr, uint8_t *buf, size_t len, uint64_t off)
{
	uint8_t tmp[BLK];
	while (len) {
		uint64_t b = off / BLK;
		size_t in = (size_t)(off % BLK), n = BLK - in < len ? BLK - in : len;
		int r = 0;
		if (n == BLK) {
			if (wr)
				r = block_put(s, b, buf);
			else
				block_get(s, b, buf);
		} else {
			block_get(s, b, tmp);
			if (wr) {
				memcpy(tmp + in, buf, n);
				r = block_put(s, b, tmp);
			} else {
				memcpy(buf, tmp + in, n);
			}
		}
		if (r < 0)
			return r;
		buf += n, off += n, len -= n;
	}
	return 0;
}

static ssize_t store_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct store *s = m->priv;
	member_op_bounds(m, MEMBER_OP_READ, &len, off, SSIZE_MAX);
	pthread_mutex_lock(&s->lock);
	xfer(s, false, buf, len, off);
	pthread_mutex_unlock(&s->lock);
	return (ssize_t)len;
}

static ssize_t store_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                            unsigned flags)
{
	struct store *s = m->priv;
	(void)flags;
	int r = member_op_bounds(m, MEMBER_OP_WRITE, &len, off, SSIZE_MAX);
	if (r < 0)
		return r;
	pthread_mutex_lock(&s->lock);
	r = xfer(s, true, (uint8_t *)buf, len, off);
	pthread_mutex_unlock(&s->lock);
	return r < 0 ? r : (ssize_t)len;
}

static int store_flush(struct member *m)
{
	(void)m;
	return 0;
}

/* Zeros over [off, off + len): whole blocks lose their copy, partial ones
 * are rewritten. */
static int store_zero(struct member *m, uint64_t off, uint64_t len)
{
	struct store *s = m->priv;
	int r = member_discard_check(m, off, len);
	if (r < 0)
		return r;
	static const uint8_t zero[BLK];
	pthread_mutex_lock(&s->lock);
	while (len && r == 0) {
		uint64_t b = off / BLK, in = off % BLK, n = BLK - in < len ? BLK - in : len;
		if (n == BLK)
			s->tid[b] = 0, s->head[b] = 0;
		else
			r = xfer(s, true, (uint8_t *)zero, (size_t)n, off);
		off += n, len -= n;
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

static int store_write_zeroes(struct member *m, uint64_t off, uint64_t len, unsigned flags)
{
	(void)flags;
	return store_zero(m, off, len);
}

static int store_fd(struct member *m)
{
	(void)m;
	return -1;
}

static void store_close(struct member *m)
{
	struct store *s = m->priv;
	munmap(s->head, s->map_bytes);
	for (uint32_t i = 0; i < s->nslab; i++)
		free(s->slab[i]);
	free(s->slab);
	free(s->tpl_hash);
	free(s->ht);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static const struct member_ops store_ops = {
    .kind = "simstore",
    .pread = store_pread,
    .pwrite = store_pwrite,
    .flush = store_flush,
    .discard = store_zero,
    .write_zeroes = store_write_zeroes,
    .fd = store_fd,
    .close = store_close,
};

int sim_store_open(const char *name, uint64_t size, struct member **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (size == 0 || size % BLK || size / BLK > SIZE_MAX / 16)
		return -EINVAL;
	struct store *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->nblocks = size / BLK;
	/* heads then ids, one mapping: untouched blocks cost no memory */
	s->map_bytes = (size_t)s->nblocks * (sizeof(uint64_t) + sizeof(uint32_t));
	void *p = mmap(NULL, s->map_bytes, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED || ht_grow(s) < 0) {
		if (p != MAP_FAILED)
			munmap(p, s->map_bytes);
		free(s);
		return -ENOMEM;
	}
	s->head = p;
	s->tid = (uint32_t *)(s->head + s->nblocks);
	pthread_mutex_init(&s->lock, NULL);
	s->m.ops = &store_ops;
	s->m.priv = s;
	s->m.size = size;
	s->m.logical_block = 512;
	s->m.dio_align = 1;
	s->m.mem_align = 1;
	s->m.discard_zeroes = true;
	member_set_name(&s->m, name ? name : "simstore");
	*out = &s->m;
	return 0;
}

int sim_store_stats(struct member *m, uint64_t *blocks, uint64_t *copies)
{
	if (!m || m->ops != &store_ops)
		return -EINVAL;
	struct store *s = m->priv;
	pthread_mutex_lock(&s->lock);
	*copies = s->ntpl;
	*blocks = s->nblocks;
	pthread_mutex_unlock(&s->lock);
	return 0;
}
