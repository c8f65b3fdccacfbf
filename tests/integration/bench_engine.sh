#!/usr/bin/env bash
# `uraid bench engine`: a small run on file members; the JSON rows, their
# figures (non-zero, ratios consistent), clean-up, and refusals.
. "$(dirname "$0")/../lib.sh"

dir=$T_TMP/members
mkdir -p "$dir"
json=$T_TMP/engine.json
check "bench engine --json runs (levels 0,1,5,6,10; 4 members of 8M)" \
	sh -c '"$1" bench engine --members-dir "$2" --members 4 --size 8M --chunk 64K \
	       --rand-ops 800 --json >"$3" 2>"$4"' sh "$URAID" "$dir" "$json" "$T_TMP/err"
check "JSON parses (python3 -m json.tool)" python3 -m json.tool "$json" /dev/null
check "rows: keys, units, every level has seqwrite/seqread/randwrite4k/discard, rebuild and create+resync except raid0, reshape on raid5" \
	python3 - "$json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
want = {"level", "workload", "value", "unit", "ratio"}
units = {"seqwrite": "MB/s", "seqread": "MB/s", "randwrite4k": "IOPS", "rebuild": "MB/s",
         "discard": "MB/s", "create+resync": "MB/s", "reshape": "MB/s"}
seen = {}
for r in rows:
    assert set(r) == want, r
    assert r["workload"] in units, r
    assert r["unit"] == units[r["workload"]], r
    assert r["value"] > 0 and r["ratio"] > 0, r
    seen.setdefault(r["level"], set()).add(r["workload"])
for lv in (0, 1, 5, 6, 10):
    w = {"seqwrite", "seqread", "randwrite4k", "discard"} | ({"rebuild", "create+resync"} if lv else set())
    w |= {"reshape"} if lv == 5 else set()
    assert seen.get(lv) == w, (lv, seen.get(lv))
PY
check "member files removed afterwards" sh -c '[ -z "$(ls -A "$1")" ]' sh "$dir"

check "text report names machine, members and reference" \
	sh -c '"$1" bench engine --members-dir "$2" --members 4 --size 8M --chunk 64K \
	       --rand-ops 400 --levels 5 >"$3" 2>/dev/null &&
	       grep -q "parity " "$3" && grep -q "raw members" "$3" &&
	       grep -q "^raid5 *rebuild" "$3"' sh "$URAID" "$dir" "$T_TMP/out"

# Arrays are created clean over the members' old bytes: the bench must make
# parity right before its partial-stripe writes (RAID5 of 5, 1 MiB chunks:
# each 1 MiB write is one chunk, a read-modify-write keeps a wrong parity
# wrong), or the degraded read-back after the rebuild finds wrong blocks.
check "RAID5 of 5 with 1M chunks: rebuild and degraded read-back right" \
	sh -c '"$1" bench engine --members-dir "$2" --members 5 --size 8M --chunk 1M \
	       --rand-ops 400 --levels 5 >"$3" 2>"$4" && grep -q "^raid5 *rebuild" "$3"' \
	sh "$URAID" "$dir" "$T_TMP/c1m.out" "$T_TMP/c1m.err"

# Members in memory (/dev/shm): after every rebuild row a ceiling row, the
# same reads, XOR and write without an engine; its ratio is rebuild / ceiling.
# Not on members elsewhere ($T_TMP: a disk file system here, or skipped).
shm=$(mktemp -d /dev/shm/uraid-tbe-XXXXXX)
check "bench engine on /dev/shm members: text report" \
	sh -c '"$1" bench engine --members-dir "$2" --members 4 --size 8M --chunk 64K \
	       --rand-ops 400 --levels 1,5,6 >"$3" 2>/dev/null' sh "$URAID" "$shm" "$T_TMP/shm.out"
check "a ceiling row after each rebuild row, positive, ratio = rebuild / ceiling" \
	python3 - "$T_TMP/shm.out" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
rb = [i for i, l in enumerate(lines) if l.split()[1:2] == ["rebuild"]]
assert [lines[i].split()[0] for i in rb] == ["raid1", "raid5", "raid6"], lines
for i in rb:
    r, c = lines[i].split(), lines[i + 1].split()
    assert c[0] == r[0] and c[1] == "ceiling" and c[3] == "MB/s", c
    rebuild, ceiling, ratio = float(r[2]), float(c[2]), float(c[4])
    assert ceiling > 0 and abs(rebuild / ceiling - ratio) < 0.01, (r, c)
PY
check "shm member files removed afterwards" sh -c '[ -z "$(ls -A "$1")" ]' sh "$shm"
rmdir "$shm"
if [ "$(stat -f -c %T "$dir")" != tmpfs ]; then
	check "no ceiling row on members outside memory" \
		sh -c '! grep -q " ceiling " "$1"' sh "$T_TMP/out"
fi

