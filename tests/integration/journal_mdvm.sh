#!/usr/bin/env bash
# md's write journal against the real kernel (shared/mdvm), one boot:
#  (a) mdadm --create --write-journal + a pattern written in the VM; on the
#      host the members' last logged row is undone (zeroed) after the stop, so
#      only a replay of the kernel's log restores it: uraid assembles, reads
#      the pattern, check 0 (the members without the log show the damage:
#      the test has teeth; a read-only cat replays the log in memory and
#      reads the pattern with no member changed); uraid then writes through it,
#      and with the member holding an undone data page failed, that page
#      rebuilt from the replayed parity reads back;
#  (b) an array uraid created and wrote through its journal (write-through
#      and write-back, test_journal export_for_kernel): the kernel
#      assembles it with the expected md5 and mismatch_cnt 0;
#  (c) uraid's own log with writes the members never got (same export):
#      the kernel replays it at assembly (expected md5, mismatch_cnt 0).
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
bin=$TOP/build/asan/tests/test_journal
[ -x "$bin" ] || { fail "$bin missing (make tests-build)"; t_done; }
export URAID_RUN_DIR=$T_TMP/run
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP
mkdir -p "$d/u" "$d/c"
URAID_JOURNAL_EXPORT=$d "$bin" export_for_kernel >"$d/export.log" 2>&1
check "uraid exported its journaled arrays" test -f "$d/u/expected" -a -f "$d/c/expected"
for i in 0 1 2; do truncate -s 16M "$d/k$i"; done
truncate -s 8M "$d/kj"
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(8).randbytes(1<<20))' >"$d/pat"
u_sectors=$(($(stat -c %s "$d/u/expected") / 512))
c_sectors=$(($(stat -c %s "$d/c/expected") / 512))
"$URAID" cat -o "$d/u.ro" "$d/u/m0" "$d/u/m1" "$d/u/m2" 2>/dev/null
check "(c) the exported members alone lack the logged writes (teeth)" \
	sh -c "! cmp -s '$d/u.ro' '$d/u/expected'"
sum_u=$(cat "$d/u/j" "$d/u/m0" "$d/u/m1" "$d/u/m2" | sha256sum)
"$URAID" cat -o "$d/u.rj" "$d/u/j" "$d/u/m0" "$d/u/m1" "$d/u/m2" 2>/dev/null
check "(c) read-only cat replays uraid's log in memory: the logged writes read back" \
	cmp -s "$d/u.rj" "$d/u/expected"
check "(c) ... and leaves every member (the journal too) as it was" \
	[ "$(cat "$d/u/j" "$d/u/m0" "$d/u/m1" "$d/u/m2" | sha256sum)" = "$sum_u" ]
disks=(--disk kj="$d/kj" --disk k0="$d/k0" --disk k1="$d/k1" --disk k2="$d/k2" --disk pat="$d/pat"
	--disk uj="$d/u/j" --disk u0="$d/u/m0" --disk u1="$d/u/m1" --disk u2="$d/u/m2"
	--disk cj="$d/c/j" --disk c0="$d/c/m0" --disk c1="$d/c/m1" --disk c2="$d/c/m2")
{ echo "PAT_BLOCKS=256 U_SECTORS=$u_sectors C_SECTORS=$c_sectors"
  cat "$TOP/tests/integration/journal_mdvm.job"; } >"$d/job.sh"
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 "${disks[@]}" --script "$d/job.sh" \
	>"$d/vm.log" 2>&1
rc=$?
check "VM: mdadm --write-journal array made, uraid's arrays assembled (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || grep -E 'mdadm:|md/|md[01]|!!!' "$d/vm.log" | head -30
want_u=$(md5sum <"$d/u/expected" | cut -d' ' -f1)
got_u=$(sed -n 's/^MD5_u=\([0-9a-f]*\).*/\1/p' "$d/vm.log" | head -1)
check "(c) kernel replayed uraid's journal: content as written ($got_u)" [ "$got_u" = "$want_u" ]
check "(c) kernel check after the replay: mismatch_cnt=0" grep -q '^MISMATCH_u=0$' "$d/vm.log"
want_c=$(md5sum <"$d/c/expected" | cut -d' ' -f1)
got_c=$(sed -n 's/^MD5_c=\([0-9a-f]*\).*/\1/p' "$d/vm.log" | head -1)
check "(b) kernel reads what uraid wrote through its journal ($got_c)" [ "$got_c" = "$want_c" ]
check "(b) kernel check: mismatch_cnt=0" grep -q '^MISMATCH_c=0$' "$d/vm.log"
grep -i 'recovering\|journal' "$d/vm.log" | head -3 | sed 's/^/# /'
want_k=$(md5sum <"$d/pat" | cut -d' ' -f1)
got_k=$(sed -n 's/^KMD5=\([0-9a-f]*\).*/\1/p' "$d/vm.log" | head -1)
check "(a) kernel wrote the pattern" [ "$got_k" = "$want_k" ]

