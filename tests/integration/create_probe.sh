#!/usr/bin/env bash
# Issue #24: `uraid create` on a member that holds something. Samples are
# made by the real tools (mdadm's superblocks via uraid create, checked by
# mdadm --examine; mkfs.ext4, mkfs.xfs, mkfs.btrfs, mkswap; an MBR and a GPT
# that blkid -p accepts; gmirror/graid3 labels) and blkid -p (or mdadm) is
# the reference that each holds what create reports. Without a terminal
# create refuses, names what it found, and writes nothing (sha256 of every
# member unchanged), also under `yes |`; on a terminal (script(1)) "n"
# refuses and "y" creates, as mdadm's ask(); --run and --force create
# without asking; zeroed members need no question.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
# mkfs.xfs refuses small file systems unless run under fstests (export_e2e).
export TEST_DIR=$T_TMP TEST_DEV=unused QA_CHECK_FS=1
for t in mdadm blkid mkfs.ext4 mkfs.xfs mkfs.btrfs mkswap script python3; do
	command -v "$t" >/dev/null || { fail "required tool $t missing"; t_done; }
done
cd "$T_TMP" || exit 1
sha() { sha256sum "$@" | cut -d' ' -f1; }
zero() { rm -f "$1"; truncate -s "${2:-16M}" "$1"; }
# try NAME SAMPLE PATTERN: create raid1 on SAMPLE + a zero file without a
# terminal; it must refuse, name PATTERN, and change neither file
try() {
	local name=$1 f=$2 pat=$3
	zero "$f.other" "$(stat -c %s "$f")"
	local before
	before=$(sha "$f" "$f.other")
	"$URAID" create --level=1 --raid-devices=2 --no-daemon --name=p "$f" "$f.other" \
		</dev/null >/dev/null 2>"$f.err"
	local rc=$?
	check "$name: refused without a terminal" [ $rc -ne 0 ]
	check "$name: names it ($pat)" grep -q "$pat" "$f.err"
	check "$name: nothing written" [ "$(sha "$f" "$f.other")" = "$before" ]
}
md_sample() { # FILE METADATA: member of a fresh uraid array, stopped
	zero "$1"
	zero "$1.b"
	"$URAID" create --level=1 --raid-devices=2 --metadata="$2" --no-daemon --name=old \
		--assume-clean "$1" "$1.b" >/dev/null 2>&1
}
for v in 0.90 1.0 1.1 1.2; do
	md_sample "md$v" "$v"
	check "md $v sample: mdadm --examine sees a superblock" mdadm --examine "md$v" >/dev/null 2>&1
	try "md $v" "md$v" "md$v appears to be part of a raid array"
done

zero ext.img
mkfs.ext4 -q -F ext.img
check "ext4 sample: blkid says ext4" bash -c "blkid -p -s TYPE -o value ext.img | grep -qx ext4"
try ext4 ext.img "ext.img appears to contain an ext2fs file system"
zero xfs.img
mkfs.xfs -q -f xfs.img
check "xfs sample: blkid says xfs" bash -c "blkid -p -s TYPE -o value xfs.img | grep -qx xfs"
try xfs xfs.img "xfs.img appears to contain an xfs file system"
zero btrfs.img
mkfs.btrfs -q -M -f btrfs.img >/dev/null
check "btrfs sample: blkid says btrfs" bash -c "blkid -p -s TYPE -o value btrfs.img | grep -qx btrfs"
try btrfs btrfs.img "btrfs.img appears to contain a btrfs file system"
zero swap.img
mkswap -q swap.img
check "swap sample: blkid says swap" bash -c "blkid -p -s TYPE -o value swap.img | grep -qx swap"
try swap swap.img "swap.img appears to be a swap area"

# Partition tables, written as fdisk/gdisk would (blkid checks the CRCs).
python3 - mbr.img gpt.img <<'PY'
import struct, sys, zlib, uuid
size = 16 << 20
sectors = size // 512
mbr = bytearray(512)
mbr[446:462] = struct.pack("<BBBBBBBBII", 0, 0, 2, 0, 0x83, 0, 0, 0, 2048, sectors - 2048)
mbr[510:512] = b"\x55\xaa"
with open(sys.argv[1], "wb") as f:
    f.truncate(size); f.write(mbr)
