/* $URAID_RUN_DIR/mdstat: the /proc/mdstat of every array served from the
 * run directory, for monitors that read an mdstat file (node_exporter's
 * --path.procfs, mdadm-style scripts). Each array's server keeps its own
 * part in NAME.mdstat and rebuilds the whole file from the parts of the
 * arrays still served (their socket present), under a lock, written to a
 * temporary file and renamed so readers never see half a file. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "uraid.h"

#define PART_SUFFIX ".mdstat"
#define MAX_PARTS   256

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append the file dir/name to f; missing is fine (the array just went). */
static void copy_part(FILE *f, const char *dir, const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *in = fopen(p, "r");
	if (!in)
		return;
	char buf[4096];
	size_t k;
	while ((k = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, k, f);
	fclose(in);
}

/* Someone answers on the array's socket: a daemon killed without stopping
 * leaves its socket file and its part behind, neither to be listed. */
static bool served(const char *dir, const char *part)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t l = strlen(part) - strlen(PART_SUFFIX);
	int n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%.*s.sock", dir, (int)l, part);
	struct stat sb;
	if (n < 0 || (size_t)n >= sizeof(sa.sun_path) || lstat(sa.sun_path, &sb) < 0 ||
	    !S_ISSOCK(sb.st_mode))
		return false;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool up = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (fd >= 0)
		close(fd);
	return up;
}

int uraid_mdstat_rebuild(const char *dir)
{
	char lockp[PATH_MAX], tmp[PATH_MAX], final[PATH_MAX];
	snprintf(lockp, sizeof(lockp), "%s/.mdstat.lock", dir);
	snprintf(tmp, sizeof(tmp), "%s/.mdstat.%ld", dir, (long)getpid());
	snprintf(final, sizeof(final), "%s/mdstat", dir);
	int lfd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lfd < 0)
		return -errno;
	flock(lfd, LOCK_EX);
	int rc = 0;
	char *parts[MAX_PARTS];
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)) && n < MAX_PARTS) {
		size_t l = strlen(e->d_name), sl = strlen(PART_SUFFIX);
		if (l > sl && e->d_name[0] != '.' && !strcmp(e->d_name + l - sl, PART_SUFFIX) &&
		    served(dir, e->d_name) && (parts[n] = strdup(e->d_name)))
			n++;
	}
	if (d)
		closedir(d);
	qsort(parts, (size_t)n, sizeof(parts[0]), names_cmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
	} else {
		fputs(URAID_MDSTAT_PERSONALITIES "\n", f);
		for (int i = 0; i < n; i++)
			copy_part(f, dir, parts[i]);
		fputs(URAID_MDSTAT_UNUSED "\n", f);
		if (fclose(f) != 0)
			rc = -EIO;
		if (rc == 0 && rename(tmp, final) < 0)
			rc = -errno;
		if (rc < 0)
			unlink(tmp);
	}
	for (int i = 0; i < n; i++)
		free(parts[i]);
	flock(lfd, LOCK_UN);
	close(lfd);
	return rc;
}

int uraid_mdstat_publish(const char *dir, const char *name, const char *text)
{
	char part[NAME_MAX + 1], p[PATH_MAX + NAME_MAX + 2], tmp[PATH_MAX + NAME_MAX + 32];
	if (uraid_name_check(name, NULL, 0) < 0 ||
	    (size_t)snprintf(part, sizeof(part), "%s" PART_SUFFIX, name) >= sizeof(part))
		return -EINVAL;
	snprintf(p, sizeof(p), "%s/%s", dir, part);
	if (!text) {
		unlink(p);
		return uraid_mdstat_rebuild(dir);
	}
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", dir, part, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text);
	ssize_t w = write(fd, text, len);
	if (close(fd) != 0 || w != (ssize_t)len || rename(tmp, p) < 0) {
		unlink(tmp);
		return -EIO;
	}
	return uraid_mdstat_rebuild(dir);
}
