/* A misbehaving NBD client for tests/integration/export_badclients.sh: libnbd
 * with its client-side checks off (nbd_set_strict_mode(0)) sends requests a
 * well-behaved client never would. Every bad request must fail with an NBD
 * error (or, where the server may legitimately serve it, succeed with the
 * right data) while the connection and the server stay usable.
 *
 * usage: export_badclient URI
 * Prints "ok - ..." / "not ok - ..." lines; exits 1 on any failure. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

static int failures;

static void report(int good, const char *what)
{
	printf("%sok - %s\n", good ? "" : "not ", what);
	fflush(stdout);
	failures += !good;
}

static struct nbd_handle *conn(const char *uri)
{
	struct nbd_handle *h = nbd_create();
	if (!h || nbd_connect_uri(h, uri) < 0) {
		fprintf(stderr, "connect %s: %s\n", uri, nbd_get_error());
		exit(1);
	}
	nbd_set_strict_mode(h, 0);
	return h;
}

/* The connection still serves a plain aligned read. */
static int usable(struct nbd_handle *h)
{
	char b[512];
	return nbd_pread(h, b, sizeof(b), 0, 0) == 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s URI\n", argv[0]);
		return 2;
	}
	const char *uri = argv[1];
	struct nbd_handle *h = conn(uri);
	int64_t size = nbd_get_size(h);
	report(size > 0 && size % 512 == 0, "export has a sector-multiple size");
	char *buf = calloc(1, 64u << 20);
	if (!buf)
		return 1;

	report(nbd_pread(h, buf, 4096, (uint64_t)size - 512, 0) < 0, "read across the end fails");
	report(usable(h), "connection usable after it");
	report(nbd_pread(h, buf, 512, (uint64_t)1 << 62, 0) < 0, "read at 2^62 fails");
	report(nbd_pread(h, buf, 512, UINT64_MAX - 511, 0) < 0,
	       "read where offset+length wraps fails");
	memset(buf, 0xee, 4096);
	report(nbd_pwrite(h, buf, 4096, (uint64_t)size - 1024, 0) < 0,
	       "write across the end fails");
	report(nbd_pwrite(h, buf, 512, (uint64_t)size, 0) < 0, "write at the end fails");
	report(nbd_pread(h, buf, 0, 0, 0) < 0 || usable(h), "zero-length read: error or harmless");
	/* trim and zero are served (issue #17): out of range they fail, and
	 * the contents stay as the md5 check after this client expects. */
	report(nbd_trim(h, 4096, (uint64_t)size - 1024, 0) < 0, "trim across the end fails");
	report(nbd_trim(h, 512, (uint64_t)1 << 62, 0) < 0, "trim at 2^62 fails");
	report(usable(h), "connection usable after them");
	report(nbd_cache(h, 4096, 0, 0) < 0 || usable(h),
	       "cache (not advertised): error or harmless");
	report(nbd_pread(h, buf, 512, 0, LIBNBD_CMD_FLAG_FUA) < 0 || usable(h),
	       "read with the FUA flag: error or harmless");
	report(nbd_zero(h, 4096, (uint64_t)size - 1024, LIBNBD_CMD_FLAG_FAST_ZERO) < 0,
	       "fast zero across the end fails");
	report(nbd_zero(h, 4096, (uint64_t)size - 1024, 0) < 0, "zero across the end fails");
	/* Larger than the advertised maximum (32 MiB): served or refused, never
	 * a crash. */
	int r = nbd_pread(h, buf, (33u << 20), 0, 0);
	report(r == 0 || usable(h), "33 MiB read (above the maximum hint): served or refused");
	report(usable(h), "connection usable after the huge request");

	/* Unaligned write inside the array: read-modify-write must keep the
	 * neighbouring bytes; the original bytes are put back afterwards. */
	unsigned char orig[1024], got[1024], want[1024];
	if (nbd_pread(h, orig, sizeof(orig), 8192, 0) == 0) {
		memcpy(want, orig, sizeof(want));
		memcpy(want + 1, "xyz", 3);
		memset(want + 509, 0x42, 7); /* straddles a sector boundary */
		int w1 = nbd_pwrite(h, "xyz", 3, 8192 + 1, 0);
		int w2 = nbd_pwrite(h, want + 509, 7, 8192 + 509, 0);
		int rd = nbd_pread(h, got, sizeof(got), 8192, 0);
		report(
		    w1 == 0 && w2 == 0 && rd == 0 && !memcmp(got, want, sizeof(got)),
		    "unaligned writes (3 bytes at +1, 7 across a sector edge) read back exactly");
		int r1 = nbd_pread(h, got, 5, 8192 + 510, 0);
		report(r1 == 0 && !memcmp(got, want + 510, 5),
		       "unaligned read across a sector edge");
		report(nbd_pwrite(h, orig, sizeof(orig), 8192, 0) == 0, "original bytes restored");
	} else {
		report(0, "read for the unaligned test");
	}

	/* Abrupt disconnect with a large write in flight: the server must not
	 * mind. The bytes are the current contents, so whether or not the
	 * write lands the array is unchanged. */
	struct nbd_handle *h2 = conn(uri);
	if (nbd_pread(h2, buf, 8u << 20, 0, 0) == 0) {
		int64_t c = nbd_aio_pwrite(h2, buf, 8u << 20, 0, NBD_NULL_COMPLETION, 0);
		report(c > 0, "8 MiB write submitted");
	}
	nbd_close(h2); /* drops the socket without waiting */

	/* Requests after a clean disconnect are refused on the client side. */
	struct nbd_handle *h3 = conn(uri);
	report(nbd_shutdown(h3, 0) == 0, "clean disconnect");
	report(nbd_pread(h3, buf, 512, 0, 0) < 0, "read after disconnect fails");
	nbd_close(h3);

	struct nbd_handle *h4 = conn(uri);
	report(usable(h4), "server accepts a new connection afterwards");
	nbd_close(h4);
	report(usable(h), "the first connection still works");
	nbd_shutdown(h, 0);
	nbd_close(h);
	free(buf);
	return failures ? 1 : 0;
}
