#!/usr/bin/env bash
# uraid grow --level on running arrays: md's takeovers that move no data
# (raid1 <-> raid5 of 2; raid0 -> raid5 --layout=parity-last, a spare recovered as
# parity; raid5 -> raid6 --layout=preserve (--force without a spare, as
# mdadm wants), Q recovered; raid6 -> raid5, Q
# member a spare; raid5 -> raid0 once the parity slot is empty, and with
# the parity member there (failed out; a left-symmetric one restriped to
# parity-last first), raid4 -> raid0; raid0 ->
# raid10 near-2, mirrors recovered; raid10 -> raid0, one of each pair
# removed). Content compared after each, `uraid check` clean; md's
# refusals (a data member missing, spares in a raid0, raid1 of 3 -> raid5,
# the wrong layout) write nothing; a linear array grows by --add.
source "$(dirname "$0")/../lib.sh"
d=$T_TMP/g
mkdir -p "$d"
cd "$d" || exit 1
export URAID_RUN_DIR=$T_TMP/run
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
idle() {
	for _ in $(seq 300); do
		"$URAID" detail "$1" | grep -Eq 'Resync Status|Rebuild Status' || return 0
		sleep 0.1
	done
	return 1
}
same() { "$URAID" cat "$1" --length 8M | cmp -s - data; }
clean() { [ "$("$URAID" check "$1")" = "mismatch_cnt 0" ]; }
line() { "$URAID" status | grep -A1 "^$1 :" | tail -1; }
state() { "$URAID" status | grep "^$1 :"; }
head -c 8M /dev/urandom >data
truncate -s 16M m0 m1 m2 m3 m4 m5 s0 s1 s2

"$URAID" create --level=1 --raid-devices=2 --name=A1 --run s0 s1 >/dev/null 2>&1
idle A1
"$URAID" write A1 <data
check "raid1 of 2 -> raid5" "$URAID" grow A1 --level=5
check "raid5 of 2, left-symmetric, 64K chunk" grep -q 'level 5, 64k chunk, algorithm 2 \[2/2\]' \
	<<<"$(line A1)"
check "raid5 of 2: content" same A1
check "raid5 of 2: check clean" clean A1
check "raid5 of 2 -> raid1" "$URAID" grow A1 --level=1
check "raid1 again: content" same A1
"$URAID" add A1 "$d/s2"
"$URAID" grow A1 --raid-devices=3 >/dev/null 2>&1
idle A1
sleep 2.5
sums=$(md5sum s0 s1 s2)
check_fails "raid1 of 3 -> raid5 refused (needs a reshape)" "$URAID" grow A1 --level=5
check "refusal wrote nothing" [ "$sums" = "$(md5sum s0 s1 s2)" ]
"$URAID" stop A1

"$URAID" create --level=0 --raid-devices=2 --name=A0 --run m0 m1 >/dev/null 2>&1
"$URAID" write A0 <data
check_fails "raid0 -> raid5 left-symmetric (mdadm's default) needs a reshape" \
	"$URAID" grow A0 --level=5
check "raid0 -> raid5 --layout=parity-last" "$URAID" grow A0 --level=5 --layout=parity-last
check "raid5 parity-last with the parity slot missing" \
	grep -q 'algorithm 5 \[3/2\] \[UU_\]' <<<"$(line A0)"
check "degraded raid5: content" same A0
"$URAID" add A0 "$d/m2"
idle A0
check "parity recovered onto the spare" grep -q '\[3/3\] \[UUU\]' <<<"$(line A0)"
check "raid5 from raid0: check clean" clean A0
check_fails "raid5 -> raid6 with a layout that is not the -6 twin: a reshape" \
	"$URAID" grow A0 --level=6 --layout=left-symmetric
check_fails "raid5 -> raid6 --layout=preserve without a spare needs --force (mdadm)" \
	"$URAID" grow A0 --level=6 --layout=preserve
check "raid5 -> raid6 --layout=preserve --force" "$URAID" grow A0 --level=6 --layout=preserve \
	--force
