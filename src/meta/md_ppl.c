/* md's Partial Parity Log format: header encode/decode, checksums, what an
 * entry covers, and where mdadm and the kernel put the log. See md_ppl.h
 * for the layout. */
#include <errno.h>
#include <string.h>

#include "meta/md_journal.h" /* md_crc32c */
#include "meta/md_ppl.h"
#include "util/endian.h"
#include "util/errmsg.h"

enum {
	H_SIGNATURE = 512,
	H_PADDING = 516,
	H_GENERATION = 520,
	H_COUNT = 528,
	H_CHECKSUM = 532,
	H_ENTRIES = 536,
	E_DATA_SECTOR = 0,
	E_PP_SIZE = 8,
	E_DATA_SIZE = 12,
	E_PARITY_DISK = 16,
	E_CHECKSUM = 20,
};

uint32_t md_ppl_checksum(const void *buf, size_t len)
{
	return ~md_crc32c(~0u, buf, len);
}

uint32_t md_ppl_signature(const uint8_t uuid[16])
{
	return md_ppl_checksum(uuid, 16);
}

void md_ppl_init(struct md_ppl_header *h, uint32_t signature, uint64_t generation)
{
	memset(h, 0, sizeof(*h));
	h->signature = signature;
	h->generation = generation;
}

void md_ppl_encode(struct md_ppl_header *h, uint8_t *buf)
{
	memset(buf, 0, MD_PPL_HEADER_SIZE);
	memset(buf, 0xff, MD_PPL_RESERVED);
	put_le32(buf + H_SIGNATURE, h->signature);
	put_le64(buf + H_GENERATION, h->generation);
	uint32_t n = h->entries_count > MD_PPL_MAX_ENTRIES ? MD_PPL_MAX_ENTRIES : h->entries_count;
	put_le32(buf + H_COUNT, n);
	for (uint32_t i = 0; i < n; i++) {
		const struct md_ppl_entry *e = &h->entries[i];
		uint8_t *p = buf + H_ENTRIES + i * MD_PPL_ENTRY_BYTES;
		put_le64(p + E_DATA_SECTOR, e->data_sector);
		put_le32(p + E_PP_SIZE, e->pp_size);
		put_le32(p + E_DATA_SIZE, e->data_size);
		put_le32(p + E_PARITY_DISK, e->parity_disk);
		put_le32(p + E_CHECKSUM, e->checksum);
	}
	h->checksum = md_ppl_checksum(buf, MD_PPL_HEADER_SIZE);
	put_le32(buf + H_CHECKSUM, h->checksum);
}

int md_ppl_decode(const uint8_t *buf, struct md_ppl_header *h, char *err, size_t errlen)
{
	memset(h, 0, sizeof(*h));
	h->checksum = get_le32(buf + H_CHECKSUM);
	/* The checksum covers the block with its own field zero. */
	uint32_t c = md_crc32c(~0u, buf, H_CHECKSUM);
	static const uint8_t zero4[4];
	c = md_crc32c(c, zero4, 4);
	c = ~md_crc32c(c, buf + H_CHECKSUM + 4, MD_PPL_HEADER_SIZE - H_CHECKSUM - 4);
	if (c != h->checksum)
		return errmsg(err, errlen, -EILSEQ,
		              "header checksum %08x does not match its contents (%08x)",
		              h->checksum, c);
	h->signature = get_le32(buf + H_SIGNATURE);
	h->padding = get_le32(buf + H_PADDING);
	h->generation = get_le64(buf + H_GENERATION);
	h->entries_count = get_le32(buf + H_COUNT);
	if (h->entries_count > MD_PPL_MAX_ENTRIES)
		return errmsg(err, errlen, -EINVAL, "header lists %u entries, at most %d fit",
		              h->entries_count, MD_PPL_MAX_ENTRIES);
	for (uint32_t i = 0; i < h->entries_count; i++) {
		struct md_ppl_entry *e = &h->entries[i];
		const uint8_t *p = buf + H_ENTRIES + i * MD_PPL_ENTRY_BYTES;
		e->data_sector = get_le64(p + E_DATA_SECTOR);
		e->pp_size = get_le32(p + E_PP_SIZE);
		e->data_size = get_le32(p + E_DATA_SIZE);
		e->parity_disk = get_le32(p + E_PARITY_DISK);
		e->checksum = get_le32(p + E_CHECKSUM);
	}
	return 0;
}

