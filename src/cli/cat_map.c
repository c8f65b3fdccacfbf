/* uraid cat --keep-going's account of what it could not read (cat_map.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cat_map.h"

int cat_map_add(struct cat_map *m, uint64_t off, uint64_t len)
{
	m->bad_bytes += len;
	if (m->n && m->r[m->n - 1].off + m->r[m->n - 1].len == off) {
		m->r[m->n - 1].len += len;
		return 0;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct cat_range *r = realloc(m->r, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		m->r = r;
		m->cap = cap;
	}
	m->r[m->n++] = (struct cat_range){off, len};
	return 0;
}

void cat_map_free(struct cat_map *m)
{
	free(m->r);
	memset(m, 0, sizeof(*m));
}

static const char *state_name(enum uraid_member_state s)
{
	switch (s) {
	case URAID_MEMBER_IN_SYNC: return "in sync";
	case URAID_MEMBER_FAULTY: return "faulty";
	case URAID_MEMBER_MISSING: return "missing";
	case URAID_MEMBER_SPARE: return "spare";
	case URAID_MEMBER_REBUILDING: return "rebuilding";
	case URAID_MEMBER_STALE: return "stale";
	case URAID_MEMBER_INACTIVE: return "inactive";
	}
	return "?";
}

static void describe_piece(FILE *f, const char *prefix, const struct uraid_place *pl, int n)
{
	for (int i = 0; i < n; i++) {
		const struct uraid_place *p = &pl[i];
		char why[96];
		if (p->probe == 0)
			snprintf(why, sizeof(why), "reads");
		else if (p->probe == -ENODEV)
			snprintf(why, sizeof(why), "no member");
		else if (p->probe == -ESTALE)
			snprintf(why, sizeof(why), "not in sync there (%s)", state_name(p->state));
		else if (p->probe == -ENODATA)
			snprintf(why, sizeof(why), "in its bad block log");
		else
			snprintf(why, sizeof(why), "read error (%s)", strerror(-p->probe));
		if (p->member[0])
			fprintf(f, "%s  slot %d %s at member byte 0x%" PRIx64 ": %s, %s\n", prefix,
			        p->slot, p->member, p->member_offset,
			        uraid_place_kind_name(p->kind), why);
		else
			fprintf(f, "%s  slot %d (no member): %s, %s\n", prefix, p->slot,
			        uraid_place_kind_name(p->kind), why);
	}
}

void cat_map_describe(FILE *f, const char *prefix, struct uraid_array *a, uint64_t off,
                      uint64_t len, int max_pieces)
{
	struct uraid_place *pl = a ? calloc(URAID_LOCATE_MAX, sizeof(*pl)) : NULL;
	int pieces = 0;
	uint64_t more = 0;
	while (len) {
		uint64_t piece = 0;
		int n =
		    pl ? uraid_locate(a, off, len, URAID_LOCATE_PROBE, pl, URAID_LOCATE_MAX, &piece)
		       : (a ? -ENOMEM : -EOPNOTSUPP);
		if (n < 0 || piece == 0) {
			if (pieces == 0)
				fprintf(f, "%s  (members not known: %s)\n", prefix,
				        a ? strerror(-n) : "read through the array's daemon");
			free(pl);
			return;
		}
		if (pieces < max_pieces) {
			fprintf(f, "%s 0x%" PRIx64 " +0x%" PRIx64 ":\n", prefix, off, piece);
			describe_piece(f, prefix, pl, n < URAID_LOCATE_MAX ? n : URAID_LOCATE_MAX);
		} else {
			more++;
		}
		pieces++;
		off += piece;
		len -= piece;
	}
	if (more)
		fprintf(f, "%s  ... and %" PRIu64 " more pieces\n", prefix, more);
	free(pl);
}

static void block(FILE *f, uint64_t pos, uint64_t size, char status)
{
	if (size)
		fprintf(f, "0x%08" PRIx64 "  0x%08" PRIx64 "  %c\n", pos, size, status);
}

int cat_map_write(const struct cat_map *m, FILE *f, struct uraid_array *a, uint64_t start,
                  uint64_t end, uint64_t size, const char *what)
{
	fprintf(f, "# Mapfile. Created by uraid %s (GNU ddrescue's format)\n", URAID_VERSION);
	fprintf(f, "# %s\n", what);
	fprintf(f, "# '+' read, '-' no member and no redundancy could supply it (zeros written),\n"
	           "# '?' not part of this read. Before each '-' area: the members behind it.\n");
	fprintf(f, "# current_pos  current_status  current_pass\n");
	fprintf(f, "0x%08" PRIx64 "     +               1\n", end);
	fprintf(f, "#      pos        size  status\n");
	block(f, 0, start, '?');
	uint64_t pos = start;
	for (size_t i = 0; i < m->n; i++) {
		block(f, pos, m->r[i].off - pos, '+');
		cat_map_describe(f, "#", a, m->r[i].off, m->r[i].len, 16);
		block(f, m->r[i].off, m->r[i].len, '-');
		pos = m->r[i].off + m->r[i].len;
	}
	block(f, pos, end - pos, '+');
	block(f, end, size - end, '?');
	return ferror(f) ? -EIO : 0;
}
