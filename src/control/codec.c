/* Text encodings of the control protocol (see uraid.h): struct uraid_status
 * and struct uraid_io_stats as versioned "key=value" lines, and the
 * %-escaping of names and request arguments. Decoding checks every field
 * (syntax, range, length, duplicates) and names the first problem. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uraid.h"
#include "util/errmsg.h"

#define STATUS_MAGIC "uraid-status"
#define STATS_MAGIC  "uraid-stats"
#define FORMAT_MAJOR 1

/* Field kinds and the table both directions use. */
enum fk { F_U64, F_U32, F_INT, F_BOOL, F_ACTION, F_STR };

struct field {
	const char *key;
	size_t off;
	enum fk kind;
	size_t size; /* F_STR: buffer size (value + NUL) */
};

#define SF(k, kind)                                                                               \
	{                                                                                         \
#k, offsetof(struct uraid_status, k), kind, sizeof(((struct uraid_status *)0)->k) \
	}
static const struct field status_fields[] = {
    SF(name, F_STR),
    SF(uuid, F_STR),
    SF(level, F_INT),
    SF(layout, F_U32),
    SF(chunk_sectors, F_U32),
    SF(raid_disks, F_INT),
    SF(metadata, F_INT),
    SF(array_sectors, F_U64),
    SF(dev_sectors, F_U64),
    SF(events, F_U64),
    SF(ctime, F_U64),
    SF(utime, F_U64),
    SF(md_minor, F_INT),
    SF(readonly, F_BOOL),
    SF(clean, F_BOOL),
    SF(broken, F_BOOL),
    SF(working, F_INT),
    SF(failed, F_INT),
    SF(spares, F_INT),
    SF(degraded, F_INT),
    SF(sync_action, F_ACTION),
    SF(sync_done, F_U64),
    SF(sync_total, F_U64),
    SF(sync_speed_kibs, F_U64),
    SF(mismatch_cnt, F_U64),
    SF(stripe_cache_size, F_U32),
    SF(bitmap_chunk_kib, F_U32),
    SF(bitmap_chunks, F_U64),
    SF(bitmap_dirty, F_U64),
    SF(bitmap_pages, F_U32),
    SF(bitmap_pages_used, F_U32),
    SF(block_bytes, F_U32),
    SF(geom_balance, F_INT),
    SF(geom_slice, F_U32),
    SF(geom_flags, F_U64),
    SF(geom_genid, F_U32),
    SF(geom_syncid, F_U32),
    SF(geom_parity_errors, F_U64),
    SF(journal, F_INT),
    SF(journal_name, F_STR),
    SF(journal_dev_number, F_U32),
    SF(journal_mode, F_INT),
    SF(journal_cached, F_U64),
    SF(ppl, F_INT),
    SF(ppl_recovered, F_U64),
    SF(ppl_mismatches, F_U64),
    SF(overlay, F_STR),
    SF(reshape, F_INT),
    SF(reshape_position, F_U64),
    SF(reshape_delta_disks, F_INT),
    SF(reshape_new_layout, F_U32),
    SF(reshape_new_chunk_sectors, F_U32),
    SF(auto_readonly, F_BOOL),
    SF(frozen, F_BOOL),
    SF(resync_pending, F_BOOL),
    SF(sync_speed_min, F_U64),
    SF(sync_speed_max, F_U64),
    SF(discard_safe, F_BOOL),
    SF(sync_window_sectors, F_U64),
    SF(sync_window_secs, F_U32),
};
#define NSF (sizeof(status_fields) / sizeof(status_fields[0]))

#define IF(k, kind)                                           \
	{                                                     \
#k, offsetof(struct uraid_io_stats, k), kind, \
		    sizeof(((struct uraid_io_stats *)0)->k)   \
	}
