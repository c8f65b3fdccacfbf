# Host side of the md reshape round trips against the real kernel
# (shared/mdvm), sourced by reshape_mdvm.sh (the kernel's reshapes, stopped
# mid-way, finished by uraid) and reshape_rt_mdvm.sh (uraid's, stopped at
# 40%, finished by the kernel); one boot each; reshape_slide_mdvm.sh (mdadm's
# sliding backup) uses rs_setup and want. The guest's helpers are
# reshape_lib.job, sourced by the first two jobs.
#   rs_setup        : reshape_tool built, the pattern disk made
#   rs_add NAME N [MiB] : N disks NAME0.. of 4 MiB (or MiB)
#   rs_boot JOB ... : the VM run with the disks, uraid, reshape_tool, the lib
#   want NAME WHAT DESCRIPTION : one check from the guest's RESULT lines
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
d=$T_TMP
disks=()
rs_setup() {
	if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
		fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
		t_done
	fi
	local libs
	libs=$(uraid_libs)
	cc -O1 -Wall -I"$TOP/include" -o "$d/reshape_tool" "$TOP/tests/integration/reshape_tool.c" \
		"$TOP/build/rel/liburaid.a" $libs || {
		fail "reshape_tool builds"
		t_done
	}
	python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(15).randbytes(12<<20))' \
		>"$d/pat"
	disks=(--disk pat="$d/pat")
}
rs_add() {
	for i in $(seq 0 $(($2 - 1))); do
		truncate -s "${3:-4}M" "$d/$1$i"
		disks+=(--disk "$1$i=$d/$1$i")
	done
}
rs_boot() { # job name, more mdvm arguments
	local job=$1 rc
	shift
	"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 600 "${disks[@]}" --put-exe "$URAID" \
		--put-exe "$d/reshape_tool" --put "$TOP/tests/integration/reshape_lib.job=/tmp/reshape_lib.job" \
		"$@" --script "$TOP/tests/integration/$job.job" >"$d/vm.log" 2>&1
	rc=$?
	cp "$d/vm.log" "$TOP/build/test-logs/$job.vm.log" 2>/dev/null
	check "VM ran the reshape job (rc $rc)" [ "$rc" -eq 0 ]
}
want() { t_want "$d/vm.log" "$@"; }
rs_done() {
	[ $T_FAILED = 0 ] || grep -E "RESULT|mdadm:|md/raid|!!!|uraid:|reshape|^[<>]" "$d/vm.log" | head -60
	t_done
}
