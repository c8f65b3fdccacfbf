/* NBD members (member_nbd.c) against real nbdkit servers on private Unix
 * sockets: the URI parser's accept/refuse table; random reads and writes
 * through the ops and through member_ioq_run batches mixed with a memory
 * member, checked against shadow copies and against the server's backing
 * file; a server whose minimum block size is 4096 (blocksize filter) taking
 * unaligned requests; a server that answers too slowly (delay filter) failing
 * its request with -ETIMEDOUT after the URI's timeout=, not hanging; a
 * killed server seen by member_check before any I/O, failing requests with
 * -EIO; refused connections and bad
 * URIs as clear errors; TLS with a pre-shared key (nbds+unix://); TLS with
 * certificates (nbds://, a CA, server and client certificates made with
 * openssl), a client trusting another CA refused naming the verification;
 * several threads with batches in flight on one member at once (the
 * waiters take turns driving its socket) each reading back what it wrote;
 * a healthy member whose socket nobody drove while the queue waited on a
 * stalled one not failed for it. */
#include "test_member_common.h"
#include "member/nbd_uri.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#define MSIZE (4u << 20)

static const char *good[] = {
    "nbd://localhost",
    "nbd://127.0.0.1:10809/disk",
    "nbd://[::1]:1234/e%20x",
    "nbds://host.example/exp?tls-certificates=/etc/pki",
    "nbd+unix:///?socket=/tmp/s.sock",
    "nbd+unix:///exp?socket=/tmp/s.sock&timeout=5",
    "nbds+unix://u@/?socket=/tmp/x&tls-psk-file=/k",
    "nbds://alice@host:99/e",
};
static const char *bad_uris[] = {
    "",
    "nbd:/x",
    "http://h/x",
    "nbd://",
    "nbd://:10/x",
    "nbd://h:0/x",
    "nbd://h:70000/x",
    "nbd://h:12a/x",
    "nbd://h x/e",
    "nbd://[::1/x",
    "nbd://h/x?socket=/s",
    "nbd+unix:///x",
    "nbd+unix://h/x?socket=/s",
    "nbd+unix:///x?socket=",
    "nbd://h/x?timeout=0",
    "nbd://h/x?timeout=99999",
    "nbd://h/x?bogus=1",
    "nbd://h/x?tls-certificates=/d",
    "nbd://h/%zz",
    "nbd://h/x#frag",
    "nbd://h/x?timeout=1&",
    "nbd+unix:///x?socket=/a&socket=/b",
    "nbd://alice@host/e",
    "nbds://@h/e",
    "nbds://h/e?tls-username=u",
};

static void uri_table(void)
{
	struct nbd_uri u;
	char err[256];
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECKF(nbd_uri_parse(good[i], &u, err, sizeof(err)) == 0, "%s refused: %s", good[i],
		       err);
	for (size_t i = 0; i < sizeof(bad_uris) / sizeof(bad_uris[0]); i++) {
		err[0] = 0;
		CHECKF(nbd_uri_parse(bad_uris[i], &u, err, sizeof(err)) == -EINVAL && err[0],
		       "%s accepted", bad_uris[i]);
	}
	CHECK(nbd_uri_parse("nbd://[::1]:1234/e%20x", &u, err, sizeof(err)) == 0);
	CHECK(!strcmp(u.host, "::1") && u.port == 1234 && !strcmp(u.exportname, "e x"));
	CHECK(nbd_uri_parse("nbd+unix:///e?socket=/t/s&timeout=7", &u, err, sizeof(err)) == 0);
	CHECK(u.unix_socket && !strcmp(u.socket, "/t/s") && u.timeout_s == 7);
	CHECKF(!strcmp(u.connect, "nbd+unix:///e?socket=/t/s"), "connect %s", u.connect);
	CHECK(nbd_uri_parse("nbd://h", &u, err, sizeof(err)) == 0 && u.port == 10809);
	CHECK(member_is_remote("nbds+unix:///x") && !member_is_remote("/dev/sda"));
}

/* nbdkit -f on a private socket, its backing file (when `file`) or memory;
 * extra: filter arguments. Returns the pid once the socket answers. */
