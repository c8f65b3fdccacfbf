/* Re-add with the write-intent bitmap, and the dirty-degraded refusal.
 *
 * A member failed and removed misses some writes; re-added, exactly the
 * member sectors of the chunks those writes dirtied are written to it (a
 * counting wrapper records every sector the recovery writes, compared with
 * the set computed independently from the writes and the level's geometry),
 * the rest is trusted; afterwards the array reads back its shadow, `check`
 * finds no mismatch, and with another member failed the re-added one serves
 * correct data. A member that fell behind the bitmap's events_cleared (the
 * bits were cleared after a spare rebuilt its slot) is refused a re-add, as
 * md refuses it, and gets a full recovery through add.
 * A dirty degraded raid4/5/6 is refused at assembly unless forced, members
 * untouched; raid1 and clean arrays are not refused. A re-add's recovery md
 * interrupted (MD_FEATURE_RECOVERY_BITMAP) resumes bitmap-guided. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta/md_super.h"
#include "test_engine_common.h"

#define MB (1u << 20)

/* A borrowed disk that records which sectors were written while `on`. */
struct cnt {
	struct member m;
	struct member *inner;
	uint8_t *wmap; /* one byte per member sector */
	bool on;
};

static ssize_t cnt_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct member *in = ((struct cnt *)m)->inner;
	return in->ops->pread(in, buf, len, off);
}
static ssize_t cnt_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                          unsigned flags)
{
	struct cnt *c = (struct cnt *)m;
	if (c->on)
		for (uint64_t s = off / 512; s < (off + len + 511) / 512; s++)
			c->wmap[s] = 1;
	return c->inner->ops->pwrite(c->inner, buf, len, off, flags);
}
static int cnt_flush(struct member *m)
{
	struct member *in = ((struct cnt *)m)->inner;
	return in->ops->flush ? in->ops->flush(in) : 0;
}
static int cnt_fd(struct member *m)
{
	(void)m;
	return -1;
}
static void cnt_close(struct member *m)
{
	(void)m; /* the test owns it */
}
static const struct member_ops cnt_ops = {.kind = "count",
                                          .pread = cnt_pread,
                                          .pwrite = cnt_pwrite,
                                          .flush = cnt_flush,
                                          .fd = cnt_fd,
                                          .close = cnt_close};

static void cnt_init(struct cnt *c, struct te_disk *d)
{
	memset(c, 0, sizeof(*c));
	c->m.ops = &cnt_ops;
	snprintf(c->m.name, sizeof(c->m.name), "%s", d->name);
	c->m.size = d->mem->size;
	c->m.logical_block = 512;
	c->inner = d->fault;
	c->wmap = calloc(d->mem->size / 512, 1);
}

struct setup {
	const char *name;
	int level;
	const char *layout;
	int n; /* raid devices */
};

static struct uraid_array *make(const struct setup *s, struct te_disk *d, int nd, uint64_t *size)
{
	for (int i = 0; i < nd; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "d%d", i);
		te_disk_open(&d[i], nm, 16 * MB);
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = s->level;
	o.raid_devices = s->n;
	o.chunk_sectors = 128;
	o.assume_clean = true;
	if (s->layout) {
		CHECK(layout_parse(s->level, s->layout, &o.layout) == 0);
		o.layout_set = true;
	}
	struct uraid_array *a = NULL;
	char err[256];
	if (te_create(&o, d, s->n, &a) < 0)
		return NULL;
	CHECKF(uraid_bitmap_add(a, 4096, err, sizeof(err)) == 0, "%s: %s", s->name, err);
	*size = uraid_size(a);
	return a;
}

/* Member sectors of `role` that logical sector L lands on (every copy), by
 * the md layouts' definitions (independent of src/layout): raid5
 * left-symmetric, raid10 near and offset. Returns the count. */
