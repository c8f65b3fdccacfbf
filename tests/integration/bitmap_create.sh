#!/usr/bin/env bash
# uraid create --bitmap: members read in the host mdadm (--examine and -X
# through read-only loop devices: mdadm 4.2's -X does not read plain files)
# as mdadm-made ones do; unsupported combinations are refused without
# writing; mdadm 4.2's default (a bitmap when members exceed 100 GiB).
source "$(dirname "$0")/../lib.sh"
d=$T_TMP/bc
mkdir -p "$d"
cd "$d" || exit 1
loops=()
cleanup() {
	for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done
	rm -rf "$T_TMP" # lib.sh's own EXIT trap, replaced here
}
trap cleanup EXIT
# field NAME from "  NAME : value" lines
field() { sed -n "s/^ *$1 : //p" | head -1; }
# sets $l to a read-only loop device over file $1 (no subshell: the trap needs loops[])
loop_of() { l=$(losetup -f --show -r "$1") && loops+=("$l"); }

check "create raid5 --bitmap=internal --bitmap-chunk=64K" \
	"$URAID" create --level=5 --raid-devices=3 --size=32M --bitmap=internal \
	--bitmap-chunk=64K --no-daemon a b c
if command -v losetup >/dev/null && loop_of b; then
	ex=$(mdadm --examine "$l" 2>&1)
	bx=$(mdadm --examine-bitmap "$l" 2>&1)
	echo "$ex" | grep -E 'Feature|Internal Bitmap|Bad Block|Events' | sed 's/^/# /'
	fm=$(echo "$ex" | field 'Feature Map')
	check "feature map has the bitmap bit ($fm)" [ $((fm & 1)) -eq 1 ]
	check "bitmap 8 sectors from the superblock" \
		grep -q 'Internal Bitmap : 8 sectors from superblock' <<<"$ex"
	# The bad block log must not overlap the bitmap's 4 KiB (8 sectors).
	bb=$(echo "$ex" | sed -n 's/.*available at offset \([0-9]*\) sectors.*/\1/p')
	check "bad block log ($bb) after the bitmap" [ "${bb:-0}" -ge 16 ]
	sev=$(echo "$ex" | field Events)
	check "mdadm -X: magic and version 4" grep -q 'Version : 4' <<<"$bx"
	check "mdadm -X: events = superblock events ($sev)" [ "$(echo "$bx" | field Events)" = "$sev" ]
	check "mdadm -X: events cleared = events" \
		[ "$(echo "$bx" | field 'Events Cleared')" = "$sev" ]
	check "mdadm -X: chunk 64 KB" grep -q 'Chunksize : 64 KB' <<<"$bx"
	check "mdadm -X: uuid matches the array" \
		[ "$(echo "$bx" | field UUID)" = "$(echo "$ex" | field 'Array UUID')" ]
	# bits = per-member KiB / 64 rounded up; raid5 of 3: array = 2 members
	as=$(echo "$ex" | sed -n 's/^ *Array Size : \([0-9]*\) KiB.*/\1/p')
	want=$(((as / 2 + 63) / 64))
	check "mdadm -X: $want bits, 0 dirty after the initial sync" \
		grep -q "Bitmap : $want bits (chunks), 0 dirty" <<<"$bx"
	echo "$bx" | grep -E 'Chunksize|Bitmap :|Sync Size' | sed 's/^/# /'
else
	fail "losetup unavailable: cannot show members to mdadm"
fi

# Refusals: nothing written, nothing created.
printf 'keep' >k1
printf 'keep' >k2
truncate -s 16M k1 k2
sum=$(md5sum k1 k2)
check_fails "raid10 --bitmap=internal refused" \
	"$URAID" create --level=10 --raid-devices=2 --bitmap=internal --no-daemon k1 k2
check_fails "metadata 1.0 --bitmap=internal refused" \
	"$URAID" create --level=1 --raid-devices=2 --metadata=1.0 --bitmap=internal --no-daemon k1 k2
check_fails "raid0 --bitmap=internal refused" \
	"$URAID" create --level=0 --raid-devices=2 --bitmap=internal --no-daemon k1 k2
check_fails "--bitmap=/some/file refused" \
	"$URAID" create --level=1 --raid-devices=2 --bitmap=/tmp/x --no-daemon k1 k2
check_fails "--bitmap-chunk=3K refused" \
	"$URAID" create --level=1 --raid-devices=2 --bitmap=internal --bitmap-chunk=3K k1 k2
check_fails "--bitmap-chunk without --bitmap=internal refused" \
	"$URAID" create --level=1 --raid-devices=2 --bitmap-chunk=64K k1 k2
check "refused creates left the members untouched" [ "$(md5sum k1 k2)" = "$sum" ]
check_fails "refused create made no new files" test -e n1
"$URAID" create --level=10 --raid-devices=2 --bitmap=internal --size=8M n1 n2 2>"$d/err"
check "refusal names level and metadata" grep -q 'raid10 with metadata 1.2' "$d/err"
check_fails "refused create with --size made no new files" test -e n1

# A requested chunk too small for the room: refused before writing. 9 GiB
# members get mdadm's 128-sector room (8..200 GiB): bits = bytes/chunk + 1
# must fit (128*512 - 256 header bytes) * 8.
truncate -s 9G g1 g2
minc=4096
while [ $((9 * 1024 * 1024 * 1024 / minc + 1)) -gt $(((128 * 512 - 256) * 8)) ]; do
	minc=$((minc * 2))
done
"$URAID" create --level=1 --raid-devices=2 --assume-clean --bitmap=internal \
	--bitmap-chunk=$((minc / 2048))K --no-daemon g1 g2 2>"$d/err"
check "chunk $((minc / 2048))K on 9 GiB refused, naming ${minc}B as the least" \
	grep -q "at least $((minc / 1024))K fits" "$d/err"
check "refused chunk left the members zero" cmp -n 8388608 g1 /dev/zero
check "chunk $((minc / 1024))K on 9 GiB accepted" \
	"$URAID" create --level=1 --raid-devices=2 --assume-clean --bitmap=internal \
	--bitmap-chunk=$((minc / 1024))K --no-daemon g1 g2
rm -f g1 g2

# mdadm 4.2's default: a bitmap only when members are over 100 GiB (sparse).
"$URAID" create --level=1 --raid-devices=2 --size=101G --assume-clean --no-daemon big1 big2 \
	2>"$d/big.log"
"$URAID" create --level=1 --raid-devices=2 --size=99G --assume-clean --no-daemon sm1 sm2 \
	2>"$d/sm.log"
"$URAID" create --level=1 --raid-devices=2 --size=101G --assume-clean --bitmap=none \
	--no-daemon nb1 nb2 2>"$d/nb.log"
fmap() { mdadm --examine "$1" 2>/dev/null | field 'Feature Map'; }
check "101 GiB members: bitmap by default ($(fmap big1))" [ $(($(fmap big1) & 1)) -eq 1 ]
check "99 GiB members: no bitmap by default ($(fmap sm1))" [ $(($(fmap sm1) & 1)) -eq 0 ]
check "101 GiB members with --bitmap=none: no bitmap ($(fmap nb1))" [ $(($(fmap nb1) & 1)) -eq 0 ]
rm -f big1 big2 sm1 sm2 nb1 nb2
t_done
