/* uraid mirror / uraid raid3: FreeBSD gmirror(8) and graid3(8) verbs on
 * member files. There is no kernel keeping the device alive between
 * commands, so each verb opens the components, acts and closes them
 * cleanly; a verb that opens read-write finishes any synchronization the
 * metadata asks for (what gmirror's autosync would do) before closing. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engine/geom.h"
#include "member/member.h"
#include "uraid.h"

#define SYNC_CHUNK (1024 * 1024)

static const char *const state_name[] = {"ACTIVE", "SYNCHRONIZING", "STALE", "FAILED", "NONE"};

static int open_paths(const char *verb, char **paths, int n, bool rdonly, struct member **m)
{
	char err[256];
	for (int i = 0; i < n; i++) {
		if (member_open_file(paths[i], rdonly ? MEMBER_RDONLY : 0, 0, &m[i], err,
		                     sizeof(err)) < 0) {
			for (int j = 0; j < i; j++)
				member_close(m[j]);
			return cli_error(verb, "%s", err);
		}
	}
	return 0;
}

static void print_warn(const char *warn)
{
	if (warn[0])
		fprintf(stderr, "uraid: warning: %s", warn);
}

/* ---- gmirror ---------------------------------------------------------- */

static int mirror_open(const char *verb, const char *name, char **paths, int n, bool rdonly,
                       struct geom_mirror **g)
{
	if (n < 1 || n > GEOM_MAX_DISKS)
		return cli_error(verb, "give the mirror's components (1 to %d)", GEOM_MAX_DISKS);
	struct member *m[GEOM_MAX_DISKS];
	if (open_paths(verb, paths, n, rdonly, m))
		return 1;
	char err[256] = "", warn[1024] = "";
	if (geom_mirror_open(m, n, rdonly, g, err, sizeof(err), warn, sizeof(warn)) < 0)
		return cli_error(verb, "%s", err);
	print_warn(warn);
	if (name && strcmp((*g)->name, name) != 0) {
		cli_error(verb, "components belong to mirror %s, not %s", (*g)->name, name);
		geom_mirror_close(*g);
		return 1;
	}
	return 0;
}

static int mirror_finish(const char *verb, struct geom_mirror *g)
{
	int rc;
	while ((rc = geom_mirror_sync_step(g, SYNC_CHUNK)) == 1)
		;
	int crc = geom_mirror_close(g);
	if (rc < 0)
		return cli_error(verb, "synchronization failed: %s", strerror(-rc));
	return crc < 0 ? cli_error(verb, "close: %s", strerror(-crc)) : 0;
}

static int mirror_find(const struct geom_mirror *g, const char *path)
{
	for (int i = 0; i < g->ndisks; i++)
		if (strcmp(g->disk[i].m->name, path) == 0)
			return i;
	return -1;
}

static void mirror_status(const struct geom_mirror *g)
{
	int act = 0;
	for (int i = 0; i < g->ndisks; i++)
		act += g->disk[i].state == GEOM_DISK_ACTIVE;
	printf("%-16s %-9s Components\n", "Name", "Status");
	for (int i = 0; i < g->ndisks; i++) {
		const struct geom_mirror_disk *d = &g->disk[i];
		char extra[48] = "";
		if (d->state == GEOM_DISK_SYNCING)
			snprintf(extra, sizeof(extra), " %llu%%",
			         (unsigned long long)(d->md.sync_offset * 100 / g->mediasize));
		char nm[32];
		snprintf(nm, sizeof(nm), "mirror/%s", g->name);
		printf("%-16s %-9s %s (%s%s)\n", i ? "" : nm,
		       i ? ""
		         : (act == g->ndisks && g->ndisks == d->md.all ? "COMPLETE" : "DEGRADED"),
		       d->m->name, state_name[d->state], extra);
	}
}

