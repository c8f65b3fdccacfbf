#!/usr/bin/env bash
# uraid build's refusals and its promise never to write. Members come from
# a uraid-made raid5 and raid1 whose superblocks are then zeroed; the
# kernel-judged recovery is probe_mdvm. Checks: members too small for the
# geometry (--size), the same member twice (also under another name),
# unknown level, bad chunk, member count against --raid-devices, missing
# members a level cannot do without, each with a message naming the
# problem and no array left running; then build, cat, status, a write (refused),
# serve --readonly and stop, with every member's sha256 unchanged.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP
cd "$d" # array names must not be files here (cat NAME)
for i in 0 1 2; do truncate -s 8M "$d/m$i"; done
"$URAID" create --name src --level=5 --raid-devices=3 --chunk=64K --assume-clean \
	"$d/m0" "$d/m1" "$d/m2" 2>/dev/null
head -c $((6 << 20)) /dev/urandom >"$d/pat"
"$URAID" write src <"$d/pat"
bytes=$("$URAID" detail src | sed -n 's/^ *Array Size : \([0-9]*\).*/\1/p')
off=$("$URAID" examine "$d/m0" | sed -n 's/^ *Data Offset : \([0-9]*\).*/\1/p')
"$URAID" cat src | md5sum >"$d/want"
"$URAID" stop src
for i in 0 1 2; do dd if=/dev/zero of="$d/m$i" bs=4096 seek=1 count=1 conv=notrunc status=none; done
sha() { cat "$d"/m0 "$d"/m1 "$d"/m2 | sha256sum; }
before=$(sha)
geo=(--level=raid5 --raid-devices=3 --chunk=64K --data-offset="${off}s")

refused() { # name pattern args...
	local name=$1 pat=$2
	shift 2
	"$URAID" build --name=bad "$@" >"$d/out" 2>&1
	local rc=$?
	if [ "$rc" -ne 0 ] && grep -q -- "$pat" "$d/out" && [ ! -e "$URAID_RUN_DIR/bad.sock" ]; then
		ok "refused: $name ($(head -1 "$d/out"))"
	else
		fail "refused: $name (rc $rc, wanted '$pat'): $(cat "$d/out")"
	fi
}
refused "a member smaller than --size" "too small" "${geo[@]}" --size=16M "$d/m0" "$d/m1" "$d/m2"
refused "the same member twice" "are the same member" "${geo[@]}" "$d/m0" "$d/m1" "$d/m0"
ln -s "$d/m1" "$d/alias"
refused "the same member under another name" "are the same member" "${geo[@]}" "$d/m0" "$d/m1" "$d/alias"
refused "an unknown level" "unknown level" --level=raid7 --raid-devices=3 "$d/m0" "$d/m1" "$d/m2"
refused "a chunk that is no power of two" "power of two" --level=raid5 --raid-devices=3 --chunk=3K \
	"$d/m0" "$d/m1" "$d/m2"
refused "fewer members than --raid-devices" "but 2 members given" "${geo[@]}" "$d/m0" "$d/m1"
refused "raid5 with two missing" "cannot be read" "${geo[@]}" "$d/m0" missing missing
refused "raid0 with one missing" "cannot be missing" --level=raid0 --raid-devices=3 "$d/m0" missing "$d/m2"
refused "a data offset past the member's end" "no room for data" "${geo[@]}" --data-offset=9M \
	"$d/m0" "$d/m1" "$d/m2"
refused "a missing member file" "No such file" "${geo[@]}" "$d/m0" "$d/m1" "$d/nonexistent"
check "refusals changed no member" [ "$(sha)" = "$before" ]

# Built, with and without a member: the bytes the array had; writes refused.
check "build of the zeroed raid5 starts" "$URAID" build --name=b1 "${geo[@]}" "$d/m0" "$d/m1" "$d/m2"
check "... cat reads what the array held" [ "$("$URAID" cat b1 | head -c $((bytes * 1024)) | md5sum)" = "$(cat "$d/want")" ]
check "... detail says no superblock, read-only" \
	bash -c "'$URAID' detail b1 | grep -q 'Version : none (built)' && '$URAID' detail --verbose b1 | grep -q 'read-only'"
