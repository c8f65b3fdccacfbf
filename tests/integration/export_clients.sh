#!/usr/bin/env bash
# Real NBD clients against `uraid serve`: qemu-img and nbdcopy copy random
# images in and out bit-exactly, qemu-io pattern writes/reads (aligned,
# unaligned, FUA, flush), fio's nbd engine with crc32c verification, nbdinfo's
# block size hints against a shell-computed reference, read-only serving
# leaves the members untouched, TCP serving listens on loopback only, and
# after `uraid stop` the members hold what the clients wrote (uraid cat, and
# a check pass with 0 mismatches).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/export_common.bash"
need nbdkit nbdinfo nbdcopy qemu-img qemu-io fio

mk_array r5 5 4 64K 24M || { fail "create raid5"; t_done; }
mk_array r6 6 6 128K 8M || { fail "create raid6"; t_done; }

uri=$("$URAID" serve "$T_TMP"/r5/m*.img 2>"$T_TMP/serve.err")
check "serve raid5 prints an NBD URI" [ "${uri#nbd+unix://}" != "$uri" ]
[ -n "$uri" ] || { cat "$T_TMP/serve.err"; t_done; }
size=$(nbdinfo --size "$uri")
check "export size = array size from uraid status" \
	[ "$size" = "$("$URAID" status --json r5 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["array_bytes"])')" ]

# block size hints vs the reference
bs_of() { nbdinfo "$1" | awk -v k="block_size_$2:" '$1 == k {print $2}'; }
check "raid5 4x64K: minimum 512" [ "$(bs_of "$uri" minimum)" = 512 ]
check "raid5 4x64K: preferred = $(ref_preferred 5 4 65536)" \
	[ "$(bs_of "$uri" preferred)" = "$(ref_preferred 5 4 65536)" ]
check "raid5: maximum >= preferred" [ "$(bs_of "$uri" maximum)" -ge "$(bs_of "$uri" preferred)" ]
check "can_multi_conn, can_fua, can_flush advertised" \
	bash -c "nbdinfo '$uri' | grep -q 'can_multi_conn: true' && nbdinfo '$uri' | grep -q 'can_fua: true' && nbdinfo '$uri' | grep -q 'can_flush: true'"
check "trim advertised" bash -c "nbdinfo '$uri' | grep -q 'can_trim: true'"

# qemu-img in, nbdcopy out
head -c "$size" /dev/urandom >"$T_TMP/a.img"
check "qemu-img convert into the export" qemu-img convert -n -f raw -O raw "$T_TMP/a.img" "$uri"
check "nbdcopy out of the export" nbdcopy "$uri" "$T_TMP/a.out"
check "qemu-img in -> nbdcopy out is bit-exact" cmp -s "$T_TMP/a.img" "$T_TMP/a.out"
# nbdcopy in, qemu-img out
head -c "$size" /dev/urandom >"$T_TMP/b.img"
check "nbdcopy into the export" nbdcopy "$T_TMP/b.img" "$uri"
check "qemu-img convert out of the export" qemu-img convert -f raw -O raw "$uri" "$T_TMP/b.out"
check "nbdcopy in -> qemu-img out is bit-exact" cmp -s "$T_TMP/b.img" "$T_TMP/b.out"

# qemu-io patterns; the same edits on the reference image
qio() { qemu-io -f raw "$@" "$uri" >"$T_TMP/qio.log" 2>&1 && ! grep -qi 'fail\|error' "$T_TMP/qio.log"; }
check "qemu-io write -P 0xab 1M+64k, read -P 0xab" qio -c 'write -P 0xab 1M 64k' -c 'read -P 0xab 1M 64k'
check "qemu-io unaligned write -P 0xcd 4097+1000, read back" \
	qio -c 'write -P 0xcd 4097 1000' -c 'read -P 0xcd 4097 1000'
check "qemu-io FUA write and flush" qio -c 'write -f -P 0x11 3M 128k' -c 'flush' -c 'read -P 0x11 3M 128k'
check "qemu-io stripe-crossing write (192k at 100k)" \
	qio -c 'write -P 0x5a 100k 192k' -c 'read -P 0x5a 100k 192k'
