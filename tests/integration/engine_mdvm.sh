#!/usr/bin/env bash
# Arrays written by uraid — created, filled through the daemon, written while
# degraded, rebuilt onto a spare, written in members mapped from /dev/shm —
# assemble in the real kernel md (shared/mdvm)
# with the expected content and mismatch_cnt 0 after a kernel "check".
# The expected content is built independently on the host: the members start
# as zero files, so the array is zeros with our writes laid over it.
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
export URAID_RUN_DIR=$T_TMP/run
cleanup() { for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done; rm -rf "$T_TMP" "${SHM:-}"; }
trap cleanup EXIT

wait_idle() {
	for _ in $(seq 600); do
		"$URAID" status --json "$1" | grep -q '"action":"idle"' && return 0
		sleep 0.1
	done
	return 1
}

# speed NAME MIN MAX: the rebuild's speed limits (KiB/s) through the control
# socket, as URAID_SYNC_SPEED_MIN/MAX at the daemon's start would set them
speed() {
	python3 - "$URAID_RUN_DIR/$1.sock" "speed $2 $3" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall((sys.argv[2] + "\n").encode())
r = s.recv(256).decode(); sys.exit(0 if r.startswith("OK") else print(r) or 1)
PY
}

# put FILE OFFSET_BYTES DATA: lay DATA over FILE at OFFSET (the expected image)
put() { dd if="$3" of="$1" bs=512 seek=$(($2 / 512)) conv=notrunc status=none; }

# The kernel's side of run_case and plain_case: one VM per group of arrays
# (mdvm takes 24 disks), each array under its own md device, its disks named
# NAME_*. vm_group adds, for each CHECK array, ARRAY_MD5_NAME= and CHECK_NAME
# mismatch_cnt=N and then DONE_NAME (assembled read-only, hashed, made
# writable, checked, stopped); for each PLAIN one (no redundancy to check)
# ARRAY_BYTES_NAME=, ARRAY_MD5_NAME= and DONE_NAME.
VM_DISKS=() VM_CHECK="" VM_PLAIN=""
vm_job='i=0
one() { # NAME check|plain
	M=$(for n in $MDVM_DISKS; do case $n in "$1"_*) printf "/dev/disk-%s " "$n" ;; esac; done)
	r=0
	run mdadm --examine $M
	run mdadm --assemble --readonly /dev/md$i $M || return 1
	cat /proc/mdstat
	run mdadm --detail /dev/md$i
	echo "ARRAY_BYTES_$1=$(blockdev --getsize64 /dev/md$i)"
	echo "ARRAY_MD5_$1=$(md5_range /dev/md$i)"
	if [ "$2" = check ]; then
		run mdadm --readwrite /dev/md$i || return 1
		out=$(md_check md$i) || r=1
		echo "CHECK_$1 $out"
	fi
	run mdadm --stop /dev/md$i || return 1
	return $r
}
bad=0
for c in $VM_CHECK; do if one "$c" check; then echo "DONE_$c"; else bad=1; fi; i=$((i + 1)); done
for c in $VM_PLAIN; do if one "$c" plain; then echo "DONE_$c"; else bad=1; fi; i=$((i + 1)); done'
# vm_group GROUP: boot for the arrays queued so far (the guest's log in
# $T_TMP/GROUP.log), then the checks of each. $JOB_TAIL (shell code, disks
# of its own queued in VM_DISKS) runs in the guest after them.
vm_group() {
	local log=$T_TMP/$1.log
	"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 400 "${VM_DISKS[@]}" \
		--cmd "VM_CHECK=\"$VM_CHECK\"; VM_PLAIN=\"$VM_PLAIN\"
$vm_job
${JOB_TAIL:-}
exit \$bad" >"$log" 2>&1
	local rc=$? name got want
	for name in $VM_CHECK; do
		got=$(sed -n "s/^ARRAY_MD5_$name=\\([0-9a-f]*\\).*/\\1/p" "$log" | head -1)
		want=$(cat "$T_TMP/$name/want")
		check "$name: kernel assembles uraid's members and its check passes (VM rc $rc)" \
			grep -q "^DONE_$name\$" "$log"
		check "$name: kernel reads the expected content ($got)" [ "$got" = "$want" ]
		check "$name: kernel mismatch_cnt=0" grep -q "^CHECK_$name mismatch_cnt=0" "$log"
		# keep the evidence of a failure (T_TMP goes away): VM log, members' examine
		if ! grep -q "^DONE_$name\$" "$log" || [ "$got" != "$want" ]; then
			grep -E 'mdadm:|md/|md[0-9]|!!!' "$log" | head -20
			mkdir -p "$TOP/build/test-logs/engine_mdvm-$name"
			cp "$log" "$T_TMP/$name/examine.txt" "$TOP/build/test-logs/engine_mdvm-$name/"
		fi
	done
	for name in $VM_PLAIN; do
		got=$(sed -n "s/^ARRAY_MD5_$name=\\([0-9a-f]*\\).*/\\1/p" "$log" | head -1)
		want=$(cat "$T_TMP/$name/want")
		check "$name: kernel assembles it with the size uraid computed" \
			grep -q "^ARRAY_BYTES_$name=$(cat "$T_TMP/$name/bytes")\$" "$log"
		check "$name: kernel reads what uraid wrote" [ "$got" = "$want" ]
	done
	VM_DISKS=() VM_CHECK="" VM_PLAIN=""
}

