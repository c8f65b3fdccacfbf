/* Disk-model profiles: the built-in table, the key = value format (round
 * trip, base + overrides) and the refusals, each naming the problem; the
 * member constructor's own refusals. */
#include "../harness.h"
#include "sim/member_sim.h"

#include <errno.h>
#include <unistd.h>

static int parse(const char *text, struct sim_profile *p, char *err, size_t errlen)
{
	err[0] = 0;
	return sim_profile_parse(text, "t.model", p, err, errlen);
}

static bool same(const struct sim_profile *a, const struct sim_profile *b)
{
	return strcmp(a->name, b->name) == 0 && strcmp(a->description, b->description) == 0 &&
	       a->rate_outer_mbs == b->rate_outer_mbs && a->rate_inner_mbs == b->rate_inner_mbs &&
	       a->rpm == b->rpm && a->seek_track_ms == b->seek_track_ms &&
	       a->seek_avg_ms == b->seek_avg_ms && a->overhead_us == b->overhead_us &&
	       a->interface_mbs == b->interface_mbs && a->cache_segments == b->cache_segments &&
	       a->segment_bytes == b->segment_bytes && a->write_cache == b->write_cache &&
	       a->write_cache_bytes == b->write_cache_bytes && a->queue_depth == b->queue_depth &&
	       a->capacity_bytes == b->capacity_bytes;
}

static void builtins(void)
{
	const char *want[] = {
	    "ide-2002", "sata-7200-2007", "raptor-10k-2008",     "ssd-sata",   "nvme",
	    "wd2500js", "wd5000aaks",     "wd-velociraptor-300", "wd5001abys", "ide-7mbs-2002"};
	const char *const *names = sim_profile_names();
	size_t n = 0;
	for (; names[n]; n++) {
		CHECK(n < 10 && strcmp(names[n], want[n]) == 0);
		const struct sim_profile *p = sim_profile_find(names[n]);
		CHECK(p && strcmp(p->name, names[n]) == 0);
		char err[256] = "";
		CHECKF(sim_profile_check(p, err, sizeof(err)) == 0, "%s", err);
		CHECK(strlen(p->description) > 20);
		/* format, parse back: the same profile */
		char text[2048];
		int len = sim_profile_format(p, text, sizeof(text));
		CHECK(len > 0 && (size_t)len == strlen(text));
		struct sim_profile q;
		CHECKF(parse(text, &q, err, sizeof(err)) == 0, "%s", err);
		CHECKF(same(p, &q), "%s does not survive format + parse:\n%s", names[n], text);
		CHECK(sim_profile_format(p, text, (size_t)len) == -ENOSPC);
	}
	CHECK(n == 10);
	/* the figures the brief asks for, from the table itself */
	CHECK(sim_profile_find("ide-2002")->rate_outer_mbs == 7);
	CHECK(sim_profile_find("sata-7200-2007")->rate_outer_mbs == 75);
	CHECK(sim_profile_find("raptor-10k-2008")->rpm == 10000);
	CHECK(sim_profile_find("raptor-10k-2008")->seek_avg_ms == 4.5);
	CHECK(sim_profile_find("ssd-sata")->rpm == 0);
	CHECK(sim_profile_find("nvme")->overhead_us == 20);
	errno = 0;
	CHECK(sim_profile_find("floppy") == NULL && errno == ENOENT);
	CHECK(sim_profile_find(NULL) == NULL);
}

