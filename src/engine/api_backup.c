/* Assembly with mdadm's backup of a reshape's critical section
 * (uraid_assemble_backup, engine/reshape_backup.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/engine.h"
#include "engine/md.h"
#include "engine/reshape_backup.h"
#include "member/member.h"
#include "util/errmsg.h"

int uraid_assemble_members_backup(struct member **mm, int n, unsigned flags, struct member *backup,
                                  struct uraid_array **out, char *err, size_t errlen, char *warn,
                                  size_t warnlen)
{
	*out = NULL;
	struct eng_array *a;
	int rc = eng_assemble_backup(mm, n, flags, backup, &a, err, errlen, warn, warnlen);
	if (rc == 0)
		*out = &a->h;
	return rc;
}

int uraid_assemble_backup(const char *const *paths, int n, unsigned flags, const char *backup_file,
                          struct uraid_array **out, char *err, size_t errlen, char *warn,
                          size_t warnlen)
{
	*out = NULL;
	if (warn && warnlen)
		warn[0] = 0;
	if (n < 1 || n > ENG_MAX_MEMBERS)
		return errmsg(err, errlen, -EINVAL, "need 1 to %d members, got %d", ENG_MAX_MEMBERS,
		              n);
	char e[256];
	struct member *bm = NULL;
	/* Written to (the backup forgotten once restored) unless read-only. */
	unsigned bf = flags & URAID_RDONLY ? MEMBER_RDONLY : 0;
	int rc = member_open_file(backup_file, bf, 0, &bm, e, sizeof(e));
	if (rc < 0 && !bf)
		rc = member_open_file(backup_file, MEMBER_RDONLY, 0, &bm, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc, "cannot open backup file %s: %s", backup_file, e);
	struct member **mm = calloc((size_t)n, sizeof(*mm));
	if (!mm) {
		member_close(bm);
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	}
	unsigned mf = (flags & URAID_RDONLY) ? MEMBER_RDONLY : 0;
	if (flags & URAID_DIRECT)
		mf |= MEMBER_DIRECT;
	for (int i = 0; i < n && rc == 0; i++) {
		for (int j = 0; j < i && rc == 0; j++)
			if (!strcmp(paths[i], paths[j]))
				rc = errmsg(err, errlen, -EINVAL, "%s given twice", paths[i]);
		if (rc == 0 && (rc = member_open_file(paths[i], mf, 0, &mm[i], e, sizeof(e))) < 0)
			errmsg(err, errlen, rc, "%s: %s", paths[i], e);
	}
	if (rc == 0) {
		struct eng_array *a = NULL;
		rc = eng_assemble_backup(mm, n, flags, bm, &a, err, errlen, warn, warnlen);
		if (rc == 0) {
			*out = &a->h;
			/* mdadm's sliding backup: the move goes on with the
			 * file, which the array now closes. */
			if (eng_slide_adopt(a, bm))
				bm = NULL;
		}
	} else
		for (int i = 0; i < n; i++)
			if (mm[i])
				member_close(mm[i]);
	free(mm);
	if (bm)
		member_close(bm);
	return rc;
}
