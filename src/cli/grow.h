/* uraid grow's parsed options, shared by the verb (cmd_grow.c: options,
 * changes that move no data) and the restripe (cmd_grow_restripe.c). */
#ifndef URAID_CLI_GROW_H
#define URAID_CLI_GROW_H
#include <stdbool.h>
#include <stdint.h>
struct cli_grow_args {
	const char *name;       /* array name (run dir) or NULL with members */
	int raid_devices;       /* -1: unchanged */
	int level;              /* -1: unchanged; md level numbers, linear -1 is LEVEL_LINEAR_ASK */
	int layout;             /* -1: unchanged; md layout number (LAYOUT_BAD_10) */
	int64_t chunk_kib;      /* -1: unchanged */
	int64_t size_kib;       /* -1: unchanged, -2: max */
	int64_t array_size_kib; /* -1: unchanged, -2: max */
	const char *bitmap;     /* NULL: unchanged, "internal" | "none" */
	const char *backup_file; /* NULL: none */
	uint64_t bitmap_chunk;   /* bytes of an added bitmap's chunk; 0: uraid's choice */
	const char *policy;      /* --consistency-policy: NULL, "resync" or "ppl" ... */
	bool force;
};
#define LEVEL_LINEAR_ASK (-100) /* --level=linear asked */
#define LAYOUT_BAD_10    (-2)   /* a raid10 layout mdadm's parse_layout_10 refuses */
/* Changes that move data (raid-devices of raid4/5/6/10, chunk, layout,
 * level changes needing a restripe): 0 on success, exit-status style
 * non-zero with a message on stderr on failure. */
int cli_grow_restripe(const struct cli_grow_args *ga);
/* True if ga asks for a change that moves data on this array's current
 * geometry (level, layout, chunk, raid_disks as running). */
bool cli_grow_needs_restripe(const struct cli_grow_args *ga, int cur_level, int cur_layout,
                             int64_t cur_chunk_kib, int cur_raid_disks);
/* mdadm's refusals before any request (cmd_grow_refuse.c), in its words:
 * 1 after the message, 0 when none applies; adding: --add given too;
 * layout_name: --layout's argument (NULL: none), resolved into ga->layout
 * for the level asked, as mdadm's Grow_reshape parses it. */
struct uraid_status;
int cli_grow_refuse(struct cli_grow_args *ga, const struct uraid_status *st, bool adding,
                    const char *layout_name);
/* An error of the daemon's restripe, printed as mdadm words it (its
 * multi-line refusals on their lines). */
void cli_grow_engine_error(const char *name, const char *err);
/* mdadm's analyse_change for a change between raid0/4/5/6 (to: the level
 * asked): the data members before and after, and the intermediate level it
 * reshapes at returned; -1 for other levels. */
int cli_grow_data_disks(const struct cli_grow_args *ga, const struct uraid_status *st, int to,
                        int *before, int *after);
/* raid5 layout -> its raid6 "-6" twin (md's ALGORITHM_*_6), -1 if none. */
int cli_grow_layout_6_of(int r5);
#endif
