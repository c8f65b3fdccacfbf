/* Member failures during a reshape (engine/reshape.c, core/reshape.h): a
 * raid5 grown 4 -> 5 loses one member, a raid6 grown 5 -> 6 two, and a
 * raid5 chunk + layout change one, a raid5 with an internal bitmap one, a
 * raid10 near-2 grown 4 -> 5 one (and one grown degraded),
 * each at a random moment of the move
 * (every request to the member fails with EIO from then on, through the
 * fault wrapper), while random writes, reads and flushes go on against a
 * shadow copy and the array is stopped and assembled again (without the
 * lost members) at random. As md does, the reshape goes on degraded; every
 * read must equal the shadow, the reshape must finish with the new
 * geometry, and after fresh spares are added and recovered, check must
 * find no mismatch and the content must still be the shadow. And a
 * reshape of an array with PPL is refused, as md refuses it.
 * RESHAPE_FAIL_TRIALS (per config, default 26) and RESHAPE_FAIL_SEED scale
 * and move it. */
#include "meta/md_reshape.h"
#include "meta/md_super.h"
#include "reshape_common.h"

struct rf_cfg {
	const char *name;
	int level, ndisks, to_disks, layout; /* layout -1: unchanged */
	uint32_t chunk, to_chunk, move;
	int nfail;
	uint32_t bitmap_chunk; /* bytes: an internal bitmap; 0 none */
	int degraded;          /* 1: member 0 failed before the reshape (md reshapes so) */
	int forced;            /* new slots with no spare: mdadm --force, left empty */
	int slide;             /* 1: 0.90 in place, mdadm's sliding backup on a member */
};

static const struct rf_cfg rfcfgs[] = {
    {"raid5_4to5", URAID_LEVEL_RAID5, 4, 5, -1, 16, 0, 48, 1, 0, 0, 0, 0},
    {"raid6_5to6", URAID_LEVEL_RAID6, 5, 6, -1, 16, 0, 64, 2, 0, 0, 0, 0},
    {"raid5_chunk_layout", URAID_LEVEL_RAID5, 4, 4, LAYOUT_RIGHT_SYMMETRIC, 16, 8, 40, 1, 0, 0, 0,
     0},
    {"raid5_4to5_bitmap", URAID_LEVEL_RAID5, 4, 5, -1, 16, 0, 48, 1, 4096, 0, 0, 0},
    /* degraded from the start: the spare fills slot 0 as the move goes,
     * slot 5 stays empty, and one more member dies on the way */
    {"raid6_5to6_degraded", URAID_LEVEL_RAID6, 5, 6, -1, 16, 0, 64, 1, 0, 1, 0, 0},
    /* raid10 near-2 grown by one, one member lost on the way (every
     * chunk keeps a copy in both layouts); and degraded from the start
     * (slot 0 gone: the spare fills it as the move goes, slot 4 stays
     * empty; another loss could take a chunk's last copy) */
    {"raid10_4to5", URAID_LEVEL_RAID10, 4, 5, -1, 16, 0, 0, 1, 0, 0, 0, 0},
    {"raid10_4to5_degraded", URAID_LEVEL_RAID10, 4, 5, -1, 16, 0, 0, 0, 0, 1, 0, 0},
    /* mdadm --grow --force with too few spares: the new slots stay
     * empty, the array ends degraded by them (and raid6 loses one more
     * member on the way) */
    {"raid5_4to5_forced", URAID_LEVEL_RAID5, 4, 5, -1, 16, 0, 48, 0, 0, 0, 1, 0},
    {"raid6_5to6_forced", URAID_LEVEL_RAID6, 5, 6, -1, 16, 0, 64, 1, 0, 0, 1, 0},
    {"raid6_4to6_forced", URAID_LEVEL_RAID6, 4, 6, -1, 16, 0, 64, 0, 0, 0, 2, 0},
    /* a 0.90 chunk change in place (engine/reshape_slide.c), one member
     * lost on the way: the windows are read degraded into the backup */
    {"raid5_chunk_slide_090", URAID_LEVEL_RAID5, 4, 4, -1, 16, 8, 0, 1, 0, 0, 0, 1},
};

