/* The fault-injection wrapper: each rule knob on its own, precedence between
 * rules, counters under concurrency. The inner member is memory, checked
 * through a second, rule-free view (member_fault_clear) or the model. */
#include "test_member_common.h"
#include "sim/member_fault.h"

#include <pthread.h>

#define SZ (1u << 20)

static struct member *wrap_mem(unsigned char *shadow)
{
	struct member *in = NULL, *f = NULL;
	CHECK(member_open_mem("inner", SZ, &in) == 0);
	if (!in)
		abort();
	uint64_t rs = 31;
	t_fill(&rs, shadow, SZ);
	CHECK(member_write(in, shadow, SZ, 0, 0) == 0);
	CHECK(member_fault_wrap(in, &f) == 0);
	if (!f)
		abort();
	return f;
}

static void read_error_after_n(void)
{
	static unsigned char shadow[SZ];
	struct member *f = wrap_mem(shadow);
	struct member_fault_rule r = {
	    .op = MEMBER_OP_READ, .off = 4096, .len = 8192, .after = 3, .error = EIO};
	CHECK(member_fault_add(f, &r) == 0);
	unsigned char buf[512];
	/* outside the range: never counted, never failing */
	for (int i = 0; i < 10; i++) {
		CHECK(member_read(f, buf, 512, 0) == 0);
		CHECK(member_read(f, buf, 512, 4096 + 8192) == 0);
		CHECK(member_read(f, buf, 512, 3584) == 0); /* ends exactly at 4096 */
	}
	/* writes do not count for a read rule */
	CHECK(member_write(f, shadow + 5000, 512, 5000, 0) == 0);
	/* three matching reads pass (one overlapping the start by a byte) */
	CHECK(member_read(f, buf, 512, 4096 - 511) == 0);
	CHECK(memcmp(buf, shadow + 4096 - 511, 512) == 0);
	CHECK(member_read(f, buf, 512, 8000) == 0);
	CHECK(member_read(f, buf, 1, 4096 + 8191) == 0);
	CHECK(member_fault_hits(f) == 0);
	/* then every matching read fails */
	for (int i = 0; i < 5; i++)
		CHECK(member_read(f, buf, 512, 6000) == -EIO);
	CHECK(f->ops->pread(f, buf, 100000, 0) == -EIO);
	CHECK(member_fault_hits(f) == 6);
	CHECK(member_read(f, buf, 512, 0) == 0);
	member_fault_clear(f);
	CHECK(member_read(f, buf, 512, 6000) == 0);
	CHECK(memcmp(buf, shadow + 6000, 512) == 0);
	CHECK(member_fault_hits(f) == 6);
	member_close(f);
}

static void write_error_once(void)
{
	static unsigned char shadow[SZ];
	struct member *f = wrap_mem(shadow);
	struct member_fault_rule r = {.op = MEMBER_OP_WRITE, .error = ENOSPC, .once = true};
	CHECK(member_fault_add(f, &r) == 0);
	unsigned char buf[4096];
	memset(buf, 0x42, sizeof(buf));
	CHECK(member_write(f, buf, sizeof(buf), 65536, 0) == -ENOSPC);
	/* nothing was written */
	unsigned char back[4096];
	CHECK(member_read(f, back, sizeof(back), 65536) == 0);
	CHECK(memcmp(back, shadow + 65536, sizeof(back)) == 0);
	/* once: the next write goes through */
	CHECK(member_write(f, buf, sizeof(buf), 65536, 0) == 0);
	CHECK(member_read(f, back, sizeof(back), 65536) == 0);
	CHECK(memcmp(back, buf, sizeof(back)) == 0);
	CHECK(member_fault_hits(f) == 1);
	member_close(f);
}

