#!/usr/bin/env bash
# --overlay from the command line, host only: writes over NBD through
# `serve --overlay` (nbdcopy, qemu-io) leave every member's sha256 as it was
# and read back through the overlay; `overlay discard` drops them (members
# unchanged, files gone); and bad input is refused with an error naming the
# problem and nothing written to any member (sha256 of all of them before
# and after): an overlay directory others can write or that belongs to
# another user, an overlay file of another member or of another array, one
# whose member changed, a truncated or damaged header, a truncated map.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/export_common.bash"
need nbdcopy qemu-io
trap 'export_cleanup; rm -rf "$T_TMP"' EXIT
D=$T_TMP/m
mkdir -p "$D"
A=("$D"/a0 "$D"/a1 "$D"/a2)
B=("$D"/b0 "$D"/b1 "$D"/b2)
sums() { sha256sum "$@" | awk '{print $1}' | tr '\n' ' '; }
for set in a b; do
	eval "mm=(\"\${${set^^}[@]}\")"
	check "create raid5 $set on 3 8M members" "$URAID" create --level=5 --raid-devices=3 \
		--chunk=64K --size=8M --assume-clean --name="ov$set" --no-daemon "${mm[@]}"
done
size=$("$URAID" cat "${A[@]}" | wc -c)
head -c "$size" /dev/urandom >"$T_TMP/want"
check "fill a" sh -c '"$1" assemble "$2" "$3" "$4" 2>/dev/null && "$1" write ova --offset 0 <"$5" &&
	"$1" stop ova' sh "$URAID" "${A[@]}" "$T_TMP/want"
before=$(sums "${A[@]}" "${B[@]}")
unchanged() { [ "$(sums "${A[@]}" "${B[@]}")" = "$before" ]; }

# 1. serve --overlay: NBD writes go to the overlay only.
O=$T_TMP/ov
uri=$("$URAID" serve --overlay "$O" "${A[@]}" 2>"$T_TMP/serve.err")
check "serve --overlay prints an NBD URI" [ -n "$uri" ]
[ -n "$uri" ] || cat "$T_TMP/serve.err"
head -c 1M /dev/urandom >"$T_TMP/w1"
check "nbdcopy 1 MiB to offset 0 of the export" nbdcopy "$T_TMP/w1" "$uri"
qemu-io -f raw -c "write -P 0x5a 5M 64k" "$uri" >/dev/null 2>&1
check "qemu-io writes 64 KiB of 0x5a at 5 MiB" \
	sh -c 'qemu-io -f raw -c "read -P 0x5a 5M 64k" "$1" | grep -q "read 65536/65536"' sh "$uri"
check "status names the overlay" sh -c '"$1" status --verbose ova | grep -q "overlay $2"' sh "$URAID" "$O"
check "overlay status: in use while served" \
	sh -c '"$1" overlay status "$2" | grep -q "in use by a running array"' sh "$URAID" "$O"
check_fails "overlay discard is refused while served" "$URAID" overlay discard "$O"
check "stop" "$URAID" stop ova
check "every member unchanged (sha256)" unchanged
cp "$T_TMP/want" "$T_TMP/want1"
python3 - "$T_TMP/want1" "$T_TMP/w1" <<'PY'
import sys
f = open(sys.argv[1], "r+b")
f.write(open(sys.argv[2], "rb").read())
f.seek(5 << 20)
f.write(b"\x5a" * 65536)
PY
check "cat --overlay shows both writes" cmp -s "$T_TMP/want1" <("$URAID" cat --overlay "$O" "${A[@]}")
check "cat without it the members' old data" cmp -s "$T_TMP/want" <("$URAID" cat "${A[@]}")
uri=$("$URAID" serve --overlay "$O" "${A[@]}" 2>/dev/null)
check "serve --overlay again: the export continues the overlay" \
	sh -c 'nbdcopy "$1" - | cmp -s "$2" -' sh "$uri" "$T_TMP/want1"