#define RF_SECTORS 512 /* per member */
#define RF_DISK    (2u << 20)

/* Every request to the disk fails from now on. */
static void rf_kill(struct te_disk *d)
{
	enum member_op ops[] = {MEMBER_OP_READ, MEMBER_OP_WRITE, MEMBER_OP_FLUSH};
	for (int i = 0; i < 3; i++) {
		struct member_fault_rule r = {.op = ops[i], .error = EIO};
		if (member_fault_add(d->fault, &r) < 0)
			abort();
	}
}

struct rf_trial {
	const struct rf_cfg *c;
	uint64_t seed;
	struct te_disk d[TE_MAX];
	bool dead[TE_MAX], in[TE_MAX]; /* killed; given to the array */
	int nd;
	uint8_t *shadow, *buf;
	uint64_t span; /* bytes of the shadow (the new size) */
	struct uraid_array *a;
	struct member *bk; /* the sliding backup (slide) */
	uint64_t reads, writes, stops, kills;
};

static int rf_reassemble(struct rf_trial *t)
{
	char warn[1024];
	int idx[TE_MAX], n = 0;
	CHECK(uraid_stop(t->a) == 0 || true); /* a lost member may fail its write */
	t->a = NULL;
	for (int i = 0; i < t->nd; i++)
		if (t->in[i] && !t->dead[i])
			idx[n++] = i;
	warn[0] = 0;
	int rc;
	if (t->bk) {
		struct member *mm[TE_MAX];
		char err[512];
		for (int i = 0; i < n; i++)
			mm[i] = te_borrow(&t->d[idx[i]]);
		rc = uraid_assemble_members_backup(mm, n, URAID_NO_SYNC_THREAD, t->bk, &t->a, err,
		                                   sizeof(err), warn, sizeof(warn));
		if (rc < 0)
			fprintf(stderr, "assemble with the backup: %s\n", err);
	} else
		rc = te_assemble(t->d, idx, n, &t->a, warn, sizeof(warn));
	t->stops++;
	return rc;
}

static int rf_io(struct rf_trial *t, uint64_t *rs)
{
	uint64_t size = uraid_size(t->a);
	uint64_t nsec = 1 + t_rand(rs) % 24;
	uint64_t off = t_rand(rs) % (size / 512 - nsec + 1) * 512, len = nsec * 512;
	if (t_rand(rs) % 2) {
		t_fill(rs, t->buf, len);
		int rc = uraid_write(t->a, t->buf, len, off);
		CHECKF(rc == 0, "%s seed %#llx: write at %llu: %d", t->c->name,
		       (unsigned long long)t->seed, (unsigned long long)off, rc);
		if (rc == 0)
			memcpy(t->shadow + off, t->buf, len);
		t->writes++;
		return rc;
	}
	int rc = uraid_read(t->a, t->buf, len, off);
	CHECKF(rc == 0 && !memcmp(t->buf, t->shadow + off, len),
	       "%s seed %#llx: read at sector %llu (+%llu): rc %d, %s", t->c->name,
	       (unsigned long long)t->seed, (unsigned long long)(off / 512),
	       (unsigned long long)nsec, rc, rc ? "error" : "differs from the shadow");
	t->reads++;
	return rc == 0 && !memcmp(t->buf, t->shadow + off, len) ? 0 : -EIO;
}

/* Without --force the same grow is refused in mdadm's words, no byte of
 * any member changed. */
