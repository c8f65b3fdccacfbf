/* SVG charts of `uraid bench` sweeps, written with plain stdio: a bar chart
 * per workload, or line charts when a sweep varies the member count or the
 * number of concurrent readers (see bw_report_svg in bench_workloads.h).
 * Elements carry classes (bar, series, point, axis, xtick, ytick, xlabel,
 * ylabel, legend, baseline, na) so tests and scripts can read them back. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_workloads.h"

#define SVG_MAX_SERIES 1024 /* a full issue-#6 sweep has ~300 configurations */
#define SVG_MAX_POINTS 32

/* Line colours, then the same with dashes when a chart has more series. */
static const char *const palette[] = {"#4a7ebb", "#d0543c", "#5aa469", "#7b5ea7", "#d08c34",
                                      "#2a9d9f", "#b5487f", "#6b6b6b", "#9a8a1e", "#1f3f7a"};
#define NPALETTE (int)(sizeof(palette) / sizeof(palette[0]))

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

/* File name from a chart name: letters, digits, '-' kept, others '_'. */
static void file_name(char *buf, size_t len, const char *dir, const char *name)
{
	char safe[64];
	size_t k = 0;
	for (; *name && k + 1 < sizeof(safe); name++)
		safe[k++] =
		    (*name >= 'a' && *name <= 'z') || (*name >= '0' && *name <= '9') || *name == '-'
		        ? *name
		        : '_';
	safe[k] = 0;
	snprintf(buf, len, "%s/%s.svg", dir, safe);
}

/* The subtitle (the command line) wrapped at spaces to lines of at most
 * `max` characters; returns the number of lines, and with f != NULL writes
 * them as <text> elements from y = 38, 16 px apart. */
static int subtitle(FILE *f, const char *title, int max)
{
	int lines = 0;
	const char *p = title;
	while (*p) {
		size_t n = strlen(p);
		if (n > (size_t)max) {
			n = (size_t)max;
			while (n > 0 && p[n] != ' ')
				n--;
			if (n == 0) /* one word longer than a line: cut it */
				n = (size_t)max;
		}
		if (f) {
			char line[1100];
			snprintf(line, sizeof(line), "%.*s", (int)n, p);
			fprintf(f, "<text class=\"subtitle\" x=\"10\" y=\"%d\" fill=\"#555\">",
			        38 + lines * 16);
			xml_text(f, line);
			fprintf(f, "</text>\n");
		}
		lines++;
		p += n;
		while (*p == ' ')
			p++;
	}
	return lines ? lines : 1;
}

/* Extra height the subtitle takes beyond its first line. */
static int subtitle_extra(const char *title, int w)
{
	return (subtitle(NULL, title, (w - 20) / 7) - 1) * 16;
}

static void svg_head(FILE *f, int w, int h, const char *name, const char *unit, const char *title)
{
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	        "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
	        w, h, w, h);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", w, h);
	fprintf(f, "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">");
	xml_text(f, name);
	fprintf(f, " (");
	xml_text(f, unit);
	fprintf(f, ")</text>\n");
	subtitle(f, title, (w - 20) / 7);
}

static const char *level_colour(int level)
{
	return level == 5    ? "#4a7ebb"
	       : level == 6  ? "#7b5ea7"
	       : level == 1  ? "#5aa469"
	       : level == 10 ? "#d08c34"
	                     : "#888888";
}

