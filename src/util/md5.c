/* MD5 per RFC 1321, written from the RFC's description (section 3): four
 * rounds of sixteen steps over 64-byte blocks, words little-endian. */
#include "util/md5.h"

#include <string.h>

#include "util/endian.h"

/* Per-step left rotations, four per round (RFC 1321 3.4). */
static const uint8_t rot[4][4] = {
    {7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};

/* T[i] = floor(2^32 * |sin(i + 1)|), precomputed (RFC 1321 3.4). */
static const uint32_t sine_tab[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

static uint32_t rotl(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

static void md5_block(uint32_t st[4], const uint8_t *p)
{
	uint32_t x[16];
	for (int i = 0; i < 16; i++)
		x[i] = get_le32(p + 4 * i);
	uint32_t a = st[0], b = st[1], c = st[2], d = st[3];
	for (int i = 0; i < 64; i++) {
		uint32_t f;
		int k;
		switch (i / 16) {
		case 0:
			f = (b & c) | (~b & d);
			k = i;
			break;
		case 1:
			f = (b & d) | (c & ~d);
			k = (5 * i + 1) % 16;
			break;
		case 2:
			f = b ^ c ^ d;
			k = (3 * i + 5) % 16;
			break;
		default:
			f = c ^ (b | ~d);
			k = (7 * i) % 16;
			break;
		}
		uint32_t t = d;
		d = c;
		c = b;
		b = b + rotl(a + f + sine_tab[i] + x[k], rot[i / 16][i % 4]);
		a = t;
	}
	st[0] += a;
	st[1] += b;
	st[2] += c;
	st[3] += d;
}

void md5_init(struct md5_ctx *c)
{
	c->state[0] = 0x67452301;
	c->state[1] = 0xefcdab89;
	c->state[2] = 0x98badcfe;
	c->state[3] = 0x10325476;
	c->bytes = 0;
}

void md5_update(struct md5_ctx *c, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t have = (size_t)(c->bytes % 64);
	c->bytes += len;
	if (have) {
		size_t take = 64 - have < len ? 64 - have : len;
		memcpy(c->buf + have, p, take);
		p += take;
		len -= take;
		if (have + take < 64)
			return;
		md5_block(c->state, c->buf);
	}
	for (; len >= 64; p += 64, len -= 64)
		md5_block(c->state, p);
	if (len)
		memcpy(c->buf, p, len);
}

void md5_final(struct md5_ctx *c, uint8_t digest[16])
{
	/* Pad with 0x80, zeros to 56 mod 64, then the bit length (RFC 3.1, 3.2). */
	uint64_t bits = c->bytes * 8;
	uint8_t pad[72] = {0x80};
	size_t have = (size_t)(c->bytes % 64);
	size_t padlen = have < 56 ? 56 - have : 120 - have;
	md5_update(c, pad, padlen);
	uint8_t lenb[8];
	put_le64(lenb, bits);
	md5_update(c, lenb, 8);
	for (int i = 0; i < 4; i++)
		put_le32(digest + 4 * i, c->state[i]);
}

void md5(const void *data, size_t len, uint8_t digest[16])
{
	struct md5_ctx c;
	md5_init(&c);
	md5_update(&c, data, len);
	md5_final(&c, digest);
}
