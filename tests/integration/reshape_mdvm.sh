#!/usr/bin/env bash
# md reshape against the real kernel (shared/mdvm), one boot; the checks
# run in the guest (tests/integration/reshape_mdvm.job) with uraid and
# reshape_tool (a small program on the public API, built here) put there:
# kernel-made raid5 (internal bitmap; 0.90 metadata) and raid6 grows
# stopped mid-way are read (cat, examine)
# and finished by uraid, then assembled by the kernel with the content
# and mismatch_cnt 0 (mdadm -X: the bitmap as before); reshapes uraid
# starts and stops at 40% (raid5 4->5 with a bitmap, chunk and layout
# change) are finished by the kernel, same checks; and backwards: raid5
# 5->4 and a layout change moving the data up, by uraid (stopped at 40%,
# the kernel finishes), raid5 5->4 by the kernel (frozen mid-way, uraid
# finishes); and uraid's raid5 4 -> raid6 5 (a level
# change that moves data), finished by the kernel; raid10 near-2 4->5 by
# uraid (stopped at 40%, the kernel finishes) and by the kernel (frozen
# mid-way, uraid finishes); and in-place 0.90 grows
# with mdadm's backup file both ways: uraid's (cut in its critical section)
# restored by mdadm --assemble --backup-file, mdadm's (stopped in it)
# restored and finished by uraid assemble --backup-file. Where the kernel
# grows, mdadm's background process is ended and waited for before uraid
# takes the members (issue #15).
# Also (issue #15, degraded and more level changes): uraid's raid6 5 ->
# raid5, raid4 -> raid5, raid0 -> raid5 and a degraded raid5 4 -> 5 (two
# spares, one filling the empty slot), stopped at 40%, finished by the
# kernel; the kernel's raid5 -> raid6 (backwards), stopped once under way,
# finished by uraid.
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
d=$T_TMP
libs=$(uraid_libs)
cc -O1 -Wall -I"$TOP/include" -o "$d/reshape_tool" "$TOP/tests/integration/reshape_tool.c" \
	"$TOP/build/rel/liburaid.a" $libs || { fail "reshape_tool builds"; t_done; }
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(15).randbytes(12<<20))' >"$d/pat"
disks=(--disk pat="$d/pat")
add() { for i in $(seq 0 $(($2 - 1))); do truncate -s 4M "$d/$1$i"; disks+=(--disk "$1$i=$d/$1$i"); done; }
add k 5
add r 6
add u 5
# p (issue #15, mdadm's backup file): a 0.90 raid5 4 -> 5 grown in place by
# uraid here with a backup file, stopped right after its critical section;
# then the superblocks are set back to position 0 and the backup's section
# put back in its superblock: what a cut after the move and before the
# checkpoint leaves. The guest's mdadm --assemble --backup-file restores it.
prep_p() {
	local r=$d/prun pb
	for i in 0 1 2 3 4; do truncate -s 4M "$d/p$i"; done
	URAID_RUN_DIR=$r "$URAID" create --level=5 --raid-devices=4 --metadata=0.90 --chunk=64K \
		--assume-clean --name=p --run "$d"/p[0-3] >"$d/p.out" 2>&1 || return 1
	pb=$(URAID_RUN_DIR=$r "$URAID" detail p | sed -n 's/^ *Array Size : \([0-9]*\).*/\1/p')
	URAID_RUN_DIR=$r "$URAID" stop p >>"$d/p.out" 2>&1
	FILL=$d/pat BACKUP=$d/bkp "$d/reshape_tool" 5 -1 0 0 "$d/p4" "$d"/p[0-3] >>"$d/p.out" 2>&1 ||
		return 1
	python3 - "$d/bkp" "$d"/p[0-4] <<'PY' >>"$d/p.out" 2>&1 || return 1
import os, struct, sys
bk = sys.argv[1]
b = bytearray(open(bk, "rb").read(512))
assert b[:16] == b"md_backup_data-1", b[:16]
sect = struct.unpack_from("<Q", b, 72)[0]  # devstart2: the section's length
assert struct.unpack_from("<Q", b, 56)[0] == 0, "the backup was cleared after the move"
struct.pack_into("<QQ", b, 48, 0, sect)  # arraystart, length
c = 0  # mdadm's bsb_csum: the first byte, once per byte counted
for _ in range(64):
    c = ((c << 3) + (b[0] - 256 if b[0] > 127 else b[0])) & 0xFFFFFFFF
struct.pack_into("<I", b, 64, c)
with open(bk, "r+b") as f:
    f.write(b)
for m in sys.argv[2:]:
    off = (os.path.getsize(m) // 512 & ~127) * 512 - 65536  # 0.90 superblock
    with open(m, "r+b") as f:
        f.seek(off)
        sb = bytearray(f.read(4096))
        assert struct.unpack_from("<III", sb, 0) == (0xA92B4EFC, 0, 91), m
        pos = struct.unpack_from("<Q", sb, 176)[0]  # reshape_position
        assert pos == sect, (m, pos, sect)
        struct.pack_into("<Q", sb, 176, 0)
        struct.pack_into("<I", sb, 152, 0)
        t = sum(struct.unpack("<1024I", sb))
        struct.pack_into("<I", sb, 152, ((t & 0xFFFFFFFF) + (t >> 32)) & 0xFFFFFFFF)
        f.seek(off)
        f.write(sb)
print("p: position %d -> 0, backup section 0 + %d" % (sect, sect))
PY
	echo "PB=$((pb * 1024))" >"$d/p.env"
}
pput=()
if prep_p; then
	for i in 0 1 2 3 4; do disks+=(--disk "p$i=$d/p$i"); done
	pput=(--put "$d/bkp=/tmp/bkp" --put "$d/p.env=/tmp/p.env")
else
	fail "p: the in-place grow with a backup file made on the host"
	cat "$d/p.out"
fi
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 600 "${disks[@]}" --put-exe "$URAID" \
	--put-exe "$d/reshape_tool" "${pput[@]}" --script "$TOP/tests/integration/reshape_mdvm.job" \
	>"$d/vm.log" 2>&1
rc=$?
cp "$d/vm.log" "$TOP/build/test-logs/reshape_mdvm.vm.log" 2>/dev/null
check "VM ran the reshape job (rc $rc)" [ "$rc" -eq 0 ]
want() { # name what description
	local l
	l=$(grep "^RESULT $1 $2 " "$d/vm.log" | head -1)
	check "$1: $3 (${l#RESULT $1 $2 })" [ "${l#RESULT $1 $2 ok}" != "$l" ]
}
for n in k r z; do
	case $n in
	k) lv="raid5 4->5 with an internal bitmap" ;;
	r) lv="raid6 5->6" ;;
	z) lv="raid5 4->5, 0.90 metadata (in place, minor 91)" ;;
	esac
	want $n examine "$lv grown by the kernel, stopped mid-way: uraid examine's reshape lines are mdadm's"
	want $n ucat "... uraid cat reads the pattern written before the grow"
	want $n kquiet "... mdadm's background grow process ended before uraid takes the members"
	want $n ufinish "... uraid assembles it read-write and finishes the reshape"
	want $n kassemble "... the kernel assembles the members uraid finished"
	want $n kcontent "... and reads the pattern, zeros after it"
	want $n kcheck "... check: mismatch_cnt 0"
	want $n kfinal "... superblocks without reshape bits"
	[ $n = k ] && want $n bitmap "... mdadm -X: every member's bitmap as before the grow"
