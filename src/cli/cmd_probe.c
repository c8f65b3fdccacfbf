/* uraid probe MEMBER...: what these members are (src/probe/), read-only:
 * superblocks and signatures found, and the geometries the data supports,
 * each with its evidence and the `uraid build` line that reads it.
 * Exit status: 0 a convincing geometry (or md superblocks) found, 3 nothing
 * convincing, 1 a member could not be read, 2 bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "cli/cli.h"
#include "layout/layout.h"
#include "probe/probe.h"

struct files {
	int fd[PROBE_MAX_MEMBERS];
	bool quiet;
};

static int file_read(void *ctx, int m, void *buf, size_t len, uint64_t off)
{
	struct files *f = ctx;
	size_t done = 0;
	while (done < len) {
		ssize_t r = pread(f->fd[m], (char *)buf + done, len - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		done += (size_t)r;
	}
	return 0;
}

static void show_progress(void *ctx, const char *what)
{
	struct files *f = ctx;
	if (!f->quiet)
		fprintf(stderr, "\ruraid: probe: %.70s\033[K", what);
}

/* The build command line of a candidate, one word per entry. */
static int build_argv(const struct probe_candidate *c, char **members, const char *name,
                      char words[][PATH_MAX + 32], int max)
{
	int k = 0;
	char lay[64] = "";
	snprintf(words[k++], PATH_MAX, "uraid");
	snprintf(words[k++], PATH_MAX, "build");
	snprintf(words[k++], PATH_MAX, "--name=%s", name);
	snprintf(words[k++], PATH_MAX, "--level=%s", level_name(c->level));
	snprintf(words[k++], PATH_MAX, "--raid-devices=%d", c->raid_devices);
	/* linear: its rounding, 0 said outright (build's default is mdadm's 64K) */
	if ((c->chunk_sectors && c->level != URAID_LEVEL_RAID1) || c->level == URAID_LEVEL_LINEAR)
		snprintf(words[k++], PATH_MAX, "--chunk=%uK", c->chunk_sectors / 2);
	if ((c->level == URAID_LEVEL_RAID5 || c->level == URAID_LEVEL_RAID6 ||
	     c->level == URAID_LEVEL_RAID10) &&
	    layout_name(c->level, c->layout, lay, sizeof(lay)) == 0 && lay[0])
		snprintf(words[k++], PATH_MAX, "--layout=%s", lay);
	snprintf(words[k++], PATH_MAX, "--data-offset=%llus", (unsigned long long)c->data_offset);
	for (int r = 0; r < c->raid_devices && k < max; r++)
		snprintf(words[k++], PATH_MAX + 32, "%s",
		         c->order[r] >= 0 ? members[c->order[r]] : "missing");
	return k;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void print_json(const struct probe_result *r, char **members, const char *name)
{
	static char words[PROBE_MAX_MEMBERS + 16][PATH_MAX + 32];
	printf("{\"summary\":");
	json_str(r->summary);
	printf(",\"signatures\":[");
	for (int i = 0; i < r->nsigs; i++) {
		printf("%s{\"member\":", i ? "," : "");
		json_str(members[r->sigs[i].member]);
		printf(",\"offset\":%llu,\"what\":", (unsigned long long)r->sigs[i].offset);
		json_str(r->sigs[i].text);
		printf("}");
	}
	printf("],\"candidates\":[");
	for (int i = 0; i < r->ncand; i++) {
		const struct probe_candidate *c = &r->cand[i];
		int k = build_argv(c, members, name, words, PROBE_MAX_MEMBERS + 16);
		printf("%s{\"build\":[", i ? "," : "");
		for (int j = 0; j < k; j++) {
			if (j)
				putchar(',');
			json_str(words[j]);
		}
		char lay[64] = "";
		layout_name(c->level, c->layout, lay, sizeof(lay));
		printf("],\"level\":\"%s\",\"raid_devices\":%d,\"chunk\":%u,\"layout\":",
		       level_name(c->level), c->raid_devices, c->chunk_sectors * 512);
		json_str(lay);
		printf(",\"data_offset\":%llu,\"score\":%.3f,\"agree\":%d,\"disagree\":%d,"
		       "\"evidence\":",
		       (unsigned long long)c->data_offset * 512, c->score, c->agree, c->disagree);
		json_str(c->evidence);
		printf(",\"tied_with\":[");
		for (int j = 0, k2 = 0; j < r->ncand; j++)
			if (c->ties & (1u << j))
				printf("%s%d", k2++ ? "," : "", j + 1);
		printf("],\"raw\":%s}", c->raw ? "true" : "false");
	}
	printf("]}\n");
}

static void print_text(const struct probe_result *r, char **members, const char *name)
{
	static char words[PROBE_MAX_MEMBERS + 16][PATH_MAX + 32];
	for (int i = 0; i < r->nsigs; i++)
		printf("%s at byte %llu: %s\n", members[r->sigs[i].member],
		       (unsigned long long)r->sigs[i].offset, r->sigs[i].text);
	printf("%s\n", r->summary);
	for (int i = 0; i < r->ncand; i++) {
		const struct probe_candidate *c = &r->cand[i];
		printf(
		    "\ncandidate %d: score %.3f (%d checks agree, %d disagree)\n  evidence: %s\n  ",
		    i + 1, c->score, c->agree, c->disagree, c->evidence);
		int k = build_argv(c, members, name, words, PROBE_MAX_MEMBERS + 16);
		for (int j = 0; j < k; j++)
			printf("%s%s", j ? " " : "", words[j]);
		printf("\n");
		if (c->ties) {
			printf("  TIED with candidate");
			for (int j = 0, k2 = 0; j < r->ncand; j++)
				if (c->ties & (1u << j))
					printf("%s %d", k2++ ? "," : "", j + 1);
			printf(": the evidence cannot tell them apart; check the content each "
			       "build line reads\n");
		}
	}
	if (!r->ncand && r->have_rejected) {
		const struct probe_candidate *c = &r->best_rejected;
		char lay[64] = "";
		layout_name(c->level, c->layout, lay, sizeof(lay));
		printf("best rejected: %s %s, %d devices, chunk %uK, data offset %llu sectors: %d "
		       "checks agree, %d disagree\n  evidence: %s\n",
		       level_name(c->level), lay, c->raid_devices, c->chunk_sectors / 2,
		       (unsigned long long)c->data_offset, c->agree, c->disagree, c->evidence);
	}
}

int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
	                                     {"name", required_argument, NULL, 'N'},
	                                     {"quiet", no_argument, NULL, 'q'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	bool json = false;
	const char *name = "recovered";
	/* The progress line rewrites itself: only on a terminal. */
	struct files f = {.quiet = !isatty(2)};
	bool quiet = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "jN:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'N': name = optarg; break;
		case 'q': quiet = f.quiet = true; break;
		case 'h':
			printf(
			    "usage: uraid probe [--json] [--name NAME] [--quiet] MEMBER...\n"
			    "  Reads (never writes) the members, in any order: reports md, GEOM "
			    "and\n"
			    "  foreign superblocks and signatures, then the geometries their data\n"
			    "  supports, best first, with the evidence and the `uraid build` line\n"
			    "  (--name: the name in it, default 'recovered').\n"
			    "  Exit status: 0 found, 3 nothing convincing, 1 read error.\n");
			return 0;
		default: return 2;
		}
	}
	int n = argc - optind;
	if (n < 1 || n > PROBE_MAX_MEMBERS)
		return cli_error("probe", "give 1 to %d members", PROBE_MAX_MEMBERS);
	char **members = argv + optind;
	struct probe_input in = {.n = n, .read = file_read, .ctx = &f, .progress = show_progress};
	for (int i = 0; i < n; i++) {
		f.fd[i] = open(members[i], O_RDONLY | O_CLOEXEC);
		struct stat sb;
		if (f.fd[i] < 0 || fstat(f.fd[i], &sb) < 0)
			return cli_error("probe", "%s: %s", members[i], strerror(errno));
		in.size[i] = (uint64_t)sb.st_size;
		if (S_ISBLK(sb.st_mode) && ioctl(f.fd[i], BLKGETSIZE64, &in.size[i]) < 0)
			return cli_error("probe", "%s: %s", members[i], strerror(errno));
	}
	struct probe_result *r = malloc(sizeof(*r));
	char err[256];
	if (!r)
		return cli_error("probe", "out of memory");
	int rc = probe_run(&in, r, err, sizeof(err));
	if (!quiet)
		fprintf(stderr, "%suraid: probe: read %llu KiB of the members%s\n",
		        f.quiet ? "" : "\r", (unsigned long long)(r->bytes_read >> 10),
		        f.quiet ? "" : "\033[K");
	for (int i = 0; i < n; i++)
		close(f.fd[i]);
	if (rc < 0) {
		free(r);
		return cli_error("probe", "%s", err);
	}
	if (json)
		print_json(r, members, name);
	else
		print_text(r, members, name);
	int status = r->ncand ? 0 : 3;
	free(r);
	return status;
}
