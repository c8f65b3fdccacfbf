#!/usr/bin/env bash
# Issue #24, the run directory: root's uraid against files and links another
# user (nobody, through setpriv) plants. A run directory of someone else's,
# one writable by others, one behind a world-writable parent or another
# user's symbolic link is refused with a message naming it, before anything
# is written (sha256 of the victim file and of every member unchanged). In a
# trusted one, a link planted under a log's name is replaced, not followed;
# files are 0600, the directory 0700; member files are 0600 (nobody cannot
# read the array through them). A forged NAME.attach (naming a process of
# the test's, a tmpfs, a loop device bound elsewhere, a directory outside the
# run directory) makes detach refuse and change nothing, while a real
# attach's record (0600) is accepted. A socket nobody may not connect to is
# reported as that, not as "not running".
source "$(dirname "$0")/../lib.sh"
if [ "$(id -u)" -ne 0 ]; then
	fail "rundir_trust needs root (it plays root against nobody)"
	t_done
fi
nob() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
sha() { sha256sum "$@" | cut -d' ' -f1; }
PIDS=()
MNT=""
LOOPDEV=""
cleanup() {
	# only while each pid is still what we started (a daemon, or our sleep)
	for p in "${PIDS[@]}"; do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -Eq "^(uraid daemon|sleep 300)" &&
			kill "$p"
	done
	[ -e "$T_TMP/ok/t7.attach" ] && URAID_RUN_DIR=$T_TMP/ok "$URAID" detach t7
	[ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV" 2>/dev/null
	[ -n "$MNT" ] && umount "$MNT" 2>/dev/null
	for s in "$T_TMP"/ok/*.sock; do
		[ -e "$s" ] && URAID_RUN_DIR=$T_TMP/ok "$URAID" stop "$(basename "$s" .sock)"
	done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
# nobody may pass through the test's directory, not read or write in it.
chmod 0711 "$T_TMP"
PUB=$T_TMP/pub
mkdir -m 1777 "$PUB"
M=$T_TMP/m
mkdir -m 0711 "$M"
python3 -c 'import os,sys; sys.stdout.buffer.write(os.urandom(4096))' >"$T_TMP/victim"
victim=$(sha "$T_TMP/victim")
truncate -s 16M "$M/z0" "$M/z1" "$M/z2"
zeros=$(sha "$M/z0" "$M/z1" "$M/z2")
create() { # RUN NAME: a raid5 on z0..z2; a daemon it starts is stopped at the end
	URAID_RUN_DIR=$1 "$URAID" create --level=5 --raid-devices=3 --chunk=64K --name="$2" \
		--assume-clean --run "$M/z0" "$M/z1" "$M/z2" 2>"$T_TMP/create.err"
	local rc=$? p
	cat "$T_TMP/create.err" >&2
	p=$(sed -n 's/.*(daemon pid \([0-9]*\),.*/\1/p' "$T_TMP/create.err")
	[ -n "$p" ] && PIDS+=("$p")
	return $rc
}
untouched() { [ "$(sha "$T_TMP/victim")" = "$victim" ] && [ "$(sha "$M/z0" "$M/z1" "$M/z2")" = "$zeros" ]; }

# 1. nobody's own run directory, with a link to the victim as NAME.log
nob mkdir "$PUB/nrun"
nob ln -s "$T_TMP/victim" "$PUB/nrun/a1.log"
check_fails "run dir owned by nobody: create refused" create "$PUB/nrun" a1 2>"$T_TMP/e1"
check "... the message names the directory and its owner" \
	grep -q "run directory $PUB/nrun belongs to uid 65534, not to uid 0" "$T_TMP/e1"
check "... victim and members unchanged" untouched
check_fails "... assemble refused too" env URAID_RUN_DIR="$PUB/nrun" "$URAID" assemble \
	--name=a1 "$M/z0" "$M/z1" "$M/z2"
check_fails "... status refused" env URAID_RUN_DIR="$PUB/nrun" "$URAID" status a1
check_fails "... nothing was started" test -e "$PUB/nrun/a1.sock"

# 2. root's run directory that others may write
mkdir -m 0777 "$PUB/wrun"
nob ln -s "$T_TMP/victim" "$PUB/wrun/a2.log"
check_fails "run dir mode 0777: create refused" create "$PUB/wrun" a2 2>"$T_TMP/e2"
check "... the message names the mode" grep -q "writable by group or others (mode 0777)" "$T_TMP/e2"
check "... victim and members unchanged" untouched
chmod 1777 "$PUB/wrun"
check_fails "sticky mode 1777 is refused as well" env URAID_RUN_DIR="$PUB/wrun" "$URAID" status

# 3. behind a parent anyone may write (no sticky bit): the run dir could be swapped
mkdir -m 0777 "$T_TMP/open"
mkdir -m 0700 "$T_TMP/open/run"
check_fails "parent mode 0777 without sticky: refused" \
	env URAID_RUN_DIR="$T_TMP/open/run" "$URAID" status 2>"$T_TMP/e3"
check "... the message says why" grep -q "$T_TMP/open is writable by group or others without the sticky bit" "$T_TMP/e3"

# 4. through a symbolic link nobody owns (it could point anywhere later)
mkdir -m 0700 "$T_TMP/real"
nob ln -s "$T_TMP/real" "$PUB/link"
check_fails "a link of nobody's on the way: refused" \
	env URAID_RUN_DIR="$PUB/link" "$URAID" status 2>"$T_TMP/e4"
check "... the message names the link" grep -q "the symbolic link $PUB/link belongs to uid 65534" "$T_TMP/e4"

# 5. a trusted run directory: made 0700; a planted log link is replaced, not followed
OK=$T_TMP/ok
ln -s "$T_TMP/victim" "$T_TMP/ok.pre" # root's own link, outside: stays
mkdir -m 0700 "$OK"
ln -s "$T_TMP/victim" "$OK/a5.log"
check "trusted run dir: create works" create "$OK" a5
check "... victim unchanged (the link was replaced)" [ "$(sha "$T_TMP/victim")" = "$victim" ]
check "... a5.log is a regular file, mode 0600" [ "$(stat -c %F:%a "$OK/a5.log")" = "regular file:600" ]
URAID_RUN_DIR=$OK "$URAID" stop a5
rm -rf "$OK"
check "a missing run dir is created 0700" create "$OK" a6
check "... mode 0700" [ "$(stat -c %a "$OK")" = 700 ]
check "... the control socket and log are 0600" \
	[ "$(stat -c %a "$OK/a6.sock" "$OK/a6.log" | sort -u)" = 600 ]
URAID_RUN_DIR=$OK "$URAID" stop a6

# 6. member files made by create --size: 0600, nobody cannot read them
URAID_RUN_DIR=$OK "$URAID" create --level=1 --raid-devices=2 --size=8M --name=a7 --no-daemon \
	"$M/n0.img" "$M/n1.img" 2>/dev/null
check "create --size makes member files 0600" [ "$(stat -c %a "$M/n0.img" "$M/n1.img" | sort -u)" = 600 ]
check_fails "... nobody cannot read the array through them" nob sh -c "cat '$M/n0.img' >/dev/null"

# 7. a forged attach record in the trusted directory: detach changes nothing
sleep 300 &
PIDS+=($!)
victim_pid=$!
start=$(awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); print f[20] }' "/proc/$victim_pid/stat")
MNT=$OK/f1.fuse.abcdef
mkdir -p "$MNT" && mount -t tmpfs -o size=1M tmpfs "$MNT"
echo keep >"$MNT/file"
truncate -s 1M "$T_TMP/loopfile"
LOOPDEV=$(losetup --find --show "$T_TMP/loopfile")
mkdir "$T_TMP/victimdir"
forge() { # NAME LINES...: write NAME.attach as attach would
	local n=$1
	shift
	printf '%s\n' "name=$n" "$@" >"$OK/$n.attach"
	chmod 600 "$OK/$n.attach"
}
intact() { kill -0 "$victim_pid" && mountpoint -q "$MNT" && [ -f "$MNT/file" ] && [ -d "$T_TMP/victimdir" ] &&
	losetup "$LOOPDEV" >/dev/null 2>&1; }
