# shellcheck shell=bash
# Host-side helpers for driving shared/mdvm (a qemu VM with the real Linux md
# driver and mdadm).  Sourced by tests/mdvm/*.sh and tests/integration/mdvm_*.sh.
#
#   mdvm_ready            0 when shared/mdvm exists and its cache is set up;
#                         otherwise prints why (and how to fix it) to stderr
#   mdvm_run ARGS...      shared/mdvm/run with the accelerator that works here
#   mdvm_val KEY LOG      last "KEY=value" printed in a run log (value only)
#
# Where shared/ is: ${URAID_SHARED:-<repo>/../shared} (as tests/lib.sh).
# Accelerator: $MDVM_ACCEL if set (kvm|tcg), else tcg, as every other mdvm
# test uses.  MDVM_ACCEL=auto tries KVM once per process tree (a one-line boot,
# 15 s at most) and exports the answer.  Not by default: on some hosts /dev/kvm
# is usable but a KVM guest never boots (it hangs until the timeout), which
# cost every probing test a minute, and the tests' timings are made on TCG.

MDVM_TOP=${MDVM_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
MDVM_SHARED=${URAID_SHARED:-$MDVM_TOP/../shared}
MDVM_RUN=$MDVM_TOP/tests/mdvm/run # shared/mdvm/run with the tests' kernel arguments

mdvm_ready() {
	if [ ! -x "$MDVM_SHARED/mdvm/run" ]; then
		echo "mdvm: $MDVM_SHARED/mdvm/run not found (set URAID_SHARED to the shared/ directory)" >&2
		return 1
	fi
	if ! "$MDVM_RUN" --info >/dev/null 2>&1; then
		echo "mdvm: not set up: run '$MDVM_SHARED/mdvm/setup' as root (scripts/deps does it)" >&2
		return 1
	fi
	return 0
}

# MDVM_ACCEL=auto: kvm when a one-line job really boots with it, else tcg.
mdvm_pick_accel() {
	case "${MDVM_ACCEL:-}" in
	kvm | tcg) return 0 ;;
	auto) ;;
	*) MDVM_ACCEL=tcg; export MDVM_ACCEL; return 0 ;;
	esac
	MDVM_ACCEL=tcg
	if [ -r /dev/kvm ] && [ -w /dev/kvm ] &&
		"$MDVM_RUN" --accel kvm --quiet --timeout 15 --cmd true >/dev/null 2>&1; then
		MDVM_ACCEL=kvm
	fi
	export MDVM_ACCEL
}

mdvm_run() {
	mdvm_pick_accel
	"$MDVM_RUN" --accel "$MDVM_ACCEL" "$@"
}

mdvm_val() {
	sed -n "s/^$1=\([^[:space:]]*\)[[:space:]]*\$/\1/p" "$2" | tail -n 1
}
