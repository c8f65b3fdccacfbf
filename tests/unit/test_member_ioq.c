/* Batched I/O: random batches over mixed members (buffered file, O_DIRECT
 * file, memory, fault wrappers, a read-only file) through an io_uring queue
 * and a synchronous one; both must match a shadow model and each other. */
#include "test_member_common.h"
#include "sim/member_fault.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define NM    6
#define MSIZE (2u << 20)
#define CELL  65536u
#define NCELL (MSIZE / CELL)

struct world {
	struct member *m[NM];
	unsigned char *shadow[NM];
	char path[NM][128];
};

static struct member *open_file(const char *path, unsigned flags)
{
	char err[256] = "";
	struct member *m = NULL;
	int rc = member_open_file(path, flags, MSIZE, &m, err, sizeof(err));
	CHECKF(rc == 0, "open %s: %d %s", path, rc, err);
	return m;
}

static bool world_open(struct world *w, const char *tag)
{
	memset(w, 0, sizeof(*w));
	for (int i = 0; i < NM; i++) {
		char t[64];
		snprintf(t, sizeof(t), "%s%d", tag, i);
		tm_path(w->path[i], sizeof(w->path[i]), t);
		unlink(w->path[i]);
		w->shadow[i] = calloc(1, MSIZE);
	}
	struct member *in;
	w->m[0] = open_file(w->path[0], MEMBER_CREATE);
	w->m[1] = open_file(w->path[1], MEMBER_CREATE | MEMBER_DIRECT);
	CHECK(member_open_mem("mem", MSIZE, &w->m[2]) == 0);
	CHECK(member_open_mem("mem-inner", MSIZE, &in) == 0);
	CHECK(member_fault_wrap(in, &w->m[3]) == 0);
	in = open_file(w->path[4], MEMBER_CREATE | MEMBER_DIRECT);
	CHECK(in && member_fault_wrap(in, &w->m[4]) == 0);
	/* m5: read-only O_DIRECT file with known contents */
	in = open_file(w->path[5], MEMBER_CREATE);
	uint64_t rs = 55;
	t_fill(&rs, w->shadow[5], MSIZE);
	CHECK(in && member_write(in, w->shadow[5], MSIZE, 0, 0) == 0);
	member_close(in);
	w->m[5] = open_file(w->path[5], MEMBER_RDONLY | MEMBER_DIRECT);
	for (int i = 0; i < NM; i++)
		if (!w->m[i])
			return false;
	CHECK(w->m[1]->direct && w->m[5]->direct);
	return true;
}

static void world_verify(struct world *w)
{
	unsigned char *b = malloc(MSIZE);
	for (int i = 0; i < NM; i++) {
		CHECK(member_read(w->m[i], b, MSIZE, 0) == 0);
		CHECKF(memcmp(b, w->shadow[i], MSIZE) == 0, "member %d differs from shadow", i);
	}
	free(b);
}

static void world_close(struct world *w)
{
	for (int i = 0; i < NM; i++) {
		if (w->m[i])
			member_close(w->m[i]);
		/* files checked byte by byte without member code */
		if (i != 2 && i != 3)
			CHECKF(tm_file_equals(w->path[i], w->shadow[i], MSIZE), "file %d", i);
		unlink(w->path[i]);
		free(w->shadow[i]);
	}
}

struct req {
	int member;
	size_t skew;
	ssize_t expect;
};

/* Random batches. Requests of one batch use distinct 64 KiB cells of each
 * member (cells with index % cmod == crem only), so their order does not
 * matter; the last cell also hosts requests crossing the member's end.
 * Every result is appended to `log` for comparing two runs. */
