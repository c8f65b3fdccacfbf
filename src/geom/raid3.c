/* A running graid3: provider sectors striped over the data components,
 * XOR parity on the last; degraded reads, -r round-robin reads through
 * parity, -w verified reads, rebuild with persisted sync_offset. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "geom/geom.h"
#include "geom/geom_int.h"
#include "layout/layout.h"
#include "member/member.h"
#include "util/errmsg.h"

static struct raid3_geom geom_of(const struct geom_raid3 *g)
{
	return (struct raid3_geom){g->ncomp, g->psector};
}

static uint64_t comp_bytes(const struct geom_raid3 *g)
{
	return g->mediasize / (uint64_t)(g->ncomp - 1);
}

static bool usable(const struct geom_raid3_comp *c)
{
	return c->m && c->state == GEOM_DISK_ACTIVE;
}

static int write_md(struct geom_raid3 *g, int i)
{
	struct geom_raid3_comp *c = &g->c[i];
	if (g->rdonly || !c->m || c->state == GEOM_DISK_FAILED)
		return 0;
	struct geom_raid3_md *md = &c->md;
	memcpy(md->name, g->name, sizeof(md->name));
	md->id = g->id;
	md->no = (uint16_t)i;
	md->all = (uint16_t)g->ncomp;
	md->genid = g->genid;
	if (c->state == GEOM_DISK_ACTIVE)
		md->syncid = g->syncid;
	md->mediasize = g->mediasize;
	md->sectorsize = g->psector;
	md->mflags = g->mflags;
	md->provsize = c->m->size;
	md->dflags = geom_dflags_update(md->dflags, c->state == GEOM_DISK_SYNCING, g->dirty);
	int rc = geom_raid3_write(c->m, md, NULL, 0);
	if (rc < 0)
		geom_raid3_fail(g, i);
	return rc;
}

void geom_raid3_write_all_md(struct geom_raid3 *g)
{
	for (int i = 0; i < g->ncomp; i++)
		write_md(g, i);
}

void geom_raid3_fail(struct geom_raid3 *g, int no)
{
	if (no < 0 || no >= g->ncomp || !g->c[no].m || g->c[no].state == GEOM_DISK_FAILED)
		return;
	g->c[no].state = GEOM_DISK_FAILED;
	g->genid++;
	geom_raid3_write_all_md(g);
}

int geom_raid3_label(const struct geom_label_opts *o, struct member **m, int n, char *err,
                     size_t errlen)
{
	int rc = geom_check_name(o->name, "device", err, errlen);
	if (rc < 0)
		return rc;
	int d = n - 1;
	if (n < 3 || n > GEOM_MAX_DISKS + 1 || (d & (d - 1)) != 0)
		return errmsg(err, errlen, -EINVAL,
		              "graid3 needs 2^n + 1 components (3, 5, 9, 17, 33), got %d", n);
	if (o->round_robin && o->verify)
		return errmsg(err, errlen, -EINVAL,
		              "-r (round-robin reads) and -w (verify reads) cannot be combined");
	uint32_t cs = 512;
	for (int i = 0; i < n; i++)
		if (m[i]->logical_block > cs)
			cs = m[i]->logical_block;
	uint32_t ps = o->blocksize ? o->blocksize : cs * (uint32_t)d;
	struct raid3_geom rg = {n, ps};
	if (raid3_validate(&rg) < 0 || (ps / (uint32_t)d) % cs)
		return errmsg(err, errlen, -EINVAL,
		              "block size %u must be %d x a power of two, at least %u", ps, d, cs);
	uint64_t cmin = UINT64_MAX;
	for (int i = 0; i < n; i++) {
		if (m[i]->readonly)
			return errmsg(err, errlen, -EROFS, "%s is read-only", m[i]->name);
		if (m[i]->size < 2ull * cs)
			return errmsg(err, errlen, -EINVAL, "%s: too small", m[i]->name);
		uint64_t u = (m[i]->size / cs - 1) * cs;
		if (u < cmin)
			cmin = u;
	}
	uint64_t media = cmin * (uint64_t)d / ps * ps;
	if (media == 0)
		return errmsg(err, errlen, -EINVAL, "components too small for block size %u", ps);
	uint32_t id = geom_random_id();
	for (int i = 0; i < n; i++) {
		struct geom_raid3_md md = {0};
		snprintf(md.name, sizeof(md.name), "%s", o->name);
		md.id = id;
		md.no = (uint16_t)i;
		md.all = (uint16_t)n;
		/* graid3 label -w: parity starts out of date (syncid 0) so the first
		 * start recomputes it before reads are verified against it. */
		md.syncid = o->verify && i == n - 1 ? 0 : 1;
		md.mediasize = media;
		md.sectorsize = ps;
		md.mflags = (o->noautosync ? GEOM_RAID3_DEV_NOAUTOSYNC : 0) |
		            (o->nofailsync ? GEOM_RAID3_DEV_NOFAILSYNC : 0) |
		            (o->round_robin ? GEOM_RAID3_DEV_ROUND_ROBIN : 0) |
		            (o->verify ? GEOM_RAID3_DEV_VERIFY : 0);
		md.provsize = m[i]->size;
		if (o->hardcode)
			geom_provider_name(m[i], md.provider);
		rc = geom_raid3_write(m[i], &md, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int geom_raid3_open(struct member **m, int n, bool rdonly, struct geom_raid3 **out, char *err,
                    size_t errlen, char *warn, size_t warnlen)
{
	if (warn && warnlen)
		warn[0] = '\0';
	struct geom_raid3 *g = calloc(1, sizeof(*g));
	struct geom_raid3_md *mds = calloc((size_t)(n > 0 ? n : 1), sizeof(*mds));
	int rc = 0;
	if (!g || !mds) {
		rc = -ENOMEM;
		goto fail;
	}
	if (n < 1 || n > GEOM_MAX_DISKS + 1) {
		rc = errmsg(err, errlen, -EINVAL, "bad number of components %d", n);
		goto fail;
	}
	uint32_t maxgen = 0, maxsync = 0;
	for (int i = 0; i < n; i++) {
		rc = geom_raid3_read(m[i], &mds[i], err, errlen);
		if (rc < 0)
			goto fail;
		if (mds[i].id != mds[0].id || strcmp(mds[i].name, mds[0].name) ||
		    mds[i].all != mds[0].all || mds[i].sectorsize != mds[0].sectorsize ||
		    mds[i].mediasize != mds[0].mediasize) {
			rc = errmsg(err, errlen, -EINVAL,
			            "%s belongs to a different graid3 (%s id %u)", m[i]->name,
			            mds[i].name, mds[i].id);
			goto fail;
		}
		for (int j = 0; j < i; j++)
			if (mds[j].no == mds[i].no) {
				rc = errmsg(err, errlen, -EINVAL, "%s and %s are both component %u",
				            m[j]->name, m[i]->name, mds[i].no);
				goto fail;
			}
		uint64_t need = mds[i].mediasize / (mds[i].all - 1u) + 512;
		if (m[i]->size < need) {
			rc = errmsg(err, errlen, -EINVAL, "%s: too small for this graid3",
			            m[i]->name);
			goto fail;
		}
	}
	uint32_t gen[GEOM_MAX_DISKS + 1], sid[GEOM_MAX_DISKS + 1];
	bool syn[GEOM_MAX_DISKS + 1];
	for (int i = 0; i < n; i++) {
		gen[i] = mds[i].genid;
		sid[i] = mds[i].syncid;
		syn[i] = (mds[i].dflags & GEOM_RAID3_DISK_SYNCHRONIZING) != 0;
	}
	geom_newest_ids(gen, sid, syn, n, &maxgen, &maxsync);
	pthread_mutex_init(&g->lock, NULL);
	pthread_rwlock_init(&g->iolock, NULL);
	geom_ioq_pool_init(&g->ioqs);
	memcpy(g->name, mds[0].name, sizeof(g->name));
	g->id = mds[0].id;
	g->ncomp = mds[0].all;
	g->psector = mds[0].sectorsize;
	g->mediasize = mds[0].mediasize;
	g->genid = maxgen;
	g->syncid = maxsync;
	g->rdonly = rdonly;
	for (int i = 0; i < g->ncomp; i++)
		g->c[i].state = GEOM_DISK_NONE;
	bool dirty = false;
	for (int i = 0; i < n; i++) {
		struct geom_raid3_comp *c = &g->c[mds[i].no];
		if (mds[i].genid < maxgen) {
			geom_warn_stale(warn, warnlen, m[i]->name, mds[i].genid, maxgen);
			member_close(m[i]);
			m[i] = NULL;
			continue;
		}
		c->m = m[i];
		m[i] = NULL;
		c->md = mds[i];
		if (mds[i].syncid == maxsync && !(mds[i].dflags & GEOM_RAID3_DISK_SYNCHRONIZING)) {
			c->state = GEOM_DISK_ACTIVE;
			g->mflags = mds[i].mflags;
			dirty |= (mds[i].dflags & GEOM_RAID3_DISK_DIRTY) != 0;
		} else {
			c->state = GEOM_DISK_SYNCING;
			if (!(mds[i].dflags & GEOM_RAID3_DISK_SYNCHRONIZING))
				c->md.sync_offset = 0;
		}
	}
	int nbad = 0;
	for (int i = 0; i < g->ncomp; i++)
		nbad += !usable(&g->c[i]);
	if (nbad > 1) {
		rc = errmsg(err, errlen, -EIO, "graid3 %s: %d of %d components unusable", g->name,
		            nbad, g->ncomp);
		free(mds);
		mds = NULL;
		geom_raid3_close(g);
		g = NULL;
		goto fail;
	}
	for (int i = 0; i < g->ncomp; i++)
		if (g->c[i].state == GEOM_DISK_SYNCING && (g->mflags & GEOM_RAID3_DEV_NOAUTOSYNC))
			g->c[i].state = GEOM_DISK_STALE;
	/* Unclean stop with every component present: parity may lag the data
	 * where writes were in flight, so rebuild the parity component. */
	if (dirty && nbad == 0 && !(g->mflags & GEOM_RAID3_DEV_NOFAILSYNC) && !rdonly) {
		g->c[g->ncomp - 1].state = GEOM_DISK_SYNCING;
		g->c[g->ncomp - 1].md.sync_offset = 0;
	}
	bool syncing = false;
	for (int i = 0; i < g->ncomp; i++) {
		syncing |= g->c[i].state == GEOM_DISK_SYNCING;
		g->bump_syncid |= !g->c[i].m;
	}
	if (syncing && !rdonly)
		g->syncid++;
	if (!rdonly)
		geom_raid3_write_all_md(g);
	free(mds);
	*out = g;
	return 0;
fail:
	geom_close_members(m, n);
	free(mds);
	free(g);
	return rc;
}

/* One buffer of clen bytes per component, bufs[i] into one allocation
 * (returned, to be freed; NULL when out of memory). */
static uint8_t *comp_bufs(const struct geom_raid3 *g, size_t clen, uint8_t **bufs)
{
	uint8_t *mem = malloc(clen * (size_t)g->ncomp);
	for (int i = 0; mem && i < g->ncomp; i++)
		bufs[i] = mem + clen * (size_t)i;
	return mem;
}

static int check_io(const struct geom_raid3 *g, size_t len, uint64_t off)
{
	if (off % g->psector || len % g->psector || off > g->mediasize || len > g->mediasize - off)
		return -EINVAL;
	return 0;
}

/* One batch over the components (all at once): `op` on bufs[i] for every
 * component i != skip that has a member (writes: only active or
 * synchronizing ones); res[i] gets each result (0 for those left out). */
static void comps_io(struct geom_raid3 *g, enum member_op op, uint8_t **bufs, size_t clen,
                     uint64_t coff, int skip, int *res)
{
	struct member_io io[GEOM_MAX_DISKS + 1];
	int who[GEOM_MAX_DISKS + 1], n = 0;
	for (int i = 0; i < g->ncomp; i++) {
		res[i] = 0;
		const struct geom_raid3_comp *c = &g->c[i];
		if (i == skip || !c->m)
			continue;
		if (op == MEMBER_OP_WRITE && c->state != GEOM_DISK_ACTIVE &&
		    c->state != GEOM_DISK_SYNCING)
			continue;
		io[n] = (struct member_io){
		    .m = c->m, .op = op, .buf = bufs[i], .len = clen, .off = coff};
		who[n++] = i;
	}
	geom_io_batch(&g->ioqs, io, n);
	for (int k = 0; k < n; k++)
		res[who[k]] = (int)io[k].result;
}

/* Read component spans for provider [off, off+len) into bufs[]; the
 * component `skip` (or -1) is not read. Fails a component on error. */
static int read_comps(struct geom_raid3 *g, uint8_t **bufs, size_t clen, uint64_t coff, int skip)
{
	for (int i = 0; i < g->ncomp; i++)
		if (i != skip && !usable(&g->c[i]))
			return -EIO;
	int res[GEOM_MAX_DISKS + 1], rc = 0;
	comps_io(g, MEMBER_OP_READ, bufs, clen, coff, skip, res);
	for (int i = 0; i < g->ncomp; i++)
		if (res[i] < 0) {
			geom_raid3_fail(g, i);
			rc = res[i];
		}
	return rc;
}

int geom_raid3_read_at(struct geom_raid3 *g, void *buf, size_t len, uint64_t off)
{
	int rc = check_io(g, len, off);
	if (rc < 0 || len == 0)
		return rc;
	struct raid3_geom rg = geom_of(g);
	size_t clen = len / (size_t)(g->ncomp - 1);
	uint64_t coff = raid3_comp_off(&rg, off);
	uint8_t *bufs[GEOM_MAX_DISKS + 1];
	uint8_t *mem = comp_bufs(g, clen, bufs);
	if (!mem)
		return -ENOMEM;
	/* Component reads run outside the state lock so readers overlap; the
	 * rwlock keeps insert/remove from closing a member under them. */
	pthread_rwlock_rdlock(&g->iolock);
	pthread_mutex_lock(&g->lock);
	int par = g->ncomp - 1;
	for (int attempt = 0; attempt < 3; attempt++) {
		int missing = -1, nmissing = 0;
		for (int i = 0; i < g->ncomp; i++)
			if (!usable(&g->c[i]))
				missing = i, nmissing++;
		if (nmissing > 1) {
			rc = -EIO; /* two components gone: the data is not there */
			break;
		}
		bool verify = (g->mflags & GEOM_RAID3_DEV_VERIFY) && missing < 0;
		int skip;
		if (missing >= 0)
			skip = missing;
		else if (verify)
			skip = -1;
		else if (g->mflags & GEOM_RAID3_DEV_ROUND_ROBIN)
			skip = (int)(g->rr_next++ %
			             (unsigned)g->ncomp); /* parity in the rotation too */
		else
			skip = par;
		pthread_mutex_unlock(&g->lock);
		int res[GEOM_MAX_DISKS + 1];
		comps_io(g, MEMBER_OP_READ, bufs, clen, coff, skip, res);
		pthread_mutex_lock(&g->lock);
		rc = 0;
		for (int i = 0; i < g->ncomp; i++)
			if (res[i] < 0) {
				geom_raid3_fail(g, i);
				rc = res[i];
			}
		if (rc < 0)
			continue; /* a component failed: retry degraded */
		if (verify && !raid3_consistent(&rg, (const uint8_t *const *)bufs, clen)) {
			g->parity_errors++;
			rc = -EIO;
			break;
		}
		if (skip >= 0 && skip != par)
			raid3_rebuild(&rg, bufs, clen, skip);
		raid3_gather(&rg, (const uint8_t *const *)bufs, len, buf);
		break;
	}
	pthread_mutex_unlock(&g->lock);
	pthread_rwlock_unlock(&g->iolock);
	free(mem);
	return rc;
}

int geom_raid3_write_at(struct geom_raid3 *g, const void *buf, size_t len, uint64_t off)
{
	int rc = check_io(g, len, off);
	if (rc < 0 || len == 0)
		return rc;
	if (g->rdonly)
		return -EROFS;
	struct raid3_geom rg = geom_of(g);
	size_t clen = len / (size_t)(g->ncomp - 1);
	uint64_t coff = raid3_comp_off(&rg, off);
	uint8_t *bufs[GEOM_MAX_DISKS + 1];
	uint8_t *mem = comp_bufs(g, clen, bufs);
	if (!mem)
		return -ENOMEM;
	raid3_scatter(&rg, buf, len, bufs);
	pthread_mutex_lock(&g->lock);
	g->last_write_ns = geom_now_ns();
	if (geom_first_write(&g->bump_syncid, &g->syncid, &g->dirty,
	                     g->mflags & GEOM_RAID3_DEV_NOFAILSYNC))
		geom_raid3_write_all_md(g);
	int res[GEOM_MAX_DISKS + 1];
	comps_io(g, MEMBER_OP_WRITE, bufs, clen, coff, -1, res);
	for (int i = 0; i < g->ncomp; i++)
		if (res[i] < 0)
			geom_raid3_fail(g, i);
	int nbad = 0;
	for (int i = 0; i < g->ncomp; i++)
		nbad += !usable(&g->c[i]);
	rc = nbad > 1 ? -EIO : 0;
	pthread_mutex_unlock(&g->lock);
	free(mem);
	return rc;
}

/* graid3 passes BIO_DELETE to its components; zeros on every component are
 * data and parity that agree, so each zeroes its span. */
int geom_raid3_zero_at(struct geom_raid3 *g, uint64_t off, uint64_t len, unsigned mflags)
{
	int rc = check_io(g, (size_t)len, off);
	if (rc < 0 || len == 0)
		return rc;
	if (g->rdonly)
		return -EROFS;
	struct raid3_geom rg = geom_of(g);
	uint64_t clen = len / (uint64_t)(g->ncomp - 1), coff = raid3_comp_off(&rg, off);
	pthread_mutex_lock(&g->lock);
	g->last_write_ns = geom_now_ns();
	if (geom_first_write(&g->bump_syncid, &g->syncid, &g->dirty,
	                     g->mflags & GEOM_RAID3_DEV_NOFAILSYNC))
		geom_raid3_write_all_md(g);
	for (int i = 0; i < g->ncomp; i++) {
		struct geom_raid3_comp *c = &g->c[i];
		if (!c->m || (c->state != GEOM_DISK_ACTIVE && c->state != GEOM_DISK_SYNCING))
			continue;
		if (member_write_zeroes(c->m, coff, clen, mflags) < 0)
			geom_raid3_fail(g, i);
	}
	int nbad = 0;
	for (int i = 0; i < g->ncomp; i++)
		nbad += !usable(&g->c[i]);
	pthread_mutex_unlock(&g->lock);
	return nbad > 1 ? -EIO : 0;
}

int geom_raid3_flush(struct geom_raid3 *g)
{
	pthread_mutex_lock(&g->lock);
	for (int i = 0; i < g->ncomp; i++)
		if (g->c[i].m && g->c[i].state != GEOM_DISK_FAILED && member_flush(g->c[i].m) < 0)
			geom_raid3_fail(g, i);
	int nbad = 0;
	for (int i = 0; i < g->ncomp; i++)
		nbad += !usable(&g->c[i]);
	pthread_mutex_unlock(&g->lock);
	return nbad > 1 ? -EIO : 0;
}

int geom_raid3_sync_step(struct geom_raid3 *g, uint64_t bytes)
{
	if (bytes == 0 || bytes % 512)
		return -EINVAL;
	pthread_mutex_lock(&g->lock);
	int rc = 0, t = -1;
	for (int i = 0; i < g->ncomp; i++)
		if (g->c[i].state == GEOM_DISK_SYNCING && g->c[i].m)
			t = i;
	if (t < 0)
		goto out;
	struct raid3_geom rg = geom_of(g);
	struct geom_raid3_comp *c = &g->c[t];
	uint64_t off = c->md.sync_offset, total = comp_bytes(g);
	size_t n = (size_t)(total - off < bytes ? total - off : bytes);
	if (n) {
		uint8_t *bufs[GEOM_MAX_DISKS + 1];
		uint8_t *mem = comp_bufs(g, n, bufs);
		if (!mem) {
			rc = -ENOMEM;
			goto out;
		}
		rc = read_comps(g, bufs, n, off, t);
		if (rc == 0) {
			raid3_rebuild(&rg, bufs, n, t);
			if (member_write(c->m, bufs[t], n, off, 0) < 0) {
				geom_raid3_fail(g, t);
				rc = -EIO;
			}
		}
		free(mem);
		if (rc < 0)
			goto out;
		c->md.sync_offset = off + n;
	}
	if (c->md.sync_offset >= total) {
		member_flush(c->m);
		c->state = GEOM_DISK_ACTIVE;
		c->md.sync_offset = 0;
		geom_raid3_write_all_md(g);
		rc = 0;
		for (int i = 0; i < g->ncomp; i++)
			if (g->c[i].state == GEOM_DISK_SYNCING)
				rc = 1;
	} else {
		write_md(g, t); /* progress survives a crash */
		rc = 1;
	}
out:
	pthread_mutex_unlock(&g->lock);
	return rc;
}

int geom_raid3_configure(struct geom_raid3 *g, uint64_t set, uint64_t clear, char *err,
                         size_t errlen)
{
	uint64_t f = (g->mflags & ~clear) | set;
	if ((f & GEOM_RAID3_DEV_ROUND_ROBIN) && (f & GEOM_RAID3_DEV_VERIFY))
		return errmsg(
		    err, errlen, -EINVAL,
		    "round-robin reading (-r) and verify reading (-w) cannot be combined");
	pthread_mutex_lock(&g->lock);
	/* Autosync back on: a stale component is rebuilt now. */
	if ((g->mflags & GEOM_RAID3_DEV_NOAUTOSYNC) && !(f & GEOM_RAID3_DEV_NOAUTOSYNC))
		for (int i = 0; i < g->ncomp; i++)
			if (g->c[i].m && g->c[i].state == GEOM_DISK_STALE) {
				g->c[i].state = GEOM_DISK_SYNCING;
				g->c[i].md.sync_offset = 0;
			}
	g->mflags = f;
	geom_raid3_write_all_md(g);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

int geom_raid3_insert(struct geom_raid3 *g, int no, struct member *m, char *err, size_t errlen)
{
	if (no < 0 || no >= g->ncomp)
		return errmsg(err, errlen, -EINVAL, "component number %d out of range 0..%d", no,
		              g->ncomp - 1);
	if (g->c[no].m && g->c[no].state != GEOM_DISK_FAILED)
		return errmsg(err, errlen, -EBUSY, "component %d is present", no);
	if (m->size < comp_bytes(g) + 512)
		return errmsg(err, errlen, -ENOSPC, "%s: too small for %s", m->name, g->name);
	if (g->rdonly || m->readonly)
		return errmsg(err, errlen, -EROFS, "read-only");
	geom_lock_all(&g->iolock, &g->lock);
	if (g->c[no].m)
		member_close(g->c[no].m);
	memset(&g->c[no], 0, sizeof(g->c[no]));
	g->c[no].m = m;
	g->c[no].state = GEOM_DISK_SYNCING;
	g->c[no].md.dflags = GEOM_RAID3_DISK_FORCE_SYNC;
	g->syncid++;
	geom_raid3_write_all_md(g);
	geom_unlock_all(&g->iolock, &g->lock);
	return 0;
}

int geom_raid3_remove(struct geom_raid3 *g, int no, char *err, size_t errlen)
{
	if (no < 0 || no >= g->ncomp || !g->c[no].m)
		return errmsg(err, errlen, -EINVAL, "no component %d", no);
	geom_lock_all(&g->iolock, &g->lock);
	int nbad = 0;
	for (int i = 0; i < g->ncomp; i++)
		nbad += i != no && !usable(&g->c[i]);
	if (nbad) {
		geom_unlock_all(&g->iolock, &g->lock);
		return errmsg(err, errlen, -EBUSY, "%s is already degraded: removing %d loses data",
		              g->name, no);
	}
	/* Cleared failed or not (best effort: a failed disk may refuse it). */
	geom_clear(g->c[no].m, NULL, 0);
	member_close(g->c[no].m);
	g->c[no].m = NULL;
	g->c[no].state = GEOM_DISK_NONE;
	g->genid++;
	geom_raid3_write_all_md(g);
	geom_unlock_all(&g->iolock, &g->lock);
	return 0;
}

int geom_raid3_rebuild(struct geom_raid3 *g, int no, char *err, size_t errlen)
{
	if (no < 0 || no >= g->ncomp || !g->c[no].m || g->c[no].state == GEOM_DISK_FAILED)
		return errmsg(err, errlen, -EINVAL, "no usable component %d", no);
	pthread_mutex_lock(&g->lock);
	int nbad = 0;
	for (int i = 0; i < g->ncomp; i++)
		nbad += i != no && !usable(&g->c[i]);
	if (nbad) {
		pthread_mutex_unlock(&g->lock);
		return errmsg(err, errlen, -EBUSY,
		              "another component is missing: cannot rebuild %d", no);
	}
	g->c[no].state = GEOM_DISK_SYNCING;
	g->c[no].md.sync_offset = 0;
	g->syncid++;
	geom_raid3_write_all_md(g);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

int geom_raid3_close(struct geom_raid3 *g)
{
	if (!g)
		return 0;
	if (g->dirty && !g->rdonly) {
		for (int i = 0; i < g->ncomp; i++)
			if (g->c[i].m && g->c[i].state != GEOM_DISK_FAILED)
				member_flush(g->c[i].m);
		g->dirty = false;
		geom_raid3_write_all_md(g);
	}
	for (int i = 0; i < g->ncomp; i++)
		if (g->c[i].m)
			member_close(g->c[i].m);
	geom_ioq_pool_destroy(&g->ioqs);
	pthread_mutex_destroy(&g->lock);
	pthread_rwlock_destroy(&g->iolock);
	free(g);
	return 0;
}

void geom_raid3_drop(struct geom_raid3 *g)
{
	if (!g)
		return;
	g->rdonly = true; /* close then writes nothing */
	geom_raid3_close(g);
}

int geom_raid3_idle(struct geom_raid3 *g, uint64_t idle_ns)
{
	pthread_mutex_lock(&g->lock);
	int rc = 0;
	if (g->dirty && !g->rdonly && geom_now_ns() - g->last_write_ns >= idle_ns) {
		for (int i = 0; i < g->ncomp; i++)
			if (g->c[i].m && g->c[i].state != GEOM_DISK_FAILED)
				member_flush(g->c[i].m);
		g->dirty = false;
		geom_raid3_write_all_md(g);
		rc = 1;
	}
	pthread_mutex_unlock(&g->lock);
	return rc;
}
