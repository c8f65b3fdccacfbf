#!/usr/bin/env bash
# scripts/bench-scale --smoke runs end to end (root with FUSE and loop
# devices, or the kernel's ublk/nbd): its table has a row for the attached
# device, the NBD export, nbdkit memory and each CPU count, every cell a
# positive number. The figures themselves mean nothing at this size.
source "$(dirname "$0")/../lib.sh"
if [ "$(id -u)" -ne 0 ] || ! command -v fio >/dev/null; then
	echo "ok - # SKIP needs root and fio"
	t_done
fi
URAID=$URAID "$TOP/scripts/bench-scale" --smoke >"$T_TMP/out" 2>"$T_TMP/err"
rc=$?
check "bench-scale --smoke exits 0 (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || cat "$T_TMP/err"
cat "$T_TMP/out"
num='[0-9][0-9.]*'
check "a row for the attached device, four figures" \
	grep -Eq "^\| uraid (ublk|nbd|fuse) /dev/[a-z]+[0-9]+ \| $num \| $num \| $num \| $num \|$" "$T_TMP/out"
check "a row for the NBD export" grep -Eq "^\| uraid NBD export .*\| $num \| $num \| $num \| $num \|$" "$T_TMP/out"
check "a row for nbdkit memory" grep -Eq "^\| nbdkit memory .*\| $num \| $num \| $num \| $num \|$" "$T_TMP/out"
n=$(nproc)
check "a RAID5 write row per CPU count up to $n" \
	grep -Eq "^\| RAID5 write, $n CPUs? \([a-z]+\) \| $num \|" "$T_TMP/out"
check "no zero figure" sh -c '! grep -E "\| 0(\.0)? \|" "$1"' sh "$T_TMP/out"
check "nothing left attached or running" sh -c '! ls /dev/shm/uraid-bench-scale.* >/dev/null 2>&1'
t_done
