/* `uraid daemon` with URAID_DAEMON_UBLK=1 in its environment (set by
 * `uraid attach --via ublk`): the running array also served as
 * /dev/ublkbN by this process (src/export/ublk/), the device number in
 * RUN/NAME.ublk ("dev=N", "pid=P": this daemon), until the daemon stops. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_array.h"
#include "export/ublk/ublk.h"
#include "uraid.h"
#include "../../plugins/uraid_geom.h"

/* The members' largest physical block (block devices; files: lb). */
static uint32_t physical_block(char *const *members, int n, uint32_t lb)
{
	uint32_t pb = lb;
	for (int i = 0; i < n; i++) {
		int fd = open(members[i], O_RDONLY | O_CLOEXEC);
		unsigned int v = 0;
		struct stat sb;
		if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISBLK(sb.st_mode) &&
		    ioctl(fd, BLKPBSZGET, &v) == 0 && v > pb && v <= 65536)
			pb = v;
		if (fd >= 0)
			close(fd);
	}
	return pb;
}

int daemon_ublk_start(const char *name, char *const *members, int n, struct uraid_array *a,
                      struct ublk_export **out)
{
	*out = NULL;
	const char *v = getenv("URAID_DAEMON_UBLK");
	bool want = v && !strcmp(v, "1");
	unsetenv("URAID_DAEMON_UBLK");
	if (!want)
		return 0;
	struct uraid_status st;
	uraid_status(a, &st);
	struct ublk_export_opts o = {.dev_id = -1};
	/* The geometry the nbdkit plugin gives NBD clients: the members'
	 * logical block (or the array's I/O unit) and the stripe. */
	uint32_t lb = uraid_geom_logical_block((const char *const *)members, n);
	if (st.block_bytes > lb)
		lb = st.block_bytes;
	o.logical_bs = lb;
	o.physical_bs = physical_block(members, n, lb);
	uint64_t w = uraid_geom_stripe_bytes(st.level, st.layout, st.raid_disks, st.chunk_sectors);
	if (st.chunk_sectors && w) {
		o.io_min = (uint32_t)uraid_geom_pow2_divisor((uint64_t)st.chunk_sectors * 512);
		o.io_opt = (uint32_t)uraid_geom_pow2_divisor(w);
	}
	const char *q = getenv("URAID_UBLK_QUEUES");
	if (q && *q)
		o.queues = atoi(q);
	const char *wk = getenv("URAID_UBLK_WORKERS"); /* per queue; -1: none */
	if (wk && *wk)
		o.workers = atoi(wk);
	char err[512];
	int rc = ublk_export_start(a, &o, out, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "uraid: daemon %s: ublk: %s\n", name, err);
		return rc;
	}
	char text[64];
	snprintf(text, sizeof(text), "dev=%d\npid=%d\n", ublk_export_dev_id(*out), (int)getpid());
	if (uraid_run_write(name, ".ublk", text, err, sizeof(err)) < 0) {
		fprintf(stderr, "uraid: daemon %s: %s\n", name, err);
		ublk_export_stop(*out);
		*out = NULL;
		return -EIO;
	}
	fprintf(stderr, "uraid: daemon %s: serving /dev/ublkb%d%s\n", name,
	        ublk_export_dev_id(*out), ublk_export_recoverable(*out) ? " (recoverable)" : "");
	return 0;
}

void daemon_ublk_stop(const char *name, struct ublk_export *e)
{
	if (!e)
		return;
	int id = ublk_export_dev_id(e);
	int rc = ublk_export_stop(e);
	char err[256];
	if (rc < 0)
		fprintf(stderr, "uraid: daemon %s: ublk device %d: %s\n", name, id, strerror(-rc));
	uraid_run_unlink(name, ".ublk", err, sizeof(err));
}
