/* Finding an ARRAY line's members (include/uraid.h): the DEVICE globs (or
 * the line's devices=) expanded, then each candidate's md superblock read
 * and its UUID compared, as mdadm --assemble --scan does. */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "member/member.h"
#include "meta/md_super.h"
#include "uraid.h"
#include "util/errmsg.h"

struct plist {
	char **p;
	int n;
};

static int plist_add(struct plist *l, const char *path)
{
	struct stat sb;
	/* NBD URIs are taken as written: the superblock read connects. */
	if (!uraid_member_is_remote(path) &&
	    (stat(path, &sb) < 0 || !(S_ISREG(sb.st_mode) || S_ISBLK(sb.st_mode))))
		return 0;
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->p[i], path))
			return 0;
	char **np = realloc(l->p, (size_t)(l->n + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	l->p = np;
	if (!(np[l->n] = strdup(path)))
		return -ENOMEM;
	l->n++;
	return 0;
}

/* /proc/partitions: every device it lists, as /dev/NAME. */
static int add_partitions(struct plist *l)
{
	FILE *f = fopen("/proc/partitions", "re");
	if (!f)
		return 0;
	char line[512];
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		unsigned maj, mnr;
		unsigned long long blocks;
		char name[256], path[300];
		if (sscanf(line, " %u %u %llu %255s", &maj, &mnr, &blocks, name) != 4)
			continue;
		snprintf(path, sizeof(path), "/dev/%s", name);
		rc = plist_add(l, path);
	}
	fclose(f);
	return rc;
}

static int add_glob(struct plist *l, const char *pattern)
{
	if (uraid_member_is_remote(pattern)) /* '?' is the URI's query, not a glob */
		return plist_add(l, pattern);
	glob_t g;
	int r = glob(pattern, 0, NULL, &g);
	if (r == GLOB_NOMATCH)
		return 0;
	if (r)
		return -ENOMEM;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++)
		rc = plist_add(l, g.gl_pathv[i]);
	globfree(&g);
	return rc;
}

int uraid_config_candidates(const struct uraid_config *c, const struct uraid_config_array *arr,
                            char ***paths, int *n, char *err, size_t errlen)
{
	struct plist l = {0};
	int rc = 0;
	if (arr && arr->ndevices) {
		for (int i = 0; rc == 0 && i < arr->ndevices; i++)
			rc = add_glob(&l, arr->devices[i]);
	} else if (!c->ndevice) {
		rc = add_partitions(&l);
	} else {
		for (int i = 0; rc == 0 && i < c->ndevice; i++) {
			if (!strcasecmp(c->device[i], "partitions"))
				rc = add_partitions(&l);
			else if (strcasecmp(c->device[i], "containers"))
				rc = add_glob(&l, c->device[i]);
		}
	}
	if (rc < 0) {
		uraid_config_paths_free(l.p, l.n);
		return errmsg(err, errlen, rc, "looking for members: %s", strerror(-rc));
	}
	*paths = l.p;
	*n = l.n;
	return 0;
}

/* The md superblock of path: 0, or a negative errno (none, unreadable). */
static int read_sb(const char *path, struct md_sb *sb)
{
	struct member *m;
	char err[512];
	if (member_open_file(path, MEMBER_RDONLY, 0, &m, err, sizeof(err)) < 0)
		return -EIO;
	int rc = md_sb_load(m, sb, err, sizeof(err));
	member_close(m);
	return rc;
}

int uraid_config_members(const struct uraid_config *c, const struct uraid_config_array *arr,
                         char ***paths, int *n, char *err, size_t errlen)
{
	char **cand;
	int nc;
	int rc = uraid_config_candidates(c, arr, &cand, &nc, err, errlen);
	if (rc < 0)
		return rc;
	struct plist l = {0};
	for (int i = 0; rc == 0 && i < nc; i++) {
		struct md_sb sb;
		if (read_sb(cand[i], &sb) < 0)
			continue;
		bool match;
		if (arr->uuid[0]) {
			char u[36];
			md_uuid_format(sb.set_uuid, u);
			match = !strcmp(u, arr->uuid);
		} else if (arr->md_name[0]) {
			match = sb.version != MD_SB_0_90 && !strcmp(sb.set_name, arr->md_name);
		} else {
			match = true; /* devices= alone names them */
		}
		if (match)
			rc = plist_add(&l, cand[i]);
	}
	uraid_config_paths_free(cand, nc);
	if (rc < 0) {
		uraid_config_paths_free(l.p, l.n);
		return errmsg(err, errlen, rc, "out of memory");
	}
	*paths = l.p;
	*n = l.n;
	return 0;
}
