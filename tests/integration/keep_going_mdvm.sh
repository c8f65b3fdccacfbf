#!/usr/bin/env bash
# cat --keep-going and serve --readonly --keep-going against the kernel
# (shared/mdvm, one boot): a kernel-made raid5 whose members answer EIO in
# chosen ranges (device-mapper error segments): one range where a single
# member fails (rebuilt from parity, not zeros: the md5 against the kernel's
# read says so), one where a data member and
# the row's parity fail, one where two data members of a row fail. The
# reference is the kernel's own md array on the same devices read with dd
# conv=noerror,sync: uraid cat --keep-going and nbdcopy through uraid serve
# --keep-going must give the same bytes; the map must be a mapfile
# ddrescuelog reads, whose bad areas are exactly the ranges a plain model of
# the layout (below) says no member can supply; the serve list the same
# bytes; without --keep-going cat fails, naming the offset.
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
for t in nbdkit nbdcopy dmsetup ddrescuelog; do
	command -v "$t" >/dev/null || { fail "$t not installed (scripts/deps)"; t_done; }
done
d=$T_TMP
for i in 0 1 2 3; do truncate -s 8M "$d/e$i"; done
# Member data-area sectors that answer EIO: "START LEN ..." per member.
ERR=("1000 8" "200 16 3000 8" "200 16" "3000 8")
{
	for i in 0 1 2 3; do echo "ERR_$i=\"${ERR[$i]}\""; done
	cat "$TOP/tests/integration/keep_going_mdvm.job"
} >"$d/job.sh"
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 300 --mem 1024 \
	--disk e0="$d/e0" --disk e1="$d/e1" --disk e2="$d/e2" --disk e3="$d/e3" \
	--put-exe "$URAID" --put "$TOP/build/rel/nbdkit-uraid-plugin.so=/usr/local/bin/nbdkit-uraid-plugin.so" \
	--put-exe "$(command -v dmsetup)" --put-exe "$(command -v nbdkit)" \
	--put-exe "$(command -v nbdcopy)" --script "$d/job.sh" >"$d/vm.log" 2>&1
rc=$?
check "VM: kernel raid5 on members with error segments, read three ways (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { grep -E 'mdadm:|uraid|!!!|dmsetup' "$d/vm.log" | head -30; t_done; }
val() { sed -n "s/^$1=\\([^ ]*\\).*/\\1/p" "$d/vm.log" | head -1; }
check "cat without --keep-going fails (rc $(val PLAIN_RC))" [ "$(val PLAIN_RC)" != 0 ]
check "... naming where" grep -q '^PLAINERR: uraid: cat: read at byte [0-9]* failed' "$d/vm.log"
check "cat --keep-going exits 3: something could not be read" [ "$(val CAT_RC)" = 3 ]
check "cat --keep-going gives the kernel's bytes, zeros where md says EIO ($(val KERNEL_MD5))" \
	[ -n "$(val KERNEL_MD5)" -a "$(val CAT_MD5)" = "$(val KERNEL_MD5)" ]
check "serve --readonly --keep-going, read with nbdcopy, gives the same bytes" \
	[ "$(val NBD_MD5)" = "$(val KERNEL_MD5)" ]
sed -n '/^---- map$/,/^---- end map$/p' "$d/vm.log" | sed '1d;$d' | tr -d '\r' >"$d/m.map"
# The model: raid5 left-symmetric, 4 members, 64 KiB chunks; a sector is
# lost when its member fails there and so does another member of its row.
python3 - "$d/m.map" "${ERR[@]}" >"$d/model.out" <<'PY'
import sys
n, chunk, k = 4, 128, 3
bad = []
for spec in sys.argv[2:]:
    v = list(map(int, spec.split()))
    bad.append(set(s for a, l in zip(v[::2], v[1::2]) for s in range(a, a + l)))
lost = []
for msec in sorted(set().union(*bad)):
    stripe, co = divmod(msec, chunk)
    pd = (n - 1) - stripe % n
    failing = [r for r in range(n) if msec in bad[r]]
    if len(failing) < 2:
        continue
    for r in failing:
        if r == pd:
            continue
        di = (r - pd - 1) % n
        lost.append(stripe * k * chunk + di * chunk + co)
ranges = []
for s in sorted(lost):
    if ranges and ranges[-1][0] + ranges[-1][1] == s:
        ranges[-1][1] += 1
    else:
        ranges.append([s, 1])
for a, l in ranges:
    print('MODEL %d %d' % (a * 512, l * 512))
PY
sed -n 's/^MODEL //p' "$d/model.out" >"$d/model.ranges"
ddrescuelog -b 1 --list-blocks=- "$d/m.map" 2>"$d/ddr.err" | python3 -c '
import sys
r = []
for line in sys.stdin:
    b = int(line)
    if r and r[-1][0] + r[-1][1] == b: r[-1][1] += 1
    else: r.append([b, 1])
for a, l in r: print(a, l)' >"$d/map.ranges"
check "ddrescuelog reads the map" [ -s "$d/map.ranges" -a ! -s "$d/ddr.err" ]
check "the map's bad areas are the model's ($(tr '\n' ' ' <"$d/model.ranges"))" \
	cmp -s "$d/map.ranges" "$d/model.ranges"
check "the map names the failing members behind them" \
	grep -q 'slot 1 /dev/mapper/x1 at member byte 0x[0-9a-f]*: data, read error' "$d/m.map"
want=$(awk '{s += $2} END {print s}' "$d/model.ranges")
got=$(sed -n 's/^UNREADABLE: [0-9]* \([0-9]*\).*/\1/p' "$d/vm.log" | awk '{s += $1} END {print s + 0}')
check "serve listed $got unreadable bytes in NAME.unreadable, the model says $want" [ "$got" = "$want" ]
check "the kernel answered EIO for the same 4 KiB blocks ($(val KERNEL_EIO_BLOCKS))" \
	[ "$(val KERNEL_EIO_BLOCKS)" = "$((want / 4096))" ]
t_done