# case_create NAME SIZE CREATE-ARGS...: create NAME over the caller's
# members[] (SIZE each), wait for its resync, set the caller's bytes to the
# array's size; 1 (the failure said) when create refuses
case_create() {
	local name=$1 size=$2; shift 2
	if ! "$URAID" create --size="$size" --name="$name" "$@" --raid-devices="${#members[@]}" \
		"${members[@]}" 2>"$T_TMP/$name/err"; then
		fail "$name: create: $(cat "$T_TMP/$name/err")"
		return 1
	fi
	wait_idle "$name"
	bytes=$("$URAID" status --json "$name" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["array_bytes"])')
}

# case NAME CREATE-ARGS... : members NAME/m0.. (count from --raid-devices);
# queued for the next vm_group
run_case() {
	local name=$1 n=$2; shift 2
	local dir=$T_TMP/$name
	mkdir -p "$dir"
	local members=() spare=$dir/m$n
	for ((i = 0; i < n; i++)); do members+=("$dir/m$i"); done
	local bytes
	case_create "$name" 8M "$@" || return
	truncate -s "$bytes" "$dir/expected"
	head -c 3M /dev/urandom >"$dir/w1"
	head -c 700K /dev/urandom >"$dir/w2"
	head -c 1M /dev/urandom >"$dir/w3"
	"$URAID" write "$name" --offset 512K <"$dir/w1" && put "$dir/expected" 524288 "$dir/w1"
	# degraded: fail member 1, write, rebuild onto a new member
	"$URAID" fail "$name" "${members[1]}"
	"$URAID" write "$name" --offset $((bytes / 2)) <"$dir/w2" &&
		put "$dir/expected" $((bytes / 2)) "$dir/w2"
	truncate -s 8M "$spare"
	"$URAID" add "$name" "$spare"
	"$URAID" write "$name" --offset $((bytes - 1048576)) <"$dir/w3" &&
		put "$dir/expected" $((bytes - 1048576)) "$dir/w3"
	# PARTIAL_REBUILD: stop in the middle of the rebuild; the kernel must
	# continue it from the recovery_offset checkpoint in the superblock
	if [ -n "${PARTIAL_REBUILD:-}" ]; then
		sleep 1
		"$URAID" status "$name" | grep -q recovery ||
			fail "$name: rebuild not in progress when stopping"
	else
		wait_idle "$name"
	fi
	"$URAID" stop "$name"
	md5sum <"$dir/expected" | cut -d' ' -f1 >"$dir/want"
	for ((i = 0; i < n; i++)); do
		[ "$i" = 1 ] && continue
		VM_DISKS+=(--disk "${name}_m$i=$dir/m$i")
	done
	VM_DISKS+=(--disk "${name}_spare=$spare")
	VM_CHECK="$VM_CHECK $name"
	for m in "$dir"/m*; do "$URAID" examine "$m"; done >"$dir/examine.txt" 2>&1
}