static int ref_map(const struct setup *s, uint64_t L, int role, uint64_t *out)
{
	uint64_t ch = 128, c = L / ch, off = L % ch;
	int D = s->n, got = 0;
	if (s->level == URAID_LEVEL_RAID5) {
		uint64_t k = (uint64_t)D - 1, stripe = c / k;
		int pd = D - 1 - (int)(stripe % (uint64_t)D);
		int dd = (pd + 1 + (int)(c % k)) % D;
		if (dd == role)
			out[got++] = stripe * ch + off;
		return got;
	}
	if (s->level == URAID_LEVEL_RAID1) {
		out[got++] = L;
		return got;
	}
	uint32_t lay;
	layout_parse(s->level, s->layout, &lay);
	int near = lay & 0xff, far = (lay >> 8) & 0xff;
	bool offset = (lay >> 16) & 1;
	for (int j = 0; j < near * far; j++) {
		uint64_t dev, row;
		if (!offset) { /* near */
			uint64_t idx = c * (uint64_t)near + (uint64_t)j;
			dev = idx % (uint64_t)D;
			row = idx / (uint64_t)D;
		} else { /* offset: each row of chunks repeated, shifted one device */
			dev = (c + (uint64_t)j) % (uint64_t)D;
			row = c / (uint64_t)D * (uint64_t)far + (uint64_t)j;
		}
		if ((int)dev == role)
			out[got++] = row * ch + off;
	}
	return got;
}

/* Bitmap units (4 KiB chunks) a write dirties: raid10 in array sectors,
 * raid5 whole stripe rows of member sectors, raid1 member = logical. The
 * member sectors of `role` those units stand for are marked in want[]. */
static void mark_expected(const struct setup *s, uint64_t l, uint64_t nsec, int role, uint8_t *want,
                          uint64_t dev_sectors, uint64_t array_sectors)
{
	uint64_t tmp[8];
	if (s->level == URAID_LEVEL_RAID5) {
		uint64_t k = (uint64_t)s->n - 1;
		for (uint64_t st = l / (k * 128); st <= (l + nsec - 1) / (k * 128); st++)
			for (uint64_t r = st * 128; r < (st + 1) * 128 && r < dev_sectors; r++)
				want[r] = 1;
		return;
	}
	for (uint64_t u = l / 8; u <= (l + nsec - 1) / 8; u++)
		for (uint64_t L = u * 8; L < u * 8 + 8 && L < array_sectors; L++) {
			int n = ref_map(s, L, role, tmp);
			for (int i = 0; i < n; i++)
				want[tmp[i]] = 1;
		}
}

static uint64_t data_offset_of(struct te_disk *d)
{
	struct md_sb sb;
	char e[128];
	CHECK(md_sb_load(d->mem, &sb, e, sizeof(e)) == 0);
	return sb.data_offset;
}

/* Write random data at random places; returns the number of writes. */
static void scribble(struct uraid_array *a, uint8_t *shadow, uint64_t size, uint64_t *rs, int nw,
                     const struct setup *s, int role, uint8_t *want, uint64_t dev_sectors)
{
	static uint8_t buf[64 * 1024];
	for (int w = 0; w < nw; w++) {
		uint64_t nsec = 1 + t_rand(rs) % 128;
		uint64_t l = t_rand(rs) % (size / 512 - nsec);
		t_fill(rs, buf, nsec * 512);
		CHECK(uraid_write(a, buf, nsec * 512, l * 512) == 0);
		memcpy(shadow + l * 512, buf, nsec * 512);
		if (want)
			mark_expected(s, l, nsec, role, want, dev_sectors, size / 512);
		if (w % 5 == 4) /* flushes must not clear bits while degraded */
			CHECK(uraid_flush(a) == 0);
	}
}