int md_ppl_entry_extent(const struct md_ppl_entry *e, const struct md_ppl_limits *l,
                        struct md_ppl_extent *x, char *err, size_t errlen)
{
	uint64_t chunk = l->chunk_sectors, k = l->data_disks;
	memset(x, 0, sizeof(*x));
	if (chunk == 0 || k == 0)
		return errmsg(err, errlen, -EINVAL, "no geometry to check the entry against");
	if (e->pp_size % 512 || e->data_size % 512)
		return errmsg(err, errlen, -EINVAL,
		              "pp_size %u / data_size %u are not whole 512-byte sectors",
		              e->pp_size, e->data_size);
	if (e->data_size == 0)
		return errmsg(err, errlen, -EINVAL, "data_size 0: the entry covers no data");
	if (e->data_sector >= l->array_sectors || e->data_sector > UINT64_MAX - k * chunk)
		return errmsg(
		    err, errlen, -EINVAL, "data_sector %llu lies past the array (%llu sectors)",
		    (unsigned long long)e->data_sector, (unsigned long long)l->array_sectors);
	uint64_t pp = e->pp_size / 512, ds = e->data_size / 512;
	if (pp > chunk)
		return errmsg(err, errlen, -EINVAL,
		              "pp_size %u exceeds the chunk (%llu bytes): partial parity is one "
		              "chunk row at most",
		              e->pp_size, (unsigned long long)chunk * 512);
	/* md's reading of the sizes (ppl_recover_entry). */
	if (pp < chunk) {
		if (pp) {
			if (ds % pp || ds / pp > k)
				return errmsg(err, errlen, -EINVAL,
				              "data_size %u is not 1 to %llu times pp_size %u",
				              e->data_size, (unsigned long long)k, e->pp_size);
			x->data_disks = (uint32_t)(ds / pp);
			x->strip_sectors = (uint32_t)pp;
		} else {
			if (ds % k || ds / k > chunk)
				return errmsg(
				    err, errlen, -EINVAL,
				    "data_size %u of a full-stripe entry (no partial parity) "
				    "is not %llu chunk rows",
				    e->data_size, (unsigned long long)k);
			x->data_disks = (uint32_t)k;
			x->strip_sectors = (uint32_t)(ds / k);
		}
		if (e->data_sector % chunk + x->strip_sectors > chunk)
			return errmsg(
			    err, errlen, -EINVAL,
			    "rows %llu..%llu of the entry leave the chunk (%llu sectors)",
			    (unsigned long long)(e->data_sector % chunk),
			    (unsigned long long)(e->data_sector % chunk + x->strip_sectors - 1),
			    (unsigned long long)chunk);
		x->first = e->data_sector;
		x->last = x->first + (uint64_t)(x->data_disks - 1) * chunk + x->strip_sectors;
	} else {
		if (ds > k * chunk)
			return errmsg(err, errlen, -EINVAL,
			              "data_size %u exceeds the stripe's data (%llu bytes)",
			              e->data_size, (unsigned long long)(k * chunk * 512));
		if (e->data_sector % chunk)
			return errmsg(err, errlen, -EINVAL,
			              "a whole-chunk entry starts inside a chunk (sector %llu)",
			              (unsigned long long)e->data_sector);
		x->data_disks = (uint32_t)k;
		x->strip_sectors = (uint32_t)chunk;
		x->first = e->data_sector;
		x->last = x->first + ds;
	}
	uint64_t width = k * chunk;
	if (x->first / width != (x->last - 1) / width)
		return errmsg(err, errlen, -EINVAL,
		              "the entry at sector %llu runs from one stripe into the next",
		              (unsigned long long)e->data_sector);
	if (x->last > l->array_sectors)
		return errmsg(err, errlen, -EINVAL,
		              "the entry at sector %llu ends past the array (%llu sectors)",
		              (unsigned long long)e->data_sector,
		              (unsigned long long)l->array_sectors);
	return 0;
}

