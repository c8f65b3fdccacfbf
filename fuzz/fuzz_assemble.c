/* libFuzzer target for whole assemblies: a set of memory members of a real
 * array (raid1, raid5, raid6, raid10, a raid5 with a bitmap, a raid5 with a
 * journal, on 1.2 or 0.90 metadata), one or two of them with a mutated
 * superblock, handed to uraid_assemble_members in an order the input picks.
 *
 * Mutations go through the codec (md_sb_load, change fields, md_sb_store),
 * so the checksums are right and the engine's own checks are what meet
 * them; raw byte flips of the superblock block are mixed in too.
 *
 * Asserted, besides "no crash, no sanitizer report":
 *   - a read-only assembly never writes a member, and a refused writable
 *     one writes nothing either;
 *   - an accepted array can be read end to end without a crash (errors
 *     are fine: the mutation may leave it unreadable in places), and a
 *     read-only one is stopped without a write. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "member/member.h"
#include "meta/md_super.h"
#include "uraid.h"

#define NMEM      5
#define MEM_BYTES (4u << 20)
/* Where mutations land: the 0.90/1.1/1.2 superblocks and a bitmap after
 * them, and the last 64 KiB (1.0, 0.90). */
#define HEAD_BYTES 12288u
#define TAIL_BYTES 65536u

/* A member the array borrows: forwards to a memory member the fuzzer owns
 * and counts writes. Closing it leaves the storage. */
struct counted {
	struct member m;
	struct member *inner;
	uint64_t *writes;
};

static ssize_t c_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct counted *c = (struct counted *)m;
	return c->inner->ops->pread(c->inner, buf, len, off);
}

static ssize_t c_pwrite(struct member *m, const void *buf, size_t len, uint64_t off, unsigned flags)
{
	struct counted *c = (struct counted *)m;
	(*c->writes)++;
	return c->inner->ops->pwrite(c->inner, buf, len, off, flags);
}

static int c_flush(struct member *m)
{
	(void)m;
	return 0;
}

static int c_fd(struct member *m)
{
	(void)m;
	return -1;
}

static void c_close(struct member *m)
{
	free(m);
}

static const struct member_ops counted_ops = {
    .kind = "fuzz-counted",
    .pread = c_pread,
    .pwrite = c_pwrite,
    .flush = c_flush,
    .fd = c_fd,
    .close = c_close,
};

static struct member *borrow(struct member *inner, uint64_t *writes)
{
	struct counted *c = calloc(1, sizeof(*c));
	if (!c)
		abort();
	c->m.ops = &counted_ops;
	snprintf(c->m.name, sizeof(c->m.name), "%s", inner->name);
	c->m.size = inner->size;
	c->m.logical_block = 512;
	c->inner = inner;
	c->writes = writes;
	return &c->m;
}

/* The arrays the inputs start from, made once: member images. */
struct tmpl {
	int n;
	uint8_t *img[NMEM];
};
#define NTMPL 8
static bool wrote = true; /* the last run's array wrote its members */
static struct tmpl tmpls[NTMPL];
static struct member *work[NMEM]; /* the members of one run */

static void make_tmpl(struct tmpl *t, int level, int n, int metadata, bool bitmap, bool journal)
{
	struct member *m[NMEM];
	for (int i = 0; i < n; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "t%d", i);
		if (member_open_mem(nm, MEM_BYTES, &m[i]) < 0)
			abort();
	}
	struct uraid_create_opts o;
	memset(&o, 0, sizeof(o));
	o.level = level;
	o.raid_devices = journal ? n - 1 : n;
	o.chunk_sectors = 16;
	o.metadata = metadata;
	o.metadata_set = true;
	o.write_journal = journal;
	struct uraid_array *a = NULL;
	char err[256];
	uint64_t none = 0;
	struct member *b[NMEM];
	for (int i = 0; i < n; i++)
		b[i] = borrow(m[i], &none);
	if (uraid_create_members(&o, b, n, URAID_NO_SYNC_THREAD, &a, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_assemble: create: %s\n", err);
		abort();
	}
	if (bitmap && uraid_bitmap_add(a, 4096, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_assemble: bitmap: %s\n", err);
		abort();
	}
	static uint8_t data[64 << 10];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 131 + (size_t)level);
	(void)uraid_write(a, data, sizeof(data), 0);
	while (uraid_sync_step(a, 1u << 20) > 0)
		;
	(void)uraid_stop(a);
	t->n = n;
	for (int i = 0; i < n; i++) {
		t->img[i] = malloc(MEM_BYTES);
		if (!t->img[i] || member_read(m[i], t->img[i], MEM_BYTES, 0) < 0)
			abort();
		member_close(m[i]);
	}
}

static void setup(void)
{
	make_tmpl(&tmpls[0], URAID_LEVEL_RAID1, 2, 12, false, false);
	make_tmpl(&tmpls[1], URAID_LEVEL_RAID5, 4, 12, false, false);
	make_tmpl(&tmpls[2], URAID_LEVEL_RAID6, 4, 12, false, false);
	make_tmpl(&tmpls[3], URAID_LEVEL_RAID10, 4, 12, false, false);
	make_tmpl(&tmpls[4], URAID_LEVEL_RAID5, 4, 12, true, false);
	make_tmpl(&tmpls[5], URAID_LEVEL_RAID5, 4, 12, false, true);
	make_tmpl(&tmpls[6], URAID_LEVEL_RAID5, 3, 0, false, false);
	make_tmpl(&tmpls[7], URAID_LEVEL_RAID0, 3, 10, false, false);
	for (int i = 0; i < NMEM; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "m%d", i);
		if (member_open_mem(nm, MEM_BYTES, &work[i]) < 0)
			abort();
	}
}

