#!/usr/bin/env bash
# Issue #23, recovery that cannot make things worse: with --overlay DIR every
# member is opened read-only and every write goes to an overlay file per
# member. On a raid5 made dirty (resync_offset 0 in every superblock):
#  1. a forced assembly of 3 of the 4 members (dirty + degraded: md's refusal,
#     lifted by --force), writes of random data, a stop (superblocks marked
#     clean): sha256 of every member unchanged; the writes read back through
#     the overlay, while running and after a new assembly;
#  2. the resync of all 4 members, then check (mismatch_cnt 0): members unchanged;
#  3. mkfs.ext4 + e2fsck -f -y through `uraid attach --overlay` on the forced
#     assembly's overlay (root, FUSE, loop devices; skipped with a note
#     otherwise): members unchanged, and the array as the overlay shows it
#     passes host e2fsck -fn;
#  4. `uraid overlay commit`: the whole array assembled without overlay has
#     the md5 the overlay showed; host mdadm --examine of each member: clean,
#     checksum correct, same array, same events; host e2fsck -fn of the array.
# The references are sha256/md5 of what the test wrote and host tools.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/export_common.bash"
D=$T_TMP/m
mkdir -p "$D"
M=("$D"/m0 "$D"/m1 "$D"/m2 "$D"/m3)
edit=$TOP/tests/md_sb1_edit.py

sums() { sha256sum "$@" | awk '{print $1}' | tr '\n' ' '; }
idle() { # NAME: until no sync runs (30 s at most)
	for _ in $(seq 300); do
		"$URAID" status --json "$1" | grep -q '"action":"idle"' && return 0
		sleep 0.1
	done
	return 1
}

check "create raid5 on 4 16M members" "$URAID" create --level=5 --raid-devices=4 --chunk=64K \
	--size=16M --assume-clean --name=ov --no-daemon "${M[@]}"
size=$("$URAID" cat "${M[@]}" | wc -c)
head -c "$size" /dev/urandom >"$T_TMP/want"
check "fill it" sh -c '"$1" assemble "$2" "$3" "$4" "$5" 2>/dev/null &&
	"$1" write ov --offset 0 <"$6" && "$1" stop ov' sh "$URAID" "${M[@]}" "$T_TMP/want"
# Dirty, as a crash leaves it: resync_offset (1.2 superblock, byte 208) 0.
for m in "${M[@]}"; do python3 "$edit" "$m" 208 '<Q' set 0 || fail "dirty $m"; done
check "mdadm sees the members active (dirty)" sh -c 'mdadm --examine "$1" | grep -q "State : active"' sh "${M[0]}"
# ... and 256 KiB of m3 not matching the others (data of some stripes,
# parity of others), as a write cut short by the crash leaves it: the resync
# has parity to rewrite; with m3 left out its blocks are rebuilt as written.
dd if=/dev/urandom of="${M[3]}" bs=64K seek=64 count=4 conv=notrunc status=none
"$URAID" cat "${M[@]}" >"$T_TMP/want4" 2>/dev/null
before=$(sums "${M[@]}")

# 1. forced degraded assembly
O1=$T_TMP/ov1
check_fails "without --force the dirty degraded raid5 is refused" \
	"$URAID" assemble --overlay "$O1" "${M[@]:0:3}"
check "... and no overlay file was made" sh -c '! ls "$1"/*.uovl 2>/dev/null | grep -q .' sh "$O1"
check "assemble --force --overlay: 3 of 4 members" \
	"$URAID" assemble --force --overlay "$O1" "${M[@]:0:3}"
check "detail names the overlay" sh -c '"$1" detail --verbose ov | grep -q "overlay : $2"' sh "$URAID" "$O1"
head -c 2M /dev/urandom >"$T_TMP/w1"
check "write 2 MiB of random data at 3 MiB" "$URAID" write ov --offset 3M <"$T_TMP/w1"
cp "$T_TMP/want" "$T_TMP/want1"
dd if="$T_TMP/w1" of="$T_TMP/want1" bs=1M seek=3 conv=notrunc status=none
check "the array reads back what was written (running)" cmp -s "$T_TMP/want1" <("$URAID" cat ov)
check "stop" "$URAID" stop ov
check "every member unchanged (sha256)" [ "$(sums "${M[@]}")" = "$before" ]
check "assembled again through the overlay, the writes are there" \
	cmp -s "$T_TMP/want1" <("$URAID" cat --overlay "$O1" "${M[@]:0:3}")
check "without the overlay, the members show the old data" \
	cmp -s "$T_TMP/want4" <("$URAID" cat "${M[@]}" 2>/dev/null)
check "overlay status: 3 overlays of this array, bytes held" \
	sh -c '"$1" overlay status "$2" >"$3" && grep -q "3 overlays, array md:" "$3" &&
	[ "$(grep -c "holds .* bytes) of 16.00 MiB" "$3")" = 3 ] &&
	grep -q "^  ${4}0: holds" "$3"' sh "$URAID" "$O1" "$T_TMP/st1" "$D/m"

