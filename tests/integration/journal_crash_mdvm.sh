#!/usr/bin/env bash
# md's write journal left dirty by a crash, judged by the kernel (shared/mdvm,
# two boots): md makes raid5, raid6 and raid4 arrays with a write-back journal and a
# raid5 with a write-through one, writes a pattern and 4 KiB pieces over it
# (fsync'd: in write-back they live in the journal), starts one more write
# on the write-through array and the VM crashes (sysrq b) with the arrays
# running. On the host:
#  - the members without the journal lack the write-back data (the test has
#    teeth);
#  - uraid cat (read-only: the log replayed in memory) == what the kernel
#    read before the crash == what the kernel reads after its own replay of
#    a copy of the crashed images (second boot), and no member (journal
#    included) changes;
#  - uraid assemble (read-write) replays the log on the members; stopped,
#    the kernel assembles them (their superblocks clean) and reads the same,
#    a check gives mismatch_cnt 0.
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
job=$TOP/tests/integration/journal_crash_mdvm.job
# name:level:members:journal mode
CASES="p:5:3:wb q:6:4:wb r:4:3:wb w:5:3:wt"
SCATTER="3 26 49 72 95 118 141 164 187 210 233 256 279 302 325 348"
members() { # NAME N: the journal, then the members
	echo "$d/$1j"
	for ((k = 0; k < $2; k++)); do echo "$d/$1$k"; done
}
disks=()
for c in $CASES; do
	IFS=: read -r name level n mode <<<"$c"
	for f in $(members "$name" "$n"); do
		truncate -s 4M "$f"
		disks+=(--disk "$(basename "$f")=$f")
	done
done
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(12).randbytes(16<<20))' >"$d/pat"
{ echo "PHASE=make CASES='$CASES' SCATTER='$SCATTER'"; cat "$job"; } >"$d/make.sh"
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 "${disks[@]}" --disk pat="$d/pat" \
	--script "$d/make.sh" >"$d/make.log" 2>&1
rc=$?
grep -h '^mdvm: exit status' "$d/make.log" | sed 's/^/# /'
check "VM: md made the journaled arrays, wrote, crashed (rc $rc: no job status)" \
	sh -c "[ $rc -eq 125 ] && grep -q '^CRASH at' '$d/make.log' && ! grep -q '^MDVM-RC=' '$d/make.log'"
[ "$rc" -eq 125 ] || { tail -40 "$d/make.log"; t_done; }
val() { sed -n "s/^$1=\([0-9a-f]*\).*/\1/p" "$2" | head -1; }
mkdir -p "$d/b"
: >"$d/acat"
for c in $CASES; do
	IFS=: read -r name level n mode <<<"$c"
	mapfile -t m < <(members "$name" "$n")
	cat "${m[@]}" >>"$d/acat"
	bytes=$(val "BYTES_$name" "$d/make.log")
	# the expected content: the pattern, the scattered pieces over it
	python3 - "$d/pat" "$bytes" "$SCATTER" >"$d/$name.want" <<'PY'
import sys
pat = open(sys.argv[1], 'rb').read()
n = int(sys.argv[2])
img = bytearray(pat[:n])
for b in map(int, sys.argv[3].split()):
    img[b * 4096:(b + 1) * 4096] = pat[(2048 + b) * 4096:(2049 + b) * 4096]
sys.stdout.buffer.write(img)
PY
	want=$(md5sum <"$d/$name.want" | cut -d' ' -f1)
	check "$name: the kernel read what was written before the crash" \
		[ "$(val "KMD5_$name" "$d/make.log")" = "$want" ]
	sum=$(cat "${m[@]}" | sha256sum)
	"$URAID" cat -o "$d/$name.nolog" "${m[@]:1}" 2>/dev/null
	if [ "$mode" = wb ]; then
		check "$name: the members without the journal lack what was written (teeth)" \
			sh -c "! cmp -s '$d/$name.nolog' '$d/$name.want'"
	fi
	"$URAID" cat -o "$d/$name.cat" "${m[@]}" 2>"$d/$name.err"
	check "$name: uraid cat (read-only) of the crashed members" [ -s "$d/$name.cat" ]
	[ "$mode" = wb ] && check "$name: ... replays the journal in memory: what was written reads back" \
		cmp -s "$d/$name.cat" "$d/$name.want"
	check "$name: ... and changes no member, the journal neither" [ "$(cat "${m[@]}" | sha256sum)" = "$sum" ]
	for f in "${m[@]}"; do cp "$f" "$d/b/"; done
	mapfile -t b < <(for f in "${m[@]}"; do echo "$d/b/$(basename "$f")"; done)
	if ! "$URAID" assemble --name="$name" "${b[@]}" 2>"$d/$name.asm"; then
		fail "$name: uraid assembles the crashed members: $(cat "$d/$name.asm")"
		continue
	fi
	ok "$name: uraid assembles the crashed members (read-write: replays the log)"
	for _ in $(seq 300); do
		"$URAID" status --json "$name" | grep -q '"action":"idle"' && break
		sleep 0.1
	done
	got=$("$URAID" cat "$name" | md5sum | cut -d' ' -f1)
	check "$name: after uraid's replay the array reads what the read-only cat read" \
		[ "$got" = "$(md5sum <"$d/$name.cat" | cut -d' ' -f1)" ]
	"$URAID" stop "$name"
done
bdisks=()
for c in $CASES; do
	IFS=: read -r name level n mode <<<"$c"
	for f in $(members "$name" "$n"); do bdisks+=(--disk "$(basename "$f")=$d/b/$(basename "$f")"); done
done
{ echo "PHASE=verify CASES='$CASES'"; cat "$job"; } >"$d/verify.sh"
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 --snapshot "${bdisks[@]}" --disk acat="$d/acat" \
	--put-exe "$(command -v dmsetup)" --script "$d/verify.sh" >"$d/verify.log" 2>&1
rc=$?
grep -h '^mdvm: exit status' "$d/verify.log" | sed 's/^/# /'
check "VM: md replays its log on a copy of the crashed members, assembles uraid's (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || tail -40 "$d/verify.log"
grep -iE 'recover|journal|replay' "$d/verify.log" | grep -v '^#' | head -6 | sed 's/^/# /'
for c in $CASES; do
	IFS=: read -r name level n mode <<<"$c"
	cat_md5=$(md5sum <"$d/$name.cat" | cut -d' ' -f1)
	check "$name: uraid cat == what the kernel reads after its own replay ($cat_md5)" \
		[ "$(val "RMD5_$name" "$d/verify.log")" = "$cat_md5" ]
	check "$name: kernel check after its replay: mismatch_cnt 0" grep -q "^RMISMATCH_$name=0$" "$d/verify.log"
	check "$name: uraid left the members clean" grep -q "^BSTATE_$name=clean" "$d/verify.log"
	check "$name: the kernel reads the same from uraid's replayed members" \
		[ "$(val "BMD5_$name" "$d/verify.log")" = "$cat_md5" ]
	check "$name: kernel check of uraid's replay: mismatch_cnt 0" grep -q "^BMISMATCH_$name=0$" "$d/verify.log"
done
[ -n "${URAID_TEST_KEEP:-}" ] && mkdir -p "$URAID_TEST_KEEP" && cp "$d"/*.log "$d"/*.err "$URAID_TEST_KEEP/"
t_done
