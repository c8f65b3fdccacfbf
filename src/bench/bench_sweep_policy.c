/* `uraid bench --bitmap` / `--journal DEV`: which consistency policies a
 * sweep compares (none vs bitmap, none vs write-through vs write-back), the
 * checks of the options and of the journal device made before anything is
 * written, and which policies a level can have (md: a bitmap on raid1/4/5/6/
 * 10, a journal on raid4/5/6 only, never both). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench_sweep.h"
#include "cli/cli.h"

#define JOURNAL_MIN     (4ull << 20)
#define JOURNAL_DEFAULT (256ull << 20)

bool sweep_policy_fits(int level, int cs)
{
	if (cs <= BW_CS_NONE)
		return true;
	if (cs == BW_CS_BITMAP)
		return level == 1 || level == 4 || level == 5 || level == 6 || level == 10;
	return level == 4 || level == 5 || level == 6;
}

/* The journal member: a new file (created, removed at the end: *made), or
 * with --force-destroy an existing file or an unused block device (checked
 * like --members-dev devices). Its size must hold the journal. */
static int journal_target(struct sweep *o, bool *made, bool force)
{
	struct stat st;
	char err[512] = "";
	if (stat(o->journal, &st) < 0) {
		if (errno != ENOENT)
			return cli_error("bench", "--journal %s: %s", o->journal, strerror(errno));
		/* created per array by member_open_file: its directory must exist */
		char dir[256];
		snprintf(dir, sizeof(dir), "%s", o->journal);
		char *sl = strrchr(dir, '/');
		if (sl)
			sl == dir ? (void)(dir[1] = 0) : (void)(*sl = 0);
		else
			snprintf(dir, sizeof(dir), ".");
		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			return cli_error("bench", "--journal %s: directory %s does not exist",
			                 o->journal, dir);
		if (!o->journal_bytes)
			o->journal_bytes = JOURNAL_DEFAULT;
		*made = true;
		return 0;
	}
	uint64_t have;
	if (S_ISBLK(st.st_mode)) {
		char devs[1][256], found[256];
		snprintf(devs[0], sizeof(devs[0]), "%s", o->journal);
		if (bw_dev_check(devs, 1, force, err, sizeof(err)) < 0 ||
		    bw_dev_probe(o->journal, &have, found, sizeof(found), err, sizeof(err)) < 0)
			return cli_error("bench", "--journal: %s", err);
	} else if (S_ISREG(st.st_mode)) {
		if (!force)
			return cli_error("bench",
			                 "--journal %s: the file exists and would be overwritten; "
			                 "name a new file (made and removed by the benchmark) or "
			                 "add --force-destroy",
			                 o->journal);
		have = (uint64_t)st.st_size;
	} else {
		return cli_error("bench", "--journal %s: not a file or block device", o->journal);
	}
	if (!o->journal_bytes)
		o->journal_bytes = have;
	if (have < JOURNAL_MIN || have < o->journal_bytes)
		return cli_error(
		    "bench", "--journal %s: %llu bytes, too small for a journal of %llu",
		    o->journal, (unsigned long long)have,
		    (unsigned long long)(o->journal_bytes > JOURNAL_MIN ? o->journal_bytes
		                                                        : JOURNAL_MIN));
	return 0;
}

int sweep_policies(struct sweep *o, bool bitmap, const char *jmode, bool *journal_made, bool force)
{
	*journal_made = false;
	if (o->bitmap_chunk && !bitmap)
		return cli_error("bench", "--bitmap-chunk needs --bitmap");
	if ((jmode || o->journal_bytes) && !o->journal)
		return cli_error("bench", "--journal-mode and --journal-size need --journal DEV");
	if (bitmap && o->journal)
		return cli_error("bench", "--bitmap and --journal: md gives an array a bitmap or "
		                          "a journal, not both; run them as two sweeps");
	if (!bitmap && !o->journal)
		return 0;
	int modes = 1 | 1 << BW_CS_JWT | 1 << BW_CS_JWB; /* a bit per enum bw_consistency */
	if (jmode && !strcmp(jmode, "wt"))
		modes = 1 | 1 << BW_CS_JWT;
	else if (jmode && !strcmp(jmode, "wb"))
		modes = 1 | 1 << BW_CS_JWB;
	else if (jmode && strcmp(jmode, "all"))
		return cli_error("bench", "--journal-mode %s: wt, wb or all", jmode);
	o->ncs = 0;
	o->cs[o->ncs++] = BW_CS_NONE;
	if (bitmap)
		o->cs[o->ncs++] = BW_CS_BITMAP;
	for (int cs = BW_CS_JWT; o->journal && cs <= BW_CS_JWB; cs++)
		if (modes & (1 << cs))
			o->cs[o->ncs++] = (enum bw_consistency)cs;
	/* At least one level of the sweep must take the policy. */
	bool any = false;
	for (int i = 0; i < o->nlevels; i++)
		any |= sweep_policy_fits(o->levels[i], o->cs[1]);
	if (!any)
		return cli_error("bench", "%s: no level of --levels can have it (md: %s)",
		                 bitmap ? "--bitmap" : "--journal",
		                 bitmap ? "a bitmap needs redundancy: raid1, 4, 5, 6, 10"
		                        : "a write journal only on raid4, 5, 6");
	if (o->journal) {
		/* the same device under another name (a by-id link) counts too */
		struct stat js, ms;
		bool jblk = stat(o->journal, &js) == 0 && S_ISBLK(js.st_mode);
		for (int i = 0; o->cfg.kind == BW_DEV && i < o->cfg.ndevs; i++)
			if (!strcmp(o->cfg.devs[i], o->journal) ||
			    (jblk && stat(o->cfg.devs[i], &ms) == 0 && ms.st_rdev == js.st_rdev))
				return cli_error("bench",
				                 "--journal %s is also a --members-dev device (%s)",
				                 o->journal, o->cfg.devs[i]);
		int r = journal_target(o, journal_made, force);
		if (r)
			return r;
	}
	return 0;
}

int sweep_run_policies(struct sweep *o, int level, int n, uint32_t chunk, const char *lay, int sc,
                       char *err, size_t errlen)
{
	if (!o->ncs)
		return sweep_run_config(o, level, n, chunk, lay, sc, -1, err, errlen);
	int r = 0;
	for (int i = 0; r == 0 && i < o->ncs; i++) {
		if (sweep_policy_fits(level, o->cs[i])) {
			r = sweep_run_config(o, level, n, chunk, lay, sc, o->cs[i], err, errlen);
			continue;
		}
		fprintf(stderr,
		        "uraid: bench: note: raid%d with %d members: no %s (md: %s), run "
		        "without\n",
		        level, n, bw_consistency_name(o->cs[i]),
		        o->cs[i] == BW_CS_BITMAP ? "raid1/4/5/6/10 only" : "raid4/5/6 only");
	}
	return r;
}
