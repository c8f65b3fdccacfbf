/* The configuration file in mdadm.conf's syntax (include/uraid.h): a pure
 * parser from text to struct uraid_config, fuzzed by fuzz/fuzz_config.c.
 * Stricter than mdadm where mdadm only warns: an unknown keyword or tag, a
 * malformed UUID or number is an error naming the file and line, so a typo
 * never silently assembles the wrong array. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uraid.h"
#include "util/errmsg.h"

#define CONFIG_MAX_BYTES  (1u << 20) /* a config file larger than this is refused */
#define CONFIG_MAX_WORDS  4096       /* words in one logical line */
#define CONFIG_MAX_ARRAYS 1024

struct words {
	char **w;
	int n, cap;
};

static void words_clear(struct words *ws)
{
	for (int i = 0; i < ws->n; i++)
		free(ws->w[i]);
	ws->n = 0;
}

static int words_push(struct words *ws, const char *s, size_t len)
{
	if (ws->n >= CONFIG_MAX_WORDS)
		return -E2BIG;
	if (ws->n == ws->cap) {
		int cap = ws->cap ? ws->cap * 2 : 16;
		char **w = realloc(ws->w, (size_t)cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		ws->w = w;
		ws->cap = cap;
	}
	char *c = strndup(s, len);
	if (!c)
		return -ENOMEM;
	ws->w[ws->n++] = c;
	return 0;
}

/* Split one physical line (no newline) into words, appending to ws. A '#'
 * outside quotes ends it; quotes group words with white space. */
static int split_line(const char *s, size_t len, struct words *ws, const char **why)
{
	size_t i = 0;
	char *buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	int rc = 0;
	while (i < len) {
		while (i < len && isspace((unsigned char)s[i]))
			i++;
		if (i >= len || s[i] == '#')
			break;
		size_t o = 0;
		while (i < len && !isspace((unsigned char)s[i]) && s[i] != '#') {
			if (s[i] == '"' || s[i] == '\'') {
				char q = s[i++];
				while (i < len && s[i] != q)
					buf[o++] = s[i++];
				if (i >= len) {
					*why = "unterminated quote";
					rc = -EINVAL;
					goto out;
				}
				i++;
			} else {
				buf[o++] = s[i++];
			}
		}
		rc = words_push(ws, buf, o);
		if (rc < 0) {
			*why = rc == -E2BIG ? "too many words" : "out of memory";
			goto out;
		}
	}
out:
	free(buf);
	return rc;
}

/* KEYWORD matches `kw` when it is at least its first three letters, any case
 * (mdadm's rule). */
static bool keyword_is(const char *word, const char *kw)
{
	size_t l = strlen(word);
	return l >= 3 && l <= strlen(kw) && !strncasecmp(word, kw, l);
}

int uraid_uuid_parse(const char *s, char out[36])
{
	char hex[33];
	int n = 0;
	for (; *s; s++) {
		if (isxdigit((unsigned char)*s)) {
			if (n == 32)
				return -EINVAL;
			hex[n++] = (char)tolower((unsigned char)*s);
		} else if (*s != ':' && *s != '.' && *s != '-' && *s != ' ') {
			return -EINVAL;
		}
	}
	if (n != 32)
		return -EINVAL;
	snprintf(out, 36, "%.8s:%.8s:%.8s:%.8s", hex, hex + 8, hex + 16, hex + 24);
	return 0;
}

static int copy_field(char *dst, size_t cap, const char *src)
{
	if (strlen(src) >= cap)
		return -ENAMETOOLONG;
	strcpy(dst, src);
	return 0;
}

static int parse_count(const char *s, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v > 4096 || !isdigit((unsigned char)*s))
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static int add_globs(char ***list, int *n, const char *csv)
{
	const char *p = csv;
	for (;;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l) {
			if (*n >= CONFIG_MAX_WORDS)
				return -E2BIG;
			char **nl = realloc(*list, (size_t)(*n + 1) * sizeof(**list));
			if (!nl)
				return -ENOMEM;
			*list = nl;
			if (!(nl[*n] = strndup(p, l)))
				return -ENOMEM;
			(*n)++;
		}
		if (!e)
			return 0;
		p = e + 1;
	}
}

