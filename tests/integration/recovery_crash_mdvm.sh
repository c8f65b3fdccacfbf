#!/usr/bin/env bash
# A member half-rebuilt when the kernel crashed, judged by the kernel
# (shared/mdvm, two boots): md recovers member 1 of raid1, raid5 and raid6
# arrays (1.2) onto a spare, throttled, and the VM crashes (sysrq b) past 30%
# with writes under way: the arrays are dirty, their spares half-rebuilt.
#  - uraid assemble refuses exactly where mdadm --assemble does ("not
#    enough to start the array while not clean": a dirty raid5/raid6 with a
#    member still recovering, md's dirty degraded array) and starts the rest;
#  - uraid cat == what the kernel reads from a copy of the crashed members
#    (read-only, --force where mdadm needs it), no member changed;
#  - uraid assemble (--force where refused) finishes the recovery, reads the
#    same; the kernel then assembles the members with nothing left to do,
#    reads the same, a check gives mismatch_cnt 0.
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
command -v dmsetup >/dev/null || { fail "dmsetup not installed (scripts/deps)"; t_done; }
export URAID_RUN_DIR=$T_TMP/run
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP
job=$TOP/tests/integration/recovery_crash_mdvm.job
CASES="a:1:2 b:5:3 c:6:4"
members() { # NAME N: the member paths, spare last
	local k
	for ((k = 0; k < $2; k++)); do echo "$d/$1$k"; done
	echo "$d/$1s"
}
disks=()
for c in $CASES; do
	IFS=: read -r name level n <<<"$c"
	for f in $(members "$name" "$n"); do
		truncate -s 4M "$f"
		disks+=(--disk "$(basename "$f")=$f")
	done
done
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(13).randbytes(8<<20))' >"$d/pat"
{ echo "PHASE=make CASES='$CASES'"; cat "$job"; } >"$d/make.sh"
# The first boot is the kernel's and mdadm's alone (no uraid code runs in
# it): when it ends without the crash (a guest starved by a loaded host), its
# failing lines are printed and it runs once more on fresh members.
for try in 1 2; do
	for f in "${disks[@]}"; do case $f in *=*) truncate -s 0 "${f#*=}" && truncate -s 4M "${f#*=}" ;; esac; done
	"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 "${disks[@]}" --disk pat="$d/pat" \
		--script "$d/make.sh" >"$d/make.log" 2>&1
	rc=$?
	grep -h '^mdvm: exit status' "$d/make.log" | sed "s/^/# try $try: /"
	[ "$rc" -eq 125 ] && grep -q '^CRASH at' "$d/make.log" && break
	grep -h '^!!!\|^mdadm: \|^sh: \|job.sh: \|^mdvm-job: ' "$d/make.log" | tail -6 | sed "s/^/# try $try: /"
done
check "VM: md recovering onto spares, crashed under writes (rc $rc: no job status)" \
	sh -c "[ $rc -eq 125 ] && grep -q '^CRASH at' '$d/make.log' && ! grep -q '^MDVM-RC=' '$d/make.log'"
