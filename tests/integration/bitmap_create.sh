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
	for s in "$T_TMP"/run/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
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
	ux=$("$URAID" examine --bitmap b 2>&1)
	check "uraid examine --bitmap: mdadm -X's lines (all but the name)" \
		[ "$(sed 1d <<<"$ux")" = "$(sed 1d <<<"$bx")" ] || diff <(echo "$bx") <(echo "$ux")
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
"$URAID" create --level=0 --raid-devices=2 --bitmap=internal --size=8M n1 n2 2>"$d/err"
check "refusal in mdadm's words, naming the level" grep -qx 'uraid: create: bitmaps not meaningful with level raid0' "$d/err"
check_fails "refused create with --size made no new files" test -e n1

# Metadata 1.0 (bitmap below the superblock), 0.90 (after it) and raid10
# (bits stand for array sectors): the host's mdadm reads each bitmap where
# mdadm would have put it, computed here independently from mdadm's rules.
# 1.0 on 9 GiB sparse members, 64K chunk: mdadm reserves 128 sectors; the
# bitmap takes whole 4 KiB blocks for header + bits (one bit more than the
# chunks, mdadm's estimate) right below the 8-sector bad-block log.
examine_bm() { # NAME FILE: sets ex, bx (mdadm --examine / -X of FILE)
	if loop_of "$2"; then
		ex=$(mdadm --examine "$l" 2>&1)
		bx=$(mdadm --examine-bitmap "$l" 2>&1)
	else
		ex="" bx=""
	fi
	echo "$ex" | grep -E 'Version|Internal Bitmap|Used Dev|Array Size' | sed "s/^/# $1: /"
	echo "$bx" | grep -E 'Chunksize|Bitmap :|Sync Size' | sed "s/^/# $1: /"
}
truncate -s 9G e1 e2
check "create raid1 --metadata=1.0 --bitmap-chunk=64K (9 GiB)" \
	"$URAID" create --level=1 --raid-devices=2 --metadata=1.0 --assume-clean \
	--bitmap=internal --bitmap-chunk=64K --no-daemon e1 e2
examine_bm "1.0" e2
used=$(echo "$ex" | sed -n 's/^ *Used Dev Size : \([0-9]*\) sectors.*/\1/p')
est=$((used * 512 / 65536 + 1))
blocks=$(((est + 7) / 8 + 256 + 4095))
blocks=$((blocks / 4096))
want=$((-(blocks * 8) - 8))
check "1.0: bitmap $want sectors from the superblock (used $used sectors)" \
	grep -q "Internal Bitmap : $want sectors from superblock" <<<"$ex"
check "1.0: mdadm -X reads it: $(((used + 127) / 128)) bits, 0 dirty" \
	grep -q "Bitmap : $(((used + 127) / 128)) bits (chunks), 0 dirty" <<<"$bx"
check "1.0: uuid matches the array" \
	[ -n "$bx" -a "$(echo "$bx" | field UUID)" = "$(echo "$ex" | field 'Array UUID')" ]
rm -f e1 e2
# 0.90, default chunk: at least 64 MiB, and what fits 60 KiB of bits
truncate -s 40M z1 z2 z3
check "create raid5 --metadata=0.90 --bitmap=internal" \
	"$URAID" create --level=5 --raid-devices=3 --metadata=0.90 --bitmap=internal \
	--chunk=64K --no-daemon z1 z2 z3
examine_bm "0.90" z3
check "0.90: superblock says a bitmap is present" grep -Eq 'State : clean' <<<"$ex"
used=$(echo "$ex" | sed -n 's/^ *Used Dev Size : \([0-9]*\) (.*/\1/p')
check "0.90: mdadm -X: chunk 64 MB" grep -q 'Chunksize : 64 MB' <<<"$bx"
check "0.90: mdadm -X: sync size $used KiB" grep -q "Sync Size : $used " <<<"$bx"
check "0.90: mdadm -X: 1 bit, 0 dirty" grep -q 'Bitmap : 1 bits (chunks), 0 dirty' <<<"$bx"
u=$(echo "$ex" | field UUID | cut -d' ' -f1)
check "0.90: uuid matches the array ($u)" [ -n "$bx" -a "$(echo "$bx" | field UUID)" = "$u" ]
rm -f z1 z2 z3
# raid10 far 2 on 3 members: bits cover the array size
truncate -s 24M t1 t2 t3
check "create raid10 f2 --bitmap=internal --bitmap-chunk=64K" \
	"$URAID" create --level=10 --layout=f2 --raid-devices=3 --chunk=64K --bitmap=internal \
	--bitmap-chunk=64K --no-daemon t1 t2 t3