/* The uraid name of an ARRAY line: the last part of DEVNAME for /dev/md/X
 * or /dev/mdN (mdN), else name= without the "host:" part. */
static void array_name(struct uraid_config_array *a)
{
	const char *src = NULL;
	if (!strncmp(a->devname, "/dev/md/", 8))
		src = a->devname + 8;
	else if (!strncmp(a->devname, "/dev/", 5))
		src = a->devname + 5;
	else if (a->devname[0] && a->devname[0] != '/' && a->devname[0] != '<')
		src = a->devname;
	if (!src && a->md_name[0]) {
		const char *c = strchr(a->md_name, ':');
		src = c ? c + 1 : a->md_name;
	}
	if (src && strlen(src) < sizeof(a->name) && uraid_name_check(src, NULL, 0) == 0)
		memcpy(a->name, src, strlen(src) + 1);
}

static int parse_array(struct uraid_config *c, struct words *ws, int line, const char **why,
                       char *what, size_t whatlen)
{
	if (c->narrays >= CONFIG_MAX_ARRAYS) {
		*why = "too many ARRAY lines";
		return -EINVAL;
	}
	struct uraid_config_array *na = realloc(c->arrays, (size_t)(c->narrays + 1) * sizeof(*na));
	if (!na) {
		*why = "out of memory";
		return -ENOMEM;
	}
	c->arrays = na;
	struct uraid_config_array *a = &na[c->narrays++];
	memset(a, 0, sizeof(*a));
	a->spares = -1;
	a->line = line;
	int i = 1;
	if (i < ws->n && !strchr(ws->w[i], '=')) {
		if (copy_field(a->devname, sizeof(a->devname), ws->w[i]) < 0) {
			*why = "device name too long";
			return -EINVAL;
		}
		i++;
	}
	for (; i < ws->n; i++) {
		char *w = ws->w[i], *eq = strchr(w, '=');
		if (!eq) {
			snprintf(what, whatlen, "'%s': tag=value expected", w);
			return -EINVAL;
		}
		*eq = 0;
		const char *v = eq + 1;
		int rc = 0;
		if (!strcasecmp(w, "uuid")) {
			rc = uraid_uuid_parse(v, a->uuid);
			if (rc < 0) {
				snprintf(what, whatlen, "UUID '%.100s': 32 hex digits expected", v);
				return rc;
			}
		} else if (!strcasecmp(w, "name")) {
			rc = copy_field(a->md_name, sizeof(a->md_name), v);
		} else if (!strcasecmp(w, "devices")) {
			rc = add_globs(&a->devices, &a->ndevices, v);
		} else if (!strcasecmp(w, "spares")) {
			rc = parse_count(v, &a->spares);
		} else if (!strcasecmp(w, "spare-group") || !strcasecmp(w, "spare_group")) {
			rc = copy_field(a->spare_group, sizeof(a->spare_group), v);
		} else if (!strcasecmp(w, "metadata")) {
			rc = copy_field(a->metadata, sizeof(a->metadata), v);
		} else if (strcasecmp(w, "level") && strcasecmp(w, "num-devices") &&
		           strcasecmp(w, "super-minor") && strcasecmp(w, "auto") &&
		           strcasecmp(w, "bitmap") && strcasecmp(w, "container") &&
		           strcasecmp(w, "member")) {
			snprintf(what, whatlen, "unknown ARRAY tag '%.100s'", w);
			return -EINVAL;
		}
		if (rc < 0) {
			snprintf(what, whatlen, "bad value for %s: '%.100s'", w, v);
			return -EINVAL;
		}
	}
	if (!a->uuid[0] && !a->md_name[0] && !a->ndevices) {
		*why = "ARRAY needs UUID=, name= or devices= to identify its members";
		return -EINVAL;
	}
	array_name(a);
	return 0;
}