static const struct field stats_fields[] = {
    IF(member_reads, F_U64),      IF(member_writes, F_U64),
    IF(member_read_bytes, F_U64), IF(member_write_bytes, F_U64),
    IF(sc_size, F_U32),           IF(sc_used, F_U32),
    IF(sc_write_sectors, F_U64),  IF(sc_read_hit_sectors, F_U64),
    IF(sc_full_runs, F_U64),      IF(sc_rmw_runs, F_U64),
    IF(sc_rcw_runs, F_U64),       IF(sc_evicted, F_U64),
    IF(sc_idle, F_U64),           IF(sc_reads_direct, F_U64),
    IF(sc_reads_writeout, F_U64),
};
#define NIF (sizeof(stats_fields) / sizeof(stats_fields[0]))

static const char *const action_names[] = {"idle",  "resync", "recover",
                                           "check", "repair", "reshape"};
static const char *const state_names[] = {"in_sync",    "faulty", "missing", "spare",
                                          "rebuilding", "stale",  "inactive"};
#define NSTATES    (int)(sizeof(state_names) / sizeof(state_names[0]))
#define NACTIONS   (sizeof(action_names) / sizeof(action_names[0]))
#define MAX_FIELDS 96 /* decode()'s duplicate tracking */
_Static_assert(sizeof(status_fields) / sizeof(status_fields[0]) <= MAX_FIELDS, "seen[] too small");

/* ---- escaping ---------------------------------------------------------- */

static bool plain(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != '%';
}

size_t uraid_ctl_escape(const char *s, char *out, size_t outlen)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char e[3] = {(char)*p, 0, 0};
		size_t k = 1;
		if (!plain(*p)) {
			e[0] = '%';
			e[1] = hex[*p >> 4];
			e[2] = hex[*p & 15];
			k = 3;
		}
		for (size_t i = 0; i < k; i++, n++)
			if (n + 1 < outlen)
				out[n] = e[i];
	}
	if (outlen)
		out[n < outlen ? n : outlen - 1] = 0;
	return n;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int uraid_ctl_unescape(const char *s, size_t len, char *out, size_t outlen)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '%') {
			int h = i + 2 < len ? hexval(s[i + 1]) : -1;
			int l = h >= 0 ? hexval(s[i + 2]) : -1;
			if (l < 0)
				return -EINVAL; /* '%' without two hex digits */
			c = (unsigned char)(h << 4 | l);
			if (c == 0)
				return -EINVAL;
			i += 2;
		} else if (!plain(c)) {
			return -EINVAL;
		}
		if (n + 1 >= outlen)
			return -ENAMETOOLONG;
		out[n++] = (char)c;
	}
	if (outlen == 0)
		return -ENAMETOOLONG;
	out[n] = 0;
	return (int)n;
}

/* ---- encoding ---------------------------------------------------------- */

struct sbuf {
	char *p;
	size_t len, n;
};

static void put(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(b->n < b->len ? b->p + b->n : NULL, b->n < b->len ? b->len - b->n : 0,
	                  fmt, ap);
	va_end(ap);
	if (k > 0)
		b->n += (size_t)k;
}

static void put_fields(struct sbuf *b, const struct field *f, size_t nf, const void *obj)
{
	const char *base = obj;
	for (size_t i = 0; i < nf; i++) {
		const void *v = base + f[i].off;
		switch (f[i].kind) {
		case F_U64: put(b, "%s=%" PRIu64 "\n", f[i].key, *(const uint64_t *)v); break;
		case F_U32: put(b, "%s=%" PRIu32 "\n", f[i].key, *(const uint32_t *)v); break;
		case F_INT: put(b, "%s=%d\n", f[i].key, *(const int *)v); break;
		case F_BOOL: put(b, "%s=%d\n", f[i].key, *(const bool *)v ? 1 : 0); break;
		case F_ACTION: {
			unsigned a = (unsigned)*(const enum uraid_sync_action *)v;
			put(b, "%s=%s\n", f[i].key, a < NACTIONS ? action_names[a] : "idle");
			break;
		}
		case F_STR: {
			char e[3 * URAID_OVERLAY_DIR_MAX + 1];
			/* the value may lack a NUL within its buffer: bound it */
			char tmp[URAID_OVERLAY_DIR_MAX];
			size_t l = strnlen(v, f[i].size);
			if (l >= sizeof(tmp))
				l = sizeof(tmp) - 1;
			memcpy(tmp, v, l);
			tmp[l] = 0;
			uraid_ctl_escape(tmp, e, sizeof(e));
			put(b, "%s=%s\n", f[i].key, e);
			break;
		}
		}
	}
}

