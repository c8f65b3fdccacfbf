/* The timing model of one simulated disk (see member_sim.h for what it
 * models). Pure accounting: given a command and its arrival in model time,
 * advance the head/cache state and return the completion time. The caller
 * serialises calls per member. */
#include "sim/sim_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A head this close (ns) to the right angle is on it: keeps float rounding
 * from turning "just in time" into a lost revolution. */
#define ANGLE_SLACK_NS 50.0

void sim_geom_init(struct sim_geom *g, const struct sim_profile *p, uint64_t member_size)
{
	memset(g, 0, sizeof(*g));
	g->span = (double)(p->capacity_bytes ? p->capacity_bytes : member_size);
	g->ro = p->rate_outer_mbs * 1e6 / 1e9;
	g->ri = p->rate_inner_mbs * 1e6 / 1e9;
	g->period = p->rpm > 0 ? 60e9 / p->rpm : 0;
	g->seek_track = p->seek_track_ms * 1e6;
	/* Mean of sqrt(|u - v|) over independent uniform u, v is 8/15. */
	g->seek_full = g->seek_track + (p->seek_avg_ms * 1e6 - g->seek_track) * 15.0 / 8.0;
	g->overhead = p->overhead_us * 1e3;
	g->iface = p->interface_mbs * 1e6 / 1e9;
	g->segment = p->cache_segments ? (double)p->segment_bytes : 0;
	g->nsegs = p->cache_segments;
	g->wcache = p->write_cache ? (double)p->write_cache_bytes : 0;
}

static bool zoned(const struct sim_geom *g)
{
	return fabs(g->ri - g->ro) > 1e-9 * g->ro;
}

static double rate_at(const struct sim_geom *g, double x)
{
	return g->ro + (g->ri - g->ro) * (x / g->span);
}

/* With r(x) linear in x, time = integral of dx / r(x) = span / (ri - ro) *
 * ln(r(b) / r(a)). */
double sim_xfer_ns(const struct sim_geom *g, double a, double b)
{
	if (b <= a)
		return 0;
	if (!zoned(g))
		return (b - a) / g->ro;
	return g->span / (g->ri - g->ro) * log(rate_at(g, b) / rate_at(g, a));
}

double sim_advance(const struct sim_geom *g, double a, double ns)
{
	if (ns <= 0)
		return a;
	if (!zoned(g))
		return a + ns * g->ro;
	double rb = rate_at(g, a) * exp(ns * (g->ri - g->ro) / g->span);
	return (rb - g->ro) * g->span / (g->ri - g->ro);
}

double sim_seek_ns(const struct sim_geom *g, double from, double to)
{
	double d = fabs(to - from);
	if (g->seek_full <= 0 || d == 0)
		return 0;
	/* Within one track's worth of bytes the head stays; rotation covers it. */
	if (g->period > 0 && d < rate_at(g, from) * g->period)
		return 0;
	return g->seek_track + (g->seek_full - g->seek_track) * sqrt(d / g->span);
}

double sim_rot_wait(const struct sim_geom *g, double t, double a)
{
	if (g->period <= 0)
		return 0;
	/* The angle of a byte: revolutions a head streaming from offset 0
	 * needs to reach it, so streaming on never waits. */
	double target = fmod(sim_xfer_ns(g, 0, a), g->period);
	double head = fmod(t, g->period);
	double w = target - head;
	if (w < 0)
		w += g->period;
	if (w < ANGLE_SLACK_NS || w > g->period - ANGLE_SLACK_NS)
		return 0;
	return w;
}

int sim_model_init(struct sim_model *s, const struct sim_profile *p, uint64_t member_size,
                   struct sim_bus *bus)
{
	memset(s, 0, sizeof(*s));
	sim_geom_init(&s->g, p, member_size);
	s->bus = bus;
	if (s->g.nsegs) {
		s->segs = calloc(s->g.nsegs, sizeof(*s->segs));
		if (!s->segs)
			return -ENOMEM;
	}
	return 0;
}

void sim_model_free(struct sim_model *s)
{
	free(s->segs);
	free(s->dirty);
	s->segs = NULL;
	s->dirty = NULL;
}

/* Bytes the link moves from `start` at its interface rate, after what it
 * already carries (queued commands, other threads), over the shared bus
 * when there is one. With src_rate > 0 the bytes come off the media from
 * src_start at src_rate and none can leave before it is read; without, they
 * are in the drive's buffer already. Returns when the last byte is across. */
