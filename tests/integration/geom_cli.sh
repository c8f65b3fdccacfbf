#!/usr/bin/env bash
# uraid mirror / uraid raid3 on member files: label, write, cat (md5 of the
# provider vs the input), status wording, configure, degraded reads,
# remove/insert/rebuild, clear, refusals (exit non-zero, nothing written).
. "$(dirname "$0")/../lib.sh"
U=$URAID
cd "$T_TMP"
mk() { for f in "$@"; do rm -f "$f"; truncate -s 4M "$f"; done; }
md5() { md5sum | cut -d' ' -f1; }

# ---- gmirror ----
mk a b c
check "mirror label" $U mirror label -b round-robin -s 8192 gm0 a b
out=$($U mirror status gm0 a b)
check "mirror status COMPLETE" grep -q "mirror/gm0 *COMPLETE" <<<"$out"
# provider = 4 MiB - one metadata sector
size=$(( 4 * 1024 * 1024 - 512 ))
head -c $size /dev/urandom > data
check "mirror write" $U mirror write a b < data
want=$(md5 < data)
check "mirror cat = input" test "$($U mirror cat a b | md5)" = "$want"
check "mirror cat from one disk" test "$($U mirror cat b | md5)" = "$want"
check "each disk holds the data" test "$(head -c $size a | md5)" = "$want"
check "magic in the last sector" test "$(tail -c 512 b | head -c 12)" = "GEOM::MIRROR"
check "mirror configure -b split" $U mirror configure -b split gm0 a b
check "balance persisted" grep -q "Balance: split" <<<"$($U mirror list gm0 a b)"
check "mirror configure -p" $U mirror configure -p 9 gm0 b a
check "priority persisted" grep -A4 "Name: b" <<<"$($U mirror list gm0 a b)" | grep -q "Priority: 9"
check "mirror insert c (synced)" $U mirror insert -p 3 gm0 c a b
check "c holds the data" test "$(head -c $size c | md5)" = "$want"
check "3 components" grep -q "Components: 3" <<<"$($U mirror list gm0 a b c)"
check "mirror remove a" $U mirror remove gm0 a b c
check_fails "a has no metadata" $U mirror status gm0 a
check "b c still COMPLETE" grep -q COMPLETE <<<"$($U mirror status gm0 b c)"
check_fails "unknown balance refused" $U mirror configure -b fastest gm0 b c
check_fails "wrong name refused" $U mirror status other b c
check_fails "label -s 1000 refused" $U mirror label -s 1000 gm1 a
check "mirror clear" $U mirror clear b c
check "clear zeroed the sector" test "$(tail -c 512 b | tr -d '\0' | wc -c)" = 0
check_fails "clear without metadata refused" $U mirror clear b

# ---- graid3 ----
mk r0 r1 r2 r3 r4
check "raid3 label 5 components" $U raid3 label -r r3 r0 r1 r2 r3 r4
check_fails "raid3 label 4 components refused" $U raid3 label x r0 r1 r2 r3
check_fails "raid3 -r -w refused" $U raid3 label -r -w x r0 r1 r2
check "earlier metadata untouched by refusals" grep -q "raid3/r3 *COMPLETE" \
	<<<"$($U raid3 status r3 r0 r1 r2 r3 r4)"
rsize=$(( (4 * 1024 * 1024 - 512) * 4 ))
head -c $rsize /dev/urandom > rdata
check "raid3 write" $U raid3 write r0 r1 r2 r3 r4 < rdata
rwant=$(md5 < rdata)
check "raid3 cat = input" test "$($U raid3 cat r0 r1 r2 r3 r4 | md5)" = "$rwant"
for lost in 0 1 2 3 4; do
	set -- r0 r1 r2 r3 r4
	left=(); for f in "$@"; do [ "$f" = "r$lost" ] || left+=("$f"); done
	check "raid3 without r$lost" test "$($U raid3 cat "${left[@]}" | md5)" = "$rwant"
done
check "raid3 configure -R -w" $U raid3 configure -R -w r3 r0 r1 r2 r3 r4
check "VERIFY flag shown" grep -q VERIFY <<<"$($U raid3 list r3 r0 r1 r2 r3 r4)"
check "raid3 cat verified" test "$($U raid3 cat r0 r1 r2 r3 r4 | md5)" = "$rwant"
# flip a byte of data component 1: verified read must fail
printf '\xff' | dd of=r1 bs=1 seek=5000 conv=notrunc status=none
check_fails "verify catches corruption" $U raid3 cat r0 r1 r2 r3 r4
check "raid3 rebuild r1" $U raid3 rebuild r3 r1 r0 r2 r3 r4
check "after rebuild data intact" test "$($U raid3 cat r0 r1 r2 r3 r4 | md5)" = "$rwant"
check "raid3 remove -n 2" $U raid3 remove -n 2 r3 r0 r1 r2 r3 r4
check "DEGRADED" grep -q DEGRADED <<<"$($U raid3 status r3 r0 r1 r3 r4)"
mk r2
check "raid3 insert -n 2" $U raid3 insert -n 2 r3 r2 r0 r1 r3 r4
check "COMPLETE again" grep -q COMPLETE <<<"$($U raid3 status r3 r0 r1 r2 r3 r4)"
check "data after insert" test "$($U raid3 cat r0 r1 r2 r3 r4 | md5)" = "$rwant"
check "r2 alone rebuilt correctly" test "$($U raid3 cat r0 r1 r2 r3 | md5)" = "$rwant"

# ---- bad invocations: non-zero exit, a message, nothing written ----
mk z0 z1 z2
before=$(md5sum z0 z1 z2)
check_fails "mirror without arguments" $U mirror
check_fails "mirror unknown verb" $U mirror frobnicate gm z0 z1
check_fails "raid3 unknown verb" $U raid3 frobnicate r z0 z1 z2
check_fails "mirror label without members" $U mirror label gm
check_fails "mirror label -p junk" $U mirror configure -p 300 gm z0
check_fails "mirror label name too long" $U mirror label abcdefghijklmnopq z0 z1
check_fails "mirror status on blank members" $U mirror status gm z0 z1
check_fails "mirror insert missing file" $U mirror insert gm /nonexistent/x z0
check_fails "raid3 insert without -n" $U raid3 insert r3 z0 z1 z2
check_fails "raid3 -s not a multiple" $U raid3 label -s 1000 r z0 z1 z2
check_fails "raid3 write to blank members" $U raid3 write z0 z1 z2 < /dev/null
check "refusals wrote nothing" test "$(md5sum z0 z1 z2)" = "$before"
$U mirror label gmz z0 z1
sz=$(stat -c %s z1)
printf 'X' | dd of=z1 bs=1 seek=$((sz - 512 + 25)) conv=notrunc status=none
err=$($U mirror status gmz z0 z1 2>&1)
check_fails "corrupt metadata refused" $U mirror status gmz z0 z1
check "message names MD5" grep -q "MD5 mismatch" <<<"$err"
check "the intact member still opens alone" grep -q "mirror/gmz" <<<"$($U mirror status gmz z0)"
err=$($U raid3 label -r -w x z0 z1 z2 2>&1)
check "message names the conflict" grep -q "cannot be combined" <<<"$err"
t_done