python3 - "$T_TMP/b.img" <<'PY'
import sys
f = open(sys.argv[1], "r+b")
for off, n, v in ((1 << 20, 65536, 0xab), (4097, 1000, 0xcd), (3 << 20, 131072, 0x11),
                  (100 << 10, 192 << 10, 0x5a)):
    f.seek(off); f.write(bytes([v]) * n)
PY
nbdcopy "$uri" "$T_TMP/c.out"
check "after the qemu-io edits the export = reference image" cmp -s "$T_TMP/b.img" "$T_TMP/c.out"

# fio's nbd engine (Debian's fio 3.33 has it): random 4k writes verified
if fio --enghelp 2>/dev/null | grep -qw nbd; then
	check "fio nbd randwrite 4k QD16 --verify=crc32c" \
		fio --name=v --ioengine=nbd --uri="$uri" --rw=randwrite --bs=4k --iodepth=16 \
		--size=16M --offset=32M --verify=crc32c --verify_fatal=1 --verify_state_save=0 --do_verify=1 \
		--output="$T_TMP/fio.log"
	check "fio nbd seq write 1M QD8 two jobs --verify=crc32c" \
		fio --name=s --ioengine=nbd --uri="$uri" --rw=write --bs=1M --iodepth=8 --numjobs=2 \
		--size=8M --offset_increment=8M --offset=48M --verify=crc32c --verify_fatal=1 --verify_state_save=0 \
		--output="$T_TMP/fio2.log"
	# fio wrote [32M, 64M): the export's contents become the reference
	nbdcopy "$uri" "$T_TMP/b.img"
else
	fail "fio has no nbd engine"
fi

# stop: the members must hold what the clients wrote
sum_export=$(md5sum <"$T_TMP/b.img" | cut -d' ' -f1)
check "uraid stop r5 (served)" "$URAID" stop r5
check "nbdkit socket and control socket gone" \
	bash -c "[ ! -S '$URAID_RUN_DIR/r5.sock' ] && ! nbdinfo '$uri' >/dev/null 2>&1"
# `uraid stop` returns when the control socket is gone; the array's final
# flush and clean mark follow in nbdkit's cleanup, so wait for the process.
pid=$(cat "$URAID_RUN_DIR/r5.nbdkit.pid")
for _ in $(seq 300); do alive "$pid" || break; sleep 0.1; done
check "nbdkit process gone" bash -c "! ps -o stat= -p $pid | grep -qv Z"
check "uraid cat of the members = last export contents" \
	[ "$("$URAID" cat $(members r5) | md5sum | cut -d' ' -f1)" = "$sum_export" ]
"$URAID" assemble $(members r5) 2>/dev/null
check "uraid check after serving: mismatch_cnt 0" \
	bash -c "'$URAID' check r5 | grep -qx 'mismatch_cnt 0'"
"$URAID" stop r5

# raid6 6x128K: preferred = 4 x 128K; read-only serving writes nothing
sha_before=$(sha256sum $(members r6))
uri6=$("$URAID" serve --readonly --unix "$T_TMP/r6.sock" $(members r6) 2>"$T_TMP/serve6.err")
check "serve --readonly --unix PATH" [ "$uri6" = "nbd+unix:///?socket=$T_TMP/r6.sock" ]
check "raid6 6x128K: preferred = $(ref_preferred 6 6 131072)" \
	[ "$(bs_of "$uri6" preferred)" = "$(ref_preferred 6 6 131072)" ]
check "read-only export says so" bash -c "nbdinfo '$uri6' | grep -q 'is_read_only: true'"
check_fails "qemu-io write to a read-only export fails" \
	qemu-io -f raw -c 'write -P 0x77 0 4k' "$uri6"
nbdcopy "$uri6" "$T_TMP/r6.out"
check "read-only raid6 export = uraid cat" \
	[ "$(md5sum <"$T_TMP/r6.out")" = "$("$URAID" cat $(members r6) | md5sum)" ]
"$URAID" stop r6
check "read-only serving left the members byte-identical" \
	[ "$sha_before" = "$(sha256sum $(members r6))" ]

