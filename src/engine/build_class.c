/* The build array class (mdadm --build): an array without superblocks, its
 * geometry given on the command line, the address math from src/layout/.
 * Made for recovery, so it never writes: members are opened read-only,
 * writes are refused whatever the level, and a member that is missing or
 * fails a read is made up from a copy (raid1/raid10) or from the rest of its
 * stripe (raid4/5/6, P and Q with src/parity). Reads need no lock: nothing
 * in the array changes after it is built. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/core/class.h"
#include "layout/layout.h"
#include "member/member.h"
#include "util/errmsg.h"

#define BUILD_MAX_PIECE (1u << 20) /* bytes rebuilt at once from a stripe */

struct build_array {
	struct uraid_array h;
	struct layout_geometry g;
	const struct layout_ops *ops;
	const struct uraid_parity *pp;
	uint64_t data_offset; /* sectors */
	uint64_t sectors;     /* array size */
	int n;
	struct member *m[LAYOUT_MAX_MEMBERS]; /* NULL: missing */
};

static const struct eng_class build_class;

static struct build_array *B(struct uraid_array *h)
{
	return eng_container_of(h, struct build_array, h);
}

static uint64_t build_size(const struct uraid_array *h)
{
	return eng_container_of(h, const struct build_array, h)->sectors * 512;
}

static int read_role(struct build_array *b, int role, void *buf, size_t len, uint64_t msec)
{
	if (!b->m[role])
		return -ENXIO;
	return member_read(b->m[role], buf, len, (b->data_offset + msec) * 512);
}

/* The piece of `role` at member sector msec (len bytes, inside one chunk)
 * from the other members of its stripe. */
static int rebuild_piece(struct build_array *b, int role, uint64_t msec, void *out, size_t len)
{
	if (!b->ops->stripe || !b->g.chunk_sectors)
		return -EIO;
	struct layout_stripe s;
	b->ops->stripe(&b->g, msec / b->g.chunk_sectors, &s);
	uint64_t within = msec - s.sector;
	bool has_q = s.q_role >= 0;
	int role_of[LAYOUT_MAX_MEMBERS + 2];
	int k = s.ndata, nb = layout_stripe_blocks(&s, role_of);
	uint8_t *mem = malloc((size_t)nb * len);
	void *blocks[LAYOUT_MAX_MEMBERS + 2];
	if (!mem)
		return -ENOMEM;
	int fail[LAYOUT_MAX_MEMBERS + 2], nfail = 0, want = -1;
	for (int i = 0; i < nb; i++) {
		blocks[i] = mem + (size_t)i * len;
		if (role_of[i] == role)
			want = i;
		if (role_of[i] == role ||
		    read_role(b, role_of[i], blocks[i], len, s.sector + within) < 0)
			fail[nfail++] = i;
	}
	int rc = -EIO;
	if (want >= 0 && nfail <= nb - k)
		rc = b->pp->recover(k, len, blocks, has_q, nfail, fail);
	if (rc == 0)
		memcpy(out, blocks[want], len);
	free(mem);
	return rc < 0 ? -EIO : 0;
}

static int read_piece(struct build_array *b, uint64_t lsec, uint8_t *buf, uint64_t sectors)
{
	int copies = b->ops->ncopies(&b->g);
	struct layout_loc first = {0, 0};
	for (int c = 0; c < copies; c++) {
		struct layout_loc loc;
		uint64_t run;
		if (b->ops->map(&b->g, lsec, c, &loc, &run) < 0)
			return -EIO;
		if (c == 0)
			first = loc;
		if (read_role(b, loc.role, buf, sectors * 512, loc.sector) == 0)
			return 0;
	}
	for (uint64_t done = 0; done < sectors;) {
		size_t n =
		    (size_t)((sectors - done) * 512 < BUILD_MAX_PIECE ? (sectors - done) * 512
		                                                      : BUILD_MAX_PIECE);
		int rc = rebuild_piece(b, first.role, first.sector + done, buf + done * 512, n);
		if (rc < 0)
			return rc;
		done += n / 512;
	}
	return 0;
}

