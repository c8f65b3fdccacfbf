/* raid10: near / far / offset copies (kernel raid10.c). Layout word: low
 * byte near copies, next byte far copies, bit 16 "offset" (far copies in the
 * next chunk rows instead of far down the member). Bits 17/18 select the
 * kernel's far-set variants, which mdadm never writes: refused here.
 *
 * Sizes follow the kernel exactly: from the per-member size md records
 * (superblock `size`) it derives the array's chunk count, the chunks each
 * member really uses and, for far layouts, the stride between the far
 * copies; the array size is then recomputed from those. */
#include <errno.h>

#include "layout/layout_int.h"
#include "util/errmsg.h"

struct r10geo {
	int nc, fc, rd;
	bool offset;
	uint64_t cs;
	uint64_t dev_used; /* sectors of each member in use */
	uint64_t stride;   /* sectors between far copies */
	uint64_t array;    /* array sectors */
};

static void r10_geo(const struct layout_geometry *g, struct r10geo *o)
{
	o->nc = (int)(g->layout & 0xff);
	o->fc = (int)((g->layout >> 8) & 0xff);
	o->offset = (g->layout >> 16) & 1;
	o->rd = g->raid_disks;
	o->cs = g->chunk_sectors;
	uint64_t copies = (uint64_t)o->nc * (uint64_t)o->fc;
	/* chunks of the array from the recorded member size */
	uint64_t chunks =
	    g->dev_sectors / o->cs / (uint64_t)o->fc * (uint64_t)o->rd / (uint64_t)o->nc;
	/* chunks each member needs for all copies, rounded up */
	uint64_t dev_chunks = (chunks * copies + (uint64_t)o->rd - 1) / (uint64_t)o->rd;
	o->dev_used = dev_chunks * o->cs;
	o->stride = o->offset ? o->cs : dev_chunks / (uint64_t)o->fc * o->cs;
	o->array = dev_chunks / (uint64_t)o->fc * (uint64_t)o->rd / (uint64_t)o->nc * o->cs;
}

static int raid10_validate(const struct layout_geometry *g, char *err, size_t errlen)
{
	int rc = layout_check_disks(g, 2, LAYOUT_MAX_MEMBERS, err, errlen);
	if (rc)
		return rc;
	if (g->layout >> 19)
		return errmsg(err, errlen, -EINVAL, "raid10: unknown layout 0x%x", g->layout);
	if (g->layout >> 17)
		return errmsg(err, errlen, -EOPNOTSUPP,
		              "raid10: unsupported layout 0x%x (far-set variants, bits 17/18)",
		              g->layout);
	int nc = (int)(g->layout & 0xff), fc = (int)((g->layout >> 8) & 0xff);
	if (nc < 1 || fc < 1 || nc * fc < 2 || nc * fc > g->raid_disks)
		return errmsg(err, errlen, -EINVAL,
		              "raid10: layout 0x%x gives %d near x %d far copies; need at least "
		              "2 copies in all and at most raid_disks (%d)",
		              g->layout, nc, fc, g->raid_disks);
	if ((g->layout >> 16) & 1 && nc > 1 && g->raid_disks % nc)
		/* The kernel moves a wrapped near copy one chunk down, which in
		 * offset mode is the row of another chunk's offset copy: its
		 * forward and reverse maps disagree and copies collide. mdadm
		 * cannot create such a layout (n/f/o are exclusive there). */
		return errmsg(err, errlen, -EOPNOTSUPP,
		              "raid10: unsupported layout 0x%x: near copies (%d) combined with "
		              "offset copies on %d members, not a multiple of the near copies",
		              g->layout, nc, g->raid_disks);
	rc = layout_check_chunk_pow2(g, err, errlen);
	if (rc)
		return rc;
	/* keep every intermediate product of r10_geo within 64 bits */
	if (g->dev_sectors > (UINT64_MAX >> 20))
		return errmsg(err, errlen, -EINVAL, "raid10: member size %llu sectors is too large",
		              (unsigned long long)g->dev_sectors);
	struct r10geo o;
	r10_geo(g, &o);
	if (o.array == 0)
		return errmsg(err, errlen, -EINVAL,
		              "raid10: member size %llu sectors leaves no complete chunk row "
		              "(chunk %u sectors, %d far copies)",
		              (unsigned long long)g->dev_sectors, g->chunk_sectors, fc);
	return 0;
}

static uint64_t raid10_array_sectors(const struct layout_geometry *g)
{
	struct r10geo o;
	r10_geo(g, &o);
	return o.array;
}