# TCP: loopback only by default
port=$((20000 + $$ % 20000))
urit=$("$URAID" serve --port $port $(members r6) 2>"$T_TMP/servet.err")
check "serve --port prints nbd://127.0.0.1:PORT" [ "$urit" = "nbd://127.0.0.1:$port" ]
check "TCP export answers" nbdinfo --size "$urit"
check "listens on 127.0.0.1 only" \
	bash -c "ss -ltnH 'sport = :$port' | awk '{print \$4}' | grep -qx '127.0.0.1:$port' &&
		[ \$(ss -ltnH 'sport = :$port' | wc -l) -eq 1 ]"
pid=$(cat "$URAID_RUN_DIR/r6.nbdkit.pid")
"$URAID" stop r6
for _ in $(seq 300); do alive "$pid" || break; sleep 0.1; done

# hand-over: a running array (daemon) is served by name, keeps its name
"$URAID" assemble $(members r6) 2>"$T_TMP/asmh.err"
dpid=$(sed -n 's/.*(daemon pid \([0-9]*\),.*/\1/p' "$T_TMP/asmh.err")
urih=$("$URAID" serve r6 2>"$T_TMP/serveh.err") || cat "$T_TMP/serveh.err"
check "serve NAME takes a running array over" [ "$urih" = "nbd+unix:///?socket=$URAID_RUN_DIR/r6.nbd" ]
check "uraid status NAME answers from the plugin's control socket" \
	bash -c "'$URAID' status r6 | grep -q '^r6 : active raid6'"
sleep 0.5 # the run directory's mdstat follows within 200 ms
check "... and the plugin keeps the run directory's mdstat (r6 in it)" \
	grep -q '^r6 : active raid6' "$URAID_RUN_DIR/mdstat"
for _ in $(seq 100); do [ -n "$dpid" ] && alive "$dpid" || break; sleep 0.1; done
gone=no # (a zombie counts as gone: nobody may reap it here)
[ -n "$dpid" ] && ! alive "$dpid" && gone=yes
check "the daemon (pid $dpid) is gone (only nbdkit holds the members)" [ $gone = yes ]
check_fails "serve NAME twice is refused" "$URAID" serve r6
pid=$(cat "$URAID_RUN_DIR/r6.nbdkit.pid")
"$URAID" stop r6
for _ in $(seq 300); do alive "$pid" || break; sleep 0.1; done
check "stopped: r6 withdrawn from the run directory's mdstat" \
	bash -c "! grep -q '^r6 : ' '$URAID_RUN_DIR/mdstat'"

# --foreground: nbdkit runs in the serve process until `uraid stop`
"$URAID" serve --foreground --unix "$T_TMP/fg.sock" $(members r6) 2>"$T_TMP/fg.err" &
fg=$!
for _ in $(seq 100); do nbdinfo --size "nbd+unix:///?socket=$T_TMP/fg.sock" >/dev/null 2>&1 && break; sleep 0.1; done
check "serve --foreground answers" nbdinfo --size "nbd+unix:///?socket=$T_TMP/fg.sock"
check "uraid stop ends the foreground serve" "$URAID" stop r6
wait $fg
check "foreground serve exited 0" [ $? = 0 ]

