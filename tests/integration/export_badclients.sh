#!/usr/bin/env bash
# Bad NBD clients against `uraid serve`: out-of-range, wrapping, unaligned,
# unadvertised and oversized requests through libnbd with its checks off (a
# tiny C client), abrupt disconnects with data in flight, and raw protocol
# abuse (4 GiB lengths, unknown commands, requests after NBD_CMD_DISC) from a
# hand-written client. The server must answer with NBD errors and stay up,
# and the array must be unharmed: same md5 before and after, uraid check
# finds 0 mismatches.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/export_common.bash"
need nbdkit nbdinfo nbdcopy cc python3

cc -O1 -Wall -o "$T_TMP/badclient" "$(dirname "$0")/export_badclient.c" -lnbd ||
	{ fail "build the bad client (libnbd-dev)"; t_done; }
mk_array bad 5 4 64K 16M || { fail "create raid5"; t_done; }
uri=$("$URAID" serve --unix "$T_TMP/bad.sock" $(members bad) 2>"$T_TMP/serve.err")
[ -n "$uri" ] || { fail "serve: $(cat "$T_TMP/serve.err")"; t_done; }
pid=$(cat "$URAID_RUN_DIR/bad.nbdkit.pid")
head -c "$(nbdinfo --size "$uri")" /dev/urandom >"$T_TMP/data"
nbdcopy "$T_TMP/data" "$uri"
before=$(nbdcopy "$uri" - | md5sum)
check "contents written" [ "$before" = "$(md5sum <"$T_TMP/data")" ]

"$T_TMP/badclient" "$uri"
check "bad libnbd client finished" [ $? -eq 0 ]

# Raw protocol: oldstyle-free fixed newstyle handshake, NBD_OPT_EXPORT_NAME,
# then simple requests. Prints ok/not ok lines itself.
python3 - "$T_TMP/bad.sock" <<'PY'
import socket, struct, sys
path = sys.argv[1]
def ok(c, what): print(("ok - " if c else "not ok - ") + what, flush=True)
def connect():
    s = socket.socket(socket.AF_UNIX); s.settimeout(20); s.connect(path)
    hdr = s.recv(18, socket.MSG_WAITALL)
    assert hdr[:16] == b"NBDMAGICIHAVEOPT", hdr
    s.sendall(struct.pack(">I", 3))  # FIXED_NEWSTYLE | NO_ZEROES
    s.sendall(struct.pack(">QII", 0x49484156454F5054, 1, 0))  # OPT_EXPORT_NAME ""
    size, flags = struct.unpack(">QH", s.recv(10, socket.MSG_WAITALL))
    return s, size
def req(s, typ, off, length, handle=7, flags=0):
    s.sendall(struct.pack(">IHHQQI", 0x25609513, flags, typ, handle, off, length))
def reply(s):
    d = s.recv(16, socket.MSG_WAITALL)
    if len(d) < 16: return None
    magic, err, handle = struct.unpack(">IIQ", d)
    return err
def alive():
    s, size = connect(); req(s, 0, 0, 512); e = reply(s); d = s.recv(512, socket.MSG_WAITALL)
    s.close(); return e == 0 and len(d) == 512

s, size = connect()
req(s, 0, 0, 0xFFFFFFFF)  # 4 GiB read
e = reply(s)
ok(e is None or e != 0, "4 GiB read: error reply or disconnect (errno %s)" % e)
s.close()
ok(alive(), "server up after the 4 GiB read")

s, _ = connect()
req(s, 1, 0, 0x7FFFFFFF)  # write header promising 2 GiB, then hang up
try:  # the server may hang up first on seeing the header: allowed
    s.sendall(b"\0" * 4096)
except (BrokenPipeError, ConnectionResetError):
    pass
s.close()
ok(alive(), "server up after a 2 GiB write header and a hang-up")

s, _ = connect()
req(s, 99, 0, 512)  # unknown command
e = reply(s)
ok(e is None or e != 0, "unknown command: error reply or disconnect (errno %s)" % e)
s.close()

s, _ = connect()
req(s, 0, size - 512, 1024)
e = reply(s)
ok(e is not None and e != 0, "read across the end: error reply (errno %s)" % e)
req(s, 0, 0, 512, handle=8); e = reply(s); d = s.recv(512, socket.MSG_WAITALL)
ok(e == 0 and len(d) == 512, "same connection serves the next request")
req(s, 2, 0, 0)  # NBD_CMD_DISC
try:  # after disconnect: must not be served (the server may have closed already)
    req(s, 0, 0, 512, handle=9)
    d = s.recv(16)
except OSError:
    d = b""
ok(d == b"", "request after NBD_CMD_DISC: no reply, connection closed")
s.close()
ok(alive(), "server up at the end")
PY
check "raw protocol client finished" [ $? -eq 0 ]

check "nbdkit still running" alive "$pid"
check "array contents unchanged (md5)" [ "$(nbdcopy "$uri" - | md5sum)" = "$before" ]
check "uraid check on the served array: mismatch_cnt 0" \
	bash -c "'$URAID' check bad | grep -qx 'mismatch_cnt 0'"
check "uraid stop" "$URAID" stop bad
for _ in $(seq 300); do alive "$pid" || break; sleep 0.1; done
check "nbdkit exited" bash -c "! ps -o stat= -p $pid | grep -qv Z"
check "members hold the same contents (uraid cat)" \
	[ "$("$URAID" cat $(members bad) | md5sum)" = "$before" ]
t_done
