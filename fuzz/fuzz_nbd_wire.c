/* libFuzzer target for the client side of the NBD handshake that attach
 * --via nbd does before it hands sockets to the kernel
 * (src/export/nbd/nbd_wire.h): the input is what a server sent, a greeting
 * then an NBD_OPT_EXPORT_NAME reply. Parsing must never read past the bytes
 * given, accept only a fixed-newstyle greeting, and accept only an export
 * whose size is a whole number of sectors with the transmission flags'
 * HAS_FLAGS bit, as the parser promises. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/nbd/nbd_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exact-size copies, so ASan sees any read past them. */
	size_t g = size < NBD_WIRE_GREETING_LEN ? size : NBD_WIRE_GREETING_LEN;
	unsigned char *gb = malloc(g ? g : 1);
	memcpy(gb, data, g);
	uint16_t hflags = 0;
	if (nbd_wire_greeting(gb, g, &hflags) == 0) {
		if (g != NBD_WIRE_GREETING_LEN || !(hflags & NBD_WIRE_HS_FIXED_NEWSTYLE))
			abort();
		unsigned char req[32];
		int n = nbd_wire_export_request(hflags, "", req, sizeof(req));
		if (n != 20)
			abort();
	}
	free(gb);
	size_t rest = size - g;
	unsigned char *eb = malloc(rest ? rest : 1);
	memcpy(eb, data + g, rest);
	uint64_t sz = 0;
	uint16_t tf = 0;
	if (nbd_wire_export(eb, rest, &sz, &tf) == 0 &&
	    (!sz || sz % 512 || !(tf & NBD_WIRE_TX_HAS_FLAGS)))
		abort();
	free(eb);
	return 0;
}
