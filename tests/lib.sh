# Helpers for integration tests (sourced). Each check prints "ok - name" or
# "not ok - name"; tests/run adds them up. Scripts exit non-zero on any failure.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
URAID=${URAID:-$TOP/build/rel/uraid}
URAID_ASAN=${URAID_ASAN:-$TOP/build/asan/uraid}
SHARED=${URAID_SHARED:-$TOP/../shared}
T_FAILED=0
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/uraid-test.XXXXXX")
trap 'rm -rf "$T_TMP"' EXIT

ok() { echo "ok - $*"; }
fail() { echo "not ok - $*"; T_FAILED=1; }
# check NAME CMD...: passes when CMD exits 0; returns CMD's status, so
# `check ... || diff ...` shows what differs when it fails
check() {
	local n=$1 rc=0
	shift
	"$@" || rc=$?
	if [ $rc -eq 0 ]; then ok "$n"; else fail "$n"; fi
	return $rc
}
# check_fails NAME CMD...: passes when CMD exits non-zero; returns 0 when it
# passed, 1 when CMD succeeded
check_fails() {
	local n=$1
	shift
	if "$@"; then
		fail "$n (expected failure)"
		return 1
	fi
	ok "$n"
}
# check_fails_q CMD...: succeeds when CMD fails (output dropped), for use inside check
check_fails_q() { ! "$@" >/dev/null 2>&1; }
t_done() { exit $T_FAILED; }

# uraid_libs: the link flags a program on build/rel/liburaid.a needs (the
# Makefile's LIBS: pthread, isa-l, liburing, libnbd as this build has them).
uraid_libs() { make -s -C "$TOP" print-libs; }
