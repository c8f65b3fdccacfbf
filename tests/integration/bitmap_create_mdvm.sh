#!/usr/bin/env bash
# uraid create --bitmap=internal in the real kernel (shared/mdvm): the
# members' bitmap and layout match what the VM's mdadm 4.2 makes with the
# same options; md assembles uraid's array with the bitmap, writes to it,
# finds mismatch_cnt 0, and after a clean stop the bitmap has 0 dirty bits
# and the superblock's events.
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
d=$T_TMP/img
mkdir -p "$d"
disks=()
for i in 0 1 2 3; do
	disks+=(--disk "u$i=$d/u$i" --disk "r$i=$d/r$i")
	truncate -s 24M "$d/r$i"
done
check "uraid create raid5 --bitmap=internal --bitmap-chunk=64K" \
	"$URAID" create --level=5 --raid-devices=4 --size=24M --bitmap=internal \
	--bitmap-chunk=64K --no-daemon "$d/u0" "$d/u1" "$d/u2" "$d/u3"
for i in 0 1; do
	disks+=(--disk "v$i=$d/v$i" --disk "s$i=$d/s$i")
	truncate -s 40M "$d/s$i"
done
check "uraid create raid1 --metadata=1.1 --bitmap=internal (default chunk)" \
	"$URAID" create --level=1 --raid-devices=2 --metadata=1.1 --size=40M --bitmap=internal \
	--no-daemon "$d/v0" "$d/v1"
"$MDVM" --snapshot --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 "${disks[@]}" \
	--script "$TOP/tests/integration/bitmap_create_mdvm.job" >"$T_TMP/vm.log" 2>&1
rc=$?
check "VM job ran (rc $rc)" [ "$rc" -eq 0 ]
u=$(sed -n 's/^URAID //p' "$T_TMP/vm.log")
m=$(sed -n 's/^MDADM //p' "$T_TMP/vm.log")
echo "$u" | sed 's/^/# uraid: /'
echo "$m" | sed 's/^/# mdadm: /'
for f in "Internal Bitmap" "Bad Block Log" "Data Offset" "Avail Dev Size" Chunksize Bitmap \
	"Sync Size"; do
	uv=$(echo "$u" | grep "^$f :")
	mv=$(echo "$m" | grep "^$f :")
	check "$f as mdadm makes it (${uv#*: })" [ -n "$uv" -a "$uv" = "$mv" ]
done
u=$(sed -n 's/^URAID1 //p' "$T_TMP/vm.log")
m=$(sed -n 's/^MDADM1 //p' "$T_TMP/vm.log")
for f in "Internal Bitmap" "Bad Block Log" "Data Offset" "Avail Dev Size" Chunksize Bitmap \
	"Sync Size"; do
	uv=$(echo "$u" | grep "^$f :")
	mv=$(echo "$m" | grep "^$f :")
	check "raid1 1.1: $f as mdadm makes it (${uv#*: })" [ -n "$uv" -a "$uv" = "$mv" ]
done
check "md assembled uraid's raid1 1.1 with its bitmap" grep -q '^MDSTAT_BITMAP1=1' "$T_TMP/vm.log"
check "md assembled with uraid's bitmap" grep -q '^MDSTAT_BITMAP=1' "$T_TMP/vm.log"
check "kernel mismatch_cnt=0 after writes" grep -q '^mismatch_cnt=0' "$T_TMP/vm.log"
check "clean stop: 0 dirty bits" grep -Eq '^AFTER +Bitmap : [0-9]+ bits \(chunks\), 0 dirty' \
	"$T_TMP/vm.log"
ev=$(sed -n 's/^SB_EVENTS=//p' "$T_TMP/vm.log")
check "clean stop: bitmap events = superblock events ($ev)" \
	grep -Eq "^AFTER +Events : $ev\$" "$T_TMP/vm.log"
check "kernel did not call the bitmap stale or corrupt" \
	sh -c "! grep -Eiq 'bitmap.*(out of date|stale|corrupt|invalid|mismatch)' '$T_TMP/vm.log'"
[ "$rc" -eq 0 ] || grep -E 'mdadm:|md/|md0|bitmap|!!!' "$T_TMP/vm.log" | head -30
t_done
