/* Where each member keeps its partial parity log and how a log starts
 * afresh: the area from the member's superblock (ppl offset and size),
 * checked as the kernel's ppl_validate_rdev checks it, zeroed with an
 * empty header at its start as md does at every start. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ppl/ppl_int.h"
#include "util/errmsg.h"

struct member *eng_ppl_member(const struct eng_array *a, int role)
{
	if (role < 0 || role >= a->geo.raid_disks || a->slot[role] < 0)
		return NULL;
	return a->mem[a->slot[role]]->m;
}

int eng_ppl_buf(struct eng_ppl *p, size_t len)
{
	if (len <= p->cap)
		return 0;
	free(p->buf);
	p->buf = eng_alloc(len);
	p->cap = p->buf ? len : 0;
	return p->buf ? 0 : -ENOMEM;
}

int eng_ppl_log_setup(struct eng_array *a, int role, char *err, size_t errlen)
{
	struct eng_ppl *p = eng_ppl_of(a);
	struct eng_ppl_log *l = &p->log[role];
	memset(l, 0, sizeof(*l));
	struct member *m = eng_ppl_member(a, role);
	if (!m)
		return 0;
	const struct md_sb *sb = &a->mem[a->slot[role]]->sb;
	char e[200];
	uint16_t use;
	int rc = md_ppl_check_area(sb, m->size / 512, &use, e, sizeof(e));
	if (rc < 0)
		return errmsg(err, errlen, rc, "%s: %s", m->name, e);
	l->m = m;
	l->start = (uint64_t)((int64_t)sb->super_offset + md_ppl_offset(sb));
	l->sectors = use;
	l->multi = md_ppl_multi(use);
	return 0;
}

int eng_ppl_area_io(struct eng_array *a, int role, bool write, void *buf, uint64_t at,
                    uint64_t sectors)
{
	struct eng_ppl *p = eng_ppl_of(a);
	const struct eng_ppl_log *l = &p->log[role];
	struct member *m = eng_ppl_member(a, role);
	if (!m || l->m != m || at + sectors > l->sectors)
		return -EINVAL;
	eng_count_io(a, write, sectors * 512);
	uint64_t off = (l->start + at) * 512;
	if (write)
		return member_write(m, buf, sectors * 512, off, MEMBER_FUA);
	return member_read(m, buf, sectors * 512, off);
}

int eng_ppl_log_reset(struct eng_array *a, int role)
{
	struct eng_ppl *p = eng_ppl_of(a);
	struct eng_ppl_log *l = &p->log[role];
	struct member *m = eng_ppl_member(a, role);
	if (!m)
		return 0;
	if (l->m != m) {
		int rc = eng_ppl_log_setup(a, role, NULL, 0);
		if (rc < 0)
			return rc;
	}
	/* Zeros first, durable before the header: a unit of an older log
	 * left behind the new header could otherwise continue its chain
	 * (md's walk follows rising generations from the start of the area). */
	size_t step = 256; /* sectors per zero write */
	int rc = eng_ppl_buf(p, step * 512);
	if (rc < 0)
		return rc;
	memset(p->buf, 0, step * 512);
	for (uint64_t at = MD_PPL_HEADER_SECTORS; at < l->sectors && rc == 0; at += step) {
		uint64_t n = l->sectors - at < step ? l->sectors - at : step;
		eng_count_io(a, true, n * 512);
		rc = member_write(m, p->buf, n * 512, (l->start + at) * 512, 0);
	}
	if (rc == 0)
		rc = member_flush(m);
	struct md_ppl_header h;
	md_ppl_init(&h, p->signature, 0);
	md_ppl_encode(&h, p->buf);
	if (rc == 0)
		rc = eng_ppl_area_io(a, role, true, p->buf, 0, MD_PPL_HEADER_SECTORS);
	l->next = 0;
	l->unflushed = 0;
	return rc;
}

struct eng_ppl *eng_ppl_new(struct eng_array *a, char *err, size_t errlen)
{
	struct eng_ppl *p = calloc(1, sizeof(*p));
	if (!p) {
		errmsg(err, errlen, -ENOMEM, "out of memory");
		return NULL;
	}
	p->signature = md_ppl_signature(a->ref.set_uuid);
	p->ndisks = a->geo.raid_disks;
	a->log_state = p;
	for (int r = 0; r < p->ndisks; r++)
		if (eng_ppl_log_setup(a, r, err, errlen) < 0) {
			eng_ppl_free(a);
			return NULL;
		}
	return p;
}

void eng_ppl_free(struct eng_array *a)
{
	struct eng_ppl *p = a->log_state;
	if (!p)
		return;
	free(p->buf);
	free(p);
	a->log_state = NULL;
}
