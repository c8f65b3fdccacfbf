#!/usr/bin/env bash
# The array verbs end to end through the CLI and the daemon: create, status,
# write/cat through the control socket, fail, add + rebuild, check, stop,
# assemble (stale member left out), and bad input refused with nothing written.
# The raid5 is filled with random data first, so a rebuild that skipped part
# of the new member (its tail above all) leaves mismatches and wrong reads
# with another member missing, where zeros would have checked as consistent.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
D=$T_TMP/d
mkdir -p "$D"
cleanup() { for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done; rm -rf "$T_TMP"; }
trap cleanup EXIT

# wait_idle NAME: until no resync/recovery/check runs (30 s at most)
wait_idle() {
	for _ in $(seq 300); do
		"$URAID" status --json "$1" | grep -q '"action":"idle"' && return 0
		sleep 0.1
	done
	return 1
}

check "create raid5 on 4 new 16M files" "$URAID" create --level=5 --raid-devices=4 --chunk=64K \
	--size=16M --name=t5 "$D"/m0 "$D"/m1 "$D"/m2 "$D"/m3
check "initial resync finishes" wait_idle t5
"$URAID" status t5 >"$T_TMP/st"
check "status: mdstat line" grep -q '^t5 : active raid5 m3\[3\] m2\[2\] m1\[1\] m0\[0\]' "$T_TMP/st"
check "status: [4/4] [UUUU]" grep -q '\[4/4\] \[UUUU\]' "$T_TMP/st"
size=$("$URAID" status --json t5 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["array_bytes"])')
check "array size 3 x 15 MiB data" [ "$size" -ge $((3 * 14 * 1048576)) ]

head -c "$size" /dev/urandom >"$T_TMP/want"
check "fill the whole array with random data" "$URAID" write t5 --offset 0 <"$T_TMP/want"
head -c 5M /dev/urandom >"$T_TMP/data"
check "write 5 MiB at 1 MiB" "$URAID" write t5 --offset 1M <"$T_TMP/data"
dd if="$T_TMP/data" of="$T_TMP/want" bs=1M seek=1 conv=notrunc status=none
check "cat NAME returns it" cmp -s "$T_TMP/data" <("$URAID" cat --offset 1M --length 5M t5)
check "check after writes: 0 mismatches" grep -qx "mismatch_cnt 0" <("$URAID" check t5)

check "fail m1" "$URAID" fail t5 "$D"/m1
"$URAID" status t5 >"$T_TMP/st"
check "status degraded [4/3] [U_UU], m1 (F)" grep -q 'm1\[1\](F).*' "$T_TMP/st"
check "status shows [U_UU]" grep -q '\[4/3\] \[U_UU\]' "$T_TMP/st"
check "degraded read returns the data" cmp -s "$T_TMP/data" <("$URAID" cat --offset 1M --length 5M t5)
check_fails "failing a second member of raid5 refused" "$URAID" fail t5 "$D"/m2
head -c 1M /dev/urandom >"$T_TMP/data2"
check "degraded write" "$URAID" write t5 --offset 20M <"$T_TMP/data2"
dd if="$T_TMP/data2" of="$T_TMP/want" bs=1M seek=20 conv=notrunc status=none
want_md5=$(md5sum <"$T_TMP/want" | cut -d' ' -f1)

truncate -s 16M "$D"/m4
check "add m4" "$URAID" add t5 "$D"/m4
check "rebuild finishes" wait_idle t5
"$URAID" status t5 >"$T_TMP/st"
check "rebuilt: [4/4] [UUUU]" grep -q '\[4/4\] \[UUUU\]' "$T_TMP/st"
check "after rebuild: 0 mismatches" grep -qx "mismatch_cnt 0" <("$URAID" check t5)
check "after rebuild: the whole array as written" \
	[ "$("$URAID" cat t5 | md5sum | cut -d' ' -f1)" = "$want_md5" ]
