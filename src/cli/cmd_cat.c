/* uraid cat: the logical contents of an array, read straight from member
 * images (assembled read-only: nothing is ever written to a member). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cat_map.h"
#include "cli/cli.h"
#include "cli/cli_array.h"
#include "uraid.h"

#define CAT_BUF (1u << 20)

static void cat_usage(FILE *f)
{
	fprintf(f, "usage: uraid cat [--offset BYTES] [--length BYTES] [-o FILE] [--force]\n"
	           "                 [--keep-going [--map FILE]] [--overlay DIR] MEMBER...|NAME\n"
	           "  Assembles the array read-only from its member images and writes its\n"
	           "  logical contents (or the given range) to FILE or stdout. Reconstructs\n"
	           "  missing members when the level's redundancy allows, and replays a\n"
	           "  write journal first (in memory). Nothing is ever written to a member.\n"
	           "  --force       as assemble --force (members left out forced back in,\n"
	           "                a dirty degraded raid4/5/6 read), in memory only\n"
	           "  --keep-going  a range no member and no redundancy can supply is\n"
	           "                written as zeros and the read goes on; the ranges are\n"
	           "                listed on stderr with the members behind them; exit\n"
	           "                status 3 when there were any\n"
	           "  --map FILE    with --keep-going: the ranges as a GNU ddrescue mapfile\n"
	           "                (ddrescuelog reads it), each bad area preceded by the\n"
	           "                members behind it and what each answered\n"
	           "  --overlay DIR the members as the copy-on-write overlays in DIR show\n"
	           "                them (see 'uraid overlay')\n");
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Does the run directory hold a running array's control socket NAME? */
static bool running_array(const char *name)
{
	char path[4096], err[256];
	struct stat sb;
	return uraid_run_path(name, ".sock", false, path, sizeof(path), err, sizeof(err)) == 0 &&
	       stat(path, &sb) == 0 && S_ISSOCK(sb.st_mode);
}

/* What is read: an array opened here, or a running one through its daemon. */
struct cat_src {
	struct uraid_array *a; /* NULL: through the daemon of `name` */
	const char *name;
	uint64_t size;
	uint32_t unit; /* the array's I/O unit */
	char err[512];
};

static int src_read(struct cat_src *s, uint8_t *buf, uint64_t len, uint64_t off)
{
	if (s->a) {
		int rc = uraid_read(s->a, buf, len, off);
		if (rc < 0)
			snprintf(s->err, sizeof(s->err), "%s", strerror(-rc));
		return rc;
	}
	char line[128], *body;
	size_t blen;
	snprintf(line, sizeof(line), "read %llu %llu", (unsigned long long)off,
	         (unsigned long long)len);
	int rc =
	    uraid_control_request(s->name, line, NULL, 0, &body, &blen, s->err, sizeof(s->err));
	if (rc < 0)
		return rc;
	if (blen != len) {
		free(body);
		snprintf(s->err, sizeof(s->err), "short reply (%zu of %llu bytes)", blen,
		         (unsigned long long)len);
		return -EIO;
	}
	memcpy(buf, body, len);
	free(body);
	return 0;
}

/* --keep-going: a read that failed with EIO, again in ever smaller pieces
 * down to the array's unit; what still fails is zeros and goes to the map. */
static int read_keep_going(struct cat_src *s, struct cat_map *map, uint8_t *buf, uint64_t len,
                           uint64_t off, uint64_t step)
{
	for (uint64_t done = 0; done < len; done += step) {
		uint64_t n = len - done < step ? len - done : step;
		int rc = src_read(s, buf + done, n, off + done);
		if (rc == 0)
			continue;
		if (rc != -EIO)
			return rc;
		if (n > s->unit) {
			uint64_t sub = step / 8 > s->unit ? step / 8 : s->unit;
			rc =
			    read_keep_going(s, map, buf + done, n, off + done, sub - sub % s->unit);
			if (rc < 0)
				return rc;
			continue;
		}
		memset(buf + done, 0, n);
		if (cat_map_add(map, off + done, n) < 0)
			return -ENOMEM;
	}
	return 0;
}

