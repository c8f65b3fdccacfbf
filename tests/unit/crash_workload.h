/* Crash workload shared by test_engine_crash*.c and the torture run: random writes
 * with known contents against an array on crash-simulating members, a power
 * cut at a random member request, restart, resync, and an independent check
 * of every sector against the set of states it may legally be in.
 *
 * Every written sector is stamped (seed, write id, logical sector) and the
 * rest of it derived from those, so a sector read back names the write it
 * came from and any garbage is detected. A sector may hold:
 *   - the write it held when the last acknowledged flush completed, or
 *   - any write to it issued after that flush started (acknowledged or not).
 * "Acknowledged" means the call returned success before the power failed:
 * after the cut nothing the machine did is seen by anyone. */
#ifndef CRASH_WORKLOAD_H
#define CRASH_WORKLOAD_H

#include "engine/core/engine.h"
#include "sim/member_crash.h"
#include "test_engine_common.h"

#define CW_MEMBER_BYTES (4u << 20)
#define CW_DATA_SECTORS 1024 /* per member */

struct cw_cfg {
	const char *name;
	int level;
	const char *layout; /* NULL: default */
	int ndisks;
	uint32_t chunk_sectors;
	int metadata; /* 0, 10, 11, 12 */
};

struct cw_totals {
	uint64_t trials, crashes, member_failed_before, member_lost_after;
	uint64_t writes, writes_acked, flushes_acked;
	uint64_t cache_kept, cache_torn, cache_lost;
	uint64_t sectors_checked, data_lost, write_hole, mismatches;
	uint64_t resync_skipped; /* member sectors a bitmap let the resync skip */
	uint64_t ppl_recovered;  /* stripe entries the partial parity log recovered */
	/* PPL: sectors of a missing member inside a write in flight at the
	 * crash (md's "arbitrary data in the written part of a stripe if
	 * that disk is lost": the log recovers no stripe whose written chunk
	 * is missing). */
	uint64_t ppl_written_lost;
};

struct cw_write {
	uint64_t lsec, nsec;
	bool zero; /* a discard or write-zeroes (CW_DISCARD): the sectors read zeros */
};

static inline void cw_stamp(uint64_t seed, uint64_t id, uint64_t lsec, uint8_t *s)
{
	if (id == 0) {
		memset(s, 0, 512);
		return;
	}
	uint64_t st = seed * 0x100000001b3ULL ^ id * 0x9e3779b97f4a7c15ULL ^ lsec;
	t_fill(&st, s, 512);
	memcpy(s, &seed, 8);
	memcpy(s + 8, &id, 8);
	memcpy(s + 16, &lsec, 8);
}

/* A trial's span of logical sectors: the write that each sector holds now
 * (cur, 0 = zeros) and held at the last acknowledged flush (durable), and
 * every write issued (log[1..issued]; boundary: the last one the flush
 * covered). */
struct cw_span {
	uint64_t seed, boundary, issued, span;
	uint64_t *durable, *cur;
	struct cw_write *log;
	int nlog;
};

/* One random write of 1-24 sectors, a discard one time in five (its zeros
 * split at a reshape position too); 0 once the log is full. */
static inline int cw_span_write(struct uraid_array *a, struct cw_span *s, uint64_t *rs,
                                uint8_t *buf)
{
	uint64_t nsec = 1 + t_rand(rs) % 24;
	uint64_t lsec = t_rand(rs) % (s->span - nsec + 1);
	if (s->issued + 1 >= (uint64_t)s->nlog)
		return 0;
	uint64_t id = ++s->issued;
	bool zero = t_rand(rs) % 5 == 0;
	s->log[id] = (struct cw_write){lsec, nsec, zero};
	int rc;
	if (zero) {
		rc = uraid_discard(a, lsec * 512, nsec * 512);
	} else {
		for (uint64_t k = 0; k < nsec; k++)
			cw_stamp(s->seed, id, lsec + k, buf + k * 512);
		rc = uraid_write(a, buf, nsec * 512, lsec * 512);
	}
	if (rc == 0)
		for (uint64_t k = 0; k < nsec; k++)
			s->cur[lsec + k] = zero ? 0 : id;
	return rc;
}

