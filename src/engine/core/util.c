/* Small engine helpers: buffers, clocks, which member may serve a range. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>

#include "engine/core/engine.h"
#include "engine/core/reshape.h"
#include "util/errmsg.h"

void *eng_alloc(size_t len)
{
	void *p = NULL;
	if (len == 0)
		len = 1;
	/* Page alignment keeps the buffers usable for O_DIRECT members. */
	if (posix_memalign(&p, 4096, len))
		return NULL;
	memset(p, 0, len);
	return p;
}

uint64_t eng_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct member *eng_role_member(const struct eng_array *a, int role)
{
	if (role < 0 || role >= a->geo.raid_disks || a->slot[role] < 0)
		return NULL;
	return eng_data_member(a->mem[a->slot[role]]);
}

/* In sync, or rebuilding and already past the range. */
bool eng_role_present(const struct eng_array *a, int role, uint64_t msec, uint64_t nsec)
{
	if (role < 0 || role >= a->geo.raid_disks || a->slot[role] < 0)
		return false;
	const struct eng_member *em = a->mem[a->slot[role]];
	if (em->state == URAID_MEMBER_IN_SYNC)
		return true;
	return em->state == URAID_MEMBER_REBUILDING && msec + nsec <= em->recovery_offset;
}

bool eng_role_bad(const struct eng_array *a, int role, uint64_t msec, uint64_t nsec)
{
	if (role < 0 || role >= a->geo.raid_disks || a->slot[role] < 0)
		return false;
	return eng_bbl_bad(a->mem[a->slot[role]], msec, nsec, NULL, NULL);
}

/* ... and no recorded bad range in it: md never reads a range its bad
 * block log holds (raid1/raid10 read_balance, raid5 analyse_stripe), the
 * personality takes it from elsewhere. */
bool eng_role_readable(const struct eng_array *a, int role, uint64_t msec, uint64_t nsec)
{
	return eng_role_present(a, role, msec, nsec) && !eng_role_bad(a, role, msec, nsec);
}

uint64_t eng_role_readable_run(const struct eng_array *a, int role, uint64_t msec, uint64_t nsec)
{
	if (!eng_role_present(a, role, msec, 1))
		return 0;
	const struct eng_member *em = a->mem[a->slot[role]];
	if (em->state == URAID_MEMBER_REBUILDING && em->recovery_offset - msec < nsec)
		nsec = em->recovery_offset - msec;
	uint64_t first;
	if (eng_bbl_bad(em, msec, nsec, &first, NULL))
		return first - msec;
	return nsec;
}

/* Writes go to rebuilding members too: what lands there is correct, and the
 * rebuild overwrites it again with the same contents. */
bool eng_role_writable(const struct eng_array *a, int role)
{
	if (role < 0 || role >= a->geo.raid_disks || a->slot[role] < 0)
		return false;
	enum uraid_member_state st = a->mem[a->slot[role]]->state;
	return st == URAID_MEMBER_IN_SYNC || st == URAID_MEMBER_REBUILDING;
}

int eng_member_io(struct eng_array *a, int role, bool write, void *buf, uint64_t msec,
                  uint64_t nsec)
{
	if (role < 0 || role >= a->geo.raid_disks || a->slot[role] < 0)
		return -ENODEV;
	const struct eng_member *em = a->mem[a->slot[role]];
	uint64_t off = (em->sb.data_offset + msec) * 512;
	eng_count_io(a, write, nsec * 512);
	if (!write)
		return member_read(eng_data_member(em), buf, nsec * 512, off);
	int rc = member_write(eng_data_member(em), buf, nsec * 512, off, 0);
	if (rc == 0)
		eng_bbl_written(a->mem[a->slot[role]], msec, nsec);
	return rc;
}