struct cat_opts {
	unsigned long long off, length;
	bool have_len, force, keep_going;
	const char *outpath, *mappath;
	const char *overlay; /* --overlay DIR */
};

/* Copies [o->off, +o->length) of s to fd; 0, or the status to exit with. */
static int cat_copy(struct cat_src *s, const struct cat_opts *o, int fd, struct cat_map *map)
{
	uint8_t *buf = malloc(CAT_BUF + 4096);
	if (!buf)
		return cli_error("cat", "out of memory");
	int status = 0;
	/* The array reads whole units; any byte range is cut out of them. */
	uint64_t pos = o->off, end = o->off + o->length;
	while (pos < end && !status) {
		uint64_t a0 = pos - pos % s->unit;
		uint64_t want = end - a0 < CAT_BUF ? end - a0 : CAT_BUF;
		uint64_t alen = (want + s->unit - 1) / s->unit * s->unit;
		if (a0 + alen > s->size)
			alen = s->size - a0;
		int rc = src_read(s, buf, alen, a0);
		if (rc == -EIO && o->keep_going)
			rc = read_keep_going(s, map, buf, alen, a0, 4096 - 4096 % s->unit);
		if (rc < 0) {
			status = cli_error("cat", "read at byte %llu failed: %s",
			                   (unsigned long long)a0, s->err);
			break;
		}
		uint64_t skip = pos - a0, n = want - skip;
		rc = write_all(fd, buf + skip, n);
		if (rc < 0)
			status = cli_error("cat", "%s: %s", o->outpath ? o->outpath : "stdout",
			                   strerror(-rc));
		pos += n;
	}
	free(buf);
	return status;
}

/* The account of --keep-going: stderr, and the map file when asked. */
static int cat_report(struct cat_src *s, const struct cat_opts *o, const struct cat_map *map,
                      const char *what)
{
	int status = 0;
	if (o->mappath) {
		FILE *f = fopen(o->mappath, "w");
		if (!f)
			return cli_error("cat", "%s: %s", o->mappath, strerror(errno));
		int rc = cat_map_write(map, f, s->a, o->off, o->off + o->length, s->size, what);
		if (fclose(f) != 0 || rc < 0)
			status = cli_error("cat", "%s: write failed", o->mappath);
	}
	if (!map->n)
		return status;
	fprintf(stderr,
	        "uraid: cat: %llu bytes in %zu range(s) could not be read from any member or "
	        "rebuilt: written as zeros\n",
	        (unsigned long long)map->bad_bytes, map->n);
	for (size_t i = 0; i < map->n && i < 8; i++) {
		fprintf(stderr, "uraid: cat:   array bytes %llu..%llu (%llu bytes)\n",
		        (unsigned long long)map->r[i].off,
		        (unsigned long long)(map->r[i].off + map->r[i].len - 1),
		        (unsigned long long)map->r[i].len);
		cat_map_describe(stderr, "uraid: cat:   ", s->a, map->r[i].off, map->r[i].len, 4);
	}
	if (map->n > 8)
		fprintf(stderr, "uraid: cat:   ... %zu more%s\n", map->n - 8,
		        o->mappath ? " (all in the map)" : "; --map FILE lists them all");
	return status ? status : 3;
}

