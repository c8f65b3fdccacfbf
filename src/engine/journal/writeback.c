/* Write-back journal (md's journal_mode write-back): a write is logged as
 * data pages only (no parity), made durable in the journal, kept in an
 * in-memory cache and acknowledged; reads see the cache. The cache is
 * written to the array (through the write-through path, which logs data
 * and parity of every row first) on flush, on stop, when it is full or when
 * the log fills up. A crash loses nothing acknowledged: recovery finds the
 * data-only rows in the log and writes them through the array.
 *
 * Rows stay whole: the write-out takes the cached pages by 4 KiB stripe
 * row, all pages of a row in one stripe write, so every logged parity
 * covers every cached page of its row (a parity logged for a row without
 * one of its cached pages would make md's replay write disagreeing
 * parity). Runs of consecutive rows of a stripe go together. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/journal/journal.h"
#include "engine/raid456/raid456.h"

#define WB_MAX_DEFAULT (65536u) /* 256 MiB of cached pages */

static size_t slot_of(const struct eng_wb_cache *c, uint64_t page)
{
	size_t h = (size_t)(page * 0x9e3779b97f4a7c15ULL >> 20) & (c->cap - 1);
	while (c->key[h] && c->key[h] != page + 1)
		h = (h + 1) & (c->cap - 1);
	return h;
}

int eng_wb_enable(struct eng_array *a)
{
	struct eng_journal *j = eng_journal_of(a);
	if (j->wb)
		return 0;
	for (int r = 0; r < a->geo.raid_disks; r++)
		if (!eng_role_writable(a, r))
			return -EAGAIN; /* md refuses write-back on a degraded array */
	struct eng_wb_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	/* Room in the log for the cached pages (meta + page each) and their
	 * write-out (data, parity, meta): a quarter of the ring. */
	size_t ring_pages = (size_t)(j->size / MDJ_BLOCK_SECTORS);
	c->max = ring_pages / 6;
	if (c->max > WB_MAX_DEFAULT)
		c->max = WB_MAX_DEFAULT;
	if (c->max < 8)
		c->max = 8;
	c->cap = 16;
	while (c->cap < c->max * 2)
		c->cap *= 2;
	c->key = calloc(c->cap, sizeof(*c->key));
	c->data = calloc(c->cap, sizeof(*c->data));
	if (!c->key || !c->data) {
		free(c->key);
		free(c->data);
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
	}
	c->n = 0;
	c->out_cost = 0;
}

void eng_wb_free(struct eng_array *a)
{
	struct eng_journal *j = eng_journal_of(a);
	if (!j || !j->wb)
		return;
	cache_clear(j->wb);
	free(j->wb->key);
	free(j->wb->data);
	free(j->wb);
	j->wb = NULL;
}

