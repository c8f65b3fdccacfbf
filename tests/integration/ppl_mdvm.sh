#!/usr/bin/env bash
# md's partial parity log against the real kernel (shared/mdvm), two boots.
# The crash the log is for: after the writes, the parity writes of what the
# newest unit of each member's log covers are lost (tests/ppl_damage.py
# reads the logs on its own and zeroes those parity rows), the data writes
# reached the members; a member the writes left alone (the victim) is then
# missing, and its blocks are rebuilt from that parity: right only after a
# recovery from the log.
#  (a) the kernel's log: mdadm --create --consistency-policy=ppl, a pattern
#      and small writes in the VM, powered off with the array active
#      (dirty); uraid cat (read-only: recovered in memory, no member byte
#      changed) reads what the kernel reads from copies of the same images
#      after its own recovery (second boot), with and without the victim;
#      uraid assembles (read-write) a copy and recovers it; the same
#      members with their logs hidden read wrong (teeth); a second array
#      cut while three writers run: uraid cat (whole and without a member)
#      reads exactly what the kernel reads from copies after its recovery;
#  (b) uraid's log: uraid create --consistency-policy=ppl, the same writes,
#      the daemon killed (-9); the kernel recovers it: degraded, the data
#      as written; all members, check mismatch_cnt 0.
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
export URAID_RUN_DIR=$T_TMP/run
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP
cd "$d" || exit 1
md5() { md5sum | cut -d' ' -f1; }
PAT_BLOCKS=256
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(8).randbytes(1<<20))' >pat
# What both arrays hold: the pattern, then 4 KiB at chunk 0 + 32 KiB of
# stripes 1-6 (2 data chunks of 64 KiB: 32 blocks a stripe).
cp pat want
for s in 1 2 3 4 5 6; do
	dd if=pat of=want bs=4096 skip=$((s + 100)) seek=$((s * 32 + 8)) count=1 conv=notrunc \
		status=none
done
want=$(md5 <want)

# ---- first boot: the kernel's crashed array ----
for i in 0 1 2; do truncate -s 16M k$i m$i; done
{ echo "PAT_BLOCKS=$PAT_BLOCKS"; cat "$TOP/tests/integration/ppl_mdvm.job"; } >job1.sh
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 --disk k0=k0 --disk k1=k1 \
	--disk k2=k2 --disk m0=m0 --disk m1=m1 --disk m2=m2 --disk pat=pat --script job1.sh \
	>vm1.log 2>&1
rc=$?
check "VM 1: mdadm --consistency-policy=ppl array made and written (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || grep -E 'mdadm:|md/|md0|!!!' vm1.log | head -30
check "VM 1: md's policy is ppl" grep -q '^POLICY=ppl' vm1.log
check "VM 1: the kernel read what was written" grep -q "^KMD5=$want" vm1.log
check "VM 1: powered off with the array active (dirty)" grep -q '^STATE=active' vm1.log
check "the kernel's superblocks say dirty (resync_offset 0)" python3 - k0 <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read(8192)[4096:]
sys.exit(0 if struct.unpack_from('<Q', b, 208)[0] == 0 else 1)
PY
python3 "$TOP/tests/ppl_damage.py" k0 k1 k2 >dmg_a.log 2>&1
check "host: parity of the kernel's newest logged writes lost ($(grep -c '^damaged stripe' dmg_a.log) stripes)" \
	grep -q '^damaged [1-9]' dmg_a.log
va=$(sed -n 's/^victim \([0-9]\) .*/\1/p' dmg_a.log)
keep_a=()
for i in 0 1 2; do [ "$i" = "$va" ] || keep_a+=("k$i"); done
check "uraid cat, all members: what was written" \
	[ "$("$URAID" cat --length 1M k0 k1 k2 2>/dev/null | md5)" = "$want" ]
sum=$(cat k0 k1 k2 | sha256sum)
got_a=$("$URAID" cat --length 1M "${keep_a[@]}" 2>cat_a.err | md5)
check "uraid cat without k$va (read-only: the kernel's log recovered in memory)" [ "$got_a" = "$want" ]
check "... and no member byte changed" [ "$(cat k0 k1 k2 | sha256sum)" = "$sum" ]
# Teeth: the same members with their logs hidden (each area's first header
# zeroed) in directory $1.
hide_logs() {
	local dir=$1 m
	shift
	mkdir -p "$dir"
	for m in "$@"; do
		cp "$m" "$dir/"
		python3 - "$dir/$m" <<'PY'
import struct, sys
with open(sys.argv[1], 'r+b') as f:
    f.seek(4096); sb = f.read(1024)
    w, = struct.unpack_from('<I', sb, 96); so, = struct.unpack_from('<Q', sb, 144)
    off = struct.unpack('<h', struct.pack('<H', w & 0xffff))[0]
    f.seek((so + off) * 512); f.write(bytes(4096))
PY
	done
}
hide_logs hid "${keep_a[@]}"
check "without the logs k$va's blocks rebuilt wrong (teeth)" \
	[ "$("$URAID" cat --length 1M hid/* 2>/dev/null | md5)" != "$want" ]
# Copies for uraid's read-write recovery and for the kernel's second boot.
for i in 0 1 2; do cp k$i uf$i; cp k$i af$i; done
j=0
for m in "${keep_a[@]}"; do cp "$m" ud$j; cp "$m" ad$j; j=$((j + 1)); done
if "$URAID" assemble --run --name=ka ud0 ud1 2>asm.err; then
	ok "uraid assembles the kernel's dirty degraded PPL array"
	check "... its recovery: k$va's blocks read back right" \
		[ "$("$URAID" cat ka --length 1M | md5)" = "$want" ]
	check "... recovered from the log, no resync" \
		sh -c "'$URAID' detail --verbose ka | grep -q 'ppl : recovered [1-9]'"
	"$URAID" stop ka
