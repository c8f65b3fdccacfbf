/* uraid status: what /proc/mdstat would show for the running arrays (the
 * text from src/control/mdstat.c), or --json; uraid stripe-cache. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
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

/* GEOM arrays have no md personality: their own lines, mdstat-like. */
static void print_geom(const char *name, const struct uraid_status *st)
{
	printf("%s : active%s %s", name, st->readonly ? " (read-only)" : "", level_name(st->level));
	for (int i = st->nmembers - 1; i >= 0; i--) {
		const struct uraid_member_status *m = &st->members[i];
		if (m->state == URAID_MEMBER_MISSING)
			continue;
		printf(" %s[%u]%s", base(m->name), (unsigned)m->role,
		       m->state == URAID_MEMBER_FAULTY  ? "(F)"
		       : m->state == URAID_MEMBER_SPARE ? "(S)"
		                                        : "");
	}
	printf("\n");
	cli_geom_mdstat(st);
	printf(" [%d/%d] [", st->raid_disks, st->working);
	for (int i = 0; i < st->nmembers && st->members[i].role >= 0; i++)
		putchar(st->members[i].state == URAID_MEMBER_IN_SYNC ? 'U' : '_');
	printf("]\n");
	if (st->sync_action != URAID_SYNC_IDLE && st->sync_total)
		printf("      %s = %.1f%% (%llu/%llu)\n", action_name(st->sync_action),
		       (double)st->sync_done * 100 / (double)st->sync_total,
		       (unsigned long long)st->sync_done / 2,
		       (unsigned long long)st->sync_total / 2);
	printf("\n");
}

/* uraid's own counters (--verbose), after the array's mdstat lines. */
static void print_verbose(const struct uraid_status *st)
{
	if (st->overlay[0]) /* nothing reaches the members */
		printf("      overlay %s (members read-only)\n", st->overlay);
	if (st->stripe_cache_size)
		printf("      stripe_cache_size %u\n", st->stripe_cache_size);
	printf("      mismatch_cnt %llu\n", (unsigned long long)st->mismatch_cnt);
	/* Thin members: what each member file takes on its file system
	 * (discards punch holes) against its apparent size. */
	for (int i = 0; i < st->nmembers; i++) {
		struct stat sb;
		const char *nm = st->members[i].name;
		if (nm[0] != '/' || stat(nm, &sb) < 0 || !S_ISREG(sb.st_mode) || !sb.st_size)
			continue;
		unsigned long long used = (unsigned long long)sb.st_blocks * 512;
		printf("      %s allocated %llu KiB of %llu KiB (%.0f%%)\n", nm, used / 1024,
		       (unsigned long long)sb.st_size / 1024,
		       (double)used * 100 / (double)sb.st_size);
	}
}

/* Remote members' links (RUN/NAME.links, kept by the array's server). */
static void print_links(const char *name)
{
	char text[16384], err[512];
	if (uraid_run_read(name, ".links", text, sizeof(text), err, sizeof(err)) <= 0)
		return;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		printf("      remote %s\n", line);
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
	if (st->overlay[0]) {
		printf(",\"overlay\":");
		json_str(st->overlay);
	}
	printf("}");
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cmd_status(int argc, char **argv)
{
	bool json = false, verbose = false;
	int first = 1;
	for (; first < argc && argv[first][0] == '-'; first++) {
		if (!strcmp(argv[first], "--json")) {
			json = true;
		} else if (!strcmp(argv[first], "--verbose") || !strcmp(argv[first], "-v")) {
			verbose = true;
		} else if (!strcmp(argv[first], "--help") || !strcmp(argv[first], "-h")) {
			printf(
			    "usage: uraid status [--verbose|--json] [NAME...]\n"
			    "  what /proc/mdstat would show for the running arrays (every one\n"
			    "  in the run directory without NAMEs; $URAID_RUN_DIR/mdstat holds\n"
			    "  the same text); --verbose adds uraid's own counters\n"
			    "  (stripe_cache_size, mismatch_cnt, each member file's allocated and\n"
			    "  apparent size), --json is machine-readable.\n");
			return 0;
		} else if (!strcmp(argv[first], "--")) {
			first++;
			break;
		} else {
			return cli_error("status",
			                 "unknown option '%s' (--verbose, --json, --help)",
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
	/* md's list of arrays: names sorted, as the run directory's mdstat */
	qsort(names, (size_t)n, sizeof(names[0]), name_cmp);
	int status = 0;
	char *text = json ? NULL : malloc(URAID_MDSTAT_TEXT_MAX);
	if (!json && !text)
		return cli_error("status", "out of memory");
	if (json)
		printf("[");
	else
		printf("%s\n", URAID_MDSTAT_PERSONALITIES);
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
		} else if (cli_is_geom(st.level)) {
			print_geom(names[i], &st);
		} else {
			if (uraid_mdstat_format(names[i], &st, text, URAID_MDSTAT_TEXT_MAX) > 0)
				fputs(text, stdout);
			if (verbose) {
				print_verbose(&st);
				print_links(names[i]);
				printf("\n");
			}
		}
		fflush(stdout);
	}
	if (json)
		printf("]\n");
	else
		printf("%s\n", URAID_MDSTAT_UNUSED);
	free(text);
	for (int i = 0; i < nfound; i++)
		free(found[i]);
	return status;
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
