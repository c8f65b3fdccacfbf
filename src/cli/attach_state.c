/* RUN/NAME.attach: written by attach, read, checked and acted on by detach
 * (attach.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/attach.h"
#include "cli/cli_proc.h"
#include "export/nbd/nbd_kernel.h"
#include "export/ublk/ublk.h"
#include "uraid.h"

const char *attach_kind_name(enum attach_kind k)
{
	switch (k) {
	case ATTACH_UBLK: return "ublk";
	case ATTACH_NBD: return "nbd";
	default: return "fuse";
	}
}

int attach_kind_parse(const char *s, enum attach_kind *k)
{
	if (!strcmp(s, "ublk"))
		*k = ATTACH_UBLK;
	else if (!strcmp(s, "nbd"))
		*k = ATTACH_NBD;
	else if (!strcmp(s, "fuse"))
		*k = ATTACH_FUSE;
	else
		return -EINVAL;
	return 0;
}

int attach_save(const struct attach_state *s, char *err, size_t errlen)
{
	char text[PATH_MAX + 512];
	snprintf(text, sizeof(text),
	         "name=%s\nloop=%s\nmount=%s\nfuse_pid=%d\nfuse_start=%llu\nimplicit=%d\n"
	         "nbdkit_pid=%d\nnbdkit_start=%llu\nkind=%s\ndev=%d\ndaemon_pid=%d\n"
	         "daemon_start=%llu\n",
	         s->name, s->loop, s->mount, (int)s->fuse_pid, s->fuse_start, s->implicit ? 1 : 0,
	         (int)s->nbdkit_pid, s->nbdkit_start, attach_kind_name(s->kind),
	         s->kind == ATTACH_FUSE ? -1 : s->dev, (int)s->daemon_pid, s->daemon_start);
	return uraid_run_write(s->name, ".attach", text, err, errlen);
}

static bool all_digits(const char *v, size_t max)
{
	size_t n = strspn(v, "0123456789");
	return n > 0 && n <= max && !v[n];
}

/* RUN/NAME.fuse.XXXXXX, as mkdtemp makes it in cmd_attach.c. */
static bool our_mount_dir(const char *name, const char *mount)
{
	char dir[PATH_MAX], err[PATH_MAX + 256], want[PATH_MAX + 80];
	if (uraid_run_dir(false, dir, sizeof(dir), err, sizeof(err)) < 0)
		return false;
	snprintf(want, sizeof(want), "%s/%s.fuse.", dir, name);
	size_t wl = strlen(want);
	if (strncmp(mount, want, wl))
		return false;
	const char *x = mount + wl;
	size_t xl = strspn(x, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
	return xl == 6 && !x[6];
}

int attach_load(const char *name, struct attach_state *s, char *err, size_t errlen)
{
	char text[PATH_MAX + 512];
	int rc = uraid_run_read(name, ".attach", text, sizeof(text), err, errlen);
	if (rc < 0)
		return rc;
	memset(s, 0, sizeof(*s));
	s->dev = -1;
	bool seen_name = false;
	const char *at = "";
	for (char *l = text, *next; l && *l; l = next) {
		at = l;
		next = strchr(l, '\n');
		if (next)
			*next++ = 0;
		char *v = strchr(l, '=');
		if (!v)
			goto bad;
		*v++ = 0;
		if (!strcmp(l, "name")) {
			if (strcmp(v, name))
				goto bad;
			snprintf(s->name, sizeof(s->name), "%s", v);
			seen_name = true;
		} else if (!strcmp(l, "loop")) {
			if (v[0] && (strncmp(v, "/dev/loop", 9) || !all_digits(v + 9, 6)))
				goto bad;
			snprintf(s->loop, sizeof(s->loop), "%s", v);
		} else if (!strcmp(l, "mount")) {
			if (v[0] && !our_mount_dir(name, v))
				goto bad;
			snprintf(s->mount, sizeof(s->mount), "%s", v);
		} else if (!strcmp(l, "implicit")) {
			if (strcmp(v, "0") && strcmp(v, "1"))
				goto bad;
			s->implicit = v[0] == '1';
		} else if (!strcmp(l, "kind")) {
			if (attach_kind_parse(v, &s->kind) < 0)
				goto bad;
		} else if (!strcmp(l, "dev")) {
			if (strcmp(v, "-1") && !all_digits(v, 6))
				goto bad;
			s->dev = atoi(v);
		} else if (!strcmp(l, "daemon_pid")) {
			if (!all_digits(v, 9))
				goto bad;
			s->daemon_pid = (pid_t)atoi(v);
		} else if (!strcmp(l, "daemon_start")) {
			if (!all_digits(v, 20))
				goto bad;
			s->daemon_start = strtoull(v, NULL, 10);
		} else if (!strcmp(l, "fuse_pid") || !strcmp(l, "nbdkit_pid")) {
			if (!all_digits(v, 9))
				goto bad;
			*(l[0] == 'f' ? &s->fuse_pid : &s->nbdkit_pid) = (pid_t)atoi(v);
		} else if (!strcmp(l, "fuse_start") || !strcmp(l, "nbdkit_start")) {
			if (!all_digits(v, 20))
				goto bad;
			*(l[0] == 'f' ? &s->fuse_start : &s->nbdkit_start) = strtoull(v, NULL, 10);
		} else {
			goto bad;
		}
	}
	if (seen_name && (s->kind == ATTACH_FUSE) == (s->dev < 0)) {
		if (s->kind != ATTACH_FUSE)
			snprintf(s->device, sizeof(s->device), "/dev/%s%d",
			         s->kind == ATTACH_UBLK ? "ublkb" : "nbd", s->dev);
		return 0;
	}
	at = seen_name ? "(kind and dev disagree)" : "(no name line)";
bad:
	snprintf(err, errlen,
	         "%s.attach is not an attach record uraid wrote for %s (at '%.60s'); nothing was "
	         "changed",
	         name, name, at);
	return -EINVAL;
}

bool attach_loop_bound(const char *loop, char *file, size_t len)
{
	const char *b = strrchr(loop, '/');
	char p[128];
	snprintf(p, sizeof(p), "/sys/block/%s/loop/backing_file", b ? b + 1 : loop);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, file, len - 1);
	close(fd);
	file[n > 0 ? n : 0] = 0;
	file[strcspn(file, "\n")] = 0;
	return true;
}

