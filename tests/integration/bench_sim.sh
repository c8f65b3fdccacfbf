#!/usr/bin/env bash
# Simulated disks under the real engine (issue #9 shapes), loosely: figures
# are model time (a raptor is ~117 MB/s, not the GB/s of memory), RAID5
# sequential reads over 3, 5, 10 raptor-10k-2008 members behind a 680 MB/s
# bus grow from 3 to 5 members and then stay flat, never above the bus.
# Real time at scale 1 on a shared machine: medians of 3, wide margins.
# 96 MiB: every member holds more than a raptor's 8 MiB of read-ahead
# segments, so repeats stream from the platters instead of the cache.
. "$(dirname "$0")/../lib.sh"

json=$T_TMP/one.json
check "one simulated member: seqread in model time, near the profile's 117 MB/s" \
	sh -c '"$1" bench --disk-model raptor-10k-2008 --time-scale 2 --levels 0 --members 1 \
	       --workloads seqread --size 16M --json "$2" >/dev/null 2>&1' sh "$URAID" "$json"
check "  ... 40..125 MB/s (memory would be thousands)" python3 - "$json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))[0]
assert 40 <= r["value"] <= 125, r
PY

json=$T_TMP/r5.json
check "raid5 over 3, 5, 10 raptors on a 680 MB/s bus runs" \
	sh -c '"$1" bench --disk-model raptor-10k-2008 --bus 680 --levels 5 --members 3,5,10 \
	       --chunks 64K --req 4M --workloads seqread --size 96M --repeat 3 \
	       --json "$2" >/dev/null 2>&1' sh "$URAID" "$json"
check "  ... grows 3 -> 5 members (> 1.3x), flattens (10 < 1.8x of 5, linear is 2.25x), under the bus" \
	python3 - "$json" <<'PY'
import json, sys
v = {r["members"]: r["value"] for r in json.load(open(sys.argv[1]))}
print("# raid5 seqread MB/s by members:", v)
assert v[5] > 1.3 * v[3], v
assert v[10] < 1.8 * v[5], v  # linear growth would be 9/4 = 2.25x
assert max(v.values()) <= 680 * 1.05, v
PY
check_fails "refuses a malformed disk model file" sh -c \
	'printf "rate_mbs = fast\n" >"$2/m"; "$1" bench --disk-model "$2/m" --levels 0 \
	 --members 1 --size 4M' sh "$URAID" "$T_TMP"
t_done
