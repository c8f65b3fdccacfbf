/* member_crash against a per-sector reference model written independently:
 * each sector's durable tag and the tags written to it since the last flush.
 * Reads must return the newest; after a crash every sector holds its durable
 * tag or one of the cached ones; flush and FUA make data durable exactly;
 * the power cut fails request N and all later ones without effect. */
#include <errno.h>

#include "../harness.h"
#include "sim/member_crash.h"

#define NSEC 64
#define MAXV 64

struct ref {
	uint8_t durable[NSEC];
	uint8_t pend[NSEC][MAXV]; /* tags written since the last flush, in order */
	int npend[NSEC];
};

static void fill(uint8_t *buf, uint64_t nsec, uint8_t tag)
{
	memset(buf, tag, nsec * 512);
}

static uint8_t newest(const struct ref *r, int s)
{
	return r->npend[s] ? r->pend[s][r->npend[s] - 1] : r->durable[s];
}

/* A sector's 512 bytes all carry one tag; returns it, or -1 if mixed. */
static int tag_of(const uint8_t *p)
{
	for (int i = 1; i < 512; i++)
		if (p[i] != p[0])
			return -1;
	return p[0];
}

static void model_vs_member(void)
{
	uint64_t rs = 0xc7a5;
	uint64_t kept = 0, torn = 0, lost = 0, rounds = 0;
	for (int round = 0; round < 200; round++) {
		struct crash_ctl *c;
		struct member *mem[2], *m[2];
		CHECK(crash_ctl_new(&c) == 0);
		struct ref ref[2];
		memset(ref, 0, sizeof(ref));
		for (int i = 0; i < 2; i++) {
			CHECK(member_open_mem("x", NSEC * 512, &mem[i]) == 0);
			CHECK(member_crash_wrap(mem[i], c, &m[i]) == 0);
		}
		uint64_t at = 1 + t_rand(&rs) % 40;
		crash_ctl_arm(c, at);
		uint8_t buf[NSEC * 512];
		uint8_t tag = 1;
		for (uint64_t req = 1; req <= 50; req++) {
			int d = (int)(t_rand(&rs) % 2);
			int op = (int)(t_rand(&rs) % 10);
			uint64_t s0 = t_rand(&rs) % NSEC, n = 1 + t_rand(&rs) % 8;
			if (s0 + n > NSEC)
				n = NSEC - s0;
			bool dead = req >= at;
			if (op < 5) {
				bool fua = op == 0;
				fill(buf, n, tag);
				ssize_t w = m[d]->ops->pwrite(m[d], buf, n * 512, s0 * 512,
				                              fua ? MEMBER_FUA : 0);
				CHECK(dead ? w == -EIO : w == (ssize_t)(n * 512));
				for (uint64_t s = s0; s < s0 + n && !dead; s++) {
					if (fua) {
						ref[d].durable[s] = tag;
						ref[d].npend[s] = 0;
					} else if (ref[d].npend[s] < MAXV) {
						ref[d].pend[s][ref[d].npend[s]++] = tag;
					}
				}
				tag = tag == 255 ? 1 : tag + 1;
			} else if (op < 8) {
				ssize_t g = m[d]->ops->pread(m[d], buf, n * 512, s0 * 512);
				CHECK(dead ? g == -EIO : g == (ssize_t)(n * 512));
				for (uint64_t s = s0; s < s0 + n && !dead; s++)
					CHECK(tag_of(buf + (s - s0) * 512) ==
					      newest(&ref[d], (int)s));
			} else {
				int f = m[d]->ops->flush(m[d]);
				CHECK(dead ? f == -EIO : f == 0);
				for (int s = 0; s < NSEC && !dead; s++) {
					ref[d].durable[s] = newest(&ref[d], s);
					ref[d].npend[s] = 0;
				}
			}
			CHECK(crash_ctl_crashed(c) == dead);
		}
		struct crash_stats st;
		CHECK(crash_apply(c, t_rand(&rs), &st) == 0);
		CHECK(!crash_ctl_crashed(c));
		kept += st.writes_kept;
		torn += st.writes_torn;
		lost += st.writes_lost;
		for (int d = 0; d < 2; d++) {
			CHECK(member_crash_pending(m[d]) == 0);
			CHECK(mem[d]->ops->pread(mem[d], buf, NSEC * 512, 0) == NSEC * 512);
			for (int s = 0; s < NSEC; s++) {
				int t = tag_of(buf + s * 512);
				bool ok = t == ref[d].durable[s];
				for (int v = 0; v < ref[d].npend[s]; v++)
					ok |= t == ref[d].pend[s][v];
				CHECKF(ok, "round %d member %d sector %d holds %d", round, d, s, t);
			}
			member_close(m[d]);
		}
		crash_ctl_free(c);
		rounds++;
	}
	/* Every fate must have been exercised. */
	CHECK(kept > 0 && torn > 0 && lost > 0);
	printf("# %llu rounds, cached writes kept/torn/lost %llu/%llu/%llu\n",
	       (unsigned long long)rounds, (unsigned long long)kept, (unsigned long long)torn,
	       (unsigned long long)lost);
}

