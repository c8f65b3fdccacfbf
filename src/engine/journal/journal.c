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

static struct eng_journal *journal_new(struct eng_array *a)
{
	if (!a->journal) {
		a->journal = calloc(1, sizeof(*a->journal));
		if (a->journal) {
			a->journal->gc_gen = 1; /* gc_done 0: nothing written yet */
			pthread_mutex_init(&a->journal->mu, NULL);
			pthread_cond_init(&a->journal->cv, NULL);
			a->journal->mu_inited = true;
		}
	}
	return a->journal;
}

int eng_journal_attach(struct eng_array *a, struct member *m, const struct md_sb *sb, char *err,
                       size_t errlen)
{
	struct eng_journal *j = journal_new(a);
	if (!j) {
		member_close(m);
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	}
	if (j->em.m) {
		char other[256];
		snprintf(other, sizeof(other), "%s", j->em.m->name);
		member_close(m);
		return errmsg(err, errlen, -EINVAL, "two journal members: %s and %s", other,
		              sb ? "another" : "?");
	}
	j->em.m = m;
	j->em.sb = *sb;
	j->em.role = -1;
	j->em.state = URAID_MEMBER_IN_SYNC;
	return 0;
}

void eng_journal_free(struct eng_array *a)
{
	struct eng_journal *j = a->journal;
	if (!j)
		return;
	eng_wb_free(a);
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
	a->journal = NULL;
}

static void set_failed(struct eng_journal *j, const char *why)
{
	j->failed = true;
	snprintf(j->why, sizeof(j->why), "%s", why);
}

/* Ring geometry and checksum seed from the journal member's superblock. */
static int journal_geometry(struct eng_array *a, char *err, size_t errlen)
{
	struct eng_journal *j = a->journal;
	j->seed = mdj_uuid_seed(a->ref.set_uuid);
	j->size = j->em.sb.data_size / MDJ_BLOCK_SECTORS * MDJ_BLOCK_SECTORS;
	if (j->size < 64 * MDJ_BLOCK_SECTORS)
		return errmsg(err, errlen, -ENOSPC,
		              "%s: journal of %llu sectors is too small (at least 256 KiB)",
		              j->em.m->name, (unsigned long long)j->size);
	return 0;
}

int eng_journal_load(struct eng_array *a, char *err, size_t errlen)
{
	bool want = a->ref.version != MD_SB_0_90 && (a->ref.feature_map & MD_FEATURE_JOURNAL);
	if (!want && !a->journal)
		return 0;
	if (!eng_raid456(a))
		return errmsg(err, errlen, -EINVAL,
		              "a write journal needs raid4/5/6, this array is %s", a->ops->name);
	struct eng_journal *j = journal_new(a);
	if (!j)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	j->mode = URAID_JOURNAL_WT;
	if (!j->em.m) {
		/* md: "journal disk is missing, force array readonly". */
		set_failed(j, "the journal member is missing");
		fprintf(stderr,
		        "uraid: %s: journal member missing: writes refused until a journal "
		        "is added (uraid add-journal)\n",
		        a->ref.set_name);
		return 0;
	}
	int rc = journal_geometry(a, err, errlen);
	if (rc < 0)
		return rc;
	if (a->readonly)
		return 0; /* nothing may be written: the log stays for the next assembly */
	return eng_journal_replay(a, err, errlen);
}

int eng_journal_start(struct eng_array *a, char *err, size_t errlen)
{
	if (!a->journal || a->journal->failed || a->readonly)
		return 0;
	eng_lock(a);
	int rc = eng_journal_replay_finish(a);
	eng_unlock(a);
	if (rc < 0)
		return errmsg(err, errlen, rc, "writing journal data back to the array failed: %s",
		              strerror(-rc));
	return 0;
}

int eng_journal_ring_io(struct eng_array *a, bool write, void *buf, uint64_t pos, uint64_t nsec,
                        unsigned flags)
{
	struct eng_journal *j = a->journal;
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
	struct eng_journal *j = a->journal;
	if (!j || j->failed)
		return;
	fprintf(stderr,
	        "uraid: journal %s failed (%s): the array refuses writes until a new journal "
	        "is added (uraid add-journal)\n",
	        j->em.m ? j->em.m->name : "?", why);
	set_failed(j, why);
	/* The superblocks record the journal as faulty. */
	eng_sb_write_all(a);
}

int eng_journal_dev(const struct eng_array *a, uint16_t *role_word)
{
	const struct eng_journal *j = a->journal;
	if (!j || !j->em.m)
		return -1;
	*role_word = j->failed ? MD_ROLE_FAULTY : MD_ROLE_JOURNAL;
	return (int)j->em.sb.dev_number;
}

