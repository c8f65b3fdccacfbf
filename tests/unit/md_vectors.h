/* Test helpers: the shared md-vectors (member images made by real md +
 * mdadm) and the `mdadm --examine` text recorded next to them. */
#ifndef URAID_TEST_MD_VECTORS_H
#define URAID_TEST_MD_VECTORS_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MDV_MAX_KEYS 48

static inline const char *mdv_shared(void)
{
	const char *s = getenv("URAID_SHARED");
	return s && *s ? s : "../shared";
}

/* Everything `cmd` writes to its stdout, in a malloc'd buffer; NULL when it
 * cannot run, fails, or memory runs out. */
static inline uint8_t *mdv_read_cmd(const char *cmd, size_t *len)
{
	FILE *f = popen(cmd, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 20, n = 0;
	uint8_t *buf = malloc(cap);
	bool ok = buf != NULL;
	while (ok) {
		if (n == cap) {
			uint8_t *bigger = realloc(buf, cap * 2);
			ok = bigger != NULL;
			if (!ok)
				break;
			buf = bigger;
			cap *= 2;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		if (r == 0)
			break;
		n += r;
	}
	if (pclose(f) != 0 || !ok) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

/* Decompress images/<array>/m<i>.img.xz into memory; NULL if absent. */
static inline uint8_t *mdv_load_image(const char *array, int i, size_t *len)
{
	char path[1024], cmd[1200];
	snprintf(path, sizeof(path), "%s/md-vectors/images/%s/m%d.img.xz", mdv_shared(), array, i);
	FILE *t = fopen(path, "rb");
	if (!t)
		return NULL;
	fclose(t);
	snprintf(cmd, sizeof(cmd), "xz -dc '%s'", path);
	return mdv_read_cmd(cmd, len);
}

/* Array names: the directories under md-vectors/images, sorted. */
static inline int mdv_arrays(char names[][64], int max)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/md-vectors/images", mdv_shared());
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(names[n++], 64, "%.63s", e->d_name);
	}
	closedir(d);
	for (int i = 0; i < n; i++) /* insertion sort: stable order for messages */
		for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char tmp[64];
			memcpy(tmp, names[j], 64);
			memcpy(names[j], names[j - 1], 64);
			memcpy(names[j - 1], tmp, 64);
		}
	return n;
}

/* One member's `mdadm --examine` block after the final stop, as key/value
 * pairs ("Raid Level" -> "raid5"), trimmed. */
struct mdv_examine {
	int n;
	char key[MDV_MAX_KEYS][32];
	char val[MDV_MAX_KEYS][128];
};

static inline void mdv_trim(char *s)
{
	size_t l = strlen(s);
	while (l && (s[l - 1] == ' ' || s[l - 1] == '\n' || s[l - 1] == '\r'))
		s[--l] = 0;
	size_t k = 0;
	while (s[k] == ' ')
		k++;
	memmove(s, s + k, strlen(s + k) + 1);
}

static inline int mdv_examine(const char *array, int i, struct mdv_examine *ex)
{
	char path[1024], line[512], want[64];
	snprintf(path, sizeof(path), "%s/md-vectors/logs/%s.console.log", mdv_shared(), array);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	snprintf(want, sizeof(want), "# mdadm --examine /dev/disk-m%d", i);
	int final = 0, in = 0;
	ex->n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "=== FINAL"))
			final = 1;
		if (!final)
			continue;
		if (line[0] == '#') {
			if (in)
				break;
			mdv_trim(line);
			in = !strcmp(line, want);
			continue;
		}
		if (!in)
			continue;
		char *colon = strstr(line, " : ");
		if (!colon || ex->n >= MDV_MAX_KEYS)
			continue;
		*colon = 0;
		snprintf(ex->key[ex->n], sizeof(ex->key[0]), "%.31s", line);
		snprintf(ex->val[ex->n], sizeof(ex->val[0]), "%.127s", colon + 3);
		mdv_trim(ex->key[ex->n]);
		mdv_trim(ex->val[ex->n]);
		ex->n++;
	}
	fclose(f);
	return ex->n ? 0 : -1;
}

static inline const char *mdv_get(const struct mdv_examine *ex, const char *key)
{
	for (int i = 0; i < ex->n; i++)
		if (!strcmp(ex->key[i], key))
			return ex->val[i];
	return NULL;
}

#endif