else
	fail "uraid assembles the kernel's dirty degraded PPL array: $(cat asm.err)"
fi
if "$URAID" assemble --name=kf uf0 uf1 uf2 2>asm.err; then
	"$URAID" check kf >/dev/null 2>&1
	check "uraid recovers the kernel's array with all members: check mismatch_cnt 0" \
		sh -c "'$URAID' detail --verbose kf | grep -q '^mismatch_cnt : 0'"
	check "... and reads what was written" [ "$("$URAID" cat kf --length 1M | md5)" = "$want" ]
	"$URAID" stop kf
else
	fail "uraid assembles the kernel's array: $(cat asm.err)"
fi

# The array cut mid-write: what uraid cat reads (recovering in memory),
# whole and without m2, for the kernel to match after its own recovery.
check "VM 1: the second array was cut mid-write, active" grep -q '^STATE1=active' vm1.log
sum=$(cat m0 m1 m2 | sha256sum)
mfull=$("$URAID" cat m0 m1 m2 2>catm.err | md5)
mdeg=$("$URAID" cat m0 m1 2>>catm.err | md5)
check "uraid cat of the array cut mid-write leaves its members as they were" \
	[ "$(cat m0 m1 m2 | sha256sum)" = "$sum" ]
for i in 0 1 2; do cp m$i mf$i; done
cp m0 md0
cp m1 md1
hide_logs hidm m0 m1
if [ "$("$URAID" cat hidm/m0 hidm/m1 2>/dev/null | md5)" != "$mdeg" ]; then
	echo "# cut mid-write: without the logs, m2 reads differently (the recovery mattered)"
else
	echo "# cut mid-write: without the logs, m2 reads the same (no stripe was torn this run)"
fi

# ---- uraid's crashed array ----
"$URAID" create --level=5 --raid-devices=3 --chunk=64K --size=16M --assume-clean --name=up \
	--consistency-policy=ppl --no-daemon u0 u1 u2 2>create.err
check "uraid create --consistency-policy=ppl" grep -q 'created' create.err
"$URAID" assemble --name=up u0 u1 u2 2>asm.err
pid=$(sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' asm.err | tail -1)
"$URAID" write up --offset 0 <pat
for s in 1 2 3 4 5 6; do
	dd if=pat bs=4096 skip=$((s + 100)) count=1 status=none | "$URAID" write up \
		--offset $(((s * 32 + 8) * 4096))
done
check "detail: consistency policy ppl" sh -c "'$URAID' detail up | grep -q 'Consistency Policy : ppl'"
kill -9 "$pid"
while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
rm -f "$URAID_RUN_DIR/up.sock"
check "uraid's superblocks say dirty after the kill" \
	sh -c "'$URAID' examine u0 | grep -q 'State : active'"
python3 "$TOP/tests/ppl_damage.py" u0 u1 u2 >dmg_b.log 2>&1
check "host: parity of uraid's newest logged writes lost ($(grep -c '^damaged stripe' dmg_b.log) stripes)" \
	grep -q '^damaged [1-9]' dmg_b.log
vb=$(sed -n 's/^victim \([0-9]\) .*/\1/p' dmg_b.log)
j=0
keep_b=()
for i in 0 1 2; do
	cp u$i bf$i
	if [ "$i" != "$vb" ]; then cp u$i bd$j; j=$((j + 1)); keep_b+=("u$i"); fi
done
hide_logs hidb "${keep_b[@]}"
check "without uraid's logs u$vb's blocks rebuilt wrong (teeth for the kernel's recovery)" \
	[ "$("$URAID" cat --length 1M hidb/* 2>/dev/null | md5)" != "$want" ]

# ---- second boot: the kernel recovers copies of both ----
disks=()
for n in ad0 ad1 af0 af1 af2 bd0 bd1 bf0 bf1 bf2 md0 md1 mf0 mf1 mf2; do disks+=(--disk "$n=$n"); done
{ echo "SECTORS=2048"; cat "$TOP/tests/integration/ppl_mdvm_recover.job"; } >job2.sh
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 "${disks[@]}" --script job2.sh \
	>vm2.log 2>&1
rc=$?
check "VM 2: the kernel assembled both crashed arrays (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || grep -E 'mdadm:|md/|md0|!!!' vm2.log | head -30
grep -i 'ppl\|dirty' vm2.log | head -4 | sed 's/^/# /'
check "(a) the kernel without k$va after its recovery reads what uraid cat read" \
	grep -q "^DMD5_a=$got_a" vm2.log
check "(a) ... which is what was written" grep -q "^DMD5_a=$want" vm2.log
check "(a) the kernel with all members: what was written" grep -q "^FMD5_a=$want" vm2.log
check "(a) kernel check: mismatch_cnt 0" grep -q '^MISMATCH_a=0$' vm2.log
check "(b) the kernel recovers uraid's log: without u$vb, what was written" \
	grep -q "^DMD5_b=$want" vm2.log
check "(b) the kernel with all members: what was written" grep -q "^FMD5_b=$want" vm2.log
check "(b) kernel check: mismatch_cnt 0" grep -q '^MISMATCH_b=0$' vm2.log
check "(b) no resync after the kernel's recovery of uraid's log" grep -q '^FSTATE_b=clean idle' vm2.log
check "cut mid-write, whole: the kernel after its recovery reads what uraid cat read" \
	grep -q "^MFULL=$mfull" vm2.log
check "cut mid-write, without m2: the kernel after its recovery reads what uraid cat read" \
	grep -q "^MDEG=$mdeg" vm2.log
check "cut mid-write: kernel check after its recovery, mismatch_cnt 0" \
	grep -q '^MISMATCH_m=0$' vm2.log
t_done