static int build_read(struct uraid_array *h, void *buf, size_t len, uint64_t off)
{
	struct build_array *b = B(h);
	if (off % 512 || len % 512 || off > b->sectors * 512 || len > b->sectors * 512 - off)
		return -EINVAL;
	uint64_t lsec = off / 512, left = len / 512;
	uint8_t *p = buf;
	while (left) {
		struct layout_loc loc;
		uint64_t run;
		if (b->ops->map(&b->g, lsec, 0, &loc, &run) < 0 || run == 0)
			return -EIO;
		uint64_t n = run < left ? run : left;
		int rc = read_piece(b, lsec, p, n);
		if (rc < 0)
			return rc;
		lsec += n;
		left -= n;
		p += n * 512;
	}
	return 0;
}

static int build_write(struct uraid_array *h, const void *buf, size_t len, uint64_t off)
{
	(void)h, (void)buf, (void)len, (void)off;
	return -EROFS;
}

static int build_zero(struct uraid_array *h, uint64_t off, uint64_t len, unsigned flags)
{
	(void)h, (void)off, (void)len, (void)flags;
	return -EROFS;
}

static int build_flush(struct uraid_array *h)
{
	(void)h;
	return 0;
}

static void build_drop(struct uraid_array *h)
{
	struct build_array *b = B(h);
	for (int i = 0; i < b->n; i++)
		if (b->m[i])
			member_close(b->m[i]);
	free(b);
}

static int build_stop(struct uraid_array *h)
{
	build_drop(h);
	return 0;
}

static int build_status(struct uraid_array *h, struct uraid_status *st)
{
	struct build_array *b = B(h);
	st->level = b->g.level;
	st->layout = b->g.layout;
	st->chunk_sectors = b->g.chunk_sectors;
	st->raid_disks = b->g.raid_disks;
	st->metadata = -1;
	st->array_sectors = b->sectors;
	st->dev_sectors = b->g.dev_sectors;
	st->readonly = true;
	st->clean = true;
	st->block_bytes = 512;
	for (int i = 0; i < b->n && i < LAYOUT_MAX_MEMBERS; i++) {
		struct uraid_member_status *ms = &st->members[st->nmembers++];
		ms->role = i;
		ms->dev_number = (uint32_t)i;
		if (b->m[i]) {
			snprintf(ms->name, sizeof(ms->name), "%s", b->m[i]->name);
			ms->state = URAID_MEMBER_IN_SYNC;
			st->working++;
		} else {
			ms->state = URAID_MEMBER_MISSING;
			st->degraded++;
		}
	}
	return 0;
}

static int refuse(struct uraid_array *h, char *err, size_t errlen)
{
	(void)h;
	return errmsg(err, errlen, -EROFS,
	              "a built array (no superblocks) is read-only: its members are never changed");
}

static int build_fail(struct uraid_array *h, const char *member, char *err, size_t errlen)
{
	(void)member;
	return refuse(h, err, errlen);
}

static int build_add_member(struct uraid_array *h, struct member *m, char *err, size_t errlen)
{
	member_close(m);
	return refuse(h, err, errlen);
}

static int build_sync_action(struct uraid_array *h, enum uraid_sync_action act, char *err,
                             size_t errlen)
{
	(void)act;
	return refuse(h, err, errlen);
}

static int build_sync_step(struct uraid_array *h, uint64_t max_sectors)
{
	(void)h, (void)max_sectors;
	return 0; /* nothing to do, ever */
}

static int build_sync_wait(struct uraid_array *h)
{
	(void)h;
	return 0;
}

static void build_sync_speed(struct uraid_array *h, uint64_t min_kibs, uint64_t max_kibs)
{
	(void)h, (void)min_kibs, (void)max_kibs;
}

