#!/usr/bin/env bash
# Members changed under a running array: a member file truncated, another
# replaced at its path by a copy. The array must notice (within a second:
# the daemon checks its members twice a second and at every flush), fail
# that member, and never write to it again: the truncated file is not
# extended back, the file now at the replaced path keeps its bytes. The
# array goes on degraded and every byte reads back as written.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
D=$T_TMP/d
mkdir -p "$D"
cleanup() { for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done; rm -rf "$T_TMP"; }
trap cleanup EXIT

# faulty NAME MEMBER: until status lists MEMBER as faulty (5 s at most)
faulty() {
	for _ in $(seq 50); do
		"$URAID" status "$1" | grep -q "$(basename "$2")\[[0-9]*\](F)" && return 0
		sleep 0.1
	done
	return 1
}

for case in truncated replaced; do
	name=mc-$case
	rm -f "$D"/*
	check "$case: create raid5 on 4 16M files" "$URAID" create --level=5 --raid-devices=4 \
		--chunk=64K --size=16M --assume-clean --name=$name "$D"/m0 "$D"/m1 "$D"/m2 "$D"/m3
	size=$("$URAID" status --json $name | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["array_bytes"])')
	head -c "$size" /dev/urandom >"$T_TMP/want"
	check "$case: fill the array" "$URAID" write $name --offset 0 <"$T_TMP/want"
	if [ $case = truncated ]; then
		truncate -s 8M "$D"/m2
	else
		cp "$D"/m2 "$D"/copy && mv "$D"/copy "$D"/m2
	fi
	sum=$(sha256sum <"$D"/m2)
	len=$(stat -c %s "$D"/m2)
	check "$case: the array fails m2" faulty $name "$D"/m2
	check "$case: the daemon's log says why" \
		grep -Eq "m2 (shrank from 16777216 to 8388608 bytes|was replaced)" "$URAID_RUN_DIR/$name.log"
	head -c 4M /dev/urandom >"$T_TMP/more"
	check "$case: writes go on, degraded" "$URAID" write $name --offset 10M <"$T_TMP/more"
	dd if="$T_TMP/more" of="$T_TMP/want" bs=1M seek=10 conv=notrunc status=none
	check "$case: every byte reads back as written" cmp -s "$T_TMP/want" <("$URAID" cat $name)
	"$URAID" stop $name
	check "$case: m2 not written since (size $len, same bytes)" \
		sh -c '[ "$(stat -c %s "$1")" = "$2" ] && [ "$(sha256sum <"$1")" = "$3" ]' sh \
		"$D"/m2 "$len" "$sum"
done
t_done
