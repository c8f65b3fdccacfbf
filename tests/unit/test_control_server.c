/* The control server: requests over a real unix socket, including malformed
 * ones, against an array on memory members. Every answer is checked; bad
 * requests get an ERR line and never take the server down. */
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_LONG 5000

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
	CHECKF(sscanf(hdr, "OK %llu", &blen) == 1 && blen > 0, "status header '%s'", hdr);
	if (body) {
		/* decoded field by field, equal to what the API says */
		struct uraid_status st, direct;
		char e[256];
		CHECKF(uraid_status_decode((char *)body, blen, &st, e, sizeof(e)) == 0, "%s", e);
		uraid_status(a, &direct);
		CHECK(st.level == 5 && st.raid_disks == 3 && st.working == 3);
		CHECK(!memcmp(&st, &direct, sizeof(st)));
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

/* A status written by hand from the format's description in uraid.h. */
static void status_text_by_hand(void)
{
	static const char text[] = "uraid-status 1\n"
	                           "name=host%3Adata%20set\n"
	                           "uuid=01234567:89abcdef:01234567:89abcdef\n"
	                           "level=-1\n"
	                           "raid_disks=2\n"
	                           "array_sectors=18446744073709551615\n"
	                           "clean=1\n"
	                           "sync_action=recover\n"
	                           "stripe_cache_size=4096\n"
	                           "some_future_key=whatever it is\n"
	                           "member=0 7 in_sync 0 /dev/sdb\n"
	                           "member=-1 9 rebuilding 123 -5 2 7 future a%0Ab%25\n"
	                           "end\n";
	struct uraid_status st;
	char e[256] = "";
	CHECKF(uraid_status_decode(text, sizeof(text) - 1, &st, e, sizeof(e)) == 0, "%s", e);
	CHECK(!strcmp(st.name, "host:data set"));
	CHECK(!strcmp(st.uuid, "01234567:89abcdef:01234567:89abcdef"));
	CHECK(st.level == -1 && st.raid_disks == 2 && st.clean && !st.readonly);
	CHECK(st.array_sectors == UINT64_MAX && st.stripe_cache_size == 4096);
	CHECK(st.sync_action == URAID_SYNC_RECOVER && st.nmembers == 2);
	CHECK(st.members[0].role == 0 && st.members[0].dev_number == 7 &&
	      st.members[0].state == URAID_MEMBER_IN_SYNC &&
	      !strcmp(st.members[0].name, "/dev/sdb"));
	CHECK(st.members[1].role == -1 && st.members[1].state == URAID_MEMBER_REBUILDING &&
	      st.members[1].recovery_offset == 123 && st.members[1].priority == -5 &&
	      st.members[1].flags == URAID_MEMBER_F_REPLACEMENT && st.members[1].order == 7 &&
	      !strcmp(st.members[1].name, "a\nb%"));
}

/* Malformed bodies: refused with a message naming the problem. */
static void status_text_refused(void)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
	    {"", "empty"},
	    {"uraid-status 2\nend\n", "version 2"},
	    {"uraid-stats 1\nend\n", "not a uraid-status"},
	    {"uraid-status 1\nlevel=5\n", "truncated"},
	    {"uraid-status 1\nlevel=5", "not terminated"},
	    {"uraid-status 1\nend\nlevel=5\n", "after 'end'"},
	    {"uraid-status 1\nlevel=5\nlevel=6\nend\n", "twice"},
	    {"uraid-status 1\nlevel=x\nend\n", "level"},
	    {"uraid-status 1\nlevel=99999999999\nend\n", "level"},
	    {"uraid-status 1\nevents=-1\nend\n", "events"},
	    {"uraid-status 1\nevents=18446744073709551616\nend\n", "events"},
	    {"uraid-status 1\nchunk_sectors=4294967296\nend\n", "chunk_sectors"},
	    {"uraid-status 1\nclean=2\nend\n", "clean"},
	    {"uraid-status 1\nsync_action=defrag\nend\n", "sync_action"},
	    {"uraid-status 1\nname=123456789012345678901234567890123\nend\n", "name"},
	    {"uraid-status 1\nname=a%0\nend\n", "name"},
	    {"uraid-status 1\nname=a%00b\nend\n", "name"},
	    {"uraid-status 1\nname=a b\nend\n", "name"},
	    {"uraid-status 1\nraid_disks=-3\nend\n", "raid_disks"},
	    {"uraid-status 1\nmember=0 0 in_sync 0\nend\n", "fewer"},
	    {"uraid-status 1\nmember=0 0 happy 0 x\nend\n", "member"},
	    {"uraid-status 1\nmember=0 0 in_sync 0 x y\nend\n", "member"},
	    {"uraid-status 1\nmember=0 0 in_sync 0  y\nend\n", "member"},
	    {"uraid-status 1\nmember=0 0 in_sync 0 y \nend\n", "member"},
	    {"uraid-status 1\nnovalue\nend\n", "key=value"},
	    {"uraid-status 1\n=5\nend\n", "key=value"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct uraid_status st;
		char e[256] = "";
		int rc = uraid_status_decode(bad[i].text, strlen(bad[i].text), &st, e, sizeof(e));
		CHECKF(rc == -EPROTO && strstr(e, bad[i].why), "case %zu: rc %d, '%s'", i, rc, e);
	}
	/* more members than the struct holds */
	size_t cap = 100000, n = 0;
	char *t = malloc(cap);
	n += (size_t)snprintf(t + n, cap - n, "uraid-status 1\n");
	for (int i = 0; i <= URAID_STATUS_MAX_MEMBERS; i++)
		n += (size_t)snprintf(t + n, cap - n, "member=%d 0 spare 0 m%d\n", i, i);
	n += (size_t)snprintf(t + n, cap - n, "end\n");
	struct uraid_status st;
	char e[256] = "";
	CHECK(uraid_status_decode(t, n, &st, e, sizeof(e)) == -EPROTO && strstr(e, "members"));
	/* and a NUL inside */
	CHECK(uraid_status_decode("uraid-status 1\nname=a\0b\nend\n", 24, &st, e, sizeof(e)) ==
	      -EPROTO);
	free(t);
}

