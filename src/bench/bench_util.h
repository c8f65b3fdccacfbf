/* Shared helpers for `uraid bench` workloads: timing, pre-faulted buffers,
 * machine description, and result rows printed as a table or JSON. */
#ifndef URAID_BENCH_UTIL_H
#define URAID_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Monotonic clock in nanoseconds. */
uint64_t bench_now_ns(void);

/* 64-byte aligned buffer of `size` bytes, every page written with a
 * non-zero pattern so no timing pays for first-touch faults. NULL on
 * failure. Free with free(). */
void *bench_alloc(size_t size);

/* "model name" from /proc/cpuinfo (or "unknown") into buf. */
void bench_cpu_model(char *buf, size_t len);

/* Online CPUs. */
int bench_cpus(void);

/* Runs fn(ctx) repeatedly for at least min_ns (and at least once) and
 * returns the mean seconds per call. Warming up is the caller's job. */
double bench_time_call(void (*fn)(void *ctx), void *ctx, uint64_t min_ns);

/* Median of n doubles (sorts v in place). */
double bench_median(double *v, int n);

/* Byte-size label: "64K", "1M", "64M", or plain bytes. */
const char *bench_size_label(size_t bytes, char *buf, size_t len);

/* JSON list of result rows: bench_json_begin, bench_json_row per row,
 * bench_json_end. Kernel names are printed as given (plain identifiers). */
struct bench_json {
	FILE *f;
	int rows;
};
void bench_json_begin(struct bench_json *j, FILE *f);
void bench_json_row(struct bench_json *j, const char *kernel, int k, size_t block, double gbps);
void bench_json_end(struct bench_json *j);

#endif
