/* uraid status (mdstat-like, or --json) and uraid detail (mdadm --detail
 * like) for running arrays, from their daemons. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_array.h"
#include "cli/status_geom.h"
#include "layout/layout.h"
#include "uraid.h"

static const char *base(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

static const char *metadata_name(int v)
{
	switch (v) {
	case -1: return "none (built)";
	case 0: return "0.90";
	case 10: return "1.0";
	case 11: return "1.1";
	default: return "1.2";
	}
}

static const char *action_name(enum uraid_sync_action a)
{
	static const char *const n[] = {"idle", "resync", "recovery", "check", "repair"};
	return (unsigned)a < 5 ? n[a] : "?";
}

static const char *state_name(enum uraid_member_state s)
{
	static const char *const n[] = {"in_sync",    "faulty", "missing", "spare",
	                                "rebuilding", "stale",  "inactive"};
	return (unsigned)s < 7 ? n[s] : "?";
}

static void print_mdstat(const char *name, const struct uraid_status *st)
{
	printf("%s : active%s %s", name, st->readonly ? " (read-only)" : "", level_name(st->level));
	/* mdstat lists the newest device first */
	for (int i = st->nmembers - 1; i >= 0; i--) {
		const struct uraid_member_status *m = &st->members[i];
		if (m->state == URAID_MEMBER_MISSING)
			continue;
		/* GEOM components by number (their disk ids are random) */
		printf(" %s[%u]%s", base(m->name),
		       cli_is_geom(st->level) ? (unsigned)m->role : m->dev_number,
		       m->state == URAID_MEMBER_FAULTY     ? "(F)"
		       : m->state == URAID_MEMBER_SPARE    ? "(S)"
		       : m->state == URAID_MEMBER_STALE    ? "(stale)"
		       : m->state == URAID_MEMBER_INACTIVE ? "(inactive)"
		                                           : "");
	}
	if (st->journal == 1) /* md's journal device: (J) */
		printf(" %s[%u](J)", base(st->journal_name), st->journal_dev_number);
	printf("\n");
	if (cli_is_geom(st->level))
		cli_geom_mdstat(st);
	else
		printf("      %llu blocks super %s", (unsigned long long)st->array_sectors / 2,
		       metadata_name(st->metadata));
	char lay[64] = "";
	switch (st->level) {
	case URAID_LEVEL_RAID4:
	case URAID_LEVEL_RAID5:
	case URAID_LEVEL_RAID6:
		printf(" level %d, %uk chunk, algorithm %u", st->level, st->chunk_sectors / 2,
		       st->layout);
		break;
	case URAID_LEVEL_RAID10:
		layout_name(st->level, st->layout, lay, sizeof(lay));
		printf(" %uK chunks %s", st->chunk_sectors / 2, lay);
		break;
	case URAID_LEVEL_RAID0: printf(" %uk chunks", st->chunk_sectors / 2); break;
	default: break;
	}
	if (st->level >= 1) {
		printf(" [%d/%d] [", st->raid_disks, st->working);
		for (int i = 0; i < st->nmembers && st->members[i].role >= 0; i++)
			putchar(st->members[i].state == URAID_MEMBER_IN_SYNC ? 'U' : '_');
		printf("]");
	}
	printf("\n");
	if (st->bitmap_chunk_kib) /* as /proc/mdstat: pages of 4 KiB */
		printf("      bitmap: %u/%u pages [%uKB], %uKB chunk\n", st->bitmap_pages_used,
		       st->bitmap_pages, st->bitmap_pages_used * 4, st->bitmap_chunk_kib);
	if (st->stripe_cache_size)
		printf("      stripe_cache_size %u\n", st->stripe_cache_size);
	if (st->sync_action != URAID_SYNC_IDLE && st->sync_total) {
		double f = (double)st->sync_done / (double)st->sync_total;
		int bar = (int)(f * 20);
		printf("      [");
		for (int i = 0; i < 20; i++)
			putchar(i < bar ? '=' : i == bar ? '>' : '.');
		double left_min = st->sync_speed_kibs ? (double)(st->sync_total - st->sync_done) /
		                                            2 / (double)st->sync_speed_kibs / 60
		                                      : 0;
		printf("]  %s = %.1f%% (%llu/%llu) finish=%.1fmin speed=%lluK/sec\n",
		       action_name(st->sync_action), f * 100, (unsigned long long)st->sync_done / 2,
		       (unsigned long long)st->sync_total / 2, left_min,
		       (unsigned long long)st->sync_speed_kibs);
	}
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_json(const char *name, const struct uraid_status *st)
{
	printf("{\"name\":");
	json_str(name);
	printf(",\"uuid\":\"%s\",\"level\":\"%s\",\"raid_disks\":%d,\"chunk_kib\":%u,"
	       "\"layout\":%u,\"metadata\":\"%s\",\"array_bytes\":%llu,\"events\":%llu,"
	       "\"clean\":%s,\"working\":%d,\"degraded\":%d,\"failed\":%d,\"spares\":%d,"
	       "\"members\":[",
	       st->uuid, level_name(st->level), st->raid_disks, st->chunk_sectors / 2, st->layout,
	       metadata_name(st->metadata), (unsigned long long)st->array_sectors * 512,
	       (unsigned long long)st->events, st->clean ? "true" : "false", st->working,
	       st->degraded, st->failed, st->spares);
	for (int i = 0; i < st->nmembers; i++) {
		const struct uraid_member_status *m = &st->members[i];
		printf("%s{\"name\":", i ? "," : "");
		json_str(m->name);
		printf(",\"role\":%d,\"dev_number\":%u,\"state\":\"%s\",\"recovery_offset\":%llu}",
		       m->role, m->dev_number, state_name(m->state),
		       (unsigned long long)m->recovery_offset);
	}
	printf("],\"sync\":{\"action\":\"%s\",\"done_sectors\":%llu,\"total_sectors\":%llu,"
	       "\"speed_kibs\":%llu},\"mismatch_cnt\":%llu,\"stripe_cache_size\":%u",
	       action_name(st->sync_action), (unsigned long long)st->sync_done,
	       (unsigned long long)st->sync_total, (unsigned long long)st->sync_speed_kibs,
	       (unsigned long long)st->mismatch_cnt, st->stripe_cache_size);
	if (st->bitmap_chunk_kib)
		printf(",\"bitmap\":{\"chunk_kib\":%u,\"chunks\":%llu,\"dirty\":%llu}",
		       st->bitmap_chunk_kib, (unsigned long long)st->bitmap_chunks,
		       (unsigned long long)st->bitmap_dirty);
	if (cli_is_geom(st->level))
		cli_geom_json(st);
	printf("}");
}