static pid_t server(const char *sock, const char *file, const char *filter,
                    const char *const *extra)
{
	const char *argv[24];
	int n = 0;
	argv[n++] = "nbdkit";
	argv[n++] = "-f";
	argv[n++] = "-U";
	argv[n++] = sock;
	if (filter)
		argv[n++] = filter;
	if (file) {
		argv[n++] = "file";
		argv[n++] = file;
	} else {
		argv[n++] = "memory";
		argv[n++] = "4M";
	}
	for (; extra && *extra; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;
	unlink(sock);
	pid_t pid = fork();
	if (pid == 0) {
		int dn = open("/dev/null", O_RDWR);
		dup2(dn, 1);
		dup2(dn, 2);
		execvp("nbdkit", (char **)argv);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		if (access(sock, F_OK) == 0)
			return pid;
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

static void stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static bool have_nbdkit(void)
{
	return system("nbdkit --version >/dev/null 2>&1") == 0;
}

static struct member *open_uri(const char *uri)
{
	struct member *m = NULL;
	char err[512] = "";
	int rc = member_open_file(uri, 0, 0, &m, err, sizeof(err));
	CHECKF(rc == 0, "open %s: %d %s", uri, rc, err);
	return m;
}

static void io_and_batches(void)
{
	if (!have_nbdkit()) {
		printf("# nbdkit missing: skipped\n");
		return;
	}
	char sock[128], file[128], uri[300];
	tm_path(sock, sizeof(sock), "nbd-a.sock");
	tm_path(file, sizeof(file), "nbd-a.img");
	int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && ftruncate(fd, MSIZE) == 0);
	close(fd);
	pid_t pid = server(sock, file, NULL, NULL);
	CHECK(pid > 0);
	snprintf(uri, sizeof(uri), "nbd+unix:///?socket=%s", sock);
	struct member *m = open_uri(uri);
	if (!m)
		goto out;
	CHECK(m->size == MSIZE && !strcmp(m->ops->kind, "nbd"));
	unsigned char *shadow = calloc(1, MSIZE);
	tm_random_io(m, shadow, 0x4bd, 300);
	/* batches: the NBD member beside a memory member, flushes after */
	struct member *mm = NULL;
	CHECK(member_open_mem("mem", MSIZE, &mm) == 0);
	unsigned char *mshadow = calloc(1, MSIZE);
	struct member_ioq *q;
	CHECK(member_ioq_open(0, &q) == 0);
	uint64_t rs = 99;
	for (int round = 0; round < 40; round++) {
		struct member_io io[34];
		unsigned char *bufs[34];
		int n = 0;
		for (int k = 0; k < 32; k++) {
			rs = rs * 6364136223846793005ull + 1442695040888963407ull;
			struct member *t = (k & 1) ? mm : m;
			uint64_t off = (rs >> 20) % (MSIZE / 4096) * 4096;
			size_t len = 4096 * (1 + (rs >> 50) % 16);
			if (off + len > MSIZE)
				len = MSIZE - off;
			/* distinct cells per batch: overlapping writes are undefined */
			off = (uint64_t)(k / 2) * (MSIZE / 16) + off % (MSIZE / 16 - 65536);
			bufs[n] = malloc(len);
			bool w = (rs >> 12) & 1;
			for (size_t b = 0; b < len; b++)
				bufs[n][b] = (unsigned char)(rs >> (b % 56)) ^ (unsigned char)b;
			io[n] = (struct member_io){.m = t,
			                           .op = w ? MEMBER_OP_WRITE : MEMBER_OP_READ,
			                           .buf = bufs[n],
			                           .len = len,
			                           .off = off,
			                           .flags = (k % 5 == 0) ? MEMBER_FUA : 0};
			n++;
		}
		io[n++] = (struct member_io){.m = m, .op = MEMBER_OP_FLUSH};
		io[n++] = (struct member_io){.m = mm, .op = MEMBER_OP_FLUSH};
		CHECK(member_ioq_run(q, io, n) == 0);
		for (int k = 0; k < n; k++) {
			if (io[k].op == MEMBER_OP_FLUSH)
				continue;
			CHECK(member_io_done(&io[k]));
			unsigned char *sh = io[k].m == m ? shadow : mshadow;
			if (io[k].op == MEMBER_OP_WRITE)
				memcpy(sh + io[k].off, io[k].buf, io[k].len);
			else
				CHECKF(!memcmp(sh + io[k].off, io[k].buf, io[k].len),
				       "round %d read %d differs", round, k);
			free(bufs[k]);
		}
	}
	member_ioq_close(q);
	CHECK(member_discard(m, 65536, 65536) == 0);
	memset(shadow + 65536, 0, 65536);
	CHECK(member_flush(m) == 0);
	char line[256];
	member_describe(m, line, sizeof(line));
	CHECKF(strstr(line, "connected") != NULL, "describe: %s", line);
	member_close(m);
	member_close(mm);
	CHECK(tm_file_equals(file, shadow, MSIZE));
	free(shadow);
	free(mshadow);
out:
	stop(pid);
	unlink(file);
	unlink(sock);
}

static void min_block_4096(void)
{
	if (!have_nbdkit())
		return;
	char sock[128], uri[300];
	tm_path(sock, sizeof(sock), "nbd-b.sock");
	const char *f[] = {"blocksize-minimum=4096", "blocksize-error-policy=error", NULL};
	pid_t pid = server(sock, NULL, "--filter=blocksize-policy", f);
	CHECK(pid > 0);
	snprintf(uri, sizeof(uri), "nbd+unix:///?socket=%s", sock);
	struct member *m = open_uri(uri);
	if (m) {
		CHECKF(m->logical_block == 4096, "logical block %u", m->logical_block);
		unsigned char *shadow = calloc(1, MSIZE);
		tm_random_io(m, shadow, 0xb10c, 100); /* unaligned: read-modify-write */
		free(shadow);
		member_close(m);
	}
	stop(pid);
	unlink(sock);
}

static double secs(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void slow_and_dead_servers(void)
{
	if (!have_nbdkit())
		return;
	char sock[128], uri[300], err[512];
	tm_path(sock, sizeof(sock), "nbd-c.sock");
	const char *f[] = {"rdelay=4", NULL};
	pid_t pid = server(sock, NULL, "--filter=delay", f);
	CHECK(pid > 0);
	snprintf(uri, sizeof(uri), "nbd+unix:///?socket=%s&timeout=1", sock);
	struct member *m = open_uri(uri);
	if (m) {
		unsigned char buf[4096];
		double t0 = secs();
		int rc = member_read(m, buf, sizeof(buf), 0);
		double dt = secs() - t0;
		CHECKF(rc == -ETIMEDOUT, "slow read: %d", rc);
		CHECKF(dt < 3.0, "the timeout took %.1f s", dt);
		CHECKF(member_check(m, err, sizeof(err)) < 0 && strstr(err, "longer than 1 s"),
		       "check: %s", err);
		CHECK(member_write(m, buf, sizeof(buf), 0, 0) == -ETIMEDOUT); /* stays failed */
		member_close(m);
	}
	stop(pid);
	/* a server killed under an open member */
	pid = server(sock, NULL, NULL, NULL);
	snprintf(uri, sizeof(uri), "nbd+unix:///?socket=%s", sock);
	m = open_uri(uri);
	if (m) {
		unsigned char buf[4096] = {1};
		CHECK(member_write(m, buf, sizeof(buf), 0, 0) == 0);
		stop(pid);
		pid = -1;
		/* idle: the check alone sees the server gone */
		err[0] = 0;
		CHECKF(member_check(m, err, sizeof(err)) < 0 && strstr(err, "lost"),
		       "check after the server's death, before any I/O: %s", err);
		int rc = member_write(m, buf, sizeof(buf), 4096, 0);
		CHECKF(rc == -EIO || rc < 0, "write to a dead server: %d", rc);
		CHECK(member_read(m, buf, sizeof(buf), 0) < 0);
		CHECK(member_check(m, err, sizeof(err)) < 0);
		member_close(m);
	}
	stop(pid);
	unlink(sock);
	/* nobody listening; bad URIs */
	struct member *x = NULL;
	err[0] = 0;
	CHECK(member_open_file(uri, 0, 0, &x, err, sizeof(err)) < 0 && !x);
	CHECKF(strstr(err, "cannot connect") != NULL, "refused: %s", err);
	CHECK(member_open_file("nbd://h:99999/x", 0, 0, &x, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "bad NBD URI") && strstr(err, "port"), "bad uri: %s", err);
}

/* nbds+unix:// with a pre-shared key (nbdkit --tls=require --tls-psk):
 * the key given in the URI connects, a plain nbd+unix:// is refused. */
static void tls_psk(void)
{
	if (!have_nbdkit())
		return;
	char sock[128], psk[128], uri[400], err[512] = "";
	tm_path(sock, sizeof(sock), "nbd-d.sock");
	tm_path(psk, sizeof(psk), "nbd-d.psk");
	FILE *f = fopen(psk, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "uraid:0123456789abcdef0123456789abcdef\n");
	fclose(f);
	char opt[160];
	snprintf(opt, sizeof(opt), "--tls-psk=%s", psk);
	const char *argv[] = {"nbdkit", "-f", "--tls=require", opt, "-U", sock, "memory",
	                      "4M",     NULL};
	unlink(sock);
	pid_t pid = fork();
	if (pid == 0) {
		int dn = open("/dev/null", O_RDWR);
		dup2(dn, 1);
		dup2(dn, 2);
		execvp("nbdkit", (char **)argv);
		_exit(127);
	}
	for (int i = 0; i < 200 && access(sock, F_OK) != 0; i++) {
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
	}
	snprintf(uri, sizeof(uri), "nbds+unix://uraid@/?socket=%s&tls-psk-file=%s", sock, psk);
	struct member *m = open_uri(uri);
	if (m) {
		unsigned char buf[4096], back[4096];
		memset(buf, 0x5a, sizeof(buf));
		CHECK(member_write(m, buf, sizeof(buf), 8192, MEMBER_FUA) == 0);
		CHECK(member_read(m, back, sizeof(back), 8192) == 0 && !memcmp(buf, back, 4096));
		char line[256];
		member_describe(m, line, sizeof(line));
		CHECKF(strstr(line, "(TLS)") != NULL, "describe: %s", line);
		member_close(m);
	}
	struct member *x = NULL;
	snprintf(uri, sizeof(uri), "nbd+unix:///?socket=%s", sock);
	CHECK(member_open_file(uri, 0, 0, &x, err, sizeof(err)) < 0 && !x);
	CHECKF(err[0] != 0, "plain connection to a TLS-only server: %s", err);
	stop(pid);
	unlink(sock);
	unlink(psk);
}

/* Several threads on one member, each with its own queue and region:
 * batches of writes then reads of what they wrote, and op-level writes,
 * all at once (a waiter drives the socket for the others, hands it over
 * when its own batch is done). */
#define NTHR 6
struct thr_arg {
	struct member *m;
	int id;
	int bad;
};

static void *thr_run(void *p)
{
	struct thr_arg *t = p;
	struct member_ioq *q;
	if (member_ioq_open(0, &q) < 0) {
		t->bad++;
		return NULL;
	}
	uint64_t region = MSIZE / NTHR / 4096 * 4096, base = (uint64_t)t->id * region;
	uint64_t rs = 1234567u + (uint64_t)t->id;
	unsigned char *w = malloc(8 * 4096), *r = malloc(8 * 4096);
	for (int round = 0; round < 60 && w && r; round++) {
		struct member_io io[8];
		for (int k = 0; k < 8; k++) {
			rs = rs * 6364136223846793005ull + 1442695040888963407ull;
			/* distinct blocks: one per eighth of the region */
			uint64_t cell = region / 8 / 4096;
			uint64_t off = base + (uint64_t)k * cell * 4096 + (rs >> 33) % cell * 4096;
			memset(w + k * 4096, (int)(rs >> 24), 4096);
			w[k * 4096] = (unsigned char)round;
			io[k] = (struct member_io){.m = t->m,
			                           .op = MEMBER_OP_WRITE,
			                           .buf = w + k * 4096,
			                           .len = 4096,
			                           .off = off};
		}
		if (round % 3 == 2) {
			/* op-level writes (superblocks and bitmaps take this path) */
			for (int k = 0; k < 8; k++)
				if (member_write(t->m, io[k].buf, 4096, io[k].off, 0) < 0)
					t->bad++;
		} else if (member_ioq_run(q, io, 8) != 0) {
			t->bad++;
		}
		for (int k = 0; k < 8; k++)
			io[k] = (struct member_io){.m = t->m,
			                           .op = MEMBER_OP_READ,
			                           .buf = r + k * 4096,
			                           .len = 4096,
			                           .off = io[k].off};
		if (member_ioq_run(q, io, 8) != 0 || memcmp(w, r, 8 * 4096) != 0)
			t->bad++;
	}
	free(w);
	free(r);
	member_ioq_close(q);
	return NULL;
}

static void threads_share_member(void)
{
	if (!have_nbdkit())
		return;
	char sock[128], uri[300];
	tm_path(sock, sizeof(sock), "nbd-e.sock");
	const char *f[] = {NULL};
	pid_t pid = server(sock, NULL, NULL, f);
	CHECK(pid > 0);
	snprintf(uri, sizeof(uri), "nbd+unix:///?socket=%s&timeout=20", sock);
	struct member *m = open_uri(uri);
	if (m) {
		pthread_t th[NTHR];
		struct thr_arg a[NTHR];
		for (int i = 0; i < NTHR; i++) {
			a[i] = (struct thr_arg){.m = m, .id = i};
			CHECK(pthread_create(&th[i], NULL, thr_run, &a[i]) == 0);
		}
		for (int i = 0; i < NTHR; i++) {
			pthread_join(th[i], NULL);
			CHECKF(a[i].bad == 0, "thread %d: %d bad rounds", i, a[i].bad);
		}
		char err[256] = "";
		CHECKF(member_check(m, err, sizeof(err)) == 0, "check: %s", err);
		member_close(m);
	}
	stop(pid);
	unlink(sock);
}

/* nbds:// with X.509 certificates: nbdkit --tls=require --tls-certificates
 * on 127.0.0.1; the client's tls-certificates= directory holds the CA and
 * a client certificate it signed. A directory whose CA did not sign the
 * server's certificate is refused, naming the verification. */
static int make_ca(const char *d)
{
	/* CA key and self-signed certificate in d/ca-*.pem (EC keys: fast). */
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
	         "mkdir -p %s && cd %s && "
	         "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
	         "-keyout ca-key.pem -out ca-cert.pem -days 2 -subj /CN=uraid-test-ca "
	         ">/dev/null 2>&1",
	         d, d);
	return system(cmd);
}

static int make_signed(const char *d, const char *who, const char *ext)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
	         "cd %s && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
	         "-keyout %s-key.pem -out %s.csr -subj /CN=%s >/dev/null 2>&1 && "
	         "printf '%s\\n' >%s.ext && "
	         "openssl x509 -req -in %s.csr -CA ca-cert.pem -CAkey ca-key.pem "
	         "-CAcreateserial -out %s-cert.pem -days 2 -extfile %s.ext >/dev/null 2>&1",
	         d, who, who, who, ext, who, who, who, who);
	return system(cmd);
}

