/* Engine property test: for every level and layout, random reads and writes
 * against an in-memory shadow copy, with member failures, read and write
 * errors, spare rebuilds (interleaved with I/O) and crashes (the array
 * dropped without stop, then assembled again) at random points. Every read
 * must equal the shadow. At the end, independently of the engine's own
 * check: the array read back from every member subset the level's
 * redundancy allows (read-only assemblies) equals the shadow, raid4/5 rows
 * XOR to zero and raid1 copies are identical on the members themselves, and
 * md-style check reports 0 mismatches. Fixed seeds. Members in memory,
 * or (the _map cases) tmpfs files mapped, so that writes go straight into
 * their pages where no fault is injected. */
#include "test_engine_common.h"

#include "meta/md_super.h"
#include "sim/member_fault.h"

struct cfg {
	const char *name;
	int level;
	const char *layout; /* NULL: default */
	int ndisks;
	uint32_t chunk_kib;
	int metadata;
	uint64_t seed;
	unsigned cache; /* stripe cache heads, 0 = off */
	bool mapped;    /* members: files in /dev/shm, mapped (else memory) */
};

#define MEMBER_BYTES (2u << 20)
#define POOL         4
#define OPS          360

static int nparity(int level)
{
	return level == 6 ? 2 : (level == 1 || level == 4 || level == 5 || level == 10) ? 1 : 0;
}

/* Reads a member's data area (data_offset from its own superblock). */
static uint8_t *data_area(struct te_disk *d, uint64_t sectors)
{
	struct md_sb sb;
	char e[256];
	if (md_sb_load(d->mem, &sb, e, sizeof(e)) < 0)
		return NULL;
	uint8_t *b = malloc(sectors * 512);
	if (b && member_read(d->mem, b, sectors * 512, sb.data_offset * 512) < 0) {
		free(b);
		return NULL;
	}
	return b;
}

/* Independent check on the members: raid4/5 rows XOR to zero (whatever the
 * layout, P is the XOR of the row's data); raid1 copies are identical. */
static void member_invariants(const struct cfg *c, struct te_disk *disks, const int *slots, int n,
                              uint64_t dev_sectors)
{
	if (c->level != 1 && c->level != 4 && c->level != 5)
		return;
	size_t len = dev_sectors * 512;
	uint8_t *acc = calloc(1, len);
	uint8_t *first = NULL;
	int bad = 0;
	for (int i = 0; i < n; i++) {
		uint8_t *b = data_area(&disks[slots[i]], dev_sectors);
		CHECK(b != NULL);
		if (!b)
			continue;
		if (c->level == 1) {
			if (!first)
				first = b;
			else {
				bad |= memcmp(first, b, len) != 0;
				free(b);
			}
			continue;
		}
		for (size_t j = 0; j < len; j++)
			acc[j] ^= b[j];
		free(b);
	}
	if (c->level != 1)
		for (size_t j = 0; j < len && !bad; j++)
			bad = acc[j] != 0;
	CHECKF(!bad, "%s: member contents not %s", c->name,
	       c->level == 1 ? "identical" : "XOR-consistent");
	free(first);
	free(acc);
}

static void subsets_read_back(const struct cfg *c, struct te_disk *disks, const int *slots, int n,
                              const uint8_t *shadow, uint64_t size)
{
	int np = nparity(c->level);
	int drop_max = c->level == 10 ? 1 : (c->level == 1 ? n - 1 : np);
	if (drop_max > 2)
		drop_max = 2;
	/* every set of up to drop_max left out */
	for (int d1 = -1; d1 < n; d1++) {
		for (int d2 = d1; d2 < n; d2++) {
			int ndrop = (d1 >= 0) + (d2 > d1 && d2 >= 0);
			if (d2 == d1 && d1 >= 0)
				continue;
			if (ndrop > drop_max || (d1 < 0 && d2 >= 0))
				continue;
			int idx[TE_MAX], k = 0;
			for (int i = 0; i < n; i++)
				if (i != d1 && i != d2)
					idx[k++] = slots[i];
			struct member *mm[TE_MAX];
			for (int i = 0; i < k; i++)
				mm[i] = te_borrow(&disks[idx[i]]);
			struct uraid_array *a;
			char err[256], warn[256];
			int rc = uraid_assemble_members(mm, k, URAID_RDONLY | URAID_NO_SYNC_THREAD,
			                                &a, err, sizeof(err), warn, sizeof(warn));
			CHECKF(rc == 0, "%s: read-only assembly without %d,%d: %s", c->name, d1, d2,
			       err);
			if (rc < 0)
				continue;
			CHECKF(te_verify(a, shadow, size) == 0,
			       "%s: read back without members %d,%d", c->name, d1, d2);
			uraid_stop(a);
		}
	}
}

