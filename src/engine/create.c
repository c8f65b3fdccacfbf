/* Creating an array: validate every parameter and member first, write
 * nothing until all of it passed; then superblocks (mdadm's defaults via
 * meta's md_create_plan / md_sb_init) and assemble. Without assume_clean the
 * superblocks say "resync from 0", so the first assembly makes parity and
 * mirrors consistent, exactly as the kernel would. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "engine/md.h"
#include "meta/md_ppl.h"
#include "util/errmsg.h"

static bool is_chunked(int level)
{
	return level == 0 || level == 4 || level == 5 || level == 6 || level == 10;
}

static void close_all(struct member **mm, int n)
{
	for (int i = 0; i < n; i++)
		if (mm[i])
			member_close(mm[i]);
}

/* Superblocks of other versions left from an earlier array would win the
 * next probe (1.2 is preferred over 1.0, ...): wipe them as mdadm does. */
static int wipe_other_sbs(struct member *m, enum md_sb_version keep)
{
	static const enum md_sb_version all[] = {MD_SB_0_90, MD_SB_1_0, MD_SB_1_1, MD_SB_1_2};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (all[i] == keep)
			continue;
		struct md_sb old;
		char e[128];
		int rc = md_sb_load_version(m, all[i], &old, e, sizeof(e));
		if (rc == -ENOENT || rc == -ENOSPC)
			continue;
		int64_t loc = md_sb_location(all[i], m->size / 512);
		if (loc < 0)
			continue;
		uint8_t *z = eng_alloc(MD_SB_BYTES);
		if (!z)
			return -ENOMEM;
		rc = member_write(m, z, MD_SB_BYTES, (uint64_t)loc * 512, 0);
		free(z);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* mdadm's write_init_ppl1: the PPL area zeroed and an empty header at its
 * start, so the first assembly finds a valid, empty log on every member. */
static int write_init_ppl(struct member *m, const struct md_sb *sb)
{
	uint16_t use;
	int rc = md_ppl_check_area(sb, m->size / 512, &use, NULL, 0);
	if (rc < 0)
		return rc;
	uint8_t *buf = eng_alloc((size_t)use * 512);
	if (!buf)
		return -ENOMEM;
	struct md_ppl_header h;
	md_ppl_init(&h, md_ppl_signature(sb->set_uuid), 0);
	md_ppl_encode(&h, buf);
	uint64_t at = (uint64_t)((int64_t)sb->super_offset + md_ppl_offset(sb));
	rc = member_write(m, buf, (size_t)use * 512, at * 512, 0);
	free(buf);
	return rc;
}

/* Parameter checks that need no member: done before any file is opened
 * or created. Returns the chunk to use in *chunk_out. */
static int check_opts(const struct uraid_create_opts *o, int n, unsigned flags, uint32_t *chunk_out,
                      char *err, size_t errlen)
{
	if (!layout_ops_for(o->level))
		return errmsg(err, errlen, -EINVAL, "unknown RAID level %d", o->level);
	if (flags & URAID_RDONLY)
		return errmsg(err, errlen, -EINVAL, "cannot create an array read-only");
	if (o->raid_devices < 1 || o->raid_devices > LAYOUT_MAX_MEMBERS)
		return errmsg(err, errlen, -EINVAL, "raid-devices %d out of range 1..%d",
		              o->raid_devices, LAYOUT_MAX_MEMBERS);
	int nj = o->write_journal ? 1 : 0;
	if (o->spare_devices < 0 || o->raid_devices + o->spare_devices + nj != n)
		return errmsg(
		    err, errlen, -EINVAL,
		    "%d member(s) given, but raid-devices %d + spare-devices %d%s need %d", n,
		    o->raid_devices, o->spare_devices, nj ? " + a journal" : "",
		    o->raid_devices + o->spare_devices + nj);
	if (nj && o->level != 4 && o->level != 5 && o->level != 6)
		return errmsg(err, errlen, -EINVAL,
		              "--write-journal needs raid4, raid5 or raid6 (md journals parity "
		              "writes), not level %d",
		              o->level);
	if (nj && o->metadata_set && o->metadata == MD_SB_0_90)
		return errmsg(err, errlen, -EINVAL,
		              "--write-journal needs 1.x metadata (0.90 has no journal role)");
	if (o->consistency_policy != URAID_POLICY_RESYNC &&
	    o->consistency_policy != URAID_POLICY_PPL)
		return errmsg(err, errlen, -EINVAL, "unknown consistency policy %d",
		              o->consistency_policy);
	if (o->consistency_policy == URAID_POLICY_PPL) {
		/* mdadm's words. */
		if (o->level != URAID_LEVEL_RAID5)
			return errmsg(err, errlen, -EINVAL,
			              "PPL consistency policy is only supported for RAID level 5");
		if (o->metadata_set && o->metadata == MD_SB_0_90)
			return errmsg(err, errlen, -EINVAL, "0.90 metadata does not support PPL");
		if (nj)
			return errmsg(
			    err, errlen, -EINVAL,
			    "--write-journal is not supported with consistency policy: ppl");
	}
	uint32_t chunk = o->chunk_sectors;
	if (is_chunked(o->level)) {
		if (chunk == 0)
			chunk = 1024; /* mdadm's 512 KiB */
		if (chunk < 8 || (chunk & (chunk - 1)))
			return errmsg(err, errlen, -EINVAL,
			              "chunk size %u bytes: must be a power of two, at least 4 KiB",
			              chunk * 512);
	} else {
		chunk = 0;
	}
	if (o->metadata_set && o->metadata != MD_SB_0_90 && o->metadata != MD_SB_1_0 &&
	    o->metadata != MD_SB_1_1 && o->metadata != MD_SB_1_2)
		return errmsg(err, errlen, -EINVAL, "unknown metadata version %d", o->metadata);
	/* The geometry rules that do not depend on member sizes (member
	 * counts, layouts) come from the personality itself. */
	struct layout_geometry g;
	memset(&g, 0, sizeof(g));
	g.level = o->level;
	g.layout = o->layout_set ? o->layout : layout_default(o->level);
	g.chunk_sectors = chunk;
	g.raid_disks = o->raid_devices;
	/* Sizes are checked against the real members later (below, in
	 * eng_create_members): here a size no chunk can exceed. */
	g.dev_sectors = 1ull << 40;
	for (int r = 0; r < o->raid_devices; r++)
		g.member_sectors[r] = 1ull << 40;
	char e[256];
	int rc = layout_ops_for(o->level)->validate(&g, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s", e);
	*chunk_out = chunk;
	return 0;
}

int eng_create_members(const struct uraid_create_opts *o, struct member **mm, int n, unsigned flags,
                       struct eng_array **out, char *err, size_t errlen)
{
	char e[256];
	int rc;
	*out = NULL;
	struct md_sb *sbs = NULL;
	uint64_t *ds = NULL;
	const struct layout_ops *ops = layout_ops_for(o->level);
	uint32_t chunk;
	rc = check_opts(o, n, flags, &chunk, err, errlen);
	if (rc < 0)
		goto fail;
	struct md_create_params p;
	memset(&p, 0, sizeof(p));
	p.version = o->metadata_set ? (enum md_sb_version)o->metadata : MD_SB_1_2;
	p.level = o->level;
	p.layout = o->layout_set ? o->layout : layout_default(o->level);
	p.chunk_sectors = chunk;
	p.raid_disks = (uint32_t)o->raid_devices;
	p.spare_disks = (uint32_t)o->spare_devices;
	snprintf(p.name, sizeof(p.name), "%s", o->name[0] ? o->name : "0");
	if (gethostname(p.homehost, sizeof(p.homehost) - 1) < 0)
		p.homehost[0] = 0;
	if (getrandom(p.set_uuid, sizeof(p.set_uuid), 0) != sizeof(p.set_uuid)) {
		rc = errmsg(err, errlen, -EIO, "no random numbers for the array UUID");
		goto fail;
	}
	p.size = o->size_sectors;
	p.assume_clean = o->assume_clean;
	p.ctime = (uint64_t)time(NULL);
	p.ppl = o->consistency_policy == URAID_POLICY_PPL;

	ds = calloc((size_t)n, sizeof(*ds));
	sbs = calloc((size_t)n, sizeof(*sbs));
	if (!ds || !sbs) {
		rc = errmsg(err, errlen, -ENOMEM, "out of memory");
		goto fail;
	}
	for (int i = 0; i < n; i++) {
		struct member *m = mm[i];
		ds[i] = m->size / 512;
		if (m->readonly) {
			rc = errmsg(err, errlen, -EROFS, "%s is read-only", m->name);
			goto fail;
		}
		rc = member_lock(m);
		if (rc < 0) {
			rc = errmsg(err, errlen, rc, "%s is in use by a running array", m->name);
			goto fail;
		}
		struct md_sb old;
		if (md_sb_load(m, &old, e, sizeof(e)) == 0 && !md_sb_clean(&old)) {
			char u[36];
			md_uuid_format(old.set_uuid, u);
			rc = errmsg(
			    err, errlen, -EBUSY,
			    "%s is part of an active (not cleanly stopped) array %.35s; stop "
			    "it first",
			    m->name, u);
			goto fail;
		}
		struct md_create_params one = p;
		rc = md_create_plan(&one, &ds[i], 1, e, sizeof(e));
		if (rc < 0) {
			rc = errmsg(err, errlen, rc, "%s: member too small (%llu bytes): %s",
			            m->name, (unsigned long long)m->size, e);
			goto fail;
		}
	}
	/* The journal member does not hold array data: it does not limit the
	 * size (it is the last one, see uraid_create_opts). */
	int nj = o->write_journal ? 1 : 0;
	rc = md_create_plan(&p, ds, (unsigned)(n - nj), e, sizeof(e));
	if (rc < 0) {
		rc = errmsg(err, errlen, rc, "%s", e);
		goto fail;
	}
	/* Device numbers in mdadm's order: as given, the journal (the last
	 * member here) where --write-journal stood. */
	uint32_t dn[ENG_MAX_MEMBERS + 1]; /* n is at most ENG_MAX_MEMBERS (+ journal) */
	for (int i = 0; i < n && i <= ENG_MAX_MEMBERS; i++)
		dn[i] = (uint32_t)i;
	bool shifted = nj && o->journal_pos > 0 && o->journal_pos < n && n <= ENG_MAX_MEMBERS + 1;
	for (int i = 0; shifted && i < n; i++)
		dn[i] = i == n - 1               ? (uint32_t)(o->journal_pos - 1)
		        : i < o->journal_pos - 1 ? (uint32_t)i
		                                 : (uint32_t)i + 1;
	uint8_t devuuid[16];
	for (int i = 0; i < n; i++) {
		if (getrandom(devuuid, sizeof(devuuid), 0) != sizeof(devuuid)) {
			rc = errmsg(err, errlen, -EIO, "no random numbers for a device UUID");
			goto fail;
		}
		int role = i < o->raid_devices ? i : -1;
		struct md_create_params pi = p;
		if (nj && i == n - 1) {
			role = -3;
			pi.size = MD_SB_BYTES / 512; /* any size the small journal holds */
		}
		rc = md_sb_init(&sbs[i], &pi, role, shifted ? dn[i] : (uint32_t)i, devuuid, ds[i],
		                e, sizeof(e));
		if (rc < 0) {
			rc = errmsg(err, errlen, rc, "%s: %s", mm[i]->name, e);
			goto fail;
		}
		if (i < 64) /* md's device flags, as mdadm --write-mostly / --failfast */
			eng_sb_set_devflags(
			    &sbs[i], (((o->write_mostly >> i) & 1) ? ENG_DEV_WRITEMOSTLY : 0) |
			                 (((o->failfast >> i) & 1) ? ENG_DEV_FAILFAST : 0));
		sbs[i].size = sbs[0].size;
	}
	/* 0.90: every member's disk table carries each device's flags */
	for (int i = 0; i < n && sbs[0].version == MD_SB_0_90; i++) {
		uint32_t mask = (1u << MD_DISK_WRITEMOSTLY) | (1u << MD_DISK_FAILFAST);
		uint32_t nr = sbs[i].v0.this_disk.number;
		for (int j = 0; j < n && nr < MD_SB0_MAX_DEVS; j++)
			sbs[j].v0.disks[nr].state |= sbs[i].v0.this_disk.state & mask;
	}
	/* Every member names the journal (role 0xfffd) and the feature; with
	 * the numbers shifted, every device's role at its number. */
	for (int i = 0; nj && i < n; i++) {
		for (int j = 0; shifted && j < n - 1; j++)
			md_sb_set_role(&sbs[i], dn[j], j < o->raid_devices ? j : -1);
		md_sb_set_role(&sbs[i], dn[n - 1], -3);
		sbs[i].feature_map |= MD_FEATURE_JOURNAL;
	}
	/* The geometry the kernel would run with; refuse what it would refuse. */
	struct layout_geometry g;
	memset(&g, 0, sizeof(g));
	g.level = p.level;
	g.layout = sbs[0].layout;
	g.chunk_sectors = sbs[0].chunk_sectors;
	g.raid_disks = o->raid_devices;
	g.dev_sectors = sbs[0].size;
	for (int r = 0; r < o->raid_devices; r++)
		g.member_sectors[r] = sbs[r].data_size;
	rc = ops->validate(&g, e, sizeof(e));
	if (rc < 0) {
		rc = errmsg(err, errlen, rc, "%s", e);
		goto fail;
	}
	if (ops->array_sectors(&g) == 0) {
		rc = errmsg(err, errlen, -ENOSPC, "members too small: the array would be empty");
		goto fail;
	}
	/* Everything checked: now write. */
	for (int i = 0; i < n; i++) {
		rc = wipe_other_sbs(mm[i], p.version);
		if (rc == 0 && md_ppl_enabled(&sbs[i]))
			rc = write_init_ppl(mm[i], &sbs[i]);
		if (rc == 0)
			rc = md_sb_store(mm[i], &sbs[i]);
		if (rc == 0)
			rc = member_flush(mm[i]);
		if (rc < 0) {
			rc = errmsg(err, errlen, rc, "%s: writing the superblock failed: %s",
			            mm[i]->name, strerror(-rc));
			goto fail;
		}
	}
	free(sbs);
	free(ds);
	char warn[512];
	return eng_assemble(mm, n, flags | URAID_CREATED, out, err, errlen, warn, sizeof(warn));
fail:
	free(sbs);
	free(ds);
	close_all(mm, n);
	return rc;
}

int eng_create_files(const struct uraid_create_opts *o, const char *const *paths, int n,
                     unsigned flags, struct eng_array **out, char *err, size_t errlen)
{
	if (n < 1 || n > ENG_MAX_MEMBERS)
		return errmsg(err, errlen, -EINVAL, "need 1 to %d members, got %d", ENG_MAX_MEMBERS,
		              n);
	uint32_t chunk;
	int rc = check_opts(o, n, flags, &chunk, err, errlen);
	if (rc < 0)
		return rc;
	struct member **mm = calloc((size_t)n, sizeof(*mm));
	if (!mm)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	char e[256];
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < i; j++)
			if (!strcmp(paths[i], paths[j])) {
				close_all(mm, n);
				free(mm);
				return errmsg(err, errlen, -EINVAL, "%s given twice", paths[i]);
			}
		/* A member file is created only when a size was asked for. */
		unsigned mf = o->member_bytes ? MEMBER_CREATE : 0;
		if (flags & URAID_DIRECT)
			mf |= MEMBER_DIRECT;
		rc = member_open_file(paths[i], mf, o->member_bytes, &mm[i], e, sizeof(e));
		if (rc < 0) {
			close_all(mm, n);
			free(mm);
			if (strstr(e, paths[i]))
				return errmsg(err, errlen, rc, "%s", e);
			return errmsg(err, errlen, rc, "%s: %s", paths[i], e);
		}
	}
	rc = eng_create_members(o, mm, n, flags, out, err, errlen);
	free(mm);
	return rc;
}
