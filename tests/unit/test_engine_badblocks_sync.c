/* md's bad block log in sync work (engine/mirror/sync.c,
 * engine/raid456/sync.c): check and repair around recorded ranges, and a
 * recovery that meets sectors no source holds, against a model of md's
 * rules written here (see test_engine_badblocks.c for the read rules).
 * Fixed seeds. */
#include "engine/core/engine.h"
#include "test_bbl_arrays.h"
#include "test_bbl_ref.h"
#include "test_engine_common.h"

/* Sync with recorded ranges on m1 (garbage under them). check and repair
 * fail no member and leave the data as it was (md skips a member's bad
 * blocks in a sync). Then slot 0 fails and a spare takes it: recovery runs
 * to the end; where no other copy or no redundancy holds the data, the
 * spare's log records it (md's raid1/raid10 fix_sync_read_error, raid5's
 * handle_failed_sync) and reads there answer -EIO, everything else reads
 * the shadow. Without check/repair first and with: raid4/5/6's repair
 * rewrites the ranges, so nothing is lost afterwards. */
static void sync_around(void)
{
	static bool bad[8][MSEC];
	for (int checked = 0; checked < 2; checked++)
		for (size_t ci = 0; ci + 1 < NCFG; ci++) { /* not raid0 */
			struct arr r;
			if (!mk(&r, &cfgs[ci], 0x51 + ci))
				continue;
			memset(bad, 0, sizeof(bad));
			uint64_t s[2] = {r.doff + 300, r.doff + 1203}, len[2] = {8, 5};
			for (int i = 0; i < 2; i++) {
				uint8_t junk[8 * 512];
				memset(junk, 0xd7, sizeof(junk));
				CHECK(member_write(r.d[1].mem, junk, len[i] * 512, s[i] * 512, 0) ==
				      0);
				for (uint64_t x = s[i] - r.doff; x < s[i] - r.doff + len[i]; x++)
					bad[1][x] = true;
			}
			ref_write(&r.d[1], s, len, 2, 0);
			struct uraid_array *a = asm_ok(&r);
			if (!a) {
				arr_free(&r);
				continue;
			}
			char err[512] = "";
			for (int act = 0; checked && act < 2; act++) {
				CHECK(uraid_sync_action(a,
				                        act ? URAID_SYNC_REPAIR : URAID_SYNC_CHECK,
				                        err, sizeof(err)) == 0);
				CHECK(te_sync_all(a) == 0);
				struct uraid_status st;
				uraid_status(a, &st);
				CHECKF(st.failed == 0, "%s: a member failed in sync", r.c->name);
				CHECKF(te_verify(a, r.shadow, r.size) == 0, "%s: data after sync",
				       r.c->name);
			}
			if (checked && parity(&r)) /* repair rewrote m1's ranges */
				memset(bad, 0, sizeof(bad));
			struct te_disk spare;
			memset(&spare, 0, sizeof(spare));
			te_disk_open(&spare, "sp", 3 * MB);
			CHECK(uraid_fail(a, "#0", err, sizeof(err)) == 0);
			CHECKF(uraid_add_member(a, te_borrow(&spare), err, sizeof(err)) == 0, "%s",
			       err);
			int rc = te_sync_all(a);
			struct uraid_status st;
			uraid_status(a, &st);
			CHECKF(rc == 0 && st.working == r.c->n && st.sync_action == URAID_SYNC_IDLE,
			       "%s%s: recovery rc %d, %d working", r.c->name,
			       checked ? " after repair" : "", rc, st.working);
			/* what the spare cannot get: slot 0's sectors whose every
			 * other source is bad (mirrors: the copies; parity: a 4 KiB
			 * unit of the row with more bad members than parity, slot 0
			 * counting as one) */
			static bool lost[MSEC];
			memset(lost, 0, sizeof(lost));
			int nlost = 0;
			for (uint64_t lsec = 0; lsec < r.size / 512; lsec++) {
				struct layout_loc loc, l0 = {.role = -1};
				uint64_t l;
				bool ok = false;
				if (parity(&r)) {
					r.ops->map(&r.g, lsec, 0, &loc, &l);
					uint64_t u = loc.sector / 8 * 8;
					int nb = 1; /* slot 0 itself */
					for (uint64_t x = u; x < u + 8; x++)
						if (bad[1][x]) {
							nb++;
							break;
						}
					ok = nb <= (r.c->level == URAID_LEVEL_RAID6 ? 2 : 1);
					if (loc.role == 0 && !ok && !lost[loc.sector])
						lost[loc.sector] = true, nlost++;
					continue;
				}
				for (int c = 0; c < r.ops->ncopies(&r.g); c++) {
					r.ops->map(&r.g, lsec, c, &loc, &l);
					if (loc.role == 0)
						l0 = loc;
					else
						ok |= !bad[loc.role][loc.sector];
				}
				if (!ok && l0.role == 0 && !lost[l0.sector])
					lost[l0.sector] = true, nlost++;
			}
			/* reads: -EIO exactly where a lost sector is, else the shadow */
			int wrong = 0, eio = 0, want_eio = 0;
			for (uint64_t off = 0; off < r.size; off += 512) {
				bool gone = true;
				struct layout_loc loc;
				uint64_t l;
				for (int c = 0; c < r.ops->ncopies(&r.g) && gone; c++) {
					r.ops->map(&r.g, off / 512, c, &loc, &l);
					gone = parity(&r)
					           ? (loc.role == 0 && lost[loc.sector]) ||
					                 (loc.role == 1 && bad[1][loc.sector] &&
					                  lost[loc.sector / 8 * 8] |
					                      lost[loc.sector / 8 * 8 + 7])
					           : (loc.role == 0 ? lost[loc.sector]
					                            : bad[loc.role][loc.sector]);
				}
				uint8_t got[512];
				rc = uraid_read(a, got, 512, off);
				want_eio += gone;
				if (gone)
					eio += rc == -EIO;
				else
					wrong += rc != 0 || memcmp(got, r.shadow + off, 512);
			}
			CHECKF(wrong == 0 && eio == want_eio, "%s%s: %d wrong, %d/%d EIO",
			       r.c->name, checked ? " after repair" : "", wrong, eio, want_eio);
			CHECK(uraid_stop(a) == 0);
			/* the spare's log on disk: exactly the lost sectors */
			struct ref_log rl;
			ref_read(&spare, &rl);
			static bool got[MSEC];
			memset(got, 0, sizeof(got));
			for (int i = 0; i < rl.n; i++)
				for (uint64_t x = rl.s[i]; x < rl.s[i] + rl.len[i]; x++)
					if (x >= r.doff && x - r.doff < MSEC)
						got[x - r.doff] = true;
			CHECKF(!memcmp(got, lost, sizeof(lost)) && rl.feature == (nlost > 0),
			       "%s%s: the spare's log is not the %d lost sectors", r.c->name,
			       checked ? " after repair" : "", nlost);
			printf("# %s%s: %d sectors no source had, %d EIO sectors\n", r.c->name,
			       checked ? " after repair" : "", nlost, want_eio);
			te_disk_close(&spare);
			arr_free(&r);
		}
}

TEST_MAIN(T(sync_around))