void eng_wb_overlay(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	struct eng_wb_cache *c = eng_journal_of(a)->wb;
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

struct wb_key {
	uint64_t key;  /* (stripe, row in the chunk, data index) in that order */
	uint64_t page; /* array page */
};

static int cmp_key(const void *x, const void *y)
{
	uint64_t a = ((const struct wb_key *)x)->key, b = ((const struct wb_key *)y)->key;
	return a < b ? -1 : a > b;
}

static int data_pos(const struct eng_stripe_buf *sb, int di)
{
	return sb->has_q ? sb->ls.q_index[di] : di;
}

/* Write out the cached pages e[0..n) of rows [r0, r1) of stripe s: read
 * what the cache does not cover, parity from the whole rows, log, write. */
static int write_rows(struct eng_array *a, const struct wb_key *e, size_t n, uint64_t s,
                      uint64_t r0, uint64_t r1)
{
	struct eng_wb_cache *c = eng_journal_of(a)->wb;
	uint64_t chunk = a->geo.chunk_sectors, rows = chunk / MDJ_BLOCK_SECTORS;
	uint64_t k = (uint64_t)(a->geo.raid_disks - eng_nparity(a));
	struct eng_stripe_buf sb;
	int rc = eng_stripe_buf_init(a, &sb, s, (r1 - r0) * MDJ_BLOCK_SECTORS);
	if (rc < 0)
		return rc;
	int npos = eng_stripe_npos(&sb);
	bool want[LAYOUT_MAX_MEMBERS + 2] = {0}, dirty[LAYOUT_MAX_MEMBERS + 2] = {0};
	uint64_t cached[LAYOUT_MAX_MEMBERS] = {0};
	for (size_t i = 0; i < n; i++)
		cached[e[i].key % k]++;
	for (uint64_t di = 0; di < k; di++) {
		int p = data_pos(&sb, (int)di);
		want[p] = cached[di] < r1 - r0; /* not every row of it is cached */
		dirty[p] = cached[di] > 0;
	}
	uint64_t co = r0 * MDJ_BLOCK_SECTORS;
	rc = eng_stripe_read(a, &sb, co, want, NULL);
	if (rc == -EAGAIN) /* a member missing: read everything, rebuild */
		rc = eng_stripe_read(a, &sb, co, NULL, NULL);
	for (size_t i = 0; i < n && rc == 0; i++) {
		uint64_t di = e[i].key % k, r = e[i].key / k % rows;
		memcpy((uint8_t *)sb.blk[data_pos(&sb, (int)di)] + (r - r0) * MDJ_BLOCK,
		       c->data[slot_of(c, e[i].page)], MDJ_BLOCK);
	}
	if (rc == 0)
		rc = eng_stripe_gen(a, &sb) < 0 ? -EIO : 0;
	for (int p = sb.nsyn; p < npos; p++)
		dirty[p] = true;
	/* A journal that failed cannot take the log any more, but acknowledged
	 * data must still reach the members (without write-hole protection). */
	if (rc == 0 && !eng_journal_of(a)->failed) {
		rc = eng_journal_log(a, &sb, 1, co, dirty);
		if (rc == -EROFS && eng_journal_of(a)->failed)
			rc = 0;
	}
	if (rc == 0)
		rc = eng_stripe_write(a, &sb, co, dirty);
	eng_stripe_buf_free(a, &sb);
	return rc;
}

int eng_wb_flush(struct eng_array *a)
{
	struct eng_journal *j = eng_journal_of(a);
	eng_wb_quiesce(a);
	struct eng_wb_cache *c = j ? j->wb : NULL;
	if (!c || !c->n)
		return 0;
	uint64_t chunk = a->geo.chunk_sectors, rows = chunk / MDJ_BLOCK_SECTORS;
	uint64_t k = (uint64_t)(a->geo.raid_disks - eng_nparity(a)), width = k * chunk;
	struct wb_key *e = malloc(c->n * sizeof(*e));
	if (!e)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < c->cap; i++) {
		if (!c->key[i])
			continue;
		uint64_t p = c->key[i] - 1, lsec = p * MDJ_BLOCK_SECTORS;
		uint64_t s = lsec / width, off = lsec % width;
		uint64_t di = off / chunk, r = off % chunk / MDJ_BLOCK_SECTORS;
		e[n].key = (s * rows + r) * k + di;
		e[n++].page = p;
	}
	qsort(e, n, sizeof(*e), cmp_key);
	int rc = 0;
	/* Runs of consecutive cached rows of one stripe: one stripe write
	 * each, so every logged parity covers all cached pages of its row. */
	for (size_t i = 0; i < n && rc == 0;) {
		uint64_t s = e[i].key / k / rows, r0 = e[i].key / k % rows, r1 = r0 + 1;
		size_t x = i + 1;
		while (x < n && e[x].key / k / rows == s && e[x].key / k % rows <= r1) {
			r1 = e[x].key / k % rows + 1;
			x++;
		}
		rc = write_rows(a, e + i, x - i, s, r0, r1);
		i = x;
	}
	free(e);
	if (rc < 0)
		return rc;
	cache_clear(c);
	return eng_journal_reclaim(a);
}

/* The locked path (partial pages, the first write after idle, a full
 * cache): writers put their pages into one pending batch which the first of
 * them logs and caches. eng_wb_fast_write is the usual path. */
