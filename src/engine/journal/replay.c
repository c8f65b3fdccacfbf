/* Journal recovery at assembly, with md's rules (raid5-cache.c): meta
 * blocks are read from journal_tail on while magic, checksum, position and
 * the seq chain hold; a block whose pages fail their checksums ends the
 * log. Per 4 KiB stripe row, data pages accumulate; a parity payload makes
 * the row complete; data arriving for a complete row first replays it. At
 * the end complete rows are written to the members as logged (data and
 * parity together, so they agree); data-only rows (write-back) are written
 * through the array once it runs (eng_journal_replay_finish). Then a new
 * empty meta block with seq + 10000 starts the log after the old one, so a
 * stale block after it can never continue the chain. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine/journal/journal.h"
#include "engine/raid456/raid456.h"
#include "util/errmsg.h"

struct jrow {
	uint64_t msec; /* member sector of the row, UINT64_MAX = empty slot */
	bool parity;
	bool has[LAYOUT_MAX_MEMBERS];      /* by role: page loaded */
	uint64_t lsec[LAYOUT_MAX_MEMBERS]; /* by role: array sector of a data page */
	uint8_t *pages;                    /* raid_disks pages, by role */
};

struct jrows {
	struct jrow **slot; /* open addressing by msec */
	size_t cap, n;
	int nroles;
};

static struct jrow *row_get(struct jrows *t, uint64_t msec, bool create)
{
	if (create && (t->n + 1) * 2 > t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 256;
		struct jrow **ns = calloc(ncap, sizeof(*ns));
		if (!ns)
			return NULL;
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->slot[i])
				continue;
			size_t h = (size_t)(t->slot[i]->msec / MDJ_BLOCK_SECTORS) & (ncap - 1);
			while (ns[h])
				h = (h + 1) & (ncap - 1);
			ns[h] = t->slot[i];
		}
		free(t->slot);
		t->slot = ns;
		t->cap = ncap;
	}
	if (!t->cap)
		return NULL;
	size_t h = (size_t)(msec / MDJ_BLOCK_SECTORS) & (t->cap - 1);
	while (t->slot[h]) {
		if (t->slot[h]->msec == msec)
			return t->slot[h];
		h = (h + 1) & (t->cap - 1);
	}
	if (!create)
		return NULL;
	struct jrow *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->pages = eng_alloc((size_t)t->nroles * MDJ_BLOCK);
	if (!r->pages) {
		free(r);
		return NULL;
	}
	r->msec = msec;
	t->slot[h] = r;
	t->n++;
	return r;
}

static void rows_free(struct jrows *t)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i]) {
			free(t->slot[i]->pages);
			free(t->slot[i]);
		}
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

static void row_reset(struct jrow *r, int nroles)
{
	r->parity = false;
	memset(r->has, 0, sizeof(bool) * (size_t)nroles);
}

/* Write a complete row as logged; the data pages and parity agree. */
static void row_replay(struct eng_array *a, struct jrow *r, uint64_t *count)
{
	int rd = a->geo.raid_disks;
	struct layout_stripe ls;
	a->ops->stripe(&a->geo, r->msec / a->geo.chunk_sectors, &ls);
	int ndata = 0;
	for (int role = 0; role < rd; role++)
		ndata += r->has[role] && role != ls.p_role && role != ls.q_role;
	if (ndata == 0 || !r->parity)
		return; /* parity only: md says it reached the array before */
	for (int role = 0; role < rd; role++) {
		if (!r->has[role] || !eng_role_writable(a, role))
			continue;
		if (eng_member_io(a, role, true, r->pages + (size_t)role * MDJ_BLOCK, r->msec,
		                  MDJ_BLOCK_SECTORS) < 0)
			eng_member_failed(a, role, "write error while replaying the journal");
	}
	(*count)++;
}

/* Pending data-only pages for eng_journal_replay_finish. */
struct jpending {
	uint64_t lsec;
	uint8_t page[MDJ_BLOCK];
};
struct eng_journal_pending {
	size_t n;
	struct jpending *p;
};

static int write_empty(struct eng_array *a, uint64_t pos, uint64_t seq)
{
	struct eng_journal *j = eng_journal_of(a);
	uint8_t *blk = eng_alloc(MDJ_BLOCK);
	if (!blk)
		return -ENOMEM;
	mdj_init(&j->meta, seq, pos);
	mdj_encode(&j->meta, j->seed, blk);
	int rc = eng_journal_ring_io(a, true, blk, pos, MDJ_BLOCK_SECTORS, 0);
	free(blk);
	if (rc == 0)
		rc = member_flush(j->em.m);
	return rc;
}

