#!/usr/bin/env bash
# The stripe cache through the CLI and the daemon: md's default 256 on a
# raid5, `uraid stripe-cache NAME N` changes it (status and detail --verbose, --json
# show it), small writes through the cache read back and survive stop +
# assemble, the kernel-style check finds nothing, member reads are avoided
# (the daemon's own counters, against the same writes with the cache off),
# bad input is refused. Also the control protocol from the shell: the
# status body is the versioned text format.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
D=$T_TMP/d
mkdir -p "$D"
cleanup() { for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done; rm -rf "$T_TMP"; }
trap cleanup EXIT

check "create raid5 (assume-clean)" "$URAID" create --level=5 --raid-devices=4 --chunk=64K \
	--size=16M --assume-clean --name=sc "$D"/m0 "$D"/m1 "$D"/m2 "$D"/m3
check "status --verbose shows md's default 256" grep -q 'stripe_cache_size 256' <("$URAID" status --verbose sc)
check "... plain status does not (not in /proc/mdstat)" bash -c "! '$URAID' status sc | grep -q stripe_cache_size"
check "detail --verbose shows it" grep -q '^stripe_cache_size : 256' <("$URAID" detail --verbose sc)
check "stripe-cache 1024" "$URAID" stripe-cache sc 1024
check "--json shows 1024" grep -q '"stripe_cache_size":1024' <("$URAID" status --json sc)

# 4 KiB writes in order, one request each on one control connection
# (what a client such as a file system does), then a flush: the cache merges
# them into full stripes. (`uraid write` itself flushes when it ends.)
head -c 1M /dev/urandom >"$T_TMP/data"
writes() {
	python3 - "$URAID_RUN_DIR/$1.sock" "$T_TMP/data" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rb")
data = open(sys.argv[2], "rb").read()
def req(line, payload=b""):
    s.sendall(line.encode() + b"\n" + payload)
    hdr = f.readline().split()
    assert hdr[0] == b"OK", hdr
    f.read(int(hdr[1]))
for off in range(0, len(data), 4096):
    req("write %d 4096" % off, data[off:off + 4096])
req("flush")
EOF
}
reads_of() { "$URAID" stripe-cache "$1" | sed -n 's/^member requests: \([0-9]*\) reads.*/\1/p'; }
r0=$(reads_of sc)
check "256 small writes with the cache" writes sc
r1=$(reads_of sc)
check "cat equals the data" cmp <("$URAID" cat sc --length 1M) "$T_TMP/data"
echo "# member reads with the cache: $((r1 - r0))"
check "check: 0 mismatches" grep -q '^mismatch_cnt 0$' <("$URAID" check sc)
check "stop" "$URAID" stop sc
check "assemble again" sh -c '"$@" 2>"$0"' "$T_TMP/asm.err" \
	"$URAID" assemble --name sc "$D"/m0 "$D"/m1 "$D"/m2 "$D"/m3
cat "$T_TMP/asm.err"
dpid=$(sed -n 's/.*(daemon pid \([0-9]*\),.*/\1/p' "$T_TMP/asm.err") # the daemon it started
check "data survived stop (written out)" cmp <("$URAID" cat sc --length 1M) "$T_TMP/data"

# The same writes with the cache off read members (read-modify-write).
check "stripe-cache 0" "$URAID" stripe-cache sc 0
r2=$(reads_of sc)
check "256 small writes without the cache" writes sc
r3=$(reads_of sc)
echo "# member reads without the cache: $((r3 - r2))"
check "the cache avoided member reads" [ $((r1 - r0)) -lt $((r3 - r2)) ]

# `uraid write` is durable when it returns: the daemon killed right after
# it (no stop, no flush) loses nothing.
check "stripe-cache 256 again" "$URAID" stripe-cache sc 256
head -c 200K /dev/urandom >"$T_TMP/d2"
check "uraid write 200K at 64K" "$URAID" write sc --offset 65536 <"$T_TMP/d2"
pid=$dpid
check "daemon found (pid $pid)" sh -c '[ -n "$1" ] && kill -0 "$1"' sh "$pid"
[ -n "$pid" ] && kill -9 "$pid"
sleep 0.3
check "assemble after the kill" "$URAID" assemble --name sc "$D"/m0 "$D"/m1 "$D"/m2 "$D"/m3
check "the written data survived the kill" cmp <("$URAID" cat sc --offset 65536 --length 200K) "$T_TMP/d2"

check_fails "stripe-cache: not a number" "$URAID" stripe-cache sc lots
check_fails "stripe-cache: above the maximum" "$URAID" stripe-cache sc 40000
check_fails "stripe-cache: no such array" "$URAID" stripe-cache nosuch 16
check "create raid1" "$URAID" create --level=1 --raid-devices=2 --size=8M --assume-clean \
	--name=mir "$D"/r0 "$D"/r1
"$URAID" stripe-cache mir 16 2>"$T_TMP/err"
check "stripe-cache on raid1 refused, saying why" grep -q 'raid4/5/6' "$T_TMP/err"

# The wire format seen from outside: versioned text, an "end" line.
if command -v python3 >/dev/null; then
	python3 - "$URAID_RUN_DIR/sc.sock" >"$T_TMP/body" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"status\n")
f = s.makefile("rb"); hdr = f.readline().split(); assert hdr[0] == b"OK"
sys.stdout.write(f.read(int(hdr[1])).decode())
EOF
	check "status body: version line" grep -qx 'uraid-status 1' <(head -1 "$T_TMP/body")
	check "status body: level=5, end" grep -qx 'level=5' "$T_TMP/body"
	check "status body: ends with end" grep -qx 'end' <(tail -1 "$T_TMP/body")
fi
# The benchmark's counts (not its timings): 4 KiB sequential writes over
# whole stripes read nothing with the cache, 2 reads per write without.
"$URAID" bench stripe-cache --dir "$T_TMP" --mib 3 --reqs 4K --caches 0,256 --json >"$T_TMP/b.json"
check "bench stripe-cache: no member reads with the cache, 2/write without" python3 -c '
import json, sys
r = {x["stripe_cache"]: x for x in json.load(open(sys.argv[1]))}
assert r[256]["member_reads"] == 0 and r[0]["member_reads"] == 2 * 3 * 256, r
' "$T_TMP/b.json"
check "stop both" "$URAID" stop sc
"$URAID" stop mir
t_done