# GPT: protective MBR, header at LBA 1, 128 entries at LBA 2, backup at the end.
pmbr = bytearray(512)
pmbr[446:462] = struct.pack("<BBBBBBBBII", 0, 0, 2, 0, 0xEE, 0, 0, 0, 1, sectors - 1)
pmbr[510:512] = b"\x55\xaa"
entries = bytearray(128 * 128)
entries[0:56] = (uuid.UUID("0fc63daf-8483-4772-8e79-3d69d8477de4").bytes_le + uuid.uuid4().bytes_le
                 + struct.pack("<QQQ", 2048, sectors - 2048, 0))
ecrc = zlib.crc32(entries) & 0xffffffff
def header(my, alt, entries_lba):
    h = struct.pack("<8sIIIIQQQQ16sQIII", b"EFI PART", 0x10000, 92, 0, 0, my, alt, 34,
                    sectors - 34, uuid.uuid4().bytes_le, entries_lba, 128, 128, ecrc)
    h = h[:16] + struct.pack("<I", zlib.crc32(h) & 0xffffffff) + h[20:]
    return h + bytes(512 - len(h))
with open(sys.argv[2], "wb") as f:
    f.truncate(size)
    f.write(pmbr + header(1, sectors - 1, 2) + entries)
    f.seek((sectors - 33) * 512); f.write(entries + header(sectors - 1, 1, sectors - 33))
PY
check "MBR sample: blkid says dos" bash -c "blkid -p -s PTTYPE -o value mbr.img | grep -qx dos"
try MBR mbr.img "partition table exists on mbr.img (MBR"
check "GPT sample: blkid says gpt" bash -c "blkid -p -s PTTYPE -o value gpt.img | grep -qx gpt"
try GPT gpt.img "partition table exists on gpt.img (GPT)"

zero gm.img
zero gm.b
"$URAID" mirror label gmx gm.img gm.b >/dev/null 2>&1
try gmirror gm.img "gm.img appears to be part of gmirror gmx"
zero g3a
zero g3b
zero g3c
"$URAID" raid3 label g3x g3a g3b g3c >/dev/null 2>&1
try graid3 g3a "g3a appears to be part of graid3 g3x"

# Piped answers are not a terminal's: refused.
before=$(sha md1.2 md1.2.other)
yes | "$URAID" create --level=1 --raid-devices=2 --no-daemon --name=p md1.2 md1.2.other \
	>/dev/null 2>yes.err
check "yes | create: still refused" [ $? -ne 0 ]
check "... and says a terminal is needed" grep -q "without a terminal to ask on; --run" yes.err
check "... nothing written" [ "$(sha md1.2 md1.2.other)" = "$before" ]
# On a terminal, mdadm's question and answers.
tty_create() { # ANSWER
	printf '%s\n' "$1" | script -qec "'$URAID' create --level=1 --raid-devices=2 --no-daemon \
		--name=p md1.2 md1.2.other" /dev/null >tty.out 2>&1
}
tty_create n
check "terminal, answer n: refused" [ $? -ne 0 ]
check "... it asked as mdadm does" grep -q "Continue creating array \[y/N\]?" tty.out
check "... create aborted, nothing written" bash -c "grep -q 'create aborted' tty.out && [ '$(sha md1.2 md1.2.other)' = '$before' ]"
tty_create ""
check "terminal, empty answer: refused" bash -c "grep -q 'assuming no' tty.out && [ '$(sha md1.2 md1.2.other)' = '$before' ]"
tty_create y
check "terminal, answer y: created" bash -c "grep -q 'created: raid1' tty.out && [ '$(sha md1.2 md1.2.other)' != '$before' ]"
check "--run creates without asking" "$URAID" create --level=1 --raid-devices=2 --no-daemon \
	--name=p --run ext.img ext.img.other </dev/null
check "... mdadm sees the new array on it" bash -c "mdadm --examine ext.img | grep -q 'Name : .*:p '"
check "--force too" "$URAID" create --level=1 --raid-devices=2 --no-daemon --name=p --force \
	swap.img swap.img.other </dev/null
zero fresh0
zero fresh1
check "zeroed members: no question" "$URAID" create --level=1 --raid-devices=2 --no-daemon \
	--name=p fresh0 fresh1 </dev/null
t_done
