/* MD5 against the RFC 1321 appendix A.5 test suite, plus chunked updates of
 * random data compared with the system's md5sum (an independent
 * implementation) through popen. */
#include <stdio.h>

#include "../harness.h"
#include "util/md5.h"

static void hex(const uint8_t d[16], char out[33])
{
	for (int i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void rfc_suite(void)
{
	static const char *const cases[][2] = {
	    {"", "d41d8cd98f00b204e9800998ecf8427e"},
	    {"a", "0cc175b9c0f1b6a831c399e269772661"},
	    {"abc", "900150983cd24fb0d6963f7d28e17f72"},
	    {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
	    {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
	    {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
	     "d174ab98d277d9f5a5611c2c9f419d9f"},
	    {"1234567890123456789012345678901234567890123456789012345678901234567890123456789"
	     "0",
	     "57edf4a22be3c955ac49da2e2107b67a"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t d[16];
		char h[33];
		md5(cases[i][0], strlen(cases[i][0]), d);
		hex(d, h);
		CHECKF(strcmp(h, cases[i][1]) == 0, "md5(\"%s\") = %s", cases[i][0], h);
	}
}

static void chunked_vs_md5sum(void)
{
	uint64_t seed = 0x5eed0001;
	static uint8_t buf[5000];
	for (int round = 0; round < 6; round++) {
		size_t len = (size_t)(t_rand(&seed) % sizeof(buf));
		t_fill(&seed, buf, len);
		char path[] = "/tmp/uraid-md5-XXXXXX";
		int fd = mkstemp(path);
		CHECK(fd >= 0);
		if (fd < 0)
			return;
		FILE *f = fdopen(fd, "wb");
		fwrite(buf, 1, len, f);
		fclose(f);
		char cmd[128], want[64] = "";
		snprintf(cmd, sizeof(cmd), "md5sum %s", path);
		FILE *p = popen(cmd, "r");
		CHECK(p && fscanf(p, "%32s", want) == 1);
		if (p)
			pclose(p);
		remove(path);
		/* Feed in random-size pieces to cross the 64-byte block edges. */
		struct md5_ctx c;
		md5_init(&c);
		size_t off = 0;
		while (off < len) {
			size_t n = (size_t)(t_rand(&seed) % 130);
			if (n > len - off)
				n = len - off;
			md5_update(&c, buf + off, n);
			off += n;
		}
		uint8_t d[16];
		char h[33];
		md5_final(&c, d);
		hex(d, h);
		CHECKF(strcmp(h, want) == 0, "len %zu: %s != md5sum %s", len, h, want);
	}
}

TEST_MAIN(T(rfc_suite), T(chunked_vs_md5sum))
