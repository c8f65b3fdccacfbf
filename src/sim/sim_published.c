/* Parser of published measurement files (sim_published.h). Line based:
 * "# title", "## section" headings, bullets and prose searched for the
 * hardware and tunables the simulator models, markdown tables of figures,
 * and the list of configurations a "withheld" section names. */
#include "sim/sim_published.h"
#include "util/errmsg.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TEXT (1u << 20)

/* Disks the simulator has profiles for: a word of the hardware line. */
static const struct {
	const char *word, *profile;
} known_disks[] = {
    {"WD2500JS", "wd2500js"},
    {"WD5000AAKS", "wd5000aaks"},
    {"VelociRaptor", "wd-velociraptor-300"},
    {"WD5001ABYS", "wd5001abys"},
    {"IDE disks of about 7 MB/s", "ide-7mbs-2002"},
};

/* Controllers whose shared rate is known: the Intel 965 chipset's on-board
 * SATA (ICH8 behind DMI) moves about 680 MB/s in all. */
static const struct {
	const char *word;
	double mbs;
} known_buses[] = {
    {"965 chipset", 680},
};

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

/* The integer right after `key` in `line` (spaces skipped); -1 if none. */
static long after(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	if (!p)
		return -1;
	p += strlen(key);
	while (*p == ' ')
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	char *e;
	long v = strtol(p, &e, 10);
	return v >= 0 && v < 100000000 ? v : -1;
}

/* "N = a..b" in the line: a and b. */
static bool range(const char *line, int *a, int *b)
{
	const char *p = strstr(line, "N = ");
	if (!p)
		return false;
	char *e;
	long x = strtol(p + 4, &e, 10);
	if (e == p + 4 || strncmp(e, "..", 2))
		return false;
	const char *q = e + 2;
	long y = strtol(q, &e, 10);
	if (e == q || x < 1 || y < x || y > 64)
		return false;
	*a = (int)x;
	*b = (int)y;
	return true;
}

static void hardware_line(struct sp_table *t, const char *line)
{
	long n;
	for (size_t k = 0; k < sizeof(known_disks) / sizeof(known_disks[0]); k++) {
		const char *w = strstr(line, known_disks[k].word);
		if (!w || t->ndisks >= SP_MAX_DISKS)
			continue;
		/* "3 x ...": the count, the last one before the disk's name */
		long cnt = -1;
		for (const char *p = line; p < w; p++) {
			size_t d = strspn(p, "0123456789");
			if (d && (p == line || !isdigit((unsigned char)p[-1])) &&
			    !strncmp(p + d, " x ", 3))
				cnt = strtol(p, NULL, 10);
		}
		if (cnt < 1 || cnt > 64)
			continue;
		/* the capacity, "250 GB": the label configurations use */
		const char *gb = strstr(line, " GB");
		const char *s = gb;
		while (s && s > line && isdigit((unsigned char)s[-1]))
			s--;
		struct sp_disk *d = &t->disks[t->ndisks++];
		memset(d, 0, sizeof(*d));
		d->count = (int)cnt;
		snprintf(d->profile, sizeof(d->profile), "%s", known_disks[k].profile);
		if (gb && s < gb && gb - s < (long)sizeof(d->label))
			memcpy(d->label, s, (size_t)(gb - s));
		break;
	}
	for (size_t k = 0; k < sizeof(known_buses) / sizeof(known_buses[0]); k++)
		if (strstr(line, known_buses[k].word))
			t->bus_mbs = known_buses[k].mbs;
	if (strstr(line, "FreeBSD"))
		t->freebsd = true;
	/* vfs.read_max counts file system blocks (UFS2: 16 KiB) */
	if ((n = after(line, "vfs.read_max=")) > 0)
		t->readahead = (uint64_t)n * 16384;
	/* blockdev --setra counts 512-byte sectors */
	if ((n = after(line, "--setra")) > 0)
		t->readahead = (uint64_t)n * 512;
	if (strstr(line, "stripe_cache_size") && (n = after(line, "echo")) >= 0)
		t->stripe_cache = (int)n;
	if (strstr(line, "NCQ off") || strstr(line, "queue_depth` = 1"))
		t->queue_depth = 1;
	if ((n = after(line, "--level=")) >= 0)
		t->level = (int)n;
	if (strstr(line, "mdadm") && (n = after(line, " -c")) > 0 && n <= 65536)
		t->chunk = (uint32_t)n * 1024;
	range(line, &t->nmin, &t->nmax); /* members: "-n N ..., N = 3..10" */
	if (strstr(line, "RAID5") && t->level < 0)
		t->level = 5;
}

/* Split a table line "| a | b |" into cells (in place). */
static int cells(char *line, char **out, int max)
{
	int n = 0;
	char *p = strchr(line, '|');
	if (!p)
		return 0;
	p++;
	for (;;) {
		char *bar = strchr(p, '|');
		if (!bar)
			break;
		*bar = 0;
		if (n >= max)
			return -1;
		out[n++] = trim(p);
		p = bar + 1;
	}
	return n;
}

