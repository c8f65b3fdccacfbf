#!/usr/bin/env bash
# uraid grow on running arrays, the changes that move no data: --size
# (members that grew, the new region resynced; 1.0 shrink and back),
# --array-size (in memory only), --bitmap=internal|none, raid1
# --raid-devices up (a spare recovered) and down (refused while the slots
# hold members, then compacted as md does). Content compared with what was
# written, `uraid check` clean, host mdadm --examine reads the result;
# refusals change no byte of any member. And the restripes through the same
# verb: raid5 3 -> 4 members, a chunk + layout change, raid5 4 -> 3, and
# raid10 near-2 4 -> 5, a chunk change, near -> offset, 5 -> 4 (its
# progress in mdstat's form, md's total), with md's raid10 refusals.
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
field() { sed -n "s/^ *$1 : //p" | head -1; }
idle() { # wait until NAME has no sync running
	for _ in $(seq 200); do
		"$URAID" detail "$1" | grep -Eq 'Resync Status|Rebuild Status|Reshape Status' || return 0
		sleep 0.1
	done
	return 1
}
same() { "$URAID" cat "$1" --length "$2" | cmp -s - <(head -c "$2" data); }
clean() { [ "$("$URAID" check "$1")" = "mismatch_cnt 0" ]; }
head -c 8M /dev/urandom >data

# raid5 1.2: members grown while stopped, --size=max uses them.
truncate -s 16M a b c
check "create raid5" "$URAID" create --level=5 --raid-devices=3 --name=g5 --run a b c
idle g5
"$URAID" write g5 <data
old=$("$URAID" detail g5 | field 'Used Dev Size' | cut -d' ' -f1)
"$URAID" stop g5
truncate -s 48M a b c
check "assemble grown members" "$URAID" assemble a b c
out=$("$URAID" grow g5 --size=max 2>&1)
echo "# $out"
new=$("$URAID" detail g5 | field 'Used Dev Size' | cut -d' ' -f1)
check "--size=max: component size set ($old -> $new K)" \
	grep -q "component size of g5 has been set to ${new}K" <<<"$out"
check "raid5 size grew to the 48M members less the data offset, chunk rounded" \
	[ "$new" -eq $(((48 * 1024 - 2048) / 512 * 512)) ]
check "array size = 2 x component size" \
	[ "$("$URAID" detail g5 | field 'Array Size' | cut -d' ' -f1)" -eq $((2 * new)) ]
check "the new region is resynced (resync from the old end)" \
	grep -q "resync" <<<"$("$URAID" status)$("$URAID" detail g5)"
idle g5
check "raid5 after --size: content as written" same g5 8M
check "raid5 after --size: check clean" clean g5
check_fails "--size larger than the members refused" "$URAID" grow g5 --size=1G
check_fails "--size with --level refused" "$URAID" grow g5 --size=max --level=6
check_fails "--raid-devices=4 on raid5 without a spare refused" "$URAID" grow g5 --raid-devices=4
check_fails "--size=abc refused" "$URAID" grow g5 --size=abc
check_fails "--raid-devices=100000 refused" "$URAID" grow g5 --raid-devices=100000
check_fails "--bitmap=/some/file refused" "$URAID" grow g5 --bitmap=/tmp/bm
check "no change asked: mdadm's words, exit 0 as mdadm" sh -c \
	"'$URAID' grow g5 2>&1 | grep -qx 'uraid: grow: no changes to --grow'"

# --array-size: in memory only; a shrink of --size needs it first.
full=$("$URAID" detail g5 | field 'Array Size' | cut -d' ' -f1)
check_fails "--array-size above the array refused" "$URAID" grow g5 --array-size=1G
check "--array-size=8M" "$URAID" grow g5 --array-size=8M
check "array size 8192K" [ "$("$URAID" detail g5 | field 'Array Size' | cut -d' ' -f1)" = 8192 ]
check_fails "reads past the array size refused" sh -c \
	"'$URAID' cat g5 --offset 8M --length 4K | grep -q ."
