#!/usr/bin/env bash
# The array as a real disk, end to end (root): for RAID5 and RAID6 on small
# member files: uraid attach (implicit serve) -> mkfs.xfs with the options
# `uraid geometry` prints (xfs_info must show that sunit/swidth) -> mount ->
# a tree of files and a large file with known sha256 -> fail a member while
# fio --verify=crc32c runs on the file system -> uraid add a spare, rebuild
# under that load through the control socket -> unmount -> xfs_repair -n
# clean -> remount, checksums match -> detach leaves no process, mount or
# loop device -> the current members assemble in a real kernel (mdvm; one
# VM for both arrays) with the md5 uraid reads and mismatch_cnt 0.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/export_common.bash"
source "$(dirname "$0")/../mdvm/lib.sh"
need nbdkit nbdfuse losetup mkfs.xfs xfs_repair xfs_info fio python3
if [ "$(id -u)" -ne 0 ]; then
	fail "export_e2e needs root (FUSE, loop devices, mount)"
	t_done
fi
have_mdvm=1
mdvm_ready || { fail "mdvm is not available"; have_mdvm=0; }
# mkfs.xfs refuses file systems under 300 MiB unless it runs under fstests;
# these variables are how fstests lifts that limit for small test devices.
export TEST_DIR=$T_TMP TEST_DEV=unused QA_CHECK_FS=1

status_field() { # NAME FIELD: from uraid status --json
	"$URAID" status --json "$1" | python3 -c "
import json, sys
a = json.load(sys.stdin)[0]
f = sys.argv[1]
print(a['sync'][f[5:]] if f.startswith('sync.') else a[f])" "$2"
}

# ctl NAME LINE: one raw request on the array's control socket, prints the reply line
ctl() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall((sys.argv[2] + "\n").encode()); print(s.recv(200).decode().split("\n")[0])' \
		"$URAID_RUN_DIR/$1.sock" "$2"
}

run_level() {
	local level=$1 n=$2 chunk_k=$3 name=r$1
	local chunk=$((chunk_k * 1024)) data
	case $level in 5) data=$((n - 1)) ;; 6) data=$((n - 2)) ;; esac
	mk_array "$name" "$level" "$n" "${chunk_k}K" 32M || { fail "$name: create"; return; }
	truncate -s 32M "$T_TMP/$name/spare.img"

	local L
	L=$("$URAID" attach $(members "$name") 2>"$T_TMP/$name.attach.err")
	check "$name: attach prints a loop device" [ "${L#/dev/loop}" != "$L" ]
	[ -b "$L" ] || { cat "$T_TMP/$name.attach.err"; return; }
	local st="$URAID_RUN_DIR/$name.attach" fuse_pid nbdkit_pid mnt_fuse
	fuse_pid=$(sed -n 's/^fuse_pid=//p' "$st")
	nbdkit_pid=$(sed -n 's/^nbdkit_pid=//p' "$st")
	mnt_fuse=$(sed -n 's/^mount=//p' "$st")
	check "$name: loop device uses direct I/O" \
		[ "$(losetup -n -O DIO "$L" | tr -d ' ')" = 1 ]

	# geometry -> mkfs.xfs; XFS must report the stripe in 4 KiB blocks
	local xfsopt
	xfsopt=$("$URAID" geometry "$name" | sed -n 's/^mkfs.xfs //p')
	check "$name: geometry prints -d su=${chunk_k}k,sw=$data" \
		[ "$xfsopt" = "-d su=${chunk_k}k,sw=$data" ]
	check "$name: mkfs.xfs $xfsopt" mkfs.xfs -q -f $xfsopt "$L"
	local mnt=$T_TMP/mnt-$name
	mkdir -p "$mnt"
	check "$name: mount" mount -o noatime "$L" "$mnt"
	check "$name: xfs_info sunit=$((chunk / 4096)) swidth=$((chunk * data / 4096)) blks" \
		bash -c "xfs_info '$mnt' | grep -q 'sunit=$((chunk / 4096)) *swidth=$((chunk * data / 4096)) blks'"

	# a tree of files (seeded sizes) and a large file
	python3 - "$mnt/tree" <<'PY'
import os, random, sys
r = random.Random(5)
root = sys.argv[1]
for d in range(8):
    p = os.path.join(root, "d%d" % d, "sub%d" % (d % 3))
    os.makedirs(p, exist_ok=True)
    for f in range(25):
        with open(os.path.join(p, "f%03d" % f), "wb") as fh:
            fh.write(r.randbytes(r.choice((0, 1, 511, 4096, 5000, 65536, 200000))))
