/* Disk-model profiles: the built-in table, range checks, and the strict
 * key = value text format for one's own (uraid --disk-model FILE). */
#include "sim/member_sim.h"
#include "util/errmsg.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KIB 1024ull
#define MIB (1024ull * 1024)

/* Figures are typical data-sheet values for the class of drive named in
 * each description. */
static const struct sim_profile builtin[] = {
    {
        .name = "ide-2002",
        .description = "7200 rpm ATA-100 desktop disk of 2002 (Maxtor DiamondMax Plus 9 / IBM "
                       "Deskstar 120GXP class: 8.5 ms average seek, 2 MiB buffer, no command "
                       "queueing); sustained rate set to the ~7 MB/s of the published tables "
                       "the project reproduces",
        .rate_outer_mbs = 7,
        .rate_inner_mbs = 7,
        .rpm = 7200,
        .seek_track_ms = 1.0,
        .seek_avg_ms = 8.5,
        .overhead_us = 300,
        .interface_mbs = 100,
        .cache_segments = 4,
        .segment_bytes = 256 * KIB,
        .write_cache = true,
        .write_cache_bytes = 1 * MIB,
        .queue_depth = 1,
        .channel_disks = 2,
    },
    {
        .name = "sata-7200-2007",
        .description = "7200 rpm SATA 3 Gb/s desktop disk of 2007 (Seagate Barracuda 7200.10 / "
                       "WD Caviar SE16 class, 320 GB: 75 MB/s outer to 40 MB/s inner, 8.5 ms "
                       "average seek, 16 MiB buffer, NCQ)",
        .rate_outer_mbs = 75,
        .rate_inner_mbs = 40,
        .rpm = 7200,
        .seek_track_ms = 0.8,
        .seek_avg_ms = 8.5,
        .overhead_us = 100,
        .interface_mbs = 300,
        .cache_segments = 16,
        .segment_bytes = 512 * KIB,
        .write_cache = true,
        .write_cache_bytes = 8 * MIB,
        .queue_depth = 32,
    },
    {
        .name = "raptor-10k-2008",
        .description = "10,000 rpm SATA 3 Gb/s disk of 2008 (WD VelociRaptor WD3000HLFS class: "
                       "120 MB/s outer to 75 MB/s inner, 4.5 ms average seek, 16 MiB buffer, NCQ)",
        .rate_outer_mbs = 120,
        .rate_inner_mbs = 75,
        .rpm = 10000,
        .seek_track_ms = 0.6,
        .seek_avg_ms = 4.5,
        .overhead_us = 100,
        .interface_mbs = 300,
        .cache_segments = 16,
        .segment_bytes = 512 * KIB,
        .write_cache = true,
        .write_cache_bytes = 8 * MIB,
        .queue_depth = 32,
    },
    {
        .name = "ssd-sata",
        .description = "SATA 6 Gb/s flash SSD (Samsung 850/860 EVO class: ~500 MB/s, ~0.1 ms "
                       "access, DRAM write cache, NCQ)",
        .rate_outer_mbs = 500,
        .rate_inner_mbs = 500,
        .overhead_us = 100,
        .interface_mbs = 600,
        .write_cache = true,
        .write_cache_bytes = 64 * MIB,
        .queue_depth = 32,
    },
    {
        .name = "nvme",
        .description = "PCIe 3.0 x4 NVMe SSD (Samsung 970 EVO class: ~3 GB/s, ~20 us access)",
        .rate_outer_mbs = 3000,
        .rate_inner_mbs = 3000,
        .overhead_us = 20,
        .interface_mbs = 3500,
        .write_cache = true,
        .write_cache_bytes = 256 * MIB,
        .queue_depth = 64,
    },
    /* The disks of ../shared/reference/published/: data-sheet mechanics
     * (rpm, seeks, buffer, interface, capacity); the sustained rates from
     * the data sheet's class and calibrated on the published single-disk
     * rows only (bench reproduce; docs/BENCHMARKS.md). The capacity places
     * a bench member at the disk's outer edge, as a new file system's
     * first files are. */
    {
        .name = "wd2500js",
        .description = "WD Caviar SE WD2500JS (2006): 250 GB, 7200 rpm, SATA 3 Gb/s, 8 MiB "
                       "buffer, 8.9 ms average / 2.0 ms track-to-track seek; sustained "
                       "58 MB/s outer to 32 inner",
        .rate_outer_mbs = 58,
        .rate_inner_mbs = 32,
        .rpm = 7200,
        .seek_track_ms = 2.0,
        .seek_avg_ms = 8.9,
        .overhead_us = 100,
        .interface_mbs = 300,
        .cache_segments = 8,
        .segment_bytes = 512 * KIB,
        .write_cache = true,
        .write_cache_bytes = 4 * MIB,
        .queue_depth = 32,
        .capacity_bytes = 250000ull * 1000 * 1000 / MIB * MIB,
    },
    {
        .name = "wd5000aaks",
        .description = "WD Caviar SE16 WD5000AAKS (2007): 500 GB, 7200 rpm, SATA 3 Gb/s, 16 MiB "
                       "buffer, 8.9 ms average / 2.0 ms track-to-track seek; sustained "
                       "79 MB/s outer to 44 inner",
        .rate_outer_mbs = 79,
        .rate_inner_mbs = 44,
        .rpm = 7200,
        .seek_track_ms = 2.0,
        .seek_avg_ms = 8.9,
        .overhead_us = 100,
        .interface_mbs = 300,
        .cache_segments = 16,
        .segment_bytes = 512 * KIB,
        .write_cache = true,
        .write_cache_bytes = 8 * MIB,
        .queue_depth = 32,
        .capacity_bytes = 500000ull * 1000 * 1000 / MIB * MIB,
    },
    {
        .name = "wd-velociraptor-300",
        .description = "WD VelociRaptor WD3000HLFS (2008): 300 GB, 10,000 rpm, SATA 3 Gb/s, "
                       "16 MiB buffer, 4.2 ms average / 0.75 ms track-to-track seek; sustained "
                       "120 MB/s outer (data sheet) to 80 inner",
        .rate_outer_mbs = 120,
        .rate_inner_mbs = 80,
        .rpm = 10000,
        .seek_track_ms = 0.75,
        .seek_avg_ms = 4.2,
        .overhead_us = 100,
        .interface_mbs = 300,
        .cache_segments = 16,
        .segment_bytes = 512 * KIB,
        .write_cache = true,
        .write_cache_bytes = 8 * MIB,
        .queue_depth = 32,
        .capacity_bytes = 300000ull * 1000 * 1000 / MIB * MIB,
    },
    {
        .name = "wd5001abys",
        .description = "WD RE2 WD5001ABYS (2007): 500 GB, 7200 rpm, SATA 3 Gb/s, 16 MiB buffer, "
                       "8.7 ms average / 0.6 ms track-to-track seek; sustained 87 MB/s outer "
                       "to 47 inner",
        .rate_outer_mbs = 87,
        .rate_inner_mbs = 47,
        .rpm = 7200,
        .seek_track_ms = 0.6,
        .seek_avg_ms = 8.7,
        .overhead_us = 100,
        .interface_mbs = 300,
        .cache_segments = 16,
        .segment_bytes = 512 * KIB,
        .write_cache = true,
        .write_cache_bytes = 8 * MIB,
        .queue_depth = 32,
        .capacity_bytes = 500000ull * 1000 * 1000 / MIB * MIB,
    },
    {
        .name = "ide-7mbs-2002",
        .description = "13 GB IDE disk as in the 2002 linux-xfs RAID5 post (5400 rpm UDMA/33 "
                       "class: about 7 MB/s sustained, 9.5 ms average seek, 512 KiB buffer, no "
                       "command queueing)",
        .rate_outer_mbs = 7.5,
        .rate_inner_mbs = 6,
        .rpm = 5400,
        .seek_track_ms = 1.5,
        .seek_avg_ms = 9.5,
        .overhead_us = 300,
        .interface_mbs = 33,
        .cache_segments = 2,
        .segment_bytes = 128 * KIB,
        .write_cache = true,
        .write_cache_bytes = 256 * KIB,
        .queue_depth = 1,
        .capacity_bytes = 13000ull * 1000 * 1000 / MIB * MIB,
        .channel_disks = 2,
    },
};