# Levels without redundancy on members of different sizes (raid0 zones,
# linear): the kernel reads what uraid wrote. Queued for the next vm_group.
plain_case() {
	local name=$1; shift
	local dir=$T_TMP/$name
	mkdir -p "$dir"
	truncate -s 8M "$dir/m0"; truncate -s 12M "$dir/m1"; truncate -s 16M "$dir/m2"
	if ! "$URAID" create --name="$name" --raid-devices=3 "$@" "$dir"/m0 "$dir"/m1 "$dir"/m2 \
		2>"$dir/err"; then
		fail "$name: create: $(cat "$dir/err")"
		return
	fi
	local bytes
	bytes=$("$URAID" status --json "$name" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["array_bytes"])')
	echo "$bytes" >"$dir/bytes"
	head -c "$bytes" /dev/urandom >"$dir/expected"
	"$URAID" write "$name" <"$dir/expected"
	"$URAID" stop "$name"
	md5sum <"$dir/expected" | cut -d' ' -f1 >"$dir/want"
	VM_DISKS+=(--disk "${name}_m0=$dir/m0" --disk "${name}_m1=$dir/m1" --disk "${name}_m2=$dir/m2")
	VM_PLAIN="$VM_PLAIN $name"
}

run_case r5ls 4 --level=5 --chunk=64K --layout=left-symmetric
run_case r6 5 --level=6 --chunk=32K
run_case r1 3 --level=1
run_case r10n2 4 --level=10 --layout=n2 --chunk=64K
run_case r5e10 4 --level=5 --chunk=64K --metadata=1.0
vm_group vm1
run_case r5e090 4 --level=5 --chunk=64K --metadata=0.90
# rebuild at 2 MiB/s, stopped after a second: the spare is left part-rebuilt
PARTIAL_REBUILD=1 URAID_SYNC_SPEED_MAX=2048 run_case r6mid 5 --level=6 --chunk=64K
check "r6mid: spare stopped mid-rebuild carries a recovery offset" \
	grep -q 'recovery' <("$URAID" examine "$T_TMP/r6mid/m5" 2>&1 | tr 'A-Z' 'a-z')
