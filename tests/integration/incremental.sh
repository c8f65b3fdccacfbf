#!/usr/bin/env bash
# Incremental assembly (mdadm --incremental): members arrive one at a time;
# the array starts once every slot has one, not before; --run starts it
# degraded; --run --scan starts what is pending; a member arriving for a
# running array is added to it; the names come from the config's ARRAY
# line when it lists the UUID.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
export URAID_CONFIG=$T_TMP/none.conf
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP
printf '' >"$URAID_CONFIG"
q() { "$URAID" "$@" >/dev/null 2>&1; }
q create --level=5 --raid-devices=3 --spare-devices=1 --size=8M --name=inc --assume-clean \
	--run --no-daemon "$d/i0" "$d/i1" "$d/i2" "$d/i3"
q create --level=1 --raid-devices=2 --size=8M --name=deg --assume-clean --run --no-daemon \
	"$d/g0" "$d/g1"
check "arrays made" test -s "$d/g1"
running() { "$URAID" status "$1" >/dev/null 2>&1; }

"$URAID" incremental "$d/i0" 2>"$T_TMP/err"
check "first member: attached, not started" grep -q "attached to inc, not enough to start (1 of 3)" "$T_TMP/err"
check "... not running" check_fails_q running inc
check "... recorded in RUN/inc.incremental" grep -q "member=$d/i0" "$URAID_RUN_DIR/inc.incremental"
"$URAID" assemble --incremental "$d/i0" 2>"$T_TMP/err"
check "the same member again (a repeated udev event): still 1 of 3" grep -q "(1 of 3)" "$T_TMP/err"
check "spare: attached, still not enough" bash -c "'$URAID' incremental '$d/i3' 2>&1 | grep -q '(1 of 3)'"
check "second member: 2 of 3" bash -c "'$URAID' incremental '$d/i1' 2>&1 | grep -q '(2 of 3)'"
check "... still not running (no --run)" check_fails_q running inc
"$URAID" incremental "$d/i2" 2>"$T_TMP/err"
check "third member: started" grep -q "attached to inc, which has been started" "$T_TMP/err"
"$URAID" status inc >"$T_TMP/st"
check "... [3/3] with the spare" grep -q '\[3/3\]' "$T_TMP/st"
check "... i3 is its spare" grep -q 'i3\[3\](S)' "$T_TMP/st"
check "... the record is gone" test ! -e "$URAID_RUN_DIR/inc.incremental"
q fail inc "$d/i3"
q remove inc "$d/i3"
"$URAID" incremental "$d/i3" 2>"$T_TMP/err"
check "a member arriving for a running array is added to it" grep -q "added to inc, which was already running" "$T_TMP/err"
check "... as its spare again" bash -c "'$URAID' status inc | grep -q 'i3\[[0-9]*\](S)'"
q stop inc

# --run: degraded start as soon as possible
check "deg: one of two members, --run: started degraded" \
	bash -c "'$URAID' incremental --run '$d/g0' 2>&1 | grep -q 'which has been started'"
check "... [2/1]" bash -c "'$URAID' status deg | grep -q '\[2/1\]'"
q stop deg
# --run --scan: what is pending starts
check "deg again without --run: pending" bash -c "'$URAID' incremental '$d/g1' 2>&1 | grep -q '(1 of 2)'"
check "incremental --run --scan starts it" bash -c "'$URAID' incremental --run --scan 2>&1 | grep -q 'deg has been started'"
check "... running" running deg
q stop deg
# The config's ARRAY line names it.
u=$("$URAID" examine "$d/g0" | sed -n 's/.*Array UUID : //p')
printf 'ARRAY /dev/md/mirror UUID=%s\n' "$u" >"$URAID_CONFIG"
check "with an ARRAY line for its UUID the array gathers as 'mirror'" \
	bash -c "'$URAID' incremental '$d/g0' 2>&1 | grep -q 'attached to mirror'"
# Bad input: no superblock, missing file, a name clash.
truncate -s 8M "$d/plain"
check_fails "a device without md superblock is refused" q incremental "$d/plain"
"$URAID" incremental "$d/plain" 2>"$T_TMP/err"
check "... saying so" grep -q "no md superblock" "$T_TMP/err"
check_fails "a missing device is refused" q incremental "$d/nope"
check_fails "--scan without --run is refused" q incremental --scan
check_fails "two devices at once are refused" q incremental "$d/g0" "$d/g1"
q create --level=1 --raid-devices=2 --size=8M --name=mirror --assume-clean --run --no-daemon \
	"$d/x0" "$d/x1"
"$URAID" incremental "$d/x0" 2>"$T_TMP/err"
check "another array with the name being gathered is refused" grep -q "give the arrays distinct names" "$T_TMP/err"
check "... the record still lists only g0" bash -c "[ \$(grep -c member= '$URAID_RUN_DIR/mirror.incremental') = 1 ]"
# Members arriving together (udev events in parallel): the flock on the
# run directory queues them; the array starts once, with all of them.
printf '' >"$URAID_CONFIG"
q create --level=5 --raid-devices=3 --size=8M --name=par --assume-clean --run --no-daemon \
	"$d/p0" "$d/p1" "$d/p2"
for x in p0 p1 p2; do
	URAID_INCREMENTAL_HOLD_MS=300 "$URAID" incremental "$d/$x" 2>"$T_TMP/par.$x" &
done
wait
check "three at once: exactly one of them started it" \
	[ "$(cat "$T_TMP"/par.p? | grep -c 'which has been started')" = 1 ]
check "... with all three members [3/3]" bash -c "'$URAID' status par | grep -q '\[3/3\]'"
check "... no record left" test ! -e "$URAID_RUN_DIR/par.incremental"
q stop par
# A malformed configuration: refused naming the line, nothing recorded.
rm -f "$URAID_RUN_DIR"/*.incremental
printf 'DEVICE %s/*\nARRAY /dev/md/mirror UUID=%s colour=red\n' "$d" "$u" >"$URAID_CONFIG"
"$URAID" incremental "$d/g1" 2>"$T_TMP/err"
check "a malformed config line: refused with file and line" grep -q "$URAID_CONFIG:2: unknown ARRAY tag 'colour'" "$T_TMP/err"
check "... nothing recorded" bash -c "! ls '$URAID_RUN_DIR'/*.incremental 2>/dev/null"
t_done
