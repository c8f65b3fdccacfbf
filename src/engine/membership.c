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
#include <stdarg.h>
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
	/* A reshape changes it: a member behind the freshest whose superblock
	 * or the freshest's records a reshape (a crash while md or uraid wrote
	 * them one after the other at its start, a checkpoint or its end) may
	 * hold the other geometry; the freshest speaks for the array. (The
	 * size too: a raid0's superblocks record none, and a level change
	 * from raid0 records the takeover with the reshape's start.) */
	bool reshape;
	/* A size change (grow --size, md's update_size) writes the
	 * superblocks one after the other with the events bumped: a member
	 * one event behind the freshest may hold the old size; the freshest
	 * speaks for the array, as md's analyze_sbs takes it. */
	bool resized;
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
	uint32_t fm = s->feature_map & ~PER_DEVICE_FEATURES;
	/* md rewrites mdadm's PPL bit as MULTIPLE_PPLS at the first start
	 * when the area holds several logs (super_1_sync): a crash between
	 * the members' superblock writes leaves both, one array. */
	if (fm & MD_FEATURE_MULTIPLE_PPLS)
		fm = (fm & ~MD_FEATURE_MULTIPLE_PPLS) | MD_FEATURE_PPL;
	snprintf(buf, len, "0x%x", fm);
}

static const struct field fields[] = {
    {"array uuid", show_uuid, false, false, false},
    {"metadata version", show_version, false, false, false},
    {"creation time", show_ctime, false, false, false},
    {"level", show_level, false, true, false},
    {"layout", show_layout, false, true, false},
    {"chunk size", show_chunk, false, true, false},
    {"size per member", show_size, false, true, true},
    {"raid devices", show_disks, false, true, false},
    {"feature map", show_features, true, true, false},
};

