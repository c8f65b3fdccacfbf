#!/usr/bin/env bash
# attach --via ublk and --via nbd against the real kernel: one boot of
# shared/mdvm with Debian's 6.12 kernel (ublk_drv, nbd), uraid, nbdkit and
# the plugin, mkfs.xfs, xfs_repair and util-linux's blockdev brought in
# (ublk_mdvm.job says what it does in the guest). Checked here: every guest
# check passed and all of them ran; the pattern read back through each
# device is the one written (md5 of the host's file); the geometry the ublk
# device shows is what the kernel's md shows for the same members (logical,
# physical, io_min = chunk, io_opt = stripe width), and mkfs.xfs took the
# stripe from it. The 6.12 cache is $URAID_MDVM612_CACHE (default
# /var/cache/mdvm-6.12, made by scripts/deps); without it the test skips.
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
CACHE=${URAID_MDVM612_CACHE:-/var/cache/mdvm-6.12}
if [ ! -x "$MDVM" ] || ! MDVM_CACHE=$CACHE "$MDVM" --info >/dev/null 2>&1; then
	echo "ok - # SKIP no 6.12 mdvm kernel in $CACHE (scripts/deps makes it)"
	t_done
fi
d=$T_TMP
for v in ublk nbd; do for i in 0 1 2; do truncate -s 24M "$d/$v$i"; done; done
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(21).randbytes(4<<20))' >"$d/pat"
disks=(--disk pat="$d/pat")
for v in ublk nbd; do for i in 0 1 2; do disks+=(--disk "$v$i=$d/$v$i"); done; done
exes=()
for p in "$URAID" nbdkit mkfs.xfs xfs_repair blockdev blkdiscard; do
	e=$(command -v "$p") || { fail "$p not found on the host"; t_done; }
	exes+=(--put-exe "$e")
done
PLUG=$(dirname "$URAID")/nbdkit-uraid-plugin.so
[ -f "$PLUG" ] || { fail "no plugin at $PLUG (make all)"; t_done; }
MDVM_CACHE=$CACHE "$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 --smp 2 --mem 1024 \
	"${disks[@]}" "${exes[@]}" --put "$PLUG=/usr/local/bin/nbdkit-uraid-plugin.so" \
	--script "$TOP/tests/integration/ublk_mdvm.job" >"$d/vm.log" 2>&1
rc=$?
cp "$d/vm.log" "$TOP/build/test-logs/ublk_mdvm.vm.log" 2>/dev/null
check "VM ran the job (rc $rc)" [ "$rc" -eq 0 ]
sed -n 's/^T //p' "$d/vm.log"
grep -q '^T not ok' "$d/vm.log" && { T_FAILED=1; grep -E 'uraid:|!!!|fio:|error' "$d/vm.log" | head -30; }
n=$(grep -c '^T ok' "$d/vm.log")
check "all 47 guest checks ran ($n passed)" [ "$n" -eq 47 ]
want=$(md5sum <"$d/pat" | cut -d' ' -f1)
for v in ublk nbd; do
	got=$(sed -n "s/^PATMD5_$v=\([0-9a-f]*\).*/\1/p" "$d/vm.log")
	check "$v: the pattern read back through the device ($got)" [ "$got" = "$want" ]
done
g=$(sed -n 's/^GEOMETRY_ublk=//p' "$d/vm.log")
m=$(sed -n 's/^MDGEOM_ublk=//p' "$d/vm.log")
check "ublk: geometry '$g' (ss pbsz iomin ioopt) as md's for the same members" \
	[ -n "$g" -a "$g" = "$m" ]
check "ublk: io_min 64 KiB (chunk), io_opt 128 KiB (2 data members x chunk)" \
	[ "$(echo $g | cut -d' ' -f3,4)" = "65536 131072" ]
k=$(sed -n 's/^MKFS_ublk=//p' "$d/vm.log")
check "ublk: mkfs.xfs chose the stripe unit/width it chooses on md ($k)" \
	[ -n "$k" -a "$k" = "$(sed -n 's/^MDMKFS_ublk=//p' "$d/vm.log")" ]
check "nbd: 512-byte logical blocks ($(sed -n 's/^GEOMETRY_nbd=//p' "$d/vm.log"))" \
	grep -q '^GEOMETRY_nbd=512 ' "$d/vm.log"
[ "$T_FAILED" -eq 0 ] || tail -40 "$d/vm.log"
t_done
