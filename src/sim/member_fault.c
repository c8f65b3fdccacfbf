/* Fault-injecting wrapper: passes requests to an inner member unless a rule
 * fires (see member.h for the rule semantics). Rules and counters live under
 * one mutex; the inner I/O runs outside it. */
#include "member/member_wrap.h"
#include "sim/member_fault.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct rule_state {
	struct member_fault_rule r;
	uint64_t seen; /* matching requests so far */
	bool armed;
};

struct fault_member {
	struct member m;
	struct member *inner;
	pthread_mutex_t lock;
	struct rule_state *rules;
	size_t nrules, cap;
	uint64_t hits;
};

static const struct member_ops fault_ops;

static struct fault_member *fault_of(const struct member *m)
{
	if (!m || m->ops != &fault_ops)
		return NULL;
	return (struct fault_member *)m->priv;
}

static bool rule_matches(const struct member_fault_rule *r, enum member_op op, uint64_t off,
                         size_t len)
{
	if (r->op != op)
		return false;
	if (op == MEMBER_OP_FLUSH || r->len == 0)
		return true;
	return len > 0 && off < r->off + r->len && r->off < off + len;
}

/* Count the request against every matching rule; copy the first firing rule
 * to *out. Returns whether one fired. */
static bool fault_decide(struct fault_member *f, enum member_op op, uint64_t off, size_t len,
                         struct member_fault_rule *out)
{
	bool fired = false;
	pthread_mutex_lock(&f->lock);
	for (size_t i = 0; i < f->nrules; i++) {
		struct rule_state *s = &f->rules[i];
		if (!rule_matches(&s->r, op, off, len))
			continue;
		s->seen++;
		if (fired || !s->armed || s->seen <= s->r.after)
			continue;
		fired = true;
		*out = s->r;
		if (s->r.once)
			s->armed = false;
		f->hits++;
	}
	pthread_mutex_unlock(&f->lock);
	return fired;
}

/* Index, within a transfer of `n` bytes at `off`, of the byte a flip_bit rule
 * corrupts; n when the rule's range misses the transferred bytes. */
static size_t flip_index(const struct member_fault_rule *r, uint64_t off, size_t n)
{
	uint64_t at = r->len == 0 || r->off < off ? off : r->off;
	if (r->len && at >= r->off + r->len)
		return n;
	return at - off < n ? (size_t)(at - off) : n;
}

static ssize_t fault_pread(struct member *m, void *buf, size_t len, uint64_t off)
{
	struct fault_member *f = m->priv;
	struct member_fault_rule r;
	if (!fault_decide(f, MEMBER_OP_READ, off, len, &r))
		return f->inner->ops->pread(f->inner, buf, len, off);
	if (r.error)
		return -r.error;
	ssize_t got = f->inner->ops->pread(f->inner, buf, r.short_io ? len - len / 2 : len, off);
	if (got > 0 && r.flip_bit) {
		size_t i = flip_index(&r, off, (size_t)got);
		if (i < (size_t)got)
			((unsigned char *)buf)[i] ^= 1;
	}
	return got;
}

static ssize_t fault_pwrite(struct member *m, const void *buf, size_t len, uint64_t off,
                            unsigned flags)
{
	struct fault_member *f = m->priv;
	struct member_fault_rule r;
	if (!fault_decide(f, MEMBER_OP_WRITE, off, len, &r))
		return f->inner->ops->pwrite(f->inner, buf, len, off, flags);
	if (r.error)
		return -r.error;
	size_t n = r.short_io ? len - len / 2 : len;
	size_t i = r.flip_bit ? flip_index(&r, off, n) : n;
	if (i >= n)
		return f->inner->ops->pwrite(f->inner, buf, n, off, flags);
	/* Corrupt a private copy: the caller's buffer stays as it was. */
	unsigned char *copy = malloc(n);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, n);
	copy[i] ^= 1;
	ssize_t w = f->inner->ops->pwrite(f->inner, copy, n, off, flags);
	free(copy);
	return w;
}