int md_ppl_check_area(const struct md_sb *sb, uint64_t dev_sectors, uint16_t *usable, char *err,
                      size_t errlen)
{
	int64_t off = md_ppl_offset(sb);
	int64_t size = md_ppl_size(sb);
	int64_t data = size - MD_PPL_HEADER_SECTORS;
	if (data > 0)
		data -= data % 8;
	if (data <= 0)
		return errmsg(err, errlen, -ENOSPC, "PPL space too small (%lld sectors)",
		              (long long)size);
	int64_t use = data + MD_PPL_HEADER_SECTORS;
	int64_t start = (int64_t)sb->super_offset + off;
	int64_t doff = (int64_t)sb->data_offset, dsize = (int64_t)sb->data_size;
	if (start < 0 || (uint64_t)(start + use) > dev_sectors)
		return errmsg(
		    err, errlen, -EINVAL,
		    "PPL space (sectors %lld..%lld) lies outside the member (%llu sectors)",
		    (long long)start, (long long)(start + use - 1),
		    (unsigned long long)dev_sectors);
	if ((start < doff && start + use > doff) || (start >= doff && doff + dsize > start))
		return errmsg(err, errlen, -EINVAL, "PPL space overlaps with data");
	int64_t sb_sectors = (int64_t)(md_sb_bytes(sb) / 512);
	if ((off > 0 && off < sb_sectors) || (off <= 0 && off + use > 0))
		return errmsg(err, errlen, -EINVAL, "PPL space overlaps with superblock");
	*usable = (uint16_t)use;
	return 0;
}

bool md_ppl_multi(uint32_t sectors)
{
	return sectors >= MD_PPL_MULTI_MIN_SECTORS;
}

uint32_t md_ppl_unit_space(uint32_t sectors)
{
	if (md_ppl_multi(sectors))
		return MD_PPL_SPACE_SIZE;
	return sectors > MD_PPL_HEADER_SECTORS ? (sectors - MD_PPL_HEADER_SECTORS) * 512 : 0;
}

int md_ppl_place_grow(const struct md_sb *sb, int16_t *offset, uint16_t *size, char *err,
                      size_t errlen)
{
	int64_t so = (int64_t)sb->super_offset, doff = (int64_t)sb->data_offset;
	int64_t bb = (int32_t)sb->bblog_offset;
	int64_t space, off;
	if (so < doff) {
		off = 8;
		space = bb ? bb - 8 : doff - so - 8;
	} else {
		/* 1.0: the gap between the data and the superblock, up to what
		 * the 16-bit offset reaches, minus the bad block log below the
		 * superblock. (mdadm 4.2 reads that log's offset unsigned here
		 * and so always finds room; the kernel then refuses the area.) */
		off = -(so - doff - (int64_t)sb->data_size);
		if (off < INT16_MIN)
			off = INT16_MIN;
		space = bb < 0 ? bb - off : -off;
	}
	if (space < MD_PPL_HEADER_SECTORS + 8)
		return errmsg(err, errlen, -ENOSPC, "Not enough space to add ppl (%lld sectors)",
		              (long long)(space > 0 ? space : 0));
	if (space >= MD_PPL_AREA_SECTORS) {
		space = MD_PPL_AREA_SECTORS;
	} else {
		/* mdadm's choose_ppl_space: the header and a chunk, or 128 KiB. */
		int64_t chunk = sb->chunk_sectors;
		int64_t optimal = MD_PPL_HEADER_SECTORS + (chunk > 256 ? chunk : 256);
		if (space > optimal)
			space = optimal;
		if (space > UINT16_MAX)
			space = UINT16_MAX;
	}
	*offset = (int16_t)off;
	*size = (uint16_t)space;
	return 0;
}
