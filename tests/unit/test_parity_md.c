/* Parity cross-check against arrays written by the real Linux md driver
 * (shared/md-vectors): for every stripe of raid6-ls, raid5-ls and raid4 the
 * P (and Q) chunks the kernel wrote must equal what every uraid backend
 * computes from the data chunks, lost chunks must come back, and a clean
 * stripe must locate clean. The data chunks are first checked against the
 * documented fill pattern, so a wrong stripe mapping cannot pass silently. */
#include <errno.h>

#include "../harness.h"
#include "test_parity_ref.h"

#define CHUNK    (64u << 10)
#define DATA_OFF (2048u * 512u)

struct md_array {
	const char *name;
	uint64_t array_id;
	int n;            /* members */
	bool raid6;       /* else RAID4/5 */
	bool left_sym;    /* else RAID4 (parity on the last member) */
	uint64_t sectors; /* array size */
};

static const char *shared_dir(void)
{
	const char *s = getenv("URAID_SHARED");
	return s && *s ? s : "../shared";
}

/* Whole decompressed member image, or NULL. */
static uint8_t *load_member(const char *array, int i, size_t *len)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "xz -dc '%s/md-vectors/images/%s/m%d.img.xz'", shared_dir(),
	         array, i);
	FILE *f = popen(cmd, "r");
	if (!f)
		return NULL;
	size_t cap = 16u << 20, n = 0;
	uint8_t *buf = malloc(cap);
	size_t r;
	while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0)
		n += r;
	if (pclose(f) != 0 || n == 0) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

/* Does the chunk hold logical array chunk `c` of the fill pattern? */
static bool chunk_matches_pattern(const uint8_t *p, uint64_t c, uint64_t id)
{
	for (uint64_t s = 0; s < CHUNK / 512; s++) {
		uint64_t sector = c * (CHUNK / 512) + s;
		uint64_t v = sector * 0x9E3779B97F4A7C15ULL + id;
		for (int w = 0; w < 64; w++)
			for (int b = 0; b < 8; b++)
				if (p[s * 512 + (uint64_t)w * 8 + (uint64_t)b] !=
				    (uint8_t)(v >> (8 * b)))
					return false;
	}
	return true;
}

