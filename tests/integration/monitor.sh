#!/usr/bin/env bash
# uraid monitor against running arrays: PROGRAM gets md's events with
# mdadm's arguments (EVENT /dev/md/NAME [COMPONENT]) as members are failed,
# removed, added and rebuilt; --oneshot --test sends a TestMessage per
# array; a degraded array at start is DegradedArray, missing spares
# SparesMissing; a stopped array DeviceDisappeared, a new one NewArray; a
# fake sendmail on PATH gets mdadm's mail for the Fail/Degraded/Test
# events; a spare moves to an array of its spare-group that lost a member.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
export URAID_CONFIG=$T_TMP/u.conf
MON=
cleanup() {
	[ -n "$MON" ] && kill "$MON" 2>/dev/null && wait "$MON" 2>/dev/null
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP
q() { "$URAID" "$@" >/dev/null 2>&1; }
ev=$d/events
printf '#!/bin/sh\necho "$#:$*" >>%s\n' "$ev" >"$d/prog"
chmod +x "$d/prog"
mkdir -p "$d/bin"
printf '#!/bin/sh\n[ "$1" = -t ] || exit 3\nn=$(ls %s/mail.* 2>/dev/null | wc -l)\ncat >%s/mail.$n\n' "$d" "$d" >"$d/bin/sendmail"
chmod +x "$d/bin/sendmail"
q create --level=5 --raid-devices=3 --spare-devices=1 --size=16M --name=r5 --assume-clean --run \
	--no-daemon "$d/a0" "$d/a1" "$d/a2" "$d/a3"
q create --level=1 --raid-devices=2 --size=16M --name=m1 --assume-clean --run --no-daemon \
	"$d/b0" "$d/b1"
q create --level=1 --raid-devices=2 --size=16M --name=m2 --assume-clean --run --no-daemon \
	"$d/c0" "$d/c1"
"$URAID" examine --scan "$d"/[abc]? | grep -v spares >"$d/lines"
{ echo "DEVICE $d/[abc]?"; sed -e '/md\/r5 /s/$/ spares=2/' "$d/lines"; } >"$URAID_CONFIG"
check "config written" grep -q "spares=2" "$URAID_CONFIG"
# slow rebuilds so each step shows
export URAID_SYNC_SPEED_MAX=3000
check "r5 and m1 assembled" bash -c "'$URAID' assemble r5 && '$URAID' assemble m1" 

# 1. --oneshot --test: a TestMessage per array, and SparesMissing for r5
"$URAID" monitor --oneshot --test --program "$d/prog" r5 m1 2>/dev/null
check "--oneshot --test: TestMessage for each array, in mdadm's order (the last named first)" \
	diff <(printf '2:TestMessage /dev/md/m1\n2:TestMessage /dev/md/r5\n2:SparesMissing /dev/md/r5\n') "$ev"
rm -f "$ev"
PATH=$d/bin:$PATH "$URAID" monitor --oneshot --test --mail ops@example.org m1
check "--mail: one mail through sendmail -t" test -s "$d/mail.0"
check "... To: and Subject: as mdadm's" bash -c "grep -qx 'To: ops@example.org' '$d/mail.0' &&
	grep -qx 'Subject: TestMessage event on /dev/md/m1:$(hostname)' '$d/mail.0'"
check "... the body names the event and the device" \
	grep -qx "A TestMessage event had been detected on md device /dev/md/m1." "$d/mail.0"
check "... and carries the arrays' status" grep -q "^m1 : active raid1" "$d/mail.0"
: >"$d/empty.conf"
URAID_CONFIG=$d/empty.conf "$URAID" monitor --scan --oneshot 2>"$d/err"
check "--scan with neither program nor mail is refused, as mdadm" \
	grep -q "No mail address or alert command - not monitoring" "$d/err"
rm -f "$ev"
"$URAID" monitor --oneshot --program "$d/prog" nosuch
check "an array that does not run: DeviceDisappeared, as mdadm for a device it cannot open" \
	diff <(echo "2:DeviceDisappeared /dev/md/nosuch") "$ev"
rm -f "$ev"
"$URAID" monitor --oneshot nosuch >"$d/out"
check "neither program nor mail: the event printed as mdadm prints it ($(cat "$d/out"))" \
	grep -Eqx '[A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2}: DeviceDisappeared on /dev/md/nosuch unknown device' "$d/out"
check_fails "--delay abc refused" q monitor --oneshot --delay abc m1
check_fails "a name breaking the name rule refused" q monitor --oneshot ../x
check_fails "no NAMEs and no --scan refused" q monitor --oneshot
"$URAID" monitor --oneshot m1 >"$d/out"
check "neither program nor mail: no event printed for a healthy array" test ! -s "$d/out"

# 2. Watching r5 and m1 (config PROGRAM, mail for failures) while members
# are failed, removed, added and rebuilt.
echo "PROGRAM $d/prog" >>"$URAID_CONFIG"
echo "MAILADDR root@example.org" >>"$URAID_CONFIG"
rm -f "$d"/mail.*
PATH=$d/bin:$PATH "$URAID" monitor --scan --delay 0.2 &
MON=$!
sleep 1.5
check "started: SparesMissing for r5, DeviceDisappeared for m2 (in the config, not running)" \
	diff <(printf '2:DeviceDisappeared /dev/md/m2\n2:SparesMissing /dev/md/r5\n') "$ev"
wait_ev() { for _ in $(seq 150); do grep -q "$1" "$ev" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
q fail r5 "$d/a1"
check "fail a1: Fail with the component" wait_ev "^3:Fail /dev/md/r5 $d/a1\$"
check "... the spare rebuilds: RebuildStarted" wait_ev "^2:RebuildStarted /dev/md/r5\$"
check "... RebuildNN as the rebuild passes 20% steps" wait_ev "^2:Rebuild[2-3][0-9] /dev/md/r5\$"
check "... RebuildFinished" wait_ev "^2:RebuildFinished /dev/md/r5\$"
check "... SpareActive for a3" wait_ev "^3:SpareActive /dev/md/r5 $d/a3\$"
grep -o 'Rebuild[0-9][0-9]' "$ev" | tr -d Rebuild >"$d/pct"
check "... percentages rising through 20/40/60/80 steps ($(tr '\n' ' ' <"$d/pct"))" \
	bash -c "[ \$(awk '{print int(\$1/20)}' '$d/pct' | uniq | wc -l) = \$(wc -l <'$d/pct') ]"
q remove r5 "$d/a1"
truncate -s 0 "$d/a1"; truncate -s 16M "$d/a1"
q add r5 "$d/a1"
sleep 1
check "remove and add a spare: no event" bash -c "! grep -q ' $d/a1\$' <(grep -v '^3:Fail ' '$ev')"
q fail r5 "$d/a1"
check "fail the spare: FailSpare" wait_ev "^3:FailSpare /dev/md/r5 $d/a1\$"
q remove r5 "$d/a1"
q stop m1
check "stop m1: DeviceDisappeared" wait_ev "^2:DeviceDisappeared /dev/md/m1\$"
q assemble m2
check "m2 starts (not watched yet): NewArray" wait_ev "^2:NewArray /dev/md/m2\$"
q fail m2 "$d/c1"
check "m2 loses c1: Fail" wait_ev "^3:Fail /dev/md/m2 $d/c1\$"
kill "$MON"; wait "$MON"; MON=
check "the monitor stops on SIGTERM" true
ls "$d"/mail.* >"$d/mails" 2>/dev/null
subjects=$(cat $(cat "$d/mails") | sed -n 's/^Subject: \([A-Za-z]*\) event on \([^:]*\):.*/\1 \2/p' | sort | tr '\n' ,)
check "mail for Fail, FailSpare, SparesMissing only ($subjects)" \
	[ "$subjects" = "Fail /dev/md/m2,Fail /dev/md/r5,FailSpare /dev/md/r5,SparesMissing /dev/md/r5," ]
grep -l "Subject: Fail event on /dev/md/r5" $(cat "$d/mails") | head -1 >"$d/fm"
check "... the Fail mail names the component as mdadm's does" \
	grep -qx "It could be related to component device $d/a1." "$(cat "$d/fm")"
q stop m2
q stop r5

# 3. Spare groups: m1 has a spare, m2 lost a member; the monitor moves it.
for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && q stop "$(basename "$s" .sock)"; done
rm -f "$ev" "$d"/[bc]?
q create --level=1 --raid-devices=2 --spare-devices=1 --size=16M --name=g1 --assume-clean --run \
	--no-daemon "$d/b0" "$d/b1" "$d/b2"
q create --level=1 --raid-devices=2 --size=16M --name=g2 --assume-clean --run --no-daemon \
	"$d/c0" "$d/c1"
{ echo "DEVICE $d/[bc]?"; "$URAID" examine --scan "$d"/[bc]? | grep -v spares | sed 's/$/ spare-group=shelf/'
  echo "PROGRAM $d/prog"; } >"$URAID_CONFIG"
q assemble g1; q assemble g2
q fail g2 "$d/c1"; q remove g2 "$d/c1"
"$URAID" monitor --scan --oneshot
check "--oneshot: DegradedArray for g2" grep -qx "2:DegradedArray /dev/md/g2" "$ev"
check "... MoveSpare to g2 from g1" grep -qx "3:MoveSpare /dev/md/g2 /dev/md/g1" "$ev"
check "... g2 has b2 now" bash -c "'$URAID' status g2 | grep -q 'b2\['"
check "... g1 no longer" bash -c "! '$URAID' status g1 | grep -q 'b2\['"

# 4. A check that finds mismatches: RebuildFinished carries mdadm's
# " mismatches found: N (on raid level L)".
rm -f "$ev"
q create --level=1 --raid-devices=2 --size=16M --name=mm --assume-clean --run --no-daemon \
	"$d/m0" "$d/m1"
off=$("$URAID" examine "$d/m1" | sed -n 's/.*Data Offset : \([0-9]*\) sectors.*/\1/p')
dd if=/dev/urandom of="$d/m1" bs=512 seek=$((off + 2048)) count=64 conv=notrunc status=none
q assemble --name mm "$d/m0" "$d/m1"
"$URAID" monitor --delay 0.2 --program "$d/prog" mm &
MON=$!
sleep 1
q check mm
check "check mm: RebuildStarted" wait_ev "^2:RebuildStarted /dev/md/mm\$"
check "... RebuildFinished with the mismatches as its third argument" \
	wait_ev "^3:RebuildFinished /dev/md/mm  mismatches found: [1-9][0-9]* (on raid level 1)\$"
kill "$MON"; wait "$MON"; MON=
q stop mm

# 5. --daemonise --pid-file: the parent returns, the monitor runs on.
rm -f "$ev"
"$URAID" monitor --daemonise --pid-file "$d/mon.pid" --delay 0.2 --program "$d/prog" g1
check "--daemonise returns at once, the pid in --pid-file" test -s "$d/mon.pid"
MON=$(cat "$d/mon.pid")
check "... that process is a uraid monitor" grep -q monitor "/proc/$MON/cmdline"
q stop g1
check "... and reports (DeviceDisappeared g1)" wait_ev "^2:DeviceDisappeared /dev/md/g1\$"
kill "$MON"
for _ in $(seq 50); do [ -e "/proc/$MON" ] || break; sleep 0.1; done
check "... SIGTERM ends it and removes its pid file" test ! -e "$d/mon.pid"
MON=
t_done
