/* md's everyday small verbs (mdadm's names and meanings): zero-superblock,
 * readonly, readwrite, wait, action, sync-speed, add-spare. All but
 * zero-superblock talk to a running array's daemon through its control
 * socket. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cli_array.h"
#include "meta/md_super.h"
#include "member/member.h"
#include "uraid.h"

static int request(const char *verb, const char *name, const char *line)
{
	char err[512];
	if (uraid_control_request(name, line, NULL, 0, NULL, NULL, err, sizeof(err)) < 0)
		return cli_error(verb, "%s", err);
	return 0;
}

/* ---- zero-superblock --------------------------------------------------- */

/* Zero the block of one superblock as mdadm's Kill does: what md itself
 * writes of it (1.x: 512 bytes, to the member's logical block; 0.90: the
 * 4 KiB block), nothing else (bitmap, bad block log and data stay). */
static int zero_at(struct member *m, enum md_sb_version v)
{
	int64_t loc = md_sb_location(v, m->size / 512);
	if (loc < 0)
		return (int)loc;
	size_t unit = m->logical_block > 512 ? m->logical_block : 512;
	size_t len = v == MD_SB_0_90 ? MD_SB_BYTES : unit;
	if (len < unit)
		len = unit;
	void *z = NULL;
	if (posix_memalign(&z, 4096, len))
		return -ENOMEM;
	memset(z, 0, len);
	int rc = member_write(m, z, len, (uint64_t)loc * 512, MEMBER_FUA);
	free(z);
	return rc < 0 ? rc : member_flush(m);
}

static int zero_one(const char *path, bool force)
{
	static const enum md_sb_version vs[] = {MD_SB_0_90, MD_SB_1_0, MD_SB_1_1, MD_SB_1_2};
	char err[512];
	struct member *m;
	/* O_EXCL on a block device: the kernel's md holds its members so */
	int rc = member_open_file(path, MEMBER_EXCL, 0, &m, err, sizeof(err));
	if (rc < 0)
		return cli_error("zero-superblock", "%s - not zeroing", err);
	/* uraid's daemon holds an exclusive lock on each member it runs */
	if (member_lock(m) < 0) {
		member_close(m);
		return cli_error("zero-superblock",
		                 "%s is a member of a running array - not zeroing (stop the "
		                 "array first)",
		                 path);
	}
	bool found[4] = {false}, bad[4] = {false};
	char bad_why[512] = "";
	for (int i = 0; i < 4; i++) {
		struct md_sb sb;
		char why[512];
		rc = md_sb_load_version(m, vs[i], &sb, why, sizeof(why));
		found[i] = rc == 0;
		bad[i] = rc == -EINVAL;
		if (bad[i] && !bad_why[0])
			snprintf(bad_why, sizeof(bad_why), "%s", why);
	}
	int nfound = 0, nbad = 0;
	for (int i = 0; i < 4; i++) {
		nfound += found[i];
		nbad += bad[i];
	}
	int status = 0;
	if (nbad && !force) {
		/* Refused before anything is written. */
		status = cli_error("zero-superblock", "%s (--force zeroes it anyway)", bad_why);
	} else if (!nfound && !nbad) {
		fprintf(stderr, "uraid: zero-superblock: Unrecognised md component device - %s\n",
		        path);
		status = force ? 0 : 1;
	} else {
		for (int i = 0; i < 4 && status == 0; i++) {
			if (!found[i] && !bad[i])
				continue;
			rc = zero_at(m, vs[i]);
			if (rc < 0)
				status = cli_error("zero-superblock",
				                   "Could not zero superblock on %s: %s", path,
				                   strerror(-rc));
			else if (bad[i])
				fprintf(stderr,
				        "uraid: zero-superblock: %s: superblock zeroed anyway\n",
				        path);
		}
	}
	member_close(m);
	return status;
}

