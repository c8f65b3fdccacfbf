/* Which members make up an array, as md and mdadm decide it: a member
 * belongs when its superblock names the same array (uuid, creation time)
 * with the same geometry (level, layout, chunk, size, raid_disks) and the
 * same metadata version; among the current members (events within mdadm's
 * margin of the freshest) also the same array-wide features. Members that
 * disagree are named and the assembly refused (mdadm's "superblock on X
 * doesn't match others - assembly aborted"): a member whose superblock was
 * damaged or replaced must never redefine the array. The freshest member
 * (most events, then the latest update time) speaks for the array; two
 * members at its events that disagree on the member roles are a split
 * brain, refused too. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "engine/md.h"
#include "util/errmsg.h"

/* Feature bits that describe one device, not the array. */
#define PER_DEVICE_FEATURES                                                            \
	(MD_FEATURE_RECOVERY_OFFSET | MD_FEATURE_REPLACEMENT | MD_FEATURE_BAD_BLOCKS | \
	 MD_FEATURE_RECOVERY_BITMAP)

/* One field the members must agree on: its name and its value as text. */
struct field {
	const char *name;
	void (*show)(const struct md_sb *s, char *buf, size_t len);
	bool current_only; /* compared among the current members only */
};

static void show_uuid(const struct md_sb *s, char *buf, size_t len)
{
	char u[40];
	md_uuid_format(s->set_uuid, u);
	snprintf(buf, len, "%s", u);
}

static void show_version(const struct md_sb *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s", md_sb_version_name(s->version));
}

static void show_ctime(const struct md_sb *s, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64, s->ctime);
}

static void show_level(const struct md_sb *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s", level_name(s->level));
}

static void show_layout(const struct md_sb *s, char *buf, size_t len)
{
	char name[32];
	layout_name(s->level, s->layout, name, sizeof(name));
	snprintf(buf, len, "%s (%u)", name, s->layout);
}

static void show_chunk(const struct md_sb *s, char *buf, size_t len)
{
	snprintf(buf, len, "%u KiB", s->chunk_sectors / 2);
}

static void show_size(const struct md_sb *s, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64 " sectors", s->size);
}

static void show_disks(const struct md_sb *s, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu32, s->raid_disks);
}

static void show_features(const struct md_sb *s, char *buf, size_t len)
{
	snprintf(buf, len, "0x%x", s->feature_map & ~PER_DEVICE_FEATURES);
}

static const struct field fields[] = {
    {"array uuid", show_uuid, false},      {"metadata version", show_version, false},
    {"creation time", show_ctime, false},  {"level", show_level, false},
    {"layout", show_layout, false},        {"chunk size", show_chunk, false},
    {"size per member", show_size, false}, {"raid devices", show_disks, false},
    {"feature map", show_features, true},
};

int eng_pick_freshest(const struct md_sb *sbs, int n)
{
	int fresh = 0;
	for (int i = 1; i < n; i++)
		if (sbs[i].events > sbs[fresh].events ||
		    (sbs[i].events == sbs[fresh].events && sbs[i].utime > sbs[fresh].utime))
			fresh = i;
	return fresh;
}

bool eng_sb_current(const struct md_sb *s, const struct md_sb *fresh)
{
	/* mdadm's margin: one event behind is still current, since a
	 * clean->dirty update may not have reached every member. */
	return s->events + 1 >= fresh->events;
}

/* Names of the members whose field reads `val` (the first few). */
static void names_with(const struct member *const *mm, const struct md_sb *sbs, int n,
                       const struct field *f, const char *val, const struct md_sb *fresh, char *out,
                       size_t len)
{
	size_t used = 0;
	int shown = 0, more = 0;
	out[0] = 0;
	for (int i = 0; i < n; i++) {
		char v[80];
		if (f->current_only && !eng_sb_current(&sbs[i], fresh))
			continue;
		f->show(&sbs[i], v, sizeof(v));
		if (strcmp(v, val))
			continue;
		if (shown < 3 && used + 1 < len)
			used += (size_t)snprintf(out + used, len - used, "%s%s", shown ? ", " : "",
			                         mm[i]->name);
		else
			more++;
		shown++;
	}
	if (more && used + 1 < len)
		snprintf(out + used, len - used, " and %d more", more);
}

/* The value of field f most members share, and how many share it. */
static int majority(const struct md_sb *sbs, int n, const struct field *f,
                    const struct md_sb *fresh, char *val, size_t len)
{
	int best = 0;
	for (int i = 0; i < n; i++) {
		char v[80];
		if (f->current_only && !eng_sb_current(&sbs[i], fresh))
			continue;
		f->show(&sbs[i], v, sizeof(v));
		int count = 0;
		for (int j = 0; j < n; j++) {
			char w[80];
			if (f->current_only && !eng_sb_current(&sbs[j], fresh))
				continue;
			f->show(&sbs[j], w, sizeof(w));
			count += !strcmp(v, w);
		}
		if (count > best) {
			best = count;
			snprintf(val, len, "%s", v);
		}
	}
	return best;
}

/* Same roles for every device number the two tables cover. */
static bool same_roles(const struct md_sb *x, const struct md_sb *y)
{
	if (x->version == MD_SB_0_90)
		return !memcmp(x->v0.disks, y->v0.disks, sizeof(x->v0.disks));
	uint32_t n = x->max_dev > y->max_dev ? x->max_dev : y->max_dev;
	for (uint32_t d = 0; d < n && d < MD_SB1_MAX_DEVS; d++) {
		uint16_t rx = d < x->max_dev ? x->dev_roles[d] : MD_ROLE_FAULTY;
		uint16_t ry = d < y->max_dev ? y->dev_roles[d] : MD_ROLE_FAULTY;
		if (rx != ry)
			return false;
	}
	return true;
}

int eng_members_agree(struct member *const *mm, const struct md_sb *sbs, int n, char *err,
                      size_t errlen)
{
	const struct md_sb *fresh = &sbs[eng_pick_freshest(sbs, n)];
	const struct member *const *names = (const struct member *const *)mm;
	for (size_t fi = 0; fi < sizeof(fields) / sizeof(fields[0]); fi++) {
		const struct field *f = &fields[fi];
		char most[80];
		majority(sbs, n, f, fresh, most, sizeof(most));
		for (int i = 0; i < n; i++) {
			char v[80];
			if (f->current_only && !eng_sb_current(&sbs[i], fresh))
				continue;
			f->show(&sbs[i], v, sizeof(v));
			if (!strcmp(v, most))
				continue;
			char odd[300], rest[300];
			names_with(names, sbs, n, f, v, fresh, odd, sizeof(odd));
			names_with(names, sbs, n, f, most, fresh, rest, sizeof(rest));
			if (fi == 0)
				return errmsg(
				    err, errlen, -EINVAL,
				    "members of two different arrays: %s (array %s) and %s "
				    "(array %s)",
				    odd, v, rest, most);
			return errmsg(err, errlen, -EINVAL,
			              "the members' superblocks do not match: %s %s %s, %s %s; "
			              "refusing to assemble (a damaged, foreign or replaced "
			              "superblock must not redefine the array)",
			              odd, f->name, v, rest, most);
		}
	}
	for (int i = 0; i < n; i++)
		if (sbs[i].events == fresh->events && !same_roles(&sbs[i], fresh)) {
			int fi = (int)(fresh - sbs);
			return errmsg(err, errlen, -EINVAL,
			              "%s and %s both have the latest events (%" PRIu64
			              ") but record different member roles: the array was "
			              "changed in two places; refusing to guess which is right",
			              mm[fi]->name, mm[i]->name, fresh->events);
		}
	return 0;
}
