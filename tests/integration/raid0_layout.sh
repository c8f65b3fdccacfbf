#!/usr/bin/env bash
# md's RAID0 layout word counts only when the superblock's RAID0-layout
# feature bit (4096) is set. Take the kernel-made multi-zone arrays, clear
# that bit (checksum recomputed) and uraid must refuse them, as the kernel
# does, instead of reading them with the stale layout word; the untouched
# members must still read with the kernel's md5.
. "$(dirname "$0")/../lib.sh"
VEC=$TOP/tests/vectors

# clear_raid0_bit IMG: clear feature bit 4096 of the 1.x superblock at sector 8
# (1.2) or 0 (1.1) and rewrite the 1.x checksum (sum of LE u32 words over
# 256 + 2*max_dev bytes with sb_csum zeroed, folded to 32 bits).
clear_raid0_bit() {
	python3 - "$1" <<'PY'
import struct, sys
path = sys.argv[1]
with open(path, 'r+b') as f:
    for off in (8 * 512, 0):
        f.seek(off); sb = bytearray(f.read(4096))
        if struct.unpack_from('<I', sb, 0)[0] == 0xa92b4efc:
            break
    else:
        sys.exit('no 1.1/1.2 superblock in ' + path)
    fm = struct.unpack_from('<I', sb, 8)[0]
    assert fm & 4096, 'feature bit not set to begin with'
    struct.pack_into('<I', sb, 8, fm & ~4096)
    struct.pack_into('<I', sb, 216, 0)
    n = 256 + 2 * struct.unpack_from('<I', sb, 220)[0]
    s = sum(struct.unpack_from('<%dI' % (n // 4), sb, 0))
    if n % 4:
        s += struct.unpack_from('<H', sb, n - 2)[0]
    s = (s & 0xffffffff) + (s >> 32)
    struct.pack_into('<I', sb, 216, s & 0xffffffff)
    f.seek(off); f.write(sb)
PY
}

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
