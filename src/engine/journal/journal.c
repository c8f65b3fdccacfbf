/* Write journal: attaching the journal member, logging stripe writes
 * (write-through), moving the tail, failure, superblock and add-journal.
 * Replay is in engine/journal/replay.c, the write-back cache in engine/journal/writeback.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine/journal/journal.h"
#include "engine/raid456/raid456.h"
#include "engine/raid456/stripe_cache.h"
#include "util/errmsg.h"

struct eng_journal *eng_journal_new(struct eng_array *a)
{
	struct eng_journal *j = eng_journal_of(a);
	if (!j) {
		j = calloc(1, sizeof(*j));
		if (j) {
			j->gc_gen = 1; /* gc_done 0: nothing written yet */
			pthread_mutex_init(&j->mu, NULL);
			pthread_cond_init(&j->cv, NULL);
			j->mu_inited = true;
			a->log_state = j;
		}
	}
	return j;
}

void eng_journal_free(struct eng_array *a)
{
	struct eng_journal *j = eng_journal_of(a);
	if (!j)
		return;
	if (j->em.m)
		member_close(j->em.m);
	for (size_t i = 0; i < j->gc_n; i++)
		free(j->gc_pg[i]);
	if (j->mu_inited) {
		pthread_mutex_destroy(&j->mu);
		pthread_cond_destroy(&j->cv);
	}
	free(j->gc_buf);
	free(j->buf);
	free(j);
	a->log_state = NULL;
}

void eng_journal_set_failed(struct eng_journal *j, const char *why)
{
	j->failed = true;
	snprintf(j->why, sizeof(j->why), "%s", why);
}

/* Ring geometry and checksum seed from the journal member's superblock. */
int eng_journal_geometry(struct eng_array *a, char *err, size_t errlen)
{
	struct eng_journal *j = eng_journal_of(a);
	j->seed = mdj_uuid_seed(a->ref.set_uuid);
	j->size = j->em.sb.data_size / MDJ_BLOCK_SECTORS * MDJ_BLOCK_SECTORS;
	if (j->size < 64 * MDJ_BLOCK_SECTORS)
		return errmsg(err, errlen, -ENOSPC,
		              "%s: journal of %llu sectors is too small (at least 256 KiB)",
		              j->em.m->name, (unsigned long long)j->size);
	return 0;
}

int eng_journal_ring_io(struct eng_array *a, bool write, void *buf, uint64_t pos, uint64_t nsec,
                        unsigned flags)
{
	struct eng_journal *j = eng_journal_of(a);
	uint8_t *p = buf;
	while (nsec) {
		pos %= j->size;
		uint64_t n = j->size - pos < nsec ? j->size - pos : nsec;
		uint64_t off = (j->em.sb.data_offset + pos) * 512;
		int rc = write ? member_write(j->em.m, p, n * 512, off, flags)
		               : member_read(j->em.m, p, n * 512, off);
		if (rc < 0)
			return rc;
		p += n * 512;
		pos += n;
		nsec -= n;
	}
	return 0;
}

void eng_journal_fail(struct eng_array *a, const char *why)
{
	struct eng_journal *j = eng_journal_of(a);
	if (!j || j->failed)
		return;
	fprintf(stderr,
	        "uraid: journal %s failed (%s): the array refuses writes until a new journal "
	        "is added (uraid add-journal)\n",
	        j->em.m ? j->em.m->name : "?", why);
	eng_journal_set_failed(j, why);
	/* The superblocks record the journal as faulty. */
	eng_sb_write_all(a);
}

int eng_journal_dev(const struct eng_array *a, uint16_t *role_word)
{
	const struct eng_journal *j = eng_journal_of(a);
	if (!j || !j->em.m)
		return -1;
	*role_word = j->failed ? MD_ROLE_FAULTY : MD_ROLE_JOURNAL;
	return (int)j->em.sb.dev_number;
}

