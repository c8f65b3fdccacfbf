/* gmirror balance policies as a pure module: traces of which disk served
 * each read, per algorithm, for sequential and random patterns and 1-5
 * concurrent readers (simulated: each round every reader issues one read,
 * then all complete). Expectations are stated from gmirror(8)'s
 * descriptions, not from the implementation's output. */
#include <errno.h>

#include "../harness.h"
#include "geom/geom.h"

static void setup(struct geom_bal *b, int balance, int ndisks)
{
	memset(b, 0, sizeof(*b));
	b->balance = balance;
	b->slice = 4096;
	b->sectorsize = 512;
	b->ndisks = ndisks;
	for (int i = 0; i < ndisks; i++) {
		b->d[i].active = true;
		b->d[i].priority = (uint8_t)i;
	}
}

/* trace[r][k]: disk that served reader r's k-th read. */
#define ROUNDS 64
static void run_readers(struct geom_bal *b, int readers, bool random, uint64_t seed,
                        int trace[5][ROUNDS])
{
	uint64_t pos[5];
	for (int r = 0; r < readers; r++)
		pos[r] = (uint64_t)r * (256ull << 20); /* streams far apart */
	for (int k = 0; k < ROUNDS; k++) {
		struct geom_piece p[GEOM_MAX_DISKS];
		int got[5];
		for (int r = 0; r < readers; r++) {
			uint64_t off =
			    random ? (t_rand(&seed) % (1ull << 30)) / 4096 * 4096 : pos[r];
			int n = geom_bal_choose(b, off, 4096, p);
			CHECK(n == 1);
			got[r] = p[0].disk;
			trace[r][k] = p[0].disk;
			pos[r] += 4096;
		}
		for (int r = 0; r < readers; r++)
			geom_bal_done(b, got[r]);
	}
}

static void round_robin_trace(void)
{
	for (int nd = 1; nd <= 4; nd++)
		for (int readers = 1; readers <= 5; readers++) {
			struct geom_bal b;
			setup(&b, GEOM_BALANCE_ROUND_ROBIN, nd);
			int tr[5][ROUNDS];
			run_readers(&b, readers, false, 1, tr);
			/* Global issue order cycles through the disks. */
			int seq = 0;
			for (int k = 0; k < ROUNDS; k++)
				for (int r = 0; r < readers; r++, seq++)
					CHECKF(tr[r][k] == seq % nd,
					       "nd %d readers %d read %d -> %d", nd, readers, seq,
					       tr[r][k]);
		}
}

static void prefer_follows_priority(void)
{
	struct geom_bal b;
	setup(&b, GEOM_BALANCE_PREFER, 4);
	b.d[0].priority = 3, b.d[1].priority = 9, b.d[2].priority = 5, b.d[3].priority = 9;
	int tr[5][ROUNDS];
	run_readers(&b, 3, true, 2, tr);
	for (int r = 0; r < 3; r++)
		for (int k = 0; k < ROUNDS; k++)
			CHECK(tr[r][k] == 1); /* biggest priority, lowest index on a tie */
	b.d[1].active = false;
	run_readers(&b, 2, false, 3, tr);
	for (int k = 0; k < ROUNDS; k++)
		CHECK(tr[0][k] == 3 && tr[1][k] == 3);
	b.d[3].active = false;
	run_readers(&b, 1, false, 3, tr);
	for (int k = 0; k < ROUNDS; k++)
		CHECK(tr[0][k] == 2);
}

/* load: one sequential reader keeps to one disk; k <= ndisks sequential
 * readers each keep to a disk of their own (head position affinity);
 * random concurrent readers spread over all disks. */
static void load_sequential_affinity(void)
{
	for (int nd = 2; nd <= 5; nd++)
		for (int readers = 1; readers <= 5 && readers <= nd; readers++) {
			struct geom_bal b;
			setup(&b, GEOM_BALANCE_LOAD, nd);
			int tr[5][ROUNDS];
			run_readers(&b, readers, false, 4, tr);
			int owner[5];
			for (int r = 0; r < readers; r++) {
				owner[r] = tr[r][ROUNDS - 1];
				/* after a short warm-up every read of the stream hits one disk */
				for (int k = 4; k < ROUNDS; k++)
					CHECKF(tr[r][k] == owner[r], "nd %d readers %d r %d k %d",
					       nd, readers, r, k);
			}
			for (int r = 0; r < readers; r++)
				for (int s = r + 1; s < readers; s++)
					CHECKF(owner[r] != owner[s],
					       "nd %d: readers %d and %d share %d", nd, r, s,
					       owner[r]);
		}
}

