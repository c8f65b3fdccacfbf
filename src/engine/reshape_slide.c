/* mdadm's sliding backup (engine/reshape_backup.h): an in-place reshape
 * (0.90, or 1.x without room or with --backup-file given) that keeps the
 * data members (a chunk or layout change) or cuts them (a shrink, backwards
 * from the end) cannot move a stripe without overwriting old rows a crash
 * would still read. So, as mdadm's child_monitor does it with the kernel:
 *
 *   same data members: every window of stripes (mdadm's backup_blocks,
 *   whole old and new stripes, doubled toward 16 MiB while under 1/32 of
 *   a member) is read in the old layout, written to one of the file's two
 *   sections (alternating: section 1 at devstart, section 2 at devstart +
 *   devstart2; the superblock "md_backup_data-2" once the second is used),
 *   the backup superblock recording it written and flushed; then the
 *   window moved, the members flushed and reshape_position recorded past
 *   it; then the section forgotten (mdadm's forget_backup), all under the
 *   array lock, so no request lands in a window whose backup is live;
 *
 *   fewer data members: the move runs backwards as usual until it is no
 *   longer safe (core/reshape.h's rule), near sector 0; the rest, mdadm's
 *   critical section, is one such window.
 *
 * A cut anywhere leaves the superblocks' position either past the window
 * (the section then restores what is already there) or at its start with
 * the section durable or not yet recorded (the old rows then untouched): so
 * assembly with the file (uraid's or mdadm's Grow_restart) restores the
 * sections the position lies in and goes on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/core/reshape.h"
#include "engine/md.h"
#include "engine/reshape_backup.h"
#include "member/member.h"
#include "util/errmsg.h"

bool eng_slide_kind(const struct md_reshape *r)
{
	int l = (int)r->old.level;
	return r->active && !r->offset_delta && l == (int)r->new.level &&
	       (l == URAID_LEVEL_RAID4 || l == URAID_LEVEL_RAID5 || l == URAID_LEVEL_RAID6) &&
	       md_reshape_data_disks(&r->new) <= md_reshape_data_disks(&r->old);
}

/* mdadm's compute_backup_blocks: whole old and new stripes. */
static uint64_t slide_unit(const struct eng_reshape *rs)
{
	return md_backup_blocks(rs->r.old.chunk_sectors, md_reshape_data_disks(&rs->r.old),
	                        rs->r.new.chunk_sectors, md_reshape_data_disks(&rs->r.new));
}

/* The window: mdadm's reshape_array grows backup_blocks for the same data
 * members ("try for 16 megabytes"); a shrink backs up its critical section
 * once: mdadm's backup_blocks, or more where core/reshape.h's rule finds
 * the move unsafe further up. */
static uint64_t slide_blocks(const struct eng_array *a)
{
	const struct eng_reshape *rs = a->rs;
	uint64_t b = slide_unit(rs);
	if (!b)
		return 0;
	if (!rs->r.backwards) {
		while (b * 32 < a->geo.dev_sectors && b < 16 * 1024 * 2)
			b *= 2;
		return b;
	}
	uint64_t w = md_reshape_unit(&rs->r), p = w;
	while (p <= rs->start && !eng_reshape_move_safe(a, p - w, w, p))
		p += w;
	return p - w > b ? p - w : b;
}

static int slide_bsb_write(struct eng_reshape *rs)
{
	uint8_t blk[MD_BACKUP_SB_BYTES];
	rs->slide_bsb.mtime = (uint64_t)time(NULL);
	md_backup_encode(&rs->slide_bsb, blk);
	int rc = member_write(rs->slide, blk, sizeof(blk), 0, 0);
	return rc < 0 ? rc : member_flush(rs->slide);
}

/* Section `part` of the backup superblock set to [lo, lo + n) (n 0:
 * forgotten). */
static void slide_section(struct md_backup_sb *b, int part, uint64_t lo, uint64_t n)
{
	if (part) {
		if (n)
			b->version = 2; /* mdadm: "-2" once the second section is used */
		b->arraystart2 = n ? lo : 0;
		b->length2 = n;
	} else {
		b->arraystart = n ? lo : 0;
		b->length = n;
	}
}

/* The live section forgotten (mdadm's forget_backup), flushed. */
static int slide_forget(struct eng_reshape *rs)
{
	if (rs->slide_live < 0)
		return 0;
	slide_section(&rs->slide_bsb, rs->slide_live, 0, 0);
	rs->slide_live = -1;
	return slide_bsb_write(rs);
}