static int svg_bars(const char *path, const char *title, const char *wl, const struct bw_result *r,
                    int n)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	int bars = 0;
	double max = 0;
	const char *unit = "";
	for (int i = 0; i < n; i++)
		if (!strcmp(r[i].workload, wl)) {
			bars++;
			if (r[i].note[0])
				continue;
			max = r[i].value > max ? r[i].value : max;
			max = r[i].repeats > 1 && r[i].hi > max ? r[i].hi : max;
			unit = r[i].unit;
		}
	const int left = 190, barw = 480, bh = 20, gap = 6, w = left + barw + 110;
	const int top = 56 + subtitle_extra(title, w);
	int h = top + bars * (bh + gap) + 30;
	svg_head(f, w, h, wl, unit, title);
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(r[i].workload, wl))
			continue;
		int y = top + k++ * (bh + gap);
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 8, y + bh - 6);
		xml_text(f, r[i].config);
		fprintf(f, "</text>\n");
		if (r[i].note[0]) {
			fprintf(f, "<text class=\"na\" x=\"%d\" y=\"%d\" fill=\"#a00\">", left + 6,
			        y + bh - 6);
			xml_text(f, r[i].note);
			fprintf(f, "</text>\n");
			continue;
		}
		double bw = max > 0 ? r[i].value / max * barw : 0;
		fprintf(f,
		        "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
		        "fill=\"%s\"/>\n",
		        left, y, bw, bh, level_colour(r[i].level));
		double tx = left + bw + 6;
		if (r[i].repeats > 1 && r[i].hi > r[i].lo && max > 0) {
			/* min-max of the repeats across the bar's end (the median) */
			double a = left + r[i].lo / max * barw, b = left + r[i].hi / max * barw;
			fprintf(f,
			        "<path class=\"spread\" stroke=\"#222\" stroke-width=\"1\" "
			        "d=\"M%.1f %dH%.1fM%.1f %dv8M%.1f %dv8\"/>\n",
			        a, y + bh / 2, b, a, y + bh / 2 - 4, b, y + bh / 2 - 4);
			tx = (b > left + bw ? b : left + bw) + 6;
			fprintf(f, "<text x=\"%.1f\" y=\"%d\">%.1f (%.1f-%.1f)</text>\n", tx,
			        y + bh - 6, r[i].value, r[i].lo, r[i].hi);
		} else {
			fprintf(f, "<text x=\"%.1f\" y=\"%d\">%.1f</text>\n", tx, y + bh - 6,
			        r[i].value);
		}
	}
	fprintf(f, "</svg>\n");
	return fclose(f) ? -errno : 0;
}

/* ---- line charts ---- */

struct series {
	char name[48];
	char note[48]; /* every point n/a: why */
	int level;
	int npts;
	double x[SVG_MAX_POINTS], y[SVG_MAX_POINTS];
	double lo[SVG_MAX_POINTS], hi[SVG_MAX_POINTS]; /* min-max of repeats; lo == hi: one */
};

struct lines {
	const char *xlabel, *unit;
	struct series s[SVG_MAX_SERIES];
	int ns;
	double xs[SVG_MAX_POINTS]; /* distinct x values, ascending */
	int nx;
	bool has_ref; /* the one-member baseline, drawn as a level */
	double ref;
};

/* "raid5[64,ls]x4" -> "raid5[64,ls]" when it ends in x<members>. */
static void strip_members(char *out, size_t len, const struct bw_result *r)
{
	char suffix[16];
	snprintf(suffix, sizeof(suffix), "x%d", r->members);
	size_t cl = strlen(r->config), sl = strlen(suffix);
	if (cl > sl && !strcmp(r->config + cl - sl, suffix))
		snprintf(out, len, "%.*s", (int)(cl - sl), r->config);
	else
		snprintf(out, len, "%s", r->config);
}

static void add_x(struct lines *L, double x)
{
	for (int i = 0; i < L->nx; i++)
		if (L->xs[i] == x)
			return;
	if (L->nx == SVG_MAX_POINTS)
		return;
	int i = L->nx++;
	while (i > 0 && L->xs[i - 1] > x) {
		L->xs[i] = L->xs[i - 1];
		i--;
	}
	L->xs[i] = x;
}

static void add_point(struct lines *L, const char *name, const struct bw_result *r, double x)
{
	struct series *s = NULL;
	for (int i = 0; i < L->ns && !s; i++)
		if (!strcmp(L->s[i].name, name))
			s = &L->s[i];
	if (!s) {
		if (L->ns == SVG_MAX_SERIES)
			return;
		s = &L->s[L->ns++];
		snprintf(s->name, sizeof(s->name), "%s", name);
		s->level = r->level;
	}
	if (r->note[0]) {
		snprintf(s->note, sizeof(s->note), "%s", r->note);
		return;
	}
	if (s->npts == SVG_MAX_POINTS)
		return;
	s->x[s->npts] = x;
	bool spread = r->repeats > 1 && r->hi > r->lo;
	s->lo[s->npts] = spread ? r->lo : r->value;
	s->hi[s->npts] = spread ? r->hi : r->value;
	s->y[s->npts++] = r->value;
	add_x(L, x);
	if (!L->unit || !strcmp(L->unit, "-"))
		L->unit = r->unit;
}

