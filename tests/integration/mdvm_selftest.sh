#!/usr/bin/env bash
# Proves the real-kernel plumbing (tests/mdvm/check-members.sh on shared/mdvm):
# a committed kernel-made reference array passes with its recorded md5 and
# mismatch_cnt 0 and is not modified; a copy with one corrupted data byte
# fails with a different md5; a copy with one corrupted parity byte keeps the
# md5 but fails on mismatch_cnt.  So a check-members.sh pass means something.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mdvm/lib.sh"
CM=$TOP/tests/mdvm/check-members.sh
VEC=$TOP/tests/vectors
REF=r5-la # raid5 left-asymmetric, 4 members: stripe 0 has D0 D1 D2 on m0..m2, P on m3

if ! mdvm_ready; then
	fail "mdvm is not set up (see the message above); cannot run the kernel checks"
	t_done
fi
line=$(grep "^$REF"$'\t' "$VEC/MANIFEST.tsv")
if [ -z "$line" ]; then
	fail "$REF missing from tests/vectors/MANIFEST.tsv"
	t_done
fi
IFS=$'\t' read -r _ level _ lnum _ _ nmem _ sectors _ md5 doff _ <<<"$line"
check "$REF is the raid5 left-asymmetric on 4 members this test assumes" \
	test "$level:$lnum:$nmem" = "raid5:0:4"
imgs=()
for ((i = 0; i < nmem; i++)); do
	xz -dc "$VEC/$REF/m$i.img.xz" >"$T_TMP/m$i.img" || fail "decompress $REF/m$i"
	imgs+=("$T_TMP/m$i.img")
done
(cd "$T_TMP" && md5sum m*.img >members.md5)

# field VAR FILE: value of VAR= in check-members output
field() { sed -n "s/^$1=//p" "$2" | tail -n 1; }

# ---- the intact reference array
"$CM" --expect-md5 "$md5" --expect-bytes $((sectors * 512)) "${imgs[@]}" >"$T_TMP/good.out" \
	2>"$T_TMP/good.err"
rc=$?
check "intact $REF passes check-members.sh" test $rc -eq 0
[ $rc -eq 0 ] || sed 's/^/# /' "$T_TMP/good.err"
check "intact $REF: md5 of /dev/md0 is the recorded $md5" test "$(field ARRAY_MD5 "$T_TMP/good.out")" = "$md5"
check "intact $REF: mismatch_cnt=0" test "$(field MISMATCH_CNT "$T_TMP/good.out")" = 0
check "--snapshot left the member images unchanged" \
	bash -c "cd '$T_TMP' && md5sum --quiet -c members.md5"

# flip_byte IMG BYTE_OFFSET: invert one byte in place
flip_byte() {
	python3 -c 'import sys
f = open(sys.argv[1], "r+b"); o = int(sys.argv[2]); f.seek(o); b = f.read(1)
f.seek(o); f.write(bytes([b[0] ^ 0xff]))' "$1" "$2"
}

# ---- one data byte wrong (m0, array sector 3): the content changes
cp "$T_TMP/m0.img" "$T_TMP/bad0.img"
flip_byte "$T_TMP/bad0.img" $(((doff + 3) * 512 + 17))
"$CM" --expect-md5 "$md5" "$T_TMP/bad0.img" "${imgs[@]:1}" >"$T_TMP/bad0.out" 2>"$T_TMP/bad0.err"
rc=$?
check "corrupt data byte: check-members.sh fails" test $rc -ne 0
check "corrupt data byte: md5 of /dev/md0 differs from $md5" \
	test -n "$(field ARRAY_MD5 "$T_TMP/bad0.out")" -a "$(field ARRAY_MD5 "$T_TMP/bad0.out")" != "$md5"
check "corrupt data byte: failure message names the md5" grep -q 'md5 .* != expected' "$T_TMP/bad0.err"

# ---- one parity byte wrong (m3 holds P of stripe 0): same content, the check finds it
cp "$T_TMP/m3.img" "$T_TMP/bad3.img"
flip_byte "$T_TMP/bad3.img" $((doff * 512 + 5))
"$CM" --expect-md5 "$md5" "${imgs[@]:0:3}" "$T_TMP/bad3.img" >"$T_TMP/bad3.out" 2>"$T_TMP/bad3.err"
rc=$?
mm=$(field MISMATCH_CNT "$T_TMP/bad3.out")
check "corrupt parity byte: check-members.sh fails" test $rc -ne 0
check "corrupt parity byte: md5 of /dev/md0 still $md5" test "$(field ARRAY_MD5 "$T_TMP/bad3.out")" = "$md5"
check "corrupt parity byte: mismatch_cnt > 0 (got '$mm')" test "${mm:-0}" -gt 0 2>/dev/null
t_done
