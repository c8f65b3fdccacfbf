#!/usr/bin/env bash
# Block devices as bench members (--members-dev), on loop devices over
# sparse files: empty devices are used and left without an md superblock;
# a device holding an ext4, an XFS, an md superblock (1.2 at the start, 0.90
# and 1.0 at the end), a DOS partition table (written here by hand) or a
# GPT is refused, by name, and left byte for byte as it was; --force-destroy
# uses it; a mounted device is refused even then; a directory of devices;
# duplicates and files. Needs root (losetup); without it the checks that
# need no device run.
. "$(dirname "$0")/../lib.sh"

export URAID_RUN_DIR=$T_TMP/run
mkdir -p "$URAID_RUN_DIR"
check_fails "--force-destroy without --members-dev is refused" "$URAID" bench --mem --force-destroy
check "a regular file given as a device: refused, pointing at --members-dir" \
	sh -c 'truncate -s 8M "$2/f"; out=$("$1" bench --members-dev "$2/f" --levels 0 \
	       --members 1 --size 2M 2>&1) && exit 1; echo "$out" | grep -q "not a block device"' \
	sh "$URAID" "$T_TMP"
if [ "$(id -u)" != 0 ] || ! losetup -f >/dev/null 2>&1; then
	echo "# not root or no loop devices: device checks not run"
	t_done
fi