int uraid_status_encode(const struct uraid_status *st, char *buf, size_t len)
{
	struct sbuf b = {buf, len, 0};
	put(&b, "%s %d\n", STATUS_MAGIC, FORMAT_MAJOR);
	put_fields(&b, status_fields, NSF, st);
	int nm = st->nmembers < 0                          ? 0
	         : st->nmembers > URAID_STATUS_MAX_MEMBERS ? URAID_STATUS_MAX_MEMBERS
	                                                   : st->nmembers;
	for (int i = 0; i < nm; i++) {
		const struct uraid_member_status *m = &st->members[i];
		char name[sizeof(m->name)], e[3 * sizeof(m->name) + 1];
		memcpy(name, m->name, sizeof(name));
		name[sizeof(name) - 1] = 0;
		uraid_ctl_escape(name[0] ? name : "?", e, sizeof(e));
		unsigned s = (unsigned)m->state;
		put(&b, "member=%d %" PRIu32 " %s %" PRIu64 " %d %u %" PRIu32 " %s\n", m->role,
		    m->dev_number, s < (unsigned)NSTATES ? state_names[s] : "missing",
		    m->recovery_offset, m->priority, m->flags, m->order, e);
	}
	put(&b, "end\n");
	if (b.n >= len)
		return -ENOSPC;
	return (int)b.n;
}

int uraid_io_stats_encode(const struct uraid_io_stats *st, char *buf, size_t len)
{
	struct sbuf b = {buf, len, 0};
	put(&b, "%s %d\n", STATS_MAGIC, FORMAT_MAJOR);
	put_fields(&b, stats_fields, NIF, st);
	put(&b, "end\n");
	if (b.n >= len)
		return -ENOSPC;
	return (int)b.n;
}

/* ---- decoding ---------------------------------------------------------- */

