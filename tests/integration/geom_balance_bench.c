/* gmirror balance vs concurrent readers on simulated disks (member_sim, real-time
 * model): the figures in docs/BENCHMARKS.md (GEOM). Not part of make check.
 * Build and run from the repository top after `make`:
 *   cc -O2 -Iinclude -Isrc tests/integration/geom_balance_bench.c build/rel/liburaid.a \
 *      -lpthread -lm -luring -lisal -o build/geom_balance_bench
 *   build/geom_balance_bench [PROFILE [TIME_SCALE]]
 * Each cell: 1 s of readers on a fresh 2-disk mirror (256 MiB members at the
 * start of the modelled disk), total MB/s in model time. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "engine/geom.h"
#include "member/member.h"
#include "member/member_sim.h"

#define DSZ (256ull << 20)
struct arg {
	struct geom_array *a;
	int id;
	bool seq;
	double secs;
	uint64_t bytes;
};
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
static void *rd(void *p)
{
	struct arg *a = p;
	uint64_t s = 0x1234 + a->id;
	size_t bs = a->seq ? 65536 : 4096;
	uint8_t *b = malloc(bs);
	uint64_t pos = (uint64_t)a->id * (a->a->size / 5) / 65536 * 65536;
	double end = now() + a->secs;
	while (now() < end) {
		uint64_t off;
		if (a->seq) {
			off = pos;
			pos += bs;
			if (pos + bs > a->a->size)
				pos = 0;
		} else {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			off = (s >> 20) % (a->a->size / bs) * bs;
		}
		if (geom_array_read(a->a, b, bs, off) == 0)
			a->bytes += bs;
	}
	free(b);
	return NULL;
}
int main(int argc, char **argv)
{
	const char *prof = argc > 1 ? argv[1] : "sata-7200-2007";
	double scale = argc > 2 ? atof(argv[2]) : 1;
	static const int bals[] = {GEOM_BALANCE_LOAD, GEOM_BALANCE_PREFER, GEOM_BALANCE_ROUND_ROBIN,
	                           GEOM_BALANCE_SPLIT};
	char err[256], warn[256];
	struct member *mem[2];
	for (int i = 0; i < 2; i++)
		member_open_mem("m", DSZ, &mem[i]);
	struct geom_label_opts o = {.name = "gb"};
	geom_mirror_label(&o, mem, 2, err, sizeof err);
	for (int seq = 0; seq < 2; seq++)
		for (int b = 0; b < 4; b++) {
			printf("%-10s %-11s", seq ? "seq64k" : "rand4k",
			       geom_balance_name(bals[b]));
			for (int r = 1; r <= 5; r++) {
				struct member *sm[2];
				for (int i = 0; i < 2; i++) { /* the sims own the memory members:
					                         fresh ones each run */
					if (member_sim_open(mem[i], sim_profile_find(prof), NULL,
					                    scale, &sm[i], err, sizeof err) < 0) {
						fprintf(stderr, "%s\n", err);
						return 1;
					}
				}
				struct geom_array *a;
				if (geom_array_open_members(sm, 2, 0, bals[b], &a, err, sizeof err,
				                            warn, sizeof warn) < 0) {
					fprintf(stderr, "%s\n", err);
					return 1;
				}
				pthread_t t[5];
				struct arg ar[5];
				for (int i = 0; i < r; i++) {
					ar[i] = (struct arg){a, i, seq, 1.0, 0};
					pthread_create(&t[i], NULL, rd, &ar[i]);
				}
				uint64_t tot = 0;
				for (int i = 0; i < r; i++) {
					pthread_join(t[i], NULL);
					tot += ar[i].bytes;
				}
				printf(" %8.1f", tot / 1e6 * scale);
				fflush(stdout);
				geom_array_close(a);
				for (int i = 0; i < 2; i++)
					member_open_mem("m", DSZ, &mem[i]);
				geom_mirror_label(&o, mem, 2, err, sizeof err);
			}
			printf("  MB/s (model) readers 1..5\n");
		}
	return 0;
}