[ "$rc" -eq 125 ] || { tail -40 "$d/make.log"; t_done; }
grep '^md[0-9]: ' "$d/make.log" | sed 's/^/# at the crash: /'
val() { sed -n "s/^$1=\([0-9a-f]*\).*/\1/p" "$2" | head -1; }
mkdir -p "$d/b"
: >"$d/acat"
declare -A urc
for c in $CASES; do
	IFS=: read -r name level n <<<"$c"
	mapfile -t m < <(members "$name" "$n")
	cat "${m[@]}" >>"$d/acat"
	check "$name: the crash left the spare half-rebuilt (a recovery offset)" \
		sh -c "'$URAID' examine '${m[-1]}' | grep -q 'Recovery Offset : [1-9]'"
	sum=$(cat "${m[@]}" | sha256sum)
	"$URAID" cat -o "$d/$name.cat" "${m[@]}" 2>"$d/$name.err"
	check "$name: uraid cat of the crashed members" [ -s "$d/$name.cat" ]
	check "$name: ... changes no member" [ "$(cat "${m[@]}" | sha256sum)" = "$sum" ]
	for f in "${m[@]}"; do cp "$f" "$d/b/"; done
	mapfile -t b < <(for f in "${m[@]}"; do echo "$d/b/$(basename "$f")"; done)
	force=
	if "$URAID" assemble --name="$name" "${b[@]}" 2>"$d/$name.asm"; then
		urc[$name]=0
	else
		urc[$name]=1
		force=--force
		check "$name: nothing written by the refused assembly" [ "$(cat "${b[@]}" | sha256sum)" = "$sum" ]
		"$URAID" assemble --force --name="$name" "${b[@]}" 2>>"$d/$name.asm" ||
			{ fail "$name: uraid assemble --force: $(cat "$d/$name.asm")"; continue; }
	fi
	sed 's/^/# /' "$d/$name.asm"
	for _ in $(seq 300); do
		"$URAID" status --json "$name" | grep -q '"action":"idle"' && break
		sleep 0.1
	done
	check "$name: uraid ${force:+(--force) }finishes the recovery" \
		sh -c "'$URAID' status --json '$name' | grep -q '\"action\":\"idle\"'"
	got=$("$URAID" cat "$name" | md5sum | cut -d' ' -f1)
	check "$name: ... and reads what cat read from the crashed members" \
		[ "$got" = "$(md5sum <"$d/$name.cat" | cut -d' ' -f1)" ]
	"$URAID" stop "$name"
done
bdisks=()
for c in $CASES; do
	IFS=: read -r name level n <<<"$c"
	for f in $(members "$name" "$n"); do bdisks+=(--disk "$(basename "$f")=$d/b/$(basename "$f")"); done
done
{ echo "PHASE=verify CASES='$CASES'"; cat "$job"; } >"$d/verify.sh"
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 --snapshot "${bdisks[@]}" --disk acat="$d/acat" \
	--put-exe "$(command -v dmsetup)" --script "$d/verify.sh" >"$d/verify.log" 2>&1
rc=$?
grep -h '^mdvm: exit status' "$d/verify.log" | sed 's/^/# /'
check "VM: md reads a copy of the crashed members, assembles uraid's (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || tail -40 "$d/verify.log"
said() { if [ "$1" = 1 ]; then echo refused; else echo started; fi; }
for c in $CASES; do
	IFS=: read -r name level n <<<"$c"
	krc=0
	grep -q "^REFUSED_$name=1" "$d/verify.log" && krc=1
	check "$name: uraid assemble refuses iff mdadm does (mdadm $(said $krc), uraid $(said "${urc[$name]}"))" \
		[ "${urc[$name]}" = "$krc" ]
	cat_md5=$(md5sum <"$d/$name.cat" | cut -d' ' -f1)
	check "$name: uraid cat == what the kernel reads from the crashed members" \
		[ "$(val "RMD5_$name" "$d/verify.log")" = "$cat_md5" ]
	check "$name: the kernel has nothing left to do, $n members active and working" \
		sh -c "! grep -q '^BUSY_$name=' '$d/verify.log' &&
			grep -q '^DETAIL_$name: Active Devices : $n$' '$d/verify.log' &&
			grep -q '^DETAIL_$name: Working Devices : $n$' '$d/verify.log'"
	check "$name: the kernel reads the same from uraid's finished members" \
		[ "$(val "BMD5_$name" "$d/verify.log")" = "$cat_md5" ]
	check "$name: kernel check: mismatch_cnt 0" grep -q "^MISMATCH_$name=0$" "$d/verify.log"
done
[ -n "${URAID_TEST_KEEP:-}" ] && mkdir -p "$URAID_TEST_KEEP" && cp "$d"/*.log "$URAID_TEST_KEEP/"
t_done
