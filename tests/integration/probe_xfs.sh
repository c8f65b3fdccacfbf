#!/usr/bin/env bash
# uraid probe's XFS evidence on a real XFS (mkfs.xfs, files copied in with
# its protofile: the sources of six folders), written through a uraid-made
# raid0 (4 members, 64K chunk)
# and linear (3 members), superblocks then zeroed (mdadm --zero-superblock),
# members shuffled: probe must name the level, chunk and order first, with
# the allocation group headers as its evidence, and the printed build line,
# run, must read back through `uraid cat` the bytes written (md5 of the
# file system image), without changing a member.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
# mkfs.xfs refuses small file systems unless run under fstests.
export TEST_DIR=$T_TMP TEST_DEV=unused QA_CHECK_FS=1
for t in mkfs.xfs mdadm python3; do
	command -v "$t" >/dev/null || { fail "required tool $t missing"; t_done; }
done
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP
cd "$d" || exit 1
# a protofile: the probe and layout sources as files in two directories
{
	echo "/dev/null"
	echo "0 0"
	echo "d--755 0 0"
	for dir in probe layout engine meta member cli; do
		echo "$dir d--755 0 0"
		for f in "$TOP"/src/$dir/*.[ch]; do echo "$(basename "$f") ---644 0 0 $f"; done
		echo '$'
	done
	echo '$'
} >"$d/proto"
sha() { cat "$@" | sha256sum | cut -d' ' -f1; }
# one LEVEL N CHUNK AGCOUNT: make, write, zero, probe, build, cat
one() {
	local level=$1 n=$2 chunk=$3 agcount=$4 name=x$1 members=() i
	for ((i = 0; i < n; i++)); do
		truncate -s 24M "$d/$name$i"
		members+=("$d/$name$i")
	done
	local copt=()
	[ "$chunk" = - ] || copt=(--chunk="$chunk")
	"$URAID" create --name "$name" --level="$level" --raid-devices="$n" "${copt[@]}" --run \
		"${members[@]}" >/dev/null 2>&1
	local bytes
	bytes=$("$URAID" detail "$name" | sed -n 's/^ *Array Size : \([0-9]*\).*/\1/p')
	bytes=$((bytes / 1024 * 1024 * 1024)) # KiB, to whole MiB
	rm -f "$d/fs_$name"
	truncate -s "$bytes" "$d/fs_$name"
	mkfs.xfs -q -f -d agcount="$agcount" -p "$d/proto" "$d/fs_$name" >"$d/mkfs_$name.log" 2>&1
	check "$level: mkfs.xfs made a $bytes-byte file system with files" \
		grep -q XFSB <(head -c 4 "$d/fs_$name")
	"$URAID" write "$name" <"$d/fs_$name"
	"$URAID" stop "$name"
	mdadm --zero-superblock "${members[@]}" 2>/dev/null
	check "$level: superblocks zeroed" check_fails_q "$URAID" examine "${members[0]}"
	mapfile -t imgs < <(printf '%s\n' "${members[@]}" | python3 -c \
		'import sys,random; l=sys.stdin.read().split(); random.Random(3).shuffle(l); print("\n".join(l))')
	local before
	before=$(sha "${imgs[@]}")
	"$URAID" probe --json --name "p$name" "${imgs[@]}" >"$d/probe_$name.json" 2>"$d/probe_$name.err"
	local rc=$?
	check "$level n=$n chunk=$chunk: probe found a geometry (rc $rc)" [ "$rc" -eq 0 ]
	check "... the first names $level, with the XFS allocation groups as evidence" python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["candidates"][0]
sys.exit(not (c["level"] == sys.argv[2] and "XFS:" in c["evidence"]))' "$d/probe_$name.json" "$level"
	mapfile -t args < <(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["candidates"][0]["build"][1:]))' "$d/probe_$name.json" 2>/dev/null)
	if [ "${#args[@]}" -gt 0 ] && "$URAID" "${args[@]}" 2>"$d/build_$name.err"; then
		got=$("$URAID" cat "p$name" | head -c "$bytes" | md5sum | cut -d' ' -f1)
		"$URAID" stop "p$name"
		if [ "$got" = "$(md5sum <"$d/fs_$name" | cut -d' ' -f1)" ]; then
			ok "... its build line reads the file system back bit for bit (${args[*]:1:5})"
		else
			fail "... its build line reads other bytes: $(head -c 1500 "$d/probe_$name.json")"
		fi
	else
		fail "... no build line ran: $(cat "$d/build_$name.err" 2>/dev/null) $(head -c 400 "$d/probe_$name.json")"
	fi
	check "... probe, build and cat changed no member" [ "$(sha "${imgs[@]}")" = "$before" ]
}
# 5 allocation groups: their headers fall at different places of a stripe
one raid0 4 64K 5
one linear 3 - 4
t_done