#define NBUILTIN (sizeof(builtin) / sizeof(builtin[0]))

static const char *const builtin_names[] = {
    "ide-2002",   "sata-7200-2007",      "raptor-10k-2008", "ssd-sata",      "nvme", "wd2500js",
    "wd5000aaks", "wd-velociraptor-300", "wd5001abys",      "ide-7mbs-2002", NULL};

const struct sim_profile *sim_profile_find(const char *name)
{
	for (size_t i = 0; name && i < NBUILTIN; i++)
		if (strcmp(builtin[i].name, name) == 0)
			return &builtin[i];
	errno = ENOENT;
	return NULL;
}

const char *const *sim_profile_names(void)
{
	return builtin_names;
}

/* One table drives parsing, range checks and formatting. */
enum key_kind { K_DOUBLE, K_U64, K_UINT, K_BOOL, K_NAME, K_TEXT };

struct key_def {
	const char *key;
	enum key_kind kind;
	size_t off;
	double min, max; /* in the file's unit */
	double unit;     /* bytes per file unit for K_U64 */
};

/* Positions in keys[] the parser treats specially: rate_mbs sets both. */
enum { KEY_RATE_OUTER = 2, KEY_RATE_INNER = 3 };

#define F(field) offsetof(struct sim_profile, field)
static const struct key_def keys[] = {
    {"name", K_NAME, F(name), 0, 0, 0},
    {"description", K_TEXT, F(description), 0, 0, 0},
    [KEY_RATE_OUTER] = {"rate_outer_mbs", K_DOUBLE, F(rate_outer_mbs), 0.001, 1e6, 0},
    [KEY_RATE_INNER] = {"rate_inner_mbs", K_DOUBLE, F(rate_inner_mbs), 0.001, 1e6, 0},
    {"rpm", K_DOUBLE, F(rpm), 0, 100000, 0},
    {"seek_track_ms", K_DOUBLE, F(seek_track_ms), 0, 1000, 0},
    {"seek_avg_ms", K_DOUBLE, F(seek_avg_ms), 0, 1000, 0},
    {"overhead_us", K_DOUBLE, F(overhead_us), 0, 1e6, 0},
    {"interface_mbs", K_DOUBLE, F(interface_mbs), 0.001, 1e6, 0},
    {"cache_segments", K_UINT, F(cache_segments), 0, 4096, 0},
    {"segment_kib", K_U64, F(segment_bytes), 0, 1024.0 * 1024, 1024},
    {"write_cache", K_BOOL, F(write_cache), 0, 0, 0},
    {"write_cache_kib", K_U64, F(write_cache_bytes), 0, 64.0 * 1024 * 1024, 1024},
    {"queue_depth", K_UINT, F(queue_depth), 1, 4096, 0},
    {"capacity_mib", K_U64, F(capacity_bytes), 0, 1024.0 * 1024 * 1024 * 16, 1024 * 1024},
    {"channel_disks", K_UINT, F(channel_disks), 0, 16, 0},
};
#undef F
#define NKEYS (sizeof(keys) / sizeof(keys[0]))
/* The parser's settings that are not fields: indices into its seen[]. */
#define SEEN_BASE     NKEYS
#define SEEN_RATE_MBS (NKEYS + 1)

