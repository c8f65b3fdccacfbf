#!/usr/bin/env bash
# NBD members: four `nbdkit file` servers (three on Unix sockets, one on TCP
# 127.0.0.1 at a free port), each its own process, as the members of a raid5
# with a write-intent bitmap and of a raid6. Through `uraid serve`, fio's nbd
# engine writes with crc32c verification while one server is killed and
# started again: fio completes without a verify error, the member is failed
# and then re-added by the daemon's reconnect policy recovering only the
# chunks the bitmap marks, check finds 0 mismatches, status --verbose shows
# each remote member's link. The members' backing files, copied off the
# servers, read back (uraid cat) what the export held, and assemble in the
# kernel (mdvm, one boot) with that content and md's check at 0 mismatches. The raid6 goes
# through another fio verify run while one server is killed and another stops
# answering (SIGSTOP): the stalled member's request outlives the 3 s timeout,
# the member fails, the array goes on without both, nothing hangs; when the
# stalled server answers again its member comes back as a spare (no bitmap
# covers what it missed), recovered completely. Refused
# with clear errors: a malformed URI, a server that is not there (Unix socket
# and TCP port), a server that requires TLS asked in plain text, an unknown
# URI parameter.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run URAID_NBD_MEMBER_TIMEOUT=3 URAID_NBD_RECONNECT=1
mkdir -p "$URAID_RUN_DIR"
S=$T_TMP/srv
mkdir -p "$S"
declare -A PID
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do
		[ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)" >/dev/null 2>&1
	done
	for p in "${PID[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$T_TMP"
}
trap cleanup EXIT
for t in nbdkit nbdcopy fio; do
	command -v $t >/dev/null || { fail "$t missing (scripts/deps)"; t_done; }
done
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# start KEY FILE: serve FILE; keys ending in "t" on TCP, others on a socket
start() {
	local k=$1 f=$2
	if [ "${k%t}" != "$k" ]; then
		nbdkit -f -i 127.0.0.1 -p "$PORT" file "$f" >/dev/null 2>&1 &
	else
		nbdkit -f -U "$S/$k.sock" file "$f" >/dev/null 2>&1 &
	fi
	PID[$k]=$!
	for _ in $(seq 100); do
		if [ "${k%t}" != "$k" ]; then
			nbdinfo --size "nbd://127.0.0.1:$PORT" >/dev/null 2>&1 && return 0
		else
			[ -S "$S/$k.sock" ] && return 0
		fi
		sleep 0.05
	done
	return 1
}
uri_of() { # KEY
	if [ "${1%t}" != "$1" ]; then echo "nbd://127.0.0.1:$PORT/"; else echo "nbd+unix:///?socket=$S/$1.sock"; fi
}
wait_for() { # NAME REGEX [tenths]
	for _ in $(seq "${3:-300}"); do
		"$URAID" status --json "$1" 2>/dev/null | grep -q "$2" && return 0
		sleep 0.1
	done
	return 1
}

keys=(a0 a1 a2 a3t)
M=()
for k in "${keys[@]}"; do
	truncate -s 24M "$S/$k.img"
	start "$k" "$S/$k.img" || fail "nbdkit $k starts"
	M+=("$(uri_of "$k")")
done

check_fails "a member URI with a bad port is refused" \
	"$URAID" create --level=5 --raid-devices=4 --name=bad --run "nbd://127.0.0.1:99999/" \
	"${M[@]:1}" 2>"$T_TMP/e1"
check "... naming the problem" grep -q "bad NBD URI.*port" "$T_TMP/e1"
check_fails "a server that is not there is refused" \
	"$URAID" create --level=5 --raid-devices=4 --name=bad --run \
	"nbd+unix:///?socket=$S/none.sock" "${M[@]:1}" 2>"$T_TMP/e2"
check "... saying it cannot connect" grep -q "none.sock.*cannot connect" "$T_TMP/e2"
check_fails "an unknown URI parameter is refused" \
	"$URAID" create --level=5 --raid-devices=4 --name=bad --run "${M[0]}&bogus=1" \
	"${M[@]:1}" 2>"$T_TMP/e3"
check "... naming it" grep -q "bad NBD URI: unknown query parameter 'bogus'" "$T_TMP/e3"
check_fails "a TCP port where nothing listens is refused" \
	"$URAID" create --level=5 --raid-devices=4 --name=bad --run "nbd://127.0.0.1:1/" \
	"${M[@]:1}" 2>"$T_TMP/e4"