static void run_batches(struct world *w, struct member_ioq *q, uint64_t seed, int nbatch,
                        unsigned cmod, unsigned crem, ssize_t *log, size_t *nlog)
{
	uint64_t rs = seed;
	for (int b = 0; b < nbatch; b++) {
		int n = 1 + (int)(t_rand(&rs) % 48);
		struct member_io ios[48];
		struct req rq[48];
		bool used[NM][NCELL];
		memset(used, 0, sizeof(used));
		for (int i = 0; i < n; i++) {
			struct member_io *io = &ios[i];
			int mi = (int)(t_rand(&rs) % NM);
			unsigned op = (unsigned)(t_rand(&rs) % 20);
			memset(io, 0, sizeof(*io));
			io->m = w->m[mi];
			rq[i].member = mi;
			rq[i].skew = t_rand(&rs) % 3 == 0 ? (size_t)(t_rand(&rs) % 512) : 0;
			if (op >= 18) {
				io->op = MEMBER_OP_FLUSH;
				io->buf = NULL;
				rq[i].expect = 0;
				continue;
			}
			io->op = op < 9 ? MEMBER_OP_READ : MEMBER_OP_WRITE;
			unsigned c = (unsigned)(t_rand(&rs) % NCELL);
			unsigned tries = 0;
			while ((used[mi][c] || c % cmod != crem) && tries++ < 4 * NCELL)
				c = (c + 1) % NCELL;
			if (used[mi][c] || c % cmod != crem) {
				io->op = MEMBER_OP_FLUSH; /* no free cell: harmless filler */
				rq[i].expect = 0;
				continue;
			}
			used[mi][c] = true;
			uint64_t cstart = (uint64_t)c * CELL;
			if (t_rand(&rs) % 2) { /* aligned: the ring's straight path */
				io->off = cstart + (t_rand(&rs) % 8) * 4096;
				io->len = (size_t)(1 + t_rand(&rs) % 7) * 4096;
			} else {
				io->off = cstart + t_rand(&rs) % CELL;
				io->len = (size_t)(t_rand(&rs) % (cstart + CELL - io->off + 1));
			}
			if (c == NCELL - 1 && t_rand(&rs) % 3 == 0) { /* across/past the end */
				io->off = MSIZE - t_rand(&rs) % 5000;
				io->len = (size_t)(t_rand(&rs) % 9000);
			}
			io->buf = tm_alloc(io->len, rq[i].skew);
			if (io->op == MEMBER_OP_WRITE) {
				t_fill(&rs, io->buf, io->len);
				io->flags = t_rand(&rs) % 4 == 0 ? MEMBER_FUA : 0;
				bool fits = io->off + io->len <= MSIZE;
				rq[i].expect = w->m[mi]->readonly ? -EROFS
				               : fits             ? (ssize_t)io->len
				                                  : -ENOSPC;
			} else {
				memset(io->buf, 0xee, io->len);
				rq[i].expect = (ssize_t)tm_expect_read(MSIZE, io->off, io->len);
			}
			io->result = 12345; /* must be overwritten */
		}
		int rc = member_ioq_run(q, ios, n);
		int first_bad = 0;
		for (int i = 0; i < n; i++) {
			struct member_io *io = &ios[i];
			int mi = rq[i].member;
			CHECKF(io->result == rq[i].expect,
			       "batch %d io %d member %d op %d len %zu off %" PRIu64
			       ": result %zd want %zd",
			       b, i, mi, io->op, io->len, io->off, io->result, rq[i].expect);
			if (!first_bad && io->result < 0)
				first_bad = (int)io->result;
			log[(*nlog)++] = io->result;
			if (io->op == MEMBER_OP_READ && io->result > 0)
				CHECKF(memcmp(io->buf, w->shadow[mi] + io->off,
				              (size_t)io->result) == 0,
				       "batch %d io %d: read data differs", b, i);
			if (io->op == MEMBER_OP_WRITE && io->result == (ssize_t)io->len)
				memcpy(w->shadow[mi] + io->off, io->buf, io->len);
			if (io->op != MEMBER_OP_FLUSH)
				tm_free(io->buf, rq[i].skew);
		}
		CHECKF(rc == first_bad, "run returned %d, first bad result %d", rc, first_bad);
	}
}

static struct member_ioq *open_queue(bool sync, unsigned depth)
{
	struct member_ioq *q = NULL;
	if (sync)
		setenv("URAID_IOQ", "sync", 1);
	else
		unsetenv("URAID_IOQ");
	CHECK(member_ioq_open(depth, &q) == 0);
	unsetenv("URAID_IOQ");
	if (!q)
		abort();
	if (sync) {
		CHECK(strcmp(member_ioq_backend(q), "sync") == 0);
		CHECK(strcmp(member_ioq_reason(q), "URAID_IOQ=sync") == 0);
	} else if (strcmp(member_ioq_backend(q), "io_uring") != 0) {
		/* Containers may forbid io_uring: the fallback must say why. */
		printf("# io_uring unavailable: %s\n", member_ioq_reason(q));
		CHECK(strcmp(member_ioq_backend(q), "sync") == 0);
		CHECK(strlen(member_ioq_reason(q)) > 0);
	}
	return q;
}

#define NBATCH 60

static void both_backends_agree(void)
{
	static ssize_t log[2][NBATCH * 48];
	size_t nlog[2] = {0, 0};
	for (int k = 0; k < 2; k++) {
		struct world w;
		struct member_ioq *q = open_queue(k == 1, 8);
		if (world_open(&w, k ? "qs" : "qu")) {
			run_batches(&w, q, 0xfeed, NBATCH, 1, 0, log[k], &nlog[k]);
			world_verify(&w);
		}
		world_close(&w);
		member_ioq_close(q);
	}
	CHECK(nlog[0] == nlog[1] && nlog[0] > 0);
	CHECK(memcmp(log[0], log[1], nlog[0] * sizeof(ssize_t)) == 0);
}