static void mirror_list(const struct geom_mirror *g)
{
	printf("Geom name: %s\nState: %s\nComponents: %d\nBalance: %s\nSlice: %u\n"
	       "Flags: %s%s\nGenID: %u\nSyncID: %u\nID: %u\nMediasize: %llu\nSectorsize: %u\n",
	       g->name, "", g->ndisks, geom_balance_name(g->bal.balance), g->bal.slice,
	       g->mflags & GEOM_MIRROR_DEV_NOAUTOSYNC ? "NOAUTOSYNC " : "",
	       g->mflags & GEOM_MIRROR_DEV_NOFAILSYNC ? "NOFAILSYNC" : "NONE", g->genid, g->syncid,
	       g->mid, (unsigned long long)g->mediasize, g->sectorsize);
	for (int i = 0; i < g->ndisks; i++) {
		const struct geom_mirror_disk *d = &g->disk[i];
		printf("%d. Name: %s\n   Mediasize: %llu\n   State: %s\n   Priority: %u\n"
		       "   Flags: 0x%llx\n   GenID: %u\n   SyncID: %u\n   ID: %u\n",
		       i + 1, d->m->name, (unsigned long long)d->m->size, state_name[d->state],
		       d->md.priority, (unsigned long long)d->md.dflags, d->md.genid, d->md.syncid,
		       d->md.did);
	}
}

/* Shared by both classes: provider data to stdout / from stdin. */
static int geom_cat(const char *verb, char **paths, int n)
{
	struct geom_array *a;
	char err[256] = "", warn[1024] = "";
	if (geom_array_open((const char *const *)paths, n, URAID_RDONLY, -1, &a, err, sizeof(err),
	                    warn, sizeof(warn)) < 0)
		return cli_error(verb, "%s", err);
	print_warn(warn);
	size_t chunk = (size_t)a->blocksize * 128;
	uint8_t *buf = malloc(chunk);
	int rc = buf ? 0 : 1;
	for (uint64_t off = 0; rc == 0 && off < a->size; off += chunk) {
		size_t l = a->size - off < chunk ? (size_t)(a->size - off) : chunk;
		int r = geom_array_read(a, buf, l, off);
		if (r < 0 && a->raid3 && a->raid3->parity_errors)
			rc = cli_error(verb, "read at %llu: parity mismatch (verify reading)",
			               (unsigned long long)off);
		else if (r < 0)
			rc = cli_error(verb, "read at %llu: %s", (unsigned long long)off,
			               strerror(-r));
		else if (fwrite(buf, 1, l, stdout) != l)
			rc = cli_error(verb, "write to stdout failed");
	}
	free(buf);
	geom_array_close(a);
	return rc;
}

static int geom_write(const char *verb, unsigned long long off, char **paths, int n)
{
	struct geom_array *a;
	char err[256] = "", warn[1024] = "";
	if (geom_array_open((const char *const *)paths, n, 0, -1, &a, err, sizeof(err), warn,
	                    sizeof(warn)) < 0)
		return cli_error(verb, "%s", err);
	print_warn(warn);
	while (geom_array_sync_step(a, SYNC_CHUNK) == 1)
		;
	int rc = 0;
	size_t chunk = (size_t)a->blocksize * 128;
	uint8_t *buf = malloc(chunk);
	if (!buf || off % a->blocksize)
		rc =
		    cli_error(verb, "offset must be a multiple of the %u-byte block", a->blocksize);
	while (rc == 0) {
		size_t got = fread(buf, 1, chunk, stdin);
		if (got == 0)
			break;
		if (got % a->blocksize) {
			rc = cli_error(verb, "input is not a multiple of the %u-byte block",
			               a->blocksize);
			break;
		}
		if (off + got > a->size) {
			rc = cli_error(verb, "input runs past the end (%llu bytes)",
			               (unsigned long long)a->size);
			break;
		}
		int r = geom_array_write(a, buf, got, off);
		if (r < 0)
			rc = cli_error(verb, "write at %llu: %s", off, strerror(-r));
		off += got;
	}
	free(buf);
	if (geom_array_close(a) < 0 && rc == 0)
		rc = cli_error(verb, "close failed");
	return rc;
}

static bool known_verb(const char *sub, const char *const *verbs)
{
	for (; *verbs; verbs++)
		if (strcmp(sub, *verbs) == 0)
			return true;
	return false;
}

/* Both classes take the same verbs. */
static const char *const geom_verbs[] = {"label",   "configure", "insert", "remove",
                                         "rebuild", "status",    "list",   "stop",
                                         "clear",   "cat",       "write",  NULL};

static int mirror_usage(void)
{
	fprintf(stderr,
	        "usage: uraid mirror label [-Fhn] [-b balance] [-s slice] NAME MEMBER...\n"
	        "       uraid mirror configure [-b balance] [-s slice] [-p priority] NAME "
	        "MEMBER...\n"
	        "                (-p sets the priority of the first MEMBER)\n"
	        "       uraid mirror insert [-p priority] NAME NEW MEMBER...\n"
	        "       uraid mirror remove|rebuild NAME PROV OTHER-MEMBER...\n"
	        "       uraid mirror status|list|stop NAME MEMBER...\n"
	        "       uraid mirror clear MEMBER...\n"
	        "       uraid mirror cat MEMBER... > data;  uraid mirror write [-o off] MEMBER... "
	        "< data\n"
	        "balance: load (default), prefer, round-robin, split\n");
	return 2;
}

