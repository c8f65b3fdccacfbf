/* raid0: striping over members of possibly different sizes. As in the
 * kernel's raid0.c, each member's data size is rounded down to the chunk and
 * the array is cut into zones: zone 0 stripes over every member up to the
 * smallest size, the next zone over the members that are larger, up to the
 * next distinct size, and so on. Inside a zone the member holding a chunk is
 * chosen by the chunk number counted from the array start (layout original,
 * 1) or from the zone start (layout alternate, 2); with one zone both agree. */
#include <errno.h>

#include "layout/layout_int.h"
#include "util/errmsg.h"

static uint64_t r0_size(const struct layout_geometry *g, int role)
{
	uint64_t s = g->member_sectors[role], cs = g->chunk_sectors;
	if (layout_is_pow2(cs))
		return s & ~(cs - 1); /* the usual case; avoids a division per call */
	return s - s % cs;
}

/* One zone: members with rounded size > dev_start, from dev_start up to
 * dev_end on each, covering logical sectors [lstart, lstart + (dev_end -
 * dev_start) * nb). */
struct r0zone {
	uint64_t dev_start, dev_end, lstart;
	int nb;
};

/* Zone after `z` (start with z->nb == 0, dev_end == 0, lstart == 0 for zone
 * 0). Returns false when there is none. */
static bool r0_next_zone(const struct layout_geometry *g, struct r0zone *z)
{
	uint64_t from = z->dev_end, next = UINT64_MAX;
	int nb = 0;
	z->lstart += (z->dev_end - z->dev_start) * (uint64_t)z->nb;
	for (int r = 0; r < g->raid_disks; r++) {
		uint64_t s = r0_size(g, r);
		if (s > from) {
			nb++;
			if (s < next)
				next = s;
		}
	}
	if (!nb)
		return false;
	z->dev_start = from;
	z->dev_end = next;
	z->nb = nb;
	return true;
}

/* Role of the k-th member (in role order) of zone z. */
static int r0_zone_member(const struct layout_geometry *g, const struct r0zone *z, int k)
{
	for (int r = 0; r < g->raid_disks; r++)
		if (r0_size(g, r) > z->dev_start && k-- == 0)
			return r;
	return -1;
}

static int r0_nzones(const struct layout_geometry *g)
{
	struct r0zone z = {0, 0, 0, 0};
	int n = 0;
	while (r0_next_zone(g, &z))
		n++;
	return n;
}

static bool r0_alternate(const struct layout_geometry *g)
{
	return g->layout == RAID0_LAYOUT_ALT;
}

static uint64_t raid0_array_sectors(const struct layout_geometry *g);

static int raid0_validate(const struct layout_geometry *g, char *err, size_t errlen)
{
	int rc = layout_check_disks(g, 1, LAYOUT_MAX_MEMBERS, err, errlen);
	if (rc)
		return rc;
	/* The kernel only needs a chunk (any multiple of the logical block
	 * size); mdadm creates multiples of 4 KiB. */
	if (g->chunk_sectors == 0)
		return errmsg(err, errlen, -EINVAL, "raid0: chunk size must be set");
	uint64_t tot = 0;
	for (int r = 0; r < g->raid_disks; r++) {
		if (r0_size(g, r) == 0)
			return errmsg(err, errlen, -EINVAL,
			              "raid0: member %d (%llu sectors) is smaller than one chunk "
			              "(%u sectors)",
			              r, (unsigned long long)g->member_sectors[r],
			              g->chunk_sectors);
		if (__builtin_add_overflow(tot, r0_size(g, r), &tot))
			return errmsg(err, errlen, -EINVAL, "raid0: array size overflows 64 bits");
	}
	if (raid0_array_sectors(g) == 0)
		return errmsg(err, errlen, -EINVAL, "raid0: array would be empty");
	int nz = r0_nzones(g);
	if (nz > 1 && g->layout != RAID0_LAYOUT_ORIG && g->layout != RAID0_LAYOUT_ALT) {
		if (g->layout == RAID0_LAYOUT_NONE)
			return errmsg(err, errlen, -EINVAL,
			              "raid0: multi-zone array (%d zones, members of different "
			              "sizes) records no layout; the kernel refuses it, as the "
			              "original and alternate layouts place data differently",
			              nz);
		return errmsg(err, errlen, -EINVAL, "raid0: unknown multi-zone layout %u",
		              g->layout);
	}
	return 0;
}

