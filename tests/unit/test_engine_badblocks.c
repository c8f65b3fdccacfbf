/* md's bad block log in the engine (src/engine/core/badblocks.c and the
 * personalities), against references written here: the log is put on and
 * read off the raw members by this file's own code from the kernel's layout
 * (superblock fields at their byte offsets, md's checksum, entries packed as
 * super_1_sync does), the expected outcome of every read comes from a model
 * of md's rules (raid1/raid10: a sector is readable while some copy has it
 * outside its bad ranges; raid4/5/6: a 4 KiB stripe unit is readable while
 * at most parity-many members have a bad sector in it; raid0: the log is
 * never consulted), and the member sectors a write error records from the
 * fault's range (raid1/raid10 exactly, raid4/5/6 whole 4 KiB units).
 *   - recorded ranges are never read (a read-error rule over them, with
 *     garbage on the medium, never fires) and the array reads its shadow,
 *     -EIO exactly where the model says no redundancy covers;
 *   - a write error on a member with a log records the range, the member
 *     stays, the log and feature bit are on disk; the data reads back;
 *   - a good write clears what it covers (not after a write error on that
 *     member: md's WriteErrorSeen); raid5 reads rewrite a bad range;
 *   - no log or a full log: the member fails as before;
 *   - corrupt logs are refused, naming member and problem, nothing written;
 *   - --update=no-bbl / force-no-bbl. Fixed seeds. */
#include "engine/core/engine.h"
#include "test_bbl_arrays.h"
#include "test_bbl_ref.h"
#include "test_engine_common.h"

/* The model of md's rules for a 4 KiB read at logical sector lsec (4 KiB
 * aligned) of a complete array: bad[role][msec] (data-area sectors).
 * raid1/raid10: every sector has a copy outside the bad ranges (read_balance
 * reads around them). raid4/5/6: the data member has no bad sector there
 * (raid5_read_one_chunk reads it straight), else its 4 KiB stripe unit has
 * at most parity-many members with a bad sector in it (the stripe path).
 * raid0: md never asks. */
static bool block_readable(const struct arr *r, bool bad[][MSEC], uint64_t lsec)
{
	struct layout_loc loc;
	uint64_t l;
	if (r->c->level == URAID_LEVEL_RAID0)
		return true;
	if (parity(r)) {
		r->ops->map(&r->g, lsec, 0, &loc, &l);
		uint64_t u = loc.sector / 8 * 8;
		bool direct = true;
		for (uint64_t s = loc.sector; s < loc.sector + 8; s++)
			direct &= !bad[loc.role][s];
		if (direct)
			return true;
		int lost = 0;
		for (int m = 0; m < r->c->n; m++)
			for (uint64_t s = u; s < u + 8; s++)
				if (bad[m][s]) {
					lost++;
					break;
				}
		return lost <= (r->c->level == URAID_LEVEL_RAID6 ? 2 : 1);
	}
	int nc = r->ops->ncopies(&r->g);
	for (uint64_t x = lsec; x < lsec + 8; x++) {
		bool any = false;
		for (int c = 0; c < nc && !any; c++) {
			r->ops->map(&r->g, x, c, &loc, &l);
			any = !bad[loc.role][loc.sector];
		}
		if (!any)
			return false;
	}
	return true;
}

/* The same for one 512-byte sector: md reads it straight from its member
 * when that sector is good there (raid5_read_one_chunk asks only the
 * bio's sectors), else its stripe head judges the whole 4 KiB unit. */
static bool sector_readable(const struct arr *r, bool bad[][MSEC], uint64_t lsec)
{
	struct layout_loc loc;
	uint64_t l;
	if (r->c->level == URAID_LEVEL_RAID0)
		return true;
	if (!parity(r)) {
		for (int c = 0; c < r->ops->ncopies(&r->g); c++) {
			r->ops->map(&r->g, lsec, c, &loc, &l);
			if (!bad[loc.role][loc.sector])
				return true;
		}
		return false;
	}
	r->ops->map(&r->g, lsec, 0, &loc, &l);
	if (!bad[loc.role][loc.sector])
		return true;
	uint64_t u = loc.sector / 8 * 8;
	int lost = 0;
	for (int m = 0; m < r->c->n; m++)
		for (uint64_t s = u; s < u + 8; s++)
			if (bad[m][s]) {
				lost++;
				break;
			}
	return lost <= (r->c->level == URAID_LEVEL_RAID6 ? 2 : 1);
}

