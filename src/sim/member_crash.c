/* Crash-simulating member: a volatile write cache over a durable inner
 * member, and a controller that counts requests across members and cuts the
 * power (see member_crash.h). One mutex in the controller guards everything:
 * the model is for correctness tests, not speed. */
#include "sim/member_crash.h"
#include "member/member_wrap.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CRASH_PIECE 512 /* sector: what a torn write tears at */

struct cached_write {
	uint64_t off;
	size_t len;
	unsigned char *data;
};

struct crash_member {
	struct member m;
	struct member *inner;
	struct crash_ctl *ctl;
	struct cached_write *cache; /* in completion order */
	size_t ncache, cap;
	struct crash_member *next; /* controller's list */
};

struct crash_ctl {
	pthread_mutex_t lock;
	uint64_t requests;
	uint64_t crash_at; /* 0 = never */
	bool crashed;
	bool ignore_flush;
	struct crash_member *members;
};

static const struct member_ops crash_ops;

int crash_ctl_new(struct crash_ctl **out)
{
	if (!out)
		return -EINVAL;
	struct crash_ctl *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
}

void crash_ctl_free(struct crash_ctl *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void crash_ctl_arm(struct crash_ctl *c, uint64_t at)
{
	pthread_mutex_lock(&c->lock);
	c->crash_at = at;
	pthread_mutex_unlock(&c->lock);
}

uint64_t crash_ctl_requests(const struct crash_ctl *c)
{
	struct crash_ctl *cc = (struct crash_ctl *)c;
	pthread_mutex_lock(&cc->lock);
	uint64_t n = cc->requests;
	pthread_mutex_unlock(&cc->lock);
	return n;
}

void crash_ctl_ignore_flush(struct crash_ctl *c, bool ignore)
{
	pthread_mutex_lock(&c->lock);
	c->ignore_flush = ignore;
	pthread_mutex_unlock(&c->lock);
}

bool crash_ctl_crashed(const struct crash_ctl *c)
{
	struct crash_ctl *cc = (struct crash_ctl *)c;
	pthread_mutex_lock(&cc->lock);
	bool b = cc->crashed;
	pthread_mutex_unlock(&cc->lock);
	return b;
}

/* Number this request; true when the power is (now) off. Caller holds lock. */
static bool count_request(struct crash_ctl *c)
{
	if (c->crashed)
		return true;
	c->requests++;
	if (c->crash_at && c->requests >= c->crash_at)
		c->crashed = true;
	return c->crashed;
}

static void cache_drop_all(struct crash_member *cm)
{
	for (size_t i = 0; i < cm->ncache; i++)
		free(cm->cache[i].data);
	cm->ncache = 0;
}

/* Write the cache to the medium in order and empty it. rng == NULL (a
 * flush): everything whole; else each write is kept, torn or lost at random. */
static int cache_apply(struct crash_member *cm, uint64_t *rng, struct crash_stats *st)
{
	int rc = 0;
	for (size_t i = 0; i < cm->ncache; i++) {
		struct cached_write *w = &cm->cache[i];
		unsigned fate = rng ? (unsigned)((*rng = *rng * 6364136223846793005ULL +
		                                         1442695040888963407ULL) >>
		                                 33) %
		                          3
		                    : 0;
		if (fate == 2) {
			if (st)
				st->writes_lost++;
			continue;
		}
		if (st && fate == 0)
			st->writes_kept++;
		if (st && fate == 1)
			st->writes_torn++;
		for (size_t p = 0; p < w->len; p += CRASH_PIECE) {
			size_t n = w->len - p < CRASH_PIECE ? w->len - p : CRASH_PIECE;
			if (fate == 1) {
				*rng = *rng * 6364136223846793005ULL + 1442695040888963407ULL;
				if ((*rng >> 40) & 1)
					continue;
			}
			ssize_t r =
			    cm->inner->ops->pwrite(cm->inner, w->data + p, n, w->off + p, 0);
			if (r < 0 && rc == 0)
				rc = (int)r;
		}
	}
	cache_drop_all(cm);
	return rc;
}

static void overlap(uint64_t a, size_t alen, uint64_t b, size_t blen, uint64_t *lo, uint64_t *hi)
{
	*lo = a > b ? a : b;
	*hi = a + alen < b + blen ? a + alen : b + blen;
}

static ssize_t crash_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct crash_member *cm = m->priv;
	pthread_mutex_lock(&cm->ctl->lock);
	ssize_t got = -EIO;
	if (count_request(cm->ctl))
		goto out;
	got = cm->inner->ops->pread(cm->inner, buf, len, off);
	if (got <= 0)
		goto out;
	/* The cache holds newer data than the medium. */
	for (size_t i = 0; i < cm->ncache; i++) {
		struct cached_write *w = &cm->cache[i];
		uint64_t lo, hi;
		overlap(off, (size_t)got, w->off, w->len, &lo, &hi);
		if (lo < hi)
			memcpy((unsigned char *)buf + (lo - off), w->data + (lo - w->off),
			       (size_t)(hi - lo));
	}
out:
	pthread_mutex_unlock(&cm->ctl->lock);
	return got;
}