void eng_wb_quiesce(struct eng_array *a)
{
	struct eng_journal *j = eng_journal_of(a);
	while (j && j->gc_io)
		eng_cond_wait(a);
}

/* Log one batch of data-only pages (one payload each) and cache them. */
static int log_batch(struct eng_array *a, uint8_t **pg, const uint64_t *page, size_t n)
{
	struct eng_journal *j = eng_journal_of(a);
	struct eng_wb_cache *c = j->wb;
	size_t units = n / MDJ_MAX_PAYLOADS + 1;
	uint64_t total = (uint64_t)(n + units) * MDJ_BLOCK_SECTORS;
	/* Write the cache out while the log still has room for that: the
	 * tail cannot move past cached data. */
	uint64_t used_ring = j->head >= j->tail ? j->head - j->tail : j->head + j->size - j->tail;
	uint64_t out = n * (uint64_t)(2 + eng_nparity(a)) * MDJ_BLOCK_SECTORS;
	if (c->n + n > c->max || used_ring + total + c->out_cost + out > j->size / 2) {
		int rc = eng_wb_flush(a);
		if (rc < 0)
			return rc;
		used_ring = j->head >= j->tail ? j->head - j->tail : j->head + j->size - j->tail;
	}
	if (used_ring + total + MDJ_BLOCK_SECTORS >= j->size)
		return -ENOSPC;
	size_t need = (n + units) * MDJ_BLOCK;
	if (need > j->gc_cap) {
		free(j->gc_buf);
		j->gc_buf = eng_alloc(need);
		j->gc_cap = j->gc_buf ? need : 0;
		if (!j->gc_buf)
			return -ENOMEM;
	}
	uint8_t *b = j->gc_buf;
	size_t used = MDJ_BLOCK, meta_off = 0;
	mdj_init(&j->meta, j->seq++, j->head);
	for (size_t i = 0; i < n; i++) {
		if (j->meta.npay >= MDJ_MAX_PAYLOADS) {
			mdj_encode(&j->meta, j->seed, b + meta_off);
			meta_off = used;
			used += MDJ_BLOCK;
			mdj_init(&j->meta, j->seq++, (j->head + meta_off / 512) % j->size);
		}
		memcpy(b + used, pg[i], MDJ_BLOCK);
		mdj_add_data(&j->meta, page[i] * 8, md_crc32c(j->seed, pg[i], MDJ_BLOCK));
		used += MDJ_BLOCK;
	}
	mdj_encode(&j->meta, j->seed, b + meta_off);
	/* Reserve the place, then write without the lock. */
	uint64_t at = j->head;
	j->last_pos = j->meta.position;
	j->head = (j->head + used / 512) % j->size;
	j->dirty_tail = true;
	int rc = eng_journal_ring_io(a, true, b, at, used / 512, MEMBER_FUA);
	if (rc < 0) {
		eng_journal_fail(a, "log write failed");
		return -EROFS;
	}
	for (size_t i = 0; i < n; i++) {
		size_t h = slot_of(c, page[i]);
		if (!c->key[h]) {
			c->key[h] = page[i] + 1;
			c->n++;
			c->data[h] = pg[i];
			pg[i] = NULL;
			/* its write-out: at most a row of its own (the page, P, Q)
			 * and a meta block share */
			c->out_cost += (uint64_t)(2 + eng_nparity(a)) * MDJ_BLOCK_SECTORS;
		} else {
			memcpy(c->data[h], pg[i], MDJ_BLOCK);
		}
	}
	return 0;
}

/* The leader: batches until none is pending. */
static void gc_lead(struct eng_array *a)
{
	struct eng_journal *j = eng_journal_of(a);
	uint8_t *pg[ENG_GC_MAX];
	uint64_t page[ENG_GC_MAX];
	while (j->gc_n > 0) {
		size_t n = j->gc_n;
		memcpy(pg, j->gc_pg, n * sizeof(*pg));
		memcpy(page, j->gc_page, n * sizeof(*page));
		j->gc_n = 0;
		uint64_t gen = j->gc_gen++;
		int rc = j->failed ? -EROFS : log_batch(a, pg, page, n);
		for (size_t i = 0; i < n; i++)
			free(pg[i]);
		if (rc < 0)
			j->gc_err_gen = gen, j->gc_err = rc;
		j->gc_done = gen;
		pthread_cond_broadcast(&a->cond);
	}
}

