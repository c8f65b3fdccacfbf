/* md_bitmap_resize for a running array (see engine/bitmap/bitmap.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/bitmap/bitmap.h"
#include "engine/core/engine.h"
#include "util/errmsg.h"

/* md's bitmap_info.space as super_1_validate / super_90_validate set it:
 * 0.90 the 60 KiB after the superblock, 1.0 up to the superblock (or to
 * 4 KiB past it for a bitmap after it), 1.1/1.2 unknown, which
 * md_bitmap_resize takes as the current bitmap's sectors (and keeps). */
static uint64_t bm_space(const struct eng_array *a, const struct eng_bitmap *b)
{
	int32_t off = a->ref.bitmap_offset;
	if (a->ref.version == MD_SB_0_90)
		return MD_BITMAP_090_ROOM;
	if (a->ref.version == MD_SB_1_0 && off != 0)
		return off > 0 ? (uint64_t)(8 - off) : (uint64_t) - (int64_t)off;
	return (MD_BITMAP_SB_BYTES + (b->nbits + 7) / 8 + 511) / 512;
}

int eng_bitmap_resize(struct eng_array *a, uint64_t blocks, char *err, size_t errlen)
{
	struct eng_bitmap *b = eng_bitmap_of(a);
	if (!b || blocks == b->blocks)
		return 0;
	if (!b->space)
		b->space = bm_space(a, b);
	struct md_bitmap_sb nsb = b->sb;
	nsb.chunksize = md_bitmap_resize_chunk(b->sb.chunksize, blocks, b->space);
	nsb.sync_size = blocks;
	uint64_t nbits = md_bitmap_bits(&nsb);
	uint64_t len = MD_BITMAP_SB_BYTES + md_bitmap_bytes(&nsb);
	if (len > ENG_BITMAP_MAX_IMAGE)
		return errmsg(err, errlen, -EFBIG, "a bitmap of %llu bytes is too large",
		              (unsigned long long)len);
	/* Where the kernel would refuse to write it (md_bitmap_check_place:
	 * into the data or the superblock), uraid does not either. */
	char why[160];
	for (int i = 0; i < a->nmem; i++) {
		if (!eng_bitmap_member_used(a, i))
			continue;
		int rc = md_bitmap_check_place(&a->mem[i]->sb, a->ref.bitmap_offset,
		                               a->geo.dev_sectors, len, why, sizeof(why));
		if (rc < 0)
			return errmsg(err, errlen, rc, "%s: the resized bitmap does not fit: %s",
			              a->mem[i]->m->name, why);
	}
	uint8_t *img = eng_alloc(len);
	uint8_t *touched = calloc(nbits ? nbits : 1, 1);
	if (!img || !touched) {
		free(img);
		free(touched);
		return errmsg(err, errlen, -ENOMEM, "out of memory for the bitmap");
	}
	bool rechunk = nsb.chunksize != b->sb.chunksize;
	bool grow = blocks > b->blocks;
	md_bitmap_resize_bits(b->img + MD_BITMAP_SB_BYTES, b->nbits, b->chunk_sectors, b->blocks,
	                      img + MD_BITMAP_SB_BYTES, nbits, nsb.chunksize / 512, grow);
	/* Every carried chunk counts as written since the last clearing
	 * pass, so the next one keeps it. */
	memset(touched, 1, nbits ? nbits : 1);
	int rc = 0;
	if (rechunk) {
		/* Chunk and bits change in one write that can tear between
		 * sectors: the header says stale first, so until the new image
		 * is whole everywhere any mix of old and new reads as all dirty
		 * (md_bitmap_load's rule, uraid's too). */
		b->sb.state |= MD_BITMAP_STALE;
		rc = eng_bitmap_write_header(a);
		if (rc < 0) {
			b->sb.state &= ~MD_BITMAP_STALE;
			free(img);
			free(touched);
			return errmsg(err, errlen, rc, "writing the bitmap failed");
		}
	}
	free(b->img);
	free(b->touched);
	b->img = img;
	b->img_len = (size_t)len;
	b->touched = touched;
	b->nbits = nbits;
	b->blocks = blocks;
	b->chunk_sectors = nsb.chunksize / 512;
	b->sb.chunksize = nsb.chunksize;
	/* A grow is on disk before the superblocks name the larger size (the
	 * new chunks' bits set); a shrink waits for them: until they are
	 * written the old size is the one assembled, and its tail keeps its
	 * bits on disk. */
	if (grow || rechunk)
		rc = eng_bitmap_write_all(a);
	if (rechunk) {
		/* The flag goes with the next header write, after the
		 * superblocks: the caller's, right after them (grow.c,
		 * reshape.c, as md_update_sb writes the header). */
		b->sb.state &= ~MD_BITMAP_STALE;
		b->hdr_events = UINT64_MAX;
	}
	if (rc < 0)
		return errmsg(err, errlen, rc, "writing the bitmap failed");
	return 0;
}
