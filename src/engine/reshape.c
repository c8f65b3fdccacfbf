/* Serving an md array the kernel left mid-reshape (engine/reshape.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/reshape.h"
#include "util/errmsg.h"

static void geo_of(const struct eng_array *a, const struct md_reshape_geom *g,
                   struct layout_geometry *out)
{
	*out = a->geo;
	out->level = g->level;
	out->layout = g->layout;
	out->chunk_sectors = g->chunk_sectors;
	out->raid_disks = (int)g->raid_disks;
}

int eng_reshape_assembled(struct eng_array *a, char *err, size_t errlen)
{
	char e[256];
	struct md_reshape r;
	int rc = md_sb_reshape(&a->ref, &r, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc, "reshape in progress: %s", e);
	if (!r.active)
		return 0;
	if (r.old.level != r.new.level ||
	    (r.old.level != URAID_LEVEL_RAID4 && r.old.level != URAID_LEVEL_RAID5 &&
	     r.old.level != URAID_LEVEL_RAID6))
		return errmsg(err, errlen, -EOPNOTSUPP,
		              "reshape in progress from %s to %s: uraid maps only raid4/5/6 "
		              "reshapes that keep the level",
		              level_name(r.old.level), level_name(r.new.level));
	if (r.old.raid_disks > LAYOUT_MAX_MEMBERS || r.new.raid_disks > LAYOUT_MAX_MEMBERS)
		return errmsg(err, errlen, -EINVAL, "reshape in progress over %u members",
		              r.old.raid_disks > r.new.raid_disks ? r.old.raid_disks
		                                                  : r.new.raid_disks);
	if (!a->readonly)
		return errmsg(err, errlen, -EROFS,
		              "reshape in progress (%u -> %u members, position %llu): uraid "
		              "serves such an array read-only (--readonly) and does not resume "
		              "the reshape; let the kernel (mdadm --assemble) finish it",
		              r.old.raid_disks, r.new.raid_disks, (unsigned long long)r.position);
	struct eng_reshape *rs = calloc(1, sizeof(*rs));
	if (!rs)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	rs->r = r;
	geo_of(a, &r.old, &rs->geo[0]);
	geo_of(a, &r.new, &rs->geo[1]);
	for (int v = 0; v < 2; v++) {
		rs->ops[v] = layout_ops_for(rs->geo[v].level);
		struct layout_geometry g = rs->geo[v];
		for (int i = 0; i < g.raid_disks; i++)
			if (!g.member_sectors[i])
				g.member_sectors[i] = g.dev_sectors;
		if (!rs->ops[v])
			snprintf(e, sizeof(e), "level %d is not supported", g.level);
		rc = rs->ops[v] ? rs->ops[v]->validate(&g, e, sizeof(e)) : -EOPNOTSUPP;
		if (rc < 0) {
			free(rs);
			return errmsg(err, errlen, rc, "reshape in progress: the %s geometry: %s",
			              v ? "new" : "old", e);
		}
	}
	/* The old geometry must be readable with the members there too. */
	bool missing[LAYOUT_MAX_MEMBERS];
	for (int r0 = 0; r0 < rs->geo[0].raid_disks; r0++)
		missing[r0] = a->slot[r0] < 0 || a->mem[a->slot[r0]]->state != URAID_MEMBER_IN_SYNC;
	if (!rs->ops[0]->readable(&rs->geo[0], missing)) {
		free(rs);
		return errmsg(err, errlen, -ENODEV,
		              "reshape in progress: too few working members for the old "
		              "geometry (%u members)",
		              r.old.raid_disks);
	}
	for (int i = 0; i < a->nmem; i++) {
		struct eng_member *em = a->mem[i];
		rs->rest_doff[i] = em->sb.data_offset;
		rs->doff[0][i] = em->sb.data_offset;
		rs->doff[1][i] = (uint64_t)((int64_t)em->sb.data_offset + r.offset_delta);
		if (!em->left_out && em->m) {
			rc = md_reshape_check_device(&em->sb, &r, em->m->size / 512, e, sizeof(e));
			if (rc < 0) {
				free(rs);
				return errmsg(err, errlen, rc, "%s: reshape in progress: %s",
				              em->m->name, e);
			}
		}
	}
	a->geo = rs->geo[1];
	a->rs = rs;
	return 0;
}

void eng_reshape_setup(struct eng_array *a)
{
	struct eng_reshape *rs = a->rs;
	if (!rs)
		return;
	uint64_t s = a->geo.dev_sectors;
	s -= s % rs->geo[0].chunk_sectors;
	s -= s % rs->geo[1].chunk_sectors;
	uint32_t d0 = md_reshape_data_disks(&rs->r.old), d1 = md_reshape_data_disks(&rs->r.new);
	a->array_sectors = s * (d0 < d1 ? d0 : d1);
}

static void view(struct eng_array *a, int v)
{
	struct eng_reshape *rs = a->rs;
	a->geo = rs->geo[v];
	a->ops = rs->ops[v];
	for (int i = 0; i < a->nmem; i++)
		a->mem[i]->sb.data_offset = v < 0 ? rs->rest_doff[i] : rs->doff[v][i];
}

int eng_reshape_read(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	struct eng_reshape *rs = a->rs;
	uint64_t pos = rs->r.position, end = lsec + nsec;
	while (lsec < end) {
		bool done = md_reshape_done(&rs->r, lsec);
		uint64_t stop = end;
		if (lsec < pos && pos < end)
			stop = pos; /* the other side starts there */
		int v = done ? 1 : 0;
		view(a, v);
		int rc = a->pers->read(a, buf, lsec, stop - lsec);
		view(a, -1);
		a->geo = rs->geo[1];
		a->ops = rs->ops[1];
		if (rc < 0)
			return rc;
		buf += (stop - lsec) * 512;
		lsec = stop;
	}
	return 0;
}

void eng_reshape_free(struct eng_array *a)
{
	free(a->rs);
	a->rs = NULL;
}
