/* Faults without a crash, where test_engine*.c does not already look:
 *   - a persistent read error on one member over a sector whose stored data
 *     is also garbage: the array returns the right data (rebuilt from
 *     redundancy) AND the member's copy is rewritten with it (checked on the
 *     raw medium);
 *   - a member that disappears (array assembled without it), misses writes,
 *     comes back stale: left out at assembly with a warning, re-added,
 *     recovered, and then holds the data by itself (proved by assembling with
 *     another member left out), with `check` finding 0 mismatches.
 * Fixed seeds; expected data comes from the test's own shadow copy. */
#include "engine/core/engine.h"
#include "test_engine_common.h"
#include "sim/member_fault.h"

#define MB (1u << 20)

struct cfg {
	const char *name;
	int level;
	const char *layout;
	int n;
};

static const struct cfg cfgs[] = {
    {"raid1_2", URAID_LEVEL_RAID1, NULL, 2},
    {"raid10_n2_4", URAID_LEVEL_RAID10, "n2", 4},
    {"raid4_4", URAID_LEVEL_RAID4, NULL, 4},
    {"raid5_ls_4", URAID_LEVEL_RAID5, "left-symmetric", 4},
    {"raid6_ls_5", URAID_LEVEL_RAID6, "left-symmetric", 5},
};
#define NCFG (sizeof(cfgs) / sizeof(cfgs[0]))

static struct uraid_array *mk(const struct cfg *c, struct te_disk *d)
{
	for (int i = 0; i < c->n; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "f%d", i);
		te_disk_open(&d[i], nm, 3 * MB);
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = c->level;
	o.raid_devices = c->n;
	o.chunk_sectors = 16;
	o.size_sectors = 2048;
	o.assume_clean = true; /* zeroed members are consistent */
	if (c->layout) {
		layout_parse(c->level, c->layout, &o.layout);
		o.layout_set = true;
	}
	struct uraid_array *a = NULL;
	if (te_create(&o, d, c->n, &a) < 0)
		return NULL;
	return a;
}

static uint8_t *fill(struct uraid_array *a, uint64_t seed)
{
	uint64_t size = uraid_size(a), rs = seed;
	uint8_t *shadow = malloc(size);
	t_fill(&rs, shadow, size);
	CHECK(uraid_write(a, shadow, size, 0) == 0);
	return shadow;
}

static void close_disks(struct te_disk *d, int n)
{
	for (int i = 0; i < n; i++)
		te_disk_close(&d[i]);
}

static void read_error_rewritten(void)
{
	uint64_t rs = 0xbad5ec;
	for (size_t ci = 0; ci < NCFG; ci++) {
		const struct cfg *c = &cfgs[ci];
		struct te_disk d[8];
		struct uraid_array *a = mk(c, d);
		CHECKF(a != NULL, "%s: create", c->name);
		if (!a)
			continue;
		uint8_t *shadow = fill(a, 0x5eed + ci);
		int hit = 0;
		for (int trial = 0; trial < 8; trial++) {
			uint64_t lsec = t_rand(&rs) % (uraid_size(a) / 512 - 8);
			struct eng_array *e = eng_of(a);
			int copies = e->ops->ncopies(&e->geo);
			int copy = (int)(t_rand(&rs) % (uint64_t)copies);
			struct layout_loc loc;
			uint64_t len;
			CHECK(e->ops->map(&e->geo, lsec, copy, &loc, &len) == 0);
			struct eng_member *em = e->mem[e->slot[loc.role]];
			uint64_t boff = (em->sb.data_offset + loc.sector) * 512;
			/* Garbage on the medium AND a read error there: only
			 * redundancy can give the right data. */
			uint8_t junk[512];
			t_fill(&rs, junk, sizeof(junk));
			CHECK(member_write(d[loc.role].mem, junk, 512, boff, 0) == 0);
			struct member_fault_rule fr = {
			    .op = MEMBER_OP_READ, .off = boff, .len = 512, .error = EIO};
			uint64_t h0 = member_fault_hits(d[loc.role].fault);
			CHECK(member_fault_add(d[loc.role].fault, &fr) == 0);
			uint8_t got[512];
			int rc = uraid_read(a, got, 512, lsec * 512);
			bool fired = member_fault_hits(d[loc.role].fault) > h0;
			member_fault_clear(d[loc.role].fault);
			uint8_t raw[512];
			CHECK(member_read(d[loc.role].mem, raw, 512, boff) == 0);
			if (!fired) {
				/* A mirror read went to another copy: the garbage
				 * stays until check/repair; make it right again. */
				CHECK(rc == 0 && !memcmp(got, shadow + lsec * 512, 512));
				CHECK(member_write(d[loc.role].mem, shadow + lsec * 512, 512, boff,
				                   0) == 0);
				continue;
			}
			hit++;
			CHECKF(rc == 0 && !memcmp(got, shadow + lsec * 512, 512),
			       "%s: read with an error on role %d returned wrong data (%d)",
			       c->name, loc.role, rc);
			CHECKF(!memcmp(raw, shadow + lsec * 512, 512),
			       "%s: role %d sector %llu not rewritten after the read error",
			       c->name, loc.role, (unsigned long long)loc.sector);
			struct uraid_status st;
			uraid_status(a, &st);
			CHECKF(st.degraded == 0, "%s: a repaired read error failed the member",
			       c->name);
		}
		CHECKF(hit > 0, "%s: no injected read error was ever hit", c->name);
		CHECK(te_verify(a, shadow, uraid_size(a)) == 0);
		char err[256];
		CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
		CHECK(te_sync_all(a) == 0);
		struct uraid_status st;
		uraid_status(a, &st);
		CHECKF(st.mismatch_cnt == 0, "%s: %llu mismatches after read repairs", c->name,
		       (unsigned long long)st.mismatch_cnt);
		printf("# %s: %d read errors repaired and rewritten\n", c->name, hit);
		uraid_stop(a);
		free(shadow);
		close_disks(d, c->n);
	}
}