int cmd_status(int argc, char **argv)
{
	bool json = false;
	int first = 1;
	for (; first < argc && argv[first][0] == '-'; first++) {
		if (!strcmp(argv[first], "--json")) {
			json = true;
		} else if (!strcmp(argv[first], "--help") || !strcmp(argv[first], "-h")) {
			printf("usage: uraid status [--json] [NAME...]\n"
			       "  mdstat-like view of the running arrays (every one in the run\n"
			       "  directory without NAMEs); --json for a machine-readable list.\n");
			return 0;
		} else if (!strcmp(argv[first], "--")) {
			first++;
			break;
		} else {
			return cli_error("status", "unknown option '%s' (--json, --help)",
			                 argv[first]);
		}
	}
	char **names = argv + first;
	int n = argc - first;
	char *found[256];
	int nfound = 0;
	if (n == 0) {
		char rd[PATH_MAX], err[PATH_MAX + 256];
		int rc = uraid_run_dir(false, rd, sizeof(rd), err, sizeof(err));
		/* No run directory: nothing runs. One not to be trusted: say so. */
		if (rc < 0 && rc != -ENOENT)
			return cli_error("status", "%s", err);
		DIR *d = rc == 0 ? opendir(rd) : NULL;
		struct dirent *e;
		while (d && (e = readdir(d)) && nfound < 256) {
			size_t l = strlen(e->d_name);
			if (l <= 5 || strcmp(e->d_name + l - 5, ".sock"))
				continue;
			char *nm = strndup(e->d_name, l - 5);
			if (nm && uraid_name_check(nm, NULL, 0) == 0)
				found[nfound++] = nm;
			else
				free(nm);
		}
		if (d)
			closedir(d);
		names = found;
		n = nfound;
	}
	int status = 0;
	if (json)
		printf("[");
	for (int i = 0; i < n; i++) {
		struct uraid_status st;
		char err[512];
		if (uraid_control_status(names[i], &st, err, sizeof(err)) < 0) {
			status = cli_error("status", "%s", err);
			continue;
		}
		if (json) {
			printf("%s", i ? "," : "");
			print_json(names[i], &st);
		} else {
			print_mdstat(names[i], &st);
			printf("\n");
		}
	}
	if (json)
		printf("]\n");
	else if (n == 0)
		printf("no arrays running\n");
	for (int i = 0; i < nfound; i++)
		free(found[i]);
	return status;
}