/* Array sectors [lo, lo + n) as view v holds them to section `part`, the
 * superblock naming it (and nothing else) written and flushed. */
static int slide_save(struct eng_array *a, int v, int part, uint64_t lo, uint64_t n)
{
	struct eng_reshape *rs = a->rs;
	struct md_backup_sb *b = &rs->slide_bsb;
	uint64_t dev = b->devstart + (part ? b->devstart2 : 0);
	/* One section only: the live one is forgotten before its data is
	 * written over. */
	int rc = rs->slide_live == part ? slide_forget(rs) : 0;
	if (rc < 0)
		return rc;
	uint8_t *buf = malloc(n * 512);
	if (!buf)
		return -ENOMEM;
	/* mdadm's grow_backup: what the array holds there (reconstructed
	 * where a member cannot serve), then the superblock naming it. */
	eng_reshape_view(a, v);
	rc = a->pers->read(a, buf, lo, n);
	eng_reshape_view(a, -1);
	if (rc == 0)
		rc = member_write(rs->slide, buf, n * 512, dev * 512, 0);
	free(buf);
	/* The data durable before the superblock names it: a cache may
	 * keep the later write and lose the earlier. */
	if (rc == 0)
		rc = member_flush(rs->slide);
	if (rc < 0)
		return rc;
	/* The other section (the window before, already moved) is
	 * forgotten in the same block: one of the two is live throughout,
	 * as mdadm's Grow_restart wants one covering the position. */
	if (rs->slide_live >= 0)
		slide_section(b, rs->slide_live, 0, 0);
	slide_section(b, part, lo, n);
	rs->slide_live = part;
	return slide_bsb_write(rs);
}

/* One window: backed up, moved, the position recorded past it
 * (engine/sync/reshape.c calls it with the lock held). Forwards its
 * section stays live until the next window's replaces it, or a request
 * writes there (eng_slide_written); a shrink's is forgotten at once (the
 * position is then 0). */
static int slide_window(struct eng_array *a, uint64_t *done)
{
	struct eng_reshape *rs = a->rs;
	bool back = rs->r.backwards;
	uint64_t pos = rs->r.position, lo, hi;
	*done = 0;
	int rc = rs->safe != pos ? eng_reshape_checkpoint(a) : 0;
	if (rc < 0)
		return rc;
	if (back) {
		lo = 0;
		hi = pos;
		if (hi > rs->slide_blocks) {
			fprintf(
			    stderr,
			    "uraid: reshape cannot go on safely at sector %llu: the critical "
			    "section (%llu sectors) is more than the backup file holds (%llu)\n",
			    (unsigned long long)pos, (unsigned long long)hi,
			    (unsigned long long)rs->slide_blocks);
			return -ENOSPC;
		}
	} else {
		lo = pos;
		hi = rs->size[1] - pos < rs->slide_blocks ? rs->size[1] : pos + rs->slide_blocks;
	}
	if (hi <= lo)
		return 0;
	uint64_t n = hi - lo;
	int part = rs->slide_part;
	rc = slide_save(a, 0, part, lo, n);
	if (rc < 0) {
		fprintf(stderr,
		        "uraid: writing the backup of sectors %llu + %llu failed (error %d)\n",
		        (unsigned long long)lo, (unsigned long long)n, rc);
		return rc;
	}
	/* The window moved in place and recorded past. */
	rc = a->pers->reshape(a, lo, n);
	if (rc < 0)
		return rc;
	rs->r.position = back ? lo : hi;
	rc = eng_reshape_checkpoint(a);
	if (rc == 0 && back)
		rc = slide_forget(rs);
	if (rc < 0)
		return rc;
	rs->slide_part = rs->slide_parts > 1 ? !part : 0;
	*done = n;
	return 0;
}

int eng_slide_written(struct eng_array *a, uint64_t lsec, uint64_t n)
{
	struct eng_reshape *rs = a->rs;
	if (!rs->slide || rs->slide_live < 0)
		return 0;
	const struct md_backup_sb *b = &rs->slide_bsb;
	uint64_t lo = rs->slide_live ? b->arraystart2 : b->arraystart;
	uint64_t len = rs->slide_live ? b->length2 : b->length;
	/* A write into the moved window its live section holds: the section
	 * would restore what it overwrites. */
	if (lsec >= lo + len || lsec + n <= lo)
		return 0;
	return slide_forget(rs);
}

