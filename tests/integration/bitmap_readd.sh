#!/usr/bin/env bash
# re-add and dirty-degraded assembly through the CLI. A raid5 with an
# internal bitmap: a member failed and removed misses writes, `uraid re-add`
# puts it back into its slot and the recovery only copies the dirty chunks
# (the daemon log says so; the unit test test_bitmap_readd counts sectors);
# check finds 0 mismatches and the data reads back, also with another
# member failed. re-add refuses what is not a former member. A daemon
# killed while the array was active leaves it dirty: assembled without one
# member, `uraid assemble` refuses ("not enough to start the array while not clean",
# members' sha256 unchanged), --force starts it. bench --bitmap prints the
# with/without rows.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
D=$T_TMP/d
mkdir -p "$D"
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
wait_idle() {
	for _ in $(seq 300); do
		"$URAID" status --json "$1" | grep -q '"action":"idle"' && return 0
		sleep 0.1
	done
	return 1
}

check "create raid5 with a 64K-chunk bitmap" "$URAID" create --level=5 --raid-devices=4 \
	--chunk=64K --size=24M --bitmap=internal --bitmap-chunk=64K --name=r5 "$D"/m0 "$D"/m1 \
	"$D"/m2 "$D"/m3
check "initial resync" wait_idle r5
head -c 8M /dev/urandom >"$T_TMP/a"
check "write 8 MiB" "$URAID" write r5 --offset 0 <"$T_TMP/a"
check "fail m1" "$URAID" fail r5 "$D"/m1
check "remove m1" "$URAID" remove r5 "$D"/m1
head -c 256K /dev/urandom >"$T_TMP/b"
check "degraded write of 256 KiB" "$URAID" write r5 --offset 3M <"$T_TMP/b"
dd if="$T_TMP/b" of="$T_TMP/a" bs=1M seek=3 conv=notrunc status=none
check_fails "re-add of a file that never was a member refused" "$URAID" re-add r5 "$T_TMP/b"
check "re-add m1" "$URAID" re-add r5 "$D"/m1
check "recovery finishes" wait_idle r5
check "daemon log: bitmap-based recovery" \
	grep -q 're-added in slot 1.*recovering the chunks the bitmap marks' "$URAID_RUN_DIR/r5.log"
"$URAID" status r5 >"$T_TMP/st"
check "status [4/4] [UUUU]" grep -q '\[4/4\] \[UUUU\]' "$T_TMP/st"
check "check: 0 mismatches" grep -qx "mismatch_cnt 0" <("$URAID" check r5)
check "data reads back" cmp -s "$T_TMP/a" <("$URAID" cat --offset 0 --length 8M r5)
check "fail m2: the re-added m1 serves its part" "$URAID" fail r5 "$D"/m2
check "degraded read after re-add" cmp -s "$T_TMP/a" <("$URAID" cat --offset 0 --length 8M r5)
check "stop" "$URAID" stop r5

# Dirty and degraded: kill the daemon while the array is active.
"$URAID" create --level=5 --raid-devices=4 --chunk=64K --size=16M --assume-clean --name=dd \
	"$D"/d0 "$D"/d1 "$D"/d2 "$D"/d3 2>"$T_TMP/create.err"
check "create raid5 (no bitmap)" [ $? -eq 0 ]
head -c 1M /dev/urandom >"$T_TMP/c"
check "write" "$URAID" write dd --offset 1M <"$T_TMP/c"
# the daemon this test started, by the pid create printed
pid=$(sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' "$T_TMP/create.err" | head -1)
check "daemon found ($pid)" [ -n "$pid" ]
[ -n "$pid" ] && kill -9 "$pid"
sleep 0.3
rm -f "$URAID_RUN_DIR/dd.sock"
sum=$(sha256sum "$D"/d0 "$D"/d2 "$D"/d3)
"$URAID" assemble --name dd "$D"/d0 "$D"/d2 "$D"/d3 2>"$T_TMP/err"
rc=$?
check "dirty degraded assembly refused (exit $rc)" [ "$rc" -ne 0 ]
check "message names the problem and --force" \
	sh -c "grep -q 'not enough to start the array while not clean' '$T_TMP/err' && grep -q -- '--force' '$T_TMP/err'"
check "members unchanged (sha256)" [ "$(sha256sum "$D"/d0 "$D"/d2 "$D"/d3)" = "$sum" ]
check "assemble --force starts it" "$URAID" assemble --force --name dd "$D"/d0 "$D"/d2 "$D"/d3
check "forced array reads the data" cmp -s "$T_TMP/c" <("$URAID" cat --offset 1M --length 1M dd)
check "stop" "$URAID" stop dd
check "clean now: degraded assembly without --force" "$URAID" assemble --name dd "$D"/d0 \
	"$D"/d2 "$D"/d3
check "stop" "$URAID" stop dd

out=$("$URAID" bench engine --bitmap --quick --levels 1 --members-dir "$T_TMP" 2>&1)
echo "$out" | sed 's/^/# /'
check "bench --bitmap: seqwrite row with a ratio" \
	grep -Eq '^raid1 +seqwrite\+bm +[0-9.]+ +[0-9.]+ MB/s +[0-9.]+ +[0-9.]+$' <<<"$out"
check "bench --bitmap: randwrite4k row" grep -Eq '^raid1 +randwrite4k\+bm ' <<<"$out"
check_fails "bench --bitmap-chunk without --bitmap refused" \
	"$URAID" bench engine --bitmap-chunk 64K --quick --levels 1 --members-dir "$T_TMP"
t_done
