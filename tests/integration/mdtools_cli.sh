#!/usr/bin/env bash
# md's small verbs on the host (no VM), each with good and bad input:
# zero-superblock (the bytes it zeroes against a model of mdadm's Kill: the
# block md writes of each superblock found, nothing else), readonly /
# readwrite / readonly --auto (writes refused, members untouched, status
# lines as /proc/mdstat prints them), wait, action (frozen holds a resync,
# resync=PENDING), sync-speed, add-spare (never a re-add) and failing the
# journal, and an array of 70 members listed whole by status and detail.
# Bad input: a message, non-zero, nothing written (member checksums).
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
cd "$T_TMP" || exit 1
sums() { md5sum "$@" | awk '{print $1}' | tr '\n' ' '; }
# zero_model IN OUT OFFSET LEN: IN with LEN bytes at OFFSET zeroed
zero_model() {
	cp "$1" "$2"
	dd if=/dev/zero of="$2" bs=1 seek="$3" count="$4" conv=notrunc status=none
}

# ---- zero-superblock ----
truncate -s 8M z0 z1
"$URAID" create --level=1 --raid-devices=2 --assume-clean --name=z --no-daemon z0 z1 2>/dev/null
# bytes past the superblock in its 4 KiB block, which mdadm leaves alone
printf 'keep-me' | dd of=z0 bs=1 seek=$((4096 + 3000)) conv=notrunc status=none
zero_model z0 z0.want 4096 512 # 1.2: 512 bytes 4 KiB in
check "zero-superblock: 1.2 member" "$URAID" zero-superblock z0
check "... exactly the superblock's 512 bytes zeroed" cmp -s z0 z0.want
check "... examine finds no superblock" check_fails_q "$URAID" examine z0
before=$(sums z0)
check_fails "zero-superblock: no superblock is an error" sh -c "'$URAID' zero-superblock z0 2>err"
check "... naming the device as mdadm does" grep -q 'Unrecognised md component device - z0' err
check "... nothing written" test "$(sums z0)" = "$before"
check "zero-superblock --force: no superblock only warns" "$URAID" zero-superblock --force z0
check_fails "zero-superblock: a missing file" sh -c "'$URAID' zero-superblock nosuch 2>err"
check "... named" grep -q 'nosuch' err
# A member re-used: a 0.90 superblock at the end and a 1.2 one at the start.
truncate -s 8M v0 v1
"$URAID" create --level=1 --raid-devices=2 --metadata=0.90 --assume-clean --name=v --no-daemon \
	v0 v1 2>/dev/null
"$URAID" create --level=1 --raid-devices=2 --metadata=1.2 --assume-clean --name=v --no-daemon \
	--force v0 v1 2>/dev/null
sz=$(stat -c %s v0)
zero_model v0 v0.tmp 4096 512
zero_model v0.tmp v0.want $(((sz & ~65535) - 65536)) 4096 # 0.90: its 4 KiB block
if cmp -s v0 v0.want; then fail "test setup: v0 holds both superblocks"; else ok "test setup: v0 holds both superblocks"; fi
check "zero-superblock: 0.90 and 1.2 on one member" "$URAID" zero-superblock v0
check "... both blocks zeroed, nothing else" cmp -s v0 v0.want
# 1.0 (at the end) and 1.1 (at the start)
for md in 1.0 1.1; do
	truncate -s 8M w0 w1
	"$URAID" create --level=1 --raid-devices=2 --metadata=$md --assume-clean --name=w \
		--no-daemon --force w0 w1 2>/dev/null
	if [ $md = 1.0 ]; then off=$(((sz / 512 - 16) / 8 * 8 * 512)); else off=0; fi
	zero_model w0 w0.want $off 512
	check "zero-superblock: $md" sh -c "'$URAID' zero-superblock w0 && cmp -s w0 w0.want"
	rm -f w0 w1
done
# A corrupt superblock (checksum) is refused, --force zeroes it.
truncate -s 8M c0 c1
"$URAID" create --level=1 --raid-devices=2 --assume-clean --name=c --no-daemon c0 c1 2>/dev/null
printf '\377' | dd of=c0 bs=1 seek=$((4096 + 32)) conv=notrunc status=none # set_name
zero_model c0 c0.want 4096 512
before=$(sums c0)
check_fails "zero-superblock: a corrupt superblock is refused" sh -c "'$URAID' zero-superblock c0 2>err"
check "... saying why and pointing at --force" grep -q 'force' err
check "... nothing written" test "$(sums c0)" = "$before"
check "zero-superblock --force zeroes it anyway" sh -c "'$URAID' zero-superblock --force c0 2>err &&
	grep -q 'zeroed anyway' err && cmp -s c0 c0.want"

# ---- a running raid1: readonly, readwrite, read-auto, wait, action, sync-speed ----
truncate -s 24M a0 a1 a2
check "create raid1 with a bitmap" env URAID_SYNC_SPEED_MAX=1000 "$URAID" create --level=1 --raid-devices=2 --bitmap=internal \
	--name=r a0 a1
"$URAID" sync-speed --max=1000 r
check "sync-speed shows the limits" sh -c "'$URAID' sync-speed r | tr '\n' ' ' |
	grep -q '^sync_speed_min 1000 sync_speed_max 1000 $'"
check_fails "sync-speed: bad value" sh -c "'$URAID' sync-speed --max=fast r 2>err"
check "... named" grep -q "bad --max 'fast'" err
check_fails "sync-speed: min above max" "$URAID" sync-speed --min=5000 --max=10 r
check_fails "sync-speed: unknown array" sh -c "'$URAID' sync-speed --max=1 nosuch 2>err"
check "... named" grep -q "'nosuch' is not running" err
check "status: the resync runs" sh -c "'$URAID' status r | grep -q 'resync = '"
check "action frozen" "$URAID" action r frozen
sleep 0.3
check "status: resync=PENDING, as /proc/mdstat" sh -c "'$URAID' status r | sed -n 4p |
	grep -qx '      	resync=PENDING'"