static void rf_unforced(struct rf_trial *t, const struct uraid_reshape_opts *ro)
{
	char err[512];
	uint8_t *before = malloc((size_t)t->c->ndisks * RF_DISK), *after = malloc(RF_DISK);
	CHECK(uraid_flush(t->a) == 0);
	for (int i = 0; i < t->c->ndisks; i++)
		CHECK(member_read(t->d[i].mem, before + (size_t)i * RF_DISK, RF_DISK, 0) == 0);
	int rc = uraid_array_reshape_start(t->a, ro, err, sizeof(err));
	char want[96];
	int n = t->c->to_disks - t->c->ndisks;
	snprintf(want, sizeof(want), "Need %d spare%s to avoid degraded array, and only have 0", n,
	         n == 1 ? "" : "s");
	CHECKF(rc == -EINVAL && strstr(err, want) && strstr(err, "--force"),
	       "%s: the grow without --force: %d %s", t->c->name, rc, err);
	CHECK(uraid_flush(t->a) == 0);
	for (int i = 0; i < t->c->ndisks; i++) {
		CHECK(member_read(t->d[i].mem, after, RF_DISK, 0) == 0);
		CHECKF(!memcmp(before + (size_t)i * RF_DISK, after, RF_DISK),
		       "%s: member %d changed by the refusal", t->c->name, i);
	}
	free(before);
	free(after);
}

