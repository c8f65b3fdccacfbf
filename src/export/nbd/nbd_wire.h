/* The client side of the NBD handshake the kernel's NBD client needs done
 * before it takes a socket (it only speaks the transmission phase): the
 * fixed-newstyle greeting and the NBD_OPT_EXPORT_NAME reply, parsed from
 * the bytes the server sent. Header only, so fuzz/fuzz_nbd_wire.c reaches
 * the same code. */
#ifndef URAID_EXPORT_NBD_WIRE_H
#define URAID_EXPORT_NBD_WIRE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NBD_WIRE_GREETING_LEN      18 /* "NBDMAGIC", "IHAVEOPT", handshake flags */
#define NBD_WIRE_EXPORT_LEN        10 /* size, transmission flags (then 124 zeros unless NO_ZEROES) */
#define NBD_WIRE_HS_FIXED_NEWSTYLE 1u
#define NBD_WIRE_HS_NO_ZEROES      2u
#define NBD_WIRE_OPT_EXPORT_NAME   1u
#define NBD_WIRE_TX_HAS_FLAGS      1u

static inline uint64_t nbd_wire_be(const unsigned char *b, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | b[i];
	return v;
}

static inline void nbd_wire_put(unsigned char *b, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		b[i] = (unsigned char)v;
}

/* The server's first bytes: 0 and its handshake flags, or -EPROTO (not an
 * NBD server, or an oldstyle one, or one without fixed newstyle). */
static inline int nbd_wire_greeting(const unsigned char *b, size_t n, uint16_t *hflags)
{
	if (n < NBD_WIRE_GREETING_LEN || memcmp(b, "NBDMAGIC", 8) || memcmp(b + 8, "IHAVEOPT", 8))
		return -EPROTO;
	*hflags = (uint16_t)nbd_wire_be(b + 16, 2);
	return *hflags & NBD_WIRE_HS_FIXED_NEWSTYLE ? 0 : -EPROTO;
}

/* The client's reply to the greeting and its NBD_OPT_EXPORT_NAME option for
 * `name` (at most 4096 bytes) into out (room for 20 + its length): the bytes
 * to send, or -EINVAL. */
static inline int nbd_wire_export_request(uint16_t hflags, const char *name, unsigned char *out,
                                          size_t outlen)
{
	size_t nl = strlen(name);
	if (nl > 4096 || outlen < 20 + nl)
		return -EINVAL;
	uint32_t cflags = NBD_WIRE_HS_FIXED_NEWSTYLE | (hflags & NBD_WIRE_HS_NO_ZEROES);
	nbd_wire_put(out, cflags, 4);
	memcpy(out + 4, "IHAVEOPT", 8);
	nbd_wire_put(out + 12, NBD_WIRE_OPT_EXPORT_NAME, 4);
	nbd_wire_put(out + 16, nl, 4);
	memcpy(out + 20, name, nl);
	return (int)(20 + nl);
}

/* The server's answer to NBD_OPT_EXPORT_NAME: 0 with the export's size
 * (bytes, a multiple of 512, > 0) and transmission flags, or -EPROTO. */
static inline int nbd_wire_export(const unsigned char *b, size_t n, uint64_t *size,
                                  uint16_t *tflags)
{
	if (n < NBD_WIRE_EXPORT_LEN)
		return -EPROTO;
	*size = nbd_wire_be(b, 8);
	*tflags = (uint16_t)nbd_wire_be(b + 8, 2);
	if (!*size || *size % 512 || *size > (UINT64_C(1) << 62) ||
	    !(*tflags & NBD_WIRE_TX_HAS_FLAGS))
		return -EPROTO;
	return 0;
}

#endif
