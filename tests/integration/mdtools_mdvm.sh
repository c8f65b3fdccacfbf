#!/usr/bin/env bash
# md's small verbs against the kernel and mdadm (shared/mdvm, one boot):
# - zero-superblock: copies of the same members (a 1.2 raid1 member, and
#   one holding both a 0.90 and a 1.2 superblock) zeroed by uraid on the
#   host and by mdadm in the guest are byte-identical afterwards; mdadm
#   finds no superblock on the uraid-zeroed ones and creates an array on
#   them;
# - --write-mostly / --failfast written by uraid create (1.2 and 0.90):
#   mdadm --examine reads the flags back (1.x "Flags :" line as uraid
#   examine prints it; 0.90's disk table);
# - status lines: a raid1 resync frozen (resync=PENDING), then read-only,
#   then read-auto ((auto-read-only)) in /proc/mdstat vs `uraid status` for
#   the same steps, and mdadm --detail's State line vs `uraid detail`'s;
# - a raid5 with a write journal: /proc/mdstat's line (the journal's device
#   number) vs `uraid status` of the same array made by uraid create;
# - --re-add of a raid1 member that missed writes, no bitmap: refused by
#   both ("not possible", nothing written), then add recovers it as a spare.
# Normalised: the array's name and member device names (vdX / files).
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
d=$T_TMP/img
mkdir -p "$d" "$T_TMP/u"
cd "$d" || exit 1
mk() { "$URAID" create --run --no-daemon --assume-clean "$@" >/dev/null 2>&1; }
truncate -s 8M z0 z1 v0 v1 f0 f1 g0 g1 p0 p1 j0 j1 j2 jj q0 q1 k0 k1 k2 kj r0 r1 s0 s1
mk --level=1 --raid-devices=2 --name=z z0 z1
mk --level=1 --raid-devices=2 --metadata=0.90 v0 v1
mk --level=1 --raid-devices=2 --metadata=1.2 --name=v --force v0 v1
for x in z v; do cp ${x}0 ${x}u; cp ${x}0 ${x}m; done
check "uraid zero-superblock on the copies" "$URAID" zero-superblock zu vu
cp zu zc && cp vu vc # for mdadm --examine and --create in the guest
mk --level=1 --raid-devices=2 --name=f --failfast f0 --write-mostly --nofailfast f1
mk --level=1 --raid-devices=2 --metadata=0.90 g0 --write-mostly g1
"$URAID" examine f0 f1 >"$T_TMP/u/examine" 2>&1
disks=()
for n in f0 f1 g0 g1 zc zm vc vm p0 p1 j0 j1 j2 jj r0 r1; do disks+=(--disk "$n=$d/$n"); done
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 400 "${disks[@]}" \
	--script "$TOP/tests/integration/mdtools_mdvm.job" >"$T_TMP/vm.log" 2>&1
rc=$?
check "VM: the job ran (rc $rc)" [ "$rc" -eq 0 ]
log=$T_TMP/vm.log
section() { awk -v s="=== $1" '$0 == s {f=1; next} /^=== /{f=0} /^mdvm:/{f=0} /^# /{next} f' "$log"; }

# zero-superblock
check "zero-superblock: a 1.2 member zeroed by uraid = by mdadm (byte for byte)" cmp -s zu zm
check "zero-superblock: 0.90 + 1.2 on one member, uraid = mdadm" cmp -s vu vm
check "mdadm finds no superblock on the uraid-zeroed members" sh -c \
	"grep -q '^EXAMINE-zc-RC=[1-9]' '$log' && grep -q '^EXAMINE-vc-RC=[1-9]' '$log'"
check "mdadm creates an array on them" grep -q '^CREATE-ON-ZEROED-RC=0' "$log"

# write-mostly / failfast read back by mdadm
section "examine f0" | grep ' Flags :' >"$T_TMP/k.f0"
section "examine f1" | grep ' Flags :' >"$T_TMP/k.f1"
check "mdadm --examine: failfast on f0 (1.2)" grep -qx '          Flags : failfast' "$T_TMP/k.f0"
check "mdadm --examine: write-mostly on f1 (1.2)" grep -qx '          Flags : write-mostly' "$T_TMP/k.f1"
check "uraid examine prints the same Flags lines" bash -c \
	"grep ' Flags :' '$T_TMP/u/examine' | cmp -s - <(cat '$T_TMP/k.f0' '$T_TMP/k.f1')"
check "mdadm --examine (0.90): g1 write-mostly in the disk table" sh -c \
	"awk '/^=== examine g1/{f=1;next} /^===/{f=0} f' '$log' |
	 grep -q '^this .*write-mostly'"
check "mdadm --examine (0.90): g0 not write-mostly" sh -c \
	"awk '/^=== examine g0/{f=1;next} /^===/{f=0} f' '$log' | grep '^this ' | grep -vq 'write-mostly'"