static void rf_trial(const struct rf_cfg *c, uint64_t seed, struct rf_trial *t)
{
	uint64_t rs = seed;
	char err[512];
	memset(t, 0, sizeof(*t));
	t->c = c;
	t->seed = seed;
	int base = c->to_disks > c->ndisks ? c->to_disks : c->ndisks;
	t->nd = base + c->nfail + c->degraded;
	rsc_disks_open(t->d, t->nd, "f", RF_DISK);
	struct uraid_create_opts o = rsc_opts(c->level, c->ndisks, c->chunk, RF_SECTORS);
	if (c->slide) {
		o.metadata = 0; /* 0.90: in place */
		if (member_open_mem("backup", 1u << 20, &t->bk) < 0)
			abort();
	}
	int par = c->level == URAID_LEVEL_RAID6 ? 2 : 1;
	t->span = (uint64_t)RF_SECTORS * (uint64_t)(c->to_disks - par) * 512;
	uint64_t old = (uint64_t)RF_SECTORS * (uint64_t)(c->ndisks - par) * 512;
	if (c->level == URAID_LEVEL_RAID10) { /* near-2 */
		t->span = (uint64_t)RF_SECTORS * (uint64_t)c->to_disks / 2 * 512;
		old = (uint64_t)RF_SECTORS * (uint64_t)c->ndisks / 2 * 512;
	}
	if (old > t->span)
		t->span = old;
	t->shadow = calloc(1, t->span);
	t->buf = malloc(24 * 512);
	if (te_create(&o, t->d, c->ndisks, &t->a) < 0) {
		CHECKF(0, "%s: create failed", c->name);
		goto out;
	}
	for (int i = 0; i < c->ndisks; i++)
		t->in[i] = true;
	if (c->bitmap_chunk)
		CHECKF(uraid_bitmap_add(t->a, c->bitmap_chunk, err, sizeof(err)) == 0,
		       "%s: bitmap: %s", c->name, err);
	struct uraid_status st0;
	memset(&st0, 0, sizeof(st0));
	uraid_status(t->a, &st0);
	uint64_t size = uraid_size(t->a);
	t_fill(&rs, t->shadow, size);
	CHECK(uraid_write(t->a, t->shadow, size, 0) == 0);
	CHECK(uraid_flush(t->a) == 0);
	if (c->degraded) {
		CHECKF(uraid_fail(t->a, t->d[0].name, err, sizeof(err)) == 0, "%s: fail: %s",
		       c->name, err);
		rf_kill(&t->d[0]);
		t->dead[0] = true;
	}
	if (c->to_disks > c->ndisks && !c->forced) {
		CHECKF(uraid_add_member(t->a, te_borrow(&t->d[c->ndisks]), err, sizeof(err)) == 0,
		       "%s: add: %s", c->name, err);
		t->in[c->ndisks] = true;
	}
	struct uraid_reshape_opts ro = {.raid_disks = c->to_disks,
	                                .layout = c->layout,
	                                .chunk_sectors = c->to_chunk,
	                                .move_sectors = c->move,
	                                .backup_member = t->bk};
	if (c->forced)
		rf_unforced(t, &ro);
	ro.force = c->forced > 0;
	int rc = uraid_array_reshape_start(t->a, &ro, err, sizeof(err));
	CHECKF(rc == 0, "%s: reshape start: %s", c->name, err);
	/* The moments (loop turns) the members die: within the move, which
	 * takes one sync step of 32 sectors a turn (a member dies only while
	 * the reshape still runs). */
	uint64_t turns = size / 512 / 32 * 3 / 4;
	uint64_t fail_at[2] = {0, 0};
	for (int k = 0; k < c->nfail; k++)
		fail_at[k] = t_rand(&rs) % turns;
	int killed = 0;
	struct uraid_status st;
	for (uint64_t turn = 0; rc == 0 && turn < 100000; turn++) {
		for (int k = 0; k < c->nfail; k++)
			if (fail_at[k] == turn) {
				memset(&st, 0, sizeof(st));
				uraid_status(t->a, &st);
				if (!st.reshape)
					continue;
				int v;
				do
					v = (int)(t_rand(&rs) % (uint64_t)base);
				while (t->dead[v] || !t->in[v]);
				rf_kill(&t->d[v]);
				t->dead[v] = true;
				killed++;
			}
		uint64_t r = t_rand(&rs) % 16;
		if (r < 6)
			rc = rf_io(t, &rs);
		else if (r == 6)
			rc = uraid_flush(t->a);
		else if (r == 7 && t_rand(&rs) % 4 == 0)
			rc = rf_reassemble(t);
		CHECKF(rc == 0, "%s seed %#llx turn %llu: rc %d", c->name, (unsigned long long)seed,
		       (unsigned long long)turn, rc);
		if (rc < 0)
			break;
		memset(&st, 0, sizeof(st));
		uraid_status(t->a, &st);
		if (!st.reshape && turn > fail_at[0] && (c->nfail < 2 || turn > fail_at[1]))
			break;
		rc = uraid_sync_step(t->a, 32);
		CHECKF(rc >= 0, "%s seed %#llx: sync step: %d", c->name, (unsigned long long)seed,
		       rc);
		rc = rc < 0 ? rc : 0;
	}
	if (rc < 0 || !t->a)
		goto out;
	memset(&st, 0, sizeof(st));
	uraid_status(t->a, &st);
	CHECKF(rsc_geometry(&st, c->to_disks, c->chunk, c->to_chunk, c->layout),
	       "%s seed %#llx: geometry %d disks chunk %u layout %u, reshape %d", c->name,
	       (unsigned long long)seed, st.raid_disks, st.chunk_sectors, st.layout, st.reshape);
	CHECKF(st.degraded == killed + c->degraded + c->forced,
	       "%s seed %#llx: %d degraded, %d members lost, %d slots forced empty", c->name,
	       (unsigned long long)seed, st.degraded, killed + c->degraded, c->forced);
	CHECK(uraid_size(t->a) == t->span);
	/* md keeps the bitmap through a restripe: its chunks are member
	 * sectors, which the reshape does not change. */
	CHECKF(st.bitmap_chunk_kib == st0.bitmap_chunk_kib && st.bitmap_chunks == st0.bitmap_chunks,
	       "%s: bitmap %u KiB x %llu after the reshape, %u KiB x %llu before", c->name,
	       st.bitmap_chunk_kib, (unsigned long long)st.bitmap_chunks, st0.bitmap_chunk_kib,
	       (unsigned long long)st0.bitmap_chunks);
	t->kills += (uint64_t)killed;
	CHECKF(te_verify(t->a, t->shadow, uraid_size(t->a)) == 0,
	       "%s seed %#llx: content after the degraded reshape", c->name,
	       (unsigned long long)seed);
	/* Fresh spares take the lost slots; recovery, then check. */
	for (int k = 0; k < killed + c->degraded + c->forced; k++) {
		int i = k < c->forced ? c->ndisks + k : base + k - c->forced;
		CHECKF(uraid_add_member(t->a, te_borrow(&t->d[i]), err, sizeof(err)) == 0,
		       "%s: add spare: %s", c->name, err);
		t->in[i] = true;
	}
	CHECK(te_sync_all(t->a) == 0);
	memset(&st, 0, sizeof(st));
	uraid_status(t->a, &st);
	CHECKF(st.degraded == 0, "%s seed %#llx: %d degraded after recovery", c->name,
	       (unsigned long long)seed, st.degraded);
	for (int i = 0; st.degraded && i < st.nmembers; i++)
		fprintf(stderr, "  %s role %d state %d recovery_offset %llu\n", st.members[i].name,
		        st.members[i].role, (int)st.members[i].state,
		        (unsigned long long)st.members[i].recovery_offset);
	if (st.degraded)
		fprintf(stderr, "  sync action %d, %s\n", (int)st.sync_action, err);
	uint64_t mm = rsc_check(t->a);
	CHECKF(mm == 0, "%s seed %#llx: %llu mismatches", c->name, (unsigned long long)seed,
	       (unsigned long long)mm);
	CHECKF(te_verify(t->a, t->shadow, uraid_size(t->a)) == 0,
	       "%s seed %#llx: content after recovery", c->name, (unsigned long long)seed);
out:
	if (t->a)
		uraid_stop(t->a);
	t->a = NULL;
	rsc_disks_close(t->d, t->nd);
	if (t->bk)
		member_close(t->bk);
	t->bk = NULL;
	free(t->shadow);
	free(t->buf);
}

