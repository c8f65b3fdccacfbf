#!/usr/bin/env bash
# Issue #24: FUA writes through the nbdkit plugin reach the members' disks.
# nbdkit runs under strace, which logs every fdatasync/fsync and every
# pwritev2 with RWF_DSYNC any of its threads makes (the ways a member
# write becomes durable). qemu-io sends 20 plain writes, then 20 FUA writes
# (write -f), each 64 KiB at its own offset, to a 2-member raid1, with
# qemu's writeback cache (its default, writethrough, would make every write
# FUA). The FUA writes must cause at least one durable operation per write
# and member (40); the plain ones fewer than one per write (the superblock
# marked active, qemu's flush at close), which shows the count tells the
# two apart. If the plugin ignored NBD_CMD_FLAG_FUA (advertised FUA and
# dropped it), the FUA phase would cost what the plain one does: this fails.
# Why it could fail wrongly: member I/O through io_uring (fsync or
# RWF_DSYNC as ring operations) is invisible to strace, so the engine's
# queues run in their synchronous mode here (URAID_IOQ=sync); an engine
# that made FUA durable some other way (O_DSYNC members, sync_file_range)
# would need the list of system calls extended.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/export_common.bash"
need nbdkit qemu-io strace
mk_array fua 1 2 64K 16M --assume-clean || { fail "create raid1"; t_done; }
sock=$T_TMP/fua.sock
log=$T_TMP/strace.log
URAID_IOQ=sync strace -f -qq -o "$log" -e trace=fdatasync,fsync,pwritev2 \
	nbdkit --foreground --pidfile "$T_TMP/nbdkit.pid" --unix "$sock" "$URAID_NBDKIT_PLUGIN" \
	$(members fua | sed 's/^/member=/') control=false 2>"$T_TMP/nbdkit.err" &
tracer=$!
for _ in $(seq 100); do [ -S "$sock" ] && [ -s "$T_TMP/nbdkit.pid" ] && break; sleep 0.1; done
check "nbdkit serves under strace" [ -S "$sock" ]
uri="nbd+unix:///?socket=$sock"
durable() { grep -cE 'fdatasync\(|fsync\(|pwritev2\(.*RWF_DSYNC' "$log"; }
writes() { # FLAG
	local args=() i
	for ((i = 0; i < 20; i++)); do args+=(-c "write $1 -P 0x5a $((i * 64))k 64k"); done
	qemu-io -f raw -t writeback "${args[@]}" "$uri" >"$T_TMP/qio.log" 2>&1 &&
		! grep -qi 'fail\|error' "$T_TMP/qio.log"
}
c0=$(durable)
check "20 plain writes" writes ""
c1=$(durable)
check "20 FUA writes" writes -f
c2=$(durable)
plain=$((c1 - c0)) fua=$((c2 - c1))
echo "# durable operations: plain writes $plain, FUA writes $fua"
check "FUA writes reached the disks: $fua >= 40 durable operations" [ "$fua" -ge 40 ]
check "plain writes did not: $plain < 20" [ "$plain" -lt 20 ]
# strace ends when nbdkit (the process it started) does.
kill "$(cat "$T_TMP/nbdkit.pid")" 2>/dev/null
wait "$tracer" 2>/dev/null
t_done