"$URAID" grow g5 --array-size=max
check "--array-size=max: full size back" \
	[ "$("$URAID" detail g5 | field 'Array Size' | cut -d' ' -f1)" = "$full" ]
check "--array-size=8M again" "$URAID" grow g5 --array-size=8M
"$URAID" stop g5
"$URAID" assemble a b c
check "--array-size is not persisted (full size after assembly)" \
	[ "$("$URAID" detail g5 | field 'Array Size' | cut -d' ' -f1)" = "$full" ]
check_fails "--size shrink below the array size refused" "$URAID" grow g5 --size=8M
check "--array-size=8M, then --size=4M" sh -c \
	"'$URAID' grow g5 --array-size=8M && '$URAID' grow g5 --size=4M"
check "raid5 after shrink: content as written" same g5 8M

# --bitmap=internal and none.
check "--bitmap=internal" "$URAID" grow g5 --bitmap=internal
check "status shows the bitmap" grep -q 'bitmap:' <<<"$("$URAID" status)"
check_fails "--bitmap=internal again refused" "$URAID" grow g5 --bitmap=internal
# md resizes the bitmap with the members (raid5_resize -> md_bitmap_resize):
# mdadm -X of a member (over a read-only loop device) must then show the new
# per-member size as its sync size, bits for all of it, and the chunk md's
# rule gives (the old one doubled while header + bits outgrow the old
# bitmap's sectors); then back to 4M (after --array-size).
bmx() { # NAME FIELD of mdadm -X on member a
	local l r=
	if command -v losetup >/dev/null && l=$(losetup -f --show -r a 2>/dev/null); then
		r=$(mdadm -X "$l" 2>/dev/null | sed -n "s/^ *$1 : //p" | head -1)
		losetup -d "$l"
	fi
	echo "$r"
}
ck0=$(bmx Chunksize)
check "--size=max with a bitmap" "$URAID" grow g5 --size=max
idle g5
uds=$("$URAID" detail g5 | field 'Used Dev Size' | cut -d' ' -f1)
xs=$(bmx 'Sync Size' | cut -d' ' -f1)
xb=$(bmx Bitmap | cut -d' ' -f1)
xc=$(bmx Chunksize)
echo "# uraid: $uds KiB per member; mdadm -X: sync size $xs KiB, chunk $xc (was $ck0), $xb bits"
if [ -n "$xs" ]; then
	check "mdadm -X: sync size is the new per-member size" [ "$xs" = "$uds" ]
	read -r cn cu <<<"$xc"
	case $cu in B) cb=$cn ;; KB) cb=$((cn << 10)) ;; MB) cb=$((cn << 20)) ;; *) cb=$((cn << 30)) ;; esac
	check "mdadm -X: $xb bits of $xc for $uds KiB" [ "$xb" = $(( (uds * 1024 + cb - 1) / cb )) ]
fi
check "--array-size=8M, --size=4M again, bitmap kept" sh -c \
	"'$URAID' grow g5 --array-size=8M && '$URAID' grow g5 --size=4M"
head -c 1M /dev/urandom >more
"$URAID" write g5 --offset 1M <more
dd if=more of=data bs=1M seek=1 conv=notrunc status=none
check "--bitmap=none" "$URAID" grow g5 --bitmap=none
check_fails "--bitmap=none again refused" "$URAID" grow g5 --bitmap=none
check "no bitmap in status" sh -c "! '$URAID' status | grep -q bitmap:"
check "raid5 after bitmap add/remove: content" same g5 8M
check "raid5 after bitmap add/remove: check clean" clean g5
"$URAID" stop g5
fm=$(mdadm --examine a 2>/dev/null | field 'Feature Map')
check "mdadm --examine: feature map without the bitmap ($fm)" [ "$((fm & 1))" -eq 0 ]
check "mdadm --examine: used size 4M" grep -q 'Array Size : 8192 KiB' <<<"$(mdadm --examine a)"