/* A torn write leaves some sectors new and others old. */
static void torn_writes_mix_sectors(void)
{
	bool mixed = false;
	for (uint64_t seed = 1; seed < 64 && !mixed; seed++) {
		struct crash_ctl *c;
		struct member *mem, *m;
		CHECK(crash_ctl_new(&c) == 0);
		CHECK(member_open_mem("x", NSEC * 512, &mem) == 0);
		CHECK(member_crash_wrap(mem, c, &m) == 0);
		uint8_t buf[NSEC * 512];
		fill(buf, NSEC, 7);
		CHECK(m->ops->pwrite(m, buf, sizeof(buf), 0, 0) == (ssize_t)sizeof(buf));
		struct crash_stats st;
		CHECK(crash_apply(c, seed, &st) == 0);
		CHECK(mem->ops->pread(mem, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf));
		int news = 0;
		for (int s = 0; s < NSEC; s++) {
			int t = tag_of(buf + s * 512);
			CHECK(t == 0 || t == 7);
			news += t == 7;
		}
		if (st.writes_torn)
			mixed = news > 0 && news < NSEC;
		else
			CHECK(news == (st.writes_kept ? NSEC : 0));
		member_close(m);
		crash_ctl_free(c);
	}
	CHECK(mixed);
}

/* Refusals and the flush of one member leaving the other's cache alone. */
static void flush_is_per_member(void)
{
	struct crash_ctl *c;
	struct member *mem[2], *m[2];
	CHECK(crash_ctl_new(&c) == 0);
	CHECK(member_crash_wrap(NULL, c, &m[0]) == -EINVAL);
	for (int i = 0; i < 2; i++) {
		CHECK(member_open_mem("x", 4096, &mem[i]) == 0);
		CHECK(member_crash_wrap(mem[i], c, &m[i]) == 0);
	}
	uint8_t buf[512];
	fill(buf, 1, 9);
	CHECK(m[0]->ops->pwrite(m[0], buf, 512, 0, 0) == 512);
	CHECK(m[1]->ops->pwrite(m[1], buf, 512, 0, 0) == 512);
	CHECK(m[0]->ops->pwrite(m[0], buf, 512, 4096, 0) == -ENOSPC);
	CHECK(m[0]->ops->flush(m[0]) == 0);
	CHECK(member_crash_pending(m[0]) == 0 && member_crash_pending(m[1]) == 1);
	CHECK(mem[0]->ops->pread(mem[0], buf, 512, 0) == 512 && tag_of(buf) == 9);
	CHECK(mem[1]->ops->pread(mem[1], buf, 512, 0) == 512 && tag_of(buf) == 0);
	/* The refused write never reached the disk: not counted. */
	CHECK(crash_ctl_requests(c) == 3);
	member_close(m[0]);
	member_close(m[1]);
	crash_ctl_free(c);
}

TEST_MAIN(T(model_vs_member), T(torn_writes_mix_sectors), T(flush_is_per_member))