static const struct eng_class build_class = {
    .name = "build (no superblock)",
    .size = build_size,
    .read = build_read,
    .write = build_write,
    .flush = build_flush,
    .zero = build_zero,
    .stop = build_stop,
    .drop = build_drop,
    .status = build_status,
    .fail = build_fail,
    .remove = build_fail,
    .add_member = build_add_member,
    .sync_action = build_sync_action,
    .sync_step = build_sync_step,
    .sync_wait = build_sync_wait,
    .sync_speed = build_sync_speed,
};

static bool is_missing(const char *p)
{
	return !p || !strcmp(p, "missing");
}

/* The geometry from the options and the members' sizes. */
static int set_geometry(struct build_array *b, const struct uraid_build_opts *o, char *err,
                        size_t errlen)
{
	struct layout_geometry *g = &b->g;
	g->level = o->level;
	g->raid_disks = o->raid_devices;
	g->layout = o->layout_set ? o->layout : layout_default(o->level);
	bool striped = o->level == URAID_LEVEL_RAID0 || o->level >= URAID_LEVEL_RAID4;
	g->chunk_sectors = o->chunk_sectors ? o->chunk_sectors : striped ? 1024 : 0;
	if (o->level == URAID_LEVEL_RAID1)
		g->chunk_sectors = 0;
	uint64_t smallest = UINT64_MAX;
	for (int i = 0; i < b->n; i++) {
		if (!b->m[i])
			continue;
		uint64_t s = b->m[i]->size / 512;
		if (s <= b->data_offset)
			return errmsg(
			    err, errlen, -EINVAL,
			    "%s: %llu sectors, no room for data after the data offset %llu",
			    b->m[i]->name, (unsigned long long)s,
			    (unsigned long long)b->data_offset);
		s -= b->data_offset;
		if (o->size_sectors && s < o->size_sectors)
			return errmsg(err, errlen, -EINVAL,
			              "%s is too small: the geometry needs %llu sectors after the "
			              "data offset, it has %llu",
			              b->m[i]->name, (unsigned long long)o->size_sectors,
			              (unsigned long long)s);
		g->member_sectors[i] = o->size_sectors ? o->size_sectors : s;
		if (s < smallest)
			smallest = s;
	}
	if (smallest == UINT64_MAX)
		return errmsg(err, errlen, -EINVAL, "every member is missing");
	g->dev_sectors = o->size_sectors ? o->size_sectors : smallest;
	if (o->level == URAID_LEVEL_LINEAR || o->level == URAID_LEVEL_RAID0)
		for (int i = 0; i < b->n; i++)
			if (!b->m[i])
				return errmsg(err, errlen, -EINVAL,
				              "%s has no redundancy: member %d cannot be missing",
				              level_name(o->level), i);
	int rc = layout_validate(g, err, errlen);
	if (rc < 0)
		return rc;
	b->ops = layout_ops_for(g->level);
	bool missing[LAYOUT_MAX_MEMBERS] = {false};
	for (int i = 0; i < b->n; i++)
		missing[i] = !b->m[i];
	if (!b->ops->readable(g, missing))
		return errmsg(err, errlen, -EINVAL,
		              "%s with these members missing cannot be read: too many are gone",
		              level_name(g->level));
	b->sectors = b->ops->array_sectors(g);
	return 0;
}

/* The same file or device given twice (under two names, too). */
static int check_duplicates(const char *const *paths, int n, char *err, size_t errlen)
{
	struct stat sb[LAYOUT_MAX_MEMBERS];
	for (int i = 0; i < n; i++) {
		if (is_missing(paths[i]))
			continue;
		if (stat(paths[i], &sb[i]) < 0)
			return errmsg(err, errlen, -errno, "%s: %s", paths[i], strerror(errno));
		for (int j = 0; j < i; j++) {
			if (is_missing(paths[j]))
				continue;
			bool same = S_ISBLK(sb[i].st_mode) ? sb[i].st_rdev == sb[j].st_rdev
			                                   : sb[i].st_dev == sb[j].st_dev &&
			                                         sb[i].st_ino == sb[j].st_ino;
			if (same && S_ISBLK(sb[i].st_mode) == S_ISBLK(sb[j].st_mode))
				return errmsg(err, errlen, -EINVAL, "%s and %s are the same member",
				              paths[j], paths[i]);
		}
	}
	return 0;
}