LOOPS=()
cleanup() {
	umount "$T_TMP/mnt" 2>/dev/null
	for l in "${LOOPS[@]}"; do losetup -d "$l"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
for i in 0 1 2; do
	truncate -s 48M "$T_TMP/img$i"
	l=$(losetup -f --show "$T_TMP/img$i") || { fail "losetup"; t_done; }
	LOOPS+=("$l")
done
L0=${LOOPS[0]} L1=${LOOPS[1]} L2=${LOOPS[2]}
ALL="$L0,$L1,$L2"
json=$T_TMP/dev.json

check "empty loop devices: raid5 over 3 and a baseline, bytes moved = requested" \
	sh -c '"$1" bench --members-dev "$2" --levels 0,5 --members 2,3 --workloads seqwrite,seqread \
	       --size 8M --baseline --json "$3" >"$3.out" 2>&1' sh "$URAID" "$ALL" "$json"
check "  ... rows for baseline, raid0 x2/x3, raid5 x3, header names the devices" \
	python3 - "$json" "$json.out" "$ALL" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
got = sorted((r["config"], r["workload"]) for r in rows)
want = sorted((c, w) for c in ("baseline", "raid0[64]x2", "raid0[64]x3", "raid5[64,ls]x3")
              for w in ("seqwrite", "seqread"))
assert got == want, got
for r in rows:
    assert r["value"] > 0 and r["bytes"] == r["requested"] == 8 << 20, r
assert "members: block devices " + sys.argv[3] in open(sys.argv[2]).read()
PY
check "  ... and no md superblock left on any device (blkid finds nothing)" \
	sh -c 'for d in "$@"; do blkid -p "$d" >/dev/null 2>&1 && exit 1; done; exit 0' sh "${LOOPS[@]}"

# refused: NAME, what to write, what the message must name
refused() {
	local name=$1 want=$2
	local sum
	sync
	sum=$(md5sum <"$T_TMP/img1")
	check "$name: refused, the message names '$want'" \
		sh -c 'out=$("$1" bench --members-dev "$2" --levels 5 --members 3 --size 4M \
		       --workloads seqwrite 2>&1) && exit 1; echo "$out" | grep -F -- "$3" |
		       grep -qF "Refusing to overwrite"' sh "$URAID" "$ALL" "$L1 holds: $want"
	sync
	check "  ... and $L1 is byte for byte unchanged" test "$(md5sum <"$T_TMP/img1")" = "$sum"
}

mkfs.ext4 -q -F "$L1"
refused "an ext4 filesystem" "ext2/3/4 filesystem"
# mkfs.xfs wants 300 MB: made on a sparse file, its first MiB copied over.
truncate -s 320M "$T_TMP/xfs.img"
mkfs.xfs -q -f "$T_TMP/xfs.img"
dd if="$T_TMP/xfs.img" of="$L1" bs=1M count=1 conv=notrunc status=none
rm -f "$T_TMP/xfs.img"
refused "an XFS filesystem" "XFS filesystem"
wipefs -q -a "$L1"
"$URAID" create --no-daemon --level=1 --raid-devices=2 --metadata=1.2 --assume-clean --force --name=dv \
	"$L1" "$L2" >/dev/null 2>&1
refused "an md 1.2 member" "md superblock 1.2"
wipefs -q -a "$L1" "$L2"
"$URAID" create --no-daemon --level=1 --raid-devices=2 --metadata=0.90 --assume-clean --force \
	"$L1" "$L2" >/dev/null 2>&1
refused "an md 0.90 member (superblock near the end)" "md superblock 0.90"
wipefs -q -a "$L1" "$L2"
"$URAID" create --no-daemon --level=1 --raid-devices=2 --metadata=1.0 --assume-clean --force --name=dv \
	"$L1" "$L2" >/dev/null 2>&1
refused "an md 1.0 member (superblock at the end)" "md superblock 1.0"
wipefs -q -a "$L1" "$L2"
# A DOS partition table by hand: one Linux partition from sector 2048, 0x55AA.
python3 - "$L1" <<'PY'
import struct, sys
mbr = bytearray(512)
mbr[446:462] = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", 2048, 40960)
mbr[510:512] = b"\x55\xaa"
with open(sys.argv[1], "r+b") as f:
    f.write(mbr)
PY
blockdev --rereadpt "$L1" 2>/dev/null
refused "a DOS partition table" "DOS partition table"
check "  ... blkid agrees it is a dos partition table" \
	sh -c 'blkid -p -o value -s PTTYPE "$1" | grep -qx dos' sh "$L1"
dd if=/dev/zero of="$L1" bs=1M count=1 conv=notrunc status=none
# A GPT header signature at LBA 1 (what the probe keys on; blkid also wants CRCs).
printf 'EFI PART' | dd of="$L1" bs=1 seek=512 conv=notrunc status=none
refused "a GPT header" "GPT partition table"
dd if=/dev/zero of="$L1" bs=1M count=1 conv=notrunc status=none

mkfs.ext4 -q -F "$L1"
check "--force-destroy: the ext4 device is used, with a warning naming what is destroyed" \
	sh -c '"$1" bench --members-dev "$2" --force-destroy --levels 5 --members 3 --size 4M \
	       --workloads seqwrite,seqread >/dev/null 2>"$3" &&
	       grep -q "$4 holds: ext2/3/4 filesystem.*destroying it" "$3"' \
	sh "$URAID" "$ALL" "$T_TMP/force.err" "$L1"
check "  ... and the ext4 is gone" sh -c '! blkid -p "$1" >/dev/null 2>&1' sh "$L1"

mkfs.ext4 -q -F "$L2"
mkdir -p "$T_TMP/mnt"
sync
sum=$(md5sum <"$T_TMP/img2")
# read-only, no journal replay: the mount itself writes nothing
if mount -o ro,noload "$L2" "$T_TMP/mnt"; then
	check "a mounted device: refused as in use, even with --force-destroy" \
		sh -c 'out=$("$1" bench --members-dev "$2" --force-destroy --levels 5 --members 3 \
		       --size 4M --workloads seqwrite 2>&1) && exit 1; echo "$out" | grep -q "$3: in use"' \
		sh "$URAID" "$ALL" "$L2"
	umount "$T_TMP/mnt"
	sync
	check "  ... and left unchanged" test "$(md5sum <"$T_TMP/img2")" = "$sum"
else
	fail "mount an ext4 loop device"
fi
wipefs -q -a "$L2"

mkdir -p "$T_TMP/devdir"
ln -s "$L2" "$T_TMP/devdir/b"
ln -s "$L0" "$T_TMP/devdir/a"
touch "$T_TMP/devdir/not-a-device"
check "a directory of devices (symlinks followed, sorted, other files ignored)" \
	sh -c '"$1" bench --members-dev "$2" --levels 1 --members 2 --size 4M --workloads seqread \
	       2>&1 | grep -q "members: block devices $2"' sh "$URAID" "$T_TMP/devdir"
check_fails "more members than devices: refused" "$URAID" bench --members-dev "$L0,$L1" \
	--levels 5 --members 3 --size 4M
check "the same device twice: refused, naming both" \
	sh -c 'out=$("$1" bench --members-dev "$2,$3,$2" --levels 5 --members 3 --size 4M 2>&1) &&
	       exit 1; echo "$out" | grep -q "are the same device"' sh "$URAID" "$L0" "$L1"
check_fails "--members-dev with --mem: refused" "$URAID" bench --mem --members-dev "$ALL"
t_done
