/* Test helper for reshape_rt_mdvm.sh (built against build/rel's
 * library): starts a reshape through the public API and stops the array
 * once the move has passed a given share, leaving members mid-reshape as
 * `mdadm --grow` stopped by `mdadm --stop` leaves them.
 *   reshape_tool RAID_DISKS LAYOUT CHUNK_KIB STOP_PERMILLE SPARE|- MEMBER...
 * LAYOUT -1 / CHUNK_KIB 0 keep the current ones; SPARE (or SPARE,SPARE...)
 * is added first.
 * FILL=FILE in the environment: the array is written with FILE's bytes
 * first (as much as fits); ARRAY_KIB=N (N > 0): the array size is set to N
 * KiB before the reshape (as mdadm --grow --array-size before a shrink);
 * DIR=1|-1: uraid_reshape_opts.direction (forwards / backwards).
 * LEVEL=L: a level change that moves data (uraid_reshape_opts.level).
 * BACKUP=FILE: mdadm's --backup-file (an in-place grow); STOP_PERMILLE 0
 * stops right after the start. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uraid.h"

int main(int argc, char **argv)
{
	if (argc < 7) {
		fprintf(stderr,
		        "usage: %s RAID_DISKS LAYOUT CHUNK_KIB STOP_PERMILLE SPARE|- MEMBER...\n",
		        argv[0]);
		return 2;
	}
	char err[512] = "", warn[512] = "";
	struct uraid_array *a;
	int rc = uraid_assemble((const char *const *)argv + 6, argc - 6, URAID_NO_SYNC_THREAD, &a,
	                        err, sizeof(err), warn, sizeof(warn));
	if (rc < 0) {
		fprintf(stderr, "assemble: %s\n", err);
		return 1;
	}
	const char *fill = getenv("FILL");
	if (fill) {
		FILE *f = fopen(fill, "rb");
		static char buf[1 << 20];
		uint64_t size = uraid_size(a), off = 0;
		size_t n;
		while (f && off < size && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
			if (n > size - off)
				n = (size_t)(size - off);
			n -= n % 512;
			if (!n || uraid_write(a, buf, n, off) < 0)
				break;
			off += n;
		}
		if (f)
			fclose(f);
		if (off < size || uraid_flush(a) < 0) {
			fprintf(stderr, "fill: could not write %s\n", fill);
			return 1;
		}
	}
	/* SPARE may be a comma-separated list (a degraded array's spares) */
	for (char *sp = strcmp(argv[5], "-") ? strtok(argv[5], ",") : NULL; sp;
	     sp = strtok(NULL, ","))
		if (uraid_add(a, sp, err, sizeof(err)) < 0) {
			fprintf(stderr, "add %s: %s\n", sp, err);
			return 1;
		}
	const char *ak = getenv("ARRAY_KIB");
	uint64_t kib = ak ? strtoull(ak, NULL, 10) : 0;
	if (kib && uraid_grow(a, URAID_GROW_ARRAY_SIZE, kib * 2, err, sizeof(err)) < 0) {
		fprintf(stderr, "array size: %s\n", err);
		return 1;
	}
	const char *dir = getenv("DIR");
	struct uraid_reshape_opts o = {.direction = dir ? atoi(dir) : 0,
	                               .raid_disks = atoi(argv[1]),
	                               .layout = atoi(argv[2]),
	                               .chunk_sectors = (uint32_t)atoi(argv[3]) * 2,
	                               .level = getenv("LEVEL") ? atoi(getenv("LEVEL")) : 0,
	                               .backup_file = getenv("BACKUP")};
	if (uraid_array_reshape_start(a, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "reshape: %s\n", err);
		uraid_stop(a);
		return 1;
	}
	long stop = atol(argv[4]);
	struct uraid_status st;
	/* STOP_PERMILLE 0: stopped right after the start (an in-place grow
	 * with BACKUP: just past its critical section). */
	while (stop > 0) {
		rc = uraid_sync_step(a, 256);
		if (rc <= 0)
			break;
		memset(&st, 0, sizeof(st));
		uraid_status(a, &st);
		if (st.sync_action == URAID_SYNC_RESHAPE && st.sync_total &&
		    st.sync_done * 1000 >= (uint64_t)stop * st.sync_total)
			break;
	}
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	printf("RESHAPE_STOPPED reshape=%d position=%llu done=%llu total=%llu\n", st.reshape,
	       (unsigned long long)st.reshape_position, (unsigned long long)st.sync_done,
	       (unsigned long long)st.sync_total);
	if (rc < 0) {
		fprintf(stderr, "sync step: %d\n", rc);
		return 1;
	}
	return uraid_stop(a) < 0;
}
