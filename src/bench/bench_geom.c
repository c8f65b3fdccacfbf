/* GEOM configurations for `uraid bench`: spec parsing and labelling. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_geom.h"
#include "geom/geom.h"
#include "member/member.h"
#include "util/errmsg.h"

int bw_geom_parse(const char *spec, int *level, uint32_t *layout, char *label, size_t len)
{
	if (!strncmp(spec, "mirror:split/", 13)) {
		/* split with a slice of N KiB: the slice in the layout's upper bits */
		char *e;
		long kib = strtol(spec + 13, &e, 10);
		if (e == spec + 13 || strcmp(e, "k") || kib < 1 || kib > 65536)
			return -EINVAL;
		*level = URAID_LEVEL_GMIRROR;
		*layout = (uint32_t)GEOM_BALANCE_SPLIT | (uint32_t)kib << 8;
		snprintf(label, len, "split%ldk", kib);
		return 0;
	}
	if (!strncmp(spec, "mirror:", 7)) {
		int b = geom_balance_parse(spec + 7);
		if (b <= 0)
			return -EINVAL;
		*level = URAID_LEVEL_GMIRROR;
		*layout = (uint32_t)b;
		snprintf(label, len, "%s", b == GEOM_BALANCE_ROUND_ROBIN ? "rr" : spec + 7);
		return 0;
	}
	if (!strcmp(spec, "raid3") || !strcmp(spec, "raid3-r")) {
		*level = URAID_LEVEL_GRAID3;
		*layout = spec[5] == '-';
		snprintf(label, len, "%s", *layout ? "r" : "-");
		return 0;
	}
	return -EINVAL;
}

const char *const *bw_geom_all(int level)
{
	static const char *const m[] = {"mirror:load", "mirror:prefer", "mirror:round-robin",
	                                "mirror:split", NULL};
	static const char *const r[] = {"raid3", "raid3-r", NULL};
	return level == URAID_LEVEL_GMIRROR ? m : r;
}

int bw_geom_min_members(int level)
{
	return level == URAID_LEVEL_GMIRROR ? 1 : 3;
}

int bw_geom_members_ok(int level, int n)
{
	if (level == URAID_LEVEL_GMIRROR)
		return n >= 1 && n <= GEOM_MAX_DISKS;
	int d = n - 1;
	return n >= 3 && n <= GEOM_MAX_DISKS + 1 && (d & (d - 1)) == 0;
}

int bw_geom_create_members(struct member **ms, int n, int level, uint32_t layout,
                           struct uraid_array **out, char *err, size_t errlen)
{
	struct geom_label_opts o = {.name = "bench"};
	int r;
	if (level == URAID_LEVEL_GMIRROR) {
		o.balance = (int)(layout & 0xff);
		o.slice = (layout >> 8) * 1024;
		r = geom_mirror_label(&o, ms, n, err, errlen);
	} else {
		o.round_robin = layout != 0;
		r = geom_raid3_label(&o, ms, n, err, errlen);
	}
	if (r < 0) {
		for (int i = 0; i < n; i++)
			member_close(ms[i]);
		return r;
	}
	return uraid_assemble_members(ms, n, URAID_NO_SYNC_THREAD, out, err, errlen, NULL, 0);
}
