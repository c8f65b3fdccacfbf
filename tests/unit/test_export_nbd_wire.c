/* The NBD handshake parser attach --via nbd uses (src/export/nbd/nbd_wire.h)
 * on bytes laid out here from the NBD protocol document: a fixed-newstyle
 * greeting is accepted and an oldstyle one, a bad magic or a short read is
 * not; the client's reply and NBD_OPT_EXPORT_NAME are the bytes the protocol
 * says; the export reply gives size and flags, and a size that is not whole
 * sectors or flags without HAS_FLAGS are refused. */
#include "../harness.h"

#include "export/nbd/nbd_wire.h"

static void be(unsigned char *b, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		b[i] = (unsigned char)(v & 0xff);
}

static void greeting(void)
{
	unsigned char g[18];
	be(g, 0x4e42444d41474943ull, 8);     /* "NBDMAGIC" */
	be(g + 8, 0x49484156454f5054ull, 8); /* "IHAVEOPT" */
	be(g + 16, 3, 2);                    /* FIXED_NEWSTYLE | NO_ZEROES */
	uint16_t f = 0;
	CHECK(nbd_wire_greeting(g, sizeof(g), &f) == 0);
	CHECK(f == 3);
	CHECK(nbd_wire_greeting(g, 17, &f) == -EPROTO);
	be(g + 16, 2, 2); /* newstyle without "fixed" */
	CHECK(nbd_wire_greeting(g, sizeof(g), &f) == -EPROTO);
	be(g + 16, 1, 2);
	be(g + 8, 0x00420281861253ull, 8); /* oldstyle's cliserv magic */
	CHECK(nbd_wire_greeting(g, sizeof(g), &f) == -EPROTO);
	be(g + 8, 0x49484156454f5054ull, 8);
	g[0] = 'X';
	CHECK(nbd_wire_greeting(g, sizeof(g), &f) == -EPROTO);
}

static void request(void)
{
	unsigned char out[64], want[24];
	/* client flags: FIXED_NEWSTYLE, and NO_ZEROES only when offered */
	be(want, 3, 4);
	be(want + 4, 0x49484156454f5054ull, 8);
	be(want + 12, 1, 4); /* NBD_OPT_EXPORT_NAME */
	be(want + 16, 3, 4);
	memcpy(want + 20, "abc", 3);
	CHECK(nbd_wire_export_request(3, "abc", out, sizeof(out)) == 23);
	CHECK(memcmp(out, want, 23) == 0);
	be(want, 1, 4);
	be(want + 16, 0, 4);
	CHECK(nbd_wire_export_request(1, "", out, sizeof(out)) == 20);
	CHECK(memcmp(out, want, 20) == 0);
	CHECK(nbd_wire_export_request(1, "abc", out, 22) == -EINVAL);
}

static void export_reply(void)
{
	unsigned char r[10];
	uint64_t size = 0;
	uint16_t flags = 0;
	be(r, 48234496, 8);
	be(r + 8, 1 | 4 | 8 | 256, 2); /* HAS_FLAGS, SEND_FLUSH, SEND_FUA, CAN_MULTI_CONN */
	CHECK(nbd_wire_export(r, sizeof(r), &size, &flags) == 0);
	CHECK_EQ_U64(size, 48234496);
	CHECK(flags == (1 | 4 | 8 | 256));
	CHECK(nbd_wire_export(r, 9, &size, &flags) == -EPROTO);
	be(r + 8, 4, 2); /* no HAS_FLAGS */
	CHECK(nbd_wire_export(r, sizeof(r), &size, &flags) == -EPROTO);
	be(r + 8, 1, 2);
	be(r, 48234497, 8); /* not whole sectors */
	CHECK(nbd_wire_export(r, sizeof(r), &size, &flags) == -EPROTO);
	be(r, 0, 8);
	CHECK(nbd_wire_export(r, sizeof(r), &size, &flags) == -EPROTO);
}

TEST_MAIN(T(greeting), T(request), T(export_reply))