void eng_count_io(struct eng_array *a, bool write, uint64_t bytes)
{
	__atomic_add_fetch(write ? &a->nio_writes : &a->nio_reads, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(write ? &a->nio_wbytes : &a->nio_rbytes, bytes, __ATOMIC_RELAXED);
}

void eng_ioq_run(struct eng_array *a, struct member_ioq *q, struct member_io *io, int n)
{
	for (int i = 0; i < n; i++)
		if (io[i].op != MEMBER_OP_FLUSH)
			eng_count_io(a, io[i].op == MEMBER_OP_WRITE, io[i].len);
	/* On the array's own queue (the locked path, one request at a time)
	 * small batches only: for big ones the queue's kernel workers move
	 * members in parallel, which beat one thread's copies (rebuild, 1 MiB
	 * requests: measured). The fast path's queues serve callers that run
	 * in parallel already (nbdkit's threads): there a hand-off to a kernel
	 * worker and back only adds two wake-ups per member request, so every
	 * size is copied on the calling thread (docs/PERFORMANCE.md, NBD
	 * export). */
	size_t bytes = 0;
	for (int i = 0; i < n && q == a->ioq; i++)
		bytes += io[i].len;
	if (!a->sync_io || bytes > ENG_SYNC_IO_MAX) {
		member_ioq_run(q, io, n);
		eng_bbl_batch_written(a, io, n);
		return;
	}
	for (int i = 0; i < n; i++) {
		int r;
		if (io[i].op == MEMBER_OP_READ)
			r = member_read(io[i].m, io[i].buf, io[i].len, io[i].off);
		else if (io[i].op == MEMBER_OP_WRITE)
			r = member_write(io[i].m, io[i].buf, io[i].len, io[i].off, io[i].flags);
		else
			r = member_flush(io[i].m);
		io[i].result = r < 0 ? r : (ssize_t)(io[i].op == MEMBER_OP_FLUSH ? 0 : io[i].len);
	}
	eng_bbl_batch_written(a, io, n);
}

#define TMPFS_MAGIC_NR 0x01021994

bool eng_members_on_tmpfs(const struct eng_array *a)
{
	int n = 0;
	for (int i = 0; i < a->nmem; i++) {
		struct member *m = a->mem[i]->m;
		int fd = m && m->ops->fd ? m->ops->fd(m) : -1;
		struct statfs st;
		if (fd < 0 || fstatfs(fd, &st) != 0 || st.f_type != TMPFS_MAGIC_NR)
			return false;
		n++;
	}
	return n > 0;
}

/* A read or write of nsec sectors at data-area sector msec of the member in
 * `role` (the member's data_offset added). */
void eng_set_io(struct eng_array *a, struct member_io *io, int role, bool write, void *buf,
                uint64_t msec, uint64_t nsec)
{
	const struct eng_member *em = a->mem[a->slot[role]];
	memset(io, 0, sizeof(*io));
	io->m = eng_data_member(em);
	io->op = write ? MEMBER_OP_WRITE : MEMBER_OP_READ;
	io->buf = buf;
	io->len = nsec * 512;
	io->off = (em->sb.data_offset + msec) * 512;
}

void eng_cond_wait(struct eng_array *a)
{
	pthread_rwlock_unlock(&a->iolock);
	pthread_cond_wait(&a->cond, &a->lock);
	pthread_rwlock_wrlock(&a->iolock);
}

/* During a reshape: geometry g readable from the in-sync members, with
 * `without` gone too (whatever view a->geo holds at the moment). filled:
 * a member the move fills counts for g (md's raid5_calc_degraded: the
 * new geometry of a reshape to more members, "already recovered"). */
static bool reshape_readable(const struct eng_array *a, const struct layout_geometry *g,
                             const struct layout_ops *ops, int without, bool filled)
{
	bool missing[LAYOUT_MAX_MEMBERS];
	for (int r = 0; r < g->raid_disks; r++) {
		const struct eng_member *em = a->slot[r] < 0 ? NULL : a->mem[a->slot[r]];
		missing[r] =
		    r == without || !em ||
		    (em->state != URAID_MEMBER_IN_SYNC && !(filled && eng_reshape_fills(em)));
	}
	return ops->readable(g, missing);
}

/* Readable from the in-sync members, with `without` (a role, or -1) gone
 * too; during a reshape both geometries must be (md's has_failed counts
 * the members of either). */
static bool readable_without(const struct eng_array *a, int without)
{
	if (a->rs)
		return reshape_readable(a, &a->rs->geo[0], a->rs->ops[0], without, false) &&
		       reshape_readable(a, &a->rs->geo[1], a->rs->ops[1], without,
		                        !a->rs->r.backwards &&
		                            a->rs->geo[1].raid_disks > a->rs->geo[0].raid_disks);
	bool missing[LAYOUT_MAX_MEMBERS];
	for (int r = 0; r < a->geo.raid_disks; r++)
		missing[r] = r == without || !eng_role_readable(a, r, 0, 0) ||
		             a->mem[a->slot[r]]->state != URAID_MEMBER_IN_SYNC;
	return a->ops->readable(&a->geo, missing);
}

bool eng_array_readable(const struct eng_array *a)
{
	return !a->broken && readable_without(a, -1);
}

bool eng_member_can_fail(const struct eng_array *a, int role)
{
	return readable_without(a, role);
}

void eng_array_broken(struct eng_array *a, const char *who, const char *why)
{
	if (!a->broken)
		fprintf(stderr,
		        "uraid: %s: %s, and the array cannot lose it: writes refused from now on, "
		        "reads go on (md's broken array); stop the array and assemble it again\n",
		        who, why);
	a->broken = true;
}

bool eng_role_write_mostly(const struct eng_array *a, int role)
{
	return a->geo.level == URAID_LEVEL_RAID1 && role >= 0 && role < a->geo.raid_disks &&
	       a->slot[role] >= 0 &&
	       (eng_member_devflags(a->mem[a->slot[role]]) & ENG_DEV_WRITEMOSTLY);
}

bool eng_role_failfast(const struct eng_array *a, int role, bool write)
{
	if ((a->geo.level != URAID_LEVEL_RAID1 && a->geo.level != URAID_LEVEL_RAID10) || role < 0 ||
	    role >= a->geo.raid_disks || a->slot[role] < 0)
		return false;
	unsigned f = eng_member_devflags(a->mem[a->slot[role]]);
	if (!(f & ENG_DEV_FAILFAST) || (write && (f & ENG_DEV_WRITEMOSTLY)))
		return false;
	return eng_member_can_fail(a, role);
}
