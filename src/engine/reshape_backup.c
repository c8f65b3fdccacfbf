/* In-place reshapes with mdadm's backup of the critical section
 * (engine/reshape_backup.h). The file is laid out as mdadm's
 * reshape_open_backup_file and grow_backup leave it: the backup superblock
 * at byte 0, the section's array data from sector 8 (devstart), the file
 * section + 8 sectors long; so mdadm --assemble --backup-file restores a
 * reshape uraid started, and uraid one mdadm started. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/core/reshape.h"
#include "engine/md.h"
#include "engine/reshape_backup.h"
#include "engine/sync/sync.h"
#include "member/member.h"
#include "util/errmsg.h"

/* Grow_restart's window: the superblocks' utime within 10 minutes before
 * and 2 hours after the backup's mtime. */
#define BACKUP_BEFORE_S (10 * 60)
#define BACKUP_AFTER_S  (2 * 60 * 60)

/* mdadm's check_env: the variable set to a number that is 1. */
static bool allow_old(void)
{
	const char *v = getenv("MDADM_GROW_ALLOW_OLD");
	return v && atoi(v) == 1;
}

static uint32_t dd(const struct layout_geometry *g)
{
	return (uint32_t)(g->raid_disks - (g->level == URAID_LEVEL_RAID6 ? 2 : 1));
}

int eng_backup_check(const struct uraid_reshape_opts *o, char *err, size_t errlen)
{
	if (o->backup_member || !o->backup_file)
		return 0;
	if (!o->backup_file[0])
		return errmsg(err, errlen, -EINVAL, "empty --backup-file name");
	if (access(o->backup_file, F_OK) == 0)
		return errmsg(err, errlen, -EEXIST, "cannot create backup file %s: File exists",
		              o->backup_file);
	return 0;
}

/* The critical section: the first multiple of mdadm's backup unit
 * (whole old and new stripes, and whole units of the move) past which the
 * move is safe with the position recorded (core/reshape.h's rule). */
static uint64_t critical_end(const struct eng_array *a)
{
	const struct eng_reshape *rs = a->rs;
	uint64_t w = md_reshape_unit(&rs->r);
	uint64_t ow = (uint64_t)dd(&rs->geo[0]) * rs->geo[0].chunk_sectors;
	uint64_t unit = md_backup_blocks(1, (uint32_t)ow, 1, (uint32_t)w);
	uint64_t end = unit;
	while (end < rs->start && !eng_reshape_move_safe(a, end, w, end))
		end += unit;
	return end < rs->start ? end : rs->start;
}

static int bsb_write(struct member *m, struct md_backup_sb *bsb)
{
	uint8_t blk[MD_BACKUP_SB_BYTES];
	bsb->mtime = (uint64_t)time(NULL);
	md_backup_encode(bsb, blk);
	int rc = member_write(m, blk, sizeof(blk), 0, 0);
	return rc < 0 ? rc : member_flush(m);
}

int eng_backup_save(struct eng_array *a, const struct uraid_reshape_opts *o, struct eng_backup *b,
                    char *err, size_t errlen)
{
	memset(b, 0, sizeof(*b));
	uint64_t end = critical_end(a);
	uint64_t bytes = (end + MD_BACKUP_FILE_DATA) * 512;
	char e[256];
	if (o->backup_member) {
		b->m = o->backup_member;
		if (b->m->size < bytes)
			return errmsg(
			    err, errlen, -ENOSPC,
			    "the backup holds %llu bytes, the critical section needs %llu",
			    (unsigned long long)b->m->size, (unsigned long long)bytes);
	} else {
		int rc =
		    member_open_file(o->backup_file, MEMBER_CREATE, bytes, &b->m, e, sizeof(e));
		if (rc < 0)
			return errmsg(err, errlen, rc, "cannot create backup file %s: %s",
			              o->backup_file, strerror(-rc)); /* mdadm's words */
		b->owned = true;
	}
	uint8_t *buf = malloc(end * 512);
	if (!buf) {
		eng_backup_done(b);
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	}
	/* What the array holds there now, in the old layout (reconstructed
	 * where a member cannot serve), as mdadm's save_stripes reads it. */
	eng_reshape_view(a, 0);
	int rc = a->pers->read(a, buf, 0, end);
	eng_reshape_view(a, -1);
	if (rc == 0)
		rc = member_write(b->m, buf, end * 512, MD_BACKUP_FILE_DATA * 512, 0);
	free(buf);
	if (rc == 0) {
		/* mdadm's reshape_array / grow_backup: devstart2 the backup's
		 * size, "-1" with one section. */
		b->bsb.version = 1;
		md_backup_uuid(&a->ref, b->bsb.set_uuid);
		b->bsb.devstart = MD_BACKUP_FILE_DATA;
		b->bsb.arraystart = 0;
		b->bsb.length = end;
		b->bsb.devstart2 = end;
		rc = bsb_write(b->m, &b->bsb);
	}
	if (rc < 0) {
		eng_backup_done(b);
		return errmsg(err, errlen, rc, "writing the backup of the critical section failed");
	}
	return 0;
}

