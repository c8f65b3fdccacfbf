#!/usr/bin/env bash
# create --assume-clean and --discard (issue #17). --assume-clean on new
# sparse files goes ahead; on members that hold data it is refused with a
# message naming the member, and nothing is written (md5 of the members
# unchanged); --force insists. --discard on members full of random data
# zeroes every member's data area and skips the initial resync: the array
# reads zeros, a check finds 0 mismatches (raid5, raid6: P = Q = 0, raid1,
# raid10), the member files are holes again (du), and status --verbose
# shows each member's allocated against its apparent size.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
D=$T_TMP/d
mkdir -p "$D" "$URAID_RUN_DIR"
cleanup() { for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done; rm -rf "$T_TMP"; }
trap cleanup EXIT

q() { "$URAID" "$@" >"$T_TMP/out" 2>&1; }
check "--assume-clean on new sparse files" q create --level=5 --raid-devices=3 --chunk=64K \
	--size=4M --assume-clean --name=ac --no-daemon "$D"/a0 "$D"/a1 "$D"/a2
for i in 0 1 2 3 4; do head -c 8M /dev/urandom >"$D/r$i"; done
sums=$(md5sum "$D"/r* | md5sum)
check "--assume-clean on members holding data is refused" \
	bash -c "! '$URAID' create --level=5 --raid-devices=3 --chunk=64K --assume-clean --name=rf --no-daemon '$D'/r0 '$D'/r1 '$D'/r2 </dev/null >'$T_TMP/out' 2>&1"
check "the refusal names the member and offers --discard / --force" \
	grep -q "assume-clean: $D/r0 holds data at byte 0.*--discard.*--force" "$T_TMP/out"
check "the refusal wrote nothing" [ "$(md5sum "$D"/r* | md5sum)" = "$sums" ]
check "--assume-clean --force insists" q create --level=1 --raid-devices=2 --assume-clean \
	--force --name=fo --no-daemon "$D"/r3 "$D"/r4

for spec in "5 3 r5" "6 5 r6" "1 2 r1" "10 4 r10"; do
	set -- $spec
	level=$1 n=$2 name=$3
	chunk=--chunk=64K # (mdadm forbids a chunk size for raid1)
	[ "$level" = 1 ] && chunk=
	mm=()
	for ((i = 0; i < n; i++)); do
		head -c 6M /dev/urandom >"$D/$name.$i"
		mm+=("$D/$name.$i")
	done
	before=$(du -k -c "${mm[@]}" | awk '$2 == "total" {print $1}')
	check "$name: create --discard on members full of random data" \
		q create --level=$level --raid-devices=$n $chunk --discard --name=$name --run \
		"${mm[@]}"
	check "$name: no initial resync (clean, idle)" \
		bash -c "'$URAID' status --json $name | grep -q '\"action\":\"idle\"'"
	size=$("$URAID" status --json $name | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["array_bytes"])')
	check "$name: the array reads zeros" cmp -s -n "$size" <("$URAID" cat $name) /dev/zero
	check "$name: check: mismatch_cnt 0" bash -c "'$URAID' check $name | grep -qx 'mismatch_cnt 0'"
	check "$name: status --verbose shows each member's allocated and apparent size" \
		bash -c "[ \$('$URAID' status --verbose $name | grep -c '$D/$name\.[0-9]* allocated [0-9]* KiB of 6144 KiB') = $n ]"
	"$URAID" stop $name
	after=$(du -k -c "${mm[@]}" | awk '$2 == "total" {print $1}')
	echo "# $name: members held $before KiB, $after KiB after create --discard"
	# the area before the data (superblock, reserved space) is left as it was
	check "$name: the data areas are holes again ($before -> $after KiB)" [ $((after * 4)) -lt "$before" ]
done
t_done