static int parse_num(const char *s, size_t len, bool neg_ok, uint64_t max, int64_t *out)
{
	bool neg = len > 0 && s[0] == '-' && neg_ok;
	size_t i = neg;
	if (i == len || len - i > 20)
		return -EINVAL;
	uint64_t v = 0;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		uint64_t d = (uint64_t)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (neg ? v > (uint64_t)INT32_MAX + 1 : v > max)
		return -ERANGE;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

static int name_index(const char *const *names, int n, const char *s, size_t len)
{
	for (int i = 0; i < n; i++)
		if (strlen(names[i]) == len && !memcmp(names[i], s, len))
			return i;
	return -1;
}

static int set_field(const struct field *f, void *obj, const char *v, size_t vlen, char *err,
                     size_t errlen)
{
	char *dst = (char *)obj + f->off;
	int64_t x = 0;
	int rc = 0;
	switch (f->kind) {
	case F_U64:
		rc = parse_num(v, vlen, false, UINT64_MAX, &x);
		if (rc == 0)
			*(uint64_t *)dst = (uint64_t)x;
		break;
	case F_U32:
		rc = parse_num(v, vlen, false, UINT32_MAX, &x);
		if (rc == 0)
			*(uint32_t *)dst = (uint32_t)x;
		break;
	case F_INT:
		rc = parse_num(v, vlen, true, INT32_MAX, &x);
		if (rc == 0)
			*(int *)dst = (int)x;
		break;
	case F_BOOL:
		rc = vlen == 1 && (v[0] == '0' || v[0] == '1') ? 0 : -EINVAL;
		if (rc == 0)
			*(bool *)dst = v[0] == '1';
		break;
	case F_ACTION: {
		int a = name_index(action_names, NACTIONS, v, vlen);
		rc = a < 0 ? -EINVAL : 0;
		if (rc == 0)
			*(enum uraid_sync_action *)dst = (enum uraid_sync_action)a;
		break;
	}
	case F_STR: rc = uraid_ctl_unescape(v, vlen, dst, f->size) < 0 ? -EINVAL : 0; break;
	}
	if (rc < 0)
		return errmsg(err, errlen, -EPROTO, "bad value for '%s': '%.*s'", f->key,
		              (int)(vlen > 64 ? 64 : vlen), v);
	return 0;
}

/* member=ROLE DEV_NUMBER STATE RECOVERY_OFFSET [PRIORITY [FLAGS [ORDER [...]]]] NAME: the
 * name (escaped, no spaces) is always last; fields between the known ones
 * and the name are a newer writer's and are skipped. */
static int set_member(struct uraid_member_status *m, const char *v, size_t vlen, char *err,
                      size_t errlen)
{
	const char *tok[16];
	size_t tl[16];
	int nt = 0;
	bool bad = false;
	for (size_t i = 0; i < vlen && !bad;) {
		const char *sp = memchr(v + i, ' ', vlen - i);
		size_t e = sp ? (size_t)(sp - v) : vlen;
		/* empty fields (double or trailing spaces) and too many fields */
		bad = e == i || nt == 16 || (sp && e + 1 == vlen);
		tok[nt < 16 ? nt : 15] = v + i;
		tl[nt < 16 ? nt : 15] = e - i;
		nt++;
		i = e + 1;
	}
	if (!bad && nt < 5)
		return errmsg(err, errlen, -EPROTO, "member line with fewer than 5 fields");
	int64_t role = 0, dev = 0, off = 0, prio = 0, flags = 0, order = 0;
	int st = bad ? -1 : name_index(state_names, NSTATES, tok[2], tl[2]);
	if (bad || parse_num(tok[0], tl[0], true, INT32_MAX, &role) < 0 || role < -1 ||
	    parse_num(tok[1], tl[1], false, UINT32_MAX, &dev) < 0 || st < 0 ||
	    parse_num(tok[3], tl[3], false, UINT64_MAX, &off) < 0 ||
	    (nt >= 6 && parse_num(tok[4], tl[4], true, INT32_MAX, &prio) < 0) ||
	    (nt >= 7 && parse_num(tok[5], tl[5], false, UINT32_MAX, &flags) < 0) ||
	    (nt >= 8 && parse_num(tok[6], tl[6], false, UINT32_MAX, &order) < 0) ||
	    uraid_ctl_unescape(tok[nt - 1], tl[nt - 1], m->name, sizeof(m->name)) < 1)
		return errmsg(err, errlen, -EPROTO, "bad member line '%.*s'",
		              (int)(vlen > 80 ? 80 : vlen), v);
	m->role = (int)role;
	m->dev_number = (uint32_t)dev;
	m->state = (enum uraid_member_state)st;
	m->recovery_offset = (uint64_t)off;
	m->priority = (int)prio;
	m->flags = (unsigned)flags;
	m->order = (uint32_t)order;
	return 0;
}

/* The shared loop: magic line, key=value lines, "end". member lines go to
 * st_members when given. */
static int decode(const char *text, size_t len, const char *magic, const struct field *f, size_t nf,
                  void *obj, struct uraid_status *st_members, char *err, size_t errlen)
{
	bool seen[MAX_FIELDS] = {0};
	if (memchr(text, 0, len))
		return errmsg(err, errlen, -EPROTO, "NUL byte in the %s reply", magic);
	size_t pos = 0, lineno = 0;
	bool ended = false;
	while (pos < len) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		if (!nl)
			return errmsg(err, errlen, -EPROTO, "%s reply: line %zu is not terminated",
			              magic, lineno + 1);
		size_t ll = (size_t)(nl - line);
		pos += ll + 1;
		lineno++;
		if (ended)
			return errmsg(err, errlen, -EPROTO, "%s reply: data after 'end'", magic);
		if (lineno == 1) {
			size_t ml = strlen(magic);
			int64_t ver;
			if (ll <= ml + 1 || memcmp(line, magic, ml) || line[ml] != ' ' ||
			    parse_num(line + ml + 1, ll - ml - 1, false, 1000000, &ver) < 0)
				return errmsg(err, errlen, -EPROTO,
				              "not a %s reply (first line '%.*s')", magic,
				              (int)(ll > 40 ? 40 : ll), line);
			if (ver != FORMAT_MAJOR)
				return errmsg(
				    err, errlen, -EPROTO,
				    "%s format version %lld is not understood (this build "
				    "reads version %d): update uraid",
				    magic, (long long)ver, FORMAT_MAJOR);
			continue;
		}
		if (ll == 3 && !memcmp(line, "end", 3)) {
			ended = true;
			continue;
		}
		const char *eq = memchr(line, '=', ll);
		if (!eq || eq == line)
			return errmsg(err, errlen, -EPROTO, "%s reply: line %zu is not key=value",
			              magic, lineno);
		size_t kl = (size_t)(eq - line), vl = ll - kl - 1;
		const char *v = eq + 1;
		if (st_members && kl == 6 && !memcmp(line, "member", 6)) {
			if (st_members->nmembers >= URAID_STATUS_MAX_MEMBERS)
				return errmsg(err, errlen, -EPROTO, "more than %d members",
				              URAID_STATUS_MAX_MEMBERS);
			int rc = set_member(&st_members->members[st_members->nmembers], v, vl, err,
			                    errlen);
			if (rc < 0)
				return rc;
			st_members->nmembers++;
			continue;
		}
		size_t i;
		for (i = 0; i < nf; i++)
			if (strlen(f[i].key) == kl && !memcmp(f[i].key, line, kl))
				break;
		if (i == nf)
			continue; /* a newer server's field: ignored */
		if (seen[i])
			return errmsg(err, errlen, -EPROTO, "%s reply: '%s' given twice", magic,
			              f[i].key);
		seen[i] = true;
		int rc = set_field(&f[i], obj, v, vl, err, errlen);
		if (rc < 0)
			return rc;
	}
	if (lineno == 0)
		return errmsg(err, errlen, -EPROTO, "empty %s reply", magic);
	if (!ended)
		return errmsg(err, errlen, -EPROTO, "%s reply is truncated (no 'end' line)", magic);
	return 0;
}

int uraid_status_decode(const char *text, size_t len, struct uraid_status *st, char *err,
                        size_t errlen)
{
	memset(st, 0, sizeof(*st));
	int rc = decode(text, len, STATUS_MAGIC, status_fields, NSF, st, st, err, errlen);
	if (rc == 0 && (st->raid_disks < 0 || st->raid_disks > URAID_STATUS_MAX_MEMBERS * 4))
		rc = errmsg(err, errlen, -EPROTO, "raid_disks %d out of range", st->raid_disks);
	if (rc < 0)
		memset(st, 0, sizeof(*st));
	return rc;
}

int uraid_io_stats_decode(const char *text, size_t len, struct uraid_io_stats *st, char *err,
                          size_t errlen)
{
	memset(st, 0, sizeof(*st));
	int rc = decode(text, len, STATS_MAGIC, stats_fields, NIF, st, NULL, err, errlen);
	if (rc < 0)
		memset(st, 0, sizeof(*st));
	return rc;
}