static void check_array(const struct md_array *a)
{
	uint8_t *m[8] = {NULL};
	size_t len[8] = {0};
	for (int i = 0; i < a->n; i++) {
		m[i] = load_member(a->name, i, &len[i]);
		CHECKF(m[i] != NULL,
		       "cannot read %s/md-vectors/images/%s/m%d.img.xz (URAID_SHARED?)",
		       shared_dir(), a->name, i);
		if (!m[i])
			return;
	}
	int k = a->n - (a->raid6 ? 2 : 1);
	uint64_t stripes = a->sectors * 512 / ((uint64_t)k * CHUNK);
	const struct uraid_parity *bk[8];
	int nb = 0;
	for (const char *const *nm = uraid_parity_backends(); *nm; nm++)
		if ((bk[nb] = uraid_parity_get(*nm)) != NULL)
			nb++;
	CHECK(nb >= 1 && stripes > 0);
	uint8_t *x = aligned_alloc(64, CHUNK), *y = aligned_alloc(64, CHUNK);
	size_t pattern_ok = 0, parity_ok = 0, checked = 0;
	for (uint64_t s = 0; s < stripes; s++) {
		/* md's stripe mapping for these layouts (raid5.c raid5_compute_sector):
		 * RAID4 parity on the last member, data in order; left-symmetric
		 * parity rotates backwards from the last member, data (and for
		 * RAID6 first Q) follow it, wrapping. For RAID6 left-symmetric the
		 * syndrome order equals the data order. */
		int pd, qd = -1, dd[8];
		if (!a->left_sym) {
			pd = a->n - 1;
			for (int j = 0; j < k; j++)
				dd[j] = j;
		} else {
			pd = a->n - 1 - (int)(s % (uint64_t)a->n);
			if (a->raid6)
				qd = (pd + 1) % a->n;
			for (int j = 0; j < k; j++)
				dd[j] = (pd + (a->raid6 ? 2 : 1) + j) % a->n;
		}
		size_t off = DATA_OFF + s * CHUNK;
		void *blocks[10];
		bool pat = true;
		for (int j = 0; j < k; j++) {
			CHECK(off + CHUNK <= len[dd[j]]);
			blocks[j] = m[dd[j]] + off;
			pat = pat && chunk_matches_pattern(blocks[j], s * (uint64_t)k + (uint64_t)j,
			                                   a->array_id);
		}
		pattern_ok += pat;
		blocks[k] = x;
		blocks[k + 1] = y;
		for (int b = 0; b < nb; b++) {
			checked++;
			bool ok;
			if (a->raid6) {
				CHECK(bk[b]->pq_gen(k, CHUNK, blocks) == 0);
				ok = !memcmp(x, m[pd] + off, CHUNK) &&
				     !memcmp(y, m[qd] + off, CHUNK);
			} else {
				CHECK(bk[b]->xor_gen(k, CHUNK, blocks) == 0);
				ok = !memcmp(x, m[pd] + off, CHUNK);
			}
			parity_ok += ok;
			CHECKF(ok, "%s stripe %" PRIu64 " backend %s: parity differs from md's",
			       a->name, s, bk[b]->name);
		}
		/* Every single and double loss of this stripe, rebuilt in copies. */
		if (s % 16 == 0) {
			int nbl = k + (a->raid6 ? 2 : 1);
			uint8_t *copy[10];
			void *cb[10];
			for (int i = 0; i < nbl; i++) {
				const uint8_t *src = i < k ? blocks[i] : m[i == k ? pd : qd] + off;
				copy[i] = malloc(CHUNK);
				memcpy(copy[i], src, CHUNK);
				cb[i] = copy[i];
			}
			if (a->raid6) {
				struct uraid_locate r;
				CHECK(uraid_pq_locate(bk[0], k, CHUNK, cb, false, &r) == 0 &&
				      r.columns_bad == 0);
			}
			for (int f0 = 0; f0 < nbl; f0++) {
				for (int f1 = a->raid6 ? f0 + 1 : nbl; f1 <= nbl; f1++) {
					int fail[2] = {f0, f1};
					int nf = f1 < nbl ? 2 : 1;
					for (int b = 0; b < nb; b++) {
						for (int j = 0; j < nf; j++)
							memset(copy[fail[j]], 0xee, CHUNK);
						CHECK(bk[b]->recover(k, CHUNK, cb, a->raid6, nf,
						                     fail) == 0);
						for (int j = 0; j < nf; j++) {
							int i = fail[j];
							const uint8_t *want =
							    i < k ? blocks[i]
							          : m[i == k ? pd : qd] + off;
							CHECKF(!memcmp(copy[i], want, CHUNK),
							       "%s stripe %" PRIu64
							       " %s lost %d,%d",
							       a->name, s, bk[b]->name, f0,
							       nf > 1 ? f1 : -1);
						}
					}
				}
			}
			for (int i = 0; i < nbl; i++)
				free(copy[i]);
		}
	}
	CHECKF(pattern_ok == stripes, "%s: %zu of %" PRIu64 " stripes hold the expected pattern",
	       a->name, pattern_ok, stripes);
	CHECK_EQ_U64(parity_ok, checked);
	printf("# %s: %" PRIu64 " stripes, k=%d, %d backends, parity matches md's\n", a->name,
	       stripes, k, nb);
	free(x);
	free(y);
	for (int i = 0; i < a->n; i++)
		free(m[i]);
}

static void md_raid6_left_symmetric(void)
{
	static const struct md_array a = {"raid6-ls", 14, 4, true, true, 28672};
	check_array(&a);
}

static void md_raid5_left_symmetric(void)
{
	static const struct md_array a = {"raid5-ls", 9, 4, false, true, 43008};
	check_array(&a);
}

static void md_raid4(void)
{
	static const struct md_array a = {"raid4", 6, 4, false, false, 43008};
	check_array(&a);
}

TEST_MAIN(T(md_raid6_left_symmetric), T(md_raid5_left_symmetric), T(md_raid4))
