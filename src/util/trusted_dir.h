/* A directory nobody but the caller (and root) can change: the run
 * directory (src/control/rundir.c) and an overlay directory (src/member/
 * member_overlay*.c) are trusted by the same rule, decided here once.
 *
 * Trusted: the directory belongs to the caller (root: to root) and is not
 * writable by group or others; the path to it is resolved link by link, each
 * symbolic link belonging to root or the caller, and every directory on the
 * way belongs to root or the caller and is not writable by others unless
 * sticky (else the directory could be renamed away and replaced). */
#ifndef URAID_UTIL_TRUSTED_DIR_H
#define URAID_UTIL_TRUSTED_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* How refusals name the directory and what to do instead. */
struct trusted_dir_words {
	const char *what;      /* "run directory", "overlay directory" */
	const char *elsewhere; /* "set URAID_RUN_DIR to a directory of your own" */
	const char *another;   /* "another URAID_RUN_DIR" */
};

/* Check `path` by the rule above, creating a missing last component (mode
 * 0700; the parent must exist) when `create`. Returns an O_PATH descriptor
 * of the directory (open files in it relative to that, with O_NOFOLLOW) and
 * fills resolved (symbolic links resolved), or a negative errno with err
 * naming the directory and the problem. */
int trusted_dir_open(const char *path, const struct trusted_dir_words *w, bool create,
                     char *resolved, size_t len, char *err, size_t errlen);

#endif