int cmd_mirror(int argc, char **argv)
{
	if (argc < 2)
		return mirror_usage();
	const char *sub = argv[1];
	char verb[32];
	snprintf(verb, sizeof(verb), "mirror %s", sub);
	if (!known_verb(sub, geom_verbs)) {
		cli_error("mirror", "unknown verb '%s'", sub);
		return mirror_usage();
	}
	int balance = -1, prio = -1;
	unsigned long long slice = 0, off = 0;
	bool F = false, n = false, h = false;
	int c;
	optind = 1;
	while ((c = getopt(argc - 1, argv + 1, "+Fnhb:s:p:o:")) != -1) {
		switch (c) {
		case 'F': F = true; break;
		case 'n': n = true; break;
		case 'h': h = true; break;
		case 'b':
			balance = geom_balance_parse(optarg);
			if (balance <= 0)
				return cli_error(verb,
				                 "unknown balance '%s' (load, prefer, round-robin, "
				                 "split)",
				                 optarg);
			break;
		case 's':
			if (cli_parse_size(optarg, 1, &slice) < 0 || slice == 0 || slice % 512 ||
			    slice > UINT32_MAX)
				return cli_error(verb, "bad slice '%s' (a multiple of 512 bytes)",
				                 optarg);
			break;
		case 'p': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 0 || v > 255)
				return cli_error(verb, "priority '%s' must be 0-255", optarg);
			prio = (int)v;
			break;
		}
		case 'o':
			if (cli_parse_size(optarg, 1, &off) < 0)
				return cli_error(verb, "bad offset '%s'", optarg);
			break;
		default: return mirror_usage();
		}
	}
	char **args = argv + 1 + optind;
	int nargs = argc - 1 - optind;
	struct geom_mirror *g;
	char err[256] = "";
	if (strcmp(sub, "clear") == 0) {
		if (nargs < 1)
			return mirror_usage();
		int rc = 0;
		for (int i = 0; i < nargs; i++) {
			struct member *m;
			struct geom_mirror_md md;
			if (open_paths(verb, &args[i], 1, false, &m)) {
				rc = 1;
				continue;
			}
			if (geom_mirror_read(m, &md, err, sizeof(err)) < 0 ||
			    geom_clear(m, err, sizeof(err)) < 0)
				rc = cli_error(verb, "%s", err);
			member_close(m);
		}
		return rc;
	}
	if (strcmp(sub, "cat") == 0)
		return nargs < 1 ? mirror_usage() : geom_cat(verb, args, nargs);
	if (strcmp(sub, "write") == 0)
		return nargs < 1 ? mirror_usage() : geom_write(verb, off, args, nargs);
	if (nargs < 2)
		return mirror_usage();
	const char *name = args[0];
	if (strcmp(sub, "label") == 0) {
		struct geom_label_opts o = {.name = name,
		                            .balance = balance > 0 ? balance : GEOM_BALANCE_LOAD,
		                            .slice = (uint32_t)slice,
		                            .nofailsync = F,
		                            .noautosync = n,
		                            .hardcode = h};
		struct member *m[GEOM_MAX_DISKS];
		if (nargs - 1 > GEOM_MAX_DISKS)
			return cli_error(verb, "at most %d components", GEOM_MAX_DISKS);
		if (open_paths(verb, args + 1, nargs - 1, false, m))
			return 1;
		int rc = geom_mirror_label(&o, m, nargs - 1, err, sizeof(err));
		for (int i = 0; i < nargs - 1; i++)
			member_close(m[i]);
		return rc < 0 ? cli_error(verb, "%s", err) : 0;
	}
	if (strcmp(sub, "status") == 0 || strcmp(sub, "list") == 0) {
		if (mirror_open(verb, name, args + 1, nargs - 1, true, &g))
			return 1;
		if (sub[0] == 's')
			mirror_status(g);
		else
			mirror_list(g);
		geom_mirror_close(g);
		return 0;
	}
	if (strcmp(sub, "insert") == 0) {
		if (nargs < 3)
			return mirror_usage();
		if (mirror_open(verb, name, args + 2, nargs - 2, false, &g))
			return 1;
		struct member *m;
		if (open_paths(verb, &args[1], 1, false, &m)) {
			geom_mirror_close(g);
			return 1;
		}
		if (geom_mirror_insert(g, m, (uint8_t)(prio < 0 ? 0 : prio), err, sizeof(err)) <
		    0) {
			member_close(m);
			geom_mirror_close(g);
			return cli_error(verb, "%s", err);
		}
		return mirror_finish(verb, g);
	}
	if (mirror_open(verb, name, args + 1, nargs - 1, false, &g))
		return 1;
	int rc = 0;
	if (strcmp(sub, "configure") == 0) {
		if (balance < 0 && !slice && prio < 0)
			rc = cli_error(verb, "nothing to change (-b, -s or -p)");
		if (!rc && prio >= 0 &&
		    geom_mirror_set_priority(g, mirror_find(g, args[1]), (uint8_t)prio, err,
		                             sizeof(err)) < 0)
			rc = cli_error(verb, "%s", err);
		if (!rc && (balance > 0 || slice) &&
		    geom_mirror_configure(g, balance > 0 ? balance : g->bal.balance,
		                          (uint32_t)slice, err, sizeof(err)) < 0)
			rc = cli_error(verb, "%s", err);
	} else if (strcmp(sub, "remove") == 0 || strcmp(sub, "rebuild") == 0) {
		int d = mirror_find(g, args[1]);
		if (d < 0)
			rc = cli_error(verb, "%s is not an active component of %s", args[1],
			               g->name);
		else if ((sub[1] == 'e' && sub[2] == 'm'
		              ? geom_mirror_remove(g, d, err, sizeof(err))
		              : geom_mirror_rebuild(g, d, err, sizeof(err))) < 0)
			rc = cli_error(verb, "%s", err);
	} else if (strcmp(sub, "stop") != 0) {
		geom_mirror_close(g);
		return mirror_usage();
	}
	int frc = mirror_finish(verb, g);
	return rc ? rc : frc;
}

