/* uraid_locate (engine/locate.c): the member pieces behind an array range.
 * Checked by content, not by the layout's formulas: the array is filled
 * with random data, and at random ranges the bytes the disks hold at the
 * places it names must be the array's bytes (data, every copy), the
 * parity of a row must make it XOR to zero (raid5, P of raid6), and the
 * piece length must keep all of that true to its end. With the probe, a
 * read error injected on one disk shows on that place only, a failed
 * member shows as not in sync, and a range two members cannot read is one
 * uraid_read refuses (what cat --keep-going turns into zeros). */
#include "test_engine_common.h"

#define DISK_BYTES (4u << 20)

struct lt {
	struct te_disk d[TE_MAX];
	int n;
	struct uraid_array *a;
	uint8_t *shadow;
	uint64_t size;
};

static bool lt_open(struct lt *t, int level, int n, uint32_t layout, uint64_t seed)
{
	memset(t, 0, sizeof(*t));
	t->n = n;
	for (int i = 0; i < n; i++) {
		char name[16];
		snprintf(name, sizeof(name), "d%d", i);
		te_disk_open(&t->d[i], name, DISK_BYTES);
	}
	struct uraid_create_opts o = {.level = level,
	                              .raid_devices = n,
	                              .chunk_sectors = 128,
	                              .layout = layout,
	                              .layout_set = layout != 0,
	                              .assume_clean = true};
	CHECK(te_create(&o, t->d, n, &t->a) == 0);
	if (!t->a)
		return false;
	t->size = uraid_size(t->a);
	t->shadow = malloc(t->size);
	t_fill(&seed, t->shadow, t->size);
	CHECK(uraid_write(t->a, t->shadow, t->size, 0) == 0);
	CHECK(uraid_flush(t->a) == 0);
	return true;
}

static void lt_close(struct lt *t)
{
	if (t->a)
		uraid_stop(t->a);
	for (int i = 0; i < t->n; i++)
		te_disk_close(&t->d[i]);
	free(t->shadow);
}

static int disk_of(struct lt *t, const struct uraid_place *p)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->d[i].name, p->member))
			return i;
	return -1;
}

/* Random ranges: what the places hold agrees with the array's contents. */
static void places_hold_the_data(struct lt *t, const char *what, uint64_t seed)
{
	struct uraid_place pl[URAID_LOCATE_MAX];
	uint8_t *buf = malloc(1 << 20), *acc = malloc(1 << 20);
	for (int it = 0; it < 200; it++) {
		uint64_t secs = t->size / 512;
		uint64_t off = t_rand(&seed) % secs * 512;
		uint64_t len = (1 + t_rand(&seed) % 300) * 512;
		if (len > t->size - off)
			len = t->size - off;
		uint64_t piece = 0;
		int n = uraid_locate(t->a, off, len, 0, pl, URAID_LOCATE_MAX, &piece);
		CHECKF(n > 0 && piece > 0 && piece <= len && piece % 512 == 0,
		       "%s: locate %llu+%llu: %d, piece %llu", what, (unsigned long long)off,
		       (unsigned long long)len, n, (unsigned long long)piece);
		if (n <= 0 || piece == 0)
			continue;
		bool parity = false;
		memset(acc, 0, piece);
		for (int i = 0; i < n; i++) {
			int disk = disk_of(t, &pl[i]);
			CHECKF(
			    disk >= 0 && pl[i].slot == disk && pl[i].state == URAID_MEMBER_IN_SYNC,
			    "%s: place %d names '%s' slot %d", what, i, pl[i].member, pl[i].slot);
			if (disk < 0)
				continue;
			CHECK(member_read(t->d[disk].mem, buf, piece, pl[i].member_offset) == 0);
			switch (pl[i].kind) {
			case URAID_PLACE_DATA:
			case URAID_PLACE_COPY:
				CHECKF(i == 0 || pl[i].kind == URAID_PLACE_COPY,
				       "%s: the data is not the first place", what);
				CHECKF(memcmp(buf, t->shadow + off, piece) == 0,
				       "%s: %s at %s+%llu is not the array's bytes at %llu", what,
				       uraid_place_kind_name(pl[i].kind), pl[i].member,
				       (unsigned long long)pl[i].member_offset,
				       (unsigned long long)off);
				break;
			case URAID_PLACE_P: parity = true; /* fall through */
			case URAID_PLACE_PEER: break;
			case URAID_PLACE_Q: continue; /* not part of the XOR */
			}
			if (pl[i].kind != URAID_PLACE_COPY)
				for (uint64_t b = 0; b < piece; b++)
					acc[b] ^= buf[b];
		}
		if (parity) {
			bool zero = true;
			for (uint64_t b = 0; b < piece && zero; b++)
				zero = acc[b] == 0;
			CHECKF(zero, "%s: the row at %llu does not XOR to zero", what,
			       (unsigned long long)off);
		}
	}
	free(buf);
	free(acc);
}

