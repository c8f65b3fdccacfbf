/* assemble --force (engine/membership.c eng_force_members, mdadm's rules):
 * a raid5 whose members dropped out one after the other (d3 first, d2 some
 * events later: its image is put back as it was then, before a stop and a
 * restart that wrote the second half) is refused, the
 * message naming what --force would do; with URAID_FORCE the freshest
 * dropped member (d2, not the older d3) is forced in and named, the data
 * written before it dropped reads back, its superblock records the array's
 * events so a plain assembly works afterwards; read-only, the same happens
 * in memory with no byte of any disk changed; where forcing cannot make an
 * array that starts, nothing is forced and nothing written. The kernel's
 * own mdadm --force is the reference in tests/integration/force_mdvm.sh. */
#include "meta/md_super.h"
#include "test_engine_common.h"

#define DISK_BYTES (4u << 20)

static int assemble_flags(struct te_disk *d, const int *idx, int n, unsigned flags,
                          struct uraid_array **a, char *err, size_t errlen, char *warn,
                          size_t warnlen)
{
	struct member *mm[TE_MAX];
	for (int i = 0; i < n; i++)
		mm[i] = te_borrow(&d[idx[i]]);
	return uraid_assemble_members(mm, n, URAID_NO_SYNC_THREAD | flags, a, err, errlen, warn,
	                              warnlen);
}

static uint8_t *image(struct te_disk *d)
{
	uint8_t *b = malloc(DISK_BYTES);
	CHECK(b && member_read(d->mem, b, DISK_BYTES, 0) == 0);
	return b;
}

static bool same_images(struct te_disk *d, int n, uint8_t *const *img)
{
	bool same = true;
	for (int i = 0; i < n; i++) {
		uint8_t *now = image(&d[i]);
		same = same && !memcmp(now, img[i], DISK_BYTES);
		free(now);
	}
	return same;
}

static uint64_t events_of(struct te_disk *d)
{
	struct md_sb sb;
	char e[256];
	return md_sb_load(d->mem, &sb, e, sizeof(e)) == 0 ? sb.events : 0;
}

/* d3 fails, the first half is written degraded, d2 "drops" (its image
 * taken), the second half is written, d2's image put back. */
static uint8_t *two_dropped(struct te_disk *d, uint64_t *size, uint64_t *half)
{
	for (int i = 0; i < 4; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "d%d", i);
		te_disk_open(&d[i], nm, DISK_BYTES);
	}
	struct uraid_create_opts o = {.level = URAID_LEVEL_RAID5,
	                              .raid_devices = 4,
	                              .chunk_sectors = 64,
	                              .assume_clean = true};
	struct uraid_array *a = NULL;
	CHECK(te_create(&o, d, 4, &a) == 0);
	if (!a)
		return NULL;
	*size = uraid_size(a);
	*half = *size / 2 / 4096 * 4096;
	uint8_t *shadow = malloc(*size);
	uint64_t seed = 0xf0;
	t_fill(&seed, shadow, *size);
	char err[256];
	CHECK(uraid_write(a, shadow, *half / 2, 0) == 0);
	CHECK(uraid_fail(a, "#3", err, sizeof(err)) == 0);
	CHECK(uraid_write(a, shadow + *half / 2, *half - *half / 2, *half / 2) == 0);
	CHECK(uraid_flush(a) == 0);
	uint8_t *d2 = image(&d[2]);
	CHECK(uraid_stop(a) == 0); /* clean: events move on */
	const int three[3] = {0, 1, 2};
	char warn[512];
	CHECK(te_assemble(d, three, 3, &a, warn, sizeof(warn)) == 0);
	if (a) {
		CHECK(uraid_write(a, shadow + *half, *size - *half, *half) == 0);
		CHECK(uraid_stop(a) == 0);
	}
	CHECK(member_write(d[2].mem, d2, DISK_BYTES, 0, 0) == 0);
	free(d2);
	return shadow;
}