static bool name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
			return false;
	return true;
}

/* The value of a numeric key in the file's unit. */
static double key_value(const struct sim_profile *p, const struct key_def *k)
{
	const char *base = (const char *)p + k->off;
	double d;
	unsigned u;
	uint64_t v;
	switch (k->kind) {
	case K_DOUBLE: memcpy(&d, base, sizeof(d)); return d;
	case K_UINT: memcpy(&u, base, sizeof(u)); return u;
	case K_U64: memcpy(&v, base, sizeof(v)); return (double)v / k->unit;
	default: return 0;
	}
}

int sim_profile_check(const struct sim_profile *p, char *err, size_t errlen)
{
	if (!p)
		return errmsg(err, errlen, -EINVAL, "no disk model");
	if (!name_ok(p->name))
		return errmsg(
		    err, errlen, -EINVAL,
		    "disk model name '%s' must be non-empty letters, digits, '-', '_', '.'",
		    p->name);
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key_def *k = &keys[i];
		if (k->kind != K_DOUBLE && k->kind != K_UINT && k->kind != K_U64)
			continue;
		double v = key_value(p, k);
		if (!(v >= k->min && v <= k->max))
			return errmsg(err, errlen, -EINVAL, "%s: %s = %g is outside %g..%g",
			              p->name, k->key, v, k->min, k->max);
		if (k->kind == K_U64 &&
		    *(const uint64_t *)((const char *)p + k->off) % (uint64_t)k->unit)
			return errmsg(err, errlen, -EINVAL, "%s: %s is not a whole number of %s",
			              p->name, k->key, k->unit == 1024 ? "KiB" : "MiB");
	}
	if (p->rpm != 0 && (p->rpm < 1000 || p->rpm > 30000))
		return errmsg(err, errlen, -EINVAL,
		              "%s: rpm = %g: use 0 (no platter) or 1000..30000", p->name, p->rpm);
	if (p->seek_track_ms > p->seek_avg_ms)
		return errmsg(err, errlen, -EINVAL,
		              "%s: seek_track_ms = %g is longer than seek_avg_ms = %g", p->name,
		              p->seek_track_ms, p->seek_avg_ms);
	if (p->cache_segments && p->segment_bytes < 4096)
		return errmsg(err, errlen, -EINVAL,
		              "%s: cache_segments = %u needs segment_kib of at least 4", p->name,
		              p->cache_segments);
	if (p->write_cache && p->write_cache_bytes < 4096)
		return errmsg(err, errlen, -EINVAL,
		              "%s: write_cache = on needs write_cache_kib >= 4", p->name);
	return 0;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

