/* An in-memory copy-on-write member: reads come from the inner member
 * except where this process wrote, writes go to memory and never reach the
 * inner member. A read-only assembly uses it to do in memory what a
 * read-write one would write, such as replaying a dirty write journal, so
 * that what it reads is what the kernel would read after its own replay,
 * with nothing on the members changed. Memory grows with what is written
 * (a journal replay: at most the log's size), in 4 KiB pages. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "member/member.h"
#include "member/member_wrap.h"

#define PAGE 4096u

struct cow_member {
	struct member m;
	struct member *inner; /* owned */
	pthread_mutex_t mu;
	size_t cap, n;  /* slots (a power of two), pages held */
	uint64_t *key;  /* page number + 1, 0 = empty slot */
	uint8_t **page; /* PAGE bytes each */
};

static struct cow_member *cow_of(struct member *m)
{
	return (struct cow_member *)m->priv;
}

static size_t slot_of(const struct cow_member *c, uint64_t pg)
{
	size_t h = (size_t)((pg * 0x9e3779b97f4a7c15ull) >> 17) & (c->cap - 1);
	while (c->key[h] && c->key[h] != pg + 1)
		h = (h + 1) & (c->cap - 1);
	return h;
}

static int grow(struct cow_member *c)
{
	size_t cap = c->cap ? c->cap * 2 : 256;
	uint64_t *key = calloc(cap, sizeof(*key));
	uint8_t **page = calloc(cap, sizeof(*page));
	if (!key || !page) {
		free(key);
		free(page);
		return -ENOMEM;
	}
	struct cow_member old = *c;
	c->cap = cap;
	c->key = key;
	c->page = page;
	for (size_t i = 0; i < old.cap; i++)
		if (old.key[i]) {
			size_t h = slot_of(c, old.key[i] - 1);
			c->key[h] = old.key[i];
			c->page[h] = old.page[i];
		}
	free(old.key);
	free(old.page);
	return 0;
}

/* The page held for pg, NULL when none. Caller holds mu. */
static uint8_t *held(const struct cow_member *c, uint64_t pg)
{
	if (!c->cap)
		return NULL;
	size_t h = slot_of(c, pg);
	return c->key[h] ? c->page[h] : NULL;
}

static ssize_t cow_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct cow_member *c = cow_of(m);
	if (member_op_bounds(m, MEMBER_OP_READ, &len, off, 1u << 30) < 0 || len == 0)
		return 0;
	ssize_t r = member_xfer(c->inner, MEMBER_OP_READ, buf, len, off, 0);
	if (r < 0 || __atomic_load_n(&c->n, __ATOMIC_ACQUIRE) == 0)
		return r;
	/* What this process wrote over what the member holds. */
	pthread_mutex_lock(&c->mu);
	for (uint64_t pg = off / PAGE; pg * PAGE < off + (uint64_t)r && c->n; pg++) {
		const uint8_t *p = held(c, pg);
		if (!p)
			continue;
		uint64_t s0 = pg * PAGE > off ? pg * PAGE : off;
		uint64_t s1 =
		    pg * PAGE + PAGE < off + (uint64_t)r ? pg * PAGE + PAGE : off + (uint64_t)r;
		memcpy((uint8_t *)buf + (s0 - off), p + (s0 - pg * PAGE), s1 - s0);
	}
	pthread_mutex_unlock(&c->mu);
	return r;
}

static ssize_t cow_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                          unsigned flags)
{
	(void)flags; /* memory: durable as it ever will be */
	struct cow_member *c = cow_of(m);
	int rc = member_op_bounds(m, MEMBER_OP_WRITE, &len, off, 1u << 30);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&c->mu);
	for (uint64_t pg = off / PAGE; pg * PAGE < off + len && rc == 0; pg++) {
		uint8_t *p = held(c, pg);
		if (!p) {
			if ((c->n + 1) * 2 > c->cap && (rc = grow(c)) < 0)
				break;
			p = malloc(PAGE);
			if (!p) {
				rc = -ENOMEM;
				break;
			}
			/* The page as the member holds it (the end may be short). */
			memset(p, 0, PAGE);
			uint64_t want = m->size - pg * PAGE < PAGE ? m->size - pg * PAGE : PAGE;
			ssize_t r =
			    member_xfer(c->inner, MEMBER_OP_READ, p, (size_t)want, pg * PAGE, 0);
			if (r < 0) {
				free(p);
				rc = (int)r;
				break;
			}
			size_t h = slot_of(c, pg);
			c->key[h] = pg + 1;
			c->page[h] = p;
			__atomic_store_n(&c->n, c->n + 1, __ATOMIC_RELEASE);
		}
		uint64_t s0 = pg * PAGE > off ? pg * PAGE : off;
		uint64_t s1 = pg * PAGE + PAGE < off + len ? pg * PAGE + PAGE : off + len;
		memcpy(p + (s0 - pg * PAGE), (const uint8_t *)buf + (s0 - off), s1 - s0);
	}
	pthread_mutex_unlock(&c->mu);
	return rc < 0 ? rc : (ssize_t)len;
}

static int cow_flush(struct member *m)
{
	(void)m;
	return 0;
}

static int cow_fd(struct member *m)
{
	(void)m;
	return -1; /* every request through the ops above */
}

static void cow_close(struct member *m)
{
	struct cow_member *c = cow_of(m);
	for (size_t i = 0; i < c->cap; i++)
		free(c->page[i]);
	free(c->key);
	free(c->page);
	pthread_mutex_destroy(&c->mu);
	member_close(c->inner);
	free(c);
}

static const struct member_ops cow_ops = {
    .kind = "cow",
    .pread = cow_pread,
    .pwrite = cow_pwrite,
    .flush = cow_flush,
    .fd = cow_fd,
    .close = cow_close,
};

int member_cow_wrap(struct member *inner, struct member **out)
{
	struct cow_member *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	member_wrap_init(&c->m, inner, &cow_ops, c);
	c->m.readonly = false; /* it takes writes; the inner member never sees them */
	c->inner = inner;
	pthread_mutex_init(&c->mu, NULL);
	*out = &c->m;
	return 0;
}
