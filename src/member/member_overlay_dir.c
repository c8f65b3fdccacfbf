/* An overlay directory as a whole (include/uraid.h): what it holds, its
 * commit onto the members, its removal. Each checks everything before it
 * changes anything, and refuses while an array runs on the overlays (the
 * running wrapper holds an exclusive lock on each overlay file). */
#include "member/member_overlay_int.h"
#include "uraid.h"
#include "util/errmsg.h"
#include "util/trusted_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(URAID_OVERLAY_PATH_MAX == OVL_PATH_MAX, "overlay path sizes");

#define COPY_MAX (1u << 20) /* bytes per request while committing */

static const struct trusted_dir_words overlay_words = {
    .what = "overlay directory",
    .elsewhere = "give a directory of your own",
    .another = "another directory",
};

int member_overlay_dir_open(const char *dir, bool create, char *path, size_t len, char *err,
                            size_t errlen)
{
	return trusted_dir_open(dir, &overlay_words, create, path, len, err, errlen);
}

/* The names of the overlay files of a directory, malloc'ed. */
struct names {
	char (*v)[NAME_MAX + 1];
	int n, cap;
};

static int add_name(const char *name, void *ctx)
{
	struct names *l = ctx;
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		void *v = realloc(l->v, (size_t)cap * sizeof(*l->v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	snprintf(l->v[l->n++], sizeof(*l->v), "%s", name);
	return 0;
}

/* Check dir and list its overlays. Returns the directory's descriptor. */
static int open_listed(const char *dir, char *path, size_t plen, struct names *l, char *err,
                       size_t errlen)
{
	memset(l, 0, sizeof(*l));
	int dfd = member_overlay_dir_open(dir, false, path, plen, err, errlen);
	if (dfd < 0)
		return dfd;
	int rc = ovl_scan(dfd, add_name, l);
	if (rc < 0) {
		close(dfd);
		free(l->v);
		return errmsg(err, errlen, rc, "overlay directory %s: %s", path, strerror(-rc));
	}
	return dfd;
}

/* Bytes of the member that `held` blocks stand for, the last one cut at
 * the member's end. */
static uint64_t held_bytes(const uint64_t *map, uint64_t held, uint64_t size)
{
	uint64_t last = ovl_blocks(size) - 1, bytes = held * MEMBER_OVERLAY_BLOCK;
	if ((map[last / 64] >> (last % 64)) & 1)
		bytes -= ovl_blocks(size) * MEMBER_OVERLAY_BLOCK - size;
	return bytes;
}

/* The map of a store, malloc'ed. */
static int load_map(struct member *store, const struct ovl_header *h, uint64_t **map,
                    uint64_t *held)
{
	size_t nwords = (size_t)((ovl_blocks(h->id.size) + 63) / 64);
	*map = calloc(nwords ? nwords : 1, sizeof(**map));
	if (!*map)
		return -ENOMEM;
	int rc = ovl_map_load(store, h, *map, nwords, held);
	if (rc < 0) {
		free(*map);
		*map = NULL;
	}
	return rc;
}

/* Is the member at h's path the one the overlay was made of? */
static int member_state(const struct ovl_header *h, bool committing, bool rdonly,
                        struct member **out, char *why, size_t len)
{
	struct member *m;
	char e[512];
	*out = NULL;
	int rc = member_open_file(h->id.path, rdonly ? MEMBER_RDONLY : 0, 0, &m, e, sizeof(e));
	if (rc < 0)
		return errmsg(why, len, rc, "%s", e);
	struct ovl_identity now;
	rc = ovl_identity_of(m, &now, e, sizeof(e));
	if (rc == 0)
		rc = ovl_identity_check(h, &now, !committing, e, sizeof(e));
	if (rc < 0) {
		member_close(m);
		return errmsg(why, len, rc, "%s changed since the overlay was made: %s", h->id.path,
		              e);
	}
	*out = m;
	return 0;
}

static void inspect(int dfd, const char *path, const char *name, struct uraid_overlay_info *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->file, sizeof(o->file), "%s", name);
	struct member *store = NULL, *m;
	struct ovl_header h;
	bool committing;
	char e[512];
	int rc = ovl_store_open(dfd, path, name, true, &store, e, sizeof(e));
	if (rc == 0) {
		o->in_use = ovl_flock(ovl_member_fd(store), true) == -EBUSY;
		rc = ovl_header_read(store, &h, &committing, e, sizeof(e));
	}
	if (rc < 0) {
		o->member_state = -EINVAL;
		errmsg(o->problem, sizeof(o->problem), -EINVAL, "not a usable overlay: %s", e);
		if (store)
			member_close(store);
		return;
	}
	snprintf(o->member, sizeof(o->member), "%s", h.id.path);
	snprintf(o->array, sizeof(o->array), "%s", h.tag);
	o->member_bytes = h.id.size;
	o->created = h.created;
	o->commit_interrupted = committing;
	uint64_t *map, held;
	rc = load_map(store, &h, &map, &held);
	member_close(store);
	if (rc < 0) {
		o->member_state = rc;
		snprintf(o->problem, sizeof(o->problem), "cannot read its map: %s", strerror(-rc));
		return;
	}
	o->held_bytes = held_bytes(map, held, h.id.size);
	free(map);
	o->member_state = member_state(&h, committing, true, &m, o->problem, sizeof(o->problem));
	if (m)
		member_close(m);
}

int uraid_overlay_list(const char *dir, struct uraid_overlay_info **out, int *n, char *err,
                       size_t errlen)
{
	char path[PATH_MAX];
	struct names l;
	*out = NULL;
	*n = 0;
	int dfd = open_listed(dir, path, sizeof(path), &l, err, errlen);
	if (dfd < 0)
		return dfd;
	struct uraid_overlay_info *v = calloc(l.n ? (size_t)l.n : 1, sizeof(*v));
	if (!v) {
		close(dfd);
		free(l.v);
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	}
	for (int i = 0; i < l.n; i++)
		inspect(dfd, path, l.v[i], &v[i]);
	close(dfd);
	free(l.v);
	*out = v;
	*n = l.n;
	return 0;
}

/* One overlay about to be committed: its store (locked) and member. */
struct pending {
	struct member *store, *base;
	struct ovl_header h;
	bool committing;
};

static void close_pending(struct pending *p, int n)
{
	for (int i = 0; i < n; i++) {
		member_close(p[i].store);
		member_close(p[i].base);
	}
	free(p);
}

/* Open, lock and check every overlay of the directory for a commit (or,
 * without members, a discard): nothing is written here. */
static int prepare(int dfd, const char *path, const struct names *l, bool members,
                   struct pending **out, char *err, size_t errlen)
{
	struct pending *p = calloc(l->n ? (size_t)l->n : 1, sizeof(*p));
	if (!p)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	char e[1024];
	int rc = 0, i;
	for (i = 0; i < l->n && rc == 0; i++) {
		const char *name = l->v[i];
		rc = ovl_store_open(dfd, path, name, !members, &p[i].store, err, errlen);
		if (rc < 0)
			break;
		if (ovl_flock(ovl_member_fd(p[i].store), false) < 0) {
			rc =
			    errmsg(err, errlen, -EBUSY,
			           "%s/%s is in use by a running array: stop it first ('uraid stop "
			           "NAME'); nothing was written",
			           path, name);
			break;
		}
		rc = ovl_header_read(p[i].store, &p[i].h, &p[i].committing, e, sizeof(e));
		if (rc < 0) {
			/* Unreadable, it cannot say whether a commit of it was cut
			 * short: removing it is the user's call, not discard's. */
			rc = errmsg(err, errlen, -EINVAL, "%s/%s: %s; nothing was written%s", path,
			            name, e,
			            members ? "" : " (remove the file yourself to drop it)");
			break;
		}
		if (!members && p[i].committing)
			rc = errmsg(
			    err, errlen, -EBUSY,
			    "%s/%s: its commit onto %s was interrupted, so the member holds "
			    "part of it: finish the commit ('uraid overlay commit %s') rather "
			    "than discard it",
			    path, name, p[i].h.id.path, path);
		if (rc < 0 || !members)
			continue;
		for (int j = 0; j < i && rc == 0; j++) {
			if (strcmp(p[j].h.tag, p[i].h.tag))
				rc = errmsg(err, errlen, -EEXIST,
				            "%s mixes overlays of two arrays: %s (%s) and %s (%s); "
				            "nothing was written",
				            path, l->v[j], p[j].h.tag, name, p[i].h.tag);
			else if (!strcmp(p[j].h.id.path, p[i].h.id.path))
				rc = errmsg(err, errlen, -EEXIST,
				            "%s: %s and %s are both overlays of %s; nothing was "
				            "written",
				            path, l->v[j], name, p[i].h.id.path);
		}
		if (rc == 0 &&
		    member_state(&p[i].h, p[i].committing, false, &p[i].base, e, sizeof(e)) < 0)
			rc = errmsg(err, errlen, -ESTALE,
			            "%s/%s cannot be committed: %s; nothing was written", path,
			            name, e);
		if (rc == 0 && member_lock(p[i].base) < 0)
			rc = errmsg(err, errlen, -EBUSY,
			            "%s is in use by a running array; nothing was written",
			            p[i].h.id.path);
	}
	if (rc < 0) {
		close_pending(p, l->n);
		return rc;
	}
	*out = p;
	return 0;
}

/* The blocks the store holds, onto the member; then the member flushed. */
static int copy_held(struct pending *p, uint64_t *bytes, char *err, size_t errlen)
{
	uint64_t *map, held, size = p->h.id.size;
	int rc = load_map(p->store, &p->h, &map, &held);
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s: cannot read its map: %s", p->store->name,
		              strerror(-rc));
	unsigned char *buf = malloc(COPY_MAX);
	if (!buf) {
		free(map);
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	}
	uint64_t nblocks = ovl_blocks(size);
	for (uint64_t b = 0; b < nblocks && rc == 0;) {
		if (!((map[b / 64] >> (b % 64)) & 1)) {
			b++;
			continue;
		}
		uint64_t e = b + 1;
		while (e < nblocks && e - b < COPY_MAX / MEMBER_OVERLAY_BLOCK &&
		       ((map[e / 64] >> (e % 64)) & 1))
			e++;
		uint64_t off = b * MEMBER_OVERLAY_BLOCK;
		uint64_t end = e * MEMBER_OVERLAY_BLOCK < size ? e * MEMBER_OVERLAY_BLOCK : size;
		size_t n = (size_t)(end - off);
		rc = member_read(p->store, buf, n, p->h.data_off + off);
		if (rc == 0)
			rc = member_write(p->base, buf, n, off, 0);
		if (rc == 0)
			*bytes += n;
		b = e;
	}
	if (rc == 0)
		rc = member_flush(p->base);
	free(buf);
	free(map);
	if (rc < 0)
		return errmsg(err, errlen, rc,
		              "commit onto %s stopped: %s; the overlays are kept, run the commit "
		              "again to finish it",
		              p->h.id.path, strerror(-rc));
	return 0;
}

