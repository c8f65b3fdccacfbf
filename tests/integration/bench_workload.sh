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
	       --workloads seqwrite,seqread,readers=1-3,randrw,randread-qd4,rewrite --size 4M --ops 200 \
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
      "randrw-qd16", "randread-qd4", "rewrite"]
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
    assert r["unit"] == ("IOPS" if r["workload"].startswith("rand") else "MB/s"), r
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
assert hdr == ["config", "level", "members", "chunk_kib", "layout", "stripe_cache", "workload",
               "value", "unit", "spread", "finish_spread", "latency_us", "ratio", "bytes",
               "requested", "repeats", "note", "consistency"], hdr
js = json.load(open(sys.argv[2]))
assert len(rd) - 1 == len(js)
for row, j in zip(rd[1:], js):
    assert len(row) == len(hdr), row
    d = dict(zip(hdr, row))
    assert d["config"] == j["config"] and d["workload"] == j["workload"]
    assert abs(float(d["value"]) - j["value"]) < 1e-2, (d, j)
PY
# Members vary (3, 4): a line chart per workload, x = members, a line per
# config without its member count; readers=1-3: one "readers" chart, a line
# per config over 1..3 readers. Expected lines come from the JSON rows.
check "SVG line charts: parse as XML, one polyline per config, one point per x, axis labels" \
	python3 - "$svg" "$json" <<'PY'
import json, os, re, sys, xml.dom.minidom
js = json.load(open(sys.argv[2]))
wls = sorted({r["workload"] for r in js if not r["workload"].startswith("readers=")})
files = sorted(os.listdir(sys.argv[1]))
assert files == sorted([w + ".svg" for w in wls] + ["readers.svg"]), files
def chart(name):
    d = xml.dom.minidom.parse(os.path.join(sys.argv[1], name + ".svg"))
    lines = {p.getAttribute("data-config"): p.getAttribute("points").split()
             for p in d.getElementsByTagName("polyline") if p.getAttribute("class") == "series"}
    texts = {t.getAttribute("class"): t.firstChild.data for t in d.getElementsByTagName("text")
             if t.getAttribute("class") in ("xlabel", "ylabel")}
    assert not [r for r in d.getElementsByTagName("rect") if r.getAttribute("class") == "bar"]
    return d, lines, texts
for w in wls:
    d, lines, texts = chart(w)
    want = {}
    for r in js:
        if r["workload"] == w and r["config"] != "baseline":
            want.setdefault(re.sub(r"x%d$" % r["members"], "", r["config"]), set()).add(r["members"])
    assert set(lines) == set(want), (w, sorted(lines), sorted(want))
    for c, xs in want.items():
        assert len(lines[c]) == len(xs), (w, c, lines[c], xs)
    assert texts == {"xlabel": "members",
                     "ylabel": "IOPS" if w.startswith("rand") else "MB/s"}, texts
    ticks = sorted(t.firstChild.data for t in d.getElementsByTagName("text")
                   if t.getAttribute("class") == "xtick")
    assert ticks == ["3", "4"], ticks
    assert len([l for l in d.getElementsByTagName("line") if l.getAttribute("class") == "baseline"]) == 1
d, lines, texts = chart("readers")
cfgs = {r["config"] for r in js if r["workload"].startswith("readers=")}
assert set(lines) == cfgs, (sorted(lines), sorted(cfgs))
assert all(len(p) == 3 for p in lines.values()), lines
assert texts == {"xlabel": "concurrent readers", "ylabel": "MB/s"}, texts
PY
# Repeats show their spread: JSON min <= median <= max, and a min-max bar
# (class "spread") through each line chart point whose repeats differ.
check "repeats: JSON min/max around the median, one spread bar per differing point" \
	python3 - "$svg" "$json" <<'PY'
import json, os, sys, xml.dom.minidom
js = [r for r in json.load(open(sys.argv[2])) if r.get("value") is not None]
assert js and all(r["min"] <= r["value"] <= r["max"] for r in js), js[0]
for name in os.listdir(sys.argv[1]):
    wl = name[:-4]
    # the readers chart has a line for the baseline too; member charts a level
    rows = [r for r in js if (r["config"] != "baseline" and r["workload"] == wl) or
            (wl == "readers" and r["workload"].startswith("readers="))]
    d = xml.dom.minidom.parse(os.path.join(sys.argv[1], name))
    bars = [p for p in d.getElementsByTagName("path") if p.getAttribute("class") == "spread"]
    want = sum(1 for r in rows if r["max"] > r["min"])
    assert len(bars) == want, (name, len(bars), want)