plain_case r0zones --level=0 --chunk=64K
plain_case lin --level=linear
# Members in /dev/shm, mapped by the daemon: after a first write has given
# every page memory, whole stripes go straight into the members' pages
# (raid456/stripe_mapped.c: data copied, P and Q computed there), then small
# writes (reconstruct-write at 6 members). Queued for vm2 (24 disks there).
shm_case() {
	local name=$1 n=$2; shift 2
	local dir=$T_TMP/$name
	mkdir -p "$dir"
	local members=()
	for ((i = 0; i < n; i++)); do members+=("$SHM/$name-m$i"); done
	local bytes
	case_create "$name" 8M "$@" || return
	head -c "$bytes" /dev/urandom >"$dir/w0"
	head -c "$bytes" /dev/urandom >"$dir/expected"
	"$URAID" write "$name" <"$dir/w0"
	check "$name: the daemon maps the $n members" \
		[ "$(grep -c "$SHM/$name-m" "/proc/$(cat "$URAID_RUN_DIR/$name.pid")/maps")" = "$n" ]
	"$URAID" write "$name" <"$dir/expected"
	for ((j = 0; j < 40; j++)); do
		head -c $(((j % 3 + 1) * 4096)) /dev/urandom >"$dir/s"
		local off=$(((RANDOM * 32768 + RANDOM) % (bytes / 4096 - 3) * 4096))
		"$URAID" write "$name" --offset "$off" <"$dir/s" && put "$dir/expected" "$off" "$dir/s"
	done
	"$URAID" stop "$name"
	md5sum <"$dir/expected" | cut -d' ' -f1 >"$dir/want"
	for ((i = 0; i < n; i++)); do VM_DISKS+=(--disk "${name}_m$i=${members[$i]}"); done
	VM_CHECK="$VM_CHECK $name"
	for m in "${members[@]}"; do "$URAID" examine "$m"; done >"$dir/examine.txt" 2>&1
}
SHM=$(mktemp -d /dev/shm/uraid-emdvm.XXXXXX)
shm_case r6shm 6 --level=6 --chunk=32K
# replace (md's want_replacement): uraid rebuilds a new member while the old
# one serves, with a write during the copy. Array "ra" finishes the replace
# (the old member is left out, as a faulty one would be); array "rb" is
# stopped mid-copy at 2 MiB/s (the limit set after the initial resync, which
# runs at full speed), so the kernel must read uraid's replacement
# record (feature bit, slot, recovery_offset) and finish the replace itself.
# One VM assembles them (and "rc" below).
replace_prep() {
	local name=$1 n=$2 partial=$3; shift 3
	local dir=$T_TMP/$name
	mkdir -p "$dir"
	local members=()
	for ((i = 0; i < n; i++)); do members+=("$dir/m$i"); done
	local bytes
	case_create "$name" 16M "$@" || return 1
	truncate -s "$bytes" "$dir/expected"
	head -c 2M /dev/urandom >"$dir/w1"
	head -c 1M /dev/urandom >"$dir/w2"
	"$URAID" write "$name" --offset 1M <"$dir/w1" && put "$dir/expected" 1048576 "$dir/w1"
	[ "$partial" = 1 ] && speed "$name" 1000 2048
	truncate -s 16M "$dir/new"
	check "$name: replace starts" "$URAID" replace "$name" "${members[1]}" "$dir/new"
	"$URAID" write "$name" --offset $((bytes - 1048576)) <"$dir/w2" &&
		put "$dir/expected" $((bytes - 1048576)) "$dir/w2"
	check "$name: never degraded during the replace" \
		grep -q "\[$n/$n\]" <("$URAID" status "$name")
	if [ "$partial" = 1 ]; then
		sleep 1
		"$URAID" status "$name" | grep -q recovery ||
			fail "$name: replace not in progress when stopping"
	else
		wait_idle "$name"
		check "$name: the new member holds slot 1, the old one is faulty" \
			python3 -c 'import json,sys
a = json.load(sys.stdin)[0]
m = {x["name"].split("/")[-1]: x for x in a["members"]}
assert m["new"]["role"] == 1 and m["new"]["state"] == "in_sync", m["new"]
assert m["m1"]["state"] == "faulty", m["m1"]' < <("$URAID" status --json "$name")
	fi
	"$URAID" stop "$name"
	md5sum <"$dir/expected" | cut -d' ' -f1 >"$dir/want"
}
# rc: raid10 far 2 rebuild stopped mid-way; uraid's recovery_offset is a
# sector of the new member (exact for far/offset copies), where the kernel
# continues.
partial_r10_prep() {
	local dir=$T_TMP/rc
	mkdir -p "$dir"
	if ! "$URAID" create --size=16M --name=rc --level=10 --layout=f2 --chunk=64K \
		--raid-devices=4 "$dir"/m0 "$dir"/m1 "$dir"/m2 "$dir"/m3 2>"$dir/err"; then
		fail "rc: create: $(cat "$dir/err")"
		return 1
	fi
	wait_idle rc
	local bytes
	bytes=$("$URAID" status --json rc | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["array_bytes"])')
	truncate -s "$bytes" "$dir/expected"
	head -c "$bytes" /dev/urandom >"$dir/w1"
	"$URAID" write rc <"$dir/w1" && cp "$dir/w1" "$dir/expected"
	"$URAID" fail rc "$dir/m1"
	speed rc 1024 2048
	truncate -s 16M "$dir/new"
	"$URAID" add rc "$dir/new"
	sleep 1.5
	"$URAID" status rc | grep -q recovery || fail "rc: rebuild not in progress when stopping"
	"$URAID" stop rc
	local ro
	ro=$(mdadm --examine "$dir/new" 2>/dev/null | sed -n 's/^ *Recovery Offset : \([0-9]*\) sectors.*/\1/p')
	check "rc: the new member carries a recovery offset past the start (${ro:-none})" \
		test "${ro:-0}" -gt 0
	md5sum <"$dir/expected" | cut -d' ' -f1 >"$dir/want"
}
if replace_prep ra 4 0 --level=5 --chunk=64K &&
	replace_prep rb 5 1 --level=6 --chunk=64K && partial_r10_prep; then
	R=$T_TMP
	"$MDVM" --snapshot --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 300 \
		--disk a0="$R/ra/m0" --disk a2="$R/ra/m2" --disk a3="$R/ra/m3" --disk anew="$R/ra/new" \
		--disk b0="$R/rb/m0" --disk b1="$R/rb/m1" --disk b2="$R/rb/m2" --disk b3="$R/rb/m3" \
		--disk b4="$R/rb/m4" --disk bnew="$R/rb/new" --disk c0="$R/rc/m0" --disk c2="$R/rc/m2" \
		--disk c3="$R/rc/m3" --disk cnew="$R/rc/new" --cmd 'set -e
