#!/usr/bin/env bash
# examine --scan / detail --scan against mdadm in the kernel judge
# (shared/mdvm): on arrays uraid made (1.2 raid5, 1.0 raid1 with a spare,
# 0.90 raid1) mdadm --examine --scan prints exactly what uraid examine
# --scan prints; mdadm --assemble --scan takes uraid's lines as its
# mdadm.conf and starts all three; mdadm --detail --scan then prints the
# lines uraid detail --scan prints for the same arrays (the 1.x ones: md
# names a 0.90 array by its minor, uraid by its run name).
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
export URAID_RUN_DIR=$T_TMP/run URAID_CONFIG=$T_TMP/none.conf
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP
q() { "$URAID" "$@" >/dev/null 2>&1; }
q create --level=5 --raid-devices=3 --size=16M --name=alpha --assume-clean --run --no-daemon \
	"$d/a0" "$d/a1" "$d/a2"
q create --level=1 --raid-devices=2 --spare-devices=1 --metadata=1.0 --size=16M --name=beta \
	--assume-clean --run --no-daemon "$d/b0" "$d/b1" "$d/b2"
q create --level=1 --raid-devices=3 --metadata=0.90 --size=16M --assume-clean --run --no-daemon \
	"$d/c0" "$d/c1" "$d/c2"
m=("$d/a0" "$d/a1" "$d/a2" "$d/b0" "$d/b1" "$d/b2" "$d/c0" "$d/c1" "$d/c2")
"$URAID" examine --scan "${m[@]}" >"$d/uraid.conf"
check "uraid examine --scan: three arrays" [ "$(grep -c ^ARRAY "$d/uraid.conf")" = 3 ]
disks=()
for f in "${m[@]}"; do disks+=(--disk "$(basename "$f")=$f"); done
{ echo "HOMEHOST=$(hostname)"; cat "$TOP/tests/integration/scan_mdvm.job"; } >"$d/job.sh"
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 "${disks[@]}" \
	--put "$d/uraid.conf=/data/uraid.conf" --script "$d/job.sh" >"$d/vm.log" 2>&1
rc=$?
check "VM: mdadm assembled the arrays from uraid's lines (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { tail -30 "$d/vm.log" | sed 's/^/# /'; t_done; }
section() { tr -d '\r' <"$d/vm.log" | sed -n "/^=== $1\$/,/^=== END\$/p" | sed '1d;$d'; }
section EXAMINE >"$d/mdadm.examine"
check "mdadm --examine --scan prints what uraid examine --scan prints" \
	diff "$d/mdadm.examine" "$d/uraid.conf"
map=$(tr -d '\r' <"$d/vm.log" | sed -n 's|^MAP \(/dev/[a-z0-9]*\) \([a-z0-9]*\)$|s#\1\\b#\2#g|p')
section VERBOSE | sed -e "$map" >"$d/mdadm.verbose"
"$URAID" examine --scan --verbose "${m[@]}" | sed -e "s#$d/##g" >"$d/uraid.verbose"
check "--verbose too (level=, num-devices=, spares and devices, newest first)" \
	diff "$d/mdadm.verbose" "$d/uraid.verbose"
check "mdadm started all three from uraid's lines" \
	[ "$(tr -d '\r' <"$d/vm.log" | grep -c 'has been started with')" = 3 ]
section DETAIL | grep -v metadata=0.90 | sort >"$d/mdadm.detail"
printf 'DEVICE %s/[abc]?\n' "$d" >"$d/u.conf"
cat "$d/uraid.conf" >>"$d/u.conf"
q assemble --config "$d/u.conf" --scan
"$URAID" detail --scan | grep -v metadata=0.90 | sort >"$d/uraid.detail"
check "uraid detail --scan prints mdadm --detail --scan's lines (1.x arrays)" \
	diff "$d/mdadm.detail" "$d/uraid.detail"
t_done