/* ---- tests ----------------------------------------------------------------- */

/* Random bad ranges on every member (garbage on the medium and a read
 * error there): never read, the shadow comes back, -EIO where the model
 * says nothing covers; raid0 reads the medium as md does. Read-only, so
 * nothing is rewritten; then read-write once more. */
static void reads_avoid(void)
{
	uint64_t rs = 0xbadb10c;
	static bool bad[8][MSEC];
	for (size_t ci = 0; ci < NCFG; ci++) {
		struct arr r;
		if (!mk(&r, &cfgs[ci], 0x5eed + ci)) {
			CHECKF(0, "%s: create", cfgs[ci].name);
			continue;
		}
		memset(bad, 0, sizeof(bad));
		uint8_t *medium = malloc(r.size);
		memcpy(medium, r.shadow, r.size);
		for (int m = 0; m < r.c->n; m++) {
			uint64_t s[8], len[8];
			int n = 0;
			for (uint64_t pos = t_rand(&rs) % 64; n < 8 && pos < DATA - 40;) {
				s[n] = pos;
				len[n] = 1 + t_rand(&rs) % 16;
				pos += len[n] + 1 + t_rand(&rs) % 300;
				n++;
			}
			uint64_t abs[8];
			for (int i = 0; i < n; i++) {
				abs[i] = s[i] + r.doff;
				uint8_t junk[16 * 512];
				t_fill(&rs, junk, len[i] * 512);
				CHECK(member_write(r.d[m].mem, junk, len[i] * 512, abs[i] * 512,
				                   0) == 0);
				for (uint64_t x = s[i]; x < s[i] + len[i]; x++)
					bad[m][x] = true;
				if (r.c->level != URAID_LEVEL_RAID0) {
					struct member_fault_rule fr = {.op = MEMBER_OP_READ,
					                               .off = abs[i] * 512,
					                               .len = len[i] * 512,
					                               .error = EIO};
					CHECK(member_fault_add(r.d[m].fault, &fr) == 0);
				}
			}
			ref_write(&r.d[m], abs, len, n, 0);
		}
		if (r.c->level == URAID_LEVEL_RAID0) /* md reads what the medium holds */
			for (uint64_t lsec = 0; lsec < r.size / 512; lsec++) {
				struct layout_loc loc;
				uint64_t l;
				r.ops->map(&r.g, lsec, 0, &loc, &l);
				if (bad[loc.role][loc.sector])
					CHECK(member_read(r.d[loc.role].mem, medium + lsec * 512,
					                  512, (r.doff + loc.sector) * 512) == 0);
			}
		for (int pass = 0; pass < 2; pass++) {
			char err[512] = "";
			struct uraid_array *a = NULL;
			int rc = asm_flags(&r, pass ? 0 : URAID_RDONLY, &a, err, sizeof(err));
			CHECKF(rc == 0, "%s: %s", r.c->name, err);
			if (rc)
				break;
			int eio = 0, wrong = 0, want_eio = 0;
			for (uint64_t off = 0; off < r.size; off += 4096) {
				bool ok = block_readable(&r, bad, off / 512);
				uint8_t got[4096];
				rc = uraid_read(a, got, sizeof(got), off);
				want_eio += !ok;
				if (!ok)
					eio += rc == -EIO;
				else
					wrong += rc != 0 || memcmp(got, medium + off, 4096);
			}
			CHECKF(wrong == 0 && eio == want_eio, "%s pass %d: %d wrong, %d/%d EIO",
			       r.c->name, pass, wrong, eio, want_eio);
			/* sector by sector (a reader narrowing a failed read
			 * down): md's unit rule still holds */
			int swrong = 0, seio = 0, swant = 0;
			for (uint64_t off = 0; pass == 0 && off < r.size; off += 512) {
				bool ok = sector_readable(&r, bad, off / 512);
				uint8_t got[512];
				rc = uraid_read(a, got, sizeof(got), off);
				swant += !ok;
				if (!ok)
					seio += rc == -EIO;
				else
					swrong += rc != 0 || memcmp(got, medium + off, 512);
			}
			CHECKF(swrong == 0 && seio == swant, "%s by sector: %d wrong, %d/%d EIO",
			       r.c->name, swrong, seio, swant);
			/* read-write, raid4/5/6 rewrite and clear the ranges they
			 * rebuilt: from then on a read may go there */
			for (int m = 0; m < r.c->n; m++) {
				CHECKF(pass || member_fault_hits(r.d[m].fault) == 0,
				       "%s: read a bad range on m%d", r.c->name, m);
				member_fault_clear(r.d[m].fault);
			}
			if (pass == 0)
				printf("# %s: %d of %llu 4 KiB blocks unreadable by the model\n",
				       r.c->name, want_eio, (unsigned long long)(r.size / 4096));
			uraid_drop(a);
		}
		free(medium);
		arr_free(&r);
	}
}

