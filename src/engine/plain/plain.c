/* The plain personality (linear, raid0): every logical sector lives on one
 * member, so a request is its mapped pieces, one batch; nothing to rebuild,
 * resync or check, and an error is the request's. */
#include <errno.h>
#include <string.h>

#include "engine/plain/plain.h"

#define BATCH 64

/* The piece of [lsec, lsec + nsec) that starts at lsec, on one member:
 * its place and length; -EIO when that member is gone (md's linear and
 * raid0 never consult the bad block log). */
static int plain_piece(const struct eng_array *a, uint64_t lsec, uint64_t nsec,
                       struct layout_loc *loc, uint64_t *len)
{
	int rc = a->ops->map(&a->geo, lsec, 0, loc, len);
	if (rc < 0)
		return rc;
	if (*len > nsec)
		*len = nsec;
	return eng_role_present(a, loc->role, loc->sector, *len) ? 0 : -EIO;
}

static int plain_io(struct eng_array *a, struct member_ioq *q, bool shared, uint8_t *buf,
                    uint64_t lsec, uint64_t nsec, bool write)
{
	struct member_io io[BATCH];
	while (nsec) {
		int n = 0;
		while (nsec && n < BATCH) {
			struct layout_loc loc;
			uint64_t len;
			int rc = plain_piece(a, lsec, nsec, &loc, &len);
			if (rc < 0)
				return rc;
			eng_set_io(a, &io[n++], loc.role, write, buf, loc.sector, len);
			buf += len * 512;
			lsec += len;
			nsec -= len;
		}
		eng_ioq_run(a, q, io, n);
		for (int i = 0; i < n; i++)
			if (!member_io_done(&io[i]))
				return shared ? -EBUSY : -EIO; /* no redundancy to fall back on */
	}
	return 0;
}

static int plain_read(struct eng_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	return plain_io(a, a->ioq, false, buf, lsec, nsec, false);
}

/* A shared write's error gives -EBUSY: the locked path repeats it and
 * reports -EIO (no member is failed: nothing could take its place). */
static int plain_write(struct eng_array *a, const struct eng_req *rq, const uint8_t *buf,
                       uint64_t lsec, uint64_t nsec)
{
	return plain_io(a, rq->q, rq->shared, (uint8_t *)buf, lsec, nsec, true);
}

/* Each mapped piece zeroed on its member: no copy or parity to keep. */
static int plain_zero(struct eng_array *a, uint64_t lsec, uint64_t nsec, unsigned mflags)
{
	while (nsec) {
		struct layout_loc loc;
		uint64_t len;
		int rc = plain_piece(a, lsec, nsec, &loc, &len);
		if (rc < 0)
			return rc;
		if (eng_member_zero(a, loc.role, loc.sector, len, mflags) < 0)
			return -EIO;
		lsec += len;
		nsec -= len;
	}
	return 0;
}

static bool plain_redundant(const struct eng_array *a)
{
	(void)a;
	return false;
}

static uint64_t plain_lock_unit(const struct eng_array *a)
{
	(void)a;
	return ENG_REGION_SECTORS;
}

const struct eng_pers eng_pers_plain = {
    .name = "plain",
    .redundant = plain_redundant,
    .read = plain_read,
    .write = plain_write,
    .zero = plain_zero,
    .lock_unit = plain_lock_unit,
};
