#!/usr/bin/env bash
# make demo (scripts/demo) end to end, small and with a slow rebuild, its
# output checked line by line where it shows md's text: the status lines of
# the fresh, degraded and rebuilt array and the rebuild's progress bar as
# /proc/mdstat prints it (21 wide, padded per mille, finish and speed), so
# the demo cannot silently show something else again.
source "$(dirname "$0")/../lib.sh"
out=$T_TMP/demo.out
URAID="$URAID" DEMO_MIB=24 DEMO_POLL=0.3 URAID_SYNC_SPEED_MAX=6144 TMPDIR=$T_TMP \
	"$TOP/scripts/demo" >"$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
check "the demo runs to its end (rc $rc)" sh -c '[ "$1" -eq 0 ] && grep -q "^== done" "$2"' sh "$rc" "$out"
# 24 MiB of data: 48 MiB members, 1 MiB superblock/bitmap room off each
check "the created array: md's first status line" \
	grep -qx 'demo : active raid5 m3.img\[3\] m2.img\[2\] m1.img\[1\] m0.img\[0\]' "$out"
check "... and its second (blocks, super 1.2, level 5, 64k chunk, algorithm 2, [4/4] [UUUU])" \
	grep -Eqx '      [0-9]+ blocks super 1\.2 level 5, 64k chunk, algorithm 2 \[4/4\] \[UUUU\]' "$out"
check "the Personalities and unused devices lines" \
	bash -c "grep -qx 'Personalities : \\[raid0\\] \\[raid1\\] \\[raid10\\] \\[raid6\\] \\[raid5\\] \\[raid4\\] \\[linear\\] ' '$out' &&
	         grep -qx 'unused devices: <none>' '$out'"
check "failed m1: (F) and [4/3] [U_UU]" \
	bash -c "grep -qx 'demo : active raid5 m3.img\\[3\\] m2.img\\[2\\] m1.img\\[1\\](F) m0.img\\[0\\]' '$out' &&
	         grep -Eq '\\[4/3\\] \\[U_UU\\]$' '$out'"
bar='      \[=*>\.*\]  recovery = ?[ 0-9]{2}[0-9]\.[0-9]% \([0-9]+/[0-9]+\) finish=[0-9]+\.[0-9]min speed=[0-9]+K/sec'
sed -n '/^== add a spare/,/^rebuild done/p' "$out" | grep -Ex "$bar" >"$T_TMP/bars"
n=$(wc -l <"$T_TMP/bars")
check "the rebuild shows md's progress line, live ($n lines)" [ "$n" -ge 3 ]
check "... every bar 21 characters wide" \
	[ "$(sed -n 's/^      \(\[[^]]*\]\).*/\1/p' "$T_TMP/bars" | awk '{print length($0)}' | sort -u)" = 23 ]
python3 - "$T_TMP/bars" <<'PY' && ok "... percent, bar and blocks agree as md computes them, and advance" || fail "... percent, bar and blocks agree as md computes them, and advance"
import re, sys
prev = -1
for line in open(sys.argv[1]):
    m = re.match(r' +\[(=*)>(\.*)\]  recovery = *(\d+)\.(\d)% \((\d+)/(\d+)\)', line)
    eq, dots, pi, pf, done, total = m.groups()
    pm = int(pi) * 10 + int(pf)
    want = ((int(done) * 2) >> 10) * 1000 // (((int(total) * 2) >> 10) + 1)
    assert pm == want, (line, pm, want)
    assert len(eq) == pm // 50 and len(dots) == 20 - pm // 50, line
    assert int(done) >= prev, line
    prev = int(done)
    assert int(total) == 48 * 1024 - 1024 or int(total) > 40000, line
PY
check "no uraid-only line (stripe_cache_size) in the mdstat text" bash -c "! grep -q stripe_cache_size '$out'"
check "the rebuilt array: m4[4] in, [4/4] [UUUU]" \
	bash -c "grep -qx 'demo : active raid5 m4.img\\[4\\] m3.img\\[3\\] m2.img\\[2\\] m0.img\\[0\\]' '$out'"
check "check: mismatch_cnt 0" grep -qx 'mismatch_cnt 0' "$out"
check "the data read back identical four times" [ "$(grep -c 'identical' "$out")" -eq 4 ]
check "detail: mdadm's State and device table" \
	bash -c "grep -qx '             State : clean ' '$out' &&
	         grep -qx '    Number   Major   Minor   RaidDevice State' '$out'"
t_done
