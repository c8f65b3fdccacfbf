/* md's bad block log of each member (md.c's rdev->badblocks): loaded at
 * assembly, asked before any read of a member (util.c eng_role_readable),
 * grown when a write fails (slot.c eng_write_failed), shrunk by the writes
 * that succeed over a recorded range, and written back ahead of the
 * member's superblock (super.c), as md_update_sb writes the bad block page
 * with it. The on-disk form and the range list are meta/md_badblocks.c's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/engine.h"
#include "util/errmsg.h"

/* The superblock says "bad blocks recorded" exactly while there are some:
 * super_1_sync sets MD_FEATURE_BAD_BLOCKS only for a non-empty list. */
/* Page-aligned (O_DIRECT members), zeroed. */
static uint8_t *log_buf(size_t len)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, len))
		return NULL;
	memset(p, 0, len);
	return p;
}

static void feature_follows(struct eng_member *em)
{
	if (em->bbl.n > 0)
		em->sb.feature_map |= MD_FEATURE_BAD_BLOCKS;
	else
		em->sb.feature_map &= ~MD_FEATURE_BAD_BLOCKS;
}

int eng_bbl_load(struct eng_member *em, char *err, size_t errlen)
{
	char e[256];
	em->has_bbl = false;
	em->bbl_dirty = false;
	int rc = md_bbl_locate(&em->sb, em->m->size / 512, &em->bbl, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s", e);
	if (rc == 0) {
		/* md has nowhere to keep bad blocks for it (a write error fails
		 * it), and records none: a stray feature bit goes with the next
		 * superblock (a log of 0 sectors holds nothing). */
		em->sb.feature_map &= ~MD_FEATURE_BAD_BLOCKS;
		return 0;
	}
	em->has_bbl = true;
	if (!(em->sb.feature_map & MD_FEATURE_BAD_BLOCKS))
		return 0; /* md reads the log only when the bit says it holds entries */
	size_t len = (size_t)em->bbl.sectors * 512;
	uint8_t *buf = log_buf(len);
	if (!buf)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	rc = member_read(em->m, buf, len, em->bbl.sector * 512);
	if (rc < 0) {
		free(buf);
		return errmsg(err, errlen, rc, "cannot read its bad block log (sectors %llu-%llu)",
		              (unsigned long long)em->bbl.sector,
		              (unsigned long long)(em->bbl.sector + em->bbl.sectors - 1));
	}
	rc = md_bbl_decode(&em->bbl, buf, len, em->m->size / 512, e, sizeof(e));
	free(buf);
	if (rc < 0)
		return errmsg(err, errlen, rc, "corrupt %s", e);
	feature_follows(em);
	return 0;
}

bool eng_bbl_bad(const struct eng_member *em, uint64_t msec, uint64_t nsec, uint64_t *first,
                 uint64_t *n)
{
	if (em->bbl.n == 0 || nsec == 0)
		return false;
	uint64_t fb, bl;
	if (!md_bbl_find(&em->bbl, em->sb.data_offset + msec, nsec, &fb, &bl))
		return false;
	if (first)
		*first = fb - em->sb.data_offset;
	if (n)
		*n = bl;
	return true;
}

int eng_bbl_add(struct eng_member *em, uint64_t msec, uint64_t nsec)
{
	if (!em->has_bbl)
		return -ENODEV;
	int rc = md_bbl_add(&em->bbl, em->sb.data_offset + msec, nsec);
	if (rc == 1) {
		em->bbl_dirty = true;
		feature_follows(em);
	}
	return rc;
}

void eng_bbl_restore(struct eng_member *em, const struct md_bbl *l, bool dirty)
{
	em->bbl = *l;
	em->bbl_dirty = dirty;
	feature_follows(em);
}

void eng_bbl_written(struct eng_member *em, uint64_t msec, uint64_t nsec)
{
	if (em->bbl.n == 0 || em->write_error_seen)
		return;
	/* Only the data area: what md's clearing paths cover. */
	if (msec >= em->sb.data_size)
		return;
	if (nsec > em->sb.data_size - msec)
		nsec = em->sb.data_size - msec;
	/* md drops the range from memory (badblocks_clear) and the next
	 * superblock update carries the shorter log; a crash before that keeps
	 * the range recorded, which only costs a read from elsewhere. A clear
	 * that would overflow the log (a split) keeps it too. */
	if (md_bbl_clear(&em->bbl, em->sb.data_offset + msec, nsec) == 1) {
		em->bbl_dirty = true;
		feature_follows(em);
	}
}

void eng_bbl_batch_written(struct eng_array *a, const struct member_io *io, int n)
{
	bool any = false;
	for (int r = 0; r < a->geo.raid_disks && !any; r++)
		any = a->slot[r] >= 0 && a->mem[a->slot[r]]->bbl.n > 0;
	if (!any)
		return;
	for (int i = 0; i < n; i++) {
		if (io[i].op != MEMBER_OP_WRITE || !member_io_done(&io[i]))
			continue;
		for (int r = 0; r < a->geo.raid_disks; r++) {
			if (a->slot[r] < 0)
				continue;
			struct eng_member *em = a->mem[a->slot[r]];
			if (em->bbl.n == 0 || eng_data_member(em) != io[i].m)
				continue;
			uint64_t s = io[i].off / 512;
			if (s >= em->sb.data_offset)
				eng_bbl_written(em, s - em->sb.data_offset, io[i].len / 512);
			break;
		}
	}
}

int eng_bbl_store(struct eng_member *em)
{
	if (!em->has_bbl || !em->bbl_dirty)
		return 0;
	feature_follows(em);
	/* super_1_sync rebuilds the page only for a non-empty list: an empty
	 * one is said by the feature bit alone, the old entries stay unread. */
	if (em->bbl.n == 0) {
		em->bbl_dirty = false;
		return 0;
	}
	size_t len = (size_t)em->bbl.sectors * 512;
	uint8_t *buf = log_buf(len);
	if (!buf)
		return -ENOMEM;
	int rc = md_bbl_encode(&em->bbl, buf, len);
	if (rc == 0)
		rc = member_write(em->m, buf, len, em->bbl.sector * 512, MEMBER_FUA);
	free(buf);
	if (rc == 0)
		em->bbl_dirty = false;
	return rc;
}

void eng_bbl_remove(struct eng_member *em)
{
	/* mdadm's update_super1 "no-bbl"/"force-no-bbl": the three fields
	 * zeroed and the feature bit cleared; the log's sectors are left. */
	em->sb.bblog_offset = 0;
	em->sb.bblog_size = 0;
	em->sb.bblog_shift = 0;
	em->sb.feature_map &= ~MD_FEATURE_BAD_BLOCKS;
	memset(&em->bbl, 0, sizeof(em->bbl));
	em->has_bbl = false;
	em->bbl_dirty = false;
}
