#!/usr/bin/env bash
# uraid grow's changes that move no data, against the kernel (shared/mdvm,
# one boot): each array is grown by uraid and, from an identical copy, by
# the VM's mdadm and md (raid5 --size=max on grown members; raid1 a spare
# and --raid-devices=3, then a member failed and removed and
# --raid-devices=2 and raid5 of 2; raid0 -> raid5 parity-last, + a spare,
# -> raid6 preserve, + a spare, -> raid5). The superblock fields both wrote
# must agree (mdadm --examine in the VM); md assembles uraid's results (and
# a raid1 1.0 after --bitmap=none, a raid10 taken over from raid0 with its
# mirrors recovered, a raid5 grown 3 -> 4 with --force and no spare, which
# md assembles degraded and rebuilds onto a spare) with the content written
# and mismatch_cnt 0; then
# uraid assembles the kernel's results, reads the same content and checks
# them clean. And mdadm's answers to grow_refuse.table's rows (its arrays
# made by mdadm on loop devices), compared with the table line for line
# (grow_takeover.sh compares uraid's).
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
d=$T_TMP/img
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
		"$URAID" detail "$1" | grep -Eq 'Resync Status|Rebuild Status|Reshape Status' || return 0
		sleep 0.1
	done
	return 1
}
head -c 4M /dev/urandom >data
want=$(md5sum <data | cut -d' ' -f1)
q() { "$@" >/dev/null 2>&1; }
# The array before the grow: made, written, stopped; k* copies for the kernel.
prep() { # NAME LEVEL N SIZE MEMBERS... (+ create options in $opts)
	local name=$1 level=$2 n=$3 size=$4
	shift 4
	truncate -s "$size" "$@"
	q "$URAID" create --level="$level" --raid-devices="$n" --name="$name" --run $opts "$@"
	idle "$name"
	"$URAID" write "$name" <data
	"$URAID" stop "$name"
	[ -n "${nocopy:-}" ] && return
	for m in "$@"; do cp --sparse=always "$m" "k${m#u}"; done
}
opts= prep g5 5 2 12M u5a u5b
truncate -s 24M u5a u5b k5a k5b
q "$URAID" assemble u5a u5b
check "uraid: raid5 --size=max" q "$URAID" grow g5 --size=max
idle g5
"$URAID" stop g5
opts= prep g1 1 2 12M u1a u1b
truncate -s 12M u1c k1c
q "$URAID" assemble u1a u1b
"$URAID" add g1 "$d/u1c"
check "uraid: raid1 --raid-devices=3" q "$URAID" grow g1 --raid-devices=3
idle g1
"$URAID" fail g1 "$d/u1b"
"$URAID" remove g1 "$d/u1b"
check "uraid: raid1 --raid-devices=2" q "$URAID" grow g1 --raid-devices=2
check "uraid: raid1 of 2 -> raid5" q "$URAID" grow g1 --level=5
"$URAID" stop g1
nocopy=1 opts="--metadata=1.0 --bitmap=internal" prep gb 1 2 12M uba ubb
q "$URAID" assemble uba ubb
check "uraid: raid1 1.0 --bitmap=none" q "$URAID" grow gb --bitmap=none
"$URAID" stop gb
opts= prep g0 0 2 12M u0a u0b
truncate -s 12M u0c u0d k0c k0d
q "$URAID" assemble u0a u0b
check "uraid: raid0 -> raid5" q "$URAID" grow g0 --level=5 --layout=parity-last
"$URAID" add g0 "$d/u0c"
idle g0
"$URAID" add g0 "$d/u0d"
check "uraid: raid5 -> raid6 --layout=preserve" q "$URAID" grow g0 --level=6 --layout=preserve
idle g0
check "uraid: raid6 -> raid5" q "$URAID" grow g0 --level=5
"$URAID" stop g0
nocopy=1 opts= prep gt 0 2 12M uta utb
truncate -s 12M utc utd
q "$URAID" assemble uta utb
check "uraid: raid0 -> raid10" q "$URAID" grow gt --level=10
"$URAID" add gt "$d/utc"
"$URAID" add gt "$d/utd"
idle gt
"$URAID" stop gt
# mdadm --grow --force: raid5 3 -> 4 with no spare, slot 3 left empty.
nocopy=1 opts= prep gf 5 3 6M ufa ufb ufc
q "$URAID" assemble ufa ufb ufc
check_fails "uraid: raid5 3 -> 4 without a spare refused without --force" \
	"$URAID" grow gf --raid-devices=4
check "uraid: raid5 3 -> 4 --force, no spare" q "$URAID" grow gf --raid-devices=4 --force
idle gf
"$URAID" stop gf
disks=()
for f in u5a u5b k5a k5b u1a u1b u1c k1a k1b k1c uba ubb \
	u0a u0b u0c u0d k0a k0b k0c k0d uta utb utc utd; do
	disks+=(--disk "$f=$d/$f")
