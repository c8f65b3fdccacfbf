/* uraid_locate for md arrays: the member pieces behind an array range, from
 * the layout's own map (the one reads and writes use), and with the probe
 * what each of them answers to a direct read now. A reader that met an
 * unreadable range (cat --keep-going) names with it the members that
 * failed there. Nothing is written; the state lock keeps the member table
 * still while the members are read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/md.h"

#define PROBE_MAX_SECTORS 2048u /* 1 MiB */

struct places {
	struct uraid_place *out;
	int max, n;
	uint8_t *buf; /* probe buffer, NULL without the probe */
};

/* In the member's bad block log, as the level judges it: raid4/5/6 by
 * whole 4 KiB stripe units (md's stripe head), mirrors by sector; linear
 * and raid0 never ask. */
static bool recorded_bad(const struct eng_array *a, int role, uint64_t msec, uint64_t nsec)
{
	if (a->geo.level == URAID_LEVEL_RAID0 || a->geo.level == URAID_LEVEL_LINEAR)
		return false;
	int lvl = a->geo.level;
	if (lvl == URAID_LEVEL_RAID4 || lvl == URAID_LEVEL_RAID5 || lvl == URAID_LEVEL_RAID6) {
		uint64_t end = (msec + nsec + 7) / 8 * 8;
		msec = msec / 8 * 8;
		nsec = end - msec;
	}
	return eng_role_bad(a, role, msec, nsec);
}

static void add_place(struct eng_array *a, struct places *p, int role, enum uraid_place_kind kind,
                      uint64_t msec, uint64_t nsec)
{
	int i = p->n++;
	if (i >= p->max)
		return;
	struct uraid_place *pl = &p->out[i];
	memset(pl, 0, sizeof(*pl));
	pl->slot = role;
	pl->kind = kind;
	pl->state = URAID_MEMBER_MISSING;
	const struct eng_member *em = a->slot[role] >= 0 ? a->mem[a->slot[role]] : NULL;
	for (int k = 0; !em && k < a->nmem; k++) /* failed there: it keeps its role */
		if (a->mem[k]->role == role && a->mem[k]->state == URAID_MEMBER_FAULTY)
			em = a->mem[k];
	if (em) {
		snprintf(pl->member, sizeof(pl->member), "%s", em->m ? em->m->name : "");
		pl->state = em->state;
		pl->member_offset = (em->sb.data_offset + msec) * 512;
	}
	if (!p->buf)
		return;
	if (!em || !em->m)
		pl->probe = -ENODEV;
	else if (a->slot[role] < 0 || !eng_role_present(a, role, msec, nsec))
		pl->probe = -ESTALE;
	else if (recorded_bad(a, role, msec, nsec))
		pl->probe = -ENODATA;
	else
		pl->probe = eng_member_io(a, role, false, p->buf, msec,
		                          nsec < PROBE_MAX_SECTORS ? nsec : PROBE_MAX_SECTORS);
}

/* Parity levels: the stripe row's members, the one holding the data first. */
static uint64_t locate_row(struct eng_array *a, struct places *p, uint64_t lsec, uint64_t nsec)
{
	uint64_t chunk = a->geo.chunk_sectors;
	struct layout_stripe ls;
	a->ops->stripe(&a->geo, 0, &ls);
	uint64_t row = (uint64_t)ls.ndata * chunk;
	uint64_t stripe = lsec / row, in = lsec % row;
	int di = (int)(in / chunk);
	uint64_t co = in % chunk, n = chunk - co < nsec ? chunk - co : nsec;
	a->ops->stripe(&a->geo, stripe, &ls);
	uint64_t msec = ls.sector + co;
	add_place(a, p, ls.data_role[di], URAID_PLACE_DATA, msec, n);
	for (int d = 0; d < ls.ndata; d++)
		if (d != di)
			add_place(a, p, ls.data_role[d], URAID_PLACE_PEER, msec, n);
	add_place(a, p, ls.p_role, URAID_PLACE_P, msec, n);
	if (ls.q_role >= 0)
		add_place(a, p, ls.q_role, URAID_PLACE_Q, msec, n);
	return n;
}

/* The other levels: each copy the layout maps the sector to. */
static int locate_copies(struct eng_array *a, struct places *p, uint64_t lsec, uint64_t nsec,
                         uint64_t *n)
{
	int copies = a->ncopies;
	*n = nsec;
	for (int c = 0; c < copies; c++) {
		struct layout_loc loc;
		uint64_t len;
		int rc = a->ops->map(&a->geo, lsec, c, &loc, &len);
		if (rc < 0)
			return rc;
		if (len < *n)
			*n = len;
	}
	for (int c = 0; c < copies; c++) {
		struct layout_loc loc;
		uint64_t len;
		a->ops->map(&a->geo, lsec, c, &loc, &len);
		add_place(a, p, loc.role, copies > 1 ? URAID_PLACE_COPY : URAID_PLACE_DATA,
		          loc.sector, *n);
	}
	return 0;
}

int eng_locate(struct eng_array *a, uint64_t off, uint64_t len, unsigned flags,
               struct uraid_place *out, int max, uint64_t *piece)
{
	struct places p = {.out = out, .max = max};
	if (flags & URAID_LOCATE_PROBE) {
		p.buf = malloc(PROBE_MAX_SECTORS * 512);
		if (!p.buf)
			return -ENOMEM;
	}
	uint64_t lsec = off / 512, nsec = len / 512, n = 0;
	int rc = 0;
	eng_lock(a);
	if (a->ops->stripe)
		n = locate_row(a, &p, lsec, nsec);
	else
		rc = locate_copies(a, &p, lsec, nsec, &n);
	eng_unlock(a);
	free(p.buf);
	if (rc < 0)
		return rc;
	*piece = n * 512;
	return p.n;
}