/* A flush: once acknowledged, what every sector holds is durable. */
static inline int cw_span_flush(struct uraid_array *a, struct cw_span *s)
{
	uint64_t issued = s->issued;
	int rc = uraid_flush(a);
	if (rc == 0) {
		memcpy(s->durable, s->cur, s->span * sizeof(uint64_t));
		s->boundary = issued;
	}
	return rc;
}

/* A trial's start: span sectors of known content (writes of 32 sectors,
 * stamped with s->seed) written and flushed; buf holds 32 sectors. */
static inline int cw_span_start(struct uraid_array *a, struct cw_span *s, uint64_t span,
                                uint8_t *buf)
{
	s->span = span;
	s->durable = calloc(span, sizeof(uint64_t));
	s->cur = calloc(span, sizeof(uint64_t));
	s->log = calloc((size_t)s->nlog, sizeof(*s->log));
	if (!s->durable || !s->cur || !s->log)
		return -ENOMEM;
	for (uint64_t l = 0; l < span; l += 32) {
		uint64_t id = ++s->issued;
		uint64_t n = span - l < 32 ? span - l : 32;
		s->log[id] = (struct cw_write){l, n, false};
		for (uint64_t k = 0; k < n; k++)
			cw_stamp(s->seed, id, l + k, buf + k * 512);
		int rc = uraid_write(a, buf, n * 512, l * 512);
		if (rc < 0)
			return rc;
		for (uint64_t k = 0; k < n; k++)
			s->cur[l + k] = id;
	}
	return cw_span_flush(a, s);
}

static inline void cw_span_free(struct cw_span *s)
{
	free(s->durable);
	free(s->cur);
	free(s->log);
}

/* The write id a sector holds, or UINT64_MAX when it is no write's stamp. */
static inline uint64_t cw_decode(uint64_t seed, uint64_t lsec, const uint8_t *s)
{
	uint8_t want[512];
	uint64_t id;
	memcpy(&id, s + 8, 8);
	static const uint8_t zero[512];
	if (!memcmp(s, zero, 512))
		return 0;
	if (id == 0)
		return UINT64_MAX;
	cw_stamp(seed, id, lsec, want);
	return memcmp(want, s, 512) ? UINT64_MAX : id;
}

/* Member role holding logical sector `lsec` (copy 0), -1 if unknown. */
static inline int cw_role_of(struct uraid_array *a, uint64_t lsec)
{
	struct layout_loc loc;
	uint64_t len;
	const struct eng_array *e = eng_of(a);
	if (e->ops->map(&e->geo, lsec, 0, &loc, &len) < 0)
		return -1;
	return loc.role;
}

static inline bool cw_parity_level(int level)
{
	return level == URAID_LEVEL_RAID4 || level == URAID_LEVEL_RAID5 ||
	       level == URAID_LEVEL_RAID6;
}
static inline bool cw_redundant(int level)
{
	return level != URAID_LEVEL_RAID0 && level != URAID_LEVEL_LINEAR;
}

#define CW_LYING      1u  /* the disks ignore flushes: the checks must find losses */
#define CW_BITMAP     2u  /* internal write-intent bitmap (4 KiB chunks) */
#define CW_JOURNAL    4u  /* raid4/5/6 write journal on one more member (write-through) */
#define CW_JOURNAL_WB 8u  /* ... in write-back mode (implies CW_JOURNAL) */
#define CW_CACHE      16u /* a small stripe cache (parity levels): evictions mid-run */
#define CW_PPL        32u /* raid5: md's partial parity log (consistency policy ppl) */
#define CW_DISCARD    64u /* a quarter of the writes are discards or write-zeroes */

/* Members a degraded trial loses: as many as the level's parity covers, so
 * a raid6 reads its lost data with Q (two data members, or data and P). */
static inline int cw_nlose(int level)
{
	return level == URAID_LEVEL_RAID6 ? 2 : 1;
}