/* Sectors of the member's log as a map over its data area. */
static void log_map(struct te_disk *d, uint64_t doff, bool *map)
{
	struct ref_log l;
	ref_read(d, &l);
	memset(map, 0, DATA);
	for (int i = 0; i < l.n; i++)
		for (uint64_t s = l.s[i]; s < l.s[i] + l.len[i]; s++)
			if (s >= doff && s - doff < DATA)
				map[s - doff] = true;
}

/* A write error on a member with a log: the write succeeds, the member
 * stays in sync, exactly the failed sectors (raid1/raid10) or 4 KiB units
 * (raid4/5/6) are in its log on disk with the feature bit, the new data
 * reads back without touching them, also after reassembly. */
static void write_error_records(void)
{
	uint64_t rs = 0xe770;
	static bool want[DATA], got[DATA];
	for (size_t ci = 0; ci + 1 < NCFG; ci++) { /* not raid0 */
		struct arr r;
		if (!mk(&r, &cfgs[ci], 0x77 + ci))
			continue;
		struct uraid_array *a = asm_ok(&r);
		if (!a) {
			arr_free(&r);
			continue;
		}
		int m = (int)(t_rand(&rs) % (uint64_t)r.c->n);
		uint64_t s = 100 + t_rand(&rs) % 1500, len = 1 + t_rand(&rs) % 30;
		struct member_fault_rule fr = {.op = MEMBER_OP_WRITE,
		                               .off = (r.doff + s) * 512,
		                               .len = len * 512,
		                               .error = EIO};
		CHECK(member_fault_add(r.d[m].fault, &fr) == 0);
		uint64_t rs2 = 0xa11 + ci;
		t_fill(&rs2, r.shadow, r.size);
		int rc = uraid_write(a, r.shadow, r.size, 0);
		CHECKF(rc == 0, "%s: write with an error on m%d: %d", r.c->name, m, rc);
		member_fault_clear(r.d[m].fault);
		struct uraid_status st;
		uraid_status(a, &st);
		CHECKF(st.members[m].state == URAID_MEMBER_IN_SYNC && st.failed == 0,
		       "%s: m%d failed instead of recording bad blocks", r.c->name, m);
		CHECK(uraid_stop(a) == 0);
		memset(want, 0, sizeof(want));
		uint64_t u = parity(&r) ? 8 : 1;
		for (uint64_t x = s / u * u; x < (s + len + u - 1) / u * u; x++)
			want[x] = true;
		log_map(&r.d[m], r.doff, got);
		CHECKF(!memcmp(want, got, sizeof(want)), "%s: m%d's log is not sectors %llu+%llu",
		       r.c->name, m, (unsigned long long)s, (unsigned long long)len);
		struct ref_log l;
		ref_read(&r.d[m], &l);
		CHECK(l.feature && l.n >= 1);
		/* the new data, never read from the recorded ranges */
		struct member_fault_rule rd = fr;
		rd.op = MEMBER_OP_READ;
		rd.off = (r.doff + s / u * u) * 512;
		rd.len = ((s + len + u - 1) / u * u - s / u * u) * 512;
		CHECK(member_fault_add(r.d[m].fault, &rd) == 0);
		uint64_t h0 = member_fault_hits(r.d[m].fault);
		char err[512] = "";
		a = NULL;
		CHECK(asm_flags(&r, URAID_RDONLY, &a, err, sizeof(err)) == 0);
		if (a) {
			CHECKF(te_verify(a, r.shadow, r.size) == 0, "%s: data after reassembly",
			       r.c->name);
			CHECKF(member_fault_hits(r.d[m].fault) == h0,
			       "%s: a recorded range was read", r.c->name);
			uraid_drop(a);
		}
		arr_free(&r);
	}
}

