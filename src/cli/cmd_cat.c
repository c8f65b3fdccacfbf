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

#include "cli/cli.h"
#include "cli/cli_array.h"
#include "uraid.h"

#define CAT_BUF (1u << 20)

static void cat_usage(FILE *f)
{
	fprintf(f, "usage: uraid cat [--offset BYTES] [--length BYTES] [-o FILE] MEMBER...|NAME\n"
	           "  Assembles the array read-only from its member images and writes its\n"
	           "  logical contents (or the given range) to FILE or stdout. Reconstructs\n"
	           "  missing members when the level's redundancy allows.\n");
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

/* cat NAME: read a running array through its daemon. */
static int cat_running(const char *name, unsigned long long off, bool have_len,
                       unsigned long long length, const char *outpath)
{
	struct uraid_status st;
	char err[512], line[128];
	if (uraid_control_status(name, &st, err, sizeof(err)) < 0)
		return cli_error("cat", "%s is neither a member file nor a running array: %s", name,
		                 err);
	uint64_t size = st.array_sectors * 512;
	if (off > size)
		return cli_error("cat", "--offset %llu is beyond the array's %llu bytes", off,
		                 (unsigned long long)size);
	if (!have_len || length > size - off)
		length = size - off;
	int fd = outpath ? open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0644) : 1;
	if (fd < 0)
		return cli_error("cat", "%s: %s", outpath, strerror(errno));
	int status = 0;
	uint64_t pos = off, end = off + length;
	while (pos < end && !status) {
		uint64_t a0 = pos & ~511ull;
		uint64_t want = end - a0 < CAT_BUF ? end - a0 : CAT_BUF;
		uint64_t alen = (want + 511) & ~511ull;
		char *body;
		size_t blen;
		snprintf(line, sizeof(line), "read %llu %llu", (unsigned long long)a0,
		         (unsigned long long)alen);
		if (uraid_control_request(name, line, NULL, 0, &body, &blen, err, sizeof(err)) <
		    0) {
			status =
			    cli_error("cat", "read at byte %llu: %s", (unsigned long long)a0, err);
			break;
		}
		uint64_t skip = pos - a0, n = want - skip;
		if (write_all(fd, body + skip, n) < 0)
			status = cli_error("cat", "%s: %s", outpath ? outpath : "stdout",
			                   strerror(errno));
		free(body);
		pos += n;
	}
	if (outpath && close(fd) < 0 && !status)
		status = cli_error("cat", "%s: %s", outpath, strerror(errno));
	return status;
}

int cmd_cat(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"offset", required_argument, NULL, 'O'},
	    {"length", required_argument, NULL, 'l'},
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	unsigned long long off = 0, length = 0;
	bool have_len = false;
	const char *outpath = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'O':
			if (cli_parse_size(optarg, 1, &off) < 0)
				return cli_error("cat", "bad --offset '%s'", optarg);
			break;
		case 'l':
			if (cli_parse_size(optarg, 1, &length) < 0)
				return cli_error("cat", "bad --length '%s'", optarg);
			have_len = true;
			break;
		case 'o': outpath = optarg; break;
		case 'h': cat_usage(stdout); return 0;
		default: cat_usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		cat_usage(stderr);
		return 2;
	}
	struct stat sb;
	if (optind == argc - 1 && !strchr(argv[optind], '/') && stat(argv[optind], &sb) < 0)
		return cat_running(argv[optind], off, have_len, length, outpath);
	char err[512], warn[2048];
	struct uraid_array *a;
	int rc = uraid_assemble((const char *const *)argv + optind, argc - optind,
	                        URAID_RDONLY | URAID_NO_SYNC_THREAD, &a, err, sizeof(err), warn,
	                        sizeof(warn));
	if (warn[0])
		fprintf(stderr, "uraid: cat: warning: %s", warn);
	if (rc < 0)
		return cli_error("cat", "%s", err);
	uint64_t size = uraid_size(a);
	if (off > size) {
		uraid_stop(a);
		return cli_error("cat", "--offset %llu is beyond the array's %llu bytes", off,
		                 (unsigned long long)size);
	}
	if (!have_len || length > size - off)
		length = size - off;
	int fd = 1;
	if (outpath) {
		fd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			uraid_stop(a);
			return cli_error("cat", "%s: %s", outpath, strerror(errno));
		}
	}
	unsigned char *buf = malloc(CAT_BUF + 1024);
	int status = 0;
	if (!buf) {
		status = cli_error("cat", "out of memory");
		goto out;
	}
	/* The array reads whole sectors; any byte range is cut out of them. */
	uint64_t pos = off, end = off + length;
	while (pos < end) {
		uint64_t a0 = pos & ~511ull;
		uint64_t want = end - a0 < CAT_BUF ? end - a0 : CAT_BUF;
		uint64_t alen = (want + 511) & ~511ull;
		if (a0 + alen > size)
			alen = size - a0;
		rc = uraid_read(a, buf, alen, a0);
		if (rc < 0) {
			status = cli_error("cat", "read at byte %llu failed: %s",
			                   (unsigned long long)a0, strerror(-rc));
			goto out;
		}
		uint64_t skip = pos - a0, n = want - skip;
		rc = write_all(fd, buf + skip, n);
		if (rc < 0) {
			status =
			    cli_error("cat", "%s: %s", outpath ? outpath : "stdout", strerror(-rc));
			goto out;
		}
		pos += n;
	}
out:
	free(buf);
	if (outpath && fd >= 0 && close(fd) < 0 && !status)
		status = cli_error("cat", "%s: %s", outpath, strerror(errno));
	uraid_stop(a);
	return status;
}
