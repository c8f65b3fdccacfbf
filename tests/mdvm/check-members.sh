#!/usr/bin/env bash
# Asks the real Linux md driver whether member images form a good array.
#
#   tests/mdvm/check-members.sh [--expect-md5 MD5] [--expect-bytes N] [--log FILE]
#                               [--timeout S] IMG...
#
# Boots shared/mdvm with --snapshot (the images are never modified) with IMG...
# attached as m0, m1, ... and runs shared/mdvm/examples/check-array.sh there:
# mdadm --assemble --readonly, md5 of the whole /dev/md0, then --readwrite and a
# "check" pass.  Arrays without redundancy (raid0, linear) skip the check.
# Prints on stdout:
#   ARRAY_BYTES=<size of /dev/md0>
#   ARRAY_MD5=<md5 of /dev/md0>
#   MISMATCH_CNT=<mismatch_cnt after the check, "n/a" for raid0/linear>
# Exit status 0 only when the array assembled, its md5 could be read, the
# check (where there is one) found no mismatch, and the --expect-* values (if
# given) match; 1 otherwise (the reason and the end of the VM log go to
# stderr); 2 on bad arguments or when mdvm is not set up.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/mdvm/lib.sh
. "$HERE/lib.sh"

usage() { sed -n '2,19s/^# \{0,1\}//p' "$0"; }
EXP_MD5='' EXP_BYTES='' LOG='' TIMEOUT=600
while [ $# -gt 0 ]; do
	case "$1" in
	--expect-md5) EXP_MD5=${2:-}; shift 2 || break ;;
	--expect-bytes) EXP_BYTES=${2:-}; shift 2 || break ;;
	--log) LOG=${2:-}; shift 2 || break ;;
	--timeout) TIMEOUT=${2:-}; shift 2 || break ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	-*) echo "check-members: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -eq 0 ]; then
	usage >&2
	exit 2
fi
if [ $# -gt 24 ]; then
	echo "check-members: at most 24 members (mdvm's disk limit), got $#" >&2
	exit 2
fi
case "$EXP_MD5" in '' | [0-9a-f]*) ;; *) echo "check-members: bad --expect-md5 '$EXP_MD5'" >&2; exit 2 ;; esac
JOB=$MDVM_SHARED/mdvm/examples/check-array.sh
[ -f "$JOB" ] || { echo "check-members: $JOB not found" >&2; exit 2; }
mdvm_ready || exit 2

disks=()
i=0
for img in "$@"; do
	if [ ! -f "$img" ] && [ ! -b "$img" ]; then
		echo "check-members: $img: no such file" >&2
		exit 2
	fi
	disks+=(--disk "m$i=$img")
	i=$((i + 1))
done

T=$(mktemp -d "${TMPDIR:-/tmp}/check-members.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
[ -n "$LOG" ] || LOG=$T/console.log
# The example's md_check refuses levels without redundancy; keep the example
# as it is and let only those levels skip the check (the mdvm helpers are also
# commands in /usr/local/bin, so `command md_check` still reaches the original).
cat >"$T/job.sh" <<'EOF'
md_check() {
	if [ ! -e "/sys/block/${1:-md0}/md/sync_action" ]; then
		echo "no check: $(cat "/sys/block/${1:-md0}/md/level") has no redundancy"
		echo "mismatch_cnt=n/a"
		return 0
	fi
	command md_check "$@"
}
. /root/check-array.sh
EOF
mdvm_run --quiet --snapshot --timeout "$TIMEOUT" "${disks[@]}" --put "$JOB=/root/check-array.sh" \
	--script "$T/job.sh" --log "$LOG"
rc=$?

bytes=$(mdvm_val ARRAY_BYTES "$LOG")
md5=$(mdvm_val ARRAY_MD5 "$LOG")
mm=$(mdvm_val mismatch_cnt "$LOG")
echo "ARRAY_BYTES=$bytes"
echo "ARRAY_MD5=$md5"
echo "MISMATCH_CNT=$mm"
why=
[ $rc -eq 0 ] || why="$why the VM job failed (status $rc);"
[ -n "$md5" ] || why="$why no md5 of /dev/md0;"
case "$mm" in 0 | n/a) ;; *) why="$why mismatch_cnt is '$mm';" ;; esac
[ -z "$EXP_MD5" ] || [ "$md5" = "$EXP_MD5" ] || why="$why md5 $md5 != expected $EXP_MD5;"
[ -z "$EXP_BYTES" ] || [ "$bytes" = "$EXP_BYTES" ] || why="$why size $bytes != expected $EXP_BYTES;"
if [ -n "$why" ]; then
	echo "check-members: FAILED:$why" >&2
	echo "---- end of $LOG:" >&2
	grep -v '^\[ *[0-9.]*\] reboot' "$LOG" | tail -n 25 | sed 's/^/  | /' >&2
	exit 1
fi
exit 0