/* Disks holding in-sync slots, from the array's status. */
static int insync_disks(const struct uraid_status *st, struct te_disk *disks, int ndisk, int *out)
{
	int n = 0;
	for (int i = 0; i < st->nmembers; i++)
		if (st->members[i].role >= 0 && st->members[i].state == URAID_MEMBER_IN_SYNC)
			for (int d = 0; d < ndisk; d++)
				if (!strcmp(disks[d].name, st->members[i].name))
					out[n++] = d;
	return n;
}

/* A second, read-only assembly of the same disks without `drop` random
 * in-sync members must read exactly the shadow: proves parity/Q/mirrors on
 * the media are right, independently of the running array's state. */
static void spot_check(const struct cfg *c, struct te_disk *disks, int ndisk,
                       const struct uraid_status *st, const uint8_t *shadow, uint64_t size,
                       uint64_t *rs)
{
	int in[TE_MAX], n = insync_disks(st, disks, ndisk, in);
	int spare_redundancy = nparity(c->level) - st->degraded;
	if (c->level == 10 || c->level == 1)
		spare_redundancy = st->degraded ? 0 : 1;
	int drop = spare_redundancy > 0 ? (int)(t_rand(rs) % (uint64_t)(spare_redundancy + 1)) : 0;
	for (int i = 0; i < drop && n > 1; i++) {
		int k = (int)(t_rand(rs) % (uint64_t)n);
		in[k] = in[--n];
	}
	/* rebuilding members and spares come along: assembly sorts them out */
	for (int i = 0; i < st->nmembers; i++)
		if (st->members[i].state == URAID_MEMBER_REBUILDING)
			for (int d = 0; d < ndisk; d++)
				if (!strcmp(disks[d].name, st->members[i].name))
					in[n++] = d;
	struct member *mm[TE_MAX];
	for (int i = 0; i < n; i++)
		mm[i] = te_borrow_raw(&disks[in[i]]);
	struct uraid_array *ro;
	char err[256], warn[512];
	int rc = uraid_assemble_members(mm, n, URAID_RDONLY | URAID_NO_SYNC_THREAD, &ro, err,
	                                sizeof(err), warn, sizeof(warn));
	CHECKF(rc == 0, "%s: spot check assembly (%d dropped): %s", c->name, drop, err);
	if (rc == 0) {
		CHECKF(te_verify(ro, shadow, size) == 0, "%s: spot check with %d dropped", c->name,
		       drop);
		uraid_stop(ro);
	}
}