static int number(const char *s, double *v)
{
	if (!strcmp(s, "n/a") || !strcmp(s, "-")) {
		*v = -1;
		return 0;
	}
	char *e;
	*v = strtod(s, &e);
	if (e == s || *e || !(*v >= 0 && *v < 1e9))
		return -1;
	return 0;
}

struct table_state {
	bool in, header_done;
	int ncells;                /* cells of the heading */
	int keep[SP_MAX_COLS + 1]; /* heading cell -> kept column, -1 */
	bool first_table_done;
};

static int table_line(struct sp_table *t, struct table_state *ts, char *line, unsigned ln,
                      char *err, size_t errlen)
{
	/* the row's name, then at most SP_MAX_COLS figures (keep[]'s size) */
	char *c[SP_MAX_COLS + 1];
	int n = cells(line, c, SP_MAX_COLS + 1);
	if (n < 0)
		return errmsg(err, errlen, -EINVAL, "%u: a table of more than %d columns", ln,
		              SP_MAX_COLS + 1);
	if (n == 0)
		return 0;
	if (!ts->in) {
		/* a heading: which columns the simulator can give */
		ts->in = true;
		ts->header_done = false;
		ts->ncells = n;
		if (ts->first_table_done)
			return 0; /* one table of figures per file is used */
		for (int i = 1; i < n; i++) {
			char *e;
			long s = strtol(c[i], &e, 10);
			ts->keep[i] = -1;
			enum sp_col kind;
			if (e != c[i] && !*e && s >= 1 && s <= 64)
				kind = SP_COL_STREAMS;
			else if (strstr(c[i], "MB/s") && strstr(c[i], "write") &&
			         !strstr(c[i], "untar") && !strstr(c[i], "copy"))
				kind = SP_COL_SEQWRITE;
			else if (strstr(c[i], "MB/s") && strstr(c[i], "read"))
				kind = SP_COL_SEQREAD;
			else
				continue;
			ts->keep[i] = t->ncols;
			t->col[t->ncols] = kind;
			t->streams[t->ncols] = kind == SP_COL_STREAMS ? (int)s : 1;
			t->ncols++;
		}
		return 0;
	}
	if (!ts->header_done) {
		ts->header_done = true;
		if (strspn(c[0], "-:") == strlen(c[0]))
			return 0; /* |---|---| */
	}
	if (ts->first_table_done)
		return 0;
	if (n > ts->ncells)
		return errmsg(err, errlen, -EINVAL, "%u: %d cells in a table of %d columns", ln, n,
		              ts->ncells);
	if (t->ncols == 0)
		return 0;
	if (t->nrows >= SP_MAX_ROWS)
		return errmsg(err, errlen, -EINVAL, "%u: more than %d table rows", ln, SP_MAX_ROWS);
	struct sp_row *r = &t->rows[t->nrows];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", c[0]);
	for (int k = 0; k < SP_MAX_COLS; k++)
		r->v[k] = -1;
	for (int i = 1; i < n; i++) {
		if (ts->keep[i] < 0)
			continue;
		if (number(c[i], &r->v[ts->keep[i]]) < 0)
			return errmsg(err, errlen, -EINVAL, "%u: '%s' is not a figure", ln, c[i]);
	}
	if (!r->name[0])
		return errmsg(err, errlen, -EINVAL, "%u: a table row without a name", ln);
	t->nrows++;
	return 0;
}

static void add_withheld(struct sp_table *t, const char *name)
{
	if (t->nwithheld >= SP_MAX_ROWS || !*name)
		return;
	snprintf(t->withheld[t->nwithheld++], SP_NAME_MAX, "%s", name);
}

/* One ';'-separated item: "graid3 3x250 with and without `-r`" gives two;
 * "gmirror split 128k 3x250, 2x250" gives one per disk spec, with the
 * words before the first spec. */
static void withheld_item(struct sp_table *t, char *item)
{
	item = trim(item);
	size_t n = strlen(item);
	while (n && item[n - 1] == '.')
		item[--n] = 0;
	const char *both = " with and without `-r`";
	char *w = strstr(item, both);
	if (w) {
		memmove(w, w + strlen(both), strlen(w + strlen(both)) + 1);
		char r[SP_NAME_MAX];
		add_withheld(t, trim(item));
		snprintf(r, sizeof(r), "%.*s -r", SP_NAME_MAX - 4, trim(item));
		add_withheld(t, r);
		return;
	}
	char *comma = strchr(item, ',');
	if (!comma) {
		add_withheld(t, item);
		return;
	}
	*comma = 0;
	char *first = trim(item), *sp = strrchr(first, ' ');
	char prefix[64] = "";
	if (sp && sp - first < (long)sizeof(prefix))
		snprintf(prefix, sizeof(prefix), "%.*s", (int)(sp - first), first);
	add_withheld(t, first);
	for (char *p = comma + 1; p;) {
		char *next = strchr(p, ',');
		if (next)
			*next++ = 0;
		char name[SP_NAME_MAX];
		snprintf(name, sizeof(name), "%s%s%.60s", prefix, prefix[0] ? " " : "", trim(p));
		add_withheld(t, name);
		p = next;
	}
}