static double link_fill(struct sim_model *s, double start, double bytes, double src_start,
                        double src_rate)
{
	if (bytes <= 0)
		return start;
	if (start < s->link_free)
		start = s->link_free;
	double done;
	if (s->bus) {
		done = sim_bus_fill(s->bus, start, bytes, s->g.iface, src_start, src_rate);
	} else {
		done = start + bytes / s->g.iface;
		double read = src_rate > 0 ? src_start + bytes / src_rate : 0;
		done = read > done ? read : done;
	}
	s->link_free = done;
	return done;
}

/* Where the read-ahead has got to at time t (t >= busy_until). */
static double stream_reached(const struct sim_model *s, double t)
{
	if (!s->streaming || t <= s->busy_until)
		return s->pos;
	double r = sim_advance(&s->g, s->pos, t - s->busy_until);
	return r < s->ra_limit ? r : s->ra_limit;
}

double sim_model_head(const struct sim_model *s, double t)
{
	return stream_reached(s, t > s->busy_until ? t : s->busy_until);
}

static void keep_segment(struct sim_model *s, double start, double end)
{
	if (!s->g.nsegs || end <= start)
		return;
	unsigned victim = 0;
	if (s->nsegs_used < s->g.nsegs) {
		victim = s->nsegs_used++;
	} else {
		for (unsigned i = 1; i < s->nsegs_used; i++)
			if (s->segs[i].used < s->segs[victim].used)
				victim = i;
	}
	s->segs[victim] = (struct sim_seg){start, end, ++s->stamp};
}

/* Stop the read-ahead at time h (when the head is taken for other work);
 * what it read stays as a segment. Returns the head position. */
static double stop_stream(struct sim_model *s, double h)
{
	if (!s->streaming)
		return s->pos;
	double at = stream_reached(s, h);
	double from = s->seg_start > at - s->g.segment ? s->seg_start : at - s->g.segment;
	keep_segment(s, from, at);
	s->streaming = false;
	return at;
}

/* Take the head at time t (>= arrival) to `a`; returns when the first byte
 * passes under it. */
static double position(struct sim_model *s, double t, double a)
{
	double h = t > s->busy_until ? t : s->busy_until;
	double p = stop_stream(s, h);
	double seek = sim_seek_ns(&s->g, p, a);
	double rot = sim_rot_wait(&s->g, h + seek, a);
	if (seek > 0)
		s->st.seeks++;
	s->st.seek_ns += seek;
	s->st.rotate_ns += rot;
	s->st.busy_ns += seek + rot;
	return h + seek + rot;
}

static bool in_kept_segment(struct sim_model *s, double a, double b)
{
	for (unsigned i = 0; i < s->nsegs_used; i++) {
		if (s->segs[i].start <= a && b <= s->segs[i].end) {
			s->segs[i].used = ++s->stamp;
			return true;
		}
	}
	return false;
}

