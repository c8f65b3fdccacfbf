/* Recovery at assembly, as md's ppl_load / ppl_recover do it. Every
 * member's log is read from the start of its area while headers check
 * out, carry the array's signature and rising generations; the newest one
 * is what the crash may have left half written. For a dirty array, each of
 * its entries whose partial parity checks out gets its parity rewritten:
 * for each row, the partial parity XORed with the data the members now
 * hold in the modified chunks (a row with a modified chunk missing is left:
 * there is nothing to compute it from). Then every log starts afresh (md
 * writes an empty header at every start), and a dirty array whose logs
 * were all read and recovered something is clean: no resync. A read-only
 * assembly of a dirty array recovers into memory (ppl_log.c puts the
 * members behind copy-on-write views) and leaves logs and superblocks be.
 *
 * A header whose checksum fails ends the log (a torn write, as md takes
 * it). One whose checksum holds but whose contents md could not have
 * written (entries beyond the header, partial parity past the area, an
 * entry that leaves its stripe, a parity disk other than the member
 * holding the log) is refused with the member and the fault named, before
 * anything is written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ppl/ppl_int.h"
#include "engine/raid456/raid456.h"
#include "util/errmsg.h"

/* The newest unit of one log. */
struct newest {
	bool have;
	uint32_t at; /* sector of its header in the area */
	struct md_ppl_header h;
};

static int check_header(struct eng_array *a, int role, uint32_t at, const struct md_ppl_header *h,
                        uint32_t *pp_sectors, char *err, size_t errlen)
{
	struct eng_ppl *p = eng_ppl_of(a);
	const char *name = eng_ppl_member(a, role)->name;
	uint64_t chunk = a->geo.chunk_sectors, width = eng_stripe_width(a);
	struct md_ppl_limits lim = {.chunk_sectors = (uint32_t)chunk,
	                            .data_disks = (uint32_t)(a->geo.raid_disks - 1),
	                            .array_sectors = a->array_sectors};
	uint64_t pp = 0;
	for (uint32_t i = 0; i < h->entries_count; i++) {
		const struct md_ppl_entry *e = &h->entries[i];
		struct md_ppl_extent x;
		char e2[200];
		if (md_ppl_entry_extent(e, &lim, &x, e2, sizeof(e2)) < 0)
			return errmsg(err, errlen, -EINVAL,
			              "%s: PPL header at sector %u of its log, entry %u: %s", name,
			              at, i, e2);
		struct layout_stripe ls;
		a->ops->stripe(&a->geo, x.first / width, &ls);
		if (e->parity_disk != (uint32_t)role || ls.p_role != role)
			return errmsg(
			    err, errlen, -EINVAL,
			    "%s: PPL header at sector %u of its log, entry %u: parity_disk "
			    "%u, but the stripe at array sector %llu keeps its parity in "
			    "slot %d and this log belongs to slot %d",
			    name, at, i, e->parity_disk, (unsigned long long)x.first, ls.p_role,
			    role);
		pp += e->pp_size / 512;
	}
	if (at + MD_PPL_HEADER_SECTORS + pp > p->log[role].sectors)
		return errmsg(err, errlen, -EINVAL,
		              "%s: PPL header at sector %u of its log: its partial parity (%llu "
		              "sectors) runs past the end of the log (%u sectors)",
		              name, at, (unsigned long long)pp, p->log[role].sectors);
	*pp_sectors = (uint32_t)pp;
	return 0;
}