/* ---- graid3 ----------------------------------------------------------- */

static int raid3_open(const char *verb, const char *name, char **paths, int n, bool rdonly,
                      struct geom_raid3 **g)
{
	if (n < 1 || n > GEOM_MAX_DISKS + 1)
		return cli_error(verb, "give the device's components (up to %d)",
		                 GEOM_MAX_DISKS + 1);
	struct member *m[GEOM_MAX_DISKS + 1];
	if (open_paths(verb, paths, n, rdonly, m))
		return 1;
	char err[256] = "", warn[1024] = "";
	if (geom_raid3_open(m, n, rdonly, g, err, sizeof(err), warn, sizeof(warn)) < 0)
		return cli_error(verb, "%s", err);
	print_warn(warn);
	if (name && strcmp((*g)->name, name) != 0) {
		cli_error(verb, "components belong to raid3 %s, not %s", (*g)->name, name);
		geom_raid3_close(*g);
		return 1;
	}
	return 0;
}

static int raid3_finish(const char *verb, struct geom_raid3 *g)
{
	int rc;
	while ((rc = geom_raid3_sync_step(g, SYNC_CHUNK)) == 1)
		;
	geom_raid3_close(g);
	return rc < 0 ? cli_error(verb, "rebuild failed: %s", strerror(-rc)) : 0;
}

static int raid3_find(const struct geom_raid3 *g, const char *path)
{
	for (int i = 0; i < g->ncomp; i++)
		if (g->c[i].m && strcmp(g->c[i].m->name, path) == 0)
			return i;
	return -1;
}