double sim_model_read(struct sim_model *s, double t, double a, double len)
{
	double b = a + len;
	s->st.reads++;
	s->st.bytes_read += (uint64_t)len;
	double t1 = t + s->g.overhead;
	if (len <= 0)
		return t1;
	double h = t1 > s->busy_until ? t1 : s->busy_until;
	double reached = stream_reached(s, h);
	/* The running read-ahead covers it when the data is read or still on
	 * its way (the stream has not stopped short of it), and not yet pushed
	 * out of the drive's buffer: it holds the last segment's worth of what
	 * the stream read, not all of it since seg_start. */
	double kept_from =
	    reached - s->g.segment > s->seg_start ? reached - s->g.segment : s->seg_start;
	if (s->streaming && a >= kept_from &&
	    (b <= reached || (a <= s->ra_limit && reached < s->ra_limit))) {
		s->st.stream_hits++;
		double avail = s->busy_until + (b > s->pos ? sim_xfer_ns(&s->g, s->pos, b) : 0);
		double ready = reached > b ? b : reached < a ? a : reached;
		double done = link_fill(s, t1, ready - a, 0, 0);
		/* The rest comes under the head from when it reaches `ready`. */
		if (b > ready)
			done = link_fill(s, done, b - ready,
			                 s->busy_until + sim_xfer_ns(&s->g, s->pos, ready),
			                 rate_at(&s->g, ready));
		/* The head is taken until the stream has read b: a command
		 * queued behind this one starts from there, not from where the
		 * stream stood when this one arrived. */
		if (b > s->pos && avail > s->busy_until) {
			s->st.busy_ns += avail - s->busy_until;
			s->pos = b;
			s->busy_until = avail;
		}
		if (b + s->g.segment > s->ra_limit)
			s->ra_limit = b + s->g.segment;
		if (s->ra_limit > s->g.span)
			s->ra_limit = s->g.span;
		return done > avail ? done : avail;
	}
	if (in_kept_segment(s, a, b)) {
		s->st.cache_hits++;
		return link_fill(s, t1, len, 0, 0);
	}
	/* The stream stopped at its limit short of b (the host was slow to
	 * ask): what it buffered goes out from the buffer, the head takes up
	 * at the limit again (a rotation lost) and reads only the rest. */
	double from = a;
	double buffered = t1;
	if (s->streaming && a >= kept_from && a < reached && b > reached &&
	    reached >= s->ra_limit) {
		s->st.stream_hits++;
		buffered = link_fill(s, t1, reached - a, 0, 0);
		from = reached;
	}
	s->st.media_reads++;
	double start = position(s, t1, from);
	double media = sim_xfer_ns(&s->g, from, b);
	s->st.busy_ns += media;
	double done = link_fill(s, buffered, b - from, start, rate_at(&s->g, from));
	s->pos = b;
	s->busy_until = start + media;
	if (s->g.nsegs && b < s->g.span) {
		s->streaming = true;
		s->seg_start = a;
		s->ra_limit = b + s->g.segment < s->g.span ? b + s->g.segment : s->g.span;
	}
	return done > s->busy_until ? done : s->busy_until;
}

/* Write [a, a + len) to the media once the data is in (time t). */
static double media_write(struct sim_model *s, double t, double a, double len)
{
	double start = position(s, t, a);
	double media = sim_xfer_ns(&s->g, a, a + len);
	s->st.busy_ns += media;
	s->pos = a + len;
	s->busy_until = start + media;
	return s->busy_until;
}

static void dirty_pop(struct sim_model *s)
{
	s->dirty_bytes -= s->dirty[s->dhead].bytes;
	s->dhead = (s->dhead + 1) % s->dcap;
	s->dlen--;
	if (s->dlen == 0)
		s->dirty_bytes = 0; /* no drift from float sums */
}

static int dirty_push(struct sim_model *s, double done, double bytes)
{
	if (s->dlen == s->dcap) {
		size_t ncap = s->dcap ? s->dcap * 2 : 64;
		struct sim_dirty *n = malloc(ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		for (size_t i = 0; i < s->dlen; i++)
			n[i] = s->dirty[(s->dhead + i) % s->dcap];
		free(s->dirty);
		s->dirty = n;
		s->dcap = ncap;
		s->dhead = 0;
	}
	s->dirty[(s->dhead + s->dlen) % s->dcap] = (struct sim_dirty){done, bytes};
	s->dlen++;
	s->dirty_bytes += bytes;
	return 0;
}

double sim_model_write(struct sim_model *s, double t, double a, double len, bool fua)
{
	s->st.writes++;
	s->st.bytes_written += (uint64_t)len;
	double t1 = t + s->g.overhead;
	if (len <= 0)
		return t1;
	double in = link_fill(s, t1, len, 0, 0);
	if (s->g.wcache <= 0 || fua || len > s->g.wcache) {
		/* Write through: the transfer overlaps the positioning. */
		double done = media_write(s, t1, a, len);
		return done > in ? done : in;
	}
	/* Room in the cache: wait for the oldest writes to drain. */
	double ready = in;
	while (s->dlen && s->dirty[s->dhead].done <= ready)
		dirty_pop(s);
	if (s->dirty_bytes + len > s->g.wcache)
		s->st.cache_waits++;
	while (s->dlen && s->dirty_bytes + len > s->g.wcache) {
		if (s->dirty[s->dhead].done > ready)
			ready = s->dirty[s->dhead].done;
		dirty_pop(s);
	}
	double drained = media_write(s, in, a, len);
	s->drain_until = drained;
	if (dirty_push(s, drained, len) < 0)
		return drained; /* no memory to remember it: behave as write-through */
	return ready;
}

double sim_model_flush(struct sim_model *s, double t)
{
	s->st.flushes++;
	double t1 = t + s->g.overhead;
	return s->drain_until > t1 ? s->drain_until : t1;
}