/* raid1: both copies fail the same sectors: both record them, neither
 * fails, the write is -EIO (md: no copy took it) and so are reads there. */
static void write_error_everywhere(void)
{
	struct arr r;
	if (!mk(&r, &cfgs[0], 0x2c))
		return;
	struct uraid_array *a = asm_ok(&r);
	if (!a) {
		arr_free(&r);
		return;
	}
	for (int m = 0; m < 2; m++) {
		struct member_fault_rule fr = {.op = MEMBER_OP_WRITE,
		                               .off = (r.doff + 300) * 512,
		                               .len = 4 * 512,
		                               .error = EIO};
		CHECK(member_fault_add(r.d[m].fault, &fr) == 0);
	}
	uint8_t buf[8192];
	memset(buf, 0x5a, sizeof(buf));
	CHECK(uraid_write(a, buf, sizeof(buf), 296 * 512) == -EIO);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECK(st.failed == 0 && st.working == 2 && !st.broken);
	CHECK(uraid_read(a, buf, 512, 301 * 512) == -EIO);
	CHECK(uraid_read(a, buf, 512, 296 * 512) == 0 && buf[0] == 0x5a);
	CHECK(uraid_read(a, buf, 512, 304 * 512) == 0 && buf[0] == 0x5a);
	for (int m = 0; m < 2; m++)
		member_fault_clear(r.d[m].fault);
	uraid_stop(a);
	static bool got[DATA];
	for (int m = 0; m < 2; m++) {
		log_map(&r.d[m], r.doff, got);
		int n = 0;
		for (int x = 0; x < DATA; x++)
			n += got[x];
		CHECKF(n == 4 && got[300] && got[303], "m%d: %d bad sectors", m, n);
	}
	arr_free(&r);
}

/* A successful write clears the ranges it covers (md's IO_MADE_GOOD /
 * R5_MadeGood), on disk after the stop: raid1 and raid5. After a write
 * error on the member in this run (WriteErrorSeen) an old range stays. */
static void good_write_clears(void)
{
	const size_t which[] = {0, 4};
	for (int w = 0; w < 2; w++)
		for (int seen = 0; seen < 2; seen++) {
			struct arr r;
			if (!mk(&r, &cfgs[which[w]], 0x6c + (uint64_t)w))
				continue;
			uint64_t s[2] = {r.doff + 200, r.doff + 900}, len[2] = {8, 8};
			ref_write(&r.d[1], s, len, 2, 0);
			struct uraid_array *a = asm_ok(&r);
			if (!a) {
				arr_free(&r);
				continue;
			}
			if (seen) { /* a write error elsewhere on m1 first */
				struct member_fault_rule fr = {.op = MEMBER_OP_WRITE,
				                               .off = (r.doff + 1600) * 512,
				                               .len = 512,
				                               .error = EIO};
				CHECK(member_fault_add(r.d[1].fault, &fr) == 0);
				/* backwards: the error comes before the old ranges */
				for (uint64_t off = r.size; off > 0; off -= 32768)
					CHECK(uraid_write(a, r.shadow + off - 32768, 32768,
					                  off - 32768) == 0);
				member_fault_clear(r.d[1].fault);
			}
			/* rewrite the whole array: every member sector written */
			CHECK(uraid_write(a, r.shadow, r.size, 0) == 0);
			CHECK(uraid_stop(a) == 0);
			static bool got[DATA];
			log_map(&r.d[1], r.doff, got);
			struct ref_log l;
			ref_read(&r.d[1], &l);
			if (!seen)
				CHECKF(!l.feature && !got[200] && !got[900],
				       "%s: a good write left the ranges", r.c->name);
			else
				CHECKF(l.feature && got[200] && got[900] && got[1600],
				       "%s: WriteErrorSeen: ranges %d %d %d", r.c->name, got[200],
				       got[900], got[1600]);
			a = asm_ok(&r);
			if (a) {
				CHECK(te_verify(a, r.shadow, r.size) == 0);
				uraid_drop(a);
			}
			arr_free(&r);
		}
}