static void short_io(void)
{
	static unsigned char shadow[SZ];
	struct member *f = wrap_mem(shadow);
	struct member_fault_rule r = {.op = MEMBER_OP_READ, .short_io = true, .once = true};
	CHECK(member_fault_add(f, &r) == 0);
	unsigned char buf[1001];
	memset(buf, 0, sizeof(buf));
	ssize_t got = f->ops->pread(f, buf, 1001, 10);
	CHECK(got == 501);
	CHECK(memcmp(buf, shadow + 10, 501) == 0);
	CHECK(buf[501] == 0); /* nothing past the short count */
	CHECK(f->ops->pread(f, buf, 1001, 10) == 1001);
	/* short writes: half rounded up lands, the rest is untouched */
	struct member_fault_rule w = {.op = MEMBER_OP_WRITE, .short_io = true, .once = true};
	CHECK(member_fault_add(f, &w) == 0);
	memset(buf, 0x99, sizeof(buf));
	CHECK(f->ops->pwrite(f, buf, 7, 200, 0) == 4);
	unsigned char back[7];
	CHECK(member_read(f, back, 7, 200) == 0);
	CHECK(memcmp(back, buf, 4) == 0 && memcmp(back + 4, shadow + 204, 3) == 0);
	/* an always-short rule still lets member_read/member_write finish */
	struct member_fault_rule always = {.op = MEMBER_OP_READ, .short_io = true};
	CHECK(member_fault_add(f, &always) == 0);
	unsigned char big[70000];
	CHECK(member_read(f, big, sizeof(big), 300) == 0);
	CHECK(memcmp(big, shadow + 300, sizeof(big)) == 0);
	member_close(f);
}

/* Which byte gets flipped, computed the slow way: scan for the first byte of
 * the transfer that lies in the rule range. */
static long expected_flip(uint64_t roff, uint64_t rlen, uint64_t off, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rlen == 0 || (off + i >= roff && off + i < roff + rlen))
			return (long)i;
	return -1;
}

static void flip_bits(void)
{
	static unsigned char shadow[SZ];
	struct member *f = wrap_mem(shadow);
	uint64_t rs = 77;
	for (int it = 0; it < 200; it++) {
		member_fault_clear(f);
		struct member_fault_rule r = {.op = it % 2 ? MEMBER_OP_WRITE : MEMBER_OP_READ,
		                              .flip_bit = true,
		                              .once = true};
		if (t_rand(&rs) % 4) {
			r.off = t_rand(&rs) % SZ;
			r.len = 1 + t_rand(&rs) % 20000;
		}
		uint64_t off = t_rand(&rs) % (SZ - 30000);
		size_t len = 1 + (size_t)(t_rand(&rs) % 30000);
		unsigned char *buf = malloc(len), *keep = malloc(len);
		CHECK(member_fault_add(f, &r) == 0);
		long at = expected_flip(r.off, r.len, off, len);
		bool overlaps = r.len == 0 || (off < r.off + r.len && r.off < off + len);
		if (r.op == MEMBER_OP_READ) {
			CHECK(member_read(f, buf, len, off) == 0);
		} else {
			t_fill(&rs, buf, len);
			memcpy(keep, buf, len);
			CHECK(member_write(f, buf, len, off, 0) == 0);
			CHECK(memcmp(keep, buf, len) == 0); /* caller's data untouched */
			memcpy(shadow + off, buf, len);
			member_fault_clear(f);
			CHECK(member_read(f, buf, len, off) == 0);
		}
		/* exactly the predicted bit differs from the model */
		for (size_t i = 0; i < len; i++) {
			unsigned char want = shadow[off + i];
			if ((long)i == at)
				want ^= 1;
			if (buf[i] != want) {
				CHECKF(0, "it %d: byte %zu is %02x want %02x", it, i, buf[i], want);
				break;
			}
		}
		CHECK(overlaps == (at >= 0));
		if (r.op == MEMBER_OP_WRITE && at >= 0)
			shadow[off + (size_t)at] ^= 1; /* the stored copy is corrupt */
		free(buf);
		free(keep);
	}
	member_close(f);
}

