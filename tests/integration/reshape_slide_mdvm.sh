#!/usr/bin/env bash
# mdadm's sliding backup (an in-place reshape that keeps the members)
# against the real kernel (shared/mdvm), one boot; the checks run in the
# guest (tests/integration/reshape_slide_mdvm.job):
# a: a 0.90 raid5 chunk change 64K -> 32K started by uraid here with
#    --backup-file and stopped at 40% (reshape_tool): the guest's mdadm
#    --assemble --backup-file (Grow_restart, then its own sliding backup
#    from uraid's position) finishes it; content, mismatch_cnt 0, 0.90
#    superblocks with the new chunk and no reshape;
# b: mdadm's own sliding reshape (0.90 chunk change, --backup-file,
#    throttled) stopped mid-way: uraid assemble --backup-file restores the
#    sections the position lies in and finishes it; the kernel assembles
#    it: content, mismatch_cnt 0, the new chunk;
# c: (a first boot, reshape_slide_cut.job) mdadm's sliding 0.90 chunk
#    change, backup file on an ext2 disk, members behind dm-delay,
#    power-cut in the guest (sysrq b) with the reshape under way; the
#    backup taken out with debugfs; uraid assemble --backup-file here
#    (prints whether it restored sections) finishes it; in the main boot
#    the kernel assembles it (mismatch_cnt 0, new chunk, no reshape) and
#    its content equals mdadm --assemble --backup-file's on a copy of the
#    same cut (whether that is the pattern is printed: mdadm 4.2 lets the
#    kernel run past its window, so it often is not).
# q, s, r: the 0.90 level changes that keep the data disks (in the main
# boot, members of 2 MiB): q: uraid's raid5 4 -> raid6 5 (the takeover to
# left-symmetric-6, Q filled by the slide to left-symmetric) started here
# with --backup-file, stopped at 40%: in the guest mdadm --examine's
# reshape lines are uraid examine's, uraid cat reads the pattern, mdadm
# --assemble --backup-file and the kernel finish it (raid6 left-symmetric,
# content, mismatch_cnt 0); s: mdadm's raid5 4 -> raid6 5 (its grow over
# dm-delay maps) stopped mid-way: the kernel's device table and counts are
# what uraid wrote for q (the filling Q member active, not in sync), uraid
# cat reads the pattern, uraid assemble --backup-file finishes it, the
# kernel checks it (content, mismatch_cnt 0); r: mdadm's raid6 5 -> raid5 4
# (its slide to left-symmetric-6) the same way, the kernel then finding a
# raid6 -6; mdadm's takeover to raid5 4 after it leaves Q's member a spare,
# and uraid assembles it so (check 0, the pattern).
# the host helpers (mdvm check, reshape_tool, the pattern disk, want) are
# the reshape round trips'
source "$(dirname "$0")/reshape_common.bash"
rs_setup
for n in a b; do
	for i in 0 1 2 3; do
		truncate -s $([ $n = a ] && echo 2M || echo 4M) "$d/$n$i"
		disks+=(--disk "$n$i=$d/$n$i")
	done
done
r=$d/run
out=$d/a.out
URAID_RUN_DIR=$r "$URAID" create --level=5 --raid-devices=4 --metadata=0.90 --chunk=64K \
	--assume-clean --name=a --run "$d"/a[0-3] >"$out" 2>&1
ab=$(URAID_RUN_DIR=$r "$URAID" detail a | sed -n 's/^ *Array Size : \([0-9]*\).*/\1/p')
URAID_RUN_DIR=$r "$URAID" stop a >>"$out" 2>&1
check "a: uraid starts a 0.90 chunk change in place with --backup-file, stopped at 40%" \
	env FILL="$d/pat" BACKUP="$d/bka" "$d/reshape_tool" 4 -1 32 400 - "$d"/a[0-3]
