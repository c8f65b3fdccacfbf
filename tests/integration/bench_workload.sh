#!/usr/bin/env bash
# `uraid bench --levels ...` sweeps: the cross product (with skipped combos),
# every workload's bytes, the reports (table, chart, CSV, JSON, SVG) and
# refusals. Small sizes: seconds in all.
. "$(dirname "$0")/../lib.sh"

out=$T_TMP/out
csv=$T_TMP/r.csv
json=$T_TMP/r.json
svg=$T_TMP/svg
check "sweep: raid0/1/5/6 x 3,4 members x 32K,64K x ls,la, all workloads, memory members" \
	sh -c '"$1" bench --mem --levels 0,1,5,6 --members 3,4 --chunks 32K,64K --layouts ls,la \
	       --workloads seqwrite,seqread,readers=1-3,randrw,rewrite --size 4M --ops 200 \
	       --repeat 2 --baseline --chart --csv "$2" --json "$3" --svg "$4" >"$5" 2>"$6"' \
	sh "$URAID" "$csv" "$json" "$svg" "$out" "$T_TMP/err"
check "notes: raid6 on 3 members skipped, raid1 chunks and layouts do not apply" \
	sh -c 'grep -q "skipping raid6 with 3 members" "$1" && grep -q "raid1: chunks and layouts" "$1" &&
	       grep -q "raid0: layouts do not apply" "$1"' sh "$T_TMP/err"
check "header: exact command, CPU, parity backend" \
	sh -c 'head -1 "$1" | grep -q "^# uraid bench --mem --levels 0,1,5,6 " &&
	       sed -n 2p "$1" | grep -q "CPUs, parity "' sh "$out"
check "ASCII chart: labels like raid5[64,ls]x4 with the value at the bar end" \
	grep -Eq '^ +raid5\[64,ls\]x4 \|#* [0-9]+\.[0-9]$' "$out"

# Expected configs, computed independently of the tool: baseline, raid0 2x2,
# raid1 2, raid5 2x2x2, raid6 (4 members only) 2x2.
check "JSON: one row per config x workload, bytes moved = bytes requested, values > 0" \
	python3 - "$json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
wl = ["seqwrite", "seqread", "readers=1", "readers=2", "readers=3", "randrw-qd1",
      "randrw-qd16", "rewrite"]
configs = ["baseline"]
for n in (3, 4):
    for c in (32, 64):
        configs.append("raid0[%d]x%d" % (c, n))
for n in (3, 4):
    configs.append("raid1x%d" % n)
for lv, ns in ((5, (3, 4)), (6, (4,))):
    for n in ns:
        for c in (32, 64):
            for l in ("ls", "la"):
                configs.append("raid%d[%d,%s]x%d" % (lv, c, l, n))
got = sorted((r["config"], r["workload"]) for r in rows)
want = sorted((c, w) for c in configs for w in wl)
assert got == want, (set(got) ^ set(want))
for r in rows:
    assert r["value"] > 0, r
    assert r["bytes"] == r["requested"] and r["bytes"] > 0, r
    assert r["repeats"] == 2 and r["spread"] >= 0, r
    assert r["unit"] == ("IOPS" if r["workload"].startswith("randrw") else "MB/s"), r
    if r["config"] == "baseline":
        assert abs(r["ratio"] - 1) < 1e-9, r
    else:
        base = [b for b in rows if b["config"] == "baseline" and b["workload"] == r["workload"]][0]
        assert abs(r["ratio"] - r["value"] / base["value"]) < 1e-3 * max(1, r["ratio"]), r
    if r["workload"] == "readers=1":
        assert r["finish_spread"] == 0, r
    if r["workload"] == "rewrite":  # 31 x (cp a b; cat b > a): 62 copies of a 2 MiB file
        assert r["bytes"] == 62 * 2 * 1024 * 1024, r
PY
check "CSV: the header's columns, every row that wide, same rows as JSON" \
	python3 - "$csv" "$json" <<'PY'
import csv, json, sys
rd = list(csv.reader(open(sys.argv[1])))
hdr = rd[0]
assert hdr == ["config", "level", "members", "chunk_kib", "layout", "workload", "value", "unit",
               "spread", "finish_spread", "latency_us", "ratio", "bytes", "requested",
               "repeats"], hdr
js = json.load(open(sys.argv[2]))
assert len(rd) - 1 == len(js)
for row, j in zip(rd[1:], js):
    assert len(row) == len(hdr), row
    d = dict(zip(hdr, row))
    assert d["config"] == j["config"] and d["workload"] == j["workload"]
    assert abs(float(d["value"]) - j["value"]) < 1e-2, (d, j)
PY
check "SVG: one file per workload, parses as XML, one bar per config" \
	python3 - "$svg" "$json" <<'PY'
import json, os, sys, xml.dom.minidom
js = json.load(open(sys.argv[2]))
wls = sorted({r["workload"] for r in js})
files = sorted(os.listdir(sys.argv[1]))
assert files == sorted(w.replace("=", "_") + ".svg" for w in wls), files
for w in wls:
    d = xml.dom.minidom.parse(os.path.join(sys.argv[1], w.replace("=", "_") + ".svg"))
    bars = [r for r in d.getElementsByTagName("rect") if r.getAttribute("class") == "bar"]
    n = sum(1 for r in js if r["workload"] == w)
    assert len(bars) == n, (w, len(bars), n)
    labels = [t.firstChild.data for t in d.getElementsByTagName("text") if t.firstChild]
    for r in js:
        if r["workload"] == w:
            assert r["config"] in labels, (w, r["config"])
PY

check "file members: a sweep in a members directory leaves nothing behind" \
	sh -c 'mkdir -p "$2/m" && "$1" bench --members-dir "$2/m" --levels 5 --members 3 \
	       --workloads seqwrite,seqread --size 4M >/dev/null 2>&1 && [ -z "$(ls -A "$2/m")" ]' \
	sh "$URAID" "$T_TMP"
check "uraid bench workload ... is the same tool" \
	sh -c '"$1" bench workload --mem --levels 0 --members 2 --workloads seqread --size 2M \
	       >/dev/null 2>&1' sh "$URAID"
check "--stripe-cache is accepted with a note that the engine has none" \
	sh -c '"$1" bench --mem --levels 0 --members 2 --workloads seqread --size 2M \
	       --stripe-cache 256,4096 2>&1 >/dev/null | grep -q "no stripe cache"' sh "$URAID"
check_fails "refuses an unknown workload" "$URAID" bench --mem --workloads bogus
check_fails "refuses level 4" "$URAID" bench --mem --levels 4
check_fails "refuses a 3K chunk" "$URAID" bench --mem --chunks 3K
check_fails "refuses an unknown layout" "$URAID" bench --mem --levels 5 --members 3 \
	--layouts xx --size 2M
check_fails "refuses readers=0" "$URAID" bench --mem --workloads readers=0
check_fails "refuses an unknown disk model" "$URAID" bench --disk-model nosuchdisk
check_fails "refuses --bus without --disk-model" "$URAID" bench --mem --bus 100
check_fails "refuses a size that is not whole MiB" "$URAID" bench --mem --size 1000
t_done