static void run(const struct cfg *c)
{
	uint64_t rs = c->seed;
	struct te_disk disks[TE_MAX];
	memset(disks, 0, sizeof(disks));
	int ndisk = c->ndisks + POOL;
	char dir[64] = "/dev/shm/uraid-te-XXXXXX";
	if (c->mapped && (uraid_member_map_guard_install() < 0 || !mkdtemp(dir))) {
		CHECKF(false, "%s: no mapped members", c->name);
		return;
	}
	for (int i = 0; i < ndisk; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "d%d", i);
		if (c->mapped)
			te_disk_open_file(&disks[i], nm, dir, MEMBER_BYTES);
		else
			te_disk_open(&disks[i], nm, MEMBER_BYTES);
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = c->level;
	o.raid_devices = c->ndisks;
	o.chunk_sectors = c->chunk_kib * 2;
	o.metadata = c->metadata;
	o.metadata_set = true;
	snprintf(o.name, sizeof(o.name), "t");
	if (c->layout) {
		CHECK(layout_parse(c->level, c->layout, &o.layout) == 0);
		o.layout_set = true;
	}
	struct uraid_array *a;
	int rc = te_create(&o, disks, c->ndisks, &a);
	CHECKF(rc == 0, "%s: create", c->name);
	if (rc < 0)
		goto out;
	CHECK(te_sync_all(a) == 0);
	if (c->cache)
		CHECK(uraid_set_stripe_cache(a, c->cache) == 0);
	uint64_t size = uraid_size(a);
	struct uraid_status st;
	uraid_status(a, &st);
	uint64_t width = (uint64_t)(c->ndisks - (c->level == 6                    ? 2
	                                         : c->level >= 4 && c->level <= 5 ? 1
	                                                                          : 0)) *
	                 (c->chunk_kib ? c->chunk_kib * 2 : 64);
	uint8_t *shadow = malloc(size), *buf = malloc(size);
	CHECK(uraid_read(a, shadow, size, 0) == 0);
	if (c->mapped) {
		/* Every page backed (written), so that later writes go
		 * straight into the mapped members (raid456/stripe_mapped.c). */
		t_fill(&rs, shadow, size);
		CHECK(uraid_write(a, shadow, size, 0) == 0);
	}
	int cur[TE_MAX], ncur = c->ndisks;
	int next_pool = ncur;
	for (int i = 0; i < ncur; i++)
		cur[i] = i;
	int crashes = 0, fails = 0, rebuilds = 0, errs = 0, checks = 0;
	for (int op = 0; op < OPS; op++) {
		uint64_t r = t_rand(&rs) % 100;
		uraid_status(a, &st);
		bool redundant = nparity(c->level) > 0;
		if (r < 45) {
			uint64_t sec = size / 512;
			uint64_t n = 1 + t_rand(&rs) % (t_rand(&rs) % 4 ? 16 : 3 * width);
			if (n > sec)
				n = sec;
			uint64_t s = t_rand(&rs) % (sec - n + 1);
			t_fill(&rs, shadow + s * 512, n * 512);
			rc = uraid_write(a, shadow + s * 512, n * 512, s * 512);
			CHECKF(rc == 0, "%s op %d: write %llu+%llu: %d", c->name, op,
			       (unsigned long long)s, (unsigned long long)n, rc);
		} else if (r < 80) {
			uint64_t sec = size / 512;
			uint64_t n = 1 + t_rand(&rs) % (3 * width);
			if (n > sec)
				n = sec;
			uint64_t s = t_rand(&rs) % (sec - n + 1);
			rc = uraid_read(a, buf, n * 512, s * 512);
			CHECKF(rc == 0 && !memcmp(buf, shadow + s * 512, n * 512),
			       "%s op %d: read %llu+%llu differs (rc %d)", c->name, op,
			       (unsigned long long)s, (unsigned long long)n, rc);
		} else if (r < 84) {
			CHECK(uraid_sync_step(a, 1 + t_rand(&rs) % 512) >= 0);
		} else if (r < 86) {
			/* The members hold cached writes after a flush only. */
			if (c->cache)
				CHECK(uraid_flush(a) == 0);
			spot_check(c, disks, ndisk, &st, shadow, size, &rs);
			checks++;
		} else if (r < 89 && redundant && st.degraded < nparity(c->level)) {
			char nm[16];
			snprintf(nm, sizeof(nm), "#%d", (int)(t_rand(&rs) % (uint64_t)c->ndisks));
			char err[256];
			rc = uraid_fail(a, nm, err, sizeof(err));
			/* -EBUSY: would lose data; -ENOENT: that slot is empty */
			CHECKF(rc == 0 || rc == -EBUSY || rc == -ENOENT, "%s: fail %s: %s", c->name,
			       nm, err);
			fails += rc == 0;
		} else if (r < 93 && redundant && st.degraded > 0 && next_pool < ndisk &&
		           ncur < TE_MAX) {
			char err[256];
			rc = uraid_add_member(a, te_borrow(&disks[next_pool]), err, sizeof(err));
			CHECKF(rc == 0, "%s: add spare: %s", c->name, err);
			cur[ncur++] = next_pool++;
			rebuilds++;
		} else if (r < 96 && redundant) {
			/* One read error soon on a working member: reads must still
			 * return the data (rebuilt, then rewritten). */
			struct member_fault_rule fr = {.op = MEMBER_OP_READ,
			                               .after = t_rand(&rs) % 4,
			                               .error = EIO,
			                               .once = true};
			/* one pending error per disk: a retry then succeeds */
			struct member *f = disks[cur[t_rand(&rs) % (uint64_t)ncur]].fault;
			member_fault_clear(f);
			member_fault_add(f, &fr);
			errs++;
		} else if (r < 97 && redundant && st.degraded == 0) {
			struct member_fault_rule fr = {.op = MEMBER_OP_WRITE,
			                               .after = t_rand(&rs) % 4,
			                               .error = EIO,
			                               .once = true};
			member_fault_add(disks[cur[t_rand(&rs) % (uint64_t)ncur]].fault, &fr);
			/* Fire it now (a full write reaches every member), so it
			 * cannot hit later while the array is degraded. */
			rc = uraid_write(a, shadow, size, 0);
			CHECKF(rc == 0, "%s op %d: whole-array write with a write error: %d",
			       c->name, op, rc);
			for (int i = 0; i < ndisk; i++)
				member_fault_clear(disks[i].fault);
			errs++;
		} else if (r >= 97) {
			/* Crash: no stop, no superblock update; assemble again.
			 * With a stripe cache, after a flush (what a crash does
			 * to unflushed writes is test_engine_crash's subject). */
			if (c->cache)
				CHECK(uraid_flush(a) == 0);
			uraid_drop(a);
			for (int i = 0; i < ndisk; i++)
				member_fault_clear(disks[i].fault);
			char warn[1024];
			/* possibly degraded: md needs --force for that (URAID_FORCE) */
			rc = te_assemble_force(disks, cur, ncur, &a, warn, sizeof(warn));
			CHECKF(rc == 0, "%s: reassembly after crash %d", c->name, crashes);
			if (rc < 0) {
				a = NULL;
				break;
			}
			if (c->cache)
				CHECK(uraid_set_stripe_cache(a, c->cache) == 0);
			crashes++;
		}
	}
	if (!a)
		goto free_out;
	for (int i = 0; i < ndisk; i++)
		member_fault_clear(disks[i].fault);
	CHECK(te_sync_all(a) == 0);
	CHECKF(te_verify(a, shadow, size) == 0, "%s: final read", c->name);
	uraid_status(a, &st);
	if (nparity(c->level) && st.degraded == 0) {
		char err[256];
		CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
		CHECK(te_sync_all(a) == 0);
		uraid_status(a, &st);
		CHECKF(st.mismatch_cnt == 0, "%s: check found %llu mismatched sectors", c->name,
		       (unsigned long long)st.mismatch_cnt);
	}
	/* Slots -> disks for the independent checks. */
	int slots[TE_MAX], nslots = 0;
	for (int i = 0; i < st.nmembers; i++)
		if (st.members[i].role >= 0 && st.members[i].state == URAID_MEMBER_IN_SYNC)
			for (int d = 0; d < ndisk; d++)
				if (!strcmp(disks[d].name, st.members[i].name))
					slots[nslots++] = d;
	bool complete = nslots == c->ndisks;
	uint64_t dev_sectors = st.dev_sectors;
	CHECK(uraid_stop(a) == 0);
	if (complete) {
		member_invariants(c, disks, slots, nslots, dev_sectors);
		subsets_read_back(c, disks, slots, nslots, shadow, size);
	}
	/* And a clean stop leaves nothing to resync. */
	{
		char warn[1024];
		rc = te_assemble(disks, cur, ncur, &a, warn, sizeof(warn));
		CHECK(rc == 0);
		if (rc == 0) {
			uraid_status(a, &st);
			CHECKF(st.sync_action != URAID_SYNC_RESYNC, "%s: resync after clean stop",
			       c->name);
			CHECK(te_verify(a, shadow, size) == 0);
			uraid_stop(a);
		}
	}
	fprintf(stderr,
	        "%s: %d ops, %d crashes, %d failures, %d spares, %d injected errors, %d spot "
	        "checks\n",
	        c->name, OPS, crashes, fails, rebuilds, errs, checks);
free_out:
	free(shadow);
	free(buf);
out:
	for (int i = 0; i < ndisk; i++)
		te_disk_close(&disks[i]);
	if (c->mapped)
		rmdir(dir);
}

