/* uraid examine --badblocks MEMBER... (mdadm --examine-badblocks): the
 * entries of each member's bad block log, worded as mdadm 4.2's
 * examine_badblocks_super1 prints them, or as JSON. Then the log is judged
 * as assembly judges it (meta/md_badblocks.c): a log assembly would refuse
 * is named with the problem and the exit status is 1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/examine_int.h"
#include "meta/md_badblocks.h"
#include "meta/md_super.h"
#include "member/member.h"

#define MDADM_MAX_LOG 100 /* sectors: mdadm calls a larger log not configured */

/* "No bad-blocks list configured" (0), "is empty" (1), listed (2); -1 on a
 * read error. The raw log is left in *buf (len bytes) for the check. */
static int read_log(struct member *m, const struct md_sb *sb, uint8_t **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	if (!sb->bblog_size || sb->bblog_size > MDADM_MAX_LOG || !sb->bblog_offset)
		return 0;
	if (!(sb->feature_map & MD_FEATURE_BAD_BLOCKS))
		return 1;
	int64_t at = (int64_t)sb->super_offset + (int32_t)sb->bblog_offset;
	size_t n = (size_t)sb->bblog_size * 512;
	if (at < 0 || (uint64_t)at * 512 + n > m->size)
		return -1;
	*buf = malloc(n);
	if (!*buf || member_read(m, *buf, n, (uint64_t)at * 512) < 0) {
		free(*buf);
		*buf = NULL;
		return -1;
	}
	*len = n;
	return 2;
}

static int one(const char *path, bool json, bool first)
{
	char err[512] = "";
	struct member *m = NULL;
	int rc = member_open_file(path, MEMBER_RDONLY, 0, &m, err, sizeof(err));
	struct md_sb sb;
	if (rc == 0) {
		rc = md_sb_load(m, &sb, err, sizeof(err));
		if (rc == -ENOENT)
			snprintf(err, sizeof(err), "No md superblock detected on %s", path);
	}
	if (rc == 0 && sb.version == MD_SB_0_90) {
		/* mdadm: "0.90 metadata does not support badblocks" */
		snprintf(err, sizeof(err), "%s: 0.90 metadata does not support badblocks", path);
		rc = -EOPNOTSUPP;
	}
	if (rc < 0) {
		if (m)
			member_close(m);
		if (json) {
			printf("%s\n{", first ? "" : ",");
			examine_json_str("member", path);
			printf(", ");
			examine_json_str("error", err);
			printf("}");
		}
		return cli_error("examine", "%s", err);
	}
	uint8_t *buf;
	size_t len;
	int kind = read_log(m, &sb, &buf, &len);
	if (json) {
		printf("%s\n{", first ? "" : ",");
		examine_json_str("member", path);
		printf(", \"log\": \"%s\", \"bad_blocks\": [", kind == 0   ? "none"
		                                               : kind == 1 ? "empty"
		                                               : kind == 2 ? "present"
		                                                           : "unreadable");
	} else if (kind == 0) {
		printf("No bad-blocks list configured on %s\n", path);
	} else if (kind == 1) {
		printf("Bad-blocks list is empty in %s\n", path);
	} else if (kind == 2) {
		printf("Bad-blocks on %s:\n", path);
	}
	uint64_t s, n;
	for (int i = 0; kind == 2 && md_bbl_entry(buf, len, sb.bblog_shift, i, &s, &n); i++) {
		if (json)
			printf("%s[%llu, %llu]", i ? ", " : "", (unsigned long long)s,
			       (unsigned long long)n);
		else
			printf("%20llu for %llu sectors\n", (unsigned long long)s,
			       (unsigned long long)n);
	}
	if (json)
		printf("]");
	int status = 0;
	if (kind < 0) {
		cli_error("examine", "%s: cannot read its bad-blocks list", path);
		status = 1;
	}
	/* What assembly would say about this log. */
	struct md_bbl *l = malloc(sizeof(*l));
	rc = l ? md_bbl_locate(&sb, m->size / 512, l, err, sizeof(err)) : -ENOMEM;
	if (rc == 1 && kind == 2 && len >= (size_t)l->sectors * 512)
		rc = md_bbl_decode(l, buf, (size_t)l->sectors * 512, m->size / 512, err,
		                   sizeof(err));
	if (rc < 0 && status == 0) {
		if (json) {
			printf(", ");
			examine_json_str("refused", err);
		}
		cli_error("examine", "%s: bad block log refused: %s", path, err);
		status = 1;
	}
	if (json)
		printf("}");
	free(l);
	free(buf);
	member_close(m);
	fflush(stdout);
	return status;
}

int examine_badblocks(int argc, char **argv, bool json)
{
	int status = 0;
	if (json)
		printf("[");
	for (int i = 0; i < argc; i++)
		status |= one(argv[i], json, i == 0);
	if (json)
		printf("\n]\n");
	return status;
}
