/* uraid_geom_ctl: gmirror(8)/graid3(8) verbs on a running GEOM array, as a
 * request line "VERB key=value ..." (what FreeBSD's gctl requests carry,
 * and what the control socket's "geom" verb passes through). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geom/class_int.h"
#include "member/member.h"
#include "util/errmsg.h"

#define MAX_WORDS 16

struct req {
	char verb[32];
	int n;
	char key[MAX_WORDS][32];
	char val[MAX_WORDS][4096];
	bool used[MAX_WORDS];
};

static int parse(const char *line, struct req *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	const char *p = line;
	while (*p == ' ')
		p++;
	size_t l = strcspn(p, " ");
	if (l == 0 || l >= sizeof(r->verb))
		return errmsg(err, errlen, -EINVAL, "empty or overlong verb");
	memcpy(r->verb, p, l);
	p += l;
	for (;;) {
		while (*p == ' ')
			p++;
		if (!*p)
			return 0;
		l = strcspn(p, " ");
		const char *eq = memchr(p, '=', l);
		if (!eq || eq == p)
			return errmsg(err, errlen, -EINVAL, "'%.*s': want key=value", (int)l, p);
		size_t kl = (size_t)(eq - p), vl = l - kl - 1;
		if (r->n == MAX_WORDS || kl >= sizeof(r->key[0]) || vl >= sizeof(r->val[0]))
			return errmsg(err, errlen, -EINVAL, "request too long");
		memcpy(r->key[r->n], p, kl);
		memcpy(r->val[r->n], eq + 1, vl);
		r->n++;
		p += l;
	}
}

static const char *get(struct req *r, const char *key)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->key[i], key)) {
			r->used[i] = true;
			return r->val[i];
		}
	return NULL;
}

static int get_u64(struct req *r, const char *key, uint64_t max, uint64_t *v, char *err,
                   size_t errlen)
{
	const char *s = get(r, key);
	if (!s)
		return 0;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || x > max)
		return errmsg(err, errlen, -EINVAL, "%s=%s: a number up to %llu", key, s,
		              (unsigned long long)max);
	*v = x;
	return 1;
}

/* 0/1 keys: -1 when absent. */
static int get_bool(struct req *r, const char *key, int *v, char *err, size_t errlen)
{
	uint64_t x;
	int rc = get_u64(r, key, 1, &x, err, errlen);
	*v = rc == 1 ? (int)x : -1;
	return rc < 0 ? rc : 0;
}

static int unused(struct req *r, char *err, size_t errlen)
{
	for (int i = 0; i < r->n; i++)
		if (!r->used[i])
			return errmsg(err, errlen, -EINVAL, "%s: unknown key '%s'", r->verb,
			              r->key[i]);
	return 0;
}

static int member_of(struct uraid_array *a, struct req *r, bool required, char *err, size_t errlen)
{
	const char *m = get(r, "member");
	if (!m)
		return required ? errmsg(err, errlen, -EINVAL, "%s: member=M is required", r->verb)
		                : -ENOENT;
	int i = geom_class_find(a, m);
	if (i < 0)
		return errmsg(err, errlen, -ENOENT, "%s is not a component of this array", m);
	return i;
}

