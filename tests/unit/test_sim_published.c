/* The published-table parser (src/sim/sim_published.c) on the project's
 * reference files (../shared/reference/published/, read as they are) and
 * on made-up bad input: what each file says about disks, tunables, the
 * workload, its figures and the configurations it names without them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "sim/member_sim.h"
#include "sim/sim_published.h"

#define DIR "../shared/reference/published/"

static struct sp_table t;

static int load(const char *name, char *err, size_t errlen)
{
	char path[256];
	snprintf(path, sizeof(path), DIR "%s", name);
	FILE *f = fopen(path, "r");
	if (!f) {
		printf("# %s: not here, skipped\n", path);
		return 1;
	}
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return sp_parse(buf, n, &t, err, errlen);
}

static bool has_withheld(const char *name)
{
	for (int i = 0; i < t.nwithheld; i++)
		if (!strcmp(t.withheld[i], name))
			return true;
	return false;
}

static void gmirror_file(void)
{
	char err[256] = "";
	int rc = load("freebsd-gmirror-graid3-2007.md", err, sizeof(err));
	if (rc == 1)
		return;
	CHECKF(rc == 0, "%s", err);
	CHECK(t.freebsd && t.readahead == 128 * 16384);
	CHECK(t.ndisks == 2 && !strcmp(t.disks[0].label, "250") && t.disks[0].count == 3 &&
	      !strcmp(t.disks[0].profile, "wd2500js"));
	CHECK(!strcmp(t.disks[1].label, "500") && !strcmp(t.disks[1].profile, "wd5000aaks"));
	for (int i = 0; i < t.ndisks; i++)
		CHECK(sim_profile_find(t.disks[i].profile) != NULL);
	CHECK(t.smin == 1 && t.smax == 5 && !t.write);
	CHECK(t.ncols == 5 && t.col[0] == SP_COL_STREAMS && t.streams[4] == 5);
	CHECK(t.nrows == 2 && !strcmp(t.rows[0].name, "Baseline: 1x500 (WD5000AAKS)"));
	CHECK(t.rows[0].v[0] == 76 && t.rows[0].v[1] == 70 && t.rows[1].v[2] == 55);
	CHECKF(t.nwithheld == 10, "%d withheld", t.nwithheld);
	CHECK(has_withheld("graid3 3x250/2x500 (5 components)"));
	CHECK(has_withheld("graid3 3x250/2x500 (5 components) -r"));
	CHECK(has_withheld("graid3 3x250 -r"));
	CHECK(has_withheld("gmirror round-robin 2x250"));
	CHECK(has_withheld("gmirror split 128k 3x250/2x500"));
	const char *p[8];
	CHECK(sp_config_disks(&t, "gmirror split 128k 3x250/2x500", p, 8) == 5);
	CHECK(!strcmp(p[0], "wd2500js") && !strcmp(p[4], "wd5000aaks"));
	CHECK(sp_config_disks(&t, "Baseline: 1x500 (WD5000AAKS)", p, 8) == 1);
	CHECK(sp_config_disks(&t, "gmirror 3x999", p, 8) == -EINVAL);
	CHECK(sp_config_disks(&t, "no spec", p, 8) == -EINVAL);
}

static void raptor_file(void)
{
	char err[256] = "";
	int rc = load("md-raid5-raptors-2008.md", err, sizeof(err));
	if (rc == 1)
		return;
	CHECKF(rc == 0, "%s", err);
	CHECK(t.ndisks == 1 && t.disks[0].count == 10 && !strcmp(t.disks[0].label, "300"));
	CHECK(t.level == 5 && t.chunk == 1024 * 1024 && t.nmin == 3 && t.nmax == 10);
	CHECK(t.readahead == 65536ull * 512 && t.stripe_cache == 16384 && t.queue_depth == 1);
	CHECK(t.bus_mbs == 680 && !t.freebsd && t.nrows == 0);
}

static void ide_file(void)
{
	char err[256] = "";
	int rc = load("md-raid5-xfs-log-2002.md", err, sizeof(err));
	if (rc == 1)
		return;
	CHECKF(rc == 0, "%s", err);
	CHECK(t.ndisks == 1 && t.disks[0].count == 6 &&
	      !strcmp(t.disks[0].profile, "ide-7mbs-2002"));
	CHECK(t.level == 5 && t.ncols == 1 && t.col[0] == SP_COL_SEQWRITE);
	CHECK(t.nrows == 10 && !strcmp(t.rows[0].name, "2.4.18 [32,0,e]") && t.rows[0].v[0] == 20);
}

static void fs_file(void)
{
	char err[256] = "";
	int rc = load("md-raid-fs-2008.md", err, sizeof(err));
	if (rc == 1)
		return;
	CHECKF(rc == 0, "%s", err);
	CHECK(t.ndisks == 1 && !strcmp(t.disks[0].profile, "wd5001abys") && t.disks[0].count == 4);
	CHECK(t.ncols == 0 && t.nrows == 0); /* seconds: nothing the simulator gives */
}

static void bad_input(void)
{
	char err[256] = "";
	CHECK(sp_parse("no title\n", 9, &t, err, sizeof(err)) == -EINVAL && strstr(err, "title"));
	const char *wide = "# t\n| config | 1 |\n|---|---|\n| a | 1 | 2 |\n";
	CHECK(sp_parse(wide, strlen(wide), &t, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "4: 3 cells"));
	const char *word = "# t\n| config | 1 |\n|---|---|\n| a | fast |\n";
	CHECK(sp_parse(word, strlen(word), &t, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "'fast' is not a figure"));
	/* a heading of the row name and SP_MAX_COLS figures is the widest:
	 * one more cell is refused (it once wrote past the column map) */
	char head[512] = "# t\n| config |";
	for (int i = 0; i < SP_MAX_COLS; i++)
		strcat(head, " 1 |");
	strcat(head, "\n");
	CHECK(sp_parse(head, strlen(head), &t, err, sizeof(err)) == 0);
	head[strlen(head) - 1] = 0;
	strcat(head, " 1 |\n");
	CHECK(sp_parse(head, strlen(head), &t, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "more than"));
	const char nul[] = "# t\0\n| config | 1 |\n|---|---|\n| a | 3 |\n";
	CHECK(sp_parse(nul, sizeof(nul) - 1, &t, err, sizeof(err)) == 0 && t.nrows == 1);
}

TEST_MAIN(T(gmirror_file), T(raptor_file), T(ide_file), T(fs_file), T(bad_input))