static void run(int i)
{
	const struct rf_cfg *c = &rfcfgs[i];
	uint64_t seed = rsc_env("RESHAPE_FAIL_SEED", 0x5e1f0000ULL) + (uint64_t)i * 0x100000;
	uint64_t trials = rsc_env("RESHAPE_FAIL_TRIALS", 26);
	uint64_t reads = 0, writes = 0, stops = 0, kills = 0;
	struct rf_trial t;
	for (uint64_t k = 0; k < trials; k++) {
		rf_trial(c, seed + k, &t);
		reads += t.reads;
		writes += t.writes;
		stops += t.stops;
		kills += t.kills;
	}
	CHECKF(kills >= trials * (uint64_t)c->nfail / 2,
	       "%s: only %llu members died in %llu trials", c->name, (unsigned long long)kills,
	       (unsigned long long)trials);
	CHECKF(reads > 0 && writes > 0, "%s: no I/O during the reshapes", c->name);
	printf("# %s: %llu trials, %llu members lost, %llu reads and %llu writes checked, %llu "
	       "stops\n",
	       c->name, (unsigned long long)trials, (unsigned long long)kills,
	       (unsigned long long)reads, (unsigned long long)writes, (unsigned long long)stops);
}

static void raid5_4to5(void)
{
	run(0);
}
static void raid6_5to6(void)
{
	run(1);
}
static void raid5_chunk_layout(void)
{
	run(2);
}

static void raid5_4to5_bitmap(void)
{
	run(3);
}

static void raid6_5to6_degraded(void)
{
	run(4);
}

static void raid10_4to5(void)
{
	run(5);
}

static void raid10_4to5_degraded(void)
{
	run(6);
}

static void raid5_4to5_forced(void)
{
	run(7);
}

static void raid6_5to6_forced(void)
{
	run(8);
}

static void raid5_chunk_slide_090(void)
{
	run(10);
}
static void raid6_4to6_forced(void)
{
	run(9);
}

/* One member more than the level can lose, the second in the old view: the
 * new slot dies first (the reshaped part is then degraded), then an old
 * member, hit by a write to the part not yet reshaped. md's rule holds
 * across both geometries: the second member does not fail (both layouts
 * would need it), the array refuses writes instead (broken) and what was
 * written stays readable where it can be. */