static int free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	int port = -1;
	if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(s, (struct sockaddr *)&a, &l) == 0)
		port = ntohs(a.sin_port);
	if (s >= 0)
		close(s);
	return port;
}

static void tls_certificates(void)
{
	if (!have_nbdkit() || system("openssl version >/dev/null 2>&1") != 0) {
		printf("# nbdkit or openssl missing: skipped\n");
		return;
	}
	char srv[128], cli[128], other[128], uri[400], err[512] = "";
	tm_path(srv, sizeof(srv), "pki-server");
	tm_path(cli, sizeof(cli), "pki-client");
	tm_path(other, sizeof(other), "pki-other");
	bool made = make_ca(srv) == 0 &&
	            make_signed(srv, "server",
	                        "subjectAltName=IP:127.0.0.1,DNS:localhost\\n"
	                        "extendedKeyUsage=serverAuth") == 0 &&
	            make_signed(srv, "client", "extendedKeyUsage=clientAuth") == 0 &&
	            mkdir(cli, 0700) == 0 && make_ca(other) == 0;
	CHECKF(made, "openssl made the certificates");
	if (!made)
		return;
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
	         "cp %s/ca-cert.pem %s/client-cert.pem %s/client-key.pem %s/ && "
	         "cp %s/client-cert.pem %s/client-key.pem %s/",
	         srv, srv, srv, cli, srv, srv, other);
	CHECK(system(cmd) == 0);
	int port = free_port();
	CHECK(port > 0);
	char ports[16], certs[160];
	snprintf(ports, sizeof(ports), "%d", port);
	snprintf(certs, sizeof(certs), "--tls-certificates=%s", srv);
	const char *argv[] = {"nbdkit",
	                      "-f",
	                      "--tls=require",
	                      "--tls-verify-peer",
	                      certs,
	                      "-i",
	                      "127.0.0.1",
	                      "-p",
	                      ports,
	                      "memory",
	                      "4M",
	                      NULL};
	pid_t pid = fork();
	if (pid == 0) {
		int dn = open("/dev/null", O_RDWR);
		dup2(dn, 1);
		dup2(dn, 2);
		execvp("nbdkit", (char **)argv);
		_exit(127);
	}
	/* wait for the port to listen */
	for (int i = 0; i < 200; i++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = {.sin_family = AF_INET,
		                        .sin_port = htons((uint16_t)port),
		                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		int ok = connect(s, (struct sockaddr *)&a, sizeof(a)) == 0;
		close(s);
		if (ok)
			break;
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
	}
	snprintf(uri, sizeof(uri), "nbds://127.0.0.1:%d/?tls-certificates=%s", port, cli);
	struct member *m = open_uri(uri);
	if (m) {
		unsigned char buf[4096], back[4096];
		memset(buf, 0xc3, sizeof(buf));
		CHECK(member_write(m, buf, sizeof(buf), 4096, 0) == 0);
		CHECK(member_read(m, back, sizeof(back), 4096) == 0 && !memcmp(buf, back, 4096));
		char line[256];
		member_describe(m, line, sizeof(line));
		CHECKF(strstr(line, "(TLS)") != NULL, "describe: %s", line);
		member_close(m);
	}
	struct member *x = NULL;
	snprintf(uri, sizeof(uri), "nbds://127.0.0.1:%d/?tls-certificates=%s", port, other);
	int rc = member_open_file(uri, 0, 0, &x, err, sizeof(err));
	CHECKF(rc < 0 && !x, "a client trusting another CA: %d", rc);
	CHECKF(strstr(err, "cannot connect") &&
	           (strstr(err, "certificate") || strstr(err, "verif")),
	       "wrong CA: %s", err);
	printf("# wrong CA: %s\n", err);
	stop(pid);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s %s", srv, cli, other);
	CHECK(system(cmd) == 0);
}

