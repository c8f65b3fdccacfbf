#!/usr/bin/env bash
# --overlay against the real kernel (shared/mdvm), two boots. The first makes
# a raid5 whose k3 then k2 dropped out with writes between (md refuses it).
# On the host, through overlays in one directory: a plain assembly is
# refused, `assemble --force --overlay` starts it (k2's event count forced up
# in its overlay only), `attach --overlay` (no --force needed: the overlay
# holds the forced superblocks) takes mkfs.ext4 -d and e2fsck -f -y, and
# `overlay commit` is refused while an array runs on the overlays. The
# sha256 of every member is unchanged until the commit. After it, `cat`
# without overlay reads what the overlay showed (md5), and in the second
# boot the kernel assembles the committed members with no --force and reads
# the same; its own --force of an untouched copy reads what `cat --force
# --overlay` read before any write.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/export_common.bash"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
trap 'export_cleanup; rm -rf "$T_TMP"' EXIT
d=$T_TMP
for i in 0 1 2 3; do truncate -s 16M "$d/k$i"; done
python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(24).randbytes(2<<20))' >"$d/pat"
disks=(--disk pat="$d/pat")
for i in 0 1 2 3; do disks+=(--disk "k$i=$d/k$i"); done
{ echo "MODE=make"; cat "$TOP/tests/integration/overlay_mdvm.job"; } >"$d/make.sh"
"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 "${disks[@]}" --script "$d/make.sh" \
	>"$d/vm1.log" 2>&1
rc=$?
check "VM: raid5 made and broken by k3 then k2 dropping out (rc $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || { grep -E 'mdadm:|md/|!!!' "$d/vm1.log" | head -30; t_done; }
ev() { sed -n "s/^EVENTS_$1=\\([0-9]*\\).*/\\1/p" "$d/vm1.log"; }
check "the kernel left k2 behind k0 and k3 behind k2 ($(ev k0)/$(ev k2)/$(ev k3))" \
	[ "$(ev k2)" -lt "$(ev k0)" -a "$(ev k3)" -lt "$(ev k2)" ]
k=("$d/k0" "$d/k1" "$d/k2" "$d/k3")
for i in 0 1 2 3; do cp "$d/k$i" "$d/o$i"; done # untouched, for the kernel's --force
sums() { sha256sum "$@" | awk '{print $1}' | tr '\n' ' '; }
before=$(sums "${k[@]}")
O=$d/ov

check_fails "assemble --overlay without --force: refused" \
	"$URAID" assemble --name ovk --overlay "$O" "${k[@]}"
"$URAID" cat --force --overlay "$O" -o "$d/forced.cat" "${k[@]}" 2>"$d/catf.err"
check "cat --force --overlay reads it, the first 2 MiB the pattern" \
	cmp -s -n $((2 << 20)) "$d/forced.cat" "$d/pat"
"$URAID" assemble --force --name ovk --overlay "$O" "${k[@]}" 2>"$d/asm.err"
check "assemble --force --overlay starts it" [ -S "$URAID_RUN_DIR/ovk.sock" ]
check "... forcing k2's event count from $(ev k2) up to $(ev k0)" \
	grep -q "forcing event count in $d/k2 (slot 2) from $(ev k2) up to $(ev k0)" "$d/asm.err"
check "... reading what cat --force read" cmp -s "$d/forced.cat" <("$URAID" cat ovk)
check "stop" "$URAID" stop ovk
check "every member unchanged after the forced assembly (sha256)" [ "$(sums "${k[@]}")" = "$before" ]
check "k2's own superblock still has events $(ev k2)" \
	sh -c '"$1" examine "$2" | grep -Eq "Events : $3\$"' sh "$URAID" "$d/k2" "$(ev k2)"
check "overlay status: k2's overlay holds its forced superblock" \
	sh -c '"$1" overlay status "$2" | grep -q "^  $3: holds .* ([1-9][0-9]* bytes)"' \
	sh "$URAID" "$O" "$d/k2"

# The rehearsal as one command, in a second directory: attach (or serve)
# --force --overlay, a write, then discard.
O2=$d/ov2
if [ "$(id -u)" -eq 0 ] && [ -c /dev/fuse ] && command -v nbdfuse >/dev/null &&
	losetup -f >/dev/null 2>&1; then
	L=$("$URAID" attach --force --name ovr --overlay "$O2" "${k[@]}" 2>"$d/attach2.err")
	check "attach --force --overlay: a loop device" [ "${L#/dev/loop}" != "$L" ]
	[ -b "$L" ] || cat "$d/attach2.err"
	check "... reading what cat --force read" cmp -s "$d/forced.cat" "$L"
	check "... a write to it" dd if=/dev/zero of="$L" bs=1M count=4 oflag=direct status=none
	check "detach" "$URAID" detach "$L"
