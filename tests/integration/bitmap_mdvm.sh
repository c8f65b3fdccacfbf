#!/usr/bin/env bash
# uraid's internal write-intent bitmap in the real kernel (shared/mdvm): a
# raid5 uraid created, gave a bitmap and crashed with 3 dirty chunks
# (tests/unit/test_bitmap_add exports the members) assembles in md with
# the bitmap accepted, the expected content, and mismatch_cnt 0 after check.
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
bin=$TOP/build/asan/tests/test_bitmap_add
[ -x "$bin" ] || { fail "$bin missing (make tests-build)"; t_done; }
d=$T_TMP/img
mkdir -p "$d"
URAID_BM_EXPORT=$d "$bin" engine_bitmap_vs_mdadm >"$T_TMP/export.log" 2>&1
check "members exported after the crash" test -f "$d/m3" -a -f "$d/expected"
sectors=$(($(stat -c %s "$d/expected") / 512))
want=$(md5sum <"$d/expected" | cut -d' ' -f1)
disks=()
for i in 0 1 2 3; do disks+=(--disk "m$i=$d/m$i"); done
{ echo "EXPECT_SECTORS=$sectors"; cat "$TOP/tests/integration/bitmap_mdvm.job"; } >"$T_TMP/job.sh"
"$MDVM" --snapshot --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 "${disks[@]}" \
	--script "$T_TMP/job.sh" >"$T_TMP/vm.log" 2>&1
rc=$?
got=$(sed -n 's/^ARRAY_MD5=\([0-9a-f]*\).*/\1/p' "$T_TMP/vm.log" | head -1)
check "kernel assembles the bitmap array and its check passes (rc $rc)" [ "$rc" -eq 0 ]
check "kernel reads the expected content ($got)" [ "$got" = "$want" ]
check "kernel mismatch_cnt=0" grep -q '^mismatch_cnt=0' "$T_TMP/vm.log"
check "mdadm -X in the VM sees our bitmap with 3 dirty chunks" \
	grep -Eq 'Bitmap : [0-9]+ bits \(chunks\), 3 dirty' "$T_TMP/vm.log"
check "kernel did not call the bitmap stale or corrupt" \
	sh -c "! grep -Eiq 'bitmap.*(out of date|stale|corrupt|invalid|mismatch)' '$T_TMP/vm.log'"
grep -Ei "md0: bitmap|RESYNC_SECTORS|dirty" "$T_TMP/vm.log" | head -8 | sed 's/^/# /'
[ "$rc" -eq 0 ] || grep -E 'mdadm:|md/|md0|bitmap|!!!' "$T_TMP/vm.log" | head -30
t_done
