#!/usr/bin/env bash
# md's RAID0 layout word counts only when the superblock's RAID0-layout
# feature bit (4096) is set. Take the kernel-made multi-zone arrays, clear
# that bit (checksum recomputed) and uraid must refuse them, as the kernel
# does, instead of reading them with the stale layout word; the untouched
# members must still read with the kernel's md5.
. "$(dirname "$0")/../lib.sh"
VEC=$TOP/tests/vectors

# clear_raid0_bit IMG: clear feature bit 4096 of the 1.x superblock (1.2 or
# 1.1), checksum rewritten.
clear_raid0_bit() { python3 "$TOP/tests/md_sb1_edit.py" "$1" 8 '<I' clear 4096; }

for name in r0-mz-orig r0-mz-alt r0-mz-alt-e1.1; do
	md5=$(awk -F'\t' -v n="$name" '$1 == n { print $11 }' "$VEC/MANIFEST.tsv")
	dir=$T_TMP/$name
	mkdir -p "$dir"
	imgs=()
	for x in "$VEC/$name"/m*.img.xz; do
		b=$(basename "$x" .xz)
		xz -dc "$x" >"$dir/$b"
		imgs+=("$dir/$b")
	done
	got=$("$URAID" cat "${imgs[@]}" 2>/dev/null | md5sum | cut -d' ' -f1)
	check "$name with its layout bit reads with the kernel's md5" test "$got" = "$md5"
	for img in "${imgs[@]}"; do clear_raid0_bit "$img" || fail "patch $img"; done
	check "$name patched superblocks still examine as valid" sh -c '"$0" examine "$@" >/dev/null' "$URAID" "${imgs[@]}"
	sums=$(sha256sum "${imgs[@]}")
	if "$URAID" cat "${imgs[@]}" >/dev/null 2>"$T_TMP/err"; then
		fail "$name without the layout bit: read (the kernel refuses it)"
	elif grep -qi 'layout' "$T_TMP/err"; then
		ok "$name without the layout bit: refused: $(head -c 150 "$T_TMP/err")"
	else
		fail "$name without the layout bit: refused, but the message does not name the layout: $(cat "$T_TMP/err")"
	fi
	check "$name members unchanged by the refused read" test "$sums" = "$(sha256sum "${imgs[@]}")"
done
t_done