int eng_slide_stop(struct eng_array *a)
{
	struct eng_reshape *rs = a->rs;
	if (!rs || !rs->slide || rs->r.backwards)
		return 0;
	uint64_t pos = rs->r.position;
	if (rs->slide_live >= 0)
		return slide_bsb_write(rs); /* its time, the superblocks' */
	if (!pos || pos >= rs->size[1])
		return 0;
	/* mdadm's Grow_restart wants a section covering the position of a
	 * reshape that keeps the data members: the last window, as the new
	 * layout holds it now (restoring it writes what is there). */
	uint64_t n = pos < rs->slide_blocks ? pos : rs->slide_blocks;
	uint64_t unit = slide_unit(rs);
	if (unit)
		n -= n % unit;
	return n ? slide_save(a, 1, rs->slide_part, pos - n, n) : 0;
}

/* rs's sliding backup on m, windows of `blocks` sectors, `parts` sections;
 * its superblock fresh (nothing held). */
static int slide_set(struct eng_array *a, struct member *m, bool owned, uint64_t blocks, int parts)
{
	struct eng_reshape *rs = a->rs;
	rs->slide = m;
	rs->slide_owned = owned;
	rs->slide_blocks = blocks;
	rs->slide_parts = parts;
	rs->slide_part = 0;
	rs->slide_live = -1;
	memset(&rs->slide_bsb, 0, sizeof(rs->slide_bsb));
	rs->slide_bsb.version = 1;
	md_backup_uuid(&a->ref, rs->slide_bsb.set_uuid);
	rs->slide_bsb.devstart = MD_BACKUP_FILE_DATA;
	rs->slide_bsb.devstart2 = blocks;
	rs->window = slide_window;
	return 0;
}

int eng_slide_start(struct eng_array *a, const struct uraid_reshape_opts *o, char *err,
                    size_t errlen)
{
	struct eng_reshape *rs = a->rs;
	uint64_t blocks = slide_blocks(a);
	int parts = rs->r.backwards ? 1 : 2;
	uint64_t bytes = (MD_BACKUP_FILE_DATA + parts * blocks) * 512;
	struct member *m;
	char e[256];
	if (!blocks)
		return errmsg(err, errlen, -EINVAL, "no backup unit for this reshape");
	if (o->backup_member) {
		m = o->backup_member;
		if (m->size < bytes)
			return errmsg(err, errlen, -ENOSPC,
			              "the backup holds %llu bytes, the sliding backup needs %llu",
			              (unsigned long long)m->size, (unsigned long long)bytes);
	} else {
		int rc = member_open_file(o->backup_file, MEMBER_CREATE, bytes, &m, e, sizeof(e));
		if (rc < 0)
			return errmsg(err, errlen, rc, "cannot create backup file %s: %s",
			              o->backup_file, strerror(-rc)); /* mdadm's words */
	}
	slide_set(a, m, !o->backup_member, blocks, parts);
	int rc = slide_bsb_write(rs);
	if (rc < 0) {
		if (rs->slide_owned)
			member_close(m);
		rs->slide = NULL;
		rs->window = NULL;
		return errmsg(err, errlen, rc, "writing the backup file's superblock failed");
	}
	return 0;
}

int eng_slide_attach(struct eng_array *a, struct member *m, char *err, size_t errlen)
{
	struct eng_reshape *rs = a->rs;
	uint64_t blocks = slide_blocks(a), unit = slide_unit(rs);
	uint64_t cap =
	    m->size / 512 > MD_BACKUP_FILE_DATA ? m->size / 512 - MD_BACKUP_FILE_DATA : 0;
	int parts = rs->r.backwards ? 1 : 2;
	if (!blocks || !unit)
		return errmsg(err, errlen, -EINVAL, "no backup unit for this reshape");
	/* A file mdadm made holds one window and grows as it writes the
	 * second: uraid writes inside it, with smaller windows or one
	 * section. */
	if (parts == 2 && cap < 2 * blocks) {
		uint64_t half = cap / 2 - cap / 2 % unit;
		if (half >= unit)
			blocks = half;
		else {
			blocks = unit;
			parts = 1;
		}
	}
	if (cap < blocks)
		return errmsg(err, errlen, -ENOSPC,
		              "backup file %s holds %llu sectors of data, the reshape's window is "
		              "%llu",
		              m->name, (unsigned long long)cap, (unsigned long long)blocks);
	return slide_set(a, m, false, blocks, parts);
}

bool eng_slide_adopt(struct eng_array *a, struct member *m)
{
	eng_lock(a);
	bool took = a->rs && a->rs->slide == m;
	if (took)
		a->rs->slide_owned = true;
	eng_unlock(a);
	return took;
}