PY
if command -v xmllint >/dev/null; then
	check "xmllint: every SVG is well-formed XML" sh -c 'xmllint --noout "$1"/*.svg' sh "$svg"
fi
check "SVG bar charts: one member count gives one bar per config, value labels" \
	sh -c '"$1" bench --mem --levels 0,5 --members 3 --chunks 32K,64K --workloads seqread \
	       --size 2M --svg "$2/bars" >/dev/null 2>&1' sh "$URAID" "$T_TMP"
check "  ... parses as XML with bars raid0[32]x3 raid0[64]x3 raid5[32,ls]x3 raid5[64,ls]x3" \
	python3 - "$T_TMP/bars/seqread.svg" <<'PY'
import sys, xml.dom.minidom
d = xml.dom.minidom.parse(sys.argv[1])
bars = [r for r in d.getElementsByTagName("rect") if r.getAttribute("class") == "bar"]
labels = [t.firstChild.data for t in d.getElementsByTagName("text") if t.firstChild]
want = ["raid0[32]x3", "raid0[64]x3", "raid5[32,ls]x3", "raid5[64,ls]x3"]
assert len(bars) == 4 and all(c in labels for c in want), (len(bars), labels)
assert not d.getElementsByTagName("polyline")
PY

check "file members: a sweep in a members directory leaves nothing behind" \
	sh -c 'mkdir -p "$2/m" && "$1" bench --members-dir "$2/m" --levels 5 --members 3 \
	       --workloads seqwrite,seqread --size 4M >/dev/null 2>&1 && [ -z "$(ls -A "$2/m")" ]' \
	sh "$URAID" "$T_TMP"
check "uraid bench workload ... is the same tool" \
	sh -c '"$1" bench workload --mem --levels 0 --members 2 --workloads seqread --size 2M \
	       >/dev/null 2>&1' sh "$URAID"
# --stripe-cache is a sweep dimension for raid5/6. An engine without a
# stripe cache (uraid_set_stripe_cache -ENOTSUP) gives n/a rows, said so in
# every format; one with it gives figures. Size 0 (cache off) always works.
sc=$T_TMP/sc
check "--stripe-cache 0,256: raid5 rows per cache size, raid0 once with a note" \
	sh -c '"$1" bench --mem --levels 0,5 --members 3 --workloads seqwrite,seqread --size 2M \
	       --stripe-cache 0,256 --chart --csv "$2.csv" --json "$2.json" --svg "$2" \
	       >"$2.out" 2>"$2.err" && grep -q "raid0: no stripe cache (raid5/6 only)" "$2.err"' \
	sh "$URAID" "$sc"
check "  ... labels raid5[64,ls,sc0]x3 / sc256; figures, or n/a in table, chart, CSV, JSON, SVG" \
	python3 - "$sc" <<'PY'
import csv, json, sys, xml.dom.minidom
d = sys.argv[1]
js = json.load(open(d + ".json"))
cfg = sorted({r["config"] for r in js})
assert cfg == ["raid0[64]x3", "raid5[64,ls,sc0]x3", "raid5[64,ls,sc256]x3"], cfg
NA = "n/a (stripe cache not supported)"
out, err = open(d + ".out").read(), open(d + ".err").read()
rows = list(csv.DictReader(open(d + ".csv")))
for r in js:
    sc = {"raid0[64]x3": None, "raid5[64,ls,sc0]x3": 0, "raid5[64,ls,sc256]x3": 256}[r["config"]]
    assert r["stripe_cache"] == sc, r
    c = [x for x in rows if x["config"] == r["config"] and x["workload"] == r["workload"]][0]
    assert c["stripe_cache"] == ("" if sc is None else str(sc)), c
    if "note" in r:  # the engine has no stripe cache
        assert sc == 256 and r["note"] == NA and r["value"] is None, r
        assert c["value"] == "" and c["note"] == NA, c
        assert "%-22s %-16s %s" % (r["config"], r["workload"], NA) in out
        assert "  %22s | %s" % (r["config"], NA) in out
        svg = xml.dom.minidom.parse("%s/%s.svg" % (d, r["workload"]))
        na = [t for t in svg.getElementsByTagName("text") if t.getAttribute("class") == "na"]
        assert na and na[0].firstChild.data == NA
        assert "this engine has no stripe cache" in err
    else:
        assert r["value"] > 0 and r["bytes"] == r["requested"], r
        assert c["note"] == "" and float(c["value"]) > 0, c
