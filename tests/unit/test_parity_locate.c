/* uraid_pq_locate: a corrupted byte in every position of every member is
 * found and repaired; corruption of two members is refused and nothing is
 * written. */
#include <errno.h>

#include "../harness.h"
#include "test_parity_ref.h"

static void make_stripe(struct blockset *s, int k, size_t len, size_t off, uint64_t *st)
{
	bs_init(s, k, len, off);
	for (int i = 0; i < k; i++)
		t_fill(st, bs(s, i), len);
	ref_pq(k, len, (uint8_t *const *)s->b, bs(s, k), bs(s, k + 1));
}

static uint8_t nonzero(uint64_t *st)
{
	return (uint8_t)(1 + t_rand(st) % 255);
}

static void clean_stripe_is_clean(void)
{
	const struct uraid_parity *pp = uraid_parity_get(NULL);
	uint64_t st = 5;
	struct blockset s;
	make_stripe(&s, 5, 1000, 3, &st);
	struct uraid_locate r;
	CHECK(uraid_pq_locate(pp, 5, 1000, s.b, true, &r) == 0);
	CHECK(r.columns_bad == 0 && r.columns_fixed == 0 && r.member == -1);
	bs_free(&s);
}

static void single_byte_every_position(void)
{
	const struct uraid_parity *pp = uraid_parity_get(NULL);
	CHECK(pp != NULL);
	uint64_t st = 123;
	static const int ks[] = {2, 3, 8, URAID_PARITY_MAX_DATA};
	for (size_t ki = 0; ki < 4; ki++) {
		int k = ks[ki];
		size_t len = k > 8 ? 37 : 4099; /* stays within one and across chunks */
		struct blockset s;
		make_stripe(&s, k, len, ki, &st);
		uint8_t *save = malloc(len * (size_t)(k + 2));
		for (int i = 0; i < k + 2; i++)
			memcpy(save + (size_t)i * len, bs(&s, i), len);
		for (int m = 0; m < k + 2; m++) {
			size_t positions[3] = {0, len - 1, t_rand(&st) % len};
			for (int pi = 0; pi < 3; pi++) {
				size_t pos = positions[pi];
				bs(&s, m)[pos] ^= nonzero(&st);
				struct uraid_locate r;
				int rc = uraid_pq_locate(pp, k, len, s.b, false, &r);
				CHECKF(rc == 0 && r.member == m && r.columns_bad == 1 &&
				           r.first_bad == pos && r.columns_fixed == 0,
				       "k=%d m=%d pos=%zu: rc=%d member=%d bad=%zu", k, m, pos, rc,
				       r.member, r.columns_bad);
				rc = uraid_pq_locate(pp, k, len, s.b, true, &r);
				CHECK(rc == 0 && r.member == m && r.columns_fixed == 1);
				CHECKF(!memcmp(save + (size_t)m * len, bs(&s, m), len),
				       "k=%d m=%d pos=%zu not repaired", k, m, pos);
			}
		}
		free(save);
		bs_free(&s);
	}
}

/* Every byte offset of every member of a small stripe, one at a time. */
static void every_byte_small(void)
{
	const struct uraid_parity *pp = uraid_parity_get(NULL);
	uint64_t st = 7;
	int k = 4;
	size_t len = 70;
	struct blockset s;
	make_stripe(&s, k, len, 5, &st);
	for (int m = 0; m < k + 2; m++) {
		for (size_t pos = 0; pos < len; pos++) {
			uint8_t orig = bs(&s, m)[pos];
			bs(&s, m)[pos] ^= nonzero(&st);
			struct uraid_locate r;
			int rc = uraid_pq_locate(pp, k, len, s.b, true, &r);
			CHECKF(rc == 0 && r.member == m && r.first_bad == pos &&
			           r.columns_fixed == 1,
			       "m=%d pos=%zu rc=%d member=%d", m, pos, rc, r.member);
			CHECK(bs(&s, m)[pos] == orig);
		}
	}
	bs_free(&s);
}