int eng_journal_sb_write(struct eng_array *a)
{
	struct eng_journal *j = eng_journal_of(a);
	if (!j || !j->em.m || j->failed)
		return 0;
	struct md_sb s;
	eng_sb_merge(a, &j->em, &s);
	/* md keeps the log tail in the journal device's recovery_offset. */
	s.recovery_offset = j->tail;
	s.feature_map &= ~MD_FEATURE_RECOVERY_OFFSET;
	int rc = md_sb_store(j->em.m, &s);
	if (rc == 0)
		rc = member_flush(j->em.m);
	if (rc < 0) {
		eng_journal_set_failed(j, "superblock write failed");
		fprintf(stderr, "uraid: journal %s: superblock write failed: writes refused\n",
		        j->em.m->name);
		return rc;
	}
	j->em.sb = s;
	return 0;
}

static uint64_t ring_used(const struct eng_journal *j)
{
	return j->head >= j->tail ? j->head - j->tail : j->head + j->size - j->tail;
}

int eng_journal_reclaim(struct eng_array *a)
{
	struct eng_journal *j = eng_journal_of(a);
	if (!j || j->failed || !j->dirty_tail || j->pending)
		return 0;
	/* Everything logged has been written to the members; once they are
	 * durable only the last unit stays (replaying it again is harmless,
	 * and the tail must name a valid meta block, as md's does). */
	for (int r = 0; r < a->geo.raid_disks; r++) {
		struct member *m = eng_role_member(a, r);
		if (m && eng_role_writable(a, r) && member_flush(m) < 0)
			eng_member_failed(a, r, "flush failed");
	}
	uint64_t keep = j->last_pos;
	if (j->wb && eng_wb_has(a))
		return 0; /* cached data still needs its log: eng_wb_flush first */
	j->tail = keep;
	j->dirty_tail = false;
	return eng_sb_write_all(a);
}

uint64_t eng_journal_piece(const struct eng_array *a, uint64_t lsec, uint64_t nsec)
{
	const struct eng_journal *j = eng_journal_of(a);
	uint64_t chunk = a->geo.chunk_sectors;
	uint64_t k = (uint64_t)(a->geo.raid_disks - eng_nparity(a));
	uint64_t width = k * chunk;
	/* Data sectors whose log (data, parity, meta blocks, 4 KiB rounding)
	 * fits in a quarter of the ring. */
	uint64_t lim = j->size / 4 * k / (k + (uint64_t)eng_nparity(a) + 1);
	lim = lim / MDJ_BLOCK_SECTORS * MDJ_BLOCK_SECTORS;
	if (lim < MDJ_BLOCK_SECTORS)
		lim = MDJ_BLOCK_SECTORS;
	uint64_t n;
	if (width <= lim) {
		n = lsec % width ? width - lsec % width : lim / width * width;
	} else {
		n = chunk - lsec % chunk;
		if (n > lim)
			n = lim - lsec % MDJ_BLOCK_SECTORS;
	}
	return n < nsec ? n : nsec;
}

static int data_pos(const struct eng_stripe_buf *sb, int di)
{
	return sb->has_q ? sb->ls.q_index[di] : di;
}

/* Close the unit being built: its meta block goes in front of its pages. */
static void close_unit(struct eng_journal *j, size_t meta_off)
{
	mdj_encode(&j->meta, j->seed, j->buf + meta_off);
	j->last_pos = j->meta.position;
}

