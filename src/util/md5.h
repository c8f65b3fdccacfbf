/* MD5 (RFC 1321). Used only for the checksums FreeBSD GEOM stores in its
 * metadata sectors; not for anything that needs collision resistance. */
#ifndef URAID_MD5_H
#define URAID_MD5_H

#include <stddef.h>
#include <stdint.h>

struct md5_ctx {
	uint32_t state[4];
	uint64_t bytes; /* total message length so far */
	uint8_t buf[64];
};

void md5_init(struct md5_ctx *c);
void md5_update(struct md5_ctx *c, const void *data, size_t len);
void md5_final(struct md5_ctx *c, uint8_t digest[16]);
/* One-shot convenience. */
void md5(const void *data, size_t len, uint8_t digest[16]);

#endif
