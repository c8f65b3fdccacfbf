/* Run-time choice of the parity backend: the fastest one this CPU can run
 * (or the one named by the caller or URAID_PARITY), as ISA-L's dispatch
 * picks among its variants. The backends are in parity_*.c, the generic
 * operations they share in parity.c. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "parity/parity_int.h"

struct backend_entry {
	const struct uraid_parity *be;
	bool (*usable)(void);
	bool by_name_only; /* never the default (untested here) */
};

static bool always(void)
{
	return true;
}

#ifdef PARITY_HAVE_X86
static bool cpu_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}

static bool cpu_avx512(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
}
#endif

/* Fastest first: the first usable entry not marked by_name_only is the
 * default. avx512 has never run on the development machine (no AVX-512
 * there), so it is only used when named. */
static const struct backend_entry backend_table[] = {
#ifdef PARITY_HAVE_X86
    {&parity_backend_avx512, cpu_avx512, true},
    {&parity_backend_avx2, cpu_avx2, false},
#endif
#ifdef HAVE_ISAL
    {&parity_backend_isal, always, false},
#endif
    {&parity_backend_portable, always, false},
};
#define N_BACKENDS (sizeof(backend_table) / sizeof(backend_table[0]))

static const char *const backend_names[] = {
    "portable",
#ifdef HAVE_ISAL
    "isal",
#endif
#ifdef PARITY_HAVE_X86
    "avx2",     "avx512",
#endif
    NULL,
};

const char *const *uraid_parity_backends(void)
{
	return backend_names;
}

const struct uraid_parity *uraid_parity_get(const char *name)
{
	if (!name) {
		name = getenv("URAID_PARITY");
		if (name && !*name)
			name = NULL;
	}
	for (size_t i = 0; i < N_BACKENDS; i++) {
		if (name && strcmp(name, backend_table[i].be->name) != 0)
			continue;
		if (!name && backend_table[i].by_name_only)
			continue;
		if (backend_table[i].usable())
			return backend_table[i].be;
		if (name) {
			errno = ENOTSUP; /* compiled in, but this CPU lacks the instructions */
			return NULL;
		}
	}
	errno = name ? ENOENT : ENOTSUP;
	return NULL;
}