# a file named like the running array in the working directory does not
# shadow it; ./t5 names the file
mkdir "$T_TMP/cwd" && echo shadow >"$T_TMP/cwd/t5"
check "cat t5 beside a file t5 reads the running array" \
	sh -c 'cd "$1" && [ "$("$2" cat t5 | md5sum | cut -d" " -f1)" = "$3" ]' sh "$T_TMP/cwd" "$URAID" "$want_md5"
check_fails "cat ./t5 reads the file (not a member)" \
	sh -c 'cd "$1" && "$2" cat ./t5 >/dev/null 2>&1' sh "$T_TMP/cwd" "$URAID"
"$URAID" detail t5 >"$T_TMP/detail"
check "detail lists m4 in slot 1" grep -Eq '^ +4 +0 +0 +1 +active sync +.*/m4$' "$T_TMP/detail"
check "remove the failed m1" "$URAID" remove t5 "$D"/m1
check_fails "create over members of a running array refused" "$URAID" create --level=1 \
	--raid-devices=2 --name=x "$D"/m0 "$D"/m2
check "stop" "$URAID" stop t5
check "socket gone after stop" [ ! -e "$URAID_RUN_DIR/t5.sock" ]

# Offline: the members read directly (m1 is stale now), degraded too.
check "offline cat of the stopped array" cmp -s "$T_TMP/data" \
	<("$URAID" cat --offset 1M --length 5M "$D"/m0 "$D"/m2 "$D"/m3 "$D"/m4)
check "offline cat without m3" cmp -s "$T_TMP/data2" \
	<("$URAID" cat --offset 20M --length 1M "$D"/m0 "$D"/m2 "$D"/m4)
check "offline cat without m0: the rebuilt m4 serves the whole array" \
	[ "$("$URAID" cat "$D"/m2 "$D"/m3 "$D"/m4 | md5sum | cut -d' ' -f1)" = "$want_md5" ]
"$URAID" assemble "$D"/m0 "$D"/m1 "$D"/m2 "$D"/m3 "$D"/m4 2>"$T_TMP/err"
rc=$?
check "assemble with the stale m1 among the members" [ $rc -eq 0 ]
check "assemble warns about m1" grep -q 'm1' "$T_TMP/err"
check "assembled under its name t5" [ -e "$URAID_RUN_DIR/t5.sock" ]
"$URAID" status t5 >"$T_TMP/st"
check "re-assembled: [4/4] [UUUU]" grep -q '\[4/4\] \[UUUU\]' "$T_TMP/st"
check "data survives stop/assemble" cmp -s "$T_TMP/data" <("$URAID" cat --offset 1M --length 5M t5)
check "stop again" "$URAID" stop t5