forge f1 "loop=" "mount=$MNT" "fuse_pid=$victim_pid" "fuse_start=$start" "implicit=1" \
	"nbdkit_pid=$victim_pid" "nbdkit_start=$start"
check_fails "forged .attach naming a tmpfs and our sleep: detach refused" \
	env URAID_RUN_DIR="$OK" "$URAID" detach f1 2>"$T_TMP/e7"
check "... it names the foreign file system" grep -q "holds a tmpfs file system" "$T_TMP/e7"
check "... nothing unmounted, removed or killed" intact
check "... the record is left as it was" [ -f "$OK/f1.attach" ]
umount "$MNT"
check_fails "... with the tmpfs gone: the process is not nbdfuse, refused" \
	env URAID_RUN_DIR="$OK" "$URAID" detach f1 2>"$T_TMP/e7b"
check "... it names the process" grep -q "pid $victim_pid runs .*sleep, not nbdfuse" "$T_TMP/e7b"
mount -t tmpfs -o size=1M tmpfs "$MNT" && echo keep >"$MNT/file"
forge f2 "loop=$LOOPDEV" "mount=$OK/f2.fuse.abcdef" "fuse_pid=0" "fuse_start=0" "implicit=0" \
	"nbdkit_pid=0" "nbdkit_start=0"