# status lines: frozen (resync=PENDING), read-only, read-auto
norm() { # the array's lines of an mdstat text, names normalised
	awk '/ : active/{f=1} /^unused devices/{f=0} f' |
		sed -E 's/^[^ ]+ : /ARRAY : /; s/[A-Za-z0-9_.-]+\[([0-9]+)\]/D[\1]/g'
}
cd "$d" || exit 1
URAID_SYNC_SPEED_MIN=100 URAID_SYNC_SPEED_MAX=100 "$URAID" create --run --level=1 \
	--raid-devices=2 --metadata=1.2 --bitmap=none --name=p q0 q1 >"$T_TMP/p.create" 2>&1 ||
	cat "$T_TMP/p.create"
sleep 1
"$URAID" action p frozen
sleep 0.5
"$URAID" status | norm >"$T_TMP/u.frozen"
"$URAID" detail p | grep ' State :' >"$T_TMP/u.frozen.state"
"$URAID" readonly p
"$URAID" status | norm >"$T_TMP/u.ro"
"$URAID" detail p | grep ' State :' >"$T_TMP/u.ro.state"
"$URAID" readonly --auto p
"$URAID" status | norm >"$T_TMP/u.auto"
"$URAID" stop p
for s in frozen ro auto; do
	section "$s mdstat" | norm >"$T_TMP/k.$s"
	check "status ($s) = /proc/mdstat" cmp -s "$T_TMP/k.$s" "$T_TMP/u.$s"
	diff "$T_TMP/k.$s" "$T_TMP/u.$s" | sed 's/^/# /'
done
check "... the kernel showed resync=PENDING" grep -q 'resync=PENDING' "$T_TMP/k.frozen"
check "... and (auto-read-only)" grep -q '(auto-read-only)' "$T_TMP/k.auto"
for s in frozen ro; do
	section "$s state" >"$T_TMP/k.$s.state"
	check "detail State ($s) = mdadm --detail's" cmp -s "$T_TMP/k.$s.state" "$T_TMP/u.$s.state"
	diff "$T_TMP/k.$s.state" "$T_TMP/u.$s.state" | sed 's/^/# /'
done

# the journal's device number
"$URAID" create --run --assume-clean --level=5 --raid-devices=3 --chunk=64K --metadata=1.2 \
	--name=j --write-journal=kj k0 k1 k2 >"$T_TMP/j.create" 2>&1 || cat "$T_TMP/j.create"
"$URAID" status | norm | head -1 >"$T_TMP/u.journal"
"$URAID" stop j
section "journal mdstat" | norm | head -1 >"$T_TMP/k.journal"
check "journal: status line = /proc/mdstat's (device numbers)" cmp -s "$T_TMP/k.journal" \
	"$T_TMP/u.journal"
diff "$T_TMP/k.journal" "$T_TMP/u.journal" | sed 's/^/# /'
section "journal detail" | grep -E 'journal|Number' | sed 's/^/# mdadm: /'

# re-add of a member that missed writes, no bitmap: md refuses it (nothing
# written), add takes it as a spare; uraid the same on its own raid1
"$URAID" create --run --assume-clean --level=1 --raid-devices=2 --metadata=1.2 --bitmap=none \
	--name=r s0 s1 >"$T_TMP/r.create" 2>&1 || cat "$T_TMP/r.create"
"$URAID" fail r s1 && "$URAID" remove r s1
head -c 256K /dev/urandom | "$URAID" write r
sum=$(sha256sum <s1)
"$URAID" re-add r s1 >"$T_TMP/u.readd" 2>&1
urc=$?
sed 's/^/# uraid: /' "$T_TMP/u.readd"
section "readd" | head -1 | sed 's/^/# /'
check "re-add without bitmap: mdadm refuses it (not possible, rc 1), nothing written" sh -c \
	"grep -q '^READD-RC=1$' '$log' && grep -q '^READD-UNCHANGED$' '$log' &&
	 awk '/^=== readd$/{f=1;next} /^===/{f=0} f' '$log' | grep -q -- '--re-add for /dev/disk-r1 to /dev/md3 is not possible'"
check "... uraid refuses it too (rc $urc), in mdadm's words, s1 unchanged" sh -c \
	"[ $urc -eq 1 ] && grep -q -- '--re-add for [^ ]*/s1 is not possible' '$T_TMP/u.readd' &&
	 [ \"\$(sha256sum <s1)\" = '$sum' ]"
check "... then mdadm --add takes it as a spare, recovered: [2/2]" sh -c \
	"grep -q '^ADD-RC=0$' '$log' && awk '/^=== readd mdstat$/{f=1;next} /^===/{f=0} f' '$log' |
	 grep -q '\\[2/2\\] \\[UU\\]'"
check "... uraid add too" "$URAID" add r s1
for _ in $(seq 100); do "$URAID" status --json r | grep -q '"action":"idle"' && break; sleep 0.1; done
check "... two working members after its recovery" sh -c \
	"'$URAID' detail r | grep -q 'Working Devices : 2' && '$URAID' status r | grep -q '\\[2/2\\] \\[UU\\]'"
"$URAID" stop r
t_done