# raid1 1.0: shrink and grow back (the superblock stays at the end).
truncate -s 16M p q
"$URAID" create --level=1 --raid-devices=2 --metadata=1.0 --name=g10 --run p q >/dev/null 2>&1
idle g10
"$URAID" write g10 <data
check "raid1 1.0: --array-size=8M; --size=8M" sh -c \
	"'$URAID' grow g10 --array-size=8M && '$URAID' grow g10 --size=8M"
"$URAID" stop g10
"$URAID" assemble p q
check "raid1 1.0 --size=max" "$URAID" grow g10 --size=max
idle g10
check "raid1 1.0: component size back to the room before the superblock" \
	[ "$("$URAID" detail g10 | field 'Used Dev Size' | cut -d' ' -f1)" -gt 15000 ]
check "raid1 1.0: content" same g10 8M
check "raid1 1.0: check clean" clean g10
"$URAID" stop g10
check "mdadm --examine reads the 1.0 members" mdadm --examine p

# raid1 --raid-devices.
truncate -s 16M r0 r1 r2
"$URAID" create --level=1 --raid-devices=2 --name=g1 --run r0 r1 >/dev/null 2>&1
idle g1
"$URAID" write g1 <data
"$URAID" add g1 r2
sleep 2.5
sums=$(md5sum r0 r1 r2)
out=$("$URAID" grow g1 --raid-devices=4 2>&1)
check "raid1 --raid-devices=4 with one spare refused in mdadm's words" \
	grep -q 'Need 2 spares to avoid degraded array, and only have 1' <<<"$out"
check "that refusal wrote nothing" [ "$sums" = "$(md5sum r0 r1 r2)" ]
check "raid1 --raid-devices=3 (spare becomes a mirror)" "$URAID" grow g1 --raid-devices=3
idle g1
check "raid1 of 3 in sync" grep -q '\[3/3\] \[UUU\]' <<<"$("$URAID" status)"
check "raid1 of 3: check clean" clean g1
sleep 2.5
sums=$(md5sum r0 r1 r2)
check_fails "--raid-devices=2 refused while 3 slots hold members" \
	"$URAID" grow g1 --raid-devices=2
check "refusal wrote nothing" [ "$sums" = "$(md5sum r0 r1 r2)" ]
"$URAID" fail g1 r1
"$URAID" remove g1 r1
check "--raid-devices=2 with slot 1 empty" "$URAID" grow g1 --raid-devices=2
check "raid1 of 2 in sync" grep -q '\[2/2\] \[UU\]' <<<"$("$URAID" status)"
check "raid1 after down: content" same g1 8M
"$URAID" stop g1
check "mdadm --examine: r2 moved to slot 1 (md compacts the slots)" \
	grep -q 'Active device 1' <<<"$(mdadm --examine r2)"
check "mdadm --examine: 2 raid devices" grep -q 'Raid Devices : 2' <<<"$(mdadm --examine r2)"

# The changes that move data, through the same verb (cmd_grow_restripe.c,
# the daemon's reshape): raid5 3 -> 4 members onto a spare, then a chunk
# and layout change on another array; content and check after each.
truncate -s 24M s0 s1 s2 s3 s4
"$URAID" create --level=5 --raid-devices=3 --name=g5r --run s0 s1 s2 >/dev/null 2>&1
idle g5r
"$URAID" write g5r <data
sleep 2.5 # marked clean after 2 s idle
sums=$(md5sum s0 s1 s2 s3)
out=$("$URAID" grow g5r --raid-devices=4 2>&1)
check "--raid-devices=4 without a spare refused in mdadm's words" \
	grep -q 'Need 1 spare to avoid degraded array, and only have 0' <<<"$out"
check "... naming --force" grep -q 'Use --force to over-ride this check' <<<"$out"
check_fails "--raid-devices=5 --force with no spare refused (raid5 would not work)" \
	"$URAID" grow g5r --raid-devices=5 --force