static void forced_in_freshest_first(void)
{
	struct te_disk d[4];
	uint64_t size, half;
	uint8_t *shadow = two_dropped(d, &size, &half);
	if (!shadow)
		return;
	uint64_t ev_fresh = events_of(&d[0]), ev2 = events_of(&d[2]), ev3 = events_of(&d[3]);
	CHECKF(ev3 < ev2 && ev2 < ev_fresh, "events d0 %llu d2 %llu d3 %llu",
	       (unsigned long long)ev_fresh, (unsigned long long)ev2, (unsigned long long)ev3);
	uint8_t *img[4];
	for (int i = 0; i < 4; i++)
		img[i] = image(&d[i]);
	const int all[4] = {3, 1, 2, 0}; /* any order */
	struct uraid_array *a = NULL;
	char err[1024] = "", warn[2048] = "";
	/* Without --force: refused, naming d2 (not d3) as what it would take. */
	CHECK(assemble_flags(d, all, 4, 0, &a, err, sizeof(err), warn, sizeof(warn)) == -ENODEV);
	CHECKF(strstr(err, "--force would start it by forcing in d2 (slot 2") &&
	           !strstr(err, "d3 (slot"),
	       "refusal: %s", err);
	CHECK(same_images(d, 4, img));
	/* Read-only --force: in memory, the first half reads back. */
	CHECK(assemble_flags(d, all, 4, URAID_FORCE | URAID_RDONLY, &a, err, sizeof(err), warn,
	                     sizeof(warn)) == 0);
	char want[160];
	snprintf(want, sizeof(want), "forcing event count in d2 (slot 2) from %llu up to %llu",
	         (unsigned long long)ev2, (unsigned long long)ev_fresh);
	CHECKF(strstr(warn, want) && !strstr(warn, "forcing event count in d3"), "warn: %s", warn);
	if (a) {
		CHECK(te_verify(a, shadow, half) == 0);
		uraid_stop(a);
	}
	CHECK(same_images(d, 4, img));
	/* Read-write --force: the superblocks record it. */
	CHECK(assemble_flags(d, all, 4, URAID_FORCE, &a, err, sizeof(err), warn, sizeof(warn)) ==
	      0);
	if (a) {
		struct uraid_status st;
		uraid_status(a, &st);
		CHECK(st.working == 3 && st.degraded == 1);
		CHECK(te_verify(a, shadow, half) == 0);
		CHECK(uraid_stop(a) == 0);
	}
	CHECK(events_of(&d[2]) >= ev_fresh);
	CHECK(assemble_flags(d, all, 4, 0, &a, err, sizeof(err), warn, sizeof(warn)) == 0);
	if (a) {
		CHECK(te_verify(a, shadow, half) == 0);
		uraid_stop(a);
	}
	for (int i = 0; i < 4; i++) {
		free(img[i]);
		te_disk_close(&d[i]);
	}
	free(shadow);
}

/* Forcing cannot help with only d0 and d1 given: nothing forced, no hint.
 * With the old d3 given instead of d2, d3 is what there is to force (mdadm
 * forces it too, however far behind): forced, read-only, and the part
 * written before it dropped reads back. No disk changes in either case. */
static void force_only_what_helps(void)
{
	struct te_disk d[4];
	uint64_t size, half;
	uint8_t *shadow = two_dropped(d, &size, &half);
	if (!shadow)
		return;
	uint8_t *img[4];
	for (int i = 0; i < 4; i++)
		img[i] = image(&d[i]);
	const int two[2] = {0, 1}, three[3] = {0, 1, 3};
	struct uraid_array *a = NULL;
	char err[1024] = "", warn[2048] = "";
	CHECK(assemble_flags(d, two, 2, URAID_FORCE, &a, err, sizeof(err), warn, sizeof(warn)) ==
	      -ENODEV);
	CHECKF(!strstr(warn, "forcing") && !strstr(err, "--force would"), "err %s warn %s", err,
	       warn);
	CHECK(assemble_flags(d, three, 3, URAID_FORCE | URAID_RDONLY, &a, err, sizeof(err), warn,
	                     sizeof(warn)) == 0);
	CHECKF(strstr(warn, "forcing event count in d3 (slot 3)"), "warn: %s", warn);
	if (a) {
		/* d3 dropped before the first half's second quarter: the first
		 * quarter reads back from it. */
		CHECK(te_verify(a, shadow, half / 2 / 65536 * 65536) == 0);
		uraid_stop(a);
	}
	CHECK(same_images(d, 4, img));
	for (int i = 0; i < 4; i++) {
		free(img[i]);
		te_disk_close(&d[i]);
	}
	free(shadow);
}

TEST_MAIN(T(forced_in_freshest_first), T(force_only_what_helps))