#define CFG_SC(fn, cache, ...)                                                \
	static void fn(void)                                                  \
	{                                                                     \
		static const struct cfg c = {#fn, __VA_ARGS__, cache, false}; \
		run(&c);                                                      \
	}
#define CFG(fn, ...) CFG_SC(fn, 0, __VA_ARGS__)
/* members mapped (tmpfs files): whole stripes and read-modify-writes
 * straight in their pages where no fault rule is set */
#define CFG_MAP(fn, ...)                                                 \
	static void fn(void)                                             \
	{                                                                \
		static const struct cfg c = {#fn, __VA_ARGS__, 0, true}; \
		run(&c);                                                 \
	}

CFG(linear3, -1, NULL, 3, 0, 12, 1)
CFG(raid0_4, 0, NULL, 4, 16, 12, 2)
CFG(raid1_3, 1, NULL, 3, 0, 12, 3)
CFG(raid1_2_v090, 1, NULL, 2, 0, 0, 4)
CFG(raid10_n2_4, 10, "n2", 4, 16, 12, 5)
CFG(raid10_n2_5, 10, "n2", 5, 16, 12, 6)
CFG(raid10_f2_4, 10, "f2", 4, 16, 12, 7)
CFG(raid10_o2_3, 10, "o2", 3, 16, 12, 8)
CFG(raid4_4, 4, NULL, 4, 16, 12, 9)
CFG(raid5_ls_4, 5, "left-symmetric", 4, 16, 12, 10)
CFG(raid5_la_5, 5, "left-asymmetric", 5, 8, 12, 11)
CFG(raid5_rs_4, 5, "right-symmetric", 4, 16, 10, 12)
CFG(raid5_ra_3, 5, "right-asymmetric", 3, 32, 11, 13)
CFG(raid5_p0_4, 5, "parity-first", 4, 16, 12, 14)
CFG(raid5_pn_4, 5, "parity-last", 4, 16, 12, 15)
CFG(raid5_ls_4_v090, 5, "left-symmetric", 4, 16, 0, 16)
CFG(raid6_ls_4, 6, "left-symmetric", 4, 16, 12, 17)
CFG(raid6_ra_5, 6, "right-asymmetric", 5, 16, 12, 18)
CFG(raid6_p0_6, 6, "parity-first", 6, 8, 12, 19)
CFG(raid6_ls6_5, 6, "left-symmetric-6", 5, 16, 12, 20)
CFG(raid6_pn_5, 6, "parity-last", 5, 16, 12, 21)
/* wide enough that small writes take the read-modify-write path */
CFG(raid5_ls_7, 5, "left-symmetric", 7, 8, 12, 22)
CFG(raid6_ls_8, 6, "left-symmetric", 8, 8, 12, 23)
CFG(raid6_ra_9, 6, "right-asymmetric", 9, 8, 11, 24)
/* the same with a stripe cache: small (evictions all the time) and md's */
CFG_SC(raid4_4_sc, 4, 4, NULL, 4, 16, 12, 25)
CFG_SC(raid5_ls_4_sc, 256, 5, "left-symmetric", 4, 16, 12, 26)
CFG_SC(raid5_ls_7_sc, 8, 5, "left-symmetric", 7, 8, 12, 27)
CFG_SC(raid6_ls_8_sc, 16, 6, "left-symmetric", 8, 8, 12, 28)
CFG_SC(raid6_ra_5_sc, 256, 6, "right-asymmetric", 5, 16, 12, 29)
CFG_MAP(raid5_ls_7_map, 5, "left-symmetric", 7, 8, 12, 30)
CFG_MAP(raid6_ls_8_map, 6, "left-symmetric", 8, 8, 12, 31)
CFG_MAP(raid6_ra_9_map, 6, "right-asymmetric", 9, 8, 11, 32)
CFG_MAP(raid6_p0_6_map, 6, "parity-first", 6, 8, 12, 33)

TEST_MAIN(T(linear3), T(raid0_4), T(raid1_3), T(raid1_2_v090), T(raid10_n2_4), T(raid10_n2_5),
          T(raid10_f2_4), T(raid10_o2_3), T(raid4_4), T(raid5_ls_4), T(raid5_la_5), T(raid5_rs_4),
          T(raid5_ra_3), T(raid5_p0_4), T(raid5_pn_4), T(raid5_ls_4_v090), T(raid6_ls_4),
          T(raid6_ra_5), T(raid6_p0_6), T(raid6_ls6_5), T(raid6_pn_5), T(raid5_ls_7), T(raid6_ls_8),
          T(raid6_ra_9), T(raid4_4_sc), T(raid5_ls_4_sc), T(raid5_ls_7_sc), T(raid6_ls_8_sc),
          T(raid6_ra_5_sc), T(raid5_ls_7_map), T(raid6_ls_8_map), T(raid6_ra_9_map),
          T(raid6_p0_6_map))