else
	uri=$("$URAID" serve --force --name ovr --overlay "$O2" "${k[@]}" 2>"$d/serve2.err")
	check "serve --force --overlay, reading what cat --force read" \
		sh -c 'nbdcopy "$1" - | cmp -s "$2" -' sh "$uri" "$d/forced.cat"
	check "stop" "$URAID" stop ovr
fi
check "every member unchanged (sha256)" [ "$(sums "${k[@]}")" = "$before" ]
check "overlay discard" "$URAID" overlay discard "$O2"
check "... its overlay files gone" sh -c '! ls "$1"/*.uovl 2>/dev/null | grep -q .' sh "$O2"
check "... every member unchanged (sha256)" [ "$(sums "${k[@]}")" = "$before" ]

# The second assembly continues the overlay: no --force needed any more.
mkdir -p "$d/src"
head -c 3M /dev/urandom >"$d/src/big"
echo "written through the overlay" >"$d/src/note"
if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/fuse ] || ! command -v nbdfuse >/dev/null ||
	! losetup -f >/dev/null 2>&1 || [ ! -f "$URAID_NBDKIT_PLUGIN" ]; then
	# Without attach: the same file system made on the host, written over NBD.
	echo "# attach needs root, /dev/fuse, nbdfuse and loop devices: writing over NBD instead"
	need nbdcopy
	truncate -s "$(stat -c %s "$d/forced.cat")" "$d/fs.img"
	mkfs.ext4 -q -F -d "$d/src" "$d/fs.img"
	uri=$("$URAID" serve --name ovk --overlay "$O" "${k[@]}" 2>"$d/serve.err")
	check "serve --overlay (no --force)" [ -n "$uri" ]
	check "nbdcopy the file system through the overlay" nbdcopy "$d/fs.img" "$uri"
	check "stop" "$URAID" stop ovk
else
	L=$("$URAID" attach --name ovk --overlay "$O" "${k[@]}" 2>"$d/attach.err")
	check "attach --overlay (no --force): a loop device" [ "${L#/dev/loop}" != "$L" ]
	[ -b "$L" ] || cat "$d/attach.err"
	check "mkfs.ext4 -d through the overlay" mkfs.ext4 -q -F -d "$d/src" "$L"
	check "e2fsck -f -y through the overlay" e2fsck -f -y "$L"
	check "detach" "$URAID" detach "$L"
fi
check "every member unchanged after mkfs and fsck (sha256)" [ "$(sums "${k[@]}")" = "$before" ]
"$URAID" cat --overlay "$O" -o "$d/shown.cat" "${k[@]}"
check "host e2fsck -fn: the file system the overlay shows is clean" e2fsck -fn "$d/shown.cat"
check "... and holds the file written" \
	cmp -s "$d/src/big" <(debugfs -R "cat /big" "$d/shown.cat" 2>/dev/null)

# commit: refused while an array runs on the overlays, then done.
check "assemble --overlay again (no --force)" "$URAID" assemble --name ovk --overlay "$O" "${k[@]}"
"$URAID" overlay commit "$O" 2>"$d/busy.err"
check "overlay commit refused while ovk runs on them (rc $?)" \
	grep -q "in use" "$d/busy.err"
check "stop" "$URAID" stop ovk
check "... nothing written by the refused commit (sha256)" [ "$(sums "${k[@]}")" = "$before" ]
check "overlay commit" "$URAID" overlay commit "$O"
check "the overlay files are gone" sh -c '! ls "$1"/*.uovl 2>/dev/null | grep -q .' sh "$O"
check "cat of the members without overlay: md5 = what the overlay showed" \
	[ "$("$URAID" cat "${k[@]}" 2>/dev/null | md5sum)" = "$(md5sum <"$d/shown.cat")" ]

sectors=$(($(stat -c %s "$d/shown.cat") / 512))
disks=()
for s in o k; do for i in 0 1 2 3; do disks+=(--disk "$s$i=$d/$s$i"); done; done
{ echo "MODE=judge SECTORS=$sectors"; cat "$TOP/tests/integration/overlay_mdvm.job"; } \
	>"$d/judge.sh"
"$MDVM" --snapshot --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 240 "${disks[@]}" \
	--script "$d/judge.sh" >"$d/vm2.log" 2>&1
rc=$?
check "VM: the kernel's assemblies ran (rc $rc)" [ "$rc" -eq 0 ]
km() { sed -n "s/^MD5_$1=\\([0-9a-f]*\\).*/\\1/p" "$d/vm2.log"; }
md5of() { md5sum <"$1" | cut -d' ' -f1; }
check "kernel --force of the untouched copy reads what cat --force --overlay read ($(km o))" \
	[ "$(km o)" = "$(md5of "$d/forced.cat")" ]
check "kernel assembles the committed members with no --force, reading what the overlay showed" \
	[ "$(km k)" = "$(md5of "$d/shown.cat")" ]
[ "$rc" -eq 0 ] || grep -E 'mdadm:|md/|!!!|REFUSED' "$d/vm2.log" | head -30
t_done