check "... saying the connection was refused" grep -q "127.0.0.1:1/: cannot connect.*refused" \
	"$T_TMP/e4"
echo "uraid:0123456789abcdef0123456789abcdef" >"$S/k.psk"
nbdkit -f --tls=require --tls-psk="$S/k.psk" -U "$S/tls.sock" memory 24M >/dev/null 2>&1 &
PID[tls]=$!
for _ in $(seq 100); do [ -S "$S/tls.sock" ] && break; sleep 0.05; done
check_fails "a server that requires TLS refuses a plain nbd+unix:// member" \
	"$URAID" create --level=5 --raid-devices=4 --name=bad --run \
	"nbd+unix:///?socket=$S/tls.sock" "${M[@]:1}" 2>"$T_TMP/e5"
check "... saying it requires TLS" grep -q "tls.sock: cannot connect.*requires TLS" "$T_TMP/e5"
kill "${PID[tls]}"
check "nothing written to the others" cmp -s "$S/a1.img" <(head -c 24M /dev/zero)

check "create raid5 on 4 NBD members (one TCP), bitmap 64K" "$URAID" create --level=5 \
	--raid-devices=4 --chunk=64K --bitmap=internal --bitmap-chunk=64K --name=r5 --run \
	"${M[@]}" 2>"$T_TMP/create.err"
check "initial resync over NBD finishes" wait_for r5 '"action":"idle"'
uri=$("$URAID" serve r5 2>"$T_TMP/serve.err")
check "serve r5 prints its URI" [ -n "$uri" ]

# fio verifies while a1's server is killed (SIGKILL) and started again; its
# writes are paced (about 4 s) so that the loss falls inside them on an idle
# machine too
(
	sleep 1
	kill -9 "${PID[a1]}"
	sleep 2
	rm -f "$S/a1.sock" # a killed nbdkit leaves it behind
	exec nbdkit -f -U "$S/a1.sock" file "$S/a1.img" >/dev/null 2>&1
) &
killer=$!
check "fio randwrite 4k QD16 verify=crc32c through a server's loss completes" \
	timeout 50 fio --name=v --ioengine=nbd --uri="$uri" --rw=randwrite --bs=4k --iodepth=16 \
	--size=24M --io_size=16M --rate_iops=1000 --verify=crc32c --verify_fatal=1 \
	--output="$T_TMP/fio.log"
check "fio: no verify error" bash -c "! grep -qi 'verify.*bad\|crc32c.*wanted' '$T_TMP/fio.log'"
# the restarted server's pid, for cleanup: the subshell exec's into it
PID[a1]=$killer
for _ in $(seq 100); do [ -S "$S/a1.sock" ] && break; sleep 0.05; done
LOG=$URAID_RUN_DIR/r5.nbdkit.log
[ -f "$LOG" ] || LOG=$URAID_RUN_DIR/r5.log
check "the member failed" grep -q "a1.sock.*member fails\|a1.sock.*marking faulty" "$LOG"
check "the daemon re-added it when its server came back" wait_for r5 '"working":4' 200
check "recovery: only the chunks the bitmap marks" \
	grep -q "a1.sock re-added in slot 1.*recovering the chunks the bitmap marks" "$LOG"
check "recovery finishes" wait_for r5 '"action":"idle"'
"$URAID" status --verbose r5 >"$T_TMP/st"
check "status [4/4] [UUUU]" grep -q '\[4/4\] \[UUUU\]' "$T_TMP/st"
check "status --verbose: each remote member's link and latency" \
	[ "$(grep -c 'remote nbd.*connected.*latency' "$T_TMP/st")" = 4 ]
check "check: 0 mismatches" grep -qx "mismatch_cnt 0" <("$URAID" check r5)
check "nbdcopy out of the export" nbdcopy "$uri" "$T_TMP/r5.out"
check "stop r5" "$URAID" stop r5
printf 'ARRAY /dev/md/r5 devices=%s\n' "$(IFS=,; echo "${M[*]}")" >"$T_TMP/uraid.conf"
check "assemble r5 from a config file whose devices= are NBD URIs" \
	"$URAID" assemble --config "$T_TMP/uraid.conf" r5
check "... all four members in sync" wait_for r5 '"working":4' 50
check "stop r5 again" "$URAID" stop r5
for k in "${keys[@]}"; do cp "$S/$k.img" "$T_TMP/$k.copy"; done
check "the copies of the servers' files read back what the export held" \
	cmp -s "$T_TMP/r5.out" <("$URAID" cat "$T_TMP"/a0.copy "$T_TMP"/a1.copy "$T_TMP"/a2.copy \
	"$T_TMP"/a3t.copy)