int cmd_zero_superblock(int argc, char **argv)
{
	static const struct option opts[] = {{"force", no_argument, NULL, 'f'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	static const char usage[] =
	    "usage: uraid zero-superblock [--force] MEMBER...\n"
	    "  mdadm --zero-superblock: overwrites every md superblock found on each\n"
	    "  MEMBER (0.90, 1.0, 1.1 and 1.2) with zeros, the block md writes and\n"
	    "  nothing else. Refuses a member of a running array, and a superblock\n"
	    "  that is there but corrupt unless --force. A member with no superblock\n"
	    "  is an error (mdadm only warns), with --force a warning.\n";
	bool force = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (c) {
		case 'f': force = true; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind >= argc) {
		fputs(usage, stderr);
		return 2;
	}
	int status = 0;
	for (int i = optind; i < argc; i++)
		status |= zero_one(argv[i], force);
	return status;
}

/* ---- readonly / readwrite ---------------------------------------------- */

int cmd_readonly(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"auto", no_argument, NULL, 'a'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	static const char usage[] =
	    "usage: uraid readonly [--auto] NAME\n"
	    "  mdadm --readonly: background work stops where it is, what is cached is\n"
	    "  written out, the superblocks are marked clean and writes are refused\n"
	    "  (EROFS) until 'uraid readwrite NAME'. --auto: md's read-auto, read-only\n"
	    "  until the first write, which makes the array read-write again.\n";
	bool autoro = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'a': autoro = true; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(usage, stderr);
		return 2;
	}
	return request("readonly", argv[optind], autoro ? "read-auto" : "readonly");
}

int cmd_readwrite(int argc, char **argv)
{
	if (argc != 2)
		return cli_error("readwrite", "usage: uraid readwrite NAME");
	return request("readwrite", argv[1], "readwrite");
}

/* ---- wait --------------------------------------------------------------- */

static void msleep(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* mdadm --wait: 0 once the resync/recovery that was running or due is done,
 * 1 when there was nothing to wait for, 2 when NAME is not running. A
 * resync due on a read-only array is waited for (until readwrite), as
 * mdadm waits while /proc/mdstat says resync=PENDING; frozen counts as
 * done after three looks (mdadm's rule). */
static int wait_one(const char *name)
{
	char err[512];
	struct uraid_status *st = malloc(sizeof(*st));
	if (!st)
		return cli_error("wait", "out of memory");
	int rv = 1, frozen_left = 3;
	for (;;) {
		if (uraid_control_status(name, st, err, sizeof(err)) < 0) {
			cli_error("wait", "%s", err);
			rv = 2;
			break;
		}
		bool busy = st->sync_action != URAID_SYNC_IDLE || st->resync_pending ||
		            (!st->readonly && !st->broken && st->degraded && st->spares);
		if (busy && st->frozen && st->sync_action == URAID_SYNC_IDLE && frozen_left-- <= 0)
			busy = false;
		if (!busy)
			break;
		rv = 0;
		msleep(100);
	}
	free(st);
	return rv;
}

int cmd_wait(int argc, char **argv)
{
	if (argc < 2)
		return cli_error("wait", "usage: uraid wait NAME...");
	int rv = 0;
	for (int i = 1; i < argc; i++)
		rv |= wait_one(argv[i]);
	return rv;
}

/* ---- action ------------------------------------------------------------- */

/* md's sync_action words, as mdadm --action writes them. */
int cmd_action(int argc, char **argv)
{
	static const char *const words[] = {"idle",   "frozen", "check",
	                                    "repair", "resync", "recover"};
	if (argc == 3)
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (!strcmp(argv[2], words[i]))
				return request("action", argv[1], words[i]);
	return cli_error("action", "usage: uraid action NAME idle|frozen|check|repair|resync|"
	                           "recover");
}

/* ---- sync-speed --------------------------------------------------------- */

static int parse_kibs(const char *s, unsigned long long *v)
{
	char *end;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return s[0] >= '0' && s[0] <= '9' && !*end && !errno && *v <= (1ull << 40) ? 0 : -1;
}

int cmd_sync_speed(int argc, char **argv)
{
	static const struct option opts[] = {{"min", required_argument, NULL, 'n'},
	                                     {"max", required_argument, NULL, 'x'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	static const char usage[] =
	    "usage: uraid sync-speed [--min=KIBS] [--max=KIBS] NAME\n"
	    "  md's sync_speed_min / sync_speed_max of a running array, in KiB/s\n"
	    "  (md's defaults 1000 and 200000; 0 max: unlimited). Without options\n"
	    "  prints both.\n";
	const char *smin = NULL, *smax = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': smin = optarg; break;
		case 'x': smax = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(usage, stderr);
		return 2;
	}
	unsigned long long mn = 0, mx = 0;
	if (smin && parse_kibs(smin, &mn) < 0)
		return cli_error("sync-speed", "bad --min '%s' (KiB/s, a number)", smin);
	if (smax && parse_kibs(smax, &mx) < 0)
		return cli_error("sync-speed", "bad --max '%s' (KiB/s, a number)", smax);
	const char *name = argv[optind];
	char err[512];
	struct uraid_status *st = malloc(sizeof(*st));
	if (!st)
		return cli_error("sync-speed", "out of memory");
	if (uraid_control_status(name, st, err, sizeof(err)) < 0) {
		free(st);
		return cli_error("sync-speed", "%s", err);
	}
	if (!smin)
		mn = st->sync_speed_min;
	if (!smax)
		mx = st->sync_speed_max;
	free(st);
	if (!smin && !smax) {
		printf("sync_speed_min %llu\nsync_speed_max %llu\n", mn, mx);
		return 0;
	}
	if (mx && mn > mx)
		return cli_error("sync-speed", "--min %llu is above --max %llu", mn, mx);
	char line[96];
	snprintf(line, sizeof(line), "speed %llu %llu", mn, mx);
	return request("sync-speed", name, line);
}

/* ---- add-spare ---------------------------------------------------------- */

int cmd_add_spare(int argc, char **argv)
{
	if (argc != 3)
		return cli_error("add-spare", "usage: uraid add-spare NAME MEMBER");
	char *r = realpath(argv[2], NULL);
	char line[2 * PATH_MAX + 32], esc[2 * PATH_MAX];
	size_t need = uraid_ctl_escape(r ? r : argv[2], esc, sizeof(esc));
	free(r);
	if (need >= sizeof(esc))
		return cli_error("add-spare", "member path too long");
	snprintf(line, sizeof(line), "add-spare %s", esc);
	return request("add-spare", argv[1], line);
}
