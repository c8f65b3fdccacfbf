/* Write-back journal (md's journal_mode write-back): a write is logged as
 * data pages only (no parity), made durable in the journal, kept in an
 * in-memory cache and acknowledged; reads see the cache. The cache is
 * written to the array (through the write-through path, which logs data
 * and parity of every row first) on flush, on stop, when it is full or when
 * the log fills up. A crash loses nothing acknowledged: recovery finds the
 * data-only rows in the log and writes them through the array.
 *
 * Rows stay whole: all cached pages of one chunk-stripe are written in one
 * stripe write (the hull from the first to the last, with the pages in
 * between read from the array), so every logged parity covers every cached
 * page of its row — a later parity logged for a row without one of its
 * cached pages would make md's replay write disagreeing parity. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/journal.h"

struct eng_wb_cache {
	size_t cap;     /* slots, power of two */
	size_t n;       /* cached pages */
	size_t max;     /* pages before a write-out */
	uint64_t *key;  /* array page number + 1; 0 = empty slot */
	uint8_t **data; /* 4 KiB each */
	/* Per stripe: first cached page + 1 and whether pages sit in two or
	 * more chunks (then its write-out logs whole rows of the stripe). */
	uint64_t *skey, *sfirst;
	bool *smulti;
	/* Log sectors the write-out of the cache needs at most. */
	uint64_t out_cost;
};

#define WB_MAX_DEFAULT (16384u) /* 64 MiB of cached pages */

static size_t slot_of(const struct eng_wb_cache *c, uint64_t page)
{
	size_t h = (size_t)(page * 0x9e3779b97f4a7c15ULL >> 20) & (c->cap - 1);
	while (c->key[h] && c->key[h] != page + 1)
		h = (h + 1) & (c->cap - 1);
	return h;
}

int eng_wb_enable(struct uraid_array *a)
{
	struct eng_journal *j = a->journal;
	if (j->wb)
		return 0;
	for (int r = 0; r < a->geom.raid_disks; r++)
		if (!eng_role_writable(a, r))
			return -EAGAIN; /* md refuses write-back on a degraded array */
	struct eng_wb_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	/* Room in the log for the cached pages (meta + page each) and their
	 * write-out (data, parity, meta): a quarter of the ring. */
	size_t ring_pages = (size_t)(j->size / MDJ_BLOCK_SECTORS);
	c->max = ring_pages / 16;
	if (c->max > WB_MAX_DEFAULT)
		c->max = WB_MAX_DEFAULT;
	if (c->max < 8)
		c->max = 8;
	c->cap = 16;
	while (c->cap < c->max * 2)
		c->cap *= 2;
	c->key = calloc(c->cap, sizeof(*c->key));
	c->data = calloc(c->cap, sizeof(*c->data));
	c->skey = calloc(c->cap, sizeof(*c->skey));
	c->sfirst = calloc(c->cap, sizeof(*c->sfirst));
	c->smulti = calloc(c->cap, sizeof(*c->smulti));
	if (!c->key || !c->data || !c->skey || !c->sfirst || !c->smulti) {
		free(c->key);
		free(c->data);
		free(c->skey);
		free(c->sfirst);
		free(c->smulti);
		free(c);
		return -ENOMEM;
	}
	j->wb = c;
	return 0;
}

static void cache_clear(struct eng_wb_cache *c)
{
	for (size_t i = 0; i < c->cap; i++) {
		free(c->data[i]);
		c->data[i] = NULL;
		c->key[i] = 0;
		c->skey[i] = 0;
		c->smulti[i] = false;
	}
	c->n = 0;
	c->out_cost = 0;
}

/* Account a newly cached page in its stripe's write-out cost: one row of
 * data + parity for a stripe's only chunk (rows between cached pages of
 * one chunk are counted as they come: up to a chunk), the whole stripe once
 * a second chunk has a page. Meta blocks: one per row at most. */