int cmd_detail(int argc, char **argv)
{
	if (argc != 2)
		return cli_error("detail", "usage: uraid detail NAME");
	struct uraid_status st;
	char err[512], lay[64] = "-";
	if (uraid_control_status(argv[1], &st, err, sizeof(err)) < 0)
		return cli_error("detail", "%s", err);
	layout_name(st.level, st.layout, lay, sizeof(lay));
	printf("%s:\n", argv[1]);
	if (cli_is_geom(st.level))
		printf("           Version : %s %d\n", level_name(st.level), st.metadata);
	else
		printf("           Version : %s\n", metadata_name(st.metadata));
	printf("        Raid Level : %s\n", level_name(st.level));
	printf("        Array Size : %llu (%.2f MiB)\n", (unsigned long long)st.array_sectors / 2,
	       (double)st.array_sectors / 2048);
	if (st.level >= 1)
		printf("     Used Dev Size : %llu (%.2f MiB)\n",
		       (unsigned long long)st.dev_sectors / 2, (double)st.dev_sectors / 2048);
	printf("      Raid Devices : %d\n", st.raid_disks);
	if (st.bitmap_chunk_kib)
		printf("     Intent Bitmap : Internal\n");
	printf("             State : %s%s%s%s%s\n", st.clean ? "clean" : "active",
	       st.broken ? ", broken (writes refused)" : "", st.degraded ? ", degraded" : "",
	       st.sync_action == URAID_SYNC_RECOVER  ? ", recovering"
	       : st.sync_action == URAID_SYNC_RESYNC ? ", resyncing"
	       : st.sync_action == URAID_SYNC_CHECK  ? ", checking"
	       : st.sync_action == URAID_SYNC_REPAIR ? ", repairing"
	                                             : "",
	       st.readonly ? ", read-only" : "");
	printf("    Active Devices : %d\n   Working Devices : %d\n    Failed Devices : %d\n"
	       "     Spare Devices : %d\n",
	       st.working, st.working + st.spares, st.failed, st.spares);
	if (st.level == 4 || st.level == 5 || st.level == 6 || st.level == 10)
		printf("            Layout : %s\n        Chunk Size : %uK\n", lay,
		       st.chunk_sectors / 2);
	if (cli_is_geom(st.level))
		cli_geom_detail(&st);
	if (st.sync_action != URAID_SYNC_IDLE && st.sync_total)
		printf("   %s Status : %llu%% complete\n",
		       st.sync_action == URAID_SYNC_RECOVER ? "Rebuild" : " Resync",
		       (unsigned long long)(st.sync_done * 100 / st.sync_total));
	printf("              Name : %s\n              UUID : %s\n            Events : %llu\n\n",
	       st.name, st.uuid, (unsigned long long)st.events);
	printf("    Number   RaidDevice State\n");
	for (int i = 0; i < st.nmembers; i++) {
		const struct uraid_member_status *m = &st.members[i];
		const char *s = m->state == URAID_MEMBER_IN_SYNC      ? "active sync"
		                : m->state == URAID_MEMBER_REBUILDING ? "spare rebuilding"
		                : m->state == URAID_MEMBER_SPARE      ? "spare"
		                : m->state == URAID_MEMBER_FAULTY     ? "faulty"
		                : m->state == URAID_MEMBER_STALE      ? "stale"
		                : m->state == URAID_MEMBER_INACTIVE   ? "inactive"
		                                                      : "removed";
		if (m->state == URAID_MEMBER_MISSING)
			printf("       -      %5d      %-17s\n", m->role, s);
		else if (m->role >= 0)
			printf("    %6u   %5d      %-17s %s\n", m->dev_number, m->role, s, m->name);
		else
			printf("    %6u       -      %-17s %s\n", m->dev_number, s, m->name);
	}
	if (st.journal == 1)
		printf("    %6u       -      %-17s %s\n", st.journal_dev_number, "journal",
		       st.journal_name);
	else if (st.journal == 2)
		printf("       -        -      %-17s %s\n", "journal failed", st.journal_name);
	if (st.journal)
		printf("\nConsistency Policy : journal (%s%s)\n",
		       st.journal_mode == URAID_JOURNAL_WB ? "write-back" : "write-through",
		       st.journal == 2 ? "; journal missing: writes refused" : "");
	printf("\nmismatch_cnt : %llu\n", (unsigned long long)st.mismatch_cnt);
	if (st.level == 4 || st.level == 5 || st.level == 6)
		printf("stripe_cache_size : %u\n", st.stripe_cache_size);
	return 0;
}