# 2. resync of all four (dirty, not degraded), then check
O2=$T_TMP/ov2
check "assemble --overlay all 4: the resync starts" "$URAID" assemble --overlay "$O2" "${M[@]}"
check "the resync finishes" idle ov
check "check through the overlay: mismatch_cnt 0 (the resync rewrote the parity)" \
	sh -c '"$1" check ov && for _ in $(seq 300); do
	"$1" status --json ov | grep -q "\"action\":\"idle\"" && break; sleep 0.1; done
	"$1" detail --verbose ov | grep -q "mismatch_cnt : 0"' sh "$URAID"
check "the data reads back unchanged" cmp -s "$T_TMP/want4" <("$URAID" cat ov)
check "stop" "$URAID" stop ov
check "every member unchanged after the resync (sha256)" [ "$(sums "${M[@]}")" = "$before" ]
held=$("$URAID" overlay status "$O2" | sed -n 's/.*holds .* (\([0-9]*\) bytes).*/\1/p' |
	awk '{s += $1} END {print s}')
check "the overlays hold the resync's parity ($held bytes, at least 192 KiB)" \
	[ "${held:-0}" -ge $((192 * 1024)) ]
# raid5 parity is the XOR of a stripe's blocks: on the members themselves
# the blocks the resync fixed in the overlay still do not add up.
xor_bad() {
	python3 - "$@" <<'PY'
import sys
off = 2048 * 512  # data offset of these 1.2 members (mdadm --examine: 2048 sectors)
fs = [open(p, "rb") for p in sys.argv[1:]]
for f in fs:
    f.seek(off)
bad = 0
while True:
    bs = [f.read(4096) for f in fs]
    if len(bs[0]) < 4096:
        break
    x = int.from_bytes(bs[0], "little")
    for b in bs[1:]:
        x ^= int.from_bytes(b, "little")
    bad += x != 0
print(bad)
PY
}
check "mdadm --examine: data offset 2048 sectors" \
	sh -c 'mdadm --examine "$1" | grep -q "Data Offset : 2048 sectors"' sh "${M[0]}"
bad=$(xor_bad "${M[@]}")
check "the members themselves still hold the $bad 4 KiB rows whose parity is wrong (64)" \
	[ "$bad" = 64 ]

# 3. mkfs and fsck through attach --overlay, on the forced assembly's overlay
# (a fresh one would see the members dirty and degraded: refused)
if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/fuse ] || ! command -v nbdfuse >/dev/null ||
	! losetup -f >/dev/null 2>&1 || [ ! -f "$URAID_NBDKIT_PLUGIN" ]; then
	echo "# skip: attach --overlay needs root, /dev/fuse, nbdfuse, loop devices and the plugin"
	have_attach=0
else
	have_attach=1
	L=$("$URAID" attach --overlay "$O1" "${M[@]:0:3}" 2>"$T_TMP/attach.err")
	check "attach --overlay prints a loop device" [ "${L#/dev/loop}" != "$L" ]
	[ -b "$L" ] || cat "$T_TMP/attach.err"
	check "mkfs.ext4 through the overlay" mkfs.ext4 -q -F "$L"
	check "e2fsck -f -y through the overlay" e2fsck -f -y "$L"
	check "detach" "$URAID" detach "$L"
	check "every member unchanged after mkfs and fsck (sha256)" [ "$(sums "${M[@]}")" = "$before" ]
	"$URAID" cat --overlay "$O1" "${M[@]:0:3}" >"$T_TMP/fs.img"
	check "host e2fsck -fn: the file system the overlay holds is clean" \
		e2fsck -fn "$T_TMP/fs.img"
fi

# 4. commit: the members become what the overlay showed
C=$O1
shown=$("$URAID" cat --overlay "$C" "${M[@]:0:3}" | md5sum)
untouched=$(sums "${M[3]}")
check "overlay commit" "$URAID" overlay commit "$C"
check "the overlays are gone" sh -c '! ls "$1"/*.uovl 2>/dev/null | grep -q .' sh "$C"
check "the array without overlay: md5 of all of it = what the overlay showed" \
	[ "$("$URAID" cat "${M[@]}" 2>/dev/null | md5sum)" = "$shown" ]
check "m3 (not part of that assembly) unchanged" [ "$(sums "${M[3]}")" = "$untouched" ]
uuid=$(mdadm --examine "${M[0]}" | sed -n 's/ *Array UUID : //p')
ev=$(mdadm --examine "${M[0]}" | sed -n 's/ *Events : //p')
for m in "${M[@]:0:3}"; do
	mdadm --examine "$m" >"$T_TMP/ex" 2>&1
	check "mdadm --examine $(basename "$m"): clean, checksum correct, array $uuid, events $ev" \
		sh -c 'grep -q "State : clean" "$1" && grep -q "Checksum : .* - correct" "$1" &&
		grep -q "Array UUID : $2" "$1" && grep -q "Events : $3\$" "$1" &&
		grep -q "Array State : AAA. " "$1"' sh "$T_TMP/ex" "$uuid" "$ev"
done
if [ $have_attach = 1 ]; then
	"$URAID" cat "${M[@]}" 2>/dev/null >"$T_TMP/fs2.img"
	check "host e2fsck -fn of the committed array" e2fsck -fn "$T_TMP/fs2.img"
fi
t_done
