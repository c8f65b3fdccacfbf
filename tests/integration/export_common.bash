# Helpers for the export*.sh tests (sourced after ../lib.sh): arrays on small
# member files, a private run directory, and a cleanup trap that leaves no
# attach, nbdkit, nbdfuse, loop device or FUSE mount behind.
export URAID_RUN_DIR=$T_TMP/run
export URAID_NBDKIT_PLUGIN=${URAID_NBDKIT_PLUGIN:-$TOP/build/rel/nbdkit-uraid-plugin.so}
mkdir -p "$URAID_RUN_DIR"

need() {
	for t in "$@"; do
		if ! command -v "$t" >/dev/null 2>&1; then
			fail "required tool '$t' is missing (scripts/deps installs it)"
			t_done
		fi
	done
	if [ ! -f "$URAID_NBDKIT_PLUGIN" ]; then
		fail "plugin $URAID_NBDKIT_PLUGIN not built (make all with nbdkit-plugin-dev)"
		t_done
	fi
}

# alive PID: the process exists and is not a zombie
alive() {
	local s
	s=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	case "$s" in Z* | X* | "") return 1 ;; esac
	return 0
}

export_cleanup() {
	local f n p
	for f in "$URAID_RUN_DIR"/*.attach; do
		[ -e "$f" ] || continue
		"$URAID" detach "$(basename "$f" .attach)" >/dev/null 2>&1
	done
	for f in "$URAID_RUN_DIR"/*.sock; do
		[ -e "$f" ] || continue
		"$URAID" stop "$(basename "$f" .sock)" >/dev/null 2>&1
	done
	for f in "$URAID_RUN_DIR"/*.nbdkit.pid "$URAID_RUN_DIR"/*.nbdfuse.pid; do
		[ -e "$f" ] || continue
		p=$(cat "$f" 2>/dev/null)
		[ -n "$p" ] && alive "$p" && kill "$p" 2>/dev/null
	done
	t_kill_daemons # those stop did not reach (their NAME.pid)
	# loop devices and mounts still pointing into our directory
	losetup -l -n -O NAME,BACK-FILE 2>/dev/null | while read -r n f; do
		case "$f" in "$T_TMP"/*) losetup -d "$n" ;; esac
	done
	grep " $T_TMP/" /proc/self/mounts | while read -r _ m _; do umount -l "$m"; done
	rm -rf "$T_TMP"
}
trap export_cleanup EXIT

# mk_array NAME LEVEL NDEV CHUNK MEMBER_SIZE [more create options]: members
# $T_TMP/NAME/m0.img..., initial resync done, array stopped. CHUNK is not
# given for raid1 (mdadm: "specifying chunk size is forbidden for this level").
mk_array() {
	local name=$1 level=$2 n=$3 chunk=$4 size=$5
	shift 5
	mkdir -p "$T_TMP/$name"
	local mm=() copt=(--chunk="$chunk")
	[ "$level" = 1 ] && copt=()
	for ((i = 0; i < n; i++)); do mm+=("$T_TMP/$name/m$i.img"); done
	"$URAID" create --level="$level" --raid-devices="$n" "${copt[@]}" --size="$size" \
		--name="$name" --no-daemon "$@" "${mm[@]}" >"$T_TMP/$name.create.log" 2>&1
}
members() { ls "$T_TMP/$1"/m*.img; }

# Reference for the NBD preferred block size, computed in the shell: data
# members x chunk, then the largest power of two that divides it.
ref_preferred() { # level ndev chunk_bytes
	local data
	case $1 in 0) data=$2 ;; 4 | 5) data=$(($2 - 1)) ;; 6) data=$(($2 - 2)) ;; esac
	local w=$((data * $3)) p=1
	while [ $((w % (p * 2))) -eq 0 ] && [ $((p * 2)) -le $((32 << 20)) ]; do p=$((p * 2)); done
	echo $p
}