int eng_backup_critical(struct eng_array *a, struct eng_backup *b, char *err, size_t errlen)
{
	struct eng_reshape *rs = a->rs;
	uint64_t end = b->bsb.arraystart + b->bsb.length;
	uint64_t w = md_reshape_unit(&rs->r), lim = SYNC_BATCH_BYTES / 512;
	lim -= lim % w;
	/* Under the lock all along: no request lands in the section between
	 * the backup and the position recorded past it. */
	for (uint64_t pos = rs->r.position; pos < end;) {
		uint64_t n = end - pos < lim ? end - pos : lim;
		int rc = a->pers->reshape(a, pos, n);
		if (rc < 0) {
			eng_backup_done(b);
			return errmsg(err, errlen, rc,
			              "moving the critical section failed at sector %llu (the "
			              "backup file keeps it)",
			              (unsigned long long)pos);
		}
		rs->r.position = pos + n;
		pos += n;
	}
	int rc = eng_reshape_checkpoint(a);
	if (rc < 0) {
		eng_backup_done(b);
		return errmsg(err, errlen, rc,
		              "recording the reshape past the critical section failed (the backup "
		              "file keeps it)");
	}
	/* mdadm's forget_backup: the section is no longer needed. */
	b->bsb.arraystart = 0;
	b->bsb.length = 0;
	rc = bsb_write(b->m, &b->bsb);
	eng_backup_done(b);
	if (rc < 0)
		fprintf(stderr,
		        "uraid: warning: clearing the backup file failed (error %d); it is "
		        "no longer needed\n",
		        rc);
	return 0;
}

void eng_backup_done(struct eng_backup *b)
{
	if (b->m && b->owned)
		member_close(b->m);
	b->m = NULL;
}

int eng_backup_check_restore(struct eng_array *a, struct member *m, struct md_backup_sb *bsb,
                             bool *needed, char *err, size_t errlen)
{
	const struct md_reshape *r = &a->rs->r;
	uint8_t blk[MD_BACKUP_SB_BYTES], dup[MD_BACKUP_SB_BYTES];
	char e[160];
	*needed = false;
	int rc = member_read(m, blk, sizeof(blk), 0);
	if (rc < 0)
		return errmsg(err, errlen, rc, "backup file %s: cannot read it", m->name);
	rc = md_backup_decode(blk, bsb, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc == -ENOENT ? -ENOENT : -EINVAL, "backup file %s: %s",
		              m->name, e);
	uint8_t uuid[16];
	md_backup_uuid(&a->ref, uuid);
	if (memcmp(uuid, bsb->set_uuid, 16)) {
		char u1[40], u2[40];
		md_uuid_format(bsb->set_uuid, u1);
		md_uuid_format(uuid, u2);
		return errmsg(err, errlen, -EINVAL,
		              "backup file %s belongs to another array (uuid %s in mdadm's byte "
		              "order, this array %s)",
		              m->name, u1, u2);
	}
	/* The sections it holds: the first, and "-2"'s second at devstart +
	 * devstart2 (mdadm's sliding backup). None: nothing to restore. */
	struct {
		uint64_t dev, start, len;
	} sec[2] = {{bsb->devstart, bsb->arraystart, bsb->length},
	            {bsb->devstart + bsb->devstart2, bsb->arraystart2, bsb->length2}};
	int nsec = bsb->version == 2 ? 2 : 1;
	bool any = false;
	for (int i = 0; i < nsec; i++)
		any = any || sec[i].len;
	if (!any)
		return 0;
	/* 1.x: seconds in the low 40 bits (mdadm's getinfo_super1). */
	uint64_t ut = a->ref.utime & ((1ull << 40) - 1), mt = bsb->mtime;
	if ((ut > mt + BACKUP_AFTER_S || ut + BACKUP_BEFORE_S < mt) && !allow_old())
		return errmsg(err, errlen, -EINVAL,
		              "too-old timestamp on backup-metadata on %s (written at %llu, the "
		              "superblocks at %llu): if you think it is safe, set "
		              "MDADM_GROW_ALLOW_OLD=1 in the environment, as mdadm asks",
		              m->name, (unsigned long long)mt, (unsigned long long)ut);
	if (ut > mt + BACKUP_AFTER_S || ut + BACKUP_BEFORE_S < mt)
		fprintf(stderr,
		        "uraid: accepting backup with timestamp %llu for array with timestamp %llu "
		        "(MDADM_GROW_ALLOW_OLD=1)\n",
		        (unsigned long long)mt, (unsigned long long)ut);
	/* Grow_restart: the duplicate 4 KiB before the data agrees. */
	if (bsb->devstart < 8 || member_read(m, dup, sizeof(dup), (bsb->devstart - 8) * 512) < 0 ||
	    memcmp(dup, blk, bsb->version == 2 ? 100 : 68))
		return errmsg(err, errlen, -EINVAL,
		              "backup file %s: the backup superblock before its data (sector %llu) "
		              "does not match",
		              m->name, (unsigned long long)(bsb->devstart ? bsb->devstart - 8 : 0));
	/* Grow_restart's "not needed": forwards every section ends before
	 * the position, backwards every one starts at or past it. */
	bool need = false;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int i = 0; i < nsec; i++) {
		if (!sec[i].len)
			continue;
		need = need || (r->backwards ? sec[i].start < r->position
		                             : sec[i].start + sec[i].len >= r->position);
		lo = sec[i].start < lo ? sec[i].start : lo;
		hi = sec[i].start + sec[i].len > hi ? sec[i].start + sec[i].len : hi;
	}
	if (!need)
		return 0;
	/* What it holds must be where the move stopped: restored in the
	 * new layout, the position then past it (a section away from the
	 * position would be written over rows the old layout still reads). */
	if (r->position < lo || r->position > hi)
		return errmsg(err, errlen, -EINVAL,
		              "backup file %s holds sectors %llu to %llu, and the reshape stopped "
		              "at %llu, outside them",
		              m->name, (unsigned long long)lo, (unsigned long long)hi,
		              (unsigned long long)r->position);
	uint64_t nw = (uint64_t)dd(&a->rs->geo[1]) * a->rs->geo[1].chunk_sectors;
	for (int i = 0; i < nsec; i++) {
		if (!sec[i].len)
			continue;
		if (sec[i].start % nw || sec[i].len % nw ||
		    sec[i].start + sec[i].len > a->rs->size[1])
			return errmsg(
			    err, errlen, -EINVAL,
			    "backup file %s: its section (sectors %llu + %llu) is not whole "
			    "stripes of the new geometry inside the array",
			    m->name, (unsigned long long)sec[i].start,
			    (unsigned long long)sec[i].len);
		if ((sec[i].dev + sec[i].len) * 512 > m->size)
			return errmsg(err, errlen, -EINVAL,
			              "backup file %s is shorter than the section it names (%llu "
			              "sectors from sector %llu)",
			              m->name, (unsigned long long)sec[i].len,
			              (unsigned long long)sec[i].dev);
	}
	*needed = true;
	return 0;
}

