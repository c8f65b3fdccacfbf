/* Layout personalities against what the real kernel placed where.
 *
 * tests/unit/test_layout_kernel.tab was extracted (test_layout_kernel.py)
 * from arrays made (test_layout_kernel_make.sh) by Linux 6.1 md + mdadm 4.2
 * in shared/mdvm — raid5 and
 * raid6 in every md layout (raid6 also 16..20), raid10 near/far/offset with
 * odd member counts and 3-4 copies, multi-zone raid0 original/alternate,
 * linear with unequal members, 0.90 / 1.0 / 1.2 metadata. For each member
 * and each chunk-sized cell of its data area the table says which logical
 * chunk the kernel stored there, or P, or Q (with its first 8 bytes), or
 * "-" for unused, as read back from the pattern in the images; the geometry
 * line holds the superblock fields and the array size the kernel reported.
 *
 * Checked here: validate accepts the geometry, array_sectors equals the
 * kernel's size, unmap of every cell names the same thing, map of every
 * logical chunk (all copies) lands on the cells holding it, and Q's first
 * bytes recomputed from the pattern in `stripe`'s syndrome order match. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../harness.h"
#include "layout/layout.h"

#define TAB         "tests/unit/test_layout_kernel.tab"
#define CELL_UNUSED -1
#define CELL_P      -2
#define CELL_Q      -3

struct karray {
	char name[64];
	uint64_t id, sectors, unit;
	struct layout_geometry g;
	int rows[LAYOUT_MAX_MEMBERS];
	int64_t *cell[LAYOUT_MAX_MEMBERS]; /* chunk number or CELL_* */
	uint64_t *q[LAYOUT_MAX_MEMBERS];   /* first 8 bytes of Q cells, LE */
};

static uint8_t gf_mul(uint8_t a, uint8_t b)
{
	uint8_t r = 0;
	for (; b; b >>= 1) {
		if (b & 1)
			r ^= a;
		a = (uint8_t)((a << 1) ^ ((a & 0x80) ? 0x1d : 0));
	}
	return r;
}

static uint64_t pattern(uint64_t id, uint64_t s)
{
	return s * 0x9E3779B97F4A7C15ull + id;
}

static int parse_role(struct karray *a, char *line)
{
	int role;
	unsigned long long data;
	int used;
	if (sscanf(line, "role %d data=%llu:%n", &role, &data, &used) != 2 || role < 0 ||
	    role >= LAYOUT_MAX_MEMBERS)
		return -1;
	a->g.member_sectors[role] = data;
	size_t cap = 64;
	int n = 0;
	a->cell[role] = malloc(cap * sizeof(int64_t));
	a->q[role] = malloc(cap * sizeof(uint64_t));
	for (char *tok = strtok(line + used, " \n"); tok; tok = strtok(NULL, " \n")) {
		if ((size_t)n == cap) {
			cap *= 2;
			a->cell[role] = realloc(a->cell[role], cap * sizeof(int64_t));
			a->q[role] = realloc(a->q[role], cap * sizeof(uint64_t));
		}
		a->q[role][n] = 0;
		if (strcmp(tok, "-") == 0) {
			a->cell[role][n] = CELL_UNUSED;
		} else if (strcmp(tok, "P") == 0) {
			a->cell[role][n] = CELL_P;
		} else if (strncmp(tok, "Q:", 2) == 0 && strlen(tok) == 18) {
			a->cell[role][n] = CELL_Q;
			uint64_t v = 0;
			for (int b = 7; b >= 0; b--) {
				unsigned x;
				if (sscanf(tok + 2 + 2 * b, "%2x", &x) != 1)
					return -1;
				v = v << 8 | x;
			}
			a->q[role][n] = v;
		} else {
			a->cell[role][n] = strtoll(tok, NULL, 10);
		}
		n++;
	}
	a->rows[role] = n;
	return 0;
}

static void free_array(struct karray *a)
{
	for (int r = 0; r < LAYOUT_MAX_MEMBERS; r++) {
		free(a->cell[r]);
		free(a->q[r]);
	}
}

static int64_t cell_at(const struct karray *a, int role, uint64_t row)
{
	if (role < 0 || role >= a->g.raid_disks || row >= (uint64_t)a->rows[role])
		return CELL_UNUSED;
	return a->cell[role][row];
}

