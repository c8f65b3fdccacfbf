/* Reports of `uraid bench` sweeps: table, ASCII bar chart, CSV, JSON and
 * one SVG bar chart per workload, all with plain stdio. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench_workloads.h"

/* Workloads in first-seen order; returns how many. */
static int workloads(const struct bw_result *r, int n, const char **out, int max)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		bool seen = false;
		for (int j = 0; j < k; j++)
			seen |= !strcmp(out[j], r[i].workload);
		if (!seen && k < max)
			out[k++] = r[i].workload;
	}
	return k;
}

void bw_report_table(FILE *f, const struct bw_result *r, int n)
{
	fprintf(f, "%-22s %-16s %12s %-7s %7s %8s %9s %7s\n", "config", "workload", "value", "unit",
	        "spread", "lat_us", "finish_sp", "ratio");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%-22s %-16s %12.1f %-7s %6.1f%% %8.1f ", r[i].config, r[i].workload,
		        r[i].value, r[i].unit, r[i].spread * 100, r[i].lat_us);
		if (!strncmp(r[i].workload, "readers=", 8))
			fprintf(f, "%8.1f%% ", r[i].finish_spread * 100);
		else
			fprintf(f, "%9s ", "-");
		if (r[i].ratio > 0)
			fprintf(f, "%7.2f\n", r[i].ratio);
		else
			fprintf(f, "%7s\n", "-");
	}
}

void bw_report_chart(FILE *f, const struct bw_result *r, int n)
{
	const char *wl[64];
	int nw = workloads(r, n, wl, 64);
	const int width = 50;
	for (int w = 0; w < nw; w++) {
		double max = 0;
		const char *unit = "";
		for (int i = 0; i < n; i++)
			if (!strcmp(r[i].workload, wl[w])) {
				max = r[i].value > max ? r[i].value : max;
				unit = r[i].unit;
			}
		fprintf(f, "\n%s (%s)\n", wl[w], unit);
		for (int i = 0; i < n; i++) {
			if (strcmp(r[i].workload, wl[w]))
				continue;
			int len = max > 0 ? (int)(r[i].value / max * width + 0.5) : 0;
			fprintf(f, "  %22s |", r[i].config);
			for (int k = 0; k < len; k++)
				fputc('#', f);
			fprintf(f, " %.1f\n", r[i].value);
		}
	}
}

int bw_report_csv(const char *path, const struct bw_result *r, int n)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!f)
		return -errno;
	fprintf(f, "config,level,members,chunk_kib,layout,workload,value,unit,spread,"
	           "finish_spread,latency_us,ratio,bytes,requested,repeats\n");
	for (int i = 0; i < n; i++)
		/* Configs like raid5[64,ls]x4 hold a comma: quoted (RFC 4180). */
		fprintf(f, "\"%s\",%d,%d,%u,%s,%s,%.3f,%s,%.4f,%.4f,%.2f,%.4f,%llu,%llu,%d\n",
		        r[i].config, r[i].level, r[i].members, r[i].chunk / 1024, r[i].layout,
		        r[i].workload, r[i].value, r[i].unit, r[i].spread, r[i].finish_spread,
		        r[i].lat_us, r[i].ratio, (unsigned long long)r[i].bytes,
		        (unsigned long long)r[i].requested, r[i].repeats);
	if (f == stdout)
		return fflush(f) ? -errno : 0;
	return fclose(f) ? -errno : 0;
}

int bw_report_json(const char *path, const struct bw_result *r, int n)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!f)
		return -errno;
	fprintf(f, "[");
	for (int i = 0; i < n; i++)
		fprintf(
		    f,
		    "%s\n  {\"config\": \"%s\", \"level\": %d, \"members\": %d, \"chunk\": %u, "
		    "\"layout\": \"%s\", \"workload\": \"%s\", \"value\": %.3f, \"unit\": \"%s\", "
		    "\"spread\": %.4f, \"finish_spread\": %.4f, \"latency_us\": %.2f, "
		    "\"ratio\": %.4f, \"bytes\": %llu, \"requested\": %llu, \"repeats\": %d}",
		    i ? "," : "", r[i].config, r[i].level, r[i].members, r[i].chunk, r[i].layout,
		    r[i].workload, r[i].value, r[i].unit, r[i].spread, r[i].finish_spread,
		    r[i].lat_us, r[i].ratio, (unsigned long long)r[i].bytes,
		    (unsigned long long)r[i].requested, r[i].repeats);
	fprintf(f, "\n]\n");
	if (f == stdout)
		return fflush(f) ? -errno : 0;
	return fclose(f) ? -errno : 0;
}

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

/* File name from a workload name: letters, digits, '-', '_' kept. */
static void file_name(char *buf, size_t len, const char *dir, const char *wl)
{
	char safe[64];
	size_t k = 0;
	for (; *wl && k + 1 < sizeof(safe); wl++)
		safe[k++] = (*wl >= 'a' && *wl <= 'z') || (*wl >= '0' && *wl <= '9') || *wl == '-'
		                ? *wl
		                : '_';
	safe[k] = 0;
	snprintf(buf, len, "%s/%s.svg", dir, safe);
}

static int svg_one(const char *path, const char *title, const char *wl, const struct bw_result *r,
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
			max = r[i].value > max ? r[i].value : max;
			unit = r[i].unit;
		}
	const int left = 190, barw = 480, bh = 20, gap = 6, top = 56;
	int h = top + bars * (bh + gap) + 30, w = left + barw + 110;
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	        "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
	        w, h, w, h);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", w, h);
	fprintf(f, "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">");
	xml_text(f, wl);
	fprintf(f, " (");
	xml_text(f, unit);
	fprintf(f, ")</text>\n<text x=\"10\" y=\"38\" fill=\"#555\">");
	xml_text(f, title);
	fprintf(f, "</text>\n");
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(r[i].workload, wl))
			continue;
		int y = top + k * (bh + gap);
		double bw = max > 0 ? r[i].value / max * barw : 0;
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 8, y + bh - 6);
		xml_text(f, r[i].config);
		fprintf(f,
		        "</text>\n<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" "
		        "height=\"%d\" fill=\"%s\"/>\n",
		        left, y, bw, bh,
		        r[i].level == 5    ? "#4a7ebb"
		        : r[i].level == 6  ? "#7b5ea7"
		        : r[i].level == 1  ? "#5aa469"
		        : r[i].level == 10 ? "#d08c34"
		                           : "#888888");
		fprintf(f, "<text x=\"%.1f\" y=\"%d\">%.1f</text>\n", left + bw + 6, y + bh - 6,
		        r[i].value);
		k++;
	}
	fprintf(f, "</svg>\n");
	return fclose(f) ? -errno : 0;
}

int bw_report_svg(const char *dir, const char *title, const struct bw_result *r, int n)
{
	const char *wl[64];
	int nw = workloads(r, n, wl, 64);
	for (int w = 0; w < nw; w++) {
		char path[1024];
		file_name(path, sizeof(path), dir, wl[w]);
		int rc = svg_one(path, title, wl[w], r, n);
		if (rc < 0)
			return rc;
	}
	return nw;
}