static void raid5_beyond(void)
{
	struct te_disk d[5];
	char err[512];
	uint64_t rs = 0xbe70;
	rsc_disks_open(d, 5, "b", RF_DISK);
	struct uraid_create_opts o = rsc_opts(URAID_LEVEL_RAID5, 4, 16, RF_SECTORS);
	struct uraid_array *a = NULL;
	uint64_t size = 0;
	uint8_t *shadow = NULL, *buf = malloc(64 * 512);
	if (te_create(&o, d, 4, &a) < 0) {
		CHECKF(0, "create failed");
		goto out;
	}
	size = uraid_size(a);
	shadow = malloc(size);
	t_fill(&rs, shadow, size);
	CHECK(uraid_write(a, shadow, size, 0) == 0);
	CHECK(uraid_add_member(a, te_borrow(&d[4]), err, sizeof(err)) == 0);
	struct uraid_reshape_opts ro = {.raid_disks = 5, .layout = -1, .move_sectors = 48};
	CHECKF(uraid_array_reshape_start(a, &ro, err, sizeof(err)) == 0, "%s", err);
	for (int k = 0; k < 8; k++)
		CHECK(uraid_sync_step(a, 32) >= 0);
	struct uraid_status st;
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECKF(st.reshape && st.sync_done > 0 && st.sync_done < size / 512,
	       "reshape at %llu of %llu", (unsigned long long)st.sync_done,
	       (unsigned long long)(size / 512));
	rf_kill(&d[4]);
	t_fill(&rs, buf, 64 * 512);
	CHECK(uraid_write(a, buf, 64 * 512, 0) == 0); /* reshaped: reaches slot 4 */
	memcpy(shadow, buf, 64 * 512);
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECKF(st.degraded == 1 && !st.broken, "after the first loss: %d degraded, broken %d",
	       st.degraded, st.broken);
	rf_kill(&d[1]);
	uint64_t off = size - 64 * 512; /* not reshaped yet: the old view */
	t_fill(&rs, buf, 64 * 512);
	int rc = uraid_write(a, buf, 64 * 512, off);
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECKF(rc < 0 && st.broken && st.degraded == 1,
	       "after the second loss: write %d, %d degraded, broken %d", rc, st.degraded,
	       st.broken);
	/* The reshaped part lost two members of five; the rest reads from the
	 * old layout's three: whatever a read returns is the shadow (but for
	 * the failed write's range, undefined as in md). */
	for (uint64_t p = 0; p < off; p += 64 * 512)
		if (uraid_read(a, buf, 64 * 512, p) == 0)
			CHECKF(!memcmp(buf, shadow + p, 64 * 512), "read at %llu differs",
			       (unsigned long long)(p / 512));
out:
	if (a)
		uraid_stop(a);
	rsc_disks_close(d, 5);
	free(shadow);
	free(buf);
}

/* Members that say a raid5 4 -> 5 reshape is in progress in place (no
 * offset change, as a 0.90 one or a 1.x one mdadm ran with a backup file)
 * at `pos`; returns the assembly's result with `flags`. */
static int inplace_at(struct te_disk *d, uint64_t pos, unsigned flags, char *err, size_t errlen)
{
	for (int i = 0; i < 5; i++) {
		struct md_sb sb;
		if (md_sb_load(d[i].mem, &sb, err, errlen) < 0)
			return -EIO;
		struct md_reshape r = {.active = true, .position = pos};
		r.old = (struct md_reshape_geom){sb.level, sb.layout, sb.chunk_sectors, 4};
		r.new = r.old;
		r.new.raid_disks = 5;
		md_sb_reshape_store(&sb, &r);
		if (md_sb_store(d[i].mem, &sb) < 0)
			return -EIO;
	}
	struct member *mm[5];
	char warn[512];
	for (int i = 0; i < 5; i++)
		mm[i] = te_borrow(&d[i]);
	struct uraid_array *a = NULL;
	int rc = uraid_assemble_members(mm, 5, URAID_NO_SYNC_THREAD | flags, &a, err, errlen, warn,
	                                sizeof(warn));
	if (rc == 0)
		uraid_drop(a);
	return rc;
}

/* raid5_run's rule for in-place reshapes: while the next stripe would be
 * written over rows still read (the critical section, which mdadm backs
 * up), read-write assembly is refused "too early for auto-recovery",
 * nothing written; read-only it assembles, and past that point (the new
 * row below the old one) read-write too. */