/* Random statuses (names of any bytes) survive encode + decode. */
static void status_roundtrip(void)
{
	uint64_t rs = 0xc0de;
	char *text = malloc(URAID_STATUS_TEXT_MAX);
	for (int iter = 0; iter < 300; iter++) {
		struct uraid_status st, back;
		memset(&st, 0, sizeof(st));
		for (size_t i = 0; i < t_rand(&rs) % sizeof(st.name); i++)
			st.name[i] = (char)(1 + t_rand(&rs) % 255);
		snprintf(st.uuid, sizeof(st.uuid), "%08x:%08x", (unsigned)t_rand(&rs),
		         (unsigned)t_rand(&rs));
		st.level = (int)(t_rand(&rs) % 12) - 1;
		st.layout = (uint32_t)t_rand(&rs);
		st.chunk_sectors = (uint32_t)t_rand(&rs);
		st.raid_disks = (int)(t_rand(&rs) % 64);
		st.metadata = (int)(t_rand(&rs) % 13);
		st.array_sectors = t_rand(&rs);
		st.dev_sectors = t_rand(&rs);
		st.events = t_rand(&rs);
		st.readonly = t_rand(&rs) & 1;
		st.clean = t_rand(&rs) & 1;
		st.working = (int)(t_rand(&rs) % 64);
		st.failed = (int)(t_rand(&rs) % 64);
		st.spares = (int)(t_rand(&rs) % 64);
		st.degraded = (int)(t_rand(&rs) % 64);
		st.sync_action = (enum uraid_sync_action)(t_rand(&rs) % 5);
		st.sync_done = t_rand(&rs);
		st.sync_total = t_rand(&rs);
		st.sync_speed_kibs = t_rand(&rs);
		st.mismatch_cnt = t_rand(&rs);
		st.stripe_cache_size = (unsigned)t_rand(&rs);
		st.block_bytes = (uint32_t)t_rand(&rs);
		st.geom_balance = (int)(t_rand(&rs) % 5);
		st.geom_slice = (uint32_t)t_rand(&rs);
		st.geom_flags = t_rand(&rs);
		st.geom_genid = (uint32_t)t_rand(&rs);
		st.geom_syncid = (uint32_t)t_rand(&rs);
		st.geom_parity_errors = t_rand(&rs);
		st.journal = (int)(t_rand(&rs) % 3);
		for (size_t i = 0; i < t_rand(&rs) % sizeof(st.journal_name); i++)
			st.journal_name[i] = (char)(1 + t_rand(&rs) % 255);
		st.journal_dev_number = (uint32_t)t_rand(&rs);
		st.journal_mode = (int)(t_rand(&rs) % 2);
		st.journal_cached = t_rand(&rs);
		st.nmembers = (int)(t_rand(&rs) % (URAID_STATUS_MAX_MEMBERS + 1));
		for (int m = 0; m < st.nmembers; m++) {
			struct uraid_member_status *ms = &st.members[m];
			size_t l = 1 + t_rand(&rs) % (sizeof(ms->name) - 1);
			for (size_t i = 0; i < l; i++)
				ms->name[i] = (char)(1 + t_rand(&rs) % 255);
			ms->role = (int)(t_rand(&rs) % 70) - 1;
			ms->dev_number = (uint32_t)t_rand(&rs);
			ms->state = (enum uraid_member_state)(t_rand(&rs) % 7);
			ms->priority = (int)(t_rand(&rs) % 512) - 256;
			ms->recovery_offset = t_rand(&rs);
		}
		int n = uraid_status_encode(&st, text, URAID_STATUS_TEXT_MAX);
		char e[256] = "";
		CHECKF(n > 0 && uraid_status_decode(text, (size_t)n, &back, e, sizeof(e)) == 0,
		       "iter %d: %d %s", iter, n, e);
		CHECKF(!memcmp(&st, &back, sizeof(st)), "iter %d differs", iter);
	}
	struct uraid_io_stats io, iob;
	memset(&io, 0, sizeof(io));
	t_fill(&rs, &io, sizeof(io));
	char e[256] = "";
	int n = uraid_io_stats_encode(&io, text, 4096);
	CHECKF(n > 0 && uraid_io_stats_decode(text, (size_t)n, &iob, e, sizeof(e)) == 0, "%s", e);
	CHECK(!memcmp(&io, &iob, sizeof(io)));
	free(text);
}