# attach --unix PATH to someone else's serve: detach leaves that serve running
if [ "$(id -u)" = 0 ] && command -v nbdfuse >/dev/null; then
	"$URAID" serve --unix "$T_TMP/r6b.sock" $(members r6) >/dev/null 2>&1
	L=$("$URAID" attach --unix "$T_TMP/r6b.sock" --name r6b 2>"$T_TMP/att.err")
	check "attach --unix PATH gives a loop device" [ -b "$L" ]
	check "the loop device reads what nbd reads" \
		[ "$(dd if="$L" bs=1M iflag=direct status=none | md5sum)" = \
		"$(nbdcopy "nbd+unix:///?socket=$T_TMP/r6b.sock" - | md5sum)" ]
	check "detach /dev/loopN" "$URAID" detach "$L"
	check "the serve is still up after detach" nbdinfo --size "nbd+unix:///?socket=$T_TMP/r6b.sock"
	check_fails "detach of something not attached" "$URAID" detach "$L"
	"$URAID" stop r6
fi

# TLS passed through to nbdkit: a throwaway CA and server certificate
if command -v openssl >/dev/null; then
	c=$T_TMP/tls
	mkdir -p "$c"
	(cd "$c" &&
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca-key.pem -out ca-cert.pem -days 2 \
			-subj "/CN=uraid test CA" &&
		openssl req -newkey rsa:2048 -nodes -keyout server-key.pem -out server.csr \
			-subj "/CN=localhost" &&
		openssl x509 -req -in server.csr -CA ca-cert.pem -CAkey ca-key.pem -CAcreateserial \
			-out server-cert.pem -days 2) >/dev/null 2>&1
	urit=$("$URAID" serve --tls=require --tls-certificates "$c" --unix "$T_TMP/tls.sock" \
		$(members r6) 2>"$T_TMP/tls.err")
	check "serve --tls=require prints an nbds URI" [ "$urit" = "nbds+unix:///?socket=$T_TMP/tls.sock" ]
	check "TLS client with the CA reads the export" \
		[ "$(nbdcopy "$urit&tls-certificates=$c" - | md5sum)" = "$("$URAID" cat r6 | md5sum)" ]
	check_fails "plain client refused by --tls=require" \
		nbdinfo --size "nbd+unix:///?socket=$T_TMP/tls.sock"
	pid=$(cat "$URAID_RUN_DIR/r6.nbdkit.pid")
	"$URAID" stop r6
	for _ in $(seq 300); do alive "$pid" || break; sleep 0.1; done
else
	fail "openssl missing: TLS not tested"
fi
check_fails "--tls=require without certificates" "$URAID" serve --tls=require $(members r6)

# Members in memory (/dev/shm) are mapped by nbdkit (the plugin installs the
# SIGBUS guard); a member file truncated under the served array fails that
# member instead of killing nbdkit: writes go on degraded, and the export
# reads back every byte written.
S=$(mktemp -d /dev/shm/uraid-test.XXXXXX)
trap 'export_cleanup; rm -rf "$S"' EXIT
"$URAID" create --level=5 --raid-devices=4 --chunk=64K --size=8M --assume-clean --name=shm \
	--no-daemon "$S"/m0 "$S"/m1 "$S"/m2 "$S"/m3 >"$T_TMP/shm.create.log" 2>&1
uris=$("$URAID" serve "$S"/m0 "$S"/m1 "$S"/m2 "$S"/m3 2>"$T_TMP/serves.err")
pid=$(cat "$URAID_RUN_DIR/shm.nbdkit.pid" 2>/dev/null)
check "serve raid5 on /dev/shm members" [ -n "$uris" ] && [ -n "$pid" ]
check "nbdkit maps the 4 members" [ "$(grep -c "$S/m" "/proc/$pid/maps")" = 4 ]
ssize=$(nbdinfo --size "$uris")
head -c "$ssize" /dev/urandom >"$T_TMP/s.img"
check "nbdcopy into the mapped export" nbdcopy "$T_TMP/s.img" "$uris"
truncate -s 0 "$S"/m1
check "qemu-io writes over the whole export after m1 was truncated" \
	qemu-io -f raw -c "write -P 0x3c 0 $ssize" "$uris"
python3 -c 'import sys; open(sys.argv[1], "wb").write(bytes([0x3c]) * int(sys.argv[2]))' \
	"$T_TMP/s.img" "$ssize"
check "nbdkit lives on" alive "$pid"
check "m1 failed, the array degraded" \
	bash -c "'$URAID' status shm | grep -q 'm1\[[0-9]*\](F)' && [ \"\$('$URAID' status --json shm | python3 -c 'import json,sys; print(json.load(sys.stdin)[0][\"degraded\"])')\" = 1 ]"
check "the degraded export reads back every byte written" \
	bash -c "nbdcopy '$uris' - | cmp -s - '$T_TMP/s.img'"
check "m1 not written since it was cut (still empty)" [ "$(stat -c %s "$S"/m1)" = 0 ]
"$URAID" stop shm
for _ in $(seq 300); do alive "$pid" || break; sleep 0.1; done

# refusals
check_fails "serve with no members" "$URAID" serve
check_fails "serve of a non-array file" "$URAID" serve "$T_TMP/a.img"
check_fails "serve of an unknown name" "$URAID" serve no-such-array
check_fails "--unix and --port together" "$URAID" serve --unix x --port 1 $(members r6)
t_done
