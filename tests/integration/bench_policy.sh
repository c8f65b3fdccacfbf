#!/usr/bin/env bash
# `uraid bench --bitmap` / `--journal DEV`: the sweep compares none vs bitmap
# and none vs write-through vs write-back journal, for the array workloads
# and the filesystem workloads (through uraid attach). What the arrays had
# is checked from outside while the sweep runs (mdadm -X on a member file,
# `uraid detail` of the attached array), and in the journal file it leaves;
# bad options are refused before anything is written.
. "$(dirname "$0")/../lib.sh"
# JSON file $1 of a RAID5 x3 smallfiles sweep with --journal-mode wb: rows
# for exactly none and journal-wb, every figure positive, 4000 files removed.
smallfiles_none_jwb() {
	python3 - "$1" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
got = sorted((r["config"], r["consistency"], r["workload"]) for r in rows)
want = [(c, p, w) for c, p in (("raid5[64,ls]x3", "none"), ("raid5[64,ls,jwb]x3", "journal-wb"))
        for w in ("smallfiles-copy", "smallfiles-rm", "smallfiles-untar")]
assert got == sorted(want), got
for r in rows:
    assert r["value"] > 0, r
    if r["workload"] == "smallfiles-rm":
        assert r["bytes"] == 4000, r
PY
}

export URAID_RUN_DIR=$T_TMP/run
# members on tmpfs: the filesystem workloads make 420 MB arrays
M=$(mktemp -d /dev/shm/uraid-test.XXXXXX)
mkdir -p "$URAID_RUN_DIR"
BENCH_PID=
LOOPS=
trap '[ -n "$BENCH_PID" ] && kill "$BENCH_PID" 2>/dev/null
      for l in $LOOPS; do losetup -d "$l"; done; rm -rf "$T_TMP" "$M"' EXIT

# refused NAME PATTERN ARGS...: exit non-zero, stderr names the problem
refused() {
	local n=$1 pat=$2
	shift 2
	check "refused: $n" sh -c 'out=$("$@" 2>&1 >/dev/null) && exit 1
		echo "$out" | grep -q -- "$0" || { echo "# got: $out"; exit 1; }' "$pat" "$@"
}
B=("$URAID" bench --mem --members 3 --workloads seqwrite --size 2M --progress 0)
refused "--bitmap with --journal" "a bitmap or a journal, not both" \
	"${B[@]}" --levels 5 --bitmap --journal "$T_TMP/j"
refused "--journal on raid0/1/10 only" "only on raid4, 5, 6" \
	"${B[@]}" --levels 0,1,10 --journal "$T_TMP/j"
refused "--bitmap on raid0 only" "needs redundancy" "${B[@]}" --levels 0 --bitmap
refused "--journal in a missing directory" "directory $T_TMP/nodir does not exist" \
	"${B[@]}" --levels 5 --journal "$T_TMP/nodir/j"
refused "--journal-mode xx" "wt, wb or all" \
	"${B[@]}" --levels 5 --journal "$T_TMP/j" --journal-mode xx
refused "--journal-mode without --journal" "need --journal DEV" \
	"${B[@]}" --levels 5 --journal-mode wb
refused "--bitmap-chunk without --bitmap" "needs --bitmap" \
	"${B[@]}" --levels 5 --bitmap-chunk 1M
refused "--journal-size below 4M" "at least 4M" \
	"${B[@]}" --levels 5 --journal "$T_TMP/j" --journal-size 1M
head -c 3M /dev/urandom >"$T_TMP/small"
sum0=$(md5sum <"$T_TMP/small")
refused "an existing file without --force-destroy" "would be overwritten" \
	"${B[@]}" --levels 5 --journal "$T_TMP/small"
refused "an existing file too small for the journal" "3145728 bytes, too small" \
	"${B[@]}" --levels 5 --journal "$T_TMP/small" --force-destroy
check "refused runs wrote nothing: the file is unchanged, no journal file made" \
	sh -c '[ "$(md5sum <"$1/small")" = "$2" ] && [ ! -e "$1/j" ]' sh "$T_TMP" "$sum0"

# Array workloads, memory members, an existing 16 MiB journal file: rows for
# none / jwt / jwb on raid5 and raid6, raid0 run once without (a note).
truncate -s 16M "$T_TMP/jfile"
check "journal sweep: raid0,5,6 x none/wt/wb on memory members" \
	sh -c '"$1" bench --mem --levels 0,5,6 --members 4 --workloads seqwrite,randwrite-qd16 \
	       --size 4M --ops 300 --progress 0 --journal "$2" --force-destroy \
	       --json "$3" --csv "$3.csv" >"$3.out" 2>"$3.err"' \
	sh "$URAID" "$T_TMP/jfile" "$T_TMP/j.json"