int uraid_build(const struct uraid_build_opts *o, const char *const *paths, int n, unsigned flags,
                struct uraid_array **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!o || n < 1 || n > LAYOUT_MAX_MEMBERS || !layout_ops_for(o->level))
		return errmsg(err, errlen, -EINVAL, "build needs a level and 1 to %d members",
		              LAYOUT_MAX_MEMBERS);
	if (n != o->raid_devices)
		return errmsg(
		    err, errlen, -EINVAL,
		    "--raid-devices=%d, but %d members given (name absent ones 'missing')",
		    o->raid_devices, n);
	int rc = check_duplicates(paths, n, err, errlen);
	if (rc < 0)
		return rc;
	struct build_array *b = calloc(1, sizeof(*b));
	if (!b)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	b->h.cls = &build_class;
	b->h.flags = flags | URAID_RDONLY;
	b->n = n;
	b->data_offset = o->data_offset_sectors;
	b->pp = uraid_parity_get(NULL);
	if (!b->pp)
		b->pp = uraid_parity_get("portable");
	unsigned mf = MEMBER_RDONLY | ((flags & URAID_DIRECT) ? MEMBER_DIRECT : 0);
	for (int i = 0; i < n && rc == 0; i++) {
		if (is_missing(paths[i]))
			continue;
		char e[256];
		rc = member_open_file(paths[i], mf, 0, &b->m[i], e, sizeof(e));
		if (rc < 0)
			errmsg(err, errlen, rc, "%s: %s", paths[i], e);
	}
	if (rc == 0)
		rc = set_geometry(b, o, err, errlen);
	if (rc < 0) {
		build_drop(&b->h);
		return rc;
	}
	*out = &b->h;
	return 0;
}

int uraid_build_spec_format(const struct uraid_build_opts *o, char *buf, size_t len)
{
	int w = snprintf(
	    buf, len, "level=%d,raid-devices=%d,chunk=%u,%s%u,data-offset=%llu,size=%llu", o->level,
	    o->raid_devices, o->chunk_sectors / 2,
	    o->layout_set ? "layout=" : "nolayout=", o->layout,
	    (unsigned long long)o->data_offset_sectors, (unsigned long long)o->size_sectors);
	return w < 0 || (size_t)w >= len ? -ENOSPC : 0;
}

int uraid_build_spec_parse(const char *spec, struct uraid_build_opts *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	o->level = -100;
	const char *p = spec;
	while (p && *p) {
		char key[32];
		unsigned long long v;
		int used = 0;
		if (sscanf(p, "%31[a-z-]=%llu%n", key, &v, &used) != 2)
			return errmsg(err, errlen, -EINVAL, "bad build spec at '%s'", p);
		if (!strcmp(key, "level"))
			o->level = (int)(long long)v;
		else if (!strcmp(key, "raid-devices"))
			o->raid_devices = (int)v;
		else if (!strcmp(key, "chunk"))
			o->chunk_sectors = (uint32_t)(v * 2);
		else if (!strcmp(key, "layout") || !strcmp(key, "nolayout")) {
			o->layout_set = key[0] == 'l';
			o->layout = (uint32_t)v;
		} else if (!strcmp(key, "data-offset"))
			o->data_offset_sectors = v;
		else if (!strcmp(key, "size"))
			o->size_sectors = v;
		else
			return errmsg(err, errlen, -EINVAL, "bad build spec key '%s'", key);
		p += used;
		if (*p == ',')
			p++;
		else if (*p)
			return errmsg(err, errlen, -EINVAL, "bad build spec at '%s'", p);
	}
	if (o->level == -100 || o->raid_devices < 1)
		return errmsg(err, errlen, -EINVAL, "build spec '%s' lacks level or raid-devices",
		              spec);
	return 0;
}