/* raid5 reads what a bad range on a member holds from the others and, the
 * array writable and no write error seen, writes it back there and clears
 * the range (md: analyse_stripe's read error to correct, R5_MadeGood);
 * raid1 reads another copy and leaves the range. Read-only: nothing
 * written. */
static void reads_rewrite(void)
{
	const size_t which[] = {4, 0};
	for (int w = 0; w < 2; w++)
		for (int ro = 0; ro < 2; ro++) {
			struct arr r;
			if (!mk(&r, &cfgs[which[w]], 0x9e))
				continue;
			uint64_t s = r.doff + 456, len = 8;
			uint8_t good[4096], junk[4096];
			int m = w ? 1 : 2;
			CHECK(member_read(r.d[m].mem, good, 4096, s * 512) == 0);
			memset(junk, 0xee, sizeof(junk));
			CHECK(member_write(r.d[m].mem, junk, 4096, s * 512, 0) == 0);
			ref_write(&r.d[m], &s, &len, 1, 0);
			char err[512];
			struct uraid_array *a = NULL;
			if (asm_flags(&r, ro ? URAID_RDONLY : 0, &a, err, sizeof(err)) < 0) {
				CHECKF(0, "%s", err);
				arr_free(&r);
				continue;
			}
			CHECK(te_verify(a, r.shadow, r.size) == 0);
			uraid_stop(a);
			uint8_t now[4096];
			CHECK(member_read(r.d[m].mem, now, 4096, s * 512) == 0);
			struct ref_log l;
			ref_read(&r.d[m], &l);
			bool rewritten = !memcmp(now, good, 4096);
			bool want = w == 0 && !ro;
			CHECKF(rewritten == want && l.feature == !want,
			       "%s %s: rewritten %d, range still recorded %d", r.c->name,
			       ro ? "read-only" : "read-write", rewritten, l.feature);
			arr_free(&r);
		}
}

/* Without a log (bblog_offset 0) or with it full, a write error fails the
 * member, as md_error does; the array goes on degraded. */
static void no_room_fails(void)
{
	for (int full = 0; full < 2; full++) {
		struct arr r;
		if (!mk(&r, &cfgs[4], 0x40))
			continue;
		if (full) { /* a 1-sector log: 64 entries, all used */
			uint64_t s[64], len[64];
			for (int i = 0; i < 64; i++) {
				s[i] = r.doff + 1000 + 2 * (uint64_t)i;
				len[i] = 1;
			}
			ref_write(&r.d[3], s, len, 64, 1);
		} else {
			ref_write(&r.d[3], NULL, NULL, 0, -1);
		}
		struct uraid_array *a = asm_ok(&r);
		if (!a) {
			arr_free(&r);
			continue;
		}
		struct member_fault_rule fr = {
		    .op = MEMBER_OP_WRITE, .off = (r.doff + 40) * 512, .len = 512, .error = EIO};
		CHECK(member_fault_add(r.d[3].fault, &fr) == 0);
		CHECK(uraid_write(a, r.shadow, 256 * 1024, 0) == 0);
		struct uraid_status st;
		uraid_status(a, &st);
		CHECKF(st.failed == 1 && st.working == 3, "%s log: m3 not failed (%d failed)",
		       full ? "full" : "no", st.failed);
		member_fault_clear(r.d[3].fault);
		CHECK(te_verify(a, r.shadow, r.size) == 0);
		uraid_drop(a);
		arr_free(&r);
	}
}

/* Corrupt or misplaced logs: assembly refused, read-only or not, the
 * message naming the member and the problem; every member byte unchanged. */