static void levels(void)
{
	static const struct {
		int level, n;
		uint32_t layout;
		const char *what;
		int places; /* per piece */
	} c[] = {
	    {URAID_LEVEL_RAID5, 4, 0, "raid5 ls", 4},
	    {URAID_LEVEL_RAID5, 5, 1, "raid5 ra", 5}, /* right-asymmetric */
	    {URAID_LEVEL_RAID6, 5, 0, "raid6", 5},
	    {URAID_LEVEL_RAID4, 4, 0, "raid4", 4},
	    {URAID_LEVEL_RAID1, 3, 0, "raid1", 3},
	    {URAID_LEVEL_RAID10, 4, 0x102, "raid10 n2", 2},
	    {URAID_LEVEL_RAID10, 4, 0x201, "raid10 f2", 2},
	    {URAID_LEVEL_RAID0, 3, 0, "raid0", 1},
	    {URAID_LEVEL_LINEAR, 3, 0, "linear", 1},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct lt t;
		if (lt_open(&t, c[i].level, c[i].n, c[i].layout, 0x10c + i)) {
			struct uraid_place pl[URAID_LOCATE_MAX];
			uint64_t piece;
			CHECKF(uraid_locate(t.a, 0, 512, 0, pl, URAID_LOCATE_MAX, &piece) ==
			           c[i].places,
			       "%s: places", c[i].what);
			places_hold_the_data(&t, c[i].what, 0x20c + i);
		}
		lt_close(&t);
	}
}

/* Refusals, and max smaller than the places. */
static void bad_arguments(void)
{
	struct lt t;
	if (!lt_open(&t, URAID_LEVEL_RAID5, 4, 0, 7)) {
		lt_close(&t);
		return;
	}
	struct uraid_place pl[URAID_LOCATE_MAX];
	uint64_t piece = 99;
	CHECK(uraid_locate(t.a, 100, 512, 0, pl, 8, &piece) == -EINVAL);
	CHECK(uraid_locate(t.a, 0, 100, 0, pl, 8, &piece) == -EINVAL);
	CHECK(uraid_locate(t.a, 0, 0, 0, pl, 8, &piece) == -EINVAL);
	CHECK(uraid_locate(t.a, t.size, 512, 0, pl, 8, &piece) == -EINVAL);
	CHECK(uraid_locate(t.a, t.size - 512, 1024, 0, pl, 8, &piece) == -EINVAL);
	CHECK(uraid_locate(t.a, 0, 512, 0x80, pl, 8, &piece) == -EINVAL);
	CHECK(uraid_locate(t.a, 0, 512, 0, NULL, 8, &piece) == -EINVAL);
	CHECK(uraid_locate(t.a, 0, 512, 0, pl, 8, NULL) == -EINVAL);
	CHECK(uraid_locate(t.a, 0, 512, 0, pl, 2, &piece) == 4); /* all counted */
	CHECK(uraid_locate(t.a, 0, 512, 0, NULL, 0, &piece) == 4 && piece == 512);
	lt_close(&t);
}

/* The probe: read errors and failed members where they are, and a range
 * that two members cannot read refused by the array. */
static void probe_names_the_failing_members(void)
{
	struct lt t;
	if (!lt_open(&t, URAID_LEVEL_RAID5, 4, 0, 8)) {
		lt_close(&t);
		return;
	}
	struct uraid_place pl[URAID_LOCATE_MAX];
	uint64_t piece, off = 5 * 128 * 512 * 3 + 4096; /* row 5 */
	int n = uraid_locate(t.a, off, 4096, URAID_LOCATE_PROBE, pl, URAID_LOCATE_MAX, &piece);
	CHECK(n == 4 && piece == 4096);
	for (int i = 0; i < n; i++)
		CHECKF(pl[i].probe == 0, "healthy: place %d probe %d", i, pl[i].probe);
	/* A read error on the data's disk, in exactly that piece. */
	int data = disk_of(&t, &pl[0]), peer = disk_of(&t, &pl[1]);
	struct member_fault_rule r = {
	    .op = MEMBER_OP_READ, .off = pl[0].member_offset, .len = 4096, .error = EIO};
	CHECK(member_fault_add(t.d[data].fault, &r) == 0);
	CHECK(uraid_locate(t.a, off, 4096, URAID_LOCATE_PROBE, pl, URAID_LOCATE_MAX, &piece) == 4);
	for (int i = 0; i < 4; i++)
		CHECKF(pl[i].probe == (i == 0 ? -EIO : 0), "place %d probe %d", i, pl[i].probe);
	uint8_t buf[4096];
	CHECK(uraid_read(t.a, buf, 4096, off) == 0); /* rebuilt from the row */
	CHECK(memcmp(buf, t.shadow + off, 4096) == 0);
	/* A second member of the row failed: nothing can supply that piece. */
	char who[16], err[256];
	snprintf(who, sizeof(who), "#%d", peer);
	CHECK(uraid_fail(t.a, who, err, sizeof(err)) == 0);
	CHECK(uraid_locate(t.a, off, 4096, URAID_LOCATE_PROBE, pl, URAID_LOCATE_MAX, &piece) == 4);
	CHECK(pl[0].probe == -EIO);
	CHECKF(pl[1].probe == -ESTALE && pl[1].state == URAID_MEMBER_FAULTY,
	       "failed peer: probe %d state %d", pl[1].probe, pl[1].state);
	CHECK(uraid_read(t.a, buf, 4096, off) == -EIO);
	/* Next to it, everything still reads. */
	CHECK(uraid_read(t.a, buf, 4096, off + 4096) == 0);
	CHECK(memcmp(buf, t.shadow + off + 4096, 4096) == 0);
	lt_close(&t);
}

TEST_MAIN(T(levels), T(bad_arguments), T(probe_names_the_failing_members))
