# Helpers for integration tests (sourced). Each check prints "ok - name" or
# "not ok - name"; tests/run adds them up. Scripts exit non-zero on any failure.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
URAID=${URAID:-$TOP/build/rel/uraid}
URAID_ASAN=${URAID_ASAN:-$TOP/build/asan/uraid}
SHARED=${URAID_SHARED:-$TOP/../shared}
T_FAILED=0
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/uraid-test.XXXXXX")
trap 't_kill_daemons; rm -rf "$T_TMP"' EXIT

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

# t_mdvm: MDVM set to the runner of shared/mdvm, or the test ends failed
# when it cannot run there.
t_mdvm() {
	MDVM=$TOP/tests/mdvm/run
	if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
		fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
		t_done
	fi
}

# t_own_run_dir: URAID_RUN_DIR under $T_TMP; at exit every array it holds is
# stopped and $T_TMP removed.
t_own_run_dir() {
	export URAID_RUN_DIR=$T_TMP/run
	trap t_own_run_dir_cleanup EXIT
}
t_own_run_dir_cleanup() {
	local s
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}

# t_want LOG NAME WHAT DESCRIPTION: one check from a guest job's
# "RESULT NAME WHAT ok|bad DETAIL" lines in LOG (the first such line).
t_want() {
	local l
	l=$(grep "^RESULT $2 $3 " "$1" | head -1)
	check "$2: $4 (${l#RESULT $2 $3 })" [ "${l#RESULT $2 $3 ok}" != "$l" ]
}

# uraid_libs: the link flags a program on build/rel/liburaid.a needs (the
# Makefile's LIBS: pthread, isa-l, liburing, libnbd as this build has them).
uraid_libs() { make -s -C "$TOP" print-libs; }

# t_kill_daemons: the uraid daemons of the run directories under $T_TMP
# (and $URAID_RUN_DIR), by the pid each writes to its NAME.pid, while that
# process is still "uraid daemon NAME": SIGTERM, then SIGKILL after 10 s
# (one hung in its assembly has SIGTERM blocked). For the teardowns: a
# `timeout` that killed the CLI leaves the daemon running.
t_kill_daemons() {
	local f p n c pids=() i
	while IFS= read -r f; do
		n=$(basename "$f" .pid)
		p=$(cat "$f" 2>/dev/null) || continue
		case "$p" in '' | *[!0-9]*) continue ;; esac
		c=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") || continue
		[[ "$c" == "uraid daemon $n "* ]] || continue
		kill -TERM "$p" 2>/dev/null && pids+=("$p")
	done < <(find "$T_TMP" ${URAID_RUN_DIR:+"$URAID_RUN_DIR"} -name '*.pid' -type f 2>/dev/null)
	for p in "${pids[@]}"; do
		for ((i = 0; i < 100; i++)); do
			# gone, or a zombie (no command line) nobody reaped yet
			[ -n "$(tr -d '\0' 2>/dev/null <"/proc/$p/cmdline")" ] || break
			sleep 0.1
		done
		[ "$i" -lt 100 ] || kill -KILL "$p" 2>/dev/null
	done
	return 0
}
