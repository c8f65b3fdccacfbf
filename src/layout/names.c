/* mdadm's level and layout names, both ways, and its default layouts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout_int.h"

struct name_map {
	const char *name;
	int value;
};

/* mdadm's level names (maps.c pers[]), without the non-RAID ones. */
static const struct name_map level_names[] = {
    {"linear", URAID_LEVEL_LINEAR},
    {"raid0", 0},
    {"0", 0},
    {"stripe", 0},
    {"raid1", 1},
    {"1", 1},
    {"mirror", 1},
    {"raid4", 4},
    {"4", 4},
    {"raid5", 5},
    {"5", 5},
    {"raid6", 6},
    {"6", 6},
    {"raid10", 10},
    {"10", 10},
    {NULL, 0},
};

/* raid5 algorithms (mdadm r5layout), and raid6's additions (r6layout).
 * The first name of a value is the one printed. */
static const struct name_map r5_names[] = {
    {"left-asymmetric", 0},
    {"right-asymmetric", 1},
    {"left-symmetric", 2},
    {"right-symmetric", 3},
    {"parity-first", 4},
    {"parity-last", 5},
    {"la", 0},
    {"ra", 1},
    {"ls", 2},
    {"rs", 3},
    {"default", 2},
    {NULL, 0},
};
/* mdadm's r5layout also reads the ddf names as raid5's (never printed). */
static const struct name_map r5_ddf_names[] = {
    {"ddf-zero-restart", 1},
    {"ddf-N-restart", 0},
    {"ddf-N-continue", 2},
    {NULL, 0},
};
static const struct name_map r6_extra_names[] = {
    {"ddf-zero-restart", 8},   {"ddf-N-restart", 9},       {"ddf-N-continue", 10},
    {"left-asymmetric-6", 16}, {"right-asymmetric-6", 17}, {"left-symmetric-6", 18},
    {"right-symmetric-6", 19}, {"parity-first-6", 20},     {NULL, 0},
};
static const struct name_map r0_names[] = {
    {"original", RAID0_LAYOUT_ORIG},
    {"alternate", RAID0_LAYOUT_ALT},
    {"1", RAID0_LAYOUT_ORIG},
    {"2", RAID0_LAYOUT_ALT},
    {NULL, 0},
};

