# A copy the kernel stopped part-way, judged by the kernel (shared/mdvm, two
# boots); sourced by recovery_mdvm.sh (MODE=recover: member 1 failed, a spare
# rebuilt), replace_mdvm.sh (MODE=replace: mdadm --replace of member 1) and
# readd_mdvm.sh (MODE=readd: member 1 failed and re-added, its recovery
# guided by the bitmap; "the spare" below is member 1 itself).
# md makes the arrays of CASES, writes a pattern, starts the copy throttled
# and stops each array part-way (partial_sync_mdvm.job). On the host:
#  - uraid cat of the members == what the kernel reads from them (read-only
#    re-assembly) == the pattern, no member changed;
#  - uraid examine shows the spare's recovery offset and role as mdadm does;
#  - uraid assemble resumes at that offset: on a copy whose spare has its
#    already-copied part overwritten with a marker, only that part still
#    holds the marker after uraid finished (a 0.90 array has no offset: md
#    restarts the recovery, and so does uraid: the marker is gone);
#  - after uraid finished, the kernel assembles the members with nothing left
#    to recover or replace (replace: the spare holds member 1's role, the
#    old member 1 is not taken back), reads the pattern, and a check gives
#    mismatch_cnt 0.
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
export URAID_RUN_DIR=$T_TMP/run
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP
job=$TOP/tests/integration/partial_sync_mdvm.job
disks=()
members() { # NAME N: the member paths, spare last (readd: none)
	local k
	for ((k = 0; k < $2; k++)); do echo "$d/$1$k"; done
	[ "$MODE" = readd ] || echo "$d/$1s"
}
for c in $CASES; do
	IFS=: read -r name level n meta extra <<<"$c"
	for f in $(members "$name" "$n"); do
		truncate -s 4M "$f"
		disks+=(--disk "$(basename "$f")=$f")
	done
done
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(11).randbytes(8<<20))' >"$d/pat"
{ echo "PHASE=make MODE=$MODE CASES='$CASES'"; cat "$job"; } >"$d/make.sh"
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 480 "${disks[@]}" --disk pat="$d/pat" \
	--script "$d/make.sh" >"$d/make.log" 2>&1
rc=$?
check "VM: md made the arrays and stopped their copies part-way (rc $rc)" [ "$rc" -eq 0 ]
grep -h '^mdvm: exit status' "$d/make.log" | sed 's/^/# /'
[ "$rc" -eq 0 ] || { tail -40 "$d/make.log"; t_done; }
val() { sed -n "s/^$1=\([0-9a-f]*\).*/\1/p" "$2" | head -1; }
sbval() { "$URAID" examine --json "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['$2'])"; }
mkdir -p "$d/ev"
for c in $CASES; do
	IFS=: read -r name level n meta extra <<<"$c"
	mapfile -t m < <(members "$name" "$n")
	spare=${m[-1]}
	[ "$MODE" = readd ] && spare=${m[1]}
	bytes=$(val "BYTES_$name" "$d/make.log")
	want=$(head -c "$bytes" "$d/pat" | md5sum | cut -d' ' -f1)
	kmd5=$(val "KMD5_$name" "$d/make.log")
	echo "# $name (raid$level $meta): stopped at $(sed -n "s/^PCT_$name=//p" "$d/make.log")%"
	check "$name: the kernel reads the pattern from the half-copied members" [ "$kmd5" = "$want" ]
	sum=$(cat "${m[@]}" | sha256sum)
	"$URAID" cat -o "$d/$name.cat" "${m[@]}" 2>"$d/$name.err"
	got=$(md5sum <"$d/$name.cat" | cut -d' ' -f1)
	check "$name: uraid cat reads what the kernel reads ($got)" [ "$got" = "$kmd5" ]
	check "$name: ... and changes no member" [ "$(cat "${m[@]}" | sha256sum)" = "$sum" ]
	roff=$(val "ROFF_$name" "$d/make.log")
	"$URAID" examine "$spare" >"$d/$name.ex"
	uroff=$(sed -n 's/^ *Recovery Offset : \([0-9]*\) sectors.*/\1/p' "$d/$name.ex")
	if [ "$meta" = 0.90 ]; then
		check "$name: 0.90 records no recovery offset (mdadm, uraid)" [ -z "$roff" -a -z "$uroff" ]
	else
		check "$name: uraid examine shows mdadm's recovery offset ($uroff = $roff)" \
			[ -n "$roff" -a "$uroff" = "$roff" ]
	fi
	krole=$(sed -n "s/^ROLE_$name=//p" "$d/make.log" | head -1)
	urole=$(sed -n 's/^ *Device Role : //p' "$d/$name.ex")
	check "$name: uraid examine shows mdadm's role for the spare ($urole)" [ "$urole" = "$krole" ]
	doff=$(sbval "$spare" data_offset)
	dsize=$(sbval "$spare" data_size)
	# the evidence copy: the spare's copied part (below the offset; 0.90:
	# the first quarter) overwritten with a marker
	for f in "${m[@]}"; do cp "$f" "$d/ev/"; done
	mark=${roff:-$((dsize / 4))}
	python3 - "$d/ev/$(basename "$spare")" "$doff" "$mark" <<'PY'