static void load_random_spreads(void)
{
	for (int readers = 1; readers <= 5; readers++) {
		struct geom_bal b;
		setup(&b, GEOM_BALANCE_LOAD, 3);
		int tr[5][ROUNDS];
		run_readers(&b, readers, true, 5 + (uint64_t)readers, tr);
		int count[3] = {0};
		for (int r = 0; r < readers; r++)
			for (int k = 0; k < ROUNDS; k++)
				count[tr[r][k]]++;
		if (readers == 1) {
			/* nothing is ever in flight at choice time: no reason to move
			 * off the lowest-index disk except head proximity */
			CHECK(count[0] > 0);
			continue;
		}
		/* with 2+ outstanding reads, every disk must take a share */
		for (int d = 0; d < 3; d++)
			CHECKF(count[d] >= ROUNDS * readers / 6, "readers %d disk %d only %d",
			       readers, d, count[d]);
	}
}

static void split_cuts_at_sectors(void)
{
	uint64_t seed = 6;
	for (int nd = 2; nd <= 4; nd++) {
		struct geom_bal b;
		setup(&b, GEOM_BALANCE_SPLIT, nd);
		b.slice = 8192;
		for (int i = 0; i < 300; i++) {
			uint64_t off = (t_rand(&seed) % 100000) * 512;
			uint64_t len = (1 + t_rand(&seed) % 128) * 512;
			struct geom_piece p[GEOM_MAX_DISKS];
			int n = geom_bal_choose(&b, off, len, p);
			if (len <= b.slice) {
				CHECK(n == 1 && p[0].off == off && p[0].len == len);
			} else {
				/* pieces on distinct disks, sector aligned, covering
				 * [off, off+len) in order with no gap or overlap, and as
				 * even as sector granularity allows */
				CHECK(n >= 2 && n <= nd);
				uint64_t pos = off;
				for (int k = 0; k < n; k++) {
					CHECK(p[k].off == pos && p[k].len > 0 &&
					      p[k].len % 512 == 0);
					CHECK(p[k].len <= (len / nd) + 512);
					for (int j = 0; j < k; j++)
						CHECK(p[j].disk != p[k].disk);
					pos += p[k].len;
				}
				CHECK(pos == off + len);
			}
			for (int k = 0; k < n; k++)
				geom_bal_done(&b, p[k].disk);
		}
	}
}

static void failed_disk_skipped_by_all(void)
{
	static const int algs[] = {GEOM_BALANCE_LOAD, GEOM_BALANCE_PREFER, GEOM_BALANCE_ROUND_ROBIN,
	                           GEOM_BALANCE_SPLIT};
	for (size_t a = 0; a < 4; a++)
		for (int dead = 0; dead < 3; dead++) {
			struct geom_bal b;
			setup(&b, algs[a], 3);
			b.d[dead].active = false;
			uint64_t seed = 7;
			for (int i = 0; i < 200; i++) {
				struct geom_piece p[GEOM_MAX_DISKS];
				uint64_t len = (1 + t_rand(&seed) % 64) * 512;
				int n = geom_bal_choose(&b, (t_rand(&seed) % 4096) * 512, len, p);
				CHECK(n >= 1);
				for (int k = 0; k < n; k++) {
					CHECKF(p[k].disk != dead, "alg %d used failed disk %d",
					       algs[a], dead);
					geom_bal_done(&b, p[k].disk);
				}
			}
			/* all failed: -EIO, never a disk */
			b.d[0].active = b.d[1].active = b.d[2].active = false;
			struct geom_piece p[GEOM_MAX_DISKS];
			CHECK(geom_bal_choose(&b, 0, 512, p) == -EIO);
		}
}

/* Switching algorithm on a live state takes effect on the next choice. */
static void change_while_running(void)
{
	struct geom_bal b;
	setup(&b, GEOM_BALANCE_LOAD, 2);
	struct geom_piece p[GEOM_MAX_DISKS];
	for (int i = 0; i < 10; i++) {
		CHECK(geom_bal_choose(&b, (uint64_t)i * 512, 512, p) == 1);
		geom_bal_done(&b, p[0].disk);
	}
	b.balance = GEOM_BALANCE_ROUND_ROBIN;
	int a, c;
	geom_bal_choose(&b, 0, 512, p), a = p[0].disk, geom_bal_done(&b, a);
	geom_bal_choose(&b, 0, 512, p), c = p[0].disk, geom_bal_done(&b, c);
	CHECK(a != c);
}

TEST_MAIN(T(round_robin_trace), T(prefer_follows_priority), T(load_sequential_affinity),
          T(load_random_spreads), T(split_cuts_at_sectors), T(failed_disk_skipped_by_all),
          T(change_while_running))