/* Many columns of one member wrong: one verdict, all fixed. */
static void many_columns_one_member(void)
{
	const struct uraid_parity *pp = uraid_parity_get(NULL);
	uint64_t st = 321;
	int k = 6;
	size_t len = 10000;
	for (int m = 0; m < k + 2; m++) {
		struct blockset s;
		make_stripe(&s, k, len, 1, &st);
		uint8_t *good = malloc(len);
		memcpy(good, bs(&s, m), len);
		for (size_t o = 100; o < 9000; o += 7)
			bs(&s, m)[o] ^= nonzero(&st);
		struct uraid_locate r;
		CHECK(uraid_pq_locate(pp, k, len, s.b, true, &r) == 0);
		CHECK(r.member == m && r.first_bad == 100 && r.columns_bad == r.columns_fixed);
		CHECK_EQ_U64(r.columns_bad, (9000 - 100 + 6) / 7);
		CHECK(!memcmp(good, bs(&s, m), len));
		free(good);
		bs_free(&s);
	}
}

static void two_members_refused(void)
{
	const struct uraid_parity *pp = uraid_parity_get(NULL);
	uint64_t st = 999;
	int k = 5;
	size_t len = 512;
	for (int a = 0; a < k + 2; a++) {
		for (int b = a + 1; b < k + 2; b++) {
			struct blockset s;
			make_stripe(&s, k, len, 0, &st);
			for (size_t o = 0; o < 64; o++) {
				bs(&s, a)[o * 8] ^= nonzero(&st);
				bs(&s, b)[o * 8] ^= nonzero(&st);
			}
			uint8_t *save = malloc(len * (size_t)(k + 2));
			for (int i = 0; i < k + 2; i++)
				memcpy(save + (size_t)i * len, bs(&s, i), len);
			struct uraid_locate r;
			int rc = uraid_pq_locate(pp, k, len, s.b, true, &r);
			CHECKF(rc == -EILSEQ && r.member == -2 && r.columns_fixed == 0,
			       "members %d,%d: rc=%d member=%d", a, b, rc, r.member);
			bool same = true;
			for (int i = 0; i < k + 2; i++)
				same = same && !memcmp(save + (size_t)i * len, bs(&s, i), len);
			CHECKF(same, "members %d,%d: blocks changed", a, b);
			free(save);
			bs_free(&s);
		}
	}
	/* One column no single member explains: errors in D1 and D2 chosen so
	 * that log(sq / sp) = 3, an index beyond the k = 3 data blocks. */
	struct blockset s;
	make_stripe(&s, 3, 1, 0, &st);
	bool found = false;
	for (unsigned e = 1; e < 256 && !found; e++) {
		/* D1 += e, D2 += f: sp = e ^ f, sq = 2e ^ 4f; pick f making
		 * log(sq / sp) = 3 (beyond k - 1 = 2). */
		for (unsigned f = 1; f < 256 && !found; f++) {
			uint8_t sp = (uint8_t)(e ^ f),
			        sq = ref_mul(2, (uint8_t)e) ^ ref_mul(4, (uint8_t)f);
			if (sp && sq && ref_mul(ref_pow2(3), sp) == sq) {
				bs(&s, 1)[0] ^= (uint8_t)e;
				bs(&s, 2)[0] ^= (uint8_t)f;
				found = true;
			}
		}
	}
	CHECK(found);
	struct uraid_locate r;
	CHECK(uraid_pq_locate(pp, 3, 1, s.b, true, &r) == -EILSEQ && r.member == -2);
	bs_free(&s);
}

static void locate_bad_arguments(void)
{
	const struct uraid_parity *pp = uraid_parity_get(NULL);
	uint8_t buf[5][8] = {{0}};
	void *v[5] = {buf[0], buf[1], buf[2], buf[3], buf[4]};
	struct uraid_locate r;
	CHECK(uraid_pq_locate(NULL, 3, 8, v, false, &r) == -EINVAL);
	CHECK(uraid_pq_locate(pp, 1, 8, v, false, &r) == -EINVAL);
	CHECK(uraid_pq_locate(pp, 254, 8, v, false, &r) == -EINVAL);
	CHECK(uraid_pq_locate(pp, 3, 0, v, false, &r) == -EINVAL);
	CHECK(uraid_pq_locate(pp, 3, 8, NULL, false, &r) == -EINVAL);
	v[4] = NULL;
	CHECK(uraid_pq_locate(pp, 3, 8, v, false, &r) == -EINVAL);
	v[4] = buf[4];
	CHECK(uraid_pq_locate(pp, 3, 8, v, false, NULL) == 0); /* all zero: consistent */
}

TEST_MAIN(T(clean_stripe_is_clean), T(single_byte_every_position), T(every_byte_small),
          T(many_columns_one_member), T(two_members_refused), T(locate_bad_arguments))