/* Requests split into 4 KiB (or 5000-byte) ring submissions: every piece
 * after the first is the "resubmit the rest of a short transfer" path. */
static void split_resubmits(void)
{
	static ssize_t log[NBATCH * 48];
	size_t sizes[] = {4096, 5000};
	for (int k = 0; k < 2; k++) {
		size_t nlog = 0;
		struct world w;
		struct member_ioq *q = open_queue(false, 8);
		member_ioq_set_split(q, sizes[k]);
		if (world_open(&w, "sp")) {
			run_batches(&w, q, 0x5917 + (uint64_t)k, 20, 1, 0, log, &nlog);
			world_verify(&w);
		}
		world_close(&w);
		member_ioq_close(q);
	}
}

/* Short transfers and failures injected under the queue. */
static void faults_through_queue(void)
{
	for (int k = 0; k < 2; k++) {
		struct world w;
		struct member_ioq *q = open_queue(k == 1, 0);
		if (!world_open(&w, k ? "fs" : "fu"))
			goto out;
		/* m3: every read and write is cut in half; retries finish the job */
		struct member_fault_rule shortr = {.op = MEMBER_OP_READ, .short_io = true};
		struct member_fault_rule shortw = {.op = MEMBER_OP_WRITE, .short_io = true};
		CHECK(member_fault_add(w.m[3], &shortr) == 0);
		CHECK(member_fault_add(w.m[3], &shortw) == 0);
		/* m4: EIO on reads of [1 MiB, 1 MiB + 4096) and on writes there too */
		struct member_fault_rule eior = {
		    .op = MEMBER_OP_READ, .off = 1 << 20, .len = 4096, .error = EIO};
		struct member_fault_rule eiow = eior;
		eiow.op = MEMBER_OP_WRITE;
		struct member_fault_rule fl = {.op = MEMBER_OP_FLUSH, .error = EIO, .once = true};
		CHECK(member_fault_add(w.m[4], &eior) == 0);
		CHECK(member_fault_add(w.m[4], &eiow) == 0);
		CHECK(member_fault_add(w.m[4], &fl) == 0);

		unsigned char *a = tm_alloc(100000, 0), *b = tm_alloc(8192, 0),
		              *c = tm_alloc(8192, 0), *d = tm_alloc(100000, 0);
		uint64_t rs = 9;
		t_fill(&rs, a, 100000);
		t_fill(&rs, c, 8192);
		struct member_io ios[] = {
		    {.m = w.m[3], .op = MEMBER_OP_WRITE, .buf = a, .len = 100000, .off = 777},
		    {.m = w.m[4],
		     .op = MEMBER_OP_READ,
		     .buf = b,
		     .len = 8192,
		     .off = (1 << 20) - 4096},
		    {.m = w.m[4],
		     .op = MEMBER_OP_WRITE,
		     .buf = c,
		     .len = 8192,
		     .off = (1 << 20) + 2048},
		    {.m = w.m[4], .op = MEMBER_OP_FLUSH},
		    {.m = w.m[1], .op = MEMBER_OP_WRITE, .buf = c, .len = 8192, .off = 8192},
		    {.m = w.m[4], .op = MEMBER_OP_WRITE, .buf = c, .len = 4096, .off = 0},
		};
		int rc = member_ioq_run(q, ios, 6);
		CHECK(rc == -EIO);
		CHECK(ios[0].result == 100000);
		CHECK(ios[1].result == -EIO);
		CHECK(ios[2].result == -EIO);
		CHECK(ios[3].result == -EIO);
		CHECK(ios[4].result == 8192);
		CHECK(ios[5].result == 4096);
		memcpy(w.shadow[3] + 777, a, 100000);
		memcpy(w.shadow[1] + 8192, c, 8192);
		memcpy(w.shadow[4], c, 4096);
		/* read it back through the halving rule; the flush rule was once */
		struct member_io rd[] = {
		    {.m = w.m[3], .op = MEMBER_OP_READ, .buf = d, .len = 100000, .off = 777},
		    {.m = w.m[4], .op = MEMBER_OP_FLUSH},
		};
		CHECK(member_ioq_run(q, rd, 2) == 0);
		CHECK(rd[0].result == 100000 && memcmp(d, a, 100000) == 0);
		CHECK(rd[1].result == 0);
		/* 1 + 2 + 2 requests per halving: 100000 bytes take 17 halvings */
		CHECK(member_fault_hits(w.m[3]) >= 2 * 17);
		CHECK(member_fault_hits(w.m[4]) == 3);
		member_fault_clear(w.m[3]);
		member_fault_clear(w.m[4]);
		world_verify(&w);
		tm_free(a, 0);
		tm_free(b, 0);
		tm_free(c, 0);
		tm_free(d, 0);
	out:
		world_close(&w);
		member_ioq_close(q);
	}
}

