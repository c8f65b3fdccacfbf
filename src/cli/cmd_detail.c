/* uraid detail NAME: what mdadm --detail prints for the same array, field
 * for field (--export: mdadm's KEY=value lines); --verbose adds uraid's own
 * counters. Members that are image files have no device numbers: their
 * Major and Minor columns say 0 0 (a block device member shows its own). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/status_geom.h"
#include "layout/layout.h"
#include "meta/md_sb_internal.h"
#include "uraid.h"

/* mdadm's human_size: binary and decimal, from 5000 KiB up. */
static void human_size(unsigned long long bytes, char *buf, size_t len)
{
	static const char *const u[][2] = {{"MiB", "MB"}, {"GiB", "GB"}, {"TiB", "TB"}};
	static const int shift[] = {20, 30, 40};
	static const long long dec[] = {1000000LL, 1000000000LL, 1000000000000LL};
	int k = bytes < (2ULL << 30) ? 0 : bytes < (2ULL << 40) ? 1 : 2;
	if (bytes < 5000 * 1024) {
		buf[0] = 0;
		return;
	}
	long long cb = (long long)((bytes * 200ULL / (1ULL << shift[k]) + 1) / 2);
	long long cd = (long long)((bytes / (unsigned long long)(dec[k] / 200) + 1) / 2);
	snprintf(buf, len, " (%lld.%02lld %s %lld.%02lld %s)", cb / 100, cb % 100, u[k][0],
	         cd / 100, cd % 100, u[k][1]);
}

static void when(const char *label, uint64_t t)
{
	time_t tt = (time_t)t;
	char *s = t ? ctime(&tt) : NULL;
	if (s)
		printf("%s : %.24s\n", label, s);
}

/* The host the array's name says it belongs to is this one (mdadm's
 * "local to host"): 1.x "HOST:name", 0.90 the uuid's second half holding
 * the start of SHA-1(host). */
static bool local_host(const struct uraid_status *st, char *host, size_t len)
{
	if (gethostname(host, len) < 0)
		return false;
	host[len - 1] = 0;
	if (st->metadata != 0) {
		size_t l = strlen(host);
		return l && !strncmp(st->name, host, l) && st->name[l] == ':';
	}
	uint8_t h[20];
	md_sha1(host, strlen(host), h);
	char want[20];
	snprintf(want, sizeof(want), "%02x%02x%02x%02x:%02x%02x%02x%02x", h[0], h[1], h[2], h[3],
	         h[4], h[5], h[6], h[7]);
	return strlen(st->uuid) == 35 && !strcmp(st->uuid + 18, want);
}

/* Device numbers of a member: a block device's own, 0 0 for a file. */
static void major_minor(const char *path, unsigned *maj, unsigned *min)
{
	struct stat sb;
	*maj = *min = 0;
	if (stat(path, &sb) == 0 && S_ISBLK(sb.st_mode)) {
		*maj = major(sb.st_rdev);
		*min = minor(sb.st_rdev);
	}
}

/* A member md would hold (not a missing slot, nor one left out). */
static bool held(const struct uraid_member_status *m)
{
	return m->state != URAID_MEMBER_MISSING && m->state != URAID_MEMBER_STALE &&
	       m->state != URAID_MEMBER_INACTIVE && !(m->flags & URAID_MEMBER_F_LEFT_OUT);
}

static bool redundant(int level)
{
	return level == 1 || level == 4 || level == 5 || level == 6 || level == 10;
}

static const char *sync_word(enum uraid_sync_action a, bool status_line)
{
	switch (a) {
	case URAID_SYNC_RECOVER: return status_line ? "Rebuild" : ", recovering";
	case URAID_SYNC_CHECK: return status_line ? "Check" : ", checking";
	case URAID_SYNC_RESYNC:
	case URAID_SYNC_REPAIR: return status_line ? "Resync" : ", resyncing";
	case URAID_SYNC_RESHAPE: return status_line ? "Reshape" : ", reshaping";
	default: return "";
	}
}

/* mdstat's per mille, as mdadm reads its percentage from /proc/mdstat. */
static unsigned sync_percent(const struct uraid_status *st)
{
	uint64_t d = st->sync_done > st->sync_total ? st->sync_total : st->sync_done;
	return (unsigned)((d >> 10) * 1000 / ((st->sync_total >> 10) + 1) / 10);
}

/* mdadm's lines for a reshape the superblocks record (the geometry
 * above is the old one). */