static void withheld_list(struct sp_table *t, char *text)
{
	char *colon = strchr(text, ':');
	if (!colon)
		return;
	for (char *p = colon + 1; p;) {
		char *semi = strchr(p, ';');
		if (semi)
			*semi++ = 0;
		withheld_item(t, p);
		p = semi;
	}
}

int sp_parse(const char *text, size_t len, struct sp_table *t, char *err, size_t errlen)
{
	if (!text || !t)
		return errmsg(err, errlen, -EINVAL, "no text");
	if (len > MAX_TEXT)
		return errmsg(err, errlen, -EFBIG, "larger than %u bytes: not a published table",
		              MAX_TEXT);
	memset(t, 0, sizeof(*t));
	t->stripe_cache = -1;
	t->level = -1;
	char *buf = malloc(len + 1);
	char *list = calloc(1, 4096);
	if (!buf || !list) {
		free(buf);
		free(list);
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	}
	memcpy(buf, text, len);
	buf[len] = 0;
	for (size_t i = 0; i < len; i++)
		if (!buf[i])
			buf[i] = ' ';
	enum { S_NONE, S_HW, S_WL, S_WITHHELD, S_OTHER } sec = S_NONE;
	struct table_state ts = {0};
	bool listing = false;
	unsigned ln = 0;
	int rc = 0;
	for (char *line = buf; line && rc == 0; ln++) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char *l = trim(line);
		line = nl ? nl + 1 : NULL;
		if (ts.in && l[0] != '|') {
			ts.in = false;
			if (t->ncols)
				ts.first_table_done = true;
		}
		if (!strncmp(l, "## ", 3)) {
			listing = false;
			sec = strstr(l, "ardware")    ? S_HW
			      : strstr(l, "orkload")  ? S_WL
			      : strstr(l, "withheld") ? S_WITHHELD
			                              : S_OTHER;
			if (sec == S_WL && strstr(l, "ardware"))
				sec = S_HW;
			continue;
		}
		if (!strncmp(l, "# ", 2) && !t->title[0]) {
			snprintf(t->title, sizeof(t->title), "%s", trim(l + 2));
			continue;
		}
		if (l[0] == '|') {
			rc = table_line(t, &ts, l, ln + 1, err, errlen);
			continue;
		}
		if (sec == S_HW || sec == S_NONE)
			hardware_line(t, l);
		if (sec == S_WL) {
			range(l, &t->smin, &t->smax);
			if (strstr(l, "write") && !strstr(l, "/dev/null"))
				t->write = true;
			if (strstr(l, "RAID5") && t->level < 0)
				t->level = 5;
		}
		if (strstr(l, "RAID5") && t->level < 0)
			t->level = 5;
		if (sec == S_WITHHELD) {
			if (strstr(l, "configurations") && strchr(l, ':'))
				listing = true;
			if (listing && (!*l || !strncmp(l, "The author", 10))) {
				listing = false;
				withheld_list(t, list);
				list[0] = 0;
			} else if (listing) {
				size_t have = strlen(list);
				snprintf(list + have, 4096 - have, "%s%s", have ? " " : "", l);
			}
		}
	}
	if (rc == 0 && listing)
		withheld_list(t, list);
	free(list);
	free(buf);
	if (rc == 0 && !t->title[0])
		rc = errmsg(err, errlen, -EINVAL, "no '# title' line: not a published table");
	return rc;
}

int sp_config_disks(const struct sp_table *t, const char *name, const char **out, int max)
{
	/* the first word of the form NxLABEL[/NxLABEL...] */
	const char *p = name;
	for (; *p; p++) {
		size_t d = strspn(p, "0123456789");
		if (d && p[d] == 'x' && (p == name || p[-1] == ' '))
			break;
	}
	if (!*p)
		return -EINVAL;
	int n = 0;
	while (*p && *p != ' ' && *p != '(') {
		char *e;
		long cnt = strtol(p, &e, 10);
		if (e == p || *e != 'x' || cnt < 1 || cnt > 32)
			return -EINVAL;
		p = e + 1;
		size_t l = strcspn(p, "/ (");
		int found = -1;
		for (int k = 0; k < t->ndisks; k++)
			if (strlen(t->disks[k].label) == l && !strncmp(t->disks[k].label, p, l))
				found = k;
		if (found < 0)
			return -EINVAL;
		for (long i = 0; i < cnt; i++) {
			if (n >= max)
				return -EINVAL;
			out[n++] = t->disks[found].profile;
		}
		p += l;
		if (*p == '/')
			p++;
	}
	return n;
}
