#!/usr/bin/env bash
# Parity against the real kernel at a wide stripe: the Linux md driver (in
# shared/mdvm) creates a 10-member RAID6 (k = 8, left-symmetric, 64 KiB chunks)
# and fills it with random data; then every uraid parity backend must compute
# the kernel's P and Q for every stripe and rebuild lost chunks from them.
# (shared/md-vectors only has a 4-member RAID6, i.e. Q coefficients 1 and 2.)
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mdvm/lib.sh"

N=10
if ! mdvm_ready; then
	fail "mdvm is not set up (see the message above); cannot run the kernel checks"
	t_done
fi
disks=()
for ((i = 0; i < N; i++)); do
	truncate -s 2M "$T_TMP/m$i.img"
	disks+=(--disk "m$i=$T_TMP/m$i.img")
done
head -c $((16 << 20)) /dev/urandom >"$T_TMP/pat.bin"
cat >"$T_TMP/job.sh" <<JOB
set -e
MEMBERS="$(for ((i = 0; i < N; i++)); do printf '/dev/disk-m%d ' $i; done)"
run mdadm --create /dev/md0 --run --level=6 --raid-devices=$N --chunk=64 \\
    --layout=left-symmetric --metadata=1.2 --bitmap=none --name=pq \$MEMBERS
md_wait md0
BYTES=\$(blockdev --getsize64 /dev/md0)
echo "ARRAY_BYTES=\$BYTES"
run dd if=/dev/disk-pat of=/dev/md0 bs=64k count=\$((BYTES / 65536)) conv=fsync
md_check md0
mdadm --examine /dev/disk-m0 | sed -n 's/^ *Data Offset : \([0-9]*\) sectors.*/DATA_OFFSET=\1/p'
run mdadm --stop /dev/md0
JOB
mdvm_run "${disks[@]}" --disk "pat=$T_TMP/pat.bin" --script "$T_TMP/job.sh" \
	--log "$T_TMP/vm.log" >/dev/null 2>&1
check "kernel created, filled and checked the RAID6 (mismatch_cnt=0)" \
	grep -q '^mismatch_cnt=0' "$T_TMP/vm.log"
bytes=$(mdvm_val ARRAY_BYTES "$T_TMP/vm.log")
doff=$(mdvm_val DATA_OFFSET "$T_TMP/vm.log")

cat >"$T_TMP/chk.c" <<'C'
/* argv: N members, data offset (sectors), array bytes, dir. Prints one
 * "ok"/"not ok" line per backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "uraid.h"
#define CH 65536u
static unsigned char *slurp(const char *dir, const char *name, size_t *len)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	unsigned char *b = malloc(*len);
	if (b && fread(b, 1, *len, f) != *len)
		b = NULL;
	fclose(f);
	return b;
}
int main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	int n = atoi(argv[1]), k = n - 2;
	size_t off = strtoull(argv[2], 0, 10) * 512, bytes = strtoull(argv[3], 0, 10), len, plen;
	unsigned char *m[32], *pat = slurp(argv[4], "pat.bin", &plen);
	for (int i = 0; i < n; i++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "m%d.img", i);
		if (!(m[i] = slurp(argv[4], nm, &len)))
			return 2;
	}
	size_t stripes = bytes / ((size_t)k * CH);
	if (!pat || stripes == 0 || off + stripes * CH > len)
		return 2;
	unsigned char *x = aligned_alloc(64, CH), *y = aligned_alloc(64, CH), *c[2];
	c[0] = malloc(CH);
	c[1] = malloc(CH);
	for (const char *const *nm = uraid_parity_backends(); *nm; nm++) {
		const struct uraid_parity *pp = uraid_parity_get(*nm);
		if (!pp)
			continue;
		size_t badpat = 0, badpq = 0, badrec = 0;
		for (size_t s = 0; s < stripes; s++) {
			/* md left-symmetric RAID6: P rotates backwards from the last
			 * member, Q follows P, data (in syndrome order) follow Q. */
			int pd = n - 1 - (int)(s % (size_t)n), qd = (pd + 1) % n;
			void *b[40];
			for (int j = 0; j < k; j++) {
				b[j] = m[(pd + 2 + j) % n] + off + s * CH;
				badpat += memcmp(b[j], pat + (s * k + j) * CH, CH) != 0;
			}
			b[k] = x;
			b[k + 1] = y;
			if (pp->pq_gen(k, CH, b) || memcmp(x, m[pd] + off + s * CH, CH) ||
			    memcmp(y, m[qd] + off + s * CH, CH))
				badpq++;
			/* lose two data chunks (rotating which) and rebuild them */
			int f[2] = {(int)(s % (size_t)k), (int)((s + 3) % (size_t)k)};
			void *saved[2] = {b[f[0]], b[f[1]]};
			memset(c[0], 0, CH);
			memset(c[1], 0, CH);
			b[f[0]] = c[0];
			b[f[1]] = c[1];
			b[k] = m[pd] + off + s * CH;
			b[k + 1] = m[qd] + off + s * CH;
			if (pp->recover(k, CH, b, 1, 2, f) || memcmp(c[0], saved[0], CH) ||
			    memcmp(c[1], saved[1], CH))
				badrec++;
		}
		printf("%sok - %s: %zu stripes of k=%d: data as written %zu bad, P/Q %zu bad, "
		       "rebuild %zu bad\n",
		       badpat || badpq || badrec ? "not " : "", *nm, stripes, k, badpat, badpq,
		       badrec);
	}
	return 0;
}
C
libs=$(uraid_libs)
if ${CC:-cc} -O2 -I"$TOP/include" -o "$T_TMP/chk" "$T_TMP/chk.c" "$TOP/build/rel/liburaid.a" \
	$libs; then
	"$T_TMP/chk" $N "$doff" "$bytes" "$T_TMP" >"$T_TMP/chk.out"
	check "checker ran" test $? -eq 0
	cat "$T_TMP/chk.out"
	grep -q '^not ok' "$T_TMP/chk.out" && T_FAILED=1
	check "every backend was compared" test "$(grep -c '^ok' "$T_TMP/chk.out")" -ge 1
else
	fail "cannot build the checker against build/rel/liburaid.a"
fi
t_done
