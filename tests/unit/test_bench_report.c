/* The report writers of `uraid bench` (src/bench/bench_report.c and
 * bench_svg.c, compiled into this test: the bench is not part of liburaid)
 * on rows made here, so every path is reached whatever the engine supports:
 * rows without a figure ("n/a (stripe cache not supported)") in every
 * format, and line charts whose points are checked against the values
 * (one polyline per config, one point per x, higher values drawn higher,
 * x in ascending order). */
#include "../harness.h"

#include "../../src/bench/bench_report.c"
#include "../../src/bench/bench_svg.c"

#include <math.h>
#include <unistd.h>

static const char *NA = "n/a (stripe cache not supported)";

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static int count(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static struct bw_result row(const char *config, int level, int members, const char *wl, double v)
{
	struct bw_result r;
	memset(&r, 0, sizeof(r));
	snprintf(r.config, sizeof(r.config), "%s", config);
	r.level = level;
	r.members = members;
	r.chunk = 65536;
	r.stripe_cache = -1;
	snprintf(r.layout, sizeof(r.layout), "ls");
	snprintf(r.workload, sizeof(r.workload), "%s", wl);
	r.value = v;
	r.unit = "MB/s";
	r.repeats = 1;
	return r;
}

static struct bw_result na_row(const char *config, int members, const char *wl)
{
	struct bw_result r = row(config, 5, members, wl, 0);
	r.stripe_cache = 256;
	r.unit = "-";
	snprintf(r.note, sizeof(r.note), "%s", NA);
	return r;
}

static void tmpdir(char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/uraid-test-report.XXXXXX");
	CHECK(mkdtemp(buf) != NULL);
}

/* --bitmap / --journal sweeps: the policy is the last CSV column and a
 * JSON field; rows of sweeps without the dimension have neither. */
static void consistency_field(void)
{
	struct bw_result r[2] = {row("raid5[64,ls,jwb]x4", 5, 4, "randrw-qd16", 900),
	                         row("raid5[64,ls]x4", 5, 4, "randrw-qd16", 300)};
	snprintf(r[0].consistency, sizeof(r[0].consistency), "journal-wb");
	char dir[64], path[128];
	tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/r.csv", dir);
	CHECK(bw_report_csv(path, r, 2) == 0);
	char *s = slurp(path);
	CHECK(s && strstr(s, "\"raid5[64,ls,jwb]x4\",5,4,64,"));
	CHECK(s && strstr(s, ",\"\",journal-wb\n\"raid5[64,ls]x4\","));
	CHECK(s && count(s, "journal-wb") == 1);
	CHECK(s && strlen(s) > 2 && !strcmp(s + strlen(s) - 5, ",\"\",\n"));
	snprintf(path, sizeof(path), "%s/r.json", dir);
	CHECK(bw_report_json(path, r, 2) == 0);
	s = slurp(path);
	CHECK(s && count(s, "\"consistency\": \"journal-wb\"}") == 1);
	CHECK(s && count(s, "\"consistency\"") == 1);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* n/a rows: the note where the value goes, in every format. */
static void na_rows(void)
{
	struct bw_result r[3] = {row("raid5[64,ls,sc0]x4", 5, 4, "seqread", 123.4),
	                         na_row("raid5[64,ls,sc256]x4", 4, "seqread"),
	                         row("raid0[64]x4", 0, 4, "seqread", 200)};
	r[0].stripe_cache = 0;
	char dir[64], path[128];
	tmpdir(dir, sizeof(dir));

	snprintf(path, sizeof(path), "%s/table", dir);
	FILE *f = fopen(path, "w");
	bw_report_table(f, r, 3);
	bw_report_chart(f, r, 3);
	fclose(f);
	char *s = slurp(path);
	CHECK(s && count(s, NA) == 2); /* table row and chart line */
	CHECK(s && strstr(s, "raid5[64,ls,sc256]x4   seqread          n/a (stripe cache"));
	CHECK(s && strstr(s, "  raid5[64,ls,sc256]x4 | n/a (stripe cache not supported)\n"));
	CHECK(s && strstr(s, "123.4 MB/s"));

	snprintf(path, sizeof(path), "%s/r.csv", dir);
	CHECK(bw_report_csv(path, r, 3) == 0);
	s = slurp(path);
	CHECK(s && strstr(s, "config,level,members,chunk_kib,layout,stripe_cache,workload,value,"
	                     "unit,spread,finish_spread,latency_us,ratio,bytes,requested,"
	                     "repeats,note,consistency\n"));
	CHECK(s && strstr(s, "\"raid5[64,ls,sc256]x4\",5,4,64,ls,256,seqread,,-,"));
	CHECK(s && strstr(s, ",1,\"n/a (stripe cache not supported)\",\n"));
	CHECK(s && strstr(s, "\"raid5[64,ls,sc0]x4\",5,4,64,ls,0,seqread,123.400,MB/s,"));
	CHECK(s && strstr(s, "\"raid0[64]x4\",0,4,64,ls,,seqread,200.000,")); /* no cache: empty */
	CHECK(s && count(s, "\n") == 4);

	snprintf(path, sizeof(path), "%s/r.json", dir);
	CHECK(bw_report_json(path, r, 3) == 0);
	s = slurp(path);
	CHECK(s && strstr(s, "\"stripe_cache\": 256, \"workload\": \"seqread\", \"value\": null"));
	CHECK(s && strstr(s, "\"note\": \"n/a (stripe cache not supported)\"}"));
	CHECK(s && count(s, "\"note\"") == 1);
	CHECK(s &&
	      strstr(s, "\"stripe_cache\": null, \"workload\": \"seqread\", \"value\": 200.000"));

	/* one member count: a bar chart, a bar per figure, the note instead of
	 * a bar for the n/a row */
	CHECK(bw_report_svg(dir, "t", r, 3) == 1);
	snprintf(path, sizeof(path), "%s/seqread.svg", dir);
	s = slurp(path);
	CHECK(s && count(s, "class=\"bar\"") == 2);
	CHECK(s && count(s, "<text class=\"na\"") == 1 && strstr(s, NA));
	CHECK(s && count(s, "<polyline") == 0);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* Points "x,y x,y ..." of the polyline whose data-config is `name`. */
static int points(const char *svg, const char *name, double *x, double *y, int max)
{
	char key[96];
	snprintf(key, sizeof(key), "<polyline class=\"series\" data-config=\"%s\"", name);
	const char *p = strstr(svg, key);
	if (!p)
		return -1;
	p = strstr(p, "points=\"");
	if (!p)
		return -1;
	p += 8;
	int n = 0;
	while (*p != '"' && n < max) {
		char *e;
		x[n] = strtod(p, &e);
		if (*e != ',')
			return -1;
		y[n++] = strtod(e + 1, &e);
		p = *e == ' ' ? e + 1 : e;
	}
	return n;
}

/* Members 3..6 (raid6 from 4), a baseline and an all-n/a config: a line
 * chart with one polyline per config that has figures. */
static void member_lines(void)
{
	struct bw_result r[32];
	int n = 0;
	double v5[] = {300, 410, 520, 530}, v6[] = {280, 350, 360};
	r[n++] = row("baseline", -2, 1, "seqwrite", 100);
	for (int m = 3; m <= 6; m++) {
		char c[48];
		snprintf(c, sizeof(c), "raid5[64,ls]x%d", m);
		r[n++] = row(c, 5, m, "seqwrite", v5[m - 3]);
		if (m >= 4) {
			snprintf(c, sizeof(c), "raid6[64,ls]x%d", m);
			r[n++] = row(c, 6, m, "seqwrite", v6[m - 4]);
		}
		snprintf(c, sizeof(c), "raid5[64,ls,sc256]x%d", m);
		r[n++] = na_row(c, m, "seqwrite");
	}
	char dir[64], path[128];
	tmpdir(dir, sizeof(dir));
	CHECK(bw_report_svg(dir, "members & <chart>", r, n) == 1);
	snprintf(path, sizeof(path), "%s/seqwrite.svg", dir);
	char *s = slurp(path);
	CHECK(s != NULL);
	if (!s)
		return;
	CHECK(count(s, "<polyline") == 2);
	CHECK(count(s, "class=\"bar\"") == 0);
	CHECK(strstr(s, "members &amp; &lt;chart&gt;") != NULL); /* escaped title */
	CHECK(strstr(s, "class=\"xlabel\"") && strstr(s, ">members</text>"));
	CHECK(strstr(s, "class=\"ylabel\"") && strstr(s, ">MB/s</text>"));
	CHECK(count(s, "class=\"xtick\"") == 4);
	CHECK(count(s, "class=\"ytick\"") >= 3);
	CHECK(count(s, "class=\"baseline\"") == 1);
	CHECK(count(s, "class=\"legend\"") == 4); /* baseline, raid5, raid6, n/a config */
	CHECK(strstr(s, "raid5[64,ls,sc256]: n/a (stripe cache not supported)") != NULL);
	double x[8], y[8];
	CHECK(points(s, "raid5[64,ls]", x, y, 8) == 4);
	for (int i = 1; i < 4; i++) {
		CHECK(x[i] > x[i - 1]);
		/* SVG y grows downwards: a larger value is drawn higher */
		CHECK(y[i] < y[i - 1]);
	}
	/* values are proportional: (y0 - y) scales with the value */
	double x6[8], y6[8];
	CHECK(points(s, "raid6[64,ls]", x6, y6, 8) == 3);
	CHECK(x6[0] == x[1] && x6[2] == x[3]); /* same x for the same member count */
	double zero = y[0] + (y[1] - y[0]) * (0 - v5[0]) / (v5[1] - v5[0]);
	for (int i = 0; i < 3; i++)
		CHECKF(fabs((zero - y6[i]) / (zero - y[1]) - v6[i] / v5[1]) < 0.01,
		       "raid6 point %d at y %.1f", i, y6[i]);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* readers=1..3: one "readers" line chart (no per-reader bar charts), a line
 * per config including the baseline; seqread beside it stays a bar chart. */
static void reader_lines(void)
{
	struct bw_result r[32];
	int n = 0;
	const char *cfg[] = {"baseline", "raid0[64]x4", "raid1x2"};
	for (int c = 0; c < 3; c++) {
		r[n++] = row(cfg[c], c == 0 ? -2 : c == 1 ? 0 : 1, c == 0 ? 1 : 4, "seqread", 50);
		for (int k = 1; k <= 3; k++) {
			char wl[24];
			snprintf(wl, sizeof(wl), "readers=%d", k);
			r[n++] = row(cfg[c], c == 0 ? -2 : 0, 4, wl, 10.0 * (c + 1) * k);
		}
	}
	char dir[64], path[128];
	tmpdir(dir, sizeof(dir));
	CHECK(bw_report_svg(dir, "t", r, n) == 2);
	snprintf(path, sizeof(path), "%s/readers.svg", dir);
	char *s = slurp(path);
	CHECK(s && count(s, "<polyline") == 3);
	CHECK(s && strstr(s, ">concurrent readers</text>"));
	double x[8], y[8];
	for (int c = 0; s && c < 3; c++) {
		CHECK(points(s, cfg[c], x, y, 8) == 3);
		CHECK(x[0] < x[1] && x[1] < x[2] && y[0] > y[1] && y[1] > y[2]);
	}
	snprintf(path, sizeof(path), "%s/readers_1.svg", dir);
	CHECK(access(path, F_OK) != 0);
	snprintf(path, sizeof(path), "%s/seqread.svg", dir);
	s = slurp(path);
	CHECK(s && count(s, "class=\"bar\"") == 3);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* Tick steps are 1, 2 or 5 times a power of ten and cover the maximum in
 * about five steps. */
static void ticks(void)
{
	double maxes[] = {0.37, 1, 7.5, 42, 99.9, 100, 101, 680, 5394.2, 123456};
	for (size_t i = 0; i < sizeof(maxes) / sizeof(maxes[0]); i++) {
		double s = nice_step(maxes[i]);
		double m = s;
		while (m >= 10)
			m /= 10;
		while (m < 1)
			m *= 10;
		CHECKF(fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 5) < 1e-9,
		       "step %g for %g", s, maxes[i]);
		CHECKF(maxes[i] / s >= 2 && maxes[i] / s <= 5.0001, "step %g for %g", s, maxes[i]);
	}
}

TEST_MAIN(T(na_rows), T(consistency_field), T(member_lines), T(reader_lines), T(ticks))