print("# sc256 rows:", ["n/a" if "note" in r else r["value"] for r in js if "sc256" in r["config"]])
PY
check_fails "refuses --stripe-cache beyond 32768" "$URAID" bench --mem --stripe-cache 40000
# Live progress (not a tty): a line per interval for every block workload,
# "CONFIG WORKLOAD  R MB/s  D MB done  S s", the MB done growing. A flat
# 50 MB/s simulated disk in real time makes each workload last a few
# intervals.
printf 'name = flat50\nrate_mbs = 50\n' >"$T_TMP/flat50"
check "progress lines on stderr for seqwrite, seqread, readers=2, randrw-qd1/16, rewrite" \
	sh -c '"$1" bench --disk-model "$2" --time-scale 1 --levels 0 --members 2 --size 8M --ops 3000 \
	       --workloads seqwrite,seqread,readers=2,randrw --progress 0.05 >/dev/null 2>"$3" &&
	       printf "name = flat400\nrate_mbs = 400\n" >"$2.400" &&
	       "$1" bench --disk-model "$2.400" --time-scale 1 --levels 0 --members 2 --size 2M \
	       --workloads rewrite --progress 0.05 >/dev/null 2>>"$3"' \
	sh "$URAID" "$T_TMP/flat50" "$T_TMP/progress"
check "  ... format and growth" python3 - "$T_TMP/progress" <<'PY'
import re, sys
seen = {}
for line in open(sys.argv[1]):
    m = re.fullmatch(r"(\S+) (\S+) +([0-9]+\.[0-9]) MB/s +([0-9]+\.[0-9]) MB done +([0-9]+\.[0-9]) s\n",
                     line)
    assert m, repr(line)
    assert m.group(1) == "raid0[64]x2", line
    seen.setdefault(m.group(2), []).append((float(m.group(4)), float(m.group(5))))
assert sorted(seen) == sorted(["seqwrite", "seqread", "readers=2", "randrw-qd1", "randrw-qd16",
                               "rewrite"]), sorted(seen)
for w, pts in seen.items():
    done = [d for d, t in pts]
    assert done == sorted(done) and done[-1] > 0, (w, pts)
    assert [t for d, t in pts] == sorted(t for d, t in pts), (w, pts)
print("# progress lines per workload:", {w: len(p) for w, p in seen.items()})
PY
check "--progress 0: no progress lines" \
	sh -c '"$1" bench --disk-model "$2" --levels 0 --members 2 --size 8M --workloads seqread \
	       --progress 0 2>&1 >/dev/null | grep -c "MB done" | grep -qx 0' \
	sh "$URAID" "$T_TMP/flat50"
# --warmup W: W untimed runs before the timed ones. A 50 MB/s simulated
# disk sleeps its model time, so each 8 MiB read takes >= 0.16 s: four runs
# (3 warm-up + 1) cannot finish in less than 0.6 s.
check "--warmup 3: header says so, one timed repeat, at least 4 runs' time spent" \
	python3 - "$URAID" "$T_TMP/flat50" <<'PY'
import json, subprocess, sys, time
t0 = time.monotonic()
out = subprocess.run([sys.argv[1], "bench", "--disk-model", sys.argv[2], "--time-scale", "1",
                      "--levels", "0",
                      "--members", "1", "--workloads", "seqread", "--size", "8M", "--warmup",
                      "3", "--progress", "0", "--json", "-"], check=True, capture_output=True,
                     text=True).stdout
el = time.monotonic() - t0
assert "1 repeat(s)" in out and "3 warm-up run(s)" in out and "# load average " in out, out
rows = json.loads(out[out.index("\n[") + 1:])
assert len(rows) == 1 and rows[0]["repeats"] == 1, rows
assert el > 4 * 8 * 1.048576 / 50 * 0.95, el
PY
check_fails "refuses --warmup 17" "$URAID" bench --mem --warmup 17
check_fails "refuses an unknown workload" "$URAID" bench --mem --workloads bogus
check_fails "refuses level 4" "$URAID" bench --mem --levels 4
check_fails "refuses a 3K chunk" "$URAID" bench --mem --chunks 3K
check_fails "refuses an unknown layout" "$URAID" bench --mem --levels 5 --members 3 \
	--layouts xx --size 2M
check_fails "refuses readers=0" "$URAID" bench --mem --workloads readers=0
check_fails "refuses randread-qd0" "$URAID" bench --mem --workloads randread-qd0
check_fails "refuses randrw-qd65" "$URAID" bench --mem --workloads randrw-qd65
check_fails "refuses an unknown disk model" "$URAID" bench --disk-model nosuchdisk
check_fails "refuses --bus without --disk-model" "$URAID" bench --mem --bus 100
check_fails "refuses a size that is not whole MiB" "$URAID" bench --mem --size 1000
t_done