done
# (24 disks is mdvm's most: the forced grow's members travel as files,
# loop devices in the guest)
for f in ufa ufb ufc; do disks+=(--put "$d/$f=/data/$f"); done
disks+=(--put "$TOP/tests/integration/grow_refuse.table=/data/grow_refuse.table")
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 "${disks[@]}" \
	--script "$TOP/tests/integration/grow_meta_mdvm.job" >"$T_TMP/vm.log" 2>&1
rc=$?
check "VM job ran (rc $rc)" [ "$rc" -eq 0 ]
cp "$T_TMP/vm.log" "${TOP}/build/test-logs/grow_meta_mdvm.vm.log" 2>/dev/null
[ "$rc" -eq 0 ] || grep -E 'mdadm:|md/|md[01]|!!!' "$T_TMP/vm.log" | head -30
same_fields() { # LABEL KSIDE USIDE
	local k u
	k=$(sed -n "s/^$2 //p" "$T_TMP/vm.log")
	u=$(sed -n "s/^$3 //p" "$T_TMP/vm.log")
	echo "$u" | sed "s/^/# $3: /"
	[ -z "$k" ] || [ "$k" != "$u" ] && diff <(echo "$k") <(echo "$u") | sed 's/^/# /'
	check "$1: superblock fields as the kernel wrote them" [ -n "$k" -a "$k" = "$u" ]
}
same_fields "raid5 --size=max" K5 U5
same_fields "raid1 --raid-devices 3 then 2 (slot 0)" K1A U1A
same_fields "raid1 --raid-devices 3 then 2 (spare moved to slot 1)" K1C U1C
check "raid1 1.0 --bitmap=none: no bitmap bit in the feature map" \
	grep -qx 'UB Feature Map : 0x0' "$T_TMP/vm.log"
check "raid10 from raid0: near-2 of 4 as md reads it" sh -c \
	"grep -qx 'UT Layout : near=2' '$T_TMP/vm.log' && grep -qx 'UT Raid Devices : 4' '$T_TMP/vm.log'"
same_fields "raid0 -> raid5 -> raid6 -> raid5 (slot 0)" K0A U0A
same_fields "raid0 -> raid5 -> raid6 -> raid5 (the Q member, a spare)" K0D U0D
for a in U5 U1 UB U0 UT; do
	check "md assembled uraid's $a: content as written" grep -qx "MD5_$a=$want" "$T_TMP/vm.log"
	check "md assembled uraid's $a: kernel check clean" grep -qx "CHECK_$a=ok" "$T_TMP/vm.log"
done
check "md: no bitmap on uraid's raid1 after --bitmap=none" grep -qx 'BITMAP_UB=0' "$T_TMP/vm.log"
check "md reads uraid's forced grow: 4 raid devices, slot 3 empty" sh -c \
	"grep -qx 'UF Raid Devices : 4' '$T_TMP/vm.log' && grep -q '^UF Array State : AAA\. ' '$T_TMP/vm.log'"
check "md assembles it degraded (1 slot missing)" grep -qx 'DEGRADED_UF=1' "$T_TMP/vm.log"
check "md reads it degraded: content as written" grep -qx "MD5D_UF=$want" "$T_TMP/vm.log"
check "md rebuilds slot 3 onto a spare: content as written" grep -qx "MD5_UF=$want" "$T_TMP/vm.log"
check "md rebuilds slot 3 onto a spare: kernel check clean" grep -qx "CHECK_UF=ok" "$T_TMP/vm.log"
# grow_refuse.table's rows as mdadm 4.2 answers them (grow_takeover.sh
# checks uraid's answers against the same table): status and every line.
source "$TOP/tests/integration/grow_refuse.bash"
sed -n 's/^GR //p' "$T_TMP/vm.log" >"$T_TMP/gr.mdadm"
check "mdadm made the table's arrays" sh -c "! grep -q 'create of' '$T_TMP/gr.mdadm'"
gr_compare "$T_TMP/gr.mdadm" m "mdadm --grow"
# The kernel's results in uraid.
kern() { # NAME MEMBERS...
	local name=$1
	shift
	q "$URAID" assemble --name="$name" "$@" || return 1
	idle "$name"
	"$URAID" cat "$name" --length 4M | cmp -s - data || return 1
	[ "$("$URAID" check "$name")" = "mismatch_cnt 0" ] || return 1
	"$URAID" stop "$name"
}
check "uraid assembles the kernel's raid5 --size=max: content, check clean" kern k5 k5a k5b
check "uraid assembles the kernel's raid5 from raid1 of 2 after 3: content, check clean" \
	kern k1 k1a k1c
check "uraid assembles the kernel's raid5 from raid6 from raid0: content, check clean" \
	kern k0 k0a k0b k0c k0d
t_done