static void inplace_too_early(void)
{
	struct te_disk d[5];
	char err[512];
	rsc_disks_open(d, 5, "i", RF_DISK);
	struct uraid_create_opts o = rsc_opts(URAID_LEVEL_RAID5, 5, 16, RF_SECTORS);
	struct uraid_array *a = NULL;
	if (te_create(&o, d, 5, &a) < 0) {
		CHECKF(0, "create failed");
		goto out;
	}
	uraid_stop(a);
	/* old: 3 data x 16 = 48 sectors a row; new: 4 x 16 = 64. At 128 the
	 * next new row (2) is not below the old row 128 is in (2): unsafe. */
	uint8_t before[5][8192], after[8192];
	int rc = inplace_at(d, 128, 0, err, sizeof(err));
	for (int i = 0; i < 5; i++)
		CHECK(member_read(d[i].mem, before[i], sizeof(before[i]), 0) == 0);
	CHECKF(rc == -EOPNOTSUPP && strstr(err, "too early for auto-recovery") &&
	           strstr(err, "--backup-file"),
	       "in place at 128: %d %s", rc, err);
	rc = inplace_at(d, 128, 0, err, sizeof(err));
	for (int i = 0; i < 5; i++) {
		CHECK(member_read(d[i].mem, after, sizeof(after), 0) == 0);
		CHECKF(!memcmp(before[i], after, sizeof(after)), "member %d changed", i);
	}
	rc = inplace_at(d, 128, URAID_RDONLY, err, sizeof(err));
	CHECKF(rc == 0, "in place at 128, read-only: %d %s", rc, err);
	rc = inplace_at(d, 192, 0, err, sizeof(err));
	CHECKF(rc == 0, "in place at 192: %d %s", rc, err);
out:
	rsc_disks_close(d, 5);
}

/* md's check_reshape refuses a reshape with PPL or a journal (mdadm:
 * "Cannot set device shape ...: Invalid argument"): refused, nothing
 * written, the spare still a spare. */
static void ppl_refused(void)
{
	struct te_disk d[5];
	char err[512];
	rsc_disks_open(d, 5, "p", 4 * RF_DISK);
	struct uraid_create_opts o = rsc_opts(URAID_LEVEL_RAID5, 4, 16, RF_SECTORS);
	o.consistency_policy = URAID_POLICY_PPL;
	struct uraid_array *a = NULL;
	if (te_create(&o, d, 4, &a) < 0) {
		CHECKF(0, "create with ppl failed");
		goto out;
	}
	CHECK(uraid_add_member(a, te_borrow(&d[4]), err, sizeof(err)) == 0);
	CHECK(uraid_flush(a) == 0);
	uint8_t before[5][4096], after[4096];
	for (int i = 0; i < 5; i++)
		CHECK(member_read(d[i].mem, before[i], sizeof(before[i]), 0) == 0);
	struct uraid_reshape_opts ro = {.raid_disks = 5, .layout = -1};
	int rc = uraid_array_reshape_start(a, &ro, err, sizeof(err));
	CHECKF(rc == -EINVAL && strstr(err, "Invalid argument") && strstr(err, "PPL"),
	       "reshape with ppl: %d %s", rc, err);
	for (int i = 0; i < 5; i++) {
		CHECK(member_read(d[i].mem, after, sizeof(after), 0) == 0);
		CHECKF(!memcmp(before[i], after, sizeof(after)), "member %d changed", i);
	}
	struct uraid_status st;
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECK(st.reshape == 0 && st.raid_disks == 4 && st.spares == 1);
out:
	if (a)
		uraid_stop(a);
	rsc_disks_close(d, 5);
}

/* mdadm's start_array: an in-place reshape that keeps or cuts the members
 * (here a 0.90 shrink 5 -> 4 with its sliding backup, stopped mid-way) is
 * refused read-write without its backup file in mdadm's words, nothing
 * written; read-only it assembles; with the file it finishes. */
