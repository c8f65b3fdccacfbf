/* uraid grow's changes that move data (cli/grow.h): a running array's
 * restripe, asked of its daemon ("reshape" control request, which calls
 * uraid_array_reshape_start); the data then moves in the background, and
 * status / detail show how far it got. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/grow.h"
#include "meta/md_backup.h"
#include "uraid.h"

/* mdadm's analyse_change: the critical section of a raid0/4/5/6 restripe
 * that changes the number of data members, in sectors (compute_backup_blocks:
 * whole old and new stripes, the LCM of chunk x data members); 0 when the
 * count stays (mdadm then says nothing of it) or for other levels. */
static uint64_t backup_sectors(const struct cli_grow_args *ga, const struct uraid_status *st,
                               int to)
{
	int before, after;
	if (cli_grow_data_disks(ga, st, to, &before, &after) < 0 || before == after ||
	    before <= 0 || after <= 0 || !st->chunk_sectors)
		return 0;
	uint32_t oc = st->chunk_sectors, nc = ga->chunk_kib > 0 ? (uint32_t)ga->chunk_kib * 2 : oc;
	return md_backup_blocks(oc, (uint32_t)before, nc, (uint32_t)after);
}

/* mdadm's reshape_array at "started:" (a reshape in place: --backup-file,
 * or no room to move the data offset): the critical section's size, and
 * its refusal of one half the component size or more. */
static int say_backup(const char *name, uint64_t blocks, const struct uraid_status *st)
{
	fprintf(stderr, "uraid: grow: Need to backup %lluK of critical section..\n",
	        (unsigned long long)blocks / 2);
	if (blocks < st->dev_sectors / 2)
		return 0;
	fprintf(stderr, "uraid: grow: %s: Something wrong - reshape aborted\n", name);
	return 1;
}

int cli_grow_restripe(const struct cli_grow_args *ga)
{
	const char *name = ga->name;
	if (!name) {
		fprintf(stderr, "uraid grow: restriping needs the running array's name (assemble "
		                "it first; members given directly are not restriped)\n");
		return 1;
	}
	char err[512];
	struct uraid_status st;
	memset(&st, 0, sizeof(st));
	if (uraid_control_status(name, &st, err, sizeof(err)) < 0) {
		fprintf(stderr, "uraid grow: %s: %s\n", name, err);
		return 1;
	}
	/* A level change that moves data: the daemon plans it as mdadm does
	 * (a takeover to the intermediate level, then the reshape). */
	bool change = ga->level != -1 && ga->level != st.level;
	int level = change ? ga->level : 0;
	/* raid0 from a raid5: restriped to parity-last, then the takeover
	 * (the reshape's level 0 is "unchanged": raid0 has its own word) */
	if (change && level == URAID_LEVEL_RAID0 && st.level == URAID_LEVEL_RAID5)
		level = URAID_RESHAPE_TO_RAID0;
	else if (change && (level == URAID_LEVEL_RAID0 || level < 0)) {
		fprintf(stderr,
		        "uraid grow: %s: Impossible level change requested (%s to %s): uraid "
		        "reaches raid0 by a restripe only from raid5\n",
		        name, uraid_md_personality(st.level), uraid_md_personality(ga->level));
		return 1;
	}
	if (ga->chunk_kib > 0 && (ga->chunk_kib * 2 > UINT32_MAX || ga->chunk_kib % 4)) {
		fprintf(stderr, "uraid grow: %s: chunk %lldK is not a multiple of 4K\n", name,
		        (long long)ga->chunk_kib);
		return 1;
	}
	/* mdadm's --backup-file: the grow is reshaped in place, the critical
	 * section saved there first (by the daemon, which works from "/":
	 * the path made absolute). The run directory keeps where it is, for
	 * an assembly without --backup-file (mdadm's /run/mdadm/backup_file-*). */
	char bpath[PATH_MAX + 1] = "", besc[3 * PATH_MAX + 8] = "";
	if (ga->backup_file) {
		char cwd[PATH_MAX];
		if (ga->backup_file[0] == '/' || !getcwd(cwd, sizeof(cwd)))
			snprintf(bpath, sizeof(bpath), "%s", ga->backup_file);
		else if (snprintf(bpath, sizeof(bpath), "%s/%s", cwd, ga->backup_file) >=
		         (int)sizeof(bpath)) {
			fprintf(stderr, "uraid grow: %s: --backup-file path too long\n", name);
			return 1;
		}
		uraid_ctl_escape(bpath, besc, sizeof(besc));
	}
	uint64_t blocks = backup_sectors(ga, &st, change ? ga->level : st.level);
	if (blocks && ga->backup_file && say_backup(name, blocks, &st))
		return 1;
	char line[sizeof(besc) + 128];
	snprintf(line, sizeof(line), "reshape%s %d %d %lld %d%s%s", ga->force ? "-force" : "",
	         ga->raid_devices > 0 ? ga->raid_devices : 0, ga->layout >= 0 ? ga->layout : -1,
	         ga->chunk_kib > 0 ? (long long)ga->chunk_kib * 2 : 0LL, level, besc[0] ? " " : "",
	         besc);
	char *body = NULL;
	size_t blen = 0;
	int rc = uraid_control_request(name, line, NULL, 0, &body, &blen, err, sizeof(err));
	free(body);
	/* mdadm says so before its need for a backup file (and then
	 * refuses a section that large in its place). */
	if (rc < 0 && blocks && !ga->backup_file && !strncmp(err, "Cannot grow - need ", 19) &&
	    say_backup(name, blocks, &st))
		return 1;
	if (rc < 0) {
		cli_grow_engine_error(name, err);
		return 1;
	}
	if (bpath[0] && uraid_run_write(name, ".backup_file", bpath, err, sizeof(err)) < 0)
		fprintf(stderr, "uraid grow: %s: warning: %s\n", name, err);
	fprintf(stderr, "uraid grow: %s: reshape started (uraid status shows its progress)\n",
	        name);
	return 0;
}
