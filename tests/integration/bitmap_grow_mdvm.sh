#!/usr/bin/env bash
# An internal bitmap resized by a grow, with the real kernel (shared/mdvm,
# one boot) as judge both ways (job: bitmap_grow_mdvm.job). Bitmap chunk
# 4K; on 1.1/1.2 md's room for the bitmap is the one sector it had
# (header 256 bytes + bits), 1.0 up to the superblock, 0.90 60 KiB.
# uraid -> kernel: uraid (here) makes the arrays, writes, grows them and
# writes again: a: raid1 1.2 --size 3M -> 11M (2816 bits no longer fit:
# the chunk doubles), f: raid5 1.2 2M -> 10M (per member: doubles), c:
# raid10 near-2 of 4, 2M -> 4M (bits over the array: 2048, which with the
# header fill the sector exactly: the chunk stays), b: raid5 1.0 and e:
# raid1 0.90 shrunk to 3M and grown back to the end (the chunk stays), d:
# raid10 near-2 4 -> 5 members (uraid finishes the reshape; the chunk
# doubles). In the guest mdadm -X of every member must show uraid's chunk,
# bit count and dirty count (uraid status --json after the last assembly
# here) and a fresh header (state OK, the superblocks' events), uraid
# examine --bitmap must print mdadm -X's lines (every array, both ways),
# md assembles each with nothing to resync, reads the md5 uraid cat
# reads, and check gives mismatch_cnt 0. z: raid1 1.2 grown 3M -> 11M,
# killed as the grow returns: the header fresh, md resyncs from the old
# size on. w: raid1 1.2 grown 3M -> 11M,
# killed during the new region's resync with a write under way: mdadm -X
# shows uraid's dirty bits (the grown region's, the write's chunk), and
# md's resync after the unclean stop goes where they say and nowhere else
# (blocks planted on one mirror: fixed in dirty chunks, left in a clean
# one).
# kernel -> uraid: in the guest mdadm makes the same arrays on loop devices
# (same member sizes, data offsets and --size) and md grows them as uraid
# did (d: mdadm --grow --raid-devices=5 with the bitmap): mdadm -X of the
# kernel's result must equal that of uraid's (chunk, bits, sync size: the
# same resize rule), and uraid (put into the guest) assembles each: its
# bitmap view is mdadm -X's, cat reads the kernel's md5, uraid check gives
# mismatch_cnt 0. i: the kernel's raid10 4 -> 5 with the bitmap,
# throttled, frozen mid-way and stopped (a reshape position in the
# superblocks); uraid (in the guest, so that md can judge the result in
# the same boot) finishes it; its bitmap view is mdadm -X's and as of the
# kernel's own finished d; md assembles it: content, check.
source "$(dirname "$0")/../lib.sh"
t_mdvm
d=$T_TMP/img
mkdir -p "$d"
cd "$d" || exit 1
export URAID_RUN_DIR=$T_TMP/run
q() { "$@" >/dev/null 2>&1; }
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(7).randbytes(3<<20))' >pre
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(8).randbytes(1<<20))' >post
# uraid's bitmap as "chunk_kib chunks dirty" (status --json)
ubm() { "$URAID" status --json "$1" | sed -n 's/.*"bitmap":{"chunk_kib":\([0-9]*\),"chunks":\([0-9]*\),"dirty":\([0-9]*\)}.*/\1 \2 \3/p'; }
# mk NAME LEVEL N MiB META MEMBERS... : made with a bitmap of 4K chunks,
# the resync waited for
mk() {
	local n=$1 l=$2 nd=$3 mib=$4 meta=$5
	shift 5
	truncate -s "${mib}M" "$@"
	q "$URAID" create --level="$l" --raid-devices="$nd" --metadata="$meta" --name="$n" --run \
		--bitmap=internal --bitmap-chunk=4K --assume-clean "$@" || return 1
	"$URAID" wait "$n" || :
}
# after NAME : the data written after the grow (1 MiB at 2 MiB), the
# array's md5 (uraid cat) and bitmap kept for the guest's checks
after() {
	"$URAID" write "$1" --offset $((2 << 20)) <post || return 1
	"$URAID" wait "$1" || :
	"$URAID" stop "$1" || return 1
	q "$URAID" assemble --name="$1" "${@:2}" || return 1
	echo "UBM_$1='$(ubm "$1")'" >>"$d/u.env"
	"$URAID" stop "$1" || return 1
	echo "UMD5_$1=$("$URAID" cat "${@:2}" | md5sum | cut -d' ' -f1)" >>"$d/u.env"
}
: >"$d/u.env"
grow_up() { # NAME LEVEL N META MEMBERS... : 4M -> 12M (or $TO) files, --size=max
	local n=$1 l=$2 nd=$3 meta=$4
	shift 4
	mk "$n" "$l" "$nd" 4 "$meta" "$@" || return 1
	"$URAID" write "$n" <pre || return 1
	"$URAID" stop "$n"
	truncate -s "${TO}M" "$@"
	q "$URAID" assemble --name="$n" "$@" || return 1
	echo "UBM0_$n='$(ubm "$n")'" >>"$d/u.env"
	"$URAID" grow "$n" --size=max || return 1
	after "$n" "$@"
}
grow_end() { # NAME LEVEL N META MEMBERS... : 8M files, --size 3M, restarted, --size=max
	local n=$1 l=$2 nd=$3 meta=$4
	shift 4
	mk "$n" "$l" "$nd" 8 "$meta" "$@" || return 1
	q "$URAID" grow "$n" --array-size=$((3072 * (nd - (l == 5)) / (l == 1 ? nd : 1)))
	"$URAID" grow "$n" --size=3072 || return 1
	"$URAID" write "$n" <pre || return 1
	"$URAID" stop "$n"
	q "$URAID" assemble --name="$n" "$@" || return 1
	echo "UBM0_$n='$(ubm "$n")'" >>"$d/u.env"
	"$URAID" grow "$n" --size=max || return 1
	after "$n" "$@"
}
TO=12 check "uraid: raid1 1.2 --size 3M -> max (11M)" grow_up ua 1 2 1.2 ua0 ua1
TO=12 check "uraid: raid5 1.2 --size 2M -> max (10M)" grow_up uf 5 3 1.2 uf0 uf1 uf2
TO=6 check "uraid: raid10 near-2 1.2 --size 2M -> max (4M)" grow_up uc 10 4 1.2 uc0 uc1 uc2 uc3
check "uraid: raid5 1.0 --size 3M, then max" grow_end ub 5 3 1.0 ub0 ub1 ub2
check "uraid: raid1 0.90 --size 3M, then max" grow_end ue 1 2 0.90 ue0 ue1
d_case() {
	mk ud 10 4 6 1.2 ud0 ud1 ud2 ud3 || return 1
	"$URAID" write ud <pre || return 1
	truncate -s 6M ud4
	"$URAID" add ud "$d/ud4" >/dev/null || return 1
	echo "UBM0_ud='$(ubm ud)'" >>"$d/u.env"
	"$URAID" grow ud --raid-devices=5 >/dev/null || return 1
	"$URAID" wait ud || :
	after ud ud0 ud1 ud2 ud3 ud4
}
check "uraid: raid10 near-2 4 -> 5 with the bitmap" d_case
# w: raid1 1.2 grown 3M -> 11M (the chunk doubles) with the new region's
# resync throttled, a 4 KiB write at 2 MiB under way, then the daemon
# killed: bits on disk for the new region (set by the grow) and the
# write's chunk, the superblocks active. Member 1 then differs from member
# 0 in three 4 KiB blocks: at 1 MiB (a clean chunk), 2 MiB + 4 KiB (the
# write's chunk) and 10 MiB (the new region).
grown_raid1() { # NAME: raid1 1.2 of NAME0 NAME1 grown 3M -> 11M, its resync throttled
	mk "$1" 1 2 4 1.2 "${1}0" "${1}1" || return 1
	"$URAID" write "$1" <pre || return 1
	"$URAID" stop "$1"
	truncate -s 12M "${1}0" "${1}1"
	q "$URAID" assemble --name="$1" "${1}0" "${1}1" || return 1
	"$URAID" sync-speed "$1" --min=1 --max=100 || return 1
	"$URAID" grow "$1" --size=max
}
w_case() {
	grown_raid1 uw || return 1
	head -c 4096 post | "$URAID" write uw --offset $((2 << 20)) || return 1
	echo "UBM_uw='$(ubm uw)'" >>"$d/u.env"
	kill -9 "$(cat "$URAID_RUN_DIR/uw.pid")"
	"$URAID" examine uw0 | grep -q 'State : active' || return 1
	for o in 1024 2052 10240; do # KiB into the array, 1 MiB data offset
		head -c 4096 /dev/urandom | dd of=uw1 bs=1K seek=$((o + 1024)) conv=notrunc 2>/dev/null
	done
}
check "uraid: raid1 1.2 grown 3M -> 11M, killed during the new region's resync" w_case
# z: the same grow, the daemon killed as soon as it returns
z_case() {
	grown_raid1 uz || return 1
	echo "UBM_uz='$(ubm uz)'" >>"$d/u.env"
	kill -9 "$(cat "$URAID_RUN_DIR/uz.pid")"
	echo "UMD5_uz=$("$URAID" cat uz0 uz1 | md5sum | cut -d' ' -f1)" >>"$d/u.env"
}
check "uraid: raid1 1.2 grown 3M -> 11M, killed as the grow returns" z_case
sed 's/^/# /' "$d/u.env"
disks=()
for f in ua0 ua1 uf0 uf1 uf2 uc0 uc1 uc2 uc3 ub0 ub1 ub2 ue0 ue1 ud0 ud1 ud2 ud3 ud4 uw0 uw1 uz0 uz1; do
	disks+=(--disk "$f=$d/$f")