# --sim alone: the rebuild onto modelled disks, against one modelled member
# written alone (ssd-sata at 20x: fast enough for a test).
check "bench engine --sim (rebuild only) --json: rebuild rows of raid1 and raid5" \
	sh -c '"$1" bench engine --sim ssd-sata --time-scale 20 --levels 1,5 --members 4 \
	       --size 8M --chunk 64K --json >"$2" 2>/dev/null' sh "$URAID" "$T_TMP/sim.json"
check "sim rows: rebuild only, positive figures, ratio = value / the same reference" \
	python3 - "$T_TMP/sim.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert sorted(r["level"] for r in rows) == [1, 5], rows
refs = set()
for r in rows:
    assert r["workload"] == "rebuild" and r["unit"] == "MB/s", r
    assert r["value"] > 0 and r["ratio"] > 0, r
    refs.add(r["value"] / r["ratio"])
# One reference (one member written alone); ratios are printed to 3 places.
assert max(refs) / min(refs) < 1.02, refs
PY
check_fails "refuses an unknown disk profile" "$URAID" bench engine --sim nope --size 8M
check_fails "refuses --sim with --bitmap" "$URAID" bench engine --sim ssd-sata --bitmap \
	--size 8M

# --nbd: raid5 on nbdkit memory servers against the same array on files, and
# the transport ceiling of each member set (the members alone, no RAID): the
# bound it implies and the array's figure against it, positive and
# consistent with the ceiling rows; member requests per 4 KiB write counted.
if command -v nbdkit >/dev/null; then
	check "bench engine --nbd --json (4 members of 8M)" \
		sh -c '"$1" bench engine --nbd --members-dir "$2" --members 4 --size 8M \
		       --rand-ops 400 --json >"$3" 2>"$4"' sh "$URAID" "$dir" "$T_TMP/nbd.json" \
		"$T_TMP/nbd.err"
	check "nbd rows: local/nbd figures, transport bounds and ceilings positive, bound = ceiling / member requests" \
		python3 - "$T_TMP/nbd.json" <<'PY'
import json, os, sys
rows = {r["workload"]: r for r in json.load(open(sys.argv[1]))}
assert set(rows) == {"seqwrite", "randwrite4k", "transport-read4k", "transport-write4k",
                     "transport-stripe"}, rows
for w in ("seqwrite", "randwrite4k"):
    r = rows[w]
    for k in ("local", "nbd", "ratio", "local_bound", "nbd_bound", "local_of_bound",
              "nbd_of_bound"):
        assert r[k] > 0, (w, k, r)
    for side in ("local", "nbd"):
        assert abs(r[side] / r[side + "_bound"] - r[side + "_of_bound"]) < 0.01 * r[side + "_of_bound"] + 0.002, r
for k in ("transport-read4k", "transport-write4k", "transport-stripe"):
    r = rows[k]
    assert r["unit"] == "req/s", r
    for f in ("local", "nbd", "local_mbs", "nbd_mbs", "nbd_cpu_us"):
        assert r[f] > 0, (k, f, r)
    # the servers' CPU: their threads' schedstat, where the kernel keeps it
    assert r["nbd_server_cpu_us"] > 0 or not os.path.exists("/proc/self/schedstat"), r
rw = rows["randwrite4k"]
# raid5 of 4, 4 KiB writes: read-modify-write, 2 reads + 2 writes, counted
assert rw["nbd_member_requests"] == 4 and rw["local_member_requests"] == 4, rw
rd, wr = rows["transport-read4k"]["nbd"], rows["transport-write4k"]["nbd"]
bound = 1 / (2 / rd + 2 / wr)
assert abs(rw["nbd_bound"] - bound) < 0.01 * bound, (rw, bound)
seq = rows["seqwrite"]
assert abs(seq["nbd_bound"] - rows["transport-stripe"]["nbd_mbs"] * 3 / 4) < 0.1 + 0.01 * seq["nbd_bound"], seq
PY
	check "bench engine --nbd text report: bound columns and the transport table" \
		sh -c '"$1" bench engine --nbd --members-dir "$2" --members 4 --size 8M \
		       --rand-ops 400 >"$3" 2>/dev/null &&
		       grep -q "nbd-bound" "$3" && grep -q "^nbd randwrite4k .* the transport allows" "$3" &&
		       grep -q "^nbd  *stripe " "$3" && grep -q "^local  *read4k " "$3" &&
		       grep -q "server-cpu" "$3"' \
		sh "$URAID" "$dir" "$T_TMP/nbd.out"
	check "nbd: member files removed afterwards" sh -c '[ -z "$(ls -A "$1")" ]' sh "$dir"
fi

check_fails "refuses 3 members" "$URAID" bench engine --members 3 --members-dir "$dir"
check_fails "refuses a 3K chunk" "$URAID" bench engine --chunk 3K --members-dir "$dir"
check_fails "refuses level 4" "$URAID" bench engine --levels 4 --members-dir "$dir"
check_fails "refuses a missing directory" "$URAID" bench engine --members-dir "$dir/nope" \
	--size 8M
check_fails "refuses a stray argument" "$URAID" bench engine extra
t_done
