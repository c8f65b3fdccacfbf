/* File system structures a candidate geometry must put where the file
 * system says they are: a geometry that is wrong in its chunk, order or
 * layout puts them on the wrong member or at the wrong place, where the
 * bytes say something else. ext2/3/4: the backup superblocks (each names its
 * group), then a walk of the directory tree from the root (each directory's
 * inode, and its first block's "." and ".." entries naming it and its
 * parent). XFS: every allocation group's superblock, AGF and AGI (each names
 * its group). btrfs: the superblock copy at 64 MiB. GPT: the backup header.
 * Every structure is parsed from untrusted bytes with its bounds checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"
#include "util/endian.h"

struct tally {
	int agree, disagree, budget;
	const int *blocked; /* the view's: a check that needs an unchosen role does not count */
	int *skipped;
};

static void point(struct tally *t, bool ok)
{
	if (t->blocked && *t->blocked >= 0) {
		t->budget = 0;
		return;
	}
	if (t->skipped && *t->skipped) {
		*t->skipped = 0;
		return;
	}
	if (ok)
		t->agree++;
	else
		t->disagree++;
	/* two structures out of place condemn a geometry: no need for more */
	t->budget = t->disagree >= 2 ? 0 : t->budget - 1;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reads a sector-aligned window around [off, off + len) into buf (which
 * must hold len + 1024); returns a pointer to off inside it, or NULL. */
static const uint8_t *get(const struct probe_view *v, uint8_t *buf, uint64_t off, size_t len)
{
	uint64_t a = off & ~511ull;
	size_t n = (size_t)(((off + len + 511) & ~511ull) - a);
	if (probe_view_read(v, buf, n, a) < 0)
		return NULL;
	return buf + (off - a);
}

struct ext {
	uint32_t bs, first, bpg, ipg, isz, dsz;
	uint64_t groups;
	bool sparse, filetype;
};

static bool sparse_group(uint64_t g)
{
	if (g <= 1)
		return true;
	for (uint64_t b = 3; b <= 7; b += 2) {
		uint64_t p = b;
		while (p < g)
			p *= b;
		if (p == g)
			return true;
	}
	return false;
}

static int ext_inode(const struct probe_view *v, const struct ext *e, uint32_t ino, uint8_t *buf,
                     uint8_t *inode)
{
	uint64_t grp = (ino - 1) / e->ipg, idx = (ino - 1) % e->ipg;
	if (grp >= e->groups)
		return -1;
	uint64_t gdt = (uint64_t)(e->first + 1) * e->bs + grp * e->dsz;
	const uint8_t *d = get(v, buf, gdt, e->dsz);
	if (!d)
		return -1;
	uint64_t table = get_le32(d + 8);
	if (e->dsz >= 64)
		table |= (uint64_t)get_le32(d + 0x28) << 32;
	const uint8_t *in = get(v, buf, table * e->bs + idx * e->isz, 128);
	if (!in)
		return -1;
	memcpy(inode, in, 128);
	return 0;
}

/* The first data block of a directory inode, 0 when it cannot tell. */
static uint64_t ext_first_block(const uint8_t *inode)
{
	const uint8_t *ib = inode + 0x28;
	if (get_le32(inode + 0x20) & 0x80000) { /* extents */
		if (get_le16(ib) != 0xF30A || get_le16(ib + 6) != 0 || get_le16(ib + 2) == 0)
			return 0;
		const uint8_t *x = ib + 12;
		return (uint64_t)get_le16(x + 6) << 32 | get_le32(x + 8);
	}
	return get_le32(ib);
}

static void ext_walk(const struct probe_view *v, const struct ext *e, struct tally *t, int *dirs)
{
	uint32_t queue[64][2] = {{2, 2}};
	int head = 0, tail = 1;
	uint8_t *buf = malloc(e->bs + 2048), inode[128];
	if (!buf)
		return;
	while (head < tail && t->budget > 0) {
		uint32_t ino = queue[head][0], parent = queue[head][1];
		head++;
		bool ok =
		    ext_inode(v, e, ino, buf, inode) == 0 && (get_le16(inode) & 0xF000) == 0x4000;
		uint64_t blk = ok ? ext_first_block(inode) : 0;
		point(t, ok && blk);
		if (!ok || !blk)
			continue;
		const uint8_t *d = get(v, buf, blk * e->bs, e->bs);
		ok = d && get_le32(d) == ino && d[6] == 1 && d[8] == '.' && get_le16(d + 4) >= 12 &&
		     get_le16(d + 4) + 12u <= e->bs;
		const uint8_t *dd = ok ? d + get_le16(d + 4) : NULL;
		ok = ok && get_le32(dd) == parent && dd[6] == 2 && dd[8] == '.' && dd[9] == '.';
		point(t, ok);
		if (!ok)
			continue;
		(*dirs)++;
		/* Subdirectories in this block (file type 2 needs the filetype feature). */
		for (uint32_t at = (uint32_t)(dd - d) + get_le16(dd + 4);
		     e->filetype && at + 12 <= e->bs;) {
			const uint8_t *x = d + at;
			uint16_t rl = get_le16(x + 4);
			if (rl < 12 || at + rl > e->bs)
				break;
			uint32_t child = get_le32(x);
			if (child && x[7] == 2 && tail < 64 && child != ino) {
				queue[tail][0] = child;
				queue[tail][1] = ino;
				tail++;
			}
			at += rl;
		}
	}
	free(buf);
}

static void ext_evidence(const struct probe_view *v, struct probe_candidate *c, struct tally *t)
{
	uint8_t buf[2048 + 1024];
	const uint8_t *sb = get(v, buf, 1024, 1024);
	struct ext e = {0};
	if (!sb || get_le16(sb + 56) != 0xEF53) {
		point(t, false);
		return;
	}
	e.bs = 1024u << (get_le32(sb + 24) & 7);
	e.first = get_le32(sb + 20);
	e.bpg = get_le32(sb + 32);
	e.ipg = get_le32(sb + 40);
	e.isz = get_le32(sb + 0x4C) ? get_le16(sb + 0x58) : 128;
	e.dsz = (get_le32(sb + 0x60) & 0x80) ? get_le16(sb + 0xFE) : 32;
	e.sparse = get_le32(sb + 0x64) & 1;
	e.filetype = get_le32(sb + 0x60) & 2;
	uint64_t blocks = get_le32(sb + 4);
	if (!e.bpg || !e.ipg || e.isz < 128 || e.dsz < 32 || e.dsz > 1024 || e.isz > e.bs)
		return;
	e.groups = (blocks - e.first + e.bpg - 1) / e.bpg;
	int backups = 0, found = 0;
	for (uint64_t g = 1; g < e.groups && t->budget > 0 && backups < 8; g++) {
		if (e.sparse && !sparse_group(g))
			continue;
		backups++;
		const uint8_t *b = get(v, buf, ((uint64_t)g * e.bpg + e.first) * e.bs, 1024);
		bool ok = b && get_le16(b + 56) == 0xEF53 && get_le16(b + 0x5A) == g;
		found += ok;
		point(t, ok);
	}
	int dirs = 0, before = t->agree + t->disagree;
	ext_walk(v, &e, t, &dirs);
	size_t l = strlen(c->evidence);
	snprintf(c->evidence + l, sizeof(c->evidence) - l,
	         "ext4: %d of %d backup superblocks where this geometry puts them, %d directories "
	         "walked (%d of %d inode and directory-block checks agree); ",
	         found, backups, dirs, t->agree - found, t->agree + t->disagree - before);
}

/* The inode chunks a leaf of an AG's inode btree lists: every 8th inode of
 * the first chunks, each naming its number (v3 inodes), so that a chunk of
 * 32 KiB of inodes spans the roles of small array chunks. */
static void xfs_inodes(const struct probe_view *v, const uint8_t *sb, uint32_t ag,
                       const uint8_t *leaf, bool v5, struct tally *t, int *ok_n, int *n)
{
	uint32_t bs = be32(sb + 4), agb = be32(sb + 84);
	uint8_t inopblog = sb[123], agblklog = sb[124];
	uint32_t isz = (uint32_t)sb[104] << 8 | sb[105];
	uint16_t level = (uint16_t)(leaf[4] << 8 | leaf[5]),
	         recs = (uint16_t)(leaf[6] << 8 | leaf[7]);
	if (!v5 || level || inopblog > 8 || agblklog > 31 || isz < 256 || isz > 2048)
		return;
	uint32_t start[4];
	int nr = 0;
	for (int i = 0; i < recs && nr < 4 && 56 + 16 * (i + 1) <= 512; i++)
		start[nr++] = be32(leaf + 56 + 16 * i);
	uint8_t buf[2048];
	for (int r = 0; r < nr; r++)
		for (uint32_t i = 0; i < 64 && t->budget > 0; i += 1u << inopblog) {
			uint64_t agino = (uint64_t)start[r] + i, agbno = agino >> inopblog;
			if (agbno >= agb)
				break;
			uint64_t ino = (uint64_t)ag << (agblklog + inopblog) | agino;
			const uint8_t *p = get(v, buf,
			                       ((uint64_t)ag * agb + agbno) * bs +
			                           (agino & ((1u << inopblog) - 1)) * isz,
			                       512);
			bool ok = p && p[0] == 'I' && p[1] == 'N' && p[4] == 3 &&
			          ((uint64_t)be32(p + 152) << 32 | be32(p + 156)) == ino;
			point(t, ok);
			*ok_n += ok;
			(*n)++;
		}
}

static void xfs_evidence(const struct probe_view *v, struct probe_candidate *c, struct tally *t)
{
	uint8_t buf[1024 + 1024], sb[512];
	const uint8_t *p0 = get(v, buf, 0, 512);
	if (!p0 || memcmp(p0, "XFSB", 4)) {
		point(t, false);
		return;
	}
	memcpy(sb, p0, sizeof(sb)); /* buf is read into again below */
	uint32_t bs = be32(sb + 4), agb = be32(sb + 84), agc = be32(sb + 88);
	uint32_t ss = (uint32_t)sb[102] << 8 | sb[103];
	if (ss < 512 || ss > 32768 || !agb || !agc || !bs)
		return;
	int ok_n = 0, n = 0;
	for (uint32_t g = 1; g < agc && t->budget > 0 && g < 33; g++) {
		uint64_t at = (uint64_t)g * agb * bs;
		const uint8_t *p = get(v, buf, at, 512);
		bool ok = p && !memcmp(p, "XFSB", 4);
		point(t, ok);
		ok_n += ok;
		p = get(v, buf, at + ss, 512);
		ok = p && !memcmp(p, "XAGF", 4) && be32(p + 8) == g;
		point(t, ok);
		ok_n += ok;
		p = get(v, buf, at + 2 * ss, 512);
		ok = p && !memcmp(p, "XAGI", 4) && be32(p + 8) == g;
		point(t, ok);
		ok_n += ok;
		n += 3;
	}
	/* The trees the AG headers point to (v5 blocks name their own disk
	 * address), and the root inode (v3 inodes name their number). */
	int tree_ok = 0, trees = 0;
	bool v5 = (sb[101] & 0x0f) == 5; /* sb_versionnum, big-endian */
	for (uint32_t g = 0; g < agc && t->budget > 0 && g < 8; g++) {
		uint64_t at = (uint64_t)g * agb * bs;
		const uint8_t *p = get(v, buf, at + ss, 512);
		if (!p || memcmp(p, "XAGF", 4))
			continue;
		uint32_t roots[3] = {be32(p + 16), be32(p + 20), 0};
		p = get(v, buf, at + 2 * ss, 512);
		if (p && !memcmp(p, "XAGI", 4))
			roots[2] = be32(p + 20);
		static const char *const magic[2][3] = {{"ABTB", "ABTC", "IABT"},
		                                        {"AB3B", "AB3C", "IAB3"}};
		for (int k = 0; k < 3 && t->budget > 0; k++) {
			if (!roots[k] || roots[k] >= agb)
				continue;
			uint64_t daddr = ((uint64_t)g * agb + roots[k]) * (bs / 512);
			p = get(v, buf, daddr * 512, 512);
			bool ok = p && !memcmp(p, magic[v5][k], 4) &&
			          (!v5 || ((uint64_t)be32(p + 16) << 32 | be32(p + 20)) == daddr);
			point(t, ok);
			tree_ok += ok;
			trees++;
			if (ok && k == 2)
				xfs_inodes(v, sb, g, p, v5, t, &tree_ok, &trees);
		}
	}
	uint64_t root = (uint64_t)be32(sb + 56) << 32 | be32(sb + 60);
	uint8_t inopblog = sb[123], agblklog = sb[124];
	if (t->budget > 0 && inopblog < 16 && agblklog < 32 && root) {
		uint64_t ag = root >> (agblklog + inopblog),
		         agbno = (root >> inopblog) & ((1ull << agblklog) - 1),
		         idx = root & ((1ull << inopblog) - 1);
		uint32_t isz = (uint32_t)sb[104] << 8 | sb[105];
		if (ag < agc && agbno < agb && isz >= 256 && isz <= 2048) {
			const uint8_t *p = get(v, buf, (ag * agb + agbno) * bs + idx * isz, 512);
			bool ok =
			    p && p[0] == 'I' && p[1] == 'N' &&
			    (p[4] < 3 || ((uint64_t)be32(p + 152) << 32 | be32(p + 156)) == root);
			point(t, ok);
			tree_ok += ok;
			trees++;
		}
	}
	size_t l = strlen(c->evidence);
	snprintf(c->evidence + l, sizeof(c->evidence) - l,
	         "XFS: %d of %d allocation group headers, %d of %d btree roots and root inode "
	         "where this geometry puts them; ",
	         ok_n, n, tree_ok, trees);
}

static void simple_evidence(const struct probe_view *v, struct probe_candidate *c, struct tally *t,
                            uint64_t at, const char *magic, size_t mlen, const char *what)
{
	uint8_t buf[2048];
	if (at + 1024 > v->array_bytes)
		return;
	const uint8_t *p = get(v, buf, at, mlen);
	bool ok = p && !memcmp(p, magic, mlen);
	point(t, ok);
	size_t l = strlen(c->evidence);
	snprintf(c->evidence + l, sizeof(c->evidence) - l, "%s %s; ", what,
	         ok ? "where this geometry puts it" : "not where this geometry puts it");
}

void probe_fs_evidence(const struct probe_view *v, const struct probe_sig *start,
                       struct probe_candidate *c, int max_points)
{
	struct tally t = {0, 0, max_points, v->blocked, v->skipped};
	switch (start->kind) {
	case PROBE_SIG_EXT: ext_evidence(v, c, &t); break;
	case PROBE_SIG_XFS: xfs_evidence(v, c, &t); break;
	case PROBE_SIG_BTRFS:
		simple_evidence(v, c, &t, (64ull << 20) + 64, "_BHRfS_M", 8,
		                "btrfs superblock copy at 64 MiB");
		break;
	case PROBE_SIG_GPT: {
		uint8_t buf[2048];
		const uint8_t *h = get(v, buf, 512, 512);
		uint64_t alt = h ? get_le64(h + 32) : 0;
		if (alt && alt < (UINT64_MAX >> 10))
			simple_evidence(v, c, &t, alt * 512, "EFI PART", 8, "GPT backup header");
		break;
	}
	default: break;
	}
	c->agree += t.agree;
	c->disagree += t.disagree;
}

/* ---- self-naming structures, for the order search (order.c) ---- */

static void add_point(struct probe_point *p, int *n, int max, uint64_t off, uint8_t kind,
                      uint32_t id)
{
	if (*n < max)
		p[(*n)++] = (struct probe_point){off, kind, id};
}

int probe_fs_points(const uint8_t *head, size_t len, const struct probe_sig *start,
                    struct probe_point *p, int max)
{
	int n = 0;
	if (start->kind == PROBE_SIG_EXT && len >= 2048 && get_le16(head + 1024 + 56) == 0xEF53) {
		const uint8_t *sb = head + 1024;
		uint32_t bs = 1024u << (get_le32(sb + 24) & 7), first = get_le32(sb + 20);
		uint32_t bpg = get_le32(sb + 32);
		uint64_t blocks = get_le32(sb + 4);
		bool sparse = get_le32(sb + 0x64) & 1;
		if (!bpg || blocks <= first)
			return 0;
		uint64_t groups = (blocks - first + bpg - 1) / bpg;
		for (uint64_t g = 1; g < groups && g < 0x10000 && n < max && n < 8; g++)
			if (!sparse || sparse_group(g))
				add_point(p, &n, max, ((uint64_t)g * bpg + first) * bs,
				          PROBE_PT_EXT_SB, (uint32_t)g);
	} else if (start->kind == PROBE_SIG_XFS && len >= 512 && !memcmp(head, "XFSB", 4)) {
		uint32_t bs = be32(head + 4), agb = be32(head + 84), agc = be32(head + 88);
		uint32_t ss = (uint32_t)head[102] << 8 | head[103];
		if (ss < 512 || ss > 32768 || !agb || !bs)
			return 0;
		for (uint32_t g = 1; g < agc && g < 9; g++) {
			uint64_t at = (uint64_t)g * agb * bs;
			add_point(p, &n, max, at, PROBE_PT_XFS_SB, g);
			add_point(p, &n, max, at + ss, PROBE_PT_XFS_AGF, g);
			add_point(p, &n, max, at + 2 * ss, PROBE_PT_XFS_AGI, g);
		}
	} else if (start->kind == PROBE_SIG_BTRFS) {
		add_point(p, &n, max, 64ull << 20, PROBE_PT_BTRFS, 0);
	} else if (start->kind == PROBE_SIG_GPT && len >= 1024) {
		uint64_t alt = get_le64(head + 512 + 32);
		if (alt && alt < (UINT64_MAX >> 10))
			add_point(p, &n, max, alt * 512, PROBE_PT_GPT, 0);
	}
	return n;
}

bool probe_point_holds(const struct probe_point *p, const uint8_t *b)
{
	switch (p->kind) {
	case PROBE_PT_EXT_SB: return get_le16(b + 56) == 0xEF53 && get_le16(b + 0x5A) == p->id;
	case PROBE_PT_XFS_SB: return !memcmp(b, "XFSB", 4);
	case PROBE_PT_XFS_AGF: return !memcmp(b, "XAGF", 4) && be32(b + 8) == p->id;
	case PROBE_PT_XFS_AGI: return !memcmp(b, "XAGI", 4) && be32(b + 8) == p->id;
	case PROBE_PT_BTRFS: return !memcmp(b + 64, "_BHRfS_M", 8);
	case PROBE_PT_GPT: return !memcmp(b, "EFI PART", 8);
	}
	return false;
}