static void corrupt_refused(void)
{
	struct {
		const char *what;
		uint64_t s[2], len[2];
		int n, size;
		int32_t offset; /* 0: keep mdadm's */
	} cases[] = {
	    {"length 0", {3000, 0}, {0}, 1, 0, 0},
	    {"overlap", {3000, 3004}, {8, 8}, 2, 0, 0},
	    {"past the end", {6140, 0}, {10, 0}, 1, 0, 0},
	    {"beyond the member", {3000, 0}, {1, 0}, 1, 0, 7000},
	    {"overlaps the data area", {3000, 0}, {1, 0}, 1, 0, 2100},
	    {"md reads at most 8", {3000, 0}, {1, 0}, 1, 9, 0},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct arr r;
		if (!mk(&r, &cfgs[4], 0x13))
			continue;
		ref_write(&r.d[2], cases[k].s, cases[k].len, cases[k].n, cases[k].size);
		if (cases[k].offset) {
			uint8_t sb[4096];
			CHECK(member_read(r.d[2].mem, sb, sizeof(sb), SB_AT * 512) == 0);
			put(sb + F_BB_OFFSET, 4, (uint32_t)cases[k].offset);
			ref_csum(sb);
			CHECK(member_write(r.d[2].mem, sb, sizeof(sb), SB_AT * 512, 0) == 0);
		}
		uint8_t *before[8];
		for (int m = 0; m < r.c->n; m++) {
			before[m] = malloc(r.d[m].mem->size);
			CHECK(member_read(r.d[m].mem, before[m], r.d[m].mem->size, 0) == 0);
		}
		for (int ro = 0; ro < 2; ro++) {
			char err[512] = "";
			struct uraid_array *a = NULL;
			int rc = asm_flags(&r, ro ? URAID_RDONLY : 0, &a, err, sizeof(err));
			CHECKF(rc == -EINVAL && strstr(err, "m2") && strstr(err, cases[k].what),
			       "%s: rc %d: %s", cases[k].what, rc, err);
			if (rc == 0)
				uraid_drop(a);
			else if (ro == 0)
				printf("# %s\n", err);
		}
		for (int m = 0; m < r.c->n; m++) {
			uint8_t *now = malloc(r.d[m].mem->size);
			CHECK(member_read(r.d[m].mem, now, r.d[m].mem->size, 0) == 0);
			CHECKF(!memcmp(now, before[m], r.d[m].mem->size), "%s: m%d changed",
			       cases[k].what, m);
			free(now);
			free(before[m]);
		}
		arr_free(&r);
	}
}

/* mdadm's --update=no-bbl refuses while entries are recorded (nothing
 * written); force-no-bbl takes the log away with them; no-bbl on empty
 * logs takes them away. */
static void update_no_bbl(void)
{
	struct arr r;
	if (!mk(&r, &cfgs[4], 0x88))
		return;
	uint64_t s = r.doff + 500, len = 4;
	ref_write(&r.d[1], &s, &len, 1, 0);
	uint8_t *before = malloc(r.d[1].mem->size);
	CHECK(member_read(r.d[1].mem, before, r.d[1].mem->size, 0) == 0);
	char err[512] = "";
	struct uraid_array *a = NULL;
	int rc = asm_flags(&r, URAID_UPDATE_NO_BBL, &a, err, sizeof(err));
	CHECKF(rc == -EBUSY && strstr(err, "m1") && strstr(err, "force-no-bbl"), "%d: %s", rc, err);
	uint8_t *now = malloc(r.d[1].mem->size);
	CHECK(member_read(r.d[1].mem, now, r.d[1].mem->size, 0) == 0);
	CHECK(!memcmp(now, before, r.d[1].mem->size));
	for (int step = 0; step < 2; step++) {
		unsigned f = step ? URAID_UPDATE_NO_BBL : URAID_UPDATE_FORCE_NO_BBL;
		rc = asm_flags(&r, f, &a, err, sizeof(err));
		CHECKF(rc == 0, "%s", err);
		if (rc)
			break;
		CHECK(te_verify(a, r.shadow, r.size) == 0);
		uraid_drop(a); /* the update was written as it assembled */
		for (int m = 0; m < r.c->n; m++) {
			uint8_t sb[4096];
			CHECK(member_read(r.d[m].mem, sb, sizeof(sb), SB_AT * 512) == 0);
			bool gone = !(le(sb + F_FEATURE, 4) & 8) && !le(sb + F_BB_OFFSET, 4) &&
			            !le(sb + F_BB_SIZE, 2) && !sb[F_BB_SHIFT];
			/* step 0 (force) takes every log; step 1 finds none left */
			CHECKF(gone, "step %d: m%d still has a log", step, m);
		}
	}
	free(before);
	free(now);
	arr_free(&r);
}

/* For tests/integration/badblocks_mdvm.sh (URAID_BBL_EXPORT=DIR): member
 * files of a raid1 and a raid5 whose second write hit a write error on one
 * member through the fault wrapper, so uraid recorded a bad block there:
 * DIR/TAG_i (members), DIR/TAG.exp (the array's contents), DIR/TAG.bbl
 * ("MEMBER START LEN" of the entries expected in that member's log, from
 * the fault's range: raid1 exactly, raid5 whole 4 KiB units). */
