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