int eng_journal_sb_write(struct eng_array *a)
{
	struct eng_journal *j = a->journal;
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
		set_failed(j, "superblock write failed");
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
	struct eng_journal *j = a->journal;
	if (!j || j->failed || !j->dirty_tail || j->pending)
		return 0;
	/* Everything logged has been written to the members; once they are
	 * durable only the last unit stays (replaying it again is harmless,
	 * and the tail must name a valid meta block, as md's does). */
	for (int r = 0; r < a->geom.raid_disks; r++) {
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
	const struct eng_journal *j = a->journal;
	uint64_t chunk = a->geom.chunk_sectors;
	uint64_t k = (uint64_t)(a->geom.raid_disks - eng_nparity(a));
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
	struct eng_journal *j = a->journal;
	if (!j)
		return 0;
	if (j->failed)
		return -EROFS;
	uint64_t chunk = a->geom.chunk_sectors;
	uint64_t k = (uint64_t)(a->geom.raid_disks - eng_nparity(a));
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

int eng_journal_mode(struct eng_array *a, enum uraid_journal_mode mode, char *err, size_t errlen)
{
	if (mode != URAID_JOURNAL_WT && mode != URAID_JOURNAL_WB)
		return errmsg(err, errlen, -EINVAL, "unknown journal mode %d", (int)mode);
	eng_lock(a);
	struct eng_journal *j = a->journal;
	int rc = 0;
	if (!j || !j->em.m)
		rc = errmsg(err, errlen, -ENODEV, "the array has no journal");
	else if (j->failed)
		rc = errmsg(err, errlen, -EROFS, "the journal failed: %s", j->why);
	else if (mode == URAID_JOURNAL_WB)
		rc = eng_wb_enable(a);
	else if (j->wb) {
		rc = eng_wb_flush(a);
		if (rc == 0)
			eng_wb_free(a);
	}
	if (rc == 0)
		j->mode = mode;
	else if (err && !err[0])
		errmsg(err, errlen, rc, "switching the journal mode failed: %s", strerror(-rc));
	eng_unlock(a);
	return rc;
}

/* A dev_number no member (journal included) uses. */
static uint32_t unused_dev_number(const struct eng_array *a)
{
	uint32_t d = 0;
	for (int i = 0; i < a->nmem; i++)
		if (a->mem[i]->sb.dev_number >= d)
			d = a->mem[i]->sb.dev_number + 1;
	for (uint32_t x = (uint32_t)a->geom.raid_disks; x < a->ref.max_dev; x++)
		if (x >= d && a->ref.dev_roles[x] == MD_ROLE_JOURNAL)
			d = x + 1;
	return d;
}

int eng_journal_add_member(struct eng_array *a, struct member *m, char *err, size_t errlen)
{
	char e[256];
	int rc;
	if (a->readonly) {
		member_close(m);
		return errmsg(err, errlen, -EROFS, "array is read-only");
	}
	if (!eng_raid456(a) || a->ref.version == MD_SB_0_90) {
		member_close(m);
		return errmsg(err, errlen, -EINVAL,
		              "a write journal needs raid4/5/6 with 1.x metadata");
	}
	if (a->bitmap) {
		member_close(m);
		return errmsg(err, errlen, -EINVAL,
		              "the array has a write-intent bitmap: md allows a journal or a "
		              "bitmap, not both");
	}
	if (m->readonly) {
		member_close(m);
		return errmsg(err, errlen, -EROFS, "%s is read-only", m->name);
	}
	/* The stripe cache writes partial stripes out without logging them:
	 * write it out and turn it off (the journal's write-back mode takes
	 * its place). */
	rc = eng_scache_set(a, 0);
	if (rc < 0) {
		member_close(m);
		return errmsg(err, errlen, rc, "writing the stripe cache out failed");
	}
	rc = member_lock(m);
	if (rc < 0) {
		member_close(m);
		return errmsg(err, errlen, rc, "%s is in use by a running array", m->name);
	}
	eng_lock(a);
	struct eng_journal *j = a->journal;
	if (j && j->em.m && !j->failed) {
		eng_unlock(a);
		member_close(m);
		return errmsg(err, errlen, -EBUSY, "the array already has a working journal (%s)",
		              j->em.m->name);
	}
	struct md_create_params p;
	eng_member_params(a, &p);
	uint8_t devuuid[16];
	struct md_sb sb;
	if (getrandom(devuuid, sizeof(devuuid), 0) != sizeof(devuuid)) {
		rc = errmsg(err, errlen, -EIO, "no random numbers for a device UUID");
		goto fail;
	}
	/* md records the array's size on the journal too, though its data
	 * area is the log: init with a size it holds, then the real one. */
	p.size = MD_SB_BYTES / 512;
	rc = md_sb_init(&sb, &p, -3, unused_dev_number(a), devuuid, m->size / 512, e, sizeof(e));
	if (rc < 0) {
		rc = errmsg(err, errlen, rc, "%s: %s", m->name, e);
		goto fail;
	}
	sb.size = a->geom.dev_sectors;
	if (j && j->em.m) {
		member_close(j->em.m);
		j->em.m = NULL;
	}
	j = journal_new(a);
	if (!j) {
		rc = errmsg(err, errlen, -ENOMEM, "out of memory");
		goto fail;
	}
	eng_wb_free(a);
	memset(&j->em, 0, sizeof(j->em));
	j->em.m = m;
	j->em.sb = sb;
	j->em.role = -1;
	j->em.state = URAID_MEMBER_IN_SYNC;
	j->failed = false;
	j->why[0] = 0;
	j->mode = URAID_JOURNAL_WT;
	rc = journal_geometry(a, err, errlen);
	if (rc < 0) {
		j->em.m = NULL;
		set_failed(j, "the journal member is missing");
		goto fail;
	}
	/* A fresh log: an empty meta block at 0 with a random seq, as md
	 * starts one. The members are flushed first, so nothing older needs
	 * a log. */
	uint32_t r32;
	if (getrandom(&r32, sizeof(r32), 0) != sizeof(r32))
		r32 = 1;
	for (int r = 0; r < a->geom.raid_disks; r++) {
		struct member *mm = eng_role_member(a, r);
		if (mm && eng_role_writable(a, r))
			member_flush(mm);
	}
	mdj_init(&j->meta, r32, 0);
	uint8_t *blk = eng_alloc(MDJ_BLOCK);
	if (!blk) {
		rc = errmsg(err, errlen, -ENOMEM, "out of memory");
		goto fail_j;
	}
	mdj_encode(&j->meta, j->seed, blk);
	rc = eng_journal_ring_io(a, true, blk, 0, MDJ_BLOCK_SECTORS, 0);
	free(blk);
	if (rc == 0)
		rc = member_flush(m);
	if (rc < 0) {
		rc = errmsg(err, errlen, rc, "%s: writing the journal failed", m->name);
		goto fail_j;
	}
	j->tail = 0;
	j->last_pos = 0;
	j->head = MDJ_BLOCK_SECTORS;
	j->seq = (uint64_t)r32 + 1;
	j->dirty_tail = false;
	a->ref.feature_map |= MD_FEATURE_JOURNAL;
	rc = eng_sb_write_all(a);
	if (rc == 0 && j->failed)
		rc = -EIO;
	if (rc < 0)
		rc = errmsg(err, errlen, rc, "%s: writing superblocks failed", m->name);
	eng_unlock(a);
	return rc;
fail_j:
	j->em.m = NULL;
	set_failed(j, "adding a journal failed");
fail:
	eng_unlock(a);
	member_close(m);
	return rc;
}

int eng_journal_write(struct eng_array *a, const uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	int rc = eng_wb_fast_write(a, buf, lsec, nsec);
	if (rc != -EAGAIN)
		return rc;
	eng_lock(a);
	struct eng_journal *j = a->journal;
	rc = 0;
	if (j->fast_err) /* a fast write-back log write failed */
		eng_journal_fail(a, "log write failed");
	if (j->failed) {
		eng_unlock(a);
		return -EROFS;
	}
	__atomic_store_n(&a->last_write_ns, eng_now_ns(), __ATOMIC_RELAXED);
	rc = eng_mark_dirty(a);
	if (rc == 0 && j->wb) {
		rc = eng_wb_write(a, buf, lsec, nsec);
	} else {
		/* Pieces whose log fits the ring comfortably. */
		eng_wb_quiesce(a);
		struct eng_req rq = {.q = a->ioq};
		while (rc == 0 && nsec) {
			uint64_t n = eng_journal_piece(a, lsec, nsec);
			rc = a->pers->write(a, &rq, buf, lsec, n);
			buf += n * 512;
			lsec += n;
			nsec -= n;
		}
	}
	eng_unlock(a);
	return rc;
}

void eng_journal_status(struct eng_array *a, struct uraid_status *st)
{
	const struct eng_journal *j = a->journal;
	if (!j)
		return;
	st->journal = j->failed ? 2 : 1;
	snprintf(st->journal_name, sizeof(st->journal_name), "%s",
	         j->em.m ? j->em.m->name : "(missing)");
	st->journal_mode = j->mode;
	st->journal_dev_number = j->em.sb.dev_number;
	st->journal_cached = eng_wb_pages(a);
}