static int mirror_configure(struct uraid_array *a, struct geom_mirror *g, struct req *r, char *err,
                            size_t errlen)
{
	const char *b = get(r, "balance");
	uint64_t slice = 0, prio = 0;
	int autosync, failsync, rc;
	int bal = -1;
	if (b && (bal = geom_balance_parse(b)) <= 0)
		return errmsg(err, errlen, -EINVAL,
		              "unknown balance '%s' (load, prefer, round-robin, split)", b);
	if ((rc = get_u64(r, "slice", UINT32_MAX, &slice, err, errlen)) < 0)
		return rc;
	bool has_slice = rc == 1;
	if ((rc = get_u64(r, "priority", 255, &prio, err, errlen)) < 0)
		return rc;
	bool has_prio = rc == 1;
	if (get_bool(r, "autosync", &autosync, err, errlen) < 0 ||
	    get_bool(r, "failsync", &failsync, err, errlen) < 0)
		return -EINVAL;
	int disk = has_prio ? member_of(a, r, true, err, errlen) : -1;
	if (disk < -1)
		return disk;
	if ((rc = unused(r, err, errlen)) < 0)
		return rc;
	if (has_slice && (slice == 0 || slice % 512))
		return errmsg(err, errlen, -EINVAL, "slice %llu is not a multiple of 512",
		              (unsigned long long)slice);
	if (bal < 0 && !has_slice && !has_prio && autosync < 0 && failsync < 0)
		return errmsg(err, errlen, -EINVAL, "nothing to change");
	/* Everything is checked: now change. */
	if (bal > 0 || has_slice) {
		rc = geom_mirror_configure(g, bal > 0 ? bal : g->md_balance, (uint32_t)slice, err,
		                           errlen);
		if (rc < 0)
			return rc;
	}
	if (has_prio && (rc = geom_mirror_set_priority(g, disk, (uint8_t)prio, err, errlen)) < 0)
		return rc;
	uint64_t set = 0, clear = 0;
	if (autosync >= 0)
		*(autosync ? &clear : &set) |= GEOM_MIRROR_DEV_NOAUTOSYNC;
	if (failsync >= 0)
		*(failsync ? &clear : &set) |= GEOM_MIRROR_DEV_NOFAILSYNC;
	if (set | clear)
		rc = geom_mirror_set_flags(g, set, clear, err, errlen);
	return rc;
}

static int raid3_configure(struct geom_raid3 *g, struct req *r, char *err, size_t errlen)
{
	int autosync, failsync, rr, verify, rc;
	if (get_bool(r, "autosync", &autosync, err, errlen) < 0 ||
	    get_bool(r, "failsync", &failsync, err, errlen) < 0 ||
	    get_bool(r, "round_robin", &rr, err, errlen) < 0 ||
	    get_bool(r, "verify", &verify, err, errlen) < 0)
		return -EINVAL;
	if ((rc = unused(r, err, errlen)) < 0)
		return rc;
	uint64_t set = 0, clear = 0;
	if (autosync >= 0)
		*(autosync ? &clear : &set) |= GEOM_RAID3_DEV_NOAUTOSYNC;
	if (failsync >= 0)
		*(failsync ? &clear : &set) |= GEOM_RAID3_DEV_NOFAILSYNC;
	if (rr >= 0)
		*(rr ? &set : &clear) |= GEOM_RAID3_DEV_ROUND_ROBIN;
	if (verify >= 0)
		*(verify ? &set : &clear) |= GEOM_RAID3_DEV_VERIFY;
	if (!(set | clear))
		return errmsg(err, errlen, -EINVAL, "nothing to change");
	return geom_raid3_configure(g, set, clear, err, errlen);
}