static ssize_t crash_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                            unsigned flags)
{
	struct crash_member *cm = m->priv;
	if (off >= m->size)
		return len ? -ENOSPC : 0;
	if (len > m->size - off)
		len = (size_t)(m->size - off);
	pthread_mutex_lock(&cm->ctl->lock);
	ssize_t rc = -EIO;
	if (count_request(cm->ctl))
		goto out;
	if (flags & MEMBER_FUA) {
		rc = cm->inner->ops->pwrite(cm->inner, buf, len, off, flags);
		if (rc <= 0)
			goto out;
		/* Cached copies of these bytes are older: whether they reach
		 * the medium later or not, the bytes must stay the new ones. */
		for (size_t i = 0; i < cm->ncache; i++) {
			struct cached_write *w = &cm->cache[i];
			uint64_t lo, hi;
			overlap(off, (size_t)rc, w->off, w->len, &lo, &hi);
			if (lo < hi)
				memcpy(w->data + (lo - w->off),
				       (const unsigned char *)buf + (lo - off), (size_t)(hi - lo));
		}
		goto out;
	}
	if (cm->ncache == cm->cap) {
		size_t cap = cm->cap ? cm->cap * 2 : 16;
		struct cached_write *n = realloc(cm->cache, cap * sizeof(*n));
		if (!n) {
			rc = -ENOMEM;
			goto out;
		}
		cm->cache = n;
		cm->cap = cap;
	}
	unsigned char *copy = malloc(len ? len : 1);
	if (!copy) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(copy, buf, len);
	cm->cache[cm->ncache++] = (struct cached_write){.off = off, .len = len, .data = copy};
	rc = (ssize_t)len;
out:
	pthread_mutex_unlock(&cm->ctl->lock);
	return rc;
}

static int crash_flush(struct member *m)
{
	struct crash_member *cm = m->priv;
	pthread_mutex_lock(&cm->ctl->lock);
	int rc = -EIO;
	if (!count_request(cm->ctl)) {
		rc = cm->ctl->ignore_flush ? 0 : cache_apply(cm, NULL, NULL);
		if (rc == 0)
			rc = member_flush(cm->inner);
	}
	pthread_mutex_unlock(&cm->ctl->lock);
	return rc;
}

static int crash_discard(struct member *m, uint64_t off, uint64_t len)
{
	return -EOPNOTSUPP; /* keeps the cache model simple */
}

static int crash_fd(struct member *m)
{
	return -1; /* every request must be counted */
}

static void crash_close(struct member *m)
{
	struct crash_member *cm = m->priv;
	struct crash_ctl *c = cm->ctl;
	pthread_mutex_lock(&c->lock);
	for (struct crash_member **pp = &c->members; *pp; pp = &(*pp)->next) {
		if (*pp == cm) {
			*pp = cm->next;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	/* Closing without a flush is what a power cut does: the cache is
	 * simply gone. */
	cache_drop_all(cm);
	free(cm->cache);
	member_close(cm->inner);
	free(cm);
}

static const struct member_ops crash_ops = {
    .kind = "crash",
    .pread = crash_pread,
    .pwrite = crash_pwrite,
    .flush = crash_flush,
    .discard = crash_discard,
    .fd = crash_fd,
    .close = crash_close,
};

int member_crash_wrap(struct member *inner, struct crash_ctl *c, struct member **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!inner || !inner->ops || !c)
		return -EINVAL;
	struct crash_member *cm = calloc(1, sizeof(*cm));
	if (!cm)
		return -ENOMEM;
	cm->inner = inner;
	cm->ctl = c;
	cm->m.ops = &crash_ops;
	cm->m.priv = cm;
	memcpy(cm->m.name, inner->name, sizeof(cm->m.name));
	cm->m.size = inner->size;
	cm->m.logical_block = inner->logical_block;
	cm->m.readonly = inner->readonly;
	cm->m.direct = false;
	cm->m.dio_align = 1;
	cm->m.mem_align = 1;
	pthread_mutex_lock(&c->lock);
	cm->next = c->members;
	c->members = cm;
	pthread_mutex_unlock(&c->lock);
	*out = &cm->m;
	return 0;
}

uint64_t member_crash_pending(const struct member *m)
{
	if (!m || m->ops != &crash_ops)
		return 0;
	struct crash_member *cm = m->priv;
	pthread_mutex_lock(&cm->ctl->lock);
	uint64_t n = cm->ncache;
	pthread_mutex_unlock(&cm->ctl->lock);
	return n;
}

int crash_apply(struct crash_ctl *c, uint64_t seed, struct crash_stats *st)
{
	if (!c)
		return -EINVAL;
	if (st)
		*st = (struct crash_stats){0};
	pthread_mutex_lock(&c->lock);
	int rc = 0;
	uint64_t rng = seed ^ 0x5bd1e9955bd1e995ULL;
	for (struct crash_member *cm = c->members; cm; cm = cm->next) {
		int r = cache_apply(cm, &rng, st);
		if (r < 0 && rc == 0)
			rc = r;
	}
	c->crashed = false;
	c->crash_at = 0;
	pthread_mutex_unlock(&c->lock);
	return rc;
}
