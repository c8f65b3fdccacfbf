#!/usr/bin/env bash
# assemble --force and cat --force against the real kernel (shared/mdvm),
# two boots. The first makes arrays whose members dropped out a few events
# apart (raid5: two of four; raid6: three of five, writes in between); md
# then refuses them. uraid must refuse too, naming what --force would do;
# cat --force must read what the kernel's mdadm --assemble --force reads
# (second boot, on the originals) without changing a byte of any member;
# assemble --force must start the array (the freshest dropped member
# forced in) and leave superblocks the kernel assembles with no --force,
# reading the same.
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
for i in 0 1 2 3; do truncate -s 8M "$d/k$i"; done
for i in 0 1 2 3 4; do truncate -s 8M "$d/r$i"; done
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(23).randbytes(2<<20))' >"$d/pat"
disks=(--disk pat="$d/pat")
for i in 0 1 2 3; do disks+=(--disk "k$i=$d/k$i"); done
for i in 0 1 2 3 4; do disks+=(--disk "r$i=$d/r$i"); done
{ echo "MODE=make"; cat "$TOP/tests/integration/force_mdvm.job"; } >"$d/make.sh"
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 "${disks[@]}" --script "$d/make.sh" \
	>"$d/vm1.log" 2>&1
rc=$?
check "VM: raid5 and raid6 made and broken by members dropping out (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { grep -E 'mdadm:|md/|!!!' "$d/vm1.log" | head -30; t_done; }
ev() { sed -n "s/^EVENTS_$1=\\([0-9]*\\).*/\\1/p" "$d/vm1.log"; }
check "the kernel left k2 behind k0 and k3 behind k2 ($(ev k0)/$(ev k2)/$(ev k3))" \
	[ "$(ev k2)" -lt "$(ev k0)" -a "$(ev k3)" -lt "$(ev k2)" ]
check "... and r2 > r3 > r4 behind r0 ($(ev r0)/$(ev r2)/$(ev r3)/$(ev r4))" \
	[ "$(ev r2)" -lt "$(ev r0)" -a "$(ev r3)" -lt "$(ev r2)" -a "$(ev r4)" -lt "$(ev r3)" ]
k=("$d/k0" "$d/k1" "$d/k2" "$d/k3")
r=("$d/r0" "$d/r1" "$d/r2" "$d/r3" "$d/r4")
sha() { cat "$@" | sha256sum | cut -d' ' -f1; }
sum_k=$(sha "${k[@]}")
sum_r=$(sha "${r[@]}")

# Without --force: refused, and the message says what --force would do.
"$URAID" cat "${k[@]}" >/dev/null 2>"$d/refused.err"
rc=$?
check "cat without --force refuses the raid5 (rc $rc)" [ "$rc" -ne 0 ]
check "... naming k2 as what --force would force in" \
	grep -q -- "--force would start it by forcing in $d/k2 (slot 2" "$d/refused.err"
"$URAID" assemble --name fk "${k[@]}" 2>"$d/refused2.err"
check "assemble without --force refuses it too" [ $? -ne 0 -a ! -e "$URAID_RUN_DIR/fk.sock" ]
check "refused: no member changed" [ "$(sha "${k[@]}")" = "$sum_k" ]

# cat --force: read-only, in memory.
"$URAID" cat --force -o "$d/k.cat" "${k[@]}" 2>"$d/catk.err"
check "cat --force reads the raid5 (rc $?)" [ -s "$d/k.cat" ]
check "... saying it forces k2's event count up" \
	grep -q "forcing event count in $d/k2 (slot 2) from $(ev k2) up to $(ev k0)" "$d/catk.err"
check "... the first 2 MiB are the pattern written (some of it while degraded)" \
	cmp -s -n $((2 << 20)) "$d/k.cat" "$d/pat"
"$URAID" cat --force -o "$d/r.cat" "${r[@]}" 2>"$d/catr.err"
check "cat --force reads the raid6: r2 forced in" \
	grep -q "forcing event count in $d/r2 (slot 2)" "$d/catr.err"
check "... the first 1.5 MiB are the pattern" cmp -s -n $((3 << 19)) "$d/r.cat" "$d/pat"
check "cat --force changed no member" \
	[ "$(sha "${k[@]}")" = "$sum_k" -a "$(sha "${r[@]}")" = "$sum_r" ]

# assemble --force on copies: the forced members' superblocks rewritten.
for i in 0 1 2 3; do cp "$d/k$i" "$d/uk$i"; done
for i in 0 1 2 3 4; do cp "$d/r$i" "$d/ur$i"; done
uk=("$d/uk0" "$d/uk1" "$d/uk2" "$d/uk3")
ur=("$d/ur0" "$d/ur1" "$d/ur2" "$d/ur3" "$d/ur4")
for set in uk ur; do
	eval "members=(\"\${$set[@]}\")"
	if "$URAID" assemble --force --name "f$set" "${members[@]}" 2>"$d/asm_$set.err"; then
		ok "assemble --force starts $set"
		"$URAID" cat "f$set" >"$d/$set.cat"
		check "... and reads what cat --force read" cmp -s "$d/$set.cat" "$d/${set#u}.cat"
		"$URAID" stop "f$set"
	else
		fail "assemble --force starts $set: $(cat "$d/asm_$set.err")"
	fi
done
"$URAID" examine "$d/uk2" >"$d/uk2.examine"
check "the forced member's superblock carries the array's events now" \
	sh -c "grep -Eq 'Events : [0-9]+' '$d/uk2.examine' &&
	       [ \$(sed -n 's/^ *Events : //p' '$d/uk2.examine') -gt $(ev k2) ]"

# The kernel: --force on the originals; no --force on uraid's copies.
sectors_k=$(($(stat -c %s "$d/k.cat") / 512))
sectors_r=$(($(stat -c %s "$d/r.cat") / 512))
disks=()
for s in k uk; do for i in 0 1 2 3; do disks+=(--disk "$s$i=$d/$s$i"); done; done
for s in r ur; do for i in 0 1 2 3 4; do disks+=(--disk "$s$i=$d/$s$i"); done; done
{ echo "MODE=judge SECTORS_k=$sectors_k SECTORS_r=$sectors_r"
  cat "$TOP/tests/integration/force_mdvm.job"; } >"$d/judge.sh"
"$MDVM" --snapshot --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 "${disks[@]}" \
	--script "$d/judge.sh" >"$d/vm2.log" 2>&1
rc=$?
check "VM: the kernel's assemblies ran (rc $rc)" [ "$rc" -eq 0 ]
md5of() { md5sum <"$1" | cut -d' ' -f1; }
km() { sed -n "s/^MD5_$1=\\([0-9a-f]*\\).*/\\1/p" "$d/vm2.log"; }
check "kernel --force reads the raid5 exactly as uraid cat --force ($(km k))" \
	[ "$(km k)" = "$(md5of "$d/k.cat")" ]
check "kernel --force reads the raid6 exactly as uraid cat --force ($(km r))" \
	[ "$(km r)" = "$(md5of "$d/r.cat")" ]
check "kernel assembles uraid's forced raid5 with no --force, same content" \
	[ "$(km uk)" = "$(md5of "$d/k.cat")" ]
check "kernel assembles uraid's forced raid6 with no --force, same content" \
	[ "$(km ur)" = "$(md5of "$d/r.cat")" ]
grep -E '^mdadm: (forcing|clearing|Marking|/dev/md0 has been started)' "$d/vm2.log" | sed 's/^/# /'
[ "$rc" -eq 0 ] || grep -E 'mdadm:|md/|!!!|REFUSED' "$d/vm2.log" | head -30
t_done
