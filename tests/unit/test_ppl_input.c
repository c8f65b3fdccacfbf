/* Corrupt partial parity logs at the assembly of a dirty array. What md
 * takes as the end of a log (a header whose checksum fails, another
 * signature) leaves that log unused, as the kernel does: the array stays
 * dirty and resyncs, and a warning names the member. What md could not have
 * written behind a good checksum (entries beyond the header, an entry
 * outside the array or its stripe, a parity disk that is not the log's
 * member, partial parity running past the area) is refused with the member,
 * the header and the fault named, read-write or read-only, and nothing is
 * written to any member. */
#include "ppl_common.h"
#include "util/endian.h"

/* A dirty array whose newest unit on the parity member of stripe 2 holds
 * one entry (a 4 KiB write into chunk 0); *role and *hdr say where. */
static int setup(struct pt *t, int *role, uint64_t *hdr, uint64_t seed)
{
	struct uraid_array *a = NULL;
	if (pt_open(t, 4, 32, 12, &a) < 0)
		return -1;
	pt_base(t, &a, seed);
	uint8_t buf[4096];
	uint64_t rs = seed ^ 1;
	t_fill(&rs, buf, sizeof(buf));
	pt_write(a, t, buf, sizeof(buf), 2 * 96 * 512);
	uraid_drop(a);
	struct layout_geometry g;
	pt_geom(t, &g);
	struct layout_stripe ls;
	layout_ops_for(URAID_LEVEL_RAID5)->stripe(&g, 2, &ls);
	*role = ls.p_role;
	struct md_ppl_header h;
	uint64_t at, start;
	uint32_t sectors;
	if (pt_newest(t, *role, &h, &at) < 1 || h.entries_count != 1 ||
	    pt_area(t, *role, &start, &sectors) < 0)
		return -1;
	*hdr = (start + at) * 512;
	return 0;
}

/* Patch the header: `len` bytes at `off`, then the checksum made good
 * again unless `keep_crc`. */
static void patch(struct pt *t, int role, uint64_t hdr, size_t off, const void *v, size_t len,
                  bool fix_crc)
{
	uint8_t b[4096];
	CHECK(member_read(t->d[role].mem, b, sizeof(b), hdr) == 0);
	memcpy(b + off, v, len);
	if (fix_crc) {
		put_le32(b + 532, 0);
		put_le32(b + 532, md_ppl_checksum(b, sizeof(b)));
	}
	CHECK(member_write(t->d[role].mem, b, sizeof(b), hdr, 0) == 0);
}

/* The kernel's end of a log: not used, the array resyncs. */
static void unused_log(const char *what, size_t off, uint32_t value, bool fix_crc)
{
	struct pt t;
	int role;
	uint64_t hdr;
	if (setup(&t, &role, &hdr, 0x900 + off) < 0) {
		CHECKF(0, "%s: setup", what);
		pt_close(&t);
		return;
	}
	uint8_t v[4];
	put_le32(v, value);
	patch(&t, role, hdr, off, v, 4, fix_crc);
	struct uraid_array *a = NULL;
	char err[512] = "";
	int rc = pt_assemble(&t, NULL, 0, &a, err, sizeof(err));
	CHECKF(rc == 0, "%s: %s", what, err);
	if (rc == 0) {
		struct uraid_status st;
		uraid_status(a, &st);
		CHECKF(st.ppl_mismatches >= 1 && st.ppl_recovered == 0 && !st.clean,
		       "%s: mismatches %llu recovered %llu clean %d", what,
		       (unsigned long long)st.ppl_mismatches, (unsigned long long)st.ppl_recovered,
		       st.clean);
		CHECK(te_sync_all(a) == 0);
		CHECK_EQ_U64(pt_mismatches(a), 0);
		CHECK(te_verify(a, t.shadow, t.size) == 0);
		CHECK(uraid_stop(a) == 0);
	}
	pt_close(&t);
}

static void bad_checksum_or_signature_means_resync(void)
{
	unused_log("header checksum", 600, 0x12345678, false);
	unused_log("signature", 512, 0xdeadbeef, true);
}

/* Refused, naming the member and `word`; nothing written. */
static void refused(const char *what, size_t off, const void *v, size_t len, const char *word)
{
	struct pt t;
	int role;
	uint64_t hdr;
	if (setup(&t, &role, &hdr, 0x950 + off) < 0) {
		CHECKF(0, "%s: setup", what);
		pt_close(&t);
		return;
	}
	patch(&t, role, hdr, off, v, len, true);
	uint64_t before = pt_hash(&t);
	for (int ro = 0; ro < 2; ro++) {
		struct uraid_array *a = NULL;
		char err[512] = "";
		int rc = pt_assemble(&t, NULL, ro ? URAID_RDONLY : 0, &a, err, sizeof(err));
		CHECKF(rc == -EINVAL && strstr(err, t.d[role].name) && strstr(err, "PPL") &&
		           strstr(err, word),
		       "%s%s: %d %s", what, ro ? " (read-only)" : "", rc, err);
		if (rc == 0)
			uraid_drop(a);
	}
	CHECKF(pt_hash(&t) == before, "%s: a member was written", what);
	pt_close(&t);
}

static void impossible_contents_refused(void)
{
	uint8_t v[8];
	put_le32(v, MD_PPL_MAX_ENTRIES + 1);
	refused("entries_count", 528, v, 4, "entries");
	/* data_sector (entry 0 at 536) past the end of the array */
	put_le32(v, 0x10000000);
	put_le32(v + 4, 0);
	refused("data_sector", 536, v, 8, "entry 0");
	/* parity_disk (entry 0 at 536 + 16) another slot */
	put_le32(v, 7);
	refused("parity_disk", 552, v, 4, "parity_disk");
	/* pp_size (entry 0 at 536 + 8) not whole sectors */
	put_le32(v, 1000);
	refused("pp_size", 544, v, 4, "entry 0");
}

TEST_MAIN(T(bad_checksum_or_signature_means_resync), T(impossible_contents_refused))