static void flush_members(struct eng_array *a)
{
	for (int r = 0; r < a->geo.raid_disks; r++) {
		struct member *m = eng_role_member(a, r);
		if (m && eng_role_writable(a, r) && member_flush(m) < 0)
			eng_member_failed(a, r, "flush failed");
	}
}

/* Apply one meta block's payloads (pages already verified). */
static int apply_block(struct eng_array *a, struct jrows *t, const struct mdj_meta *m,
                       const uint8_t *pages, uint64_t *count)
{
	uint64_t chunk = a->geo.chunk_sectors;
	size_t pg = 0;
	for (int i = 0; i < m->npay; i++) {
		const struct mdj_payload *p = &m->pay[i];
		if (p->type == MDJ_FLUSH) {
			struct jrow *r = row_get(t, p->location, false);
			if (r)
				row_reset(r, t->nroles);
			continue;
		}
		if (p->type == MDJ_DATA) {
			struct layout_loc loc;
			uint64_t len;
			if (p->location % MDJ_BLOCK_SECTORS || p->location >= a->array_sectors ||
			    a->ops->map(&a->geo, p->location, 0, &loc, &len) < 0)
				return -EINVAL;
			struct jrow *r = row_get(t, loc.sector, true);
			if (!r)
				return -ENOMEM;
			if (r->parity) {
				row_replay(a, r, count);
				row_reset(r, t->nroles);
			}
			memcpy(r->pages + (size_t)loc.role * MDJ_BLOCK, pages + pg * MDJ_BLOCK,
			       MDJ_BLOCK);
			r->has[loc.role] = true;
			r->lsec[loc.role] = p->location;
			pg++;
			continue;
		}
		if (p->location % MDJ_BLOCK_SECTORS || p->location >= a->geo.dev_sectors ||
		    (p->sectors == 2 * MDJ_BLOCK_SECTORS) != (eng_nparity(a) == 2))
			return -EINVAL;
		struct layout_stripe ls;
		a->ops->stripe(&a->geo, p->location / chunk, &ls);
		struct jrow *r = row_get(t, p->location, true);
		if (!r)
			return -ENOMEM;
		memcpy(r->pages + (size_t)ls.p_role * MDJ_BLOCK, pages + pg * MDJ_BLOCK, MDJ_BLOCK);
		r->has[ls.p_role] = true;
		if (ls.q_role >= 0) {
			memcpy(r->pages + (size_t)ls.q_role * MDJ_BLOCK,
			       pages + (pg + 1) * MDJ_BLOCK, MDJ_BLOCK);
			r->has[ls.q_role] = true;
		}
		r->parity = true;
		pg += p->log_pages;
	}
	return 0;
}

static bool pages_ok(const struct eng_journal *j, const struct mdj_meta *m, const uint8_t *pages)
{
	size_t pg = 0;
	for (int i = 0; i < m->npay; i++)
		for (uint32_t c = 0; c < m->pay[i].log_pages; c++, pg++)
			if (md_crc32c(j->seed, pages + pg * MDJ_BLOCK, MDJ_BLOCK) !=
			    m->pay[i].csum[c])
				return false;
	return true;
}