URAID_RUN_DIR=$r "$URAID" assemble --name=a "$d"/a[0-3] >"$d/asm.out" 2>&1
arc=$?
[ $arc = 0 ] && URAID_RUN_DIR=$r "$URAID" stop a >/dev/null 2>&1
check "a: without --backup-file assemble refuses it (in mdadm's words)" \
	grep -q "Need a backup file to complete reshape" "$d/asm.out"
pos=$("$URAID" examine "$d/a0" | sed -n "s/^ *Reshape pos'n : \([0-9]*\).*/\1/p")
check "a: uraid's backup file is mdadm's, one section live, ending at the position (${pos}K)" \
	python3 - "$d/bka" "$((pos * 2))" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read(512)
assert b[:15] == b"md_backup_data-", b[:16]
dev, s1, l1 = struct.unpack_from("<QQQ", b, 40)
dev2, s2, l2 = struct.unpack_from("<QQQ", b, 72)
assert dev == 8 and dev2 > 0, (dev, dev2)
live = [(s, l) for s, l in ((s1, l1), (s2, l2)) if l]
assert len(live) == 1 and live[0][0] + live[0][1] == int(sys.argv[2]), (live, sys.argv[2])
PY
echo "AB=$((ab * 1024))" >"$d/a.env"
# q: uraid's 0.90 raid5 4 -> raid6 5 keeping the data disks (the takeover to
# left-symmetric-6, then the slide to left-symmetric filling Q), stopped at 40%
for i in 0 1 2 3 4; do
	truncate -s 2M "$d/q$i"
	disks+=(--disk "q$i=$d/q$i")
done
URAID_RUN_DIR=$r "$URAID" create --level=5 --raid-devices=4 --metadata=0.90 --chunk=64K \
	--assume-clean --name=q --run "$d"/q[0-3] >"$d/q.out" 2>&1
qb=$(URAID_RUN_DIR=$r "$URAID" detail q | sed -n 's/^ *Array Size : \([0-9]*\).*/\1/p')
URAID_RUN_DIR=$r "$URAID" stop q >>"$d/q.out" 2>&1
check "q: uraid starts a 0.90 raid5 4 -> raid6 5 keeping the data disks with --backup-file, stopped at 40%" \
	env FILL="$d/pat" BACKUP="$d/bkq" LEVEL=6 "$d/reshape_tool" 5 -1 0 400 "$d/q4" "$d"/q[0-3]
check "q: ... mid-way the members say raid6 left-symmetric-6 -> left-symmetric" \
	sh -c '"$1" examine "$2" | grep -q "Layout : left-symmetric-6" &&
		"$1" examine "$2" | grep -q "New Layout : left-symmetric$"' - "$URAID" "$d/q0"
echo "QB=$((qb * 1024))" >"$d/q.env"
# c: mdadm's sliding reshape power-cut in a first boot (reshape_slide_cut.job),
# finished by uraid here from the backup file taken out of the ext2 image
kver=$(sed -n "s/^MDVM_KVER='\(.*\)'/\1/p" "${MDVM_CACHE:-/var/cache/mdvm}/current/info" 2>/dev/null)
ko=$TOP/build/mdvm-ko/$kver
if [ -n "$kver" ] && [ ! -f "$ko/ext4.ko" ]; then
	deb=$(ls "${MDVM_CACHE:-/var/cache/mdvm}"/debs/linux-image-"$kver"_*.deb 2>/dev/null | head -1)
	mkdir -p "$ko.tmp" && [ -n "$deb" ] &&
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$ko.tmp" --wildcards \
			'*/fs/ext4/ext4.ko' '*/fs/jbd2/jbd2.ko' '*/fs/mbcache.ko' '*/lib/crc16.ko' &&
		mkdir -p "$ko" && find "$ko.tmp" -name '*.ko' -exec mv {} "$ko/" \;
	rm -rf "$ko.tmp"