check "those refusals wrote nothing" [ "$sums" = "$(md5sum s0 s1 s2 s3)" ]
"$URAID" add g5r s3 >/dev/null 2>&1
check "--raid-devices=4 onto the spare: reshape started" "$URAID" grow g5r --raid-devices=4
check "the reshape finishes" idle g5r
check "raid5 of 4 in sync" grep -q '\[4/4\] \[UUUU\]' <<<"$("$URAID" status g5r)"
check "after the grow: content as written" same g5r 8M
check "after the grow: check clean" clean g5r
"$URAID" stop g5r
check "mdadm --examine of the grown members: 4 raid devices, no reshape left" \
	sh -c "mdadm --examine s3 | grep -q 'Raid Devices : 4' && ! mdadm --examine s3 | grep -q 'Reshape'"
"$URAID" assemble s0 s1 s2 s3 >/dev/null 2>&1
off0=$(mdadm --examine s0 | field 'Data Offset' | cut -d' ' -f1)
check "a second reshape (no room left before the data): started" "$URAID" grow g5r --chunk=64K
check "the second reshape finishes" idle g5r
check "chunk now 64K" grep -q '64K' <<<"$("$URAID" detail g5r | field 'Chunk Size')"
check "after the second reshape: content as written" same g5r 8M
check "after the second reshape: check clean" clean g5r
"$URAID" stop g5r
off1=$(mdadm --examine s0 | field 'Data Offset' | cut -d' ' -f1)
check "mdadm --examine: it went backwards, the data offset moved up ($off0 -> $off1 sectors)" \
	[ "${off1:-0}" -gt "${off0:-0}" ]
# 0.90 (md grows it in place with mdadm's backup) and PPL (md refuses):
# refused with nothing written.
truncate -s 16M n0 n1 n2 n3
"$URAID" create --level=5 --raid-devices=3 --metadata=0.90 --name=g5n --run n0 n1 n2 >/dev/null 2>&1
idle g5n
"$URAID" add g5n n3 >/dev/null 2>&1
sums=$(md5sum n0 n1 n2 n3)
out=$("$URAID" grow g5n --raid-devices=4 2>&1)
check "0.90 grow without --backup-file refused in mdadm's words" \
	grep -q "Cannot grow - need a spare or backup-file to backup critical section" <<<"$out"
check "that refusal wrote nothing" [ "$sums" = "$(md5sum n0 n1 n2 n3)" ]
check_fails "a backup file in a missing directory refused" \
	"$URAID" grow g5n --raid-devices=4 --backup-file=/nonexistent/bk
check "nothing written either" [ "$sums" = "$(md5sum n0 n1 n2 n3)" ]
# With --backup-file: grown in place (the data offset stays 0), the
# critical section saved to the file in mdadm's format first.
head -c 6M data | "$URAID" write g5n
check "0.90 grow with --backup-file: started" "$URAID" grow g5n --raid-devices=4 --backup-file=bk
check "the 0.90 grow finishes" idle g5n
check "0.90 grown: 4 members" grep -q '^4$' <<<"$("$URAID" detail g5n | field 'Raid Devices')"
check "0.90 grown: content as written" same g5n 6M
check "0.90 grown: check clean" clean g5n
check "the backup file is mdadm's (md_backup_data-1, the section forgotten)" \
	bash -c '[ "$(head -c 16 bk)" = md_backup_data-1 ] && [ "$(od -An -tu8 -j56 -N8 bk | tr -d " ")" = 0 ]'
# A chunk change on 0.90 (the same data members: mdadm's sliding backup,
# window by window through the file): refused without --backup-file.
sums=$(md5sum n0 n1 n2 n3)
out=$("$URAID" grow g5n --chunk=32K 2>&1)
check "0.90 chunk change without --backup-file refused in mdadm's words" \
	grep -q "Cannot grow - need backup-file" <<<"$out"
