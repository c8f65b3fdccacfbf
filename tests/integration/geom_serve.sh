#!/usr/bin/env bash
# gmirror and graid3 as first-class arrays: labelled on files, started with
# `uraid assemble` (daemon + control socket), shown by status/detail, changed
# while running (configure, insert, remove through the socket), attached
# (loop device with the array's sector size: 1024 for a 3-component graid3),
# mkfs.xfs + files written and checked, a component failed while mounted,
# data still right after a remount, status shows it; then served over NBD
# and copied out with nbdcopy, compared with `uraid mirror|raid3 cat`.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/export_common.bash"
need nbdkit nbdfuse losetup mkfs.xfs nbdcopy nbdinfo qemu-io blockdev python3
if [ "$(id -u)" -ne 0 ]; then
	fail "geom_serve needs root (FUSE, loop devices, mount)"
	t_done
fi
# mkfs.xfs refuses file systems under 300 MiB unless it runs under fstests.
export TEST_DIR=$T_TMP TEST_DEV=unused QA_CHECK_FS=1
U=$URAID
D=$T_TMP/d
mkdir -p "$D"

jget() { # NAME EXPR: a field of `uraid status --json NAME` (python expression on a)
	"$U" status --json "$1" | python3 -c "
import json, sys
a = json.load(sys.stdin)[0]
print($2)"
}

wait_idle() { # NAME
	for _ in $(seq 300); do
		[ "$(jget "$1" "a['sync']['action']")" = idle ] && return 0
		sleep 0.1
	done
	return 1
}