#define WB_CHUNK_PAGES 64 /* pages of one request per batch entry */

int eng_wb_write(struct eng_array *a, const uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	struct eng_journal *j = eng_journal_of(a);
	struct eng_wb_cache *c = j->wb;
	int rc = 0;
	uint8_t *pg[WB_CHUNK_PAGES];
	uint64_t page[WB_CHUNK_PAGES];
	while (nsec && rc == 0) {
		/* Up to WB_CHUNK_PAGES pages of the request at a time. */
		uint64_t p0 = lsec / 8, p1 = (lsec + nsec + 7) / 8;
		if (p1 - p0 > WB_CHUNK_PAGES)
			p1 = p0 + WB_CHUNK_PAGES;
		size_t np = (size_t)(p1 - p0);
		uint64_t end = p1 * 8 < lsec + nsec ? p1 * 8 : lsec + nsec;
		size_t have = 0;
		for (size_t i = 0; i < np && rc == 0; i++, have++) {
			uint64_t p = p0 + i;
			page[i] = p;
			if (posix_memalign((void **)&pg[i], 4096, MDJ_BLOCK)) {
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
					rc = eng_parity_read_members(a, pg[i], p * 8, 8);
			}
			if (rc == 0)
				memcpy(pg[i] + (s0 - p * 8) * 512, buf + (s0 - lsec) * 512,
				       (s1 - s0) * 512);
		}
		while (rc == 0 && j->gc_n + np > ENG_GC_MAX)
			eng_cond_wait(a); /* the batch is full: the leader drains it */
		if (rc == 0 && j->failed)
			rc = -EROFS;
		if (rc < 0) {
			for (size_t i = 0; i < have; i++)
				free(pg[i]);
			break;
		}
		memcpy(j->gc_pg + j->gc_n, pg, np * sizeof(*pg));
		memcpy(j->gc_page + j->gc_n, page, np * sizeof(*page));
		j->gc_n += np;
		uint64_t mine = j->gc_gen;
		if (!j->gc_io)
			gc_lead(a);
		while (j->gc_done < mine)
			eng_cond_wait(a);
		if (j->gc_err && j->gc_err_gen >= mine)
			rc = j->gc_err;
		else if (j->failed)
			rc = -EROFS;
		buf += (end - lsec) * 512;
		nsec -= end - lsec;
		lsec = end;
	}
	return rc;
}

/* Aligned writes without the array lock: the state lock shared (so no
 * write-out, flush or state change runs meanwhile), the journal mutex only
 * around reserving a place in the ring and caching the pages. Writers log
 * in parallel; each waits until every unit reserved before its own is
 * durable (recovery stops at the first missing one), then is acknowledged.
 * -EAGAIN: take the locked path (partial pages, array not yet marked
 * active, cache or log full: there the cache is written out). */
