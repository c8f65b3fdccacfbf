/* The log types an md array may have (core/log.h) and the loading of the
 * one its superblocks name. A new log type adds its descriptor here. */
#include <errno.h>

#include "engine/bitmap/bitmap.h"
#include "engine/journal/journal.h"
#include "engine/md.h"
#include "engine/ppl/ppl.h"
#include "util/errmsg.h"

static const struct eng_log_ops *const log_types[] = {&eng_log_bitmap, &eng_log_journal,
                                                      &eng_log_ppl};

int eng_logs_load(struct eng_array *a, char *err, size_t errlen)
{
	const struct eng_log_ops *found = NULL;
	for (size_t i = 0; i < sizeof(log_types) / sizeof(log_types[0]); i++) {
		if (!log_types[i]->present(a))
			continue;
		/* md's consistency policy is one of them, never two. */
		if (found)
			return errmsg(err, errlen, -EINVAL,
			              "the superblocks name both a %s and a %s: md allows one",
			              found->name, log_types[i]->name);
		found = log_types[i];
	}
	if (!found)
		return 0;
	a->log = found;
	return found->load(a, err, errlen);
}
