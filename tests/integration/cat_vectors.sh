#!/usr/bin/env bash
# uraid cat against the arrays the real kernel md + mdadm wrote (shared/md-vectors):
# every array intact and with each member (or pair) left out where the level's
# redundancy allows must give the expected md5; bad member sets are refused with
# a message naming the problem; member files never change.
source "$(dirname "$0")/../lib.sh"
VEC=$SHARED/md-vectors
if [ ! -f "$VEC/MANIFEST.json" ]; then
	fail "md-vectors not found at $VEC (set URAID_SHARED)"
	t_done
fi

# name level raid_devices expected_md5, one array a line
python3 - "$VEC/MANIFEST.json" >"$T_TMP/arrays" <<'PY'
import json, sys
for a in json.load(open(sys.argv[1]))["arrays"]:
    print(a["name"], a["level"], a["raid_devices"], a["expected_array_md5"])
PY

sums_before=$T_TMP/sha.before
while read -r name level n md5; do
	mkdir -p "$T_TMP/$name"
	for ((i = 0; i < n; i++)); do
		xz -dc "$VEC/images/$name/m$i.img.xz" >"$T_TMP/$name/m$i.img"
	done
done <"$T_TMP/arrays"
(cd "$T_TMP" && sha256sum */m*.img) >"$sums_before"

# cat_md5 NAME INDEX... : md5 of `uraid cat` over the members with those indexes
cat_md5() {
	local name=$1; shift
	local args=()
	for i in "$@"; do args+=("$T_TMP/$name/m$i.img"); done
	"$URAID" cat "${args[@]}" 2>"$T_TMP/err" | md5sum | cut -d' ' -f1
}
# all subsets of 0..n-1 of size n-k
subsets() { # n k -> lines of kept indexes
	python3 -c "
import itertools, sys
n, k = int(sys.argv[1]), int(sys.argv[2])
for drop in itertools.combinations(range(n), k):
    print(' '.join(str(i) for i in range(n) if i not in drop))" "$1" "$2"
}

while read -r name level n md5; do
	all=$(seq 0 $((n - 1)) | tr '\n' ' ')
	got=$(cat_md5 "$name" $all)
	check "$name: cat intact = expected md5" [ "$got" = "$md5" ]
	# members in reverse order: assembly must map roles, not argument order
	got=$(cat_md5 "$name" $(echo $all | tr ' ' '\n' | tac))
	check "$name: cat with members in reverse order" [ "$got" = "$md5" ]
	drops=0
	case $level in
	raid1) drops="1 2" ;;
	raid4 | raid5) drops=1 ;;
	raid6) drops="1 2" ;;
	raid10) drops=1 ;;
	esac
	for k in $drops; do
		[ "$k" = 0 ] && continue
		while read -r keep; do
			got=$(cat_md5 "$name" $keep)
			check "$name: cat with only members [$keep]" [ "$got" = "$md5" ]
		done < <(subsets "$n" "$k")
	done
	case $level in
	raid10) # n2 on 4: one member of each mirror pair (0,1) and (2,3) may go
		for keep in "1 3" "1 2" "0 3" "0 2"; do
			got=$(cat_md5 "$name" $keep)
			check "$name: cat with only members [$keep] (one per mirror pair)" [ "$got" = "$md5" ]
		done
		if ! "$URAID" cat "$T_TMP/$name/m2.img" "$T_TMP/$name/m3.img" >/dev/null 2>"$T_TMP/err"; then
			grep -qi "too few" "$T_TMP/err" && ok "$name: both members of a mirror pair missing refused" ||
				fail "$name: refusal does not say too few members: $(cat "$T_TMP/err")"
		else
			fail "$name: cat succeeded with a whole mirror pair missing"
		fi
		;;
	linear | raid0 | raid4 | raid5)
		k=$([ "$level" = raid4 ] || [ "$level" = raid5 ] && echo 2 || echo 1)
		keep=$(seq "$k" $((n - 1)) | tr '\n' ' ')
		if "$URAID" cat $(for i in $keep; do echo "$T_TMP/$name/m$i.img"; done) >/dev/null 2>"$T_TMP/err"; then
			fail "$name: cat succeeded with $k member(s) missing"
		else
			grep -qi "too few" "$T_TMP/err" && ok "$name: $k member(s) missing refused (too few)" ||
				fail "$name: refusal does not say too few: $(cat "$T_TMP/err")"
		fi
		;;
	esac
done <"$T_TMP/arrays"

# Byte ranges: --offset/--length equal the same slice of the whole output.
R=$T_TMP/raid5-ls
"$URAID" cat "$R"/m*.img >"$T_TMP/whole"
"$URAID" cat --offset 1000 --length 200000 -o "$T_TMP/part" "$R"/m*.img
check "cat --offset 1000 --length 200000 equals that slice" \
	cmp -s "$T_TMP/part" <(tail -c +1001 "$T_TMP/whole" | head -c 200000)
"$URAID" cat --offset 3M "$R"/m0.img "$R"/m2.img "$R"/m3.img >"$T_TMP/part"
check "cat --offset 3M degraded equals the tail" cmp -s "$T_TMP/part" <(tail -c +$((3 * 1048576 + 1)) "$T_TMP/whole")
check_fails "cat --offset beyond the end refused" "$URAID" cat --offset 1G "$R"/m*.img

# refuse NAME EXPECT_REGEX FILES...: non-zero exit, message matching EXPECT
refuse() {
	local name=$1 re=$2; shift 2
	if "$URAID" cat "$@" >/dev/null 2>"$T_TMP/err"; then
		fail "$name: accepted"
	elif grep -Eqi "$re" "$T_TMP/err"; then
		ok "$name: refused ($(head -c 160 "$T_TMP/err" | tr '\n' ' '))"
	else
		fail "$name: refused without naming the problem: $(cat "$T_TMP/err")"
	fi
}
refuse "members of two arrays" "two different arrays.*raid4/m3.img" \
	"$R/m0.img" "$R/m1.img" "$R/m2.img" "$T_TMP/raid4/m3.img"
cp "$R/m1.img" "$T_TMP/dup-m1.img"
refuse "duplicate roles" "m1.img.*dup-m1.img.*slot 1|dup-m1.img.*m1.img.*slot 1" \
	"$R/m0.img" "$R/m1.img" "$T_TMP/dup-m1.img" "$R/m3.img"
refuse "too few members (raid5, 2 of 4)" "too few" "$R/m0.img" "$R/m1.img"
head -c 4M "$R/m3.img" >"$T_TMP/short-m3.img"
refuse "truncated member" "short-m3.img.*(truncat|small|beyond|exceed|past the end)" \
	"$R/m0.img" "$R/m1.img" "$R/m2.img" "$T_TMP/short-m3.img"
head -c 1M /dev/zero >"$T_TMP/blank.img"
refuse "member without a superblock" "blank.img.*superblock" "$R/m0.img" "$T_TMP/blank.img"
refuse "nonexistent member" "nope.img" "$R/m0.img" "$T_TMP/nope.img"

(cd "$T_TMP" && sha256sum */m*.img) >"$T_TMP/sha.after"
check "member images unchanged by every cat (sha256)" cmp -s "$sums_before" "$T_TMP/sha.after"
t_done