static int raid10_ncopies(const struct layout_geometry *g)
{
	return (int)(g->layout & 0xff) * (int)((g->layout >> 8) & 0xff);
}

/* Copies are numbered as the kernel's r10bio slots: near copy n, far copy f
 * is slot n * fc + f. */
static int raid10_map(const struct layout_geometry *g, uint64_t lsec, int copy,
                      struct layout_loc *loc, uint64_t *len)
{
	struct r10geo o;
	r10_geo(g, &o);
	if (lsec >= o.array || copy < 0 || copy >= o.nc * o.fc)
		return -ERANGE;
	int n = copy / o.fc, f = copy % o.fc;
	uint64_t in_chunk = lsec % o.cs;
	/* the near copies of array chunk c are "virtual chunks" c*nc ..
	 * c*nc+nc-1, laid out row by row over the members */
	uint64_t vchunk = lsec / o.cs * (uint64_t)o.nc + (uint64_t)n;
	uint64_t row = vchunk / (uint64_t)o.rd;
	int dev = (int)(vchunk % (uint64_t)o.rd);
	/* offset layout: each row of first copies is followed by fc-1 rows
	 * of shifted copies (validate refused the layouts where near copies
	 * wrap into the next row, which the kernel maps inconsistently) */
	uint64_t drow = o.offset ? row * (uint64_t)o.fc : row;
	loc->role = (int)(((uint64_t)dev + (uint64_t)f * (uint64_t)o.nc) % (uint64_t)o.rd);
	loc->sector = drow * o.cs + in_chunk + (uint64_t)f * o.stride;
	if (len)
		*len = o.cs - in_chunk;
	return 0;
}

static bool raid10_readable(const struct layout_geometry *g, const bool *missing)
{
	struct r10geo o;
	r10_geo(g, &o);
	int copies = o.nc * o.fc;
	/* All copies of array chunk c sit on `copies` consecutive members (mod
	 * rd) from member c*nc mod rd. Those starts repeat every rd/gcd(nc, rd)
	 * chunks; check each start some chunk of this array really uses (the
	 * kernel's enough() checks every start, which only differs for arrays
	 * of fewer chunks than that period). */
	uint64_t chunks = o.array / o.cs;
	for (uint64_t c = 0; c < chunks; c++) {
		int start = (int)(c * (uint64_t)o.nc % (uint64_t)o.rd);
		if (c > 0 && start == 0)
			break; /* period complete */
		bool any = false;
		for (int j = 0; j < copies; j++)
			any |= !missing[(start + j) % o.rd];
		if (!any)
			return false;
	}
	return true;
}

static uint64_t raid10_member_used(const struct layout_geometry *g, int role)
{
	(void)role;
	struct r10geo o;
	r10_geo(g, &o);
	return o.dev_used;
}

static int raid10_unmap(const struct layout_geometry *g, int role, uint64_t msec, uint64_t *lsec)
{
	struct r10geo o;
	r10_geo(g, &o);
	if (role < 0 || role >= g->raid_disks || msec >= o.dev_used)
		return -ERANGE;
	uint64_t rd = (uint64_t)o.rd, in_chunk = msec % o.cs;
	uint64_t dev = (uint64_t)role, crow = msec / o.cs, f;
	if (o.offset) {
		f = crow % (uint64_t)o.fc;
		crow /= (uint64_t)o.fc;
	} else {
		f = msec / o.stride;
		if (f >= (uint64_t)o.fc)
			return -ERANGE; /* past the last far copy's area */
		crow = (msec - f * o.stride) / o.cs;
	}
	/* undo the far shift of f * nc members */
	dev = (dev + rd * (uint64_t)o.fc - (f * (uint64_t)o.nc) % rd) % rd;
	uint64_t vchunk = crow * rd + dev;
	uint64_t chunk = vchunk / (uint64_t)o.nc;
	if (chunk * o.cs >= o.array)
		return -ERANGE; /* rounding left this chunk slot unused */
	*lsec = chunk * o.cs + in_chunk;
	return LAYOUT_DATA;
}

const struct layout_ops layout_raid10_ops = {
    .level = URAID_LEVEL_RAID10,
    .name = "raid10",
    .validate = raid10_validate,
    .array_sectors = raid10_array_sectors,
    .ncopies = raid10_ncopies,
    .map = raid10_map,
    .stripe = NULL,
    .readable = raid10_readable,
    .member_used = raid10_member_used,
    .unmap = raid10_unmap,
};