static int fault_flush(struct member *m)
{
	struct fault_member *f = m->priv;
	struct member_fault_rule r;
	if (fault_decide(f, MEMBER_OP_FLUSH, 0, 0, &r) && r.error)
		return -r.error;
	return member_flush(f->inner);
}

static int fault_discard(struct member *m, uint64_t off, uint64_t len)
{
	struct fault_member *f = m->priv;
	struct member_fault_rule r;
	if (fault_decide(f, MEMBER_OP_WRITE, off, (size_t)len, &r) && r.error)
		return -r.error; /* changes what is stored: a write to the rules */
	return member_discard(f->inner, off, len);
}

/* So is a write-zeroes. */
static int fault_write_zeroes(struct member *m, uint64_t off, uint64_t len, unsigned flags)
{
	struct fault_member *f = m->priv;
	struct member_fault_rule r;
	if (fault_decide(f, MEMBER_OP_WRITE, off, (size_t)len, &r) && r.error)
		return -r.error;
	return member_write_zeroes(f->inner, off, len, flags);
}

static int fault_fd(struct member *m)
{
	return -1; /* every request must pass the rules */
}

/* A mapped inner member's bytes while no rule is set: requests straight
 * into them (raid456/stripe_mapped.c) would pass no rule, so with any rule
 * set (armed or counting) there are none. */
static void *fault_map_addr(struct member *m, uint64_t off, size_t len)
{
	struct fault_member *f = m->priv;
	pthread_mutex_lock(&f->lock);
	bool none = f->nrules == 0;
	pthread_mutex_unlock(&f->lock);
	return none ? member_map_addr(f->inner, off, len) : NULL;
}

static void fault_close(struct member *m)
{
	struct fault_member *f = m->priv;
	member_close(f->inner);
	pthread_mutex_destroy(&f->lock);
	free(f->rules);
	free(f);
}

static const struct member_ops fault_ops = {
    .kind = "fault",
    .pread = fault_pread,
    .pwrite = fault_pwrite,
    .flush = fault_flush,
    .discard = fault_discard,
    .write_zeroes = fault_write_zeroes,
    .fd = fault_fd,
    .close = fault_close,
    .map_addr = fault_map_addr,
};

int member_fault_wrap(struct member *inner, struct member **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!inner || !inner->ops)
		return -EINVAL;
	struct fault_member *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->inner = inner;
	pthread_mutex_init(&f->lock, NULL);
	member_wrap_init(&f->m, inner, &fault_ops, f);
	f->m.discard_zeroes = inner->discard_zeroes;
	*out = &f->m;
	return 0;
}

int member_fault_add(struct member *fault, const struct member_fault_rule *rule)
{
	struct fault_member *f = fault_of(fault);
	if (!f || !rule)
		return -EINVAL;
	if (rule->op != MEMBER_OP_READ && rule->op != MEMBER_OP_WRITE &&
	    rule->op != MEMBER_OP_FLUSH)
		return -EINVAL;
	if (rule->error < 0 || rule->error > 4095 || rule->off + rule->len < rule->off)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	int rc = 0;
	if (f->nrules == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		struct rule_state *n = realloc(f->rules, cap * sizeof(*n));
		if (!n) {
			rc = -ENOMEM;
			goto out;
		}
		f->rules = n;
		f->cap = cap;
	}
	f->rules[f->nrules++] = (struct rule_state){.r = *rule, .seen = 0, .armed = true};
out:
	pthread_mutex_unlock(&f->lock);
	return rc;
}

void member_fault_clear(struct member *fault)
{
	struct fault_member *f = fault_of(fault);
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->nrules = 0;
	pthread_mutex_unlock(&f->lock);
}

uint64_t member_fault_hits(const struct member *fault)
{
	struct fault_member *f = fault_of(fault);
	if (!f)
		return 0;
	pthread_mutex_lock(&f->lock);
	uint64_t h = f->hits;
	pthread_mutex_unlock(&f->lock);
	return h;
}