/* Reads the input a byte at a time; zeros when it runs out. */
struct cursor {
	const uint8_t *p;
	size_t n;
};

static uint8_t next8(struct cursor *c)
{
	if (!c->n)
		return 0;
	c->n--;
	return *c->p++;
}

static uint64_t next64(struct cursor *c)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | next8(c);
	return v;
}

/* One field change on a decoded superblock; the value's width follows the
 * field. */
static void mutate_field(struct md_sb *sb, struct cursor *c)
{
	uint8_t f = next8(c);
	uint64_t v = next64(c);
	switch (f % 20) {
	case 0: sb->level = (int32_t)(v % 12) - 4; break;
	case 1: sb->layout = (uint32_t)v; break;
	case 2: sb->chunk_sectors = (uint32_t)v; break;
	case 3: sb->raid_disks = (uint32_t)(v % 300); break;
	case 4: sb->size = v; break;
	case 5: sb->data_offset = v % (MEM_BYTES / 512 * 2); break;
	case 6: sb->data_size = v; break;
	case 7: sb->dev_number = (uint32_t)(v % 400); break;
	case 8: sb->events = sb->events + (v % 5) - 2; break;
	case 9: sb->utime = v; break;
	case 10: sb->ctime = v; break;
	case 11: sb->feature_map = (uint32_t)v; break;
	case 12: sb->resync_offset = v % 2 ? 0 : v; break;
	case 13: sb->recovery_offset = v; break;
	case 14: sb->dev_roles[v % 8] = (uint16_t)(v >> 8); break;
	case 15: sb->max_dev = (uint32_t)(v % 400); break;
	case 16: sb->bitmap_offset = (int32_t)v; break;
	case 17: sb->set_uuid[v % 16] ^= (uint8_t)(v >> 8); break;
	case 18: sb->reshape_position = v; break;
	default: sb->v0.this_disk.raid_disk = (uint32_t)(v % 300); break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	if (!ready) {
		setup();
		ready = true;
	}
	struct cursor c = {data, size};
	/* The members as the template has them: whole after a run that wrote
	 * or with another template, else only where mutations land. */
	static int last = -1;
	int ti = next8(&c) % NTMPL;
	const struct tmpl *t = &tmpls[ti];
	for (int i = 0; i < t->n; i++) {
		if (ti != last || wrote) {
			if (member_write(work[i], t->img[i], MEM_BYTES, 0, 0) < 0)
				abort();
			continue;
		}
		if (member_write(work[i], t->img[i], HEAD_BYTES, 0, 0) < 0 ||
		    member_write(work[i], t->img[i] + MEM_BYTES - TAIL_BYTES, TAIL_BYTES,
		                 MEM_BYTES - TAIL_BYTES, 0) < 0)
			abort();
	}
	last = ti;
	wrote = false;
	/* One or two members changed, each by a few field edits or raw flips. */
	int nmut = 1 + next8(&c) % 2;
	for (int k = 0; k < nmut; k++) {
		struct member *m = work[next8(&c) % t->n];
		uint8_t mode = next8(&c);
		if (mode & 1) {
			static struct md_sb sb;
			char e[128];
			if (md_sb_load(m, &sb, e, sizeof(e)) == 0) {
				int edits = 1 + mode / 2 % 4;
				for (int j = 0; j < edits; j++)
					mutate_field(&sb, &c);
				(void)md_sb_store(m, &sb); /* may refuse odd fields */
			}
		} else {
			/* Raw flips where mutations land. */
			int flips = 1 + mode / 2 % 8;
			for (int j = 0; j < flips; j++) {
				uint32_t at = (uint32_t)(next64(&c) % (HEAD_BYTES + TAIL_BYTES));
				uint64_t off = at < HEAD_BYTES
				                   ? at
				                   : MEM_BYTES - TAIL_BYTES + (at - HEAD_BYTES);
				uint8_t b;
				if (member_read(m, &b, 1, off) == 0) {
					b ^= (uint8_t)(next8(&c) | 1);
					(void)member_write(m, &b, 1, off, 0);
				}
			}
		}
	}
	/* An order of the members (and maybe one left out). */
	int idx[NMEM], n = t->n;
	for (int i = 0; i < n; i++)
		idx[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = next8(&c) % (i + 1), x = idx[i];
		idx[i] = idx[j];
		idx[j] = x;
	}
	if (n > 1 && next8(&c) % 4 == 0)
		n--;
	uint64_t writes = 0;
	unsigned flags = URAID_NO_SYNC_THREAD | ((next8(&c) & 1) ? URAID_RDONLY : 0);
	struct member *mm[NMEM];
	for (int i = 0; i < n; i++)
		mm[i] = borrow(work[idx[i]], &writes);
	struct uraid_array *a = NULL;
	char err[512], warn[1024];
	int rc = uraid_assemble_members(mm, n, flags, &a, err, sizeof(err), warn, sizeof(warn));
	if (rc < 0) {
		if (a || writes)
			abort(); /* refused, yet a handle or a write */
		return 0;
	}
	uint64_t bytes = uraid_size(a);
	static uint8_t buf[64 << 10];
	for (uint64_t off = 0; off < bytes; off += sizeof(buf)) {
		size_t len = bytes - off < sizeof(buf) ? (size_t)(bytes - off) : sizeof(buf);
		(void)uraid_read(a, buf, len & ~(size_t)511, off);
	}
	if (flags & URAID_RDONLY) {
		(void)uraid_stop(a);
		if (writes)
			abort(); /* a read-only array wrote */
	} else {
		uraid_drop(a);
	}
	wrote = writes > 0; /* then the next run starts from whole copies */
	return 0;
}