static void custom_files(void)
{
	char err[256];
	struct sim_profile p;
	CHECKF(parse("# a disk\nname = mine\nrate_mbs = 50 # flat\n\n  rpm=5400\n"
	             "seek_avg_ms = 12\nseek_track_ms = 2\n",
	             &p, err, sizeof(err)) == 0,
	       "%s", err);
	CHECK(strcmp(p.name, "mine") == 0 && p.rate_outer_mbs == 50 && p.rate_inner_mbs == 50);
	CHECK(p.rpm == 5400 && p.seek_avg_ms == 12 && p.seek_track_ms == 2);
	CHECK(p.interface_mbs == 50 && p.queue_depth == 1 && !p.write_cache &&
	      p.cache_segments == 0);
	/* zoned: outer alone means flat, both means zoned */
	CHECK(parse("rate_outer_mbs = 80\n", &p, err, sizeof(err)) == 0);
	CHECK(p.rate_inner_mbs == 80 && strcmp(p.name, "custom") == 0);
	CHECK(parse("rate_outer_mbs = 80\nrate_inner_mbs = 45\n", &p, err, sizeof(err)) == 0);
	CHECK(p.rate_inner_mbs == 45);
	/* base + overrides */
	CHECKF(parse("base = sata-7200-2007\nname = sata-nowc\nwrite_cache = off\n"
	             "capacity_mib = 1024\nsegment_kib = 64\n",
	             &p, err, sizeof(err)) == 0,
	       "%s", err);
	const struct sim_profile *b = sim_profile_find("sata-7200-2007");
	CHECK(strcmp(p.name, "sata-nowc") == 0 && !p.write_cache);
	CHECK(p.rate_outer_mbs == b->rate_outer_mbs && p.rate_inner_mbs == b->rate_inner_mbs);
	CHECK(p.capacity_bytes == 1024ull << 20 && p.segment_bytes == 64 << 10);
	CHECK(p.write_cache_bytes == b->write_cache_bytes && p.queue_depth == b->queue_depth);
	/* a file on disk; CRLF-free, last line without newline */
	char path[64];
	snprintf(path, sizeof(path), "/var/tmp/uraid-test-model-%ld", (long)getpid());
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("base = nvme\nqueue_depth = 8", f);
		fclose(f);
	}
	CHECKF(sim_profile_parse_file(path, &p, err, sizeof(err)) == 0, "%s", err);
	CHECK(p.queue_depth == 8 && p.rate_outer_mbs == 3000);
	/* a bad line in a file names the file and line */
	f = fopen(path, "w");
	if (f) {
		fputs("base = nvme\n\nrpm = fast\n", f);
		fclose(f);
	}
	CHECK(sim_profile_parse_file(path, &p, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, path) && strstr(err, ":3:") && strstr(err, "rpm") && strstr(err, "fast"),
	       "%s", err);
	CHECK(sim_profile_load(path, &p, err, sizeof(err)) == -EINVAL && strstr(err, ":3:"));
	/* load: built-in names, else files */
	CHECK(sim_profile_load("nvme", &p, err, sizeof(err)) == 0 && p.rate_outer_mbs == 3000);
	f = fopen(path, "w");
	if (f) {
		fputs("rate_mbs = 33\n", f);
		fclose(f);
	}
	CHECK(sim_profile_load(path, &p, err, sizeof(err)) == 0 && p.rate_outer_mbs == 33);
	CHECK(sim_profile_load("sata-7200", &p, err, sizeof(err)) == -ENOENT);
	CHECKF(strstr(err, "'sata-7200'") && strstr(err, "neither a built-in"), "%s", err);
	for (const char *const *n = sim_profile_names(); *n; n++) /* the message lists them all */
		CHECKF(strstr(err, *n) != NULL, "%s missing from: %s", *n, err);
	unlink(path);
	CHECK(sim_profile_load(path, &p, err, sizeof(err)) == -ENOENT);
	CHECK(sim_profile_parse_file(path, &p, err, sizeof(err)) == -ENOENT);
	CHECKF(strstr(err, path) != NULL, "%s", err);
	CHECK(sim_profile_parse_file("/", &p, err, sizeof(err)) < 0);
}

/* Each bad text is refused with -EINVAL and a message containing all the
 * listed fragments. */