check_fails "forged .attach naming a loop device bound elsewhere: refused" \
	env URAID_RUN_DIR="$OK" "$URAID" detach "$LOOPDEV" 2>"$T_TMP/e8"
check "... it names the backing file" grep -q "is bound to $T_TMP/loopfile" "$T_TMP/e8"
forge f3 "loop=" "mount=$T_TMP/victimdir" "fuse_pid=0" "fuse_start=0" "implicit=0" \
	"nbdkit_pid=0" "nbdkit_start=0"
check_fails "forged .attach naming a directory outside the run dir: refused" \
	env URAID_RUN_DIR="$OK" "$URAID" detach f3 2>"$T_TMP/e9"
check "... as not an attach record of uraid's" grep -q "is not an attach record uraid wrote" "$T_TMP/e9"
forge f4 "kind=ublk" "dev=7" "daemon_pid=$victim_pid" "daemon_start=$start" "implicit=0"
check_fails "forged ublk .attach naming our sleep as its daemon: detach refused" \
	env URAID_RUN_DIR="$OK" "$URAID" detach /dev/ublkb7 2>"$T_TMP/e10"
check "... it names the process" grep -q "pid $victim_pid runs .*sleep, not uraid" "$T_TMP/e10"
forge f5 "kind=nbd" "dev=-1" "implicit=0"
check_fails "forged .attach of kind nbd without a device: refused" \
	env URAID_RUN_DIR="$OK" "$URAID" detach f5 2>"$T_TMP/e11"
check "... as not an attach record of uraid's" grep -q "kind and dev disagree" "$T_TMP/e11"
check "... all still in place" intact

# 7b. a real attach is still detached: its record is 0600 and passes the checks
export URAID_NBDKIT_PLUGIN=${URAID_NBDKIT_PLUGIN:-$TOP/build/rel/nbdkit-uraid-plugin.so}
if command -v nbdfuse >/dev/null && [ -f "$URAID_NBDKIT_PLUGIN" ]; then
	truncate -s 8M "$M/t0" "$M/t1"
	URAID_RUN_DIR=$OK "$URAID" create --level=1 --raid-devices=2 --name=t7 --no-daemon \
		--assume-clean "$M/t0" "$M/t1" 2>/dev/null
	loop=$(URAID_RUN_DIR=$OK "$URAID" attach "$M/t0" "$M/t1" 2>"$T_TMP/e7c")
	check "a real attach works" [ -b "$loop" ]
	check "... its record is 0600" [ "$(stat -c %a "$OK/t7.attach")" = 600 ]
	check "... and detach accepts it" env URAID_RUN_DIR="$OK" "$URAID" detach t7
	check "... leaving no record, loop device or mount" bash -c "[ ! -e '$OK/t7.attach' ] &&
		! losetup -j '$OK'/t7.fuse.*/nbd 2>/dev/null | grep -q . && ! grep -q ' $OK/t7.fuse' /proc/self/mounts"
else
	fail "nbdfuse or the plugin missing"
fi

# 8. nobody's run directory holding a planted attach record: refused at the directory
nob mkdir "$PUB/arun"
nob sh -c "printf 'name=p1\nloop=\nmount=$MNT\nfuse_pid=$victim_pid\nfuse_start=$start\nimplicit=1\nnbdkit_pid=$victim_pid\nnbdkit_start=$start\n' >'$PUB/arun/p1.attach'"
check_fails "planted .attach in nobody's run dir: detach refused" \
	env URAID_RUN_DIR="$PUB/arun" "$URAID" detach p1
check "... nothing unmounted, removed or killed" intact

# 9. a control socket nobody may not use: "permission denied", not "not running"
nob mkdir -m 0700 "$PUB/nsock"
nob /usr/bin/python3 -c "import socket, os; s = socket.socket(socket.AF_UNIX); s.bind('$PUB/nsock/x.sock'); os.chmod('$PUB/nsock/x.sock', 0)"
nob env URAID_RUN_DIR="$PUB/nsock" "$URAID" status x 2>"$T_TMP/e10"
check "EACCES on the socket is reported as permission denied" \
	grep -q "array 'x': permission denied on its control socket" "$T_TMP/e10"
check_fails "... not as 'not running'" grep -q "not running" "$T_TMP/e10"
nob env URAID_RUN_DIR="$PUB/nsock" "$URAID" status y 2>"$T_TMP/e11"
check "no socket at all: not running, naming the socket" \
	grep -q "array 'y' is not running (no control socket $PUB/nsock/y.sock)" "$T_TMP/e11"
check "nobody's run dir, refused to root above, is fine for nobody" \
	nob env URAID_RUN_DIR="$PUB/nrun" "$URAID" status
t_done