static void slide_no_backup(void)
{
	struct te_disk d[5];
	char err[512], warn[1024];
	struct member *bk = NULL, *mm[5];
	static uint8_t before[5][RF_DISK], after[RF_DISK];
	uint64_t fit = (uint64_t)RF_SECTORS * 3 * 512, rs = 0x51d3;
	uint8_t *shadow = malloc(fit);
	rsc_disks_open(d, 5, "n", RF_DISK);
	struct uraid_create_opts o = rsc_opts(URAID_LEVEL_RAID5, 5, 16, RF_SECTORS);
	o.metadata = 0;
	struct uraid_array *a = NULL;
	struct uraid_status st;
	if (member_open_mem("backup", 1u << 20, &bk) < 0)
		abort();
	if (te_create(&o, d, 5, &a) < 0) {
		CHECKF(0, "create failed");
		goto out;
	}
	CHECK(uraid_grow(a, URAID_GROW_ARRAY_SIZE, fit / 512, err, sizeof(err)) == 0);
	t_fill(&rs, shadow, fit);
	CHECK(uraid_write(a, shadow, fit, 0) == 0);
	struct uraid_reshape_opts ro = {.raid_disks = 4, .layout = -1, .backup_member = bk};
	CHECKF(uraid_array_reshape_start(a, &ro, err, sizeof(err)) == 0, "start: %s", err);
	for (int k = 0; k < 8; k++)
		CHECK(uraid_sync_step(a, 32) >= 0);
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECKF(st.reshape == 2, "the shrink runs backwards (reshape %d)", st.reshape);
	CHECK(uraid_stop(a) == 0);
	a = NULL;
	for (int i = 0; i < 5; i++) {
		CHECK(member_read(d[i].mem, before[i], RF_DISK, 0) == 0);
		mm[i] = te_borrow(&d[i]);
	}
	int rc = uraid_assemble_members(mm, 5, URAID_NO_SYNC_THREAD, &a, err, sizeof(err), warn,
	                                sizeof(warn));
	CHECKF(rc == -EOPNOTSUPP && strstr(err, "Need a backup file to complete reshape") &&
	           strstr(err, "--backup-file") && strstr(err, "--readonly"),
	       "read-write without the backup file: %d %s", rc, err);
	if (rc == 0)
		uraid_drop(a);
	a = NULL;
	for (int i = 0; i < 5; i++) {
		CHECK(member_read(d[i].mem, after, RF_DISK, 0) == 0);
		CHECKF(!memcmp(before[i], after, sizeof(after)), "member %d written", i);
		mm[i] = te_borrow(&d[i]);
	}
	rc = uraid_assemble_members(mm, 5, URAID_NO_SYNC_THREAD | URAID_RDONLY, &a, err,
	                            sizeof(err), warn, sizeof(warn));
	CHECKF(rc == 0, "read-only without the backup file: %d %s", rc, err);
	if (rc == 0) {
		CHECK(te_verify(a, shadow, fit) == 0);
		uraid_stop(a);
	}
	a = NULL;
	for (int i = 0; i < 5; i++)
		mm[i] = te_borrow(&d[i]);
	rc = uraid_assemble_members_backup(mm, 5, URAID_NO_SYNC_THREAD, bk, &a, err, sizeof(err),
	                                   warn, sizeof(warn));
	CHECKF(rc == 0, "with the backup file: %d %s", rc, err);
	if (rc < 0)
		goto out;
	CHECK(te_sync_all(a) == 0);
	memset(&st, 0, sizeof(st));
	uraid_status(a, &st);
	CHECKF(st.reshape == 0 && st.raid_disks == 4 && st.spares == 1,
	       "finished: reshape %d, %d members, %d spares", st.reshape, st.raid_disks, st.spares);
	CHECK(te_verify(a, shadow, fit) == 0);
	CHECK(rsc_check(a) == 0);
out:
	if (a)
		uraid_stop(a);
	member_close(bk);
	rsc_disks_close(d, 5);
	free(shadow);
}

TEST_MAIN(T(raid5_4to5), T(raid6_5to6), T(raid5_chunk_layout), T(raid5_4to5_bitmap),
          T(raid6_5to6_degraded), T(raid5_beyond), T(inplace_too_early), T(ppl_refused),
          T(raid10_4to5), T(raid10_4to5_degraded), T(raid5_4to5_forced), T(raid6_5to6_forced),
          T(raid6_4to6_forced), T(raid5_chunk_slide_090), T(slide_no_backup))