static int parse_logical(struct uraid_config *c, struct words *ws, int line, const char **why,
                         char *what, size_t whatlen)
{
	if (ws->n == 0)
		return 0;
	const char *kw = ws->w[0];
	char *one = NULL;
	size_t onelen = 0;
	if (keyword_is(kw, "DEVICE") || keyword_is(kw, "DEVICES")) {
		for (int i = 1; i < ws->n; i++) {
			if (c->ndevice >= CONFIG_MAX_WORDS) {
				*why = "too many DEVICE words";
				return -EINVAL;
			}
			char **nd = realloc(c->device, (size_t)(c->ndevice + 1) * sizeof(*nd));
			if (!nd || !(nd[c->ndevice] = strdup(ws->w[i]))) {
				if (nd)
					c->device = nd;
				*why = "out of memory";
				return -ENOMEM;
			}
			c->device = nd;
			c->ndevice++;
		}
		return 0;
	}
	if (keyword_is(kw, "ARRAY"))
		return parse_array(c, ws, line, why, what, whatlen);
	if (keyword_is(kw, "MAILADDR"))
		one = c->mailaddr, onelen = sizeof(c->mailaddr);
	else if (keyword_is(kw, "MAILFROM"))
		one = c->mailfrom, onelen = sizeof(c->mailfrom);
	else if (keyword_is(kw, "PROGRAM"))
		one = c->program, onelen = sizeof(c->program);
	else if (keyword_is(kw, "HOMEHOST"))
		one = c->homehost, onelen = sizeof(c->homehost);
	else if (keyword_is(kw, "CREATE") || keyword_is(kw, "AUTO") || keyword_is(kw, "POLICY") ||
	         !strcasecmp(kw, "PART-POLICY") || keyword_is(kw, "SYSFS") ||
	         keyword_is(kw, "ENCRYPTION") || keyword_is(kw, "MONITORDELAY"))
		return 0;
	else {
		snprintf(what, whatlen, "unknown keyword '%.100s'", kw);
		return -EINVAL;
	}
	if (ws->n < 2) {
		snprintf(what, whatlen, "%s needs a value", kw);
		return -EINVAL;
	}
	if (keyword_is(kw, "MAILFROM")) {
		/* mailfrom is the rest of the line ("Name <addr>") */
		size_t o = 0;
		for (int i = 1; i < ws->n; i++) {
			size_t l = strlen(ws->w[i]);
			if (o + l + 2 > onelen) {
				*why = "value too long";
				return -EINVAL;
			}
			if (i > 1)
				one[o++] = ' ';
			memcpy(one + o, ws->w[i], l);
			o += l;
		}
		one[o] = 0;
		return 0;
	}
	if (ws->n > 2 && !keyword_is(kw, "MAILADDR")) {
		snprintf(what, whatlen, "%s takes one value, %d given", kw, ws->n - 1);
		return -EINVAL;
	}
	if (copy_field(one, onelen, ws->w[1]) < 0) {
		*why = "value too long";
		return -EINVAL;
	}
	/* MAILADDR a b: mdadm joins several addresses with ", " */
	for (int i = 2; i < ws->n; i++) {
		size_t o = strlen(one), l = strlen(ws->w[i]);
		if (o + l + 3 > onelen) {
			*why = "value too long";
			return -EINVAL;
		}
		memcpy(one + o, ", ", 2);
		memcpy(one + o + 2, ws->w[i], l + 1);
	}
	return 0;
}