int eng_journal_log(struct eng_array *a, struct eng_stripe_buf *sb, int n, uint64_t co,
                    const bool *dirty)
{
	struct eng_journal *j = eng_journal_of(a);
	if (!j)
		return 0;
	if (j->failed)
		return -EROFS;
	uint64_t chunk = a->geo.chunk_sectors;
	uint64_t k = (uint64_t)(a->geo.raid_disks - eng_nparity(a));
	int npar = eng_nparity(a);
	/* Size of the log: the pages plus the meta blocks, packed as below
	 * (a row's payloads never straddle two meta blocks). */
	uint64_t pages = 0, units = 1;
	uint32_t fill = MDJ_HDR_BYTES;
	for (int i = 0; i < n; i++) {
		if (co % MDJ_BLOCK_SECTORS || sb[i].nsec % MDJ_BLOCK_SECTORS)
			return -EINVAL; /* rows are widened to 4 KiB by the caller */
		uint64_t rows = sb[i].nsec / MDJ_BLOCK_SECTORS, nd = 0;
		for (int p = 0; p < sb[i].nsyn; p++)
			nd += sb[i].pos_role[p] >= 0 && (!dirty || dirty[p]);
		pages += rows * (nd + (uint64_t)npar);
		uint32_t rb = (uint32_t)(16 + 4 * npar + 20 * nd);
		for (uint64_t r = 0; r < rows; r++) {
			if (fill + rb > MDJ_BLOCK && fill > MDJ_HDR_BYTES) {
				units++;
				fill = MDJ_HDR_BYTES;
			}
			fill += rb;
		}
	}
	uint64_t total = (pages + units) * MDJ_BLOCK_SECTORS;
	if (total + MDJ_BLOCK_SECTORS >= j->size)
		return -ENOSPC;
	if (ring_used(j) + total + MDJ_BLOCK_SECTORS >= j->size) {
		int rc = eng_journal_reclaim(a);
		if (rc < 0)
			return rc;
		if (ring_used(j) + total + MDJ_BLOCK_SECTORS >= j->size)
			return -ENOSPC;
	}
	size_t need = (size_t)(pages + units) * MDJ_BLOCK;
	if (need > j->buf_cap) {
		free(j->buf);
		j->buf = eng_alloc(need);
		j->buf_cap = j->buf ? need : 0;
		if (!j->buf)
			return -ENOMEM;
	}
	size_t used = MDJ_BLOCK, meta_off = 0;
	mdj_init(&j->meta, j->seq++, j->head);
	for (int i = 0; i < n; i++) {
		struct eng_stripe_buf *b = &sb[i];
		uint64_t s = b->ls.sector / chunk;
		for (uint64_t r = 0; r < b->nsec / MDJ_BLOCK_SECTORS; r++) {
			uint64_t row = co + r * MDJ_BLOCK_SECTORS; /* sector inside the chunk */
			size_t boff = (size_t)r * MDJ_BLOCK;
			/* A row's data and parity stay in one unit, as md logs a stripe. */
			uint32_t room = MDJ_BLOCK - mdj_meta_bytes(&j->meta);
			uint32_t want = (uint32_t)(16 + 4 * npar);
			for (int di = 0; di < (int)k; di++) {
				int p = data_pos(b, di);
				want += b->pos_role[p] >= 0 && (!dirty || dirty[p]) ? 20 : 0;
			}
			if (want > room && j->meta.npay > 0) {
				close_unit(j, meta_off);
				meta_off = used;
				used += MDJ_BLOCK;
				mdj_init(&j->meta, j->seq++, (j->head + meta_off / 512) % j->size);
			}
			for (int di = 0; di < (int)k; di++) {
				int p = data_pos(b, di);
				if (b->pos_role[p] < 0 || (dirty && !dirty[p]))
					continue;
				uint8_t *pg = j->buf + used;
				memcpy(pg, (uint8_t *)b->blk[p] + boff, MDJ_BLOCK);
				uint64_t lsec = s * k * chunk + (uint64_t)di * chunk + row;
				mdj_add_data(&j->meta, lsec, md_crc32c(j->seed, pg, MDJ_BLOCK));
				used += MDJ_BLOCK;
			}
			uint32_t cp, cq = 0;
			memcpy(j->buf + used, (uint8_t *)b->blk[b->nsyn] + boff, MDJ_BLOCK);
			cp = md_crc32c(j->seed, j->buf + used, MDJ_BLOCK);
			used += MDJ_BLOCK;
			if (b->has_q) {
				memcpy(j->buf + used, (uint8_t *)b->blk[b->nsyn + 1] + boff,
				       MDJ_BLOCK);
				cq = md_crc32c(j->seed, j->buf + used, MDJ_BLOCK);
				used += MDJ_BLOCK;
			}
			mdj_add_parity(&j->meta, b->ls.sector + row, cp, cq, b->has_q);
		}
	}
	close_unit(j, meta_off);
	uint64_t nsec = used / 512;
	/* FUA: durable before the members are written (one call on files). */
	int rc = eng_journal_ring_io(a, true, j->buf, j->head, nsec, MEMBER_FUA);
	if (rc < 0) {
		eng_journal_fail(a, "log write failed");
		return -EROFS;
	}
	j->head = (j->head + nsec) % j->size;
	j->dirty_tail = true;
	return 0;
}
