#!/usr/bin/env bash
# The write journal through the CLI (no VM): create --write-journal, status
# (J) / detail, data through write-through and write-back, the journal
# missing (writes refused with a message naming it), add-journal, restart,
# and create's refusals (raid1, 0.90, with a bitmap). Then a crash (the daemon
# killed) after which the members hold the data of the logged writes but not
# their parity: the replay at assembly must write the logged parity, so
# check finds 0 mismatches, a data member failed afterwards or missing at the
# replay reads back what was written (a 5-member raid5: small writes are
# read-modify-write there).
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP
cd "$d" || exit 1
truncate -s 8M j.img j2.img
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(3).randbytes(512*1024))' >p1
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(4).randbytes(100*1024))' >p2
check "create --write-journal" "$URAID" create --level=5 --raid-devices=3 --chunk=64K --size=16M \
	--assume-clean --name=jc --write-journal j.img m0.img m1.img m2.img
# mdadm numbers devices in command-line order: the journal, named first, is 0
check "status shows the journal (J) as device 0" sh -c "'$URAID' status | grep -q 'j.img\\[0\\](J)'"
check "detail: journal member, write-through" \
	sh -c "'$URAID' detail jc | grep -q '^Consistency Policy : journal$' &&
	       '$URAID' detail --verbose jc | grep -q '^journal : write-through$'"
"$URAID" write jc --offset 0 <p1
check "journal-mode write-back" "$URAID" journal-mode jc write-back
"$URAID" write jc --offset 5120 <p2
check "detail: write-back" sh -c "'$URAID' detail --verbose jc | grep -q '^journal : write-back$'"
bytes=$("$URAID" status --json jc | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["array_bytes"])')
truncate -s "$bytes" want
dd if=p1 of=want conv=notrunc status=none
dd if=p2 of=want bs=512 seek=10 conv=notrunc status=none
check "reads see write-back data" sh -c "'$URAID' cat jc | cmp -s - want"
"$URAID" stop jc
check "examine shows the journal role" sh -c "'$URAID' examine j.img | grep -q 'Role : Journal'"
"$URAID" assemble --name=jc m0.img m1.img m2.img 2>/dev/null
check_fails "without its journal the array refuses writes" sh -c "'$URAID' write jc --offset 0 <p2 2>err"
check "... with a message naming the journal" grep -q 'journal is missing or failed' err
check "... reads still work" sh -c "'$URAID' cat jc | cmp -s - want"
check "add-journal" "$URAID" add-journal jc j2.img
check "writes work again" sh -c "'$URAID' write jc --offset 0 <p2"
dd if=p2 of=want conv=notrunc status=none
"$URAID" stop jc
check "assemble picks up the new journal" "$URAID" assemble --name=jc m0.img m1.img m2.img j2.img
check "data after restart" sh -c "'$URAID' cat jc | cmp -s - want"
"$URAID" check jc >/dev/null 2>&1
check "check: mismatch_cnt 0" sh -c "'$URAID' detail --verbose jc | grep -q '^mismatch_cnt : 0'"
# A spare added to a journaled array must not take the journal's device
# number (its superblock would then name it the journal).
truncate -s 8M jd.img
truncate -s 16M sp.img
check "create a journaled raid5 for a spare" "$URAID" create --level=5 --raid-devices=3 \
	--chunk=64K --size=16M --assume-clean --name=jd --write-journal jd.img d0.img d1.img d2.img
check "add a spare to the journaled array" "$URAID" add jd sp.img
"$URAID" stop jd
check "the spare is a spare, the journal still the journal" sh -c \
	"'$URAID' examine sp.img | grep -q 'Device Role : spare' &&
	 '$URAID' examine jd.img | grep -q 'Device Role : Journal'"
check "assemble with the journal and the spare" "$URAID" assemble --name=jd d0.img d1.img \
	d2.img jd.img sp.img
check "status: journal and spare" sh -c "'$URAID' status jd | grep 'jd.img\\[[0-9]*\\](J)' |
	grep -q 'sp.img\\[[0-9]*\\](S)'"
"$URAID" stop jd
check_fails "create refuses --write-journal for raid1" "$URAID" create --level=1 \
	--raid-devices=2 --size=16M --no-daemon --write-journal x.img a0.img a1.img
check_fails "create refuses --write-journal with 0.90" "$URAID" create --level=5 \
	--raid-devices=3 --metadata=0.90 --size=16M --no-daemon --write-journal x.img b0 b1 b2
check_fails "create refuses --write-journal with a bitmap" "$URAID" create --level=5 \
	--raid-devices=3 --bitmap=internal --size=16M --no-daemon --write-journal x.img c0 c1 c2