/* uraid stripe-cache NAME [N]: set md's stripe_cache_size of a running
 * raid4/5/6 array, or show it with the cache's counters. */
int cmd_stripe_cache(int argc, char **argv)
{
	if (argc != 2 && argc != 3)
		return cli_error("stripe-cache", "usage: uraid stripe-cache NAME [ENTRIES]");
	char err[512], line[64];
	if (argc == 3) {
		unsigned long long n;
		char *end;
		errno = 0;
		n = strtoull(argv[2], &end, 10);
		if (argv[2][0] < '0' || argv[2][0] > '9' || *end || errno ||
		    n > URAID_STRIPE_CACHE_MAX)
			return cli_error("stripe-cache", "'%s': a number of entries 0..%u expected",
			                 argv[2], URAID_STRIPE_CACHE_MAX);
		snprintf(line, sizeof(line), "stripe-cache %llu", n);
		if (uraid_control_request(argv[1], line, NULL, 0, NULL, NULL, err, sizeof(err)) < 0)
			return cli_error("stripe-cache", "%s", err);
		return 0;
	}
	struct uraid_io_stats io;
	if (uraid_control_stats(argv[1], &io, err, sizeof(err)) < 0)
		return cli_error("stripe-cache", "%s", err);
	printf("stripe_cache_size %u (in use %u)\n", io.sc_size, io.sc_used);
	printf("member requests: %llu reads (%llu MiB), %llu writes (%llu MiB)\n",
	       (unsigned long long)io.member_reads,
	       (unsigned long long)(io.member_read_bytes >> 20),
	       (unsigned long long)io.member_writes,
	       (unsigned long long)(io.member_write_bytes >> 20));
	uint64_t avoided = io.sc_reads_direct > io.sc_reads_writeout
	                       ? io.sc_reads_direct - io.sc_reads_writeout
	                       : 0;
	printf("cache: %llu sectors written in, %llu read hits; write-outs: %llu full, %llu rmw, "
	       "%llu rcw; heads evicted %llu, idle %llu; member reads avoided ~%llu\n",
	       (unsigned long long)io.sc_write_sectors, (unsigned long long)io.sc_read_hit_sectors,
	       (unsigned long long)io.sc_full_runs, (unsigned long long)io.sc_rmw_runs,
	       (unsigned long long)io.sc_rcw_runs, (unsigned long long)io.sc_evicted,
	       (unsigned long long)io.sc_idle, (unsigned long long)avoided);
	return 0;
}