fi
cdisks=(--disk pat="$d/pat" --disk cbk="$d/cbk")
for i in 0 1 2 3; do
	cdisks+=(--disk "c$i=$d/c$i")
	disks+=(--disk "c$i=$d/c$i")
done
# On a loaded host the guest's polling can be too slow to see the reshape
# under way before it ends: then once more on fresh disks, each member
# request delayed four times as long.
for delay in 100 400; do
	for i in 0 1 2 3; do
		rm -f "$d/c$i" && truncate -s 4M "$d/c$i"
	done
	rm -f "$d/cbk" && truncate -s 8M "$d/cbk"
	mkfs.ext2 -q -F "$d/cbk" >/dev/null 2>&1
	echo "CUTDELAY=$delay" >"$d/cut.env"
	"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 90 "${cdisks[@]}" --put "$ko=/tmp/ko" \
		--put "$d/cut.env=/tmp/cut.env" --put-exe /usr/sbin/dmsetup \
		--script "$TOP/tests/integration/reshape_slide_cut.job" >"$d/cut.log" 2>&1
	crc=$?
	cp "$d/cut.log" "$TOP/build/test-logs/reshape_slide_mdvm.cut.log" 2>/dev/null
	cut=$(grep "^CUT " "$d/cut.log" | head -1)
	[ "${cut#CUT bad no cut}" = "$cut" ] && break
done
check "c: mdadm's sliding 0.90 chunk change, backup on ext2, power-cut in the guest (rc $crc, ${cut#CUT })" \
	sh -c '[ "$1" = 125 ] && [ "${2#CUT at}" != "$2" ]' - "$crc" "$cut"
debugfs -R "dump /bk $d/bkc" "$d/cbk" >/dev/null 2>&1
check "c: the backup file taken out of the ext2 image ($(stat -c %s "$d/bkc" 2>/dev/null) bytes)" \
	[ -s "$d/bkc" ]
for i in 0 1 2 3; do # the same cut for mdadm's own restore in the guest
	cp "$d/c$i" "$d/m$i"
	disks+=(--disk "m$i=$d/m$i")
done
cp "$d/bkc" "$d/bkm" 2>/dev/null
cpos=$("$URAID" examine "$d/c0" 2>&1 | grep -m1 -i "reshape pos")
# (bounded: a wrong restore must fail the check, not hang the run)
URAID_RUN_DIR=$r timeout 120 "$URAID" assemble --name=c --backup-file="$d/bkc" "$d"/c[0-3] >"$d/casm.out" 2>&1
carc=$?
t=0
while [ $carc = 0 ] && [ $t -lt 240 ] && URAID_RUN_DIR=$r "$URAID" detail c | grep -q Reshape; do
	sleep 0.5
	t=$((t + 1))
done
cdet=$(URAID_RUN_DIR=$r "$URAID" detail c 2>&1)
[ $carc = 0 ] && URAID_RUN_DIR=$r timeout 60 "$URAID" stop c >/dev/null 2>&1
t_kill_daemons # a daemon a timeout left running (by its c.pid), before the boot uses the disks
crest=$(cat "$d/casm.out" "$r/c.log" 2>/dev/null | grep -m1 "restored the critical")
echo "# c: superblock ${cpos:-no reshape position}; ${crest:-no section restored (the position past the backup file sections)}"
check "c: uraid assemble --backup-file takes it (rc $carc)" [ $carc = 0 ]
check "c: ... and finishes the reshape" sh -c '! echo "$1" | grep -q Reshape' - "$cdet"
[ $T_FAILED = 0 ] || cat "$d/casm.out" "$r/c.log" 2>/dev/null | head -20
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 "${disks[@]}" --put-exe "$URAID" \
	--put "$d/bka=/tmp/bka" --put "$d/a.env=/tmp/a.env" --put "$d/bkm=/tmp/bkm" \
	--put "$d/bkq=/tmp/bkq" --put "$d/q.env=/tmp/q.env" --put-exe /usr/sbin/dmsetup \
	--put "$TOP/tests/integration/reshape_lib.job=/tmp/reshape_lib.job" \
	--script "$TOP/tests/integration/reshape_slide_mdvm.job" >"$d/vm.log" 2>&1