# Undo the members' part of the kernel's last logged row: only the log has it.
python3 - "$d" >"$d/undo.log" 2>&1 <<'PY'
import struct, sys
d = sys.argv[1]
j = open(d + '/kj', 'rb').read()
sb = 4096
uuid = j[sb + 16:sb + 32]
doff = struct.unpack_from('<Q', j, sb + 128)[0]
tail = struct.unpack_from('<Q', j, sb + 152)[0]
off = (doff + tail) * 512
magic, = struct.unpack_from('<I', j, off)
assert magic == 0x6433c509, 'no meta block at the tail'
msize, = struct.unpack_from('<I', j, off + 12)
o, rows = off + 32, []
while o < off + msize:
    t, fl, size, loc = struct.unpack_from('<HHIQ', j, o)
    rows.append((t, loc))
    o += 16 + 4 * (size // 8)
# raid5 left-symmetric, 3 members, 64 KiB chunks (128 sectors), 2 data each
chunk, k, n = 128, 2, 3
undone = 0
for t, loc in rows:
    if t == 0:   # data: array sector -> member
        stripe, r = divmod(loc, k * chunk)
        di, inch = divmod(r, chunk)
        pd = (n - 1) - stripe % n
        role = (pd + 1 + di) % n
        msec = stripe * chunk + inch
    elif t == 1:  # parity: member sector
        msec = loc
        role = (n - 1) - (loc // chunk) % n
    else:
        continue
    with open('%s/k%d' % (d, role), 'r+b') as f:
        f.seek((doff + msec) * 512)
        f.write(bytes(4096))
    if t == 0:
        print('data on k%d' % role)
    undone += 1
print('undone', undone, 'pages at tail', tail)
PY
check "host: undid the members' pages of the kernel's last logged row" grep -q '^undone [1-9]' "$d/undo.log"
pat_sectors=2048
"$URAID" cat -o "$d/ro.img" "$d/k0" "$d/k1" "$d/k2" 2>"$d/cat.err"
got_ro=$(head -c $((pat_sectors * 512)) "$d/ro.img" 2>/dev/null | md5sum | cut -d' ' -f1)
check "the members without the log show the undone row: the test has teeth" [ "$got_ro" != "$want_k" ]
sum_k=$(cat "$d/kj" "$d/k0" "$d/k1" "$d/k2" | sha256sum)
"$URAID" cat -o "$d/rj.img" "$d/kj" "$d/k0" "$d/k1" "$d/k2" 2>"$d/cat.err"
got_rj=$(head -c $((pat_sectors * 512)) "$d/rj.img" 2>/dev/null | md5sum | cut -d' ' -f1)
check "(a) read-only cat replays the kernel's log in memory: the pattern reads back" \
	[ "$got_rj" = "$want_k" ]
check "(a) ... and leaves the kernel's members (the journal too) as they were" \
	[ "$(cat "$d/kj" "$d/k0" "$d/k1" "$d/k2" | sha256sum)" = "$sum_k" ]
if "$URAID" assemble --name=kj "$d/kj" "$d/k0" "$d/k1" "$d/k2" 2>"$d/asm.err"; then
	ok "uraid assembles the kernel's journaled array"
else
	fail "uraid assembles the kernel's journaled array: $(cat "$d/asm.err")"
	t_done
fi
got=$("$URAID" cat kj --length $((pat_sectors * 512)) | md5sum | cut -d' ' -f1)
check "(a) uraid replayed the kernel's log: the pattern reads back" [ "$got" = "$want_k" ]
"$URAID" check kj >/dev/null 2>&1
check "(a) uraid check after the replay: mismatch_cnt 0" \
	sh -c "'$URAID' detail --verbose kj | grep -q '^mismatch_cnt : 0'"
check "detail shows the journal member" sh -c "'$URAID' detail kj | grep -q ' journal '"
check "status shows (J)" sh -c "'$URAID' status | grep -q 'kj\\[0\\](J)'"
# uraid writes through the kernel-made journal (written pieces not 4 KiB aligned).
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(9).randbytes(300*1024))' >"$d/w2"
"$URAID" write kj --offset 70656 <"$d/w2"
bytes=$("$URAID" status --json kj | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["array_bytes"])')
truncate -s "$bytes" "$d/expected"
dd if="$d/pat" of="$d/expected" conv=notrunc status=none
dd if="$d/w2" of="$d/expected" bs=512 seek=138 conv=notrunc status=none
got=$("$URAID" cat kj --length "$bytes" | md5sum | cut -d' ' -f1)
check "(a) uraid reads its own write through the kernel-made journal" [ "$got" = "$(md5sum <"$d/expected" | cut -d' ' -f1)" ]
k=$(sed -n 's/^data on \(k[0-9]\)$/\1/p' "$d/undo.log" | head -1)
check "(a) fail $k, which holds a data page of the replayed row" "$URAID" fail kj "$d/$k"
got=$("$URAID" cat kj --length "$bytes" | md5sum | cut -d' ' -f1)
check "(a) without $k: its data rebuilt from the replayed parity" [ "$got" = "$(md5sum <"$d/expected" | cut -d' ' -f1)" ]
"$URAID" stop kj
t_done
