/* What `uraid create` would destroy on a member: md superblocks (any
 * version), GEOM metadata (gmirror, graid3), partition tables, file systems
 * and swap. Read-only probes through the same codecs assemble uses plus a
 * few signatures. As mdadm's Create (check_raid, check_ext2,
 * check_partitions, then ask("Continue creating array")), create reports
 * each finding and asks before it writes, unless --run (or --force) says
 * not to; without a terminal to ask on, it refuses (mdadm would read the
 * answer from whatever stdin is: `yes | uraid create` must not destroy an
 * array). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/create_probe.h"
#include "layout/layout.h"
#include "member/member.h"
#include "meta/geom.h"
#include "meta/md_super.h"

/* Enough for every signature below: btrfs's superblock at 64 KiB. */
#define PROBE_BYTES (128u * 1024)

static void note_md(const char *path, const struct md_sb *sb)
{
	/* 1.x ctime: seconds in the low 40 bits. */
	time_t ct = (time_t)(sb->version == MD_SB_0_90 ? sb->ctime : sb->ctime & 0xffffffffffull);
	char when[64] = "?";
	struct tm tm;
	if (localtime_r(&ct, &tm))
		strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm);
	char uuid[36];
	md_uuid_format(sb->set_uuid, uuid);
	fprintf(stderr, "uraid: create: %s appears to be part of a raid array:\n", path);
	fprintf(stderr, "       level=%s devices=%u ctime=%s (md %s superblock%s%s, uuid %s)\n",
	        level_name(sb->level), sb->raid_disks, when, md_sb_version_name(sb->version),
	        sb->set_name[0] ? ", name " : "", sb->set_name, uuid);
}

/* Signatures in the first PROBE_BYTES (shorter for small members). */
static int probe_signatures(const char *path, const uint8_t *b, size_t n)
{
	int found = 0;
	if (n >= 1024 + 58 && b[1024 + 56] == 0x53 && b[1024 + 57] == 0xef) {
		fprintf(stderr, "uraid: create: %s appears to contain an ext2fs file system\n",
		        path);
		found++;
	}
	if (n >= 4 && !memcmp(b, "XFSB", 4)) {
		fprintf(stderr, "uraid: create: %s appears to contain an xfs file system\n", path);
		found++;
	}
	if (n >= 0x10040 + 8 && !memcmp(b + 0x10040, "_BHRfS_M", 8)) {
		fprintf(stderr, "uraid: create: %s appears to contain a btrfs file system\n", path);
		found++;
	}
	/* Swap: the signature ends the first page (any page size Linux has). */
	for (size_t page = 4096; page <= 65536; page *= 2) {
		if (n >= page && (!memcmp(b + page - 10, "SWAPSPACE2", 10) ||
		                  !memcmp(b + page - 10, "SWAP-SPACE", 10))) {
			fprintf(stderr, "uraid: create: %s appears to be a swap area\n", path);
			found++;
			break;
		}
	}
	/* GPT header at LBA 1 (512- or 4096-byte sectors), else an MBR. */
	bool gpt = (n >= 520 && !memcmp(b + 512, "EFI PART", 8)) ||
	           (n >= 4104 && !memcmp(b + 4096, "EFI PART", 8));
	if (gpt || (n >= 512 && b[510] == 0x55 && b[511] == 0xaa)) {
		fprintf(stderr,
		        "uraid: create: partition table exists on %s (%s) but will be lost or\n"
		        "       meaningless after creating array\n",
		        path, gpt ? "GPT" : "MBR signature 0x55AA");
		found++;
	}
	return found;
}

int create_probe_member(const char *path)
{
	struct member *m;
	char err[512];
	if (member_open_file(path, MEMBER_RDONLY, 0, &m, err, sizeof(err)) < 0)
		return 0; /* missing (--size creates it) or unreadable: create says why */
	int found = 0;
	struct md_sb *sb = malloc(sizeof(*sb));
	int rc = sb ? md_sb_load(m, sb, err, sizeof(err)) : -ENOMEM;
	if (rc == 0) {
		note_md(path, sb);
		found++;
	} else if (rc != -ENOENT && rc != -ENOSPC && rc != -ENOMEM) {
		/* A superblock with a bad checksum is still someone's array. */
		fprintf(stderr, "uraid: create: %s holds a damaged md superblock: %s\n", path, err);
		found++;
	}
	free(sb);
	struct geom_mirror_md gm;
	struct geom_raid3_md g3;
	if (geom_mirror_read(m, &gm, err, sizeof(err)) == 0) {
		fprintf(stderr, "uraid: create: %s appears to be part of gmirror %s\n", path,
		        gm.name);
		found++;
	}
	if (geom_raid3_read(m, &g3, err, sizeof(err)) == 0) {
		fprintf(stderr, "uraid: create: %s appears to be part of graid3 %s\n", path,
		        g3.name);
		found++;
	}
	uint64_t size = m->size;
	size_t n = size < PROBE_BYTES ? (size_t)(size & ~511ull) : PROBE_BYTES;
	uint8_t *buf = n ? malloc(n) : NULL;
	if (buf && member_read(m, buf, n, 0) == 0)
		found += probe_signatures(path, buf, n);
	free(buf);
	member_close(m);
	return found;
}

/* mdadm's ask(): "y"/"Y" or "n"/"N" and a newline; an empty line or
 * anything else is no. */
static bool ask(const char *question)
{
	char buf[3] = {0};
	fprintf(stderr, "%s [y/N]? ", question);
	fflush(stderr);
	if (!fgets(buf, sizeof(buf), stdin))
		return false;
	if (strlen(buf) == 1) {
		fprintf(stderr, "uraid: create: assuming no.\n");
		return false;
	}
	if (buf[1] == '\n' && toupper((unsigned char)buf[0]) == 'Y')
		return true;
	if (buf[1] != '\n' || toupper((unsigned char)buf[0]) != 'N')
		fprintf(stderr, "uraid: create: bad option.\n");
	return false;
}

int create_confirm(char **paths, int n, bool run)
{
	int found = 0;
	for (int i = 0; i < n; i++)
		found += create_probe_member(paths[i]);
	if (!found)
		return 0;
	if (run) {
		fprintf(stderr, "uraid: create: creating anyway (--run/--force)\n");
		return 0;
	}
	if (!isatty(0))
		return cli_error("create",
		                 "not overwriting what the members hold (above) without a "
		                 "terminal to ask on; --run creates anyway. Nothing was written");
	if (!ask("Continue creating array"))
		return cli_error("create", "create aborted. Nothing was written");
	return 0;
}