check "raid6 with Q missing" grep -q 'level 6, .*\[4/3\] \[UUU_\]' <<<"$(line A0)"
"$URAID" add A0 "$d/m3"
idle A0
check "Q recovered" grep -q '\[4/4\] \[UUUU\]' <<<"$(line A0)"
check "raid6: content" same A0
check "raid6: check clean" clean A0
check "raid6 -> raid5" "$URAID" grow A0 --level=5
check "the Q member is a spare" grep -q 'm3\[[0-9]*\](S)' <<<"$(state A0)"
check "raid5 from raid6: content" same A0
check "raid5 from raid6: check clean" clean A0
"$URAID" remove A0 "$d/m3"
"$URAID" fail A0 "$d/m2"
"$URAID" remove A0 "$d/m2"
check "raid5 without its parity member -> raid0" "$URAID" grow A0 --level=0
check "raid0 of 2" grep -q '^A0 : active raid0' <<<"$(state A0)"
check "raid0 from raid5: content" same A0
check "raid0 -> raid10" "$URAID" grow A0 --level=10
check "raid10 near-2 with the mirrors missing" \
	grep -q '2 near-copies \[4/2\] \[U_U_\]' <<<"$(line A0)"
"$URAID" add A0 "$d/m4"
"$URAID" add A0 "$d/m5"
idle A0
check "mirrors recovered" grep -q '\[4/4\] \[UUUU\]' <<<"$(line A0)"
check "raid10: content" same A0
check "raid10: check clean" clean A0
check "raid10 -> raid0 (mdadm's removal of one of each pair)" "$URAID" grow A0 --level=0
check "raid0 of 2 again" grep -q '^A0 : active raid0' <<<"$(state A0)"
check "raid0 from raid10: content" same A0
"$URAID" add A0 "$d/m2" >/dev/null 2>&1
check_fails "raid0 -> raid6 refused (md has no such takeover)" "$URAID" grow A0 --level=6 \
	--layout=preserve
"$URAID" stop A0
check "mdadm --examine reads the raid0" grep -q 'Raid Level : raid0' <<<"$(mdadm --examine m0)"

# linear: --add appends a member (md's linear hot-add).
truncate -s 8M l0 l1 l2
"$URAID" create --level=linear --raid-devices=2 --name=AL --run l0 l1 >/dev/null 2>&1
"$URAID" write AL <data
size0=$("$URAID" detail AL | sed -n 's/^ *Array Size : \([0-9]*\).*/\1/p')
check_fails "linear --raid-devices=4 with one --add refused" \
	"$URAID" grow AL --add "$d/l2" --raid-devices=4
check "linear --add" "$URAID" grow AL --add "$d/l2"
size1=$("$URAID" detail AL | sed -n 's/^ *Array Size : \([0-9]*\).*/\1/p')
check "linear grew by the new member ($size0 -> $size1 K)" [ "$size1" -gt $((size0 + 7000)) ]
check "linear: old content" same AL
head -c 1M /dev/urandom >tail
"$URAID" write AL --offset $(((size1 - 1024) * 1024)) <tail
"$URAID" stop AL
check "linear of 3 assembles" sh -c "'$URAID' assemble l0 l1 l2 >/dev/null 2>&1"
check "linear: the appended member's data after assembly" sh -c \
	"'$URAID' cat AL --offset $(((size1 - 1024) * 1024)) --length 1M | cmp -s - tail"
check "mdadm --examine: slot 2 of 3" grep -q 'Active device 2' <<<"$(mdadm --examine l2)"
"$URAID" stop AL

