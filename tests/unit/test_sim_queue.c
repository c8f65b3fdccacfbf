/* Simulated disks behind member_ioq batches: the elevator over one member's
 * queue (against seek sums computed here from the profile for the sweep
 * order and for submission order), members of one batch overlapping in real
 * time, and batches across N members flattening at the bus limit. */
#include "../harness.h"
#include "sim/member_sim.h"
#include "test_sim_common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

/* The seek curve as the profile states it: track-to-track plus a square
 * root of the distance, averaging seek_avg over random pairs. */
static double ref_seek_ns(const struct sim_profile *p, double span, double from, double to)
{
	double track_bytes = p->rate_outer_mbs * 1e6 * 60 / p->rpm;
	double d = fabs(to - from);
	if (d < track_bytes)
		return 0;
	double full = p->seek_track_ms + (p->seek_avg_ms - p->seek_track_ms) / (8.0 / 15.0);
	return (p->seek_track_ms + (full - p->seek_track_ms) * sqrt(d / span)) * 1e6;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Expected time of one batch of 4 KiB reads issued together with the head
 * at `head`: overhead once, then per command seek + half a revolution on
 * average + the transfer, in sweep order (elevator) or as submitted. */
static double ref_batch_ns(const struct sim_profile *p, double span, double head,
                           const uint64_t *offs, int n, bool sweep)
{
	uint64_t order[64];
	memcpy(order, offs, (size_t)n * sizeof(*offs));
	if (sweep) {
		qsort(order, (size_t)n, sizeof(*order), cmp_u64);
		/* start at the first offset at or after the head, wrap once */
		int first = 0;
		while (first < n && (double)order[first] < head)
			first++;
		uint64_t rot[64] = {0};
		for (int i = 0; i < n; i++)
			rot[i] = order[(first + i) % n];
		memcpy(order, rot, (size_t)n * sizeof(*rot));
	}
	double t = p->overhead_us * 1e3, at = head;
	for (int i = 0; i < n; i++) {
		t += ref_seek_ns(p, span, at, (double)order[i]);
		t += 30e9 / p->rpm + 4096 / (p->rate_outer_mbs * 1e3);
		at = (double)order[i] + 4096;
	}
	return t;
}

static void elevator(void)
{
	for (int sweep = 0; sweep < 2; sweep++) {
		struct sim_profile p = *sim_profile_find("sata-7200-2007");
		p.rate_inner_mbs = p.rate_outer_mbs;
		if (!sweep)
			p.queue_depth = 1;
		const uint64_t size = 1ull << 30;
		struct member *m = open_sim(&p, size, NULL, 0);
		struct member_ioq *q = NULL;
		CHECK(member_ioq_open(0, &q) == 0);
		static unsigned char bufs[32][4096];
		uint64_t rs = 77;
		double got = 0, want = 0;
		double head = 0;
		for (int b = 0; b < 30; b++) {
			struct member_io io[32];
			uint64_t offs[32];
			for (int i = 0; i < 32; i++) {
				offs[i] = t_rand(&rs) % (size / 4096) * 4096;
				io[i] = (struct member_io){.m = m,
				                           .op = MEMBER_OP_READ,
				                           .buf = bufs[i],
				                           .len = 4096,
				                           .off = offs[i]};
			}
			double t0 = (double)member_sim_model_ns(m);
			CHECK(member_ioq_run(q, io, 32) == 0);
			got += (double)member_sim_model_ns(m) - t0;
			want += ref_batch_ns(&p, (double)size, head, offs, 32, sweep);
			/* where the head ends: after the last command served */
			if (sweep) {
				qsort(offs, 32, sizeof(*offs), cmp_u64);
				int first = 0;
				while (first < 32 && (double)offs[first] < head)
					first++;
				head = (double)offs[(first + 31) % 32] + 4096;
			} else {
				head = (double)offs[31] + 4096;
			}
		}
		CHECKF(fabs(got / want - 1) < 0.10, "%s: %.1f ms for 30 batches, expected %.1f",
		       sweep ? "elevator" : "fifo", got / 1e6, want / 1e6);
		struct sim_stats st;
		member_sim_stats(m, &st);
		CHECK(st.reads == 30 * 32 + 0);
		member_ioq_close(q);
		member_close(m);
	}
}

/* The elevator helps: same requests, queue_depth 32 against 1. */
static void elevator_beats_fifo(void)
{
	double t[2];
	for (int k = 0; k < 2; k++) {
		struct sim_profile p = *sim_profile_find("raptor-10k-2008");
		p.queue_depth = k ? 32 : 1;
		struct member *m = open_sim(&p, 1ull << 30, NULL, 0);
		struct member_ioq *q = NULL;
		CHECK(member_ioq_open(0, &q) == 0);
		static unsigned char bufs[32][4096];
		uint64_t rs = 3;
		for (int b = 0; b < 10; b++) {
			struct member_io io[32];
			for (int i = 0; i < 32; i++)
				io[i] = (struct member_io){.m = m,
				                           .op = i % 3 ? MEMBER_OP_READ
				                                       : MEMBER_OP_WRITE,
				                           .buf = bufs[i],
				                           .len = 4096,
				                           .off = t_rand(&rs) % 262144 * 4096};
			CHECK(member_ioq_run(q, io, 32) == 0);
		}
		t[k] = (double)member_sim_model_ns(m);
		member_ioq_close(q);
		member_close(m);
	}
	CHECKF(t[1] < t[0] * 0.75, "elevator %.1f ms vs fifo %.1f ms", t[1] / 1e6, t[0] / 1e6);
}

/* One batch reading 1 MiB from each of 4 members (time scale 2): the
 * members work at the same time, so the batch takes as long as the slowest
 * member (~75 ms real), not the sum (~300 ms). */
static void batch_overlaps_members(void)
{
	const struct sim_profile *p = sim_profile_find("ide-2002");
	struct sim_bus *bus = NULL;
	char err[128];
	CHECK(sim_bus_create(133, &bus, err, sizeof(err)) == 0);
	struct member *m[4];
	for (int i = 0; i < 4; i++)
		m[i] = open_sim(p, 64u << 20, bus, 2);
	struct member_ioq *q = NULL;
	CHECK(member_ioq_open(0, &q) == 0);
	unsigned char *buf = malloc(4u << 20);
	struct member_io io[4];
	for (int i = 0; i < 4; i++)
		io[i] = (struct member_io){.m = m[i],
		                           .op = MEMBER_OP_READ,
		                           .buf = buf + ((size_t)i << 20),
		                           .len = 1u << 20};
	double r0 = real_ms();
	double m0 = (double)member_sim_now_ns(m[0]);
	CHECK(member_ioq_run(q, io, 4) == 0);
	double real = real_ms() - r0;
	double slowest = 0;
	for (int i = 0; i < 4; i++) {
		CHECK(io[i].result == 1 << 20);
		double ms = ((double)member_sim_model_ns(m[i]) - m0) / 1e6;
		slowest = ms > slowest ? ms : slowest;
	}
	/* 1 MiB at 7 MB/s is 150 ms of model time, 75 ms real at 2x */
	CHECKF(slowest > 149 && slowest < 170, "%.1f model ms", slowest);
	CHECKF(real >= slowest / 2 * 0.98 && real < slowest / 2 * 1.5 + 20,
	       "batch took %.1f ms real, slowest member %.1f model ms", real, slowest);
	member_ioq_close(q);
	for (int i = 0; i < 4; i++)
		member_close(m[i]);
	sim_bus_destroy(bus);
	free(buf);
}

/* The benchmark shape: full-stripe batches (1 MiB per member) over N members
 * of 120 MB/s on a 680 MB/s bus, one submitting thread, virtual time: the
 * total grows with N until it flattens at the bus limit. */
static void stripes_flatten_at_bus(void)
{
	struct sim_profile p = *sim_profile_find("raptor-10k-2008");
	p.rate_inner_mbs = p.rate_outer_mbs;
	unsigned char *buf = malloc(10u << 20);
	for (int n = 3; n <= 10; n++) {
		struct sim_bus *bus = NULL;
		char err[128];
		CHECK(sim_bus_create(680, &bus, err, sizeof(err)) == 0);
		struct member *m[10];
		for (int i = 0; i < n; i++)
			m[i] = open_sim(&p, 64u << 20, bus, 0);
		struct member_ioq *q = NULL;
		CHECK(member_ioq_open(0, &q) == 0);
		const int stripes = 40;
		for (int s = 0; s < stripes; s++) {
			struct member_io io[10];
			for (int i = 0; i < n; i++)
				io[i] = (struct member_io){.m = m[i],
				                           .op = MEMBER_OP_READ,
				                           .buf = buf + ((size_t)i << 20),
				                           .len = 1u << 20,
				                           .off = (uint64_t)s << 20};
			CHECK(member_ioq_run(q, io, n) == 0);
		}
		double el = (double)sim_bus_model_ns(bus);
		double total = (double)stripes * n * (1 << 20) / el * 1e3;
		double want = n * p.rate_outer_mbs < 680 ? n * p.rate_outer_mbs : 680;
		CHECKF(fabs(total / want - 1) < 0.05, "%d members: %.1f MB/s, expected %.1f", n,
		       total, want);
		member_ioq_close(q);
		for (int i = 0; i < n; i++)
			member_close(m[i]);
		sim_bus_destroy(bus);
	}
	free(buf);
}

/* Batches keep the data right: writes then reads of the same ranges in
 * later batches, mixed with flushes, elevator reordering included. */
static void batch_data(void)
{
	const struct sim_profile *p = sim_profile_find("sata-7200-2007");
	const size_t size = 8u << 20;
	struct member *m = open_sim(p, size, NULL, 0);
	unsigned char *shadow = calloc(1, size);
	struct member_ioq *q = NULL;
	CHECK(member_ioq_open(0, &q) == 0);
	uint64_t rs = 8;
	static unsigned char bufs[16][8192];
	for (int round = 0; round < 200; round++) {
		struct member_io io[17];
		int n = 16;
		bool write = round % 2 == 0;
		for (int i = 0; i < n; i++) {
			/* slots of 512 KiB keep one batch's writes apart */
			size_t len = 1 + (size_t)(t_rand(&rs) % 8192);
			uint64_t off = (uint64_t)i * (size / 16) + t_rand(&rs) % (size / 16 - len);
			if (write) {
				t_fill(&rs, bufs[i], len);
				memcpy(shadow + off, bufs[i], len);
			}
			io[i] = (struct member_io){.m = m,
			                           .op = write ? MEMBER_OP_WRITE : MEMBER_OP_READ,
			                           .buf = bufs[i],
			                           .len = len,
			                           .off = off,
			                           .flags = t_rand(&rs) % 5 ? 0 : MEMBER_FUA};
		}
		io[n++] = (struct member_io){.m = m, .op = MEMBER_OP_FLUSH};
		CHECK(member_ioq_run(q, io, n) == 0);
		for (int i = 0; i < 16; i++) {
			CHECK(io[i].result == (ssize_t)io[i].len);
			if (!write)
				CHECK(memcmp(bufs[i], shadow + io[i].off, io[i].len) == 0);
		}
		CHECK(io[16].result == 0);
	}
	unsigned char *all = malloc(size);
	CHECK(member_read(m, all, size, 0) == 0);
	CHECK(memcmp(all, shadow, size) == 0);
	/* a batch larger than the elevator's stack window (64) */
	struct member_io big[100];
	for (int i = 0; i < 100; i++)
		big[i] = (struct member_io){.m = m,
		                            .op = MEMBER_OP_READ,
		                            .buf = all + (size_t)i * 4096,
		                            .len = 4096,
		                            .off = (uint64_t)(99 - i) * 65536 + 100};
	CHECK(member_ioq_run(q, big, 100) == 0);
	for (int i = 0; i < 100; i++) {
		CHECK(big[i].result == 4096);
		CHECK(memcmp(all + (size_t)i * 4096, shadow + big[i].off, 4096) == 0);
	}
	/* a read reaching past the end comes back short, as from any member */
	struct member_io tail = {
	    .m = m, .op = MEMBER_OP_READ, .buf = all, .len = 8192, .off = size - 4096};
	CHECK(member_ioq_run(q, &tail, 1) == 0 && tail.result == 4096);
	member_ioq_close(q);
	member_close(m);
	free(shadow);
	free(all);
}

/* Two disks on one parallel ATA channel (no overlap): with the write cache
 * off a write holds the channel until it is on the media, so the slave's
 * write issued at the same model time ends after the master's, about twice
 * as late; on links of their own both end together. Virtual time, each
 * member on its own clock: only the channel couples them. */
static void ata_channel_serialises(void)
{
	struct sim_profile p = *sim_profile_find("ide-7mbs-2002");
	CHECK(p.channel_disks == 2);
	p.write_cache = false;
	uint8_t *buf = calloc(1, 1u << 20);
	for (int shared = 0; shared < 2; shared++) {
		struct member *a = open_sim(&p, 64u << 20, NULL, 0);
		struct member *b = open_sim(&p, 64u << 20, NULL, 0);
		struct sim_channel *ch = NULL;
		CHECK(sim_channel_create(&ch) == 0);
		if (shared) {
			CHECK(member_sim_set_channel(a, ch) == 0);
			CHECK(member_sim_set_channel(b, ch) == 0);
		}
		CHECK(member_write(a, buf, 1u << 20, 0, 0) == 0);
		CHECK(member_write(b, buf, 1u << 20, 0, 0) == 0);
		double ta = (double)member_sim_model_ns(a), tb = (double)member_sim_model_ns(b);
		if (shared)
			CHECKF(tb > 1.8 * ta && tb < 2.2 * ta, "channel: %.0f then %.0f ns", ta,
			       tb);
		else
			CHECKF(tb > 0.95 * ta && tb < 1.05 * ta, "own links: %.0f, %.0f ns", ta,
			       tb);
		member_close(a);
		member_close(b);
		sim_channel_destroy(ch);
	}
	CHECK(member_sim_set_channel(NULL, NULL) == -EINVAL);
	free(buf);
}

TEST_MAIN(T(ata_channel_serialises), T(elevator), T(elevator_beats_fifo), T(batch_overlaps_members),
          T(stripes_flatten_at_bus), T(batch_data))