check "that refusal wrote nothing" [ "$sums" = "$(md5sum n0 n1 n2 n3)" ]
check "0.90 chunk change with --backup-file: started" "$URAID" grow g5n --chunk=32K --backup-file=bk2
check "the 0.90 chunk change finishes" idle g5n
check "0.90 chunk now 32K" grep -q '^32K$' <<<"$("$URAID" detail g5n | field 'Chunk Size')"
check "after the chunk change: content as written" same g5n 6M
check "after the chunk change: check clean" clean g5n
check "the sliding backup file is mdadm's (md_backup_data-2, data from sector 8)" \
	bash -c '[ "$(head -c 16 bk2)" = md_backup_data-2 ] && [ "$(od -An -tu8 -j40 -N8 bk2 | tr -d " ")" = 8 ]'
"$URAID" stop g5n
check "mdadm --examine: 0.90 raid5 of 4, no reshape" \
	bash -c 'mdadm --examine n0 | grep -q "Raid Devices : 4" && ! mdadm --examine n0 | grep -q "Reshape"'
# mdadm's --grow --bitmap=internal --bitmap-chunk and --consistency-policy
truncate -s 16M v0 v1 v2
"$URAID" create --level=5 --raid-devices=3 --chunk=64K --assume-clean --bitmap=none \
	--consistency-policy=ppl --name=g5v --run v0 v1 v2 >/dev/null 2>&1
check "grow --consistency-policy=resync: the ppl off" sh -c \
	"'$URAID' grow g5v --consistency-policy=resync &&
	 '$URAID' detail g5v | grep -q 'Consistency Policy : resync'"
check "... and back: --consistency-policy=ppl" sh -c \
	"'$URAID' grow g5v --consistency-policy=ppl && '$URAID' detail g5v | grep -q 'Consistency Policy : ppl'"
"$URAID" grow g5v --consistency-policy=resync >/dev/null 2>&1
check "grow --bitmap=internal --bitmap-chunk=1M: a bitmap of 1 MB chunks" sh -c \
	"'$URAID' grow g5v --bitmap=internal --bitmap-chunk=1M && '$URAID' stop g5v &&
	 '$URAID' examine --bitmap v0 | grep -q 'Chunksize : 1 MB'"
# A 0.90 grow stopped past its critical section whose backup file is gone
# (mdadm's child unlinks it there): assemble --backup-file warns, as
# mdadm's Grow_restart, and finishes the grow without it.
truncate -s 16M w0 w1 w2 w3
"$URAID" create --level=5 --raid-devices=3 --metadata=0.90 --chunk=64K --name=g5w --run w0 w1 w2 \
	>/dev/null 2>&1
idle g5w
"$URAID" add g5w w3 >/dev/null 2>&1
head -c 6M data | "$URAID" write g5w
"$URAID" sync-speed --min=100 --max=400 g5w
"$URAID" grow g5w --raid-devices=4 --backup-file=bkw >/dev/null 2>&1
for _ in $(seq 300); do
	p=$("$URAID" status | sed -n 's/.*reshape = *\([0-9]*\)\..*/\1/p')
	[ "${p:-0}" -ge 5 ] && break
	sleep 0.1
done
"$URAID" stop g5w
rm -f bkw
check "mid-grow past its critical section, the backup file gone: assemble --backup-file starts it" \
	sh -c "'$URAID' assemble --name=g5w --backup-file=bkw w0 w1 w2 w3 2>&1 | grep -q 'backup file bkw inaccessible'"
check "... the grow finishes" idle g5w
check "... 4 members, content as written" bash -c \
	"'$URAID' detail g5w | grep -q 'Raid Devices : 4' && '$URAID' cat g5w --length 6M | cmp -s - <(head -c 6M data)"
"$URAID" stop g5w
"$URAID" create --level=5 --raid-devices=3 --consistency-policy=ppl --name=g5p --run n0 n1 n2 \
	>/dev/null 2>&1