/* Tick step for [0, max]: 1, 2 or 5 times a power of ten, about 5 ticks.
 * Loops instead of log10/pow: the charts need nothing beyond libc. */
static double nice_step(double max)
{
	if (max <= 0)
		return 1;
	double p = 1;
	while (p * 10 <= max / 5)
		p *= 10;
	while (p > max / 5)
		p /= 10;
	static const double m[] = {1, 2, 5, 10};
	for (int i = 0; i < 4; i++)
		if (p * m[i] >= max / 5)
			return p * m[i];
	return p * 10;
}

static void sort_points(struct series *s)
{
	for (int i = 1; i < s->npts; i++)
		for (int j = i; j > 0 && s->x[j - 1] > s->x[j]; j--) {
			double tx = s->x[j], ty = s->y[j], tl = s->lo[j], th = s->hi[j];
			s->x[j] = s->x[j - 1], s->y[j] = s->y[j - 1];
			s->lo[j] = s->lo[j - 1], s->hi[j] = s->hi[j - 1];
			s->x[j - 1] = tx, s->y[j - 1] = ty, s->lo[j - 1] = tl, s->hi[j - 1] = th;
		}
}

static int svg_lines(const char *path, const char *title, const char *name, struct lines *L)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	const int pl = 80, pw = 520, ph = 300, legend_x = pl + pw + 30;
	/* legend wide enough for its longest label (~7 px a character) */
	size_t maxl = 20;
	for (int i = 0; i < L->ns; i++) {
		size_t l = strlen(L->s[i].name) + (L->s[i].npts ? 0 : 2 + strlen(L->s[i].note));
		maxl = l > maxl ? l : maxl;
	}
	int w = legend_x + 40 + (int)maxl * 7;
	const int pt = 60 + subtitle_extra(title, w);
	int h = pt + ph + 70, rows = L->ns + (L->has_ref ? 1 : 0);
	if (pt + rows * 18 + 20 > h)
		h = pt + rows * 18 + 20;
	svg_head(f, w, h, name, L->unit ? L->unit : "", title);
	double ymax = L->has_ref ? L->ref : 0;
	for (int i = 0; i < L->ns; i++)
		for (int k = 0; k < L->s[i].npts; k++)
			ymax = L->s[i].hi[k] > ymax ? L->s[i].hi[k] : ymax;
	double step = nice_step(ymax * 1.05);
	int nticks = 1;
	while (nticks * step < ymax * 1.05)
		nticks++;
	double ytop = nticks * step;
	double x0 = L->nx ? L->xs[0] : 0, x1 = L->nx ? L->xs[L->nx - 1] : 1;