static void stale_member_readded_recovered(void)
{
	for (size_t ci = 0; ci < NCFG; ci++) {
		const struct cfg *c = &cfgs[ci];
		struct te_disk d[8];
		struct uraid_array *a = mk(c, d);
		CHECKF(a != NULL, "%s: create", c->name);
		if (!a)
			continue;
		uint8_t *old = fill(a, 0x01d + ci);
		CHECK(uraid_stop(a) == 0);
		free(old);
		/* Member 1 goes away: the array runs degraded without it. */
		int idx[8], n = 0;
		for (int i = 0; i < c->n; i++)
			if (i != 1)
				idx[n++] = i;
		char warn[1024] = "", err[256];
		CHECK(te_assemble(d, idx, n, &a, warn, sizeof(warn)) == 0);
		if (!a)
			goto next;
		uint8_t *shadow = fill(a, 0x9e4 + ci);
		CHECK(uraid_stop(a) == 0);
		/* It comes back, stale. */
		for (int i = 0; i < c->n; i++)
			idx[i] = i;
		warn[0] = 0;
		CHECK(te_assemble(d, idx, c->n, &a, warn, sizeof(warn)) == 0);
		if (!a) {
			free(shadow);
			goto next;
		}
		CHECKF(strstr(warn, "f1") != NULL, "%s: stale member not named: '%s'", c->name,
		       warn);
		struct uraid_status st;
		uraid_status(a, &st);
		CHECKF(st.degraded == 1, "%s: stale member was used (degraded %d)", c->name,
		       st.degraded);
		CHECK(te_verify(a, shadow, uraid_size(a)) == 0);
		/* Re-add (as mdadm --remove + --add: the stale member is held
		 * as faulty until removed); recovery rebuilds it. */
		int rc = uraid_remove(a, "f1", err, sizeof(err));
		CHECKF(rc == 0, "%s: remove stale: %s", c->name, err);
		rc = uraid_add_member(a, te_borrow(&d[1]), err, sizeof(err));
		CHECKF(rc == 0, "%s: re-add: %s", c->name, err);
		CHECK(te_sync_all(a) == 0);
		uraid_status(a, &st);
		CHECKF(st.degraded == 0, "%s: still degraded after recovery", c->name);
		CHECK(te_verify(a, shadow, uraid_size(a)) == 0);
		CHECK(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0);
		CHECK(te_sync_all(a) == 0);
		uraid_status(a, &st);
		CHECK_EQ_U64(st.mismatch_cnt, 0);
		CHECK(uraid_stop(a) == 0);
		/* The recovered member must carry its share alone: leave out
		 * another one (for raid10 n2 its mirror partner, 0). */
		n = 0;
		for (int i = 0; i < c->n; i++)
			if (i != 0)
				idx[n++] = i;
		CHECK(te_assemble(d, idx, n, &a, warn, sizeof(warn)) == 0);
		if (a) {
			CHECKF(te_verify(a, shadow, uraid_size(a)) == 0,
			       "%s: recovered member holds wrong data", c->name);
			uraid_stop(a);
		}
		free(shadow);
	next:
		close_disks(d, c->n);
	}
}

TEST_MAIN(T(read_error_rewritten), T(stale_member_readded_recovered))
