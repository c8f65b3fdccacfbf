#!/usr/bin/env bash
# The kernel as judge of uraid's bitmaps beyond 1.1/1.2 raid1/4/5/6 (one VM
# boot, shared/mdvm): arrays uraid made with a bitmap below a 1.0
# superblock, after a 0.90 one, and on raid10 (bits over array sectors),
# crashed with dirty bits (tests/unit/test_meta_bitmap_place exports them), are
# assembled by md with the bitmap accepted; mdadm -X sees exactly the dirty
# bits an independent count of the writes predicts; the array reads the
# expected content; check finds mismatch_cnt 0; after a clean stop 0 dirty
# bits and the superblock's events. The VM's mdadm makes the same shapes:
# bitmap offset, chunk, sync size and bit count equal uraid's, and uraid
# opens those kernel-made arrays (content md5 equal, read-write with a
# check of 0 mismatches, clean bitmap after its stop).
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
bin=$TOP/build/asan/tests/test_meta_bitmap_place
[ -x "$bin" ] || { fail "$bin missing (make tests-build)"; t_done; }
export URAID_RUN_DIR=$T_TMP/run
d=$T_TMP/img
mkdir -p "$d"
loops=()
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
URAID_BM_EXPORT=$d "$bin" export_for_kernel >"$T_TMP/export.log" 2>&1
check "uraid arrays exported after the crash" grep -q '^ok - export_for_kernel' "$T_TMP/export.log"
tags="a10:4 b09:2 c10:3 d12:4"
disks=()
job=$T_TMP/job.sh
: >"$job"
for t in $tags; do
	tag=${t%%:*} n=${t##*:}
	for ((i = 0; i < n; i++)); do disks+=(--disk "${tag}_$i=$d/${tag}_$i"); done
	echo "SECT_$tag=$(($(stat -c %s "$d/$tag.exp") / 512))" >>"$job"
	md5sum <"$d/$tag.exp" | cut -d' ' -f1 >"$d/$tag.md5"
	rm -f "$d/$tag.exp"
done
for t in ka:4 kb:2 kc:3; do
	tag=${t%%:*} n=${t##*:}
	for ((i = 0; i < n; i++)); do
		truncate -s 12M "$d/${tag}_$i"
		disks+=(--disk "${tag}_$i=$d/${tag}_$i")
	done
done
cat "$TOP/tests/integration/bitmap_ext_mdvm.job" >>"$job"
# No --snapshot: the kernel-made members come back to the host.
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 500 "${disks[@]}" --script "$job" \
	>"$T_TMP/vm.log" 2>&1
rc=$?
check "VM job ran (rc $rc)" [ "$rc" -eq 0 ]
vm() { sed -n "s/^$1 $2 //p" "$T_TMP/vm.log" | head -1; }
for t in $tags; do
	tag=${t%%:*}
	want=$(cat "$d/$tag.dirty")
	check "$tag: mdadm -X sees the $want dirty bits the writes predict ($(vm BEFORE "$tag"))" \
		grep -Eq "^BEFORE $tag +Bitmap : [0-9]+ bits \(chunks\), $want dirty" "$T_TMP/vm.log"
	check "$tag: the kernel reads the expected content" [ "$(vm MD5 "$tag")" = "$(cat "$d/$tag.md5")" ]
	check "$tag: kernel check mismatch_cnt 0" grep -q "^CHECK_OK $tag" "$T_TMP/vm.log"
	check "$tag: clean stop, 0 dirty bits" grep -Eq "^AFTER $tag +Bitmap : [0-9]+ bits \(chunks\), 0 dirty" \
		"$T_TMP/vm.log"
	check "$tag: bitmap events = superblock events ($(vm SBEV "$tag"))" \
		[ -n "$(vm SBEV "$tag")" -a "$(vm AFTEREV "$tag")" = "$(vm SBEV "$tag")" ]
done
for p in a10:ka b09:kb c10:kc; do
	u=${p%%:*} k=${p##*:}
	check "$u vs mdadm's $k: bitmap offset|chunk|sync size|bits equal ($(vm SHAPE "$u"))" \
		[ -n "$(vm SHAPE "$u")" -a "$(vm SHAPE "$u")" = "$(vm SHAPE "$k")" ]
done
# (md1 is mdadm's own 0.90 create, whose first bitmap has events 0 < 1:
# the kernel calls that out of date itself; only uraid's md0 counts here)
grep -Ei 'bitmap.*(out of date|stale|corrupt|invalid|mismatch|bad)' "$T_TMP/vm.log" | sed 's/^/# note: /'
check "kernel did not call uraid's bitmaps stale or corrupt" \
	sh -c "! grep -Eiq 'md0.*bitmap.*(out of date|stale|corrupt|invalid|mismatch|bad)' '$T_TMP/vm.log'"

# The kernel-made arrays in uraid.
for t in ka:4 kb:2 kc:3; do
	tag=${t%%:*} n=${t##*:}
	m=()
	for ((i = 0; i < n; i++)); do m+=("$d/${tag}_$i"); done
	got=$("$URAID" cat "${m[@]}" 2>"$T_TMP/$tag.err" | md5sum | cut -d' ' -f1)
	check "$tag: uraid reads the kernel-made array ($got)" [ "$got" = "$(vm KMD5 "$tag")" ]
	check "$tag: uraid assembles it read-write with its bitmap" \
		"$URAID" assemble --name "$tag" "${m[@]}"
	head -c 1M /dev/urandom >"$T_TMP/w"
	check "$tag: write through uraid" "$URAID" write "$tag" --offset 2M <"$T_TMP/w"
	check "$tag: uraid check 0 mismatches" grep -qx "mismatch_cnt 0" <("$URAID" check "$tag")
	check "$tag: stop" "$URAID" stop "$tag"
	if l=$(losetup -f --show -r "${m[1]}"); then
		loops+=("$l")
		bx=$(mdadm --examine-bitmap "$l" 2>&1)
		ev=$(mdadm --examine "$l" 2>&1 | sed -n 's/^ *Events : //p')
		check "$tag: after uraid, mdadm -X: 0 dirty" grep -Eq 'Bitmap : [0-9]+ bits \(chunks\), 0 dirty' <<<"$bx"
		check "$tag: after uraid, bitmap events = superblock events ($ev)" \
			[ -n "$ev" -a "$(echo "$bx" | sed -n 's/^ *Events : //p')" = "$ev" ]
	else
		fail "$tag: losetup unavailable"
	fi
done
grep -E "mdadm --create|^mdadm:|!!!" "$T_TMP/vm.log" | sed "s/^/# vm: /"
[ "$rc" -eq 0 ] || grep -E 'mdadm:|md/|md0|bitmap|!!!' "$T_TMP/vm.log" | head -30
grep -E '^(BEFORE|AFTER|SHAPE) ' "$T_TMP/vm.log" | sed 's/^/# /'
t_done