static void check_array(struct karray *a)
{
	char err[256] = "";
	const struct layout_ops *ops = layout_ops_for(a->g.level);
	CHECKF(ops && ops->validate(&a->g, err, sizeof(err)) == 0, "%s: %s", a->name, err);
	if (!ops || ops->validate(&a->g, NULL, 0) != 0)
		return;
	CHECKF(ops->array_sectors(&a->g) == a->sectors, "%s: array %llu sectors, kernel %llu",
	       a->name, (unsigned long long)ops->array_sectors(&a->g),
	       (unsigned long long)a->sectors);
	uint64_t unit = a->unit, k = 0;
	struct layout_stripe st;
	if (ops->stripe) {
		ops->stripe(&a->g, 0, &st);
		k = (uint64_t)st.ndata;
	}
	/* every cell: unmap names what the kernel put there */
	uint64_t cells = 0, bad = 0;
	for (int r = 0; r < a->g.raid_disks; r++) {
		CHECKF(a->rows[r] > 0, "%s: no cells for role %d", a->name, r);
		for (uint64_t row = 0; row < (uint64_t)a->rows[r]; row++) {
			int64_t c = a->cell[r][row];
			uint64_t lsec = ~0ull;
			int u = ops->unmap(&a->g, r, row * unit, &lsec);
			bool ok;
			if (c >= 0)
				ok = u == LAYOUT_DATA && lsec == (uint64_t)c * unit;
			else if (c == CELL_P)
				ok = u == LAYOUT_P && lsec == row * k * unit;
			else if (c == CELL_Q)
				ok = u == LAYOUT_Q && lsec == row * k * unit;
			else
				ok = u == -ERANGE;
			if (!ok && bad++ < 5)
				fprintf(stderr,
				        "%s: role %d row %llu: kernel %lld, unmap %d -> %llu\n",
				        a->name, r, (unsigned long long)row, (long long)c, u,
				        (unsigned long long)lsec);
			cells++;
			if (c == CELL_Q) {
				/* Q's first 8 bytes from the pattern, md order */
				ops->stripe(&a->g, row, &st);
				uint8_t q[8] = {0};
				for (int i = 0; i < st.ndata; i++) {
					uint8_t coef = 1;
					for (int e = 0; e < st.q_index[i]; e++)
						coef = gf_mul(coef, 2);
					uint64_t v = pattern(a->id, (row * k + (uint64_t)i) * unit);
					for (int b = 0; b < 8; b++)
						q[b] ^= gf_mul(coef, (uint8_t)(v >> (8 * b)));
				}
				uint64_t qv = 0;
				for (int b = 7; b >= 0; b--)
					qv = qv << 8 | q[b];
				if (qv != a->q[r][row] && bad++ < 5)
					fprintf(stderr, "%s: Q of stripe %llu differs\n", a->name,
					        (unsigned long long)row);
				CHECK(st.q_role == r);
			}
		}
	}
	CHECKF(bad == 0, "%s: %llu of %llu cells disagree with the kernel", a->name,
	       (unsigned long long)bad, (unsigned long long)cells);
	/* every logical chunk: each copy lands where the kernel has it, and
	 * the kernel has no other copy */
	int nc = ops->ncopies(&a->g);
	uint64_t *count = calloc(a->sectors / unit + 1, sizeof(uint64_t));
	for (int r = 0; r < a->g.raid_disks; r++)
		for (int row = 0; row < a->rows[r]; row++)
			if (a->cell[r][row] >= 0 && (uint64_t)a->cell[r][row] <= a->sectors / unit)
				count[a->cell[r][row]]++;
	bad = 0;
	for (uint64_t c = 0; c < a->sectors / unit; c++) {
		for (int cp = 0; cp < nc; cp++) {
			struct layout_loc loc;
			uint64_t len;
			bool ok = ops->map(&a->g, c * unit, cp, &loc, &len) == 0 &&
			          loc.sector % unit == 0 &&
			          cell_at(a, loc.role, loc.sector / unit) == (int64_t)c;
			if (!ok && bad++ < 5)
				fprintf(stderr, "%s: chunk %llu copy %d misplaced\n", a->name,
				        (unsigned long long)c, cp);
		}
		if (count[c] != (uint64_t)nc && bad++ < 5)
			fprintf(stderr, "%s: kernel has %llu copies of chunk %llu, layout %d\n",
			        a->name, (unsigned long long)count[c], (unsigned long long)c, nc);
	}
	free(count);
	CHECKF(bad == 0, "%s: %llu logical chunks disagree", a->name, (unsigned long long)bad);
}

static int kernel_arrays_checked;

static void test_kernel_table(void)
{
	FILE *f = fopen(TAB, "r");
	CHECKF(f != NULL, "cannot open %s (run from the repository top)", TAB);
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	struct karray a;
	bool have = false;
	while (getline(&line, &cap, f) > 0) {
		if (line[0] == '#')
			continue;
		if (strncmp(line, "array ", 6) == 0) {
			if (have) {
				check_array(&a);
				free_array(&a);
				kernel_arrays_checked++;
			}
			memset(&a, 0, sizeof(a));
			unsigned long long id, size, sectors, unit;
			int level, chunk, disks;
			unsigned layout;
			int n = sscanf(line,
			               "array %63s id=%llu level=%d layout=%u chunk=%d disks=%d "
			               "size=%llu sectors=%llu unit=%llu",
			               a.name, &id, &level, &layout, &chunk, &disks, &size,
			               &sectors, &unit);
			CHECKF(n == 9, "bad line: %s", line);
			a.id = id;
			a.g.level = level;
			a.g.layout = layout;
			a.g.chunk_sectors = (uint32_t)chunk;
			a.g.raid_disks = disks;
			a.g.dev_sectors = size;
			a.sectors = sectors;
			a.unit = unit ? unit : 1;
			have = n == 9;
		} else if (have) {
			CHECKF(parse_role(&a, line) == 0, "%s: bad role line", a.name);
		}
	}
	if (have) {
		check_array(&a);
		free_array(&a);
		kernel_arrays_checked++;
	}
	free(line);
	fclose(f);
	CHECK(kernel_arrays_checked >= 30);
}

TEST_MAIN(T(test_kernel_table))
