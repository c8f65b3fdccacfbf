/* libFuzzer target for the published-table parser (src/sim/sim_published.c,
 * what `uraid bench reproduce` reads): any bytes either parse or are
 * refused with a message; what parses holds terminated names within their
 * buffers, counts within their arrays, figures that are n/a (< 0) or
 * finite, and every configuration's disk spec resolves to built-in
 * profiles or is refused. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/member_sim.h"
#include "sim/sim_published.h"

static struct sp_table t;

static void check_name(const char *s, size_t cap)
{
	if (!memchr(s, 0, cap))
		abort();
}

static void check_disks(const char *name)
{
	const char *p[64];
	int n = sp_config_disks(&t, name, p, 64);
	for (int i = 0; i < n; i++)
		if (!sim_profile_find(p[i]))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";
	if (sp_parse((const char *)data, size, &t, err, sizeof(err)) < 0) {
		if (!err[0])
			abort();
		return 0;
	}
	if (t.ndisks > SP_MAX_DISKS || t.ncols > SP_MAX_COLS || t.nrows > SP_MAX_ROWS ||
	    t.nwithheld > SP_MAX_ROWS || !t.title[0])
		abort();
	check_name(t.title, sizeof(t.title));
	for (int i = 0; i < t.ndisks; i++) {
		check_name(t.disks[i].label, sizeof(t.disks[i].label));
		if (!sim_profile_find(t.disks[i].profile) || t.disks[i].count < 1)
			abort();
	}
	for (int i = 0; i < t.nrows; i++) {
		check_name(t.rows[i].name, sizeof(t.rows[i].name));
		for (int k = 0; k < t.ncols; k++)
			if (!(t.rows[i].v[k] < 0 || isfinite(t.rows[i].v[k])))
				abort();
		check_disks(t.rows[i].name);
	}
	for (int i = 0; i < t.nwithheld; i++) {
		check_name(t.withheld[i], SP_NAME_MAX);
		check_disks(t.withheld[i]);
	}
	return 0;
}