int eng_journal_replay(struct eng_array *a, char *err, size_t errlen)
{
	struct eng_journal *j = eng_journal_of(a);
	uint64_t tail = j->em.sb.recovery_offset;
	if (tail >= j->size || tail % MDJ_BLOCK_SECTORS)
		tail = 0;
	uint8_t *blk = eng_alloc(MDJ_BLOCK);
	uint8_t *pages = eng_alloc((size_t)MDJ_MAX_PAYLOADS * 2 * MDJ_BLOCK);
	struct mdj_meta *m = calloc(1, sizeof(*m));
	struct jrows t = {.nroles = a->geo.raid_disks};
	int rc = blk && pages && m ? 0 : -ENOMEM;
	if (rc == 0)
		rc = eng_journal_ring_io(a, false, blk, tail, MDJ_BLOCK_SECTORS, 0);
	if (rc < 0)
		goto out;
	if (mdj_decode(blk, j->seed, m, NULL, 0) < 0 || m->position != tail) {
		/* No log yet (fresh from mdadm --create) or not ours: start one
		 * at 0 with a random seq, as md does. */
		uint32_t r32;
		if (getrandom(&r32, sizeof(r32), 0) != sizeof(r32))
			r32 = 1;
		rc = write_empty(a, 0, r32);
		if (rc < 0)
			goto out;
		j->tail = j->last_pos = 0;
		j->head = MDJ_BLOCK_SECTORS;
		j->seq = (uint64_t)r32 + 1;
		rc = eng_sb_write_all(a);
		goto out;
	}
	uint64_t pos = tail, seq = m->seq, scanned = 0, count = 0;
	for (;;) {
		rc = eng_journal_ring_io(a, false, blk, pos, MDJ_BLOCK_SECTORS, 0);
		if (rc < 0)
			goto out;
		if (mdj_decode(blk, j->seed, m, NULL, 0) < 0 || m->seq != seq || m->position != pos)
			break;
		uint64_t np = mdj_pages(m);
		if (np > (uint64_t)MDJ_MAX_PAYLOADS * 2 ||
		    scanned + (np + 1) * MDJ_BLOCK_SECTORS > j->size)
			break;
		rc = eng_journal_ring_io(a, false, pages, pos + MDJ_BLOCK_SECTORS,
		                         np * MDJ_BLOCK_SECTORS, 0);
		if (rc < 0)
			goto out;
		if (!pages_ok(j, m, pages))
			break; /* torn: the unit never completed */
		if (apply_block(a, &t, m, pages, &count) < 0)
			break;
		scanned += (np + 1) * MDJ_BLOCK_SECTORS;
		pos = (pos + (np + 1) * MDJ_BLOCK_SECTORS) % j->size;
		seq++;
	}
	/* Complete rows to the members; data-only rows wait for the array. */
	struct eng_journal_pending *pend = calloc(1, sizeof(*pend));
	if (!pend) {
		rc = -ENOMEM;
		goto out;
	}
	size_t npend = 0;
	for (size_t i = 0; i < t.cap; i++) {
		struct jrow *r = t.slot[i];
		if (!r)
			continue;
		if (r->parity) {
			row_replay(a, r, &count);
			continue;
		}
		for (int role = 0; role < t.nroles; role++)
			npend += r->has[role];
	}
	pend->p = npend ? calloc(npend, sizeof(*pend->p)) : NULL;
	if (npend && !pend->p) {
		free(pend);
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < t.cap; i++) {
		struct jrow *r = t.slot[i];
		if (!r || r->parity)
			continue;
		for (int role = 0; role < t.nroles; role++)
			if (r->has[role]) {
				pend->p[pend->n].lsec = r->lsec[role];
				memcpy(pend->p[pend->n].page, r->pages + (size_t)role * MDJ_BLOCK,
				       MDJ_BLOCK);
				pend->n++;
			}
	}
	flush_members(a);
	j->replayed_rows = count;
	j->replayed_data_only = pend->n;
	j->pending = pend;
	if (count || pend->n)
		fprintf(stderr,
		        "uraid: %s: journal replayed %llu stripe rows, %zu data-only pages%s\n",
		        a->ref.set_name, (unsigned long long)count, pend->n,
		        j->in_memory ? " (read-only: in memory, no member written)" : "");
	/* A new log after the old one; seq jumps so no stale block continues
	 * it. The tail moves there only once data-only pages are logged anew. */
	seq += 10000;
	rc = write_empty(a, pos, seq);
	if (rc < 0)
		goto out;
	j->last_pos = pos;
	j->head = (pos + MDJ_BLOCK_SECTORS) % j->size;
	j->seq = seq + 1;
	if (pend->n == 0) {
		j->tail = pos;
		rc = eng_sb_write_all(a);
	} else {
		j->tail = tail;
		j->dirty_tail = true;
	}
out:
	if (rc < 0)
		errmsg(err, errlen, rc, "journal %s: replay failed: %s", j->em.m->name,
		       strerror(-rc));
	rows_free(&t);
	free(blk);
	free(pages);
	free(m);
	return rc;
}

int eng_journal_replay_finish(struct eng_array *a)
{
	struct eng_journal *j = eng_journal_of(a);
	struct eng_journal_pending *pend = j->pending;
	if (!pend)
		return 0;
	int rc = eng_mark_dirty(a);
	struct eng_req rq = {.q = a->ioq};
	for (size_t i = 0; i < pend->n && rc == 0; i++)
		rc = a->pers->write(a, &rq, pend->p[i].page, pend->p[i].lsec, MDJ_BLOCK_SECTORS);
	free(pend->p);
	free(pend);
	j->pending = NULL;
	if (rc == 0)
		rc = eng_journal_reclaim(a);
	return rc;
}