check "journal sweep: one row per config x workload, consistency from the array" \
	python3 - "$T_TMP/j.json" "$T_TMP/j.json.csv" "$T_TMP/j.json.out" <<'PY'
import csv, json, sys
rows = json.load(open(sys.argv[1]))
want = {("raid0[64]x4", "none")}
for lv in (5, 6):
    want |= {("raid%d[64,ls]x4" % lv, "none"), ("raid%d[64,ls,jwt]x4" % lv, "journal-wt"),
             ("raid%d[64,ls,jwb]x4" % lv, "journal-wb")}
got = sorted((r["config"], r["consistency"], r["workload"]) for r in rows)
assert got == sorted((c, p, w) for c, p in want for w in ("seqwrite", "randwrite-qd16")), got
for r in rows:
    assert r["value"] > 0 and r["bytes"] == r["requested"], r
    if r["workload"] == "randwrite-qd16":  # --ops 300 writes of 4 KiB
        assert r["bytes"] == 300 * 4096 and r["unit"] == "IOPS", r
cs = {(r["config"], r["workload"]): r["consistency"] for r in csv.DictReader(open(sys.argv[2]))}
assert cs == {(r["config"], r["workload"]): r["consistency"] for r in rows}, cs
table = open(sys.argv[3]).read()
for c, _ in want:
    assert "\n" + c + " " in table, c
PY
check "journal sweep: raid0 skipped for the journal with a note" \
	grep -q "raid0 with 4 members: no journal-wt (md: raid4/5/6 only)" "$T_TMP/j.json.err"
check "the journal file was the array's journal (uraid examine: Journal role), kept" \
	sh -c '"$1" examine "$2" | grep -q "Device Role : Journal"' sh "$URAID" "$T_TMP/jfile"

if [ "$(id -u)" != 0 ]; then
	echo "# not root: filesystem workloads (uraid attach) not run"
	t_done
fi

# poll PID OUT CMD...: while PID runs, append CMD's output to OUT every 0.1 s
poll() {
	local pid=$1 out=$2
	shift 2
	while kill -0 "$pid" 2>/dev/null; do
		"$@" >>"$out" 2>&1
		sleep 0.1
	done
}

# Filesystem workloads with a journal (a new file, removed at the end) in
# write-back (write-through: the --mem sweep above): the attached array's
# daemon is asked over `uraid detail` while it runs.
"$URAID" bench --members-dir "$M" --levels 5 --members 3 --workloads smallfiles \
	--size 4M --progress 0 --journal "$T_TMP/newj" --journal-size 8M --journal-mode wb \
	--json "$T_TMP/fj.json" >"$T_TMP/fj.out" 2>"$T_TMP/fj.err" &
BENCH_PID=$!
poll "$BENCH_PID" "$T_TMP/fj.detail" "$URAID" detail --verbose "bench$BENCH_PID"
wait "$BENCH_PID"
rc=$?
BENCH_PID=
check "smallfiles with --journal through uraid attach: exit 0" test "$rc" = 0
# (assembly starts in write-through; the sweep switches it: write-back must be seen)
check "uraid detail of the attached array showed the write-back journal" \
	grep -q "^journal : write-back$" "$T_TMP/fj.detail"
check "smallfiles rows for none and jwb; 4000 files removed in each" \
	smallfiles_none_jwb "$T_TMP/fj.json"
check "the new journal file was removed" test ! -e "$T_TMP/newj"

# md's bitmap of a 1.2 member file, read without uraid: superblock at 4 KiB
# (magic a92b4efc, feature_map bit 0, signed bitmap_offset in sectors at
# byte 96), bitmap superblock there ("bitm", chunk size in bytes at 52).
# mdadm -X takes a regular file for an external bitmap file, so it cannot.
cat >"$T_TMP/bm.py" <<'PY'
import struct, sys
try:
    f = open(sys.argv[1], "rb")
    sb = f.read(8192)[4096:]
    magic, _, fmap = struct.unpack_from("<III", sb, 0)
    off = struct.unpack_from("<i", sb, 96)[0]
    if magic != 0xa92b4efc or not fmap & 1:
        print("no bitmap"); sys.exit()
    f.seek(4096 + off * 512)
    b = f.read(64)
    if b[:4] == b"bitm":
        print("bitmap chunk %d" % struct.unpack_from("<I", b, 52)[0])