static void reshape_lines(const struct uraid_status *st)
{
	int d = st->reshape_delta_disks;
	if (d)
		printf("     Delta Devices : %d, (%d->%d)\n", d, st->raid_disks - d,
		       st->raid_disks);
	if (st->reshape_new_layout != st->layout && (st->level == 5 || st->level == 6)) {
		char lay[64];
		if (layout_name(st->level, st->reshape_new_layout, lay, sizeof(lay)) < 0)
			snprintf(lay, sizeof(lay), "-unknown-");
		printf("        New Layout : %s\n", lay);
	}
	if (st->reshape_new_chunk_sectors != st->chunk_sectors)
		printf("     New Chunksize : %uK\n", st->reshape_new_chunk_sectors / 2);
	printf("\n");
}

static void member_row(const struct uraid_status *st, const struct uraid_member_status *m,
                       bool slot)
{
	unsigned maj, min;
	major_minor(m->name, &maj, &min);
	bool sync = m->state == URAID_MEMBER_IN_SYNC && !(m->flags & URAID_MEMBER_F_REPLACEMENT);
	/* 0.90 numbers the members in sync by their slot (its superblock's
	 * disk table), as mdadm then shows them */
	uint32_t nr = st->metadata == 0 && slot && sync ? (uint32_t)m->role : m->dev_number;
	if (slot)
		printf("   %5u   %5u    %5u    %5d     ", nr, maj, min, m->role);
	else
		printf("   %5u   %5u    %5u        -     ", m->dev_number, maj, min);
	if (m->state == URAID_MEMBER_FAULTY)
		printf(" faulty");
	if (sync) {
		printf(" active sync");
		int nc = (int)(st->layout & 0xff), fc = (int)((st->layout >> 8) & 0xff);
		if (st->level == 10 && !(st->layout & ~0x1FFFFu) && fc == 1 && nc &&
		    st->raid_disks % (nc * fc) == 0 && nc * fc <= 26)
			printf(" set-%c", 'A' + m->role % (nc * fc));
	}
	if (m->flags & URAID_MEMBER_F_WRITEMOSTLY)
		printf(" writemostly");
	if (!sync && m->state != URAID_MEMBER_FAULTY) {
		printf(" spare");
		if (slot)
			printf(" rebuilding");
	}
	printf("   %s\n", m->name);
}

static void device_table(const struct uraid_status *st)
{
	printf("    Number   Major   Minor   RaidDevice State\n");
	for (int r = 0; r < st->raid_disks; r++) {
		const struct uraid_member_status *main = NULL, *repl = NULL;
		for (int i = 0; i < st->nmembers; i++) {
			const struct uraid_member_status *m = &st->members[i];
			if (m->role != r || m->state == URAID_MEMBER_MISSING)
				continue;
			if (m->flags & URAID_MEMBER_F_REPLACEMENT)
				repl = m;
			else if (m->state != URAID_MEMBER_STALE &&
			         m->state != URAID_MEMBER_INACTIVE)
				main = m;
		}
		if (main)
			member_row(st, main, true);
		else
			printf("       -       0        0    %5d      removed\n", r);
		if (repl)
			member_row(st, repl, true);
	}
	/* the rest (spares, faulty members, the journal) by device number, as
	 * mdadm lists them, after a blank line */
	bool first = true;
	for (uint64_t last = 0, nr;; last = nr + 1) {
		int pick = -2; /* members[] index, -1 the journal */
		nr = UINT64_MAX;
		for (int i = 0; i < st->nmembers; i++) {
			const struct uraid_member_status *m = &st->members[i];
			if (m->role < 0 && held(m) && m->dev_number >= last && m->dev_number < nr)
				nr = m->dev_number, pick = i;
		}
		if (st->journal == 1 && st->journal_dev_number >= last &&
		    st->journal_dev_number < nr)
			nr = st->journal_dev_number, pick = -1;
		if (pick == -2)
			break;
		printf("%s", first ? "\n" : "");
		first = false;
		if (pick >= 0) {
			member_row(st, &st->members[pick], false);
		} else {
			unsigned maj, min;
			major_minor(st->journal_name, &maj, &min);
			printf("   %5u   %5u    %5u        -      journal   %s\n",
			       st->journal_dev_number, maj, min, st->journal_name);
		}
	}
}

