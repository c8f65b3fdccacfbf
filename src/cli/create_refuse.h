/* uraid create's refusals that mdadm 4.2 makes before it writes anything
 * (mdadm.c's option parsing and checks, Create.c's), in its words: exit
 * status 2 for the parser's, 1 for the others (create_refuse.c). */
#ifndef URAID_CLI_CREATE_REFUSE_H
#define URAID_CLI_CREATE_REFUSE_H
#include <stdbool.h>
#include <stdint.h>
struct create_refuse {
	bool have_level, force, journal;
	int level;        /* URAID_LEVEL_* when have_level */
	int raid_devices; /* 0: not given */
	int spares;
	int members; /* given, the journal aside */
	bool chunk_set;
	bool layout_set;
	uint32_t layout;    /* as parsed (raid10: copies in its bytes) */
	const char *bitmap; /* NULL: not given */
	const char *policy; /* --consistency-policy, NULL: not given */
	int metadata;       /* 0, 10, 11, 12 */
};
/* mdadm's parse of --layout for the level given before it: 0 and the
 * layout, or 2 after the message. */
int cli_create_layout(bool have_level, int level, const char *name, uint32_t *layout);
/* --consistency-policy's names: 0, or 2 after the message. */
int cli_create_policy(const char *name);
/* After the options: 0, or the exit status after the message. */
int cli_create_refuse(const struct create_refuse *r);
#endif