static void cost_add(struct uraid_array *a, struct eng_wb_cache *c, uint64_t page)
{
	uint64_t chunk = a->geom.chunk_sectors;
	uint64_t k = (uint64_t)(a->geom.raid_disks - eng_nparity(a));
	uint64_t npar = (uint64_t)eng_nparity(a);
	uint64_t s = page * 8 / (k * chunk);
	uint64_t row = (2 + npar) * MDJ_BLOCK_SECTORS;
	uint64_t full = chunk / MDJ_BLOCK_SECTORS * (k + npar + 1) * MDJ_BLOCK_SECTORS;
	size_t h = (size_t)(s * 0x9e3779b97f4a7c15ULL >> 20) & (c->cap - 1);
	while (c->skey[h] && c->skey[h] != s + 1)
		h = (h + 1) & (c->cap - 1);
	if (!c->skey[h]) {
		c->skey[h] = s + 1;
		c->sfirst[h] = page + 1;
		c->out_cost += row;
		return;
	}
	if (c->smulti[h])
		return;
	uint64_t first = c->sfirst[h] - 1;
	if (first * 8 / chunk != page * 8 / chunk) {
		c->smulti[h] = true;
		c->out_cost += full; /* bound: whole rows of the whole stripe */
		return;
	}
	/* Same chunk: the hull grows by at most the distance to the first. */
	uint64_t d = first > page ? first - page : page - first;
	uint64_t add = d * (1 + npar) * MDJ_BLOCK_SECTORS + row;
	c->out_cost += add < full ? add : full;
}

void eng_wb_free(struct uraid_array *a)
{
	struct eng_journal *j = a->journal;
	if (!j || !j->wb)
		return;
	cache_clear(j->wb);
	free(j->wb->key);
	free(j->wb->data);
	free(j->wb->skey);
	free(j->wb->sfirst);
	free(j->wb->smulti);
	free(j->wb);
	j->wb = NULL;
}

bool eng_wb_has(const struct uraid_array *a)
{
	return a->journal && a->journal->wb && a->journal->wb->n > 0;
}

uint64_t eng_wb_pages(const struct uraid_array *a)
{
	return a->journal && a->journal->wb ? a->journal->wb->n : 0;
}

void eng_wb_overlay(struct uraid_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	struct eng_wb_cache *c = a->journal->wb;
	if (!c || !c->n)
		return;
	for (uint64_t p = lsec / 8; p * 8 < lsec + nsec; p++) {
		size_t h = slot_of(c, p);
		if (!c->key[h])
			continue;
		uint64_t s0 = p * 8 > lsec ? p * 8 : lsec;
		uint64_t s1 = p * 8 + 8 < lsec + nsec ? p * 8 + 8 : lsec + nsec;
		memcpy(buf + (s0 - lsec) * 512, c->data[h] + (s0 - p * 8) * 512, (s1 - s0) * 512);
	}
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

int eng_wb_flush(struct uraid_array *a)
{
	struct eng_journal *j = a->journal;
	struct eng_wb_cache *c = j ? j->wb : NULL;
	if (!c || !c->n)
		return 0;
	uint64_t *pages = malloc(c->n * sizeof(*pages));
	if (!pages)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < c->cap; i++)
		if (c->key[i])
			pages[n++] = c->key[i] - 1;
	qsort(pages, n, sizeof(*pages), cmp_u64);
	uint64_t width = (uint64_t)(a->geom.raid_disks - eng_nparity(a)) * a->geom.chunk_sectors;
	struct eng_req rq = {.q = a->ioq};
	int rc = 0;
	uint8_t *hull = eng_alloc((size_t)width * 512);
	if (!hull)
		rc = -ENOMEM;
	for (size_t i = 0; i < n && rc == 0;) {
		/* The cached pages of one stripe, written as one hull. */
		uint64_t s = pages[i] * 8 / width;
		size_t e = i;
		while (e < n && pages[e] * 8 / width == s)
			e++;
		uint64_t h0 = pages[i] * 8, h1 = pages[e - 1] * 8 + 8;
		bool whole = (e - i) * 8 == h1 - h0;
		if (!whole)
			rc = eng_parity_read(a, hull, h0, h1 - h0);
		for (size_t x = i; x < e && rc == 0; x++)
			memcpy(hull + (pages[x] * 8 - h0) * 512, c->data[slot_of(c, pages[x])],
			       MDJ_BLOCK);
		if (rc == 0)
			rc = eng_parity_write(a, &rq, hull, h0, h1 - h0);
		i = e;
	}
	free(hull);
	free(pages);
	if (rc < 0)
		return rc;
	cache_clear(c);
	return eng_journal_reclaim(a);
}

