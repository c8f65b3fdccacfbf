/* attach through the kernel's own block drivers (attach.h): ublk, where
 * uraid's daemon serves /dev/ublkbN itself (daemon_ublk.c), and the kernel
 * NBD client, /dev/nbdN connected to the serve's unix socket
 * (src/export/nbd/). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/attach.h"
#include "cli/cli.h"
#include "cli/cli_array.h"
#include "cli/cli_proc.h"
#include "cli/serve.h"
#include "export/nbd/nbd_kernel.h"
#include "export/ublk/ublk.h"

enum attach_kind attach_pick(bool can_ublk, char *why, size_t len)
{
	char w1[256] = "", w2[256] = "";
	if (!can_ublk)
		snprintf(w1, sizeof(w1), "the array is an NBD export already");
	if (can_ublk && ublk_available(w1, sizeof(w1)) == 0)
		return ATTACH_UBLK;
	if (nbd_kernel_available(w2, sizeof(w2)) == 0) {
		snprintf(why, len, "no ublk: %s", w1);
		return ATTACH_NBD;
	}
	snprintf(why, len, "no ublk: %s; no kernel NBD client: %s", w1, w2);
	return ATTACH_FUSE;
}

/* Wait up to ms for a device node (devtmpfs or udev add it). */
static bool wait_node(const char *dev, bool present, int ms)
{
	struct stat sb;
	for (int i = 0; i <= ms / 20; i++) {
		if ((stat(dev, &sb) == 0) == present)
			return true;
		cli_msleep(20);
	}
	return false;
}

static int read_ublk_file(const char *name, int *dev, pid_t *pid)
{
	char text[128], err[PATH_MAX + 256];
	if (uraid_run_read(name, ".ublk", text, sizeof(text), err, sizeof(err)) < 0)
		return -ENOENT;
	int d, p;
	if (sscanf(text, "dev=%d\npid=%d", &d, &p) != 2 || d < 0 || p <= 0)
		return -EINVAL;
	*dev = d;
	*pid = p;
	return 0;
}

/* The daemon runs: its device into the record, saved, and the node there. */
static int finish_ublk(const char *verb, struct attach_state *s)
{
	char err[PATH_MAX + 256];
	s->kind = ATTACH_UBLK;
	if (read_ublk_file(s->name, &s->dev, &s->daemon_pid) < 0) {
		uraid_control_request(s->name, "stop", NULL, 0, NULL, NULL, err, sizeof(err));
		return cli_error(verb, "the daemon did not record its ublk device (log: %s.log)",
		                 s->name);
	}
	s->daemon_start = proc_start_time(s->daemon_pid);
	snprintf(s->device, sizeof(s->device), "/dev/ublkb%d", s->dev);
	if (attach_save(s, err, sizeof(err)) < 0) {
		attach_ublk_undo(verb, s);
		return cli_error(verb, "%s", err);
	}
	if (!wait_node(s->device, true, 5000)) {
		attach_ublk_undo(verb, s);
		uraid_run_unlink(s->name, ".attach", err, sizeof(err));
		return cli_error(verb, "%s did not appear", s->device);
	}
	return 0;
}

/* Mounted, or held open exclusively (a file system, md, dm): then detach
 * must not take the device away. */
