/* For the fuzz targets that need a live array: a RAID5 of three 4 MiB
 * memory members (chunk 8 KiB, no sync thread), aborting when it cannot be
 * made: a target without its array would fuzz nothing. */
#ifndef URAID_FUZZ_ARRAY_H
#define URAID_FUZZ_ARRAY_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "member/member.h"
#include "uraid.h"

static inline struct uraid_array *fuzz_mem_raid5(const char *who)
{
	struct member *m[3];
	for (int i = 0; i < 3; i++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "%s%d", who, i);
		if (member_open_mem(nm, 4u << 20, &m[i]) < 0)
			abort();
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = 5;
	o.raid_devices = 3;
	o.chunk_sectors = 16;
	o.assume_clean = true;
	struct uraid_array *a = NULL;
	char err[256];
	if (uraid_create_members(&o, m, 3, URAID_NO_SYNC_THREAD, &a, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: create: %s\n", who, err);
		abort();
	}
	return a;
}

#endif