idle g5p
"$URAID" add g5p n3 >/dev/null 2>&1
sums=$(md5sum n0 n1 n2 n3)
out=$("$URAID" grow g5p --raid-devices=4 2>&1)
check "PPL grow refused as md refuses it (Invalid argument)" grep -q "Invalid argument" <<<"$out"
check "that refusal wrote nothing" [ "$sums" = "$(md5sum n0 n1 n2 n3)" ]
"$URAID" stop g5p
truncate -s 24M c0 c1 c2 c3
"$URAID" create --level=5 --raid-devices=4 --name=g5c --run c0 c1 c2 c3 >/dev/null 2>&1
idle g5c
"$URAID" write g5c <data
check "--chunk=64K --layout=right-symmetric: reshape started" \
	"$URAID" grow g5c --chunk=64K --layout=right-symmetric
check "the chunk and layout reshape finishes" idle g5c
check "chunk now 64K" grep -q '64K' <<<"$("$URAID" detail g5c | field 'Chunk Size')"
check "layout now right-symmetric" grep -q 'right-symmetric' <<<"$("$URAID" detail g5c | field 'Layout')"
check "after the chunk and layout change: content as written" same g5c 8M
check "after the chunk and layout change: check clean" clean g5c
"$URAID" stop g5c
# A level change that moves data (engine/reshape_level.c): raid5 3 -> raid6
# 4 left-symmetric onto a spare, as mdadm --grow --level=6 --raid-devices=4.
truncate -s 24M l0 l1 l2 l3
"$URAID" create --level=5 --raid-devices=3 --name=g56 --run l0 l1 l2 >/dev/null 2>&1
idle g56
"$URAID" write g56 <data
sleep 2.5
sums=$(md5sum l0 l1 l2 l3)
out=$("$URAID" grow g56 --level=6 2>&1)
check "raid5 -> raid6 without a spare refused in mdadm's words" \
	grep -q "Need 1 spare to avoid degraded array, and only have 0" <<<"$out"
check "that refusal wrote nothing" [ "$sums" = "$(md5sum l0 l1 l2 l3)" ]
"$URAID" add g56 l3 >/dev/null 2>&1
check "--level=6 --raid-devices=4: reshape started" "$URAID" grow g56 --level=6 --raid-devices=4
check "the raid5 -> raid6 reshape finishes" idle g56
check "raid6 of 4 in sync" grep -q '\[4/4\] \[UUUU\]' <<<"$("$URAID" status g56)"
check "level raid6" grep -q 'raid6' <<<"$("$URAID" detail g56 | field 'Raid Level')"
check "layout left-symmetric (the raid5 layout's number, as mdadm keeps it)" \
	grep -q 'left-symmetric$' <<<"$("$URAID" detail g56 | field 'Layout')"
check "after raid5 -> raid6: content as written" same g56 8M
check "after raid5 -> raid6: check clean" clean g56
"$URAID" stop g56
check "mdadm --examine: raid6, left-symmetric, no reshape left" \
	sh -c "mdadm --examine l3 | grep -q 'Raid Level : raid6' && mdadm --examine l3 | grep -q 'Layout : left-symmetric\$' && ! mdadm --examine l3 | grep -q 'Reshape'"

# Fewer members (a backwards reshape): refused until --array-size cuts the
# array, then raid5 4 -> 3 with the data moving up into the room after it
# (members used 8M of 24M); the removed member is left a spare, as md does.
truncate -s 24M b0 b1 b2 b3
"$URAID" create --level=5 --raid-devices=4 --name=g5b --run b0 b1 b2 b3 >/dev/null 2>&1
idle g5b
"$URAID" grow g5b --array-size=24M >/dev/null 2>&1
"$URAID" grow g5b --size=8M >/dev/null 2>&1
"$URAID" write g5b <data
sleep 2.5 # marked clean after 2 s idle
sums=$(md5sum b0 b1 b2 b3)
out=$("$URAID" grow g5b --raid-devices=3 2>&1)
check "--raid-devices=3 before --array-size refused, naming it" grep -q -- "--array-size" <<<"$out"
check "that refusal wrote nothing" [ "$sums" = "$(md5sum b0 b1 b2 b3)" ]
check_fails "--array-size with --raid-devices refused (mdadm: change size first)" \
	"$URAID" grow g5b --array-size=16M --raid-devices=3
