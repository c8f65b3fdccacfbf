/* md's per-device flags honoured by the mirrors:
 *   - write-mostly (raid1): no read goes to a write-mostly member while
 *     another copy can serve (counted at the member, below the engine);
 *     with the other copy failed, reads go there; raid10 ignores the flag
 *     as md does;
 *   - failfast (raid1, raid10): a read error fails the member at once (one
 *     request, no retry, no rewrite) and the read is served by the other
 *     copy; a write error fails it without recording a bad block; the last
 *     copy is never failed that way (the error is returned instead);
 *   - the flags survive superblock updates, 0.90 (disk table) and 1.x.
 * Expected data: the test's own shadow copy. */
#include "engine/core/engine.h"
#include "test_engine_common.h"
#include "sim/member_fault.h"

#define MB (1u << 20)

static struct uraid_array *mk(struct te_disk *d, int level, int n, int metadata, uint64_t wm,
                              uint64_t ff)
{
	for (int i = 0; i < n; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "d%d", i);
		te_disk_open(&d[i], nm, 3 * MB);
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = level;
	o.raid_devices = n;
	o.chunk_sectors = 16;
	o.size_sectors = 2048;
	o.assume_clean = true;
	o.metadata = metadata;
	o.metadata_set = true;
	o.write_mostly = wm;
	o.failfast = ff;
	struct uraid_array *a = NULL;
	if (te_create(&o, d, n, &a) < 0)
		return NULL;
	return a;
}

static void close_disks(struct te_disk *d, int n)
{
	for (int i = 0; i < n; i++)
		te_disk_close(&d[i]);
}

/* Counts every read of a disk (a rule with no effect). */
static void count_reads(struct te_disk *d)
{
	struct member_fault_rule r = {.op = MEMBER_OP_READ};
	CHECK(member_fault_add(d->fault, &r) == 0);
}

static uint8_t *fill(struct uraid_array *a, uint64_t seed)
{
	uint64_t size = uraid_size(a), rs = seed;
	uint8_t *shadow = malloc(size);
	t_fill(&rs, shadow, size);
	CHECK(uraid_write(a, shadow, size, 0) == 0);
	return shadow;
}

/* Reads scattered over the array, each checked. */
static int scattered_reads(struct uraid_array *a, const uint8_t *shadow, uint64_t seed)
{
	uint64_t size = uraid_size(a), rs = seed;
	uint8_t buf[8192];
	int bad = 0;
	for (int k = 0; k < 200; k++) {
		uint64_t off = t_rand(&rs) % (size / 512 - 16) * 512;
		size_t len = (size_t)(1 + t_rand(&rs) % 16) * 512;
		if (uraid_read(a, buf, len, off) < 0 || memcmp(buf, shadow + off, len))
			bad++;
	}
	return bad;
}

static void write_mostly_raid1(void)
{
	for (int md = 0; md <= 12; md += 12) {
		for (int wm_disk = 0; wm_disk < 2; wm_disk++) {
			struct te_disk d[2];
			struct uraid_array *a = mk(d, URAID_LEVEL_RAID1, 2, md, 1ull << wm_disk, 0);
			CHECKF(a != NULL, "md %d: create", md);
			if (!a) {
				close_disks(d, 2);
				continue;
			}
			uint8_t *shadow = fill(a, 7 + (uint64_t)wm_disk);
			count_reads(&d[0]);
			count_reads(&d[1]);
			CHECK(scattered_reads(a, shadow, 11) == 0);
			CHECKF(member_fault_hits(d[wm_disk].fault) == 0,
			       "md %d: %llu reads went to the write-mostly member %d", md,
			       (unsigned long long)member_fault_hits(d[wm_disk].fault), wm_disk);
			CHECK(member_fault_hits(d[1 - wm_disk].fault) > 0);
			struct uraid_status st;
			uraid_status(a, &st);
			CHECKF(st.members[wm_disk].flags & URAID_MEMBER_F_WRITEMOSTLY,
			       "md %d: status (W)", md);
			CHECK(!(st.members[1 - wm_disk].flags & URAID_MEMBER_F_WRITEMOSTLY));
			/* the other copy gone: the write-mostly member serves */
			char err[256], name[8];
			snprintf(name, sizeof(name), "#%d", 1 - wm_disk);
			CHECK(uraid_fail(a, name, err, sizeof(err)) == 0);
			uint64_t before = member_fault_hits(d[wm_disk].fault);
			CHECK(scattered_reads(a, shadow, 12) == 0);
			CHECK(member_fault_hits(d[wm_disk].fault) > before);
			uraid_stop(a);
			/* the flag survives the superblock writes (0.90: the disk table) */
			int idx[2] = {0, 1};
			char warn[512];
			a = NULL;
			CHECK(te_assemble(d, idx, 2, &a, warn, sizeof(warn)) == 0);
			if (a) {
				uraid_status(a, &st);
				bool found = false;
				for (int i = 0; i < st.nmembers; i++)
					if (!strcmp(st.members[i].name, d[wm_disk].name))
						found = st.members[i].flags &
						        URAID_MEMBER_F_WRITEMOSTLY;
				CHECKF(found, "md %d: write-mostly kept after reassembly", md);
				uraid_stop(a);
			}
			free(shadow);
			close_disks(d, 2);
		}
	}
}

/* raid10: md ignores write-mostly; reads still reach that member. */
static void write_mostly_raid10_ignored(void)
{
	struct te_disk d[2];
	struct uraid_array *a = mk(d, URAID_LEVEL_RAID10, 2, 12, 1, 0);
	CHECK(a != NULL);
	if (!a) {
		close_disks(d, 2);
		return;
	}
	uint8_t *shadow = fill(a, 3);
	count_reads(&d[0]);
	CHECK(scattered_reads(a, shadow, 5) == 0);
	CHECK(member_fault_hits(d[0].fault) > 0);
	uraid_stop(a);
	free(shadow);
	close_disks(d, 2);
}