run mdadm --examine /dev/disk-bnew
mdadm --assemble /dev/md0 /dev/disk-a0 /dev/disk-a2 /dev/disk-a3 /dev/disk-anew
mdadm --assemble /dev/md1 /dev/disk-b0 /dev/disk-b1 /dev/disk-b2 /dev/disk-b3 /dev/disk-b4 /dev/disk-bnew
mdadm --assemble /dev/md2 /dev/disk-c0 /dev/disk-c2 /dev/disk-c3 /dev/disk-cnew
cat /proc/mdstat
md_wait md0; md_wait md1; md_wait md2
cat /proc/mdstat
mdadm --detail /dev/md1
echo "A_MD5=$(md5_range /dev/md0)"
echo "B_MD5=$(md5_range /dev/md1)"
echo "A_CHECK: $(md_check md0)"
echo "B_CHECK: $(md_check md1)"
echo "C_MD5=$(md5_range /dev/md2)"
echo "C_CHECK: $(md_check md2)"
echo "B_SLOT1=$(mdadm --detail /dev/md1 | awk "/active sync/ && \$4 == 1 {print \$NF}")" \
	"NEW=$(readlink -f /dev/disk-bnew)" \
	"FAULTY=$(mdadm --detail /dev/md1 | awk "/faulty/ {print \$NF}")" \
	"OLD=$(readlink -f /dev/disk-b1)"
mdadm --stop /dev/md0 /dev/md1 /dev/md2' >"$R/replace-vm.log" 2>&1
	rc=$?
	check "replace: kernel assembles the three arrays (rc $rc)" [ "$rc" -eq 0 ]
	if [ "$rc" -ne 0 ]; then # keep the evidence (T_TMP goes away)
		mkdir -p "$TOP/build/test-logs/engine_mdvm-replace"
		cp "$R/replace-vm.log" "$TOP/build/test-logs/engine_mdvm-replace/"
		tail -30 "$R/replace-vm.log" | sed 's/^/# /'
	fi
	check "ra: kernel reads the expected content after uraid's replace" \
		grep -q "^A_MD5=$(cat "$R/ra/want")" "$R/replace-vm.log"
	check "rb: kernel finishes uraid's interrupted replace with the expected content" \
		grep -q "^B_MD5=$(cat "$R/rb/want")" "$R/replace-vm.log"
	check "rc: kernel continues uraid's raid10 far rebuild, expected content" \
		grep -q "^C_MD5=$(cat "$R/rc/want")" "$R/replace-vm.log"
	check "ra, rb, rc: kernel mismatch_cnt=0" \
		[ "$(grep -c 'CHECK: mismatch_cnt=0$' "$R/replace-vm.log")" = 3 ]
	read -r s1 snew sfaulty sold < <(sed -n 's/^B_SLOT1=\([^ ]*\) NEW=\([^ ]*\) FAULTY=\([^ ]*\) OLD=\(.*\)$/\1 \2 \3 \4/p' "$R/replace-vm.log")
	check "rb: the kernel put the replacement into slot 1 (${s1:-?} = ${snew:-?}), the old one is faulty" \
		test -n "${s1:-}" -a "${s1:-}" = "${snew:-}" -a "${sfaulty:-}" = "${sold:-}"
	[ "$rc" -eq 0 ] || grep -E 'mdadm:|md/|md[012]|!!!' "$R/replace-vm.log" | head -20
	[ "$T_FAILED" = 0 ] || cp "$R/replace-vm.log" "$TOP/build/test-logs/engine_mdvm-replace-vm.log"
