/* libFuzzer target for the control protocol. The first byte picks:
 *   0: the status decoder — what decodes must encode and decode again to
 *      the same struct, and a refusal must say why;
 *   1: the stats decoder, the same way;
 *   2: the %-unescaper — what it accepts must escape back and unescape to
 *      the same bytes;
 *   else: the rest is a client's byte stream to a live control server (an
 *      array on memory members, kept across runs): every reply must be
 *      "OK LEN\n" + LEN bytes or one "ERR ERRNO MESSAGE\n" line, and the
 *      server must survive. Streams with an "add" (or "grow-add") request are skipped: it
 *      would open whatever path the fuzzer spells. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fuzz_array.h"
#include "uraid.h"

static struct uraid_array *arr;
static struct uraid_control *ctl;
static char sock_path[108];

static void teardown(void)
{
	if (ctl)
		uraid_control_close(ctl);
	if (arr)
		uraid_stop(arr);
}

static int setup(void)
{
	if (ctl)
		return 0;
	arr = fuzz_mem_raid5("fuzz_control");
	char err[256];
	snprintf(sock_path, sizeof(sock_path), "/tmp/uraid-fuzz-control.%d.sock", (int)getpid());
	if (uraid_control_start(arr, sock_path, &ctl, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_control: %s\n", err);
		abort();
	}
	/* Generous: every stream ends with EOF, and a loaded machine (make check
	 * on 2 cores) may stall the server thread for a second or two. */
	uraid_control_set_timeout(ctl, 10000);
	atexit(teardown);
	return 0;
}

static void check_status(const uint8_t *d, size_t n)
{
	struct uraid_status st, st2;
	char err[256] = "", *text = malloc(URAID_STATUS_TEXT_MAX);
	if (uraid_status_decode((const char *)d, n, &st, err, sizeof(err)) < 0) {
		if (!memchr(err, 0, sizeof(err)) || !err[0])
			abort();
		free(text);
		return;
	}
	int k = uraid_status_encode(&st, text, URAID_STATUS_TEXT_MAX);
	if (k <= 0 || uraid_status_decode(text, (size_t)k, &st2, err, sizeof(err)) < 0 ||
	    memcmp(&st, &st2, sizeof(st)))
		abort();
	free(text);
}

static void check_stats(const uint8_t *d, size_t n)
{
	struct uraid_io_stats st, st2;
	char err[256] = "", text[4096];
	if (uraid_io_stats_decode((const char *)d, n, &st, err, sizeof(err)) < 0) {
		if (!err[0])
			abort();
		return;
	}
	int k = uraid_io_stats_encode(&st, text, sizeof(text));
	if (k <= 0 || uraid_io_stats_decode(text, (size_t)k, &st2, err, sizeof(err)) < 0 ||
	    memcmp(&st, &st2, sizeof(st)))
		abort();
}

static void check_escape(const uint8_t *d, size_t n)
{
	char out[600], esc[1800], back[600];
	int k = uraid_ctl_unescape((const char *)d, n, out, sizeof(out));
	if (k < 0)
		return;
	if ((size_t)k != strlen(out))
		abort();
	size_t e = uraid_ctl_escape(out, esc, sizeof(esc));
	if (e >= sizeof(esc) || uraid_ctl_unescape(esc, e, back, sizeof(back)) != k ||
	    memcmp(out, back, (size_t)k + 1))
		abort();
}

static int read_full(int fd, char *b, size_t n)
{
	while (n) {
		ssize_t r = read(fd, b, n);
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Replies until the server closes; each must be well formed. */
static void check_replies(int fd)
{
	static char body[1 << 16];
	for (;;) {
		char hdr[700];
		size_t n = 0;
		ssize_t r = 0;
		while (n + 1 < sizeof(hdr) && (r = read(fd, hdr + n, 1)) == 1 && hdr[n] != '\n')
			n++;
		if (n == 0 && r <= 0)
			return; /* closed between replies */
		if (r != 1 || hdr[n] != '\n')
			abort(); /* a reply cut short or a header without end */
		hdr[n] = 0;
		if (!strncmp(hdr, "ERR ", 4)) {
			char *end;
			long e = strtol(hdr + 4, &end, 10);
			if (e <= 0 || *end != ' ' || !end[1])
				abort();
			continue;
		}
		char *end;
		if (strncmp(hdr, "OK ", 3) || hdr[3] < '0' || hdr[3] > '9')
			abort();
		unsigned long long len = strtoull(hdr + 3, &end, 10);
		if (*end || len > URAID_CONTROL_MAX_IO)
			abort();
		while (len) {
			size_t k = len < sizeof(body) ? len : sizeof(body);
			if (read_full(fd, body, k) < 0)
				abort();
			len -= k;
		}
	}
}

static void serve(const uint8_t *d, size_t n)
{
	/* skip any stream holding an "add" or "grow-add" request */
	for (size_t i = 0; i + 3 <= n; i++)
		if ((i == 0 || d[i - 1] == '\n') &&
		    (!memcmp(d + i, "add", 3) || (i + 8 <= n && !memcmp(d + i, "grow-add", 8))))
			return;
	setup();
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		abort();
	/* Inputs are at most a few KiB: they fit the socket buffer. */
	if (n && write(fd, d, n) != (ssize_t)n)
		abort();
	shutdown(fd, SHUT_WR);
	check_replies(fd);
	close(fd);
	/* "stop" only raises a flag; the array must still answer. */
	uint8_t b[512];
	if (uraid_read(arr, b, sizeof(b), 0) < 0 && uraid_size(arr) > 0) {
		struct uraid_status st;
		uraid_status(arr, &st);
		if (st.degraded < 2) /* readable while redundancy allows */
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0]) {
	case 0: check_status(data + 1, size - 1); break;
	case 1: check_stats(data + 1, size - 1); break;
	case 2: check_escape(data + 1, size - 1); break;
	default: serve(data + 1, size - 1); break;
	}
	return 0;
}
