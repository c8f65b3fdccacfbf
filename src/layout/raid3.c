/* graid3 address math: provider sectors striped across the data
 * components in atoms, parity on the last component. Pure, no I/O. */
#include <errno.h>
#include <string.h>

#include "layout/layout.h"

/* dst ^= src, eight bytes at a time where possible (memcpy keeps it free of
 * alignment assumptions; compilers turn it into vector loads). */
static void xor_into(uint8_t *dst, const uint8_t *src, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t a, b;
		memcpy(&a, dst + i, 8);
		memcpy(&b, src + i, 8);
		a ^= b;
		memcpy(dst + i, &a, 8);
	}
	for (; i < n; i++)
		dst[i] ^= src[i];
}

int raid3_validate(const struct raid3_geom *g)
{
	int d = g->ncomp - 1;
	if (g->ncomp < 3 || g->ncomp > 33 || (d & (d - 1)) != 0)
		return -EINVAL;
	if (g->psector == 0 || g->psector % (uint32_t)d)
		return -EINVAL;
	uint32_t atom = g->psector / (uint32_t)d;
	if (atom < 512 || (atom & (atom - 1)) != 0)
		return -EINVAL;
	return 0;
}

void raid3_scatter(const struct raid3_geom *g, const uint8_t *src, size_t len, uint8_t *const *comp)
{
	size_t d = (size_t)g->ncomp - 1, atom = g->psector / d;
	uint8_t *par = comp[d];
	for (size_t s = 0, c = 0; s < len; s += g->psector, c += atom) {
		memcpy(par + c, src + s, atom);
		memcpy(comp[0] + c, src + s, atom);
		for (size_t i = 1; i < d; i++) {
			const uint8_t *a = src + s + i * atom;
			memcpy(comp[i] + c, a, atom);
			xor_into(par + c, a, atom);
		}
	}
}

void raid3_gather(const struct raid3_geom *g, const uint8_t *const *comp, size_t len, uint8_t *dst)
{
	size_t d = (size_t)g->ncomp - 1, atom = g->psector / d;
	for (size_t s = 0, c = 0; s < len; s += g->psector, c += atom)
		for (size_t i = 0; i < d; i++)
			memcpy(dst + s + i * atom, comp[i] + c, atom);
}

void raid3_rebuild(const struct raid3_geom *g, uint8_t *const *comp, size_t clen, int skip)
{
	uint8_t *out = comp[skip];
	memset(out, 0, clen);
	for (int i = 0; i < g->ncomp; i++) {
		if (i == skip)
			continue;
		xor_into(out, comp[i], clen);
	}
}

bool raid3_consistent(const struct raid3_geom *g, const uint8_t *const *comp, size_t clen)
{
	uint8_t acc[4096];
	static const uint8_t zero[4096];
	for (size_t off = 0; off < clen; off += sizeof(acc)) {
		size_t n = clen - off < sizeof(acc) ? clen - off : sizeof(acc);
		memcpy(acc, comp[0] + off, n);
		for (int i = 1; i < g->ncomp; i++)
			xor_into(acc, comp[i] + off, n);
		if (memcmp(acc, zero, n) != 0)
			return false;
	}
	return true;
}
