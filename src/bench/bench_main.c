/* uraid bench NAME: dispatch to one benchmark. Benchmarks other than
 * "parity" live in other helpers' files; until they exist the weak hooks
 * below say so. */
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "cli/cli.h"

#define BENCH_HOOK(fn, name)                                                \
	__attribute__((weak)) int fn(int argc, char **argv)                 \
	{                                                                   \
		(void)argc;                                                 \
		(void)argv;                                                 \
		return cli_error("bench", "%s: not implemented yet", name); \
	}

BENCH_HOOK(bench_engine, "engine")
BENCH_HOOK(bench_workload, "workload")
int bench_scache(int argc, char **argv);    /* bench_scache.c */
int bench_reproduce(int argc, char **argv); /* bench_reproduce.c */

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} benches[] = {
    {"parity", bench_parity, "XOR / P+Q / recovery kernels vs ISA-L and memory limits"},
    {"engine", bench_engine, "array engine throughput"},
    {"workload", bench_workload, "workloads and sweeps (also: uraid bench --levels ...)"},
    {"stripe-cache", bench_scache, "small sequential writes vs stripe cache size"},
    {"reproduce", bench_reproduce, "a published measurement run again on simulated disks"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: uraid bench NAME [OPTIONS]\n\nbenchmarks:\n");
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		fprintf(f, "  %-10s %s\n", benches[i].name, benches[i].help);
	fprintf(f, "\n'uraid bench NAME --help' lists a benchmark's options.\n");
}

int cmd_bench(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	/* `uraid bench --levels ...`: options alone mean a workload sweep. */
	if (argv[1][0] == '-' && argv[1][1] == '-')
		return bench_workload(argc, argv);
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		if (!strcmp(argv[1], benches[i].name))
			return benches[i].fn(argc - 1, argv + 1);
	usage(stderr);
	return cli_error("bench", "unknown benchmark '%s'", argv[1]);
}
