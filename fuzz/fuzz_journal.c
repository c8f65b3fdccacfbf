/* libFuzzer target for the journal meta block decoder (meta/md_journal).
 * The input (after a mode byte) is a 4 KiB block, zero-padded; with mode bit
 * 0 the magic and version are forced and the checksum fixed up, so the
 * payload parser is reached. What decodes must stay inside the block, encode
 * again and decode to the same payloads; a refusal always says why. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "meta/md_journal.h"
#include "util/endian.h"

#define SEED 0x1234abcdu

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static uint8_t b[MDJ_BLOCK], enc[MDJ_BLOCK];
	static struct mdj_meta m, m2;
	memset(b, 0, sizeof(b));
	memcpy(b, data + 1, size - 1 < MDJ_BLOCK ? size - 1 : MDJ_BLOCK);
	if (data[0] & 1) {
		put_le32(b, MDJ_MAGIC);
		b[8] = MDJ_VERSION;
		put_le32(b + 4, 0);
		put_le32(b + 4, md_crc32c(SEED, b, MDJ_BLOCK));
	}
	char err[128];
	err[0] = 0;
	int rc = mdj_decode(b, SEED, &m, err, sizeof(err));
	if (rc != 0) {
		if (rc != -ENOENT && rc != -EILSEQ && rc != -EINVAL)
			abort();
		if (!memchr(err, 0, sizeof(err)) || !err[0])
			abort();
		return 0;
	}
	if (m.meta_size < MDJ_HDR_BYTES || m.meta_size > MDJ_BLOCK || m.npay > MDJ_MAX_PAYLOADS)
		abort();
	if (mdj_pages(&m) > 2 * (uint32_t)m.npay)
		abort();
	mdj_encode(&m, SEED, enc);
	if (mdj_decode(enc, SEED, &m2, err, sizeof(err)) != 0 || m2.npay != m.npay ||
	    m2.seq != m.seq || m2.position != m.position)
		abort();
	for (int i = 0; i < m.npay; i++) {
		const struct mdj_payload *p = &m.pay[i], *q = &m2.pay[i];
		if (p->type != q->type || p->location != q->location ||
		    p->log_pages != q->log_pages ||
		    (p->type != MDJ_FLUSH &&
		     (p->sectors != q->sectors || memcmp(p->csum, q->csum, 4 * p->log_pages))))
			abort();
	}
	return 0;
}
