/* Layout personalities against arrays the real kernel md driver wrote.
 *
 * The member images in $URAID_SHARED/md-vectors/images (made by Linux 6.1 md
 * and mdadm 4.2, see MANIFEST.md) hold the pattern
 *   sector s = LE64((s * 0x9E3779B97F4A7C15 + ARRAY_ID) mod 2^64) x 64
 * over the whole array. For every logical sector and every copy, the member
 * sector `map` names must hold it; for raid4/5/6 every stripe's P (XOR) and
 * Q (GF(2^8) syndrome computed here naively, in the order `stripe` gives)
 * must equal what md stored. The geometry comes from each member's own
 * superblock, decoded here with a minimal parser; the array sizes and
 * ARRAY_IDs are MANIFEST.md's.
 *
 * `test_layout_md --dir DIR` checks arrays made in mdvm during development:
 * DIR/<array>/m*.img plus DIR/<array>/id (ARRAY_ID) and sectors (the size
 * the kernel reported). */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../harness.h"
#include "layout/layout.h"
#include "md_vectors.h"
#include "util/endian.h"

#define MAXM 16

struct member_img {
	uint8_t *buf;
	size_t len;
};

struct md_array {
	int n;
	struct member_img m[MAXM]; /* indexed by role */
	uint64_t data_offset[MAXM];
	struct layout_geometry g;
};

/* A member image from what `cmd` prints; -EIO when it fails or prints nothing. */
static int read_cmd(const char *cmd, struct member_img *out)
{
	size_t len = 0;
	uint8_t *buf = mdv_read_cmd(cmd, &len);
	if (!buf || len == 0) {
		free(buf);
		return -EIO;
	}
	out->buf = buf;
	out->len = len;
	return 0;
}

/* Minimal superblock reading (1.2 at 4 KiB, 1.1 at 0, 1.0 / 0.90 at the
 * end), enough to fill the geometry and this member's role. */
static int load_member(struct md_array *a, struct member_img *img, char *why, size_t whylen)
{
	static const uint64_t sb1_offsets[] = {8, 0};
	uint64_t sectors = img->len / 512;
	uint64_t ends[2] = {(sectors - 16) & ~7ull, (sectors & ~127ull) - 128};
	for (int v = 0; v < 3; v++) {
		uint64_t at = v < 2 ? sb1_offsets[v] : ends[0];
		const uint8_t *sb = img->buf + at * 512;
		if (get_le32(sb) != 0xa92b4efc || get_le32(sb + 4) != 1)
			continue;
		a->g.level = (int32_t)get_le32(sb + 72);
		a->g.layout = get_le32(sb + 76);
		uint32_t features = get_le32(sb + 8);
		if (a->g.level == 0 && !(features & 4096))
			a->g.layout = 0; /* no recorded raid0 layout (kernel: -1) */
		a->g.dev_sectors = get_le64(sb + 80);
		a->g.chunk_sectors = get_le32(sb + 88);
		a->g.raid_disks = (int)get_le32(sb + 92);
		uint32_t devnum = get_le32(sb + 160);
		uint32_t max_dev = get_le32(sb + 220);
		if (devnum >= max_dev)
			break;
		int role = get_le16(sb + 256 + 2 * devnum);
		if (role >= MAXM)
			break;
		a->m[role] = *img;
		a->data_offset[role] = get_le64(sb + 128);
		a->g.member_sectors[role] = get_le64(sb + 136);
		return role;
	}
	const uint8_t *sb0 = img->buf + ends[1] * 512;
	if (get_le32(sb0) == 0xa92b4efc && get_le32(sb0 + 4) == 0 && get_le32(sb0 + 8) == 90) {
		a->g.level = (int32_t)get_le32(sb0 + 28);
		a->g.dev_sectors = (uint64_t)get_le32(sb0 + 32) * 2;
		a->g.raid_disks = (int)get_le32(sb0 + 40);
		a->g.layout = get_le32(sb0 + 256);
		a->g.chunk_sectors = get_le32(sb0 + 260) / 512;
		int role = (int)get_le32(sb0 + 3968 + 12);
		if (role >= MAXM)
			return -1;
		a->m[role] = *img;
		a->data_offset[role] = 0;
		a->g.member_sectors[role] = ends[1]; /* data runs up to the superblock */
		return role;
	}
	snprintf(why, whylen, "no md superblock");
	return -1;
}

static void pattern(uint64_t id, uint64_t s, uint8_t out[512])
{
	uint64_t v = s * 0x9E3779B97F4A7C15ull + id;
	for (int i = 0; i < 64; i++)
		put_le64(out + 8 * i, v);
}