/* /proc/self/mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_mount(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
}

bool attach_mounted(const char *dir, char *fstype, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[3 * PATH_MAX];
	bool found = false;
	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE ..."
	 * The last mount on dir is the one its path reaches. */
	while (f && fgets(line, sizeof(line), f)) {
		char *fields[5], *save = NULL, *t = strtok_r(line, " ", &save);
		int k = 0;
		for (; t && k < 5; t = strtok_r(NULL, " ", &save))
			fields[k++] = t;
		if (k < 5)
			continue;
		unescape_mount(fields[4]);
		if (strcmp(fields[4], dir))
			continue;
		while (t && strcmp(t, "-"))
			t = strtok_r(NULL, " ", &save);
		t = t ? strtok_r(NULL, " ", &save) : NULL;
		snprintf(fstype, len, "%s", t ? t : "?");
		found = true;
	}
	if (f)
		fclose(f);
	return found;
}

static int verify_kernel(const struct attach_state *s, char *err, size_t errlen)
{
	char why[PATH_MAX + 64], backend[128], want[URAID_NAME_MAX + 8];
	if (s->kind == ATTACH_UBLK) {
		if (proc_check(s->daemon_pid, s->daemon_start, "uraid", "daemon", why,
		               sizeof(why)) == PROC_OTHER) {
			snprintf(err, errlen, "the recorded daemon is not ours: %s", why);
			return -EPERM;
		}
		int pid = 0;
		if (s->dev >= 0 && ublk_dev_state(s->dev, &pid) >= 0 && pid > 0 &&
		    pid != s->daemon_pid) {
			snprintf(err, errlen,
			         "ublk device %d is served by pid %d, not by this attach's "
			         "daemon (pid %d)",
			         s->dev, pid, (int)s->daemon_pid);
			return -EPERM;
		}
	} else if (s->kind == ATTACH_NBD) {
		snprintf(want, sizeof(want), "uraid:%s", s->name);
		if (s->dev >= 0 && nbd_kernel_backend(s->dev, backend, sizeof(backend)) == 0 &&
		    strcmp(backend, want)) {
			snprintf(err, errlen, "%s is connected to '%s', not to %s", s->device,
			         backend, want);
			return -EPERM;
		}
	}
	return 0;
}

int attach_verify(const struct attach_state *s, char *err, size_t errlen)
{
	if (verify_kernel(s, err, errlen) < 0)
		return -EPERM;
	char file[PATH_MAX], why[PATH_MAX + 64], want[PATH_MAX + 8], arg[URAID_NAME_MAX + 8];
	snprintf(want, sizeof(want), "%s/nbd", s->mount);
	if (s->loop[0] && attach_loop_bound(s->loop, file, sizeof(file)) &&
	    (!s->mount[0] || strcmp(file, want))) {
		snprintf(err, errlen, "%s is bound to %s, not to this attach's %s", s->loop, file,
		         s->mount[0] ? want : "FUSE file");
		return -EPERM;
	}
	char fstype[64];
	if (s->mount[0] && attach_mounted(s->mount, fstype, sizeof(fstype)) &&
	    strcmp(fstype, "fuse") && strncmp(fstype, "fuse.", 5)) {
		snprintf(err, errlen, "%s holds a %s file system, not nbdfuse's", s->mount, fstype);
		return -EPERM;
	}
	struct stat sb;
	if (s->mount[0] && lstat(s->mount, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
		snprintf(err, errlen, "%s is not a directory", s->mount);
		return -EPERM;
	}
	if (proc_check(s->fuse_pid, s->fuse_start, "nbdfuse", s->mount, why, sizeof(why)) ==
	    PROC_OTHER) {
		snprintf(err, errlen, "the recorded nbdfuse is not ours: %s", why);
		return -EPERM;
	}
	snprintf(arg, sizeof(arg), "name=%s", s->name);
	if (s->implicit && proc_check(s->nbdkit_pid, s->nbdkit_start, "nbdkit", arg, why,
	                              sizeof(why)) == PROC_OTHER) {
		snprintf(err, errlen, "the recorded nbdkit is not ours: %s", why);
		return -EPERM;
	}
	return 0;
}
