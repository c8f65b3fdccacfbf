/* /proc/mdstat's text for an array from its struct uraid_status, as the
 * kernel's md driver prints it (md_seq_show and the personalities' status
 * functions), so that whatever reads /proc/mdstat (mdadm, monitors,
 * node_exporter) reads uraid's arrays the same way. Pure formatting. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "layout/layout.h"
#include "uraid.h"

struct out {
	char *buf;
	size_t len, n;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(o->n < o->len ? o->buf + o->n : NULL, o->n < o->len ? o->len - o->n : 0,
	                  fmt, ap);
	va_end(ap);
	if (k > 0)
		o->n += (size_t)k;
}

/* md's personality names are the level names (layout/names.c); GEOM's
 * classes have none. */
const char *uraid_md_personality(int level)
{
	if (level == URAID_LEVEL_GMIRROR || level == URAID_LEVEL_GRAID3)
		return NULL;
	return level_name_or_null(level);
}

static const char *base(const char *p)
{
	const char *b = strrchr(p, '/');
	return b && b[1] ? b + 1 : p;
}

/* The device list: md prints the devices it holds newest first (the order
 * they joined, then the device number). Missing slots and members md would
 * not hold (left out at assembly, stale, inactive) are not listed. */
static void devices(struct out *o, const struct uraid_status *st)
{
	struct {
		uint32_t order, nr;
		int i; /* members[] index, -1 the journal */
	} d[URAID_STATUS_MAX_MEMBERS + 1];
	int n = 0;
	for (int i = 0; i < st->nmembers && i < URAID_STATUS_MAX_MEMBERS; i++) {
		const struct uraid_member_status *m = &st->members[i];
		if (m->state != URAID_MEMBER_MISSING && m->state != URAID_MEMBER_STALE &&
		    m->state != URAID_MEMBER_INACTIVE && !(m->flags & URAID_MEMBER_F_LEFT_OUT))
			d[n++] = (typeof(d[0])){m->order, m->dev_number, i};
	}
	/* a failed journal is listed (J)(F) while md still holds it */
	if (st->journal == 1 || (st->journal == 2 && st->journal_name[0] == '/'))
		d[n++] = (typeof(d[0])){0, st->journal_dev_number, -1};
	for (int a = 1; a < n; a++) /* insertion sort, descending */
		for (int b = a; b > 0 && (d[b].order > d[b - 1].order ||
		                          (d[b].order == d[b - 1].order && d[b].nr > d[b - 1].nr));
		     b--) {
			typeof(d[0]) t = d[b];
			d[b] = d[b - 1];
			d[b - 1] = t;
		}
	for (int k = 0; k < n; k++) {
		if (d[k].i < 0) {
			put(o, " %s[%u](J)%s", base(st->journal_name), d[k].nr,
			    st->journal == 2 ? "(F)" : "");
			continue;
		}
		const struct uraid_member_status *m = &st->members[d[k].i];
		put(o, " %s[%u]", base(m->name), m->dev_number);
		if (m->flags & URAID_MEMBER_F_WRITEMOSTLY)
			put(o, "(W)");
		if (m->state == URAID_MEMBER_FAULTY) {
			put(o, "(F)");
			continue;
		}
		if (m->role < 0)
			put(o, "(S)");
		if (m->flags & URAID_MEMBER_F_REPLACEMENT)
			put(o, "(R)");
	}
}

/* The personality's part of the second line (md's pers->status). */
static void pers_status(struct out *o, const struct uraid_status *st)
{
	unsigned chunk_k = st->chunk_sectors / 2;
	switch (st->level) {
	case URAID_LEVEL_LINEAR: put(o, " %uk rounding", chunk_k); return;
	case URAID_LEVEL_RAID0: put(o, " %uk chunks", chunk_k); return;
	case URAID_LEVEL_RAID4:
	case URAID_LEVEL_RAID5:
	case URAID_LEVEL_RAID6:
		/* md's raid5_status: the conf's chunk, which is the new one
		 * while a reshape runs; the array's level and (old) layout */
		if (st->reshape && st->reshape_new_chunk_sectors)
			chunk_k = st->reshape_new_chunk_sectors / 2;
		put(o, " level %d, %uk chunk, algorithm %u", st->level, chunk_k, st->layout);
		break;
	case URAID_LEVEL_RAID10: {
		int near = (int)(st->layout & 0xff), far = (int)((st->layout >> 8) & 0xff);
		if (near < st->raid_disks)
			put(o, " %uK chunks", chunk_k);
		if (near > 1)
			put(o, " %d near-copies", near);
		if (far > 1) {
			put(o, " %d %s-copies", far, st->layout & 0x10000 ? "offset" : "far");
			/* layout version 2: far copies rotate within sets */
			if ((st->layout >> 17) == 2 && near * far != st->raid_disks)
				put(o, " %d devices per set", near * far);
		}
		break;
	}
	default: break;
	}
	put(o, " [%d/%d] [", st->raid_disks, st->raid_disks - st->degraded);
	for (int r = 0; r < st->raid_disks; r++) {
		bool up = false;
		for (int i = 0; i < st->nmembers && !up; i++)
			up = st->members[i].role == r &&
			     !(st->members[i].flags & URAID_MEMBER_F_REPLACEMENT) &&
			     st->members[i].state == URAID_MEMBER_IN_SYNC;
		put(o, "%c", up ? 'U' : '_');
	}
	put(o, "]");
}