done
t0=$SECONDS
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 400 --mem 1536 "${disks[@]}" \
	--put-exe "$URAID" --put "$d/pre=/tmp/pre" --put "$d/post=/tmp/post" --put "$d/u.env=/tmp/u.env" \
	--script "$TOP/tests/integration/bitmap_grow_mdvm.job" >"$T_TMP/vm.log" 2>&1
rc=$?
echo "# VM: $((SECONDS - t0)) s"
cp "$T_TMP/vm.log" "$TOP/build/test-logs/bitmap_grow_mdvm.vm.log" 2>/dev/null
check "VM job ran (rc $rc)" [ "$rc" -eq 0 ]
want() { t_want "$T_TMP/vm.log" "$@"; }
for c in "a:raid1 1.2 grown 3M -> 11M, the chunk doubled" "f:raid5 1.2 grown 2M -> 10M, the chunk doubled" \
	"c:raid10 near-2 grown 2M -> 4M, the chunk kept (2048 bits and the header fill the sector)" "b:raid5 1.0 grown 3M -> 7.5M, the chunk kept" \
	"e:raid1 0.90 grown 3M -> 7.9M, the chunk kept" "d:raid10 near-2 4 -> 5"; do
	n=${c%%:*}
	want u$n xbm "uraid's ${c#*:}: mdadm -X of every member shows uraid's chunk, bits, dirty, the header fresh"
	want u$n xtext "... uraid examine --bitmap prints mdadm -X's lines"
	want u$n kasm "... md assembles it with nothing to resync"
	want u$n kmd5 "... and reads what uraid cat reads"
	want u$n kcheck "... check: mismatch_cnt 0"
	want k$n same "the kernel's ${c#*:} (mdadm's array, the same grow): mdadm -X as of uraid's"
	want k$n xtext "... uraid examine --bitmap prints mdadm -X's lines"
	want k$n ubm "... uraid assembles it: its bitmap view is mdadm -X's"
	want k$n umd5 "... uraid cat reads the kernel's md5"
	want k$n ucheck "... uraid check: mismatch_cnt 0"