static int cat_run(struct cat_src *s, const struct cat_opts *in, const char *what)
{
	struct cat_opts o = *in;
	if (o.off > s->size)
		return cli_error("cat", "--offset %llu is beyond the array's %llu bytes", o.off,
		                 (unsigned long long)s->size);
	if (!o.have_len || o.length > s->size - o.off)
		o.length = s->size - o.off;
	int fd = o.outpath ? open(o.outpath, O_WRONLY | O_CREAT | O_TRUNC, 0644) : 1;
	if (fd < 0)
		return cli_error("cat", "%s: %s", o.outpath, strerror(errno));
	struct cat_map map = {0};
	int status = cat_copy(s, &o, fd, &map);
	if (o.outpath && close(fd) < 0 && !status)
		status = cli_error("cat", "%s: %s", o.outpath, strerror(errno));
	if (!status && o.keep_going)
		status = cat_report(s, &o, &map, what);
	cat_map_free(&map);
	return status;
}

int cmd_cat(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"offset", required_argument, NULL, 'O'},
	    {"length", required_argument, NULL, 'l'},
	    {"output", required_argument, NULL, 'o'},
	    {"force", no_argument, NULL, 'f'},
	    {"keep-going", no_argument, NULL, 'k'},
	    {"map", required_argument, NULL, 'm'},
	    {"overlay", required_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct cat_opts o = {0};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'O':
			if (cli_parse_size(optarg, 1, &o.off) < 0)
				return cli_error("cat", "bad --offset '%s'", optarg);
			break;
		case 'l':
			if (cli_parse_size(optarg, 1, &o.length) < 0)
				return cli_error("cat", "bad --length '%s'", optarg);
			o.have_len = true;
			break;
		case 'o': o.outpath = optarg; break;
		case 'f': o.force = true; break;
		case 'k': o.keep_going = true; break;
		case 'm': o.mappath = optarg; break;
		case 'V': o.overlay = optarg; break;
		case 'h': cat_usage(stdout); return 0;
		default: cat_usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		cat_usage(stderr);
		return 2;
	}
	if (o.mappath && !o.keep_going)
		return cli_error("cat", "--map needs --keep-going");
	char what[300];
	snprintf(what, sizeof(what), "uraid cat --keep-going%s of %s%s", o.force ? " --force" : "",
	         argv[optind], argc - optind > 1 ? " ..." : "");
	struct cat_src s = {.name = argv[optind], .unit = 512};
	struct stat sb;
	/* One name without a '/': the running array of that name when the run
	 * directory has it (a file of the same name in the working directory
	 * does not shadow it), else a member file, else an error naming both. */
	if (optind == argc - 1 && !strchr(argv[optind], '/') &&
	    (running_array(argv[optind]) || stat(argv[optind], &sb) < 0)) {
		struct uraid_status st;
		if (o.overlay)
			return cli_error("cat",
			                 "--overlay is for member files; the running array "
			                 "%s reads through the overlays it runs on",
			                 argv[optind]);
		if (o.force)
			return cli_error("cat",
			                 "--force is for member files, not the running array %s",
			                 argv[optind]);
		if (uraid_control_status(argv[optind], &st, s.err, sizeof(s.err)) < 0)
			return cli_error("cat",
			                 "%s is neither a member file nor a running array: %s",
			                 argv[optind], s.err);
		s.size = st.array_sectors * 512;
		s.unit = st.block_bytes ? st.block_bytes : 512;
		return cat_run(&s, &o, what);
	}
	char warn[2048];
	unsigned flags = URAID_RDONLY | URAID_NO_SYNC_THREAD | (o.force ? URAID_FORCE : 0);
	int rc = uraid_assemble_overlay((const char *const *)argv + optind, argc - optind, flags,
	                                o.overlay, &s.a, s.err, sizeof(s.err), warn, sizeof(warn));
	if (warn[0])
		fprintf(stderr, "uraid: cat: warning: %s", warn);
	if (rc < 0)
		return cli_error("cat", "%s", s.err);
	struct uraid_status st;
	if (uraid_status(s.a, &st) == 0 && st.block_bytes)
		s.unit = st.block_bytes;
	s.size = uraid_size(s.a);
	int status = cat_run(&s, &o, what);
	uraid_stop(s.a);
	return status;
}
