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
#include "cli/cmd_geom.h"
#include "geom/geom.h"
#include "member/member.h"
#include "uraid.h"

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

/* ---- gmirror ---------------------------------------------------------- */

/* Shared by both classes: provider data to stdout / from stdin. */
static int geom_cat(const char *verb, char **paths, int n)
{
	struct uraid_array *a;
	if (geom_cli_open(verb, paths, n, URAID_RDONLY | URAID_NO_SYNC_THREAD, &a))
		return 1;
	struct uraid_status st;
	uraid_status(a, &st);
	uint64_t size = uraid_size(a);
	size_t chunk = (size_t)st.block_bytes * 128;
	uint8_t *buf = malloc(chunk);
	int rc = buf ? 0 : cli_error(verb, "out of memory");
	for (uint64_t off = 0; rc == 0 && off < size; off += chunk) {
		size_t l = size - off < chunk ? (size_t)(size - off) : chunk;
		int r = uraid_read(a, buf, l, off);
		if (r < 0) {
			uraid_status(a, &st);
			rc = cli_error(verb, "read at %llu: %s", (unsigned long long)off,
			               st.geom_parity_errors ? "parity mismatch (verify reading)"
			                                     : strerror(-r));
		} else if (fwrite(buf, 1, l, stdout) != l) {
			rc = cli_error(verb, "write to stdout failed");
		}
	}
	free(buf);
	uraid_stop(a);
	return rc;
}

/* stdin to the provider at `off`: whole blocks; a running array's members
 * are refused (the daemon holds them). */