static bool in_use(const char *dev)
{
	int fd = open(dev, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == EBUSY;
}

int attach_ublk(const char *verb, int n, char **members, const char *want, const char *overlay,
                bool force, struct attach_state *s)
{
	char err[PATH_MAX + 256], warn[2048];
	if (want && cli_run_ready(verb, want))
		return 1;
	/* Checked read-only first, as assemble does: refusals reach the user. */
	struct uraid_array *a;
	int rc =
	    uraid_assemble_overlay((const char *const *)members, n,
	                           URAID_RDONLY | URAID_NO_SYNC_THREAD | (force ? URAID_FORCE : 0),
	                           overlay, &a, err, sizeof(err), warn, sizeof(warn));
	if (warn[0])
		fprintf(stderr, "uraid: %s: warning: %s", verb, warn);
	if (rc < 0)
		return cli_error(verb, "%s", err);
	char ovdir[URAID_OVERLAY_DIR_MAX] = "";
	if (overlay)
		snprintf(ovdir, sizeof(ovdir), "%s", uraid_overlay_dir(a));
	struct uraid_status st;
	uraid_status(a, &st);
	uraid_stop(a);
	if (!force && strstr(warn, "dirty degraded array"))
		return cli_dirty_degraded(verb, &st, members[0]);
	if (cli_pick_name(verb, want, st.name, members[0], s->name, sizeof(s->name)))
		return 1;
	struct attach_state old;
	if (attach_load(s->name, &old, err, sizeof(err)) == 0 &&
	    attach_verify(&old, err, sizeof(err)) == 0 && attach_present(&old))
		return cli_error(verb, "%s is already attached as %s", s->name,
		                 attach_device(&old));
	uraid_run_unlink(s->name, ".ublk", err, sizeof(err));
	setenv("URAID_DAEMON_UBLK", "1", 1);
	if (force)
		setenv("URAID_DAEMON_FORCE", "1", 1);
	rc = cli_start_daemon(verb, s->name, n, members, ovdir[0] ? ovdir : NULL);
	unsetenv("URAID_DAEMON_UBLK");
	unsetenv("URAID_DAEMON_FORCE");
	if (rc)
		return rc;
	return finish_ublk(verb, s);
}

int attach_ublk_takeover(const char *verb, const char *name, struct attach_state *s)
{
	struct uraid_status before;
	char **mm = NULL;
	int nm = 0;
	char err[PATH_MAX + 256];
	if (cli_run_ready(verb, name))
		return 1;
	struct attach_state old;
	if (attach_load(name, &old, err, sizeof(err)) == 0 &&
	    attach_verify(&old, err, sizeof(err)) == 0 && attach_present(&old))
		return cli_error(verb, "%s is already attached as %s", name, attach_device(&old));
	snprintf(s->name, sizeof(s->name), "%s", name);
	int rc = serve_handover(verb, name, &before, &mm, &nm);
	if (rc)
		return rc;
	const char *ov = before.overlay[0] ? before.overlay : NULL;
	setenv("URAID_DAEMON_UBLK", "1", 1);
	rc = cli_start_daemon(verb, name, nm, mm, ov);
	unsetenv("URAID_DAEMON_UBLK");
	if (rc) {
		fprintf(stderr, "uraid: %s: handing %s back to a daemon\n", verb, name);
		cli_start_daemon(verb, name, nm, mm, ov);
	} else {
		rc = serve_check_takeover(verb, name, &before, mm, nm);
	}
	for (int i = 0; i < nm; i++)
		free(mm[i]);
	free(mm);
	unsetenv("URAID_DAEMON_BUILD"); /* set by the handover for a built array */
	return rc ? rc : finish_ublk(verb, s);
}

int attach_ublk_undo(const char *verb, struct attach_state *s)
{
	char err[PATH_MAX + 256], why[PATH_MAX + 64];
	if (s->device[0] && in_use(s->device))
		return cli_error(verb, "%s is in use (mounted?); nothing was changed", s->device);
	if (proc_check(s->daemon_pid, s->daemon_start, "uraid", "daemon", why, sizeof(why)) ==
	    PROC_SAME) {
		/* The daemon stops the device, then the array (flushed, clean). */
		if (uraid_control_request(s->name, "stop", NULL, 0, NULL, NULL, err, sizeof(err)) <
		    0)
			kill(s->daemon_pid, SIGTERM);
		if (!serve_wait_pid(s->daemon_pid, 60000) &&
		    proc_check(s->daemon_pid, s->daemon_start, "uraid", "daemon", why,
		               sizeof(why)) == PROC_SAME)
			return cli_error(verb, "the daemon of %s (pid %d) did not stop", s->name,
			                 (int)s->daemon_pid);
	}
	/* Left behind by a server that died: the kernel keeps the device
	 * until it is deleted. */
	if (s->dev >= 0 && ublk_dev_state(s->dev, NULL) >= 0 &&
	    ublk_dev_remove(s->dev, err, sizeof(err)) < 0)
		return cli_error(verb, "%s", err);
	char cdev[64];
	snprintf(cdev, sizeof(cdev), "/dev/ublkc%d", s->dev);
	if (!wait_node(s->device, false, 5000) || !wait_node(cdev, false, 5000))
		return cli_error(verb, "%s is still there", s->device);
	uraid_run_unlink(s->name, ".ublk", err, sizeof(err));
	return 0;
}

int attach_nbd(const char *verb, const char *uri, uint32_t block, struct attach_state *s)
{
	const char *p = strstr(uri, "socket=");
	if (strncmp(uri, "nbd+unix://", 11) || !p)
		return cli_error(verb, "the kernel NBD client needs a unix socket export, not %s",
		                 uri);
	char err[PATH_MAX + 256], ident[URAID_NAME_MAX + 8];
	snprintf(ident, sizeof(ident), "uraid:%s", s->name);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int idx;
	/* $URAID_NBD_TIMEOUT: seconds a request waits for the server (30). */
	const char *tv = getenv("URAID_NBD_TIMEOUT");
	unsigned timeout = tv && *tv ? (unsigned)strtoul(tv, NULL, 10) : 30;
	int rc = nbd_kernel_connect(p + 7,
	                            ncpu > 4   ? 4
	                            : ncpu > 0 ? (int)ncpu
	                                       : 1,
	                            block, ident, timeout, &idx, err, sizeof(err));
	if (rc < 0)
		return cli_error(verb, "%s", err);
	s->kind = ATTACH_NBD;
	s->dev = idx;
	snprintf(s->device, sizeof(s->device), "/dev/nbd%d", idx);
	wait_node(s->device, true, 5000);
	return 0;
}

int attach_nbd_undo(const char *verb, struct attach_state *s)
{
	char err[PATH_MAX + 256], backend[128];
	if (s->dev < 0 || nbd_kernel_backend(s->dev, backend, sizeof(backend)) < 0)
		return 0; /* not connected (any more) */
	if (in_use(s->device))
		return cli_error(verb, "%s is in use (mounted?); nothing was changed", s->device);
	if (nbd_kernel_disconnect(s->dev, err, sizeof(err)) < 0)
		return cli_error(verb, "%s", err);
	for (int i = 0; i < 250 && nbd_kernel_backend(s->dev, backend, sizeof(backend)) == 0; i++)
		cli_msleep(20);
	if (nbd_kernel_backend(s->dev, backend, sizeof(backend)) == 0)
		return cli_error(verb, "%s is still connected", s->device);
	return 0;
}

bool attach_present(const struct attach_state *s)
{
	char file[PATH_MAX];
	switch (s->kind) {
	case ATTACH_UBLK: return s->dev >= 0 && ublk_dev_state(s->dev, NULL) >= 0;
	case ATTACH_NBD: return s->dev >= 0 && nbd_kernel_backend(s->dev, file, sizeof(file)) == 0;
	default: return s->loop[0] && attach_loop_bound(s->loop, file, sizeof(file));
	}
}

const char *attach_device(const struct attach_state *s)
{
	return s->kind == ATTACH_FUSE ? s->loop : s->device;
}