/* Does a write issued after the last acknowledged flush cover sector s? */
static inline bool cw_in_flight(const struct cw_write *log, uint64_t boundary, uint64_t issued,
                                uint64_t s)
{
	for (uint64_t id = boundary + 1; id <= issued; id++)
		if (log[id].lsec <= s && s < log[id].lsec + log[id].nsec)
			return true;
	return false;
}

/* One trial. crash_point: member request (counted after create) at which
 * the power fails, 0 = none during the workload (the cut then comes at idle
 * after the last write). mode: 0 plain, 1 members failed before the
 * workload, 2 members lost after the crash (one; two for raid6). Returns the
 * member requests the workload made (for calibration); failures are
 * CHECKs. */
static inline uint64_t cw_trial(const struct cw_cfg *c, uint64_t seed, uint64_t crash_point,
                                int mode, int nwrites, unsigned flags, struct cw_totals *tot)
{
	struct te_disk d[TE_MAX];
	struct crash_ctl *ctl;
	uint64_t rs = seed;
	memset(d, 0, sizeof(d));
	if (crash_ctl_new(&ctl) < 0)
		abort();
	if (flags & CW_JOURNAL_WB)
		flags |= CW_JOURNAL;
	/* The journal is the last member, d[ndisks]. */
	int nd = c->ndisks + ((flags & CW_JOURNAL) ? 1 : 0);
	for (int i = 0; i < nd; i++) {
		snprintf(d[i].name, sizeof(d[i].name), "c%d", i);
		if (member_open_mem(d[i].name, CW_MEMBER_BYTES, &d[i].mem) < 0 ||
		    member_crash_wrap(d[i].mem, ctl, &d[i].fault) < 0)
			abort();
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = c->level;
	o.raid_devices = c->ndisks;
	o.chunk_sectors = c->chunk_sectors;
	o.metadata = c->metadata;
	o.metadata_set = true;
	o.assume_clean = true; /* members are zero: parity of zeros is zero */
	o.write_journal = (flags & CW_JOURNAL) != 0;
	o.consistency_policy = (flags & CW_PPL) ? URAID_POLICY_PPL : URAID_POLICY_RESYNC;
	if (c->level != URAID_LEVEL_LINEAR && c->level != URAID_LEVEL_RAID0)
		o.size_sectors = CW_DATA_SECTORS;
	if (c->layout) {
		layout_parse(c->level, c->layout, &o.layout);
		o.layout_set = true;
	}
	struct uraid_array *a = NULL;
	uint64_t used = 0;
	bool missing[TE_MAX] = {0}; /* by disk (= role: disk i was created in slot i) */
	int nmissing = 0;
	if (te_create(&o, d, nd, &a) < 0) {
		CHECKF(0, "%s: create failed", c->name);
		goto out;
	}
	tot->trials++;
	if (flags & CW_BITMAP) {
		char err[256];
		int rc = uraid_bitmap_add(a, 4096, err, sizeof(err));
		CHECKF(rc == 0, "%s: bitmap add: %s", c->name, err);
	}
	if (flags & CW_JOURNAL_WB) {
		char err[256];
		int rc = uraid_journal_mode(a, URAID_JOURNAL_WB, err, sizeof(err));
		CHECKF(rc == 0, "%s: journal write-back: %s", c->name, err);
	}
	if (flags & CW_CACHE) {
		int rc = uraid_set_stripe_cache(a, 8);
		CHECKF(rc == 0, "%s: stripe cache: %d", c->name, rc);
	}
	if (mode == 1) {
		for (int k = 0; k < cw_nlose(c->level); k++) {
			int who_i;
			do
				who_i = (int)(t_rand(&rs) % (uint64_t)c->ndisks);
			while (missing[who_i]);
			missing[who_i] = true;
			nmissing++;
			char who[16], err[256];
			snprintf(who, sizeof(who), "#%d", who_i);
			CHECKF(uraid_fail(a, who, err, sizeof(err)) == 0, "fail %s: %s", who, err);
		}
		tot->member_failed_before++;
	}

	uint64_t size_sec = uraid_size(a) / 512;
	uint64_t span = size_sec < 768 ? size_sec : 768; /* overlap: small region */
	uint64_t *durable = calloc(span, sizeof(uint64_t));
	struct cw_write *log = calloc((size_t)nwrites + 1, sizeof(*log));
	uint64_t boundary = 0; /* writes with id > boundary may or may not persist */
	uint64_t *cur = calloc(span, sizeof(uint64_t));
	uint8_t *buf = malloc(64 * 512);
	uint64_t base = crash_ctl_requests(ctl);
	crash_ctl_arm(ctl, crash_point ? base + crash_point : 0);
	crash_ctl_ignore_flush(ctl, flags & CW_LYING);

	uint64_t issued = 0;
	for (int w = 0; w < nwrites; w++) {
		if (t_rand(&rs) % 6 == 0) {
			int rc = uraid_flush(a);
			if (crash_ctl_crashed(ctl))
				break;
			CHECKF(rc == 0, "%s seed %#llx: flush failed: %d", c->name,
			       (unsigned long long)seed, rc);
			memcpy(durable, cur, span * sizeof(uint64_t));
			boundary = issued;
			tot->flushes_acked++;
		}
		bool zero = (flags & CW_DISCARD) && t_rand(&rs) % 4 == 0;
		uint64_t nsec = 1 + t_rand(&rs) % (zero ? 256 : t_rand(&rs) % 4 ? 16 : 64);
		if (nsec > span)
			nsec = span;
		uint64_t lsec = t_rand(&rs) % (span - nsec + 1);
		uint64_t id = ++issued;
		log[id] = (struct cw_write){lsec, nsec, zero};
		for (uint64_t s = 0; s < nsec && !zero; s++)
			cw_stamp(seed, id, lsec + s, buf + s * 512);
		tot->writes++;
		int rc = !zero             ? uraid_write(a, buf, nsec * 512, lsec * 512)
		         : t_rand(&rs) % 2 ? uraid_discard(a, lsec * 512, nsec * 512)
		                           : uraid_write_zeroes(a, lsec * 512, nsec * 512, 0);
		if (crash_ctl_crashed(ctl))
			break;
		CHECKF(rc == 0, "%s seed %#llx: write failed: %d", c->name,
		       (unsigned long long)seed, rc);
		for (uint64_t s = 0; s < nsec; s++)
			cur[lsec + s] = id;
		tot->writes_acked++;
	}
	used = crash_ctl_requests(ctl) - base;
	if (crash_ctl_crashed(ctl))
		tot->crashes++;
	uraid_drop(a);
	a = NULL;
	struct crash_stats cs;
	CHECK(crash_apply(ctl, seed ^ 0xc0ffee, &cs) == 0);
	tot->cache_kept += cs.writes_kept;
	tot->cache_torn += cs.writes_torn;
	tot->cache_lost += cs.writes_lost;

	/* Restart. */
	int idx[TE_MAX], n = 0;
	bool lost_after[TE_MAX] = {0};
	if (mode == 2) {
		for (int k = 0; k < cw_nlose(c->level); k++) {
			int who_i;
			do
				who_i = (int)(t_rand(&rs) % (uint64_t)c->ndisks);
			while (missing[who_i]);
			missing[who_i] = lost_after[who_i] = true;
			nmissing++;
		}
		tot->member_lost_after++;
	}
	for (int i = 0; i < nd; i++)
		if (!lost_after[i])
			idx[n++] = i;
	char warn[1024] = "";
	/* A member lost after (or failed before) the crash leaves a dirty
	 * degraded raid4/5/6, which md only starts when forced: this harness
	 * means to (write-hole sectors of the missing member are accounted). */
	if (te_assemble_force(d, idx, n, &a, warn, sizeof(warn)) < 0) {
		CHECKF(0, "%s seed %#llx point %llu mode %d: assemble failed", c->name,
		       (unsigned long long)seed, (unsigned long long)crash_point, mode);
		goto free_out;
	}
	if (flags & CW_JOURNAL) {
		/* The log, not a resync, makes parity agree after the crash
		 * (a resync here would hide what the replay left). */
		struct uraid_status st;
		uraid_status(a, &st);
		CHECKF(st.sync_action != URAID_SYNC_RESYNC,
		       "%s seed %#llx point %llu mode %d: resync after a journal replay", c->name,
		       (unsigned long long)seed, (unsigned long long)crash_point, mode);
	}
	if (flags & CW_PPL) {
		/* Likewise the partial parity log's recovery, unless a log was
		 * unusable (its first unit torn): md resyncs then, and the
		 * stripes that unit covered were never written. */
		struct uraid_status st;
		uraid_status(a, &st);
		CHECKF(st.ppl == 1 && (st.sync_action != URAID_SYNC_RESYNC || st.ppl_mismatches),
		       "%s seed %#llx point %llu mode %d: resync after a PPL recovery", c->name,
		       (unsigned long long)seed, (unsigned long long)crash_point, mode);
		tot->ppl_recovered += st.ppl_recovered;
	}
	CHECKF(te_sync_all(a) == 0, "%s seed %#llx: resync failed", c->name,
	       (unsigned long long)seed);
	tot->resync_skipped += uraid_bitmap_resync_skipped(a);
	/* The write hole (below) is open only in stripes written after the
	 * last acknowledged flush: every other stripe's data and parity are
	 * durable and agree, so what is rebuilt there must be right. */
	uint64_t width = span; /* sectors per stripe */
	if (cw_parity_level(c->level))
		width = (uint64_t)(c->ndisks - (c->level == URAID_LEVEL_RAID6 ? 2 : 1)) *
		        eng_of(a)->geo.chunk_sectors;
	bool *hole = calloc(span / width + 1, sizeof(bool)); /* by stripe: may be stale */
	for (uint64_t id = boundary + 1; id <= issued; id++)
		for (uint64_t st = log[id].lsec / width; st * width < log[id].lsec + log[id].nsec;
		     st++)
			hole[st] = true;
	uint64_t lost_here = 0, hole_here = 0;
	for (uint64_t s0 = 0; s0 < span; s0 += 64) {
		uint64_t k = span - s0 < 64 ? span - s0 : 64;
		int rc = uraid_read(a, buf, k * 512, s0 * 512);
		CHECKF(rc == 0, "%s seed %#llx: read at sector %llu failed: %d", c->name,
		       (unsigned long long)seed, (unsigned long long)s0, rc);
		if (rc < 0) {
			lost_here += k;
			continue;
		}
		for (uint64_t j = 0; j < k; j++) {
			uint64_t s = s0 + j;
			uint64_t id = cw_decode(seed, s, buf + j * 512);
			bool ok = id == durable[s] || (id == 0 && log[durable[s]].zero) ||
			          (id != UINT64_MAX && id > boundary && id <= issued &&
			           log[id].lsec <= s && s < log[id].lsec + log[id].nsec);
			/* zeros: a discard issued after the flush covers s */
			for (uint64_t z = boundary + 1; id == 0 && !ok && z <= issued; z++)
				ok = log[z].zero && log[z].lsec <= s &&
				     s < log[z].lsec + log[z].nsec;
			tot->sectors_checked++;
			if (ok)
				continue;
			/* Without a journal md cannot promise anything for data
			 * reconstructed from parity that a crash left stale. */
			int role = cw_role_of(a, s);
			if ((flags & CW_PPL) && nmissing && role >= 0 && missing[role] &&
			    cw_in_flight(log, boundary, issued, s)) {
				tot->ppl_written_lost++;
				continue;
			}
			if (nmissing && cw_parity_level(c->level) &&
			    !(flags & (CW_JOURNAL | CW_PPL)) && role >= 0 && missing[role] &&
			    hole[s / width]) {
				hole_here++;
				continue;
			}
			if (lost_here++ < 4)
				fprintf(
				    stderr,
				    "%s seed %#llx point %llu mode %d: sector %llu holds %s%llu "
				    "(durable %llu, boundary %llu, issued %llu)\n",
				    c->name, (unsigned long long)seed,
				    (unsigned long long)crash_point, mode, (unsigned long long)s,
				    id == UINT64_MAX ? "garbage " : "write ",
				    (unsigned long long)(id == UINT64_MAX ? 0 : id),
				    (unsigned long long)durable[s], (unsigned long long)boundary,
				    (unsigned long long)issued);
		}
	}
	CHECKF(lost_here == 0, "%s seed %#llx point %llu mode %d: %llu sectors lost", c->name,
	       (unsigned long long)seed, (unsigned long long)crash_point, mode,
	       (unsigned long long)lost_here);
	free(hole);
	tot->data_lost += lost_here;
	tot->write_hole += hole_here;
	if (!nmissing && cw_redundant(c->level)) {
		char err[256];
		int rc = uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err));
		CHECKF(rc == 0, "check: %s", err);
		CHECK(te_sync_all(a) == 0);
		struct uraid_status st;
		uraid_status(a, &st);
		CHECKF(st.mismatch_cnt == 0,
		       "%s seed %#llx point %llu: check found %llu mismatches", c->name,
		       (unsigned long long)seed, (unsigned long long)crash_point,
		       (unsigned long long)st.mismatch_cnt);
		tot->mismatches += st.mismatch_cnt;
	}
	CHECK(uraid_stop(a) == 0);
	a = NULL;