done
for n in u c; do
	lv=$([ $n = u ] && echo "raid5 4->5 with an internal bitmap" || echo "raid5 64K->32K chunk, right-symmetric")
	want $n ustart "$lv started by uraid, stopped at 40%"
	want $n examine "... uraid examine's reshape lines are mdadm's"
	want $n ucat "... uraid cat reads the pattern mid-reshape"
	want $n kassemble "... the kernel assembles it and finishes the reshape"
	want $n kcontent "... and reads the pattern, zeros after it"
	want $n kcheck "... check: mismatch_cnt 0"
	want $n kfinal "... superblocks without reshape bits"
	[ $n = u ] && want $n bitmap "... mdadm -X: every member's bitmap as before the grow"
done
for n in s l; do
	lv=$([ $n = s ] && echo "raid5 5->4 (array size cut first)" || echo "raid5 layout change moving the data offset up")
	want $n ustart "backwards: $lv started by uraid, stopped at 40%"
	want $n examine "... uraid examine's reshape lines are mdadm's"
	want $n ucat "... uraid cat reads the pattern mid-reshape"
	want $n kassemble "... the kernel assembles it and finishes the reshape"
	want $n kcontent "... and reads the pattern"
	want $n kcheck "... check: mismatch_cnt 0"
	want $n kfinal "... superblocks without reshape bits"