static enum uraid_member_state state_of(struct uraid_array *a, const char *name)
{
	struct uraid_status st;
	uraid_status(a, &st);
	for (int i = 0; i < st.nmembers; i++)
		if (!strcmp(st.members[i].name, name))
			return st.members[i].state;
	return URAID_MEMBER_MISSING;
}

/* Disk 1 failfast; a first read far into the array leaves disk 0's head
 * there, so the read of sector 0 goes to disk 1 (nearest head). */
static void failfast_read(void)
{
	static const int levels[] = {URAID_LEVEL_RAID1, URAID_LEVEL_RAID10};
	for (int li = 0; li < 2; li++) {
		for (int ff = 0; ff < 2; ff++) {
			struct te_disk d[2];
			int lvl = levels[li];
			struct uraid_array *a = mk(d, lvl, 2, 12, 0, ff ? 2 : 0);
			CHECK(a != NULL);
			if (!a) {
				close_disks(d, 2);
				continue;
			}
			uint8_t *shadow = fill(a, 21);
			uint8_t buf[4096];
			uint64_t far = uraid_size(a) / 2;
			CHECK(uraid_read(a, buf, sizeof(buf), far) == 0);
			uint64_t doff = te_data_offset(d[1].mem) * 512;
			struct member_fault_rule r = {
			    .op = MEMBER_OP_READ, .off = doff, .len = 4096, .error = EIO};
			CHECK(member_fault_add(d[1].fault, &r) == 0);
			int rc =
			    uraid_read(a, buf, sizeof(buf), 0) < 0 || memcmp(buf, shadow, 4096);
			CHECKF(rc == 0, "level %d ff %d: the read served by the other copy", lvl,
			       ff);
			uint64_t hits = member_fault_hits(d[1].fault);
			enum uraid_member_state s1 = state_of(a, "d1");
			if (ff) {
				CHECKF(s1 == URAID_MEMBER_FAULTY,
				       "level %d: failfast member failed", lvl);
				/* the shared-lock attempt, then one under the lock: no
				 * retry of that one, no rewrite */
				CHECKF(hits >= 1 && hits <= 2,
				       "level %d: failfast: no retry (%llu requests)", lvl,
				       (unsigned long long)hits);
			} else {
				CHECKF(s1 == URAID_MEMBER_IN_SYNC,
				       "level %d: without failfast the member stays", lvl);
				CHECKF(hits >= 3, "level %d: retried (%llu)", lvl,
				       (unsigned long long)hits);
			}
			uraid_stop(a);
			free(shadow);
			close_disks(d, 2);
		}
	}
}

/* The last copy is never failed by failfast: the error comes back. */
static void failfast_last_copy(void)
{
	struct te_disk d[2];
	struct uraid_array *a = mk(d, URAID_LEVEL_RAID1, 2, 12, 0, 2);
	CHECK(a != NULL);
	if (!a) {
		close_disks(d, 2);
		return;
	}
	uint8_t *shadow = fill(a, 33);
	char err[256];
	CHECK(uraid_fail(a, "#0", err, sizeof(err)) == 0);
	uint64_t doff = te_data_offset(d[1].mem) * 512;
	struct member_fault_rule r = {.op = MEMBER_OP_READ, .off = doff, .len = 4096, .error = EIO};
	CHECK(member_fault_add(d[1].fault, &r) == 0);
	uint8_t buf[4096];
	CHECK(uraid_read(a, buf, sizeof(buf), 0) < 0);
	CHECK(state_of(a, "d1") == URAID_MEMBER_IN_SYNC);
	member_fault_clear(d[1].fault);
	CHECK(uraid_read(a, buf, sizeof(buf), 0) == 0 && !memcmp(buf, shadow, sizeof(buf)));
	uraid_stop(a);
	free(shadow);
	close_disks(d, 2);
}

/* A write error on a failfast member (with a bad block log) fails it: no
 * bad block is recorded; without failfast the range is recorded instead. */
static void failfast_write(void)
{
	for (int ff = 0; ff < 2; ff++) {
		struct te_disk d[2];
		struct uraid_array *a = mk(d, URAID_LEVEL_RAID1, 2, 12, 0, ff ? 2 : 0);
		CHECK(a != NULL);
		if (!a) {
			close_disks(d, 2);
			continue;
		}
		uint8_t *shadow = fill(a, 44);
		uint64_t doff = te_data_offset(d[1].mem) * 512;
		struct member_fault_rule r = {
		    .op = MEMBER_OP_WRITE, .off = doff + 8192, .len = 512, .error = EIO};
		CHECK(member_fault_add(d[1].fault, &r) == 0);
		uint8_t buf[4096];
		memset(buf, 0x5a, sizeof(buf));
		CHECK(uraid_write(a, buf, sizeof(buf), 8192) == 0);
		CHECK(uraid_flush(a) == 0);
		enum uraid_member_state s1 = state_of(a, "d1");
		CHECKF(ff ? s1 == URAID_MEMBER_FAULTY : s1 == URAID_MEMBER_IN_SYNC,
		       "ff %d: member state %d", ff, (int)s1);
		memcpy(shadow + 8192, buf, sizeof(buf));
		CHECK(te_verify(a, shadow, uraid_size(a)) == 0);
		uraid_stop(a);
		free(shadow);
		close_disks(d, 2);
	}
}

TEST_MAIN(T(write_mostly_raid1), T(write_mostly_raid10_ignored), T(failfast_read),
          T(failfast_last_copy), T(failfast_write))