static void print_detail(const char *name, const struct uraid_status *st)
{
	char hs[64], host[256];
	int active = 0, spare = 0, failed = 0, total = 0;
	for (int i = 0; i < st->nmembers; i++) {
		const struct uraid_member_status *m = &st->members[i];
		if (!held(m))
			continue;
		total++;
		if (m->state == URAID_MEMBER_FAULTY)
			failed++;
		else if (m->state == URAID_MEMBER_IN_SYNC &&
		         !(m->flags & URAID_MEMBER_F_REPLACEMENT))
			active++;
		else
			spare++;
	}
	int journal = st->journal == 1; /* counted in Total and Working only */
	total += journal;
	printf("%s:\n", name);
	printf("           Version : %s\n", st->metadata == -1   ? "none (built)"
	                                    : st->metadata == 0  ? "0.90"
	                                    : st->metadata == 10 ? "1.0"
	                                    : st->metadata == 11 ? "1.1"
	                                                         : "1.2");
	when("     Creation Time", st->ctime);
	printf("        Raid Level : %s\n", uraid_md_personality(st->level));
	human_size(st->array_sectors * 512, hs, sizeof(hs));
	printf("        Array Size : %llu%s\n", (unsigned long long)st->array_sectors / 2, hs);
	if (st->level >= 1) {
		human_size(st->dev_sectors * 512, hs, sizeof(hs));
		printf("     Used Dev Size : %llu%s\n", (unsigned long long)st->dev_sectors / 2,
		       hs);
	}
	printf("      Raid Devices : %d\n     Total Devices : %d\n", st->raid_disks, total);
	if (st->metadata == 0)
		printf("   Preferred Minor : %d\n", st->md_minor);
	printf("       Persistence : Superblock is %spersistent\n\n",
	       st->metadata == -1 ? "not " : ""); /* uraid build: none */
	if (st->bitmap_chunk_kib)
		printf("     Intent Bitmap : Internal\n\n");
	when("       Update Time", st->utime);
	/* mdstat's resync=PENDING, as mdadm reads it: ", resyncing (PENDING)" */
	bool pending = redundant(st->level) && st->resync_pending &&
	               !(st->sync_action != URAID_SYNC_IDLE && st->sync_total);
	printf("             State : %s%s%s%s \n", st->clean ? "clean" : "active",
	       st->degraded == 0 ? ""
	       : st->broken      ? ", FAILED"
	                         : ", degraded",
	       redundant(st->level) && st->sync_total ? sync_word(st->sync_action, false) : "",
	       pending ? ", resyncing (PENDING)" : "");
	printf("    Active Devices : %d\n   Working Devices : %d\n    Failed Devices : %d\n"
	       "     Spare Devices : %d\n\n",
	       active, active + spare + journal, failed, spare);
	char lay[64] = "";
	if (st->level == 5 || st->level == 6) {
		if (layout_name(st->level, st->layout, lay, sizeof(lay)) < 0)
			snprintf(lay, sizeof(lay), "-unknown-");
		printf("            Layout : %s\n", lay);
	} else if (st->level == 0 && st->layout) {
		/* Debian 12's mdadm (4.2) has no names for raid0 layouts */
		printf("            Layout : -unknown-\n");
	} else if (st->level == 10) {
		int nc = (int)(st->layout & 0xff), fc = (int)((st->layout >> 8) & 0xff);
		printf("            Layout :");
		if (nc != 1)
			printf(" near=%d", nc);
		if (fc != 1)
			printf("%s %s=%d", nc != 1 ? "," : "",
			       st->layout & 0x10000 ? "offset" : "far", fc);
		printf("%s\n", nc * fc == 1 ? "NO REDUNDANCY" : "");
	}
	if (st->level == 0 || st->level == 4 || st->level == 5 || st->level == 6 || st->level == 10)
		printf("        Chunk Size : %uK\n\n", st->chunk_sectors / 2);
	else if (st->level == URAID_LEVEL_LINEAR)
		printf("          Rounding : %uK\n\n", st->chunk_sectors / 2);
	printf("Consistency Policy : %s\n\n", st->journal            ? "journal"
	                                      : st->ppl              ? "ppl"
	                                      : st->bitmap_chunk_kib ? "bitmap"
	                                      : redundant(st->level) ? "resync"
	                                                             : "none");
	if (redundant(st->level) && st->sync_action != URAID_SYNC_IDLE && st->sync_total)
		printf("    %7s Status : %u%% complete\n%s", sync_word(st->sync_action, true),
		       sync_percent(st), st->reshape ? "" : "\n");
	if (st->reshape)
		reshape_lines(st);
	bool local = local_host(st, host, sizeof(host));
	if (st->metadata != 0) {
		printf("              Name : %s", st->name);
		if (local)
			printf("  (local to host %s)", host);
		printf("\n              UUID : %s\n            Events : %llu\n\n", st->uuid,
		       (unsigned long long)st->events);
	} else {
		printf("              UUID : %s", st->uuid);
		if (local)
			printf(" (local to host %s)", host);
		printf("\n            Events : %u.%u\n\n", (unsigned)(st->events >> 32),
		       (unsigned)st->events);
	}
	device_table(st);
}

/* MD_DEVICE_<name>_ROLE: mdadm names members by their kernel name with
 * every non-alphanumeric character made '_'; here the file's name. */
static void export_name(const char *path, char *out, size_t len)
{
	const char *b = strrchr(path, '/');
	snprintf(out, len, "%s", b && b[1] ? b + 1 : path);
	for (char *p = out; *p; p++)
		if (!isalnum((unsigned char)*p))
			*p = '_';
}