static int do_insert(struct uraid_array *a, struct req *r, char *err, size_t errlen)
{
	const char *path = get(r, "member");
	uint64_t prio = 0, number = 0;
	int inactive, rc;
	if (!path)
		return errmsg(err, errlen, -EINVAL, "insert: member=PATH is required");
	if ((rc = get_u64(r, "priority", 255, &prio, err, errlen)) < 0)
		return rc;
	if ((rc = get_u64(r, "number", GEOM_MAX_DISKS, &number, err, errlen)) < 0)
		return rc;
	bool has_number = rc == 1;
	if (get_bool(r, "inactive", &inactive, err, errlen) < 0)
		return -EINVAL;
	if ((rc = unused(r, err, errlen)) < 0)
		return rc;
	struct geom_array *g = geom_class_of(a);
	if (g->mirror && has_number)
		return errmsg(err, errlen, -EINVAL, "insert: number= is for graid3");
	if (g->raid3 && (inactive > 0 || prio))
		return errmsg(err, errlen, -EINVAL,
		              "insert: priority= and inactive= are for gmirror");
	/* The component would be written directly, past the overlays. */
	if (a->flags & URAID_OVERLAY)
		return errmsg(err, errlen, -EROFS,
		              "insert: the array runs on the overlays in %s: a new component "
		              "cannot be inserted under an overlay; stop it first",
		              a->overlay_dir);
	struct member *m;
	char e[256];
	unsigned mf = (a->flags & URAID_DIRECT) ? MEMBER_DIRECT : 0;
	rc = member_open_file(path, mf, 0, &m, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s", e);
	return geom_class_insert(a, m, (int)prio, has_number ? (int)number : -1, inactive > 0, err,
	                         errlen);
}

static int do_remove(struct uraid_array *a, struct req *r, char *err, size_t errlen)
{
	struct geom_array *g = geom_class_of(a);
	uint64_t number = 0;
	int rc = get_u64(r, "number", GEOM_MAX_DISKS, &number, err, errlen);
	if (rc < 0)
		return rc;
	int i = rc == 1 ? (int)number : member_of(a, r, true, err, errlen);
	if (i < 0)
		return i;
	if ((rc = unused(r, err, errlen)) < 0)
		return rc;
	return g->mirror ? geom_mirror_remove(g->mirror, i, err, errlen)
	                 : geom_raid3_remove(g->raid3, i, err, errlen);
}

/* One-member verbs: rebuild, activate, deactivate. */
static int do_disk_verb(struct uraid_array *a, struct req *r, char *err, size_t errlen)
{
	struct geom_array *g = geom_class_of(a);
	int i = member_of(a, r, true, err, errlen);
	if (i < 0)
		return i;
	int rc = unused(r, err, errlen);
	if (rc < 0)
		return rc;
	if (!strcmp(r->verb, "rebuild"))
		return g->mirror ? geom_mirror_rebuild(g->mirror, i, err, errlen)
		                 : geom_raid3_rebuild(g->raid3, i, err, errlen);
	if (!g->mirror)
		return errmsg(err, errlen, -EOPNOTSUPP, "graid3 has no '%s'", r->verb);
	return !strcmp(r->verb, "activate") ? geom_mirror_activate(g->mirror, i, err, errlen)
	                                    : geom_mirror_deactivate(g->mirror, i, err, errlen);
}

int geom_class_ctl(struct uraid_array *a, const char *request, char *err, size_t errlen)
{
	struct geom_array *g = geom_class_of(a);
	struct req *r = malloc(sizeof(*r));
	if (!r)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	geom_class_mgmt(a, true);
	int rc = parse(request, r, err, errlen);
	if (rc < 0)
		goto out;
	if (geom_handle(a)->readonly) {
		rc = errmsg(err, errlen, -EROFS, "array is read-only");
		goto out;
	}
	const char *v = r->verb;
	bool mirror_only = !strcmp(v, "forget") || !strcmp(v, "resize") || !strcmp(v, "destroy") ||
	                   !strcmp(v, "activate") || !strcmp(v, "deactivate");
	if (mirror_only && !g->mirror) {
		rc = errmsg(err, errlen, -EOPNOTSUPP, "graid3 has no '%s'", v);
	} else if (!strcmp(v, "configure")) {
		rc = g->mirror ? mirror_configure(a, g->mirror, r, err, errlen)
		               : raid3_configure(g->raid3, r, err, errlen);
	} else if (!strcmp(v, "rebuild") || !strcmp(v, "activate") || !strcmp(v, "deactivate")) {
		rc = do_disk_verb(a, r, err, errlen);
	} else if (!strcmp(v, "insert")) {
		rc = do_insert(a, r, err, errlen);
	} else if (!strcmp(v, "remove")) {
		rc = do_remove(a, r, err, errlen);
	} else if (!strcmp(v, "forget")) {
		rc = unused(r, err, errlen);
		if (rc == 0)
			rc = geom_mirror_forget(g->mirror, err, errlen);
	} else if (!strcmp(v, "resize")) {
		uint64_t size = 0;
		rc = get_u64(r, "size", UINT64_MAX, &size, err, errlen);
		if (rc >= 0)
			rc = unused(r, err, errlen);
		if (rc == 0)
			rc = geom_mirror_resize(g->mirror, size, err, errlen);
		if (rc == 0)
			geom_class_resized(a);
	} else if (!strcmp(v, "destroy")) {
		rc = unused(r, err, errlen);
		if (rc == 0)
			rc = geom_mirror_destroy(g->mirror, err, errlen);
	} else {
		rc = errmsg(err, errlen, -EINVAL,
		            "unknown verb '%s' (configure, rebuild, insert, remove, activate, "
		            "deactivate, forget, resize, destroy)",
		            v);
	}
	geom_class_wake(a);
out:
	geom_class_mgmt(a, false);
	free(r);
	return rc;
}