done
want uw xbm "uraid's raid1 killed in the resync after a grow (chunk doubled): mdadm -X shows uraid's chunk, bits, dirty, the header fresh"
want uw xtext "... uraid examine --bitmap prints mdadm -X's lines (the dirty count too)"
want uw kasm "... md assembles it and resyncs"
want uw kclean "... md leaves the clean chunk alone, as the bitmap says (a block planted there still differs)"
want uw kdirty "... and resyncs the dirty chunks: the written one and the grown region (the blocks planted there agree)"
want uz xbm "uraid's raid1 killed as its grow returns (chunk doubled): mdadm -X shows uraid's bits, the header fresh (not stale, the superblocks' events)"
want uz xtext "... uraid examine --bitmap prints mdadm -X's lines (the dirty count too)"
want uz kasm "... md resyncs the grown region only"
want uz kmd5 "... and reads what uraid cat reads"
want uz kcheck "... check: mismatch_cnt 0"
want ki kstop "raid10 near-2 4 -> 5 with the bitmap by the kernel, frozen and stopped mid-way"
want ki ufinish "... uraid assembles it and finishes the reshape"
want ki ubm "... its bitmap view is mdadm -X's"
want ki xtext "... uraid examine --bitmap prints mdadm -X's lines"
want ki kmd5 "... md assembles it and reads the content written before"
want ki kcheck "... check: mismatch_cnt 0"
want ki xbm "... mdadm -X as of the kernel's own finished 4 -> 5"
[ $T_FAILED = 0 ] || grep -E "RESULT|mdadm:|md/|!!!|uraid:|^[<>]" "$T_TMP/vm.log" | head -60
t_done