check "that refusal wrote nothing" [ "$sums" = "$(md5sum b0 b1 b2 b3)" ]
check "--array-size=16M, then --raid-devices=3: reshape started" sh -c \
	"'$URAID' grow g5b --array-size=16M && '$URAID' grow g5b --raid-devices=3"
check "the backwards reshape finishes" idle g5b
check "raid5 of 3 in sync" grep -q '\[3/3\] \[UUU\]' <<<"$("$URAID" status g5b)"
check "after the shrink: content as written" same g5b 8M
check "after the shrink: check clean" clean g5b
"$URAID" stop g5b
check "mdadm --examine: the removed member is a spare, 3 raid devices, no reshape left" \
	sh -c "mdadm --examine b3 | grep -q 'Device Role : spare' && mdadm --examine b0 | grep -q 'Raid Devices : 3' && ! mdadm --examine b0 | grep -q 'Reshape'"

# raid10 near-2 (engine/reshape_raid10.c, md's raid10 reshape: no backup
# file, the data offset always moves): 4 -> 5 members onto a spare, shown
# in mdstat's form with md's total (the old size: md resyncs the new end),
# a chunk change, near -> offset, and 5 -> 4 after --array-size; the
# changes md refuses, refused in mdadm's words with nothing written.
truncate -s 24M t0 t1 t2 t3 t4
"$URAID" create --level=10 --raid-devices=4 --name=g10r --run t0 t1 t2 t3 >/dev/null 2>&1
idle g10r
"$URAID" grow g10r --array-size=16M >/dev/null 2>&1
"$URAID" grow g10r --size=8M >/dev/null 2>&1
"$URAID" write g10r <data
sleep 2.5 # marked clean after 2 s idle
sums=$(md5sum t0 t1 t2 t3 t4)
out=$("$URAID" grow g10r --raid-devices=5 2>&1)
check "raid10 --raid-devices=5 without a spare refused (mdadm's words)" grep -q "Need 1 spare to avoid degraded array" <<<"$out"
out=$("$URAID" grow g10r --layout=f2 2>&1)
check "raid10 to far-2 refused in mdadm's words" grep -q "Cannot reshape RAID10 to far-mode" <<<"$out"
out=$("$URAID" grow g10r --layout=n3 2>&1)
check "raid10 near-2 -> near-3 refused in mdadm's words" \
	grep -q "Cannot change number of copies when reshaping RAID10" <<<"$out"
check "those refusals wrote nothing" [ "$sums" = "$(md5sum t0 t1 t2 t3 t4)" ]
"$URAID" add g10r t4 >/dev/null 2>&1
old=$("$URAID" detail g10r | field 'Array Size' | cut -d' ' -f1)
"$URAID" sync-speed --min=100 --max=500 g10r >/dev/null 2>&1
check "raid10 --raid-devices=5 onto the spare: reshape started" "$URAID" grow g10r --raid-devices=5
st=$("$URAID" status g10r)
echo "# $(grep -E 'reshape|resync' <<<"$st")"
check "uraid status: mdstat's reshape line, counted to the old size (${old}K) as md does" \
	grep -Eq "reshape = *[0-9]+\.[0-9]% \([0-9]+/$old\)" <<<"$st"
