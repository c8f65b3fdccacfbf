#include "bench/bench_util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

uint64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void *bench_alloc(size_t size)
{
	size_t rounded = (size + 63) / 64 * 64;
	uint64_t *p = aligned_alloc(64, rounded ? rounded : 64);
	/* A varied pattern, so nothing can shortcut all-zero pages. */
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (size_t i = 0; p && i < rounded / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = x;
	}
	return p;
}

void bench_cpu_model(char *buf, size_t len)
{
	snprintf(buf, len, "unknown");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) != 0)
			continue;
		char *c = strchr(line, ':');
		if (!c)
			break;
		c++;
		while (*c == ' ' || *c == '\t')
			c++;
		c[strcspn(c, "\n")] = 0;
		snprintf(buf, len, "%s", c);
		break;
	}
	fclose(f);
}

int bench_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

double bench_time_call(void (*fn)(void *ctx), void *ctx, uint64_t min_ns)
{
	uint64_t calls = 0, t0 = bench_now_ns(), t;
	do {
		fn(ctx);
		calls++;
		t = bench_now_ns();
	} while (t - t0 < min_ns);
	return (double)(t - t0) / 1e9 / (double)calls;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const char *bench_size_label(size_t bytes, char *buf, size_t len)
{
	if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
		snprintf(buf, len, "%zuM", bytes >> 20);
	else if (bytes >= 1024 && bytes % 1024 == 0)
		snprintf(buf, len, "%zuK", bytes >> 10);
	else
		snprintf(buf, len, "%zu", bytes);
	return buf;
}

void bench_json_begin(struct bench_json *j, FILE *f)
{
	j->f = f;
	j->rows = 0;
	fputs("[", f);
}

void bench_json_row(struct bench_json *j, const char *kernel, int k, size_t block, double gbps)
{
	fprintf(j->f, "%s\n  {\"kernel\": \"%s\", \"k\": %d, \"block\": %zu, \"gbps\": %.3f}",
	        j->rows++ ? "," : "", kernel, k, block, gbps);
}

void bench_json_end(struct bench_json *j)
{
	fputs("\n]\n", j->f);
}
