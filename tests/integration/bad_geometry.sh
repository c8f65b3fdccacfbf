#!/usr/bin/env bash
# Geometry the kernel would refuse, in superblocks that are otherwise valid
# (checksums right, every member the same): raid10 with no near or far
# copies, more copies than members, chunk 0, raid5 with chunk 0. cat,
# assemble, serve and the nbdkit plugin must refuse each with a message
# naming the geometry, never crash (SIGFPE: division by a zero copy count
# or chunk before the geometry was checked), and leave every member as it
# was (sha256).
. "$(dirname "$0")/../lib.sh"
VEC=$TOP/tests/vectors
export URAID_RUN_DIR=$T_TMP/run
export URAID_NBDKIT_PLUGIN=${URAID_NBDKIT_PLUGIN:-$TOP/build/rel/nbdkit-uraid-plugin.so}

# patch IMG OFFSET VALUE: one le32 field of the 1.2 superblock, checksum right.
patch() { python3 "$TOP/tests/md_sb1_edit.py" "$1" "$2" '<I' set "$3"; }
LAYOUT=76 CHUNK=88 # struct mdp_superblock_1: layout (le32), chunksize (le32)

# refused NAME WHAT CMD...: non-zero exit by an exit code (not a signal),
# the message matching WHAT.
refused() {
	local name=$1 what=$2; shift 2
	"$@" >"$T_TMP/out" 2>"$T_TMP/err"
	local rc=$?
	if [ $rc -eq 0 ]; then
		fail "$name: accepted"
	elif [ $rc -gt 128 ]; then
		fail "$name: killed by signal $((rc - 128)): $(tail -c 300 "$T_TMP/err")"
	elif grep -Eqi "$what" "$T_TMP/err"; then
		ok "$name: refused ($(head -c 150 "$T_TMP/err" | tr '\n' ' '))"
	else
		fail "$name: refused without naming the geometry: $(cat "$T_TMP/err")"
	fi
}

run_case() { # CASE VECTOR FIELD VALUE EXPECT
	local case=$1 vec=$2 field=$3 value=$4 expect=$5 dir=$T_TMP/$1
	mkdir -p "$dir"
	for x in "$VEC/$vec"/m*.img.xz; do
		b=$(basename "$x" .xz)
		xz -dc "$x" >"$dir/$b"
		patch "$dir/$b" "$field" "$value"
	done
	local sums; sums=$(sha256sum "$dir"/m*.img)
	refused "$case: cat" "$expect" "$URAID" cat "$dir"/m*.img
	refused "$case: assemble" "$expect" "$URAID" assemble --name "g$case" "$dir"/m*.img
	refused "$case: serve" "$expect" "$URAID" serve --unix "$dir/s.sock" --name "s$case" \
		"$dir"/m*.img
	if command -v nbdkit >/dev/null && [ -f "$URAID_NBDKIT_PLUGIN" ]; then
		args=(); for m in "$dir"/m*.img; do args+=("member=$m"); done
		refused "$case: nbdkit plugin" "$expect" nbdkit -U - "$URAID_NBDKIT_PLUGIN" "${args[@]}" \
			name="p$case" --run true
	fi
	check "$case: every member as it was" sh -c '[ "$(sha256sum "$1"/m*.img)" = "$2" ]' sh \
		"$dir" "$sums"
}

run_case r10-no-copies r10-n2-3 $LAYOUT 0x000 'copies|layout'
run_case r10-no-near r10-n2-3 $LAYOUT 0x100 'copies|layout'
run_case r10-too-many-copies r10-n2-3 $LAYOUT 0x109 'copies|layout|members'
run_case r10-chunk0 r10-n2-3 $CHUNK 0 'chunk'
run_case r5-chunk0 r5-la $CHUNK 0 'chunk'
t_done