static void precedence_and_flush(void)
{
	static unsigned char shadow[SZ];
	struct member *f = wrap_mem(shadow);
	struct member_fault_rule a = {.op = MEMBER_OP_READ, .after = 2, .error = EIO};
	struct member_fault_rule b = {.op = MEMBER_OP_READ, .error = EILSEQ, .once = true};
	CHECK(member_fault_add(f, &a) == 0);
	CHECK(member_fault_add(f, &b) == 0);
	unsigned char buf[64];
	/* request 1: only b fires; 2: nothing (b spent, a not yet); 3: a fires */
	CHECK(member_read(f, buf, 64, 0) == -EILSEQ);
	CHECK(member_read(f, buf, 64, 0) == 0);
	CHECK(member_read(f, buf, 64, 0) == -EIO);
	CHECK(member_fault_hits(f) == 2);
	member_fault_clear(f);
	struct member_fault_rule fl = {.op = MEMBER_OP_FLUSH, .after = 1, .error = EIO};
	CHECK(member_fault_add(f, &fl) == 0);
	CHECK(member_flush(f) == 0);
	CHECK(member_flush(f) == -EIO);
	CHECK(member_flush(f) == -EIO);
	/* discards pass through regardless */
	CHECK(member_discard(f, 0, 4096) == 0);
	CHECK(member_read(f, buf, 64, 100) == 0);
	for (int i = 0; i < 64; i++)
		CHECK(buf[i] == 0);
	member_close(f);
}

static void bad_rules(void)
{
	static unsigned char shadow[SZ];
	struct member *f = wrap_mem(shadow), *m = NULL;
	struct member_fault_rule r = {.op = MEMBER_OP_READ, .error = -5};
	CHECK(member_fault_add(f, &r) == -EINVAL);
	r.error = 5;
	r.op = (enum member_op)9;
	CHECK(member_fault_add(f, &r) == -EINVAL);
	r.op = MEMBER_OP_READ;
	r.off = UINT64_MAX - 10;
	r.len = 100;
	CHECK(member_fault_add(f, &r) == -EINVAL);
	CHECK(member_fault_add(f, NULL) == -EINVAL);
	CHECK(member_open_mem("plain", 4096, &m) == 0);
	r.off = 0;
	CHECK(member_fault_add(m, &r) == -EINVAL); /* not a fault member */
	CHECK(member_fault_hits(m) == 0);
	member_fault_clear(m);
	member_close(m);
	CHECK(member_fault_wrap(NULL, &m) == -EINVAL && m == NULL);
	member_close(f);
}

struct hammer {
	struct member *f;
	int fails;
};

static void *hammer_main(void *p)
{
	struct hammer *h = p;
	unsigned char buf[512];
	for (int i = 0; i < 2000; i++)
		if (member_read(h->f, buf, sizeof(buf), (uint64_t)(i % 128) * 512) < 0)
			h->fails++;
	return NULL;
}

/* Four threads reading concurrently: a rule firing after 1000 matching
 * requests must fail exactly the matching ones beyond 1000, a `once` rule
 * exactly one; a racy counter would miss or double-count. */
static void concurrent_counts(void)
{
	static unsigned char shadow[SZ];
	struct member *f = wrap_mem(shadow);
	struct member_fault_rule r = {
	    .op = MEMBER_OP_READ, .len = 32768, .after = 1000, .error = EIO};
	struct member_fault_rule once = {
	    .op = MEMBER_OP_READ, .off = 32768, .len = 512, .error = EIO, .once = true};
	CHECK(member_fault_add(f, &r) == 0);
	CHECK(member_fault_add(f, &once) == 0);
	struct hammer h[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		h[i] = (struct hammer){.f = f};
		pthread_create(&th[i], NULL, hammer_main, &h[i]);
	}
	int fails = 0;
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		fails += h[i].fails;
	}
	/* count the reads the rules match, the slow way */
	int match_r = 0, match_once = 0;
	for (int t = 0; t < 4; t++)
		for (int i = 0; i < 2000; i++) {
			uint64_t off = (uint64_t)(i % 128) * 512;
			match_r += off < 32768;
			match_once += off == 32768;
		}
	CHECK(match_r > 1000 && match_once > 1);
	int want = match_r - 1000 + 1;
	CHECKF(fails == want, "fails %d want %d", fails, want);
	CHECK(member_fault_hits(f) == (uint64_t)want);
	member_close(f);
}

TEST_MAIN(T(read_error_after_n), T(write_error_once), T(short_io), T(flip_bits),
          T(precedence_and_flush), T(bad_rules), T(concurrent_counts))