static void refusals(void)
{
	static const struct {
		const char *text;
		const char *frag[3];
	} bad[] = {
	    {"rate_mbs = 50\nspeed = 3\n", {"t.model:2", "unknown key", "speed"}},
	    {"rate_mbs = 5o\n", {"t.model:1", "rate_mbs = '5o'", "is not a number"}},
	    {"rate_mbs = 50\nrpm = 7200rpm\n", {":2:", "rpm", "not a number"}},
	    {"rate_mbs = 50\nrpm = 0x1c20\n", {":2:", "rpm", "not a number"}},
	    {"rate_mbs = 50\nrpm = nan\n", {":2:", "not a number", NULL}},
	    {"rate_mbs = 50\nrpm = inf\n", {":2:", "not a number", NULL}},
	    {"rate_mbs = 50\nrpm = 1e300\n", {":2:", "rpm", "outside"}},
	    {"rate_mbs = -5\n", {":1:", "rate_mbs", "outside"}},
	    {"rate_mbs = 0\n", {":1:", "outside", NULL}},
	    {"rate_mbs = 50\nrpm = 50\n", {"rpm", "1000..30000", NULL}},
	    {"rate_mbs = 50\nqueue_depth = 0\n", {":2:", "queue_depth", "outside"}},
	    {"rate_mbs = 50\nqueue_depth = 2.5\n", {":2:", "queue_depth", "whole number"}},
	    {"rate_mbs = 50\ncache_segments = 4\n", {"cache_segments", "segment_kib", NULL}},
	    {"rate_mbs = 50\nwrite_cache = on\n", {"write_cache", "write_cache_kib", NULL}},
	    {"rate_mbs = 50\nwrite_cache = maybe\n", {":2:", "on or off", NULL}},
	    {"rate_mbs = 50\nseek_avg_ms = 2\nseek_track_ms = 3\n",
	     {"seek_track_ms", "longer", NULL}},
	    {"rate_mbs = 50\nrpm = 7200\nrpm = 5400\n", {":3:", "rpm", "twice"}},
	    {"rate_mbs = 50\nrate_outer_mbs = 60\n", {":2:", "twice", NULL}},
	    {"rate_mbs = 50\nrpm 7200\n", {":2:", "expected key = value", NULL}},
	    {"rate_mbs = 50\nrpm =\n", {":2:", "rpm", "no value"}},
	    {"rpm = 7200\n", {"t.model", "rate_mbs", NULL}},
	    {"", {"rate_mbs", NULL, NULL}},
	    {"rate_mbs = 50\nbase = nvme\n", {":2:", "base must come before", NULL}},
	    {"base = floppy\n", {":1:", "floppy", "not a built-in"}},
	    {"rate_mbs = 50\nname = my disk\n", {":2:", "name", "letters"}},
	    {"rate_mbs = 50\nsegment_kib = -1\n", {":2:", "segment_kib", "outside"}},
	    {"rate_mbs = 50\ncapacity_mib = 99999999999999\n", {":2:", "capacity_mib", "outside"}},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256];
		struct sim_profile p = {.name = "untouched"};
		int rc = parse(bad[i].text, &p, err, sizeof(err));
		CHECKF(rc == -EINVAL, "case %zu: rc %d", i, rc);
		for (int k = 0; k < 3 && bad[i].frag[k]; k++)
			CHECKF(strstr(err, bad[i].frag[k]) != NULL, "case %zu: '%s' lacks '%s'", i,
			       err, bad[i].frag[k]);
		CHECK(strcmp(p.name, "untouched") == 0); /* nothing written on failure */
	}
	/* an over-long line and a long description */
	char big[1200];
	memset(big, 'x', sizeof(big));
	memcpy(big, "description = ", 14);
	big[sizeof(big) - 1] = 0;
	char err[256];
	struct sim_profile p;
	CHECK(parse(big, &p, err, sizeof(err)) == -EINVAL && strstr(err, "longer"));
	big[400] = 0;
	CHECK(parse(big, &p, err, sizeof(err)) == -EINVAL && strstr(err, "description"));
	/* programmatic profiles get the same checks */
	struct sim_profile q = *sim_profile_find("sata-7200-2007");
	q.rate_inner_mbs = 0;
	CHECK(sim_profile_check(&q, err, sizeof(err)) == -EINVAL && strstr(err, "rate_inner"));
	q = *sim_profile_find("sata-7200-2007");
	q.segment_bytes = 1000;
	CHECK(sim_profile_check(&q, err, sizeof(err)) == -EINVAL && strstr(err, "segment_kib"));
	q = *sim_profile_find("sata-7200-2007");
	q.name[0] = 0;
	CHECK(sim_profile_check(&q, err, sizeof(err)) == -EINVAL && strstr(err, "name"));
	CHECK(sim_profile_check(NULL, err, sizeof(err)) == -EINVAL);
}

static void open_refusals(void)
{
	char err[256];
	struct member *in = NULL, *s = (struct member *)1;
	CHECK(member_open_mem("in", 8u << 20, &in) == 0);
	const struct sim_profile *p = sim_profile_find("nvme");
	CHECK(member_sim_open(in, p, NULL, -1, &s, err, sizeof(err)) == -EINVAL && s == NULL);
	CHECK(strstr(err, "time scale") != NULL);
	CHECK(member_sim_open(in, p, NULL, 0.0 / 0.0, &s, err, sizeof(err)) == -EINVAL);
	CHECK(member_sim_open(NULL, p, NULL, 0, &s, err, sizeof(err)) == -EINVAL);
	CHECK(member_sim_open(in, NULL, NULL, 0, &s, err, sizeof(err)) == -EINVAL);
	struct sim_profile small = *p;
	small.capacity_bytes = 4u << 20;
	CHECK(member_sim_open(in, &small, NULL, 0, &s, err, sizeof(err)) == -EINVAL);
	CHECKF(strstr(err, "larger than the modelled disk") != NULL, "%s", err);
	struct sim_profile broken = *p;
	broken.queue_depth = 0;
	CHECK(member_sim_open(in, &broken, NULL, 0, &s, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "queue_depth") != NULL);
	/* one bus, one time scale */
	struct sim_bus *bus = NULL;
	CHECK(sim_bus_create(0, &bus, err, sizeof(err)) == -EINVAL && strstr(err, "bus rate"));
	CHECK(sim_bus_create(1e12, &bus, err, sizeof(err)) == -EINVAL);
	CHECK(sim_bus_create(680, &bus, err, sizeof(err)) == 0);
	CHECK(member_sim_open(in, p, bus, 0, &s, err, sizeof(err)) == 0);
	struct member *in2 = NULL, *s2 = NULL;
	CHECK(member_open_mem("in2", 8u << 20, &in2) == 0);
	CHECK(member_sim_open(in2, p, bus, 10, &s2, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "time scale") != NULL);
	/* failures leave the inner member with the caller, still usable */
	CHECK(member_write(in2, "x", 1, 0, 0) == 0);
	member_close(in2);
	struct sim_stats st;
	CHECK(member_sim_stats(in, &st) == -EINVAL); /* `in` now belongs to s */
	CHECK(member_sim_stats(s, &st) == 0 && st.reads == 0);
	CHECK(member_sim_model_ns(s) == 0);
	member_close(s);
	sim_bus_destroy(bus);
}

TEST_MAIN(T(builtins), T(custom_files), T(refusals), T(open_refusals))