/* md's status_resync: a 21-wide bar, per mille, remaining time and speed
 * over the window of the job's marks (db positions in dt whole seconds:
 * md's marks every 3 s over the last 30 s, kept by the engine as md's
 * md_do_sync keeps them); a status without a window (another class) gives
 * its recent speed as one second's worth. */
static void resync_line(struct out *o, const struct uraid_status *st)
{
	uint64_t max = st->sync_total, done = st->sync_done > max ? max : st->sync_done;
	uint64_t per_milli = (done >> 10) * 1000 / ((max >> 10) + 1);
	int x = (int)(per_milli / 50);
	put(o, "[");
	for (int i = 0; i < x; i++)
		put(o, "=");
	put(o, ">");
	for (int i = 0; i < 20 - x; i++)
		put(o, ".");
	put(o, "] ");
	const char *what = st->sync_action == URAID_SYNC_CHECK     ? "check"
	                   : st->sync_action == URAID_SYNC_RECOVER ? "recovery"
	                   : st->sync_action == URAID_SYNC_RESHAPE ? "reshape"
	                                                           : "resync"; /* and repair */
	put(o, " %s =%3u.%u%% (%llu/%llu)", what, (unsigned)(per_milli / 10),
	    (unsigned)(per_milli % 10), (unsigned long long)done / 2, (unsigned long long)max / 2);
	uint64_t db = st->sync_window_sectors, dt = st->sync_window_secs; /* db sectors in dt s */
	if (!dt) {
		db = st->sync_speed_kibs * 2;
		dt = 1;
	}
	uint64_t rt = (max - done) / (db / 32 + 1) * dt >> 5;
	put(o, " finish=%llu.%llumin", (unsigned long long)(rt / 60),
	    (unsigned long long)(rt % 60) / 6);
	put(o, " speed=%lluK/sec", (unsigned long long)(db / 2 / dt));
}

int uraid_mdstat_format(const char *name, const struct uraid_status *st, char *buf, size_t len)
{
	const char *pers = uraid_md_personality(st->level);
	if (!pers)
		return -EINVAL;
	struct out o = {buf, len, 0};
	if (len)
		buf[0] = 0;
	put(&o, "%s : active%s %s", name,
	    st->auto_readonly ? " (auto-read-only)"
	    : st->readonly    ? " (read-only)"
	                      : "",
	    pers);
	devices(&o, st);
	put(&o, "\n      %llu blocks", (unsigned long long)st->array_sectors / 2);
	/* md's "super external:NAME" (IMSM/DDF containers) and the bitmap
	 * line's ", file: PATH" (a bitmap in a file) have no uraid state:
	 * uraid reads md's native superblocks and internal bitmaps only. */
	if (st->metadata < 0) /* built (mdadm --build): no superblocks */
		put(&o, " super non-persistent");
	else if (st->metadata != 0) /* 0.90 is md's default: no "super" */
		put(&o, " super %d.%d", st->metadata / 10, st->metadata % 10);
	pers_status(&o, st);
	put(&o, "\n      ");
	bool syncs = st->level != URAID_LEVEL_LINEAR && st->level != URAID_LEVEL_RAID0;
	if (syncs && st->sync_action != URAID_SYNC_IDLE && st->sync_total) {
		resync_line(&o, st);
		put(&o, "\n      ");
	} else if (syncs && st->resync_pending) {
		/* md's status_resync: due (recovery_cp) but not running */
		put(&o, "\tresync=PENDING\n      ");
	}
	/* md's resync=DELAYED (a sync waiting for another array's on the same
	 * disks, md_do_sync's "share one or more physical units") has no
	 * uraid state: each array's daemon syncs on its own, never waiting
	 * for another's, so two arrays on one disk sync at once. */
	if (st->bitmap_chunk_kib) /* pages of 4 KiB */
		put(&o, "bitmap: %u/%u pages [%uKB], %uKB chunk\n", st->bitmap_pages_used,
		    st->bitmap_pages, st->bitmap_pages_used * 4, st->bitmap_chunk_kib);
	put(&o, "\n");
	if (o.n >= len)
		return -ENOSPC;
	return (int)o.n;
}