free_out:
	free(durable);
	free(cur);
	free(log);
	free(buf);
out:
	if (a)
		uraid_drop(a);
	for (int i = 0; i < nd; i++)
		te_disk_close(&d[i]);
	crash_ctl_free(ctl);
	return used;
}

static inline uint64_t cw_env(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	return v && *v ? strtoull(v, NULL, 0) : def;
}

/* Calibrate, then `trials` crash points spread over the workload's requests,
 * modes mixed for redundant levels. Prints one summary line. */
static inline void cw_run(const struct cw_cfg *c, uint64_t seed0, uint64_t trials, int nwrites,
                          unsigned flags, struct cw_totals *tot)
{
	struct cw_totals cal = {0};
	uint64_t reqs = cw_trial(c, seed0, 0, 0, nwrites, flags, &cal);
	if (reqs == 0)
		reqs = 1;
	uint64_t rs = seed0 ^ 0xabcdef;
	for (uint64_t t = 0; t < trials; t++) {
		uint64_t seed = seed0 + 1 + t;
		int mode = 0;
		if (cw_redundant(c->level)) {
			uint64_t r = t_rand(&rs) % 5;
			mode = r == 3 ? 1 : r == 4 ? 2 : 0;
		}
		/* Spread the cut over the whole run (and a bit past it). */
		uint64_t point = 1 + t_rand(&rs) % (reqs + reqs / 8);
		int before = t_failures;
		cw_trial(c, seed, point, mode, nwrites, flags, tot);
		if (t_failures != before)
			fprintf(stderr,
			        "replay: CRASH_CONFIG=%s CRASH_SEED=%#llx CRASH_POINT=%llu "
			        "CRASH_MODE=%d\n",
			        c->name, (unsigned long long)seed, (unsigned long long)point, mode);
	}
	printf(
	    "# %-12s%s crash points %llu (requests/run ~%llu), failed-before %llu, lost-after "
	    "%llu, writes %llu acked %llu, cache kept/torn/lost %llu/%llu/%llu, sectors checked "
	    "%llu, data lost %llu, write-hole sectors %llu, mismatches %llu, resync skipped %llu\n",
	    c->name,
	    flags & CW_BITMAP       ? " +bitmap"
	    : flags & CW_JOURNAL_WB ? " +journal(wb)"
	    : flags & CW_JOURNAL    ? " +journal"
	    : flags & CW_CACHE      ? " +cache"
	    : flags & CW_PPL        ? " +ppl"
	                            : "",
	    (unsigned long long)tot->crashes, (unsigned long long)reqs,
	    (unsigned long long)tot->member_failed_before,
	    (unsigned long long)tot->member_lost_after, (unsigned long long)tot->writes,
	    (unsigned long long)tot->writes_acked, (unsigned long long)tot->cache_kept,
	    (unsigned long long)tot->cache_torn, (unsigned long long)tot->cache_lost,
	    (unsigned long long)tot->sectors_checked, (unsigned long long)tot->data_lost,
	    (unsigned long long)tot->write_hole, (unsigned long long)tot->mismatches,
	    (unsigned long long)tot->resync_skipped);
	fflush(stdout);
}

#endif
