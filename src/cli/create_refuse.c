/* uraid create's refusals in mdadm 4.2's words and order (create_refuse.h):
 * mdadm.c's --layout and --consistency-policy parsing and its checks after
 * the options, then Create()'s before any member is opened. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/create_refuse.h"
#include "layout/layout.h"
#include "uraid.h"

int cli_create_layout(bool have_level, int level, const char *name, uint32_t *layout)
{
	if (!have_level) {
		cli_error("create", "raid level must be given before layout.");
		return 2;
	}
	switch (level) {
	case URAID_LEVEL_RAID0:
	case URAID_LEVEL_RAID5:
	case URAID_LEVEL_RAID6:
		if (layout_parse(level, name, layout) == 0)
			return 0;
		cli_error("create", "layout %s not understood for raid%d.", name, level);
		return 2;
	case URAID_LEVEL_RAID10:
		if (layout_parse(level, name, layout) == 0)
			return 0;
		cli_error("create",
		          "layout for raid10 must be 'nNN', 'oNN' or 'fNN' where NN is a number, "
		          "not %s",
		          name);
		return 2;
	}
	cli_error("create", "layout not meaningful for %s arrays.", uraid_md_personality(level));
	return 2;
}

int cli_create_policy(const char *name)
{
	static const char *const names[] = {"resync", "bitmap", "journal", "ppl"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return 0;
	cli_error("create", "Invalid consistency policy: %s", name);
	return 2;
}

/* mdadm.c's checks of the options together (exit 2). */
static int options_refusal(const struct create_refuse *r)
{
	bool lv = r->have_level;
	bool bitmap = r->bitmap && strcmp(r->bitmap, "none");
	if (r->journal && lv && (r->level < 4 || r->level > 6))
		return cli_error("create",
		                 "--write-journal is only supported for RAID level 4/5/6.");
	if (r->journal && r->policy && strcmp(r->policy, "journal"))
		return cli_error("create",
		                 "--write-journal is not supported with consistency "
		                 "policy: %s",
		                 r->policy);
	if (r->policy && lv && r->level <= 0)
		return cli_error("create", "--consistency-policy not meaningful with level %s.",
		                 uraid_md_personality(r->level));
	if (r->policy && !strcmp(r->policy, "journal") && !r->journal)
		return cli_error("create", "--write-journal is required for consistency policy: %s",
		                 r->policy);
	if (r->policy && !strcmp(r->policy, "ppl") && lv && r->level != URAID_LEVEL_RAID5)
		return cli_error("create",
		                 "PPL consistency policy is only supported for RAID level 5.");
	if (r->policy && !strcmp(r->policy, "bitmap") && !bitmap)
		return cli_error("create", "--bitmap is required for consistency policy: %s",
		                 r->policy);
	if (r->policy && bitmap && strcmp(r->policy, "bitmap") && strcmp(r->policy, "journal"))
		return cli_error("create", "--bitmap is not compatible with consistency policy: %s",
		                 r->policy);
	if (r->raid_devices == 1 && !r->force) {
		cli_error("create",
		          "'1' is an unusual number of drives for an array, so it is probably");
		fputs("     a mistake.  If you really mean it you will need to specify --force "
		      "before\n"
		      "     setting the number of drives.\n",
		      stderr);
		return 1;
	}
	return 0;
}

int cli_create_refuse(const struct create_refuse *r)
{
	if (options_refusal(r))
		return 2;
	int n = r->raid_devices, lvl = r->level;
	if (!n)
		return cli_error("create", "no raid-devices specified.");
	/* Create() */
	if (!r->have_level)
		return cli_error("create", "a RAID level is needed to create an array.");
	if (n < 4 && lvl == URAID_LEVEL_RAID6)
		return cli_error("create", "at least 4 raid-devices needed for level 6");
	if (n > 256 && lvl == URAID_LEVEL_RAID6)
		return cli_error("create", "no more than 256 raid-devices supported for level 6");
	if (n < 2 && lvl >= 4)
		return cli_error("create", "at least 2 raid-devices needed for level %d", lvl);
	if (lvl <= 0 && r->spares)
		return cli_error("create", "This level does not support spare devices");
	int subdevs = r->members + r->journal, want = n + r->spares + r->journal;
	if (subdevs > want)
		return cli_error("create",
		                 "You have listed more devices (%d) than are in the array(%d)!",
		                 subdevs, n + r->spares);
	if (subdevs < want)
		return cli_error("create", "You haven't given enough devices (real or missing) to "
		                           "create this array");
	if (r->bitmap && strcmp(r->bitmap, "none") && lvl <= 0)
		return cli_error("create", "bitmaps not meaningful with level %s",
		                 uraid_md_personality(lvl));
	if (lvl == URAID_LEVEL_RAID10 && r->layout_set) {
		int copies = (int)(r->layout & 0xff) * (int)((r->layout >> 8) & 0xff);
		if (copies > n)
			return cli_error("create", "that layout requires at least %d devices",
			                 copies);
	}
	if (lvl == URAID_LEVEL_RAID1 && r->chunk_set)
		return cli_error("create", "specifying chunk size is forbidden for this level");
	if (r->metadata == 0 && r->policy && !strcmp(r->policy, "ppl"))
		return cli_error("create", "0.90 metadata does not support PPL");
	return 0;
}
