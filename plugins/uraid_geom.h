/* Stripe geometry of an array as file systems and NBD clients want it: data
 * members per stripe, stripe width, and the NBD block size hints. Shared by
 * the nbdkit plugin and `uraid geometry` / `uraid serve` (header only, so the
 * plugin does not depend on the CLI and the CLI not on the plugin). */
#ifndef URAID_PLUGIN_GEOM_H
#define URAID_PLUGIN_GEOM_H

#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uraid.h"

/* The NBD protocol limits: block sizes are powers of two, the preferred size
 * at most 32 MiB (nbdkit refuses larger hints). */
#define URAID_GEOM_MAX_PREFERRED (32u << 20)
#define URAID_GEOM_MAX_REQUEST   (32u << 20)

/* Members that carry distinct data in one stripe, as md tells the block layer
 * (io_opt = chunk * this): all of them for raid0, all but the parity for
 * raid4/5/6, raid_disks / near-copies for raid10 (all of them when the near
 * copies do not divide raid_disks, since then a stripe wraps around the
 * members). 0 for levels without striping (linear, raid1). */
static inline int uraid_geom_data_disks(int level, uint32_t layout, int raid_disks)
{
	switch (level) {
	case URAID_LEVEL_RAID0: return raid_disks;
	case URAID_LEVEL_RAID4:
	case URAID_LEVEL_RAID5: return raid_disks - 1;
	case URAID_LEVEL_RAID6: return raid_disks - 2;
	case URAID_LEVEL_RAID10: {
		int near = (int)(layout & 0xff);
		if (near < 1)
			near = 1;
		return raid_disks % near ? raid_disks : raid_disks / near;
	}
	default: return 0;
	}
}

/* Full stripe width in bytes (0 without striping). */
static inline uint64_t uraid_geom_stripe_bytes(int level, uint32_t layout, int raid_disks,
                                               uint32_t chunk_sectors)
{
	return (uint64_t)uraid_geom_data_disks(level, layout, raid_disks) * chunk_sectors * 512;
}

/* Largest power of two dividing v (v > 0). */
static inline uint64_t uraid_geom_pow2_divisor(uint64_t v)
{
	return v & (~v + 1);
}

/* NBD block size hints. minimum: the members' logical block (512 or 4096),
 * or the array's I/O unit when larger (uraid_status.block_bytes: graid3).
 * preferred: the full stripe width when it is a power of two; otherwise the
 * largest power of two dividing it (so preferred-sized, preferred-aligned
 * requests never straddle a stripe in a way that costs an extra
 * read-modify-write of a partial stripe beyond what the width itself forces);
 * 4096 without striping; clamped to [minimum, 32 MiB]. maximum: 32 MiB.
 * *pow2_cut is set when the stripe width was not a power of two. */
static inline void uraid_geom_block_size(const struct uraid_status *st, uint32_t logical_block,
                                         uint32_t *minimum, uint32_t *preferred, uint32_t *maximum,
                                         int *pow2_cut)
{
	uint64_t w =
	    uraid_geom_stripe_bytes(st->level, st->layout, st->raid_disks, st->chunk_sectors);
	uint64_t p = w ? uraid_geom_pow2_divisor(w) : 4096;
	if (pow2_cut)
		*pow2_cut = w && p != w;
	/* graid3: I/O is whole provider sectors (component sector x data
	 * components), a power of two. */
	if (st->block_bytes > logical_block)
		logical_block = st->block_bytes;
	if (p < logical_block)
		p = logical_block;
	if (p > URAID_GEOM_MAX_PREFERRED)
		p = URAID_GEOM_MAX_PREFERRED;
	*minimum = logical_block;
	*preferred = (uint32_t)p;
	*maximum = URAID_GEOM_MAX_REQUEST;
}

/* The largest logical block size among the members: 4096 for 4K-native
 * block devices, 512 for files and 512e devices. A member that cannot be
 * opened counts as 512 (assembly reports the real problem). */
static inline uint32_t uraid_geom_logical_block(const char *const *paths, int n)
{
	uint32_t lb = 512;
	for (int i = 0; i < n; i++) {
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct stat sb;
		int ssz = 0;
		if (fstat(fd, &sb) == 0 && S_ISBLK(sb.st_mode) && ioctl(fd, BLKSSZGET, &ssz) == 0 &&
		    ssz > 0 && (uint32_t)ssz > lb)
			lb = (uint32_t)ssz;
		close(fd);
	}
	return lb;
}

#endif