#define PX(x) (x1 > x0 ? pl + 20 + ((x)-x0) / (x1 - x0) * (pw - 40) : pl + pw / 2.0)
#define PY(y) (pt + ph - (y) / ytop * ph)
	/* grid and y ticks */
	for (int t = 0; t <= nticks; t++) {
		double v = t * step, y = PY(v);
		fprintf(f,
		        "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
		        "stroke=\"#ddd\"/>\n",
		        pl, y, pl + pw, y);
		fprintf(f,
		        "<text class=\"ytick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
		        pl - 6, y + 4, v);
	}
	/* axes */
	fprintf(f,
	        "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n"
	        "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
	        pl, pt, pl, pt + ph, pl, pt + ph, pl + pw, pt + ph);
	for (int i = 0; i < L->nx; i++) {
		double x = PX(L->xs[i]);
		fprintf(
		    f,
		    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\"/>\n"
		    "<text class=\"xtick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
		    x, pt + ph, x, pt + ph + 5, x, pt + ph + 18, L->xs[i]);
	}
	fprintf(f, "<text class=\"xlabel\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", pl + pw / 2,
	        pt + ph + 40);
	xml_text(f, L->xlabel);
	fprintf(f,
	        "</text>\n<text class=\"ylabel\" x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
	        "transform=\"rotate(-90 %d %d)\">",
	        22, pt + ph / 2, 22, pt + ph / 2);
	xml_text(f, L->unit ? L->unit : "");
	fprintf(f, "</text>\n");
	int row = 0;
	if (L->has_ref) {
		double y = PY(L->ref);
		fprintf(f,
		        "<line class=\"baseline\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
		        "stroke=\"#444\" stroke-dasharray=\"6,4\"><title>baseline "
		        "%.1f</title></line>\n",
		        pl, y, pl + pw, y, L->ref);
		fprintf(
		    f,
		    "<g class=\"legend\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
		    "stroke=\"#444\" stroke-dasharray=\"6,4\"/><text x=\"%d\" y=\"%d\">baseline "
		    "(one member)</text></g>\n",
		    legend_x, pt + 6, legend_x + 24, pt + 6, legend_x + 30, pt + 10);
		row++;
	}
	for (int i = 0; i < L->ns; i++) {
		struct series *s = &L->s[i];
		const char *col = palette[i % NPALETTE];
		const char *dash = i / NPALETTE ? " stroke-dasharray=\"8,3\"" : "";
		int ly = pt + 6 + row++ * 18;
		fprintf(f,
		        "<g class=\"legend\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
		        "stroke=\"%s\" stroke-width=\"3\"%s/><text x=\"%d\" y=\"%d\">",
		        legend_x, ly, legend_x + 24, ly, col, dash, legend_x + 30, ly + 4);
		xml_text(f, s->name);
		if (s->note[0] && s->npts == 0) {
			fprintf(f, ": ");
			xml_text(f, s->note);
		}
		fprintf(f, "</text></g>\n");
		if (s->npts == 0)
			continue;
		sort_points(s);
		fprintf(f, "<polyline class=\"series\" data-config=\"");
		xml_text(f, s->name);
		fprintf(f, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", col,
		        dash);
		for (int k = 0; k < s->npts; k++)
			fprintf(f, "%s%.1f,%.1f", k ? " " : "", PX(s->x[k]), PY(s->y[k]));
		fprintf(f, "\"/>\n");
		for (int k = 0; k < s->npts; k++) {
			/* the spread of repeats: min-max bar with caps, the
			 * point at the median */
			if (s->hi[k] > s->lo[k])
				fprintf(f,
				        "<path class=\"spread\" stroke=\"%s\" stroke-width=\"1\" "
				        "d=\"M%.1f %.1fV%.1fM%.1f %.1fh8M%.1f %.1fh8\"/>\n",
				        col, PX(s->x[k]), PY(s->lo[k]), PY(s->hi[k]),
				        PX(s->x[k]) - 4, PY(s->lo[k]), PX(s->x[k]) - 4,
				        PY(s->hi[k]));
			fprintf(f,
			        "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
			        "fill=\"%s\"><title>",
			        PX(s->x[k]), PY(s->y[k]), col);
			xml_text(f, s->name);
			if (s->hi[k] > s->lo[k])
				fprintf(f,
				        " %g: median %.1f, min %.1f, max %.1f</title></circle>\n",
				        s->x[k], s->y[k], s->lo[k], s->hi[k]);
			else
				fprintf(f, " %g: %.1f</title></circle>\n", s->x[k], s->y[k]);
		}
	}
#undef PX
#undef PY
	fprintf(f, "</svg>\n");
	return fclose(f) ? -errno : 0;
}

static bool is_readers(const char *wl)
{
	return !strncmp(wl, "readers=", 8);
}

/* Distinct values of `members` (non-baseline rows of wl), up to 2. */
static int member_counts(const struct bw_result *r, int n, const char *wl)
{
	int first = -1;
	for (int i = 0; i < n; i++) {
		if (strcmp(r[i].workload, wl) || r[i].level == -2)
			continue;
		if (first < 0)
			first = r[i].members;
		else if (r[i].members != first)
			return 2;
	}
	return first < 0 ? 0 : 1;
}