# the same copies in the kernel (shared/mdvm, one boot)
MDVM=$TOP/tests/mdvm/run
if [ -x "$MDVM" ] && "$MDVM" --info >/dev/null 2>&1; then
	sectors=$(($(stat -c %s "$T_TMP/r5.out") / 512))
	want=$(md5sum <"$T_TMP/r5.out" | cut -d' ' -f1)
	{ echo "EXPECT_SECTORS=$sectors"; cat "$TOP/tests/integration/nbd_members_mdvm.job"; } \
		>"$T_TMP/job.sh"
	"$MDVM" --snapshot --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 \
		--disk "m0=$T_TMP/a0.copy" --disk "m1=$T_TMP/a1.copy" --disk "m2=$T_TMP/a2.copy" \
		--disk "m3=$T_TMP/a3t.copy" --script "$T_TMP/job.sh" >"$T_TMP/vm.log" 2>&1
	rc=$?
	got=$(sed -n 's/^ARRAY_MD5=\([0-9a-f]*\).*/\1/p' "$T_TMP/vm.log" | head -1)
	check "the kernel assembles the copied members (rc $rc)" [ "$rc" -eq 0 ]
	check "the kernel reads what the export held" [ "$got" = "$want" ]
	check "the kernel's check: mismatch_cnt=0" grep -q '^mismatch_cnt=0' "$T_TMP/vm.log"
	[ "$rc" -eq 0 ] || grep -E 'mdadm:|md/|md0|!!!' "$T_TMP/vm.log" | head -20
else
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
fi

# raid6 on four more servers (Unix sockets): fio verifies through `uraid serve`
# while b0's server is killed and b1's stops answering (SIGSTOP); b1's request
# outlives the 3 s timeout and the member fails instead of the array hanging
M6=()
for k in b0 b1 b2 b3; do
	truncate -s 16M "$S/$k.img"
	start "$k" "$S/$k.img"
	M6+=("$(uri_of "$k")")
done
check "create raid6 on 4 NBD members" "$URAID" create --level=6 --raid-devices=4 --chunk=64K \
	--name=r6 --run "${M6[@]}" 2>/dev/null
check "raid6 resync" wait_for r6 '"action":"idle"'
uri6=$("$URAID" serve r6 2>"$T_TMP/serve6.err")
check "serve r6 prints its URI" [ -n "$uri6" ]
(
	sleep 0.7
	kill -9 "${PID[b0]}"
	sleep 0.7
	kill -STOP "${PID[b1]}"
) &
check "fio randwrite 4k verify through a raid6 losing one server and stalling another" \
	timeout 60 fio --name=v6 --ioengine=nbd --uri="$uri6" --rw=randwrite --bs=4k --iodepth=16 \
	--size=16M --io_size=12M --rate_iops=1000 --verify=crc32c --verify_fatal=1 \
	--output="$T_TMP/fio6.log"
check "fio: no verify error on raid6" \
	bash -c "! grep -qi 'verify.*bad\|crc32c.*wanted' '$T_TMP/fio6.log'"
LOG6=$URAID_RUN_DIR/r6.nbdkit.log
[ -f "$LOG6" ] || LOG6=$URAID_RUN_DIR/r6.log
check "the stalled server's member failed on the request timeout" \
	grep -q "b1.sock.*a request took longer than 3 s.*member fails" "$LOG6"
check "both failed, the array goes on" wait_for r6 '"failed":2' 50
check "raid6 without two members reads back the whole export" \
	timeout 60 nbdcopy "$uri6" "$T_TMP/r6.out"
kill -CONT "${PID[b1]}"
# b1 missed writes and r6 has no bitmap: md refuses its re-add, so the
# reconnect policy takes it back as a spare, recovered completely
check "b1's server answers again: back as a spare, recovered (no bitmap to go by)" \
	wait_for r6 '"working":3.*"action":"idle"\|"action":"idle".*"working":3' 300
check "... the daemon log says so" \
	grep -q "b1.sock: server answers again, re-added as a spare" "$LOG6"
check "... and r6 reads back the export as before" \
	sh -c "timeout 60 nbdcopy '$uri6' - | cmp -s - '$T_TMP/r6.out'"
check "stop r6" "$URAID" stop r6
t_done