static uint64_t check_mismatches(struct uraid_array *a)
{
	char err[256];
	CHECKF(uraid_sync_action(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0, "%s", err);
	CHECK(te_sync_all(a) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	return st.mismatch_cnt;
}

static void partial_readd(const struct setup *s)
{
	struct te_disk d[5] = {0};
	uint64_t size = 0;
	struct uraid_array *a = make(s, d, s->n, &size);
	if (!a)
		return;
	uint8_t *shadow = malloc(size);
	uint64_t rs = 0x4eadd + (uint64_t)s->level * 131 + (uint64_t)s->n;
	t_fill(&rs, shadow, size);
	CHECK(uraid_write(a, shadow, size, 0) == 0);
	/* Bits written since the previous flush survive one (lazy clearing);
	 * the second flush without writes clears them all. */
	CHECK(uraid_flush(a) == 0);
	CHECK(uraid_flush(a) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	uint64_t dev = st.dev_sectors, doff = data_offset_of(&d[1]);
	char err[256];
	CHECKF(uraid_fail(a, "#1", err, sizeof(err)) == 0, "%s", err);
	CHECKF(uraid_remove(a, "d1", err, sizeof(err)) == 0, "%s", err);
	uint8_t *want = calloc(dev, 1);
	scribble(a, shadow, size, &rs, 12, s, 1, want, dev);
	struct cnt c;
	cnt_init(&c, &d[1]);
	c.on = true;
	uint64_t skipped0 = uraid_bitmap_recovery_skipped(a);
	CHECKF(uraid_re_add_member(a, &c.m, err, sizeof(err)) == 0, "%s: re-add: %s", s->name, err);
	CHECK(te_sync_all(a) == 0);
	c.on = false;
	uint64_t nwant = 0, ngot = 0, extra = 0, missed = 0;
	for (uint64_t x = 0; x < dev; x++) {
		bool got = c.wmap[doff + x];
		nwant += want[x];
		ngot += got;
		extra += got && !want[x];
		missed += want[x] && !got;
	}
	printf("# %s: re-add recovered %llu of %llu member sectors (expected %llu)\n", s->name,
	       (unsigned long long)ngot, (unsigned long long)dev, (unsigned long long)nwant);
	CHECKF(nwant > 0 && nwant < dev / 2, "%s: %llu dirty sectors", s->name,
	       (unsigned long long)nwant);
	CHECKF(extra == 0 && missed == 0,
	       "%s: %llu sectors written beyond the dirty chunks, %llu "
	       "dirty ones not written",
	       s->name, (unsigned long long)extra, (unsigned long long)missed);
	uint64_t skipped = uraid_bitmap_recovery_skipped(a) - skipped0;
	/* raid10's recovery walks logical sectors: it skips array sectors */
	uint64_t span = s->level == URAID_LEVEL_RAID10 ? size / 512 : dev;
	CHECKF(skipped > 0 && skipped < span, "%s: skipped %llu of %llu", s->name,
	       (unsigned long long)skipped, (unsigned long long)span);
	uraid_status(a, &st);
	CHECKF(st.degraded == 0 && st.working == s->n, "%s: degraded %d after re-add", s->name,
	       st.degraded);
	CHECK(te_verify(a, shadow, size) == 0);
	CHECK_EQ_U64(check_mismatches(a), 0);
	/* The re-added member's data is right: fail another, read degraded. */
	CHECKF(uraid_fail(a, s->n > 2 ? "#2" : "#0", err, sizeof(err)) == 0, "%s", err);
	CHECK(te_verify(a, shadow, size) == 0);
	uraid_stop(a);
	free(c.wmap);
	free(want);
	free(shadow);
	for (int i = 0; i < s->n; i++)
		te_disk_close(&d[i]);
}

static void readd_raid5(void)
{
	static const struct setup s = {"raid5_4", URAID_LEVEL_RAID5, "left-symmetric", 4};
	partial_readd(&s);
}
static void readd_raid1(void)
{
	static const struct setup s = {"raid1_2", URAID_LEVEL_RAID1, NULL, 2};
	partial_readd(&s);
}
static void readd_raid10_n2(void)
{
	static const struct setup s = {"raid10_n2_4", URAID_LEVEL_RAID10, "n2", 4};
	partial_readd(&s);
}
static void readd_raid10_o2(void)
{
	static const struct setup s = {"raid10_o2_3", URAID_LEVEL_RAID10, "o2", 3};
	partial_readd(&s);
}

/* Too far behind: the slot was rebuilt onto a spare and the bits cleared,
 * so the old member's events are below events_cleared: re-add refused (as
 * md refuses it), add recovers it completely. Add (not re-add) of a member
 * the bitmap covers re-adds it by itself. */
static void behind_events_cleared(void)
{
	static const struct setup s = {"raid5_4", URAID_LEVEL_RAID5, "left-symmetric", 4};
	struct te_disk d[5] = {0};
	uint64_t size = 0;
	struct uraid_array *a = make(&s, d, 5, &size);
	if (!a)
		return;
	uint8_t *shadow = malloc(size);
	uint64_t rs = 0xbe41d;
	t_fill(&rs, shadow, size);
	CHECK(uraid_write(a, shadow, size, 0) == 0);
	CHECK(uraid_flush(a) == 0);
	CHECK(uraid_flush(a) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	uint64_t dev = st.dev_sectors, doff = data_offset_of(&d[1]);
	char err[256];
	CHECK(uraid_fail(a, "#1", err, sizeof(err)) == 0);
	CHECK(uraid_remove(a, "d1", err, sizeof(err)) == 0);
	scribble(a, shadow, size, &rs, 6, &s, 1, NULL, dev);
	CHECKF(uraid_add_member(a, te_borrow(&d[4]), err, sizeof(err)) == 0, "%s", err);
	CHECK(te_sync_all(a) == 0);
	CHECK(uraid_flush(a) == 0); /* whole again: bits cleared, events_cleared moves */
	CHECK(uraid_flush(a) == 0);
	CHECK(uraid_fail(a, "#1", err, sizeof(err)) == 0);
	CHECK(uraid_remove(a, "d4", err, sizeof(err)) == 0);
	scribble(a, shadow, size, &rs, 3, &s, 1, NULL, dev);
	/* d1 is too old for a partial recovery: md refuses the re-add
	 * (mdadm: "not possible"), nothing changes; add takes it as a spare,
	 * recovered completely */
	struct uraid_status st1;
	uraid_status(a, &st1);
	CHECKF(uraid_re_add_member(a, te_borrow(&d[1]), err, sizeof(err)) == -ESTALE &&
	           strstr(err, "--re-add for d1 is not possible"),
	       "%s", err);
	struct uraid_status st2;
	uraid_status(a, &st2);
	CHECK(st2.degraded == st1.degraded && st2.events == st1.events && st2.spares == st1.spares);
	struct cnt c;
	cnt_init(&c, &d[1]);
	c.on = true;
	CHECKF(uraid_add_member(a, &c.m, err, sizeof(err)) == 0, "%s", err);
	CHECK(te_sync_all(a) == 0);
	c.on = false;
	uint64_t ngot = 0;
	for (uint64_t x = 0; x < dev; x++)
		ngot += c.wmap[doff + x];
	CHECKF(ngot == dev, "full recovery wrote %llu of %llu sectors", (unsigned long long)ngot,
	       (unsigned long long)dev);
	CHECK(te_verify(a, shadow, size) == 0);
	CHECK_EQ_U64(check_mismatches(a), 0);
	/* Re-add refusals name the problem. */
	CHECK(uraid_re_add_member(a, te_borrow(&d[1]), err, sizeof(err)) == -EBUSY);
	CHECKF(strstr(err, "d1") != NULL, "%s", err);
	CHECK(uraid_fail(a, "#3", err, sizeof(err)) == 0);
	CHECK(uraid_re_add_member(a, te_borrow(&d[4]), err, sizeof(err)) == -EBUSY);
	CHECKF(strstr(err, "slot 1") != NULL, "%s", err);
	uraid_stop(a);
	free(c.wmap);
	free(shadow);
	for (int i = 0; i < 5; i++)
		te_disk_close(&d[i]);
}

/* uraid_add of a member whose slot is empty and whose events the bitmap
 * covers re-adds it (as mdadm --add does with --re-add's checks). */
static void add_detects_readd(void)
{
	static const struct setup s = {"raid1_2", URAID_LEVEL_RAID1, NULL, 2};
	struct te_disk d[2] = {0};
	uint64_t size = 0;
	struct uraid_array *a = make(&s, d, 2, &size);
	if (!a)
		return;
	uint8_t *shadow = calloc(1, size);
	uint64_t rs = 0xadd;
	char err[256];
	CHECK(uraid_fail(a, "#0", err, sizeof(err)) == 0);
	CHECK(uraid_remove(a, "d0", err, sizeof(err)) == 0);
	scribble(a, shadow, size, &rs, 4, &s, 0, NULL, 0);
	CHECKF(uraid_add_member(a, te_borrow(&d[0]), err, sizeof(err)) == 0, "%s", err);
	struct uraid_status st;
	uraid_status(a, &st);
	CHECKF(st.members[0].role == 0 && st.members[0].state == URAID_MEMBER_REBUILDING,
	       "d0 back in slot 0 rebuilding (state %d)", st.members[0].state);
	CHECK(te_sync_all(a) == 0);
	CHECK(uraid_bitmap_recovery_skipped(a) > 0);
	CHECK(te_verify(a, shadow, size) == 0);
	uraid_stop(a);
	free(shadow);
	te_disk_close(&d[0]);
	te_disk_close(&d[1]);
}

static void snapshot(struct te_disk *d, int n, uint8_t **img)
{
	for (int i = 0; i < n; i++) {
		img[i] = malloc(d[i].mem->size);
		CHECK(member_read(d[i].mem, img[i], d[i].mem->size, 0) == 0);
	}
}

static bool unchanged(struct te_disk *d, int n, uint8_t **img)
{
	bool same = true;
	uint8_t *now = malloc(d[0].mem->size);
	for (int i = 0; i < n; i++) {
		CHECK(member_read(d[i].mem, now, d[i].mem->size, 0) == 0);
		same &= memcmp(now, img[i], d[i].mem->size) == 0;
	}
	free(now);
	return same;
}

static int assemble_some(struct te_disk *d, const int *idx, int n, unsigned flags,
                         struct uraid_array **a, char *err, size_t errlen, char *warn)
{
	struct member *mm[TE_MAX];
	for (int i = 0; i < n; i++)
		mm[i] = te_borrow(&d[idx[i]]);
	return uraid_assemble_members(mm, n, flags | URAID_NO_SYNC_THREAD, a, err, errlen, warn,
	                              1024);
}

static void dirty_degraded(void)
{
	static const struct {
		int level;
		int n;
		bool refused;
	} cases[] = {{URAID_LEVEL_RAID5, 4, true},
	             {URAID_LEVEL_RAID6, 5, true},
	             {URAID_LEVEL_RAID4, 4, true},
	             {URAID_LEVEL_RAID1, 2, false}};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct setup s = {"dd", cases[k].level, NULL, cases[k].n};
		struct te_disk d[5] = {0};
		uint64_t size = 0;
		struct uraid_array *a = make(&s, d, s.n, &size);
		if (!a)
			continue;
		uint8_t *shadow = calloc(1, size);
		uint64_t rs = 0xd0d0 + k;
		scribble(a, shadow, size, &rs, 4, &s, 0, NULL, 0);
		uraid_drop(a); /* crash: dirty */
		a = NULL;
		int idx[5], n = 0;
		for (int i = 0; i < s.n; i++)
			if (i != 1) /* slot 1 (data) lost with the crash */
				idx[n++] = i;
		uint8_t *img[5];
		snapshot(d, s.n, img);
		char err[512] = "", warn[1024] = "";
		int rc = assemble_some(d, idx, n, 0, &a, err, sizeof(err), warn);
		if (cases[k].refused) {
			CHECKF(rc == -EUCLEAN, "level %d: dirty degraded assembled (rc %d)",
			       cases[k].level, rc);
			CHECKF(strstr(err, "not enough to start the array while not clean") &&
			           strstr(err, level_name(cases[k].level)) &&
			           strstr(err, "--force"),
			       "%s", err);
			CHECKF(unchanged(d, s.n, img), "level %d: a refused assembly wrote",
			       cases[k].level);
			/* Read-only: allowed, with a warning. */
			rc = assemble_some(d, idx, n, URAID_RDONLY, &a, err, sizeof(err), warn);
			CHECKF(rc == 0 && strstr(warn, "dirty degraded array"), "ro: %d %s", rc,
			       warn);
			if (rc == 0)
				uraid_stop(a);
			CHECK(unchanged(d, s.n, img));
			rc = assemble_some(d, idx, n, URAID_FORCE, &a, err, sizeof(err), warn);
			CHECKF(rc == 0 && strstr(warn, "--force"), "force: %d %s %s", rc, err,
			       warn);
		} else {
			CHECKF(rc == 0, "level %d refused: %s", cases[k].level, err);
		}
		if (rc == 0) {
			CHECK(te_sync_all(a) == 0);
			CHECK(te_verify(a, shadow, size) == 0);
			uraid_stop(a);
		}
		/* Stopped cleanly now: degraded but clean starts without force. */
		a = NULL;
		if (cases[k].refused) {
			rc = assemble_some(d, idx, n, 0, &a, err, sizeof(err), warn);
			CHECKF(rc == 0, "clean degraded refused: %s", err);
			if (rc == 0)
				uraid_stop(a);
		}
		for (int i = 0; i < s.n; i++) {
			free(img[i]);
			te_disk_close(&d[i]);
		}
		free(shadow);
	}
}

/* Dirty bits on the member (1.2: bitmap 16 sectors in, bits after the
 * 256-byte header), counted from the raw bytes. */
static uint64_t raw_dirty(struct te_disk *d, uint64_t nbits)
{
	uint8_t *b = calloc(1, nbits / 8 + 1);
	CHECK(member_read(d->mem, b, nbits / 8 + 1, 16 * 512 + 256) == 0);
	uint64_t n = 0;
	for (uint64_t i = 0; i < nbits; i++)
		n += (b[i / 8] >> (i % 8)) & 1;
	free(b);
	return n;
}

/* md clears a bit only after its chunk has been idle; uraid after a flush
 * pass without writes to it, and all of them once the array is clean. */
static void lazy_clear(void)
{
	static const struct setup s = {"raid1_2", URAID_LEVEL_RAID1, NULL, 2};
	struct te_disk d[2] = {0};
	uint64_t size = 0;
	struct uraid_array *a = make(&s, d, 2, &size);
	if (!a)
		return;
	uint64_t nbits = (size / 512 + 7) / 8;
	static uint8_t buf[8192];
	CHECK(uraid_write(a, buf, 4096, 0) == 0);
	CHECK(uraid_write(a, buf, 4096, 1 << 20) == 0);
	CHECK_EQ_U64(raw_dirty(&d[0], nbits), 2);
	CHECK(uraid_flush(a) == 0); /* both written since: kept */
	CHECK_EQ_U64(raw_dirty(&d[1], nbits), 2);
	CHECK(uraid_write(a, buf, 4096, 0) == 0); /* chunk 0 stays busy */
	CHECK(uraid_flush(a) == 0);
	CHECK_EQ_U64(raw_dirty(&d[1], nbits), 1);
	CHECK(uraid_flush(a) == 0);
	CHECK_EQ_U64(raw_dirty(&d[1], nbits), 0);
	CHECK(uraid_write(a, buf, 8192, 4096 * 8) == 0);
	CHECK_EQ_U64(raw_dirty(&d[0], nbits), 2);
	CHECK(uraid_stop(a) == 0); /* clean: everything cleared */
	CHECK_EQ_U64(raw_dirty(&d[0], nbits), 0);
	te_disk_close(&d[0]);
	te_disk_close(&d[1]);
}

/* md's MD_FEATURE_RECOVERY_BITMAP: md interrupted the bitmap-guided
 * recovery of a re-added member (its superblock then holds a recovery
 * offset and that bit: feature map 0x83 from md in 6.1). The members are
 * assembled, not refused, and the recovery resumes at the offset on the
 * chunks the bitmap marks only; a stop keeps the bit. Without the bit (what
 * uraid's own stop writes) it is a full recovery from the offset. */
static void interrupted_readd(bool md_bit)
{
	const struct setup s = {"raid1", URAID_LEVEL_RAID1, NULL, 2};
	struct te_disk d[2] = {0};
	uint64_t size = 0;
	struct uraid_array *a = make(&s, d, 2, &size);
	if (!a)
		return;
	uint8_t *shadow = malloc(size);
	uint64_t rs = 0x1b17 + md_bit;
	t_fill(&rs, shadow, size);
	CHECK(uraid_write(a, shadow, size, 0) == 0);
	CHECK(uraid_flush(a) == 0);
	CHECK(uraid_flush(a) == 0);
	struct uraid_status st;
	uraid_status(a, &st);
	uint64_t dev = st.dev_sectors, doff = data_offset_of(&d[1]);
	char err[256], e[128];
	CHECKF(uraid_fail(a, "#1", err, sizeof(err)) == 0, "%s", err);
	CHECKF(uraid_remove(a, "d1", err, sizeof(err)) == 0, "%s", err);
	uint8_t *want = calloc(dev, 1);
	scribble(a, shadow, size, &rs, 40, &s, 1, want, dev);
	CHECKF(uraid_re_add_member(a, te_borrow(&d[1]), err, sizeof(err)) == 0, "%s", err);
	CHECK(uraid_sync_step(a, 256) > 0); /* part of the recovery, then a stop */
	CHECK(uraid_stop(a) == 0);
	struct md_sb sb;
	CHECK(md_sb_load(d[1].mem, &sb, e, sizeof(e)) == 0);
	uint64_t roff = sb.recovery_offset;
	CHECKF((sb.feature_map & MD_FEATURE_RECOVERY_OFFSET) && roff > 0 && roff < dev,
	       "recovery offset %llu of %llu", (unsigned long long)roff, (unsigned long long)dev);
	CHECK(!(sb.feature_map & MD_FEATURE_RECOVERY_BITMAP));
	int idx[2] = {0, 1};
	if (md_bit) {
		sb.feature_map |= MD_FEATURE_RECOVERY_BITMAP;
		CHECK(md_sb_store(d[1].mem, &sb) == 0);
		CHECK(te_assemble(d, idx, 2, &a, NULL, 0) == 0);
		CHECK(uraid_stop(a) == 0);
		CHECK(md_sb_load(d[1].mem, &sb, e, sizeof(e)) == 0);
		CHECKF((sb.feature_map & MD_FEATURE_RECOVERY_BITMAP) && sb.recovery_offset == roff,
		       "after a stop: feature map 0x%x, recovery offset %llu", sb.feature_map,
		       (unsigned long long)sb.recovery_offset);
	}
	struct cnt c;
	cnt_init(&c, &d[1]);
	c.on = true;
	struct member *mm[2] = {te_borrow(&d[0]), &c.m};
	CHECKF(uraid_assemble_members(mm, 2, URAID_NO_SYNC_THREAD, &a, err, sizeof(err), NULL, 0) ==
	           0,
	       "assemble: %s", err);
	if (!a)
		return;
	CHECK(te_sync_all(a) == 0);
	c.on = false;
	uint64_t below = 0, ngot = 0, extra = 0, missed = 0, nwant = 0;
	for (uint64_t x = 0; x < dev; x++) {
		bool got = c.wmap[doff + x];
		if (x < roff) {
			below += got;
			continue;
		}
		nwant += want[x];
		ngot += got;
		extra += got && !want[x];
		missed += want[x] && !got;
	}
	printf(
	    "# md bit %d: resumed at %llu, recovered %llu of %llu sectors above it (%llu marked)\n",
	    md_bit, (unsigned long long)roff, (unsigned long long)ngot,
	    (unsigned long long)(dev - roff), (unsigned long long)nwant);
	CHECKF(below == 0, "%llu sectors below the recovery offset written",
	       (unsigned long long)below);
	if (md_bit)
		CHECKF(
		    nwant > 0 && extra == 0 && missed == 0,
		    "bitmap-guided: %llu sectors beyond the marked chunks, %llu marked not written",
		    (unsigned long long)extra, (unsigned long long)missed);
	else
		CHECK_EQ_U64(ngot, dev - roff);
	CHECK(te_verify(a, shadow, size) == 0);
	CHECK_EQ_U64(check_mismatches(a), 0);
	CHECKF(uraid_fail(a, "#0", err, sizeof(err)) == 0, "%s", err);
	CHECK(te_verify(a, shadow, size) == 0);
	uraid_stop(a);
	free(c.wmap);
	free(want);
	free(shadow);
	for (int i = 0; i < 2; i++)
		te_disk_close(&d[i]);
}

static void interrupted_readd_md(void)
{
	interrupted_readd(true);
}

static void interrupted_readd_uraid(void)
{
	interrupted_readd(false);
}

TEST_MAIN(T(readd_raid5), T(readd_raid1), T(readd_raid10_n2), T(readd_raid10_o2),
          T(behind_events_cleared), T(add_detects_readd), T(dirty_degraded), T(lazy_clear),
          T(interrupted_readd_md), T(interrupted_readd_uraid))