static void raid3_status(const struct geom_raid3 *g, bool full)
{
	int act = 0;
	for (int i = 0; i < g->ncomp; i++)
		act += g->c[i].m && g->c[i].state == GEOM_DISK_ACTIVE;
	if (full)
		printf("Geom name: %s\nComponents: %d\nFlags: %s%s%s%s\nGenID: %u\nSyncID: %u\n"
		       "ID: %u\nMediasize: %llu\nSectorsize: %u\nZone64kFailed: 0\n",
		       g->name, g->ncomp,
		       g->mflags & GEOM_RAID3_DEV_NOAUTOSYNC ? "NOAUTOSYNC " : "",
		       g->mflags & GEOM_RAID3_DEV_ROUND_ROBIN ? "ROUND-ROBIN " : "",
		       g->mflags & GEOM_RAID3_DEV_VERIFY ? "VERIFY " : "",
		       g->mflags & GEOM_RAID3_DEV_NOFAILSYNC ? "NOFAILSYNC" : "", g->genid,
		       g->syncid, g->id, (unsigned long long)g->mediasize, g->psector);
	else
		printf("%-16s %-9s Components\n", "Name", "Status");
	char nm[32];
	snprintf(nm, sizeof(nm), "raid3/%s", g->name);
	for (int i = 0; i < g->ncomp; i++) {
		const struct geom_raid3_comp *c = &g->c[i];
		const char *st = c->m ? state_name[c->state] : "MISSING";
		if (full)
			printf("%d. Name: %s\n   Number: %d%s\n   State: %s\n   Flags: 0x%llx\n",
			       i + 1, c->m ? c->m->name : "-", i,
			       i == g->ncomp - 1 ? " (parity)" : "", st,
			       (unsigned long long)c->md.dflags);
		else
			printf("%-16s %-9s %s (%s)\n", i ? "" : nm,
			       i ? "" : (act == g->ncomp ? "COMPLETE" : "DEGRADED"),
			       c->m ? c->m->name : "-", st);
	}
}

static int raid3_usage(void)
{
	fprintf(
	    stderr,
	    "usage: uraid raid3 label [-Fhnrw] [-s blocksize] NAME C0 C1 C2 ... (last = parity,\n"
	    "                2^n + 1 components)\n"
	    "       uraid raid3 configure [-aAfFrRwW] NAME MEMBER...\n"
	    "       uraid raid3 insert -n NUMBER NAME NEW MEMBER...\n"
	    "       uraid raid3 remove -n NUMBER NAME MEMBER...\n"
	    "       uraid raid3 rebuild NAME PROV OTHER-MEMBER...\n"
	    "       uraid raid3 status|list|stop NAME MEMBER...\n"
	    "       uraid raid3 clear MEMBER...\n"
	    "       uraid raid3 cat MEMBER... > data;  uraid raid3 write [-o off] MEMBER... "
	    "< data\n");
	return 2;
}