fi
# An mdadm array with a write-intent bitmap: readable (cat), and read-write
# with the bitmap kept in step (engine/bitmap/bitmap.c; the kernel round trip of a
# uraid-written bitmap is tests/integration/bitmap_mdvm.sh). mdadm makes it
# in the second VM (after the arrays above), on disks it writes in place.
B=$T_TMP/bitmap
mkdir -p "$B"
for i in 0 1 2; do truncate -s 16M "$B/m$i"; done
VM_DISKS+=(--disk bitmap_m0="$B/m0" --disk bitmap_m1="$B/m1" --disk bitmap_m2="$B/m2")
JOB_TAIL='mdadm --create /dev/md20 --run --level=5 --raid-devices=3 --chunk=64 --bitmap=internal \
	--metadata=1.2 /dev/disk-bitmap_m0 /dev/disk-bitmap_m1 /dev/disk-bitmap_m2 || exit 1
md_wait md20
dd if=/dev/urandom of=/dev/md20 bs=64k count=64 conv=fsync 2>/dev/null || exit 1
echo 3 > /proc/sys/vm/drop_caches
echo "BITMAP_MD5=$(md5_range /dev/md20)"
mdadm --stop /dev/md20 || exit 1' vm_group vm2
want=$(sed -n 's/^BITMAP_MD5=\([0-9a-f]*\).*/\1/p' "$T_TMP/vm2.log" | head -1)
got=$("$URAID" cat "$B"/m0 "$B"/m1 "$B"/m2 | md5sum | cut -d' ' -f1)
check "bitmap array (mdadm-made): cat equals the kernel's md5 ($want)" \
	sh -c '[ -n "$1" ] && [ "$1" = "$2" ]' sh "$want" "$got"
if "$URAID" assemble "$B"/m0 "$B"/m1 "$B"/m2 2>"$B/err"; then
	bname=$("$URAID" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["name"])')
	head -c 64K /dev/urandom >"$B/w"
	"$URAID" write "$bname" --offset 1M <"$B/w"
	"$URAID" stop "$bname"
	got=$("$URAID" cat "$B"/m0 "$B"/m1 "$B"/m2 | dd bs=64K skip=16 count=1 iflag=fullblock status=none | md5sum)
	check "bitmap array: read-write assembly, the write reads back" [ "$got" = "$(md5sum <"$B/w")" ]
	dd if="$B/m0" of="$B/bm" bs=512 skip=16 count=8 status=none
	check "bitmap array: after uraid's clean stop the bitmap has 0 dirty bits" \
		grep -q ', 0 dirty' <(mdadm -X "$B/bm")
	check "bitmap array: bitmap events = superblock events" \
		[ "$(mdadm -X "$B/bm" | sed -n 's/^ *Events : //p')" = "$(mdadm -E "$B/m0" | sed -n 's/^ *Events : //p')" ]
else
	fail "bitmap array: read-write assembly refused: $(cat "$B/err")"
fi
t_done