/* Strict numbers: decimal, the whole value, finite. */
static int parse_number(const char *v, double *out)
{
	if (!*v || strpbrk(v, "xXpP") || isspace((unsigned char)*v))
		return -1;
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (*end || errno || !isfinite(d))
		return -1;
	*out = d;
	return 0;
}

/* Set k's field from text `v`; messages call the key `shown` (what the file
 * said: rate_mbs sets rate_outer_mbs). */
static int set_key(struct sim_profile *p, const struct key_def *k, const char *shown, const char *v,
                   const char *where, char *err, size_t errlen)
{
	char *base = (char *)p + k->off;
	double d;
	switch (k->kind) {
	case K_NAME:
	case K_TEXT: {
		size_t cap = k->kind == K_NAME ? SIM_NAME_MAX : SIM_DESC_MAX;
		if (strlen(v) >= cap)
			return errmsg(err, errlen, -EINVAL, "%s: %s is longer than %zu characters",
			              where, shown, cap - 1);
		if (k->kind == K_NAME && !name_ok(v))
			return errmsg(err, errlen, -EINVAL,
			              "%s: name '%s' must be letters, digits, '-', '_', '.'", where,
			              v);
		memcpy(base, v, strlen(v) + 1);
		return 0;
	}
	case K_BOOL:
		if (strcmp(v, "on") == 0 || strcmp(v, "yes") == 0 || strcmp(v, "1") == 0)
			*(bool *)base = true;
		else if (strcmp(v, "off") == 0 || strcmp(v, "no") == 0 || strcmp(v, "0") == 0)
			*(bool *)base = false;
		else
			return errmsg(err, errlen, -EINVAL, "%s: %s = '%s': expected on or off",
			              where, shown, v);
		return 0;
	default: break;
	}
	if (parse_number(v, &d) < 0)
		return errmsg(err, errlen, -EINVAL, "%s: %s = '%s' is not a number", where, shown,
		              v);
	if (d < k->min || d > k->max)
		return errmsg(err, errlen, -EINVAL, "%s: %s = %s is outside %g..%g", where, shown,
		              v, k->min, k->max);
	if (k->kind == K_DOUBLE) {
		memcpy(base, &d, sizeof(d));
		return 0;
	}
	if (d != floor(d))
		return errmsg(err, errlen, -EINVAL, "%s: %s = %s is not a whole number", where,
		              shown, v);
	if (k->kind == K_UINT)
		*(unsigned *)base = (unsigned)d;
	else
		*(uint64_t *)base = (uint64_t)d * (uint64_t)k->unit;
	return 0;
}