static int map_find(const struct name_map *m, const char *name, int *out)
{
	for (; m->name; m++) {
		if (strcmp(m->name, name) == 0) {
			*out = m->value;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *map_name(const struct name_map *m, int value)
{
	for (; m->name; m++)
		if (m->value == value)
			return m->name;
	return NULL;
}

int level_parse(const char *name, int *level)
{
	int v;
	if (!name || map_find(level_names, name, &v))
		return -EINVAL;
	*level = v;
	return 0;
}

const char *level_name_or_null(int level)
{
	switch (level) {
	case URAID_LEVEL_LINEAR: return "linear";
	case URAID_LEVEL_RAID0: return "raid0";
	case URAID_LEVEL_RAID1: return "raid1";
	case URAID_LEVEL_RAID4: return "raid4";
	case URAID_LEVEL_RAID5: return "raid5";
	case URAID_LEVEL_RAID6: return "raid6";
	case URAID_LEVEL_RAID10: return "raid10";
	case URAID_LEVEL_GMIRROR: return "gmirror";
	case URAID_LEVEL_GRAID3: return "graid3";
	default: return NULL;
	}
}

const char *level_name(int level)
{
	const char *n = level_name_or_null(level);
	return n ? n : "unknown-level";
}

/* raid10: "n2", "f3", "o2" (mdadm --layout), also "near=2" / "far=2" /
 * "offset=2" (mdadm --detail) and combinations such as "n2f2". */
static int r10_parse(const char *name, uint32_t *layout)
{
	int nc = 1, fc = 1, fo = 0;
	bool any = false;
	const char *p = name;
	while (*p) {
		char kind = *p;
		size_t klen = 1;
		if (strncmp(p, "near=", 5) == 0) {
			kind = 'n';
			klen = 5;
		} else if (strncmp(p, "far=", 4) == 0) {
			kind = 'f';
			klen = 4;
		} else if (strncmp(p, "offset=", 7) == 0) {
			kind = 'o';
			klen = 7;
		} else if (kind != 'n' && kind != 'f' && kind != 'o') {
			return -EINVAL;
		}
		p += klen;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (v < 1 || v > 255)
			return -EINVAL;
		p = end;
		if (*p == ',')
			p++;
		while (*p == ' ')
			p++;
		if (kind == 'n') {
			nc = (int)v;
		} else {
			if ((fc > 1) || fo) /* one far/offset spec at most */
				return -EINVAL;
			fc = (int)v;
			fo = kind == 'o';
		}
		any = true;
	}
	if (!any)
		return -EINVAL;
	*layout = (uint32_t)nc | (uint32_t)fc << 8 | (fo ? 1u << 16 : 0u);
	return 0;
}

int layout_parse(int level, const char *name, uint32_t *layout)
{
	int v;
	if (!name || !layout)
		return -EINVAL;
	switch (level) {
	case URAID_LEVEL_RAID4:
		/* one placement only; mdadm 4.2 records layout 0 for it */
		if (strcmp(name, "parity-last") != 0 && strcmp(name, "default") != 0)
			return -EINVAL;
		v = 0;
		break;
	case URAID_LEVEL_RAID5:
		if (map_find(r5_names, name, &v) && map_find(r5_ddf_names, name, &v))
			return -EINVAL;
		break;
	case URAID_LEVEL_RAID6:
		if (map_find(r5_names, name, &v) && map_find(r6_extra_names, name, &v))
			return -EINVAL;
		break;
	case URAID_LEVEL_RAID0:
		if (map_find(r0_names, name, &v))
			return -EINVAL;
		break;
	case URAID_LEVEL_RAID10: return r10_parse(name, layout);
	default: return -EINVAL; /* linear and raid1 have no layouts */
	}
	*layout = (uint32_t)v;
	return 0;
}

int layout_name(int level, uint32_t layout, char *buf, size_t len)
{
	const char *s = NULL;
	char tmp[32];
	switch (level) {
	case URAID_LEVEL_LINEAR:
	case URAID_LEVEL_RAID1: s = "-"; break;
	case URAID_LEVEL_RAID0: s = map_name(r0_names, (int)layout); break;
	case URAID_LEVEL_RAID4: s = layout <= 5 ? "parity-last" : NULL; break;
	case URAID_LEVEL_RAID5: s = layout <= 5 ? map_name(r5_names, (int)layout) : NULL; break;
	case URAID_LEVEL_RAID6:
		s = layout <= 5 ? map_name(r5_names, (int)layout)
		                : map_name(r6_extra_names, (int)layout);
		break;
	case URAID_LEVEL_RAID10: {
		int nc = (int)(layout & 0xff), fc = (int)((layout >> 8) & 0xff);
		bool fo = (layout >> 16) & 1;
		if ((layout >> 17) || nc < 1 || fc < 1)
			break;
		if (fc == 1)
			snprintf(tmp, sizeof(tmp), "n%d", nc);
		else if (nc == 1)
			snprintf(tmp, sizeof(tmp), "%c%d", fo ? 'o' : 'f', fc);
		else
			snprintf(tmp, sizeof(tmp), "n%d%c%d", nc, fo ? 'o' : 'f', fc);
		s = tmp;
		break;
	}
	default: break;
	}
	int rc = 0;
	if (!s) {
		s = "-unknown-"; /* as mdadm prints numbers it has no name for */
		rc = -EINVAL;
	}
	if (buf && len)
		snprintf(buf, len, "%s", s);
	return rc;
}

uint32_t layout_default(int level)
{
	switch (level) {
	case URAID_LEVEL_RAID4: return 0; /* what mdadm 4.2 writes; md ignores it */
	case URAID_LEVEL_RAID5:
	case URAID_LEVEL_RAID6: return LAYOUT_LEFT_SYMMETRIC;
	case URAID_LEVEL_RAID10: return 0x102;            /* n2 */
	case URAID_LEVEL_RAID0: return RAID0_LAYOUT_ORIG; /* mdadm 4.2, multi-zone arrays */
	default: return 0;
	}
}
