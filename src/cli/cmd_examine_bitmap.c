/* uraid examine --bitmap MEMBER... (mdadm --examine-bitmap, -X): each
 * member's internal bitmap, worded as mdadm 4.2's ExamineBitmap prints it:
 * the header's fields, its bit count (sync size over the chunk) and how
 * many of those bits are set on disk. A member without a bitmap, or whose
 * header the kernel would refuse, is named with the problem (exit 1). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/examine_int.h"
#include "meta/md_bitmap.h"
#include "meta/md_super.h"
#include "member/member.h"

void examine_human_size(uint64_t bytes, char *out, size_t len)
{
	unsigned __int128 b = bytes;
	const char *bin, *dec;
	unsigned __int128 cb, cd;
	if (bytes < 5000 * 1024) {
		out[0] = 0;
		return;
	}
	if (bytes < 2ull << 30) {
		cb = (b * 200 / (1u << 20) + 1) / 2;
		cd = (b / (1000000 / 200) + 1) / 2;
		bin = "MiB", dec = "MB";
	} else if (bytes < 2ull << 40) {
		cb = (b * 200 / (1u << 30) + 1) / 2;
		cd = (b / (1000000000 / 200) + 1) / 2;
		bin = "GiB", dec = "GB";
	} else {
		cb = (b * 200 / (1ull << 40) + 1) / 2;
		cd = (b / (1000000000000ull / 200) + 1) / 2;
		bin = "TiB", dec = "TB";
	}
	snprintf(out, len, " (%llu.%02llu %s %llu.%02llu %s)", (unsigned long long)(cb / 100),
	         (unsigned long long)(cb % 100), bin, (unsigned long long)(cd / 100),
	         (unsigned long long)(cd % 100), dec);
}

/* mdadm's human_chunksize: "4 KB", "64 MB". */
static void chunk_text(uint64_t bytes, char *out, size_t len)
{
	static const char *const unit[] = {"B", "KB", "MB", "GB", "TB"};
	int i = 0;
	while (bytes >= 1024 && !(bytes % 1024) && i < 4) {
		bytes /= 1024;
		i++;
	}
	snprintf(out, len, "%llu %s", (unsigned long long)bytes, unit[i]);
}

/* mdadm's bitmap_state: OK, the stale flag alone, anything else. */
static const char *state_text(uint32_t state)
{
	return state == 0 ? "OK" : state == MD_BITMAP_STALE ? "Out of date" : "Unknown";
}

/* The header and bits of path's internal bitmap into *sb / *bits
 * (malloc'd, *nbits of them), *v090 for 0.90 metadata; a message in err
 * otherwise. */
static int read_bitmap(const char *path, struct md_bitmap_sb *sb, uint8_t **bits, uint64_t *nbits,
                       bool *v090, char *err, size_t errlen)
{
	struct member *m = NULL;
	*bits = NULL;
	int rc = member_open_file(path, MEMBER_RDONLY, 0, &m, err, errlen);
	if (rc < 0)
		return rc;
	struct md_sb msb;
	rc = md_sb_load(m, &msb, err, errlen);
	if (rc == -ENOENT)
		snprintf(err, errlen, "No md superblock detected on %s", path);
	*v090 = rc == 0 && msb.version == MD_SB_0_90;
	if (rc == 0 && !(msb.feature_map & MD_FEATURE_BITMAP_OFFSET)) {
		snprintf(err, errlen, "%s: no internal bitmap", path);
		rc = -ENOENT;
	}
	int64_t at = (int64_t)msb.super_offset +
	             (msb.version == MD_SB_0_90 ? MD_BITMAP_090_OFFSET : msb.bitmap_offset);
	uint8_t hdr[MD_BITMAP_SB_BYTES];
	if (rc == 0 && (at < 0 || (uint64_t)at * 512 + sizeof(hdr) > m->size ||
	                member_read(m, hdr, sizeof(hdr), (uint64_t)at * 512) < 0)) {
		snprintf(err, errlen, "%s: cannot read the bitmap at sector %lld", path,
		         (long long)at);
		rc = -EIO;
	}
	char why[256] = "";
	if (rc == 0 && md_bitmap_decode(hdr, sizeof(hdr), sb, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: the bitmap is not valid: %s", path, why);
		rc = -EINVAL;
	}
	if (rc == 0) {
		*nbits = md_bitmap_bits(sb);
		uint64_t n = (*nbits + 7) / 8, off = (uint64_t)at * 512 + MD_BITMAP_SB_BYTES;
		/* the bits must lie on the member (a header's sync size is
		 * not trusted for the allocation) */
		*bits = off + n > m->size ? NULL : malloc(n ? n : 1);
		if (!*bits || member_read(m, *bits, n, off) < 0) {
			snprintf(err, errlen, "%s: cannot read the bitmap's %llu bits%s", path,
			         (unsigned long long)*nbits,
			         off + n > m->size ? ": past the end of the member" : "");
			rc = -EIO;
		}
	}
	if (rc < 0) {
		free(*bits);
		*bits = NULL;
	}
	member_close(m);
	return rc;
}

static int one(const char *path)
{
	char err[512] = "";
	struct md_bitmap_sb sb;
	uint8_t *bits;
	uint64_t nbits = 0;
	bool v090 = false;
	if (read_bitmap(path, &sb, &bits, &nbits, &v090, err, sizeof(err)) < 0)
		return cli_error("examine", "%s", err);
	uint64_t dirty = md_bitmap_count(bits, nbits);
	free(bits);
	char cs[32], hs[64], wm[64];
	chunk_text(sb.chunksize, cs, sizeof(cs));
	examine_human_size(sb.sync_size * 512, hs, sizeof(hs));
	if (sb.write_behind)
		snprintf(wm, sizeof(wm), "Allow write behind, max %u", sb.write_behind);
	else
		snprintf(wm, sizeof(wm), "Normal");
	printf("        Filename : %s\n", path);
	printf("           Magic : %08x\n", sb.magic);
	printf("         Version : %u\n", sb.version);
	/* mdadm: the bytes in order; 0.90's (host-order words, as the
	 * kernel copies them) each word as a number */
	printf("            UUID : ");
	for (int i = 0; i < 16; i++)
		printf("%02x%s", sb.uuid[v090 ? (i & ~3) + 3 - (i & 3) : i],
		       i % 4 == 3 && i < 15 ? ":" : "");
	printf("\n");
	printf("          Events : %llu\n", (unsigned long long)sb.events);
	printf("  Events Cleared : %llu\n", (unsigned long long)sb.events_cleared);
	printf("           State : %s\n", state_text(sb.state));
	printf("       Chunksize : %s\n", cs);
	printf("          Daemon : %us flush period\n", sb.daemon_sleep);
	printf("      Write Mode : %s\n", wm);
	printf("       Sync Size : %llu%s\n", (unsigned long long)sb.sync_size / 2, hs);
	printf("          Bitmap : %llu bits (chunks), %llu dirty (%2.1f%%)\n",
	       (unsigned long long)nbits, (unsigned long long)dirty,
	       100.0 * (double)dirty / (double)(nbits ? nbits : 1));
	fflush(stdout);
	return 0;
}

int examine_bitmap(int argc, char **argv)
{
	int status = 0;
	for (int i = 0; i < argc; i++)
		status |= one(argv[i]) ? 1 : 0;
	return status;
}
