/* graid3 address math: provider sectors striped across the data
 * components in atoms, parity on the last component. Pure, no I/O. */
#include <errno.h>
#include <string.h>

#include "layout/layout.h"

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
			for (size_t b = 0; b < atom; b++)
				par[c + b] ^= a[b];
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
		const uint8_t *a = comp[i];
		for (size_t b = 0; b < clen; b++)
			out[b] ^= a[b];
	}
}

bool raid3_consistent(const struct raid3_geom *g, const uint8_t *const *comp, size_t clen)
{
	for (size_t b = 0; b < clen; b++) {
		uint8_t x = 0;
		for (int i = 0; i < g->ncomp; i++)
			x ^= comp[i][b];
		if (x)
			return false;
	}
	return true;
}