static uint8_t gf_mul(uint8_t a, uint8_t b)
{
	uint8_t r = 0;
	while (b) {
		if (b & 1)
			r ^= a;
		a = (uint8_t)((a << 1) ^ ((a & 0x80) ? 0x1d : 0));
		b >>= 1;
	}
	return r;
}

static const uint8_t *msec_ptr(const struct md_array *a, int role, uint64_t s)
{
	uint64_t at = (a->data_offset[role] + s) * 512;
	if (at + 512 > a->m[role].len)
		return NULL;
	return a->m[role].buf + at;
}

/* Check every logical sector, every copy, and parity. Returns failures. */
static int verify_array(const char *name, struct md_array *a, uint64_t id, uint64_t want_sectors)
{
	int before = t_failures;
	char err[256] = "";
	const struct layout_ops *ops = layout_ops_for(a->g.level);
	CHECKF(ops != NULL, "%s: level %d", name, a->g.level);
	if (!ops)
		return 1;
	int rc = ops->validate(&a->g, err, sizeof(err));
	CHECKF(rc == 0, "%s: %s", name, err);
	if (rc)
		return 1;
	uint64_t total = ops->array_sectors(&a->g);
	CHECKF(total == want_sectors, "%s: array sectors %llu, kernel %llu", name,
	       (unsigned long long)total, (unsigned long long)want_sectors);
	int nc = ops->ncopies(&a->g);
	uint8_t want[512];
	uint64_t bad = 0, checked = 0;
	for (uint64_t s = 0; s < total; s++) {
		pattern(id, s, want);
		for (int c = 0; c < nc; c++) {
			struct layout_loc loc;
			uint64_t len;
			if (ops->map(&a->g, s, c, &loc, &len) != 0) {
				bad++;
				continue;
			}
			const uint8_t *got = msec_ptr(a, loc.role, loc.sector);
			checked++;
			if (!got || memcmp(got, want, 512) != 0) {
				if (bad < 5)
					fprintf(stderr,
					        "%s: sector %llu copy %d -> role %d sector %llu: "
					        "wrong data\n",
					        name, (unsigned long long)s, c, loc.role,
					        (unsigned long long)loc.sector);
				bad++;
			}
		}
	}
	CHECKF(bad == 0, "%s: %llu of %llu sector copies wrong", name, (unsigned long long)bad,
	       (unsigned long long)checked);
	CHECK(checked == total * (uint64_t)nc);
	if (!ops->stripe)
		return t_failures - before;

	/* parity: P = xor, Q = sum g^q_index[i] * D_i */
	uint64_t cs = a->g.chunk_sectors, bytes = cs * 512, pbad = 0, qbad = 0, stripes = 0;
	uint8_t *p = malloc(bytes), *q = malloc(bytes);
	uint8_t coef_tab[256];
	struct layout_stripe st = {0};
	for (uint64_t sn = 0; sn * cs < ops->member_used(&a->g, 0); sn++) {
		ops->stripe(&a->g, sn, &st);
		memset(p, 0, bytes);
		memset(q, 0, bytes);
		for (int i = 0; i < st.ndata; i++) {
			uint8_t coef = 1;
			for (int e = 0; e < st.q_index[i]; e++)
				coef = gf_mul(coef, 2);
			for (int b = 0; b < 256; b++)
				coef_tab[b] = gf_mul(coef, (uint8_t)b);
			const uint8_t *d = msec_ptr(a, st.data_role[i], st.sector);
			if (!d || !msec_ptr(a, st.data_role[i], st.sector + cs - 1))
				break;
			for (uint64_t b = 0; b < bytes; b++) {
				p[b] ^= d[b];
				q[b] ^= coef_tab[d[b]];
			}
		}
		const uint8_t *pp = msec_ptr(a, st.p_role, st.sector);
		pbad += !pp || memcmp(pp, p, bytes) != 0;
		if (st.q_role >= 0) {
			const uint8_t *qq = msec_ptr(a, st.q_role, st.sector);
			qbad += !qq || memcmp(qq, q, bytes) != 0;
		}
		stripes++;
	}
	free(p);
	free(q);
	CHECKF(pbad == 0 && qbad == 0, "%s: %llu of %llu stripes with wrong P, %llu wrong Q", name,
	       (unsigned long long)pbad, (unsigned long long)stripes, (unsigned long long)qbad);
	CHECK(stripes * cs * (uint64_t)st.ndata == total);
	return t_failures - before;
}