except (OSError, struct.error):
    pass
PY
# With --bitmap --bitmap-chunk 1M: member 0 read while the sweep runs (the
# attached array).
"$URAID" bench --members-dir "$M" --levels 5 --members 3 --workloads smallfiles \
	--size 4M --ops 300 --repeat 2 --progress 0 --bitmap --bitmap-chunk 1M \
	--json "$T_TMP/fb.json" >"$T_TMP/fb.out" 2>"$T_TMP/fb.err" &
BENCH_PID=$!
poll "$BENCH_PID" "$T_TMP/fb.x" python3 "$T_TMP/bm.py" "$M/uraid-bench-$BENCH_PID-0"
wait "$BENCH_PID"
rc=$?
BENCH_PID=
check "smallfiles with --bitmap through uraid attach: exit 0" test "$rc" = 0
check "a member during the run: md superblock with a bitmap of 1 MiB chunks, and without" \
	sh -c 'grep -qx "bitmap chunk 1048576" "$1" && grep -qx "no bitmap" "$1" &&
	       ! grep -v -e "^bitmap chunk 1048576$" -e "^no bitmap$" "$1"' sh "$T_TMP/fb.x"
check "rows for none and bitmap, array and filesystem workloads" \
	python3 - "$T_TMP/fb.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
got = sorted((r["config"], r["consistency"], r["workload"]) for r in rows)
want = [(c, p, w) for c, p in (("raid5[64,ls]x3", "none"), ("raid5[64,ls,bitmap]x3", "bitmap"))
        for w in ("smallfiles-copy", "smallfiles-rm", "smallfiles-untar")]
assert got == sorted(want), got
for r in rows:  # --repeat 2: smallfiles ran twice on the same XFS, 4000 files each
    assert r["repeats"] == 2 and r["value"] > 0 and r["spread"] >= 0, r
    if r["workload"] == "smallfiles-rm":
        assert r["bytes"] == r["requested"] == 4000, r
PY
# A journal that is one of the member devices under another name: refused,
# before anything is written (the devices hold nothing).
for i in 0 1 2; do
	truncate -s 16M "$M/dev$i"
	LOOPS="$LOOPS $(losetup -f --show "$M/dev$i")"
done
set -- $LOOPS
ln -s "$2" "$T_TMP/jlink"
refused "--journal: a member device under another name" "also a --members-dev device ($2)" \
	"$URAID" bench --members-dev "$1,$2,$3" --levels 5 --members 3 --workloads seqwrite \
	--size 4M --progress 0 --journal "$T_TMP/jlink"
for l in $LOOPS; do losetup -d "$l"; done
LOOPS=
rm -f "$M"/dev*

# Simulated disks live only in the bench process: smallfiles through its own
# NBD server (nbdfuse + loop); a kept journal file shows it was the journal.
truncate -s 16M "$T_TMP/jsim"
check "smallfiles on simulated nvme disks, none and write-back journal" \
	sh -c '"$1" bench --disk-model nvme --levels 5 --members 3 --workloads smallfiles \
	       --size 4M --progress 0 --journal "$2" --journal-mode wb --force-destroy \
	       --json "$3" >/dev/null 2>"$3.err"' sh "$URAID" "$T_TMP/jsim" "$T_TMP/fs.json"
check "simulated disks: smallfiles rows for none and jwb, 4000 files removed" \
	smallfiles_none_jwb "$T_TMP/fs.json"
check "simulated disks: the kept journal file was the array's journal" \
	sh -c '"$1" examine "$2" | grep -q "Device Role : Journal"' sh "$URAID" "$T_TMP/jsim"
check "simulated disks, --time-scale 10: filesystem workloads skipped with a note" \
	sh -c '"$1" bench --disk-model nvme --time-scale 10 --levels 5 --members 3 \
	       --workloads seqwrite,smallfiles --size 4M --progress 0 2>&1 >/dev/null |
	       grep -q "they need --time-scale 1, skipped"' sh "$URAID"
check "nothing left: member files, attach records, loop devices" \
	sh -c '[ -z "$(ls -A "$2")" ] && ! ls "$1/run"/*.attach >/dev/null 2>&1 &&
	       ! losetup -a | grep -q -e "$2" -e uraid-benchfs' sh "$T_TMP" "$M"
t_done