# fs_round NAME DEV: mkfs, files, sums; leaves it mounted on $T_TMP/mnt-NAME
fs_round() {
	local name=$1 L=$2 mnt=$T_TMP/mnt-$1
	mkdir -p "$mnt"
	check "$name: mkfs.xfs" mkfs.xfs -q -f "$L"
	check "$name: mount" mount -o noatime "$L" "$mnt"
	python3 - "$mnt/tree" <<'PY'
import os, random, sys
r = random.Random(7)
root = sys.argv[1]
for d in range(4):
    p = os.path.join(root, "d%d" % d)
    os.makedirs(p, exist_ok=True)
    for f in range(20):
        with open(os.path.join(p, "f%02d" % f), "wb") as fh:
            fh.write(r.randbytes(r.choice((0, 1, 511, 4096, 5000, 65536, 300000))))
PY
	head -c 8M /dev/urandom >"$mnt/large.bin"
	(cd "$mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$T_TMP/$name.sums"
	sync
}

sums_ok() { # NAME: remount, then compare the checksums
	local name=$1 L=$2 mnt=$T_TMP/mnt-$1
	umount "$mnt" && mount -o noatime "$L" "$mnt" &&
		(cd "$mnt" && sha256sum --quiet -c "$T_TMP/$name.sums")
}

# ---- gmirror ----
for f in a b c; do truncate -s 64M "$D/$f"; done
check "gm: label" "$U" mirror label -b round-robin gm "$D/a" "$D/b"
check "gm: uraid assemble starts a daemon" "$U" assemble "$D/a" "$D/b"
out=$("$U" status gm)
check "gm: status line says gmirror [2/2] [UU]" \
	bash -c "grep -q 'gm : active gmirror' <<<'$out' && grep -q '\[2/2\] \[UU\]' <<<'$out'"
check "gm: json level and balance" \
	[ "$(jget gm "a['level'], a['geom']['balance'], a['block_bytes']")" = "gmirror round-robin 512" ]
check "gm: detail names the balance" bash -c "'$U' detail gm | grep -q 'Balance : round-robin'"
check "gm: configure -b split -s 65536 on the running mirror" \
	"$U" mirror configure -b split -s 65536 gm
check "gm: balance changed in the daemon" \
	[ "$(jget gm "a['geom']['balance'], a['geom']['slice']")" = "split 65536" ]
check "gm: mirror status of the running array" \
	bash -c "'$U' mirror status gm | grep -q 'mirror/gm *COMPLETE'"
check_fails "gm: configure with members while running refused" \
	"$U" mirror configure -b load gm "$D/a" "$D/b"
L=$("$U" attach gm 2>"$T_TMP/gm.attach.err")
check "gm: attach prints a loop device" [ "${L#/dev/loop}" != "$L" ]
if [ -b "$L" ]; then
	check "gm: loop sector size 512" [ "$(blockdev --getss "$L")" = 512 ]
	fs_round gm "$L"
	check "gm: fail a while mounted" "$U" fail gm "$D/a"
	check "gm: status shows a faulty" \
		[ "$(jget gm "a['degraded'], a['failed'], a['members'][0]['state']")" = "1 1 faulty" ]
	check "gm: files intact after the fail" sums_ok gm "$L"
	check "gm: insert c (running)" "$U" mirror insert gm "$D/c"
	check "gm: c synchronized" wait_idle gm
	check "gm: remove a (running)" "$U" mirror remove gm "$D/a"
	check "gm: 2 of 2 working again" [ "$(jget gm "a['working'], a['raid_disks']")" = "2 2" ]
	check "gm: files intact after the rebuild" sums_ok gm "$L"
	umount "$T_TMP/mnt-gm"
	dev_md5=$(dd if="$L" bs=1M iflag=direct status=none | md5sum | cut -d' ' -f1)
	check "gm: detach" "$U" detach "$L"
	size=$((64 * 1024 * 1024 - 512))
	check "gm: c holds what the device showed" \
		[ "$(head -c $size "$D/c" | md5sum | cut -d' ' -f1)" = "$dev_md5" ]
	check "gm: mirror cat b c = device" \
		[ "$("$U" mirror cat "$D/b" "$D/c" | md5sum | cut -d' ' -f1)" = "$dev_md5" ]
	check "gm: a's metadata cleared by remove" bash -c "! '$U' mirror dump '$D/a' 2>/dev/null"
	check "gm: dump c shows 2 disks, split" \
		bash -c "'$U' mirror dump '$D/c' | grep -q 'all: 2' && '$U' mirror dump '$D/c' | grep -q 'balance: split'"
else
	cat "$T_TMP/gm.attach.err"
	"$U" stop gm
fi

# ---- graid3 ----
for f in r0 r1 r2 r3; do truncate -s 64M "$D/$f"; done
check "r3: label" "$U" raid3 label gr "$D/r0" "$D/r1" "$D/r2"
check "r3: uraid assemble" "$U" assemble "$D/r0" "$D/r1" "$D/r2"
check "r3: json: graid3, 1024-byte blocks, 3 components" \
	[ "$(jget gr "a['level'], a['block_bytes'], a['raid_disks']")" = "graid3 1024 3" ]
check "r3: configure -r on the running array" "$U" raid3 configure -r gr
check "r3: ROUND-ROBIN flag" [ "$(jget gr "a['geom']['flags']")" = "ROUND-ROBIN" ]
L=$("$U" attach gr 2>"$T_TMP/gr.attach.err")
check "r3: attach prints a loop device" [ "${L#/dev/loop}" != "$L" ]
if [ -b "$L" ]; then
	check "r3: loop sector size 1024 (the provider sector)" [ "$(blockdev --getss "$L")" = 1024 ]
	fs_round gr "$L"
	check "r3: fail r1 while mounted" "$U" fail gr "$D/r1"
	check "r3: status shows r1 faulty, degraded" \
		[ "$(jget gr "a['degraded'], a['members'][1]['state']")" = "1 faulty" ]
	check "r3: files intact, degraded" sums_ok gr "$L"
	check "r3: add r3 into the failed slot" "$U" add gr "$D/r3"
	check "r3: rebuilt" wait_idle gr
	check "r3: 3 working" [ "$(jget gr "a['working']")" = 3 ]
	check "r3: files intact after the rebuild" sums_ok gr "$L"
	umount "$T_TMP/mnt-gr"
	dev_md5=$(dd if="$L" bs=1M iflag=direct status=none | md5sum | cut -d' ' -f1)
	check "r3: detach" "$U" detach "$L"
	check "r3: raid3 cat r0 r3 r2 = device" \
		[ "$("$U" raid3 cat "$D/r0" "$D/r3" "$D/r2" | md5sum | cut -d' ' -f1)" = "$dev_md5" ]
	check "r3: rebuilt r3 alone with r0 (parity unused) = device" \
		[ "$("$U" raid3 cat "$D/r0" "$D/r3" | md5sum | cut -d' ' -f1)" = "$dev_md5" ]
	# NBD: serve the members, copy out with nbdcopy
	sock=$T_TMP/gr.nbd
	check "r3: serve" "$U" serve --unix "$sock" "$D/r0" "$D/r3" "$D/r2"
	check "r3: NBD minimum block size = the provider sector (1024)" \
		[ "$(nbdinfo --json "nbd+unix:///?socket=$sock" | python3 -c 'import json,sys; print(json.load(sys.stdin)["exports"][0]["block_size_minimum"])')" = 1024 ]
	check "r3: nbdcopy out = device" \
		[ "$(nbdcopy "nbd+unix:///?socket=$sock" - | md5sum | cut -d' ' -f1)" = "$dev_md5" ]
	# an unaligned 100-byte write through NBD (qemu-io) lands where it should:
	# the copied-out image patched the same way is the reference
	uri="nbd+unix:///?socket=$sock"
	nbdcopy "$uri" "$T_TMP/gr.img"
	printf '\x5a%.0s' $(seq 100) | dd of="$T_TMP/gr.img" bs=1 seek=1500 conv=notrunc status=none
	check "r3: qemu-io unaligned write 100 bytes at 1500" \
		bash -c "qemu-io -f raw -c 'write -P 0x5a 1500 100' '$uri' >'$T_TMP/qio.log' 2>&1 && ! grep -qi 'fail\|error' '$T_TMP/qio.log'"
	check "r3: image = reference after the unaligned write" \
		[ "$(nbdcopy "$uri" - | md5sum | cut -d' ' -f1)" = "$(md5sum <"$T_TMP/gr.img" | cut -d' ' -f1)" ]
	check "r3: stop the serve" "$U" stop gr
else
	cat "$T_TMP/gr.attach.err"
	"$U" stop gr
fi
t_done
