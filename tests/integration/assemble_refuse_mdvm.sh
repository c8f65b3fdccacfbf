#!/usr/bin/env bash
# uraid assemble's refusals against mdadm 4.2 (shared/mdvm, one boot): the
# guest makes assemble_refuse.table's member sets with mdadm on loop
# devices and runs mdadm --assemble on each row; its status and every line
# are wanted as the table says, and every member a refused row names
# unchanged (md5 in the guest). Then uraid runs the same rows on the
# guest's images (mdadm's superblocks), wanted as assemble_refuse.sh wants
# them on uraid's.
source "$(dirname "$0")/../lib.sh"
t_mdvm
t_own_run_dir
source "$TOP/tests/integration/assemble_refuse.bash"
truncate -s $(($(ar_list | wc -l) * AR_MB))M "$T_TMP/out"
t0=$SECONDS
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 90 --disk "out=$T_TMP/out" \
	--put "$AR_TABLE=/data/t" --script "$TOP/tests/integration/assemble_refuse_mdvm.job" \
	>"$T_TMP/vm.log" 2>&1
rc=$?
echo "# guest: $((SECONDS - t0)) s"
check "VM job ran (rc $rc)" [ "$rc" -eq 0 ]
cp "$T_TMP/vm.log" "$TOP/build/test-logs/assemble_refuse_mdvm.vm.log" 2>/dev/null
check "mdadm made the table's member sets" sh -c "! grep -q '^AR prep failed' '$T_TMP/vm.log'"
grep -A3 '^AR prep failed' "$T_TMP/vm.log" | sed 's/^/# /'
sed -n 's/^AR //p' "$T_TMP/vm.log" >"$T_TMP/out.m"
ar_compare "$T_TMP/out.m" m "mdadm --assemble"
# uraid on mdadm's images: the same answers as on its own
ar_images_split "$T_TMP/out" "$T_TMP/k"
ar_run_uraid "$T_TMP/k" >"$T_TMP/out.u"
ar_compare "$T_TMP/out.u" u "uraid assemble (mdadm's images)"
t_done