/* Is member s left out of the comparison of field f? */
static bool skip_field(const struct field *f, const struct md_sb *s, const struct md_sb *fresh)
{
	if (f->current_only && !eng_sb_current(s, fresh))
		return true;
	if (f->resized && s->events + 1 == fresh->events)
		return true;
	return f->reshape && s->events < fresh->events &&
	       ((s->feature_map | fresh->feature_map) & MD_FEATURE_RESHAPE_ACTIVE);
}

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
		if (skip_field(f, &sbs[i], fresh))
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
		if (skip_field(f, &sbs[i], fresh))
			continue;
		f->show(&sbs[i], v, sizeof(v));
		int count = 0;
		for (int j = 0; j < n; j++) {
			char w[80];
			if (skip_field(f, &sbs[j], fresh))
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
			if (skip_field(f, &sbs[i], fresh))
				continue;
			f->show(&sbs[i], v, sizeof(v));
			if (!strcmp(v, most))
				continue;
			char odd[300], rest[300];
			names_with(names, sbs, n, f, v, fresh, odd, sizeof(odd));
			names_with(names, sbs, n, f, most, fresh, rest, sizeof(rest));
			/* mdadm's compare_super refusal first, uraid's finding after */
			if (fi == 0)
				return errmsg(
				    err, errlen, -EINVAL,
				    "superblock on %s doesn't match others - assembly "
				    "aborted\n       (members of two different arrays: %s "
				    "(array %s) and %s (array %s))",
				    odd, odd, v, rest, most);
			return errmsg(
			    err, errlen, -EINVAL,
			    "superblock on %s doesn't match others - assembly aborted\n"
			    "       (the members' superblocks do not match: %s %s %s, %s %s; "
			    "a damaged, foreign or replaced superblock must not redefine "
			    "the array)",
			    odd, odd, f->name, v, rest, most);
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

/* mdadm's --force (Assemble.c): while the array cannot start, take the
 * member left out (stale, or marked faulty by the others) that is the
 * freshest of those whose own superblock puts them, fully in sync, in a
 * slot that is empty now. `chosen` gets them in that order; returns
 * whether the array can start with them. Changes nothing. */
static bool force_plan(const struct eng_array *a, const struct layout_ops *ops, int *chosen,
                       int *nchosen)
{
	int slot[LAYOUT_MAX_MEMBERS];
	bool in[ENG_MAX_MEMBERS] = {false};
	memcpy(slot, a->slot, sizeof(slot));
	*nchosen = 0;
	/* The other layout ops assume a valid geometry (a zero copy count or
	 * chunk divides by zero); setup names what is wrong with it. */
	char e[160];
	if (ops->validate(&a->geo, e, sizeof(e)) < 0)
		return false;
	for (;;) {
		bool missing[LAYOUT_MAX_MEMBERS];
		for (int r = 0; r < a->geo.raid_disks; r++)
			missing[r] = slot[r] < 0 || (!in[slot[r]] && a->mem[slot[r]]->state !=
			                                                 URAID_MEMBER_IN_SYNC);
		if (ops->readable(&a->geo, missing))
			return true;
		int best = -1;
		for (int i = 0; i < a->nmem; i++) {
			const struct eng_member *em = a->mem[i];
			int role = md_sb_role(&em->sb);
			if (!em->left_out || in[i] || role < 0 || role >= a->geo.raid_disks ||
			    slot[role] >= 0 || (em->sb.feature_map & MD_FEATURE_RECOVERY_OFFSET) ||
			    md_sb0_filling(&em->sb))
				continue;
			if (best < 0 || em->sb.events > a->mem[best]->sb.events)
				best = i;
		}
		if (best < 0)
			return false;
		in[best] = true;
		slot[md_sb_role(&a->mem[best]->sb)] = best;
		chosen[(*nchosen)++] = best;
	}
}

static void addf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void addf(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = buf && len ? strlen(buf) : 0;
	if (!buf || used + 1 >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* Forced in: its events become the array's, the faulty mark the others
 * hold for it goes (the next superblock update records both). Only when
 * that makes an array that can start: otherwise nothing changes and the
 * assembly is refused as too few members. */
int eng_force_members(struct eng_array *a, char *warn, size_t warnlen)
{
	const struct layout_ops *ops = layout_ops_for(a->geo.level); /* a->ops: at setup */
	int chosen[ENG_MAX_MEMBERS], n;
	if (!ops || !force_plan(a, ops, chosen, &n))
		return 0;
	for (int k = 0; k < n; k++) {
		struct eng_member *em = a->mem[chosen[k]];
		int role = md_sb_role(&em->sb);
		bool marked = a->ref.version != MD_SB_0_90 && em->sb.dev_number < MD_SB1_MAX_DEVS &&
		              a->ref.dev_roles[em->sb.dev_number] == MD_ROLE_FAULTY;
		addf(warn, warnlen,
		     "forcing event count in %s (slot %d) from %" PRIu64 " up to %" PRIu64
		     "%s: --force, the array cannot start without it\n",
		     em->m->name, role, em->sb.events, a->events,
		     marked ? ", clearing the faulty mark the others hold for it" : "");
		em->sb.events = a->events;
		em->left_out = false;
		em->role = role;
		em->state = URAID_MEMBER_IN_SYNC;
		a->slot[role] = chosen[k];
		a->geo.member_sectors[role] = em->sb.data_size;
	}
	return n;
}

void eng_force_hint(const struct eng_array *a, char *buf, size_t len)
{
	const struct layout_ops *ops = layout_ops_for(a->geo.level);
	int chosen[ENG_MAX_MEMBERS], n;
	if (len)
		buf[0] = 0;
	if (!ops || !force_plan(a, ops, chosen, &n) || n == 0)
		return;
	addf(buf, len, "; --force would start it by forcing in");
	for (int k = 0; k < n; k++) {
		const struct eng_member *em = a->mem[chosen[k]];
		addf(buf, len, "%s %s (slot %d, events %" PRIu64 " of %" PRIu64 ")", k ? "," : "",
		     em->m->name, md_sb_role(&em->sb), em->sb.events, a->events);
	}
	addf(buf, len, ", whose data may be behind the array's");
}