/* The kernel's raid0_size() masks each (already chunk-rounded) member size
 * with ~(chunk - 1). For power-of-two chunks that changes nothing; for other
 * chunk sizes it can cut the array short of what the zones cover, and the
 * tail of the last zone then goes unused (seen with a 24 KiB chunk on
 * Linux 6.1). */
static uint64_t raid0_array_sectors(const struct layout_geometry *g)
{
	uint64_t tot = 0;
	for (int r = 0; r < g->raid_disks; r++)
		tot += r0_size(g, r) & ~((uint64_t)g->chunk_sectors - 1);
	return tot;
}

static int raid0_map(const struct layout_geometry *g, uint64_t lsec, int copy,
                     struct layout_loc *loc, uint64_t *len)
{
	uint64_t total = raid0_array_sectors(g);
	if (copy != 0 || lsec >= total)
		return -ERANGE;
	struct r0zone z = {0, 0, 0, 0};
	uint64_t cs = g->chunk_sectors;
	while (r0_next_zone(g, &z)) {
		uint64_t zsize = (z.dev_end - z.dev_start) * (uint64_t)z.nb;
		if (lsec - z.lstart >= zsize)
			continue;
		uint64_t off = lsec - z.lstart; /* zone starts are chunk aligned */
		uint64_t in_chunk = off % cs;
		uint64_t sel = r0_alternate(g) ? off / cs : lsec / cs;
		loc->role = r0_zone_member(g, &z, (int)(sel % (uint64_t)z.nb));
		loc->sector = z.dev_start + off / (cs * (uint64_t)z.nb) * cs + in_chunk;
		if (len)
			*len = cs - in_chunk < total - lsec ? cs - in_chunk : total - lsec;
		return 0;
	}
	return -ERANGE;
}

static uint64_t raid0_member_used(const struct layout_geometry *g, int role)
{
	return r0_size(g, role);
}

static int raid0_unmap(const struct layout_geometry *g, int role, uint64_t msec, uint64_t *lsec)
{
	if (role < 0 || role >= g->raid_disks || msec >= r0_size(g, role))
		return -ERANGE;
	struct r0zone z = {0, 0, 0, 0};
	uint64_t cs = g->chunk_sectors;
	while (r0_next_zone(g, &z)) {
		if (msec >= z.dev_end)
			continue;
		int k = 0; /* position of role among the zone's members */
		for (int r = 0; r < role; r++)
			k += r0_size(g, r) > z.dev_start;
		uint64_t nb = (uint64_t)z.nb, rel = msec - z.dev_start;
		uint64_t row = rel / cs, in_chunk = rel % cs;
		uint64_t pos = (uint64_t)k;
		if (!r0_alternate(g)) /* member chosen by absolute chunk number */
			pos = ((uint64_t)k + nb - (z.lstart / cs) % nb) % nb;
		uint64_t l = z.lstart + (row * nb + pos) * cs + in_chunk;
		if (l >= raid0_array_sectors(g))
			return -ERANGE; /* past the kernel's array size */
		*lsec = l;
		return LAYOUT_DATA;
	}
	return -ERANGE;
}

const struct layout_ops layout_raid0_ops = {
    .level = URAID_LEVEL_RAID0,
    .name = "raid0",
    .validate = raid0_validate,
    .array_sectors = raid0_array_sectors,
    .ncopies = layout_one_copy,
    .map = raid0_map,
    .stripe = NULL,
    .readable = layout_none_missing,
    .member_used = raid0_member_used,
    .unmap = raid0_unmap,
};
