/* The control server: requests over a real unix socket, including malformed
 * ones, against an array on memory members. Every answer is checked; bad
 * requests get an ERR line and never take the server down. */
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "test_engine_common.h"

static int conn(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send raw bytes, read the header line; body (if OK) into *body. */
static int req(int fd, const void *msg, size_t len, char *hdr, size_t hlen, uint8_t **body)
{
	if (write(fd, msg, len) != (ssize_t)len)
		return -1;
	size_t n = 0;
	while (n + 1 < hlen && read(fd, hdr + n, 1) == 1 && hdr[n] != '\n')
		n++;
	hdr[n] = 0;
	unsigned long long blen;
	if (body)
		*body = NULL;
	if (sscanf(hdr, "OK %llu", &blen) == 1 && blen) {
		uint8_t *b = malloc(blen);
		size_t got = 0;
		while (got < blen) {
			ssize_t r = read(fd, b + got, blen - got);
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		if (body)
			*body = b;
		else
			free(b);
	}
	return 0;
}

static void control_requests(void)
{
	struct te_disk d[3];
	for (int i = 0; i < 3; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "c%d", i);
		te_disk_open(&d[i], nm, 4u << 20);
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = 5;
	o.raid_devices = 3;
	o.chunk_sectors = 32;
	struct uraid_array *a;
	CHECK(te_create(&o, d, 3, &a) == 0);
	if (!a)
		return;
	te_sync_all(a);
	uint64_t rs = 5;
	uint8_t data[8192], back[8192];
	t_fill(&rs, data, sizeof(data));
	CHECK(uraid_write(a, data, sizeof(data), 4096) == 0);

	char path[108], err[256], hdr[700];
	snprintf(path, sizeof(path), "/tmp/uraid-ctl-test.%d.sock", (int)getpid());
	struct uraid_control *c;
	CHECK(uraid_control_start(a, path, &c, err, sizeof(err)) == 0);
	struct uraid_control *c2;
	CHECKF(uraid_control_start(a, path, &c2, err, sizeof(err)) == -EADDRINUSE,
	       "second server on the same socket refused");
	int fd = conn(path);
	CHECK(fd >= 0);
	uint8_t *body;

	req(fd, "status\n", 7, hdr, sizeof(hdr), &body);
	unsigned long long blen = 0;
	CHECKF(sscanf(hdr, "OK %llu", &blen) == 1 && blen == sizeof(struct uraid_status),
	       "status header '%s'", hdr);
	if (body) {
		struct uraid_status st;
		memcpy(&st, body, sizeof(st));
		CHECK(st.level == 5 && st.raid_disks == 3 && st.working == 3);
		free(body);
	}
	req(fd, "read 4096 8192\n", 15, hdr, sizeof(hdr), &body);
	CHECKF(!strcmp(hdr, "OK 8192") && body && !memcmp(body, data, 8192), "read: '%s'", hdr);
	free(body);
	/* malformed and refused requests: an ERR each, the connection stays */
	static const char *const bad[] = {
	    "frobnicate\n", "read 1 2\n",    "read x y\n",  "read 0\n",  "read 0 -512\n",
	    "fail\n",       "fail nosuch\n", "remove #0\n", "speed 1\n", "read 0 999999999999999\n",
	    "\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (strstr(bad[i], "999999") || !strcmp(bad[i], "read 0\n") ||
		    !strcmp(bad[i], "read x y\n") || !strcmp(bad[i], "read 0 -512\n")) {
			/* a read/write header that cannot be parsed closes the
			 * connection after the ERR: reconnect */
			req(fd, bad[i], strlen(bad[i]), hdr, sizeof(hdr), NULL);
			CHECKF(!strncmp(hdr, "ERR ", 4), "'%.*s' answered '%s'",
			       (int)strlen(bad[i]) - 1, bad[i], hdr);
			close(fd);
			fd = conn(path);
			continue;
		}
		req(fd, bad[i], strlen(bad[i]), hdr, sizeof(hdr), NULL);
		CHECKF(!strncmp(hdr, "ERR ", 4), "'%.*s' answered '%s'", (int)strlen(bad[i]) - 1,
		       bad[i], hdr);
	}
	/* a line longer than the server accepts: dropped, server lives on */
	char *longl = malloc(10000);
	memset(longl, 'a', 9999);
	longl[9999] = '\n';
	if (write(fd, longl, 10000) < 0) {
		/* the server may close first */
	}
	free(longl);
	close(fd);
	fd = conn(path);
	CHECK(fd >= 0);
	/* write through the socket, read back through the API */
	t_fill(&rs, data, sizeof(data));
	char line[64];
	int n = snprintf(line, sizeof(line), "write 0 8192\n");
	uint8_t *msg = malloc((size_t)n + 8192);
	memcpy(msg, line, (size_t)n);
	memcpy(msg + n, data, 8192);
	req(fd, msg, (size_t)n + 8192, hdr, sizeof(hdr), NULL);
	free(msg);
	CHECKF(!strcmp(hdr, "OK 0"), "write: '%s'", hdr);
	CHECK(uraid_read(a, back, 8192, 0) == 0 && !memcmp(back, data, 8192));
	/* a write whose payload never comes: the server waits for it; the
	 * client going away must end that connection cleanly */
	CHECK(write(fd, "write 1000000000 512\n", 21) == 21);
	close(fd);
	fd = conn(path);
	CHECK(uraid_control_wait(c, 0) == -ETIMEDOUT);
	req(fd, "stop\n", 5, hdr, sizeof(hdr), NULL);
	CHECK(!strcmp(hdr, "OK 0"));
	CHECK(uraid_control_wait(c, 2000) == 0);
	close(fd);
	uraid_control_close(c);
	CHECK(access(path, F_OK) != 0); /* socket removed */
	CHECK(uraid_stop(a) == 0);
	for (int i = 0; i < 3; i++)
		te_disk_close(&d[i]);
}

TEST_MAIN(T(control_requests))