/* md's ppl_load_distributed walk: the newest valid header of role's log. */
static int scan(struct eng_array *a, int role, struct newest *out, uint8_t *blk, char *err,
                size_t errlen)
{
	struct eng_ppl *p = eng_ppl_of(a);
	const struct eng_ppl_log *l = &p->log[role];
	const char *name = eng_ppl_member(a, role)->name;
	struct md_ppl_header *h = malloc(sizeof(*h));
	if (!h)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	int rc = 0;
	out->have = false;
	uint32_t at = 0;
	while (at + MD_PPL_HEADER_SECTORS < l->sectors) {
		rc = eng_ppl_area_io(a, role, false, blk, at, MD_PPL_HEADER_SECTORS);
		if (rc < 0) {
			rc = errmsg(err, errlen, rc, "%s: reading its PPL at sector %u failed",
			            name, at);
			break;
		}
		char e[200];
		rc = md_ppl_decode(blk, h, e, sizeof(e));
		if (rc == -EILSEQ) {
			rc = 0; /* torn, or no header: the log ends */
			break;
		}
		if (rc < 0) {
			rc = errmsg(err, errlen, rc, "%s: PPL header at sector %u of its log: %s",
			            name, at, e);
			break;
		}
		/* Another array's log, or an older unit after the newest:
		 * the log ends there, as md reads it. */
		if (h->signature != p->signature ||
		    (out->have && out->h.generation > h->generation))
			break;
		uint32_t pp;
		rc = check_header(a, role, at, h, &pp, err, errlen);
		if (rc < 0)
			break;
		out->have = true;
		out->at = at;
		out->h = *h;
		at += MD_PPL_HEADER_SECTORS + pp;
	}
	free(h);
	return rc;
}

static void xor_into(uint8_t *dst, const uint8_t *src, size_t len)
{
	for (size_t i = 0; i < len; i++)
		dst[i] ^= src[i];
}

/* ppl_recover_entry: the parity of each row the entry covers, from its
 * partial parity (pp, NULL when none) and the modified chunks' data. */