/* Log data-only pages (one payload each) and make them durable. */
static int log_data_pages(struct uraid_array *a, uint8_t *const *pg, const uint64_t *page, size_t n)
{
	struct eng_journal *j = a->journal;
	size_t units = n / MDJ_MAX_PAYLOADS + 1;
	uint64_t total = (uint64_t)(n + units) * MDJ_BLOCK_SECTORS;
	uint64_t used_ring = j->head >= j->tail ? j->head - j->tail : j->head + j->size - j->tail;
	if (used_ring + total + MDJ_BLOCK_SECTORS >= j->size)
		return -ENOSPC;
	size_t need = (n + units) * MDJ_BLOCK;
	if (need > j->buf_cap) {
		free(j->buf);
		j->buf = eng_alloc(need);
		j->buf_cap = j->buf ? need : 0;
		if (!j->buf)
			return -ENOMEM;
	}
	size_t used = MDJ_BLOCK, meta_off = 0;
	mdj_init(&j->meta, j->seq++, j->head);
	for (size_t i = 0; i < n; i++) {
		if (j->meta.npay >= MDJ_MAX_PAYLOADS) {
			mdj_encode(&j->meta, j->seed, j->buf + meta_off);
			meta_off = used;
			used += MDJ_BLOCK;
			mdj_init(&j->meta, j->seq++, (j->head + meta_off / 512) % j->size);
		}
		memcpy(j->buf + used, pg[i], MDJ_BLOCK);
		mdj_add_data(&j->meta, page[i] * 8, md_crc32c(j->seed, pg[i], MDJ_BLOCK));
		used += MDJ_BLOCK;
	}
	mdj_encode(&j->meta, j->seed, j->buf + meta_off);
	j->last_pos = j->meta.position;
	int rc = eng_journal_ring_io(a, true, j->buf, j->head, used / 512);
	if (rc == 0)
		rc = member_flush(j->em.m);
	if (rc < 0) {
		eng_journal_fail(a, "log write failed");
		return -EROFS;
	}
	j->head = (j->head + used / 512) % j->size;
	j->dirty_tail = true;
	return 0;
}

#define WB_CHUNK_PAGES 64 /* pages logged per unit batch of one request */

int eng_wb_write(struct uraid_array *a, const uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	struct eng_journal *j = a->journal;
	struct eng_wb_cache *c = j->wb;
	int rc = 0;
	uint8_t *pg[WB_CHUNK_PAGES];
	uint64_t page[WB_CHUNK_PAGES];
	for (int i = 0; i < WB_CHUNK_PAGES; i++)
		pg[i] = NULL;
	while (nsec && rc == 0) {
		/* Up to WB_CHUNK_PAGES pages of the request at a time. */
		uint64_t p0 = lsec / 8, p1 = (lsec + nsec + 7) / 8;
		if (p1 - p0 > WB_CHUNK_PAGES)
			p1 = p0 + WB_CHUNK_PAGES;
		size_t np = (size_t)(p1 - p0);
		/* Write the cache out while the log still has room for that:
		 * the tail cannot move past cached data. */
		uint64_t used_ring =
		    j->head >= j->tail ? j->head - j->tail : j->head + j->size - j->tail;
		uint64_t next = (np + np / MDJ_MAX_PAYLOADS + 1) * MDJ_BLOCK_SECTORS;
		uint64_t next_out = np * (uint64_t)(2 + eng_nparity(a)) * MDJ_BLOCK_SECTORS;
		if (c->n + np > c->max || used_ring + next + c->out_cost + next_out > j->size / 2) {
			rc = eng_wb_flush(a);
			if (rc < 0)
				break;
		}
		uint64_t end = p1 * 8 < lsec + nsec ? p1 * 8 : lsec + nsec;
		for (size_t i = 0; i < np && rc == 0; i++) {
			uint64_t p = p0 + i;
			page[i] = p;
			if (!pg[i] && !(pg[i] = eng_alloc(MDJ_BLOCK))) {
				rc = -ENOMEM;
				break;
			}
			uint64_t s0 = p * 8 > lsec ? p * 8 : lsec;
			uint64_t s1 = p * 8 + 8 < end ? p * 8 + 8 : end;
			if (s1 - s0 < 8) {
				/* Partial page: the rest is the newest copy we have. */
				size_t h = slot_of(c, p);
				if (c->key[h])
					memcpy(pg[i], c->data[h], MDJ_BLOCK);
				else
					rc = eng_parity_read(a, pg[i], p * 8, 8);
			}
			if (rc == 0)
				memcpy(pg[i] + (s0 - p * 8) * 512, buf + (s0 - lsec) * 512,
				       (s1 - s0) * 512);
		}
		if (rc == 0)
			rc = log_data_pages(a, pg, page, np);
		for (size_t i = 0; i < np && rc == 0; i++) {
			size_t h = slot_of(c, page[i]);
			if (!c->key[h]) {
				c->key[h] = page[i] + 1;
				c->n++;
				c->data[h] = pg[i];
				pg[i] = NULL;
				cost_add(a, c, page[i]);
			} else {
				memcpy(c->data[h], pg[i], MDJ_BLOCK);
			}
		}
		buf += (end - lsec) * 512;
		nsec -= end - lsec;
		lsec = end;
	}
	for (int i = 0; i < WB_CHUNK_PAGES; i++)
		free(pg[i]);
	return rc;
}
