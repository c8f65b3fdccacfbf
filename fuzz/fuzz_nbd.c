/* libFuzzer target for the bench's in-process NBD server (src/bench/
 * bench_nbd.c): the input is a client's whole byte stream — handshake
 * options, then requests with their payloads — fed through a socketpair to
 * bw_nbd_serve on an array of memory members (kept across runs). The server
 * must end the connection on its own (at the stream's end or on a bad
 * magic), never touch memory outside its buffers (ASan), and answer in whole
 * NBD messages: the reply stream is drained by a second thread so the
 * server never blocks on a full socket. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench/bench_workloads.h"
#include "fuzz_array.h"
#include "uraid.h"

static struct uraid_array *arr;
static uint8_t *srv_buf;

static void teardown(void)
{
	if (arr)
		uraid_stop(arr);
	free(srv_buf);
}

static void setup(void)
{
	if (arr)
		return;
	arr = fuzz_mem_raid5("fuzz_nbd");
	srv_buf = malloc(BW_NBD_MAX_REQ);
	if (!srv_buf)
		abort();
	atexit(teardown);
}

struct feed {
	int fd;
	const uint8_t *d;
	size_t n;
};

/* The client's side: send the stream, say no more, then read (and drop)
 * every reply until the server closes its end. */
static void *client(void *arg)
{
	struct feed *f = arg;
	for (size_t done = 0; done < f->n;) {
		ssize_t w = send(f->fd, f->d + done, f->n - done, MSG_NOSIGNAL);
		if (w <= 0)
			break; /* the server hung up early: fine */
		done += (size_t)w;
	}
	shutdown(f->fd, SHUT_WR);
	return NULL;
}

static void *drain(void *arg)
{
	int fd = *(int *)arg;
	static __thread uint8_t sink[65536];
	while (read(fd, sink, sizeof(sink)) > 0)
		;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	setup();
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	struct feed f = {sv[0], d, n};
	pthread_t tc, td;
	if (pthread_create(&tc, NULL, client, &f) || pthread_create(&td, NULL, drain, &sv[0]))
		abort();
	bw_nbd_serve(arr, srv_buf, sv[1]);
	close(sv[1]); /* the drain sees EOF */
	pthread_join(tc, NULL);
	pthread_join(td, NULL);
	close(sv[0]);
	return 0;
}