check "stop" "$URAID" stop ova
# A running array taken over by serve keeps its overlays; another DIR, or
# --force, is refused.
# rdonly_fds PID: every descriptor PID holds on a member is O_RDONLY (its
# fdinfo flags, octal, & 3 == 0), and it holds at least one per member.
rdonly_fds() {
	local n=0 fd t fl
	for fd in /proc/"$1"/fd/*; do
		t=$(readlink "$fd") || continue
		case " ${A[*]} " in *" $t "*) ;; *) continue ;; esac
		fl=$(sed -n 's/^flags:[[:space:]]*//p' /proc/"$1"/fdinfo/"${fd##*/}")
		[ $((8#$fl & 3)) -eq 0 ] || { echo "# $t open with flags $fl" >&2; return 1; }
		n=$((n + 1))
	done
	[ "$n" -ge ${#A[@]} ]
}
"$URAID" assemble --overlay "$O" "${A[@]}" 2>"$T_TMP/asm.err"
check "assemble --overlay, then serve ova (takeover)" [ -S "$URAID_RUN_DIR/ova.sock" ]
dpid=$(sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' "$T_TMP/asm.err")
check "the daemon holds every member O_RDONLY (/proc/$dpid/fdinfo)" rdonly_fds "$dpid"
refused "serve --overlay ANOTHER ova is refused" "runs on the overlays in" \
	"$URAID" serve --overlay "$T_TMP/elsewhere" ova
refused "serve --force ova is refused" "force is for member files" "$URAID" serve --force ova
uri=$("$URAID" serve ova 2>"$T_TMP/takeover.err")
check "... served" [ -n "$uri" ]
[ -n "$uri" ] || cat "$T_TMP/takeover.err"
check "nbdkit holds every member O_RDONLY" rdonly_fds "$(cat "$URAID_RUN_DIR/ova.nbdkit.pid")"
check "... still on the overlays (detail)" \
	sh -c '"$1" detail --verbose ova | grep -q "overlay : $2"' sh "$URAID" "$O"
qemu-io -f raw -c "write -P 0x33 6M 4k" "$uri" >/dev/null 2>&1
check "stop" "$URAID" stop ova
check "every member unchanged (sha256)" unchanged
printf '\x33%.0s' $(seq 4096) | dd of="$T_TMP/want1" bs=4096 seek=$((6 << 8)) conv=notrunc status=none
check "cat --overlay shows the write made after the takeover" \
	cmp -s "$T_TMP/want1" <("$URAID" cat --overlay "$O" "${A[@]}")
# A member added later gets an overlay too: the recovery onto it, a
# blank file, is written to its overlay only.
truncate -s 8M "$D/a3"
sum_a3=$(sums "$D/a3")
check "assemble --overlay; fail a2, add a3 (blank)" sh -c '"$1" assemble --overlay "$2" "$3" "$4" "$5" 2>/dev/null &&
	"$1" fail ova "$5" && "$1" add ova "$6"' sh "$URAID" "$O" "${A[@]}" "$D/a3"
for _ in $(seq 300); do
	"$URAID" status --json ova | grep -q '"action":"idle"' && break
	sleep 0.1
done
check "... the recovery onto a3 ends, a3 in sync" \
	sh -c '"$1" detail ova | grep -q "active sync.*$2"' sh "$URAID" "$D/a3"
check "... the array reads what it held" cmp -s "$T_TMP/want1" <("$URAID" cat ova)
check "stop" "$URAID" stop ova
check "every member and a3 unchanged (sha256)" \
	[ "$(sums "${A[@]}" "${B[@]}" "$D/a3")" = "$before$sum_a3" ]
check "a3's overlay holds what the recovery wrote" \
	sh -c '"$1" overlay status "$2" | grep -q "^  $3: holds .* ([1-9][0-9]* bytes)"' \
	sh "$URAID" "$O" "$D/a3"
check "cat --overlay of a0 a1 a3 (a2 failed in the overlay) reads the same" \
	cmp -s "$T_TMP/want1" <("$URAID" cat --overlay "$O" "${A[0]}" "${A[1]}" "$D/a3" 2>/dev/null)
check "overlay status prints bytes held per member" \
	sh -c '[ "$("$1" overlay status "$2" | grep -c "holds .* ([1-9][0-9]* bytes) of 8.00 MiB")" = 4 ]' \
	sh "$URAID" "$O"

# 2. bad input. Each: refused, its message naming the problem, no member changed.
refused() { # NAME PATTERN CMD...: CMD fails, stderr matches PATTERN
	local n=$1 pat=$2
	shift 2
	if "$@" >/dev/null 2>"$T_TMP/err"; then
		fail "$n (expected failure)"
	elif ! grep -q -- "$pat" "$T_TMP/err"; then
		fail "$n: message does not match '$pat': $(cat "$T_TMP/err")"
	else
		ok "$n: $(head -c 300 "$T_TMP/err" | tr '\n' ' ')"
	fi
}
U=$T_TMP/untrusted
mkdir -m 0777 "$U"
refused "an overlay directory others can write" "$U.*writ" \
	"$URAID" assemble --overlay "$U" "${A[@]}"
chmod 0700 "$U"
chown nobody "$U"
refused "an overlay directory of another user" "$U.*uid\|$U.*own" \
	"$URAID" cat --overlay "$U" "${A[@]}"
refused "... overlay commit there" "$U.*uid\|$U.*own" "$URAID" overlay commit "$U"
check "... no overlay file made there" sh -c '! ls "$1" | grep -q .' sh "$U"

# An overlay of array b's member in a's directory.
OB=$T_TMP/ovb
check "b through its own overlays: write, stop" \
	sh -c '"$1" assemble --overlay "$2" "$3" "$4" "$5" 2>/dev/null &&
	"$1" write ovb --offset 0 <"$6" && "$1" stop ovb' sh "$URAID" "$OB" "${B[@]}" "$T_TMP/w1"
O2=$T_TMP/ov2
cp -a "$O" "$O2"
cp "$(ls "$OB"/*.uovl | head -1)" "$O2/"
refused "a directory holding an overlay of another array: assemble" "another array" \
	"$URAID" assemble --overlay "$O2" "${A[@]}"
refused "... overlay commit" "two arrays" "$URAID" overlay commit "$O2"
check "... status names the arrays" \
	sh -c '"$1" overlay status "$2" | grep -q "array md:"' sh "$URAID" "$O2"
rm -rf "$O2"

# An overlay file named as another member's (files swapped).
cp -a "$O" "$O2"
f=($(ls "$O2"/*.uovl))
mv "${f[0]}" "$O2/tmp" && mv "${f[1]}" "${f[0]}" && mv "$O2/tmp" "${f[1]}"
refused "overlay files of two members swapped: cat --overlay" "overlay of another member" \
	"$URAID" cat --overlay "$O2" "${A[@]}"
rm -rf "$O2"

# The member an overlay was made of changed since (someone assembled it
# without the overlay, or another image was copied in its place).
cp -a "$O" "$O2"
cp -p "${A[0]}" "$T_TMP/a0.keep"
cp "${A[1]}" "${A[0]}"
changed_a0=$(sums "${A[@]}")
refused "a member replaced since its overlay was made: assemble" "changed since" \
	"$URAID" assemble --overlay "$O2" "${A[@]}"
refused "... overlay commit" "changed since" "$URAID" overlay commit "$O2"
check "... overlay status names the problem" \
	sh -c '"$1" overlay status "$2" | grep -q "changed since"' sh "$URAID" "$O2"
check "... nothing written to a member" [ "$(sums "${A[@]}")" = "$changed_a0" ]
cp -p "$T_TMP/a0.keep" "${A[0]}"
check "... put back as it was (cp -p), the overlay fits again" \
	cmp -s "$T_TMP/want1" <("$URAID" cat --overlay "$O2" "${A[@]}")
rm -rf "$O2"

# Damaged overlay files.
damage() { # WHAT CMD...: a copy of the overlays, the first file damaged by CMD
	rm -rf "$O2"
	cp -a "$O" "$O2"
	f=$(ls "$O2"/*.uovl | head -1)
	"$@" "$f"
}
flip() { printf '\xff' | dd of="$2" bs=1 seek="$1" conv=notrunc status=none; }
damage truncate -s 100
refused "an overlay file truncated inside its header: assemble" "too small for an overlay" \
	"$URAID" assemble --overlay "$O2" "${A[@]}"
refused "... overlay commit" "too small\|not an overlay" "$URAID" overlay commit "$O2"
damage flip 130
refused "an overlay header with a flipped byte: cat" "header damaged (checksum)" \
	"$URAID" cat --overlay "$O2" "${A[@]}"
refused "... overlay commit" "header damaged (checksum)" "$URAID" overlay commit "$O2"
refused "... overlay discard of it too (it cannot be read)" "damaged" \
	"$URAID" overlay discard "$O2"
damage flip 0
refused "an overlay file without its magic: serve" "not an overlay\|no overlay header" \
	"$URAID" serve --overlay "$O2" "${A[@]}"
damage truncate -s 6000
refused "an overlay file truncated inside its map: assemble" "truncated to 6000 bytes" \
	"$URAID" assemble --overlay "$O2" "${A[@]}"
refused "... overlay commit" "truncated to 6000 bytes" "$URAID" overlay commit "$O2"
rm -rf "$O2"
check "no member changed by any refused command (sha256)" unchanged
check "no array left running" sh -c '! ls "$1"/*.sock 2>/dev/null | grep -q .' sh "$URAID_RUN_DIR"

# 3. discard
check "overlay discard" "$URAID" overlay discard "$O"
check "... the overlay files are gone" sh -c '! ls "$1"/*.uovl 2>/dev/null | grep -q .' sh "$O"
check "... every member unchanged (sha256)" unchanged
check "... the members read as before" cmp -s "$T_TMP/want" <("$URAID" cat "${A[@]}")
refused "overlay commit of an empty directory" "holds no overlay" "$URAID" overlay commit "$O"
t_done
