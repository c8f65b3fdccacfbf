/* The write journal behind the log interface (core/log.h): assembly hands
 * over the journal member, the log is replayed (replay.c) before the first
 * request, every stripe write is logged with its parity before the members
 * see it (journal.c), and write-back mode caches data in the log's shadow
 * (writeback.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/journal/journal.h"
#include "engine/raid456/raid456.h"
#include "util/errmsg.h"

/* Put every member (the journal too) behind an in-memory copy-on-write
 * view, for a replay that must touch nothing. */
static int in_memory(struct eng_array *a, char *err, size_t errlen)
{
	struct eng_journal *j = eng_journal_of(a);
	for (int i = 0; i <= a->nmem; i++) {
		struct member **mp = i < a->nmem ? &a->mem[i]->m : &j->em.m;
		if (!*mp)
			continue;
		struct member *w;
		if (member_cow_wrap(*mp, &w) < 0)
			return errmsg(err, errlen, -ENOMEM, "out of memory for the journal replay");
		*mp = w;
	}
	j->in_memory = true;
	return 0;
}

static bool jl_present(const struct eng_array *a)
{
	return a->logdev ||
	       (a->ref.version != MD_SB_0_90 && (a->ref.feature_map & MD_FEATURE_JOURNAL));
}

/* The superblocks name a journal, or assembly found its member: replay what
 * the log holds. Without the member md forces the array read-only; here
 * writes are refused until one is added. */
static int jl_load(struct eng_array *a, char *err, size_t errlen)
{
	if (!eng_raid456(a))
		return errmsg(err, errlen, -EINVAL,
		              "a write journal needs raid4/5/6, this array is %s", a->ops->name);
	struct eng_journal *j = eng_journal_new(a);
	if (!j)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	j->mode = URAID_JOURNAL_WT;
	if (a->logdev) {
		j->em = *a->logdev;
		j->em.role = -1;
		j->em.state = URAID_MEMBER_IN_SYNC;
		free(a->logdev);
		a->logdev = NULL;
	}
	if (!j->em.m) {
		/* md: "journal disk is missing, force array readonly". */
		eng_journal_set_failed(j, "the journal member is missing");
		fprintf(stderr,
		        "uraid: %s: journal member missing: writes refused until a journal "
		        "is added (uraid add-journal)\n",
		        a->ref.set_name);
		return 0;
	}
	int rc = eng_journal_geometry(a, err, errlen);
	if (rc < 0)
		return rc;
	if (!a->readonly)
		return eng_journal_replay(a, err, errlen);
	/* Read-only: what the log holds is newer than the members, so it is
	 * replayed all the same, into memory (member_cow.c): every member
	 * behind a copy-on-write view, nothing written to any of them. */
	rc = in_memory(a, err, errlen);
	if (rc < 0)
		return rc;
	a->readonly = false;
	rc = eng_journal_replay(a, err, errlen);
	a->readonly = true;
	return rc;
}

static int jl_start(struct eng_array *a, char *err, size_t errlen)
{
	struct eng_journal *j = eng_journal_of(a);
	if (!j || j->failed || (a->readonly && !j->in_memory))
		return 0;
	eng_lock(a);
	bool ro = a->readonly;
	a->readonly = false; /* read-only in memory: the data-only pages too */
	int rc = eng_journal_replay_finish(a);
	a->readonly = ro;
	eng_unlock(a);
	if (rc < 0)
		return errmsg(err, errlen, rc, "writing journal data back to the array failed: %s",
		              strerror(-rc));
	return 0;
}

static void jl_free(struct eng_array *a)
{
	eng_wb_free(a);
	eng_journal_free(a);
}

/* Every write is logged first, so it never bypasses the lock (but for the
 * write-back cache's own shared path). */
static int jl_write(struct eng_array *a, const uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	int rc = eng_wb_fast_write(a, buf, lsec, nsec);
	if (rc != -EAGAIN)
		return rc;
	eng_lock(a);
	struct eng_journal *j = eng_journal_of(a);
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

static bool jl_reads_locked(const struct eng_array *a)
{
	return eng_journal_of(a)->wb != NULL; /* the newest data may be only in the cache */
}

static void jl_overlay(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	if (eng_journal_of(a)->wb)
		eng_wb_overlay(a, buf, lsec, nsec);
}

/* The write-back cache goes to the array (logged with parity). */
static int jl_flush(struct eng_array *a)
{
	return eng_wb_flush(a);
}

/* Members durable: at a stop the log is needed no more. */
static int jl_synced(struct eng_array *a, bool stopping)
{
	return stopping ? eng_journal_reclaim(a) : 0;
}

/* With a working journal md keeps saying clean while writing
 * (MD_JOURNAL_CLEAN): after a crash the log, not a resync, makes parity
 * agree. */
static bool jl_keeps_clean(const struct eng_array *a)
{
	const struct eng_journal *j = eng_journal_of(a);
	return j && !j->failed && j->em.m;
}

static void jl_status(const struct eng_array *a, struct uraid_status *st)
{
	const struct eng_journal *j = eng_journal_of(a);
	if (!j)
		return;
	st->journal = j->failed ? 2 : 1;
	snprintf(st->journal_name, sizeof(st->journal_name), "%s",
	         j->em.m ? j->em.m->name : "(missing)");
	st->journal_mode = j->mode;
	st->journal_dev_number = j->em.sb.dev_number;
	st->journal_cached = eng_wb_pages(a);
}

int eng_journal_mode(struct eng_array *a, enum uraid_journal_mode mode, char *err, size_t errlen)
{
	if (mode != URAID_JOURNAL_WT && mode != URAID_JOURNAL_WB)
		return errmsg(err, errlen, -EINVAL, "unknown journal mode %d", (int)mode);
	eng_lock(a);
	struct eng_journal *j = a->log == &eng_log_journal ? eng_journal_of(a) : NULL;
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

const struct eng_log_ops eng_log_journal = {
    .name = "write journal",
    .present = jl_present,
    .load = jl_load,
    .start = jl_start,
    .free = jl_free,
    .write = jl_write,
    .log_stripes = eng_journal_log,
    .row_sectors = MDJ_BLOCK_SECTORS,
    .reads_locked = jl_reads_locked,
    .overlay = jl_overlay,
    .flush = jl_flush,
    .synced = jl_synced,
    .keeps_clean = jl_keeps_clean,
    .role = eng_journal_dev,
    .sb_written = eng_journal_sb_write,
    .status = jl_status,
};