import sys
f, off, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(f, 'r+b') as fh:
    fh.seek(off * 512)
    fh.write(b'\xa5' * (n * 512))
PY
	mapfile -t ev < <(for f in "${m[@]}"; do echo "$d/ev/$(basename "$f")"; done)
	for set in real ev; do
		if [ $set = real ]; then mm=("${m[@]}"); else mm=("${ev[@]}"); fi
		if ! "$URAID" assemble --name="$name$set" "${mm[@]}" 2>"$d/$name.asm"; then
			fail "$name: uraid assembles the half-copied members ($set): $(cat "$d/$name.asm")"
			continue
		fi
		for _ in $(seq 600); do
			"$URAID" status --json "$name$set" | grep -q '"action":"idle"' && break
			sleep 0.1
		done
		check "$name: uraid finishes the copy ($set)" \
			sh -c "'$URAID' status --json '$name$set' | grep -q '\"action\":\"idle\"'"
		"$URAID" detail "$name$set" >"$d/$name$set.detail"
		"$URAID" stop "$name$set"
	done
	if [ "$MODE" = replace ]; then
		check "$name: after the replace the spare holds slot 1 and member 1 is out" \
			python3 - "$d/${name}real.detail" "$spare" "${m[1]}" <<'PY'
import re, sys
det, spare, old = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
ok = re.search(r'^\s*\d+\s+\d+\s+\d+\s+1\s+active sync\s+' + re.escape(spare) + r'\s*$', det, re.M)
bad = re.search(r'active.*' + re.escape(old) + r'\s*$', det, re.M)
if not ok or bad:
    print(det)
sys.exit(0 if ok and not bad else 1)
PY
	fi
	# what differs between the two spares' data areas after uraid's copy
	diffs=$(cmp -l -i $((doff * 512)) -n $((dsize * 512)) "$spare" "$d/ev/$(basename "$spare")" |
		awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) print int((lo - 1) / 512), int((hi - 1) / 512), NR }')
	if [ "$meta" = 0.90 ]; then
		check "$name: no offset on 0.90: uraid rebuilt the whole spare, as md restarts (diff: ${diffs:-none})" \
			[ -z "$diffs" ]
	else
		read -r lo hi nb <<<"${diffs:-x x 0}"
		check "$name: uraid resumed at the offset: only the part below it kept the marker (${diffs:-none})" \
			python3 -c 'import sys; lo, hi, nb, roff = sys.argv[1:]; sys.exit(not (lo.isdigit() and int(hi) < int(roff) and int(nb) > int(roff) * 512 * 9 // 10))' \
			"$lo" "$hi" "$nb" "$roff"
	fi
	got=$("$URAID" cat "${m[@]}" 2>/dev/null | md5sum | cut -d' ' -f1)
	check "$name: after uraid's copy the pattern reads back" [ "$got" = "$want" ]
done
{ echo "PHASE=verify MODE=$MODE CASES='$CASES'"; cat "$job"; } >"$d/verify.sh"
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 480 --snapshot "${disks[@]}" \
	--script "$d/verify.sh" >"$d/verify.log" 2>&1
rc=$?
check "VM: md assembles what uraid finished (rc $rc)" [ "$rc" -eq 0 ]
grep -h '^mdvm: exit status' "$d/verify.log" | sed 's/^/# /'
[ "$rc" -eq 0 ] || tail -40 "$d/verify.log"
for c in $CASES; do
	IFS=: read -r name level n meta extra <<<"$c"
	bytes=$(val "BYTES_$name" "$d/make.log")
	want=$(head -c "$bytes" "$d/pat" | md5sum | cut -d' ' -f1)
	check "$name: the kernel has nothing left to copy, $n members active and working" \
		sh -c "! grep -q '^BUSY_$name=' '$d/verify.log' &&
			grep -q '^DETAIL_$name: Active Devices : $n$' '$d/verify.log' &&
			grep -q '^DETAIL_$name: Working Devices : $n$' '$d/verify.log'"
	check "$name: the kernel sees the spare as member 1" \
		grep -q "^ROLE_$name=Active device 1$" "$d/verify.log"
	check "$name: the kernel reads the pattern" [ "$(val "KMD5_$name" "$d/verify.log")" = "$want" ]
	check "$name: kernel check: mismatch_cnt 0" grep -q "^MISMATCH_$name=0$" "$d/verify.log"
done
[ -n "${URAID_TEST_KEEP:-}" ] && mkdir -p "$URAID_TEST_KEEP" && cp "$d"/*.log "$URAID_TEST_KEEP/"
t_done
