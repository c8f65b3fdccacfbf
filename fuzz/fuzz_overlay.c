/* libFuzzer target for the overlay file (member/member_overlay_int.h): a
 * store formatted for a 16 KiB memory base, then damaged by the input. The
 * first byte picks what: the header (its checksum made right again in half
 * the runs, so the field and layout checks are reached), the block map and
 * the commit sector, or both; the rest is written there. Opening it must
 * either fail with a negative errno or give an overlay that reads the
 * whole member, takes a write and a flush and closes; the base is never
 * changed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "member/member_overlay_int.h"
#include "util/md5.h"

#define BASE_BYTES (16u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	static uint8_t base_bytes[BASE_BYTES], view[BASE_BYTES];
	if (!base_bytes[1])
		for (size_t i = 0; i < BASE_BYTES; i++)
			base_bytes[i] = (uint8_t)(i * 7 + i / 4096);
	struct member *base, *store, *ov;
	uint64_t sb = member_overlay_store_bytes(BASE_BYTES);
	if (member_open_mem("base", BASE_BYTES, &base) < 0)
		abort();
	if (member_open_mem("store", sb, &store) < 0)
		abort();
	char err[512];
	if (member_write(base, base_bytes, BASE_BYTES, 0, 0) < 0 ||
	    member_overlay_format(base, store, "md:fuzz", "k0", err, sizeof(err)) < 0)
		abort();
	unsigned mode = data[0];
	data++;
	size--;
	uint8_t *hdr = calloc(1, OVL_HDR_BYTES + OVL_PAGE);
	if (!hdr || member_read(store, hdr, OVL_HDR_BYTES + OVL_PAGE, 0) < 0)
		abort();
	size_t n = size < OVL_HDR_BYTES + OVL_PAGE ? size : OVL_HDR_BYTES + OVL_PAGE;
	if ((mode & 3) == 0) { /* header */
		memcpy(hdr, data, n < OVL_HDR_SUM_OFF ? n : OVL_HDR_SUM_OFF);
	} else if ((mode & 3) == 1) { /* map and commit sector */
		memcpy(hdr + OVL_COMMIT_OFF, data, n < 512 ? n : 512);
		if (n > 512)
			memcpy(hdr + OVL_HDR_BYTES, data + 512, n - 512);
	} else { /* both */
		memcpy(hdr, data, n);
	}
	if (mode & 4) {
		struct md5_ctx c;
		md5_init(&c);
		md5_update(&c, hdr, OVL_HDR_SUM_OFF);
		md5_final(&c, hdr + OVL_HDR_SUM_OFF);
	}
	if (member_write(store, hdr, OVL_HDR_BYTES + OVL_PAGE, 0, 0) < 0)
		abort();
	free(hdr);
	/* The base stays ours: the wrapper closes what it is given. */
	struct member *b2;
	if (member_open_mem("base2", BASE_BYTES, &b2) < 0 ||
	    member_write(b2, base_bytes, BASE_BYTES, 0, 0) < 0)
		abort();
	int rc = member_overlay_open_store(b2, store, (mode & 8) ? NULL : "md:fuzz",
	                                   (mode & 16) ? OVERLAY_RDONLY : 0, &ov, err, sizeof(err));
	if (rc > 0)
		abort();
	if (rc == 0) {
		if (member_read(ov, view, BASE_BYTES, 0) < 0)
			abort();
		if (!(mode & 16)) {
			uint8_t w[512];
			memset(w, 0xa5, sizeof(w));
			if (member_write(ov, w, sizeof(w), 4096 * ((mode >> 5) & 3), 0) == 0)
				(void)member_flush(ov);
		}
		member_close(ov);
	}
	member_close(base);
	return 0;
}