check "detail: resyncing (PENDING), as mdadm" sh -c "'$URAID' detail r | grep -q 'State : .*, resyncing (PENDING) $'"
p1=$("$URAID" status --json r | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["sync_done"])' 2>/dev/null)
sleep 0.5
p2=$("$URAID" status --json r | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["sync_done"])' 2>/dev/null)
check "frozen: the resync does not move" test "$p1" = "$p2"
check_fails "action: unknown word" sh -c "'$URAID' action r sleep 2>err"
check "... usage names the words" grep -q 'idle|frozen|check|repair' err
check_fails "action: unknown array" "$URAID" action nosuch idle
check "action idle lifts frozen" "$URAID" action r idle
check "status: the resync runs again" sh -c "'$URAID' status r | grep -q 'resync = '"
"$URAID" sync-speed --max=20000 r # about a second to go
check "wait: 0 after the resync" "$URAID" wait r
check "... status has no progress line" sh -c "! '$URAID' status r | grep -q 'resync'"
check_fails "wait: nothing to wait for is 1" "$URAID" wait r
"$URAID" wait nosuch 2>err
check "wait: unknown array is 2, named" sh -c "[ $? -eq 2 ] && grep -q nosuch err"
printf 'data1' >d1
"$URAID" write r <d1
check "readonly" "$URAID" readonly r
check "status: (read-only)" sh -c "'$URAID' status r | grep -q '^r : active (read-only) raid1 '"
before=$(sums a0 a1)
check_fails "readonly: writes refused" sh -c "'$URAID' write r <d1 2>err"
check "... Read-only file system" grep -q 'Read-only file system' err
check_fails "readonly: add refused" "$URAID" add r a2
check_fails "zero-superblock refuses a member of the running array" sh -c \
	"'$URAID' zero-superblock a0 2>err"
check "... saying so" grep -q 'member of a running array' err
check "... members unchanged" test "$(sums a0 a1)" = "$before"
check "readonly: reads work" sh -c "'$URAID' cat r | head -c 5 | cmp -s - d1"
check_fails "readonly: unknown array" sh -c "'$URAID' readonly nosuch 2>err"
check "... named" grep -q "'nosuch' is not running" err
check_fails "readonly: extra argument" "$URAID" readonly r r
check "readwrite" "$URAID" readwrite r
check "readwrite: writes work" sh -c "'$URAID' write r <d1"
check_fails "readwrite: unknown array" "$URAID" readwrite nosuch
check "readonly --auto" "$URAID" readonly --auto r
check "status: (auto-read-only)" sh -c "'$URAID' status r | grep -q '^r : active (auto-read-only) raid1 '"
check "read-auto: a write makes it read-write" sh -c "'$URAID' write r <d1 &&
	'$URAID' status r | grep -q '^r : active raid1 '"

# ---- add-spare: never a re-add ----
"$URAID" fail r a1 && "$URAID" remove r a1
check "add-spare a former member" "$URAID" add-spare r a1
"$URAID" wait r
check "... it came back as a new device (number 2), not re-added in its slot" sh -c \
	"'$URAID' status r | grep -q 'a1\\[2\\] '"
check_fails "add-spare: already a member" sh -c "'$URAID' add-spare r a1 2>err"
check "... named" grep -q 'already a member' err
check_fails "add-spare: unknown array" "$URAID" add-spare nosuch a2
check_fails "add-spare: missing file" "$URAID" add-spare r nosuch.img
"$URAID" stop r

# ---- failing the journal ----
truncate -s 8M j m0 m1 m2
"$URAID" create --level=5 --raid-devices=3 --chunk=64K --size=4M --assume-clean --name=jc \
	--write-journal j m0 m1 m2 2>/dev/null
check "fail the journal" "$URAID" fail jc j
check "status: the journal (J)(F)" sh -c "'$URAID' status jc | grep -q ' j\\[0\\](J)(F)'"
check_fails "writes refused" sh -c "'$URAID' write jc <d1 2>err"
check "... naming the journal" grep -q 'journal is missing or failed' err
check "add-journal makes it writable again" sh -c "truncate -s 8M j2 && '$URAID' add-journal jc j2 &&
	'$URAID' write jc <d1"
"$URAID" stop jc

# ---- a wide array: every member in status and detail ----
# (status once held 64 entries: members 64.. were missing from mdstat's
# line and shown as "removed" by detail)
w=()
for i in $(seq 0 69); do truncate -s 2M "w$i" && w+=("w$i"); done
"$URAID" create --level=0 --raid-devices=70 --chunk=64K --run --name=wide "${w[@]}" 2>/dev/null
check "a raid0 of 70 members: mdstat's line lists all 70, w69[69] first" \
	sh -c "'$URAID' status wide | grep '^wide : active raid0 w69\[69\] ' | grep -o '\[[0-9]*\]' | wc -l | grep -qx 70"
check "... detail: 70 active sync rows, none removed" \
	sh -c "'$URAID' detail wide >det && [ \$(grep -c 'active sync' det) -eq 70 ] && ! grep -q removed det"
check "... the real mdadm --examine of w69: Active device 69 of 70" \
	sh -c "mdadm --examine w69 >ex && grep -q 'Raid Devices : 70' ex && grep -q 'Device Role : Active device 69' ex"
"$URAID" stop wide
t_done