int uraid_config_parse(const char *text, size_t len, const char *file, struct uraid_config **out,
                       char *err, size_t errlen)
{
	*out = NULL;
	if (!file)
		file = "(config)";
	if (memchr(text, 0, len))
		return errmsg(err, errlen, -EINVAL, "%s: a NUL byte: not a text file", file);
	struct uraid_config *c = calloc(1, sizeof(*c));
	if (!c)
		return errmsg(err, errlen, -ENOMEM, "%s: out of memory", file);
	snprintf(c->file, sizeof(c->file), "%s", file);
	struct words ws = {0};
	int rc = 0, line = 0, start = 0;
	const char *why = NULL;
	char what[256] = "";
	for (size_t i = 0; i < len && rc == 0; i++) {
		size_t b = i;
		while (i < len && text[i] != '\n')
			i++;
		line++;
		size_t k = b;
		while (k < i && isspace((unsigned char)text[k]))
			k++;
		/* blank and comment lines neither start nor end a logical line */
		if (k == i || text[k] == '#')
			continue;
		if (k == b) { /* not indented: the logical line before is complete */
			rc = parse_logical(c, &ws, start, &why, what, sizeof(what));
			words_clear(&ws);
			if (rc < 0)
				break;
			start = line;
		} else if (ws.n == 0) {
			why = "continuation line without a line to continue";
			start = line;
			rc = -EINVAL;
			break;
		}
		rc = split_line(text + b, i - b, &ws, &why);
		if (rc < 0)
			start = line;
	}
	if (rc == 0)
		rc = parse_logical(c, &ws, start, &why, what, sizeof(what));
	line = start;
	words_clear(&ws);
	free(ws.w);
	if (rc < 0) {
		errmsg(err, errlen, rc == -ENOMEM ? rc : -EINVAL, "%s:%d: %s", file, line,
		       what[0] ? what
		       : why   ? why
		               : strerror(-rc));
		uraid_config_free(c);
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	*out = c;
	return 0;
}

int uraid_config_load(const char *path, struct uraid_config **out, char *err, size_t errlen)
{
	*out = NULL;
	bool given = path != NULL;
	if (!path) {
		const char *e = getenv("URAID_CONFIG");
		if (e && *e) {
			path = e;
			given = true;
		} else {
			path = URAID_CONFIG_DEFAULT;
		}
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT && !given)
			return uraid_config_parse("", 0, path, out, err, errlen);
		return errmsg(err, errlen, -e, "%s: %s", path, strerror(e));
	}
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return errmsg(err, errlen, -EINVAL, "%s: not a regular file", path);
	}
	if (sb.st_size > (off_t)CONFIG_MAX_BYTES) {
		close(fd);
		return errmsg(err, errlen, -EFBIG, "%s: larger than %u bytes", path,
		              CONFIG_MAX_BYTES);
	}
	char *buf = malloc((size_t)sb.st_size + 1);
	if (!buf) {
		close(fd);
		return errmsg(err, errlen, -ENOMEM, "%s: out of memory", path);
	}
	size_t got = 0;
	while (got < (size_t)sb.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	int rc = uraid_config_parse(buf, got, path, out, err, errlen);
	free(buf);
	return rc;
}

void uraid_config_paths_free(char **paths, int n)
{
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

void uraid_config_free(struct uraid_config *c)
{
	if (!c)
		return;
	uraid_config_paths_free(c->device, c->ndevice);
	for (int i = 0; i < c->narrays; i++)
		uraid_config_paths_free(c->arrays[i].devices, c->arrays[i].ndevices);
	free(c->arrays);
	free(c);
}

const struct uraid_config_array *uraid_config_find(const struct uraid_config *c, const char *name)
{
	char uuid[36];
	bool is_uuid = uraid_uuid_parse(name, uuid) == 0;
	for (int i = 0; i < c->narrays; i++) {
		const struct uraid_config_array *a = &c->arrays[i];
		const char *colon = strchr(a->md_name, ':');
		if ((a->name[0] && !strcmp(a->name, name)) ||
		    (a->devname[0] && !strcmp(a->devname, name)) ||
		    (a->md_name[0] && !strcmp(a->md_name, name)) ||
		    (colon && !strcmp(colon + 1, name)) || (is_uuid && !strcmp(a->uuid, uuid)))
			return a;
	}
	return NULL;
}