int sim_profile_parse(const char *text, const char *origin, struct sim_profile *out, char *err,
                      size_t errlen)
{
	if (!text || !out)
		return errmsg(err, errlen, -EINVAL, "no disk model text");
	if (!origin)
		origin = "disk model";
	struct sim_profile p = {.name = "custom", .queue_depth = 1, .interface_mbs = 0};
	bool seen[SEEN_RATE_MBS + 1] = {false};
	bool any = false, have_rate = false;
	unsigned lineno = 0;
	const char *s = text;
	while (*s) {
		lineno++;
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		char line[1024], where[300];
		snprintf(where, sizeof(where), "%s:%u", origin, lineno);
		if (n >= sizeof(line))
			return errmsg(err, errlen, -EINVAL, "%s: line longer than %zu characters",
			              where, sizeof(line) - 1);
		memcpy(line, s, n);
		line[n] = 0;
		s += n + (nl ? 1 : 0);
		if (memchr(line, 0, n))
			return errmsg(err, errlen, -EINVAL, "%s: NUL byte in the line", where);
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char *l = trim(line);
		if (!*l)
			continue;
		char *eq = strchr(l, '=');
		if (!eq)
			return errmsg(err, errlen, -EINVAL, "%s: expected key = value, got '%s'",
			              where, l);
		*eq = 0;
		char *key = trim(l), *val = trim(eq + 1);
		if (!*val)
			return errmsg(err, errlen, -EINVAL, "%s: %s has no value", where, key);
		int rc = 0;
		size_t idx;
		if (strcmp(key, "base") == 0) {
			idx = SEEN_BASE;
			if (any)
				return errmsg(err, errlen, -EINVAL,
				              "%s: base must come before any other setting", where);
			const struct sim_profile *b = sim_profile_find(val);
			if (!b)
				return errmsg(err, errlen, -EINVAL,
				              "%s: base '%s' is not a built-in "
				              "disk model",
				              where, val);
			p = *b;
			have_rate = true;
		} else if (strcmp(key, "rate_mbs") == 0) {
			idx = SEEN_RATE_MBS;
			rc = set_key(&p, &keys[KEY_RATE_OUTER], key, val, where, err, errlen);
			p.rate_inner_mbs = p.rate_outer_mbs;
			have_rate = true;
		} else {
			for (idx = 0; idx < NKEYS; idx++)
				if (strcmp(keys[idx].key, key) == 0)
					break;
			if (idx == NKEYS)
				return errmsg(err, errlen, -EINVAL, "%s: unknown key '%s'", where,
				              key);
			rc = set_key(&p, &keys[idx], key, val, where, err, errlen);
			if (idx == KEY_RATE_OUTER)
				have_rate = true;
		}
		if (rc < 0)
			return rc;
		bool rate_key = idx == KEY_RATE_OUTER || idx == KEY_RATE_INNER;
		if (seen[idx] ||
		    (idx == SEEN_RATE_MBS && (seen[KEY_RATE_OUTER] || seen[KEY_RATE_INNER])) ||
		    (rate_key && seen[SEEN_RATE_MBS]))
			return errmsg(err, errlen, -EINVAL, "%s: %s set twice", where, key);
		seen[idx] = true;
		any = true;
	}
	if (!have_rate)
		return errmsg(err, errlen, -EINVAL, "%s: no rate_mbs (or rate_outer_mbs) given",
		              origin);
	/* An unzoned custom disk needs only one rate. */
	if (seen[KEY_RATE_OUTER] && !seen[KEY_RATE_INNER] && !seen[SEEN_BASE])
		p.rate_inner_mbs = p.rate_outer_mbs;
	if (p.interface_mbs == 0)
		p.interface_mbs = p.rate_outer_mbs;
	char why[400];
	int rc = sim_profile_check(&p, why, sizeof(why));
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s: %s", origin, why);
	*out = p;
	return 0;
}

