#!/usr/bin/env bash
# uraid examine against real md members (shared md-vectors): its text must be
# the `mdadm --examine` recorded inside the VM that made them, and the same as
# the host's mdadm prints; --json carries the same facts; broken members fail
# with a message naming them.
. "$(dirname "$0")/../lib.sh"
VEC=$SHARED/md-vectors
[ -d "$VEC/images" ] || { fail "md-vectors not found at $VEC (set URAID_SHARED)"; t_done; }
MDADM=$(command -v mdadm || echo /sbin/mdadm)
export TZ=UTC

# The FINAL examine block of member i from a console log, without the header
# line and without 0.90's device names (host and VM name disks differently).
log_block() { # log i
	awk -v want="# mdadm --examine /dev/disk-m$2" '
		/=== FINAL/ { final = 1; next }
		final && /^# / { if (on) exit; on = ($0 == want); next }
		on && /^(===|MEMBER_|mdvm)/ { exit }
		on && NR > 0 { print }' "$1" | tail -n +2 | strip_names
}
strip_names() { sed -E 's/^((this|[ 0-9]{4}) +[0-9].*(sync|spare|faulty|removed|active))   \/dev\/.*$/\1/'; }

for dir in "$VEC"/images/*/; do
	arr=$(basename "$dir")
	log=$VEC/logs/$arr.console.log
	rm -f "$T_TMP"/*.img
	members=()
	for x in "$dir"/m*.img.xz; do
		m=$T_TMP/$(basename "$x" .xz)
		xz -dc "$x" >"$m" || fail "$arr: decompress $x"
		members+=("$m")
	done
	i=0
	for m in "${members[@]}"; do
		ours=$("$URAID" examine --homehost mdref "$m")
		rc=$?
		check "$arr m$i: uraid examine exits 0" test $rc -eq 0
		if diff <(log_block "$log" $i) <(printf '%s\n' "$ours" | tail -n +2 | strip_names) \
			>"$T_TMP/diff" 2>&1; then
			ok "$arr m$i: same text as the VM's mdadm --examine"
		else
			fail "$arr m$i: differs from the VM's mdadm --examine"; sed 's/^/# /' "$T_TMP/diff"
		fi
		if [ -x "$MDADM" ]; then
			h=$(hostname)
			if diff <("$MDADM" --examine "$m" 2>&1) <("$URAID" examine --homehost "$h" "$m") \
				>"$T_TMP/diff" 2>&1; then
				ok "$arr m$i: same text as the host's mdadm --examine"
			else
				fail "$arr m$i: differs from host mdadm"; sed 's/^/# /' "$T_TMP/diff"
			fi
		fi
		i=$((i + 1))
	done
	# JSON: one object per member, facts agree with the text
	"$URAID" examine --json --homehost mdref "${members[@]}" >"$T_TMP/j.json"
	check "$arr: --json exits 0" test $? -eq 0
	if python3 - "$T_TMP/j.json" "$log" ${#members[@]} <<'PY'
import json, re, sys
objs = json.load(open(sys.argv[1])); n = int(sys.argv[3])
assert len(objs) == n, (len(objs), n)
log = open(sys.argv[2]).read().split("=== FINAL", 1)[1]
for i, o in enumerate(objs):
    blk = log.split("# mdadm --examine /dev/disk-m%d\n" % i, 1)[1].split("\n# ", 1)[0]
    kv = {m.group(1).strip(): m.group(2).strip() for m in re.finditer(r"^\s*([^:\n]+?) : (.*)$", blk, re.M)}
    assert o["raid_level"] == kv["Raid Level"], (o["raid_level"], kv["Raid Level"])
    assert str(o["raid_devices"]) == kv["Raid Devices"]
    assert str(o["events"]) == kv["Events"]
    assert kv["Checksum"].startswith(o["checksum"] + " ")
    assert kv.get("Array UUID", kv.get("UUID", "")).startswith(o["array_uuid"])
    assert o["state"] == kv["State"]
    if o["version"] != "0.90":
        assert o["version"] == kv["Version"]
        assert str(o["data_offset"]) == kv["Data Offset"].split()[0]
        assert str(o["super_offset"]) == kv["Super Offset"].split()[0]
        assert "Active device %d" % o["role"] == kv["Device Role"]
        assert kv["Array State"].startswith(o["array_state"] + " ")
        assert o["device_uuid"] == kv["Device UUID"]
    if "Layout" in kv:
        assert o["layout_name"] == kv["Layout"], (o["layout_name"], kv["Layout"])
    if "Chunk Size" in kv:
        assert "%dK" % (o["chunk_sectors"] // 2) == kv["Chunk Size"]
PY
	then ok "$arr: --json agrees with the recorded examine"; else fail "$arr: --json"; fi
	last=("${members[@]}")
done

# Mutants: real superblocks with fields changed (level, layout, chunk, sizes,
# roles, features, reshape, flags, names, 0.90 disk states ...) and the
# checksum fixed, on sparse members. The sanitizer build must not trip on
# any of them, and wherever uraid accepts one, its text must be mdadm's
# (skipping those that crash mdadm itself: it divides by zero on some
# raid10 layouts).
mkdir -p "$T_TMP/mut"
cat >"$T_TMP/gen.py" <<'PY'
# Mutated but checksum-valid md superblocks on sparse 8 MiB members.
import os, random, struct, sys
out, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
src = sys.argv[4:]          # real superblock blocks (4 KiB) with their version
rnd = random.Random(seed)
SECT = 16384
def csum1(b):
    maxdev = struct.unpack_from('<I', b, 220)[0]
    ln = 256 + 2 * min(maxdev, 1920)
    s = sum(struct.unpack_from('<I', b, i)[0] for i in range(0, ln - ln % 4, 4) if i != 216)
    if ln % 4: s += struct.unpack_from('<H', b, ln - 2)[0]
    return ((s & 0xffffffff) + (s >> 32)) & 0xffffffff
def csum0(b):
    s = sum(struct.unpack_from('<I', b, i)[0] for i in range(0, 4096, 4) if i != 152)
    return ((s & 0xffffffff) + (s >> 32)) & 0xffffffff
# 1.x fields worth varying: (offset, struct format, interesting values)
F1 = [(8, '<I', [0, 1, 2, 4, 8, 16, 64, 512, 1024, 4096, 0x1003]), (72, '<i', [-1, 0, 1, 4, 5, 6, 10, -4, 7]),
      (76, '<I', [0, 1, 2, 3, 4, 5, 8, 9, 10, 16, 20, 0x102, 0x201, 0x10201, 0x103, 0x301, 99]),
      (80, '<Q', [0, 100, 14336, 16384]), (88, '<I', [0, 8, 128, 1024, 3]), (92, '<I', [1, 2, 3, 4, 5, 9, 40]),
      (96, '<i', [0, 8, -8, 0x00080010]), (100, '<I', [0, 5, 6]), (104, '<Q', [0, 1000, 2**64 - 1]),
      (112, '<i', [0, 1, -1, -3]), (116, '<I', [0, 2, 3, 0x102]), (120, '<I', [0, 128, 256]),
      (124, '<I', [0, 8, 0xfffffff0]), (152, '<Q', [0, 100]), (160, '<I', [0, 1, 3, 4, 7]),
      (184, '<B', [0, 1, 2, 3]), (186, '<H', [0, 8, 1]), (188, '<i', [0, 8, 16, -8, 2000]),
      (200, '<Q', [0, 1, 2**40]), (208, '<Q', [0, 5, 2**64 - 1]), (256, '<H', [0, 1, 5, 0xffff, 0xfffe, 0xfffd]),
      (258, '<H', [0, 1, 2, 0xffff, 0xfffe]), (260, '<H', [0, 2, 3, 0xffff]), (262, '<H', [1, 3, 0xffff, 0xfffd]),
      (264, '<H', [3, 4, 0xffff]), (32, '<32s', [b'host:name', b'x' * 32, b'mdref:a', b''])]
F0 = [(28, '<i', [-1, 0, 1, 4, 5, 6, 10, 3]), (32, '<I', [0, 100, 8128, 8064]), (36, '<I', [0, 4, 30]),
      (40, '<I', [1, 2, 4, 20]), (44, '<I', [0, 3, 127]), (8, '<I', [90, 91]),
      (132, '<I', [0, 1, 2, 3, 0x100]), (136, '<I', [0, 3, 4]), (148, '<I', [0, 1, 5]),
      (156, '<I', [0, 1, 19]), (164, '<I', [0, 19]), (172, '<I', [0, 100, 0xffffffff]),
      (176, '<Q', [0, 2**64 - 1, 4096]), (184, '<I', [5, 6]), (188, '<i', [0, 1, -1]),
      (192, '<I', [0, 3, 0x102]), (196, '<I', [65536, 131072]), (256, '<I', [0, 1, 2, 3, 4, 5, 0x102, 0x201, 0x10201]),
      (260, '<I', [0, 4096, 65536]), (512 + 16, '<I', [0, 1, 2, 4, 6, 0x206]), (3968 + 12, '<I', [0, 1, 3, 5]),
      (3968 + 16, '<I', [0, 1, 2, 6, 0x200]), (3968 + 4, '<I', [0, 8]), (3968 + 8, '<I', [0, 16])]
srcs = []
for s in src:
    ver, path = s.split('=', 1)
    srcs.append((ver, open(path, 'rb').read()))
for i in range(n):
    ver, base = rnd.choice(srcs)
    b = bytearray(base)
    fields = F0 if ver == '0.90' else F1
    for _ in range(rnd.randint(1, 4)):
        off, fmt, vals = rnd.choice(fields)
        struct.pack_into(fmt, b, off, rnd.choice(vals))
    if ver == '0.90':
        struct.pack_into('<I', b, 152, csum0(b)); at = (SECT & ~127) - 128
    else:
        if ver == '1.0': struct.pack_into('<Q', b, 144, (SECT - 16) & ~7); at = (SECT - 16) & ~7
        else: at = 8
        struct.pack_into('<I', b, 216, csum1(b))
    p = os.path.join(out, 'mut%04d.img' % i)
    with open(p, 'wb') as f:
        f.truncate(SECT * 512); f.seek(at * 512); f.write(bytes(b))
PY
C=$TOP/fuzz/corpus/fuzz_md_super
python3 "$T_TMP/gen.py" "$T_TMP/mut" 200 1 1.2="$C/v12-raid5-ls-m3" 1.2="$C/v12-raid10-n2-m1" \
	1.2="$C/v12-linear-3-m0" 0.90="$C/v090-raid5-m0" 1.0="$C/v10-mdadm-raid1-1g" \
	1.1="$C/v11-mdadm-raid10-1g"
check "mutants generated" test "$(ls "$T_TMP"/mut/*.img | wc -l)" -eq 200
"$URAID_ASAN" examine --homehost mdref "$T_TMP"/mut/*.img >"$T_TMP/mut.out" 2>"$T_TMP/mut.err"
rc=$?
check "mutants: sanitizer build exits 0/1 (got $rc)" test $rc -le 1
check_fails "mutants: no sanitizer reports" grep -q "AddressSanitizer\|runtime error" "$T_TMP/mut.err"
check "mutants: most decode" test "$(grep -c '^/' "$T_TMP/mut.out")" -ge 100
if [ -x "$MDADM" ]; then
	same=0 differ=0 h=$(hostname)
	for f in "$T_TMP"/mut/*.img; do
		o=$("$URAID" examine --homehost "$h" "$f" 2>/dev/null) || continue
		t=$(timeout 10 "$MDADM" --examine "$f" 2>&1)
		[ $? -gt 128 ] && continue # mdadm crashed
		if [ "$o" == "$t" ]; then same=$((same + 1)); else
			differ=$((differ + 1))
			echo "# $(basename "$f"):"; diff <(echo "$t") <(echo "$o") | head -6 | sed 's/^/# /'
		fi
	done
	check "mutants: uraid examine == mdadm --examine ($same same, $differ differ)" test $differ -eq 0
fi

# Broken members: corrupt checksum, no superblock, missing file. The good
# member is still printed and the exit status is non-zero.
good=${last[0]}
bad=$T_TMP/bad.img
cp "$good" "$bad"
sbsec=$("$URAID" examine --json "$good" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["super_offset"])')
printf '\x55' | dd of="$bad" bs=1 seek=$((sbsec * 512 + 100)) conv=notrunc status=none
truncate -s 1M "$T_TMP/zero.img"
"$URAID" examine "$good" "$bad" "$T_TMP/zero.img" "$T_TMP/nonexistent.img" >"$T_TMP/out" 2>"$T_TMP/err"
rc=$?
check "broken members: exit non-zero" test $rc -ne 0
check "broken members: good one still printed" grep -q "^$good:" "$T_TMP/out"
check "corrupt checksum named" grep -q "$bad.*checksum" "$T_TMP/err"
check "no superblock named" grep -q "zero.img.*no md superblock" "$T_TMP/err"
check "missing file named" grep -q "nonexistent.img" "$T_TMP/err"
check_fails "corrupt member alone fails" "$URAID" examine "$bad"
check_fails "no arguments fails" "$URAID" examine
t_done