static void free_array(struct md_array *a)
{
	for (int i = 0; i < MAXM; i++)
		free(a->m[i].buf);
}

/* ---- the shared vectors ---- */

static void check_shared(const char *name, uint64_t id, int members, uint64_t want_sectors,
                         int want_level)
{
	struct md_array a;
	memset(&a, 0, sizeof(a));
	int loaded = 0;
	for (int i = 0; i < members; i++) {
		char cmd[1024], why[128] = "";
		snprintf(cmd, sizeof(cmd), "xz -dc '%s/md-vectors/images/%s/m%d.img.xz'",
		         mdv_shared(), name, i);
		struct member_img img;
		int rc = read_cmd(cmd, &img);
		CHECKF(rc == 0, "%s: cannot read member %d (%s)", name, i, cmd);
		if (rc)
			continue;
		int role = load_member(&a, &img, why, sizeof(why));
		CHECKF(role >= 0, "%s m%d: %s", name, i, why);
		if (role < 0)
			free(img.buf);
		else
			loaded++;
	}
	CHECK(loaded == members);
	CHECK(a.g.level == want_level && a.g.raid_disks == members);
	if (loaded == members)
		verify_array(name, &a, id, want_sectors);
	free_array(&a);
}

static void test_md_linear(void)
{
	check_shared("linear-3", 1, 3, 43008, -1);
}
static void test_md_raid0(void)
{
	check_shared("raid0-c32", 2, 4, 57344, 0);
}
static void test_md_raid1(void)
{
	check_shared("raid1-3", 5, 3, 14336, 1);
}
static void test_md_raid4(void)
{
	check_shared("raid4", 6, 4, 43008, 4);
}
static void test_md_raid5_ls(void)
{
	check_shared("raid5-ls", 9, 4, 43008, 5);
}
static void test_md_raid6_ls(void)
{
	check_shared("raid6-ls", 14, 4, 28672, 6);
}
static void test_md_raid10_n2(void)
{
	check_shared("raid10-n2", 18, 4, 28672, 10);
}
static void test_md_raid5_090(void)
{
	check_shared("raid5-e0.90", 23, 4, 48768, 5);
}

/* ---- development mode: arrays made in mdvm ---- */

static int read_num(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	unsigned long long x;
	int ok = fscanf(f, "%llu", &x) == 1;
	fclose(f);
	*v = x;
	return ok ? 0 : -1;
}

static int check_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		perror(dir);
		return 2;
	}
	struct dirent *e;
	int bad = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		uint64_t id, sectors;
		snprintf(path, sizeof(path), "%s/%s/id", dir, e->d_name);
		if (read_num(path, &id))
			continue;
		snprintf(path, sizeof(path), "%s/%s/sectors", dir, e->d_name);
		if (read_num(path, &sectors))
			continue;
		struct md_array a;
		memset(&a, 0, sizeof(a));
		for (int i = 0; i < MAXM; i++) {
			char cmd[4200], why[128];
			snprintf(path, sizeof(path), "%s/%s/m%d.img", dir, e->d_name, i);
			struct stat sb;
			if (stat(path, &sb))
				break;
			snprintf(cmd, sizeof(cmd), "cat '%s'", path);
			struct member_img img;
			if (read_cmd(cmd, &img) || load_member(&a, &img, why, sizeof(why)) < 0) {
				fprintf(stderr, "%s: member %d unreadable\n", e->d_name, i);
				bad++;
			}
		}
		t_failures = 0;
		verify_array(e->d_name, &a, id, sectors);
		char lay[64];
		layout_name(a.g.level, a.g.layout, lay, sizeof(lay));
		printf("%sok - %s (%s %s, %d members, chunk %u)\n", t_failures ? "not " : "",
		       e->d_name, level_name(a.g.level), lay, a.g.raid_disks, a.g.chunk_sectors);
		bad += t_failures != 0;
		free_array(&a);
	}
	closedir(d);
	return bad ? 1 : 0;
}

int t_run(const struct test_case *cases, size_t n, int argc, char **argv);
static int dev_main(int argc, char **argv);

#define main tests_main
TEST_MAIN(T(test_md_linear), T(test_md_raid0), T(test_md_raid1), T(test_md_raid4),
          T(test_md_raid5_ls), T(test_md_raid6_ls), T(test_md_raid10_n2), T(test_md_raid5_090))
#undef main

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--dir") == 0)
		return dev_main(argc, argv);
	return tests_main(argc, argv);
}

static int dev_main(int argc, char **argv)
{
	(void)argc;
	return check_dir(argv[2]);
}