/* Remove the listed overlay files (locked by us). */
static void remove_all(int dfd, const struct names *l)
{
	for (int i = 0; i < l->n; i++)
		unlinkat(dfd, l->v[i], 0);
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int uraid_overlay_commit(const char *dir, uint64_t *bytes, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct names l;
	uint64_t done = 0;
	if (bytes)
		*bytes = 0;
	int dfd = open_listed(dir, path, sizeof(path), &l, err, errlen);
	if (dfd < 0)
		return dfd;
	struct pending *p = NULL;
	int rc = l.n ? prepare(dfd, path, &l, true, &p, err, errlen)
	             : errmsg(err, errlen, -ENOENT, "overlay directory %s holds no overlay", path);
	/* Marked first: a commit cut short is finished by running it again,
	 * though the members' fingerprints no longer match. */
	for (int i = 0; rc == 0 && i < l.n; i++)
		if ((rc = ovl_commit_mark(p[i].store, true)) < 0)
			errmsg(err, errlen, rc, "%s: %s; nothing was written", p[i].store->name,
			       strerror(-rc));
	for (int i = 0; rc == 0 && i < l.n; i++)
		rc = copy_held(&p[i], &done, err, errlen);
	if (rc == 0)
		remove_all(dfd, &l);
	if (p)
		close_pending(p, l.n);
	close(dfd);
	free(l.v);
	if (bytes)
		*bytes = done;
	return rc;
}

int uraid_overlay_discard(const char *dir, int *n, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct names l;
	if (n)
		*n = 0;
	int dfd = open_listed(dir, path, sizeof(path), &l, err, errlen);
	if (dfd < 0)
		return dfd;
	struct pending *p = NULL;
	int rc = prepare(dfd, path, &l, false, &p, err, errlen);
	if (rc == 0) {
		/* Still locked while they go: no array can take one meanwhile. */
		remove_all(dfd, &l);
		close_pending(p, l.n);
		if (n)
			*n = l.n;
	}
	close(dfd);
	free(l.v);
	return rc;
}