# mdadm's refusals before any change (Grow_reshape, analyse_change,
# Grow_addbitmap, mdadm.c's option parsing; cli/cmd_grow_refuse.c): every
# row of grow_refuse.table, its exit status and each line printed as the
# table has them (grow_meta_mdvm.sh checks the same rows against mdadm 4.2
# in the guest), no member changed.
source "$TOP/tests/integration/grow_refuse.bash"
mkdir -p "$d/r"
cd "$d/r" || exit 1
check "the table's arrays created" gr_arrays
sleep 2.5 # marked clean after 2 s idle
sums=$(md5sum ./*)
gr_run_uraid >"$T_TMP/gr.out"
gr_compare "$T_TMP/gr.out" u "uraid grow"
check "no member changed by the refusals" [ "$sums" = "$(md5sum ./*)" ]
gr_stop
cd "$d" || exit 1
truncate -s 8M x5a x5b x5c
"$URAID" create --level=5 --raid-devices=3 --name=R5 --run x5a x5b x5c >/dev/null 2>&1
idle R5
refuse() { # ARRAY "mdadm's words" OPTIONS...
	local a=$1 w=$2 out rc=0
	shift 2
	out=$("$URAID" grow "$a" "$@" 2>&1) || rc=$?
	check "$a $* refused: $w" sh -c '[ "$1" -ne 0 ] && printf %s "$2" | grep -qF -- "$3"' _ "$rc" "$out" "$w"
}
# mdadm's freeze(): a check running (slowed down) refuses every change.
"$URAID" sync-speed --min=100 --max=100 R5
"$URAID" action R5 check
refuse R5 "R5 is performing resync/recovery and cannot be reshaped" --chunk=64K
refuse R5 "R5 is performing resync/recovery and cannot be taken over" --level=6 --force
"$URAID" action R5 idle
"$URAID" stop R5 >/dev/null 2>&1

# raid4/5 -> raid0 as mdadm does it (analyse_change, impose_level): a
# raid5 restriped to parity-last first, then its parity member failed out
# of the array and the level set; a raid4 only the latter. Refused, with
# nothing written, when a data member is missing.
truncate -s 16M q0 q1 q2 q3 p0 p1 p2
"$URAID" create --level=5 --raid-devices=4 --chunk=64K --name=B5 --run q0 q1 q2 q3 >/dev/null 2>&1
idle B5
"$URAID" write B5 <data
"$URAID" fail B5 "$d/q1" >/dev/null 2>&1
sums=$(md5sum q0 q1 q2 q3)
check_fails "raid5 -> raid0 refused with a data member missing" "$URAID" grow B5 --level=0
check "... it wrote nothing" [ "$sums" = "$(md5sum q0 q1 q2 q3)" ]
"$URAID" stop B5
"$URAID" zero-superblock q1
"$URAID" assemble --run --name=B5 q0 q2 q3 >/dev/null 2>&1
"$URAID" add B5 "$d/q1"
idle B5
check "raid5 left-symmetric -> raid0: the restripe to parity-last starts" "$URAID" grow B5 --level=0
for _ in $(seq 300); do state B5 | grep -q 'raid0' && break; sleep 0.1; done
check "... raid0 of 3, the parity member failed out and removed" sh -c \
	"'$URAID' status | grep '^B5 : active raid0' | grep -v q3 | grep -q 'q2\\[2\\]'"
check "... content" same B5
"$URAID" stop B5
check "... reassembled, the old parity member left out as stale" sh -c \
	"'$URAID' assemble --name=B5 q0 q1 q2 q3 2>&1 | grep -q 'q3 is stale'"
check "... content after the reassembly" same B5
"$URAID" stop B5
check "mdadm --examine reads the raid0 of 3" sh -c \
	"mdadm --examine q0 | grep -q 'Raid Level : raid0' && mdadm --examine q0 | grep -q 'Raid Devices : 3'"
"$URAID" create --level=4 --raid-devices=3 --chunk=64K --name=B4 --run p0 p1 p2 >/dev/null 2>&1
idle B4
"$URAID" write B4 <data
check "raid4 -> raid0: the parity member failed out, nothing moves" "$URAID" grow B4 --level=0
check "... raid0 of 2, the parity member removed" sh -c \
	"'$URAID' status | grep '^B4 : active raid0' | grep -v p2 | grep -q 'p1\\[1\\]'"
check "... content" same B4
"$URAID" stop B4
t_done
