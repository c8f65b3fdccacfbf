/* The configuration file parser (src/control/config.c) on hand-written
 * mdadm.conf texts: what each keyword and tag fills in, continuation lines,
 * comments, quotes and abbreviations; the line each refusal names; the
 * UUID forms mdadm accepts; finding ARRAY lines again; and, against files
 * in a temporary directory, candidates and members by superblock UUID. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness.h"
#include "uraid.h"

static struct uraid_config *parse(const char *text, char *err, size_t errlen)
{
	struct uraid_config *c = NULL;
	int rc = uraid_config_parse(text, strlen(text), "t.conf", &c, err, errlen);
	if (rc < 0)
		CHECK(c == NULL);
	return c;
}

static void keywords(void)
{
	char err[512];
	struct uraid_config *c = parse("# a comment\n"
	                               "DEVICE /dev/sd*  partitions\n"
	                               "dev /srv/*.img   # trailing comment\n"
	                               "\n"
	                               "ARRAY /dev/md/data metadata=1.2 UUID=469795d7:b6b276d3:"
	                               "88dbb0a9:55f79d7b name=host:data\n"
	                               "   spares=2 spare-group=shelf\n"
	                               "# comment inside\n"
	                               "  devices=/a,/b,,/c\n"
	                               "arr \"/dev/md/two words\" UUID=B4B349A3-96AA26DB-9C4F21D9-"
	                               "336598C7 level=raid1 num-devices=2\n"
	                               "ARRAY name=other:solo\n"
	                               "ARRAY /dev/md0 uuid='4e9cbbd9 598016b6 df9c7c0a e059fa87'\n"
	                               "MAILADDR root admin@example.org\n"
	                               "MAILFROM RAID monitor <raid@example.org>\n"
	                               "PROGRAM /usr/local/sbin/ev\n"
	                               "HOMEHOST <system>\n"
	                               "CREATE owner=root mode=0660\n"
	                               "AUTO +all\n",
	                               err, sizeof(err));
	CHECKF(c != NULL, "%s", err);
	if (!c)
		return;
	CHECK(c->ndevice == 3);
	CHECK(c->ndevice == 3 && !strcmp(c->device[1], "partitions") &&
	      !strcmp(c->device[2], "/srv/*.img"));
	CHECK(c->narrays == 4);
	const struct uraid_config_array *a = &c->arrays[0];
	CHECK(!strcmp(a->devname, "/dev/md/data") && !strcmp(a->name, "data"));
	CHECK(!strcmp(a->uuid, "469795d7:b6b276d3:88dbb0a9:55f79d7b"));
	CHECK(!strcmp(a->md_name, "host:data") && !strcmp(a->metadata, "1.2"));
	CHECK(a->spares == 2 && !strcmp(a->spare_group, "shelf") && a->line == 5);
	CHECK(a->ndevices == 3 && !strcmp(a->devices[2], "/c"));
	a = &c->arrays[1];
	/* a name with a space is no uraid name: the line is kept, unnamed */
	CHECK(!strcmp(a->devname, "/dev/md/two words") && a->name[0] == 0);
	CHECK(!strcmp(a->uuid, "b4b349a3:96aa26db:9c4f21d9:336598c7") && a->spares == -1);
	a = &c->arrays[2];
	CHECK(!strcmp(a->name, "solo") && a->devname[0] == 0 && a->uuid[0] == 0);
	a = &c->arrays[3];
	CHECK(!strcmp(a->name, "md0") && !strcmp(a->uuid, "4e9cbbd9:598016b6:df9c7c0a:e059fa87"));
	CHECK(!strcmp(c->mailaddr, "root, admin@example.org"));
	CHECK(!strcmp(c->mailfrom, "RAID monitor <raid@example.org>"));
	CHECK(!strcmp(c->program, "/usr/local/sbin/ev") && !strcmp(c->homehost, "<system>"));
	/* found by name, DEVNAME, md name with and without host, UUID in any form */
	CHECK(uraid_config_find(c, "data") == &c->arrays[0]);
	CHECK(uraid_config_find(c, "/dev/md/data") == &c->arrays[0]);
	CHECK(uraid_config_find(c, "host:data") == &c->arrays[0]);
	CHECK(uraid_config_find(c, "other:solo") == &c->arrays[2]);
	CHECK(uraid_config_find(c, "B4B349A396AA26DB9C4F21D9336598C7") == &c->arrays[1]);
	CHECK(uraid_config_find(c, "nothing") == NULL);
	uraid_config_free(c);
}

