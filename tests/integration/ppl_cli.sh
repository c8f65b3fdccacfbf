#!/usr/bin/env bash
# The partial parity log through the CLI (no VM): create
# --consistency-policy=ppl and its refusals (mdadm's words), detail and
# examine, a daemon killed after writes whose parity the members then lack
# (tests/ppl_damage.py): read-only cat without a member the writes left
# alone reads them right with no member changed, assemble recovers (no
# resync, check 0); the same members with their logs hidden read wrong;
# consistency-policy resync|ppl on a running array, "Not enough space to add
# ppl" on one made without it; a log with impossible contents refused by cat
# and assemble naming the member, nothing written.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
cd "$T_TMP" || exit 1
md5() { md5sum | cut -d' ' -f1; }
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(8).randbytes(1<<20))' >pat
check_fails "create --consistency-policy=ppl --level=6 refused" \
	"$URAID" create --level=6 --raid-devices=4 --size=16M --consistency-policy=ppl --run \
	x0 x1 x2 x3
check_fails "create --consistency-policy=ppl --bitmap=internal refused" \
	"$URAID" create --level=5 --raid-devices=3 --size=16M --consistency-policy=ppl \
	--bitmap=internal --run x0 x1 x2
check_fails "create --consistency-policy=ppl --metadata=0.90 refused" \
	"$URAID" create --level=5 --raid-devices=3 --size=16M --consistency-policy=ppl \
	--metadata=0.90 --run x0 x1 x2
"$URAID" create --level=6 --raid-devices=4 --size=16M --consistency-policy=ppl --run \
	x0 x1 x2 x3 2>err6
check "... naming the level as mdadm does" grep -q 'only supported for RAID level 5' err6
check "nothing created by the refusals" sh -c '! ls x0 2>/dev/null'
check "create --consistency-policy=ppl" "$URAID" create --level=5 --raid-devices=3 --chunk=64K \
	--size=16M --assume-clean --name=pc --consistency-policy=ppl --no-daemon m0 m1 m2
check "examine: a PPL feature bit and mdadm's 1 MiB area" \
	sh -c "'$URAID' examine m0 | grep -Eq 'Feature Map : 0x(400|800)$' && '$URAID' examine m0 | grep -q 'PPL : 2048 sectors at offset 8'"
"$URAID" assemble --name=pc m0 m1 m2 2>asm.err
pid=$(sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' asm.err | tail -1)
check "assembled (daemon pid $pid)" [ -n "$pid" ]
check "detail: Consistency Policy : ppl" \
	sh -c "'$URAID' detail pc | grep -q 'Consistency Policy : ppl'"
"$URAID" write pc --offset 0 <pat
cp pat want
for s in 1 2 3 4 5 6; do
	dd if=pat bs=4096 skip=$((s + 100)) count=1 status=none | "$URAID" write pc \
		--offset $(((s * 32 + 8) * 4096))
	dd if=pat of=want bs=4096 skip=$((s + 100)) seek=$((s * 32 + 8)) count=1 conv=notrunc \
		status=none
done
want=$(md5 <want)
kill -9 "$pid"
while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
rm -f "$URAID_RUN_DIR/pc.sock"
python3 "$TOP/tests/ppl_damage.py" m0 m1 m2 >dmg.log 2>&1
check "host: parity of the newest logged writes lost" grep -q '^damaged [1-9]' dmg.log
v=$(sed -n 's/^victim \([0-9]\) .*/\1/p' dmg.log)
keep=()
for i in 0 1 2; do [ "$i" = "$v" ] || keep+=("m$i"); done
sum=$(cat m0 m1 m2 | sha256sum)
check "read-only cat without m$v: recovered in memory, the data as written" \
	[ "$("$URAID" cat --length 1M "${keep[@]}" 2>/dev/null | md5)" = "$want" ]
check "... no member changed" [ "$(cat m0 m1 m2 | sha256sum)" = "$sum" ]
mkdir -p hid
for m in "${keep[@]}"; do
	cp "$m" hid/
	dd if=/dev/zero of="hid/$m" bs=512 seek=16 count=8 conv=notrunc status=none
done
check "the same members with their logs hidden read wrong (teeth)" \
	[ "$("$URAID" cat --length 1M hid/* 2>/dev/null | md5)" != "$want" ]
# Impossible contents behind a good checksum: refused, nothing written.
mkdir -p bad
cp m0 m1 m2 bad/
python3 - bad/m0 "$TOP/tests" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[2])
from ppl_damage import crc32c
with open(sys.argv[1], 'r+b') as f:
    at = (8 + 8) * 512
    f.seek(at); h = bytearray(f.read(4096))
    struct.pack_into('<I', h, 528, 149)   # entries_count past what a header holds
    struct.pack_into('<I', h, 532, 0)
    struct.pack_into('<I', h, 532, crc32c(h))
    f.seek(at); f.write(h)
PY
python3 "$TOP/tests/md_sb1_edit.py" bad/m0 208 '<Q' set 0 >/dev/null
sumb=$(cat bad/m0 bad/m1 bad/m2 | sha256sum)
"$URAID" cat --length 4096 bad/m0 bad/m1 bad/m2 >/dev/null 2>bad.err
check "cat refuses a log with impossible contents, naming the member" \
	sh -c "grep -q 'm0' bad.err && grep -q 'PPL' bad.err && grep -q 'entries' bad.err"
check_fails "assemble refuses it too" "$URAID" assemble --name=pb bad/m0 bad/m1 bad/m2
check "... nothing written" [ "$(cat bad/m0 bad/m1 bad/m2 | sha256sum)" = "$sumb" ]
if "$URAID" assemble --run --name=pc "${keep[@]}" 2>asm.err; then
	ok "assemble --run of the dirty degraded PPL array (no --force, as md)"
	check "... recovered: m$v's blocks read back right" \
		[ "$("$URAID" cat pc --length 1M | md5)" = "$want" ]
	check "... from the log, no resync" \
		sh -c "'$URAID' detail --verbose pc | grep -q 'ppl : recovered [1-9]'"
	"$URAID" stop pc
else
	fail "assemble of the dirty degraded PPL array: $(cat asm.err)"
fi
# Policy switches on a running array.
"$URAID" create --level=5 --raid-devices=3 --chunk=64K --size=16M --assume-clean --name=ps \
	--consistency-policy=ppl s0 s1 s2 2>/dev/null
check "consistency-policy resync" "$URAID" consistency-policy ps resync
check "... examine: no PPL feature" sh -c "'$URAID' examine s0 | grep -q 'Feature Map : 0x0'"
check "consistency-policy ppl" "$URAID" consistency-policy ps ppl
check "... detail: ppl again" sh -c "'$URAID' detail ps | grep -q 'Consistency Policy : ppl'"
"$URAID" stop ps
"$URAID" create --level=5 --raid-devices=3 --chunk=64K --size=16M --assume-clean --name=pr \
	r0 r1 r2 2>/dev/null
"$URAID" consistency-policy pr ppl 2>pr.err
check "made without PPL, small members: 'Not enough space to add ppl', as mdadm" \
	grep -q 'Not enough space to add ppl' pr.err
"$URAID" stop pr
check "... and the array stays without PPL" \
	sh -c "'$URAID' examine r0 | grep -q 'Feature Map : 0x0'"
check_fails "consistency-policy with a bad word refused" "$URAID" consistency-policy pr journal
t_done