rc=$?
cp "$d/vm.log" "$TOP/build/test-logs/reshape_slide_mdvm.vm.log" 2>/dev/null
check "VM ran the sliding-backup job (rc $rc)" [ "$rc" -eq 0 ]
want a krestore "mdadm --assemble --backup-file restores the section from uraid's file and starts the array"
want a kfinish "... the kernel and mdadm's monitor finish it"
want a kcontent "... the content is the pattern"
want a kcheck "... check: mismatch_cnt 0"
want a kfinal "... 0.90 superblocks, chunk 32K, no reshape"
want b kcut "mdadm's sliding 0.90 chunk change with --backup-file, stopped mid-way"
want b ufinish "... uraid assemble --backup-file finishes it"
want b urestore "... uraid restores the backup's sections where the position lies in them (none needed past them)"
want b kassemble "... the kernel assembles the members uraid finished"
want b kcontent "... the content is the pattern"
want b kcheck "... check: mismatch_cnt 0"
want b kfinal "... 0.90 superblocks, chunk 32K, no reshape"
want c kassemble "the kernel assembles the members uraid finished after the cut"
want c mref "mdadm --assemble --backup-file on a copy of the same cut finishes it (the reference)"
want c kcontent "... the content is what mdadm restored (and the pattern?)"
want c kcheck "... check: mismatch_cnt 0"
want c kfinal "... 0.90 superblocks, chunk 32K, no reshape"
want q examine "uraid's 0.90 raid5 4 -> raid6 5 mid-way: uraid examine's reshape lines are mdadm's"
want q ucat "... uraid cat reads the pattern mid-way"
want q krestore "... mdadm --assemble --backup-file restores the section from uraid's file and starts it"
want q kfinish "... the kernel finishes it"
want q kgeom "... raid6, left-symmetric, 5 members"
want q kcontent "... the content is the pattern"
want q kcheck "... check: mismatch_cnt 0"
want q kfinal "... 0.90 superblocks, chunk 64K, no reshape"
want s kcut "mdadm's 0.90 raid5 4 -> raid6 5 keeping the data disks, stopped mid-way"
want s examine "... uraid examine's reshape lines are mdadm's"
want s table "... the kernel's device table and counts are what uraid wrote for q mid-way"
want s ucat "... uraid cat reads the pattern mid-way"
want s ufinish "... uraid assemble --backup-file finishes it"
want s urestore "... uraid restores the backup's sections where the position lies in them"
want s kgeom "... the kernel assembles it: raid6, left-symmetric, 5 members"
want s kcontent "... the content is the pattern"
want s kcheck "... check: mismatch_cnt 0"
want s kfinal "... 0.90 superblocks, chunk 64K, no reshape"
want r kcut "mdadm's 0.90 raid6 5 -> raid5 4 keeping the data disks: the slide to left-symmetric-6 stopped mid-way"
want r examine "... uraid examine's reshape lines are mdadm's"
want r ucat "... uraid cat reads the pattern mid-way"
want r ufinish "... uraid assemble --backup-file finishes it"
want r urestore "... uraid restores the backup's sections where the position lies in them"
want r kgeom "... the kernel assembles it: raid6 left-symmetric-6, 5 members (mdadm's monitor ended before its takeover)"
want r kcontent "... the content is the pattern"
want r kcheck "... check: mismatch_cnt 0"
want r kfinal "... 0.90 superblocks, chunk 64K, no reshape"
want r qdrop "... mdadm's takeover to raid5 4: uraid assembles it, Q's member a spare, check 0, cat the pattern"
[ $T_FAILED = 0 ] || grep -E "RESULT|mdadm:|md/raid|!!!|uraid:|reshape" "$d/vm.log" | head -60
t_done
