/* Shared helpers of the simulated-disk tests (test_sim_disk,
 * test_sim_queue). */
#ifndef URAID_TEST_MEMBER_SIM_COMMON_H
#define URAID_TEST_MEMBER_SIM_COMMON_H

#include <stdlib.h>
#include <time.h>

#include "../harness.h"
#include "sim/member_sim.h"

/* A simulated disk over a fresh memory member of `size` bytes; aborts the
 * test program when it cannot be opened, since nothing else can run. */
static struct member *open_sim(const struct sim_profile *p, uint64_t size, struct sim_bus *bus,
                               double scale)
{
	struct member *in = NULL, *s = NULL;
	char err[256] = "";
	if (member_open_mem("sim", size, &in) != 0)
		abort();
	int rc = member_sim_open(in, p, bus, scale, &s, err, sizeof(err));
	CHECKF(rc == 0, "%s", err);
	if (rc != 0)
		abort();
	return s;
}

/* Wall-clock milliseconds (CLOCK_MONOTONIC), for the time-scaled tests. */
static double real_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#endif