static void bad_requests(void)
{
	struct member_ioq *q = open_queue(false, 4);
	struct member *m = NULL;
	CHECK(member_open_mem("x", 65536, &m) == 0);
	char buf[16];
	struct member_io ios[] = {
	    {.m = NULL, .op = MEMBER_OP_READ, .buf = buf, .len = 16},
	    {.m = m, .op = (enum member_op)7, .buf = buf, .len = 16},
	    {.m = m, .op = MEMBER_OP_READ, .buf = NULL, .len = 16},
	    {.m = m, .op = MEMBER_OP_READ, .buf = buf, .len = 16, .off = 65536},
	    {.m = m, .op = MEMBER_OP_WRITE, .buf = buf, .len = 0, .off = 65536},
	};
	CHECK(member_ioq_run(q, ios, 5) == -EINVAL);
	CHECK(ios[0].result == -EINVAL);
	CHECK(ios[1].result == -EINVAL);
	CHECK(ios[2].result == -EFAULT);
	CHECK(ios[3].result == 0);
	CHECK(ios[4].result == 0);
	CHECK(member_ioq_run(q, ios, 0) == 0);
	CHECK(member_ioq_run(q, ios, -1) == -EINVAL);
	CHECK(member_ioq_run(NULL, ios, 1) == -EINVAL);
	CHECK(member_ioq_open(0, NULL) == -EINVAL);
	member_close(m);
	member_ioq_close(q);
	member_ioq_close(NULL);
}

struct thread_arg {
	struct world *w;
	struct member_ioq *q;
	unsigned rem;
	ssize_t log[40 * 48];
	size_t nlog;
	int failures;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	run_batches(a->w, a->q, 0xabc + a->rem, 40, 2, a->rem, a->log, &a->nlog);
	return NULL;
}

/* Two threads, one queue each, sharing members (disjoint cells). The
 * queues are opened here because open_queue edits the environment. The
 * members are verified against the shadows after the join as well. */
static void two_threads(void)
{
	struct world w;
	if (world_open(&w, "tt")) {
		static struct thread_arg args[2];
		pthread_t th[2];
		for (unsigned t = 0; t < 2; t++) {
			args[t] =
			    (struct thread_arg){.w = &w, .q = open_queue(false, 16), .rem = t};
			CHECK(pthread_create(&th[t], NULL, thread_main, &args[t]) == 0);
		}
		for (int t = 0; t < 2; t++) {
			pthread_join(th[t], NULL);
			member_ioq_close(args[t].q);
		}
		CHECK(args[0].nlog > 0 && args[1].nlog > 0);
		world_verify(&w);
	}
	world_close(&w);
}

/* Forbid io_uring_setup with EPERM, as container seccomp profiles do. */
static int forbid_io_uring(void)
{
	struct sock_filter code[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* Where io_uring is forbidden the queue falls back, says why, and works. */
static void uring_forbidden_falls_back(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		t_failures = 0;
		if (forbid_io_uring() < 0)
			_exit(3);
		struct member_ioq *q = NULL;
		unsetenv("URAID_IOQ");
		CHECK(member_ioq_open(8, &q) == 0 && q);
		if (!q)
			_exit(1);
		CHECK(strcmp(member_ioq_backend(q), "sync") == 0);
		CHECKF(strstr(member_ioq_reason(q), "io_uring_queue_init") != NULL, "reason: %s",
		       member_ioq_reason(q));
		struct world w;
		ssize_t *log = malloc(20 * 48 * sizeof(ssize_t));
		size_t nlog = 0;
		if (world_open(&w, "sc")) {
			run_batches(&w, q, 0x5ec, 20, 1, 0, log, &nlog);
			world_verify(&w);
		}
		world_close(&w);
		free(log);
		member_ioq_close(q);
		_exit(t_failures ? 1 : 0);
	}
	int st = 0;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3) {
		printf("# seccomp filters unavailable here: fallback not exercised\n");
		return;
	}
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
}

TEST_MAIN(T(both_backends_agree), T(split_resubmits), T(faults_through_queue), T(bad_requests),
          T(two_threads), T(uring_forbidden_falls_back))