/* Hostile or odd clients: NUL bytes, too many words, over-long lines,
 * stalls; the new verbs. */
static void control_hostile(void)
{
	struct te_disk d[3];
	for (int i = 0; i < 3; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "h%d", i);
		te_disk_open(&d[i], nm, 4u << 20);
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = 5;
	o.raid_devices = 3;
	o.chunk_sectors = 32;
	o.assume_clean = true;
	struct uraid_array *a;
	CHECK(te_create(&o, d, 3, &a) == 0);
	if (!a)
		return;
	char path[108], err[256], hdr[700];
	snprintf(path, sizeof(path), "/tmp/uraid-ctl-hostile.%d.sock", (int)getpid());
	struct uraid_control *c;
	CHECK(uraid_control_start(a, path, &c, err, sizeof(err)) == 0);
	uraid_control_set_timeout(c, 300);
	int fd = conn(path);
	uint8_t *body;
	req(fd, "hello\n", 6, hdr, sizeof(hdr), &body);
	CHECK(!strcmp(hdr, "OK 16") && body && !memcmp(body, "uraid-control 1\n", 16));
	free(body);
	req(fd, "st\0atus\n", 8, hdr, sizeof(hdr), NULL);
	CHECKF(!strncmp(hdr, "ERR 22 NUL", 10), "'%s'", hdr);
	/* one word more than a request may have (server.c's MAX_ARGS, 6) */
	req(fd, "speed 1 2 3 4 5 6\n", 18, hdr, sizeof(hdr), NULL);
	CHECKF(!strncmp(hdr, "ERR 22 too many", 15), "'%s'", hdr);
	req(fd, "speed -1 5\n", 11, hdr, sizeof(hdr), NULL);
	CHECKF(!strncmp(hdr, "ERR 22", 6), "'%s'", hdr);
	req(fd, "fail h%zz\n", 10, hdr, sizeof(hdr), NULL);
	CHECKF(!strncmp(hdr, "ERR 22 bad %-escape", 19), "'%s'", hdr);
	/* the stripe cache through the socket */
	req(fd, "stripe-cache 40000\n", 19, hdr, sizeof(hdr), NULL);
	CHECKF(!strncmp(hdr, "ERR 22", 6), "'%s'", hdr);
	req(fd, "stripe-cache 128\n", 17, hdr, sizeof(hdr), NULL);
	CHECK(!strcmp(hdr, "OK 0"));
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.stripe_cache_size == 128);
	uint8_t data[4096];
	memset(data, 0x5a, sizeof(data));
	CHECK(uraid_write(a, data, sizeof(data), 0) == 0);
	req(fd, "stats\n", 6, hdr, sizeof(hdr), &body);
	unsigned long long blen = 0;
	CHECK(sscanf(hdr, "OK %llu", &blen) == 1);
	if (body) {
		struct uraid_io_stats io;
		char e[256];
		CHECKF(uraid_io_stats_decode((char *)body, blen, &io, e, sizeof(e)) == 0, "%s", e);
		CHECK(io.sc_size == 128 && io.sc_used == 1 && io.sc_write_sectors == 8);
		free(body);
	}
	/* an escaped argument reaches the engine decoded: "h%31" is h1 */
	req(fd, "fail h%31\n", 10, hdr, sizeof(hdr), NULL);
	CHECKF(!strcmp(hdr, "OK 0"), "'%s'", hdr);
	uraid_status(a, &st);
	int faulty = 0;
	for (int i = 0; i < st.nmembers; i++)
		faulty +=
		    !strcmp(st.members[i].name, "h1") && st.members[i].state == URAID_MEMBER_FAULTY;
	CHECK(faulty == 1 && st.failed == 1);
	/* a line without end: ERR, then the connection closes */
	char *longl = malloc(MAX_LONG);
	memset(longl, 'x', MAX_LONG);
	ssize_t w = write(fd, longl, MAX_LONG);
	(void)w;
	free(longl);
	size_t n = 0;
	while (n + 1 < sizeof(hdr) && read(fd, hdr + n, 1) == 1 && hdr[n] != '\n')
		n++;
	hdr[n] = 0;
	CHECKF(!strncmp(hdr, "ERR 22 request line too long", 28), "'%s'", hdr);
	close(fd);
	/* a stalled client (half a line, half a payload) is dropped */
	for (int k = 0; k < 2; k++) {
		fd = conn(path);
		const char *part = k ? "write 0 4096\nabc" : "stat";
		CHECK(write(fd, part, strlen(part)) == (ssize_t)strlen(part));
		char ch;
		uint64_t t0 = (uint64_t)time(NULL);
		ssize_t r = read(fd, &ch, 1); /* blocks until the server gives up */
		CHECKF(r == 0, "stalled client %d: read returned %zd", k, r);
		CHECK((uint64_t)time(NULL) - t0 < 10);
		close(fd);
	}
	/* the server still serves */
	fd = conn(path);
	req(fd, "hello\n", 6, hdr, sizeof(hdr), NULL);
	CHECK(!strcmp(hdr, "OK 16"));
	close(fd);
	uraid_control_close(c);
	CHECK(uraid_stop(a) == 0);
	for (int i = 0; i < 3; i++)
		te_disk_close(&d[i]);
}

TEST_MAIN(T(control_requests), T(status_text_by_hand), T(status_text_refused), T(status_roundtrip),
          T(control_hostile))