/* One batch to a stalled member and a healthy one (both timeout=1): the
 * queue waits on the stalled one first, for longer than the timeout, while
 * nobody drives the healthy one's socket (a 3 MiB write left half sent, its
 * reply then). The stalled member fails; the healthy one's write completes
 * and the member stays up: time its socket was not driven is not counted. */
static void undriven_is_not_late(void)
{
	if (!have_nbdkit())
		return;
	char s1[128], s2[128], u1[300], u2[300], err[256] = "";
	tm_path(s1, sizeof(s1), "nbd-f.sock");
	tm_path(s2, sizeof(s2), "nbd-g.sock");
	const char *f[] = {"rdelay=3", NULL};
	pid_t slow = server(s1, NULL, "--filter=delay", f);
	pid_t fast = server(s2, NULL, NULL, NULL);
	CHECK(slow > 0 && fast > 0);
	snprintf(u1, sizeof(u1), "nbd+unix:///?socket=%s&timeout=1", s1);
	snprintf(u2, sizeof(u2), "nbd+unix:///?socket=%s&timeout=1", s2);
	struct member *ms = open_uri(u1), *mf = open_uri(u2);
	struct member_ioq *q = NULL;
	size_t big = 3u << 20;
	unsigned char *wb = malloc(big), rb[4096];
	if (ms && mf && wb && member_ioq_open(0, &q) == 0) {
		memset(wb, 0x6e, big);
		struct member_io io[2] = {
		    {.m = ms, .op = MEMBER_OP_READ, .buf = rb, .len = sizeof(rb), .off = 0},
		    {.m = mf, .op = MEMBER_OP_WRITE, .buf = wb, .len = big, .off = 0}};
		member_ioq_run(q, io, 2);
		CHECKF(io[0].result == -ETIMEDOUT, "stalled member: %zd", io[0].result);
		CHECKF(member_io_done(&io[1]), "healthy member's write: %zd", io[1].result);
		CHECKF(member_check(mf, err, sizeof(err)) == 0, "healthy member: %s", err);
		member_ioq_close(q);
	}
	free(wb);
	if (ms)
		member_close(ms);
	if (mf)
		member_close(mf);
	stop(slow);
	stop(fast);
	unlink(s1);
	unlink(s2);
}

TEST_MAIN(T(uri_table), T(io_and_batches), T(min_block_4096), T(slow_and_dead_servers), T(tls_psk),
          T(threads_share_member), T(tls_certificates), T(undriven_is_not_late))