int cmd_raid3(int argc, char **argv)
{
	if (argc < 2)
		return raid3_usage();
	const char *sub = argv[1];
	char verb[32];
	snprintf(verb, sizeof(verb), "raid3 %s", sub);
	if (!known_verb(sub, geom_verbs)) {
		cli_error("raid3", "unknown verb '%s'", sub);
		return raid3_usage();
	}
	bool label = strcmp(sub, "label") == 0;
	bool F = false, nflag = false, r = false, w = false, hard = false;
	uint64_t set = 0, clear = 0;
	unsigned long long bs = 0, off = 0;
	long number = -1;
	int c;
	bool numbered = strcmp(sub, "insert") == 0 || strcmp(sub, "remove") == 0;
	optind = 1;
	/* graid3 label's -n is "no autosync"; insert/remove's -n is a number. */
	while ((c = getopt(argc - 1, argv + 1, numbered ? "+n:" : "+aAfFrRwWhns:o:")) != -1) {
		switch (c) {
		case 'F': F = true, set |= GEOM_RAID3_DEV_NOFAILSYNC; break;
		case 'f': clear |= GEOM_RAID3_DEV_NOFAILSYNC; break;
		case 'a': clear |= GEOM_RAID3_DEV_NOAUTOSYNC; break;
		case 'A': set |= GEOM_RAID3_DEV_NOAUTOSYNC; break;
		case 'r': r = true, set |= GEOM_RAID3_DEV_ROUND_ROBIN; break;
		case 'R': clear |= GEOM_RAID3_DEV_ROUND_ROBIN; break;
		case 'w': w = true, set |= GEOM_RAID3_DEV_VERIFY; break;
		case 'W': clear |= GEOM_RAID3_DEV_VERIFY; break;
		case 'h': hard = true; break;
		case 'n':
			if (numbered) {
				char *end;
				number = strtol(optarg, &end, 10);
				if (*end || number < 0 || number > GEOM_MAX_DISKS)
					return cli_error(verb, "-n NUMBER: a component number");
			} else if (label) {
				nflag = true;
			} else {
				return raid3_usage();
			}
			break;
		case 's':
			if (cli_parse_size(optarg, 1, &bs) < 0 || bs == 0 || bs > UINT32_MAX)
				return cli_error(verb, "bad block size '%s'", optarg);
			break;
		case 'o':
			if (cli_parse_size(optarg, 1, &off) < 0)
				return cli_error(verb, "bad offset '%s'", optarg);
			break;
		default: return raid3_usage();
		}
	}
	char **args = argv + 1 + optind;
	int nargs = argc - 1 - optind;
	if (numbered && number < 0)
		return cli_error(verb, "-n NUMBER is required");
	char err[256] = "";
	struct geom_raid3 *g;
	if (r && w)
		return cli_error(verb, "-r (round-robin reads) and -w (verify reads) cannot be "
		                       "combined");
	if (strcmp(sub, "clear") == 0) {
		if (nargs < 1)
			return raid3_usage();
		int rc = 0;
		for (int i = 0; i < nargs; i++) {
			struct member *m;
			struct geom_raid3_md md;
			if (open_paths(verb, &args[i], 1, false, &m)) {
				rc = 1;
				continue;
			}
			if (geom_raid3_read(m, &md, err, sizeof(err)) < 0 ||
			    geom_clear(m, err, sizeof(err)) < 0)
				rc = cli_error(verb, "%s", err);
			member_close(m);
		}
		return rc;
	}
	if (strcmp(sub, "cat") == 0)
		return nargs < 1 ? raid3_usage() : geom_cat(verb, args, nargs);
	if (strcmp(sub, "write") == 0)
		return nargs < 1 ? raid3_usage() : geom_write(verb, off, args, nargs);
	if (nargs < 2)
		return raid3_usage();
	const char *name = args[0];
	if (label) {
		struct geom_label_opts o = {.name = name,
		                            .nofailsync = F,
		                            .noautosync = nflag,
		                            .round_robin = r,
		                            .verify = w,
		                            .hardcode = hard,
		                            .blocksize = (uint32_t)bs};
		struct member *m[GEOM_MAX_DISKS + 1];
		if (nargs - 1 > GEOM_MAX_DISKS + 1)
			return cli_error(verb, "at most %d components", GEOM_MAX_DISKS + 1);
		if (open_paths(verb, args + 1, nargs - 1, false, m))
			return 1;
		int rc = geom_raid3_label(&o, m, nargs - 1, err, sizeof(err));
		for (int i = 0; i < nargs - 1; i++)
			member_close(m[i]);
		return rc < 0 ? cli_error(verb, "%s", err) : 0;
	}
	if (strcmp(sub, "status") == 0 || strcmp(sub, "list") == 0) {
		if (raid3_open(verb, name, args + 1, nargs - 1, true, &g))
			return 1;
		raid3_status(g, sub[0] == 'l');
		geom_raid3_close(g);
		return 0;
	}
	if (strcmp(sub, "insert") == 0) {
		if (nargs < 3)
			return raid3_usage();
		if (raid3_open(verb, name, args + 2, nargs - 2, false, &g))
			return 1;
		struct member *m;
		if (open_paths(verb, &args[1], 1, false, &m)) {
			geom_raid3_close(g);
			return 1;
		}
		if (geom_raid3_insert(g, (int)number, m, err, sizeof(err)) < 0) {
			member_close(m);
			geom_raid3_close(g);
			return cli_error(verb, "%s", err);
		}
		return raid3_finish(verb, g);
	}
	if (raid3_open(verb, name, args + 1, nargs - 1, false, &g))
		return 1;
	int rc = 0;
	if (strcmp(sub, "configure") == 0) {
		if (!set && !clear)
			rc = cli_error(verb, "nothing to change");
		else if (geom_raid3_configure(g, set, clear, err, sizeof(err)) < 0)
			rc = cli_error(verb, "%s", err);
	} else if (strcmp(sub, "remove") == 0) {
		if (geom_raid3_remove(g, (int)number, err, sizeof(err)) < 0)
			rc = cli_error(verb, "%s", err);
	} else if (strcmp(sub, "rebuild") == 0) {
		int d = raid3_find(g, args[1]);
		if (d < 0)
			rc = cli_error(verb, "%s is not a component of %s", args[1], g->name);
		else if (geom_raid3_rebuild(g, d, err, sizeof(err)) < 0)
			rc = cli_error(verb, "%s", err);
	} else if (strcmp(sub, "stop") != 0) {
		geom_raid3_close(g);
		return raid3_usage();
	}
	int frc = raid3_finish(verb, g);
	return rc ? rc : frc;
}
