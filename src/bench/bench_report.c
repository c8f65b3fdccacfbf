/* Reports of `uraid bench` sweeps: table, ASCII bar chart, CSV and JSON,
 * all with plain stdio (the SVG charts are in bench_svg.c). A row with a
 * note has no figure: every format prints the note where the value goes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench_workloads.h"

int bw_report_workloads(const struct bw_result *r, int n, const char **out, int max)
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
		if (r[i].note[0]) {
			fprintf(f, "%-22s %-16s %s\n", r[i].config, r[i].workload, r[i].note);
			continue;
		}
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
	int nw = bw_report_workloads(r, n, wl, 64);
	const int width = 50;
	for (int w = 0; w < nw; w++) {
		double max = 0;
		const char *unit = "";
		for (int i = 0; i < n; i++)
			if (!strcmp(r[i].workload, wl[w]) && !r[i].note[0]) {
				max = r[i].value > max ? r[i].value : max;
				unit = r[i].unit;
			}
		fprintf(f, "\n%s (%s)\n", wl[w], unit);
		for (int i = 0; i < n; i++) {
			if (strcmp(r[i].workload, wl[w]))
				continue;
			if (r[i].note[0]) {
				fprintf(f, "  %22s | %s\n", r[i].config, r[i].note);
				continue;
			}
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
	fprintf(f, "config,level,members,chunk_kib,layout,stripe_cache,workload,value,unit,spread,"
	           "finish_spread,latency_us,ratio,bytes,requested,repeats,note,consistency\n");
	for (int i = 0; i < n; i++) {
		char sc[16] = "", val[32] = "";
		if (r[i].stripe_cache >= 0)
			snprintf(sc, sizeof(sc), "%d", r[i].stripe_cache);
		if (!r[i].note[0])
			snprintf(val, sizeof(val), "%.3f", r[i].value);
		/* Configs like raid5[64,ls]x4 hold a comma: quoted (RFC 4180);
		 * a row without a figure has an empty value and says why. */
		fprintf(
		    f,
		    "\"%s\",%d,%d,%u,%s,%s,%s,%s,%s,%.4f,%.4f,%.2f,%.4f,%llu,%llu,%d,\"%s\",%s\n",
		    r[i].config, r[i].level, r[i].members, r[i].chunk / 1024, r[i].layout, sc,
		    r[i].workload, val, r[i].unit, r[i].spread, r[i].finish_spread, r[i].lat_us,
		    r[i].ratio, (unsigned long long)r[i].bytes, (unsigned long long)r[i].requested,
		    r[i].repeats, r[i].note, r[i].consistency);
	}
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
	for (int i = 0; i < n; i++) {
		char sc[16] = "null", val[32] = "null";
		if (r[i].stripe_cache >= 0)
			snprintf(sc, sizeof(sc), "%d", r[i].stripe_cache);
		if (!r[i].note[0])
			snprintf(val, sizeof(val), "%.3f", r[i].value);
		fprintf(f,
		        "%s\n  {\"config\": \"%s\", \"level\": %d, \"members\": %d, \"chunk\": %u, "
		        "\"layout\": \"%s\", \"stripe_cache\": %s, \"workload\": \"%s\", "
		        "\"value\": %s, \"unit\": \"%s\", \"spread\": %.4f, "
		        "\"finish_spread\": %.4f, \"latency_us\": %.2f, \"ratio\": %.4f, "
		        "\"bytes\": %llu, \"requested\": %llu, \"repeats\": %d",
		        i ? "," : "", r[i].config, r[i].level, r[i].members, r[i].chunk,
		        r[i].layout, sc, r[i].workload, val, r[i].unit, r[i].spread,
		        r[i].finish_spread, r[i].lat_us, r[i].ratio, (unsigned long long)r[i].bytes,
		        (unsigned long long)r[i].requested, r[i].repeats);
		if (r[i].note[0])
			fprintf(f, ", \"note\": \"%s\"", r[i].note);
		else if (r[i].repeats > 1)
			fprintf(f, ", \"min\": %.3f, \"max\": %.3f", r[i].lo, r[i].hi);
		/* --bitmap / --journal sweeps: none, bitmap, journal-wt, journal-wb */
		if (r[i].consistency[0])
			fprintf(f, ", \"consistency\": \"%s\"", r[i].consistency);
		fprintf(f, "}");
	}
	fprintf(f, "\n]\n");
	if (f == stdout)
		return fflush(f) ? -errno : 0;
	return fclose(f) ? -errno : 0;
}