# Unclean stop: a daemon killed right after a write leaves the superblocks
# "active", so the next assembly resyncs; killed after the idle period (the
# array is marked clean when writes stop) it does not.
daemon_pid() { sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' "$T_TMP/err" | tail -1; }
"$URAID" create --level=1 --raid-devices=2 --size=8M --name=cr "$D"/c0 "$D"/c1 2>"$T_TMP/err"
wait_idle cr
pid=$(daemon_pid)
head -c 1M /dev/urandom | "$URAID" write cr --offset 0
kill -9 "$pid"; sleep 0.3
rm -f "$URAID_RUN_DIR/cr.sock"
sb_resync() { dd if="$1" bs=4096 skip=1 count=1 status=none | od -An -tx1 -j 208 -N 8 | tr -d ' \n'; }
check "killed while writing: superblock says active (resync_offset 0)" [ "$(sb_resync "$D"/c0)" = 0000000000000000 ]
"$URAID" assemble "$D"/c0 "$D"/c1 2>"$T_TMP/err"
check "resync after crash completes" wait_idle cr
check "after the resync: mirrors identical" cmp -s <(tail -c +1048577 "$D"/c0) <(tail -c +1048577 "$D"/c1)
"$URAID" status --json cr >"$T_TMP/st.json"
pid=$(daemon_pid)
head -c 1M /dev/urandom | "$URAID" write cr --offset 0
sleep 3
kill -9 "$pid"; sleep 0.3
rm -f "$URAID_RUN_DIR/cr.sock"
check "idle array was marked clean on disk (resync_offset all ones)" [ "$(sb_resync "$D"/c0)" = ffffffffffffffff ]
"$URAID" assemble "$D"/c0 "$D"/c1 2>"$T_TMP/err"
check "after an idle-period kill no resync runs" grep -q '"action":"idle"' <("$URAID" status --json cr)
# NAME.pid: the daemon's pid (the one a kill -9 left replaced), gone at stop
check "the run directory's cr.pid names the daemon ($(daemon_pid))" \
	[ "$(cat "$URAID_RUN_DIR/cr.pid" 2>&1)" = "$(daemon_pid)" ]
check "stop cr" "$URAID" stop cr
check "stop removes cr.pid" [ ! -e "$URAID_RUN_DIR/cr.pid" ]
# lib.sh's teardown stops the daemons of the test's run directories by
# those pids: a shell that assembles cr and exits leaves none running.
bash -c 'source "$1/tests/lib.sh"; export URAID_RUN_DIR=$T_TMP/run
	"$URAID" assemble --name=cr "$2"/c0 "$2"/c1 2>/dev/null && cat "$URAID_RUN_DIR/cr.pid"' \
	- "$TOP" "$D" >"$T_TMP/child.pid"
cpid=$(cat "$T_TMP/child.pid")
check "a test's exit stops the daemon it left (pid ${cpid:-none})" \
	sh -c '[ -n "$1" ] && ! tr "\0" " " <"/proc/$1/cmdline" 2>/dev/null | grep -q "^uraid daemon cr "' \
	- "$cpid"

# raid1 and raid10 through the same path, with --no-daemon
check "create raid1 --no-daemon" "$URAID" create --level=1 --raid-devices=2 --size=8M --no-daemon \
	--name=r1 "$D"/r1a "$D"/r1b
check "raid1 members identical after the initial sync (past the superblock)" \
	cmp -s <(tail -c +1048577 "$D"/r1a) <(tail -c +1048577 "$D"/r1b)

# Bad input: refused, a message naming the problem, nothing written.
(cd "$D" && sha256sum m0 m2 m3 m4) >"$T_TMP/sums"
bad() {
	local name=$1 re=$2; shift 2
	if "$URAID" create "$@" 2>"$T_TMP/err"; then
		fail "$name: accepted"
	elif grep -Eqi "$re" "$T_TMP/err"; then
		ok "$name: refused ($(tr '\n' ' ' <"$T_TMP/err" | head -c 150))"
	else
		fail "$name: message does not name the problem: $(cat "$T_TMP/err")"
	fi
}
bad "unknown level" "level" --level=7 --raid-devices=3 --size=8M "$D"/n0 "$D"/n1 "$D"/n2
bad "chunk 3K" "chunk" --level=5 --raid-devices=3 --chunk=3K --size=8M "$D"/n0 "$D"/n1 "$D"/n2
bad "too few members for raid6" "at least 4|too few|members" --level=6 --raid-devices=3 --size=8M \
	"$D"/n0 "$D"/n1 "$D"/n2
bad "member count differs from raid-devices" "need 4|enough devices" --level=5 --raid-devices=4 --size=8M \
	"$D"/n0 "$D"/n1 "$D"/n2
bad "member too small" "too small|no room" --level=5 --raid-devices=3 --size=64K "$D"/n0 "$D"/n1 "$D"/n2
bad "unknown layout" "layout" --level=5 --raid-devices=3 --layout=sideways --size=8M "$D"/n0 "$D"/n1 "$D"/n2
bad "member of 8K too small" "too small|no room" --level=5 \
	--raid-devices=3 --size=8K "$D"/n0 "$D"/n1 "$D"/n2
check "refused creates left no new files" sh -c '[ ! -e "$1" ] && [ ! -e "$2" ]' sh "$D"/n0 "$D"/n1
check "refused creates changed no member" cmp -s "$T_TMP/sums" <(cd "$D" && sha256sum m0 m2 m3 m4)
t_done
