/* Private to src/meta: the per-version codecs behind md_sb_decode/encode. */
#ifndef URAID_MD_SB_INTERNAL_H
#define URAID_MD_SB_INTERNAL_H

#include "meta/md_super.h"

/* buf is MD_SB_BYTES long in all of these. */
uint32_t md_sb1_checksum(const uint8_t *buf);
int md_sb1_decode(enum md_sb_version version, const uint8_t *buf, struct md_sb *sb, char *err,
                  size_t errlen);
int md_sb1_encode(const struct md_sb *sb, uint8_t *buf);

uint32_t md_sb0_checksum(const uint8_t *buf);
int md_sb0_decode(const uint8_t *buf, struct md_sb *sb, char *err, size_t errlen);
int md_sb0_encode(const struct md_sb *sb, uint8_t *buf);

/* SHA-1 (FIPS 180-4) of len bytes; mdadm derives 0.90 uuid words from it. */
void md_sha1(const void *data, size_t len, uint8_t out[20]);

#endif