static void export_for_kernel(void)
{
	const char *dir = getenv("URAID_BBL_EXPORT");
	if (!dir || !*dir)
		return;
	static const struct {
		const char *tag;
		int level, n, bad_member;
		uint64_t bad_at, bad_len; /* data-area sectors */
	} sets[] = {{"rt1", URAID_LEVEL_RAID1, 2, 1, 1000, 5},
	            {"rt5", URAID_LEVEL_RAID5, 3, 2, 3001, 9}};
	for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
		char paths[4][512], err[512] = "";
		const char *pp[4];
		for (int i = 0; i < sets[k].n; i++) {
			snprintf(paths[i], sizeof(paths[i]), "%s/%s_%d", dir, sets[k].tag, i);
			pp[i] = paths[i];
		}
		struct uraid_create_opts o;
		memset(&o, 0, sizeof(o));
		o.level = sets[k].level;
		o.raid_devices = sets[k].n;
		o.chunk_sectors = 128;
		o.member_bytes = 8u << 20;
		o.assume_clean = true; /* zero files are consistent */
		struct uraid_array *a = NULL;
		CHECKF(uraid_create(&o, pp, sets[k].n, URAID_NO_SYNC_THREAD, &a, err,
		                    sizeof(err)) == 0,
		       "%s: %s", sets[k].tag, err);
		if (!a)
			continue;
		uint64_t size = uraid_size(a), rs = 0xe470 + k;
		uint64_t doff = eng_of(a)->mem[0]->sb.data_offset;
		uint8_t *data = malloc(size);
		t_fill(&rs, data, size);
		CHECK(uraid_write(a, data, size, 0) == 0);
		CHECK(uraid_stop(a) == 0);
		/* again, new data, with a write error on one member */
		struct member *mm[4];
		for (int i = 0; i < sets[k].n; i++) {
			struct member *f = NULL;
			CHECK(member_open_file(pp[i], 0, 0, &mm[i], err, sizeof(err)) == 0);
			CHECK(member_fault_wrap(mm[i], &f) == 0);
			snprintf(f->name, sizeof(f->name), "%s", pp[i]);
			mm[i] = f;
		}
		struct member_fault_rule fr = {.op = MEMBER_OP_WRITE,
		                               .off = (doff + sets[k].bad_at) * 512,
		                               .len = sets[k].bad_len * 512,
		                               .error = EIO};
		CHECK(member_fault_add(mm[sets[k].bad_member], &fr) == 0);
		CHECKF(uraid_assemble_members(mm, sets[k].n, URAID_NO_SYNC_THREAD, &a, err,
		                              sizeof(err), NULL, 0) == 0,
		       "%s", err);
		t_fill(&rs, data, size);
		CHECK(uraid_write(a, data, size, 0) == 0);
		struct uraid_status st;
		uraid_status(a, &st);
		CHECK(st.failed == 0 && st.working == sets[k].n);
		CHECK(uraid_stop(a) == 0);
		char path[600];
		snprintf(path, sizeof(path), "%s/%s.exp", dir, sets[k].tag);
		FILE *f = fopen(path, "w");
		CHECK(f && fwrite(data, 1, size, f) == size);
		if (f)
			fclose(f);
		uint64_t u = sets[k].level == URAID_LEVEL_RAID1 ? 1 : 8;
		uint64_t s0 = sets[k].bad_at / u * u;
		uint64_t s1 = (sets[k].bad_at + sets[k].bad_len + u - 1) / u * u;
		snprintf(path, sizeof(path), "%s/%s.bbl", dir, sets[k].tag);
		f = fopen(path, "w");
		CHECK(f != NULL);
		if (f) {
			fprintf(f, "%d %llu %llu\n", sets[k].bad_member,
			        (unsigned long long)(doff + s0), (unsigned long long)(s1 - s0));
			fclose(f);
		}
		free(data);
	}
}

TEST_MAIN(T(reads_avoid), T(write_error_records), T(write_error_everywhere), T(good_write_clears),
          T(reads_rewrite), T(no_room_fails), T(corrupt_refused), T(update_no_bbl),
          T(export_for_kernel))
