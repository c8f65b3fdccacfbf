/* libFuzzer target for what uraid probe parses from untrusted members:
 * the signature parsers (probe_sig_head/tail/md) over the input as given,
 * and probe_run over one or two members holding the input (at offset 0 and
 * at a 128 KiB data offset), so the file system walkers (ext4 directories,
 * XFS allocation groups, GPT backup header) follow whatever pointers the
 * bytes hold, and the order search's structure parser (probe_fs_points).
 * Nothing may read outside what the read callback serves. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe.h"

#define MEMBER_BYTES (384u << 10)
#define SECOND_AT    (128u << 10) /* member 1 holds the input here */

struct input {
	const uint8_t *data;
	size_t len;
};

static int fuzz_read(void *ctx, int member, void *buf, size_t len, uint64_t off)
{
	const struct input *in = ctx;
	if (off > MEMBER_BYTES || len > MEMBER_BYTES - off)
		abort(); /* probe must stay inside the members it was told of */
	memset(buf, 0, len);
	uint64_t at = member ? SECOND_AT : 0;
	uint64_t lo = off > at ? off : at, hi = off + len < at + in->len ? off + len : at + in->len;
	if (lo < hi)
		memcpy((uint8_t *)buf + (lo - off), in->data + (lo - at), hi - lo);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct probe_sig s;
	uint8_t *buf = calloc(1, PROBE_HEAD_BYTES);
	if (!buf)
		return 0;
	memcpy(buf, data, size < PROBE_HEAD_BYTES ? size : PROBE_HEAD_BYTES);
	probe_sig_head(data, size, &s);
	probe_sig_head(buf, PROBE_HEAD_BYTES, &s);
	if (size >= 1024)
		probe_sig_tail(data, size & ~511ul, (size & ~511ul) + 4096, &s);
	for (int v = 0; v < 13; v++)
		if (v == 0 || v >= 10)
			probe_sig_md(v, buf, 4096, &s);
	/* the self-naming structures the order search looks for */
	struct probe_point pts[PROBE_MAX_POINTS];
	for (int k = PROBE_SIG_EXT; k <= PROBE_SIG_GPT; k++) {
		s.kind = (enum probe_sig_kind)k;
		int np = probe_fs_points(buf, 4096, &s, pts, PROBE_MAX_POINTS);
		for (int i = 0; i < np; i++)
			probe_point_holds(&pts[i], buf + 512 * (i % 8));
	}
	free(buf);
	struct input in = {data, size};
	struct probe_input pi = {.n = size && (data[0] & 1) ? 2 : 1, .read = fuzz_read, .ctx = &in};
	pi.size[0] = pi.size[1] = MEMBER_BYTES;
	struct probe_result *r = malloc(sizeof(*r));
	char err[256];
	if (r)
		probe_run(&pi, r, err, sizeof(err));
	free(r);
	return 0;
}