int bw_report_svg(const char *dir, const char *title, const struct bw_result *r, int n)
{
	const char *wl[64];
	int nw = bw_report_workloads(r, n, wl, 64), nreaders = 0, written = 0;
	for (int w = 0; w < nw; w++)
		nreaders += is_readers(wl[w]);
	char path[1024];
	int rc;
	struct lines *L = calloc(1, sizeof(*L));
	if (!L)
		return -ENOMEM;
	if (nreaders >= 2) {
		L->xlabel = "concurrent readers";
		for (int i = 0; i < n; i++)
			if (is_readers(r[i].workload))
				add_point(L, r[i].config, &r[i], atoi(r[i].workload + 8));
		file_name(path, sizeof(path), dir, "readers");
		if ((rc = svg_lines(path, title, "readers", L)) < 0)
			goto out;
		written++;
	}
	for (int w = 0; w < nw; w++) {
		if (nreaders >= 2 && is_readers(wl[w]))
			continue;
		file_name(path, sizeof(path), dir, wl[w]);
		if (member_counts(r, n, wl[w]) < 2) {
			rc = svg_bars(path, title, wl[w], r, n);
		} else {
			memset(L, 0, sizeof(*L));
			L->xlabel = "members";
			for (int i = 0; i < n; i++) {
				if (strcmp(r[i].workload, wl[w]))
					continue;
				if (r[i].level == -2 && !r[i].note[0]) {
					L->has_ref = true;
					L->ref = r[i].value;
					continue;
				}
				char name[48];
				strip_members(name, sizeof(name), &r[i]);
				add_point(L, name, &r[i], r[i].members);
			}
			rc = svg_lines(path, title, wl[w], L);
		}
		if (rc < 0)
			goto out;
		written++;
	}
	rc = written;
out:
	free(L);
	return rc;
}

/* ---- published beside simulated (uraid bench reproduce) ---- */

int bw_svg_compare(const char *path, const char *title, const char *const *label,
                   const double *published, const double *simulated, int n)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	double max = 0;
	for (int i = 0; i < n; i++) {
		max = published[i] > max ? published[i] : max;
		max = simulated[i] > max ? simulated[i] : max;
	}
	const int left = 300, barw = 420, bh = 9, gap = 8, w = left + barw + 90;
	const int top = 76 + subtitle_extra(title, w);
	int h = top + n * (2 * bh + gap) + 30;
	svg_head(f, w, h, "published and simulated", "MB/s", title);
	fprintf(f,
	        "<rect class=\"legend\" x=\"10\" y=\"%d\" width=\"12\" height=\"9\" "
	        "fill=\"#888888\"/><text x=\"26\" y=\"%d\">published</text>\n"
	        "<rect class=\"legend\" x=\"110\" y=\"%d\" width=\"12\" height=\"9\" "
	        "fill=\"#4a7ebb\"/><text x=\"126\" y=\"%d\">simulated</text>\n",
	        top - 20, top - 11, top - 20, top - 11);
	for (int i = 0; i < n; i++) {
		int y = top + i * (2 * bh + gap);
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 8, y + bh + 3);
		xml_text(f, label[i]);
		fprintf(f, "</text>\n");
		const double v[2] = {published[i], simulated[i]};
		static const char *const cls[2] = {"published", "simulated"};
		static const char *const col[2] = {"#888888", "#4a7ebb"};
		for (int k = 0; k < 2; k++) {
			int yy = y + k * bh;
			if (v[k] < 0) {
				fprintf(f,
				        "<text class=\"na %s\" x=\"%d\" y=\"%d\" font-size=\"9\" "
				        "fill=\"#888\">no figure</text>\n",
				        cls[k], left + 4, yy + bh - 1);
				continue;
			}
			double bw = max > 0 ? v[k] / max * barw : 0;
			fprintf(f,
			        "<rect class=\"bar %s\" x=\"%d\" y=\"%d\" width=\"%.1f\" "
			        "height=\"%d\" fill=\"%s\"/>\n",
			        cls[k], left, yy, bw, bh - 1, col[k]);
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"9\">%.1f</text>\n",
			        left + bw + 4, yy + bh - 1, v[k]);
		}
	}
	fprintf(f, "</svg>\n");
	return fclose(f) ? -errno : 0;
}
