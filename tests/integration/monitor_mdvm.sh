#!/usr/bin/env bash
# uraid monitor against mdadm --monitor in the kernel judge (shared/mdvm):
# the same arrays (raid5 of 3 + a spare, its ARRAY line asking for 2
# spares; a raid1) and the same steps (--oneshot --test; then a1 fails and
# the spare rebuilds, a1 is removed, wiped and added back, fails again, m1
# stops) on both sides, PROGRAM recording its arguments. The events must
# be the same, in the same order, with the same arguments; only the
# RebuildNN percentages depend on timing (compared as "RebuildNN", one or
# more in a row), and so does the order between a failure and the rebuild
# it starts when one poll sees both.
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
export URAID_RUN_DIR=$T_TMP/run URAID_CONFIG=$T_TMP/u.conf
MON=
cleanup() {
	[ -n "$MON" ] && kill "$MON" 2>/dev/null && wait "$MON" 2>/dev/null
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP
mkdir -p "$d/vm" "$d/h"
for x in a0 a1 a2 a3 b0 b1; do truncate -s 16M "$d/vm/$x"; done
disks=()
for x in a0 a1 a2 a3 b0 b1; do disks+=(--disk "$x=$d/vm/$x"); done
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 300 "${disks[@]}" \
	--script "$TOP/tests/integration/monitor_mdvm.job" >"$d/vm.log" 2>&1 &
vm=$!

# The host side, while the VM boots.
q() { "$URAID" "$@" >/dev/null 2>&1; }
h=$d/h
ev=$h/ev
printf '#!/bin/sh\necho "$#:$*" >>%s\n' "$ev" >"$h/prog"
chmod +x "$h/prog"
q create --level=5 --raid-devices=3 --spare-devices=1 --size=16M --name=r5 --assume-clean --run \
	--no-daemon "$h/a0" "$h/a1" "$h/a2" "$h/a3"
q create --level=1 --raid-devices=2 --size=16M --name=m1 --assume-clean --run --no-daemon \
	"$h/b0" "$h/b1"
{ echo "DEVICE $h/??"; "$URAID" examine --scan "$h"/?? | grep -v spares= |
	sed '/md\/r5 /s/$/ spares=2/'; } >"$URAID_CONFIG"
export URAID_SYNC_SPEED_MIN=100 URAID_SYNC_SPEED_MAX=1500 # as the job's speed limits
q assemble --scan
check "host: r5 and m1 running" bash -c "'$URAID' status r5 >/dev/null && '$URAID' status m1 >/dev/null"
"$URAID" monitor --scan --oneshot --test --program "$h/prog"
mv "$ev" "$h/oneshot"
"$URAID" monitor --scan --delay 1 --program "$h/prog" &
MON=$!
sleep 3
q fail r5 "$h/a1"
sleep 2
for _ in $(seq 300); do "$URAID" status r5 | grep -q recovery || break; sleep 0.1; done
sleep 3
q remove r5 "$h/a1"
truncate -s 0 "$h/a1"; truncate -s 16M "$h/a1" # --zero-superblock
q add r5 "$h/a1"
sleep 3
q fail r5 "$h/a1"
sleep 3
q remove r5 "$h/a1"
q stop m1
sleep 3
kill "$MON"; wait "$MON"; MON=

wait "$vm"
cp "$d/vm.log" "$TOP/build/test-logs/monitor_mdvm.vm.log"
rc=$?
check "VM: mdadm --monitor ran through the steps (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { tail -30 "$d/vm.log" | sed 's/^/# /'; t_done; }
section() { tr -d '\r' <"$d/vm.log" | sed -n "/^=== $1\$/,/^=== END\$/p" | sed '1d;$d'; }
# components by disk name on both sides; RebuildNN runs as one
norm_vm() {
	local s
	s=$(tr -d '\r' <"$d/vm.log" | sed -n 's|^MAP \(/dev/[a-z0-9]*\) \([a-z0-9]*\)$|s#\1$#\2#|p')
	sed -e "$s" | sed -E 's/Rebuild[0-9]{2} /RebuildNN /' | uniq
}
norm_host() { sed -e "s|$h/||" | sed -E 's/Rebuild[0-9]{2} /RebuildNN /' | uniq; }
section ONESHOT | norm_vm >"$d/vm.oneshot"
norm_host <"$h/oneshot" >"$d/host.oneshot"
check "--oneshot --test: the events mdadm sends ($(tr '\n' ' ' <"$d/vm.oneshot"))" \
	diff "$d/vm.oneshot" "$d/host.oneshot"
section EVENTS | norm_vm >"$d/vm.events"
norm_host <"$ev" >"$d/host.events"
# One poll that sees a failure and the rebuild it started reports the
# rebuild first (mdadm checks the sync before the members), so the order
# between the two kinds depends on when the polls fall: each kind is
# compared in its own order.
for kind in member:'-v Rebuild' rebuild:'Rebuild'; do
	k=${kind%%:*} pat=${kind#*:}
	grep $pat "$d/vm.events" >"$d/vm.$k"
	grep $pat "$d/host.events" >"$d/host.$k"
	check "the monitor's $k events through fail, rebuild, remove, add, fail, stop: mdadm's ($(tr '\n' ' ' <"$d/vm.$k"))" \
		diff "$d/vm.$k" "$d/host.$k"
done
check "... a rebuild seen with RebuildStarted, RebuildNN and RebuildFinished" \
	diff <(printf '2:RebuildStarted /dev/md/r5\n2:RebuildNN /dev/md/r5\n2:RebuildFinished /dev/md/r5\n') "$d/vm.rebuild"
t_done