done
want t examine "backwards: raid5 5->4 shrunk by the kernel, stopped mid-way: uraid examine's reshape lines are mdadm's"
want t ucat "... uraid cat reads the pattern"
want t kquiet "... mdadm's background grow process ended before uraid takes the members"
want t ufinish "... uraid assembles it read-write and finishes the reshape"
want t kassemble "... the kernel assembles the members uraid finished"
want t kcontent "... and reads the pattern"
want t kcheck "... check: mismatch_cnt 0"
want t kfinal "... superblocks without reshape bits"
want v ustart "raid5 4 -> raid6 5 left-symmetric started by uraid, stopped at 40%"
want v examine "... uraid examine's reshape lines are mdadm's"
want v ucat "... uraid cat reads the pattern mid-reshape"
want v kassemble "... the kernel assembles it and finishes the reshape"
want v kgeom "... raid6, left-symmetric, 5 members"
want v kcontent "... and reads the pattern"
want v kcheck "... check: mismatch_cnt 0"
want v kfinal "... superblocks without reshape bits"
# raid10 near-2 4->5 (reshape_mdvm.job's raid10_cases)
want w ustart "raid10 near-2 4->5 started by uraid, stopped at 40%"
want w examine "... uraid examine's reshape lines are mdadm's"
want w ucat "... uraid cat reads the pattern mid-reshape"
want w kassemble "... the kernel assembles it and finishes the reshape"
want w kcontent "... and reads the pattern (the kernel leaves the new end as the members held it)"
want w kcheck "... check: mismatch_cnt 0"
want w kfinal "... superblocks without reshape bits"
want x examine "raid10 near-2 4->5 grown by the kernel, stopped mid-way: uraid examine's reshape lines are mdadm's"
want x ucat "... uraid cat reads the pattern written before the grow"
want x kquiet "... mdadm's background grow process ended before uraid takes the members"
want x ufinish "... uraid assembles it read-write and finishes the reshape"
want x kassemble "... the kernel assembles the members uraid finished"
want x kcontent "... and reads the pattern, zeros after it"
want x kcheck "... check: mismatch_cnt 0"
want x kfinal "... superblocks without reshape bits"
if [ ${#pput[@]} -gt 0 ]; then
	want p examine "0.90 raid5 4->5 grown in place by uraid with a backup file, cut in its critical section: uraid examine's reshape lines are mdadm's"
	want p krestore "... mdadm --assemble --backup-file restores the critical section from uraid's file"
	want p kassemble "... the kernel finishes the reshape"
	want p kcontent "... and reads the pattern, zeros after it"
	want p kcheck "... check: mismatch_cnt 0"
	want p kfinal "... superblocks without reshape bits"
fi
want q kcut "0.90 raid5 4->5 grown in place by mdadm --backup-file, frozen once the backup is written"
want q ufinish "... uraid assemble --backup-file finishes the reshape"
want q urestore "... restoring the critical section from mdadm's backup where it stopped in it"
want q kassemble "... the kernel assembles the members uraid finished"
want q kcontent "... and reads the pattern, zeros after it"
want q kcheck "... check: mismatch_cnt 0"
want q kfinal "... superblocks without reshape bits"
for c in "e:raid6 5 -> raid5 4 (the move to left-symmetric-6)" "f:raid4 4 -> raid5 left-symmetric" \
	"g:raid0 3 -> raid5 4 (the parity slot filled)" \
	"h:degraded raid5 4 -> 5 with two spares (one fills the empty slot)"; do
	n=${c%%:*}
	want $n ustart "${c#*:} started by uraid, stopped at 40%"
	[ $n = h ] && want $n examine "... uraid examine's reshape lines are mdadm's"
	want $n ucat "... uraid cat reads the pattern mid-reshape"
	want $n kassemble "... the kernel assembles it and finishes the reshape"
	want $n kgeom "... the kernel's geometry at the end"
	want $n kcontent "... and reads the pattern"
	want $n kcheck "... check: mismatch_cnt 0"
	want $n kfinal "... superblocks without reshape bits"
done
want j kstopped "raid5 4 -> raid6 5 grown by the kernel (backwards), stopped once under way"
want j ucat "... uraid cat reads the pattern"
want j kquiet "... mdadm's background grow process ended before uraid takes the members"
want j ufinish "... uraid assembles it read-write and finishes the reshape"
want j kassemble "... the kernel assembles the members uraid finished"
want j kgeom "... raid6, left-symmetric, 5 members"
want j kcontent "... and reads the pattern"
want j kcheck "... check: mismatch_cnt 0"
want j kfinal "... superblocks without reshape bits"
[ $T_FAILED = 0 ] || grep -E "RESULT|mdadm:|md/raid|!!!|uraid:|reshape|^[<>]" "$d/vm.log" | head -60
t_done