check "refusals wrote nothing" sh -c "! ls x.img a0.img b0 c0 2>/dev/null | grep -q ."

"$URAID" create --level=5 --raid-devices=5 --chunk=64K --size=8M --assume-clean --name=jr \
	--write-journal jr.img r0.img r1.img r2.img r3.img r4.img 2>/dev/null
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(5).randbytes(1<<20))' >w1
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(6).randbytes(8192))' >w2
"$URAID" write jr --offset 0 <w1
"$URAID" stop jr # the log is reclaimed: it holds none of w1
"$URAID" assemble --name=jr jr.img r0.img r1.img r2.img r3.img r4.img 2>asm.err
pid=$(sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' asm.err | tail -1)
check "a journaled 5-member raid5 with 1 MiB written, restarted (daemon pid $pid)" [ -n "$pid" ]
# parity_chunks save|restore: P of stripes 0-3 (raid5 left-symmetric, 64 KiB
# chunks), read from or written back to the member images.
parity_chunks() {
	python3 - "$1" <<'PY'
import struct, sys
n, chunk = 5, 64 * 1024
for s in range(4):
    role = (n - 1) - s % n
    with open('r%d.img' % role, 'r+b') as f:
        f.seek(4096 + 128)
        doff = struct.unpack('<Q', f.read(8))[0]
        f.seek(doff * 512 + s * chunk)
        if sys.argv[1] == 'save':
            open('p%d.save' % s, 'wb').write(f.read(chunk))
        else:
            f.write(open('p%d.save' % s, 'rb').read())
            print('stripe', s, 'parity on r%d put back' % role)
PY
}
parity_chunks save
# 8 KiB into stripes 0-3; in stripes 1-3 r0 holds data these writes leave alone.
for off in 4096 266240 528384 794624; do "$URAID" write jr --offset $off <w2; done
cp w1 want_r
for off in 4096 266240 528384 794624; do
	dd if=w2 of=want_r bs=4096 seek=$((off / 4096)) conv=notrunc status=none
done
kill -9 "$pid"
while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
rm -f "$URAID_RUN_DIR/jr.sock"
# The crash: the members got the data of the logged writes, not their parity.
parity_chunks restore >undo.log
check "host: the written stripes' parity put back as before the writes" grep -q '^stripe 3 ' undo.log
want_md5=$(md5sum <want_r | cut -d' ' -f1)
check "data on the members without the journal (read-only cat)" \
	[ "$("$URAID" cat --length 1M r0.img r1.img r2.img r3.img r4.img 2>/dev/null | md5sum | cut -d' ' -f1)" = "$want_md5" ]
check "without the journal r0's data rebuilt from parity is wrong (teeth)" \
	[ "$("$URAID" cat --length 1M r1.img r2.img r3.img r4.img 2>/dev/null | md5sum | cut -d' ' -f1)" != "$want_md5" ]
before=$(cat jr.img r1.img r2.img r3.img r4.img | sha256sum)
check "read-only cat without r0 replays the journal in memory: r0's data right" \
	[ "$("$URAID" cat --length 1M jr.img r1.img r2.img r3.img r4.img | md5sum | cut -d' ' -f1)" = "$want_md5" ]
check "... and no member changed" [ "$(cat jr.img r1.img r2.img r3.img r4.img | sha256sum)" = "$before" ]
mkdir -p deg
cp jr.img r1.img r2.img r3.img r4.img deg/
check "assemble after the crash: the journal is replayed" \
	"$URAID" assemble --name=jr jr.img r0.img r1.img r2.img r3.img r4.img
check "replayed: the writes read back" \
	[ "$("$URAID" cat jr --length 1M | md5sum | cut -d' ' -f1)" = "$want_md5" ]
check "replayed: check finds 0 mismatches" grep -qx "mismatch_cnt 0" <("$URAID" check jr)
check "fail the data member r0" "$URAID" fail jr "$d"/r0.img
check "replayed, r0 failed: its data rebuilt from the replayed parity" \
	[ "$("$URAID" cat jr --length 1M | md5sum | cut -d' ' -f1)" = "$want_md5" ]
"$URAID" stop jr
check "assemble after the crash without r0: replayed degraded" \
	"$URAID" assemble --run --name=jr deg/jr.img deg/r1.img deg/r2.img deg/r3.img deg/r4.img
check "replayed without r0: its data rebuilt from the replayed parity" \
	[ "$("$URAID" cat jr --length 1M | md5sum | cut -d' ' -f1)" = "$want_md5" ]
"$URAID" stop jr
t_done