static void refusals(void)
{
	static const struct {
		const char *text, *what;
	} bad[] = {
	    {"DEVICE /x\n\nFOO bar\n", "t.conf:3: unknown keyword 'FOO'"},
	    {"ARRAY /dev/md/x UUID=1234\n", "t.conf:1: UUID '1234'"},
	    {"ARRAY /dev/md/x\n  UUID=469795d7b6b276d388dbb0a955f79d7b0\n", "t.conf:1: UUID"},
	    {"# c\n  UUID=469795d7b6b276d388dbb0a955f79d7b\n", "t.conf:2: continuation line"},
	    {"ARRAY /dev/md/x colour=blue UUID=469795d7b6b276d388dbb0a955f79d7b\n",
	     "t.conf:1: unknown ARRAY tag 'colour'"},
	    {"MAILADDR root\nARRAY /dev/md/x level=raid1\n", "t.conf:2: ARRAY needs UUID="},
	    {"ARRAY 'x UUID=469795d7b6b276d388dbb0a955f79d7b\n", "t.conf:1: unterminated quote"},
	    {"ARRAY x name=a spares=-1\n", "t.conf:1: bad value for spares"},
	    {"ARRAY x name=a spares=1x\n", "t.conf:1: bad value for spares"},
	    {"ARRAY x name=a bogus\n", "t.conf:1: 'bogus': tag=value expected"},
	    {"PROGRAM\n", "t.conf:1: PROGRAM needs a value"},
	    {"PROGRAM /a /b\n", "t.conf:1: PROGRAM takes one value, 2 given"},
	    {"DE /x\n", "t.conf:1: unknown keyword 'DE'"}, /* fewer than 3 letters */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[512] = "";
		struct uraid_config *c = parse(bad[i].text, err, sizeof(err));
		CHECKF(c == NULL, "accepted: %s", bad[i].text);
		CHECKF(!strncmp(err, bad[i].what, strlen(bad[i].what)), "'%s' for %s", err,
		       bad[i].text);
		uraid_config_free(c);
	}
	char err[128];
	struct uraid_config *c = NULL;
	CHECK(uraid_config_parse("DEVICE a\0b", 10, "n.conf", &c, err, sizeof(err)) == -EINVAL);
	CHECK(c == NULL && strstr(err, "NUL") != NULL);
	/* empty text: an empty configuration */
	CHECK(uraid_config_parse("", 0, NULL, &c, err, sizeof(err)) == 0);
	CHECK(c && c->narrays == 0 && c->ndevice == 0);
	uraid_config_free(c);
}

static void uuid_forms(void)
{
	char u[36];
	CHECK(uraid_uuid_parse("469795d7:b6b276d3:88dbb0a9:55f79d7b", u) == 0);
	CHECK(!strcmp(u, "469795d7:b6b276d3:88dbb0a9:55f79d7b"));
	CHECK(uraid_uuid_parse("469795D7-B6B2-76D3-88DB-B0A955F79D7B", u) == 0);
	CHECK(!strcmp(u, "469795d7:b6b276d3:88dbb0a9:55f79d7b"));
	CHECK(uraid_uuid_parse("469795d7.b6b276d3 88dbb0a955f79d7b", u) == 0);
	CHECK(uraid_uuid_parse("469795d7b6b276d388dbb0a955f79d7", u) == -EINVAL);   /* 31 */
	CHECK(uraid_uuid_parse("469795d7b6b276d388dbb0a955f79d7bb", u) == -EINVAL); /* 33 */
	CHECK(uraid_uuid_parse("469795d7b6b276d388dbb0a955f79d7g", u) == -EINVAL);
	CHECK(uraid_uuid_parse("", u) == -EINVAL);
}

static void load_and_candidates(void)
{
	char dir[] = "/tmp/uraid-config-XXXXXX", path[256], err[512];
	CHECK(mkdtemp(dir) != NULL);
	struct uraid_config *c = NULL;
	snprintf(path, sizeof(path), "%s/none.conf", dir);
	CHECK(uraid_config_load(path, &c, err, sizeof(err)) == -ENOENT && c == NULL);
	CHECK(strstr(err, "none.conf") != NULL);
	snprintf(path, sizeof(path), "%s/u.conf", dir);
	FILE *f = fopen(path, "w");
	fprintf(f, "DEVICE %s/m* %s/m1\nARRAY x devices=%s/m0\n", dir, dir, dir);
	fclose(f);
	for (int i = 0; i < 3; i++) {
		char m[256];
		snprintf(m, sizeof(m), "%s/m%d", dir, i);
		f = fopen(m, "w");
		fclose(f);
	}
	setenv("URAID_CONFIG", path, 1);
	CHECK(uraid_config_load(NULL, &c, err, sizeof(err)) == 0);
	unsetenv("URAID_CONFIG");
	if (c) {
		char **p;
		int n;
		CHECK(uraid_config_candidates(c, NULL, &p, &n, err, sizeof(err)) == 0);
		CHECKF(n == 3, "%d candidates (m1 twice must count once)", n);
		uraid_config_paths_free(p, n);
		CHECK(uraid_config_candidates(c, &c->arrays[0], &p, &n, err, sizeof(err)) == 0);
		CHECK(n == 1);
		uraid_config_paths_free(p, n);
		/* empty files have no superblock: no members, no error */
		CHECK(uraid_config_members(c, &c->arrays[0], &p, &n, err, sizeof(err)) == 0);
		CHECK(n == 0);
		uraid_config_paths_free(p, n);
		uraid_config_free(c);
	}
	/* a directory is not a configuration file */
	CHECK(uraid_config_load(dir, &c, err, sizeof(err)) == -EINVAL);
	for (int i = 0; i < 3; i++) {
		char m[256];
		snprintf(m, sizeof(m), "%s/m%d", dir, i);
		unlink(m);
	}
	unlink(path);
	rmdir(dir);
}

TEST_MAIN(T(keywords), T(refusals), T(uuid_forms), T(load_and_candidates))
