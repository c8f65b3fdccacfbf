/* gmirror read balance policies (see src/geom/geom.h). Pure: no I/O. */
#include <errno.h>

#include "geom/geom.h"

static int first_active(const struct geom_bal *b)
{
	for (int i = 0; i < b->ndisks; i++)
		if (b->d[i].active)
			return i;
	return -1;
}

static int next_rr(struct geom_bal *b)
{
	for (int k = 0; k < b->ndisks; k++) {
		int i = (b->rr_next + k) % b->ndisks;
		if (b->d[i].active) {
			b->rr_next = (i + 1) % b->ndisks;
			return i;
		}
	}
	return -1;
}

static int pick_prefer(const struct geom_bal *b)
{
	int best = -1;
	for (int i = 0; i < b->ndisks; i++)
		if (b->d[i].active && (best < 0 || b->d[i].priority > b->d[best].priority))
			best = i;
	return best;
}

static int pick_load(struct geom_bal *b, uint64_t off)
{
	int best = -1;
	int64_t best_score = 0;
	for (int i = 0; i < b->ndisks; i++) {
		const struct geom_bal_disk *d = &b->d[i];
		if (!d->active)
			continue;
		int64_t score = d->load;
		uint64_t dist = d->head > off ? d->head - off : off - d->head;
		if (dist == 0)
			score -= 2 * GEOM_LOAD_SCALE;
		else if (dist <= GEOM_TRACK_BYTES)
			score -= GEOM_LOAD_SCALE;
		if (best < 0 || score < best_score) {
			best = i;
			best_score = score;
		}
	}
	/* Every disk's average drifts toward its present queue depth, so a
	 * disk that was busy a moment ago is not shunned forever. */
	for (int i = 0; i < b->ndisks; i++) {
		struct geom_bal_disk *d = &b->d[i];
		uint64_t now = (uint64_t)(d->inflight + (i == best)) * GEOM_LOAD_SCALE;
		d->load = (uint32_t)((now + 7ull * d->load) / 8);
	}
	return best;
}

int geom_bal_choose(struct geom_bal *b, uint64_t off, uint64_t len, struct geom_piece *out)
{
	if (b->ndisks <= 0 || b->ndisks > GEOM_MAX_DISKS || first_active(b) < 0)
		return -EIO;
	int disk;
	switch (b->balance) {
	case GEOM_BALANCE_PREFER: disk = pick_prefer(b); break;
	case GEOM_BALANCE_ROUND_ROBIN: disk = next_rr(b); break;
	case GEOM_BALANCE_SPLIT: {
		int nact = 0;
		for (int i = 0; i < b->ndisks; i++)
			nact += b->d[i].active;
		uint32_t ss = b->sectorsize ? b->sectorsize : 512;
		if (len <= b->slice || nact < 2 || len < (uint64_t)ss * 2) {
			disk = next_rr(b);
			break;
		}
		/* One piece per active disk, sector aligned; the last takes the rest. */
		uint64_t per = (len / nact + ss - 1) / ss * ss;
		int n = 0;
		uint64_t pos = off, end = off + len;
		for (int i = 0; i < b->ndisks && pos < end; i++) {
			if (!b->d[i].active)
				continue;
			uint64_t l = end - pos < per ? end - pos : per;
			out[n++] = (struct geom_piece){i, pos, l};
			b->d[i].inflight++;
			b->d[i].head = pos + l;
			pos += l;
		}
		return n;
	}
	case GEOM_BALANCE_LOAD:
	default: /* "none" reads like load: gmirror never stores it for a live mirror */
		disk = pick_load(b, off);
		break;
	}
	out[0] = (struct geom_piece){disk, off, len};
	b->d[disk].inflight++;
	b->d[disk].head = off + len;
	return 1;
}

void geom_bal_done(struct geom_bal *b, int disk)
{
	if (disk >= 0 && disk < b->ndisks && b->d[disk].inflight > 0)
		b->d[disk].inflight--;
}