PY
	head -c 16M /dev/urandom >"$mnt/large.bin"
	(cd "$mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$T_TMP/$name.sums"
	sync

	# load: fio writes and verifies a file while a member fails and a spare rebuilds
	fio --name=load --filename="$mnt/fio.dat" --size=24M --rw=randwrite --bs=4k \
		--ioengine=psync --direct=1 --verify=crc32c --verify_fatal=1 --verify_state_save=0 --do_verify=1 \
		--loops=4 --output="$T_TMP/$name.fio" >/dev/null 2>&1 &
	local fio_pid=$!
	sleep 1
	check "$name: uraid fail m1 while fio runs" "$URAID" fail "$name" "$T_TMP/$name/m1.img"
	check "$name: degraded after the fail" [ "$(status_field "$name" degraded)" = 1 ]
	# Slow the rebuild (20 MB/s) so it surely runs under the fio load.
	check "$name: rebuild speed limit through the control socket" \
		[ "$(ctl "$name" 'speed 1000 20000')" = "OK 0" ]
	check "$name: uraid add spare (rebuild starts)" "$URAID" add "$name" "$T_TMP/$name/spare.img"
	local saw_recovery=0
	for _ in $(seq 1200); do
		local js
		js=$("$URAID" status --json "$name")
		case $js in *'"action":"recovery"'*) saw_recovery=1 ;; esac
		case $js in *'"action":"idle"'*'"degraded":0,'* | *'"degraded":0,'*'"action":"idle"'*) break ;; esac
		sleep 0.1
	done
	check "$name: rebuild ran (seen as recovery)" [ $saw_recovery = 1 ]
	check "$name: rebuilt: not degraded, idle" \
		[ "$(status_field "$name" degraded)/$(status_field "$name" sync.action)" = 0/idle ]
	check "$name: fio under fail+rebuild verified (crc32c)" wait $fio_pid
	check "$name: fio reported no errors" grep -q "err= 0" "$T_TMP/$name.fio"

	check "$name: umount" umount "$mnt"
	check "$name: xfs_repair -n clean" \
		bash -c "xfs_repair -n '$L' >'$T_TMP/$name.repair' 2>&1 || { tail -20 '$T_TMP/$name.repair'; false; }"
	check "$name: remount" mount -o noatime "$L" "$mnt"
	check "$name: checksums of the tree and large file match" \
		bash -c "cd '$mnt' && sha256sum --quiet -c '$T_TMP/$name.sums'"
	check "$name: umount again" umount "$mnt"
	local dev_md5
	dev_md5=$(dd if="$L" bs=1M iflag=direct status=none | md5sum | cut -d' ' -f1)

	check "$name: detach" "$URAID" detach "$L"
	check "$name: no nbdkit left" bash -c "! ps -o stat= -p $nbdkit_pid | grep -qv Z"
	check "$name: no nbdfuse left" bash -c "! ps -o stat= -p $fuse_pid | grep -qv Z"
	check "$name: no uraid/nbdkit/nbdfuse process of this array left" \
		bash -c "! ps -eo stat=,comm=,args= | awk '\$1 !~ /^Z/ && (\$2 == \"uraid\" || \$2 == \"nbdkit\" || \$2 == \"nbdfuse\")' | grep -q -e '$T_TMP/$name/' -e '$URAID_RUN_DIR/$name'"
	check "$name: no FUSE mount left" bash -c "! grep -q ' $mnt_fuse ' /proc/self/mounts"
	check "$name: loop device released" \
		bash -c "! losetup -n -O BACK-FILE '$L' 2>/dev/null | grep -q '$T_TMP'"
	check "$name: run dir has no attach/export record" \
		bash -c "[ ! -e '$st' ] && [ ! -e '$URAID_RUN_DIR/$name.export' ]"

	# the members now: m1 failed, the spare took its place
	local now=()
	for ((i = 0; i < n; i++)); do [ $i = 1 ] || now+=("$T_TMP/$name/m$i.img"); done
	now+=("$T_TMP/$name/spare.img")
	local cat_md5
	cat_md5=$("$URAID" cat "${now[@]}" | md5sum | cut -d' ' -f1)
	check "$name: uraid cat of the members = what the loop device read" [ "$cat_md5" = "$dev_md5" ]
	# for the kernel's look at the end
	local i=0
	for m in "${now[@]}"; do VM_DISKS+=(--disk "${name}_d$i=$m"); i=$((i + 1)); done
	VM_ARRAYS="$VM_ARRAYS $name"
	echo "$cat_md5" >"$T_TMP/$name.md5"
}

VM_DISKS=() VM_ARRAYS=""
for l in ${EXPORT_E2E_LEVELS:-5 6}; do
	case $l in 5) run_level 5 4 64 ;; 6) run_level 6 5 128 ;; esac
done
# One VM: each array's members (disks NAME_d*) assembled read-only as mdN,
# hashed (ARRAY_MD5_NAME=), made writable, checked (CHECK_NAME
# mismatch_cnt=N), stopped; DONE_NAME when all of it went well.
if [ $have_mdvm = 1 ] && [ -n "$VM_ARRAYS" ]; then
	mdvm_run --snapshot --timeout 400 "${VM_DISKS[@]}" --log "$T_TMP/vm.log" \
		--cmd "VM_ARRAYS=\"$VM_ARRAYS\""'
i=0 bad=0
one() { # NAME: the array of disks NAME_* as md$i
	M=$(for n in $MDVM_DISKS; do case $n in "$1"_*) printf "/dev/disk-%s " "$n" ;; esac; done)
	run mdadm --assemble --readonly /dev/md$i $M || return 1
	run mdadm --detail /dev/md$i
	echo "ARRAY_MD5_$1=$(md5_range /dev/md$i)"
	run mdadm --readwrite /dev/md$i || return 1
	out=$(md_check md$i)
	r=$?
	echo "CHECK_$1 $out"
	run mdadm --stop /dev/md$i || return 1
	return $r
}
for a in $VM_ARRAYS; do
	if one "$a"; then echo "DONE_$a"; else bad=1; fi
	i=$((i + 1))
done
exit $bad' >/dev/null 2>&1
	rc=$?
	for name in $VM_ARRAYS; do
		check "$name: mdvm: kernel md assembles and checks the members (VM rc $rc)" \
			grep -qx "DONE_$name" "$T_TMP/vm.log"
		grep -qx "DONE_$name" "$T_TMP/vm.log" ||
			grep -E '^(#|mdadm|ARRAY|CHECK|!!!|md)' "$T_TMP/vm.log" | tail -30
		check "$name: mdvm: kernel md5 = uraid cat md5" \
			grep -qx "ARRAY_MD5_$name=$(cat "$T_TMP/$name.md5")" "$T_TMP/vm.log"
		check "$name: mdvm: mismatch_cnt=0" grep -qx "CHECK_$name mismatch_cnt=0" "$T_TMP/vm.log"
	done
fi
t_done
