/* libFuzzer target for the partial parity log codec (meta/md_ppl). The input
 * (after a mode byte and 24 bytes of geometry) is a 4 KiB header,
 * zero-padded; with mode bit 0 the checksum is fixed up, so the entries are
 * reached. What decodes must encode back to the same block and decode to
 * the same header; every entry's extent must stay inside one stripe of the
 * array and one chunk row range, or be refused with a message; the area
 * checks and mdadm's placement on a superblock made of the same bytes must
 * keep the log inside the member and clear of data and superblock. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "meta/md_journal.h"
#include "meta/md_ppl.h"
#include "util/endian.h"

#define GEO 24

static void check_area(const uint8_t *g)
{
	struct md_sb sb;
	memset(&sb, 0, sizeof(sb));
	sb.version = g[0] & 1 ? MD_SB_1_0 : MD_SB_1_2;
	uint64_t dev = 64 + get_le32(g + 4) % (1u << 22);
	sb.super_offset = sb.version == MD_SB_1_0 ? ((dev - 16) & ~7ull) : 8;
	sb.data_offset = sb.version == MD_SB_1_0 ? 0 : get_le16(g + 8) % dev;
	sb.data_size = get_le32(g + 10) % (dev - sb.data_offset + 1);
	sb.bblog_offset = (uint32_t)(int32_t)(int16_t)get_le16(g + 14);
	sb.bblog_size = 8;
	sb.max_dev = 1 + g[16];
	sb.chunk_sectors = 8u << (g[17] % 12);
	sb.bitmap_offset = (int32_t)get_le32(g + 18);
	char err[160];
	uint16_t use = 0;
	err[0] = 0;
	int rc = md_ppl_check_area(&sb, dev, &use, err, sizeof(err));
	if (rc == 0) {
		int64_t start = (int64_t)sb.super_offset + md_ppl_offset(&sb);
		if (use > md_ppl_size(&sb) || use < 16 || use % 8 || start < 0 ||
		    (uint64_t)start + use > dev)
			abort();
	} else if ((rc != -EINVAL && rc != -ENOSPC) || !err[0]) {
		abort();
	}
	int16_t off;
	uint16_t size;
	err[0] = 0;
	rc = md_ppl_place_grow(&sb, &off, &size, err, sizeof(err));
	if (rc == 0) {
		if (size < 16 || size > MD_PPL_AREA_SECTORS)
			abort();
	} else if (rc != -ENOSPC || !err[0]) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 + GEO)
		return 0;
	static uint8_t b[MD_PPL_HEADER_SIZE], enc[MD_PPL_HEADER_SIZE];
	static struct md_ppl_header h, h2;
	const uint8_t *g = data + 1;
	check_area(g);
	memset(b, 0, sizeof(b));
	size_t n = size - 1 - GEO;
	memcpy(b, data + 1 + GEO, n < sizeof(b) ? n : sizeof(b));
	if (data[0] & 1) {
		put_le32(b + 532, 0);
		put_le32(b + 532, md_ppl_checksum(b, sizeof(b)));
	}
	char err[160];
	err[0] = 0;
	int rc = md_ppl_decode(b, &h, err, sizeof(err));
	if (rc != 0) {
		if ((rc != -EILSEQ && rc != -EINVAL) || !memchr(err, 0, sizeof(err)) || !err[0])
			abort();
		return 0;
	}
	if (h.entries_count > MD_PPL_MAX_ENTRIES)
		abort();
	h2 = h;
	md_ppl_encode(&h2, enc);
	struct md_ppl_header d;
	if (md_ppl_decode(enc, &d, err, sizeof(err)) != 0 || d.entries_count != h.entries_count ||
	    d.generation != h.generation || d.signature != h.signature ||
	    memcmp(d.entries, h.entries, h.entries_count * sizeof(h.entries[0])))
		abort();
	/* The block itself, when md wrote it (0xff reserved, zero padding and
	 * zero unused entries), encodes back byte for byte. */
	bool canonical = h.padding == 0;
	for (int i = 0; i < 512 && canonical; i++)
		canonical = b[i] == 0xff;
	for (size_t i = 536 + h.entries_count * 24; i < sizeof(b) && canonical; i++)
		canonical = b[i] == 0;
	if (canonical && memcmp(enc, b, sizeof(b)))
		abort();
	struct md_ppl_limits l = {.chunk_sectors = 8u << (g[0] % 10),
	                          .data_disks = 1 + g[1] % 63,
	                          .array_sectors = get_le64(g + 2)};
	uint64_t width = (uint64_t)l.chunk_sectors * l.data_disks;
	for (uint32_t i = 0; i < h.entries_count; i++) {
		struct md_ppl_extent x;
		err[0] = 0;
		rc = md_ppl_entry_extent(&h.entries[i], &l, &x, err, sizeof(err));
		if (rc != 0) {
			if (rc != -EINVAL || !err[0])
				abort();
			continue;
		}
		if (x.first >= x.last || x.last > l.array_sectors ||
		    x.first / width != (x.last - 1) / width || x.data_disks < 1 ||
		    x.data_disks > l.data_disks || x.strip_sectors < 1 ||
		    x.strip_sectors > l.chunk_sectors ||
		    x.first % l.chunk_sectors + x.strip_sectors > l.chunk_sectors)
			abort();
	}
	return 0;
}