"$URAID" sync-speed --min=1000 --max=2000000 g10r >/dev/null 2>&1
check "the raid10 grow finishes" idle g10r
check "raid10 of 5 in sync" grep -q '\[5/5\] \[UUUUU\]' <<<"$("$URAID" status g10r)"
check "after the raid10 grow: content as written" same g10r 8M
check "after the raid10 grow: check clean" clean g10r
check "raid10 --chunk=128K: reshape started" "$URAID" grow g10r --chunk=128K
check "the raid10 chunk change finishes" idle g10r
check "raid10 chunk now 128K" grep -q '128K' <<<"$("$URAID" detail g10r | field 'Chunk Size')"
check "raid10 --layout=o2: reshape started" "$URAID" grow g10r --layout=o2
check "the raid10 near -> offset change finishes" idle g10r
check "raid10 layout now offset=2" grep -q 'offset=2' <<<"$("$URAID" detail g10r | field 'Layout')"
check "after the raid10 chunk and layout changes: content as written" same g10r 8M
check "after the raid10 chunk and layout changes: check clean" clean g10r
sums=$(md5sum t0 t1 t2 t3 t4)
out=$("$URAID" grow g10r --raid-devices=4 2>&1)
check "raid10 --raid-devices=4 before --array-size refused, naming it" \
	grep -q -- "--array-size" <<<"$out"
check "that refusal wrote nothing" [ "$sums" = "$(md5sum t0 t1 t2 t3 t4)" ]
check "raid10 --array-size=16M, then --raid-devices=4: reshape started" sh -c \
	"'$URAID' grow g10r --array-size=16M && '$URAID' grow g10r --raid-devices=4"
check "the raid10 shrink finishes" idle g10r
check "raid10 of 4 in sync" grep -q '\[4/4\] \[UUUU\]' <<<"$("$URAID" status g10r)"
check "after the raid10 shrink: content as written" same g10r 8M
check "after the raid10 shrink: check clean" clean g10r
"$URAID" stop g10r
check "mdadm --examine: raid10 offset=2 of 4, 128K chunk, the removed member a spare, no reshape left" \
	sh -c "mdadm --examine t0 | grep -q 'Layout : offset=2' && mdadm --examine t0 | grep -q 'Raid Devices : 4' && mdadm --examine t0 | grep -q 'Chunk Size : 128K' && mdadm --examine t4 | grep -q 'Device Role : spare' && ! mdadm --examine t0 | grep -q 'Reshape'"

# Refusals on levels without a size; nothing written.
truncate -s 16M z0 z1
"$URAID" create --level=0 --raid-devices=2 --name=g0 --run z0 z1 >/dev/null 2>&1
sleep 2.5 # marked clean after 2 s idle
sums=$(md5sum z0 z1)
check_fails "raid0 --size refused" "$URAID" grow g0 --size=max
check_fails "raid0 --bitmap=internal refused" "$URAID" grow g0 --bitmap=internal
check_fails "raid0 --raid-devices=3 refused (not done yet)" "$URAID" grow g0 --raid-devices=3
check "raid0 refusals wrote nothing" [ "$sums" = "$(md5sum z0 z1)" ]
"$URAID" stop g0
check_fails "grow of an array not running refused" "$URAID" grow nosuch --size=max

# mdadm --grow --force with no spare: raid5 of 3 -> raid6 of 4 (the Q slot
# the takeover adds left empty): degraded [4/3], content as written; a
# spare added later is recovered and check is clean.
truncate -s 16M q0 q1 q2 q3
"$URAID" create --level=5 --raid-devices=3 --name=g56f --run q0 q1 q2 >/dev/null 2>&1
idle g56f
head -c 6M data | "$URAID" write g56f
check "raid5 -> raid6 --force, no spare: reshape started" "$URAID" grow g56f --level=6 --force
check "the forced raid5 -> raid6 finishes" idle g56f
check "raid6 of 4, the Q slot empty" grep -q 'raid6.*\[4/3\] \[UUU_\]' <<<"$("$URAID" status g56f | tr '\n' ' ')"
check "after the forced raid5 -> raid6: content as written" same g56f 6M
"$URAID" add g56f q3 >/dev/null 2>&1
check "a spare added is recovered into the empty slot" idle g56f
check "raid6 of 4 in sync" grep -q '\[4/4\] \[UUUU\]' <<<"$("$URAID" status g56f)"
check "after the recovery: check clean" clean g56f
check "after the recovery: content as written" same g56f 6M
"$URAID" stop g56f
t_done