examine_bm "raid10" t2
as=$(echo "$ex" | sed -n 's/^ *Array Size : \([0-9]*\) KiB.*/\1/p')
check "raid10: mdadm -X sync size = array size ($as KiB)" grep -q "Sync Size : $as " <<<"$bx"
check "raid10: $(((as + 63) / 64)) bits of 64 KiB, 0 dirty" \
	grep -q "Bitmap : $(((as + 63) / 64)) bits (chunks), 0 dirty" <<<"$bx"
rm -f t1 t2 t3

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

# A running array shows its bitmap as mdadm --detail and /proc/mdstat do:
# bits = per-member KiB / chunk KiB rounded up, in pages of 2048 counters.
export URAID_RUN_DIR=$T_TMP/run
"$URAID" create --level=5 --raid-devices=3 --size=40M --bitmap=internal --bitmap-chunk=64K \
	--name bmd r1 r2 r3 >/dev/null 2>&1
"$URAID" create --level=5 --raid-devices=3 --size=40M --bitmap=none --name nbm \
	n1 n2 n3 >/dev/null 2>&1
det=$("$URAID" detail bmd 2>&1)
used=$(echo "$det" | sed -n 's/^ *Used Dev Size : \([0-9]*\).*/\1/p')
bits=$(((used + 63) / 64))
pages=$(((bits + 2047) / 2048))
check "detail: Intent Bitmap : Internal" grep -q "Intent Bitmap : Internal" <<<"$det"
st=$("$URAID" status bmd 2>&1)
echo "$st" | sed 's/^/# /'
check "status: bitmap: U/$pages pages, 64KB chunk ($bits bits)" \
	grep -Eq "^ +bitmap: [0-9]+/$pages pages \[[0-9]+KB\], 64KB chunk$" <<<"$st"
js=$("$URAID" status --json bmd 2>&1)
check "status --json: bitmap chunk 64 KiB, $bits chunks" \
	grep -q "\"bitmap\":{\"chunk_kib\":64,\"chunks\":$bits," <<<"$js"
check_fails "no bitmap: no Intent Bitmap line" grep -q "Intent Bitmap" <<<"$("$URAID" detail nbm)"
check_fails "no bitmap: no bitmap line in status" grep -q "bitmap:" <<<"$("$URAID" status nbm)"
check_fails "no bitmap: no bitmap in status --json" grep -q '"bitmap"' \
	<<<"$("$URAID" status --json nbm)"
"$URAID" stop bmd >/dev/null 2>&1
"$URAID" stop nbm >/dev/null 2>&1
# examine --bitmap (mdadm -X) refusals: a clear message, exit 1, nothing
# written
truncate -s 8M x0 x1
"$URAID" create --level=1 --raid-devices=2 --no-daemon x0 x1 >/dev/null 2>&1
sum0=$(cat x0 b | md5sum)
out=$("$URAID" examine --bitmap x0 2>&1)
rc=$?
check "examine --bitmap without a bitmap: exit 1, named ($out)" \
	[ $rc -eq 1 -a "$out" = "uraid: examine: x0: no internal bitmap" ]
out=$("$URAID" examine --bitmap x0 b 2>&1)
rc=$?
check "examine --bitmap of two, one without: exit 1, the other shown" \
	sh -c "[ $rc -eq 1 ] && echo '$out' | grep -q 'Filename : b'"
check_fails "examine --bitmap: no such file" "$URAID" examine --bitmap "$d/none"
out=$("$URAID" examine --bitmap --json b 2>&1)
check "examine --bitmap --json refused ($out)" grep -q "does not go with" <<<"$out"
check_fails "examine --bitmap --badblocks refused" "$URAID" examine --bitmap --badblocks b
# a header whose sync size puts the bits past the member's end (b's
# bitmap: 8 sectors after the superblock at 8)
cp b y0
printf '\0\0\0\0\0\0\4\0' | dd of=y0 bs=1 seek=$((16 * 512 + 40)) conv=notrunc 2>/dev/null
out=$("$URAID" examine --bitmap y0 2>&1)
rc=$?
check "examine --bitmap: bits past the member's end refused, exit 1 ($out)" \
	[ $rc -eq 1 -a "$out" = "${out%past the end of the member}past the end of the member" ]
check "examine --bitmap wrote nothing" [ "$(cat x0 b | md5sum)" = "$sum0" ]
t_done