int sim_profile_parse_file(const char *path, struct sim_profile *out, char *err, size_t errlen)
{
	if (!path)
		return errmsg(err, errlen, -EINVAL, "no disk model file");
	FILE *f = fopen(path, "r");
	if (!f)
		return errmsg(err, errlen, -errno, "%s: %s", path, strerror(errno));
	/* Disk models are a few hundred bytes; anything huge is not one. */
	enum { MAX_MODEL = 64 * 1024 };
	char *buf = malloc(MAX_MODEL + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	size_t n = fread(buf, 1, MAX_MODEL + 1, f);
	int rd_err = ferror(f);
	fclose(f);
	int rc;
	if (rd_err)
		rc = errmsg(err, errlen, -EIO, "%s: read error", path);
	else if (n > MAX_MODEL)
		rc = errmsg(err, errlen, -EFBIG, "%s: larger than %d bytes: not a disk model", path,
		            MAX_MODEL);
	else if (memchr(buf, 0, n))
		rc = errmsg(err, errlen, -EINVAL, "%s: contains NUL bytes: not a disk model", path);
	else {
		buf[n] = 0;
		rc = sim_profile_parse(buf, path, out, err, errlen);
	}
	free(buf);
	return rc;
}

/* "ide-2002, sata-7200-2007, ..." for messages, cut short if `len` is. */
static void join_builtin_names(char *buf, size_t len)
{
	size_t used = 0;
	for (size_t i = 0; i < NBUILTIN; i++) {
		const char *sep = i ? ", " : "";
		size_t need = strlen(sep) + strlen(builtin[i].name);
		if (used + need >= len)
			break;
		memcpy(buf + used, sep, strlen(sep));
		memcpy(buf + used + strlen(sep), builtin[i].name, strlen(builtin[i].name));
		used += need;
	}
	buf[used] = 0;
}

int sim_profile_load(const char *name_or_path, struct sim_profile *out, char *err, size_t errlen)
{
	if (!name_or_path || !out)
		return errmsg(err, errlen, -EINVAL, "no disk model given");
	const struct sim_profile *b = sim_profile_find(name_or_path);
	if (b) {
		*out = *b;
		return 0;
	}
	/* A bare word that is no built-in is more likely a typo than a file. */
	if (!strchr(name_or_path, '/') && access(name_or_path, F_OK) != 0) {
		char names[NBUILTIN * (SIM_NAME_MAX + 2)];
		join_builtin_names(names, sizeof(names));
		return errmsg(err, errlen, -ENOENT,
		              "disk model '%s' is neither a built-in (%s) nor a file", name_or_path,
		              names);
	}
	return sim_profile_parse_file(name_or_path, out, err, errlen);
}

int sim_profile_format(const struct sim_profile *p, char *buf, size_t len)
{
	if (!p || (!buf && len))
		return -EINVAL;
	size_t used = 0;
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key_def *k = &keys[i];
		const char *base = (const char *)p + k->off;
		char line[SIM_DESC_MAX + 64];
		switch (k->kind) {
		case K_NAME:
		case K_TEXT: snprintf(line, sizeof(line), "%s = %s\n", k->key, base); break;
		case K_BOOL:
			snprintf(line, sizeof(line), "%s = %s\n", k->key,
			         *(const bool *)base ? "on" : "off");
			break;
		default: snprintf(line, sizeof(line), "%s = %.15g\n", k->key, key_value(p, k));
		}
		size_t n = strlen(line);
		if (used + n < len)
			memcpy(buf + used, line, n + 1);
		used += n;
	}
	if (used >= len)
		return -ENOSPC;
	return (int)used;
}
