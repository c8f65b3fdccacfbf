/* Tiny test harness: each TEST is a case; CHECK records a failure and keeps
 * going so one run shows every broken assertion. Output is TAP-like
 * ("ok N - name" / "not ok N - name") and tests/run adds the lines up. */
#ifndef URAID_TEST_HARNESS_H
#define URAID_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test_case {
	const char *name;
	void (*fn)(void);
};

extern int t_failures; /* failures in the running case */

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			t_failures++;                                                            \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                                \
	} while (0)

#define CHECKF(cond, ...)                                                                        \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			t_failures++;                                                            \
			fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                            \
			fputc('\n', stderr);                                                     \
		}                                                                                \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                               \
	CHECKF((uint64_t)(a) == (uint64_t)(b), "%" PRIu64 " != %" PRIu64, (uint64_t)(a), \
	       (uint64_t)(b))

/* Deterministic PRNG for randomized tests (splitmix64): fixed seeds, replayable. */
static inline uint64_t t_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline void t_fill(uint64_t *state, void *buf, size_t len)
{
	unsigned char *p = buf;
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)t_rand(state);
}

int t_run(const struct test_case *cases, size_t n, int argc, char **argv);

#define TEST_MAIN(...)                                                                  \
	int t_failures;                                                                 \
	int main(int argc, char **argv)                                                 \
	{                                                                               \
		static const struct test_case cases[] = {__VA_ARGS__};                  \
		return t_run(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);      \
	}                                                                               \
	int t_run(const struct test_case *cases, size_t n, int argc, char **argv)       \
	{                                                                               \
		int bad = 0;                                                            \
		for (size_t i = 0; i < n; i++) {                                        \
			if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)            \
				continue;                                               \
			t_failures = 0;                                                 \
			cases[i].fn();                                                  \
			printf("%sok - %s\n", t_failures ? "not " : "", cases[i].name); \
			fflush(stdout);                                                 \
			bad += t_failures != 0;                                         \
		}                                                                       \
		return bad ? 1 : 0;                                                     \
	}

#define T(fn)           \
	{               \
#fn, fn \
	}

#endif
