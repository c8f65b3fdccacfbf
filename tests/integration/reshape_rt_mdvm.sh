#!/usr/bin/env bash
# md reshapes uraid starts, finished by the real kernel (shared/mdvm), one
# boot; the checks run in the guest (tests/integration/reshape_rt_mdvm.job)
# with uraid and reshape_tool (a small program on the public API, built
# here) put there. Each reshape is started by uraid and stopped at 40%:
# uraid's examine prints mdadm's reshape lines and cat reads the pattern
# mid-way, then the kernel assembles the members, finishes the move and
# reads the pattern (zeros after it), check's mismatch_cnt 0, no reshape
# bits left. Kinds: raid5 4->5 with an internal bitmap (mdadm -X: every
# member's bitmap as before), a chunk and layout change; backwards: raid5
# 5->4 and a layout change moving the data up; level changes: raid5 4 ->
# raid6 5, raid6 5 -> raid5 4, raid4 -> raid5, raid0 3 -> raid5 4, raid5 4 -> raid0
# (stopped mid-way; and finished by uraid, read by the kernel); a
# degraded raid5 4 -> 5 (two spares, one filling the empty slot); raid10
# near-2 4->5, 5->4 (after --array-size), a chunk change and near-2 ->
# offset-2; and a 0.90 in-place grow with a backup file (cut in its
# critical section), restored by mdadm --assemble --backup-file. The
# other direction (the kernel's reshapes finished by uraid) is
# reshape_mdvm.sh; the helpers are reshape_common.bash and reshape_lib.job.
source "$(dirname "$0")/reshape_common.bash"
rs_setup
rs_add k 5
rs_add r 6
rs_add u 5
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
rs_boot reshape_rt_mdvm "${pput[@]}"
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
want v ustart "raid5 4 -> raid6 5 left-symmetric started by uraid, stopped at 40%"
want v examine "... uraid examine's reshape lines are mdadm's"
want v ucat "... uraid cat reads the pattern mid-reshape"
want v kassemble "... the kernel assembles it and finishes the reshape"
want v kgeom "... raid6, left-symmetric, 5 members"
want v kcontent "... and reads the pattern"
want v kcheck "... check: mismatch_cnt 0"
want v kfinal "... superblocks without reshape bits"
want w ustart "raid10 near-2 4->5 started by uraid, stopped at 40%"
want w examine "... uraid examine's reshape lines are mdadm's"
want w ucat "... uraid cat reads the pattern mid-reshape"
want w kassemble "... the kernel assembles it and finishes the reshape"
want w kcontent "... and reads the pattern (the kernel leaves the new end as the members held it)"
want w kcheck "... check: mismatch_cnt 0"
want w kfinal "... superblocks without reshape bits"
if [ ${#pput[@]} -gt 0 ]; then
	want p examine "0.90 raid5 4->5 grown in place by uraid with a backup file, cut in its critical section: uraid examine's reshape lines are mdadm's"
	want p krestore "... mdadm --assemble --backup-file restores the critical section from uraid's file"
	want p kassemble "... the kernel finishes the reshape"
	want p kcontent "... and reads the pattern, zeros after it"
	want p kcheck "... check: mismatch_cnt 0"
	want p kfinal "... superblocks without reshape bits"
fi
# e-h: level changes and a degraded grow; m, y, yo: raid10 (examine for
# h and the raid10 ones, whose reshape lines mdadm prints)
for c in "e:raid6 5 -> raid5 4 (the move to left-symmetric-6)" "f:raid4 4 -> raid5 left-symmetric" \
	"g:raid0 3 -> raid5 4 (the parity slot filled)" \
	"z:raid5 4 -> raid0 (the restripe to parity-last; the kernel stays raid5 parity-last)" \
	"h:degraded raid5 4 -> 5 with two spares (one fills the empty slot)" \
	"m:raid10 near-2 5->4 (the array size cut first)" "y:raid10 near-2 chunk 64K->32K" \
	"yo:raid10 near-2 -> offset-2"; do
	n=${c%%:*}
	want $n ustart "${c#*:} started by uraid, stopped at 40%"
	case $n in h | m | y | yo) want $n examine "... uraid examine's reshape lines are mdadm's" ;; esac
	want $n ucat "... uraid cat reads the pattern mid-reshape"
	want $n kassemble "... the kernel assembles it and finishes the reshape"
	want $n kgeom "... the kernel's geometry at the end"
	want $n kcontent "... and reads the pattern"
	want $n kcheck "... check: mismatch_cnt 0"
	want $n kfinal "... superblocks without reshape bits"
done
want zf ustart "raid5 4 -> raid0 finished by uraid (restriped to parity-last, the parity member failed out)"
want zf ucat "... uraid cat of the three data members reads the pattern"
want zf kassemble "... the kernel assembles the three as the raid0"
want zf kgeom "... raid0 of 3"
want zf kcontent "... and reads the pattern"
want zf kfinal "... superblocks without reshape bits"
rs_done