static void print_export(const struct uraid_status *st)
{
	printf("MD_LEVEL=%s\nMD_DEVICES=%d\n", uraid_md_personality(st->level), st->raid_disks);
	printf("MD_METADATA=%s\n", st->metadata == 0    ? "0.90"
	                           : st->metadata == 10 ? "1.0"
	                           : st->metadata == 11 ? "1.1"
	                                                : "1.2");
	printf("MD_UUID=%s\n", st->uuid);
	if (st->metadata != 0)
		printf("MD_NAME=%s\n", st->name);
	for (int i = 0; i < st->nmembers; i++) {
		const struct uraid_member_status *m = &st->members[i];
		if (!held(m))
			continue;
		char e[300];
		export_name(m->name, e, sizeof(e));
		bool role = m->role >= 0 && m->state != URAID_MEMBER_FAULTY;
		if (role)
			printf("MD_DEVICE_%s_ROLE=%d\n", e, m->role);
		else
			printf("MD_DEVICE_%s_ROLE=spare\n", e);
		printf("MD_DEVICE_%s_DEV=%s\n", e, m->name);
	}
}

static void print_verbose(const struct uraid_status *st)
{
	printf("\nmismatch_cnt : %llu\n", (unsigned long long)st->mismatch_cnt);
	if (st->stripe_cache_size)
		printf("stripe_cache_size : %u\n", st->stripe_cache_size);
	if (st->journal)
		printf("journal : %s%s\n",
		       st->journal_mode == URAID_JOURNAL_WB ? "write-back" : "write-through",
		       st->journal == 2 ? "; journal missing: writes refused" : "");
	if (st->ppl)
		printf("ppl : recovered %llu stripe entries at assembly, %llu unusable\n",
		       (unsigned long long)st->ppl_recovered,
		       (unsigned long long)st->ppl_mismatches);
	if (st->overlay[0])
		printf("overlay : %s (members read-only, every write in the overlay)\n",
		       st->overlay);
	if (st->broken)
		printf("broken : a write failed on a member the array could not lose: writes "
		       "refused\n");
	if (st->readonly)
		printf("read-only : yes\n");
}

/* The old GEOM wording (no mdadm for them). */
static void print_geom(const char *name, const struct uraid_status *st)
{
	printf("%s:\n           Version : %s %d\n        Raid Level : %s\n", name,
	       level_name(st->level), st->metadata, level_name(st->level));
	printf("        Array Size : %llu (%.2f MiB)\n", (unsigned long long)st->array_sectors / 2,
	       (double)st->array_sectors / 2048);
	printf("      Raid Devices : %d\n             State : %s%s\n", st->raid_disks,
	       st->degraded ? "degraded" : "clean", st->readonly ? ", read-only" : "");
	cli_geom_detail(st);
	printf("              Name : %s\n\n    Number   RaidDevice State\n", st->name);
	for (int i = 0; i < st->nmembers; i++) {
		const struct uraid_member_status *m = &st->members[i];
		printf("    %6u   %5d      %-17s %s\n", m->dev_number, m->role,
		       m->state == URAID_MEMBER_IN_SYNC   ? "active sync"
		       : m->state == URAID_MEMBER_FAULTY  ? "faulty"
		       : m->state == URAID_MEMBER_MISSING ? "removed"
		                                          : "spare",
		       m->name);
	}
}

int cmd_detail(int argc, char **argv)
{
	bool export = false, verbose = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--export") || !strcmp(argv[i], "-Y"))
			export = true;
		else if (!strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v"))
			verbose = true;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: uraid detail [--export|--verbose] NAME\n"
			       "       uraid detail --scan [--verbose] [NAME...]\n"
			       "  what mdadm --detail prints for the running array NAME (image\n"
			       "  file members: Major and Minor 0 0); --export: mdadm's\n"
			       "  --detail --export KEY=value lines; --verbose adds uraid's own\n"
			       "  counters (mismatch_cnt, stripe_cache_size, journal mode).\n"
			       "  --scan: one ARRAY line per running array, as mdadm --detail\n"
			       "  --scan prints it.\n");
			return 0;
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else
			return cli_error("detail", "unknown option '%s' (--export, --verbose)",
			                 argv[i]);
	}
	if (i != argc - 1)
		return cli_error("detail", "usage: uraid detail [--export|--verbose] NAME");
	const char *name = argv[i];
	struct uraid_status st;
	char err[512];
	if (uraid_control_status(name, &st, err, sizeof(err)) < 0)
		return cli_error("detail", "%s", err);
	if (cli_is_geom(st.level)) {
		print_geom(name, &st);
		return 0;
	}
	if (export)
		print_export(&st);
	else
		print_detail(name, &st);
	if (verbose && !export)
		print_verbose(&st);
	return 0;
}