check_fails "... a write is refused" bash -c "head -c 4096 /dev/zero | '$URAID' write b1"
check_fails "... so is failing a member" "$URAID" fail b1 "$d/m0"
if command -v nbdkit >/dev/null && command -v nbdcopy >/dev/null; then
	check_fails "... serve without --readonly is refused" "$URAID" serve b1
	uri=$("$URAID" serve b1 --readonly 2>/dev/null)
	check "... serve --readonly serves the same bytes" \
		[ "$(nbdcopy "$uri" - | head -c $((bytes * 1024)) | md5sum)" = "$(cat "$d/want")" ]
fi
check "... stop" "$URAID" stop b1
check "build m0 missing m2 (degraded) starts" "$URAID" build --name=b2 "${geo[@]}" "$d/m0" missing "$d/m2"
check "... cat rebuilds m1's part from parity" \
	[ "$("$URAID" cat b2 | head -c $((bytes * 1024)) | md5sum)" = "$(cat "$d/want")" ]
"$URAID" stop b2
check "build, cat, serve --readonly and stop changed no member" [ "$(sha)" = "$before" ]

# raid0 without --chunk: mdadm --build's default, 64K (Build.c), not create's 512K.
for i in 0 1; do truncate -s 8M "$d/z$i"; done
"$URAID" create --name z --level=raid0 --raid-devices=2 --chunk=64K "$d/z0" "$d/z1" 2>/dev/null
head -c $((4 << 20)) /dev/urandom | "$URAID" write z
zb=$("$URAID" detail z | sed -n 's/^ *Array Size : \([0-9]*\).*/\1/p')
zoff=$("$URAID" examine "$d/z0" | sed -n 's/^ *Data Offset : \([0-9]*\).*/\1/p')
zwant=$("$URAID" cat z | md5sum)
"$URAID" stop z
check "build --level=raid0 without --chunk reads the 64K-chunk array" bash -c \
	"'$URAID' build --name=z0 --level=raid0 --raid-devices=2 --data-offset=${zoff}s '$d/z0' '$d/z1' &&
	[ \"\$('$URAID' cat z0 | head -c $((zb * 1024)) | md5sum)\" = '$zwant' ] &&
	'$URAID' detail z0 | grep -q 'Chunk Size : 64K'"
"$URAID" stop z0 2>/dev/null

# linear: mdadm --build rounds each member to 64K (as without --chunk);
# md's 1.x linear arrays have no rounding, which --chunk=0 gives (and
# probe's build line says): members of 8M + 36K here.
for i in 0 1; do truncate -s $(((8 << 20) + 36864)) "$d/l$i"; done
"$URAID" create --name l --level=linear --raid-devices=2 "$d/l0" "$d/l1" 2>/dev/null
head -c $((12 << 20)) /dev/urandom | "$URAID" write l
lb=$("$URAID" detail l | sed -n 's/^ *Array Size : \([0-9]*\).*/\1/p')
loff=$("$URAID" examine "$d/l0" | sed -n 's/^ *Data Offset : \([0-9]*\).*/\1/p')
lwant=$("$URAID" cat l | md5sum)
"$URAID" stop l
for i in 0 1; do dd if=/dev/zero of="$d/l$i" bs=4096 seek=1 count=1 conv=notrunc status=none; done
check "build --level=linear --chunk=0 reads md's linear array (no rounding)" bash -c \
	"'$URAID' build --name=l0 --level=linear --raid-devices=2 --chunk=0 --data-offset=${loff}s '$d/l0' '$d/l1' &&
	[ \"\$('$URAID' cat l0 | md5sum)\" = '$lwant' ]"
"$URAID" stop l0 2>/dev/null
check "... without --chunk each member is rounded down to 64K, as mdadm --build does" bash -c \
	"'$URAID' build --name=l1 --level=linear --raid-devices=2 --data-offset=${loff}s '$d/l0' '$d/l1' &&
	[ \$(( \$('$URAID' detail l1 | sed -n 's/^ *Array Size : \\([0-9]*\\).*/\\1/p') )) -eq \
		\$(( ($lb / 2 / 64 * 64) * 2 )) ]"
"$URAID" stop l1 2>/dev/null
refused "--chunk=0 for a striped level" "only a linear array" --level=raid0 --raid-devices=2 --chunk=0 \
	"$d/l0" "$d/l1"
t_done