static int geom_write(const char *verb, unsigned long long off, char **paths, int n)
{
	struct uraid_array *a;
	if (geom_cli_open(verb, paths, n, URAID_NO_SYNC_THREAD, &a))
		return 1;
	int rc = uraid_sync_wait(a) < 0 ? cli_error(verb, "synchronization failed") : 0;
	struct uraid_status st;
	uraid_status(a, &st);
	uint32_t bs = st.block_bytes;
	uint64_t size = uraid_size(a);
	size_t chunk = (size_t)bs * 128;
	uint8_t *buf = malloc(chunk);
	if (!rc && (!buf || off % bs))
		rc = cli_error(verb, "offset must be a multiple of the %u-byte block", bs);
	while (rc == 0) {
		size_t got = fread(buf, 1, chunk, stdin);
		if (got == 0)
			break;
		if (got % bs) {
			rc = cli_error(verb, "input is not a multiple of the %u-byte block", bs);
			break;
		}
		if (off + got > size) {
			rc = cli_error(verb, "input runs past the end (%llu bytes)",
			               (unsigned long long)size);
			break;
		}
		int r = uraid_write(a, buf, got, off);
		if (r < 0)
			rc = cli_error(verb, "write at %llu: %s", off, strerror(-r));
		off += got;
	}
	free(buf);
	if (uraid_stop(a) < 0 && rc == 0)
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

static const char *const mirror_verbs[] = {"label",    "configure",  "insert", "remove", "rebuild",
                                           "activate", "deactivate", "forget", "resize", "destroy",
                                           "status",   "list",       "stop",   "clear",  "dump",
                                           "cat",      "write",      NULL};
static const char *const raid3_verbs[] = {"label",  "configure", "insert", "remove", "rebuild",
                                          "status", "list",      "stop",   "clear",  "dump",
                                          "cat",    "write",     NULL};

static int mirror_usage_to(FILE *f)
{
	fprintf(f,
	        "usage: uraid mirror label [-Fhn] [-b balance] [-s slice] NAME MEMBER...\n"
	        "       uraid mirror configure [-a|-n] [-f|-F] [-b balance] [-s slice]\n"
	        "                [-p priority PROV] NAME [MEMBER...]\n"
	        "       uraid mirror insert [-i] [-p priority] NAME NEW [MEMBER...]\n"
	        "       uraid mirror remove|rebuild|activate|deactivate NAME PROV "
	        "[OTHER-MEMBER...]\n"
	        "       uraid mirror forget|destroy NAME [MEMBER...]\n"
	        "       uraid mirror resize [-s size] NAME [MEMBER...]\n"
	        "       uraid mirror status|list|stop NAME [MEMBER...]\n"
	        "       uraid mirror clear|dump MEMBER...\n"
	        "       uraid mirror cat MEMBER... > data;  uraid mirror write [-o off] MEMBER... "
	        "< data\n"
	        "Without MEMBERs NAME is a running array (uraid assemble/serve); with them the\n"
	        "verb runs on the member files.\n"
	        "balance: load (default), prefer, round-robin, split\n");
	return f == stdout ? 0 : 2;
}

static int mirror_usage(void)
{
	return mirror_usage_to(stderr);
}

/* The verbs that change a mirror or raid3 go through uraid_geom_ctl
 * (cmd_geom_ctl.c): to the daemon when NAME runs, else on the members. */
static bool request_verb(const char *sub)
{
	static const char *const v[] = {"configure",  "insert", "remove", "rebuild", "activate",
	                                "deactivate", "forget", "resize", "destroy", NULL};
	return known_verb(sub, v);
}

/* args = NAME [PROV] [MEMBER...] for a request verb: send it to the running
 * array, or run it on MEMBER... (insert: NAME NEW MEMBER...; the others take
 * the member list with PROV first, as before). */
static int geom_request(const char *verb, int level, bool need_prov, bool insert, char **args,
                        int nargs, char *req, size_t reqlen)
{
	const char *name = args[0];
	if (geom_cli_running(name)) {
		if (nargs != 1 + need_prov)
			return cli_error(verb, "%s is running: give %s only", name,
			                 need_prov ? "NAME and the component" : "NAME");
		if (need_prov)
			geom_cli_member(req, reqlen, args[1]);
		return geom_cli_request(verb, level, name, NULL, 0, req);
	}
	if (need_prov && nargs < 2)
		return cli_error(verb, "give the component");
	if (need_prov)
		geom_cli_member(req, reqlen, args[1]);
	int first = insert ? 2 : 1;
	if (nargs <= first)
		return cli_error(verb, "%s is not running: give its components", name);
	return geom_cli_request(verb, level, name, args + first, nargs - first, req);
}

static size_t appendf(char *buf, size_t len, const char *fmt, unsigned long long v)
{
	size_t l = strlen(buf);
	snprintf(buf + l, len - l, fmt, v);
	return strlen(buf);
}

int cmd_mirror(int argc, char **argv)
{
	if (argc < 2)
		return mirror_usage();
	const char *sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h"))
		return mirror_usage_to(stdout);
	char verb[32];
	snprintf(verb, sizeof(verb), "mirror %s", sub);
	if (!known_verb(sub, mirror_verbs)) {
		cli_error("mirror", "unknown verb '%s'", sub);
		return mirror_usage();
	}
	bool resize = strcmp(sub, "resize") == 0;
	int balance = -1, prio = -1;
	unsigned long long slice = 0, off = 0, size = 0;
	bool F = false, n = false, h = false, a = false, f = false, inactive = false;
	int c;
	optind = 1;
	while ((c = getopt(argc - 1, argv + 1, "+aFfnhidb:s:p:o:")) != -1) {
		switch (c) {
		case 'a': a = true; break;
		case 'F': F = true; break;
		case 'f': f = true; break;
		case 'n': n = true; break;
		case 'h': h = true; break;
		case 'i': inactive = true; break;
		case 'd': break; /* dynamic provider names: the only kind here */
		case 'b':
			balance = geom_balance_parse(optarg);
			if (balance <= 0)
				return cli_error(verb,
				                 "unknown balance '%s' (load, prefer, round-robin, "
				                 "split)",
				                 optarg);
			break;
		case 's':
			if (resize) {
				if (cli_parse_size(optarg, 1, &size) < 0 || size == 0)
					return cli_error(verb, "bad size '%s'", optarg);
				break;
			}
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
	char err[256] = "";
	if (a && n)
		return cli_error(verb, "-a (autosync) and -n (no autosync) together");
	if (f && F)
		return cli_error(verb, "-f (failsync) and -F (no failsync) together");
	if (strcmp(sub, "dump") == 0)
		return nargs < 1 ? mirror_usage() : geom_cli_dump(verb, true, args, nargs);
	if (strcmp(sub, "clear") == 0)
		return nargs < 1 ? mirror_usage() : geom_cli_clear(verb, true, args, nargs);
	if (strcmp(sub, "cat") == 0)
		return nargs < 1 ? mirror_usage() : geom_cat(verb, args, nargs);
	if (strcmp(sub, "write") == 0)
		return nargs < 1 ? mirror_usage() : geom_write(verb, off, args, nargs);
	if (nargs < 1)
		return mirror_usage();
	const char *name = args[0];
	if (request_verb(sub)) {
		char req[8192];
		snprintf(req, sizeof(req), "%s", sub);
		bool prov = strcmp(sub, "forget") && strcmp(sub, "resize") &&
		            strcmp(sub, "destroy") && strcmp(sub, "configure");
		if (strcmp(sub, "configure") == 0) {
			const char *b = balance > 0 ? geom_balance_name(balance) : NULL;
			if (b)
				snprintf(req + strlen(req), sizeof(req) - strlen(req),
				         " balance=%s", b);
			if (slice)
				appendf(req, sizeof(req), " slice=%llu", slice);
			if (a || n)
				appendf(req, sizeof(req), " autosync=%llu", a);
			if (f || F)
				appendf(req, sizeof(req), " failsync=%llu", f);
			if (prio >= 0) {
				appendf(req, sizeof(req), " priority=%llu",
				        (unsigned long long)prio);
				prov = true; /* -p sets the priority of the first MEMBER */
			}
		} else if (strcmp(sub, "insert") == 0) {
			appendf(req, sizeof(req), " priority=%llu",
			        (unsigned long long)(prio < 0 ? 0 : prio));
			if (inactive)
				appendf(req, sizeof(req), " inactive=%llu", 1);
		} else if (resize && size) {
			appendf(req, sizeof(req), " size=%llu", size);
		}
		return geom_request(verb, URAID_LEVEL_GMIRROR, prov, strcmp(sub, "insert") == 0,
		                    args, nargs, req, sizeof(req));
	}
	bool running = nargs == 1 && strcmp(sub, "label") && geom_cli_running(name);
	if (!running && nargs < 2)
		return mirror_usage();
	char **mm = running ? NULL : args + 1;
	int nmm = running ? 0 : nargs - 1;
	if (strcmp(sub, "status") == 0 || strcmp(sub, "list") == 0)
		return geom_cli_status(verb, URAID_LEVEL_GMIRROR, name, mm, nmm, sub[0] == 'l');
	if (strcmp(sub, "stop") == 0)
		return geom_cli_stop(verb, URAID_LEVEL_GMIRROR, name, mm, nmm);
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
	return mirror_usage();
}

/* ---- graid3 ----------------------------------------------------------- */

static int raid3_usage_to(FILE *f)
{
	fprintf(
	    f,
	    "usage: uraid raid3 label [-Fhnrw] [-s blocksize] NAME C0 C1 C2 ... (last = parity,\n"
	    "                2^n + 1 components)\n"
	    "       uraid raid3 configure [-aAfFrRwW] NAME [MEMBER...]\n"
	    "       uraid raid3 insert -n NUMBER NAME NEW [MEMBER...]\n"
	    "       uraid raid3 remove -n NUMBER NAME [MEMBER...]\n"
	    "       uraid raid3 rebuild NAME PROV [OTHER-MEMBER...]\n"
	    "       uraid raid3 status|list|stop NAME [MEMBER...]\n"
	    "       uraid raid3 clear|dump MEMBER...\n"
	    "       uraid raid3 cat MEMBER... > data;  uraid raid3 write [-o off] MEMBER... "
	    "< data\n"
	    "Without MEMBERs NAME is a running array (uraid assemble/serve).\n");
	return f == stdout ? 0 : 2;
}

static int raid3_usage(void)
{
	return raid3_usage_to(stderr);
}

int cmd_raid3(int argc, char **argv)
{
	if (argc < 2)
		return raid3_usage();
	const char *sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h"))
		return raid3_usage_to(stdout);
	char verb[32];
	snprintf(verb, sizeof(verb), "raid3 %s", sub);
	if (!known_verb(sub, raid3_verbs)) {
		cli_error("raid3", "unknown verb '%s'", sub);
		return raid3_usage();
	}
	bool label = strcmp(sub, "label") == 0;
	bool F = false, nflag = false, r = false, w = false, hard = false;
	int autosync = -1, failsync = -1, rr = -1, verify = -1;
	unsigned long long bs = 0, off = 0;
	long number = -1;
	int c;
	bool numbered = strcmp(sub, "insert") == 0 || strcmp(sub, "remove") == 0;
	optind = 1;
	/* graid3 label's -n is "no autosync"; insert/remove's -n is a number. */
	while ((c = getopt(argc - 1, argv + 1, numbered ? "+n:" : "+aAfFrRwWhHns:o:")) != -1) {
		switch (c) {
		case 'F': F = true, failsync = 0; break;
		case 'f': failsync = 1; break;
		case 'a': autosync = 1; break;
		case 'A': autosync = 0; break;
		case 'r': r = true, rr = 1; break;
		case 'R': rr = 0; break;
		case 'w': w = true, verify = 1; break;
		case 'W': verify = 0; break;
		case 'h': hard = true; break;
		case 'H': break; /* dynamic provider names: the only kind here */
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
	if (r && w)
		return cli_error(verb, "-r (round-robin reads) and -w (verify reads) cannot be "
		                       "combined");
	if (strcmp(sub, "dump") == 0)
		return nargs < 1 ? raid3_usage() : geom_cli_dump(verb, false, args, nargs);
	if (strcmp(sub, "clear") == 0)
		return nargs < 1 ? raid3_usage() : geom_cli_clear(verb, false, args, nargs);
	if (strcmp(sub, "cat") == 0)
		return nargs < 1 ? raid3_usage() : geom_cat(verb, args, nargs);
	if (strcmp(sub, "write") == 0)
		return nargs < 1 ? raid3_usage() : geom_write(verb, off, args, nargs);
	if (nargs < 1)
		return raid3_usage();
	const char *name = args[0];
	if (request_verb(sub)) {
		char req[8192];
		snprintf(req, sizeof(req), "%s", sub);
		if (strcmp(sub, "configure") == 0) {
			if (autosync >= 0)
				appendf(req, sizeof(req), " autosync=%llu",
				        (unsigned long long)autosync);
			if (failsync >= 0)
				appendf(req, sizeof(req), " failsync=%llu",
				        (unsigned long long)failsync);
			if (rr >= 0)
				appendf(req, sizeof(req), " round_robin=%llu",
				        (unsigned long long)rr);
			if (verify >= 0)
				appendf(req, sizeof(req), " verify=%llu",
				        (unsigned long long)verify);
		} else if (numbered) {
			appendf(req, sizeof(req), " number=%llu", (unsigned long long)number);
		}
		bool insert = strcmp(sub, "insert") == 0;
		return geom_request(verb, URAID_LEVEL_GRAID3, insert || !strcmp(sub, "rebuild"),
		                    insert, args, nargs, req, sizeof(req));
	}
	bool running = nargs == 1 && strcmp(sub, "label") && geom_cli_running(name);
	if (!running && nargs < 2)
		return raid3_usage();
	char **mm = running ? NULL : args + 1;
	int nmm = running ? 0 : nargs - 1;
	if (strcmp(sub, "status") == 0 || strcmp(sub, "list") == 0)
		return geom_cli_status(verb, URAID_LEVEL_GRAID3, name, mm, nmm, sub[0] == 'l');
	if (strcmp(sub, "stop") == 0)
		return geom_cli_stop(verb, URAID_LEVEL_GRAID3, name, mm, nmm);
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
	return raid3_usage();
}