int eng_wb_fast_write(struct eng_array *a, const uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	if (lsec % MDJ_BLOCK_SECTORS || nsec % MDJ_BLOCK_SECTORS ||
	    nsec > WB_FAST_PAGES * MDJ_BLOCK_SECTORS)
		return -EAGAIN;
	if (pthread_rwlock_tryrdlock(&a->iolock) != 0)
		return -EAGAIN;
	struct eng_journal *j = eng_journal_of(a);
	struct eng_wb_cache *c = j ? j->wb : NULL;
	if (!c || j->failed || j->fast_err || !a->dirty || a->readonly) {
		pthread_rwlock_unlock(&a->iolock);
		return -EAGAIN;
	}
	__atomic_store_n(&a->last_write_ns, eng_now_ns(), __ATOMIC_RELAXED);
	size_t np = (size_t)(nsec / MDJ_BLOCK_SECTORS);
	uint64_t total = (uint64_t)(np + 1) * MDJ_BLOCK_SECTORS;
	uint64_t out = np * (uint64_t)(2 + eng_nparity(a)) * MDJ_BLOCK_SECTORS;
	uint8_t *b = NULL, *pg[WB_FAST_PAGES];
	if (posix_memalign((void **)&b, 4096, (np + 1) * MDJ_BLOCK)) {
		pthread_rwlock_unlock(&a->iolock);
		return -EAGAIN;
	}
	size_t got = 0;
	for (; got < np; got++)
		if (posix_memalign((void **)&pg[got], 4096, MDJ_BLOCK))
			break;
	pthread_mutex_lock(&j->mu);
	uint64_t used_ring = j->head >= j->tail ? j->head - j->tail : j->head + j->size - j->tail;
	if (got < np || c->n + np > c->max || used_ring + total + c->out_cost + out > j->size / 2) {
		pthread_mutex_unlock(&j->mu);
		pthread_rwlock_unlock(&a->iolock);
		for (size_t i = 0; i < got; i++)
			free(pg[i]);
		free(b);
		return -EAGAIN;
	}
	if (j->inflight == 0)
		j->durable_seq = j->seq - 1; /* everything before is on disk */
	uint64_t seq = j->seq++, pos = j->head;
	j->head = (j->head + total) % j->size;
	j->last_pos = pos;
	j->dirty_tail = true;
	c->out_cost += out;
	j->inflight++;
	pthread_mutex_unlock(&j->mu);

	struct mdj_meta *m = malloc(sizeof(*m)); /* 6.5 KiB: not on the stack */
	int rc = m ? 0 : -ENOMEM;
	if (m) {
		mdj_init(m, seq, pos);
		for (size_t i = 0; i < np; i++) {
			memcpy(pg[i], buf + i * MDJ_BLOCK, MDJ_BLOCK);
			memcpy(b + (i + 1) * MDJ_BLOCK, pg[i], MDJ_BLOCK);
			mdj_add_data(m, lsec + i * MDJ_BLOCK_SECTORS,
			             md_crc32c(j->seed, pg[i], MDJ_BLOCK));
		}
		mdj_encode(m, j->seed, b);
		free(m);
		rc = eng_journal_ring_io(a, true, b, pos, total, MEMBER_FUA);
	}
	free(b);

	pthread_mutex_lock(&j->mu);
	if (rc < 0) {
		/* The chain breaks here: no later unit is reachable either. */
		if (!j->fast_err)
			j->fast_err = rc; /* the locked path then fails the journal */
	} else {
		j->fin[seq % ENG_WB_FIN] = true;
		while (j->fin[(j->durable_seq + 1) % ENG_WB_FIN] && j->durable_seq + 1 < j->seq) {
			j->fin[(j->durable_seq + 1) % ENG_WB_FIN] = false;
			j->durable_seq++;
		}
	}
	if (j->waiters) /* only writers behind an unfinished unit sleep */
		pthread_cond_broadcast(&j->cv);
	while (rc == 0 && j->durable_seq < seq && !j->fast_err) {
		j->waiters++;
		pthread_cond_wait(&j->cv, &j->mu);
		j->waiters--;
	}
	if (rc == 0 && j->durable_seq < seq)
		rc = -EROFS; /* an earlier unit was lost: this one is not reachable */
	for (size_t i = 0; i < np; i++) {
		if (rc < 0) {
			free(pg[i]);
			continue;
		}
		uint64_t p = lsec / MDJ_BLOCK_SECTORS + i;
		size_t h = slot_of(c, p);
		if (!c->key[h]) {
			c->key[h] = p + 1;
			c->n++;
			c->data[h] = pg[i];
		} else {
			memcpy(c->data[h], pg[i], MDJ_BLOCK);
			free(pg[i]);
		}
	}
	j->inflight--;
	pthread_mutex_unlock(&j->mu);
	pthread_rwlock_unlock(&a->iolock);
	return rc < 0 ? -EROFS : 0;
}