int eng_backup_restore(struct eng_array *a, char *err, size_t errlen)
{
	struct eng_reshape *rs = a->rs;
	struct member *m = rs->restore;
	struct md_backup_sb *bsb = &rs->restore_bsb;
	uint64_t lim = SYNC_BATCH_BYTES / 512;
	uint64_t w = (uint64_t)dd(&rs->geo[1]) * rs->geo[1].chunk_sectors;
	lim -= lim % w;
	if (!lim)
		lim = w;
	uint8_t *buf = malloc(lim * 512);
	if (!buf)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	/* Grow_restart: each section written in the new layout (whole
	 * stripes, parity from the data), then the position past them. */
	int rc = 0;
	struct eng_req rq = {.q = a->ioq};
	uint64_t sdev[2] = {bsb->devstart, bsb->devstart + bsb->devstart2};
	uint64_t sst[2] = {bsb->arraystart, bsb->arraystart2};
	uint64_t slen[2] = {bsb->length, bsb->version == 2 ? bsb->length2 : 0};
	uint64_t pos = rs->r.position;
	bool first = true;
	for (int i = 0; i < 2 && rc == 0; i++) {
		for (uint64_t done = 0; done < slen[i] && rc == 0;) {
			uint64_t n = slen[i] - done < lim ? slen[i] - done : lim;
			rc = member_read(m, buf, n * 512, (sdev[i] + done) * 512);
			if (rc == 0) {
				eng_reshape_view(a, 1);
				rc = a->pers->write(a, &rq, buf, sst[i] + done, n);
				eng_reshape_view(a, -1);
			}
			done += n;
		}
		if (!slen[i])
			continue;
		uint64_t p = rs->r.backwards ? sst[i] : sst[i] + slen[i];
		if (first || (rs->r.backwards ? p < pos : p > pos))
			pos = p;
		first = false;
	}
	free(buf);
	if (rc < 0)
		return errmsg(err, errlen, rc, "restoring the critical section from %s failed",
		              m->name);
	rs->r.position = pos;
	rc = eng_reshape_checkpoint(a);
	if (rc < 0)
		return errmsg(err, errlen, rc,
		              "recording the position after the restored critical section failed");
	fprintf(stderr, "uraid: restored the critical section (sectors %llu + %llu%s) from %s\n",
	        (unsigned long long)(slen[0] ? sst[0] : sst[1]),
	        (unsigned long long)(slen[0] ? slen[0] : slen[1]),
	        slen[0] && slen[1] ? " and a second section" : "", m->name);
	/* As mdadm's monitor does once the move is past it: forgotten, so a
	 * later restart does not write it over newer data. */
	if (!m->readonly) {
		bsb->arraystart = 0;
		bsb->length = 0;
		bsb->arraystart2 = 0;
		bsb->length2 = 0;
		if (bsb_write(m, bsb) < 0)
			fprintf(stderr, "uraid: warning: clearing the backup file %s failed\n",
			        m->name);
	}
	rs->restore = NULL;
	pthread_cond_broadcast(&a->cond); /* the sync thread waits for it */
	return 0;
}