static int recover_entry(struct eng_array *a, int role, const struct md_ppl_entry *e,
                         const uint8_t *pp, uint8_t *acc, uint8_t *tmp)
{
	uint64_t chunk = a->geo.chunk_sectors, width = eng_stripe_width(a);
	struct md_ppl_limits lim = {.chunk_sectors = (uint32_t)chunk,
	                            .data_disks = (uint32_t)(a->geo.raid_disks - 1),
	                            .array_sectors = a->array_sectors};
	struct md_ppl_extent x;
	if (md_ppl_entry_extent(e, &lim, &x, NULL, 0) < 0)
		return -EINVAL; /* checked by scan */
	uint64_t base = x.first / width * width;
	struct layout_stripe ls;
	a->ops->stripe(&a->geo, x.first / width, &ls);
	/* 4 KiB steps when the entry is 4 KiB aligned, else sectors. */
	uint64_t step = x.first % 8 == 0 && x.last % 8 == 0 ? 8 : 1;
	for (uint64_t i = 0; i < x.strip_sectors; i += step) {
		bool update = false;
		memset(acc, 0, step * 512);
		for (uint32_t d = 0; d < x.data_disks; d++) {
			uint64_t r = x.first + i + (uint64_t)d * chunk;
			if (r >= x.last)
				continue;
			update = true;
			int drole = ls.data_role[(r - base) / chunk];
			uint64_t msec = ls.sector + (r - base) % chunk;
			if (!eng_role_readable(a, drole, msec, step)) {
				update = false; /* a modified chunk is missing */
				break;
			}
			int rc = eng_member_io(a, drole, false, tmp, msec, step);
			if (rc < 0)
				return rc;
			xor_into(acc, tmp, step * 512);
		}
		if (!update)
			continue;
		if (pp)
			xor_into(acc, pp + i * 512, step * 512);
		uint64_t pmsec = ls.sector + (x.first - base) % chunk + i;
		int rc = eng_member_io(a, role, true, acc, pmsec, step);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Recover the newest unit of role's log; its partial parity is read and
 * checked entry by entry (a torn one is skipped and counted). */
static int recover_log(struct eng_array *a, int role, const struct newest *nw, char *err,
                       size_t errlen)
{
	struct eng_ppl *p = eng_ppl_of(a);
	const char *name = eng_ppl_member(a, role)->name;
	uint64_t chunk = a->geo.chunk_sectors;
	uint8_t *pp = eng_alloc(chunk * 512), *acc = eng_alloc(4096), *tmp = eng_alloc(4096);
	int rc = pp && acc && tmp ? 0 : -ENOMEM;
	uint64_t at = nw->at + MD_PPL_HEADER_SECTORS;
	for (uint32_t i = 0; i < nw->h.entries_count && rc == 0; i++) {
		const struct md_ppl_entry *e = &nw->h.entries[i];
		uint32_t n = e->pp_size / 512;
		if (n) {
			rc = eng_ppl_area_io(a, role, false, pp, at, n);
			if (rc < 0) {
				rc = errmsg(err, errlen, rc,
				            "%s: reading its partial parity failed", name);
				break;
			}
			at += n;
			if (md_ppl_checksum(pp, e->pp_size) != e->checksum) {
				p->mismatches++; /* md: skip it, the others still count */
				fprintf(stderr,
				        "uraid: %s: PPL entry %u (array sector %llu): its partial "
				        "parity fails its checksum: skipped; the array resyncs, as "
				        "md does\n",
				        name, i, (unsigned long long)e->data_sector);
				continue;
			}
		}
		rc = recover_entry(a, role, e, n ? pp : NULL, acc, tmp);
		if (rc < 0)
			rc = errmsg(
			    err, errlen, rc,
			    "recovering the stripe at array sector %llu from %s's PPL failed: "
			    "%s",
			    (unsigned long long)e->data_sector, name, strerror(-rc));
		else
			p->recovered++;
	}
	free(pp);
	free(acc);
	free(tmp);
	return rc;
}

int eng_ppl_recover(struct eng_array *a, char *err, size_t errlen)
{
	struct eng_ppl *p = eng_ppl_of(a);
	bool dirty = a->resync_offset != MD_RESYNC_NONE;
	if (a->readonly && !p->in_memory)
		return 0; /* clean: nothing to recover, nothing may be written */
	int rc = 0;
	if (dirty) {
		struct newest *nw = calloc((size_t)p->ndisks, sizeof(*nw));
		uint8_t *blk = eng_alloc(MD_PPL_HEADER_SIZE);
		if (!nw || !blk)
			rc = errmsg(err, errlen, -ENOMEM, "out of memory");
		/* Every log read and judged before anything is written. */
		for (int r = 0; r < p->ndisks && rc == 0; r++) {
			if (!p->log[r].m)
				continue;
			rc = scan(a, r, &nw[r], blk, err, errlen);
			if (rc == 0 && !nw[r].have) {
				p->mismatches++; /* md: no valid log on a member */
				fprintf(stderr,
				        "uraid: %s: its PPL holds no valid header (checksum or "
				        "signature wrong at the start of its log): not recovered "
				        "from; the array resyncs, as md does\n",
				        eng_ppl_member(a, r)->name);
			}
		}
		for (int r = 0; r < p->ndisks && rc == 0; r++)
			if (p->log[r].m && nw[r].have)
				rc = recover_log(a, r, &nw[r], err, errlen);
		free(nw);
		free(blk);
		if (rc < 0)
			return rc;
	}
	/* Read-only: the logs and superblocks stay as they are, for the
	 * next read-write assembly (or the kernel) to recover from. */
	if (a->readonly)
		return 0;
	for (int r = 0; r < p->ndisks; r++) {
		if (!p->log[r].m)
			continue;
		rc = eng_ppl_log_reset(a, r);
		if (rc < 0)
			return errmsg(err, errlen, rc, "%s: starting its PPL failed: %s",
			              eng_ppl_member(a, r)->name, strerror(-rc));
	}
	/* md: a dirty array whose recovery went through is clean. */
	if (dirty && a->resync_offset == 0 && p->recovered > 0 && p->mismatches == 0) {
		a->resync_offset = MD_RESYNC_NONE;
		p->marked_clean = true;
	}
	return 0;
}
