/* The shared bus of simulated members: model time cut into slots, each with
 * room for rate * SLOT_NS bytes. Transfers fill slots first come first served
 * at no more than their own rate, so the sum over members never exceeds the
 * bus rate while a lone member below it keeps its own. A transfer may be paced
 * by its source (a disk reading its media into its buffer): it never moves a
 * byte before the source has it, but what piled up in the buffer while the
 * bus was full goes out at link speed when room frees, as a drive with a
 * track buffer does. The slot ring covers a
 * window of model time; it slides forward as transfers reach past it, and a
 * transfer starting before the window waits for its start. */
#include "sim/sim_int.h"
#include "util/errmsg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#define SLOT_NS 100000.0   /* 100 us */
#define NSLOTS  (1u << 16) /* 6.5 s of model time */

struct sim_bus {
	pthread_mutex_t lock;
	double rate;     /* bytes per ns */
	double per_slot; /* bytes one slot carries */
	double *used;    /* bytes in slot i % NSLOTS, for i in [base, base + NSLOTS) */
	uint64_t base;
	unsigned members;
	double time_scale;
	uint64_t epoch_ns;
	double latest; /* latest completion noted */
	double bytes;
};

int sim_bus_create(double rate_mbs, struct sim_bus **out, char *err, size_t errlen)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!(rate_mbs >= 0.001 && rate_mbs <= 1e7))
		return errmsg(err, errlen, -EINVAL, "bus rate %g MB/s is outside 0.001..1e7",
		              rate_mbs);
	struct sim_bus *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->used = calloc(NSLOTS, sizeof(*b->used));
	if (!b->used) {
		free(b);
		return -ENOMEM;
	}
	pthread_mutex_init(&b->lock, NULL);
	b->rate = rate_mbs * 1e6 / 1e9;
	b->per_slot = b->rate * SLOT_NS;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	b->epoch_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	*out = b;
	return 0;
}

void sim_bus_destroy(struct sim_bus *bus)
{
	if (!bus)
		return;
	pthread_mutex_destroy(&bus->lock);
	free(bus->used);
	free(bus);
}

int sim_bus_attach(struct sim_bus *bus, double time_scale, uint64_t *epoch_ns)
{
	pthread_mutex_lock(&bus->lock);
	int rc = 0;
	if (bus->members && bus->time_scale != time_scale)
		rc = -EINVAL;
	else {
		bus->members++;
		bus->time_scale = time_scale;
		*epoch_ns = bus->epoch_ns;
	}
	pthread_mutex_unlock(&bus->lock);
	return rc;
}

void sim_bus_detach(struct sim_bus *bus)
{
	pthread_mutex_lock(&bus->lock);
	bus->members--;
	pthread_mutex_unlock(&bus->lock);
}

void sim_bus_note(struct sim_bus *bus, double completion)
{
	pthread_mutex_lock(&bus->lock);
	if (completion > bus->latest)
		bus->latest = completion;
	pthread_mutex_unlock(&bus->lock);
}

uint64_t sim_bus_model_ns(struct sim_bus *bus)
{
	if (!bus)
		return 0;
	pthread_mutex_lock(&bus->lock);
	uint64_t v = (uint64_t)llround(bus->latest);
	pthread_mutex_unlock(&bus->lock);
	return v;
}

uint64_t sim_bus_bytes(struct sim_bus *bus)
{
	if (!bus)
		return 0;
	pthread_mutex_lock(&bus->lock);
	uint64_t v = (uint64_t)llround(bus->bytes);
	pthread_mutex_unlock(&bus->lock);
	return v;
}

/* Make slot index i part of the window, sliding it forward (and emptying the
 * slots that become new) when i lies beyond. */
static void slide_to(struct sim_bus *b, uint64_t i)
{
	if (i < b->base + NSLOTS)
		return;
	uint64_t nbase = i - NSLOTS + 1;
	if (nbase - b->base >= NSLOTS) {
		for (unsigned k = 0; k < NSLOTS; k++)
			b->used[k] = 0;
	} else {
		for (uint64_t k = b->base; k < nbase; k++)
			b->used[k % NSLOTS] = 0;
	}
	b->base = nbase;
}

double sim_bus_fill(struct sim_bus *b, double start, double bytes, double rate, double src_start,
                    double src_rate)
{
	if (bytes <= 0)
		return start;
	pthread_mutex_lock(&b->lock);
	b->bytes += bytes;
	bool paced = src_rate > 0;
	double t = start < 0 ? 0 : start, left = bytes, moved = 0, done;
	if (paced && t < src_start)
		t = src_start; /* nothing to move before the first byte exists */
	for (;;) {
		uint64_t i = (uint64_t)(t / SLOT_NS);
		if (i < b->base) {
			i = b->base;
			t = (double)i * SLOT_NS;
		}
		slide_to(b, i);
		double *used = &b->used[i % NSLOTS];
		double slot_start = (double)i * SLOT_NS, slot_end = slot_start + SLOT_NS;
		double take = b->per_slot - *used;
		double link = rate * (slot_end - t);
		take = link < take ? link : take;
		if (paced) {
			/* Bytes the source has produced by the slot's end and the
			 * link has not moved yet: what waited for the bus goes
			 * out at link speed once there is room. */
			double have = src_rate * (slot_end - src_start) - moved;
			take = have < take ? have : take;
		}
		if (take >= left) {
			/* Ends here: at our own pace, when the source has the
			 * last byte, or after everything in the slot ahead of us
			 * when the slot is the limit. */
			done = t + left / rate;
			double shared = slot_start + (*used + left) / b->rate;
			done = shared > done ? shared : done;
			double last = paced ? src_start + bytes / src_rate : 0;
			done = last > done ? last : done;
			if (done > slot_end)
				done = slot_end;
			*used += left;
			break;
		}
		if (take > 0) {
			*used += take;
			left -= take;
			moved += take;
		}
		t = slot_end;
	}
	pthread_mutex_unlock(&b->lock);
	return done;
}

/* ---- parallel ATA channels ---- */

int sim_channel_create(struct sim_channel **out)
{
	if (!out)
		return -EINVAL;
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	pthread_mutex_init(&(*out)->lock, NULL);
	return 0;
}

void sim_channel_destroy(struct sim_channel *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->lock);
	free(c);
}
